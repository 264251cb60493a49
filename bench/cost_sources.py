"""Lambda's event sources in the cost benchmark: the notification queue into ingest, the
read model's stream into the consumer, on the sample's simulated clock.

**Queue → ingest.** Lambda's SQS pollers receive up to ten messages per
``ReceiveMessage`` (the event source's batch size) and, once the function has answered,
delete the ones it did not report failed with one ``DeleteMessageBatch``. The bench
receives as soon as a full batch waits: a fleet's queue, busy enough that every batch
fills within the 1 s batching window (at 6 s segments, 60 cameras or more), which is the
fleet this prices. The last messages of a phase go in one smaller batch.

**Stream → consumer.** The stream's records, filtered as the deployed event source
filters them (``infra.aggregation.segment_change_pattern``: changes of items whose
partition key ends with ``#<kind>``; filtered records invoke nothing and cost nothing),
cut into the batches Lambda forms with the stack's batching window and batch size on the
sample's clock (:func:`bench.stream_consumer.lambda_batches`), delivered to one consumer
(one warm container), resumed from a reported failure like Lambda. Lambda's reads of the
stream (``GetRecords``) are counted and free.

Each invocation is timed around the function's own code and its Powertools metrics are
serialized as the handler's decorator prints them (the log line CloudWatch ingests).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from aws_lambda_powertools import Metrics

from bench.cost_meter import REGION, Ledger
from bench.cost_world import World
from bench.stream_consumer import lambda_batches
from video_index.aggregate.service import build_aggregator
from video_index.core.keys import KINDS
from video_index.core.queue_settings import INGEST_TIMEOUT_SECONDS, SQS_BATCH_SIZE
from video_index.ingest.service import build_ingest_service
from video_index.local.context import LocalLambdaContext
from video_index.local.streams import StreamEventSource

INGEST: Final = "ingest"
AGGREGATION: Final = "aggregation"
#: What the deployed stream filter passes (infra/aggregation.py).
_SEGMENT_EVENTS: Final = ("INSERT", "MODIFY", "REMOVE")

Record = dict[str, Any]


def _emf_bytes(metrics: Metrics) -> int:
    """Bytes of the EMF line the metrics decorator prints (0 when nothing was added)."""
    try:
        document = metrics.serialize_metric_set()
    except Exception:  # nothing to publish
        return 0
    finally:
        metrics.clear_metrics()
    return len(json.dumps(document, separators=(",", ":"))) + 1


@dataclass
class QueueSource:
    """The ingest function on the notification queue."""

    world: World
    batch_size: int = SQS_BATCH_SIZE
    log_bytes: int = 0
    _metrics: Metrics = field(init=False)

    def __post_init__(self) -> None:
        clients = self.world.clients(INGEST)
        self._sqs = clients.sqs
        self._service = build_ingest_service(self.world.settings, clients)
        self._metrics = Metrics(namespace="VideoIndexCost", service=INGEST)
        self._arn = self.world.admin.sqs.get_queue_attributes(
            QueueUrl=self.world.settings.queue_url, AttributeNames=["QueueArn"]
        )["Attributes"]["QueueArn"]

    @property
    def ledger(self) -> Ledger:
        return self.world.ledger

    def waiting(self) -> int:
        attributes = self.world.admin.sqs.get_queue_attributes(
            QueueUrl=self.world.settings.queue_url,
            AttributeNames=["ApproximateNumberOfMessages"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"])

    def poll(self, *, drain: bool = False) -> None:
        """Deliver full batches while they wait (every batch, with ``drain``)."""
        while (waiting := self.waiting()) >= self.batch_size or (drain and waiting):
            self._batch()

    def _batch(self) -> None:
        messages = self._sqs.receive_message(
            QueueUrl=self.world.settings.queue_url,
            MaxNumberOfMessages=self.batch_size,
            WaitTimeSeconds=0,
            MessageSystemAttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            return
        event = {"Records": [self._record(m) for m in messages]}
        context = LocalLambdaContext("cost-ingest", INGEST_TIMEOUT_SECONDS, REGION)
        with self.ledger.invocation(INGEST):
            answer = self._service.handle(event, context, self._metrics) or {}
        self.log_bytes += _emf_bytes(self._metrics)
        failed = {f["itemIdentifier"] for f in answer.get("batchItemFailures", [])}
        done = [m for m in messages if m["MessageId"] not in failed]
        if done:
            self._sqs.delete_message_batch(
                QueueUrl=self.world.settings.queue_url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)
                ],
            )

    def _record(self, message: dict[str, Any]) -> Record:
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": message.get("Attributes", {}),
            "messageAttributes": {},
            "md5OfBody": message.get("MD5OfBody", ""),
            "eventSource": "aws:sqs",
            "eventSourceARN": self._arn,
            "awsRegion": REGION,
        }


def passes_filter(record: Record) -> bool:
    """The deployed stream filter: a segment item's change (pk ends with ``#<kind>``)."""
    pk = record["dynamodb"]["Keys"]["pk"]["S"]
    return record["eventName"] in _SEGMENT_EVENTS and pk.endswith(tuple(f"#{k}" for k in KINDS))


@dataclass
class StreamSource:
    """The consumer on the read model's stream."""

    world: World
    window_s: float
    batch_size: int
    log_bytes: int = 0
    filtered: int = 0
    _metrics: Metrics = field(init=False)

    def __post_init__(self) -> None:
        clients = self.world.clients(AGGREGATION)
        self._aggregator = build_aggregator(self.world.settings, clients)
        self._metrics = Metrics(namespace="VideoIndexCost", service=AGGREGATION)
        self._pending: list[Record] = []
        # The stream is read with the counted streams client; DescribeTable (the local
        # stand-in finding the stream) is the bench's own.
        self._source = StreamEventSource(
            self.world.admin.dynamodb,
            self.world.streams(AGGREGATION),
            self.world.settings.table,
            self._collect,
            batch_size=10_000,
        )

    def _collect(self, event: dict[str, Any]) -> dict[str, Any]:
        self._pending.extend(event["Records"])
        return {"batchItemFailures": []}

    def deliver(self, at_ms: Callable[[Record], int]) -> int:
        """Everything written since the last call, in Lambda's batches; records delivered."""
        self._pending = []
        self._source.drain()
        records = [r for r in self._pending if passes_filter(r)]
        self.filtered += len(self._pending) - len(records)
        for batch in lambda_batches(records, at_ms, self.window_s, self.batch_size):
            self._invoke(batch)
        return len(records)

    def _invoke(self, batch: list[Record]) -> None:
        pending = batch
        for _ in range(10):
            with self.world.ledger.invocation(AGGREGATION):
                answer = self._aggregator.handle({"Records": pending}, self._metrics)
            self.log_bytes += _emf_bytes(self._metrics)
            failures = answer["batchItemFailures"]
            if not failures:
                return
            sequence = [r["dynamodb"]["SequenceNumber"] for r in pending]
            pending = pending[min(sequence.index(f["itemIdentifier"]) for f in failures) :]
        raise RuntimeError(f"a batch of {len(batch)} stream records kept failing")
