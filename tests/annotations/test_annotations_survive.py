"""Annotations are primary data (docs/invariants.md#what-survives-what): rebuild,
reconcile, losing the whole read model and deleting the annotated footage leave them as
they were; and the `annotate` command exports and re-imports them idempotently. On a
`video-index local` of this module's own (it rebuilds and empties the read model, which
the session stack's other users rely on)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.support.local_stack import (
    RunningStack,
    iso,
    listed,
    poll,
    put_segments,
    start_local,
    stop,
)
from video_index.cli.main import main

DEVICE = "cam-keep"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    running = start_local(tmp_path_factory.mktemp("survive"), "--visibility-timeout", "2")
    try:
        yield running
    finally:
        stop(running.process)


def _scan(stack: RunningStack, table: str) -> list[dict[str, Any]]:
    client = stack.client("dynamodb")
    items: list[dict[str, Any]] = []
    request: dict[str, Any] = {"TableName": stack.ready[table], "ConsistentRead": True}
    while True:
        page = client.scan(**request)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return sorted(items, key=lambda i: (i["pk"]["S"], i["sk"]["S"]))
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _cli(stack: RunningStack, *args: str) -> int:
    return main([*args, "--ready-file", str(stack.ready_file)])


def test_annotations_survive_rebuild_reconcile_a_lost_read_model_and_deleted_footage(
    stack: RunningStack,
) -> None:
    # Given three segments, a note on the second and a range over all three
    first = datetime.now(UTC).replace(microsecond=0) - timedelta(days=3)
    end = first + timedelta(minutes=1)
    keys = put_segments(stack, DEVICE, first, 3)
    poll(lambda: listed(stack, DEVICE, first, end), lambda k: k == set(keys), "ingest", 30)
    name = keys[1].rsplit("/", 1)[1]  # the segment entry's name (with its kind: the address)
    route = f"/devices/{DEVICE}/annotations"
    _, on_segment, _ = stack.call("POST", route, {"target": {"kind": "video", "name": name}})
    _, on_range, _ = stack.call(
        "POST", route, {"target": {"from": iso(first), "to": iso(end)}, "tags": ["all"]}
    )
    notes = {a["annotation_id"]: a for a in (on_segment, on_range)}
    kept = _scan(stack, "annotations_table")
    window = urlencode({"from": iso(first), "to": iso(end)})

    def annotations_now() -> dict[str, Any]:
        return {aid: stack.call("GET", f"{route}/{aid}")[1] for aid in notes}

    def joined() -> dict[str, list[str]]:
        _, page, _ = stack.call("GET", f"/devices/{DEVICE}/segments?{window}")
        return {
            e["id"]: sorted(a["annotation_id"] for a in e["annotations"]) for e in page["items"]
        }

    assert sum(map(len, joined().values())) == 4
    # When the read model is rebuilt from S3
    assert (
        _cli(stack, "rebuild", "start", "--settle-seconds", "0", "--drop-grace-seconds", "0") == 0
    )
    # Then the annotations table is item for item what it was, and the join is back (once
    # the API's cached generation, at most 10 s old, is the new one)
    assert _scan(stack, "annotations_table") == kept
    poll(annotations_now, lambda now: now == notes, "annotations after rebuild", 30)
    poll(joined, lambda j: sum(map(len, j.values())) == 4, "join after rebuild", 30)
    # When reconcile runs over a listing
    assert _cli(stack, "reconcile", "--source", "list") == 0
    assert _scan(stack, "annotations_table") == kept
    assert annotations_now() == notes
    # When every read-model item is lost
    client = stack.client("dynamodb")
    for item in _scan(stack, "table"):
        client.delete_item(TableName=stack.ready["table"], Key={"pk": item["pk"], "sk": item["sk"]})
    assert _scan(stack, "table") == []
    # Then the annotations are still read and listed; the segment counts as absent
    poll(
        lambda: stack.call("GET", f"{route}/{on_segment['annotation_id']}")[1],
        lambda a: a["segment_present"] is False,
        "the lost segment is seen as absent",
        30,
    )
    _, page, _ = stack.call("GET", f"{route}?{window}")
    assert sorted(a["annotation_id"] for a in page["items"]) == sorted(notes)
    assert _scan(stack, "annotations_table") == kept
    # And a rebuild brings the read model back, and the annotations rejoin it
    assert (
        _cli(stack, "rebuild", "start", "--settle-seconds", "0", "--drop-grace-seconds", "0") == 0
    )
    poll(joined, lambda j: sum(map(len, j.values())) == 4, "join after rebuilding", 30)
    poll(annotations_now, lambda now: now == notes, "annotations after rebuilding", 30)
    # When the annotated segment's object is deleted
    stack.client("s3").delete_object(Bucket=stack.ready["bucket"], Key=keys[1])
    poll(lambda: listed(stack, DEVICE, first, end), lambda k: keys[1] not in k, "delete", 30)
    # Then its annotation stays, listed with segment_present false; nothing else changed
    _, page, _ = stack.call("GET", f"{route}?{window}")
    presence = {a["annotation_id"]: a["segment_present"] for a in page["items"]}
    assert presence == {on_segment["annotation_id"]: False, on_range["annotation_id"]: None}
    assert _scan(stack, "annotations_table") == kept


def test_annotate_add_list_export_and_an_idempotent_import(
    stack: RunningStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    device = "cam-cli"
    # Given two annotations added from the command line
    base = ["annotate", "add", "--device", device, "--new-device", "--by", "ops"]
    span = ["--from", "2026-11-30T10:00:00Z", "--to", "2026-11-30T11:00:00Z"]
    assert _cli(stack, *base, *span, "--description", "eins", "--tag", "a", "--json") == 0
    first = json.loads(capsys.readouterr().out)
    assert (first["created_by"], first["description"], first["tags"]) == ("ops", "eins", ["a"])
    assert _cli(stack, *base, *span, "--status", "approved", "--json") == 0
    second = json.loads(capsys.readouterr().out)
    # And a bad tag is refused as bad usage (exit 2), naming it
    assert _cli(stack, *base, *span, "--tag", "Nope") == 2
    assert "tags[0]" in capsys.readouterr().out
    # When they are listed and exported
    assert _cli(stack, "annotate", "list", "--device", device, "--new-device", *span, "--json") == 0
    out = capsys.readouterr().out
    listed_ids = [json.loads(line)["annotation_id"] for line in out.splitlines()]
    assert sorted(listed_ids) == sorted([first["annotation_id"], second["annotation_id"]])
    exported = tmp_path / "annotations.jsonl"
    assert _cli(stack, "annotate", "export", "--device", device, "--out", str(exported)) == 0
    lines = exported.read_text("utf-8").splitlines()
    assert sorted(json.loads(line)["annotation_id"] for line in lines) == sorted(listed_ids)
    # Then importing the export changes nothing (twice)
    for _ in range(2):
        assert _cli(stack, "annotate", "import", str(exported), "--json") == 0
        outcomes = json.loads(capsys.readouterr().out)
        assert {o["outcome"] for o in outcomes} == {"unchanged"}
    # When someone edits the first annotation (version 2) and the old export is imported
    path = f"/devices/{device}/annotations/{first['annotation_id']}"
    body = {"target": {"from": "2026-11-30T10:00:00Z", "to": "2026-11-30T11:00:00Z"}}
    assert stack.call("PUT", path, {**body, "description": "zwei"}, {"If-Match": '"1"'})[0] == 200
    assert _cli(stack, "annotate", "import", str(exported), "--json") == 1
    outcomes = {o["annotation_id"]: o["outcome"] for o in json.loads(capsys.readouterr().out)}
    # Then the newer version is refused to be overwritten, and stays
    assert outcomes == {first["annotation_id"]: "refused", second["annotation_id"]: "unchanged"}
    assert stack.call("GET", path)[1]["description"] == "zwei"
    # When a line is new, or newer than the table, it is written
    newer = [json.loads(line) for line in lines]
    newer[0] = {**newer[0], "annotation_id": "imported0001"}
    newer[1] = {**newer[1], "version": 5, "description": "from elsewhere"}
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(json.dumps(line) for line in newer) + "\n", "utf-8")
    assert _cli(stack, "annotate", "import", str(changed), "--json") == 0
    outcomes = {o["annotation_id"]: o["outcome"] for o in json.loads(capsys.readouterr().out)}
    assert outcomes == {"imported0001": "created", newer[1]["annotation_id"]: "updated"}
    status, updated, headers = stack.call(
        "GET", f"/devices/{device}/annotations/{newer[1]['annotation_id']}"
    )
    assert status == 200
    assert (updated["description"], headers["ETag"]) == ("from elsewhere", '"5"')
    # And a file with one bad line imports nothing (exit 2, the line named)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**newer[0], "annotation_id": "fresh01"}) + "\n{oops}\n", "utf-8")
    assert _cli(stack, "annotate", "import", str(bad)) == 2
    assert "line 2" in capsys.readouterr().out
    assert stack.call("GET", f"/devices/{device}/annotations/fresh01")[0] == 404
