"""Segment changes -> aggregates: the read model's stream feeding the aggregation Lambda.

Ingest writes segment items only; buckets and device items follow from the
table's own stream (docs/read-model.md#aggregation-by-stream). This construct is
that wiring: the consumer function, the event source mapping on the read-model
table's stream, and the dead-letter queue that describes batches which kept
failing. Its alarms are in :mod:`infra.monitoring`, beside every other alarm.

What the event source mapping promises the consumer, and why:

* ``ParallelizationFactor`` 1: one invocation per shard at a time, so an item's
  changes arrive in stream order and each aggregate's high-water mark is exact.
* ``TRIM_HORIZON``: a new mapping starts from the oldest record the stream holds,
  so nothing written before it existed is left unaggregated.
* ``ReportBatchItemFailures`` and ``BisectBatchOnFunctionError``: a failed item
  resumes the batch from the oldest change it waits for; a crash halves the batch
  until the poison record is alone; after the retries the range (shard and
  sequence numbers, not the records) goes to the dead-letter queue and reconcile
  mends what it missed.
* Filter: only INSERT/MODIFY/REMOVE of segment items (partition key
  ``g<N>#seg#<device>#<kind>``, matched by its ``#<kind>`` suffix) invoke it; the
  consumer's own writes (buckets, device items, the control item) never do.
* The batching window is the deployment's trade of freshness for cost: every
  bucket or device item a batch touches is written once per batch.

The role gets exactly what the handler does: its spec's reads and writes of the read
model (``core/functions.py``) and the stream's reads written out here (no ``grant_*``
helper, which would add more than the handler uses).
"""

from __future__ import annotations

from typing import Any, Final

from aws_cdk import Acknowledgment, Duration, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.limits import DLQ_RETENTION_DAYS
from infra.python_function import python_function
from infra.settings import StackSettings
from video_index.core.functions import AGGREGATE
from video_index.core.keys import KINDS

#: What Lambda's stream poller does with the function's role, on the stream only.
STREAM_READ_ACTIONS: Final = [
    "dynamodb:DescribeStream",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
]
#: Stream events that change a segment item (all of them: the consumer needs removals
#: too, e.g. a generation dropped or a tombstone expiring).
SEGMENT_EVENT_NAMES: Final = ("INSERT", "MODIFY", "REMOVE")


def segment_change_pattern() -> dict[str, Any]:
    """The event filter: a change of an item whose partition key ends with ``#<kind>``.

    Segment partition keys are ``g<N>#seg#<device>#<kind>`` and no other item's key
    ends so (control ``control``, devices ``g<N>#devices``), except a bucket of a
    device named like a kind (``g<N>#bkt#video``): that one passes the filter and the
    consumer skips it (:mod:`video_index.aggregate.records`), as it skips anything but
    a segment item. Lambda's filter has no wildcard, so this is the tightest match
    that never drops a segment change.
    """
    return {
        "eventName": list(SEGMENT_EVENT_NAMES),
        "dynamodb": {"Keys": {"pk": {"S": [{"suffix": f"#{kind}"} for kind in KINDS]}}},
    }


class Aggregation(Construct):
    """The stream consumer: function, event source mapping, dead-letter queue."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        stream_arn: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self.settings = settings
        self.dead_letter_queue = self._dead_letter_queue()
        lambda_function = python_function(
            self,
            settings=settings,
            spec=AGGREGATE,
            description="video-index aggregation: read-model stream -> buckets and device totals",
            timeout=Duration.seconds(settings.aggregation_timeout_seconds),
            memory_size=settings.aggregation_memory_mb,
            # The read model's items are its spec's (read an aggregate, put it back
            # conditioned on its version, query segment items to recount); its stream is
            # read here.
            statements=[
                iam.PolicyStatement(
                    sid="ReadModelStream",
                    actions=list(STREAM_READ_ACTIONS),
                    resources=[stream_arn],
                ),
                # Lambda checks it when it creates the mapping; it has no resource-level
                # permission (it only lists stream ARNs of the account).
                iam.PolicyStatement(
                    sid="ListStreams",
                    actions=["dynamodb:ListStreams"],
                    resources=["*"],
                ),
            ],
            acknowledgments=[
                Acknowledgment(
                    id="AwsSolutions-IAM5[Resource::*]",
                    reason=(
                        "dynamodb:ListStreams (Lambda's stream event source checks it) and "
                        "X-Ray's put actions support no resource-level permissions; the "
                        "stream's records are read on its ARN only."
                    ),
                )
            ],
        )
        self.log_group = lambda_function.log_group
        self.role = lambda_function.role
        self.function = lambda_function.function
        self.event_source = lambda_.EventSourceMapping(
            self,
            "StreamSource",
            target=self.function,
            event_source_arn=stream_arn,
            starting_position=lambda_.StartingPosition.TRIM_HORIZON,
            batch_size=settings.aggregation_batch_size,
            max_batching_window=Duration.seconds(settings.aggregation_max_batching_window_seconds),
            parallelization_factor=1,
            bisect_batch_on_error=True,
            retry_attempts=settings.aggregation_retry_attempts,
            report_batch_item_failures=True,
            filters=[lambda_.FilterCriteria.filter(segment_change_pattern())],
            on_failure=event_sources.SqsDlq(self.dead_letter_queue),
        )

    def _dead_letter_queue(self) -> sqs.Queue:
        """Where Lambda describes a batch that failed every retry (shard, sequence
        numbers): kept for SQS's maximum, 14 days (docs/operations.md)."""
        queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(DLQ_RETENTION_DAYS),
        )
        Validations.of(queue).acknowledge(
            Acknowledgment(
                id="AwsSolutions-SQS3",
                reason=(
                    "It is a dead-letter queue: the on-failure destination of the stream "
                    "event source mapping, which cdk-nag does not recognize as a redrive."
                ),
            )
        )
        return queue

    @property
    def lag_alarm_threshold_ms(self) -> int:
        """Above this, the lag and iterator-age alarms fire (``aggregation_lag_alarm_seconds``)."""
        return self.settings.aggregation_lag_alarm_seconds * 1000
