"""The stream consumer beside a test's read model: drain the table's stream into it.

Ingest writes segment items only; buckets and device items follow from the
stream. A test that reads aggregates drains first, exactly as Lambda would have
delivered the records by then (docs/read-model.md#aggregation-by-stream).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.config import Config

from video_index.aggregate.barrier import Barrier
from video_index.aggregate.consumer import Aggregator
from video_index.aggregate.store import AggregateStore
from video_index.aws.store import ReadModelStore
from video_index.core.settings import DEFAULT_GAP_TOLERANCE_MS
from video_index.local.streams import StreamEventSource
from video_index.ops.mend import Mender


def streams_client(dynamodb: Any) -> Any:
    """A DynamoDB Streams client beside ``dynamodb`` (same endpoint and region).

    moto (in process) answers streams only on the regional endpoint, not on the
    account-based one recent botocore picks when it knows the account.
    """
    endpoint = dynamodb.meta.endpoint_url
    local = "amazonaws.com" not in endpoint
    return boto3.client(
        "dynamodbstreams",
        region_name=dynamodb.meta.region_name,
        endpoint_url=endpoint if local else None,
        config=Config(account_id_endpoint_mode="disabled"),
    )


class Aggregation:
    """The consumer of one table, fed by its stream on :meth:`drain`."""

    def __init__(
        self,
        dynamodb: Any,
        table: str,
        *,
        gap_tolerance_ms: int = DEFAULT_GAP_TOLERANCE_MS,
        streams: Any = None,
    ) -> None:
        self.store = ReadModelStore(dynamodb, table, tombstone_days=35)
        self.aggregates = AggregateStore(dynamodb, table, gap_tolerance_ms=gap_tolerance_ms)
        self.aggregator = Aggregator(self.store, self.aggregates)
        self.source = StreamEventSource(
            dynamodb, streams or streams_client(dynamodb), table, self.aggregator.handle
        )
        #: What reconcile and rebuild wait on: here the barrier delivers the stream itself.
        self.barrier = Barrier(self.store, pump=self.drain)
        self.mender = Mender(
            self.store, self.aggregates, self.barrier, gap_tolerance_ms=gap_tolerance_ms
        )

    @contextmanager
    def running(self) -> Iterator[Aggregation]:
        """The consumer on a thread, as Lambda runs it beside a function under test that
        waits for it (reconcile's barrier)."""
        self.source.start()
        try:
            yield self
        finally:
            self.source.stop()

    def drain(self) -> int:
        """Deliver every change made so far; the number of records delivered."""
        delivered = self.source.drain()
        assert not self.source.dead_letters, self.source.dead_letters
        return delivered
