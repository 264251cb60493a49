"""The Step Functions adapter: start, watch and stop executions of one state machine.

Errors are mapped once (:mod:`video_index.aws.errors`); an execution that does not
exist is :class:`NotFound`, a name already used :class:`Conflict`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from video_index.aws.errors import aws_error, error_code
from video_index.core.errors import Conflict, NotFound

RUNNING: Final = "RUNNING"
SUCCEEDED: Final = "SUCCEEDED"

T = TypeVar("T")


@dataclass(frozen=True)
class Execution:
    """One execution as ``DescribeExecution`` (or ``ListExecutions``) tells it."""

    arn: str
    name: str
    status: str
    started: datetime | None = None
    stopped: datetime | None = None
    input: Any = None
    output: Any = None
    error: str | None = None
    cause: str | None = None

    @property
    def finished(self) -> bool:
        return self.status != RUNNING

    @property
    def succeeded(self) -> bool:
        return self.status == SUCCEEDED

    @classmethod
    def from_response(cls, response: dict[str, Any]) -> Execution:
        return cls(
            arn=str(response["executionArn"]),
            name=str(response.get("name", "")),
            status=str(response.get("status", "")),
            started=response.get("startDate"),
            stopped=response.get("stopDate"),
            input=_json(response.get("input")),
            output=_json(response.get("output")),
            error=response.get("error") or None,
            cause=response.get("cause") or None,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "arn": self.arn,
            "name": self.name,
            "status": self.status,
            "started": self.started.isoformat() if self.started else None,
            "stopped": self.stopped.isoformat() if self.stopped else None,
            "error": self.error,
            "cause": self.cause,
        }


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


class StateMachineExecutions:
    """The executions of one state machine."""

    def __init__(self, client: Any, state_machine_arn: str) -> None:
        self._client = client
        self.state_machine_arn = state_machine_arn

    def _call(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except ClientError as exc:
            code = error_code(exc)
            message = exc.response.get("Error", {}).get("Message", "") or str(exc)
            if code == "ExecutionAlreadyExists":
                raise Conflict(f"Step Functions: {message}") from None
            if code == "ExecutionDoesNotExist":
                raise NotFound(None, f"Step Functions: {message}") from None
            raise aws_error(exc, "Step Functions") from exc
        except BotoCoreError as exc:
            raise aws_error(exc, "Step Functions") from exc

    def start(self, name: str, payload: dict[str, Any]) -> Execution:
        response = self._call(
            lambda: self._client.start_execution(
                stateMachineArn=self.state_machine_arn, name=name, input=json.dumps(payload)
            )
        )
        return Execution(
            arn=str(response["executionArn"]),
            name=name,
            status=RUNNING,
            started=response.get("startDate"),
            input=payload,
        )

    def describe(self, execution_arn: str) -> Execution:
        return Execution.from_response(
            self._call(lambda: self._client.describe_execution(executionArn=execution_arn))
        )

    def stop(self, execution_arn: str, cause: str) -> None:
        self._call(
            lambda: self._client.stop_execution(
                executionArn=execution_arn, error="StoppedByOperator", cause=cause[:32768]
            )
        )

    def running(self) -> list[Execution]:
        return self._list(status=RUNNING, limit=100)

    def last_finished(self, look_back: int = 20) -> Execution | None:
        """The newest finished execution among the last ``look_back``, described (with its
        output or error)."""
        finished = [e for e in self._list(status=None, limit=look_back) if e.finished]
        return self.describe(finished[0].arn) if finished else None

    def _list(self, *, status: str | None, limit: int) -> list[Execution]:
        arguments: dict[str, Any] = {"stateMachineArn": self.state_machine_arn}
        if status:
            arguments["statusFilter"] = status
        found: list[Execution] = []
        token: str | None = None
        while len(found) < limit:
            page_arguments = {**arguments, "maxResults": min(limit - len(found), 100)}
            if token:
                page_arguments["nextToken"] = token
            page = self._list_page(page_arguments)
            found += [Execution.from_response(item) for item in page.get("executions", [])]
            token = page.get("nextToken")
            if not token:
                break
        return found[:limit]

    def _list_page(self, arguments: dict[str, Any]) -> dict[str, Any]:
        page: dict[str, Any] = self._call(lambda: self._client.list_executions(**arguments))
        return page
