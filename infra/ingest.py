"""Events -> read model: S3 notifications, the queue with its DLQ, the ingest Lambda, alarms.

Wiring of SPEC §4: S3 event notifications on ``v1/`` go to a standard SQS queue,
which feeds the ingest Lambda with partial batch responses; what keeps failing
ends in the dead-letter queue, and an alarm says so. The Lambda gets exactly the
permissions the handler uses, written out here instead of the broader
``grant_*`` helpers, so a review of this file is a review of its privileges.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Acknowledgment, CfnElement, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_notifications as s3n
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct

from infra.python_function import PythonFunction, python_function, segment_read_statements
from infra.settings import (
    DLQ_RETENTION_DAYS,
    INDEXED_PREFIX,
    INGEST_SERVICE_NAME,
    StackSettings,
)
from video_index.settings import (
    ENV_BUCKET,
    ENV_DLQ_URL,
    ENV_GAP_TOLERANCE_MS,
    ENV_TABLE,
    ENV_TOMBSTONE_DAYS,
)

INGEST_HANDLER: Final = "video_index.handlers.ingest.handler"

#: S3 events that change the set of objects under ``v1/`` (SPEC §4).
NOTIFIED_EVENTS: Final = (
    s3.EventType.OBJECT_CREATED,
    s3.EventType.OBJECT_REMOVED,
    s3.EventType.LIFECYCLE_EXPIRATION,
)

#: Item actions the handler performs on the read model. TransactWriteItems has no IAM
#: action of its own: each item in a transaction is authorized by its Put/Update/Delete/
#: ConditionCheck action.
READ_MODEL_ACTIONS: Final = [
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
]

#: Construct id CDK gives the stack-wide singleton Lambda behind Custom::S3BucketNotifications.
_NOTIFICATIONS_HANDLER_ID_PREFIX: Final = "BucketNotificationsHandler"


class AlarmTopic(Construct):
    """SNS topic the alarms publish to, encrypted with a key CloudWatch may use.

    The AWS-managed ``alias/aws/sns`` key cannot be used here: its key policy cannot
    be edited to let CloudWatch alarms publish, so alarms would fail silently. A
    customer-managed key (rotated) with a CloudWatch grant is the working option.
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: StackSettings) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(
            self,
            "Key",
            description="Encrypts the video-index alarm topic",
            enable_key_rotation=True,
            # It only protects notifications in flight; nothing at rest depends on it.
            removal_policy=RemovalPolicy.DESTROY,
            pending_window=Duration.days(7),
        )
        self.key.grant(
            iam.ServicePrincipal("cloudwatch.amazonaws.com"),
            "kms:Decrypt",
            "kms:GenerateDataKey*",
        )
        self.topic = sns.Topic(
            self,
            "Topic",
            display_name="video-index alarms",
            master_key=self.key,
            enforce_ssl=True,
        )
        if settings.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(settings.alarm_email))


class IngestPipeline(Construct):
    """Notification queue + DLQ, the ingest Lambda with least privilege, and its alarms."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        bucket: s3.IBucket,
        table: dynamodb.ITable,
        alarm_topic: sns.ITopic,
    ) -> None:
        super().__init__(scope, construct_id)
        self.dead_letter_queue = self._dead_letter_queue()
        self.queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(settings.queue_visibility_timeout_seconds),
            retention_period=Duration.days(settings.queue_retention_days),
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=settings.max_receive_count
            ),
        )
        lambda_function = self._function(settings=settings, bucket=bucket, table=table)
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
        self._alarms(alarm_topic)

    # --- resources ---------------------------------------------------------------------------

    def _dead_letter_queue(self) -> sqs.Queue:
        return sqs.Queue(
            self,
            "DeadLetterQueue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(DLQ_RETENTION_DAYS),
        )

    def _function(
        self, *, settings: StackSettings, bucket: s3.IBucket, table: dynamodb.ITable
    ) -> PythonFunction:
        """The ingest Lambda; its role has only what the handler does.

        SqsEventSource and active tracing add their own statements (receive/delete on
        the queue; X-Ray put).
        """
        statements = [
            iam.PolicyStatement(
                sid="ReadModelItems",
                actions=list(READ_MODEL_ACTIONS),
                resources=[table.table_arn],
            ),
            # HEAD decides the current state of a key when an event has no sequencer.
            *segment_read_statements(bucket),
            # The handler parks malformed messages in the DLQ itself.
            iam.PolicyStatement(
                sid="ParkMalformedMessages",
                actions=["sqs:SendMessage"],
                resources=[self.dead_letter_queue.queue_arn],
            ),
        ]
        acknowledgments = [
            Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{_logical_id(bucket)}.Arn>/v1/*]",
                reason=(
                    "Object keys are unbounded by design (one per segment); the wildcard is "
                    "confined to the indexed v1/ prefix and to s3:GetObject."
                ),
            ),
        ]
        return python_function(
            self,
            settings=settings,
            handler=INGEST_HANDLER,
            service_name=INGEST_SERVICE_NAME,
            description="video-index ingest: S3 events -> read model",
            timeout=Duration.seconds(settings.ingest_timeout_seconds),
            memory_size=settings.ingest_memory_mb,
            environment={
                ENV_BUCKET: bucket.bucket_name,
                ENV_TABLE: table.table_name,
                ENV_DLQ_URL: self.dead_letter_queue.queue_url,
                ENV_GAP_TOLERANCE_MS: str(settings.gap_tolerance_ms),
                ENV_TOMBSTONE_DAYS: str(settings.tombstone_days),
            },
            statements=statements,
            acknowledgments=acknowledgments,
        )

    def _notify(self, bucket: s3.IBucket) -> None:
        """S3 -> queue for every event that changes the set of objects under ``v1/``."""
        destination = s3n.SqsDestination(self.queue)
        for event in NOTIFIED_EVENTS:
            bucket.add_event_notification(
                event, destination, s3.NotificationKeyFilter(prefix=INDEXED_PREFIX)
            )
        _acknowledge_notifications_handler(Stack.of(self))

    def _alarms(self, topic: sns.ITopic) -> None:
        action = cloudwatch_actions.SnsAction(topic)
        self.dlq_alarm = cloudwatch.Alarm(
            self,
            "DeadLetterQueueNotEmpty",
            alarm_description=(
                "S3 events could not be applied to the read model and were parked in the "
                "DLQ. Inspect, fix, then redrive (or run reconcile)."
            ),
            metric=self.dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(1), statistic="Maximum"
            ),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self.errors_alarm = cloudwatch.Alarm(
            self,
            "FunctionErrors",
            alarm_description=(
                "The ingest Lambda crashed or timed out (per-record failures are reported "
                "as batch item failures and do not count here)."
            ),
            metric=self.function.metric_errors(period=Duration.minutes(5), statistic="Sum"),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        for alarm in (self.dlq_alarm, self.errors_alarm):
            alarm.add_alarm_action(action)


def _logical_id(construct: IConstruct) -> str:
    """Logical id of a construct's CloudFormation resource, as cdk-nag prints it."""
    default_child = construct.node.default_child
    if not isinstance(default_child, CfnElement):
        raise TypeError(f"{construct.node.path} has no CloudFormation resource")
    return Stack.of(construct).get_logical_id(default_child)


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
