"""Aggregation lag on the local pipeline: a segment item's write until its aggregates show it.

The stream consumer runs as ``video-index local`` would run it: a
:class:`~video_index.local.streams.StreamEventSource` thread on the table's
DynamoDB Local stream, polling every ``poll_seconds`` (its default, 0.5 s), no
batching window, delivering to the product's ``Aggregator``. The bench writes one
segment item at a time with the event path's write (``ReadModelStore.write_transition``,
one conditional PutItem) and then reads the segment's bucket item and the
device item (strongly consistent GetItem, every 2 ms) until each counts it. The
clock starts when the PutItem returns. Writes are spaced by a random pause, so
they fall at random phases of the poll cycle.

On AWS the lag adds the event source's batching window (W, 60 s by default) to
the stream's own propagation and the poller's cycle; this measures the local
consumer's path (poll, DescribeStream, GetRecords, the consumer's reads and
writes), the floor under that.
"""

from __future__ import annotations

import random
import statistics
import time
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any, Final

import boto3
from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed
from bench.stream_consumer import consumer
from bench.workload import START
from video_index.aws.store import ReadModelStore
from video_index.core.keys import SegmentKey, segment_id
from video_index.core.layout import bucket_pk, bucket_sk, device_total, devices_pk
from video_index.core.projection import ObjectState
from video_index.core.table_schema import create_tables
from video_index.core.timeunits import HOUR_MS
from video_index.local.streams import StreamEventSource
from worlds.aggregation import streams_client

DEVICE: Final = "cam-lag"
GENERATION: Final = 1
SEGMENT_MS: Final = 10_000
FULL_SAMPLES: Final = 200
QUICK_SAMPLES: Final = 20
#: Between samples: a random pause up to this long (spreads writes over the poll cycle).
MAX_PAUSE_S: Final = 0.6
READ_EVERY_S: Final = 0.002
TIMEOUT_S: Final = 30.0


def _p(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _count(client: Any, table: str, pk: str, sk: str, names: list[str]) -> int:
    item = client.get_item(
        TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True
    ).get("Item", {})
    return sum(int(item[name]["N"]) for name in names if name in item)


def measure(endpoint: str, samples: int, seed: int = 16) -> tuple[dict[str, list[float]], float]:
    """Seconds from each write to its bucket / device item reflecting it; the poll interval."""
    admin = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    table = f"bench-lag-{uuid.uuid4().hex[:8]}"
    create_tables(admin, table)
    rng = random.Random(seed)
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    writer = ReadModelStore(client, table, tombstone_days=35)  # the event path's store
    aggregator = consumer(client, table)
    invocations: list[tuple[float, float]] = []  # (handler entered, handler returned)

    def timed(event: dict[str, Any]) -> dict[str, Any]:
        entered = time.perf_counter()
        try:
            return aggregator.handle(event)
        finally:
            invocations.append((entered, time.perf_counter()))

    source = StreamEventSource(client, streams_client(client), table, timed)
    reader = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    poll = source._poll_seconds
    out: dict[str, list[float]] = {
        "bucket": [],
        "device": [],
        "both": [],
        "delivered": [],
        "handler": [],
    }
    per_hour: Counter[int] = Counter()
    source.start()
    try:
        for index in range(samples):
            segment = _segment(index)
            hour = segment.start_ms - segment.start_ms % HOUR_MS
            per_hour[hour] += 1
            time.sleep(rng.uniform(0, MAX_PAUSE_S))
            before = time.perf_counter()
            writer.write_transition(
                GENERATION,
                segment,
                None,
                ObjectState(True, 2_500_000, f"{index:032x}"),
                f"{index + 1:032X}",
            )
            written = time.perf_counter()
            want = {"bucket": per_hour[hour], "device": index + 1}
            seen = _until_reflected(reader, table, _watched(hour), want, written, index)
            out["bucket"].append(seen["bucket"])
            out["device"].append(seen["device"])
            out["both"].append(max(seen.values()))
            entered, returned = _invocation_after(invocations, before, index)
            out["delivered"].append(entered - written)
            out["handler"].append(returned - entered)
    finally:
        source.stop()
    if source.dead_letters:
        raise BenchmarkFailed(f"{len(source.dead_letters)} records went to the dead letters")
    admin.delete_table(TableName=table)
    return out, poll


#: What is watched per segment: name -> (pk, sk, the figures whose sum counts its segments).
Watched = dict[str, tuple[str, str, list[str]]]


def _segment(index: int) -> SegmentKey:
    start = START + timedelta(milliseconds=index * SEGMENT_MS)
    body = f"{DEVICE}/{index}".encode()
    return SegmentKey(
        kind="video",
        device=DEVICE,
        start=start,
        duration_ms=SEGMENT_MS,
        id=segment_id("video", DEVICE, start, SEGMENT_MS, body),
        ext="mp4",
    )


def _watched(hour: int) -> Watched:
    """The segment's hour bucket item and the device's totals."""
    return {
        "bucket": (
            bucket_pk(GENERATION, DEVICE),
            bucket_sk("video", hour),
            [f"n{q}" for q in range(4)],
        ),
        "device": (devices_pk(GENERATION), DEVICE, [device_total("n", "video")]),
    }


def _until_reflected(
    reader: Any, table: str, watch: Watched, want: dict[str, int], written: float, index: int
) -> dict[str, float]:
    """Seconds from ``written`` until each watched item counts ``want`` segments."""
    seen: dict[str, float] = {}
    while len(seen) < len(watch):
        for name, (pk, sk, names) in watch.items():
            if name not in seen and _count(reader, table, pk, sk, names) >= want[name]:
                seen[name] = time.perf_counter() - written
        if time.perf_counter() - written > TIMEOUT_S:
            raise BenchmarkFailed(f"segment {index}: aggregates never reflected it")
        time.sleep(READ_EVERY_S)
    return seen


def _invocation_after(
    invocations: list[tuple[float, float]], before: float, index: int
) -> tuple[float, float]:
    """The first handler invocation entered after ``before``: (entered, returned)."""
    deadline = time.perf_counter() + TIMEOUT_S
    while not any(a >= before for a, _ in invocations):  # the handler's return
        if time.perf_counter() > deadline:
            raise BenchmarkFailed(f"segment {index}: no invocation recorded")
        time.sleep(READ_EVERY_S)
    return next((a, b) for a, b in invocations if a >= before)


def lag_benchmark(context: BenchContext) -> None:
    samples = QUICK_SAMPLES if context.quick else FULL_SAMPLES
    label = "QUICK smoke run, not the figures to quote" if context.quick else "full run"
    context.console.rule(
        f"[bold]lag[/]: segment item write → bucket / device item reflecting it, local stream "
        f"consumer ({samples} writes, {label})"
    )
    lags, poll = measure(context.dynamodb_server().endpoint, samples)
    table = Table(
        title=f"Aggregation lag (seconds), StreamEventSource polling every {poll:g} s, "
        "no batching window",
        title_justify="left",
    )
    for column in ("aggregate reflecting the write", "median", "p90", "p99", "max", "samples"):
        table.add_column(column, justify="left" if column.startswith("agg") else "right")
    for name, label_ in (
        ("bucket", "bucket item (n of the hour)"),
        ("device", "device item (n:video)"),
        ("both", "both"),
        ("delivered", "  of which until the consumer is invoked (poll wait, stream reads)"),
        ("handler", "  of which the consumer's handle (its reads and writes)"),
    ):
        values = lags[name]
        table.add_row(
            label_,
            f"{statistics.median(values):.3f}",
            f"{_p(values, 0.9):.3f}",
            f"{_p(values, 0.99):.3f}",
            f"{max(values):.3f}",
            str(len(values)),
        )
    context.console.print(table)
    context.console.print(
        "  Notes: one writer, one segment at a time (ReadModelStore.write_transition, the event "
        "path's PutItem), clock from the PutItem's return; each write after a random pause of "
        f"0-{MAX_PAUSE_S:g} s, so it lands at a random phase of the poll cycle (expect about "
        "half the poll interval plus one delivery). Aggregates read by strongly consistent "
        f"GetItem every {READ_EVERY_S * 1000:g} ms. DynamoDB Local on this machine. On AWS, "
        "add the event source's batching window W (60 s by default) and the stream's "
        "propagation: this is the consumer path's own share."
    )
