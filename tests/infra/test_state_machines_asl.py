"""The synthesized state machine definitions, checked by a real Amazon States Language
validator (the npm package ``asl-validator``, installed by ``make install``).

cfn-lint only sees the definitions as strings inside the template; this reads them
back as JSON (intrinsics replaced by plausible values: ARNs for ``Fn::GetAtt …Arn``,
names for ``Ref``, the pseudo parameters of us-east-1) and validates each against the
States Language schemas, JSONata states included.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from constructs import IConstruct

from tests.infra.template import Synth

ROOT = Path(__file__).resolve().parents[2]
#: Where ``make install`` puts the npm tools (``ASL_VALIDATOR`` overrides it).
VALIDATOR = Path(
    os.environ.get(
        "ASL_VALIDATOR", ROOT / ".cache" / "npm" / "node_modules" / ".bin" / "asl-validator"
    )
)
PSEUDO = {
    "AWS::Partition": "aws",
    "AWS::Region": "us-east-1",
    "AWS::AccountId": "123456789012",
    "AWS::URLSuffix": "amazonaws.com",
}


def _concrete(synth: Synth, state_machine: IConstruct) -> str:
    """The definition as JSON text with every placeholder replaced by a concrete value."""
    text = json.dumps(synth.definition(state_machine))
    for name, value in PSEUDO.items():
        text = text.replace("${" + name + "}", value)
    text = re.sub(
        r"\$\{([A-Za-z0-9]+)\.Arn\}", r"arn:aws:lambda:us-east-1:123456789012:function:\1", text
    )
    return re.sub(r"\$\{([A-Za-z0-9]+)\}", lambda m: m.group(1).lower(), text)


def _validate(*paths: Path) -> subprocess.CompletedProcess[str]:
    assert VALIDATOR.exists(), (
        f"asl-validator is not installed at {VALIDATOR}: run `make install` "
        "(npm install --prefix .cache/npm asl-validator)"
    )
    arguments = [arg for path in paths for arg in ("--json-path", str(path))]
    return subprocess.run([str(VALIDATOR), *arguments], capture_output=True, text=True, timeout=120)


def test_reconcile_and_rebuild_definitions_are_valid_states_language(
    synth: Synth, tmp_path: Path
) -> None:
    # Given both synthesized definitions, as JSON files
    reconcile = synth.stack.reconcile  # type: ignore[attr-defined]
    paths = []
    for state_machine in (reconcile.reconcile_state_machine, reconcile.rebuild_state_machine):
        path = tmp_path / f"{synth.logical_id(state_machine)}.json"
        path.write_text(_concrete(synth, state_machine))
        paths.append(path)
    # When the States Language validator checks them
    result = _validate(*paths)
    # Then both are valid
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("is valid") == 2, result.stdout


def test_the_validator_rejects_a_broken_definition(synth: Synth, tmp_path: Path) -> None:
    # Given the reconcile definition with one state pointing at a state that does not exist
    # (the control that shows the validator looks at the definitions at all)
    definition = json.loads(_concrete(synth, synth.stack.reconcile.reconcile_state_machine))  # type: ignore[attr-defined]
    definition["States"]["Defaults"]["Next"] = "NoSuchState"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(definition))
    # When it is validated
    result = _validate(path)
    # Then it is refused, naming the problem
    assert result.returncode == 1, result.stdout + result.stderr
    assert "NoSuchState" in result.stdout + result.stderr


@pytest.mark.parametrize("field", ["InputPath", "ResultPath"])
def test_the_validator_knows_jsonata_states(synth: Synth, tmp_path: Path, field: str) -> None:
    # Given the reconcile definition with a JSONPath-only field in a JSONata state
    definition = json.loads(_concrete(synth, synth.stack.reconcile.reconcile_state_machine))  # type: ignore[attr-defined]
    definition["States"]["Plan"][field] = "$.x"
    path = tmp_path / "jsonpath-in-jsonata.json"
    path.write_text(json.dumps(definition))
    # When it is validated, then it is refused
    assert _validate(path).returncode == 1
