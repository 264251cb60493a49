"""The stack outputs ops tools read (``--stack NAME``), and the execution inputs the state
machines read: the CLI and the template must agree on both (docs/operations.md)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.infra.template import Synth
from video_index.bulk.names import OUTPUT_BULK_DELETE_STATE_MACHINE
from video_index.core import contract
from video_index.ops.jobs import REBUILD, RECONCILE, Job


def test_the_stack_outputs_everything_ops_tools_need_under_the_contracts_keys(
    synth: Synth,
) -> None:
    # Given the synthesized template's outputs
    outputs = synth.template.to_json()["Outputs"]
    stack = synth.video_index
    # Then every output the ops commands need is there, under the contract's key
    assert set(contract.OPS_OUTPUTS) <= set(outputs)
    assert set(outputs) == {
        *contract.OPS_OUTPUTS,
        contract.OUTPUT_API_URL,
        contract.OUTPUT_ANNOTATIONS_TABLE,
        contract.OUTPUT_DELETIONS_TABLE,
        contract.OUTPUT_AGGREGATE_FUNCTION,
        OUTPUT_BULK_DELETE_STATE_MACHINE,
        contract.OUTPUT_AGGREGATION_DLQ_URL,
        contract.OUTPUT_HOLDS_TABLE,
        contract.OUTPUT_SHARES_TABLE,
        contract.OUTPUT_CAMERA_ROLE_ALIAS,
        contract.OUTPUT_CAMERA_IOT_POLICY,
    }
    # And each points at the resource ops tools use
    values = {key: output["Value"] for key, output in outputs.items()}
    assert values[contract.OUTPUT_RECONCILE_STATE_MACHINE] == synth.ref(
        stack.reconcile.reconcile_state_machine
    )
    assert values[contract.OUTPUT_REBUILD_STATE_MACHINE] == synth.ref(
        stack.reconcile.rebuild_state_machine
    )
    assert values[contract.OUTPUT_OPS_FUNCTION] == synth.ref(stack.reconcile.function)
    assert values[contract.OUTPUT_BUCKET] == synth.ref(stack.storage.bucket)
    assert values[contract.OUTPUT_REPORTS_BUCKET] == synth.ref(stack.storage.reports_bucket)
    assert values[contract.OUTPUT_TABLE] == synth.ref(stack.read_model.table)
    assert values[contract.OUTPUT_QUEUE_URL] == synth.ref(stack.ingest.queue)  # Ref = URL
    assert values[contract.OUTPUT_DLQ_URL] == synth.ref(stack.ingest.dead_letter_queue)
    # And the inventory destination is the one the ops function looks under
    function_env = synth.props(stack.reconcile.function)["Environment"]["Variables"]
    assert (
        values[contract.OUTPUT_INVENTORY_DESTINATION]
        == function_env[contract.ENV_INVENTORY_DESTINATION]
    )
    for output in outputs.values():
        assert output["Description"]


def _defaults(definition: dict[str, Any]) -> dict[str, Any]:
    """The literal the first state merges the execution input onto."""
    first = definition["States"][definition["StartAt"]]
    match = re.fullmatch(r"\{% \$merge\(\[(.*), \$states\.input\]\) %\}", first["Output"])
    assert match, first
    defaults: dict[str, Any] = json.loads(match.group(1))
    return defaults


@pytest.mark.parametrize("job", [RECONCILE, REBUILD], ids=lambda job: job.name)
def test_each_jobs_input_model_is_what_its_definition_fills_in(synth: Synth, job: Job) -> None:
    # Given the job's state machine as synthesized
    machines = synth.video_index.reconcile
    machine = {
        RECONCILE.name: machines.reconcile_state_machine,
        REBUILD.name: machines.rebuild_state_machine,
    }[job.name]
    defaults = _defaults(synth.definition(machine))
    # Then the definition fills in exactly the fields of the payload model the CLI builds
    assert set(defaults) == set(job.input_model.model_fields)
    # And with the same defaults: an empty input means the same to both
    assert defaults == job.input_model().dump()
    # And what the CLI sends for the defaults is nothing the definition would not fill in
    assert set(job.execution_input()) <= set(defaults)
