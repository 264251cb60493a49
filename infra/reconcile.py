"""S3 -> read model again: the reconcile and rebuild Lambda, its state machines, triggers, alarms.

Wiring of SPEC §8. One Lambda (``video_index.handlers.reconcile.handler``) does every
step; it dispatches on the ``action`` field of its input. Two Step Functions state
machines (JSONata) fan the per-partition work out with a Distributed Map over a
partition list the Lambda writes to the reports bucket:

* **reconcile**: ``Defaults`` -> ``Plan`` (``reconcile-plan``) -> nothing to repair or a dry
  run? -> ``RepairPartitions`` (Distributed Map, ``reconcile-partitions`` per batch) ->
  ``Report`` (``reconcile-report``). Started daily by EventBridge Scheduler and whenever
  S3 Inventory completes a report (EventBridge rule on its ``manifest.checksum``).
* **rebuild**: ``Start`` (``rebuild-start``) -> ``RebuildPartitions`` (Distributed Map,
  ``rebuild-partitions``) -> ``Finish`` (``rebuild-finish``); a failure of the map or of
  the finish goes to ``Abort`` (``rebuild-abort``) and then fails the execution. Started
  by ops.

Privileges are written out here instead of the ``grant_*`` helpers, so a review of
this file is a review of them. The state machines get *immutable* views of their
roles: the statements CDK would add on its own (a ``<bucket>/*`` read for the item
reader, a ``<bucket>/*`` write for the result writer, ``<function>:*`` for every Lambda
version) are dropped, and the narrower ones below are the whole policy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from aws_cdk import (
    Acknowledgment,
    ArnFormat,
    CfnElement,
    Duration,
    RemovalPolicy,
    Stack,
    Validations,
)
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as events_targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as scheduler_targets
from aws_cdk import aws_sns as sns
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct, IConstruct

from infra.python_function import PythonFunction, python_function, segment_read_statements
from infra.settings import (
    MAP_RESULTS_FOLDER,
    METRICS_NAMESPACE,
    REBUILD_REPORTS_PREFIX,
    RECONCILE_REPORTS_PREFIX,
    RECONCILE_SERVICE_NAME,
    StackSettings,
)
from infra.storage import SegmentStorage
from video_index.settings import (
    ENV_BUCKET,
    ENV_GAP_TOLERANCE_MS,
    ENV_INVENTORY_DESTINATION,
    ENV_MAX_REMOVE_SHARE,
    ENV_REPORTS_BUCKET,
    ENV_TABLE,
    ENV_TOMBSTONE_DAYS,
)
from video_index.table_schema import read_model_table_definition

RECONCILE_HANDLER: Final = "video_index.handlers.reconcile.handler"

#: Environment of the reconcile Lambda beyond the shared ``VIDEO_INDEX_*`` settings.

#: Values of the ``action`` field the handler dispatches on.
ACTION_RECONCILE_PLAN: Final = "reconcile-plan"
ACTION_RECONCILE_PARTITIONS: Final = "reconcile-partitions"
ACTION_RECONCILE_REPORT: Final = "reconcile-report"
ACTION_REBUILD_START: Final = "rebuild-start"
ACTION_REBUILD_PARTITIONS: Final = "rebuild-partitions"
ACTION_REBUILD_FINISH: Final = "rebuild-finish"
ACTION_REBUILD_ABORT: Final = "rebuild-abort"

#: What a reconcile execution runs with when its input leaves a field out. An execution
#: started by hand with ``{}`` is the scheduled run; ``{"dry_run": true}`` a dry run.
RECONCILE_DEFAULTS: Final[dict[str, Any]] = {
    "source": "inventory",
    "manifest": None,
    "manifest_checksum": None,
    "dry_run": False,
    "force": False,
}
#: Input of the scheduled run (the defaults, spelled out so the schedule shows them).
SCHEDULED_RECONCILE_INPUT: Final[dict[str, Any]] = {
    "action": ACTION_RECONCILE_PLAN,
    "source": "inventory",
    "manifest": None,
    "dry_run": False,
    "force": False,
}
#: S3 Inventory writes ``manifest.json`` first and ``manifest.checksum`` last: the
#: checksum is the signal that a report is complete.
INVENTORY_DONE_MARKER: Final = "manifest.checksum"

#: Item actions reconcile and rebuild perform on the read model (repairs are conditional
#: writes and transactions; a rebuild writes a generation in batches and drops the old one).
READ_MODEL_ACTIONS: Final = [
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:UpdateItem",
]
#: The only actions that mean anything on a global secondary index.
READ_MODEL_INDEX_ACTIONS: Final = ["dynamodb:Query", "dynamodb:Scan"]

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

#: Lambda errors worth retrying: the service's own (CDK's default retry) plus throttling,
#: which a Distributed Map at full concurrency can run into.
THROTTLING_ERRORS: Final = ["Lambda.TooManyRequestsException"]

#: Without this feature flag CDK renders the deprecated ``ResultWriter`` and ignores
#: ``result_writer_v2``. Set on this construct so the behaviour does not depend on cdk.json.
_RESULT_WRITER_V2_FLAG: Final = "@aws-cdk/aws-stepfunctions:useDistributedMapResultWriterV2"


def _jsonata(expression: str) -> str:
    """A JSONata expression as Step Functions expects it in a field: ``{% ... %}``."""
    return "{% " + expression + " %}"


#: A child execution's input is one batch, ``{"Items": [...], "BatchInput": {...}}``; the
#: Lambda gets it as is, next to the action.
BATCH_FIELDS: Final = {
    "Items": _jsonata("$states.input.Items"),
    "BatchInput": _jsonata("$states.input.BatchInput"),
}


class ReconcileAndRebuild(Construct):
    """The reconcile Lambda, the reconcile and rebuild state machines, their triggers and alarms."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        storage: SegmentStorage,
        table: dynamodb.ITable,
        alarm_topic: sns.ITopic,
    ) -> None:
        super().__init__(scope, construct_id)
        self.node.set_context(_RESULT_WRITER_V2_FLAG, True)
        self._settings = settings
        self._storage = storage
        lambda_function = self._function(settings=settings, storage=storage, table=table)
        self.log_group = lambda_function.log_group
        self.role = lambda_function.role
        self.function = lambda_function.function

        self.state_machine_roles: dict[str, iam.Role] = {}
        self.reconcile_state_machine = self._state_machine(
            "Reconcile",
            description="video-index reconcile: make the read model equal to P(S3) again",
            definition=self._reconcile_definition(),
            reports_prefix=RECONCILE_REPORTS_PREFIX,
        )
        self.rebuild_state_machine = self._state_machine(
            "Rebuild",
            description="video-index rebuild: re-project S3 into a new read-model generation",
            definition=self._rebuild_definition(),
            reports_prefix=REBUILD_REPORTS_PREFIX,
        )
        self.schedule = self._schedule(settings)
        self.inventory_rule = self._inventory_trigger(storage)
        self._alarms(alarm_topic)

    # --- the Lambda --------------------------------------------------------------------------

    def _function(
        self, *, settings: StackSettings, storage: SegmentStorage, table: dynamodb.ITable
    ) -> PythonFunction:
        """The reconcile Lambda; its role has only what the handler does.

        Segment objects are read, never written: reconcile and rebuild derive the read
        model from ``v1/`` and leave the source of truth alone. The annotations table is
        primary data and deliberately absent (SPEC §1: never touched by rebuild).
        """
        bucket = storage.bucket
        reports = storage.reports_bucket
        index_names = [
            index["IndexName"]
            for index in read_model_table_definition("unused").get("GlobalSecondaryIndexes", [])
        ]
        statements = [
            iam.PolicyStatement(
                sid="ReadModelItems",
                actions=list(READ_MODEL_ACTIONS),
                resources=[table.table_arn],
            ),
            iam.PolicyStatement(
                sid="ReadModelIndexes",
                actions=list(READ_MODEL_INDEX_ACTIONS),
                resources=[f"{table.table_arn}/index/{name}" for name in index_names],
            ),
            # Every repair is verified against a LIST of the partition and a HEAD (SPEC §8).
            *segment_read_statements(bucket),
            # Finding the newest inventory report and the objects of a run.
            iam.PolicyStatement(
                sid="ListReports",
                actions=["s3:ListBucket"],
                resources=[reports.bucket_arn],
            ),
            iam.PolicyStatement(
                sid="ReadInventoryAndRuns",
                actions=["s3:GetObject"],
                resources=[
                    reports.arn_for_objects(f"{storage.inventory_destination_prefix}*"),
                    reports.arn_for_objects(f"{RECONCILE_REPORTS_PREFIX}*"),
                    reports.arn_for_objects(f"{REBUILD_REPORTS_PREFIX}*"),
                ],
            ),
            # Partition lists and reports; never the inventory (S3 writes that).
            iam.PolicyStatement(
                sid="WriteRunObjects",
                actions=["s3:PutObject"],
                resources=[
                    reports.arn_for_objects(f"{RECONCILE_REPORTS_PREFIX}*"),
                    reports.arn_for_objects(f"{REBUILD_REPORTS_PREFIX}*"),
                ],
            ),
        ]
        segments = _logical_id(bucket)
        reports_id = _logical_id(reports)
        acknowledgments = [
            Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{segments}.Arn>/v1/*]",
                reason=(
                    "Object keys are unbounded by design (one per segment); the wildcard is "
                    "confined to the indexed v1/ prefix and to s3:GetObject (HEAD before a "
                    "repair). Nothing here writes to the segment bucket."
                ),
            ),
            Acknowledgment(
                id=(
                    f"AwsSolutions-IAM5[Resource::<{reports_id}.Arn>/"
                    f"{storage.inventory_prefix}/<{segments}>/{storage.inventory_id}/*]"
                ),
                reason=(
                    "S3 Inventory names each report by its date under the configured "
                    "destination; read-only and confined to this bucket's inventory reports."
                ),
            ),
            Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{reports_id}.Arn>/{RECONCILE_REPORTS_PREFIX}*]",
                reason=(
                    "Each reconcile run writes and reads its own objects under reconcile/<run "
                    "id>/, and reads the Distributed Map results under reconcile/results/."
                ),
            ),
            Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{reports_id}.Arn>/{REBUILD_REPORTS_PREFIX}*]",
                reason=(
                    "Each rebuild writes and reads its partition list under rebuild/<rebuild "
                    "id>/; the run id is generated at run time, so the prefix is the bound."
                ),
            ),
        ]
        return python_function(
            self,
            settings=settings,
            handler=RECONCILE_HANDLER,
            service_name=RECONCILE_SERVICE_NAME,
            description="video-index reconcile/rebuild: plan, repair partitions, report, switch",
            role_description=(
                "video-index reconcile/rebuild: S3 listing and inventory -> read model"
            ),
            timeout=Duration.seconds(settings.reconcile_timeout_seconds),
            memory_size=settings.reconcile_memory_mb,
            environment={
                ENV_BUCKET: bucket.bucket_name,
                ENV_TABLE: table.table_name,
                ENV_REPORTS_BUCKET: reports.bucket_name,
                ENV_INVENTORY_DESTINATION: storage.inventory_destination_uri,
                ENV_MAX_REMOVE_SHARE: str(settings.reconcile_max_remove_share),
                ENV_GAP_TOLERANCE_MS: str(settings.gap_tolerance_ms),
                ENV_TOMBSTONE_DAYS: str(settings.tombstone_days),
            },
            statements=statements,
            acknowledgments=acknowledgments,
        )

    # --- state machine definitions ------------------------------------------------------------

    def _invoke(
        self,
        construct_id: str,
        action: str,
        *,
        state_name: str,
        fields: Mapping[str, str] | None = None,
        assign: Mapping[str, str] | None = None,
    ) -> tasks.LambdaInvoke:
        """A JSONata task invoking the reconcile Lambda with ``{"action": action, **fields}``.

        Retries Lambda's own service errors (CDK's default retry) and throttling; the
        task's output is the function's return value.
        """
        task = tasks.LambdaInvoke.jsonata(
            self,
            construct_id,
            state_name=state_name,
            lambda_function=self.function,
            payload=sfn.TaskInput.from_object({"action": action, **(fields or {})}),
            outputs=_jsonata("$states.result.Payload"),
            assign=assign,
        )
        task.add_retry(
            errors=list(THROTTLING_ERRORS),
            interval=Duration.seconds(2),
            max_attempts=6,
            backoff_rate=2,
            jitter_strategy=sfn.JitterType.FULL,
        )
        return task

    def _distributed_map(
        self,
        construct_id: str,
        *,
        state_name: str,
        batch_input: Mapping[str, str],
        results_prefix: str,
        processor: sfn.IChainable,
        assign: Mapping[str, str] | None = None,
    ) -> sfn.DistributedMap:
        """Distributed Map over the JSON partition list the previous state returned.

        The previous state's output is ``{..., "partitions": {"Bucket", "Key"}}``. The list
        is always read from the reports bucket (the role may read nothing else there but
        the run's own prefix), so ``Bucket`` is not used.
        """
        settings = self._settings
        reports = self._storage.reports_bucket
        distributed_map = sfn.DistributedMap.jsonata(
            self,
            construct_id,
            state_name=state_name,
            item_reader=sfn.S3JsonItemReader(
                bucket=reports, key=_jsonata("$states.input.partitions.Key")
            ),
            item_batcher=sfn.ItemBatcher(
                max_items_per_batch=settings.reconcile_batch_size, batch_input=batch_input
            ),
            max_concurrency=settings.reconcile_max_concurrency,
            tolerated_failure_percentage=settings.reconcile_tolerated_failure_percent,
            result_writer_v2=sfn.ResultWriterV2(bucket=reports, prefix=results_prefix),
            assign=assign,
        )
        distributed_map.item_processor(processor)
        return distributed_map

    def _reconcile_definition(self) -> sfn.IChainable:
        defaults = sfn.Pass.jsonata(
            self,
            "ReconcileDefaults",
            state_name="Defaults",
            comment="Fill in what the execution input leaves out",
            outputs=_jsonata(f"$merge([{json.dumps(RECONCILE_DEFAULTS)}, $states.input])"),
        )
        plan = self._invoke(
            "ReconcilePlan",
            ACTION_RECONCILE_PLAN,
            state_name="Plan",
            # The plan is kept for the report; `results` stays null unless the map runs
            # (a dry run or a read model without differences goes straight to the report).
            assign={"plan": _jsonata("$states.result.Payload"), "results": _jsonata("null")},
            fields={field: _jsonata(f"$states.input.{field}") for field in RECONCILE_DEFAULTS},
        )
        report = self._invoke(
            "ReconcileReport",
            ACTION_RECONCILE_REPORT,
            state_name="Report",
            fields={"run_id": _jsonata("$plan.run_id"), "results": _jsonata("$results")},
        )
        repair = self._distributed_map(
            "ReconcileRepairPartitions",
            state_name="RepairPartitions",
            batch_input={
                "run_id": _jsonata("$states.input.run_id"),
                "generation": _jsonata("null"),
            },
            results_prefix=f"{RECONCILE_REPORTS_PREFIX}{MAP_RESULTS_FOLDER}",
            processor=self._invoke(
                "ReconcileRepairBatch",
                ACTION_RECONCILE_PARTITIONS,
                state_name="RepairBatch",
                fields=BATCH_FIELDS,
            ),
            # {"Bucket", "Key"} of the map run's manifest.json, handed to the report.
            assign={"results": _jsonata("$states.result.ResultWriterDetails")},
        )
        anything_to_repair = sfn.Choice.jsonata(
            self, "ReconcileAnythingToRepair", state_name="AnythingToRepair"
        )
        anything_to_repair.when(
            sfn.Condition.jsonata(
                _jsonata("$states.input.to_repair = 0 or $states.input.dry_run = true")
            ),
            report,
            comment="Nothing differs, or a dry run: report only",
        )
        anything_to_repair.otherwise(repair.next(report))
        return defaults.next(plan).next(anything_to_repair)

    def _rebuild_definition(self) -> sfn.IChainable:
        start = self._invoke(
            "RebuildStart",
            ACTION_REBUILD_START,
            state_name="Start",
            assign={"rebuild": _jsonata("$states.result.Payload")},
        )
        generation = {
            "rebuild_id": _jsonata("$rebuild.rebuild_id"),
            "generation": _jsonata("$rebuild.generation"),
        }
        rebuild = self._distributed_map(
            "RebuildPartitionsMap",
            state_name="RebuildPartitions",
            batch_input={
                "rebuild_id": _jsonata("$states.input.rebuild_id"),
                "generation": _jsonata("$states.input.generation"),
            },
            results_prefix=f"{REBUILD_REPORTS_PREFIX}{MAP_RESULTS_FOLDER}",
            processor=self._invoke(
                "RebuildBatch",
                ACTION_REBUILD_PARTITIONS,
                state_name="RebuildBatch",
                fields=BATCH_FIELDS,
            ),
        )
        finish = self._invoke(
            "RebuildFinish", ACTION_REBUILD_FINISH, state_name="Finish", fields=generation
        )
        abort = self._invoke(
            "RebuildAbort",
            ACTION_REBUILD_ABORT,
            state_name="Abort",
            fields={**generation, "error": _jsonata("$error")},
        )
        failed = sfn.Fail.jsonata(
            self,
            "RebuildFailState",
            state_name="Failed",
            error="RebuildAborted",
            cause=_jsonata("$string($error)"),
        )
        abort.next(failed)
        # A failed map or finish drops the new generation; the current one keeps serving.
        catch_error = {"error": _jsonata("$states.errorOutput")}
        rebuild.add_catch(abort, errors=[sfn.Errors.ALL], assign=catch_error)
        finish.add_catch(abort, errors=[sfn.Errors.ALL], assign=catch_error)
        return start.next(rebuild).next(finish)

    # --- state machines ----------------------------------------------------------------------

    def _state_machine(
        self,
        name: str,
        *,
        description: str,
        definition: sfn.IChainable,
        reports_prefix: str,
    ) -> sfn.StateMachine:
        """A logged, traced STANDARD state machine whose role has exactly the statements below."""
        stack = Stack.of(self)
        log_group = logs.LogGroup(
            self,
            f"{name}StateMachineLogs",
            # The /aws/vendedlogs/ prefix keeps Step Functions from adding one CloudWatch
            # Logs resource policy per log group (an account-wide, size-limited policy).
            log_group_name=f"/aws/vendedlogs/states/{stack.stack_name}-{name.lower()}",
            retention=self._settings.log_retention,
            removal_policy=RemovalPolicy.DESTROY,
        )
        role = self._state_machine_role(name, reports_prefix=reports_prefix)
        self.state_machine_roles[name] = role
        state_machine = sfn.StateMachine(
            self,
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
        reports = self._storage.reports_bucket
        role = iam.Role(
            self,
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
        reports_id = _logical_id(reports)
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
        stack = Stack.of(self)
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
            self,
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
        machine = _logical_id(state_machine)
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

    # --- triggers ----------------------------------------------------------------------------

    def _schedule(self, settings: StackSettings) -> scheduler.Schedule:
        """EventBridge Scheduler starts the reconcile state machine daily, on the minute."""
        role = self.schedule_role = iam.Role(
            self,
            "ScheduleRole",
            assumed_by=iam.ServicePrincipal(
                "scheduler.amazonaws.com",
                conditions={"StringEquals": {"aws:SourceAccount": Stack.of(self).account}},
            ),
            description="video-index: EventBridge Scheduler starts the reconcile state machine",
        )
        return scheduler.Schedule(
            self,
            "Schedule",
            description="video-index: daily reconcile of the read model against S3",
            schedule=scheduler.ScheduleExpression.expression(settings.reconcile_schedule),
            # A daily job has no reason to drift: run it when it was asked for.
            time_window=scheduler.TimeWindow.off(),
            target=scheduler_targets.StepFunctionsStartExecution(
                self.reconcile_state_machine,
                # Text, not an object: an object would lose its JSON nulls on the way.
                input=scheduler.ScheduleTargetInput.from_text(
                    json.dumps(SCHEDULED_RECONCILE_INPUT, separators=(",", ":"))
                ),
                role=role,
            ),
        )

    def _inventory_trigger(self, storage: SegmentStorage) -> events.Rule:
        """Start reconcile as soon as S3 Inventory completes a report for the segment bucket.

        An EventBridge input transformer cannot rewrite strings, so the execution gets
        the URI of the ``manifest.checksum`` that fired the rule (``manifest_checksum``);
        the plan step reads the ``manifest.json`` next to it.
        """
        role = self.inventory_rule_role = iam.Role(
            self,
            "InventoryRuleRole",
            assumed_by=iam.ServicePrincipal(
                "events.amazonaws.com",
                conditions={"StringEquals": {"aws:SourceAccount": Stack.of(self).account}},
            ),
            description="video-index: a new inventory report starts the reconcile state machine",
        )
        bucket_name = events.EventField.from_path("$.detail.bucket.name")
        key = events.EventField.from_path("$.detail.object.key")
        rule = events.Rule(
            self,
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
                self.reconcile_state_machine,
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
        return rule

    # --- alarms ------------------------------------------------------------------------------

    def _alarms(self, topic: sns.ITopic) -> None:
        action = cloudwatch_actions.SnsAction(topic)
        self.drift_alarm = cloudwatch.Alarm(
            self,
            "DriftFound",
            alarm_description=(
                "Reconcile repaired read-model partitions: events were lost or applied "
                "wrongly. Read the run's report under reconcile/<run id>/report.json."
            ),
            metric=cloudwatch.Metric(
                namespace=METRICS_NAMESPACE,
                metric_name="PartitionsRepaired",
                dimensions_map={"service": RECONCILE_SERVICE_NAME},
                statistic="Sum",
                period=Duration.days(1),
            ),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self.reconcile_failed_alarm = self._failed_alarm(
            "ReconcileFailed",
            self.reconcile_state_machine,
            "A reconcile execution failed: the read model was not checked against S3.",
        )
        self.rebuild_failed_alarm = self._failed_alarm(
            "RebuildFailed",
            self.rebuild_state_machine,
            "A rebuild execution failed (and was aborted, or the abort failed too); the "
            "current generation keeps serving.",
        )
        for alarm in (self.drift_alarm, self.reconcile_failed_alarm, self.rebuild_failed_alarm):
            alarm.add_alarm_action(action)

    def _failed_alarm(
        self, construct_id: str, state_machine: sfn.StateMachine, description: str
    ) -> cloudwatch.Alarm:
        return cloudwatch.Alarm(
            self,
            construct_id,
            alarm_description=description,
            metric=state_machine.metric_failed(period=Duration.minutes(5), statistic="Sum"),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )


def _logical_id(construct: IConstruct) -> str:
    """Logical id of a construct's CloudFormation resource, as cdk-nag prints it."""
    default_child = construct.node.default_child
    if not isinstance(default_child, CfnElement):
        raise TypeError(f"{construct.node.path} has no CloudFormation resource")
    return Stack.of(construct).get_logical_id(default_child)
