"""Jobs that run as deployed state machines: start them, follow them, stop them.

A :class:`Job` names its state machine (a stack output) and the payload model its
execution input must be (:mod:`video_index.ops.payloads`): the input is built and
validated from that model, so a definition that reads the same model needs no change
here. Following an execution is :mod:`video_index.ops.follow`'s; a job brings its
progress source (rebuild: the control item's partitions done/total).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from video_index.aws.executions import Execution
from video_index.aws.functions import invoke
from video_index.core.contract import (
    ACTION_REBUILD_ABORT,
    OUTPUT_OPS_FUNCTION,
    OUTPUT_REBUILD_STATE_MACHINE,
    OUTPUT_RECONCILE_STATE_MACHINE,
)
from video_index.core.errors import BadInput, Conflict
from video_index.core.layout import CONTROL_PK, GENERATION_SK
from video_index.ops.deployed import DeployedStack
from video_index.ops.follow import Progress
from video_index.ops.payloads import Payload, RebuildAbortInput, RebuildInput, ReconcileInput
from video_index.ops.rebuild import RebuildError, RebuildInProgress, RebuildStatus


@dataclass(frozen=True)
class Job:
    """A product job run by a deployed state machine."""

    name: str
    #: The stack output holding the state machine's ARN.
    state_machine_output: str
    #: What an execution's input must be (the first step parses the same model).
    input_model: type[Payload]

    def execution_input(self, **fields: Any) -> dict[str, Any]:
        """The input for an execution with ``fields``; :class:`BadInput` naming a wrong one."""
        try:
            request = self.input_model.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or self.name
            raise BadInput(where, str(first["msg"])) from None
        # Only what is set: the definition fills in the rest with the same defaults.
        return request.model_dump(mode="json", exclude_none=True)

    def start(self, stack: DeployedStack, payload: dict[str, Any]) -> Execution:
        """Start an execution; :class:`Conflict` while another one of this job runs."""
        executions = stack.executions(self.state_machine_output)
        running = executions.running()
        if running:
            raise Conflict(
                f"a {self.name} execution is already running: {running[0].arn} "
                f"(started {running[0].started})"
            )
        name = f"{self.name}-cli-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"
        return executions.start(name, payload)


RECONCILE = Job("reconcile", OUTPUT_RECONCILE_STATE_MACHINE, ReconcileInput)
REBUILD = Job("rebuild", OUTPUT_REBUILD_STATE_MACHINE, RebuildInput)


# --- rebuild --------------------------------------------------------------------------------


def rebuild_status(stack: DeployedStack) -> RebuildStatus:
    """The rebuild's control item (phase, generations, partitions done/total)."""
    return RebuildStatus.from_item(stack.store().get(CONTROL_PK, GENERATION_SK) or {})


def rebuild_progress(
    stack: DeployedStack, *, earlier: str | None = None
) -> Callable[[], Progress | None]:
    """The rebuild's progress from its control item; nothing while the item still tells
    of the ``earlier`` rebuild (the one before the execution being followed)."""

    def read() -> Progress | None:
        status = rebuild_status(stack)
        if status.rebuild_id is None or (earlier is not None and status.rebuild_id == earlier):
            return None
        return Progress(status.phase, status.partitions_done, status.partitions_total or None)

    return read


def start_rebuild(stack: DeployedStack, payload: dict[str, Any]) -> Execution:
    """Start the rebuild state machine; refused while a rebuild runs (deployed or not)."""
    status = rebuild_status(stack)
    if status.building is not None:
        raise RebuildInProgress(
            f"a rebuild is already running (building generation {status.building}, "
            f"phase {status.phase})"
        )
    return REBUILD.start(stack, payload)


@dataclass(frozen=True)
class AbortResult:
    stopped: list[Execution]
    status: RebuildStatus


def abort_rebuild(
    stack: DeployedStack,
    *,
    reason: str,
    wait: Callable[[], None],
    max_waits: int = 60,
) -> AbortResult:
    """Stop the running rebuild execution(s), then run the product's own abort step (the
    ops function's ``rebuild-abort``: the building generation is removed and dropped;
    the current one never stopped serving)."""
    executions = stack.executions(REBUILD.state_machine_output)
    running = executions.running()
    if not running and rebuild_status(stack).building is None:
        raise RebuildError("no rebuild is running")
    for execution in running:
        executions.stop(execution.arn, reason)
    stopped: list[Execution] = []
    for execution in running:
        current = executions.describe(execution.arn)
        for _ in range(max_waits):
            if current.finished:
                break
            wait()
            current = executions.describe(execution.arn)
        stopped.append(current)
    status = rebuild_status(stack)
    if status.building is not None:
        request = RebuildAbortInput(
            rebuild_id=status.rebuild_id, generation=status.building, error=reason
        )
        invoke(
            stack.client("lambda"),
            stack[OUTPUT_OPS_FUNCTION],
            {"action": ACTION_REBUILD_ABORT, **request.dump()},
        )
        status = rebuild_status(stack)
    return AbortResult(stopped=stopped, status=status)
