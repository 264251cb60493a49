"""The "run as deployed" tests run on the Lambda runtime's Python or not at all
(worlds/lambda_env.py, docs/deployment.md#checked-as-deployed): a machine without it
gets an error saying how to get one, never a silent run on another interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from infra.dependencies import LAMBDA_PYTHON_VERSION
from worlds.lambda_env import ENV_LAMBDA_PYTHON, LambdaPythonMissing, find_python


def test_the_runtimes_python_is_found_on_this_machine() -> None:
    # Given this machine (CI and the developers' machines have pyenv's 3.13)
    # When the Lambda runtime's interpreter is looked for
    interpreter = find_python()
    # Then it is that version, not the one running the tests
    assert interpreter.minor == LAMBDA_PYTHON_VERSION == "3.13"


def test_without_the_runtimes_python_the_error_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a machine with no interpreter of the wanted version anywhere it looks
    monkeypatch.delenv(ENV_LAMBDA_PYTHON, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    # When it is looked for
    with pytest.raises(LambdaPythonMissing) as missing:
        find_python("3.99")
    # Then the error names the version, where it looked, and how to get one
    message = str(missing.value)
    assert "no Python 3.99" in message
    assert "pyenv install 3.99" in message
    assert ENV_LAMBDA_PYTHON in message
    assert str(tmp_path / "pyenv") in message


def test_a_named_interpreter_of_another_version_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the setting naming an interpreter that is not the wanted version
    monkeypatch.setenv(ENV_LAMBDA_PYTHON, sys.executable)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    # Then it is refused like no interpreter at all
    with pytest.raises(LambdaPythonMissing):
        find_python("3.99")
