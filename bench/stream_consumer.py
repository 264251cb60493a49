"""The stream consumer's share of the ingest cost: the table's stream, batched as Lambda would.

After ingest, the table's DynamoDB stream (DynamoDB Local's) is read once from
``TRIM_HORIZON`` through :class:`~video_index.local.streams.StreamEventSource`,
which turns each record into the shape Lambda delivers. The records are then cut
into the batches Lambda's event source would invoke the consumer with, for a
``MaximumBatchingWindowInSeconds`` of W: a batch opens with its first record and
is delivered when W seconds have passed since, or at 1,000 records (the
consumer's batch size), whichever comes first.

Time here is the workload's simulated time, not the stream's: DynamoDB Local
stamps ``ApproximateCreationDateTime`` with the wall clock of the bench's write,
and the bench writes a fleet's hour in well under a minute, so every record would
fall in one window. Each record's time is the upload time of its segment (the
event path writes the segment item about a second after that, through SQS; a
shift of every record by about the same delay leaves the windows as they are).

One consumer (one :class:`~video_index.aggregate.consumer.Aggregator`, its
container cache kept across batches, like one warm Lambda container per shard)
gets the batches in order; a batch it reports a failure for is delivered again
from the record it names, as Lambda's ``ReportBatchItemFailures`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from video_index.aggregate.consumer import Aggregator
from video_index.aggregate.store import AggregateStore
from video_index.aws.store import ReadModelStore
from video_index.core.layout import CONTROL_PK
from video_index.core.settings import DEFAULT_GAP_TOLERANCE_MS
from video_index.local.streams import StreamEventSource

#: The consumer's batch size (the infra's event source, and StreamEventSource's default).
BATCH_SIZE: Final = 1000
#: Delivering one batch again after a reported failure: at most this often in a row.
MAX_REDELIVERIES: Final = 10

Record = dict[str, Any]


def read_stream(dynamodb: Any, streams: Any, table: str) -> tuple[list[Record], int]:
    """Every record of the table's stream, as Lambda delivers them, in stream order; and
    the number of shards the stream had."""
    records: list[Record] = []

    def collect(event: dict[str, Any]) -> dict[str, Any]:
        records.extend(event["Records"])
        return {"batchItemFailures": []}

    source = StreamEventSource(dynamodb, streams, table, collect, batch_size=BATCH_SIZE)
    source.drain()
    shards = streams.describe_stream(StreamArn=source.stream_arn)["StreamDescription"]["Shards"]
    return records, len(shards)


def record_key(record: Record) -> tuple[str, str]:
    keys = record["dynamodb"]["Keys"]
    return keys["pk"]["S"], keys["sk"]["S"]


def lambda_batches(
    records: Sequence[Record],
    at_ms: Callable[[Record], int],
    window_s: float,
    batch_size: int = BATCH_SIZE,
) -> list[list[Record]]:
    """The batches of a stream event source with a batching window of ``window_s``:
    a batch opens at its first record's time and closes after the window or when full."""
    window_ms = window_s * 1000
    batches: list[list[Record]] = []
    current: list[Record] = []
    opened = 0
    for record in records:
        t = at_ms(record)
        if current and (len(current) >= batch_size or t >= opened + window_ms):
            batches.append(current)
            current = []
        if not current:
            opened = t
        current.append(record)
    if current:
        batches.append(current)
    return batches


@dataclass
class Delivery:
    batches: int = 0
    records: int = 0
    redeliveries: int = 0


def deliver(aggregator: Aggregator, batches: Sequence[list[Record]]) -> Delivery:
    """Each batch to the consumer in order; resumed from a reported record like Lambda."""
    done = Delivery()
    for batch in batches:
        pending = batch
        for _ in range(MAX_REDELIVERIES + 1):
            done.batches += 1
            failures = aggregator.handle({"Records": pending})["batchItemFailures"]
            if not failures:
                done.records += len(pending)
                break
            done.redeliveries += 1
            sequence = [r["dynamodb"]["SequenceNumber"] for r in pending]
            first = min(sequence.index(f["itemIdentifier"]) for f in failures)
            done.records += first
            pending = pending[first:]
        else:
            raise RuntimeError(f"a batch of {len(batch)} records kept failing")
    return done


def consumer(client: Any, table: str) -> Aggregator:
    """The consumer as build_aggregator wires it, on ``client``."""
    store = ReadModelStore(client, table, tombstone_days=35)
    aggregates = AggregateStore(client, table, gap_tolerance_ms=DEFAULT_GAP_TOLERANCE_MS)
    return Aggregator(store, aggregates)


# -- rows of the capacity meter --------------------------------------------------------------


def item_row(operation: str, params: dict[str, Any]) -> str:
    """``PutItem bucket``, ``GetItem control/generation``...: the item kind a call is about."""
    pk = sk = ""
    if "Item" in params or "Key" in params:
        key = params.get("Item") or params.get("Key") or {}
        pk, sk = key.get("pk", {}).get("S", ""), key.get("sk", {}).get("S", "")
    elif operation == "Query":
        pk = params.get("ExpressionAttributeValues", {}).get(":pk", {}).get("S", "")
    return f"{operation} {_kind_of(pk, sk)}"


def _kind_of(pk: str, sk: str) -> str:
    if pk == CONTROL_PK:
        return f"control/{sk}"
    _, _, rest = pk.partition("#")
    if rest.startswith("seg#"):
        return "segment"
    if rest.startswith("bkt#"):
        return "bucket"
    if rest == "devices":
        return "device"
    return pk or "?"
