"""Feed a table's DynamoDB stream to a handler the way Lambda's stream event source does.

* Lists the stream's shards (``DescribeStream``) and reads each from
  ``TRIM_HORIZON`` with ``GetShardIterator``/``GetRecords``; a child shard is read
  only once its parent is exhausted, so an item's records stay in order across a
  split. One invocation per shard at a time (no parallelization factor).
* Invokes the handler with the event Lambda builds (``Records`` with ``eventID``,
  ``eventName``, ``eventVersion``, ``eventSource``, ``awsRegion``, ``dynamodb``
  with ``ApproximateCreationDateTime`` in epoch seconds, ``eventSourceARN``).
* ``ReportBatchItemFailures``: a response naming a record delivers the batch again
  from that record; a raised error splits the batch in two (``BisectBatchOnFunctionError``)
  and retries each half; after ``max_retries`` attempts the records go to
  :attr:`StreamEventSource.dead_letters` (Lambda's on-failure destination) and the
  shard moves on.

:meth:`StreamEventSource.drain` delivers everything in the stream now and returns;
:meth:`start` runs it in a thread (``video-index local``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

logger = logging.getLogger(__name__)

StreamHandler = Callable[[dict[str, Any]], "dict[str, Any] | None"]

#: Lambda's largest batch for a DynamoDB stream event source is 10,000; ours is smaller.
DEFAULT_BATCH_SIZE: Final = 1000
DEFAULT_MAX_RETRIES: Final = 10


class StreamEventSource:
    def __init__(
        self,
        dynamodb: Any,
        streams: Any,
        table: str,
        handler: StreamHandler,
        *,
        region: str = "us-east-1",
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_retries: int = DEFAULT_MAX_RETRIES,
        poll_seconds: float = 0.5,
    ) -> None:
        self._dynamodb = dynamodb
        self._streams = streams
        self._table = table
        self._handler = handler
        self._region = region
        self._batch_size = batch_size
        self._max_retries = max_retries
        self._poll_seconds = poll_seconds
        self._iterators: dict[str, str | None] = {}  # shard -> next iterator (None: closed)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.dead_letters: list[dict[str, Any]] = []
        self.delivered = 0

    @property
    def stream_arn(self) -> str:
        table = self._dynamodb.describe_table(TableName=self._table)["Table"]
        return str(table["LatestStreamArn"])

    # -- draining ----------------------------------------------------------------------

    def drain(self) -> int:
        """Deliver every record in the stream now; the number of records delivered."""
        with self._lock:
            before = self.delivered
            arn = self.stream_arn
            while self._round(arn):
                pass
            return self.delivered - before

    def _round(self, arn: str) -> bool:
        """One pass over the readable shards; whether it delivered anything."""
        shards = self._shards(arn)
        done = {shard for shard, iterator in self._iterators.items() if iterator is None}
        progressed = False
        for shard in shards:
            shard_id = shard["ShardId"]
            parent = shard.get("ParentShardId")
            if shard_id in done or (
                parent in {s["ShardId"] for s in shards} and parent not in done
            ):
                continue
            progressed |= self._read_shard(arn, shard_id)
        return progressed

    def _shards(self, arn: str) -> list[dict[str, Any]]:
        shards: list[dict[str, Any]] = []
        request: dict[str, Any] = {"StreamArn": arn}
        while True:
            description = self._streams.describe_stream(**request)["StreamDescription"]
            shards += description.get("Shards", [])
            last = description.get("LastEvaluatedShardId")
            if not last:
                return shards
            request["ExclusiveStartShardId"] = last

    def _read_shard(self, arn: str, shard_id: str) -> bool:
        iterator = self._iterators.get(shard_id, "")
        if iterator == "":
            iterator = self._streams.get_shard_iterator(
                StreamArn=arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
        progressed = False
        while iterator:
            page = self._streams.get_records(ShardIterator=iterator, Limit=self._batch_size)
            records = page.get("Records", [])
            next_iterator = page.get("NextShardIterator")
            if records:
                self._deliver([self._lambda_record(arn, record) for record in records])
                progressed = True
            if not records or next_iterator == iterator:
                self._iterators[shard_id] = next_iterator  # open shard: read again later
                return progressed
            iterator = next_iterator
        self._iterators[shard_id] = None  # closed and read to the end
        return progressed

    # -- delivery ----------------------------------------------------------------------

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        """Lambda's retry loop for one batch: resume from a reported record, bisect on
        an error, give up to the dead letters after ``max_retries``."""
        pending = [batch]
        attempts = 0
        while pending:
            records = pending.pop(0)
            try:
                response = self._handler({"Records": records}) or {}
            except Exception:
                logger.exception("stream handler failed on %d records", len(records))
                failures = None
            else:
                failures = [f.get("itemIdentifier") for f in response.get("batchItemFailures", [])]
            if failures == []:
                self.delivered += len(records)
                attempts = 0
                continue
            attempts += 1
            if attempts > self._max_retries:
                self.dead_letters.extend(records)
                attempts = 0
                continue
            if failures is None:
                half = len(records) // 2
                pending[:0] = [records[:half], records[half:]] if half else [records]
                continue
            sequence = [r["dynamodb"]["SequenceNumber"] for r in records]
            first = min((sequence.index(f) for f in failures if f in sequence), default=0)
            self.delivered += first
            pending.insert(0, records[first:])

    def _lambda_record(self, arn: str, record: dict[str, Any]) -> dict[str, Any]:
        stream = dict(record["dynamodb"])
        created = stream.get("ApproximateCreationDateTime")
        if isinstance(created, datetime):
            stream["ApproximateCreationDateTime"] = created.timestamp()
        out = {
            "eventID": record.get("eventID", ""),
            "eventName": record["eventName"],
            "eventVersion": record.get("eventVersion", "1.1"),
            "eventSource": "aws:dynamodb",
            "awsRegion": record.get("awsRegion", self._region),
            "dynamodb": stream,
            "eventSourceARN": arn,
        }
        if "userIdentity" in record:
            out["userIdentity"] = record["userIdentity"]
        return out

    # -- running in the background -----------------------------------------------------

    def start(self) -> StreamEventSource:
        self._thread = threading.Thread(target=self._run, name="stream-event-source", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.drain()
            except Exception:
                logger.exception("reading the stream failed; trying again")
            self._stop.wait(self._poll_seconds)
