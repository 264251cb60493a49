"""A long command's waits, said: what it waits for, how long at most, and a countdown.

On a terminal each wait is a bar that fills as the time passes (and stops early when
what it waits for has happened); elsewhere (a log, a pipe) one line when it starts and
one when it ends. Used by ``rebuild start`` in this process (the settle and the drop
grace, docs/operations.md#rebuild-on-the-local-stack).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Final

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn
from rich.text import Text

#: How often a wait looks whether what it waits for has happened, and redraws.
TICK_SECONDS: Final = 0.25


def countdown(
    console: Console,
    reasons: Mapping[str, str],
    done: Mapping[str, Callable[[], bool]] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Callable[[str, float], None]:
    """A wait ``(what, seconds)`` that says ``reasons[what]`` and counts down; it ends
    early once ``done[what]()`` is true."""
    finished = done or {}

    def wait(what: str, seconds: float) -> None:
        reason = reasons.get(what, what)
        ready = finished.get(what)
        started = clock()
        deadline = started + seconds
        limit = f"up to {seconds:.0f} s" if ready else f"{seconds:.0f} s"
        if not console.is_terminal:
            console.print(Text(f"waiting {limit}: {reason}"))
            _until(deadline, ready, clock, sleep, lambda left: None)
        else:
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[left]}"),
                console=console,
            ) as bar:
                task = bar.add_task(f"waiting {limit}: {reason}", total=seconds, left="")

                def show(left: float) -> None:
                    bar.update(task, completed=seconds - left, left=f"{left:.0f} s left")

                _until(deadline, ready, clock, sleep, show)
        if not console.is_terminal or ready:
            console.print(Text(f"waited {clock() - started:.1f} s: {reason}"))

    return wait


def _until(
    deadline: float,
    ready: Callable[[], bool] | None,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    show: Callable[[float], None],
) -> None:
    """Until the deadline, or until ``ready()``; ``show(seconds left)`` at every tick."""
    while (left := deadline - clock()) > 0 and not (ready and ready()):
        show(left)
        sleep(min(TICK_SECONDS, left))
