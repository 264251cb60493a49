"""Building a function's Lambda asset without Docker (docs/deployment.md).

An asset is a folder Lambda unpacks into ``/var/task``:

* ``video_index/`` from ``functions/``, without what only developers and cameras run
  (:data:`DEVELOPER_PATHS`) and without build litter;
* the function's packages (:mod:`infra.dependencies`), each installed by pip for the
  function's platform: ``pip install --target … --platform manylinux_2_N_<machine>
  --python-version … --only-binary=:all: --no-deps --require-hashes``, so a native wheel
  is the one built for the Lambda architecture whatever machine synthesizes, and every
  wheel is one of the files ``requirements/lambda-assets.lock`` names (docs/installs.md).

Wheels are downloaded once into the cache folder (``.cache/lambda-wheels/`` by default)
and each package is installed there once per platform; later builds link (or copy)
those files into the asset, so synthesis is fast and needs no network after the first
time. Entries appear in the cache atomically (installed beside, then renamed), so
parallel syntheses can share it.

:func:`build_asset` is what CDK's local bundling calls at synthesis
(:class:`infra.python_function.LocalAssetBundling`); tests and the bench call it too,
with another :class:`WheelTarget` where they need the same asset for the machine they
run on. Nothing here imports the CDK.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from infra.dependencies import (
    LAMBDA_GLIBC,
    LAMBDA_MACHINE,
    LAMBDA_PYTHON_VERSION,
    FunctionPackaging,
    Package,
)
from infra.locks import ASSETS_LOCK, entry

ROOT: Final = Path(__file__).resolve().parent.parent
#: The functions tree: the package ``video_index`` is the code of every function.
FUNCTIONS_DIR: Final = ROOT / "functions"
PACKAGE: Final = "video_index"
#: Overrides where wheels and installed packages are cached (default ``.cache/lambda-wheels``).
ENV_WHEEL_CACHE: Final = "VIDEO_INDEX_WHEEL_CACHE"
DEFAULT_WHEEL_CACHE: Final = ROOT / ".cache" / "lambda-wheels"

#: What only developers and cameras run (paths under ``functions/``): never deployed.
#: ``media/synthetic.py`` makes the test and demo clips (it needs numpy, no function has it).
DEVELOPER_PATHS: Final = (
    "video_index/cli",
    "video_index/local",
    "video_index/upload",
    "video_index/media/synthetic.py",
)
#: Build litter and caches, by name, anywhere in the tree or an installed package.
LITTER: Final = (
    "__pycache__",
    "*.pyc",
    "*.pyo",
    "*.egg-info",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
)
#: What pip installs beside a package that a function never uses: console scripts (their
#: shebang names the Python that installed them).
_INSTALL_LITTER: Final = ("bin",)


@dataclass(frozen=True)
class WheelTarget:
    """The platform packages are installed for: CPython ``python_version`` on ``machine``
    with glibc ``glibc`` (``manylinux_2_N`` wheels with N at most its minor version)."""

    python_version: str = LAMBDA_PYTHON_VERSION
    machine: str = LAMBDA_MACHINE
    glibc: tuple[int, int] = LAMBDA_GLIBC

    @property
    def key(self) -> str:
        """The target's folder name in the cache, e.g. ``cp313-manylinux_2_34_aarch64``."""
        major, minor = self.glibc
        return f"cp{self.python_version.replace('.', '')}-manylinux_{major}_{minor}_{self.machine}"

    def pip_options(self) -> list[str]:
        """pip's options selecting wheels for this target (binary wheels only)."""
        major, newest = self.glibc
        platforms = [f"manylinux_{major}_{minor}_{self.machine}" for minor in range(newest, 16, -1)]
        platforms.append(f"manylinux2014_{self.machine}")
        options = ["--only-binary=:all:", "--implementation", "cp"]
        options += ["--python-version", self.python_version]
        for abi in (f"cp{self.python_version.replace('.', '')}", "abi3", "none"):
            options += ["--abi", abi]
        for platform in platforms:
            options += ["--platform", platform]
        return options


#: The target of every deployed function (python3.13 on arm64, Amazon Linux 2023).
LAMBDA_TARGET: Final = WheelTarget()


class AssetBuildError(RuntimeError):
    """A package could not be fetched or installed for the asset."""


def wheel_cache() -> Path:
    override = os.environ.get(ENV_WHEEL_CACHE)
    return Path(override) if override else DEFAULT_WHEEL_CACHE


def build_asset(
    function: FunctionPackaging,
    output_dir: Path,
    *,
    target: WheelTarget = LAMBDA_TARGET,
    cache: Path | None = None,
) -> None:
    """Fill the empty folder ``output_dir`` with ``function``'s asset for ``target``."""
    output_dir.mkdir(parents=True, exist_ok=True)
    if any(output_dir.iterdir()):
        raise AssetBuildError(f"{output_dir} is not empty")
    _copy_tree(FUNCTIONS_DIR / PACKAGE, output_dir / PACKAGE, skip=_is_developer_or_litter)
    for package in function.packages:
        installed = installed_package(package, target, cache or wheel_cache())
        _copy_tree(installed, output_dir, skip=functools.partial(_is_pruned, package))


def installed_package(package: Package, target: WheelTarget, cache: Path) -> Path:
    """``package`` installed for ``target`` in the cache (installed now when it is not), from
    a wheel whose hash ``requirements/lambda-assets.lock`` lists."""
    folder = cache / target.key / f"{package.name}-{package.version}"
    if folder.is_dir():
        return folder
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.parent / f".{folder.name}.{uuid.uuid4().hex}"
    requirement = folder.parent / f".{folder.name}.{uuid.uuid4().hex}.txt"
    requirement.write_text(_locked(package))
    pinned = ["--no-deps", "--require-hashes", *target.pip_options(), "-r", str(requirement)]
    install = ["install", "--no-index", "--find-links", str(wheels), "--target", str(staging)]
    install += ["--no-compile", *pinned]
    try:
        if _pip(*install, check=False) != 0:
            # Not in the cache yet: download the wheel (the only step that needs an index).
            _pip("download", "--dest", str(wheels), *pinned)
            shutil.rmtree(staging, ignore_errors=True)
            _pip(*install)
        for name in _INSTALL_LITTER:
            shutil.rmtree(staging / name, ignore_errors=True)
        try:
            staging.rename(folder)
        except OSError:
            if not folder.is_dir():  # not a parallel build that got there first
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        requirement.unlink(missing_ok=True)
    return folder


def _locked(package: Package) -> str:
    """``package``'s entry in the assets lock, which must pin the version it names."""
    locked = entry(ASSETS_LOCK, package.name)
    if (
        not locked.startswith(f"{package.requirement} ")
        and locked.split()[0] != package.requirement
    ):
        raise AssetBuildError(
            f"{ASSETS_LOCK.name} pins {locked.split()[0]}, infra/dependencies.py asks for "
            f"{package.requirement}: run make lock"
        )
    return locked


def _pip(*args: str, check: bool = True) -> int:
    command = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check", "--quiet"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise AssetBuildError(f"{' '.join(command)} failed:\n{result.stderr.strip()}")
    return result.returncode


def _is_litter(relative: str) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(name, pattern) for pattern in LITTER)


def _is_pruned(package: Package, relative: str) -> bool:
    """Litter, or a path the package's ``prune`` patterns leave out of the asset."""
    return _is_litter(relative) or any(fnmatch.fnmatch(relative, p) for p in package.prune)


def _is_developer_or_litter(relative: str) -> bool:
    path = f"{PACKAGE}/{relative}"
    return _is_litter(relative) or any(
        path == excluded or path.startswith(f"{excluded}/") for excluded in DEVELOPER_PATHS
    )


def _copy_tree(source: Path, destination: Path, *, skip: Callable[[str], bool]) -> None:
    """Copy ``source`` into ``destination`` (hard links where the file system allows), without
    what ``skip`` (a predicate on the path relative to ``source``) rejects. No file may be
    in both: two packages never share a file."""
    for folder, subfolders, files in os.walk(source):
        here = Path(folder)
        relative_folder = here.relative_to(source)
        subfolders[:] = sorted(d for d in subfolders if not skip((relative_folder / d).as_posix()))
        (destination / relative_folder).mkdir(parents=True, exist_ok=True)
        for name in sorted(files):
            relative = (relative_folder / name).as_posix()
            if skip(relative):
                continue
            target = destination / relative
            if target.exists():
                raise AssetBuildError(f"two packages of the asset hold {relative}")
            _link_or_copy(here / name, target)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def files_of(folder: Path) -> Iterable[Path]:
    """Every file under ``folder``, relative, in a stable order."""
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())


def describe(function: FunctionPackaging, target: WheelTarget = LAMBDA_TARGET) -> str:
    """What the asset of ``function`` is built from, in one line."""
    packages = [p.requirement for p in function.packages] or ["-"]
    return f"{function.name} {target.key} {' '.join(packages)}"
