"""The consoles commands write to: a terminal's width, or when piped or redirected one so
wide that no id, key or JSON line is ever wrapped (docs/cli.md#output)."""

from __future__ import annotations

import sys
from typing import Final

from rich.console import Console

#: The width of a console that is not a terminal: wide enough that nothing wraps.
PIPED_WIDTH: Final = 4096


def make_console(*, stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    return Console(stderr=stderr, width=PIPED_WIDTH, soft_wrap=True)
