"""The Lambda asset: the handlers and what they import, nothing developers alone run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.infra.template import Synth

HANDLERS = (
    "video_index.handlers.ingest",
    "video_index.handlers.api",
    "video_index.handlers.reconcile",
)
DEVELOPER_PACKAGES = ("cli", "local", "upload")


@pytest.fixture(scope="module")
def staged(synth: Synth) -> Path:
    """The staged asset directory of the functions (one asset for every function)."""
    assembly = synth.app.synth()
    stack = synth.video_index
    keys = {
        synth.props(function)["Code"]["S3Key"]
        for function in (stack.ingest.function, stack.api.function, stack.reconcile.function)
    }
    assert len(keys) == 1, keys
    return Path(assembly.directory) / f"asset.{keys.pop().removesuffix('.zip')}"


def test_the_asset_holds_the_handlers_and_not_the_developer_packages(staged: Path) -> None:
    # Given the staged asset
    package = staged / "video_index"
    # Then every handler module is there, with the packages they import
    for name in ("ingest", "api", "reconcile"):
        assert (package / "handlers" / f"{name}.py").is_file()
    for folder in ("core", "aws", "ingest", "query", "ops", "media", "annotations"):
        assert (package / folder / "__init__.py").is_file(), folder
    # And the command line, the local stack and the uploader are not
    for folder in DEVELOPER_PACKAGES:
        assert not (package / folder).exists(), folder


def test_each_handler_imports_from_the_asset_alone(staged: Path) -> None:
    # Given a fresh interpreter whose first path entry is the asset
    probe = (
        "import importlib, json, sys\n"
        f"for name in {HANDLERS!r}:\n"
        "    importlib.import_module(name)\n"
        "import video_index\n"
        "print(json.dumps({'file': video_index.__file__, "
        "'modules': sorted(m for m in sys.modules if m.startswith('video_index'))}))\n"
    )
    # When it imports every handler
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(staged), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    # Then the package came from the asset, and nothing needed the developer packages
    assert loaded["file"].startswith(str(staged))
    for folder in DEVELOPER_PACKAGES:
        assert not any(m.startswith(f"video_index.{folder}") for m in loaded["modules"]), folder
