"""Refresh the locks on purpose: ``make lock`` (docs/installs.md).

Every install of the project reads a lock with exact versions and hashes; nothing is
resolved on the day a machine is set up. This script is the one way the locks change:

* ``dev.lock``: ``pyproject.toml``'s dependencies and its ``dev`` extra, resolved by
  uv for every platform and every Python the project supports (``--universal``);
* ``tools.lock``: uv itself, the installer ``make install`` bootstraps with pip;
* ``lambda-assets.lock``: the packages the Lambda assets carry, at the versions
  ``infra/dependencies.py`` names (the versions are chosen there; the lock adds the
  hashes of every wheel of those versions, so an arm64 asset and the same asset built
  for the test machine check the same list);
* ``lambda-runtime.lock``: the Lambda-like test environment: the pinned Powertools
  layer's release with what PyPI offered when the layer was built, and the newest AWS
  SDK (the runtime's, which AWS keeps recent);
* ``npm/package-lock.json``: the npm packages of ``npm/package.json``, with integrity.

Each Python lock starts with the SHA-256 of its inputs, so ``tests/test_locks.py`` notices
an input changed without the lock. Afterwards it prints what changed, package by package.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

HERE: Final = Path(__file__).resolve().parent
ROOT: Final = HERE.parent
sys.path[:0] = [str(ROOT), str(ROOT / "functions")]

from infra.dependencies import (  # noqa: E402 - after the path above
    FUNCTIONS,
    LAMBDA_GLIBC,
    LAMBDA_MACHINE,
    LAMBDA_PYTHON_VERSION,
    POWERTOOLS_LAYERS,
    RUNTIME_REQUIREMENTS,
)
from infra.locks import (  # noqa: E402
    ASSETS_LOCK,
    DEV_LOCK,
    INPUTS_LINE,
    RUNTIME_LOCK,
    TOOLS_LOCK,
    entry,
    pins,
)

#: The oldest Python the project supports (``requires-python``): the universal resolution's floor.
OLDEST_PYTHON: Final = "3.11"

NPM_DIR: Final = ROOT / "npm"


def digest(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def dev_inputs() -> str:
    """What ``dev.lock`` is resolved from: the dependency lists of ``pyproject.toml``."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return json.dumps(
        {"dependencies": project["dependencies"], "dev": project["optional-dependencies"]["dev"]},
        sort_keys=True,
    )


def asset_requirements() -> list[str]:
    """``name==version`` of every package an asset carries (``infra/dependencies.py``)."""
    return sorted({p.requirement for f in FUNCTIONS for p in f.packages})


def runtime_requirements() -> tuple[list[str], str]:
    """The Lambda-like environment's requirements and the layer's build time."""
    (layer,) = POWERTOOLS_LAYERS.values()
    return [layer.requirement, *RUNTIME_REQUIREMENTS], layer.built


def _compile(lock: Path, inputs: str, scratch: Path, keep: bool, *args: str) -> None:
    """``uv pip compile *args`` into ``lock``, headed by the digest of ``inputs``. With
    ``keep``, the lock's current pins are kept wherever they still satisfy the inputs (uv
    prefers what its output file pins); without, everything moves to the newest allowed."""
    out = scratch / lock.name
    out.write_text(lock.read_text() if keep and lock.is_file() else "")
    options = ["--generate-hashes", "--custom-compile-command", "make lock"]
    options += [] if keep else ["--upgrade"]
    uv = Path(sys.executable).with_name("uv")
    command = [str(uv), "--quiet", "pip", "compile", *args, *options, "-o", str(out)]
    subprocess.run(command, check=True, cwd=ROOT)
    lock.write_text(f"{INPUTS_LINE}{digest(inputs)}\n{out.read_text()}")


def refresh_python(scratch: Path, keep: bool) -> None:
    dev = ("pyproject.toml", "--extra", "dev", "--universal", "--python-version", OLDEST_PYTHON)
    _compile(DEV_LOCK, dev_inputs(), scratch, keep, *dev)
    TOOLS_LOCK.write_text(
        f"# uv, as dev.lock pins it: the installer make install bootstraps\n{entry(DEV_LOCK, 'uv')}"
    )
    assets_in = scratch / "assets.in"
    assets_in.write_text("\n".join(asset_requirements()) + "\n")
    platform = f"{LAMBDA_MACHINE}-manylinux_{LAMBDA_GLIBC[0]}_{LAMBDA_GLIBC[1]}"
    assets = (str(assets_in), "--python-version", LAMBDA_PYTHON_VERSION, "--no-deps")
    _compile(ASSETS_LOCK, "\n".join(asset_requirements()), scratch, keep,
             *assets, "--python-platform", platform)  # fmt: skip
    requirements, built = runtime_requirements()
    runtime_in = scratch / "runtime.in"
    runtime_in.write_text("\n".join(requirements) + "\n")
    today = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    newest = [f"--exclude-newer-package={n}={today}" for n in ("boto3", "botocore", "s3transfer")]
    runtime = (str(runtime_in), "--universal", "--python-version", LAMBDA_PYTHON_VERSION)
    _compile(RUNTIME_LOCK, "\n".join([*requirements, built]), scratch, keep,
             *runtime, "--exclude-newer", built, *newest)  # fmt: skip


def refresh_npm(keep: bool) -> None:
    if not keep:
        (NPM_DIR / "package-lock.json").unlink(missing_ok=True)
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--no-audit", "--no-fund", "--silent"],
        check=True,
        cwd=NPM_DIR,
    )


def npm_pins() -> dict[tuple[str, str], str]:
    lock = NPM_DIR / "package-lock.json"
    if not lock.is_file():
        return {}
    packages = json.loads(lock.read_text())["packages"]
    return {(path, "npm"): entry["version"] for path, entry in packages.items() if path}


def changes(before: dict[tuple[str, str], str], after: dict[tuple[str, str], str]) -> Iterable[str]:
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old != new:
            where = f" ({key[1]})" if key[1] else ""
            yield f"  {key[0]}{where}: {old or '-'} -> {new or '-'}"


def main(argv: list[str]) -> int:
    """``--keep``: lock a changed input keeping every other pin (``make lock KEEP=1``)."""
    keep = "--keep" in argv
    locks = (DEV_LOCK, ASSETS_LOCK, RUNTIME_LOCK)
    before = {lock.name: pins(lock) for lock in locks}
    npm_before = npm_pins()
    with tempfile.TemporaryDirectory() as scratch:
        refresh_python(Path(scratch), keep)
    refresh_npm(keep)
    for lock in locks:
        changed = list(changes(before[lock.name], pins(lock)))
        print(f"{lock.name}: {len(changed) or 'no'} change(s)")
        if changed:
            print("\n".join(changed))
    changed = list(changes(npm_before, npm_pins()))
    print(f"npm/package-lock.json: {len(changed) or 'no'} change(s)")
    if changed:
        print("\n".join(changed))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
