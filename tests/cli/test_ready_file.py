"""Where the local stack's ready file is by default, and when a command uses it by itself
(docs/cli.md#finding-the-local-stack). The running stack end to end: test_operator_day.py."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from video_index.cli.ready import default_ready_file, resolve
from video_index.core.errors import ConfigurationError

TARGET_VARIABLES = (
    "VIDEO_INDEX_STACK",
    "VIDEO_INDEX_BUCKET",
    "VIDEO_INDEX_TABLE",
    "VIDEO_INDEX_HOLDS_TABLE",
    "VIDEO_INDEX_QUEUE_URL",
)


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in ("VIDEO_INDEX_READY_FILE", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME", *TARGET_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return monkeypatch


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({}, "home/.cache/video-index/ready.json"),
        ({"XDG_CACHE_HOME": "cache"}, "cache/video-index/ready.json"),
        ({"XDG_RUNTIME_DIR": "run", "XDG_CACHE_HOME": "cache"}, "run/video-index/ready.json"),
        ({"VIDEO_INDEX_READY_FILE": "mine.json", "XDG_RUNTIME_DIR": "run"}, "mine.json"),
    ],
)
def test_the_default_place_follows_the_documented_order(
    clean: pytest.MonkeyPatch, tmp_path: Path, variables: dict[str, str], expected: str
) -> None:
    for name, value in variables.items():
        clean.setenv(name, str(tmp_path / value))
    assert default_ready_file() == tmp_path / expected


def _args(**given: object) -> argparse.Namespace:
    return argparse.Namespace(**{"ready_file": None, "stack": None, "table": None, **given})


def _ready(path: Path, pid: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": pid}))
    return path


def test_a_command_without_a_target_uses_the_running_stacks_file(
    clean: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Given a running stack's file at the default place (this process stands in for it)
    path = _ready(tmp_path / "ready.json", pid=os.getpid())
    clean.setenv("VIDEO_INDEX_READY_FILE", str(path))
    # Then a command given no target uses it
    args = _args()
    resolve(args)
    assert args.ready_file == path
    # But not one given a target, by an option or a variable
    for given in (_args(stack="prod"), _args(table="holds")):
        resolve(given)
        assert given.ready_file is None
    for name in TARGET_VARIABLES:
        clean.setenv(name, "x")
        args = _args()
        resolve(args)
        assert args.ready_file is None, name
        clean.delenv(name)


def test_a_stale_file_is_said_never_used(clean: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Given a file left by a process that has ended
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(ended.stdout)
    path = _ready(tmp_path / "ready.json", pid)
    clean.setenv("VIDEO_INDEX_READY_FILE", str(path))
    # Then found by itself or given, it is refused, naming the process
    for args in (_args(), _args(ready_file=path)):
        with pytest.raises(ConfigurationError, match=f"process {pid}, which is no longer running"):
            resolve(args)


def test_a_given_file_that_is_not_there_says_what_to_run(
    clean: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(ConfigurationError, match="is `video-index local` running"):
        resolve(_args(ready_file=tmp_path / "nothing.json"))
