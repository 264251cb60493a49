"""The bulk state machines' roles (docs/bulk.md): invoke the bulk Lambda, read their
unit lists, write their map results, deliver logs and traces, and run their own map's
child executions; nothing else (the roles are immutable views: CDK adds nothing)."""

from __future__ import annotations

from aws_cdk import Acknowledgment, ArnFormat, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.nag import logical_id

# The same Step Functions plumbing the reconcile machines have (execution logs, X-Ray,
# the map's result writer); no resource-level permissions exist for the first two.
from infra.ops.state_machines import LOG_DELIVERY_ACTIONS, RESULT_WRITER_ACTIONS, XRAY_ACTIONS
from video_index.bulk.names import RESULTS_FOLDER


def machine_role(
    scope: Construct, name: str, prefix: str, reports: s3.IBucket, function: lambda_.IFunction
) -> iam.Role:
    """The role of the ``name`` machine: exactly these statements (used immutably)."""
    role = iam.Role(
        scope,
        f"{name}StateMachineRole",
        assumed_by=iam.ServicePrincipal("states.amazonaws.com"),
        description=f"video-index {name} state machine",
    )
    for statement in (
        iam.PolicyStatement(
            sid="InvokeBulkFunction",
            actions=["lambda:InvokeFunction"],
            resources=[function.function_arn],
        ),
        iam.PolicyStatement(
            sid="ReadUnitLists",
            actions=["s3:GetObject"],
            resources=[reports.arn_for_objects(f"{prefix}*")],
        ),
        iam.PolicyStatement(
            sid="WriteMapResults",
            actions=list(RESULT_WRITER_ACTIONS),
            resources=[reports.arn_for_objects(f"{prefix}{RESULTS_FOLDER}*")],
        ),
        iam.PolicyStatement(sid="DeliverLogs", actions=list(LOG_DELIVERY_ACTIONS), resources=["*"]),
        iam.PolicyStatement(sid="Tracing", actions=list(XRAY_ACTIONS), resources=["*"]),
    ):
        role.add_to_principal_policy(statement)
    reports_id = logical_id(reports)
    Validations.of(role).acknowledge(
        Acknowledgment(
            id="AwsSolutions-IAM5[Resource::*]",
            reason="CloudWatch Logs delivery and X-Ray support no resource-level permissions.",
        ),
        Acknowledgment(
            id=f"AwsSolutions-IAM5[Resource::<{reports_id}.Arn>/{prefix}*]",
            reason=(
                "The item reader reads the unit list each run writes under its run id; read-only."
            ),
        ),
        Acknowledgment(
            id=f"AwsSolutions-IAM5[Resource::<{reports_id}.Arn>/{prefix}{RESULTS_FOLDER}*]",
            reason="Step Functions names the map result objects by map run id under this prefix.",
        ),
    )
    return role


def allow_children(scope: Construct, name: str, role: iam.Role, machine: sfn.StateMachine) -> None:
    """Start, watch and stop the map's child executions (of this machine only)."""
    stack = Stack.of(scope)

    def executions(pattern: str) -> str:
        return stack.format_arn(
            service="states",
            resource="execution",
            resource_name=f"{machine.state_machine_name}{pattern}",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )

    policy = iam.Policy(
        scope,
        f"{name}ChildExecutions",
        roles=[role],
        statements=[
            iam.PolicyStatement(
                sid="StartChildExecutions",
                actions=["states:StartExecution"],
                resources=[machine.state_machine_arn],
            ),
            iam.PolicyStatement(
                sid="WatchExecutions",
                actions=["states:DescribeExecution", "states:StopExecution"],
                resources=[executions(":*")],
            ),
            iam.PolicyStatement(
                sid="RedriveChildExecutions",
                actions=["states:RedriveExecution"],
                resources=[executions("/*:*")],
            ),
        ],
    )
    machine_id = logical_id(machine)
    arn = "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution"
    Validations.of(policy).acknowledge(
        *(
            Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::{arn}:<{machine_id}.Name>{pattern}]",
                reason=(
                    "Execution names are generated per run; the wildcard stays within this machine."
                ),
            )
            for pattern in (":*", "/*:*")
        )
    )
