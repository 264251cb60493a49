"""Where ``video-index local`` leaves its ready file, and how other commands find it.

``video-index local`` (and ``make demo``) writes the ready file at the default place
unless ``--ready-file PATH`` says another: ``$VIDEO_INDEX_READY_FILE`` when set, else
``$XDG_RUNTIME_DIR/video-index/ready.json``, else
``${XDG_CACHE_HOME:-~/.cache}/video-index/ready.json`` (docs/local.md#the-ready-file).

A command that takes ``--ready-file`` and is given no target at all (no ``--stack``,
``--table``, ``--queue-url``, ``--bucket``, ``--camera``, ``--in-process``, nor one of the variables
that name a target: ``VIDEO_INDEX_STACK``, ``VIDEO_INDEX_BUCKET``, ``VIDEO_INDEX_TABLE``,
``VIDEO_INDEX_HOLDS_TABLE``, ``VIDEO_INDEX_QUEUE_URL``) uses the ready file at the
default place when there is one. A ready file whose process is gone (a stack killed
without its shutdown) is said to be stale, never used.

Pure standard library: importing it reads no AWS configuration.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Final

from video_index.core.contract import (
    ENV_BUCKET,
    ENV_HOLDS_TABLE,
    ENV_QUEUE_URL,
    ENV_TABLE,
)
from video_index.core.errors import ConfigurationError

ENV_READY_FILE: Final = "VIDEO_INDEX_READY_FILE"
#: The variables that name a target, so a command given one of them never falls back
#: to the local stack (``VIDEO_INDEX_STACK`` is :data:`video_index.cli.targets.ENV_STACK`).
TARGET_VARIABLES: Final = (
    "VIDEO_INDEX_STACK",
    ENV_BUCKET,
    ENV_TABLE,
    ENV_HOLDS_TABLE,
    ENV_QUEUE_URL,
)
#: The options that name a target (their ``dest``), each of them blocking the fallback.
TARGET_OPTIONS: Final = (
    "stack",
    "table",
    "queue_url",
    "dlq_url",
    "bucket",
    "camera",
    "in_process",
)


def default_ready_file() -> Path:
    """The place ``video-index local`` writes its ready file when told none."""
    given = os.environ.get(ENV_READY_FILE)
    if given:
        return Path(given).expanduser()
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "video-index" / "ready.json"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "video-index" / "ready.json"


def writer_pid(path: Path) -> int | None:
    """The process that wrote the ready file (None for a file without ``pid``)."""
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pid = values.get("pid") if isinstance(values, dict) else None
    return pid if isinstance(pid, int) and not isinstance(pid, bool) else None


def running(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_reason(path: Path) -> str | None:
    """Why the ready file at ``path`` describes no running stack, or None when it does."""
    pid = writer_pid(path)
    if pid is None or running(pid):
        return None
    return (
        f"the ready file {path} was written by process {pid}, which is no longer running "
        "(a `video-index local` that did not stop cleanly): start `video-index local` "
        "again, or remove the file"
    )


def checked(path: Path) -> Path:
    """``path`` if it describes a running stack; else a ConfigurationError saying why."""
    if not path.exists():
        raise ConfigurationError(
            f"no ready file at {path}: is `video-index local` running? (`make demo` or "
            "`video-index local` writes it there)"
        )
    reason = stale_reason(path)
    if reason:
        raise ConfigurationError(reason)
    return path


def untargeted(args: argparse.Namespace) -> bool:
    """Whether the command line and the environment name no target at all."""
    if any(getattr(args, option, None) for option in TARGET_OPTIONS):
        return False
    return not any(os.environ.get(name) for name in TARGET_VARIABLES)


def resolve(args: argparse.Namespace) -> None:
    """Settle ``args.ready_file``: a given one checked; without any target, the default
    one when a stack left it there (checked too); else left None."""
    given: Path | None = args.ready_file
    if given is not None:
        args.ready_file = checked(given)
        return
    if not untargeted(args):
        return
    default = default_ready_file()
    if default.exists():
        args.ready_file = checked(default)


def missing_target_note() -> str:
    """What to add to a "no target" message: where the local stack's file was looked for."""
    return f"no running `video-index local` either (no ready file at {default_ready_file()})"
