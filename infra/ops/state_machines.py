"""The reconcile and rebuild state machines (JSONata, STANDARD) and their roles.

The definitions are in :mod:`infra.ops.reconcile_machine` and
:mod:`infra.ops.rebuild_machine`, made of the states of :mod:`infra.ops.steps`
(``Fingerprint``: Distributed Map over the plan's units, ``fingerprint-units``;
``Reduce``: Distributed Map over its shards, ``fingerprint-reduce``); this module makes
them logged, traced STANDARD state machines with least-privilege roles.

The state machines get *immutable* views of their roles: the statements CDK would add
on its own (a ``<bucket>/*`` read for the item reader, a ``<bucket>/*`` write for the
result writer, ``<function>:*`` for every Lambda version) are dropped, and the
narrower ones below are the whole policy. Step payloads are the typed models of
:mod:`video_index.ops.payloads`.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Acknowledgment, ArnFormat, RemovalPolicy, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.nag import logical_id
from infra.ops.rebuild_machine import rebuild_definition
from infra.ops.reconcile_machine import reconcile_definition
from infra.ops.steps import Steps
from infra.settings import StackSettings
from infra.storage import SegmentStorage
from video_index.core.contract import (
    MAP_RESULTS_FOLDER,
    REBUILD_REPORTS_PREFIX,
    RECONCILE_REPORTS_PREFIX,
)

#: CloudWatch Logs delivery for Step Functions is configured through these account-level
#: APIs, which support no resource-level permissions (AWS: "Logging using CloudWatch Logs").
LOG_DELIVERY_ACTIONS: Final = [
    "logs:CreateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:DescribeLogGroups",
    "logs:DescribeResourcePolicies",
    "logs:GetLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:UpdateLogDelivery",
]
XRAY_ACTIONS: Final = [
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
    "xray:PutTelemetryRecords",
    "xray:PutTraceSegments",
]
#: What the Distributed Map's result writer does with the result objects (multipart upload).
RESULT_WRITER_ACTIONS: Final = [
    "s3:AbortMultipartUpload",
    "s3:ListMultipartUploadParts",
    "s3:PutObject",
]


class StateMachines:
    """Builds both state machines (and their roles and logs) inside ``scope``."""

    def __init__(
        self,
        scope: Construct,
        *,
        settings: StackSettings,
        storage: SegmentStorage,
        function: lambda_.IFunction,
    ) -> None:
        self.scope = scope
        self.settings = settings
        self.storage = storage
        self.function = function
        self.roles: dict[str, iam.Role] = {}
        steps = Steps(scope, settings=settings, storage=storage, function=function)
        self.reconcile = self._state_machine(
            "Reconcile",
            description="video-index reconcile: make the read model equal to P(S3) again",
            definition=reconcile_definition(steps),
            reports_prefix=RECONCILE_REPORTS_PREFIX,
        )
        self.rebuild = self._state_machine(
            "Rebuild",
            description="video-index rebuild: re-project S3 into a new read-model generation",
            definition=rebuild_definition(steps),
            reports_prefix=REBUILD_REPORTS_PREFIX,
        )

    def _state_machine(
        self,
        name: str,
        *,
        description: str,
        definition: sfn.IChainable,
        reports_prefix: str,
    ) -> sfn.StateMachine:
        """A logged, traced STANDARD state machine whose role has exactly the statements below."""
        stack = Stack.of(self.scope)
        log_group = logs.LogGroup(
            self.scope,
            f"{name}StateMachineLogs",
            # The /aws/vendedlogs/ prefix keeps Step Functions from adding one CloudWatch
            # Logs resource policy per log group (an account-wide, size-limited policy).
            log_group_name=f"/aws/vendedlogs/states/{stack.stack_name}-{name.lower()}",
            retention=self.settings.log_retention,
            removal_policy=RemovalPolicy.DESTROY,
        )
        role = self._state_machine_role(name, reports_prefix=reports_prefix)
        self.roles[name] = role
        state_machine = sfn.StateMachine(
            self.scope,
            f"{name}StateMachine",
            comment=description,
            definition_body=sfn.DefinitionBody.from_chainable(definition),
            query_language=sfn.QueryLanguage.JSONATA,
            state_machine_type=sfn.StateMachineType.STANDARD,
            role=role.without_policy_updates(),
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=log_group,
                level=sfn.LogLevel.ALL,
                include_execution_data=False,
            ),
        )
        # With the immutable role CDK no longer orders the state machine after the role's
        # policy; Step Functions checks the log delivery permissions at creation.
        state_machine.node.add_dependency(role)
        # CDK adds its own Distributed Map policy and "attaches" it to the immutable role,
        # i.e. to nothing: it is never deployed. Drop it so the construct tree (and what
        # cdk-nag checks) is what is deployed; _allow_child_executions replaces it.
        state_machine.node.try_remove_child("DistributedMapPolicy")
        self._allow_child_executions(name, role, state_machine)
        return state_machine

    def _state_machine_role(self, name: str, *, reports_prefix: str) -> iam.Role:
        reports = self.storage.reports_bucket
        role = iam.Role(
            self.scope,
            f"{name}StateMachineRole",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com"),
            description=f"video-index {name.lower()} state machine",
        )
        statements = [
            # Unqualified invocations only: no version or alias ARNs (`:*`).
            iam.PolicyStatement(
                sid="InvokeReconcileFunction",
                actions=["lambda:InvokeFunction"],
                resources=[self.function.function_arn],
            ),
            # The Distributed Map's item reader: the partition list the Lambda wrote.
            iam.PolicyStatement(
                sid="ReadPartitionLists",
                actions=["s3:GetObject"],
                resources=[reports.arn_for_objects(f"{reports_prefix}*")],
            ),
            iam.PolicyStatement(
                sid="WriteMapResults",
                actions=list(RESULT_WRITER_ACTIONS),
                resources=[reports.arn_for_objects(f"{reports_prefix}{MAP_RESULTS_FOLDER}*")],
            ),
            iam.PolicyStatement(
                sid="DeliverLogs",
                actions=list(LOG_DELIVERY_ACTIONS),
                resources=["*"],
            ),
            iam.PolicyStatement(sid="Tracing", actions=list(XRAY_ACTIONS), resources=["*"]),
        ]
        for statement in statements:
            role.add_to_principal_policy(statement)
        reports_id = logical_id(reports)
        Validations.of(role).acknowledge(
            Acknowledgment(
                id="AwsSolutions-IAM5[Resource::*]",
                reason=(
                    "CloudWatch Logs delivery (logs:*LogDelivery*, resource policies) and X-Ray "
                    "(xray:PutTraceSegments and friends) support no resource-level permissions; "
                    "both are needed for execution logging (SF1) and tracing (SF2)."
                ),
            ),
            Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{reports_id}.Arn>/{reports_prefix}*]",
                reason=(
                    f"The item reader reads the partition list of each run under "
                    f"{reports_prefix}<run id>/, a name generated at run time; read-only."
                ),
            ),
            Acknowledgment(
                id=(
                    f"AwsSolutions-IAM5[Resource::<{reports_id}.Arn>/"
                    f"{reports_prefix}{MAP_RESULTS_FOLDER}*]"
                ),
                reason=(
                    "Step Functions names the Distributed Map result objects by map run id "
                    "under the configured result prefix; writes are confined to that prefix."
                ),
            ),
        )
        return role

    def _allow_child_executions(
        self, name: str, role: iam.Role, state_machine: sfn.StateMachine
    ) -> None:
        """What a Distributed Map needs on its own state machine: start, watch, stop children.

        A separate policy, attached after the state machine exists: it names the state
        machine, which in turn depends on the role's default policy (no cycle). Same
        statements as CDK adds for a Distributed Map on a mutable role.
        """
        stack = Stack.of(self.scope)
        executions = stack.format_arn(
            service="states",
            resource="execution",
            resource_name=f"{state_machine.state_machine_name}:*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        child_executions = stack.format_arn(
            service="states",
            resource="execution",
            resource_name=f"{state_machine.state_machine_name}/*:*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        policy = iam.Policy(
            self.scope,
            f"{name}ChildExecutions",
            roles=[role],
            statements=[
                iam.PolicyStatement(
                    sid="StartChildExecutions",
                    actions=["states:StartExecution"],
                    resources=[state_machine.state_machine_arn],
                ),
                iam.PolicyStatement(
                    sid="WatchExecutions",
                    actions=["states:DescribeExecution", "states:StopExecution"],
                    resources=[executions],
                ),
                iam.PolicyStatement(
                    sid="RedriveChildExecutions",
                    actions=["states:RedriveExecution"],
                    resources=[child_executions],
                ),
            ],
        )
        machine = logical_id(state_machine)
        Validations.of(policy).acknowledge(
            Acknowledgment(
                id=(
                    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:"
                    f"<AWS::AccountId>:execution:<{machine}.Name>:*]"
                ),
                reason=(
                    "Execution names are generated per run; the wildcard is confined to the "
                    "executions of this one state machine (describe/stop of its own runs)."
                ),
            ),
            Acknowledgment(
                id=(
                    "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:"
                    f"<AWS::AccountId>:execution:<{machine}.Name>/*:*]"
                ),
                reason=(
                    "Child executions of a Distributed Map are named <state machine>/<map "
                    "run>:<id> at run time; redrive is confined to this state machine's children."
                ),
            ),
        )
