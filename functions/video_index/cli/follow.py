"""Following a deployed execution on the terminal: a progress bar, then the outcome.

The progress bar is fed by the job's progress source (rebuild: the control item's
partitions done/total) and the execution's status; on a terminal it is a rich bar,
elsewhere (a log, a pipe) one line per change. Ctrl-C detaches: the execution keeps
running, and the command says so and how to come back. Every deployed job's command
follows its execution through :func:`follow_execution` (reconcile, rebuild, and the
deletion and restore jobs to come).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM
from video_index.ops.follow import Progress as JobProgress
from video_index.ops.follow import Snapshot, follow

if TYPE_CHECKING:
    from video_index.aws.executions import Execution


def pause(seconds: float) -> None:
    """Wait between two polls (the seam tests replace)."""
    time.sleep(seconds)


@dataclass(frozen=True)
class Following:
    """What to follow and how to tell the operator about it."""

    job: str
    execution: Execution
    describe: Callable[[], Execution]
    progress: Callable[[], JobProgress | None]
    interval: float
    #: The commands that come back to the execution, or stop it (said when detaching).
    follow_again: str
    stop: str


def _describe(snapshot: Snapshot, job: str) -> str:
    text = f"{job} {snapshot.execution.status.lower()}"
    if snapshot.progress is not None:
        text += f" · {snapshot.progress.phase}"
    return text


def _line(snapshot: Snapshot, job: str) -> str:
    text = _describe(snapshot, job)
    progress = snapshot.progress
    if progress is not None and progress.total:
        text += f" · {progress.done}/{progress.total} partitions"
    return text


def follow_execution(console: Console, following: Following) -> Snapshot | None:
    """Follow until the execution has finished: its last snapshot; ``None`` when the
    operator detached with Ctrl-C (the execution was not stopped; said so)."""
    console.print(
        Text(f"following {following.job} execution {following.execution.arn}"), soft_wrap=True
    )
    snapshots = follow(following.describe, following.progress, lambda: pause(following.interval))
    last: Snapshot | None = None
    try:
        if console.is_terminal:
            with Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("partitions"),
                TimeElapsedColumn(),
                console=console,
            ) as bar:
                task = bar.add_task(following.job, total=None)
                for last in snapshots:
                    progress = last.progress
                    bar.update(
                        task,
                        description=_describe(last, following.job),
                        total=progress.total if progress and progress.total else None,
                        completed=progress.done if progress else 0,
                    )
        else:
            shown = ""
            for last in snapshots:
                line = _line(last, following.job)
                if line != shown:
                    console.print(Text(line))
                    shown = line
    except KeyboardInterrupt:
        console.print(
            Text(
                f"detached: the {following.job} execution keeps running (it was not "
                f"stopped).\n  follow it again: {following.follow_again}\n"
                f"  stop it:         {following.stop}",
                style="yellow",
            ),
            soft_wrap=True,
        )
        return None
    return last


def outcome(console: Console, job: str, execution: Execution) -> int:
    """Exit code of a finished execution; a failed one is printed with its error."""
    if execution.succeeded:
        return EXIT_OK
    reason = ": ".join(part for part in (execution.error, execution.cause) if part)
    console.print(
        Text(
            f"problem: the {job} execution {execution.status.lower()}"
            + (f": {reason}" if reason else "")
            + f"\n  execution: {execution.arn}",
            style="red",
        ),
        soft_wrap=True,
    )
    return EXIT_PROBLEM
