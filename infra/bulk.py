"""Restore and deletion at fleet size (docs/bulk.md): the bulk Lambda and two state machines.

* **restore**: ``Plan`` (``bulk-restore-plan``: units over the replica's S3 Inventory
  report or its device prefixes) -> ``RestoreUnits`` (Distributed Map, one unit per
  child, each retried) -> ``Report`` (``bulk-restore-report``: the map's results read
  back). A unit that keeps failing is named in the report, not fatal: the rest is
  restored and running the machine again copies only what is missing.
* **bulk deletion**: ``Plan`` (``bulk-delete-plan``: one deletion request per device
  and ≤ 31 days) -> ``DeleteUnits`` (each child runs its request's job; a paused job
  or one whose lease a dead runner still holds is retried) -> ``Report``.

Distributed Map, not S3 Batch Operations (per-object fees, no second-run skip, no live
check of windows and holds): docs/bulk.md has the whole comparison.

Least privilege: the bulk Lambda's spec (``core/functions.py``) lets it copy from the
replica into ``v1/`` of the segment bucket and delete there (and, erasing, in the
replica) around the holds, and record and run deletion requests; written out here, it
reads and writes only its own run objects in the reports bucket and the inventory
reports; the state machines may only invoke it, read their unit lists and write their
map results.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Acknowledgment, CfnOutput, Duration, RemovalPolicy, Size, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from infra.bulk_roles import allow_children, machine_role
from infra.deletion import erased_media_grants
from infra.nag import logical_id
from infra.python_function import PythonFunction, python_function, run_reports_statements
from infra.settings import StackSettings
from infra.storage import SegmentStorage
from video_index.bulk.names import (
    ACTION_DELETE_PLAN,
    ACTION_DELETE_REPORT,
    ACTION_DELETE_UNITS,
    ACTION_RESTORE_PLAN,
    ACTION_RESTORE_REPORT,
    ACTION_RESTORE_UNITS,
    DELETE_REPORTS_PREFIX,
    JOB_BUSY_ERROR,
    JOB_PAUSED_ERROR,
    OUTPUT_BULK_DELETE_STATE_MACHINE,
    OUTPUT_RESTORE_STATE_MACHINE,
    RESTORE_REPORTS_PREFIX,
    RESULTS_FOLDER,
)
from video_index.core.functions import BULK

#: Children of one map at once: Distributed Map runs up to 10,000 (AWS Step Functions
#: Developer Guide, "Distributed Map state"); S3 request rates, not this, bound a run.
MAX_CONCURRENCY: Final = 1_000
_IAM5: Final = "AwsSolutions-IAM5[Resource::"


def bulk_operations(
    stack: Stack, settings: StackSettings, storage: SegmentStorage, replica: s3.IBucket | None
) -> BulkOperations:
    """The construct, and its state machines' ARNs as stack outputs (the CLI's way in)."""
    bulk = BulkOperations(stack, "Bulk", settings=settings, storage=storage, replica=replica)
    for key, machine in (
        (OUTPUT_RESTORE_STATE_MACHINE, bulk.restore),
        (OUTPUT_BULK_DELETE_STATE_MACHINE, bulk.bulk_delete),
    ):
        if machine is not None:
            CfnOutput(stack, key, value=machine.state_machine_arn, description=machine.node.id)
    return bulk


def _jsonata(expression: str) -> str:
    return "{% " + expression + " %}"


class BulkOperations(Construct):
    """The bulk Lambda and the restore and bulk-deletion state machines."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: StackSettings,
        storage: SegmentStorage,
        replica: s3.IBucket | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.settings = settings
        self.storage = storage
        lambda_function = self._function(settings, storage)
        self.function = lambda_function.function
        self.role = lambda_function.role
        self.log_group = lambda_function.log_group
        self.state_machine_roles: dict[str, iam.Role] = {}
        # Restore needs a replica to restore from; bulk deletion does not.
        self.restore = (
            None
            if replica is None
            else self._state_machine(
                "Restore",
                "video-index restore from the replica at fleet size",
                self._definition(
                    "Restore",
                    ACTION_RESTORE_PLAN,
                    ACTION_RESTORE_UNITS,
                    ACTION_RESTORE_REPORT,
                    RESTORE_REPORTS_PREFIX,
                ),
                RESTORE_REPORTS_PREFIX,
            )
        )
        self.bulk_delete = self._state_machine(
            "BulkDelete",
            "video-index deletion over many partitions",
            self._definition(
                "BulkDelete",
                ACTION_DELETE_PLAN,
                ACTION_DELETE_UNITS,
                ACTION_DELETE_REPORT,
                DELETE_REPORTS_PREFIX,
            ),
            DELETE_REPORTS_PREFIX,
        )

    # -- the Lambda ------------------------------------------------------------------

    def _function(self, settings: StackSettings, storage: SegmentStorage) -> PythonFunction:
        """Its spec's grants (``core/functions.py``: the segments, the replica, the deletion
        requests, the holds), its run objects in the reports bucket and, as bulk deletion
        runs the deletion jobs (erasures included), the erasure's media grants, written out
        here."""
        reports = storage.reports_bucket
        reports_id = logical_id(reports)
        erased, erased_acknowledgments = erased_media_grants(storage.bucket)
        return python_function(
            self,
            settings=settings,
            spec=BULK,
            description="video-index bulk: restore and deletion units at fleet size",
            timeout=Duration.minutes(15),
            memory_size=1024,
            ephemeral_storage=Size.mebibytes(settings.reconcile_ephemeral_storage_mb),
            statements=[
                *run_reports_statements(
                    reports,
                    f"{storage.inventory_prefix}/*",
                    (RESTORE_REPORTS_PREFIX, DELETE_REPORTS_PREFIX),
                ),
                *erased,
            ],
            acknowledgments=[
                *erased_acknowledgments,
                Acknowledgment(
                    id=f"{_IAM5}<{reports_id}.Arn>/{storage.inventory_prefix}/*]",
                    reason="Inventory reports are named by bucket, configuration and date; "
                    "read-only.",
                ),
                *(
                    Acknowledgment(
                        id=f"{_IAM5}<{reports_id}.Arn>/{prefix}*]",
                        reason=f"Each bulk run keeps its unit list and report under "
                        f"{prefix}<run id>/.",
                    )
                    for prefix in (RESTORE_REPORTS_PREFIX, DELETE_REPORTS_PREFIX)
                ),
            ],
        )

    # -- the state machines ----------------------------------------------------------

    def _invoke(
        self,
        construct_id: str,
        action: str,
        state_name: str,
        fields: dict[str, str] | None = None,
        assign: dict[str, str] | None = None,
    ) -> tasks.LambdaInvoke:
        """A task invoking the bulk Lambda with ``{"action", **fields}`` (without
        ``fields``: the execution input, with the action)."""
        payload = (
            sfn.TaskInput.from_object({"action": action, **fields})
            if fields is not None
            else sfn.TaskInput.from_text(
                _jsonata(f'$merge([$states.input, {{"action": "{action}"}}])')
            )
        )
        task = tasks.LambdaInvoke.jsonata(
            self,
            construct_id,
            state_name=state_name,
            lambda_function=self.function,
            payload=payload,
            outputs=_jsonata("$states.result.Payload"),
            assign=assign,
        )
        task.add_retry(
            errors=["Lambda.TooManyRequestsException"],
            interval=Duration.seconds(2),
            max_attempts=6,
            backoff_rate=2,
            jitter_strategy=sfn.JitterType.FULL,
        )
        return task

    def _definition(
        self, name: str, plan_action: str, unit_action: str, report_action: str, prefix: str
    ) -> sfn.IChainable:
        # The plan gets the execution input; its output is kept for the map and report.
        plan = self._invoke(
            f"{name}Plan", plan_action, "Plan", assign={"plan": _jsonata("$states.result.Payload")}
        )
        unit = self._invoke(
            f"{name}Unit",
            unit_action,
            "Unit",
            fields={
                "Items": _jsonata("$states.input.Items"),
                "BatchInput": _jsonata("$states.input.BatchInput"),
            },
        )
        if unit_action == ACTION_DELETE_UNITS:
            unit.add_retry(
                errors=[JOB_PAUSED_ERROR],
                interval=Duration.seconds(1),
                max_attempts=100,
                backoff_rate=1,
            )
            # A dead runner's lease (960 s) must expire before its job continues.
            unit.add_retry(
                errors=[JOB_BUSY_ERROR],
                interval=Duration.seconds(120),
                max_attempts=12,
                backoff_rate=1.5,
            )
        unit.add_retry(
            errors=[sfn.Errors.ALL],
            interval=Duration.seconds(5),
            max_attempts=3,
            backoff_rate=2,
            jitter_strategy=sfn.JitterType.FULL,
        )
        batch_input = (
            {
                "run_id": _jsonata("$plan.run_id"),
                "source_bucket": _jsonata("$plan.source_bucket"),
                "manifest": _jsonata("$plan.manifest"),
                "dry_run": _jsonata("$plan.dry_run"),
            }
            if unit_action == ACTION_RESTORE_UNITS
            else {"run_id": _jsonata("$plan.run_id")}
        )
        fan_out = sfn.DistributedMap.jsonata(
            self,
            f"{name}Map",
            state_name="Units",
            item_reader=sfn.S3JsonItemReader(
                bucket=self.storage.reports_bucket, key=_jsonata("$states.input.units.Key")
            ),
            item_batcher=sfn.ItemBatcher(max_items_per_batch=1, batch_input=batch_input),
            max_concurrency=MAX_CONCURRENCY,
            # A unit that keeps failing is reported, not fatal (the report names it).
            tolerated_failure_percentage=100,
            result_writer_v2=sfn.ResultWriterV2(
                bucket=self.storage.reports_bucket, prefix=f"{prefix}{RESULTS_FOLDER}"
            ),
            assign={"results": _jsonata("$states.result.ResultWriterDetails")},
        )
        fan_out.item_processor(unit)
        report = self._invoke(
            f"{name}Report",
            report_action,
            "Report",
            fields={"run_id": _jsonata("$plan.run_id"), "results": _jsonata("$results")},
        )
        return plan.next(fan_out).next(report)

    def _state_machine(
        self, name: str, description: str, definition: sfn.IChainable, prefix: str
    ) -> sfn.StateMachine:
        stack = Stack.of(self)
        log_group = logs.LogGroup(
            self,
            f"{name}Logs",
            log_group_name=f"/aws/vendedlogs/states/{stack.stack_name}-{name.lower()}",
            retention=self.settings.log_retention,
            removal_policy=RemovalPolicy.DESTROY,
        )
        role = machine_role(self, name, prefix, self.storage.reports_bucket, self.function)
        self.state_machine_roles[name] = role
        machine = sfn.StateMachine(
            self,
            f"{name}StateMachine",
            comment=description,
            definition_body=sfn.DefinitionBody.from_chainable(definition),
            query_language=sfn.QueryLanguage.JSONATA,
            state_machine_type=sfn.StateMachineType.STANDARD,
            role=role.without_policy_updates(),
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False
            ),
        )
        machine.node.add_dependency(role)
        # CDK's own Distributed Map policy would attach to the immutable role, i.e. to
        # nothing; the statements below replace it.
        machine.node.try_remove_child("DistributedMapPolicy")
        allow_children(self, name, role, machine)
        return machine
