"""A deployed stack as ops tools see it: its outputs, found by name (docs/operations.md).

``video-index … --stack NAME`` opens the stack with CloudFormation ``DescribeStacks``
and finds in its outputs (named in :mod:`video_index.core.contract`) the state
machines, the ops function, the buckets, the table and the queues. A stack deployed
by a version without these outputs is a clear :class:`ConfigurationError`.
"""

from __future__ import annotations

from typing import Any

from video_index.aws.clients import CLIENT_CONFIG, S3_CONFIG, Clients
from video_index.aws.executions import StateMachineExecutions
from video_index.aws.stacks import stack_outputs
from video_index.aws.store import ReadModelStore
from video_index.core.contract import (
    OPS_OUTPUTS,
    OUTPUT_BUCKET,
    OUTPUT_DLQ_URL,
    OUTPUT_INVENTORY_DESTINATION,
    OUTPUT_QUEUE_URL,
    OUTPUT_REPORTS_BUCKET,
    OUTPUT_TABLE,
)
from video_index.core.errors import ConfigurationError
from video_index.core.settings import DEFAULT_TOMBSTONE_DAYS, Settings


class DeployedStack:
    """The outputs of one deployed video-index stack and clients to use it with."""

    def __init__(self, name: str, outputs: dict[str, str], session: Any) -> None:
        missing = [key for key in OPS_OUTPUTS if not outputs.get(key)]
        if missing:
            raise ConfigurationError(
                f"stack {name!r} has no output {', '.join(missing)}: it was deployed by an "
                "older version of video-index; deploy this version (`cdk deploy`) and try again"
            )
        self.name = name
        self.outputs = outputs
        self.session = session
        self._clients: dict[str, Any] = {}

    @classmethod
    def open(cls, name: str, session: Any) -> DeployedStack:
        """The stack ``name`` in the session's region (DescribeStacks)."""
        return cls(
            name,
            stack_outputs(session.client("cloudformation", config=CLIENT_CONFIG), name),
            session,
        )

    def __getitem__(self, key: str) -> str:
        return self.outputs[key]

    def client(self, service: str) -> Any:
        if service not in self._clients:
            config = S3_CONFIG if service == "s3" else CLIENT_CONFIG
            self._clients[service] = self.session.client(service, config=config)
        return self._clients[service]

    def executions(self, output_key: str) -> StateMachineExecutions:
        """The executions of the state machine whose ARN is the output ``output_key``."""
        return StateMachineExecutions(self.client("stepfunctions"), self[output_key])

    def store(self) -> ReadModelStore:
        """The read model, for reading its control items (no write needs the tombstone days)."""
        return ReadModelStore(
            self.client("dynamodb"), self[OUTPUT_TABLE], tombstone_days=DEFAULT_TOMBSTONE_DAYS
        )

    def reports_uri(self, key: str) -> str:
        return f"s3://{self[OUTPUT_REPORTS_BUCKET]}/{key}"

    def settings(self) -> Settings:
        """What a job run in this process (``--in-process``) needs to work on this stack."""
        return Settings(
            bucket=self[OUTPUT_BUCKET],
            table=self[OUTPUT_TABLE],
            queue_url=self[OUTPUT_QUEUE_URL],
            dlq_url=self[OUTPUT_DLQ_URL],
            reports_bucket=self[OUTPUT_REPORTS_BUCKET],
            inventory_destination=self[OUTPUT_INVENTORY_DESTINATION],
        )

    def clients(self) -> Clients:
        return Clients(
            dynamodb=self.client("dynamodb"), s3=self.client("s3"), sqs=self.client("sqs")
        )
