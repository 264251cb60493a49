"""The Lambda assets: each function's own, with exactly its packages, built for arm64.

What a function carries is said once, in ``infra/dependencies.py``; these tests hold the
synthesized assets, the template and the code to it. Running the assets is
``test_functions_as_deployed.py``.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from infra.dependencies import (
    FUNCTIONS,
    LAMBDA_ARCHITECTURE,
    LAMBDA_GLIBC,
    LAMBDA_MACHINE,
    LAMBDA_PYTHON_VERSION,
    NOT_PACKAGED,
    POWERTOOLS_LAYERS,
)
from infra.limits import POWERTOOLS_LAYER_NAME
from infra.settings import StackSettings
from tests.infra.template import Synth
from tests.test_licences import BUNDLED, library_name, normal
from worlds.lambda_env import LambdaEnvironment, folder_bytes

#: ELF ``e_machine`` values (System V ABI): what a shared library was built for.
ELF_MACHINES = {183: "aarch64", 62: "x86_64"}
#: Lambda's limit on a function's code and layers, unzipped (Lambda quotas).
LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024
#: Room kept for the Powertools layer, which counts against the same limit (its packages take
#: about 30 MB in the Lambda-like environment).
LAYER_ALLOWANCE = 50 * 1024 * 1024
DEVELOPER_ONLY = ("cli", "local", "upload", "media/synthetic.py")
LITTER_NAMES = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"}


@pytest.fixture(scope="module")
def assets(synth: Synth) -> dict[str, Path]:
    """The staged asset folder of every function, by its name in infra/dependencies.py."""
    folders = synth.asset_folders()
    return {f.name: folders[f.handler] for f in FUNCTIONS if f.handler in folders}


def _elf_machine(path: Path) -> str | None:
    with path.open("rb") as handle:
        header = handle.read(20)
    if header[:4] != b"\x7fELF":
        return None
    return ELF_MACHINES.get(int.from_bytes(header[18:20], "little"), "other")


def _installed(asset: Path) -> dict[str, str]:
    """Distributions installed in the asset: name -> version (from their dist-info)."""
    found = {}
    for info in asset.glob("*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        found[name.lower()] = version
    return found


def _recorded_files(asset: Path) -> set[str]:
    """Every file the installed distributions' RECORDs list."""
    listed: set[str] = set()
    for record in asset.glob("*.dist-info/RECORD"):
        listed |= {line.split(",")[0] for line in record.read_text().splitlines() if line}
    return listed


def test_every_function_of_the_template_has_its_packaging_and_an_asset(
    synth: Synth, assets: dict[str, Path]
) -> None:
    # Given the video-index functions of the synthesized template
    handlers = set(synth.asset_folders())
    # Then each one's packaging is in the dependency map, and each entry of the map is deployed
    assert handlers == {f.handler for f in FUNCTIONS}
    # And each has an asset folder holding its handler module
    for function in FUNCTIONS:
        module = Path(*function.handler_module.split(".")).with_suffix(".py")
        assert (assets[function.name] / module).is_file(), function.name


def test_each_asset_carries_exactly_the_packages_of_its_function(
    assets: dict[str, Path],
) -> None:
    for function in FUNCTIONS:
        # Given the function's asset
        asset = assets[function.name]
        # Then it holds the pinned versions of its packages and no other distribution
        assert _installed(asset) == {p.name: p.version for p in function.packages}, function.name
        # And every file outside video_index belongs to one of them (nothing else slipped in)
        outside = {
            p.relative_to(asset).as_posix()
            for p in asset.rglob("*")
            if p.is_file() and p.relative_to(asset).parts[0] != "video_index"
        }
        assert outside <= _recorded_files(asset), sorted(outside - _recorded_files(asset))[:5]


def test_the_api_asset_is_light_and_the_media_one_carries_pyav(assets: dict[str, Path]) -> None:
    # Given the API function's asset and the media function's
    api, media = assets["api"], assets["media"]
    # Then the API's holds no media or column library (a cold calendar request loads none),
    # only the zone data beside video_index
    for heavy in ("av", "numpy", "pyarrow"):
        assert not (api / heavy).exists(), heavy
    assert set(_installed(api)) == {"tzdata"}
    # And the media function's holds PyAV, for the renditions it makes
    assert (media / "av").is_dir() and "av" in _installed(media)


def test_functions_carrying_the_same_packages_share_one_asset(assets: dict[str, Path]) -> None:
    # Given the assets of functions, grouped by what they carry
    by_packages: dict[tuple[str, ...], set[Path]] = {}
    for function in FUNCTIONS:
        key = tuple(p.requirement for p in function.packages)
        by_packages.setdefault(key, set()).add(assets[function.name])
    # Then functions carrying the same packages share one asset (one upload), and
    # functions carrying different packages never do
    assert all(len(folders) == 1 for folders in by_packages.values())
    assert len({folder for folders in by_packages.values() for folder in folders}) == len(
        by_packages
    )


def test_no_asset_holds_developer_code_tests_or_caches(assets: dict[str, Path]) -> None:
    for name, asset in assets.items():
        # Given a function's asset
        package = asset / "video_index"
        # Then the command line, the local stack, the uploader and the test clips are not in it
        for path in DEVELOPER_ONLY:
            assert not (package / path).exists(), (name, path)
        # And no tests, caches, build litter or installed scripts anywhere
        names = {p.name for p in asset.rglob("*")}
        assert not names & LITTER_NAMES, (name, names & LITTER_NAMES)
        assert not any(n.endswith((".pyc", ".egg-info")) for n in names), name
        assert not (asset / "tests").exists() and not (asset / "bin").exists(), name
        assert not any(p.name.startswith("test_") for p in asset.rglob("*.py")), name


def test_native_code_is_built_for_the_lambda_architecture(assets: dict[str, Path]) -> None:
    for function in FUNCTIONS:
        # Given the shared libraries in the function's asset
        asset = assets[function.name]
        machines = {_elf_machine(p) for p in asset.rglob("*") if p.is_file()} - {None}
        if not function.native:
            # Then a function without native packages carries none
            assert machines == set(), function.name
            continue
        # Then every one of them is an aarch64 ELF object, as the arm64 functions run
        assert machines == {LAMBDA_MACHINE}, (function.name, machines)
        # And the native wheels are manylinux wheels the runtime's glibc can load
        for package in (p for p in function.packages if p.native):
            wheel = (asset / f"{package.name}-{package.version}.dist-info" / "WHEEL").read_text()
            tags = [line.split(": ")[1] for line in wheel.splitlines() if line.startswith("Tag:")]
            assert tags, wheel
            for tag in tags:
                platform = tag.split("-")[2]
                assert platform.startswith("manylinux_") and platform.endswith(LAMBDA_MACHINE)
                major, minor = (int(part) for part in platform.split("_")[1:3])
                assert (major, minor) <= LAMBDA_GLIBC, tag


def test_pyav_in_the_asset_bundles_ffmpeg(assets: dict[str, Path]) -> None:
    # Given the functions that carry PyAV
    for function in (f for f in FUNCTIONS if any(p.name == "av" for p in f.packages)):
        libraries = {p.name.split("-")[0] for p in (assets[function.name] / "av.libs").iterdir()}
        # Then its wheel brought the FFmpeg libraries stream copy needs
        assert {"libavformat", "libavcodec", "libavutil"} <= libraries, function.name


def test_every_library_an_asset_bundles_is_in_the_licence_list(assets: dict[str, Path]) -> None:
    # Given every shared library of every asset's distributions (the arm64 wheels: their
    # bundled libraries may differ from the ones installed here)
    unlisted = []
    for name, asset in assets.items():
        for info in asset.glob("*.dist-info"):
            distribution, _, version = info.name.removesuffix(".dist-info").partition("-")
            listed = BUNDLED.get((normal(distribution), version), {})
            for line in (info / "RECORD").read_text().splitlines():
                library = library_name(Path(line.split(",")[0]).name)
                if library and library not in listed:
                    unlisted.append(f"{name}: {distribution} {version}: {line.split(',')[0]}")
    # Then each has its licence in tests/test_licences.py (docs/licences.md)
    assert unlisted == []


def test_every_asset_fits_lambdas_size_limit_with_the_layer(assets: dict[str, Path]) -> None:
    for name, asset in assets.items():
        # Given the unpacked size of a function's asset
        size = folder_bytes(asset)
        # Then with room for the Powertools layer it stays under Lambda's 250 MB
        assert size + LAYER_ALLOWANCE <= LAMBDA_UNZIPPED_LIMIT, (name, size)


def test_runtime_architecture_and_layer_are_those_the_packages_are_chosen_for(
    synth: Synth,
) -> None:
    # Given the functions of the template
    functions = [
        r["Properties"]
        for r in synth.of_type("AWS::Lambda::Function").values()
        if r["Properties"].get("Handler", "").startswith("video_index.")
    ]
    assert len(functions) == len(FUNCTIONS)
    version = StackSettings().powertools_layer_version
    for props in functions:
        # Then they run the runtime and architecture the wheels are chosen for
        assert props["Runtime"] == f"python{LAMBDA_PYTHON_VERSION}"
        assert props["Architectures"] == [LAMBDA_ARCHITECTURE]
        # And their layer is the one whose Powertools release the tests install
        assert f"{POWERTOOLS_LAYER_NAME}:{version}" in json.dumps(props["Layers"])
    assert version in POWERTOOLS_LAYERS
    assert f"python{LAMBDA_PYTHON_VERSION.replace('.', '')}-{LAMBDA_ARCHITECTURE}" in (
        POWERTOOLS_LAYER_NAME
    )


def test_only_reconcile_carries_the_column_wise_pass_for_the_inventory_s3_writes(
    synth: Synth,
) -> None:
    # Given the segment bucket's inventory configuration
    (inventory,) = [
        config
        for bucket in synth.of_type("AWS::S3::Bucket").values()
        for config in bucket["Properties"].get("InventoryConfigurations", [])
    ]
    # Then S3 writes CSV reports, which the column-wise pass reads in Arrow batches
    assert inventory["Destination"]["Format"] == "CSV"
    # And only reconcile and restore units (docs/bulk.md) carry pyarrow and numpy for it
    carrying = {f.name for f in FUNCTIONS if {"pyarrow", "numpy"} <= {p.name for p in f.packages}}
    assert carrying == {"reconcile", "bulk"}


# --- every third-party module a handler can reach is accounted for ----------------------------


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at module level or inside functions (absolute names)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def _reachable(asset: Path, module: str) -> tuple[set[str], set[str]]:
    """(project modules, top-level third-party or stdlib modules) reachable from ``module``."""
    seen: set[str] = set()
    outside: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        base = asset / Path(*name.split("."))
        path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if not path.is_file():
            continue  # an attribute imported from a module, not a module
        parents = name.split(".")
        todo += [".".join(parents[:i]) for i in range(1, len(parents))]
        for imported in _imports(path):
            if imported.split(".")[0] == "video_index":
                todo.append(imported)
            else:
                outside.add(imported.split(".")[0])
    return seen, outside


@pytest.fixture(scope="module")
def provided_modules(lambda_env: LambdaEnvironment) -> set[str]:
    """Top-level modules of the runtime's and the layer's distributions."""
    listing = subprocess.run(
        [
            str(lambda_env.python),
            "-I",  # isolated: the caller's PYTHONPATH is not the runtime's
            "-c",
            "import importlib.metadata as m, json; "
            "print(json.dumps(sorted(m.packages_distributions())))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(listing.stdout))


def test_every_module_a_handler_can_reach_is_provided_or_packaged(
    assets: dict[str, Path], provided_modules: set[str]
) -> None:
    for function in FUNCTIONS:
        # Given every module the handler can import, at load or later (lazy imports)
        _, outside = _reachable(assets[function.name], function.handler_module)
        third_party = outside - set(sys.stdlib_module_names) - {"__future__"}
        packaged = {p.module for p in function.packages}
        # Then each third-party one is the runtime's or the layer's, in the function's
        # asset, or known not to be needed by the deployed function (and why)
        known = set(NOT_PACKAGED) | set(function.never_imports)
        unaccounted = third_party - provided_modules - packaged - known
        assert not unaccounted, (function.name, unaccounted)
        # And every package the asset carries is reachable: no dead weight
        for package in function.packages:
            assert package.module in outside or package.loaded_by in outside, (
                function.name,
                package.name,
            )


def test_every_package_of_the_map_is_pinned_and_explained() -> None:
    # Given every package any function carries
    for package in {p for f in FUNCTIONS for p in f.packages}:
        # Then its exact version is pinned (a reproducible asset) and its reason is given
        assert package.version.count(".") >= 1 and package.why, package


def test_the_deployment_doc_names_the_packages_of_the_dependency_map() -> None:
    # Given the table of docs/deployment.md that says what each asset carries
    doc = (Path(__file__).resolve().parents[2] / "docs" / "deployment.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in doc.splitlines() if line.startswith("| ")}
    for function in FUNCTIONS:
        # Then each function's row names its handler and exactly its pinned packages
        row = rows[function.name]
        assert f"`{function.handler}`" in row
        named = set(re.findall(r"`([A-Za-z0-9_.-]+==[A-Za-z0-9_.+-]+)`", row))
        assert named == {p.requirement for p in function.packages}, row
    # And the Powertools release it states is the one the layer version holds
    layer = POWERTOOLS_LAYERS[StackSettings().powertools_layer_version]
    assert f"Powertools {layer.release}" in " ".join(doc.split())
