"""One sample through the real pipeline on moto, every request counted (bench/cost.py).

The sample's life, on a simulated clock (no sleeps; the product's clocks injected):

1. **Recording.** Each camera uploads its segments through the uploader
   (:func:`video_index.upload.upload_segment`: a conditional PUT of a small real fMP4);
   moto's S3 notifies the queue (:mod:`bench.cost_s3`: S3's event shape, counted); the
   ingest function takes the queue in Lambda's batches; the consumer takes the read
   model's stream in Lambda's batches (:mod:`bench.cost_sources`).
2. **A day of reading** (:mod:`bench.cost_api`), with the footage present.
3. **Reconcile**, from an S3 Inventory report of the bucket, as the state machine's
   steps run it in process (:meth:`video_index.ops.service.Ops.reconcile`); it must find
   nothing to repair (the read model is the projection of S3), else the run fails.
4. **Retention**, 30 days after the sample's end: the retention job
   (:func:`video_index.holds.service.build_retention`) deletes the sample's footage;
   the delete markers' events go through ingest, the tombstones through the consumer.
5. **The undelete window's end**, 7 days later: lifecycle's noncurrent-version
   expirations (:func:`bench.cost_s3.expire_noncurrent`), through ingest if subscribed.
6. **Tombstones expire**: each tombstone item is deleted as DynamoDB's TTL deletes it
   (free, by the bench), and its ``REMOVE`` record goes to the consumer.

Every call of each component is counted by the :class:`bench.cost_meter.Ledger`; the
item sizes the storage and the reconcile's Scan are priced from are read at the end
of each phase.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from moto import mock_aws

from bench.capacity import item_size
from bench.context import BenchmarkFailed
from bench.cost_api import ApiDay, typical_day
from bench.cost_meter import Ledger
from bench.cost_s3 import expire_noncurrent, s3_events
from bench.cost_sources import QueueSource, StreamSource
from bench.cost_world import BUCKET, REPORTS, Sample, World
from video_index.core.layout import bucket_pk, devices_pk, segment_pk
from video_index.core.timeunits import to_epoch_ms
from video_index.holds.service import build_retention
from video_index.ops.service import build_ops
from video_index.upload import upload_segment
from worlds.inventory_fixtures import write_inventory
from worlds.media import fmp4_with
from worlds.reference_projection import list_bucket

#: When the retention job deletes the sample, and lifecycle ends the undelete window.
RETENTION_AFTER: Final = timedelta(days=30, hours=1)
GENERATION: Final = 1
UNDELETE_DAYS: Final = 7


@dataclass
class ItemSizes:
    """Bytes of the read model's items, as DynamoDB bills them, by kind of item."""

    present: list[int] = field(default_factory=list)
    tombstones: list[int] = field(default_factory=list)
    buckets: list[int] = field(default_factory=list)
    devices: list[int] = field(default_factory=list)
    #: One wire item of each segment state (what a Scan of the steady state reads).
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class SampleRun:
    sample: Sample
    ledger: Ledger
    uploads: int
    sizes: ItemSizes
    api: ApiDay
    #: Rows of the inventory report reconcile read (the objects S3 Inventory lists).
    inventory_rows: int
    #: Stream records the filter dropped (the consumer's own items' changes).
    filtered_records: int
    #: EMF metric lines' bytes per function (what CloudWatch Logs ingests).
    log_bytes: dict[str, int]
    #: Whether lifecycle's version expiry rewrote the tombstones (their TTL restarts).
    tombstones_rewritten: bool


def run_sample(sample: Sample, *, window_s: float, batch_size: int) -> SampleRun:
    """The whole life of ``sample`` on a fresh moto (see the module documentation)."""
    ledger = Ledger()
    with mock_aws(), s3_events(ledger.messages):
        world = World(ledger)
        queue = QueueSource(world)
        stream = StreamSource(world, window_s=window_s, batch_size=batch_size)
        at = _record(world, sample, queue, stream)
        sizes = _sizes(world, sample)
        rows = _reconcile(world, sample)
        api = typical_day(world, sample)
        retention_at = sample.end + RETENTION_AFTER
        _retention(world, retention_at)
        queue.poll(drain=True)
        stream.deliver(lambda _: to_epoch_ms(retention_at))
        expired_at = retention_at + timedelta(days=UNDELETE_DAYS)
        before = _versions(_segment_items(world, sample))
        expire_noncurrent(BUCKET, _noncurrent(world))
        queue.poll(drain=True)
        stream.deliver(lambda _: to_epoch_ms(expired_at))
        after = _sizes(world, sample)
        sizes.tombstones, sizes.examples["tombstone"] = (
            after.tombstones,
            after.examples["tombstone"],
        )
        rewritten = _versions(_segment_items(world, sample)) != before
        _expire_tombstones(world, sample)
        stream.deliver(lambda _: to_epoch_ms(expired_at + timedelta(days=35)))
        return SampleRun(
            sample=sample,
            ledger=ledger,
            uploads=len(at),
            sizes=sizes,
            api=api,
            inventory_rows=rows,
            filtered_records=stream.filtered,
            log_bytes={"ingest": queue.log_bytes, "aggregation": stream.log_bytes},
            tombstones_rewritten=rewritten,
        )


def _record(
    world: World, sample: Sample, queue: QueueSource, stream: StreamSource
) -> dict[str, int]:
    """The cameras upload; ingest follows the queue; then the consumer the stream.
    Returns when each key was uploaded (epoch ms), by key."""
    s3 = world.clients("camera").s3
    at: dict[str, int] = {}
    for upload in sample.uploads():
        result = upload_segment(
            s3,
            BUCKET,
            fmp4_with(upload.key.encode()),
            kind="video",
            device=upload.segment.device,
            start=upload.segment.start,
            duration_ms=upload.segment.duration_ms,
            ext="mp4",
        )
        at[result.key.rsplit("/", 1)[-1]] = to_epoch_ms(upload.at)
        queue.poll()
    queue.poll(drain=True)
    delivered = stream.deliver(lambda r: at[r["dynamodb"]["Keys"]["sk"]["S"]] + 1_000)
    if delivered != len(at):
        raise BenchmarkFailed(f"{delivered} segment changes reached the consumer, not {len(at)}")
    return at


def _sizes(world: World, sample: Sample) -> ItemSizes:
    """Billed bytes of the sample's present segment items, tombstones, hour items and
    device items (each camera's partitions read by Query)."""
    sizes = ItemSizes()
    for device in sample.devices():
        for item in _partition(world, segment_pk(GENERATION, device, "video")):
            state = "present" if item["present"]["BOOL"] else "tombstone"
            (sizes.present if state == "present" else sizes.tombstones).append(item_size(item))
            sizes.examples.setdefault(state, item)
        sizes.buckets += [item_size(i) for i in _partition(world, bucket_pk(GENERATION, device))]
    sizes.devices = [
        item_size(i)
        for i in _partition(world, devices_pk(GENERATION))
        if i["sk"]["S"] in sample.devices()
    ]
    return sizes


def _partition(world: World, pk: str) -> list[dict[str, Any]]:
    """Every item of one partition (uncounted: the bench's own look)."""
    pages = world.admin.dynamodb.get_paginator("query").paginate(
        TableName=world.settings.table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": pk}},
        ConsistentRead=True,
    )
    return [item for page in pages for item in page.get("Items", [])]


def _segment_items(world: World, sample: Sample) -> list[dict[str, Any]]:
    return [
        item
        for device in sample.devices()
        for item in _partition(world, segment_pk(GENERATION, device, "video"))
    ]


def _reconcile(world: World, sample: Sample) -> int:
    """Reconcile from an inventory report of the bucket; the rows it listed."""
    listing = list_bucket(world.admin.s3, BUCKET)
    rows = [(o["Key"], o["Size"], o["ETag"].strip('"'), o["LastModified"]) for o in listing]
    write_inventory(
        world.admin.s3,
        dest_bucket=REPORTS,
        prefix="inventory",
        source_bucket=BUCKET,
        config_id="daily",
        objects=rows,
        fmt="Parquet",
        created=sample.end + timedelta(hours=3),
    )
    now = (sample.end + timedelta(hours=4)).timestamp()
    ops = build_ops(world.settings, world.clients("reconcile"), clock=lambda: now)
    with world.ledger.invocation("reconcile"):
        report = ops.reconcile(source="inventory")
    if report.partitions_differing or report.objects_seen != len(rows):
        raise BenchmarkFailed(
            f"reconcile found {report.partitions_differing} partition(s) differing and saw "
            f"{report.objects_seen} of {len(rows)} objects: the read model is not P(S3)"
        )
    return len(rows)


def _retention(world: World, at: datetime) -> None:
    """The daily retention job at ``at``: every segment of the sample is past retention."""
    moment = at.timestamp()
    job = build_retention(world.settings, world.clients("retention"), clock=lambda: moment)
    with world.ledger.invocation("retention"):
        report = job.run()
    if report.deleted == 0:
        raise BenchmarkFailed("the retention job deleted nothing")


def _noncurrent(world: World) -> list[tuple[str, str]]:
    """(key, version id) of every object version a delete marker has made noncurrent."""
    found: list[tuple[str, str]] = []
    pages = world.admin.s3.get_paginator("list_object_versions").paginate(Bucket=BUCKET)
    for page in pages:
        found += [(v["Key"], v["VersionId"]) for v in page.get("Versions", []) if not v["IsLatest"]]
    return found


def _expire_tombstones(world: World, sample: Sample) -> None:
    """Delete each tombstone as DynamoDB's TTL does (no charge): its REMOVE reaches the
    stream like any change."""
    for item in _segment_items(world, sample):
        if not item["present"]["BOOL"]:
            world.admin.dynamodb.delete_item(
                TableName=world.settings.table, Key={"pk": item["pk"], "sk": item["sk"]}
            )


def _versions(items: list[dict[str, Any]]) -> Counter[str]:
    return Counter(item["ver"]["N"] for item in items)
