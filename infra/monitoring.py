"""Alarms and the topic they publish to (docs/operations.md: what each alarm means).

Every alarm of the stack lives here, beside the topic, so a reader finds what
pages an operator in one file; the constructs that own the watched resources
stay free of monitoring concerns.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.aggregation import Aggregation
from infra.settings import StackSettings
from video_index.core.contract import (
    AGGREGATE_SERVICE_NAME,
    AGGREGATION_LAG_METRIC,
    CLOCK_AHEAD_METRIC,
    DELETION_JOBS_FAILED_METRIC,
    DELETION_SERVICE_NAME,
    INGEST_SERVICE_NAME,
    METRICS_NAMESPACE,
    PARTITIONS_REPAIRED_METRIC,
    RECONCILE_SERVICE_NAME,
)


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


class Monitoring(Construct):
    """The alarm topic and every alarm: ingest falling behind or failing, aggregation
    lagging or failing, a deletion job failing, a camera clock ahead, reconcile finding
    drift, an ops execution failing."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        dead_letter_queues: dict[str, sqs.IQueue],
        ingest_function: lambda_.IFunction,
        aggregation: Aggregation,
        reconcile_state_machine: sfn.IStateMachine,
        rebuild_state_machine: sfn.IStateMachine,
    ) -> None:
        super().__init__(scope, construct_id)
        self.alarm_topic = AlarmTopic(self, "Alarms", settings=settings)
        self.topic = self.alarm_topic.topic
        self._dead_letter_alarms(
            {**dead_letter_queues, "Aggregation": aggregation.dead_letter_queue}
        )
        self.ingest_errors_alarm = self._alarm(
            "IngestFunctionErrors",
            "The ingest Lambda crashed or timed out (per-record failures are reported "
            "as batch item failures and do not count here).",
            ingest_function.metric_errors(period=Duration.minutes(5), statistic="Sum"),
        )
        self._aggregation_alarms(aggregation)
        self._job_alarms(reconcile_state_machine, rebuild_state_machine)
        self._camera_alarms(settings)

    def _camera_alarms(self, settings: StackSettings) -> None:
        """A camera's clock running ahead (docs/operations.md#camera-clocks)."""
        tolerance = settings.clock_tolerance_seconds
        self.clock_ahead_alarm = self._alarm(
            "ClockAhead",
            f"A camera's file ended, by its key, more than {tolerance} s after S3 received it: "
            "its clock runs ahead (a late upload cannot do this), so its footage is filed at "
            "the wrong moments. `video-index status` and GET /devices/{d} name the camera "
            "and how far ahead; fix its time source (NTP).",
            _product_metric(CLOCK_AHEAD_METRIC, INGEST_SERVICE_NAME, "Maximum"),
            threshold=tolerance,
        )

    def _dead_letter_alarms(self, queues: dict[str, sqs.IQueue]) -> None:
        """One alarm per dead-letter queue holding a message."""
        meaning = {
            "Ingest": "S3 events could not be applied to the read model and were parked in "
            "the DLQ. Inspect, fix, then redrive (or run reconcile).",
            "Export": "Export jobs kept failing for a transient reason and were parked in the "
            "DLQ. Inspect, then redrive.",
            "Deletion": "Deletion jobs kept failing for a transient reason and were parked in "
            "the DLQ; their requests stay in force. Inspect, then redrive (a job continues "
            "from its checkpoint).",
            "Aggregation": "Stream batches kept failing every retry: calendars and totals miss "
            "the changes of the shard and sequence range each message names. Fix the cause, "
            "then run reconcile (it mends buckets and device items).",
        }
        self.dlq_alarms = {
            name: self._alarm(
                "DeadLetterQueueNotEmpty" if name == "Ingest" else f"{name}DeadLetterQueueNotEmpty",
                meaning[name],
                queue.metric_approximate_number_of_messages_visible(
                    period=Duration.minutes(1), statistic="Maximum"
                ),
            )
            for name, queue in queues.items()
        }
        self.dlq_alarm = self.dlq_alarms["Ingest"]

    def _aggregation_alarms(self, aggregation: Aggregation) -> None:
        """The stream consumer falling behind: by its own lag, and by the stream's age."""
        lag_threshold = aggregation.lag_alarm_threshold_ms
        self.aggregation_lag_alarm = self._alarm(
            "AggregationLag",
            "Calendars and device totals lag the segments by more than "
            f"{lag_threshold // 1000} s: the consumer falls behind (throttling, errors). "
            "The API's fresh window still covers recent changes until the lag outgrows it; "
            "`video-index status` shows the lag.",
            _product_metric(AGGREGATION_LAG_METRIC, AGGREGATE_SERVICE_NAME, "Maximum"),
            threshold=lag_threshold,
        )
        self.aggregation_iterator_age_alarm = self._alarm(
            "AggregationIteratorAge",
            "The aggregation consumer reads stream records older than "
            f"{lag_threshold // 1000} s: batches fail and are retried, or it cannot keep "
            "up. Records older than 24 hours leave the stream unaggregated.",
            aggregation.function.metric(
                "IteratorAge", statistic="Maximum", period=Duration.minutes(5)
            ),
            threshold=lag_threshold,
        )

    def _job_alarms(
        self, reconcile_state_machine: sfn.IStateMachine, rebuild_state_machine: sfn.IStateMachine
    ) -> None:
        """Drift found, a deletion job failed, an ops execution failed."""
        self.drift_alarm = self._alarm(
            "DriftFound",
            "Reconcile repaired read-model partitions: events were lost or applied "
            "wrongly. Read the run's report under reconcile/<run id>/report.json.",
            _product_metric(
                PARTITIONS_REPAIRED_METRIC, RECONCILE_SERVICE_NAME, "Sum", Duration.days(1)
            ),
        )
        self.deletion_failed_alarm = self._alarm(
            "DeletionJobFailed",
            "A deletion job ended failed; GET /deletions/{id} (or the log line 'deletion job "
            "failed') names the reason. Its request stays in force: ingest and reconcile keep "
            "deleting what its window covers. Fix the cause, then `video-index delete --resume "
            "ID`, or withdraw the request (docs/deletion.md).",
            _product_metric(DELETION_JOBS_FAILED_METRIC, DELETION_SERVICE_NAME, "Sum"),
        )
        self.reconcile_failed_alarm = self._alarm(
            "ReconcileFailed",
            "A reconcile execution failed: the read model was not checked against S3.",
            reconcile_state_machine.metric_failed(period=Duration.minutes(5), statistic="Sum"),
        )
        self.rebuild_failed_alarm = self._alarm(
            "RebuildFailed",
            "A rebuild execution failed (and was aborted, or the abort failed too); the "
            "current generation keeps serving.",
            rebuild_state_machine.metric_failed(period=Duration.minutes(5), statistic="Sum"),
        )

    def _alarm(
        self,
        construct_id: str,
        description: str,
        metric: cloudwatch.IMetric,
        *,
        threshold: float = 0,
    ) -> cloudwatch.Alarm:
        """An alarm on ``metric`` above ``threshold``, publishing to the topic; missing
        data is fine."""
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_description=description,
            metric=metric,
            threshold=threshold,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(cloudwatch_actions.SnsAction(self.topic))
        return alarm


def _product_metric(
    name: str, service: str, statistic: str, period: Duration | None = None
) -> cloudwatch.Metric:
    """One of the product's own metrics (Powertools EMF, ``service`` dimension)."""
    return cloudwatch.Metric(
        namespace=METRICS_NAMESPACE,
        metric_name=name,
        dimensions_map={"service": service},
        statistic=statistic,
        period=period or Duration.minutes(5),
    )
