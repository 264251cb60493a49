"""Exit codes of every ``video-index`` command, and the one mapping of errors to them.

* 0 — done;
* 1 — the command ran and found a problem (an invalid key, a conflict, a refused or
  failed job, an unhealthy stack);
* 2 — bad usage or configuration (the message names the argument or setting);
* 3 — AWS (or the local stack) unavailable or refusing: retry later or check access.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from rich.console import Console
from rich.text import Text

from video_index.core.errors import (
    BadInput,
    ConfigurationError,
    PreconditionRequired,
    ServiceError,
    VideoIndexError,
)

EXIT_OK: Final = 0
EXIT_PROBLEM: Final = 1
EXIT_USAGE: Final = 2
EXIT_UNAVAILABLE: Final = 3


def exit_code_of(error: BaseException) -> int:
    """The exit code an error ends a command with."""
    from botocore.exceptions import BotoCoreError, ClientError  # not at import: CLI stays light

    if isinstance(error, BadInput | ConfigurationError | PreconditionRequired):
        return EXIT_USAGE
    if isinstance(error, ServiceError | ClientError | BotoCoreError):
        return EXIT_UNAVAILABLE
    return EXIT_PROBLEM


def guarded(console: Console, action: Callable[[], int]) -> int:
    """Run ``action``; a product error (or an AWS error no adapter mapped) is printed
    with its reason and ends the command with its exit code."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return action()
    except (VideoIndexError, ClientError, BotoCoreError) as exc:
        code = exit_code_of(exc)
        label = {EXIT_USAGE: "error", EXIT_UNAVAILABLE: "unavailable"}.get(code, "problem")
        console.print(Text(f"{label}: {exc}", style="red"))
        return code
