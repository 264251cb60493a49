"""What starts reconcile without an operator: a schedule, and a new inventory report."""

from __future__ import annotations

import json
from typing import Final

from aws_cdk import Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as events_targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as scheduler_targets
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.ops.reconcile_machine import SCHEDULED_RECONCILE_INPUT
from infra.settings import StackSettings
from infra.storage import SegmentStorage
from video_index.core.contract import ACTION_RECONCILE_PLAN

#: S3 Inventory writes ``manifest.json`` first and ``manifest.checksum`` last: the
#: checksum is the signal that a report is complete.
INVENTORY_DONE_MARKER: Final = "manifest.checksum"


def _starter_role(scope: Construct, construct_id: str, service: str, description: str) -> iam.Role:
    """A role ``service`` of this account (only) assumes to start the state machine; the
    target construct adds the one ``states:StartExecution`` statement."""
    return iam.Role(
        scope,
        construct_id,
        assumed_by=iam.ServicePrincipal(
            service, conditions={"StringEquals": {"aws:SourceAccount": Stack.of(scope).account}}
        ),
        description=description,
    )


def reconcile_schedule(
    scope: Construct, settings: StackSettings, reconcile: sfn.IStateMachine
) -> tuple[scheduler.Schedule, iam.Role]:
    """EventBridge Scheduler starts the reconcile state machine daily, on the minute."""
    role = _starter_role(
        scope,
        "ScheduleRole",
        "scheduler.amazonaws.com",
        "video-index: EventBridge Scheduler starts the reconcile state machine",
    )
    schedule = scheduler.Schedule(
        scope,
        "Schedule",
        description="video-index: daily reconcile of the read model against S3",
        schedule=scheduler.ScheduleExpression.expression(settings.reconcile_schedule),
        # A daily job has no reason to drift: run it when it was asked for.
        time_window=scheduler.TimeWindow.off(),
        target=scheduler_targets.StepFunctionsStartExecution(
            reconcile,
            # Text, not an object: an object would lose its JSON nulls on the way.
            input=scheduler.ScheduleTargetInput.from_text(
                json.dumps(SCHEDULED_RECONCILE_INPUT, separators=(",", ":"))
            ),
            role=role,
        ),
    )
    return schedule, role


def inventory_trigger(
    scope: Construct, storage: SegmentStorage, reconcile: sfn.IStateMachine
) -> tuple[events.Rule, iam.Role]:
    """Start reconcile as soon as S3 Inventory completes a report for the segment bucket.

    An EventBridge input transformer cannot rewrite strings, so the execution gets
    the URI of the ``manifest.checksum`` that fired the rule (``manifest_checksum``);
    the plan step reads the ``manifest.json`` next to it.
    """
    role = _starter_role(
        scope,
        "InventoryRuleRole",
        "events.amazonaws.com",
        "video-index: a new inventory report starts the reconcile state machine",
    )
    bucket_name = events.EventField.from_path("$.detail.bucket.name")
    key = events.EventField.from_path("$.detail.object.key")
    rule = events.Rule(
        scope,
        "InventoryReportRule",
        description="video-index: reconcile when a new S3 Inventory report is complete",
        event_pattern=events.EventPattern(
            source=["aws.s3"],
            detail_type=["Object Created"],
            detail={
                "bucket": {"name": [storage.reports_bucket.bucket_name]},
                # Prefix and suffix at once: EventBridge ORs the matchers of one field,
                # so the two are combined into one wildcard (`*` spans the dated folder).
                "object": {
                    "key": events.Match.wildcard(
                        f"{storage.inventory_destination_prefix}*/{INVENTORY_DONE_MARKER}"
                    )
                },
            },
        ),
    )
    # The defaults state fills in `manifest` (null) and anything else left out.
    rule.add_target(
        events_targets.SfnStateMachine(
            reconcile,
            input=events.RuleTargetInput.from_object(
                {
                    "action": ACTION_RECONCILE_PLAN,
                    "source": "inventory",
                    "manifest_checksum": f"s3://{bucket_name}/{key}",
                    "dry_run": False,
                    "force": False,
                }
            ),
            role=role,
        )
    )
    return rule, role
