"""``video-index hold add|list|release|export|import`` on moto's DynamoDB (docs/holds.md).

Commands run through ``main([...])`` against a holds table named by ``--table`` (or
``VIDEO_INDEX_HOLDS_TABLE``, or a stack's output), and are judged by their exit code,
what they print and what the table then holds, read back through the service.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import boto3
import pytest
from moto import mock_aws

from video_index.aws.holds import HoldStore
from video_index.cli import targets
from video_index.cli.main import main
from video_index.core.contract import ENV_HOLDS_TABLE, OUTPUT_HOLDS_TABLE
from video_index.core.table_schema import holds_table_definition
from video_index.holds.service import Holds

TABLE = "holds"
SPAN = ["--from", "2026-10-01T10:00:00Z", "--to", "2026-10-01T11:00:00Z"]
LATER = ["--from", "2026-10-20T00:00:00Z", "--to", "2026-10-21T00:00:00Z"]
ALL = ["--from", "2026-09-01T00:00:00Z", "--to", "2026-10-31T00:00:00Z"]


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.delenv(targets.ENV_STACK, raising=False)
    monkeypatch.delenv(ENV_HOLDS_TABLE, raising=False)


@pytest.fixture
def dynamodb() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**holds_table_definition(TABLE))
        yield client


def _cli(capsys: pytest.CaptureFixture[str], *args: str, table: str = TABLE) -> tuple[int, str]:
    """``hold …`` on the holds table alone: no read model to check devices against, so
    ``add`` and ``list`` act on them as new devices (the check has its own test)."""
    new = ["--new-device"] if args[0] in ("add", "list") else []
    code = main(["hold", *args, *new, "--table", table])
    return code, capsys.readouterr().out


def _added(capsys: pytest.CaptureFixture[str], device: str, span: list[str], by: str) -> Any:
    code, out = _cli(
        capsys, "add", "--device", device, *span, "--reason", "case 7", "--by", by, "--json"
    )
    assert code == 0, out
    return json.loads(out)


def test_add_list_and_release_by_the_creator_or_an_admin(
    dynamodb: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given two holds added from the command line by alice
    first = _added(capsys, "cam-1", SPAN, "alice")
    second = _added(capsys, "cam-1", LATER, "alice")
    assert (first["created_by"], first["reason"], first["active"]) == ("alice", "case 7", True)
    assert (first["from"], first["to"]) == ("2026-10-01T10:00:00.000Z", "2026-10-01T11:00:00.000Z")
    # Then they are listed in a window covering both, and only the first in its own hour
    code, out = _cli(capsys, "list", "--device", "cam-1", *ALL, "--json")
    assert code == 0
    assert [json.loads(line)["hold_id"] for line in out.splitlines()] == [
        first["hold_id"],
        second["hold_id"],
    ]
    code, out = _cli(capsys, "list", "--device", "cam-1", *SPAN, "--json")
    assert [json.loads(line)["hold_id"] for line in out.splitlines()] == [first["hold_id"]]
    # And the table view names the holds
    code, out = _cli(capsys, "list", "--device", "cam-1", *ALL)
    assert code == 0 and first["hold_id"] in out and second["hold_id"] in out
    # When bob (not the creator) releases the first: refused (exit 1), naming alice
    code, out = _cli(capsys, "release", first["hold_id"], "--by", "bob")
    assert code == 1 and "alice" in out
    # When bob releases it as an admin, it is released, and stays readable
    code, out = _cli(capsys, "release", first["hold_id"], "--by", "bob", "--admin", "--json")
    released = json.loads(out)
    assert code == 0
    assert (released["active"], released["released_by"], released["version"]) == (False, "bob", 2)
    # Then --active lists only the second; the release is in the table's history
    code, out = _cli(capsys, "list", "--device", "cam-1", *ALL, "--active", "--json")
    assert [json.loads(line)["hold_id"] for line in out.splitlines()] == [second["hold_id"]]
    stored = Holds(HoldStore(dynamodb, TABLE)).get(first["hold_id"])
    assert [(c.action, c.by) for c in stored.history] == [("create", "alice"), ("release", "bob")]


def test_bad_input_names_what_is_wrong(dynamodb: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # A window longer than 31 days: bad input (exit 2) naming `to`
    long = ["--from", "2026-09-01T00:00:00Z", "--to", "2026-10-03T00:00:00Z"]
    code, out = _cli(capsys, "add", "--device", "cam-1", *long, "--reason", "x")
    assert code == 2 and "to" in out and "31 days" in out
    # An empty reason: exit 2 naming `reason`
    code, out = _cli(capsys, "add", "--device", "cam-1", *SPAN, "--reason", "  ")
    assert code == 2 and "reason" in out
    # An unknown hold: a problem (exit 1) naming it; a malformed id: exit 2
    code, out = _cli(capsys, "release", "nosuchhold")
    assert code == 1 and "nosuchhold" in out
    code, out = _cli(capsys, "release", "Not/An/Id")
    assert code == 2 and "HOLD_ID" in out
    # Nothing was written
    assert Holds(HoldStore(dynamodb, TABLE)).window("cam-1", 0, 2_000_000_000_000) == []


def test_without_a_table_the_command_says_where_to_point_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["hold", "list", "--device", "cam-1", *SPAN])
    out = capsys.readouterr().out
    assert code == 2
    assert all(option in out for option in ("--stack", "--ready-file", "--table", ENV_HOLDS_TABLE))


def test_the_table_is_found_from_the_environment_or_the_stack(
    dynamodb: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a hold added with the table from the environment
    monkeypatch.setenv(ENV_HOLDS_TABLE, TABLE)
    new = "--new-device"  # no read model to check the device against here
    assert main(["hold", "add", "--device", "cam-9", *SPAN, "--reason", "r", new, "--json"]) == 0
    added = json.loads(capsys.readouterr().out)
    assert added["created_by"].startswith("cli:")
    monkeypatch.delenv(ENV_HOLDS_TABLE)

    # When it is listed through a deployed stack whose output names the table
    class Stack:
        outputs: ClassVar[dict[str, str]] = {OUTPUT_HOLDS_TABLE: TABLE}

        def client(self, service: str) -> Any:
            assert service == "dynamodb"
            return dynamodb

    opened: list[str] = []

    def open_stack(name: str) -> Stack:
        opened.append(name)
        return Stack()

    monkeypatch.setattr(targets, "open_stack", open_stack)
    listing = ["hold", "list", "--device", "cam-9", *SPAN, "--stack", "prod", new, "--json"]
    assert main(listing) == 0
    # Then the stack was opened by name and the hold is there
    assert opened == ["prod"]
    assert json.loads(capsys.readouterr().out)["hold_id"] == added["hold_id"]


def test_export_and_an_idempotent_import(
    dynamodb: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given three holds of two devices in one table, one of them released
    holds = [
        _added(capsys, "cam-1", SPAN, "alice"),
        _added(capsys, "cam-1", LATER, "carol"),
        _added(capsys, "cam-2", SPAN, "alice"),
    ]
    assert _cli(capsys, "release", holds[1]["hold_id"], "--by", "carol")[0] == 0
    # When every hold is exported, and one device's
    exported = tmp_path / "holds.jsonl"
    assert _cli(capsys, "export", "--out", str(exported))[0] == 0
    lines = [json.loads(line) for line in exported.read_text("utf-8").splitlines()]
    assert sorted(h["hold_id"] for h in lines) == sorted(h["hold_id"] for h in holds)
    code, out = _cli(capsys, "export", "--device", "cam-2")
    assert [json.loads(line)["hold_id"] for line in out.splitlines()] == [holds[2]["hold_id"]]
    # Then importing it into an empty table creates each hold as it was
    dynamodb.create_table(**holds_table_definition("restored"))
    code, out = _cli(capsys, "import", str(exported), "--json", table="restored")
    assert code == 0
    assert {o["hold_id"]: o["outcome"] for o in json.loads(out)} == {
        h["hold_id"]: "created" for h in holds
    }
    source, restored = (Holds(HoldStore(dynamodb, name)) for name in (TABLE, "restored"))
    for hold in holds:
        assert restored.get(hold["hold_id"]) == source.get(hold["hold_id"])
    assert [h.hold_id for h in restored.window("cam-1", 0, 2_000_000_000_000)] == [
        holds[0]["hold_id"],
        holds[1]["hold_id"],
    ]
    # And importing it again (twice) changes nothing
    for _ in range(2):
        code, out = _cli(capsys, "import", str(exported), "--json", table="restored")
        assert code == 0
        assert {o["outcome"] for o in json.loads(out)} == {"unchanged"}


def test_an_import_never_overwrites_a_newer_version(
    dynamodb: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given an export taken while two holds were active
    first, second = _added(capsys, "cam-1", SPAN, "alice"), _added(capsys, "cam-1", LATER, "ann")
    old = tmp_path / "old.jsonl"
    assert _cli(capsys, "export", "--out", str(old))[0] == 0
    # When the first is released afterwards, and the old export is imported
    assert _cli(capsys, "release", first["hold_id"], "--by", "alice")[0] == 0
    code, out = _cli(capsys, "import", str(old), "--json")
    # Then its line is refused (exit 1) and the hold stays released
    assert code == 1
    outcomes = {o["hold_id"]: o["outcome"] for o in json.loads(out)}
    assert outcomes == {first["hold_id"]: "refused", second["hold_id"]: "unchanged"}
    store = Holds(HoldStore(dynamodb, TABLE))
    assert store.get(first["hold_id"]).active is False
    # When a file says the second was released (a newer version), it is updated
    newer = tmp_path / "newer.jsonl"
    assert _cli(capsys, "export", "--out", str(newer))[0] == 0
    assert _cli(capsys, "release", second["hold_id"], "--by", "ann")[0] == 0
    released = tmp_path / "released.jsonl"
    assert _cli(capsys, "export", "--out", str(released))[0] == 0
    dynamodb.create_table(**holds_table_definition("other"))
    assert _cli(capsys, "import", str(newer), table="other")[0] == 0
    code, out = _cli(capsys, "import", str(released), "--json", table="other")
    assert code == 0
    assert {o["hold_id"]: o["outcome"] for o in json.loads(out)}[second["hold_id"]] == "updated"
    assert Holds(HoldStore(dynamodb, "other")).get(second["hold_id"]).released_by == "ann"
    # And the same version saying otherwise is refused
    lines = [json.loads(line) for line in released.read_text("utf-8").splitlines()]
    other = tmp_path / "other.jsonl"
    changed = [{**h, "reason": "another case"} for h in lines]
    other.write_text("\n".join(json.dumps(h) for h in changed) + "\n", "utf-8")
    code, out = _cli(capsys, "import", str(other), "--json", table="other")
    assert code == 1
    assert {o["outcome"] for o in json.loads(out)} == {"refused"}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"hold_id": "NOT-AN-ID"}, "hold_id"),
        ({"to": "2026-11-25T00:00:00Z"}, "31 days"),
        ({"version": 2}, "version"),
        ({"active": False}, "active"),
        ({"history": []}, "history"),
        ({"created_by": "mallory"}, "history[0]"),
        ({"device": "../etc"}, "device"),
        ({"reason": " padded "}, "reason"),
        ({"extra": 1}, "extra"),
    ],
)
def test_a_file_with_one_bad_line_imports_nothing(
    dynamodb: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    change: dict[str, Any],
    named: str,
) -> None:
    # Given an export of one hold, and a second line changed to break one rule
    good = _added(capsys, "cam-1", SPAN, "alice")
    bad = {**_added(capsys, "cam-1", LATER, "alice"), **change}
    dynamodb.create_table(**holds_table_definition("empty"))
    file = tmp_path / "bad.jsonl"
    file.write_text(json.dumps(good) + "\n\n" + json.dumps(bad) + "\n", "utf-8")
    # When it is imported
    code, out = _cli(capsys, "import", str(file), table="empty")
    # Then nothing is imported (exit 2), and the message names the line and what is wrong
    assert code == 2
    assert "line 3" in out and named in out
    assert list(HoldStore(dynamodb, "empty").scan_holds()) == []


def test_a_hold_twice_in_one_file_imports_nothing(
    dynamodb: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hold = _added(capsys, "cam-1", SPAN, "alice")
    file = tmp_path / "twice.jsonl"
    file.write_text(json.dumps(hold) + "\n" + json.dumps(hold) + "\n", "utf-8")
    code, out = _cli(capsys, "import", str(file))
    assert code == 2 and "line 2" in out and "line 1" in out
