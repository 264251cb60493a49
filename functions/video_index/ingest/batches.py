"""Lambda-facing ingest: SQS batches with partial failures, or direct S3/EventBridge events.

A record ends in exactly one of: applied, ignored (duplicate, stale, foreign,
invalid: logged and counted), parked in the DLQ (not an S3 event at all), or
reported as a batch item failure (transient error: SQS retries it and, after
``maxReceiveCount``, moves it to the DLQ). One record never fails another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.core.contract import CLOCK_AHEAD_METRIC, UPLOAD_DELAY_METRIC
from video_index.ingest.events import (
    MalformedMessage,
    events_from_body,
    events_from_payload,
    is_eventbridge_s3,
    is_s3_notification,
    is_test_event,
)
from video_index.ingest.ingestor import Ingestor, Outcome

logger = Logger(child=True)


class DeadLetterParking:
    """Moves a message that can never be processed straight to the DLQ, with the reason."""

    def __init__(self, sqs_client: Any, dlq_url: str) -> None:
        self._sqs = sqs_client
        self._dlq_url = dlq_url

    def park(self, record: SQSRecord, reason: str) -> None:
        self._sqs.send_message(
            QueueUrl=self._dlq_url,
            MessageBody=record.body or "",
            MessageAttributes={
                "reason": {"DataType": "String", "StringValue": reason[:1000]},
                "source-message-id": {"DataType": "String", "StringValue": record.message_id},
            },
        )


@dataclass
class IngestService:
    ingestor: Ingestor
    parking: DeadLetterParking | None = None

    def handle(
        self, event: dict[str, Any], context: LambdaContext | None, metrics: Metrics | None = None
    ) -> dict[str, Any] | None:
        self.ingestor.start_batch()
        written_before = self.ingestor.write_units()
        media = self.ingestor.media
        probes_before, unplayable_before = media.requests, media.unplayable
        try:
            return self._dispatch(event, context)
        finally:
            if metrics is not None:
                self._publish(metrics, self.ingestor.write_units() - written_before)
                metrics.add_metric(
                    name="MediaProbes", unit=MetricUnit.Count, value=media.requests - probes_before
                )
                metrics.add_metric(
                    name="UnplayableVideo",
                    unit=MetricUnit.Count,
                    value=media.unplayable - unplayable_before,
                )

    def _dispatch(
        self, event: dict[str, Any], context: LambdaContext | None
    ) -> dict[str, Any] | None:
        if _is_sqs_batch(event):
            # Every failed record is reported (never a raised error), so a batch that fails
            # whole is retried the same way as one that fails in part.
            processor = BatchProcessor(
                event_type=EventType.SQS, raise_on_entire_batch_failure=False
            )
            response: dict[str, Any] = process_partial_response(  # type: ignore[assignment]
                event=event,
                record_handler=self._handle_record,
                processor=processor,
                context=context,
            )
            return response
        if is_test_event(event) or is_s3_notification(event) or is_eventbridge_s3(event):
            for object_event in events_from_payload(event):
                self.ingestor.apply(object_event)
            return None
        raise MalformedMessage(
            "invocation is neither an SQS batch, an S3 notification nor an EventBridge S3 event"
        )

    def _handle_record(self, record: SQSRecord) -> None:
        try:
            object_events = events_from_body(record.body)
        except MalformedMessage as exc:
            self.ingestor.record(Outcome.MALFORMED)
            logger.error(
                "malformed message", extra={"message_id": record.message_id, "reason": str(exc)}
            )
            if self.parking is None:
                raise  # no DLQ to park in: SQS redrive takes it there after retries
            self.parking.park(record, str(exc))
            return
        if not object_events:
            logger.info("message without object events acknowledged", extra={"body": record.body})
        for object_event in object_events:
            self.ingestor.apply(object_event)

    def _publish(self, metrics: Metrics, write_units: float) -> None:
        for outcome, count in self.ingestor.stats.outcomes.items():
            metrics.add_metric(name=str(outcome), unit=MetricUnit.Count, value=count)
        stats = self.ingestor.stats
        for lag in stats.lags_seconds[:100]:
            metrics.add_metric(name="EventLagSeconds", unit=MetricUnit.Seconds, value=lag)
        ahead = stats.ahead_seconds
        if ahead is not None:
            metrics.add_metric(name=CLOCK_AHEAD_METRIC, unit=MetricUnit.Seconds, value=ahead)
        for lateness in stats.lateness_ms[:100]:
            metrics.add_metric(
                name=UPLOAD_DELAY_METRIC, unit=MetricUnit.Seconds, value=max(0, lateness) / 1000
            )
        metrics.add_metric(name="ConsumedWriteCapacity", unit=MetricUnit.Count, value=write_units)


def _is_sqs_batch(event: dict[str, Any]) -> bool:
    records = event.get("Records")
    return (
        isinstance(records, list)
        and bool(records)
        and all(isinstance(r, dict) and r.get("eventSource") == "aws:sqs" for r in records)
    )
