"""A measured run in a child process of its own, answering one JSON document.

Through a shell that forks: a process started straight from the benchmark inherits the
benchmark's peak RSS in its ``ru_maxrss`` (Linux keeps it across fork/vfork and exec),
while the grandchild of a small shell starts from the shell's, so the child's peak
memory is its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

from bench.context import BenchmarkFailed

ROOT: Final = Path(__file__).resolve().parent.parent


def run_child(module: str, mode: str, args: dict[str, Any], *, timeout_s: int) -> dict[str, Any]:
    """Run ``python -m module mode '{args..., "out": FILE}'`` and answer what it wrote to FILE."""
    handle, out = tempfile.mkstemp(prefix=f"{module.rsplit('.', 1)[-1]}-{mode}-", suffix=".json")
    os.close(handle)
    try:
        completed = subprocess.run(
            ["/bin/sh", "-c", '"$@"; exit $?', "sh", sys.executable, "-m", module, mode,
             json.dumps({**args, "out": out})],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )  # fmt: skip
        if completed.returncode != 0:
            raise BenchmarkFailed(
                f"the {mode} run of {module} failed (exit {completed.returncode}): "
                f"{completed.stderr.strip()[-2000:]}"
            )
        with open(out, encoding="utf-8") as result:
            loaded: dict[str, Any] = json.load(result)
            return loaded
    finally:
        os.unlink(out)
