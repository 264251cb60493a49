"""Ingest cost (docs/read-model.md): DynamoDB requests and capacity units per segment vs the floor.

The read model is fed the S3 notifications of a camera fleet's hour (one record
per SQS message, batches of 10, each delivered once, in upload order) through
``IngestService.handle`` on DynamoDB Local, with S3 in moto: the event path, one
conditional PutItem of the segment item per segment. Then the table's stream is
delivered to the stream consumer (``Aggregator.handle``) in the batches Lambda
would form with a batching window of W seconds (:mod:`bench.stream_consumer`),
which writes the bucket and device items; both paths' calls are metered, and the
consumer's share depends on W (30 s, the infra's 60 s, 300 s: fresher aggregates
cost more writes). The floor is one plain PutItem per segment of the same segment
item, into a fresh table on the same DynamoDB Local, measured in the same run.
Capacity units are computed by AWS's sizing rules (:mod:`bench.capacity`), not
taken from DynamoDB Local. The read model is checked against an independent
projection afterwards (:mod:`bench.ingest_checks`).
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import boto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from moto import mock_aws
from rich.table import Table

from bench.capacity import (
    CapacityMeter,
    TableShape,
    Totals,
    describe_shape,
    item_size,
    item_sizes,
    scan_items,
)
from bench.context import BenchContext, BenchmarkFailed
from bench.ingest_checks import check_read_model
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
from tests.support import events as ev
from tests.support.aggregation import streams_client
from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore
from video_index.core.layout import segment_pk, segment_sk
from video_index.core.table_schema import create_tables, read_model_table_definition
from video_index.ingest.batches import IngestService
from video_index.ingest.events import normalize_sequencer
from video_index.ingest.ingestor import Ingestor, Outcome

FULL: Final = Workload(devices=50, minutes=60)
QUICK: Final = Workload(devices=10, minutes=10)
#: Unmeasured run through both paths first, so the JVM's warm-up is charged to neither.
WARMUP: Final = Workload(devices=4, minutes=5, device_prefix="warm")
GOAL_RATIO: Final = 1.5
#: The consumer's MaximumBatchingWindowInSeconds: the infra's (first) and two others.
DEFAULT_WINDOW_S: Final = 60
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

    def fresh_plain_table(self, purpose: str) -> str:
        """The product's table keys (pk/sk, on demand) without any secondary index."""
        name = f"bench-{purpose}-{uuid.uuid4().hex[:8]}"
        definition = read_model_table_definition(name)
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
    dynamo: Dynamo, table: str, uploads: list[Upload], window_s: int
) -> tuple[Run, Delivery, int]:
    """The consumer: the table's stream in Lambda's batches for a window of ``window_s``."""
    uploaded = {
        (segment_pk(GENERATION, u.segment.device, u.segment.kind), segment_sk(u.segment)): int(
            u.uploaded_at.timestamp() * 1000
        )
        for u in uploads
    }
    records, shards = read_stream(dynamo.admin, streams_client(dynamo.admin), table)
    times = [uploaded[record_key(record)] for record in records]
    if times != sorted(times):
        raise BenchmarkFailed("the stream's records are not in upload order")
    batches = lambda_batches(records, lambda r: uploaded[record_key(r)], window_s)
    client, meter, shape = dynamo.meter(table)
    began = time.perf_counter()
    delivery = deliver(consumer(client, table), batches)
    seconds = time.perf_counter() - began
    items = scan_items(dynamo.admin, table)
    meter.settle(item_sizes(table, items))
    run = Run("consumer", table, shape, len(uploads), seconds, meter.totals(), items)
    return run, delivery, shards


def run_pipeline(
    dynamo: Dynamo, s3: Any, batches: list[dict[str, Any]], uploads: list[Upload], window_s: int
) -> Pipeline:
    table = dynamo.fresh_table(f"read-model-w{window_s}")
    event, outcomes, failed = ingest_read_model(dynamo, s3, batches, len(uploads), table)
    consumed, delivery, shards = aggregate(dynamo, table, uploads, window_s)
    return Pipeline(window_s, event, consumed, delivery, shards, outcomes, failed)


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
    pipeline = run_pipeline(dynamo, s3, sqs_events(uploads, etags), uploads, DEFAULT_WINDOW_S)
    floor = put_floor(dynamo, floor_items(uploads, etags))
    for table in (pipeline.event.table, floor.table):
        dynamo.admin.delete_table(TableName=table)


# -- printing ----------------------------------------------------------------------------


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def figures_table(pipelines: list[Pipeline], floor: Run) -> Table:
    table = Table(
        title="Ingest: DynamoDB cost per segment, event path + stream consumer vs floor, "
        "by the consumer's batching window W",
        title_justify="left",
    )
    table.add_column("figure")
    table.add_column("floor (1 PutItem / segment, no index)", justify="right")
    for pipeline in pipelines:
        default = " (infra default)" if pipeline.window_s == DEFAULT_WINDOW_S else ""
        table.add_column(f"W = {pipeline.window_s} s{default}", justify="right")
    rows: list[tuple[str, Callable[[Run], float], str]] = [
        ("DynamoDB requests / segment", lambda r: r.per_segment(r.totals.requests), "{:.3f}"),
        ("WCU / segment", lambda r: r.per_segment(r.totals.write_units), "{:.3f}"),
        (
            "  of which secondary-index WCU",
            lambda r: r.per_segment(r.totals.index_write_units),
            "{:.3f}",
        ),
        ("RCU / segment", lambda r: r.per_segment(r.totals.read_units), "{:.3f}"),
        (
            "all-in CU / segment (WCU + RCU)",
            lambda r: r.per_segment(r.totals.capacity_units),
            "{:.3f}",
        ),
    ]
    for label, value, fmt in rows:
        base = value(floor)
        cells = [
            fmt.format(value(p.all_in)) + f" ({_ratio(value(p.all_in), base)})" for p in pipelines
        ]
        table.add_row(label, fmt.format(base), *cells)
    table.add_row(
        "  of which the consumer: requests / CU per segment",
        "-",
        *(
            f"{p.consumer.per_segment(p.consumer.totals.requests):.3f} / "
            f"{p.consumer.per_segment(p.consumer.totals.capacity_units):.3f}"
            for p in pipelines
        ),
    )
    table.add_row(
        "consumer invocations (batches) / redeliveries",
        "-",
        *(f"{p.delivery.batches:,} / {p.delivery.redeliveries}" for p in pipelines),
    )
    table.add_row(
        "segments / s: event path loop | consumer",
        f"{floor.segments_per_second:,.0f}",
        *(
            f"{p.event.segments_per_second:,.0f} | {p.consumer.segments_per_second:,.0f}"
            for p in pipelines
        ),
    )
    return table


def operations_table(runs: list[Run]) -> Table:
    table = Table(
        title="Where the capacity goes (by path, DynamoDB operation and item)", title_justify="left"
    )
    for name, justify in (
        ("run", "left"),
        ("path: operation item", "left"),
        ("requests", "right"),
        ("req / segment", "right"),
        ("WCU", "right"),
        ("index WCU", "right"),
        ("RCU", "right"),
        ("CU / segment", "right"),
        ("share of CU", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for run in runs:
        everything = run.totals.capacity_units or 1.0
        for operation, figures in run.totals.by_operation.items():
            units = figures.write_units + figures.read_units
            table.add_row(
                run.name,
                operation + (f" ({figures.failed} failed)" if figures.failed else ""),
                f"{figures.requests:,}",
                f"{run.per_segment(figures.requests):.3f}",
                f"{figures.write_units:,.1f}",
                f"{figures.index_write_units:,.1f}",
                f"{figures.read_units:,.1f}",
                f"{run.per_segment(units):.3f}",
                f"{units / everything:.1%}",
            )
    return table


def checks_table(rows: list[tuple[str, str, str]], window_s: int) -> Table:
    table = Table(
        title=f"Read model check after ingest and the consumer, W = {window_s} s "
        "(every window is checked; the run fails on any mismatch)",
        title_justify="left",
    )
    table.add_column("check")
    table.add_column("expected (reference)", justify="right")
    table.add_column("read model", justify="right")
    table.add_column("", justify="center")
    for name, want, got in rows:
        table.add_row(name, want, got, "[green]ok[/]" if want == got else "[red]WRONG[/]")
    return table


def _sizes(run: Run, kind: str) -> tuple[int, int]:
    sizes = [item_size(i) for i in run.items if f"#{kind}" in i["pk"]["S"]]
    return (min(sizes), max(sizes)) if sizes else (0, 0)


# -- the benchmark -----------------------------------------------------------------------


def ingest_benchmark(context: BenchContext) -> None:
    console = context.console
    workload = QUICK if context.quick else FULL
    label = "QUICK smoke run, not the figures to quote" if context.quick else "full run"
    console.rule(f"[bold]ingest[/]: {workload.describe()} ({label})")
    server = context.dynamodb_local()
    with mock_aws():
        # inside mock_aws: DynamoDB Local keeps one database per access key and region,
        # so every client must see the same (moto's fake) credentials
        dynamo = Dynamo(server.endpoint)
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3_calls: Counter[str] = Counter()
        s3.meta.events.register("before-call.s3", lambda model, **_: s3_calls.update([model.name]))

        began = time.perf_counter()
        warm_up(dynamo, s3)
        uploads = workload.uploads()
        etags = put_objects(s3, BUCKET, uploads)
        batches = sqs_events(uploads, etags)
        items = floor_items(uploads, etags)
        console.print(
            f"setup: warm-up, {len(uploads):,} objects put into the moto bucket and "
            f"{len(batches):,} SQS batches built in {time.perf_counter() - began:.1f} s"
        )

        s3_before = Counter(s3_calls)
        pipelines = [run_pipeline(dynamo, s3, batches, uploads, w) for w in WINDOWS_S]
        s3_during = s3_calls - s3_before
        floor = put_floor(dynamo, items)

    checks = [
        check_read_model(
            p.consumer.items, uploads, etags, p.outcomes, p.failed, p.delivery, workload, GENERATION
        )
        for p in pipelines
    ]
    if len(floor.items) != len(uploads):
        raise BenchmarkFailed(f"floor table holds {len(floor.items)} items, not {len(uploads)}")

    console.print(figures_table(pipelines, floor))
    default = next(p for p in pipelines if p.window_s == DEFAULT_WINDOW_S)
    model = default.all_in
    all_in = model.per_segment(model.totals.capacity_units)
    floor_all_in = floor.per_segment(floor.totals.capacity_units)
    ratio = all_in / floor_all_in
    met = ratio <= GOAL_RATIO
    console.print(
        f"all-in capacity units per segment at W = {DEFAULT_WINDOW_S} s (the infra's window): "
        f"event path + consumer {all_in:.3f} vs floor {floor_all_in:.3f} = [bold]{ratio:.2f}x[/] "
        f"the floor; requests {_ratio(model.totals.requests, floor.totals.requests)}   "
        f"(goal: <= {GOAL_RATIO:g}x the floor) -> "
        + ("[bold green]goal MET[/]" if met else "[bold red]goal NOT MET[/]")
    )
    if model.shape.indexes:
        # the same floor items, had their table carried the read model's secondary indexes
        indexed_floor = floor_all_in + floor.per_segment(
            sum(model.shape.index_write_units(None, item) for item in items)
        )
        names = ", ".join(index.name for index in model.shape.indexes)
        console.print(
            f"  (if the floor's table carried the read model's secondary index(es) {names}, "
            f"the floor would be {indexed_floor:.3f} CU/segment and the read model "
            f"{all_in / indexed_floor:.2f}x it; without the index writes the read model would be "
            f"{(all_in - model.per_segment(model.totals.index_write_units)) / floor_all_in:.2f}x "
            "the plain floor; the goal is judged against the plain floor of one item write per "
            "segment, docs/read-model.md)"
        )
    console.print(operations_table([*(p.all_in for p in pipelines), floor]))
    console.print(checks_table(checks[pipelines.index(default)], DEFAULT_WINDOW_S))

    seg_min, seg_max = _sizes(model, "seg")
    bkt_min, bkt_max = _sizes(model, "bkt")
    dev_min, dev_max = _sizes(model, "devices")
    floor_min, floor_max = _sizes(floor, "seg")
    notes = [
        f"Workload: {workload.describe()}, one S3 record per SQS message, batches of 10, "
        "each delivered once, in upload order (interleaved across devices), one worker; "
        "event sizes ~2.5 MB (2.3-2.7 MB), tiny object bodies. Each window W is a run of "
        "its own: a fresh table, the whole event path, then the consumer.",
        "Consumer (bench/stream_consumer.py): the table's DynamoDB Local stream read after "
        "ingest and cut into the batches Lambda's event source forms with "
        "MaximumBatchingWindowInSeconds = W and batch size 1,000 (a batch opens at its first "
        "record and is delivered W s later or when full), on the workload's simulated time "
        "(each record at its segment's upload time): DynamoDB Local stamps the records with "
        "the bench's wall clock, which runs the hour in about a minute. One consumer, its "
        "cache kept across batches (one warm container); ReportBatchItemFailures honoured. "
        f"The stream had {default.shards} shard(s) here; on AWS a table has about one shard "
        "per partition, each windowed on its own: a device's segment items share a partition "
        "key, so its bucket and device writes stay as counted, and only the per-invocation "
        "reads and writes (control/generation, control/aggregate) multiply by the shards.",
        "Not counted: reading the stream (Lambda's reads of a DynamoDB stream are not "
        "charged), and the records of the consumer's own writes coming back on the stream "
        "(skipped by the consumer without a DynamoDB call; Lambda invocations, not capacity).",
        "Capacity units follow AWS's sizing rules (bench/capacity.py), not DynamoDB Local's "
        "ConsumedCapacity: PutItem ceil(max(old, new size)/1 KB) WCU; a failed conditional "
        "write is charged (existing item size, >= 1 WCU); GetItem/Query ceil(size/4 KB) RCU, "
        "half when eventually consistent, at least one unit even when nothing is found.",
        "Secondary indexes of the read-model table: "
        + (
            "; ".join(
                f"{i.name} (keys {', '.join(i.keys)}, {i.projection})" for i in model.shape.indexes
            )
            or "none"
        )
        + ". An index write is one standard write of the index entry; the floor table has "
        "no index.",
        f"Item sizes: segment items {seg_min}-{seg_max} B, bucket items {bkt_min}-{bkt_max} B, "
        f"device items {dev_min}-{dev_max} B, floor segment items {floor_min}-{floor_max} B.",
        "Requests are API calls counted by a botocore hook on each path's client; botocore "
        f"retries at W = {DEFAULT_WINDOW_S} s: event path {default.event.totals.retries}, "
        f"consumer {default.consumer.totals.retries}, floor {floor.totals.retries}. S3 requests "
        "per segment on the event path (events carry sequencers; video segments are probed): "
        + (
            ", ".join(
                f"{name} {count / len(pipelines) / len(uploads):.2f}"
                for name, count in sorted(s3_during.items())
            )
            or "none"
        )
        + ".",
        "Throughput is DynamoDB Local on this machine through moto's pass-through, a single "
        "worker: compare the columns, not absolute figures.",
    ]
    unpriced = floor.totals.unpriced.union(*(p.all_in.totals.unpriced for p in pipelines))
    if unpriced:
        notes.append("Not priced (caveats): " + "; ".join(sorted(unpriced)))
    console.print("Notes:")
    for note in notes:
        console.print(f"  - {note}")
