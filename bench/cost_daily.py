"""The daily jobs at a camera's real size (bench/cost.py): retention over one camera-day,
and reconcile's time per inventory row and per read-model item.

A sample of minutes cannot price a job that runs once a day over everything: its
per-run requests (folder LISTs, a holds Query per device) would be multiplied with the
sample's segments. So:

* **Retention** runs here over a whole day of one camera's keys, in a bucket of its own
  (put straight into moto's backend, no notifications: the deletions' events are the
  sample's part), with the holds table: its requests and its time are one camera-day.
* **Reconcile** is priced per row and per item. Its time per inventory row is measured
  on an S3 Inventory report (Parquet) of :data:`INVENTORY_ROWS` of the camera's keys,
  through the map's ``run_unit`` (GET, MD5, columns, census); its time per read-model
  item on a Scan of :data:`SCAN_ITEMS` items shaped like the sample's (present ones and
  tombstones in the steady state's proportion), answered by
  :class:`bench.reconcile_replay.ScanReplay` over loopback HTTP (moto serialises a 1 MB
  page far slower than DynamoDB answers it) and read through ``read_model_partial``,
  the Scan unit's code. The Scan's read units are priced from the items' bytes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import boto3
from moto import mock_aws

from bench.cost_meter import REGION, Ledger
from bench.cost_world import HOLDS, Camera
from bench.reconcile_replay import ScanReplay
from video_index.aws.clients import CLIENT_CONFIG, S3_CONFIG, Clients
from video_index.aws.store import ReadModelStore
from video_index.core.keys import SegmentKey, format_key, segment_id
from video_index.core.settings import Settings
from video_index.core.table_schema import create_tables
from video_index.holds.service import build_retention
from video_index.ops.mapreduce import MemoryPartials, run_unit
from video_index.ops.payloads import UnitBatchInput
from video_index.ops.service import build_ops
from worlds.inventory_fixtures import destination_uri, write_inventory_stream

DAY: Final = datetime(2026, 11, 3, tzinfo=UTC)
INVENTORY_ROWS: Final = 100_000
SCAN_ITEMS: Final = 60_000
RETENTION: Final = "retention"
WireItem = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class DailyJobs:
    ledger: Ledger
    #: Keys the retention day deleted.
    retention_keys: int
    #: Seconds per inventory row and per read-model item of a reconcile run.
    reconcile_s_per_row: float
    reconcile_s_per_item: float


def _keys(camera: Camera, device: str, first: datetime, count: int) -> Iterator[str]:
    step = camera.segment_s * 1000
    for index in range(count):
        start = first + timedelta(milliseconds=index * step)
        yield format_key(
            SegmentKey(
                kind="video",
                device=device,
                start=start,
                duration_ms=step,
                id=segment_id("video", device, start, step, f"{index}".encode()),
                ext="mp4",
            )
        )


def retention_day(camera: Camera, ledger: Ledger) -> int:
    """The retention job over one camera-day; its calls counted under ``retention``."""
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket="cost-day")
        s3.put_bucket_versioning(Bucket="cost-day", VersioningConfiguration={"Status": "Enabled"})
        create_tables(boto3.client("dynamodb", region_name=REGION), "unused", None, None, HOLDS)
        backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
        for key in _keys(camera, f"{camera.name}-day", DAY, camera.segments_per_day):
            backend.put_object("cost-day", key, b"x", disable_notification=True)
        settings = Settings(bucket="cost-day", table="unused", holds_table=HOLDS)
        clients = Clients(
            dynamodb=ledger.client(RETENTION, "dynamodb", config=CLIENT_CONFIG),
            s3=ledger.client(RETENTION, "s3", config=S3_CONFIG),
            sqs=None,
        )
        moment = (DAY + timedelta(days=camera.retention_days + 1, hours=3)).timestamp()
        job = build_retention(settings, clients, clock=lambda: moment)
        with ledger.invocation(RETENTION):
            report = job.run()
    if report.deleted != camera.segments_per_day:
        raise RuntimeError(f"retention deleted {report.deleted} of {camera.segments_per_day}")
    return int(report.deleted)


def seconds_per_row(camera: Camera) -> float:
    """The inventory pass's seconds per row, on a Parquet report of the camera's keys."""
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        for bucket in ("cost-rate", "cost-rate-reports"):
            s3.create_bucket(Bucket=bucket)
        first = DAY - timedelta(days=camera.retention_days)
        rows = (
            (key, camera.segment_bytes, "0" * 32, first)
            for key in _keys(camera, f"{camera.name}-inv", first, INVENTORY_ROWS)
        )
        manifest = write_inventory_stream(
            s3,
            dest_bucket="cost-rate-reports",
            prefix="inventory",
            source_bucket="cost-rate",
            config_id="daily",
            objects=rows,
            fmt="Parquet",
            created=DAY,
            rows_per_file=50_000,
        )
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        create_tables(dynamodb, "cost-rate-model")
        settings = Settings(
            bucket="cost-rate",
            table="cost-rate-model",
            reports_bucket="cost-rate-reports",
            inventory_destination=destination_uri(
                "cost-rate-reports", "inventory", "cost-rate", "daily"
            ),
        )
        ops = build_ops(settings, Clients(dynamodb=dynamodb, s3=s3, sqs=None))
        plan, units = ops.plan(
            run_id="rate",
            folder="reconcile/rate/",
            source="inventory",
            manifest=manifest,
            generation=None,
        )
        run = UnitBatchInput(
            folder=plan.folder,
            manifest=plan.manifest,
            generation=None,
            shard_count=plan.shard_count,
        )
        context = ops.map_context(MemoryPartials())
        began = time.perf_counter()
        seen = sum(run_unit(context, unit, run).objects_seen for unit in units)
        seconds = time.perf_counter() - began
    if seen != INVENTORY_ROWS:
        raise RuntimeError(f"the inventory pass saw {seen} rows, not {INVENTORY_ROWS}")
    return seconds / int(seen)


def seconds_per_item(items: list[WireItem]) -> float:
    """The Scan unit's seconds per item over ``items`` (served from loopback HTTP)."""
    with ScanReplay("http://127.0.0.1:9", "cost-scan", lambda: iter(items)) as replay:
        client = boto3.client(
            "dynamodb",
            endpoint_url=replay.endpoint,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=CLIENT_CONFIG,
        )
        from video_index.ops.mapreduce import read_model_partial

        began = time.perf_counter()
        _, read = read_model_partial(ReadModelStore(client, "cost-scan", tombstone_days=35), 1)
        seconds = time.perf_counter() - began
    if read != len(items):
        raise RuntimeError(f"the Scan read {read} items, not {len(items)}")
    return seconds / int(read)


def scan_world(
    camera: Camera, present: WireItem, tombstone: WireItem, share_present: float
) -> list[WireItem]:
    """:data:`SCAN_ITEMS` items of one camera's segment partition, copies of a real present
    item and tombstone under the camera's successive file names (in the steady state's
    proportion): the read model a Scan reads."""
    device = f"{camera.name}-scan"
    first = DAY - timedelta(days=camera.retention_days)
    out: list[WireItem] = []
    for index, key in enumerate(_keys(camera, device, first, SCAN_ITEMS)):
        item = dict(present if index < share_present * SCAN_ITEMS else tombstone)
        item["pk"] = {"S": f"g1#seg#{device}#video"}
        item["sk"] = {"S": key.rsplit("/", 1)[1]}
        out.append(item)
    return out
