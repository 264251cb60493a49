"""Silent cameras (docs/operations.md#silent-cameras): a scheduled check, its metric, its alarm.

Every ``silent_check_minutes`` a small Lambda reads the serving generation's devices
partition (O(devices), never a segment) and publishes ``SilentDevices``; the alarm fires
while one or more cameras are silent. Least privilege: reads of the read model
(its spec, ``core/functions.py``), nothing else.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as events_targets
from aws_cdk import aws_sns as sns
from constructs import Construct

from infra.python_function import python_function
from infra.settings import StackSettings
from video_index.core.contract import METRICS_NAMESPACE, SILENT_DEVICES_METRIC
from video_index.core.functions import SILENCE


class SilentCameras(Construct):
    """The scheduled check, the rule that starts it, and the ``SilentDevices`` alarm."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        topic: sns.ITopic,
    ) -> None:
        super().__init__(scope, construct_id)
        # Reads the read model and its kinds' thresholds: its spec (core/functions.py).
        check = python_function(
            self,
            settings=settings,
            spec=SILENCE,
            description="video-index: lists cameras that stopped uploading (SilentDevices)",
            timeout=Duration.minutes(5),
            memory_size=512,
        )
        self.function, self.role, self.log_group = check.function, check.role, check.log_group
        events.Rule(
            self,
            "Schedule",
            description="video-index: the silent-camera check",
            schedule=events.Schedule.rate(Duration.minutes(settings.silent_check_minutes)),
            targets=[events_targets.LambdaFunction(check.function, retry_attempts=2)],
        )
        self.alarm = cloudwatch.Alarm(
            self,
            "Alarm",
            alarm_description=(
                "One or more cameras uploaded nothing for longer than their kind's "
                "silent_after_seconds (video-index status lists them; retire a camera "
                "that is gone for good: video-index device retire NAME)."
            ),
            metric=cloudwatch.Metric(
                namespace=METRICS_NAMESPACE,
                metric_name=SILENT_DEVICES_METRIC,
                dimensions_map={"service": SILENCE.service},
                statistic="Maximum",
                period=Duration.minutes(settings.silent_check_minutes),
            ),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self.alarm.add_alarm_action(cloudwatch_actions.SnsAction(topic))
