"""A "deployed" video-index stack on moto, for the ops commands' ``--stack NAME`` path.

CloudFormation (moto) creates the segment and reports buckets, the notification queue
and its DLQ and both state machines — with the definitions CDK synthesizes — and
outputs them under the keys of :mod:`video_index.core.contract`; the read model is a
table on the DynamoDB endpoint over HTTP, the ops function a name. moto records
executions; :class:`DeployedWorld` plays them with
:class:`~tests.support.state_machine.StateMachineDouble` (the synthesized definition,
the real steps) one step per :meth:`DeployedWorld.advance` — the CLI's pause between
two polls — and writes each outcome back into moto, as the service would.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.awsrequest import AWSResponse
from botocore.response import StreamingBody
from moto.core.utils import utcnow
from moto.stepfunctions.models import stepfunctions_backends

from tests.infra.template import Synth
from tests.support.s3_world import World
from tests.support.state_machine import Outcome, StateMachineDouble
from video_index.aws.clients import Clients
from video_index.aws.objects import ObjectStore
from video_index.aws.store import ReadModelStore, build_store
from video_index.core import contract
from video_index.core.settings import Settings
from video_index.ingest.batches import IngestService
from video_index.ingest.ingestor import Ingestor
from video_index.ops.rebuild import Rebuilder
from video_index.ops.service import Ops, build_ops
from video_index.ops.steps import dispatch
from worlds import events as ev
from worlds.aggregation import Aggregation
from worlds.inventory_fixtures import destination_uri

ACCOUNT = "123456789012"
REGION = "us-east-1"
STACK = "video-index-test"
BUCKET = ev.BUCKET
REPORTS = "video-index-reports"
OPS_FUNCTION = "video-index-ops"
INVENTORY_ID = "video-index-daily"
DEVICES = tuple(f"cam-{n:02d}" for n in range(10))
DAYS = (28, 29, 30)


def key(device: str, day: int, n: int = 0) -> str:
    return (
        f"v1/video/{device}/2026/11/{day}/10/202611{day}T10{n:02d}00.000Z_1000_"
        f"{hashlib.sha256(f'{device}{day}{n}'.encode()).hexdigest()[:16]}.mp4"
    )


@dataclass
class DeployedWorld:
    name: str
    table: str
    s3: Any
    dynamodb: Any
    sqs: Any
    stepfunctions: Any
    cloudformation: Any
    ops: Ops
    outputs: dict[str, str] = field(default_factory=dict)
    machines: dict[str, StateMachineDouble] = field(default_factory=dict)
    playing: dict[str, Generator[str, None, Outcome]] = field(default_factory=dict)
    #: Steps that fail as a crashing Lambda would: action -> the exception it raises.
    failing: dict[str, Exception] = field(default_factory=dict)
    #: Payloads the CLI sent to the ops function itself (not through a state machine).
    direct_invocations: list[dict[str, Any]] = field(default_factory=list)
    steps: int = 0

    # -- the ops function ---------------------------------------------------------------

    def invoke(self, payload: dict[str, Any]) -> Any:
        failure = self.failing.get(str(payload.get("action")))
        if failure is not None:
            raise failure
        return dispatch(self.ops, payload)

    def session(self) -> Any:
        """What the CLI's ``new_session`` returns: the shell's session, with the ops
        function answered by the real steps (moto's Lambda would need Docker)."""
        session = boto3.session.Session()

        def invoke(params: dict[str, Any], model: Any, **_: Any) -> Any:
            if model.name != "Invoke":
                return None
            body = params["body"]
            payload = json.loads(body if isinstance(body, str | bytes) else body.read())
            self.direct_invocations.append(payload)
            try:
                data, error = json.dumps(self.invoke(payload), default=str).encode(), None
            except Exception as exc:
                data = json.dumps({"errorType": type(exc).__name__, "errorMessage": str(exc)})
                data, error = data.encode(), "Unhandled"
            parsed: dict[str, Any] = {
                "StatusCode": 200,
                "Payload": StreamingBody(io.BytesIO(data), len(data)),
                "ResponseMetadata": {"HTTPStatusCode": 200},
            }
            if error:
                parsed["FunctionError"] = error
            return AWSResponse("https://lambda.invalid", 200, {}, None), parsed

        session.events.register("before-call.lambda.Invoke", invoke)
        return session

    # -- the state machines -------------------------------------------------------------

    def machine(self, output_key: str) -> StateMachineDouble:
        return self.machines[self.outputs[output_key]]

    def executions(self, output_key: str) -> list[dict[str, Any]]:
        arn = self.outputs[output_key]
        listed: list[dict[str, Any]] = self.stepfunctions.list_executions(stateMachineArn=arn)[
            "executions"
        ]
        return listed

    def advance(self) -> None:
        """One step of every running execution (what happens while the CLI waits)."""
        self.steps += 1
        for arn, double in self.machines.items():
            running = self.stepfunctions.list_executions(
                stateMachineArn=arn, statusFilter="RUNNING"
            )["executions"]
            for listed in running:
                execution_arn = listed["executionArn"]
                player = self.playing.get(execution_arn)
                if player is None:
                    described = self.stepfunctions.describe_execution(executionArn=execution_arn)
                    player = double.run(json.loads(described["input"]))
                    self.playing[execution_arn] = player
                try:
                    next(player)
                except StopIteration as end:
                    self._finish(execution_arn, end.value)

    def _running(self, arn: str) -> bool:
        return bool(
            self.stepfunctions.list_executions(stateMachineArn=arn, statusFilter="RUNNING")[
                "executions"
            ]
        )

    def _finish(self, execution_arn: str, outcome: Outcome) -> None:
        execution = stepfunctions_backends[ACCOUNT][REGION].describe_execution(execution_arn)
        execution.status = outcome.status
        execution.stop_date = utcnow()
        execution.output = None if outcome.output is None else json.dumps(outcome.output)
        execution.error = outcome.error
        execution.cause = outcome.cause
        del self.playing[execution_arn]

    # -- the read model -----------------------------------------------------------------

    def store(self) -> ReadModelStore:
        return ReadModelStore(self.dynamodb, self.table, tombstone_days=35)


def template(synth: Synth, table: str, *, outputs: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The stack's template as moto can create it: the resources ops tools use."""
    machines = synth.video_index.reconcile
    definitions = {
        "Reconcile": synth.definition(machines.reconcile_state_machine),
        "Rebuild": synth.definition(machines.rebuild_state_machine),
    }
    resources: dict[str, Any] = {
        "Segments": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": BUCKET}},
        "Reports": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": REPORTS}},
        "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "video-index-events"}},
        "DeadLetterQueue": {
            "Type": "AWS::SQS::Queue",
            "Properties": {"QueueName": "video-index-events-dlq"},
        },
    }
    for name, definition in definitions.items():
        resources[f"{name}StateMachine"] = {
            "Type": "AWS::StepFunctions::StateMachine",
            "Properties": {
                "StateMachineName": f"{STACK}-{name.lower()}",
                "DefinitionString": json.dumps(definition),
                "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/{name.lower()}-state-machine",
            },
        }
    values: dict[str, Any] = {
        contract.OUTPUT_API_URL: "https://api.invalid/",
        contract.OUTPUT_RECONCILE_STATE_MACHINE: {"Ref": "ReconcileStateMachine"},
        contract.OUTPUT_REBUILD_STATE_MACHINE: {"Ref": "RebuildStateMachine"},
        contract.OUTPUT_OPS_FUNCTION: OPS_FUNCTION,
        contract.OUTPUT_BUCKET: {"Ref": "Segments"},
        contract.OUTPUT_REPORTS_BUCKET: {"Ref": "Reports"},
        contract.OUTPUT_INVENTORY_DESTINATION: destination_uri(
            REPORTS, contract.INVENTORY_PREFIX, BUCKET, INVENTORY_ID
        ),
        contract.OUTPUT_TABLE: table,
        contract.OUTPUT_QUEUE_URL: {"Ref": "Queue"},
        contract.OUTPUT_DLQ_URL: {"Ref": "DeadLetterQueue"},
    }
    keep = values if outputs is None else {k: v for k, v in values.items() if k in outputs}
    return {"Resources": resources, "Outputs": {k: {"Value": v} for k, v in keep.items()}}


def deploy(synth: Synth, dynamodb: Any, table: str, *, objects: int = 30) -> DeployedWorld:
    """Create the stack in moto (inside an active ``mock_aws``), upload ``objects``
    segments (one per partition) and ingest their events into the read model."""
    cloudformation = boto3.client("cloudformation")
    cloudformation.create_stack(StackName=STACK, TemplateBody=json.dumps(template(synth, table)))
    outputs = {
        o["OutputKey"]: o["OutputValue"]
        for o in cloudformation.describe_stacks(StackName=STACK)["Stacks"][0]["Outputs"]
    }
    s3, sqs = boto3.client("s3"), boto3.client("sqs")
    world = World(s3, BUCKET, random.Random(14))
    partitions = [(device, day) for device in DEVICES for day in DAYS][:objects]
    for device, day in partitions:
        world.upload(key(device, day), 0)
    service = IngestService(
        Ingestor(ReadModelStore(dynamodb, table, tombstone_days=35), ObjectStore(s3, BUCKET))
    )
    for record in world.events:
        service.handle(ev.sqs_event(ev.sqs_record(ev.s3_notification(record))), None)
    aggregation = Aggregation(dynamodb, table)
    aggregation.drain()  # buckets and devices follow from the stream
    settings = Settings(
        bucket=BUCKET,
        table=table,
        reports_bucket=REPORTS,
        inventory_destination=outputs[contract.OUTPUT_INVENTORY_DESTINATION],
    )
    clients = Clients(dynamodb=dynamodb, s3=s3, sqs=sqs)
    # (deployed, Lambda consumes the stream; here the ops' barriers deliver it)
    ops = build_ops(settings, clients, pump=aggregation.drain)
    # The Lambda's finish waits out the settle time; here the test's clock decides.
    store = build_store(settings, clients)
    ops.rebuilder = Rebuilder(
        store,
        ops.segments,
        Ingestor(store, ops.segments),
        barrier=aggregation.barrier,
        mender=aggregation.mender,
        sleep=_no_wait,
    )
    deployed = DeployedWorld(
        name=STACK,
        table=table,
        s3=s3,
        dynamodb=dynamodb,
        sqs=sqs,
        stepfunctions=boto3.client("stepfunctions"),
        cloudformation=cloudformation,
        ops=ops,
        outputs=outputs,
    )
    placeholders = {synth.placeholder(synth.video_index.storage.reports_bucket): REPORTS}
    for output_key in (
        contract.OUTPUT_RECONCILE_STATE_MACHINE,
        contract.OUTPUT_REBUILD_STATE_MACHINE,
    ):
        arn = outputs[output_key]
        definition = json.loads(
            deployed.stepfunctions.describe_state_machine(stateMachineArn=arn)["definition"]
        )
        deployed.machines[arn] = StateMachineDouble(
            definition=definition, invoke=deployed.invoke, s3=s3, placeholders=placeholders
        )
    return deployed


def _no_wait(_: float) -> None:
    return None
