"""Events -> read model: S3 notifications, the queue with its DLQ, the ingest Lambda.

Wiring of docs/ingest.md: S3 event notifications on ``v1/`` go to a standard SQS
queue, which feeds the ingest Lambda with partial batch responses; what keeps
failing ends in the dead-letter queue (its alarm is in :mod:`infra.monitoring`). The
Lambda gets what its spec declares (``core/functions.py``: read the segments and the
read model, write the read model, enforce deletion windows around the holds, park in
the DLQ) and two statements written out here (the probe's version read, a rendition's
delete), never the broader ``grant_*`` helpers.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Acknowledgment, Duration, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_notifications as s3n
from constructs import Construct

from infra.nag import derived_objects_acknowledgment
from infra.python_function import PythonFunction, derived_media_statement, python_function
from infra.queues import work_queue
from infra.settings import StackSettings
from infra.wiring import Wiring
from video_index.core.contract import ENV_DLQ_URL, INDEXED_PREFIX, RENDITIONS_PREFIX
from video_index.core.functions import INGEST, Access

#: S3 events that change the set of objects under ``v1/`` (docs/ingest.md; the same list
#: as ``video_index.core.queue_settings.NOTIFIED_EVENTS``, which says why lifecycle's
#: version deletions are left out).
NOTIFIED_EVENTS: Final = (
    s3.EventType.OBJECT_CREATED,
    s3.EventType.OBJECT_REMOVED,
    s3.EventType.LIFECYCLE_EXPIRATION_DELETE_MARKER_CREATED,
)

#: Construct id CDK gives the stack-wide singleton Lambda behind Custom::S3BucketNotifications.
_NOTIFICATIONS_HANDLER_ID_PREFIX: Final = "BucketNotificationsHandler"


class IngestPipeline(Construct):
    """Notification queue + DLQ and the ingest Lambda with least privilege."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        bucket: s3.IBucket,
    ) -> None:
        super().__init__(scope, construct_id)
        queues = work_queue(
            self, settings, visibility_timeout_seconds=settings.queue_visibility_timeout_seconds
        )
        self.queue, self.dead_letter_queue = queues.queue, queues.dead_letter_queue
        # The handler parks malformed messages in the DLQ itself.
        park = iam.PolicyStatement(
            sid="ParkMalformedMessages",
            actions=["sqs:SendMessage"],
            resources=[self.dead_letter_queue.queue_arn],
        )
        Wiring.of(self).provide(
            ENV_DLQ_URL, self, self.dead_letter_queue.queue_url, {Access.SEND: lambda: [park]}
        )
        lambda_function = self._function(settings, bucket)
        self.log_group = lambda_function.log_group
        self.role = lambda_function.role
        self.function = lambda_function.function
        self.function.add_event_source(
            event_sources.SqsEventSource(
                self.queue,
                batch_size=settings.sqs_batch_size,
                max_batching_window=(
                    Duration.seconds(settings.sqs_max_batching_window_seconds)
                    if settings.sqs_max_batching_window_seconds
                    else None
                ),
                report_batch_item_failures=True,
            )
        )
        self._notify(bucket)

    # --- resources ---------------------------------------------------------------------------

    def _function(self, settings: StackSettings, bucket: s3.IBucket) -> PythonFunction:
        """The ingest Lambda: its spec's grants (``core/functions.py``) and two narrow ones.

        SqsEventSource and active tracing add their own statements (receive/delete on
        the queue; X-Ray put).
        """
        return python_function(
            self,
            settings=settings,
            spec=INGEST,
            description="video-index ingest: S3 events -> read model",
            timeout=Duration.seconds(settings.ingest_timeout_seconds),
            memory_size=settings.ingest_memory_mb,
            statements=[
                # The media probe reads the first bytes of the very version an event names.
                iam.PolicyStatement(
                    sid="ProbeSegmentVersions",
                    actions=["s3:GetObjectVersion"],
                    resources=[bucket.arn_for_objects(f"{INDEXED_PREFIX}*")],
                ),
                # A rendition goes when its source goes (docs/playback.md).
                derived_media_statement(
                    bucket, "RemoveRenditions", ["s3:DeleteObject"], [RENDITIONS_PREFIX]
                ),
            ],
            acknowledgments=[
                derived_objects_acknowledgment(bucket, RENDITIONS_PREFIX, "Only s3:DeleteObject.")
            ],
        )

    def _notify(self, bucket: s3.IBucket) -> None:
        """S3 -> queue for every event that changes the set of objects under ``v1/``."""
        destination = s3n.SqsDestination(self.queue)
        for event in NOTIFIED_EVENTS:
            bucket.add_event_notification(
                event, destination, s3.NotificationKeyFilter(prefix=INDEXED_PREFIX)
            )
        _acknowledge_notifications_handler(Stack.of(self))


def _acknowledge_notifications_handler(stack: Stack) -> None:
    """Acknowledge findings on CDK's own Custom::S3BucketNotifications handler.

    CDK creates that singleton Lambda (and its role) at stack level; this construct
    is what makes CDK create it, so the justification lives here.
    """
    for child in stack.node.children:
        if child.node.id.startswith(_NOTIFICATIONS_HANDLER_ID_PREFIX):
            Validations.of(child).acknowledge(
                Acknowledgment(
                    id=(
                        "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/"
                        "service-role/AWSLambdaBasicExecutionRole]"
                    ),
                    reason=(
                        "CDK-managed singleton handler of Custom::S3BucketNotifications; CDK "
                        "creates its role with this policy and offers no way to replace it. "
                        "It runs only during deployments."
                    ),
                ),
            )
