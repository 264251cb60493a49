"""Following an execution of a deployed job until it ends (no AWS SDK imported here).

:func:`follow` polls the execution's status and the job's own progress source
(rebuild: the control item's partitions done/total) and yields a snapshot each
time; the last one is the outcome. Every deployed job's command follows its
execution through it — reconcile and rebuild now, the deletion and restore jobs
later: a job only brings a ``describe`` and a ``progress`` callable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from video_index.core.errors import VideoIndexError

if TYPE_CHECKING:
    from video_index.aws.executions import Execution


@dataclass(frozen=True)
class Progress:
    """How far a job is: its phase and, where known, items done of a total."""

    phase: str
    done: int = 0
    total: int | None = None


@dataclass(frozen=True)
class Snapshot:
    execution: Execution
    progress: Progress | None


def follow(
    describe: Callable[[], Execution],
    progress: Callable[[], Progress | None],
    wait: Callable[[], None],
) -> Iterator[Snapshot]:
    """Snapshots of an execution until it has finished (the last one is the outcome).

    A progress read that fails (throttling, say) shows no progress this time; the
    execution's own status is what decides the end.
    """
    while True:
        execution = describe()
        try:
            current = progress()
        except VideoIndexError:
            current = None
        yield Snapshot(execution, current)
        if execution.finished:
            return
        wait()


def no_progress() -> Progress | None:
    return None
