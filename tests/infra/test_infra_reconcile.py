"""Infrastructure tests of reconcile and rebuild (docs/operations.md): Lambda, state machines,
triggers.

The app is synthesized once per module through the same ``build`` function ``app.py``
uses, and every assertion reads that template. The state machine definitions are a
``Fn::Join`` of JSON text and CloudFormation references; :func:`_definition` joins
them with ``${LogicalId}`` / ``${LogicalId.Attr}`` placeholders and parses the JSON, so
the states can be asserted field by field. Tests of other settings synthesize only
the reconcile construct.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pytest
from aws_cdk import App, CfnElement, Stack, Validations
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct

from infra.ops import ReconcileAndRebuild
from infra.settings import SettingsError, StackSettings
from infra.storage import SegmentStorage
from infra.wiring import provide_settings
from tests.infra.template import Synth, as_list, definition_of, joined, stand_ins, statements_by_sid
from video_index.core import contract
from video_index.core.functions import RECONCILE

LAMBDA_INVOKE = "arn:${AWS::Partition}:states:::lambda:invoke"
#: CDK's default retry of Lambda service errors on every LambdaInvoke task.
SERVICE_ERRORS = [
    "Lambda.ClientExecutionTimeoutException",
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
]


def _reconcile_only(context: Mapping[str, Any]) -> tuple[Stack, ReconcileAndRebuild, Template]:
    """Only storage, a table, a topic and the reconcile construct: cheap to synthesize."""
    app = App(context=dict(context))
    settings = StackSettings.from_context(app)
    stack = Stack(app, "ReconcileOnly")
    provide_settings(stack, settings)
    storage = SegmentStorage(stack, "Storage", settings=settings)
    reconcile = ReconcileAndRebuild(stack, "Reconcile", settings=settings, storage=storage)
    stand_ins(stack, RECONCILE)
    return stack, reconcile, Template.from_stack(stack)


# --- the Lambda -------------------------------------------------------------------------------


def test_reconcile_function_runtime_handler_timeout_memory_tracing_and_logs(synth: Synth) -> None:
    # Given the reconcile function
    reconcile = synth.stack.reconcile
    props = synth.props(reconcile.function)
    # Then it runs the reconcile handler on Python 3.13 / arm64 with active tracing
    assert props["Runtime"] == "python3.13"
    assert props["Architectures"] == ["arm64"]
    assert props["Handler"] == "video_index.handlers.reconcile.handler"
    assert props["TracingConfig"] == {"Mode": "Active"}
    # And with the longest Lambda timeout and one full vCPU of memory
    assert props["Timeout"] == 900
    assert props["MemorySize"] == 1769
    # And /tmp room for one inventory data file at a time (checked before it is read)
    assert props["EphemeralStorage"] == {"Size": 10240}
    assert props["Role"] == synth.arn(reconcile.role)
    # And logs to its own log group with the configured retention
    assert props["LoggingConfig"] == {"LogGroup": synth.ref(reconcile.log_group)}
    assert synth.props(reconcile.log_group)["RetentionInDays"] == 30
    # And its code is its own (it carries the column-wise pass's pyarrow and numpy), its
    # Powertools layer the ingest function's
    ingest = synth.props(synth.stack.ingest.function)
    assert props["Code"] != ingest["Code"]
    assert props["Layers"] == ingest["Layers"]


def test_reconcile_function_environment(synth: Synth) -> None:
    # Given the reconcile function's environment
    env = synth.props(synth.stack.reconcile.function)["Environment"]["Variables"]
    storage = synth.stack.storage
    reports = synth.logical_id(storage.reports_bucket)
    segments = synth.logical_id(storage.bucket)
    # Then it names the buckets, the table and the inventory destination folder, and
    # carries the safety threshold and the read-model settings
    inventory_destination = env.pop("VIDEO_INDEX_INVENTORY_DESTINATION")
    assert env == {
        "VIDEO_INDEX_BUCKET": synth.ref(storage.bucket),
        "VIDEO_INDEX_TABLE": synth.ref(synth.stack.read_model.table),
        "VIDEO_INDEX_REPORTS_BUCKET": synth.ref(storage.reports_bucket),
        "VIDEO_INDEX_RECONCILE_MAX_REMOVE_SHARE": "0.1",
        "VIDEO_INDEX_GAP_TOLERANCE_MS": "1000",
        "VIDEO_INDEX_TOMBSTONE_DAYS": "35",
        "VIDEO_INDEX_DELETIONS_TABLE": synth.ref(synth.stack.deletion.table),
        # the holds and the retention: objects past retention counted held or overdue
        "VIDEO_INDEX_HOLDS_TABLE": synth.ref(synth.stack.holds.table),
        "VIDEO_INDEX_RETENTION_DAYS": '{"video": 30, "sensor": 90, "analysis": 90}',
        "POWERTOOLS_SERVICE_NAME": "video-index-reconcile",
        "POWERTOOLS_METRICS_NAMESPACE": "VideoIndex",
    }
    # And the destination is where S3 Inventory writes: <prefix>/<source bucket>/<config id>/
    assert (
        joined(inventory_destination)
        == f"s3://${{{reports}}}/inventory/${{{segments}}}/video-index-daily/"
    )
    (inventory,) = synth.props(storage.bucket)["InventoryConfigurations"]
    assert inventory["Id"] == "video-index-daily"
    assert inventory["Destination"]["Prefix"] == "inventory"
    # And no annotations table: reconcile and rebuild never touch it
    assert "VIDEO_INDEX_ANNOTATIONS_TABLE" not in env


def test_reconcile_role_has_exactly_the_permissions_the_handler_uses(synth: Synth) -> None:
    # Given the reconcile role and its policies
    reconcile = synth.stack.reconcile
    role = synth.props(reconcile.role)
    statements = synth.policy_statements(reconcile.role)
    reports = synth.logical_id(synth.stack.storage.reports_bucket)
    segments = synth.logical_id(synth.stack.storage.bucket)
    # Then the role has no managed policies and only Lambda may assume it
    assert "ManagedPolicyArns" not in role
    assert role["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": "lambda.amazonaws.com"},
        }
    ]
    # And every statement is an Allow of named actions
    for statement in statements:
        assert statement["Effect"] == "Allow"
        for action in as_list(statement["Action"]):
            assert "*" not in action, statement
    by_sid = statements_by_sid(statements)
    # And the read model: item, query, scan and batch-write actions on the table (its
    # needs: read, write, delete, scan), and nothing on any index (the table has none)
    table = synth.arn(synth.stack.read_model.table)
    assert {a for s in statements if s["Resource"] == table for a in as_list(s["Action"])} == {
        "dynamodb:BatchGetItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:ConditionCheckItem",
        "dynamodb:DeleteItem",
        "dynamodb:DescribeTable",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:Scan",
        "dynamodb:UpdateItem",
    }
    assert not [s for s in statements if "/index/" in json.dumps(s["Resource"])]
    # And the reports bucket is listed, read under the inventory destination and the run
    # prefixes, and written only under the run prefixes
    assert by_sid["ListReports"]["Action"] == "s3:ListBucket"
    assert by_sid["ListReports"]["Resource"] == synth.arn(synth.stack.storage.reports_bucket)
    assert by_sid["ReadInventoryAndRuns"]["Action"] == "s3:GetObject"
    assert [joined(r) for r in by_sid["ReadInventoryAndRuns"]["Resource"]] == [
        f"${{{reports}.Arn}}/inventory/${{{segments}}}/video-index-daily/*",
        f"${{{reports}.Arn}}/reconcile/*",
        f"${{{reports}.Arn}}/rebuild/*",
    ]
    assert by_sid["WriteRunObjects"]["Action"] == "s3:PutObject"
    assert [joined(r) for r in by_sid["WriteRunObjects"]["Resource"]] == [
        f"${{{reports}.Arn}}/reconcile/*",
        f"${{{reports}.Arn}}/rebuild/*",
    ]
    # And logs only into its own log group
    assert by_sid["WriteOwnLogs"]["Action"] == ["logs:CreateLogStream", "logs:PutLogEvents"]
    assert by_sid["WriteOwnLogs"]["Resource"] == synth.arn(reconcile.log_group)
    # And what CDK adds for active tracing (no resource scoping), and nothing else
    (xray,) = [s for s in statements if "Sid" not in s]
    assert xray["Resource"] == "*"
    assert sorted(xray["Action"]) == ["xray:PutTelemetryRecords", "xray:PutTraceSegments"]
    # And deletion requests (docs/deletion.md): only the window items read (queried by
    # device, scanned for every device's)
    windows = by_sid["DeletionRequestsWindows"]
    assert windows["Action"] == "dynamodb:Query"
    assert windows["Resource"] == synth.arn(synth.stack.deletion.table)
    assert windows["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["win#*"]}}
    assert by_sid["DeletionRequestsScan"]["Action"] == "dynamodb:Scan"
    # And holds (docs/holds.md): read, to keep held footage and tell held from overdue
    assert by_sid["HoldsRead"]["Action"] == ["dynamodb:GetItem", "dynamodb:Query"]
    assert by_sid["HoldsRead"]["Resource"] == synth.arn(synth.stack.holds.table)
    # (the rest, the segments read, deleted and erased under v1/, in the test below and in
    # tests/infra/test_wiring.py)
    assert len(statements) == 17


def test_reconcile_never_writes_segments_and_never_touches_annotations(synth: Synth) -> None:
    # Given every IAM statement of every role of the reconcile construct
    reconcile = synth.stack.reconcile
    roles = [
        reconcile.role,
        *reconcile.state_machine_roles.values(),
        reconcile.schedule_role,
        reconcile.inventory_rule_role,
    ]
    assert len(roles) == 5
    statements = [s for role in roles for s in synth.policy_statements(role)]
    segments = synth.logical_id(synth.stack.storage.bucket)
    # Then no statement mentions an annotations table (primary data, never rebuilt)
    assert "annotation" not in json.dumps(statements).lower()
    # And nothing may put or otherwise change objects of the segment bucket: its only
    # actions are listing the bucket, GetObject under v1/, and deleting again under v1/
    # what a deletion window covers (docs/deletion.md: reconcile enforces the requests)
    segment_arn = f"${{{segments}.Arn}}"

    def on_segments(statement: dict[str, Any]) -> bool:
        return any(joined(r).startswith(segment_arn) for r in as_list(statement["Resource"]))

    assert sorted(
        (a, joined(r))
        for s in statements
        if on_segments(s)
        for a in as_list(s["Action"])
        for r in as_list(s["Resource"])
    ) == [
        ("s3:DeleteObject", f"{segment_arn}/v1/*"),
        ("s3:DeleteObjectVersion", f"{segment_arn}/v1/*"),
        ("s3:GetObject", f"{segment_arn}/v1/*"),
        ("s3:ListBucket", segment_arn),
        ("s3:ListBucketVersions", segment_arn),
    ]
    # And no statement that writes objects names the segment bucket at all; the only ones
    # that delete there are the enforcement of deletion requests (a delete marker, or
    # with erase every version: the function's declared delete and erase of v1/)
    for statement in statements:
        actions = as_list(statement["Action"])
        if any(a.startswith("s3:Put") for a in actions):
            assert not on_segments(statement), statement
        if any(a.startswith("s3:Delete") for a in actions) and on_segments(statement):
            assert statement["Sid"] in ("DeleteSegmentObjects", "EraseSegmentVersions")
        assert all("*" not in a for a in actions)


# --- state machines ---------------------------------------------------------------------------


def test_both_state_machines_are_standard_logged_at_all_levels_and_traced(synth: Synth) -> None:
    reconcile = synth.stack.reconcile
    for name, state_machine in (
        ("reconcile", reconcile.reconcile_state_machine),
        ("rebuild", reconcile.rebuild_state_machine),
    ):
        # Given one of the state machines
        props = synth.props(state_machine)
        # Then it is a STANDARD state machine with X-Ray tracing (cdk-nag SF2)
        assert props["StateMachineType"] == "STANDARD"
        assert props["TracingConfiguration"] == {"Enabled": True}
        # And it logs every event, without execution data, to its own log group (SF1)
        logging = props["LoggingConfiguration"]
        assert logging["Level"] == "ALL"
        assert logging["IncludeExecutionData"] is False
        (destination,) = logging["Destinations"]
        log_group_id = destination["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
        log_group = synth.resources[log_group_id]["Properties"]
        assert log_group["LogGroupName"] == f"/aws/vendedlogs/states/VideoIndex-{name}"
        assert log_group["RetentionInDays"] == 30
        # And its definition is JSONata throughout
        assert synth.definition(state_machine)["QueryLanguage"] == "JSONata"


def _assert_distributed_map(
    synth: Synth,
    state: dict[str, Any],
    *,
    results_prefix: str,
    batch_input: dict[str, str],
    items: str = "partitions",
    batch_size: int = 25,
    concurrency: int = 10,
    tolerated: int = 5,
) -> None:
    """The Distributed Map settings both state machines share."""
    reports = synth.placeholder(synth.stack.storage.reports_bucket)
    assert state["Type"] == "Map"
    assert state["ItemProcessor"]["ProcessorConfig"] == {
        "Mode": "DISTRIBUTED",
        "ExecutionType": "STANDARD",
    }
    # The list (a JSON array) the previous state wrote, read from the reports bucket
    assert state["ItemReader"] == {
        "Resource": "arn:${AWS::Partition}:states:::s3:getObject",
        "ReaderConfig": {"InputType": "JSON"},
        "Arguments": {"Bucket": reports, "Key": f"{{% $states.input.{items}.Key %}}"},
    }
    assert state["ItemBatcher"] == {"MaxItemsPerBatch": batch_size, "BatchInput": batch_input}
    assert state["MaxConcurrency"] == concurrency
    # (absent is 0: the default of the service)
    assert state.get("ToleratedFailurePercentage", 0) == tolerated
    # Results go to the reports bucket (a Distributed Map's output would not fit the state)
    assert state["ResultWriter"] == {
        "Resource": "arn:${AWS::Partition}:states:::s3:putObject",
        "Arguments": {"Bucket": reports, "Prefix": results_prefix},
    }


def _assert_invokes_reconcile_function(
    synth: Synth, state: dict[str, Any], payload: dict[str, Any]
) -> None:
    """A task invoking the reconcile function with ``payload``, retrying errors and throttling."""
    function = synth.placeholder(synth.stack.reconcile.function, "Arn")
    assert state["Type"] == "Task"
    assert state["Resource"] == LAMBDA_INVOKE
    assert state["Arguments"] == {"FunctionName": function, "Payload": payload}
    assert state["Output"] == "{% $states.result.Payload %}"
    assert [r["ErrorEquals"] for r in state["Retry"]] == [
        SERVICE_ERRORS,
        ["Lambda.TooManyRequestsException"],
    ]
    throttling = state["Retry"][1]
    assert throttling["MaxAttempts"] == 6
    assert throttling["BackoffRate"] == 2
    assert throttling["JitterStrategy"] == "FULL"


def _assert_fingerprint_maps(synth: Synth, states: dict[str, Any], prefix: str) -> None:
    """The map over the plan's units and the reduce over its shards: one per child, at the
    fingerprint concurrency, no failure tolerated, the plan passed on."""
    fingerprint, reduce = states["Fingerprint"], states["Reduce"]
    _assert_distributed_map(
        synth,
        fingerprint,
        results_prefix=f"{prefix}results/",
        items="units",
        batch_size=1,
        concurrency=100,
        tolerated=0,
        batch_input={
            "folder": "{% $states.input.folder %}",
            "manifest": "{% $states.input.manifest %}",
            "generation": "{% $states.input.generation %}",
            "shard_count": "{% $states.input.shard_count %}",
        },
    )
    _assert_invokes_reconcile_function(
        synth,
        fingerprint["ItemProcessor"]["States"]["FingerprintUnits"],
        {
            "action": "fingerprint-units",
            "Items": "{% $states.input.Items %}",
            "BatchInput": "{% $states.input.BatchInput %}",
        },
    )
    assert fingerprint["Output"] == "{% $states.input %}"
    assert fingerprint["Assign"] == {"unitResults": "{% $states.result.ResultWriterDetails %}"}
    assert fingerprint["Next"] == "Reduce"
    _assert_distributed_map(
        synth,
        reduce,
        results_prefix=f"{prefix}results/",
        items="shards",
        batch_size=1,
        concurrency=100,
        tolerated=0,
        batch_input={
            "folder": "{% $states.input.folder %}",
            "unit_count": "{% $states.input.unit_count %}",
        },
    )
    _assert_invokes_reconcile_function(
        synth,
        reduce["ItemProcessor"]["States"]["ReduceShards"],
        {
            "action": "fingerprint-reduce",
            "Items": "{% $states.input.Items %}",
            "BatchInput": "{% $states.input.BatchInput %}",
        },
    )
    assert reduce["Output"] == "{% $states.input %}"
    assert reduce["Assign"] == {"shardResults": "{% $states.result.ResultWriterDetails %}"}


def test_what_the_state_machines_hand_over_is_what_the_step_payloads_declare(
    synth: Synth,
) -> None:
    from video_index.ops.payloads import (
        DecideInput,
        FingerprintPlan,
        ShardBatchInput,
        UnitBatchInput,
    )

    reconcile = synth.stack.reconcile
    for state_machine in (reconcile.reconcile_state_machine, reconcile.rebuild_state_machine):
        # Given the batch inputs of both maps and the fields the plan's output must have
        states = synth.definition(state_machine)["States"]
        unit_input = states["Fingerprint"]["ItemBatcher"]["BatchInput"]
        shard_input = states["Reduce"]["ItemBatcher"]["BatchInput"]
        # Then each is exactly its typed payload, built from fields of the typed plan
        assert set(unit_input) == set(UnitBatchInput.model_fields)
        assert set(shard_input) == set(ShardBatchInput.model_fields)
        for value in (*unit_input.values(), *shard_input.values()):
            field = value.removeprefix("{% $states.input.").removesuffix(" %}")
            assert field in FingerprintPlan.model_fields, value
        # And the decision (rebuild's start) gets what DecideInput declares
        assert set(DECIDE_PAYLOAD) == set(DecideInput.model_fields)


DECIDE_PAYLOAD = {
    "plan": "{% $plan %}",
    "unit_results": "{% $unitResults %}",
    "shard_results": "{% $shardResults %}",
}


def test_reconcile_state_machine_plans_repairs_in_a_distributed_map_and_reports(
    synth: Synth,
) -> None:
    # Given the reconcile state machine's definition
    definition = synth.definition(synth.stack.reconcile.reconcile_state_machine)
    states = definition["States"]
    # Then it fills in defaults, plans, fingerprints, reduces, decides, repairs and reports
    assert definition["StartAt"] == "Defaults"
    assert sorted(states) == [
        "AnythingToRepair",
        "Decide",
        "Defaults",
        "Fingerprint",
        "Plan",
        "Reduce",
        "RepairPartitions",
        "Report",
    ]
    assert states["Defaults"]["Type"] == "Pass"
    assert states["Defaults"]["Output"] == (
        '{% $merge([{"source": "inventory", "manifest": null, "manifest_checksum": null, '
        '"dry_run": false, "force": false}, $states.input]) %}'
    )
    assert states["Defaults"]["Next"] == "Plan"
    # And the plan gets every field of the contract, whatever the execution input left out
    _assert_invokes_reconcile_function(
        synth,
        states["Plan"],
        {
            "action": "reconcile-plan",
            "source": "{% $states.input.source %}",
            "manifest": "{% $states.input.manifest %}",
            "manifest_checksum": "{% $states.input.manifest_checksum %}",
            "dry_run": "{% $states.input.dry_run %}",
            "force": "{% $states.input.force %}",
        },
    )
    assert states["Plan"]["Assign"] == {
        "plan": "{% $states.result.Payload %}",
        "results": "{% null %}",
    }
    assert states["Plan"]["Next"] == "Fingerprint"
    # And the distributed plan: fingerprints of the units, reduced per shard, then decided
    _assert_fingerprint_maps(synth, states, "reconcile/")
    assert states["Reduce"]["Next"] == "Decide"
    _assert_invokes_reconcile_function(
        synth, states["Decide"], {"action": "reconcile-decide", **DECIDE_PAYLOAD}
    )
    assert states["Decide"]["Next"] == "AnythingToRepair"
    # And nothing to repair, or a dry run, goes straight to the report
    choice = states["AnythingToRepair"]
    assert choice["Type"] == "Choice"
    (when,) = choice["Choices"]
    assert when["Condition"] == "{% $states.input.to_repair = 0 or $states.input.dry_run = true %}"
    assert when["Next"] == "Report"
    assert choice["Default"] == "RepairPartitions"
    # And the repair is a Distributed Map over the plan's partition list
    repair = states["RepairPartitions"]
    _assert_distributed_map(
        synth,
        repair,
        results_prefix="reconcile/results/",
        batch_input={"run_id": "{% $states.input.run_id %}", "generation": "{% null %}"},
    )
    assert repair["Assign"] == {"results": "{% $states.result.ResultWriterDetails %}"}
    assert repair["Next"] == "Report"
    processor = repair["ItemProcessor"]
    assert processor["StartAt"] == "RepairBatch"
    _assert_invokes_reconcile_function(
        synth,
        processor["States"]["RepairBatch"],
        {
            "action": "reconcile-partitions",
            "Items": "{% $states.input.Items %}",
            "BatchInput": "{% $states.input.BatchInput %}",
        },
    )
    assert processor["States"]["RepairBatch"]["End"] is True
    # And the report gets the run id and where the map results are (null when skipped)
    _assert_invokes_reconcile_function(
        synth,
        states["Report"],
        {"action": "reconcile-report", "run_id": "{% $plan.run_id %}", "results": "{% $results %}"},
    )
    assert states["Report"]["End"] is True


def test_rebuild_state_machine_aborts_on_a_failed_map_or_finish(synth: Synth) -> None:
    # Given the rebuild state machine's definition
    definition = synth.definition(synth.stack.reconcile.rebuild_state_machine)
    states = definition["States"]
    # Then it fills in the input's defaults, starts a generation from the source the
    # execution names (a listing, or an inventory manifest), rebuilds its partitions,
    # and finishes (switches)
    assert definition["StartAt"] == "Defaults"
    assert sorted(states) == [
        "Abort",
        "Defaults",
        "DropGrace",
        "DropPrevious",
        "Failed",
        "Fingerprint",
        "Finish",
        "Plan",
        "RebuildPartitions",
        "Reduce",
        "Start",
    ]
    assert states["Defaults"]["Type"] == "Pass"
    assert states["Defaults"]["Next"] == "Plan"
    assert '"source": "list"' in states["Defaults"]["Output"]
    # And its partition list comes from the same distributed plan as reconcile's (S3 side)
    _assert_invokes_reconcile_function(
        synth,
        states["Plan"],
        {
            "action": "rebuild-plan",
            "source": "{% $states.input.source %}",
            "manifest": "{% $states.input.manifest %}",
            "manifest_checksum": "{% $states.input.manifest_checksum %}",
        },
    )
    assert states["Plan"]["Assign"] == {"plan": "{% $states.result.Payload %}"}
    assert states["Plan"]["Next"] == "Fingerprint"
    _assert_fingerprint_maps(synth, states, "rebuild/")
    assert states["Reduce"]["Next"] == "Start"
    _assert_invokes_reconcile_function(
        synth, states["Start"], {"action": "rebuild-start", **DECIDE_PAYLOAD}
    )
    assert states["Start"]["Assign"] == {"rebuild": "{% $states.result.Payload %}"}
    assert states["Start"]["Next"] == "RebuildPartitions"
    rebuild = states["RebuildPartitions"]
    _assert_distributed_map(
        synth,
        rebuild,
        results_prefix="rebuild/results/",
        batch_input={
            "rebuild_id": "{% $states.input.rebuild_id %}",
            "generation": "{% $states.input.generation %}",
        },
    )
    _assert_invokes_reconcile_function(
        synth,
        rebuild["ItemProcessor"]["States"]["RebuildBatch"],
        {
            "action": "rebuild-partitions",
            "Items": "{% $states.input.Items %}",
            "BatchInput": "{% $states.input.BatchInput %}",
        },
    )
    assert rebuild["Next"] == "Finish"
    generation = {
        "rebuild_id": "{% $rebuild.rebuild_id %}",
        "generation": "{% $rebuild.generation %}",
    }
    _assert_invokes_reconcile_function(
        synth, states["Finish"], {"action": "rebuild-finish", **generation}
    )
    assert states["Finish"]["Assign"] == {"switched": "{% $states.result.Payload %}"}
    # And once no reader can still use it, the generation the switch replaced is dropped
    assert states["Finish"]["Next"] == "DropGrace"
    assert states["DropGrace"]["Type"] == "Wait"
    assert states["DropGrace"]["Seconds"] == contract.REBUILD_DROP_GRACE_SECONDS
    assert states["DropGrace"]["Next"] == "DropPrevious"
    _assert_invokes_reconcile_function(
        synth,
        states["DropPrevious"],
        {
            "action": "rebuild-drop",
            "rebuild_id": "{% $rebuild.rebuild_id %}",
            "generation": "{% $switched.previous %}",
        },
    )
    assert states["DropPrevious"]["End"] is True
    # And any error of the map or of the finish is caught and goes to the abort
    for name in ("RebuildPartitions", "Finish"):
        assert states[name]["Catch"] == [
            {
                "ErrorEquals": ["States.ALL"],
                "Assign": {"error": "{% $states.errorOutput %}"},
                "Next": "Abort",
            }
        ], name
    for name in ("Plan", "Fingerprint", "Reduce", "Start"):
        assert "Catch" not in states[name]  # nothing to abort before a generation exists
    # And the abort drops the generation with the error, then the execution fails
    _assert_invokes_reconcile_function(
        synth, states["Abort"], {"action": "rebuild-abort", "error": "{% $error %}", **generation}
    )
    assert states["Abort"]["Next"] == "Failed"
    assert states["Failed"] == {
        "Type": "Fail",
        "Error": "RebuildAborted",
        "Cause": "{% $string($error) %}",
    }


def test_state_machine_roles_invoke_only_the_reconcile_function_and_touch_only_their_prefix(
    synth: Synth,
) -> None:
    reconcile = synth.stack.reconcile
    reports = synth.logical_id(synth.stack.storage.reports_bucket)
    function = synth.arn(reconcile.function)
    for name, prefix, state_machine in (
        ("Reconcile", "reconcile/", reconcile.reconcile_state_machine),
        ("Rebuild", "rebuild/", reconcile.rebuild_state_machine),
    ):
        # Given the state machine's role and every statement attached to it
        role = reconcile.state_machine_roles[name]
        assert synth.props(state_machine)["RoleArn"] == synth.arn(role)
        assumed = synth.props(role)["AssumeRolePolicyDocument"]["Statement"]
        assert assumed == [
            {
                "Action": "sts:AssumeRole",
                "Effect": "Allow",
                "Principal": {"Service": "states.amazonaws.com"},
            }
        ]
        assert "ManagedPolicyArns" not in synth.props(role)
        statements = synth.policy_statements(role)
        by_sid = statements_by_sid(statements)
        # Then every statement is one of ours (CDK's broader defaults are not attached)
        assert all("Sid" in s for s in statements), statements
        assert sorted(by_sid) == [
            "DeliverLogs",
            "InvokeReconcileFunction",
            "ReadPartitionLists",
            "RedriveChildExecutions",
            "StartChildExecutions",
            "Tracing",
            "WatchExecutions",
            "WriteMapResults",
        ]
        # And it invokes only the reconcile function, unqualified (no version/alias `:*`)
        assert by_sid["InvokeReconcileFunction"]["Action"] == "lambda:InvokeFunction"
        assert by_sid["InvokeReconcileFunction"]["Resource"] == function
        # And reads only its own prefix of the reports bucket and writes only the map results
        assert by_sid["ReadPartitionLists"]["Action"] == "s3:GetObject"
        assert joined(by_sid["ReadPartitionLists"]["Resource"]) == f"${{{reports}.Arn}}/{prefix}*"
        assert by_sid["WriteMapResults"]["Action"] == [
            "s3:AbortMultipartUpload",
            "s3:ListMultipartUploadParts",
            "s3:PutObject",
        ]
        assert (
            joined(by_sid["WriteMapResults"]["Resource"]) == f"${{{reports}.Arn}}/{prefix}results/*"
        )
        s3_resources = [
            joined(r)
            for s in statements
            if any(a.startswith("s3:") for a in as_list(s["Action"]))
            for r in as_list(s["Resource"])
        ]
        assert all(r.startswith(f"${{{reports}.Arn}}/{prefix}") for r in s3_resources)
        # And starts, watches and redrives only executions of its own state machine
        machine = synth.logical_id(state_machine)
        assert by_sid["StartChildExecutions"]["Action"] == "states:StartExecution"
        assert by_sid["StartChildExecutions"]["Resource"] == synth.ref(state_machine)
        assert by_sid["WatchExecutions"]["Action"] == [
            "states:DescribeExecution",
            "states:StopExecution",
        ]
        assert joined(by_sid["WatchExecutions"]["Resource"]).endswith(
            f":execution:${{{machine}.Name}}:*"
        )
        assert by_sid["RedriveChildExecutions"]["Action"] == "states:RedriveExecution"
        assert joined(by_sid["RedriveChildExecutions"]["Resource"]).endswith(
            f":execution:${{{machine}.Name}}/*:*"
        )
        # And logging and tracing, which support no resource-level permissions
        assert by_sid["DeliverLogs"]["Resource"] == "*"
        assert all(a.startswith("logs:") for a in by_sid["DeliverLogs"]["Action"])
        assert by_sid["Tracing"]["Resource"] == "*"
        assert all(a.startswith("xray:") for a in by_sid["Tracing"]["Action"])
        # And the state machine is created only after the role's policy (log delivery is
        # checked at creation)
        default_policy = synth.logical_id(role.node.find_child("DefaultPolicy"))
        assert default_policy in synth.resource(state_machine)["DependsOn"]


def test_no_policy_in_the_stack_grants_the_whole_reports_bucket(synth: Synth) -> None:
    # Given every IAM policy statement of the stack
    reports = synth.logical_id(synth.stack.storage.reports_bucket)
    statements = [
        s
        for policy in synth.template.find_resources("AWS::IAM::Policy").values()
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    # Then none names every object of the reports bucket (what CDK's item reader and
    # result writer would grant by default)
    for statement in statements:
        for resource in as_list(statement["Resource"]):
            text = joined(resource)
            assert not re.search(rf"(\${{{reports}\.Arn}}|:s3:::\${{{reports}}})/\*$", text), (
                statement
            )


# --- triggers ---------------------------------------------------------------------------------


def test_schedule_starts_the_reconcile_state_machine_daily_without_a_flexible_window(
    synth: Synth,
) -> None:
    # Given the EventBridge Scheduler schedule
    reconcile = synth.stack.reconcile
    props = synth.props(reconcile.schedule)
    # Then it runs daily at 04:30 UTC, exactly then
    assert props["ScheduleExpression"] == "cron(30 4 * * ? *)"
    assert props["ScheduleExpressionTimezone"] == "Etc/UTC"
    assert props["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert props["State"] == "ENABLED"
    # And starts the reconcile state machine with the scheduled run's input (nulls kept)
    target = props["Target"]
    assert target["Arn"] == synth.ref(reconcile.reconcile_state_machine)
    assert json.loads(target["Input"]) == {
        "action": "reconcile-plan",
        "source": "inventory",
        "manifest": None,
        "dry_run": False,
        "force": False,
    }
    # And its role may do exactly one thing: start that state machine
    role = reconcile.schedule_role
    assert target["RoleArn"] == synth.arn(role)
    assert synth.props(role)["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}},
            "Effect": "Allow",
            "Principal": {"Service": "scheduler.amazonaws.com"},
        }
    ]
    assert synth.policy_statements(role) == [
        {
            "Action": "states:StartExecution",
            "Effect": "Allow",
            "Resource": synth.ref(reconcile.reconcile_state_machine),
        }
    ]


def test_a_completed_inventory_report_starts_reconcile_with_its_manifest_checksum(
    synth: Synth,
) -> None:
    # Given the EventBridge rule
    reconcile = synth.stack.reconcile
    props = synth.props(reconcile.inventory_rule)
    storage = synth.stack.storage
    reports = synth.logical_id(storage.reports_bucket)
    segments = synth.logical_id(storage.bucket)
    # Then it matches S3 "Object Created" events of the reports bucket for a key under the
    # inventory destination that ends in manifest.checksum (written last by S3 Inventory)
    pattern = props["EventPattern"]
    assert pattern["source"] == ["aws.s3"]
    assert pattern["detail-type"] == ["Object Created"]
    assert pattern["detail"]["bucket"] == {"name": [synth.ref(storage.reports_bucket)]}
    (key_matcher,) = pattern["detail"]["object"]["key"]
    assert list(key_matcher) == ["wildcard"]
    assert (
        joined(key_matcher["wildcard"])
        == f"inventory/${{{segments}}}/video-index-daily/*/manifest.checksum"
    )
    assert props["State"] == "ENABLED"
    # And it starts the reconcile state machine with the checksum's s3:// URI as input
    (target,) = props["Targets"]
    assert target["Arn"] == synth.ref(reconcile.reconcile_state_machine)
    transformer = target["InputTransformer"]
    assert transformer["InputPathsMap"] == {
        "detail-bucket-name": "$.detail.bucket.name",
        "detail-object-key": "$.detail.object.key",
    }
    assert json.loads(transformer["InputTemplate"]) == {
        "action": "reconcile-plan",
        "source": "inventory",
        "manifest_checksum": "s3://<detail-bucket-name>/<detail-object-key>",
        "dry_run": False,
        "force": False,
    }
    # And its role may only start that state machine
    role = reconcile.inventory_rule_role
    assert target["RoleArn"] == synth.arn(role)
    principal = synth.props(role)["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
    assert principal == {"Service": "events.amazonaws.com"}
    assert synth.policy_statements(role) == [
        {
            "Action": "states:StartExecution",
            "Effect": "Allow",
            "Resource": synth.ref(reconcile.reconcile_state_machine),
        }
    ]
    # And the reports bucket sends its events to EventBridge
    (notifications,) = synth.template.find_resources(
        "Custom::S3BucketNotifications",
        {"Properties": {"BucketName": {"Ref": reports}}},
    ).values()
    assert notifications["Properties"]["NotificationConfiguration"] == {
        "EventBridgeConfiguration": {}
    }


# --- alarms and outputs -----------------------------------------------------------------------


def test_drift_found_alarm_notifies_the_alarm_topic(synth: Synth) -> None:
    # Given the drift alarm
    props = synth.props(synth.stack.monitoring.drift_alarm)
    # Then it fires when reconcile repaired any partition during a day
    assert props["Namespace"] == "VideoIndex"
    assert props["MetricName"] == "PartitionsRepaired"
    assert props["Dimensions"] == [{"Name": "service", "Value": "video-index-reconcile"}]
    assert props["Statistic"] == "Sum"
    assert props["Period"] == 86400
    assert props["ComparisonOperator"] == "GreaterThanThreshold"
    assert props["Threshold"] == 0
    assert props["EvaluationPeriods"] == 1
    assert props["TreatMissingData"] == "notBreaching"
    assert props["AlarmActions"] == [synth.ref(synth.stack.monitoring.topic)]


def test_failed_execution_alarms_for_both_state_machines(synth: Synth) -> None:
    reconcile = synth.stack.reconcile
    for alarm, state_machine in (
        (synth.stack.monitoring.reconcile_failed_alarm, reconcile.reconcile_state_machine),
        (synth.stack.monitoring.rebuild_failed_alarm, reconcile.rebuild_state_machine),
    ):
        # Given the failure alarm of one state machine
        props = synth.props(alarm)
        # Then it fires on any failed execution of that state machine
        assert props["Namespace"] == "AWS/States"
        assert props["MetricName"] == "ExecutionsFailed"
        assert props["Dimensions"] == [
            {"Name": "StateMachineArn", "Value": synth.ref(state_machine)}
        ]
        assert props["Statistic"] == "Sum"
        assert props["ComparisonOperator"] == "GreaterThanThreshold"
        assert props["Threshold"] == 0
        assert props["TreatMissingData"] == "notBreaching"
        assert props["AlarmActions"] == [synth.ref(synth.stack.monitoring.topic)]


def test_stack_outputs_both_state_machine_arns(synth: Synth) -> None:
    # Given the stack outputs
    outputs = synth.template.to_json()["Outputs"]
    reconcile = synth.stack.reconcile
    # Then ops find both state machines there
    assert outputs["ReconcileStateMachineArn"]["Value"] == synth.ref(
        reconcile.reconcile_state_machine
    )
    assert outputs["RebuildStateMachineArn"]["Value"] == synth.ref(reconcile.rebuild_state_machine)


# --- whole-template checks --------------------------------------------------------------------


def test_reconcile_acknowledgments_are_exact_justified_and_never_logging_or_tracing(
    synth: Synth,
) -> None:
    # Given every acknowledgment recorded under the reconcile construct
    reconcile = synth.stack.reconcile
    acknowledged: dict[str, str] = {}
    for construct in reconcile.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                for rule_id, reason in entry.data.items():
                    acknowledged[f"{construct.node.path} {rule_id}"] = reason
    reports = synth.logical_id(synth.stack.storage.reports_bucket)
    segments = synth.logical_id(synth.stack.storage.bucket)
    rec_sm = synth.logical_id(reconcile.reconcile_state_machine)
    reb_sm = synth.logical_id(reconcile.rebuild_state_machine)
    executions = "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:"
    iam5 = "Annotation::AwsSolutions-IAM5"
    # Then exactly these wildcards (and the runtime pin) are acknowledged, where they arise
    assert sorted(acknowledged) == sorted(
        [
            "VideoIndex/Reconcile/Function Annotation::AwsSolutions-L1",
            f"VideoIndex/Reconcile/Role {iam5}[Resource::*]",
            f"VideoIndex/Reconcile/Role {iam5}[Resource::<{segments}.Arn>/v1/*]",
            f"VideoIndex/Reconcile/Role {iam5}[Resource::<{reports}.Arn>/inventory/"
            f"<{segments}>/video-index-daily/*]",
            f"VideoIndex/Reconcile/Role {iam5}[Resource::<{reports}.Arn>/reconcile/*]",
            f"VideoIndex/Reconcile/Role {iam5}[Resource::<{reports}.Arn>/rebuild/*]",
            f"VideoIndex/Reconcile/ReconcileStateMachineRole {iam5}[Resource::*]",
            f"VideoIndex/Reconcile/ReconcileStateMachineRole {iam5}"
            f"[Resource::<{reports}.Arn>/reconcile/*]",
            f"VideoIndex/Reconcile/ReconcileStateMachineRole {iam5}"
            f"[Resource::<{reports}.Arn>/reconcile/results/*]",
            f"VideoIndex/Reconcile/RebuildStateMachineRole {iam5}[Resource::*]",
            f"VideoIndex/Reconcile/RebuildStateMachineRole {iam5}"
            f"[Resource::<{reports}.Arn>/rebuild/*]",
            f"VideoIndex/Reconcile/RebuildStateMachineRole {iam5}"
            f"[Resource::<{reports}.Arn>/rebuild/results/*]",
            f"VideoIndex/Reconcile/ReconcileChildExecutions {iam5}"
            f"[Resource::{executions}<{rec_sm}.Name>:*]",
            f"VideoIndex/Reconcile/ReconcileChildExecutions {iam5}"
            f"[Resource::{executions}<{rec_sm}.Name>/*:*]",
            f"VideoIndex/Reconcile/RebuildChildExecutions {iam5}"
            f"[Resource::{executions}<{reb_sm}.Name>:*]",
            f"VideoIndex/Reconcile/RebuildChildExecutions {iam5}"
            f"[Resource::{executions}<{reb_sm}.Name>/*:*]",
        ]
    )
    # And each with a reason a reviewer can check
    for where, reason in acknowledged.items():
        assert len(reason) > 60, where
    # And logging (SF1) and tracing (SF2) are fixed, not acknowledged, and no Lambda
    # version wildcard (`<function>:*`) is granted that would need one
    function = synth.logical_id(reconcile.function)
    for rule_id in acknowledged:
        assert "AwsSolutions-SF" not in rule_id
        assert function not in rule_id


def test_cdk_nag_does_flag_an_unlogged_untraced_state_machine() -> None:
    # Given a throwaway state machine without logging and tracing
    from aws_cdk import aws_stepfunctions as sfn

    app = App()
    stack = Stack(app, "Unlogged")
    sfn.StateMachine(
        stack, "Machine", definition_body=sfn.DefinitionBody.from_chainable(sfn.Pass(stack, "P"))
    )
    # When the same pack checks it
    report = AwsSolutionsChecks(app).validate_scope(stack)
    # Then it reports SF1 and SF2, so the clean report above is not vacuous
    assert {"AwsSolutions-SF1", "AwsSolutions-SF2"} <= {v.rule_name for v in report.violations}


# --- settings ---------------------------------------------------------------------------------


def test_reconcile_settings_defaults() -> None:
    # Given the settings of an app without context
    settings = StackSettings.from_context(App())
    # Then the reconcile defaults are the documented ones
    assert settings.reconcile_schedule == "cron(30 4 * * ? *)"
    assert settings.reconcile_max_concurrency == 10
    assert settings.reconcile_batch_size == 25
    assert settings.reconcile_tolerated_failure_percent == 5
    assert settings.reconcile_max_remove_share == 0.1
    assert settings.reconcile_timeout_seconds == 900
    assert settings.reconcile_memory_mb == 1769


def test_reconcile_context_overrides_reach_the_template() -> None:
    # Given context as `cdk synth -c ...` passes it (strings) and as cdk.json does (numbers)
    stack, reconcile, template = _reconcile_only(
        {
            "reconcile_schedule": "rate(12 hours)",
            "reconcile_max_concurrency": "40",
            "reconcile_batch_size": 100,
            "reconcile_tolerated_failure_percent": "0",
            "reconcile_max_remove_share": "0.25",
            "reconcile_timeout_seconds": 600,
            "reconcile_memory_mb": "3008",
        }
    )
    resources = template.to_json()["Resources"]

    def props(construct: IConstruct) -> dict[str, Any]:
        child = construct.node.default_child
        assert isinstance(child, CfnElement)
        properties: dict[str, Any] = resources[stack.get_logical_id(child)]["Properties"]
        return properties

    # Then the schedule, the function and both Distributed Maps use them
    assert props(reconcile.schedule)["ScheduleExpression"] == "rate(12 hours)"
    function = props(reconcile.function)
    assert function["Timeout"] == 600
    assert function["MemorySize"] == 3008
    assert function["Environment"]["Variables"]["VIDEO_INDEX_RECONCILE_MAX_REMOVE_SHARE"] == "0.25"
    for state_machine, map_state in (
        (reconcile.reconcile_state_machine, "RepairPartitions"),
        (reconcile.rebuild_state_machine, "RebuildPartitions"),
    ):
        state = definition_of(props(state_machine)["DefinitionString"])["States"][map_state]
        assert state["MaxConcurrency"] == 40
        assert state["ItemBatcher"]["MaxItemsPerBatch"] == 100
        # 0 % tolerated: CDK leaves the field out, and Step Functions' default is 0
        assert state.get("ToleratedFailurePercentage", 0) == 0


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("reconcile_schedule", "daily", "cron(...)"),
        ("reconcile_schedule", "cron(30 4 * * ?)", "six fields"),
        ("reconcile_max_concurrency", "0", "between 1 and 10000"),
        ("reconcile_batch_size", "5000", "between 1 and 1000"),
        ("reconcile_tolerated_failure_percent", "101", "between 0 and 100"),
        ("reconcile_max_remove_share", "0", "greater than 0 and at most 1"),
        ("reconcile_max_remove_share", "1.5", "greater than 0 and at most 1"),
        ("reconcile_max_remove_share", "ten percent", "must be a number"),
        ("reconcile_timeout_seconds", 901, "between 1 and 900"),
        ("reconcile_memory_mb", "64", "between 128 and 10240"),
    ],
)
def test_bad_reconcile_context_stops_synthesis_with_an_error_naming_the_key(
    key: str, value: object, expected: str
) -> None:
    # Given an app with one bad reconcile setting
    app = App(context={key: value})
    # When settings are read from it
    with pytest.raises(SettingsError) as error:
        StackSettings.from_context(app)
    # Then the error names the context key and the problem
    assert f"context key {key!r}" in str(error.value)
    assert expected in str(error.value)
