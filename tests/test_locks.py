"""The locks and what is installed agree (docs/installs.md).

Every install reads a lock: ``make install`` the Python packages of ``requirements/dev.lock``
(checked against their hashes) and the npm packages of ``npm/package-lock.json``; the
Lambda assets and the Lambda-like environment their own locks. These tests notice an input
that changed without ``make lock`` (pyproject's requirements, the asset packages of
``infra/dependencies.py``, the Powertools layer), a lock that does not satisfy its input,
and an environment that holds anything else than its lock.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Final

from packaging.markers import Marker
from packaging.requirements import Requirement

from infra.dependencies import FUNCTIONS, POWERTOOLS_LAYERS, RUNTIME_REQUIREMENTS
from infra.locks import (
    ASSETS_LOCK,
    DEV_LOCK,
    RUNTIME_LOCK,
    TOOLS_LOCK,
    normalize,
    pins,
    recorded_inputs,
)

ROOT: Final = Path(__file__).resolve().parents[1]
NPM: Final = ROOT / "npm"
NPM_INSTALLED: Final = ROOT / ".cache" / "npm" / "node_modules"
#: Installed in the venv beside the lock: the installer venv makes, and the project itself.
NOT_LOCKED: Final = {"pip", "video-index"}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _project() -> dict[str, list[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {"dependencies": project["dependencies"], "dev": project["optional-dependencies"]["dev"]}


def _here(locked: dict[tuple[str, str], str]) -> dict[str, str]:
    """The entries of a lock that apply to this interpreter and platform: name -> version."""
    applies = {key: v for key, v in locked.items() if not key[1] or Marker(key[1]).evaluate()}
    return {name: version for (name, _), version in applies.items()}


def test_the_dev_lock_was_made_from_pyprojects_requirements_as_they_are() -> None:
    # Given pyproject.toml's dependency lists, as `make lock` fingerprints them
    inputs = json.dumps(_project(), sort_keys=True)
    # Then the lock records exactly that fingerprint: a requirement changed without `make lock`
    # fails here
    assert recorded_inputs(DEV_LOCK) == _sha256(inputs), "pyproject.toml changed: run make lock"


def test_every_requirement_of_pyproject_is_satisfied_by_the_lock() -> None:
    locked = _here(pins(DEV_LOCK))
    for text in (*_project()["dependencies"], *_project()["dev"]):
        requirement = Requirement(text)
        # Then each requirement has a pin, and the pin is inside its bounds
        version = locked.get(normalize(requirement.name))
        assert version is not None, f"{requirement.name} is not in dev.lock"
        assert requirement.specifier.contains(version, prereleases=True), (text, version)


def test_the_environment_holds_exactly_the_dev_lock() -> None:
    # Given what this interpreter has installed
    installed = {normalize(d.metadata["Name"]): d.version for d in metadata.distributions()}
    locked = _here(pins(DEV_LOCK))
    # Then every locked package is installed at its locked version, and nothing else is there
    assert {n: installed.get(n) for n in locked} == locked
    assert set(installed) - set(locked) <= NOT_LOCKED, "installed without the lock"


def test_the_bootstrap_installer_is_the_one_the_dev_lock_pins() -> None:
    assert pins(TOOLS_LOCK) == {("uv", ""): pins(DEV_LOCK)[("uv", "")]}


def test_every_python_lock_entry_carries_hashes() -> None:
    for lock in (DEV_LOCK, TOOLS_LOCK, ASSETS_LOCK, RUNTIME_LOCK):
        text = lock.read_text()
        entries = re.findall(r"^\S+==\S+.*$", text, flags=re.M)
        hashed = re.findall(r"^\S+==\S+.*\\\n\s+--hash=sha256:[0-9a-f]{64}", text, flags=re.M)
        assert entries and len(hashed) == len(entries), lock.name


def test_the_assets_lock_pins_exactly_the_packages_the_assets_carry() -> None:
    # Given the packages infra/dependencies.py puts into the assets
    carried = sorted({p.requirement for f in FUNCTIONS for p in f.packages})
    # Then the lock was made from that list, and pins each at its version and nothing more
    assert recorded_inputs(ASSETS_LOCK) == _sha256("\n".join(carried)), "run make lock"
    assert {f"{n}=={v}" for (n, _), v in pins(ASSETS_LOCK).items()} == set(carried)


def test_the_runtime_lock_is_the_layers_release_and_the_runtimes_sdk() -> None:
    ((_, layer),) = POWERTOOLS_LAYERS.items()
    requirements = [layer.requirement, *RUNTIME_REQUIREMENTS]
    assert recorded_inputs(RUNTIME_LOCK) == _sha256("\n".join([*requirements, layer.built]))
    locked = pins(RUNTIME_LOCK)
    assert locked[("aws-lambda-powertools", "")] == layer.release
    assert {("boto3", ""), ("botocore", ""), ("pydantic", "")} <= set(locked)
    # And nothing an asset brings itself
    assert not {n for n, _ in locked} & {"av", "numpy", "pyarrow", "tzdata"}


def test_the_npm_lock_pins_the_declared_packages_with_integrity() -> None:
    declared = json.loads((NPM / "package.json").read_text())["dependencies"]
    lock = json.loads((NPM / "package-lock.json").read_text())
    packages = lock["packages"]
    # Then the lock's root declares the same exact versions, each package is pinned with a
    # sha512 integrity, and the top-level packages are at the declared versions
    assert packages[""]["dependencies"] == declared
    for path, entry in packages.items():
        if path:
            assert entry["version"] and entry["integrity"].startswith("sha512-"), path
    for name, version in declared.items():
        assert packages[f"node_modules/{name}"]["version"] == version


def test_the_installed_npm_packages_are_the_locked_ones() -> None:
    # Given what `make install` put into .cache/npm (npm ci from the lock)
    packages = json.loads((NPM / "package-lock.json").read_text())["packages"]
    locked = {path: entry["version"] for path, entry in packages.items() if path}
    installed = {
        path: json.loads((NPM_INSTALLED.parent / path / "package.json").read_text())["version"]
        for path in locked
    }
    # Then each locked package is there at its version, and no other package is
    assert installed == locked
    top = {f"node_modules/{p.name}" for p in NPM_INSTALLED.iterdir() if not p.name.startswith(".")}
    top = {t for t in top if not t.startswith("node_modules/@")}
    assert top <= set(locked)
