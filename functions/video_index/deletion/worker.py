"""The deletion worker: SQS messages ``{"deletion_id"}`` → :meth:`DeletionJobs.run`.

Runs as the deletion Lambda (SQS event source, one job per invocation, partial batch
responses) and, in ``video-index local``, as a Lambda-like worker thread. A job longer
than one invocation stops at a checkpoint before the function's time runs out and
queues its own continuation (a durable job without a state machine); a transient
failure fails the record, so SQS delivers it again, until its last receive
(:data:`~video_index.core.queue_settings.DELETION_MAX_RECEIVES`): then the job ends
``failed`` with the reason instead, and the message is consumed. Every job that ends
``failed`` is logged with its reason and counted (the ``DeletionJobsFailed`` metric,
alarmed). A message for a job another invocation is running is consumed: that
invocation's own message comes back if it dies, after its lease has expired.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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

from video_index.aws.clients import Clients
from video_index.core.contract import DELETION_JOBS_FAILED_METRIC
from video_index.core.errors import BadInput
from video_index.core.queue_settings import DELETION_MAX_RECEIVES
from video_index.core.settings import Settings
from video_index.deletion.jobs import DeletionJobs, JobBusy
from video_index.deletion.service import build_deletion_jobs, deletion_queue

logger = Logger(child=True)


@dataclass
class DeletionWorker:
    jobs: DeletionJobs
    #: Queues a continuation of a paused job (the deletion queue).
    continue_later: Callable[[str], None]

    #: Counts the jobs that ended ``failed`` (the Lambda's Powertools metrics).
    metrics: Metrics | None = None

    def handle(self, event: dict[str, Any], context: LambdaContext | None) -> dict[str, Any]:
        processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
        response: dict[str, Any] = process_partial_response(  # type: ignore[assignment]
            event=event, record_handler=self._record, processor=processor, context=context
        )
        for failure in processor.exceptions:
            logger.error("deletion message failed", extra={"error": repr(failure[1])})
        return response

    def _record(self, record: SQSRecord, lambda_context: LambdaContext | None = None) -> None:
        def time_left() -> float:
            if lambda_context is None:
                return float("inf")
            return lambda_context.get_remaining_time_in_millis() / 1000

        try:
            deletion_id = str(json.loads(record.body)["deletion_id"])
        except (ValueError, KeyError, TypeError) as exc:
            reason = f"not a deletion message ({exc!r}): {record.body[:200]!r}"
            raise BadInput("body", reason) from None
        last = int(record.attributes.approximate_receive_count) >= DELETION_MAX_RECEIVES
        try:
            run = self.jobs.run(deletion_id, time_left=time_left, last_attempt=last)
        except JobBusy:
            logger.info("deletion job runs elsewhere", extra={"deletion_id": deletion_id})
            return
        if run.paused:
            self.continue_later(deletion_id)
        if run.failed_here and self.metrics is not None:
            self.metrics.add_metric(
                name=DELETION_JOBS_FAILED_METRIC, unit=MetricUnit.Count, value=1
            )
        logger.info(
            "deletion job run",
            extra={
                "deletion_id": deletion_id,
                "state": str(run.request.state),
                "deleted": run.request.deleted,
                "paused": run.paused,
            },
        )


def build_deletion_worker(
    settings: Settings, clients: Clients, metrics: Metrics | None = None
) -> DeletionWorker:
    queue = deletion_queue(settings, clients)
    return DeletionWorker(build_deletion_jobs(settings, clients, enqueue=queue), queue, metrics)
