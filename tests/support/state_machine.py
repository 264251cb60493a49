"""Plays a deployed state machine for tests: runs the *synthesized* definition, state by state.

moto records Step Functions executions but does not run JSONata definitions, so this
double does, with a JSONata engine (``jsonata-python``): the ``{% … %}`` expressions
of the definition CDK synthesized are evaluated as written — ``Arguments``,
``Output``, ``Assign``, ``Condition``, ``Catch`` — and each Lambda task calls the ops
function's real step (:func:`video_index.ops.steps.dispatch`) with the payload the
definition builds, through a JSON round trip as on the wire. A Distributed Map reads
its item list from S3, batches it with its ``ItemBatcher`` and writes its results as
the ``ResultWriter`` does (``manifest.json`` + ``SUCCEEDED_0.json``).

What it leaves out: retries (a step either works or fails), concurrency (batches run
one after another), timeouts. Each state, and each map batch, is one step of the
generator :meth:`StateMachineDouble.run`, so a test decides when the execution moves on.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonata

LambdaStep = Callable[[dict[str, Any]], Any]


class StateFailed(Exception):
    """A state failed with ``error`` and ``cause``, as Step Functions reports them."""

    def __init__(self, error: str, cause: str) -> None:
        super().__init__(f"{error}: {cause}")
        self.error = error
        self.cause = cause


@dataclass
class Outcome:
    status: str = "RUNNING"
    output: Any = None
    error: str | None = None
    cause: str | None = None


@dataclass
class StateMachineDouble:
    definition: dict[str, Any]
    #: The ops function: payload in, return value out (raises when the step raises).
    invoke: LambdaStep
    s3: Any
    #: ``${LogicalId}`` placeholders of the synthesized definition -> real names.
    placeholders: Mapping[str, str]
    #: Every Lambda payload, in order (what the definition handed to the function).
    invocations: list[dict[str, Any]] = field(default_factory=list)
    #: The states entered, in order.
    visited: list[str] = field(default_factory=list)

    def run(self, execution_input: Any) -> Generator[str, None, Outcome]:
        """Steps of one execution (yields state names); returns its outcome."""
        try:
            output = yield from self._machine(self.definition, execution_input, {})
        except StateFailed as failed:
            return Outcome("FAILED", error=failed.error, cause=failed.cause)
        return Outcome("SUCCEEDED", output=output)

    # -- expressions ---------------------------------------------------------------------

    def _value(self, value: Any, states: dict[str, Any], variables: dict[str, Any]) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("{%") and text.endswith("%}"):
                expression = jsonata.Jsonata(text[2:-2].strip())
                frame = expression.create_frame()
                frame.bind("states", states)
                for name, bound in variables.items():
                    frame.bind(name, bound)
                return _plain(expression.evaluate(None, frame))
            return self.placeholders.get(value, value)
        if isinstance(value, dict):
            return {k: self._value(v, states, variables) for k, v in value.items()}
        if isinstance(value, list):
            return [self._value(v, states, variables) for v in value]
        return value

    # -- states --------------------------------------------------------------------------

    def _machine(
        self, machine: dict[str, Any], value: Any, variables: dict[str, Any]
    ) -> Generator[str, None, Any]:
        name = machine["StartAt"]
        while True:
            state = machine["States"][name]
            self.visited.append(name)
            yield name
            states: dict[str, Any] = {"input": value}
            try:
                result = yield from self._state(state, states, variables)
            except StateFailed as failed:
                catcher = next(
                    (
                        c
                        for c in state.get("Catch", [])
                        if "States.ALL" in c["ErrorEquals"] or failed.error in c["ErrorEquals"]
                    ),
                    None,
                )
                if catcher is None:
                    raise
                states["errorOutput"] = {"Error": failed.error, "Cause": failed.cause}
                for var, expression in catcher.get("Assign", {}).items():
                    variables[var] = self._value(expression, states, variables)
                value = self._value(
                    catcher.get("Output", "{% $states.errorOutput %}"), states, variables
                )
                name = catcher["Next"]
                continue
            if state["Type"] == "Choice":
                name = result
                continue
            if state["Type"] in ("Task", "Map"):
                states["result"] = result
            assignments = {
                var: self._value(expression, states, variables)
                for var, expression in state.get("Assign", {}).items()
            }
            default = "{% $states.input %}" if state["Type"] == "Pass" else "{% $states.result %}"
            value = self._value(state.get("Output", default), states, variables)
            variables.update(assignments)
            if state.get("End") or state["Type"] == "Succeed":
                return value
            name = state["Next"]

    def _state(
        self, state: dict[str, Any], states: dict[str, Any], variables: dict[str, Any]
    ) -> Generator[str, None, Any]:
        kind = state["Type"]
        if kind in ("Pass", "Succeed", "Wait"):  # a Wait is played without waiting
            return None
        if kind == "Fail":
            raise StateFailed(
                str(self._value(state.get("Error", "States.Failed"), states, variables)),
                str(self._value(state.get("Cause", ""), states, variables)),
            )
        if kind == "Choice":
            for choice in state["Choices"]:
                if self._value(choice["Condition"], states, variables):
                    return choice["Next"]
            return state["Default"]
        if kind == "Task":
            return self._lambda(self._value(state["Arguments"], states, variables))
        if kind == "Map":
            return (yield from self._distributed_map(state, states, variables))
        raise AssertionError(f"the double does not play {kind} states")

    def _lambda(self, arguments: dict[str, Any]) -> dict[str, Any]:
        payload = json.loads(json.dumps(arguments["Payload"]))
        self.invocations.append(payload)
        try:
            result = self.invoke(payload)
        except Exception as exc:  # the function raised: Lambda reports its type and message
            error = type(exc).__name__
            raise StateFailed(
                error, json.dumps({"errorMessage": str(exc), "errorType": error})
            ) from exc
        return {"Payload": json.loads(json.dumps(result, default=str)), "StatusCode": 200}

    def _distributed_map(
        self, state: dict[str, Any], states: dict[str, Any], variables: dict[str, Any]
    ) -> Generator[str, None, Any]:
        reader = self._value(state["ItemReader"]["Arguments"], states, variables)
        items = json.loads(
            self.s3.get_object(Bucket=reader["Bucket"], Key=reader["Key"])["Body"].read()
        )
        batcher = state["ItemBatcher"]
        size = int(batcher["MaxItemsPerBatch"])
        batch_input = self._value(batcher.get("BatchInput", {}), states, variables)
        succeeded: list[dict[str, Any]] = []
        failed = 0
        for start in range(0, len(items), size):
            child = {"Items": items[start : start + size], "BatchInput": batch_input}
            # A child execution: its own variables (a Distributed Map's children see none).
            try:
                output = yield from self._machine(state["ItemProcessor"], child, {})
            except StateFailed:
                failed += 1
                continue
            succeeded.append({"Output": json.dumps(output), "Status": "SUCCEEDED"})
        batches = max(1, -(-len(items) // size))
        if failed * 100 > batches * float(state.get("ToleratedFailurePercentage", 0)):
            raise StateFailed(
                "States.ExceedToleratedFailureThreshold", f"{failed} of {batches} batches failed"
            )
        writer = self._value(state["ResultWriter"]["Arguments"], states, variables)
        folder = f"{writer['Prefix']}{uuid.uuid4()}/"
        results_key = f"{folder}SUCCEEDED_0.json"
        self.s3.put_object(Bucket=writer["Bucket"], Key=results_key, Body=json.dumps(succeeded))
        manifest = {
            "DestinationBucket": writer["Bucket"],
            "ResultFiles": {"SUCCEEDED": [{"Key": results_key}], "FAILED": [], "PENDING": []},
        }
        manifest_key = f"{folder}manifest.json"
        self.s3.put_object(Bucket=writer["Bucket"], Key=manifest_key, Body=json.dumps(manifest))
        return {"ResultWriterDetails": {"Bucket": writer["Bucket"], "Key": manifest_key}}


def _plain(value: Any) -> Any:
    """The JSONata engine's lists and maps as plain JSON values."""
    return json.loads(json.dumps(value)) if value is not None else None
