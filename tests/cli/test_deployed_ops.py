"""``video-index rebuild|reconcile|status --stack NAME``: the deployed state machines do the work.

The stack is "deployed" on moto (CloudFormation creates its buckets, queues and state
machines from the synthesized definitions; the read model is on the DynamoDB endpoint
over HTTP), and
:mod:`tests.support.state_machine` plays each execution the CLI starts: the
synthesized definition, evaluated as written, calling the ops function's real steps.
The CLI's pause between two polls is one step of the execution, so what the progress
bar shows is what the control item said at that moment.
"""

from __future__ import annotations

import functools
import json
import re
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from tests.infra.template import Synth
from tests.support.deployed_stack import (
    BUCKET,
    REPORTS,
    STACK,
    DeployedWorld,
    deploy,
    template,
)
from tests.support.tables import make_table_factory
from video_index.cli import follow as follow_cli
from video_index.cli import targets
from video_index.cli.main import main
from video_index.core import contract
from video_index.ops.payloads import RebuildInput, ReconcileInput
from video_index.ops.service import build_ops
from worlds.aggregation import Aggregation
from worlds.inventory_fixtures import write_inventory
from worlds.read_model_view import view
from worlds.reference_projection import list_bucket, project

REBUILD = contract.OUTPUT_REBUILD_STATE_MACHINE
RECONCILE = contract.OUTPUT_RECONCILE_STATE_MACHINE


@pytest.fixture
def deployed(
    aws: None,
    dynamodb_endpoint: str,
    synth: Synth,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> DeployedWorld:
    dynamodb, table = make_table_factory("endpoint", request)()
    world = deploy(synth, dynamodb, table)
    # The operator's shell: the usual AWS configuration (moto), the read model's endpoint.
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamodb_endpoint)
    monkeypatch.delenv(targets.ENV_STACK, raising=False)
    monkeypatch.setattr(targets, "new_session", world.session)
    # While the CLI waits between two polls, the execution moves on by one state.
    monkeypatch.setattr(follow_cli, "pause", lambda seconds: world.advance())
    return world


def _execution(world: DeployedWorld, output_key: str) -> dict[str, Any]:
    (listed,) = world.executions(output_key)
    described: dict[str, Any] = world.stepfunctions.describe_execution(
        executionArn=listed["executionArn"]
    )
    return described


def _progress(out: str) -> list[tuple[str, int]]:
    """(phase, partitions done) of every progress line the command printed."""
    return [
        (phase, int(done))
        for phase, done in re.findall(r"rebuild \w+ · ([\w-]+) · (\d+)/30 partitions", out)
    ]


# --- rebuild --------------------------------------------------------------------------------


def test_rebuild_start_runs_the_deployed_machine_with_its_input_and_follows_it_to_the_end(
    deployed: DeployedWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a deployed stack whose read model serves generation 1 (30 partitions)
    before = project(list_bucket(deployed.s3, BUCKET)).segments
    # When an operator starts a rebuild, naming only the stack
    code = main(["rebuild", "start", "--stack", STACK])
    out = capsys.readouterr().out
    # Then the rebuild state machine was started with the input its payload model defines
    execution = _execution(deployed, REBUILD)
    assert json.loads(execution["input"]) == {"source": "list"}
    # And the synthesized definition handed the ops function exactly that request
    double = deployed.machine(REBUILD)
    first = double.invocations[0]
    assert first["action"] == contract.ACTION_REBUILD_PLAN
    assert RebuildInput.parse(first) == RebuildInput(source="list")
    assert double.visited == [
        "Defaults",
        "Plan",  # the distributed plan's S3 side: one listing unit, one reduce shard here
        "Fingerprint",
        "FingerprintUnits",
        "Reduce",
        "ReduceShards",
        "Start",
        "RebuildPartitions",
        *["RebuildBatch"] * 2,  # 30 partitions in batches of 25
        "Finish",
        "DropGrace",
        "DropPrevious",
    ]
    # And the progress bar followed the control item: partitions done of 30, batch by batch
    progress = _progress(out)
    assert [done for _, done in progress] == [0, 25, 30, 30, 30]  # the last: the drop
    assert progress[-1] == ("switched", 30)
    # And the end says which generation serves and where the partition list is
    assert code == 0, out
    assert execution["status"] == "SUCCEEDED"
    assert "generation 2 serves (rebuilt, 30 partitions)" in out
    location = re.search(r"partition list: s3://([^/]+)/(\S+)", out)
    assert location and location.group(1) == REPORTS
    assert (
        len(
            json.loads(deployed.s3.get_object(Bucket=REPORTS, Key=location.group(2))["Body"].read())
        )
        == 30
    )
    # And the new generation is exactly P(S3), and the one it replaced is dropped
    assert view(deployed.dynamodb, deployed.table, generation=2).segments == before
    (finish,) = [i for i in double.invocations if i["action"] == contract.ACTION_REBUILD_FINISH]
    assert double.invocations[-1] == {
        "action": contract.ACTION_REBUILD_DROP,
        "rebuild_id": finish["rebuild_id"],
        "generation": 1,
    }
    assert not view(deployed.dynamodb, deployed.table, generation=1).segments


def test_ctrl_c_detaches_and_the_execution_runs_on_until_status_follows_it_again(
    deployed: DeployedWorld, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a rebuild being followed
    waits = 0

    def interrupted_after_the_first_batch(seconds: float) -> None:
        nonlocal waits
        waits += 1
        # (five states of the distributed plan, then Start, the map, its first batch)
        if waits == 11:
            raise KeyboardInterrupt
        deployed.advance()

    monkeypatch.setattr(follow_cli, "pause", interrupted_after_the_first_batch)
    # When the operator presses Ctrl-C mid-way
    code = main(["rebuild", "start", "--stack", STACK])
    out = capsys.readouterr().out
    # Then the command detaches (exit 130) and says the execution keeps running
    assert code == 130
    assert "detached: the rebuild execution keeps running (it was not stopped)" in out
    assert f"video-index rebuild status --stack {STACK} --follow" in out
    # And it does: nothing stopped it, the control item shows it half-way
    assert _execution(deployed, REBUILD)["status"] == "RUNNING"
    main(["rebuild", "status", "--stack", STACK, "--json"])
    status = json.loads(capsys.readouterr().out)
    assert (status["phase"], status["building"], status["partitions_done"]) == ("building", 2, 25)
    assert [e["status"] for e in status["running"]] == ["RUNNING"]
    # When the operator follows it again
    monkeypatch.setattr(follow_cli, "pause", lambda seconds: deployed.advance())
    code = main(["rebuild", "status", "--stack", STACK, "--follow"])
    out = capsys.readouterr().out
    # Then it is followed to its end
    assert code == 0, out
    assert [done for _, done in _progress(out)] == [25, 30, 30, 30]
    assert "generation 2 serves" in out


def test_a_failed_rebuild_is_reported_with_its_error_and_exit_1(
    deployed: DeployedWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the ops function crashes in the rebuild's finish step
    deployed.failing[contract.ACTION_REBUILD_FINISH] = RuntimeError("disk on fire")
    # When a rebuild is started and followed
    code = main(["rebuild", "start", "--stack", STACK])
    out = capsys.readouterr().out
    # Then the definition's own abort ran and the execution failed with its error
    double = deployed.machine(REBUILD)
    assert double.visited[-3:] == ["Finish", "Abort", "Failed"]
    assert _execution(deployed, REBUILD)["status"] == "FAILED"
    # And the command says so, with the error and the cause, and exits 1
    assert code == 1
    assert "problem: the rebuild execution failed: RebuildAborted:" in out
    assert "disk on fire" in out
    assert "generation 1 keeps serving (phase aborted)" in out


def test_rebuild_abort_stops_the_execution_and_runs_the_products_abort_step(
    deployed: DeployedWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a rebuild started without following, one batch in
    assert main(["rebuild", "start", "--stack", STACK, "--no-follow"]) == 0
    assert "execution: arn:aws:states:" in capsys.readouterr().out
    for _ in range(10):  # the distributed plan's five states, Start, the map, a batch
        deployed.advance()
    assert deployed.store().get("control", "generation")["building"] == 2
    # When a second rebuild is asked for
    assert main(["rebuild", "start", "--stack", STACK]) == 1
    # Then it is refused: one is running
    assert "a rebuild is already running (building generation 2" in capsys.readouterr().out
    # When the operator aborts
    code = main(["rebuild", "abort", "--stack", STACK])
    out = capsys.readouterr().out
    # Then the execution was stopped, and the ops function's own abort step dropped the build
    assert code == 0, out
    assert _execution(deployed, REBUILD)["status"] == "ABORTED"
    (abort,) = deployed.direct_invocations
    assert abort["action"] == contract.ACTION_REBUILD_ABORT and abort["generation"] == 2
    control = deployed.store().get("control", "generation")
    assert control["phase"] == "aborted" and "building" not in control
    assert "aborted; generation 1 keeps serving" in out
    assert view(deployed.dynamodb, deployed.table, generation=2).segments == {}
    # And a second abort finds nothing to abort
    assert main(["rebuild", "abort", "--stack", STACK]) == 1
    assert "no rebuild is running" in capsys.readouterr().out


# --- reconcile ------------------------------------------------------------------------------


def _lose_events(world: DeployedWorld) -> None:
    """Drift: one object deleted and one created without their events reaching ingest."""
    listed = list_bucket(world.s3, BUCKET)
    world.s3.delete_object(Bucket=BUCKET, Key=listed[0]["Key"])
    world.s3.put_object(
        Bucket=BUCKET,
        Key="v1/video/cam-99/2026/11/30/10/20261130T100000.000Z_1000_00000000000000aa.mp4",
        Body=b"new",
    )


def _inventory(world: DeployedWorld) -> str:
    rows = [
        (o["Key"], o["Size"], o["ETag"].strip('"'), o["LastModified"])
        for o in list_bucket(world.s3, BUCKET)
    ]
    return write_inventory(
        world.s3,
        dest_bucket=REPORTS,
        prefix=contract.INVENTORY_PREFIX,
        source_bucket=BUCKET,
        config_id="video-index-daily",
        objects=rows,
        fmt="CSV",
        created=datetime(2026, 11, 30, 1, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("arguments", "request_fields"),
    [
        (["--dry-run", "--source", "list"], {"source": "list", "dry_run": True}),
        (["--source", "list"], {"source": "list"}),
        ([], {"source": "inventory"}),  # the newest report under the inventory destination
        (["--manifest", "MANIFEST"], {"source": "inventory", "manifest": "MANIFEST"}),
    ],
)
def test_reconcile_starts_the_deployed_machine_with_the_input_its_definition_expects(
    deployed: DeployedWorld,
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    request_fields: dict[str, Any],
) -> None:
    # Given lost events, and an inventory report of the bucket as it is now
    _lose_events(deployed)
    manifest = _inventory(deployed)
    arguments = [manifest if a == "MANIFEST" else a for a in arguments]
    fields = {k: manifest if v == "MANIFEST" else v for k, v in request_fields.items()}
    # When reconcile is run on the stack
    code = main(["reconcile", "--stack", STACK, *arguments, "--json"])
    out, err = capsys.readouterr()
    # Then the execution input is the payload model's, and the definition's plan step got it
    requested = ReconcileInput(**fields)
    execution = _execution(deployed, RECONCILE)
    assert ReconcileInput.parse(json.loads(execution["input"])) == requested
    plan = deployed.machine(RECONCILE).invocations[0]
    assert plan["action"] == contract.ACTION_RECONCILE_PLAN
    assert ReconcileInput.parse(plan) == requested
    # And the run ended with its report, printed and stored where the command says
    assert code == 0, err
    report = json.loads(out)  # stdout holds the report alone; the rest went to stderr
    assert "following reconcile execution" in err
    assert report["dry_run"] is requested.dry_run
    assert report["partitions_differing"] == 2  # the deleted object's and the new one's
    if not requested.dry_run:
        assert (report["entries_removed"], report["entries_added"]) == (1, 1)
    location = f"s3://{REPORTS}/reconcile/{report['run_id']}/report.json"
    assert f"report: {location}" in err
    stored = deployed.s3.get_object(Bucket=REPORTS, Key=f"reconcile/{report['run_id']}/report.json")
    assert json.loads(stored["Body"].read())["run_id"] == report["run_id"]


def test_a_refused_reconcile_fails_its_execution_and_the_command_exits_1(
    deployed: DeployedWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a third of the bucket deleted without events (above the 10 % threshold)
    for listed in list_bucket(deployed.s3, BUCKET)[:10]:
        deployed.s3.delete_object(Bucket=BUCKET, Key=listed["Key"])
    # When reconcile is run on the stack, not forced
    code = main(["reconcile", "--stack", STACK, "--source", "list"])
    out = capsys.readouterr().out
    # Then the decision refused, the execution failed, and the command shows the error
    assert _execution(deployed, RECONCILE)["status"] == "FAILED"
    assert code == 1
    assert "problem: the reconcile execution failed: OperationError:" in out
    assert "--force" in out or "force" in out


# --- status ---------------------------------------------------------------------------------


def test_status_of_a_stack_shows_queues_generation_and_the_executions_with_their_results(
    deployed: DeployedWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a finished reconcile, a failed rebuild, and a message in the DLQ
    assert main(["reconcile", "--stack", STACK, "--source", "list"]) == 0
    deployed.failing[contract.ACTION_REBUILD_START] = RuntimeError("no listing today")
    assert main(["rebuild", "start", "--stack", STACK]) == 1
    dlq = deployed.outputs[contract.OUTPUT_DLQ_URL]
    deployed.sqs.send_message(QueueUrl=dlq, MessageBody="parked")
    capsys.readouterr()
    # When the operator asks for the status by the stack's name
    code = main(["status", "--stack", STACK, "--json"])
    status = json.loads(capsys.readouterr().out)
    # Then it reads the stack's queues, read model and executions
    assert code == 1  # the DLQ holds a message and the last rebuild failed
    assert status["queue"]["url"] == deployed.outputs[contract.OUTPUT_QUEUE_URL]
    assert status["dlq"]["depth"] == 1
    assert status["read_model"]["generation"] == 1
    assert status["last_reconcile"]["partitions_checked"] == 30
    reconcile, rebuild = status["executions"]["reconcile"], status["executions"]["rebuild"]
    assert reconcile["running"] == [] and reconcile["last"]["status"] == "SUCCEEDED"
    assert reconcile["last"]["output"]["partitions_checked"] == 30
    assert rebuild["last"]["status"] == "FAILED"
    assert "no listing today" in rebuild["last"]["cause"]
    assert status["problems"] == [
        "the dead-letter queue holds 1 message(s)",
        f"the last rebuild execution failed: RuntimeError: {rebuild['last']['cause']}",
    ]
    # And the table form shows the same
    main(["status", "--stack", STACK])
    table = capsys.readouterr().out
    assert "reconcile executions" in table and "succeeded" in table
    assert "rebuild executions" in table and "RuntimeError" in table


# --- bad input ------------------------------------------------------------------------------


def test_an_unknown_stack_is_a_usage_error_naming_it(
    deployed: DeployedWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["rebuild", "start"], ["reconcile"], ["status"], ["rebuild", "abort"]):
        assert main([*command, "--stack", "no-such-stack"]) == 2
        assert "--stack: no stack named 'no-such-stack' in region us-east-1" in (
            capsys.readouterr().out
        )


def test_a_stack_without_the_outputs_is_an_older_version_and_says_so(
    deployed: DeployedWorld, synth: Synth, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a stack deployed by a version that output only the API and the state machines
    older = template(
        synth,
        deployed.table,
        outputs=(
            contract.OUTPUT_API_URL,
            contract.OUTPUT_RECONCILE_STATE_MACHINE,
            contract.OUTPUT_REBUILD_STATE_MACHINE,
        ),
    )
    older["Resources"] = {
        name: resource
        for name, resource in older["Resources"].items()
        if resource["Type"] == "AWS::StepFunctions::StateMachine"
    }
    for resource in older["Resources"].values():
        resource["Properties"]["StateMachineName"] += "-old"
    deployed.cloudformation.create_stack(StackName="older", TemplateBody=json.dumps(older))
    # When an ops command names it
    for command in (["rebuild", "start"], ["status"]):
        code = main([*command, "--stack", "older"])
        out = capsys.readouterr().out
        # Then it names the missing outputs and what to do, and starts nothing
        assert code == 2
        assert f"stack 'older' has no output {contract.OUTPUT_OPS_FUNCTION}" in out
        assert "older version of video-index" in out and "cdk deploy" in out
    assert deployed.executions(REBUILD) == []


def test_without_credentials_the_command_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a shell with no AWS credentials at all (and no instance metadata to ask)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # When an ops command names a stack
    for command in (["rebuild", "start"], ["reconcile"], ["status"]):
        code = main([*command, "--stack", STACK])
        out = capsys.readouterr().out
        # Then it is a configuration error saying what to set
        assert code == 2, out
        assert "no AWS credentials found: set AWS_PROFILE" in out


def test_a_job_command_without_a_target_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(targets.ENV_STACK, raising=False)
    for command in (["rebuild", "start"], ["reconcile"], ["rebuild", "abort"]):
        assert main(command) == 2
        assert "say where to run: --stack NAME" in capsys.readouterr().err
    assert main(["rebuild", "start", "--in-process", "--no-follow"]) == 2
    assert "--no-follow needs --stack" in capsys.readouterr().err
    assert main(["rebuild", "start", "--stack", STACK, "--settle-seconds", "1"]) == 2
    assert "--settle-seconds" in capsys.readouterr().err


def test_the_stack_can_come_from_the_environment(
    deployed: DeployedWorld, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(targets.ENV_STACK, STACK)
    assert main(["rebuild", "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["current"] == 1


def test_in_process_on_a_stack_uses_its_resources(
    deployed: DeployedWorld, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # (deployed, Lambda consumes the table's stream; here the ops' barrier delivers it)
    pumped = functools.partial(build_ops, pump=Aggregation(deployed.dynamodb, deployed.table).drain)
    monkeypatch.setattr("video_index.ops.service.build_ops", pumped)
    # Given lost events; When reconcile runs in this process on the stack's resources
    _lose_events(deployed)
    code = main(["reconcile", "--stack", STACK, "--in-process", "--source", "list", "--json"])
    report = json.loads(capsys.readouterr().out)
    # Then it repaired the stack's read model without any execution
    assert code == 0
    assert (report["entries_added"], report["entries_removed"]) == (1, 1)
    assert deployed.executions(RECONCILE) == []
    assert boto3.client("s3").head_object(
        Bucket=REPORTS, Key=f"reconcile/{report['run_id']}/report.json"
    )
