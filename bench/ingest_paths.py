"""The two paths the ingest benchmark compares (bench/ingest.py): the event path (ingest,
then the stream consumer at each batching window) and the floor (one plain item write per
segment), each on its own metered DynamoDB client.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any, Final

import boto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from bench import ingest_tables
from bench.capacity import (
    CapacityMeter,
    TableShape,
    Totals,
    describe_shape,
    item_sizes,
    scan_items,
)
from bench.context import BenchmarkFailed
from bench.stream_consumer import (
    Delivery,
    consumer,
    deliver,
    item_row,
    lambda_batches,
    read_stream,
    record_key,
)
from bench.workload import Upload, Workload, put_objects, sequencers, sqs_events
from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.layout import segment_pk, segment_sk
from video_index.core.table_schema import create_tables, read_model_table_definition
from video_index.ingest.batches import IngestService
from video_index.ingest.events import normalize_sequencer
from video_index.ingest.ingestor import Ingestor, Outcome
from worlds import events as ev
from worlds.aggregation import streams_client

FULL: Final = Workload(devices=50, minutes=60)
QUICK: Final = Workload(devices=10, minutes=10)
#: Unmeasured run through both paths first, so the JVM's warm-up is charged to neither.
WARMUP: Final = Workload(devices=4, minutes=5, device_prefix="warm")
GOAL_RATIO: Final = 1.5
#: The consumer's MaximumBatchingWindowInSeconds: the infra's (first) and two others.
DEFAULT_WINDOW_S: Final = ingest_tables.DEFAULT_WINDOW_S
WINDOWS_S: Final = (30, DEFAULT_WINDOW_S, 300)
REGION: Final = "us-east-1"
BUCKET: Final = ev.BUCKET
GENERATION: Final = 1

_serialize = TypeSerializer().serialize
_deserialize = TypeDeserializer().deserialize


@dataclass
class Run:
    name: str
    table: str
    shape: TableShape
    segments: int
    seconds: float
    totals: Totals
    items: list[dict[str, Any]]

    def per_segment(self, value: float) -> float:
        return value / self.segments

    @property
    def segments_per_second(self) -> float:
        return self.segments / self.seconds


class Dynamo:
    """Clients on the benchmark's DynamoDB Local: an unmetered admin one, and metered ones."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.admin = self.client()

    def client(self) -> Any:
        return boto3.client("dynamodb", endpoint_url=self.endpoint, region_name=REGION)

    def fresh_table(self, purpose: str) -> str:
        """A table exactly as the product creates it (secondary indexes and TTL included)."""
        name = f"bench-{purpose}-{uuid.uuid4().hex[:8]}"
        create_tables(self.admin, name)
        return name

    def fresh_unstreamed_table(self, purpose: str) -> str:
        """The product's table (keys, secondary indexes) without a stream: where a window's
        consumer writes (a stream changes no write's price; DynamoDB Local slows down with
        every stream record it holds)."""
        name = f"bench-{purpose}-{uuid.uuid4().hex[:8]}"
        definition = read_model_table_definition(name)
        definition.pop("StreamSpecification", None)
        self.admin.create_table(**definition)
        self.admin.get_waiter("table_exists").wait(TableName=name)
        return name

    def fresh_plain_table(self, purpose: str) -> str:
        """The product's table keys (pk/sk, on demand) without any secondary index or stream."""
        name = f"bench-{purpose}-{uuid.uuid4().hex[:8]}"
        definition = read_model_table_definition(name)
        definition.pop("StreamSpecification", None)
        definition.pop("GlobalSecondaryIndexes", None)
        definition.pop("LocalSecondaryIndexes", None)
        keys = {k["AttributeName"] for k in definition["KeySchema"]}
        definition["AttributeDefinitions"] = [
            a for a in definition["AttributeDefinitions"] if a["AttributeName"] in keys
        ]
        self.admin.create_table(**definition)
        self.admin.get_waiter("table_exists").wait(TableName=name)
        return name

    def meter(self, table: str) -> tuple[Any, CapacityMeter, TableShape]:
        """A fresh client on the table, metered with the table's index shape, rows by item kind."""
        shape = describe_shape(self.admin, table)
        client = self.client()
        return client, CapacityMeter({table: shape}, row=item_row).attach(client), shape


# -- the two paths -----------------------------------------------------------------------


@dataclass
class Pipeline:
    """One run of the product's path for one batching window: ingest, then the consumer."""

    window_s: int
    event: Run
    consumer: Run
    delivery: Delivery
    shards: int
    outcomes: Counter[Outcome]
    failed: int

    @property
    def all_in(self) -> Run:
        """Both paths' figures together, rows named ``path: operation``, the final items."""
        rows = {f"event path: {k}": v for k, v in self.event.totals.by_operation.items()}
        rows |= {f"consumer: {k}": v for k, v in self.consumer.totals.by_operation.items()}
        a, b = self.event.totals, self.consumer.totals
        totals = Totals(
            requests=a.requests + b.requests,
            failed=a.failed + b.failed,
            retries=a.retries + b.retries,
            write_units=a.write_units + b.write_units,
            index_write_units=a.index_write_units + b.index_write_units,
            read_units=a.read_units + b.read_units,
            by_operation=rows,
            unpriced=a.unpriced | b.unpriced,
        )
        seconds = self.event.seconds + self.consumer.seconds
        return Run(
            f"W = {self.window_s} s", self.event.table, self.event.shape,
            self.event.segments, seconds, totals, self.consumer.items,
        )  # fmt: skip


def ingest_read_model(
    dynamo: Dynamo, s3: Any, batches: list[dict[str, Any]], segments: int, table: str
) -> tuple[Run, Counter[Outcome], int]:
    """The event path: every SQS batch through ``IngestService.handle`` (metered)."""
    client, meter, shape = dynamo.meter(table)
    store = ReadModelStore(client, table, tombstone_days=35)
    service = IngestService(Ingestor(store, ObjectStore(s3, BUCKET)))
    outcomes: Counter[Outcome] = Counter()
    failed = 0
    began = time.perf_counter()
    for batch in batches:
        response = service.handle(batch, None)
        failed += len((response or {}).get("batchItemFailures", []))
        outcomes.update(service.ingestor.stats.outcomes)
    seconds = time.perf_counter() - began
    items = scan_items(dynamo.admin, table)
    meter.settle(item_sizes(table, items))
    return (
        Run("event path", table, shape, segments, seconds, meter.totals(), items),
        outcomes,
        failed,
    )


def aggregate(
    dynamo: Dynamo, event: Run, records: list[dict[str, Any]], uploads: list[Upload], window_s: int
) -> tuple[Run, Delivery]:
    """The consumer: the stream's records in Lambda's batches for a window of ``window_s``,
    into a copy of the table as ingest left it."""
    uploaded = {
        (segment_pk(GENERATION, u.segment.device, u.segment.kind), segment_sk(u.segment)): int(
            u.uploaded_at.timestamp() * 1000
        )
        for u in uploads
    }
    batches = lambda_batches(records, lambda r: uploaded[record_key(r)], window_s)
    table = dynamo.fresh_unstreamed_table(f"consumer-w{window_s}")
    copy_items(dynamo.admin, table, event.items)
    client, meter, shape = dynamo.meter(table)
    began = time.perf_counter()
    delivery = deliver(consumer(client, table), batches)
    seconds = time.perf_counter() - began
    items = scan_items(dynamo.admin, table)
    meter.settle(item_sizes(table, items))
    dynamo.admin.delete_table(TableName=table)
    run = Run("consumer", table, shape, len(uploads), seconds, meter.totals(), items)
    return run, delivery


def copy_items(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    """Unmetered: the items ingest left, into another table."""
    for i in range(0, len(items), 25):
        requests = [{"PutRequest": {"Item": item}} for item in items[i : i + 25]]
        while requests:
            response = client.batch_write_item(RequestItems={table: requests})
            requests = response.get("UnprocessedItems", {}).get(table, [])


def run_pipelines(
    dynamo: Dynamo, s3: Any, batches: list[dict[str, Any]], uploads: list[Upload]
) -> list[Pipeline]:
    """The event path once (its table's stream read afterwards), then for each window the
    consumer over those records, each into its own copy of the event path's table."""
    table = dynamo.fresh_table("read-model")
    event, outcomes, failed = ingest_read_model(dynamo, s3, batches, len(uploads), table)
    records, shards = read_stream(dynamo.admin, streams_client(dynamo.admin), table)
    dynamo.admin.delete_table(TableName=table)
    order = {
        (segment_pk(GENERATION, u.segment.device, u.segment.kind), segment_sk(u.segment)): i
        for i, u in enumerate(uploads)
    }
    if [order[record_key(r)] for r in records] != list(range(len(uploads))):
        raise BenchmarkFailed("the stream does not hold one record per upload, in upload order")
    pipelines = []
    for window_s in WINDOWS_S:
        consumed, delivery = aggregate(dynamo, event, records, uploads, window_s)
        pipelines.append(Pipeline(window_s, event, consumed, delivery, shards, outcomes, failed))
    return pipelines


def floor_items(uploads: list[Upload], etags: dict[str, str]) -> list[dict[str, Any]]:
    """The segment item the read model stores, as a plain put would write it."""
    items = []
    for upload, sequencer in zip(uploads, sequencers(uploads), strict=True):
        segment = upload.segment
        attributes = {
            "pk": segment_pk(GENERATION, segment.device, segment.kind),
            "sk": segment_sk(segment),
            "present": True,
            "size": upload.size,
            "etag": etags[upload.key],
            "seq": normalize_sequencer(sequencer),
            "ver": 1,
            "start": segment.start_ms,
            "end": segment.end_ms,
            "id": segment.id,
        }
        items.append({name: _serialize(value) for name, value in attributes.items()})
    return items


def put_floor(dynamo: Dynamo, items: list[dict[str, Any]]) -> Run:
    table = dynamo.fresh_plain_table("floor")
    client, meter, shape = dynamo.meter(table)
    began = time.perf_counter()
    for item in items:
        client.put_item(TableName=table, Item=item)
    seconds = time.perf_counter() - began
    stored = scan_items(dynamo.admin, table)
    meter.settle(item_sizes(table, stored))
    return Run("floor", table, shape, len(items), seconds, meter.totals(), stored)


def warm_up(dynamo: Dynamo, s3: Any) -> None:
    uploads = WARMUP.uploads()
    etags = put_objects(s3, BUCKET, uploads)
    run_pipelines(dynamo, s3, sqs_events(uploads, etags), uploads)
    floor = put_floor(dynamo, floor_items(uploads, etags))
    dynamo.admin.delete_table(TableName=floor.table)
