"""The stream consumer: one batch of segment changes into bucket and device items.

Lambda delivers a shard's records in order, one batch at a time (no
parallelization factor), and on a reported failure delivers again from the first
record reported. So the consumer plans the whole batch, applies it item by item
(each item's write skips what its high-water mark says it already has), and when
an item fails reports the oldest record that item still waits for: the retry
re-applies nothing that landed and everything that did not
(docs/read-model.md#aggregation-by-stream).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from video_index.aggregate.plan import BucketEntry, DeviceEntry, plan_batch
from video_index.aggregate.records import Change, read_record
from video_index.aggregate.store import AggregateStore
from video_index.aws.store import ReadModelStore
from video_index.core.contract import AGGREGATION_LAG_METRIC
from video_index.core.errors import ServiceError
from video_index.core.keys import InvalidKeyError

logger = Logger(child=True)


@dataclass
class BatchResult:
    applied: int = 0
    skipped: int = 0
    unreadable: int = 0
    #: The sequence number (as delivered) to resume from, when an item failed.
    failed_from: str | None = None
    newest_created_ms: int = 0


class Aggregator:
    def __init__(
        self,
        store: ReadModelStore,
        aggregates: AggregateStore,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._aggregates = aggregates
        self._clock = clock

    def handle(self, event: dict[str, Any], metrics: Metrics | None = None) -> dict[str, Any]:
        """A Lambda DynamoDB Streams event in; the partial-failure response out."""
        result = self.process(event.get("Records", []))
        if metrics is not None:
            metrics.add_metric(
                name="ChangesAggregated", unit=MetricUnit.Count, value=result.applied
            )
            metrics.add_metric(
                name="UnreadableChanges", unit=MetricUnit.Count, value=result.unreadable
            )
            if result.newest_created_ms:
                lag = max(0, int(self._clock() * 1000) - result.newest_created_ms)
                metrics.add_metric(
                    name=AGGREGATION_LAG_METRIC, unit=MetricUnit.Milliseconds, value=lag
                )
        if result.failed_from is None:
            return {"batchItemFailures": []}
        return {"batchItemFailures": [{"itemIdentifier": result.failed_from}]}

    def process(self, records: Iterable[dict[str, Any]]) -> BatchResult:
        result = BatchResult()
        changes: list[Change] = []
        delivered: dict[str, str] = {}  # padded -> as delivered (what Lambda resumes from)
        for record in records:
            try:
                change = read_record(record)
            except (InvalidKeyError, ValueError, KeyError) as exc:
                result.unreadable += 1
                logger.error("unreadable stream record skipped", record=record, reason=str(exc))
                continue
            if change is None:
                result.skipped += 1
                continue
            changes.append(change)
            delivered[change.seq] = record["dynamodb"]["SequenceNumber"]
        if not changes:
            return result
        try:
            live = set(self._store.generations())
        except ServiceError as exc:
            logger.warning("generations unreadable; the batch is retried", error=str(exc))
            result.failed_from = delivered[changes[0].seq]
            return result
        changes = [change for change in changes if change.generation in live]
        plan = plan_batch(changes)
        work: list[tuple[object, Callable[[], None], str]] = [
            (key, partial(self._aggregates.apply_bucket, key, entries), _oldest(entries))
            for key, entries in plan.buckets.items()
        ]
        work += [
            (key, partial(self._aggregates.apply_device, key, entries), _oldest(entries))
            for key, entries in plan.devices.items()
        ]
        failed: list[str] = []
        for key, apply, oldest in work:
            try:
                apply()
            except ServiceError as exc:
                logger.warning("aggregate item failed; the batch resumes", key=key, error=str(exc))
                failed.append(oldest)
        if failed:
            result.failed_from = delivered[min(failed)]
            return result
        result.applied = len(changes)
        result.newest_created_ms = max((c.created_ms for c in changes), default=0)
        if changes:
            try:  # for `video-index status`; the metric above is the alarm's source
                self._aggregates.record_batch(int(self._clock() * 1000), result.newest_created_ms)
            except ServiceError as exc:
                logger.warning("aggregation lag not recorded", error=str(exc))
        return result


def _oldest(entries: Iterable[BucketEntry | DeviceEntry]) -> str:
    """The oldest change an item waits for: where a failed batch resumes."""
    return min(entry.seq for entry in entries)
