"""Reading the locks (``requirements/*.lock``, docs/installs.md): what every install uses.

The locks are requirements files as uv writes them: ``name==version`` (with an
environment marker where the universal resolution forks) followed by a ``--hash`` line
per file of that version. :mod:`infra.assets` installs each asset package from its entry
with ``--require-hashes``; ``requirements/refresh.py`` and ``tests/test_locks.py`` read
them too. Nothing here resolves anything: locks change only by ``make lock``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

LOCKS_DIR: Final = Path(__file__).resolve().parent.parent / "requirements"
DEV_LOCK: Final = LOCKS_DIR / "dev.lock"
TOOLS_LOCK: Final = LOCKS_DIR / "tools.lock"
#: The packages the Lambda assets carry (versions chosen in :mod:`infra.dependencies`).
ASSETS_LOCK: Final = LOCKS_DIR / "lambda-assets.lock"
#: The Lambda-like test environment: the runtime's SDK and the Powertools layer.
RUNTIME_LOCK: Final = LOCKS_DIR / "lambda-runtime.lock"
#: First line of a Python lock: the SHA-256 of what it was resolved from.
INPUTS_LINE: Final = "# inputs-sha256: "

_PIN: Final = re.compile(
    r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;\\]+)(?:\s*;\s*([^\\]+?))?\s*\\?$"
)


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock: Path) -> dict[tuple[str, str], str]:
    """``(normalized name, environment marker or "") -> version`` of every entry of ``lock``."""
    found: dict[tuple[str, str], str] = {}
    if not lock.is_file():
        return found
    for line in lock.read_text().splitlines():
        match = _PIN.match(line.strip())
        if match:
            found[(normalize(match.group(1)), (match.group(3) or "").strip())] = match.group(2)
    return found


def entry(lock: Path, name: str) -> str:
    """The lines of ``name``'s entry in ``lock``: its pin and its hashes, as a requirements file."""
    lines = lock.read_text().splitlines()
    wanted = normalize(name)
    for start, line in enumerate(lines):
        match = _PIN.match(line.strip())
        if match and normalize(match.group(1)) == wanted:
            end = start + 1
            while end < len(lines) and lines[end].lstrip().startswith("--hash"):
                end += 1
            return "\n".join(lines[start:end]).rstrip(" \\") + "\n"
    raise KeyError(f"{name} is not in {lock.name}: run make lock")


def recorded_inputs(lock: Path) -> str | None:
    """The inputs digest ``make lock`` wrote on the lock's first line (None without one)."""
    first = lock.read_text().splitlines()[0] if lock.is_file() else ""
    return first[len(INPUTS_LINE) :].strip() if first.startswith(INPUTS_LINE) else None
