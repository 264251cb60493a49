"""Reconcile restores P(S3) from S3 alone, and refuses to do harm (docs/operations.md)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeSerializer
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from tests.support.s3_world import OTHER_KEYS, Op, World, ops, segments
from tests.support.tables import ENGINES, make_table_factory
from video_index.aws.objects import ListedObject, ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.keys import KEY_PREFIX, SegmentKey, format_key
from video_index.ingest.batches import IngestService
from video_index.ingest.ingestor import Ingestor
from video_index.ops.reconcile import Reconciler
from video_index.ops.report import ReconcileRefused
from worlds import events as ev
from worlds.aggregation import Aggregation
from worlds.read_model_view import FIGURE, differences, scan_items, view
from worlds.reference_projection import list_bucket, project, with_aggregates

_ser = TypeSerializer().serialize
BUCKET = ev.BUCKET
#: The gap tolerance the read model's coverage is kept with (the product's default).
TOLERANCE_MS = 1000


@dataclass
class Ingest:
    """Ingest over one table, and its stream's consumer (drained by :func:`ingest_all`,
    and by the reconciler's barrier)."""

    service: IngestService
    aggregation: Aggregation


def build(s3: Any, dynamodb: Any, table: str) -> tuple[Ingest, Reconciler]:
    store = ReadModelStore(dynamodb, table, tombstone_days=35)
    aggregation = Aggregation(dynamodb, table)
    service = Ingest(IngestService(Ingestor(store, ObjectStore(s3, BUCKET))), aggregation)
    return service, Reconciler(
        store,
        ObjectStore(s3, BUCKET),
        Ingestor(store, ObjectStore(s3, BUCKET)),
        mender=aggregation.mender,
    )


def ingest_all(ingest: Ingest, world: World) -> None:
    for record in world.events:
        event = ev.sqs_event(ev.sqs_record(ev.s3_notification(record)))
        assert ingest.service.handle(event, None) == {"batchItemFailures": []}
    ingest.aggregation.drain()


def corrupt(dynamodb: Any, table: str, rng: random.Random) -> None:
    """Lose 5 % of the segment and bucket items, add ghost entries, and bend aggregates:
    bucket figures, an hour's coverage, and the device totals of every kind whose
    partitions were damaged — what a lost stream range does (a change missing from a
    bucket is missing from its device's totals too). Totals damaged alone, their
    partitions intact, are the gap :func:`test_device_totals_damaged_alone_are_repaired`
    names."""
    items = [i for i in scan_items(dynamodb, table) if i["pk"].startswith(("g1#seg#", "g1#bkt#"))]
    lost = rng.sample(items, k=max(1, len(items) // 20)) if items else []
    for item in lost:
        dynamodb.delete_item(TableName=table, Key={"pk": _ser(item["pk"]), "sk": _ser(item["sk"])})
    for n in range(rng.randint(1, 3)):
        start = 1795910400000 + rng.randint(0, 3 * 86_400_000)
        ghost = SegmentKey(
            kind="video",
            device="cam-a",
            start=_dt(start),
            duration_ms=5000,
            id=f"{n:016x}",
            ext="mp4",
        )
        dynamodb.put_item(
            TableName=table,
            Item={
                k: _ser(v)
                for k, v in {
                    "pk": "g1#seg#cam-a#video",
                    "sk": ghost.filename,
                    "present": True,
                    "size": 7,
                    "etag": "ghost",
                    "seq": "",
                    "ver": 1,
                    "start": ghost.start_ms,
                    "end": ghost.end_ms,
                    "id": ghost.id,
                    "observed": False,
                }.items()
            },
        )
    bent = _bend_buckets(dynamodb, table, rng)
    # A lost item damages its partition when it held something: a segment, or a bucket
    # with figures or coverage (a bucket emptied by deletions is no partition of P(S3)).
    damaged = {_device_kind(item) for item in lost if _holds_something(item)}
    damaged |= bent | {("cam-a", "video")}
    _bend_totals(dynamodb, table, damaged, rng)


def _holds_something(item: dict[str, Any]) -> bool:
    """A segment item, or a bucket item with a figure or coverage (worlds/read_model_view)."""
    if item["pk"].startswith("g1#seg#"):
        return True
    figures = [v for name, v in item.items() if FIGURE.match(name)]
    return bool(item.get("r")) or any(int(v) != 0 for v in figures)


def _device_kind(item: dict[str, Any]) -> tuple[str, str]:
    """The (device, kind) a segment or bucket item belongs to."""
    _, form, device, *kind = item["pk"].split("#")
    return device, kind[0] if form == "seg" else str(item["sk"]).split("#")[0]


def _bend_buckets(dynamodb: Any, table: str, rng: random.Random) -> set[tuple[str, str]]:
    """Bend an hour's coverage with its figures, and two buckets' figures; the (device,
    kind)s bent. (Only buckets with figures: a bucket holding nothing but an hour's arrival
    history, the receipts of files keyed in other hours, is history, not a projection of
    S3. Coverage bent alone is a gap, pinned by
    ``test_an_hours_coverage_damaged_alone_is_repaired``: `make test-deep` found it.)"""
    buckets = [
        i
        for i in scan_items(dynamodb, table)
        if "#bkt#" in i["pk"] and set(i) & {f"{f}{q}" for f in "nbdc" for q in range(4)}
    ]
    bent: set[tuple[str, str]] = set()
    covered = [i for i in buckets if i.get("r")][:1]
    for item in covered:  # an hour's coverage, shifted
        wrong = [int(edge) + 1000 for edge in item["r"]]
        dynamodb.update_item(
            TableName=table,
            Key={"pk": _ser(item["pk"]), "sk": _ser(item["sk"])},
            UpdateExpression="SET r = :r",
            ExpressionAttributeValues={":r": _ser(wrong)},
        )
        bent.add(_device_kind(item))
    for item in covered + rng.sample(buckets, k=min(len(buckets), 2)):
        bent.add(_device_kind(item))
        dynamodb.update_item(
            TableName=table,
            Key={"pk": _ser(item["pk"]), "sk": _ser(item["sk"])},
            UpdateExpression="ADD n0 :a, b2 :b, c1 :c",
            ExpressionAttributeValues={
                ":a": _ser(rng.randint(1, 5)),
                ":b": _ser(-3),
                ":c": _ser(1),
            },
        )
    return bent


def _bend_totals(
    dynamodb: Any, table: str, damaged: set[tuple[str, str]], rng: random.Random
) -> None:
    """Bend the totals of ``damaged`` (device, kind)s whose device item exists: count,
    bytes and first start."""
    for device, kind in sorted(damaged):
        names = {"#n": f"n:{kind}", "#b": f"b:{kind}", "#f": f"f:{kind}"}
        try:
            dynamodb.update_item(
                TableName=table,
                Key={"pk": _ser("g1#devices"), "sk": _ser(device)},
                UpdateExpression="ADD #n :n, #b :b SET #f = :f",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={
                    ":n": _ser(rng.randint(1, 4)),
                    ":b": _ser(rng.randint(1, 1000)),
                    ":f": _ser(1),
                },
            )
        except ClientError as exc:
            assert exc.response["Error"]["Code"] == "ConditionalCheckFailedException"


def _dt(ms: int) -> Any:
    from video_index.core.timeunits import from_epoch_ms

    return from_epoch_ms(ms)


@pytest.mark.parametrize("engine", ENGINES)
@settings(
    max_examples=5,  # a CI budget: `make test-deep` runs ten times as many, at random
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    pool=st.lists(segments(), min_size=1, max_size=12, unique_by=lambda s: s.key),
    extra=st.lists(st.sampled_from(OTHER_KEYS), max_size=2),
    history=ops,
    seed=st.integers(0, 2**32),
)
def test_one_reconcile_repairs_lost_ghost_and_corrupted_items(
    engine: str,
    request: pytest.FixtureRequest,
    pool: list[SegmentKey],
    extra: list[str],
    history: list[Op],
    seed: int,
) -> None:
    rng = random.Random(seed)
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        # Given the ingest property test's world, fully ingested
        world = World(s3, BUCKET, rng)
        world.play([format_key(s) for s in pool] + extra, history)
        dynamodb, table = make_table_factory(engine, request)()
        service, reconciler = build(s3, dynamodb, table)
        ingest_all(service, world)
        # And a read model that lost items, gained ghosts and has bent aggregates
        corrupt(dynamodb, table, rng)
        # When one reconcile runs from a listing
        reconciler.run(ObjectStore(s3, BUCKET).list(KEY_PREFIX), source="list", force=True)
        service.aggregation.drain()
        # Then the whole read model is P(S3) again, item for item: segments, bucket
        # figures, hour coverage, device totals and the device list
        expected = with_aggregates(project(list_bucket(s3, BUCKET)), TOLERANCE_MS)
        assert differences(view(dynamodb, table), expected) == {}
        # And a second run finds nothing to do
        second = reconciler.run(ObjectStore(s3, BUCKET).list(KEY_PREFIX), source="list")
        assert second.partitions_differing == 0
        dynamodb.delete_table(TableName=table)


@pytest.fixture
def small_world(aws: None, new_table: Any) -> tuple[Any, Any, str, Reconciler, list[str]]:
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    dynamodb, table = new_table()
    service, reconciler = build(s3, dynamodb, table)
    world = World(s3, BUCKET, random.Random(1))
    keys = [
        f"v1/video/cam-a/2026/11/29/10/20261129T1000{i:02d}.000Z_1000_{i:016x}.mp4"
        for i in range(20)
    ]
    for key in keys:
        world.upload(key, 0)
    ingest_all(service, world)
    return s3, dynamodb, table, reconciler, keys


def test_an_empty_inventory_does_not_wipe_the_read_model(small_world: Any) -> None:
    _, dynamodb, table, reconciler, _ = small_world
    before = scan_items(dynamodb, table)
    # When a report with no objects (or of another bucket) is reconciled without --force
    with pytest.raises(ReconcileRefused) as refused:
        reconciler.run(iter(()), source="inventory")
    # Then nothing is written and the report says why
    assert "would remove 20 of 20" in str(refused.value)
    assert refused.value.report.removal_share == 1.0
    assert scan_items(dynamodb, table) == before


def test_dry_run_reports_and_writes_nothing(small_world: Any) -> None:
    s3, dynamodb, table, reconciler, keys = small_world
    s3.delete_object(Bucket=BUCKET, Key=keys[0])  # an event lost
    before = scan_items(dynamodb, table)
    report = reconciler.run(ObjectStore(s3, BUCKET).list(KEY_PREFIX), source="list", dry_run=True)
    assert (report.partitions_differing, report.entries_removed) == (1, 1)
    assert report.samples[0] == {"action": "remove", "key": keys[0]}
    assert scan_items(dynamodb, table) == before


def test_a_lagging_inventory_never_removes_live_objects_nor_adds_gone_ones(
    small_world: Any,
) -> None:
    s3, dynamodb, table, reconciler, keys = small_world
    # Given a read model that missed one object's event (so its partition differs)
    lost = keys[2].rsplit("/", 1)[1]
    dynamodb.delete_item(TableName=table, Key={"pk": _ser("g1#seg#cam-a#video"), "sk": _ser(lost)})
    # And an inventory snapshot taken before an upload and before a delete
    snapshot = [ListedObject(k, 32, "x") for k in keys]
    late = "v1/video/cam-a/2026/11/29/10/20261129T103000.000Z_1000_00000000000000ff.mp4"
    s3.put_object(Bucket=BUCKET, Key=late, Body=b"late")  # created after the snapshot, event lost
    s3.delete_object(Bucket=BUCKET, Key=keys[1])  # deleted after the snapshot, event lost
    # When reconcile runs from the stale snapshot
    reconciler.run(snapshot, source="inventory", force=True)
    Aggregation(dynamodb, table).drain()  # what the repairs wrote last (a new consumer
    # re-reads the stream from its start: what was applied already changes nothing)
    # Then the partition was repaired from S3 itself (LIST + HEAD), not from the snapshot:
    # the object created since is kept, the one deleted since is not brought back
    actual = view(dynamodb, table)
    expected = with_aggregates(project(list_bucket(s3, BUCKET)), TOLERANCE_MS)
    assert differences(actual, expected) == {}
    assert ("cam-a", "video", late.rsplit("/", 1)[1]) in actual.segments
    assert ("cam-a", "video", keys[1].rsplit("/", 1)[1]) not in actual.segments


@pytest.mark.xfail(
    strict=True,
    reason="gap: a partition's fingerprint sums bucket figures; coverage bent alone is not seen",
)
def test_an_hours_coverage_damaged_alone_is_repaired(small_world: Any) -> None:
    """Found by `make test-deep` (the property above, at random): an hour bucket's coverage
    runs (``r``) shifted while its figures stay right. The plan compares each partition's
    fingerprint, the sum of its buckets' figures (ops/fingerprints.py), and coverage is no
    figure: the partition compares equal and nothing mends the runs, nor the device totals
    recounted with them. KNOWN GAP, a strict expected failure: the day the plan compares
    coverage, it passes and the marker goes."""
    s3, dynamodb, table, reconciler, _ = small_world
    # Given an hour whose coverage is shifted by a second, its figures right
    (item, *_) = [i for i in scan_items(dynamodb, table) if "#bkt#" in i["pk"] and i.get("r")]
    dynamodb.update_item(
        TableName=table,
        Key={"pk": _ser(item["pk"]), "sk": _ser(item["sk"])},
        UpdateExpression="SET r = :r",
        ExpressionAttributeValues={":r": _ser([int(edge) + 1000 for edge in item["r"]])},
    )
    # When reconcile runs
    reconciler.run(ObjectStore(s3, BUCKET).list(KEY_PREFIX), source="list", force=True)
    Aggregation(dynamodb, table).drain()
    # Then the whole read model is P(S3) again
    expected = with_aggregates(project(list_bucket(s3, BUCKET)), TOLERANCE_MS)
    assert differences(view(dynamodb, table), expected) == {}


@pytest.mark.xfail(
    strict=True,
    reason="gap: reconcile compares partitions only; a device item damaged alone is not seen",
)
def test_device_totals_damaged_alone_are_repaired(small_world: Any) -> None:
    """docs/operations.md: reconcile "mends the buckets and device items it finds wrong".
    It finds a device's totals wrong only through a differing partition of that device
    and kind (``Mender.mend`` recounts them after mending the partition's buckets): a lost
    stream range always leaves one, since a change missing from the totals is missing
    from its bucket too. Totals damaged alone, every partition intact, are never compared
    — the plan (ops/columnar.py ``compare``) has no device-item side. KNOWN GAP, a strict
    expected failure: the day reconcile compares device items, it passes and the marker
    goes."""
    s3, dynamodb, table, reconciler, _ = small_world
    # Given a device item whose totals are wrong, and every partition right
    _bend_totals(dynamodb, table, {("cam-a", "video")}, random.Random(3))
    # When reconcile runs
    reconciler.run(ObjectStore(s3, BUCKET).list(KEY_PREFIX), source="list", force=True)
    Aggregation(dynamodb, table).drain()
    # Then the whole read model is P(S3) again
    expected = with_aggregates(project(list_bucket(s3, BUCKET)), TOLERANCE_MS)
    assert differences(view(dynamodb, table), expected) == {}
