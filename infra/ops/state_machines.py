"""The reconcile and rebuild state machines (JSONata, STANDARD) and their roles.

* **reconcile**: ``Defaults`` -> ``Plan`` (``reconcile-plan``: units and shards) ->
  ``Fingerprint`` (Distributed Map over the units, ``fingerprint-units``) -> ``Reduce``
  (Distributed Map over the shards, ``fingerprint-reduce``) -> ``Decide``
  (``reconcile-decide``: the safety threshold, the partitions to repair) -> nothing to
  repair or a dry run? -> ``RepairPartitions`` (Distributed Map, ``reconcile-partitions``
  per batch) -> ``Report`` (``reconcile-report``).
* **rebuild**: ``Defaults`` -> ``Plan`` (``rebuild-plan``, from a listing or the manifest
  given) -> ``Fingerprint`` -> ``Reduce`` (the same maps, S3 side only) -> ``Start``
  (``rebuild-start``: the partitions holding objects) -> ``RebuildPartitions``
  (Distributed Map, ``rebuild-partitions``) -> ``Finish`` (``rebuild-finish``); a failure
  of the map or of the finish goes to ``Abort`` (``rebuild-abort``) and then fails the
  execution.

The state machines get *immutable* views of their roles: the statements CDK would add
on its own (a ``<bucket>/*`` read for the item reader, a ``<bucket>/*`` write for the
result writer, ``<function>:*`` for every Lambda version) are dropped, and the
narrower ones below are the whole policy. Step payloads are the typed models of
:mod:`video_index.ops.payloads`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from aws_cdk import Acknowledgment, ArnFormat, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from infra.nag import logical_id
from infra.settings import StackSettings
from infra.storage import SegmentStorage
from video_index.core.contract import (
    ACTION_FINGERPRINT_REDUCE,
    ACTION_FINGERPRINT_UNITS,
    ACTION_REBUILD_ABORT,
    ACTION_REBUILD_DROP,
    ACTION_REBUILD_FINISH,
    ACTION_REBUILD_PARTITIONS,
    ACTION_REBUILD_PLAN,
    ACTION_REBUILD_START,
    ACTION_RECONCILE_DECIDE,
    ACTION_RECONCILE_PARTITIONS,
    ACTION_RECONCILE_PLAN,
    ACTION_RECONCILE_REPORT,
    MAP_RESULTS_FOLDER,
    REBUILD_DROP_GRACE_SECONDS,
    REBUILD_REPORTS_PREFIX,
    RECONCILE_REPORTS_PREFIX,
)

#: What a reconcile execution runs with when its input leaves a field out. An execution
#: started by hand with ``{}`` is the scheduled run; ``{"dry_run": true}`` a dry run.
RECONCILE_DEFAULTS: Final[dict[str, Any]] = {
    "source": "inventory",
    "manifest": None,
    "manifest_checksum": None,
    "dry_run": False,
    "force": False,
}
#: What a rebuild execution runs with when its input leaves a field out: ``{}`` rebuilds
#: from a listing; ``{"source": "inventory", "manifest": "s3://…/manifest.json"}`` from a report.
REBUILD_DEFAULTS: Final[dict[str, Any]] = {
    "source": "list",
    "manifest": None,
    "manifest_checksum": None,
}
#: Input of the scheduled run (the defaults, spelled out so the schedule shows them).
SCHEDULED_RECONCILE_INPUT: Final[dict[str, Any]] = {
    "action": ACTION_RECONCILE_PLAN,
    "source": "inventory",
    "manifest": None,
    "dry_run": False,
    "force": False,
}

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


def _jsonata(expression: str) -> str:
    """A JSONata expression as Step Functions expects it in a field: ``{% ... %}``."""
    return "{% " + expression + " %}"


#: A child execution's input is one batch, ``{"Items": [...], "BatchInput": {...}}``; the
#: Lambda gets it as is, next to the action.
BATCH_FIELDS: Final = {
    "Items": _jsonata("$states.input.Items"),
    "BatchInput": _jsonata("$states.input.BatchInput"),
}


#: What the decision (and rebuild's start) gets: the plan and where both maps' outputs are.
DECIDE_FIELDS: Final = {
    "plan": _jsonata("$plan"),
    "unit_results": _jsonata("$unitResults"),
    "shard_results": _jsonata("$shardResults"),
}


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
        self.reconcile = self._state_machine(
            "Reconcile",
            description="video-index reconcile: make the read model equal to P(S3) again",
            definition=self._reconcile_definition(),
            reports_prefix=RECONCILE_REPORTS_PREFIX,
        )
        self.rebuild = self._state_machine(
            "Rebuild",
            description="video-index rebuild: re-project S3 into a new read-model generation",
            definition=self._rebuild_definition(),
            reports_prefix=REBUILD_REPORTS_PREFIX,
        )

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
            self.scope,
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
        items: str = "partitions",
        batch_size: int | None = None,
        concurrency: int | None = None,
        tolerated_failure_percent: int | None = None,
        outputs: str | None = None,
    ) -> sfn.DistributedMap:
        """Distributed Map over the JSON list the previous state named.

        The previous state's output is ``{..., items: {"Bucket", "Key"}}`` (``partitions``,
        or the plan's ``units`` and ``shards``). The list is always read from the reports
        bucket (the role may read nothing else there but the run's own prefix), so
        ``Bucket`` is not used.
        """
        settings = self.settings
        reports = self.storage.reports_bucket
        distributed_map = sfn.DistributedMap.jsonata(
            self.scope,
            construct_id,
            state_name=state_name,
            item_reader=sfn.S3JsonItemReader(
                bucket=reports, key=_jsonata(f"$states.input.{items}.Key")
            ),
            item_batcher=sfn.ItemBatcher(
                max_items_per_batch=batch_size or settings.reconcile_batch_size,
                batch_input=batch_input,
            ),
            max_concurrency=concurrency or settings.reconcile_max_concurrency,
            tolerated_failure_percentage=(
                settings.reconcile_tolerated_failure_percent
                if tolerated_failure_percent is None
                else tolerated_failure_percent
            ),
            result_writer_v2=sfn.ResultWriterV2(bucket=reports, prefix=results_prefix),
            assign=assign,
            outputs=outputs,
        )
        distributed_map.item_processor(processor)
        return distributed_map

    def _fingerprint_maps(
        self, prefix: str, reports_prefix: str
    ) -> tuple[sfn.DistributedMap, sfn.DistributedMap]:
        """The map over the plan's units and the reduce over its shards (docs/operations.md,
        "At fleet scale"), one unit or shard per child, every one of which must succeed.
        Both pass the plan on as their output; ``$unitResults`` and ``$shardResults`` say
        where their children's outputs are."""
        concurrency = self.settings.reconcile_fingerprint_concurrency
        fingerprint = self._distributed_map(
            f"{prefix}FingerprintMap",
            state_name="Fingerprint",
            items="units",
            batch_input={
                "folder": _jsonata("$states.input.folder"),
                "manifest": _jsonata("$states.input.manifest"),
                "generation": _jsonata("$states.input.generation"),
                "shard_count": _jsonata("$states.input.shard_count"),
            },
            results_prefix=f"{reports_prefix}{MAP_RESULTS_FOLDER}",
            processor=self._invoke(
                f"{prefix}FingerprintUnits",
                ACTION_FINGERPRINT_UNITS,
                state_name="FingerprintUnits",
                fields=BATCH_FIELDS,
            ),
            batch_size=1,
            concurrency=concurrency,
            tolerated_failure_percent=0,
            assign={"unitResults": _jsonata("$states.result.ResultWriterDetails")},
            outputs=_jsonata("$states.input"),
        )
        reduce = self._distributed_map(
            f"{prefix}ReduceMap",
            state_name="Reduce",
            items="shards",
            batch_input={
                "folder": _jsonata("$states.input.folder"),
                "unit_count": _jsonata("$states.input.unit_count"),
            },
            results_prefix=f"{reports_prefix}{MAP_RESULTS_FOLDER}",
            processor=self._invoke(
                f"{prefix}ReduceShards",
                ACTION_FINGERPRINT_REDUCE,
                state_name="ReduceShards",
                fields=BATCH_FIELDS,
            ),
            batch_size=1,
            concurrency=concurrency,
            tolerated_failure_percent=0,
            assign={"shardResults": _jsonata("$states.result.ResultWriterDetails")},
            outputs=_jsonata("$states.input"),
        )
        return fingerprint, reduce

    def _defaults(self, construct_id: str, defaults: Mapping[str, Any]) -> sfn.Pass:
        """The first state: the execution input with what it leaves out filled in."""
        return sfn.Pass.jsonata(
            self.scope,
            construct_id,
            state_name="Defaults",
            comment="Fill in what the execution input leaves out",
            outputs=_jsonata(f"$merge([{json.dumps(defaults)}, $states.input])"),
        )

    def _reconcile_definition(self) -> sfn.IChainable:
        defaults = self._defaults("ReconcileDefaults", RECONCILE_DEFAULTS)
        plan = self._invoke(
            "ReconcilePlan",
            ACTION_RECONCILE_PLAN,
            state_name="Plan",
            # The plan is kept for the decision and the report; `results` stays null unless
            # the repair map runs (a dry run or nothing to repair goes straight to the report).
            assign={"plan": _jsonata("$states.result.Payload"), "results": _jsonata("null")},
            fields={field: _jsonata(f"$states.input.{field}") for field in RECONCILE_DEFAULTS},
        )
        fingerprint, reduce = self._fingerprint_maps("Reconcile", RECONCILE_REPORTS_PREFIX)
        decide = self._invoke(
            "ReconcileDecide",
            ACTION_RECONCILE_DECIDE,
            state_name="Decide",
            fields=DECIDE_FIELDS,
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
            self.scope, "ReconcileAnythingToRepair", state_name="AnythingToRepair"
        )
        anything_to_repair.when(
            sfn.Condition.jsonata(
                _jsonata("$states.input.to_repair = 0 or $states.input.dry_run = true")
            ),
            report,
            comment="Nothing differs, or a dry run: report only",
        )
        anything_to_repair.otherwise(repair.next(report))
        return (
            defaults.next(plan).next(fingerprint).next(reduce).next(decide).next(anything_to_repair)
        )

    def _rebuild_definition(self) -> sfn.IChainable:
        defaults = self._defaults("RebuildDefaults", REBUILD_DEFAULTS)
        plan = self._invoke(
            "RebuildPlan",
            ACTION_REBUILD_PLAN,
            state_name="Plan",
            assign={"plan": _jsonata("$states.result.Payload")},
            # The source to rebuild from: a listing, or an S3 Inventory manifest.
            fields={field: _jsonata(f"$states.input.{field}") for field in REBUILD_DEFAULTS},
        )
        fingerprint, reduce = self._fingerprint_maps("Rebuild", REBUILD_REPORTS_PREFIX)
        start = self._invoke(
            "RebuildStart",
            ACTION_REBUILD_START,
            state_name="Start",
            assign={"rebuild": _jsonata("$states.result.Payload")},
            # The partitions holding objects, from the plan's reduce.
            fields=DECIDE_FIELDS,
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
            "RebuildFinish",
            ACTION_REBUILD_FINISH,
            state_name="Finish",
            assign={"switched": _jsonata("$states.result.Payload")},
            fields=generation,
        )
        # The generation the switch replaced is deleted once no reader can still use it.
        grace = sfn.Wait.jsonata(
            self.scope,
            "RebuildDropGrace",
            state_name="DropGrace",
            time=sfn.WaitTime.duration(Duration.seconds(REBUILD_DROP_GRACE_SECONDS)),
        )
        drop = self._invoke(
            "RebuildDrop",
            ACTION_REBUILD_DROP,
            state_name="DropPrevious",
            fields={
                "rebuild_id": _jsonata("$rebuild.rebuild_id"),
                "generation": _jsonata("$switched.previous"),
            },
        )
        abort = self._invoke(
            "RebuildAbort",
            ACTION_REBUILD_ABORT,
            state_name="Abort",
            fields={**generation, "error": _jsonata("$error")},
        )
        failed = sfn.Fail.jsonata(
            self.scope,
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
        return (
            defaults.next(plan)
            .next(fingerprint)
            .next(reduce)
            .next(start)
            .next(rebuild)
            .next(finish)
            .next(grace)
            .next(drop)
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
