"""Invariant I1 (docs/ingest.md): whatever the delivery does, the read model ends equal to P(S3).

Given a random history of uploads, overwrites, deletes, lifecycle expirations and
permanent version deletions on a versioned bucket, when every resulting event is
delivered 1-3 times, shuffled, batched and processed by 4 concurrent workers
through transient DynamoDB/S3 failures that SQS-style redelivery retries, and the
table's stream is aggregated meanwhile and afterwards by a consumer whose batches
are cut anywhere, delivered again, resumed, bisected, failed transiently and
killed mid-batch, then the read model equals an independent projection of the
bucket listing: segments, bucket figures, fingerprints, hour coverage, device
totals, ranges and the devices list. Runs on moto (and on the endpoint of
``VIDEO_INDEX_TEST_DYNAMODB_ENDPOINT`` when set).
"""

from __future__ import annotations

import queue
import random
import threading
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from tests.support.aws_doubles import DYNAMODB_FAULTS, S3_FAULTS, FlakyClient, SerializedClient
from tests.support.s3_world import DEVICES, OTHER_KEYS, Op, World, ops, segments
from tests.support.stream_delivery import ChaoticStreamSource, Killer
from tests.support.tables import ENGINES, make_table_factory
from video_index.aggregate.consumer import Aggregator
from video_index.aggregate.store import AggregateStore
from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.keys import SegmentKey, format_key
from video_index.core.ranges import merge_ranges
from video_index.ingest.batches import IngestService
from video_index.ingest.ingestor import Ingestor
from worlds import events as ev
from worlds.aggregation import streams_client
from worlds.read_model_view import view
from worlds.reference_projection import list_bucket, project, ranges, with_aggregates

WORKERS = 4
FAULT_RATE = 0.08
TOLERANCE_MS = 1000
MAX_DELIVERIES = 60
DYNAMODB_OPS = frozenset({"get_item", "put_item", "transact_write_items", "query"})
KILL_RATE = 0.03


# -- delivery: SQS-like, at least once, any order, concurrent workers --------------------


def deliver(world: World, services: list[IngestService], rng: random.Random) -> dict[str, int]:
    messages: list[dict[str, Any]] = []
    for record in world.events:
        body = ev.s3_notification(record)
        messages.extend(ev.sqs_record(body) for _ in range(rng.randint(1, 3)))
    messages.append(ev.sqs_record(ev.test_event(world.bucket)))
    rng.shuffle(messages)
    pending: queue.Queue[dict[str, Any]] = queue.Queue()
    for message in messages:
        pending.put(message)
    attempts: dict[str, int] = {}
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(service: IngestService, seed: int) -> None:
        local_rng = random.Random(seed)
        while True:
            batch: list[dict[str, Any]] = []
            for _ in range(local_rng.randint(1, 10)):
                try:
                    batch.append(pending.get_nowait())
                except queue.Empty:
                    break
            if not batch:
                return
            try:
                response = service.handle(ev.sqs_event(*batch), None)
            except BaseException as exc:  # a handler crash would fail the whole batch
                errors.append(exc)
                return
            assert response is not None
            failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
            for message in batch:
                if message["messageId"] in failed:
                    with lock:
                        attempts[message["messageId"]] = attempts.get(message["messageId"], 1) + 1
                        if attempts[message["messageId"]] > MAX_DELIVERIES:
                            errors.append(AssertionError(f"{message['body']} never succeeded"))
                            return
                    pending.put(message)  # visibility timeout over: redelivered

    threads = [
        threading.Thread(target=worker, args=(service, rng.random())) for service in services
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # a worker that found the queue momentarily empty may have left retries behind
    while not pending.empty() and not errors:
        worker(services[0], rng.random())
    if errors:
        raise errors[0]
    return attempts


def _consume_until(stream: ChaoticStreamSource, done: threading.Event) -> None:
    while not done.is_set():
        stream.drain()
        done.wait(0.01)


def run_world(
    engine: str, request: pytest.FixtureRequest, pool: list[str], history: list[Op], seed: int
) -> None:
    rng = random.Random(seed)
    with mock_aws():
        s3_raw = boto3.client("s3")
        bucket = "video-index-segments"
        s3_raw.create_bucket(Bucket=bucket)
        s3_raw.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        world = World(s3_raw, bucket, rng)
        world.play(pool, history)

        ddb_raw, table = make_table_factory(engine, request)()
        lock = threading.Lock()
        s3 = SerializedClient(s3_raw, lock)
        ddb = ddb_raw if engine == "endpoint" else SerializedClient(ddb_raw, lock)
        flaky_ddb = FlakyClient(ddb, DYNAMODB_FAULTS, FAULT_RATE, seed, DYNAMODB_OPS)
        flaky_s3 = FlakyClient(s3, S3_FAULTS, FAULT_RATE, seed + 1, frozenset({"head_object"}))
        services = [
            IngestService(
                Ingestor(
                    ReadModelStore(flaky_ddb, table, tombstone_days=35),
                    ObjectStore(flaky_s3, bucket),
                )
            )
            for _ in range(WORKERS)
        ]

        consumer_ddb = Killer(
            FlakyClient(ddb, DYNAMODB_FAULTS, FAULT_RATE, seed + 2, DYNAMODB_OPS), KILL_RATE, seed
        )
        aggregator = Aggregator(
            ReadModelStore(consumer_ddb, table, tombstone_days=35),
            AggregateStore(consumer_ddb, table, gap_tolerance_ms=TOLERANCE_MS),
        )
        stream = ChaoticStreamSource(
            ddb,
            SerializedClient(streams_client(ddb_raw), lock),
            table,
            aggregator.handle,
            seed=seed,
            batch_size=rng.randint(1, 50),
        )

        # When: every event delivered, retried until it sticks, while the stream is consumed
        done = threading.Event()
        consumer = threading.Thread(target=_consume_until, args=(stream, done))
        consumer.start()
        try:
            deliver(world, services, rng)
        finally:
            done.set()
            consumer.join()
        stream.drain()  # and what ingest wrote last

        # Then: the read model is P(S3), item for item
        expected = with_aggregates(project(list_bucket(s3_raw, bucket)), TOLERANCE_MS)
        actual = view(ddb_raw, table)
        assert actual.segments == expected.segments
        assert actual.buckets == expected.buckets
        assert actual.runs == expected.runs
        assert actual.totals == expected.totals
        live_devices = {device for (device, _, _), _f in actual.buckets.items()}
        assert expected.devices <= actual.devices
        assert live_devices == expected.devices
        for device in DEVICES:
            read_model_spans = [
                (s.start, s.end)
                for s in actual.segments.values()
                if s.device == device and s.kind == "video"
            ]
            assert merge_ranges(read_model_spans, TOLERANCE_MS) == ranges(
                expected, device, TOLERANCE_MS
            )
        ddb_raw.delete_table(TableName=table)


@pytest.mark.parametrize("engine", ENGINES)
@settings(
    max_examples=12,  # a CI budget: `make test-deep` runs ten times as many, at random
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)
@given(
    pool=st.lists(segments(), min_size=1, max_size=12, unique_by=lambda s: s.key),
    extra=st.lists(st.sampled_from(OTHER_KEYS), max_size=2),
    history=ops,
    seed=st.integers(0, 2**32),
)
def test_read_model_converges_to_projection_of_s3(
    engine: str,
    request: pytest.FixtureRequest,
    pool: list[SegmentKey],
    extra: list[str],
    history: list[Op],
    seed: int,
) -> None:
    keys = [format_key(segment) for segment in pool] + extra
    run_world(engine, request, keys, history, seed)
