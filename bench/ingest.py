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
from collections import Counter
from typing import Any

import boto3
from moto import mock_aws
from rich.console import Console

from bench.context import BenchContext, BenchmarkFailed
from bench.figures import ratio
from bench.ingest_checks import check_read_model
from bench.ingest_paths import (
    BUCKET,
    DEFAULT_WINDOW_S,
    FULL,
    GENERATION,
    GOAL_RATIO,
    QUICK,
    REGION,
    Dynamo,
    Pipeline,
    Run,
    floor_items,
    put_floor,
    run_pipelines,
    warm_up,
)
from bench.ingest_tables import checks_table, figures_table, operations_table, sizes
from bench.workload import Workload, put_objects, sqs_events

# -- the benchmark -----------------------------------------------------------------------


def ingest_benchmark(context: BenchContext) -> None:
    console = context.console
    workload = QUICK if context.quick else FULL
    label = "QUICK smoke run, not the figures to quote" if context.quick else "full run"
    console.rule(f"[bold]ingest[/]: {workload.describe()} ({label})")
    server = context.dynamodb_server()
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
        pipelines = run_pipelines(dynamo, s3, batches, uploads)
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
    _print_goal(console, default.all_in, floor, items)
    console.print(operations_table([*(p.all_in for p in pipelines), floor]))
    console.print(checks_table(checks[pipelines.index(default)], DEFAULT_WINDOW_S))

    notes = _notes(workload, pipelines, floor, len(uploads), s3_during)
    console.print("Notes:")
    for note in notes:
        console.print(f"  - {note}")


def _print_goal(console: Console, model: Run, floor: Run, items: list[dict[str, Any]]) -> None:
    """All-in capacity units per segment at the infra's window against the floor's, and
    what the read model's secondary indexes add to each."""
    all_in = model.per_segment(model.totals.capacity_units)
    floor_all_in = floor.per_segment(floor.totals.capacity_units)
    times = all_in / floor_all_in
    met = times <= GOAL_RATIO
    console.print(
        f"all-in capacity units per segment at W = {DEFAULT_WINDOW_S} s (the infra's window): "
        f"event path + consumer {all_in:.3f} vs floor {floor_all_in:.3f} = "
        f"[bold]{ratio(all_in, floor_all_in)}[/] "
        f"the floor; requests {ratio(model.totals.requests, floor.totals.requests)}   "
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
            f"{ratio(all_in, indexed_floor)} it; without the index writes the read model would be "
            f"{ratio(all_in - model.per_segment(model.totals.index_write_units), floor_all_in)} "
            "the plain floor; the goal is judged against the plain floor of one item write per "
            "segment, docs/read-model.md)"
        )


def _notes(
    workload: Workload,
    pipelines: list[Pipeline],
    floor: Run,
    uploads: int,
    s3_during: Counter[str],
) -> list[str]:
    """How the figures were made: workload, consumer, what is and is not counted."""
    default = next(p for p in pipelines if p.window_s == DEFAULT_WINDOW_S)
    model = default.all_in
    seg_min, seg_max = sizes(model, "seg")
    bkt_min, bkt_max = sizes(model, "bkt")
    dev_min, dev_max = sizes(model, "devices")
    floor_min, floor_max = sizes(floor, "seg")
    notes = [
        f"Workload: {workload.describe()}, one S3 record per SQS message, batches of 10, "
        "each delivered once, in upload order (interleaved across devices), one worker; "
        "event sizes ~2.5 MB (2.3-2.7 MB), tiny object bodies. The event path runs once; its "
        "table's stream is read, and for each window W the consumer takes those records into "
        "a copy of the table as ingest left it (same keys and index, no stream: DynamoDB Local "
        "slows with every stream record it keeps; a stream changes no write's price).",
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
            ", ".join(f"{name} {count / uploads:.2f}" for name, count in sorted(s3_during.items()))
            or "none"
        )
        + ".",
        "Throughput is DynamoDB Local on this machine through moto's pass-through, a single "
        "worker: compare the columns, not absolute figures.",
    ]
    unpriced = floor.totals.unpriced.union(*(p.all_in.totals.unpriced for p in pipelines))
    if unpriced:
        notes.append("Not priced (caveats): " + "; ".join(sorted(unpriced)))
    return notes
