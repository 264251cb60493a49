"""Reconcile and rebuild as ops run them: from S3 Inventory reports (CSV, Parquet,
ORC), step by step as Step Functions drives the Lambda, and from the CLI."""

from __future__ import annotations

import functools
import json
import random
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeSerializer

from tests.support.s3_world import World
from tests.support.tables import TableFactory
from video_index.aws.clients import Clients
from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.cli.main import main
from video_index.core.errors import BadInput
from video_index.core.settings import Settings
from video_index.ingest.batches import IngestService
from video_index.ingest.ingestor import Ingestor
from video_index.ops.service import OperationError, Ops, build_ops
from video_index.ops.steps import dispatch
from worlds import events as ev
from worlds.aggregation import Aggregation
from worlds.inventory_fixtures import destination_uri, write_inventory
from worlds.read_model_view import differences, scan_items, view
from worlds.reference_projection import list_bucket, project, with_aggregates

BUCKET = ev.BUCKET
REPORTS = "video-index-reports"
_ser = TypeSerializer().serialize


def key(i: int, device: str = "cam-a") -> str:
    day = 28 + i % 3
    return f"v1/video/{device}/2026/11/{day}/10/202611{day}T1000{i % 60:02d}.000Z_1000_{i:016x}.mp4"


@pytest.fixture
def ops(aws: None, new_table: TableFactory) -> tuple[Ops, Any, str]:
    s3 = boto3.client("s3")
    for name in (BUCKET, REPORTS):
        s3.create_bucket(Bucket=name)
    dynamodb, table = new_table()
    world = World(s3, BUCKET, random.Random(3))
    for i in range(30):
        world.upload(key(i, "cam-a" if i % 2 else "cam-b"), 0)
    service = IngestService(
        Ingestor(ReadModelStore(dynamodb, table, tombstone_days=35), ObjectStore(s3, BUCKET))
    )
    for record in world.events:
        service.handle(ev.sqs_event(ev.sqs_record(ev.s3_notification(record))), None)
    aggregation = Aggregation(dynamodb, table)
    aggregation.drain()
    settings = Settings(
        bucket=BUCKET,
        table=table,
        reports_bucket=REPORTS,
        inventory_destination=destination_uri(REPORTS, "inventory", BUCKET, "daily"),
    )
    return (
        build_ops(
            settings,
            Clients(dynamodb=dynamodb, s3=s3, sqs=boto3.client("sqs")),
            pump=aggregation.drain,
        ),
        dynamodb,
        table,
    )


def lose_events(ops: Ops, dynamodb: Any, table: str) -> None:
    """Drift: two objects deleted and one created without their events reaching ingest."""
    s3 = ops.clients.s3
    s3.delete_object(Bucket=BUCKET, Key=key(1, "cam-a"))
    s3.delete_object(Bucket=BUCKET, Key=key(2, "cam-b"))
    s3.put_object(Bucket=BUCKET, Key=key(40, "cam-c"), Body=b"new")


def whole_model_differences(
    ops: Ops, dynamodb: Any, table: str, generation: int = 1
) -> dict[str, Any]:
    """Where the read model differs from P(S3) in any item class (segments, bucket figures,
    hour coverage, device totals, the device list), once the stream is aggregated (a new
    consumer re-reads it from its start: what was applied already changes nothing)."""
    Aggregation(dynamodb, table).drain()
    expected = with_aggregates(project(list_bucket(ops.clients.s3, BUCKET)), 1000)
    return differences(view(dynamodb, table, generation=generation), expected)


def inventory_now(ops: Ops, fmt: str) -> str:
    s3 = ops.clients.s3
    rows = [
        (o["Key"], o["Size"], o["ETag"].strip('"'), o["LastModified"])
        for o in list_bucket(s3, BUCKET)
    ] + [("tmp/ünï cödé %2B+.bin", 3, "e", datetime(2026, 11, 30, tzinfo=UTC))]
    return write_inventory(
        s3,
        dest_bucket=REPORTS,
        prefix="inventory",
        source_bucket=BUCKET,
        config_id="daily",
        objects=rows,
        fmt=fmt,
        files=2,
        created=datetime(2026, 11, 30, 1, tzinfo=UTC),
    )


@pytest.mark.parametrize("fmt", ["CSV", "Parquet", "ORC"])
def test_reconcile_from_the_newest_inventory_report(ops: Any, fmt: str) -> None:
    o, dynamodb, table = ops
    # Given lost events, and an inventory report of the bucket as it is now
    lose_events(o, dynamodb, table)
    inventory_now(o, fmt)
    # When reconcile runs without naming a manifest
    report = o.reconcile(source="inventory")
    # Then it found the newest report and repaired exactly the drift
    assert report.manifest and report.manifest.endswith("manifest.json")
    assert (report.entries_added, report.entries_removed, report.foreign_keys) == (1, 2, 1)
    assert whole_model_differences(o, dynamodb, table) == {}
    # And the report is in the reports bucket
    saved = o.get_json(REPORTS, f"reconcile/{report.run_id}/report.json")
    assert saved["entries_removed"] == 2


def test_an_inventory_of_another_bucket_is_refused(ops: Any) -> None:
    o, _, _ = ops
    manifest = write_inventory(
        o.clients.s3,
        dest_bucket=REPORTS,
        prefix="inventory",
        source_bucket="someone-else",
        config_id="daily",
        objects=[],
        fmt="CSV",
        created=datetime(2026, 11, 30, tzinfo=UTC),
    )
    with pytest.raises(OperationError, match="inventory of bucket 'someone-else'"):
        o.reconcile(source="inventory", manifest=manifest)


def run_map(
    o: Ops, action: str, location: dict[str, str], batch_input: dict[str, Any], batch_size: int = 2
) -> list[dict[str, Any]]:
    """What a Distributed Map does: read the item list, call the worker per batch."""
    items = o.get_json(location["Bucket"], location["Key"])
    return [
        dispatch(
            o, {"action": action, "Items": items[i : i + batch_size], "BatchInput": batch_input}
        )
        for i in range(0, len(items), batch_size)
    ]


def results_of(o: Ops, name: str, outputs: list[dict[str, Any]]) -> dict[str, str]:
    """What a Distributed Map's ResultWriter leaves: child outputs in S3, and a manifest."""
    o.put_json(
        f"reconcile/results/{name}/SUCCEEDED_0.json",
        [{"Output": json.dumps(out), "Status": "SUCCEEDED"} for out in outputs],
    )
    return o.put_json(
        f"reconcile/results/{name}/manifest.json",
        {
            "DestinationBucket": REPORTS,
            "ResultFiles": {
                "SUCCEEDED": [{"Key": f"reconcile/results/{name}/SUCCEEDED_0.json", "Size": 1}],
                "FAILED": [],
                "PENDING": [],
            },
        },
    )


def plan_as_step_functions_does(o: Ops, plan: dict[str, Any]) -> dict[str, Any]:
    """The fingerprint map over the plan's units, the reduce map over its shards, then the
    decision's input, as the state machines hand them over."""
    units = run_map(
        o,
        "fingerprint-units",
        plan["units"],
        {
            "folder": plan["folder"],
            "manifest": plan["manifest"],
            "generation": plan["generation"],
            "shard_count": plan["shard_count"],
        },
        batch_size=1,
    )
    shards = run_map(
        o,
        "fingerprint-reduce",
        plan["shards"],
        {"folder": plan["folder"], "unit_count": plan["unit_count"]},
        batch_size=1,
    )
    return {
        "plan": plan,
        "unit_results": {"ResultWriterDetails": results_of(o, "units", units)},
        "shard_results": {"ResultWriterDetails": results_of(o, "shards", shards)},
    }


def test_reconcile_steps_as_step_functions_runs_them(ops: Any) -> None:
    o, dynamodb, table = ops
    lose_events(o, dynamodb, table)
    manifest = inventory_now(o, "Parquet")
    # Given the inventory-landed trigger's input (manifest.checksum, not manifest.json)
    plan = dispatch(
        o,
        {
            "action": "reconcile-plan",
            "source": "inventory",
            "manifest_checksum": manifest.replace("manifest.json", "manifest.checksum"),
            "dry_run": False,
            "force": False,
        },
    )
    # When the fingerprint and reduce maps have run, and the decision
    decided = dispatch(o, {"action": "reconcile-decide", **plan_as_step_functions_does(o, plan)})
    assert decided["to_repair"] == 3
    outputs = run_map(o, "reconcile-partitions", decided["partitions"], {"run_id": plan["run_id"]})
    results = results_of(o, "repairs", outputs)
    report = dispatch(
        o,
        {
            "action": "reconcile-report",
            "run_id": plan["run_id"],
            "results": {"ResultWriterDetails": results},
        },
    )
    assert (report["entries_added"], report["entries_removed"], report["partitions_repaired"]) == (
        1,
        2,
        3,
    )
    assert whole_model_differences(o, dynamodb, table) == {}


def test_rebuild_steps_as_step_functions_runs_them(ops: Any) -> None:
    o, dynamodb, table = ops
    lose_events(o, dynamodb, table)
    started = dispatch(o, {"action": "rebuild-start", "source": "list"})
    assert started["generation"] == 2
    run_map(
        o,
        "rebuild-partitions",
        started["partitions"],
        {"rebuild_id": started["rebuild_id"], "generation": 2},
    )
    finished = dispatch(
        o,
        {
            "action": "rebuild-finish",
            "rebuild_id": started["rebuild_id"],
            "generation": 2,
            "settle_seconds": 0,
        },
    )
    assert finished == {"phase": "switched", "current": 2, "previous": 1}
    dispatch(o, {"action": "rebuild-drop", "generation": 1})
    assert whole_model_differences(o, dynamodb, table, generation=2) == {}
    assert not [i for i in scan_items(dynamodb, table) if i["pk"].startswith("g1#")]


def test_rebuild_start_takes_its_partitions_from_the_manifest_it_is_given(ops: Any) -> None:
    o, _, _ = ops
    # Given an inventory report that lists only cam-a's objects (a report of the past)
    s3 = o.clients.s3
    rows = [
        (obj["Key"], obj["Size"], obj["ETag"].strip('"'), obj["LastModified"])
        for obj in list_bucket(s3, BUCKET)
        if "/cam-a/" in obj["Key"]
    ]
    manifest = write_inventory(
        s3,
        dest_bucket=REPORTS,
        prefix="inventory",
        source_bucket=BUCKET,
        config_id="daily",
        objects=rows,
        fmt="CSV",
        created=datetime(2026, 11, 30, 2, tzinfo=UTC),
    )
    # When the rebuild machine's first step gets that manifest as its execution input does
    started = dispatch(o, {"action": "rebuild-start", "source": "inventory", "manifest": manifest})
    # Then the partition list holds exactly cam-a's partitions (not a listing of the bucket)
    listed = o.get_json(started["partitions"]["Bucket"], started["partitions"]["Key"])
    assert listed and {p["device"] for p in listed} == {"cam-a"}
    o.rebuilder.abort()


@pytest.mark.parametrize(
    ("event", "field"),
    [
        ({"action": "rebuild-partitions", "Items": [], "BatchInput": {}}, "BatchInput.generation"),
        ({"action": "rebuild-finish"}, "generation"),
        ({"action": "reconcile-report"}, "run_id"),
        ({"action": "reconcile-plan", "source": "ftp"}, "source"),
        ({"action": "fingerprint-units", "Items": [], "BatchInput": {}}, "BatchInput.folder"),
        (
            {
                "action": "fingerprint-units",
                "Items": [{"unit": "x"}],
                "BatchInput": {"folder": "f"},
            },
            "Items.0.unit",
        ),
        (
            {"action": "fingerprint-reduce", "Items": [], "BatchInput": {"folder": "f"}},
            "BatchInput.unit_count",
        ),
        ({"action": "reconcile-decide"}, "plan"),
        ({"action": "rebuild-plan", "source": "ftp"}, "source"),
    ],
)
def test_a_step_input_that_breaks_its_payload_names_the_field(
    ops: Any, event: dict[str, Any], field: str
) -> None:
    # When a step gets an input its typed payload refuses
    with pytest.raises(BadInput) as refused:
        dispatch(ops[0], event)
    # Then the error names the field, not a KeyError deep in the step
    assert refused.value.parameter == field


def test_unknown_action_is_named(ops: Any) -> None:
    with pytest.raises(OperationError, match="unknown action 'explode'"):
        dispatch(ops[0], {"action": "explode"})


@pytest.mark.parametrize("engine", ["moto"])
def test_cli_reconcile_dry_run_then_real_run_then_rebuild(
    ops: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    o, dynamodb, table = ops
    lose_events(o, dynamodb, table)
    # (deployed, Lambda consumes the table's stream; here the ops' barrier delivers it)
    pumped = functools.partial(build_ops, pump=Aggregation(dynamodb, table).drain)
    monkeypatch.setattr("video_index.ops.service.build_ops", pumped)
    monkeypatch.setenv("VIDEO_INDEX_BUCKET", BUCKET)
    monkeypatch.setenv("VIDEO_INDEX_TABLE", table)
    monkeypatch.setenv("VIDEO_INDEX_REPORTS_BUCKET", REPORTS)
    # dry run: a report, no writes
    before = scan_items(dynamodb, table)
    assert main(["reconcile", "--in-process", "--source", "list", "--dry-run", "--json"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["dry_run"] and dry["entries_removed"] == 2
    assert scan_items(dynamodb, table) == before
    # real run
    assert main(["reconcile", "--in-process", "--source", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries_added"] == 1
    # no inventory configured: a clear usage error
    assert main(["reconcile", "--in-process"]) == 2
    assert "VIDEO_INDEX_INVENTORY_DESTINATION" in capsys.readouterr().out
    # rebuild with a progress bar, then status
    assert (
        main(
            [
                "rebuild",
                "start",
                "--in-process",
                "--settle-seconds",
                "0",
                "--drop-grace-seconds",
                "0",
            ]
        )
        == 0
    )
    assert "generation 2 serves" in capsys.readouterr().out
    assert main(["rebuild", "status", "--in-process", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["phase"], status["current"], status["building"]) == ("switched", 2, None)
    expected = project(list_bucket(o.clients.s3, BUCKET)).segments
    assert view(dynamodb, table, generation=2).segments == expected
    assert main(["rebuild", "abort", "--in-process"]) == 1  # nothing running
    assert "no rebuild is running" in capsys.readouterr().out
