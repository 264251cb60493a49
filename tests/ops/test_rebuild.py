"""Rebuild: a new generation from S3 while the current one serves, switched atomically."""

from __future__ import annotations

import json
import random
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from tests.support.aws_doubles import SerializedClient
from tests.support.s3_world import World
from tests.support.tables import TableFactory
from video_index.app.services import ApiServices, configure
from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.keys import KEY_PREFIX, SegmentKey
from video_index.ingest.batches import IngestService
from video_index.ingest.ingestor import Ingestor
from video_index.media.exports import Exports
from video_index.media.renditions import Renditions
from video_index.ops.rebuild import Rebuilder, RebuildInProgress, partitions_of
from video_index.query.queries import Queries
from worlds import events as ev
from worlds.aggregation import Aggregation, streams_client
from worlds.api_world import resolve
from worlds.read_model_view import differences, scan_items, view
from worlds.reference_projection import list_bucket, project, with_aggregates

BUCKET = ev.BUCKET
INITIAL = 30


def key(i: int) -> str:
    """The i-th 10 s segment of cam-a from 2026-11-29 10:00 UTC."""
    start = datetime(2026, 11, 29, 10, tzinfo=UTC) + timedelta(seconds=10 * i)
    return SegmentKey(
        kind="video", device="cam-a", start=start, duration_ms=10_000, id=f"{i:016x}", ext="mp4"
    ).key


def _no_exports(export_id: str) -> None:
    raise AssertionError(f"unexpected export {export_id}")


class Setup:
    """Ingest, rebuild and API readers on threads, sharing one table and bucket.

    Every call into in-process moto is serialized (one request is atomic, as in
    AWS); an endpoint over HTTP (``VIDEO_INDEX_TEST_DYNAMODB_ENDPOINT``) needs no such help.
    """

    def __init__(self, engine: str, dynamodb: Any, table: str) -> None:
        self.lock = threading.RLock()
        raw_s3 = boto3.client("s3")
        raw_s3.create_bucket(Bucket=BUCKET)
        self.s3 = SerializedClient(raw_s3, self.lock)
        self.dynamodb, self.table = dynamodb, table
        shared = dynamodb if engine == "endpoint" else SerializedClient(dynamodb, self.lock)
        self.world = World(self.s3, BUCKET, random.Random(7))
        self.world_lock = threading.Lock()
        store = lambda: ReadModelStore(shared, table, tombstone_days=35)  # noqa: E731
        self.ingest = IngestService(Ingestor(store(), ObjectStore(self.s3, BUCKET)))
        objects = ObjectStore(self.s3, BUCKET)
        streams = streams_client(dynamodb)
        self.aggregation = Aggregation(
            shared,
            table,
            streams=streams if engine == "endpoint" else SerializedClient(streams, self.lock),
        )
        self.rebuilder = Rebuilder(
            store(),
            objects,
            Ingestor(store(), objects),
            barrier=self.aggregation.barrier,
            mender=self.aggregation.mender,
        )
        queries = Queries(
            store(),
            objects,
            Ingestor(store(), objects),
            gap_tolerance_ms=1000,
            fresh_window_ms=0,
            generation_ttl_seconds=0.05,
        )
        # Exports are not exercised here: nothing may be queued.
        exports = Exports(objects, enqueue=_no_exports, max_bytes=0)
        services = ApiServices(queries, lambda k: k, Renditions(objects), exports)
        configure(lambda: services)

    def upload(self, i: int) -> None:
        with self.world_lock:
            self.world.events.clear()
            self.world.upload(key(i), 0)
            records = list(self.world.events)
        self.deliver(records)

    def delete(self, i: int) -> None:
        with self.world_lock:
            self.world.events.clear()
            self.world.delete(key(i), "ObjectRemoved:DeleteMarkerCreated")
            records = list(self.world.events)
        self.deliver(records)

    def deliver(self, records: list[dict[str, Any]]) -> None:
        batch = ev.sqs_event(*(ev.sqs_record(ev.s3_notification(r)) for r in records))
        assert self.ingest.handle(batch, None) == {"batchItemFailures": []}

    def video_count(self) -> int:
        """Video segments of cam-a as the API answers them (one reader thread only:
        the resolver keeps the current request on itself)."""
        response = resolve(ev.http_request("/devices/cam-a"))
        assert response["statusCode"] == 200, response
        kinds = json.loads(response["body"])["kinds"]
        return int(kinds["video"]["segments"]) if "video" in kinds else 0


@pytest.fixture
def setup(aws: None, engine: str, new_table: TableFactory) -> Setup:
    dynamodb, table = new_table()
    s = Setup(engine, dynamodb, table)
    for i in range(INITIAL):
        s.upload(i)
    s.aggregation.drain()
    return s


def test_rebuild_while_ingesting_switches_atomically_to_an_exact_generation(setup: Setup) -> None:
    counts: list[int] = []
    done = threading.Event()
    errors: list[BaseException] = []

    def mutate() -> None:
        # new uploads and deletes of new uploads, through ingest, during the rebuild
        try:
            for i in range(INITIAL, INITIAL + 40):
                setup.upload(i)
                if i % 3 == 0:
                    setup.delete(i)
                time.sleep(0.005)
        except BaseException as exc:
            errors.append(exc)

    def read() -> None:
        try:
            while not done.is_set():
                counts.append(setup.video_count())
                time.sleep(0.01)
        except BaseException as exc:
            errors.append(exc)

    def aggregate() -> None:  # the stream consumer, running as Lambda would
        try:
            while not done.is_set():
                setup.aggregation.drain()
                time.sleep(0.01)
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=mutate),
        threading.Thread(target=read),
        threading.Thread(target=aggregate),
    ]
    for thread in threads:
        thread.start()
    # When a rebuild runs meanwhile (short settle/grace for the test)
    status = setup.rebuilder.run(settle_seconds=0.2, drop_grace_seconds=0.3)
    threads[0].join()
    done.set()
    threads[1].join()
    threads[2].join()
    assert not errors, errors
    setup.aggregation.drain()
    # Then readers never saw an empty or half-built model: the initial segments were
    # always all there, and never more than ever existed
    assert counts and min(counts) >= INITIAL and max(counts) <= INITIAL + 40
    # And the new generation serves, equal to P(S3), and the old one is gone
    assert (status.current, status.building, status.phase) == (2, None, "switched")
    # (the whole read model: segments, bucket figures, hour coverage, device totals and
    # the device list)
    expected = with_aggregates(project(list_bucket(setup.s3, BUCKET)), 1000)
    actual = view(setup.dynamodb, setup.table, generation=2)
    assert differences(actual, expected) == {}
    assert not [i for i in scan_items(setup.dynamodb, setup.table) if i["pk"].startswith("g1#")]
    assert setup.video_count() == len(expected.segments)


def test_a_second_rebuild_cannot_start_and_abort_keeps_the_current_generation(
    setup: Setup,
) -> None:
    partitions = partitions_of(ObjectStore(setup.s3, BUCKET).list(KEY_PREFIX))
    status = setup.rebuilder.start(partitions)
    assert (status.current, status.building, status.phase) == (1, 2, "building")
    with pytest.raises(RebuildInProgress):
        setup.rebuilder.start(partitions)
    setup.rebuilder.build(2, partitions[:1])
    assert setup.rebuilder.status().partitions_done == 1
    # When the rebuild is aborted
    status = setup.rebuilder.abort()
    # Then generation 1 still serves, whole, and nothing of generation 2 remains
    assert (status.current, status.building, status.phase) == (1, None, "aborted")
    assert setup.video_count() == INITIAL
    assert not [i for i in scan_items(setup.dynamodb, setup.table) if i["pk"].startswith("g2#")]


def _stop_at(moment: str) -> Any:
    """A wait of the in-process run that is Ctrl-C'd at ``moment`` and passes the other."""

    def wait(what: str, seconds: float) -> None:
        if what == moment:
            raise KeyboardInterrupt

    return wait


def _generation_items(setup: Setup, generation: int) -> int:
    items = scan_items(setup.dynamodb, setup.table)
    return len([i for i in items if i["pk"].startswith(f"g{generation}#")])


def test_ctrl_c_before_the_switch_reads_interrupted_and_the_current_generation_serves(
    setup: Setup,
) -> None:
    # When the in-process rebuild is stopped by Ctrl-C while it settles
    with pytest.raises(KeyboardInterrupt):
        setup.rebuilder.run(settle_seconds=60, wait=_stop_at("settle"))
    # Then its phase reads interrupted, never a failure, and says what it left
    status = setup.rebuilder.status()
    assert (status.phase, status.current, status.building) == ("interrupted", 1, None)
    assert status.error == (
        "stopped by Ctrl-C before the switch: generation 1 keeps serving, what was built is dropped"
    )
    # And generation 1 serves, whole; nothing of generation 2 is left
    assert setup.video_count() == INITIAL
    assert _generation_items(setup, 2) == 0
    # And a new rebuild may start
    assert setup.rebuilder.run(settle_seconds=0, drop_grace_seconds=0).current == 2


def test_ctrl_c_after_the_switch_reads_interrupted_and_the_new_generation_serves(
    setup: Setup,
) -> None:
    # When the rebuild is stopped by Ctrl-C during the grace before the drop
    with pytest.raises(KeyboardInterrupt):
        setup.rebuilder.run(settle_seconds=0, wait=_stop_at("drop-grace"))
    # Then generation 2 serves, generation 1 is still there (not dropped), and it says so
    status = setup.rebuilder.status()
    assert (status.phase, status.current, status.previous) == ("interrupted", 2, 1)
    assert status.error == (
        "stopped by Ctrl-C after the switch: generation 2 serves, generation 1 was not dropped"
    )
    assert setup.video_count() == INITIAL
    assert _generation_items(setup, 1) > 0


def test_a_failure_without_words_is_named_by_its_type(setup: Setup) -> None:
    def broken(status: Any) -> None:
        raise RuntimeError

    with pytest.raises(RuntimeError):
        setup.rebuilder.run(settle_seconds=0, progress=broken)
    status = setup.rebuilder.status()
    assert (status.phase, status.error) == ("aborted", "failed: RuntimeError")
