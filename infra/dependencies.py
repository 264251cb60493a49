"""Which Lambda function carries which packages: the one place that says it (docs/deployment.md).

Every function runs a handler of the ``functions/`` tree on the ``python3.13`` runtime
(arm64) with the public Powertools layer. What the runtime and the layer provide is
not packaged; everything else a function imports is, in that function's asset only:

* the runtime: the AWS SDK (``boto3``, ``botocore`` and what they need);
* the layer: Powertools with all its extras (``pydantic``, ``aws-xray-sdk``, ...);
* the asset: ``video_index`` without what only developers run, plus the packages of
  :data:`FUNCTIONS` — pure-Python wheels as they are, native wheels built for the
  function's architecture (manylinux ``aarch64``), fetched by pip at synthesis
  (:mod:`infra.assets`; no Docker).

The asset builder (:mod:`infra.python_function`), the tests that run each handler in a
Lambda-like environment (``tests/infra/test_functions_as_deployed.py``), the import
check that every third-party module a handler can reach is accounted for, the bench
and docs/deployment.md all read this module, so they cannot drift apart.

Why here and not in ``video_index.core.contract``: the contract holds names both sides
read *at run time* (handlers, environment variables, prefixes). Which wheels go into
which zip is a packaging fact: only synthesis and the tests read it, and it would be
dead weight in every asset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from video_index.core import functions
from video_index.core.functions import FunctionSpec

# --- the platform every function runs on ------------------------------------------------

#: The Lambda runtime (``python3.13``) and the Python version wheels are chosen for.
LAMBDA_PYTHON_VERSION: Final = "3.13"
#: The functions' architecture (Lambda's name) and the machine name in wheel tags.
LAMBDA_ARCHITECTURE: Final = "arm64"
LAMBDA_MACHINE: Final = "aarch64"
#: The C library of the ``python3.13`` runtime (Amazon Linux 2023: glibc 2.34). A native
#: wheel qualifies when its ``manylinux_2_N`` tag has N at most this.
LAMBDA_GLIBC: Final = (2, 34)

#: Distributions the runtime provides (the AWS SDK), as requirements for a Lambda-like
#: environment. The runtime's SDK moves with AWS's runtime updates, so it is not pinned.
RUNTIME_REQUIREMENTS: Final = ("boto3",)


@dataclass(frozen=True)
class PowertoolsLayer:
    """What a version of the public layer ``AWSLambdaPowertoolsPythonV3-python313-arm64`` holds.

    The layer is ``aws-lambda-powertools[all]`` of one release, installed when that release
    was published, with the newest of its dependencies then (no boto3: the runtime has
    it). A layer version never changes, so neither do its pydantic and the rest: a
    Lambda-like environment installs the release with what PyPI offered before ``built``.
    """

    #: The Powertools release (the layer's description names it; the Powertools
    #: documentation lists each release's layer version).
    release: str
    #: An ISO 8601 instant just after the release was published on PyPI.
    built: str

    @property
    def requirement(self) -> str:
        return f"aws-lambda-powertools[all]=={self.release}"


#: The layers the stack may pin (``powertools_layer_version``), by layer version.
POWERTOOLS_LAYERS: Final[Mapping[int, PowertoolsLayer]] = {
    22: PowertoolsLayer(release="3.19.0", built="2025-08-13T00:00:00Z"),
}


def powertools_layer(layer_version: int) -> PowertoolsLayer:
    """What the Powertools layer ``layer_version`` holds."""
    try:
        return POWERTOOLS_LAYERS[layer_version]
    except KeyError:
        raise KeyError(
            f"Powertools layer version {layer_version} is not in POWERTOOLS_LAYERS "
            "(infra/dependencies.py): say which Powertools release it holds"
        ) from None


# --- what the assets carry ---------------------------------------------------------------


@dataclass(frozen=True)
class Package:
    """A distribution a function's asset carries, pinned so the asset is reproducible."""

    #: Distribution name (as pip knows it) and the exact version packaged.
    name: str
    version: str
    #: The top-level module the code imports.
    module: str
    #: True when its wheels are platform wheels (built for :data:`LAMBDA_MACHINE`).
    native: bool
    #: Which code needs it, and why the runtime and the layer do not cover it.
    why: str
    #: The standard-library module that loads it when the code never imports it by name
    #: (``zoneinfo`` reads its zones from ``tzdata``).
    loaded_by: str | None = None
    #: Paths of the installed package (``fnmatch`` patterns, relative to the install folder)
    #: left out of the asset: tests, headers and libraries no import of the code loads
    #: (``prune_why`` says why each is safe; the as-deployed tests run the pruned asset).
    prune: tuple[str, ...] = ()
    prune_why: str = ""

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


TZDATA: Final = Package(
    name="tzdata",
    version="2026.6",
    module="tzdata",
    native=False,
    why=(
        "IANA time zones for calendars (query/calendar.py, zoneinfo): the runtime image "
        "is not promised to ship /usr/share/zoneinfo, and zoneinfo falls back to tzdata"
    ),
    loaded_by="zoneinfo",
)
PYAV: Final = Package(
    name="av",
    version="18.1.0",
    module="av",
    native=True,
    why=(
        "stream copy (media/remux.py): renditions made on request (API) and clip exports; "
        "its wheel bundles the FFmpeg libraries"
    ),
)


PYARROW: Final = Package(
    name="pyarrow",
    version="26.0.1",
    module="pyarrow",
    native=True,
    why=(
        "the column-wise inventory pass (ops/inventory/columns.py, ops/columnar.py): a "
        "distributed-plan child reads its CSV data file in Arrow batches, and Parquet/ORC "
        "reports are read with it too (docs/operations.md, at fleet scale)"
    ),
    prune=(
        "pyarrow/tests",
        "pyarrow/include",
        "pyarrow/src",
        "pyarrow/*.pyx",
        "pyarrow/*.pxd",
        "pyarrow/*.pxi",
        "pyarrow/libarrow_flight.so*",
        "pyarrow/_flight.*",
        "pyarrow/libarrow_s3.so*",
        "pyarrow/_s3fs.*",
        "pyarrow/_gcsfs.*",
        "pyarrow/_azurefs.*",
        "pyarrow/_hdfs.*",
        "pyarrow/libarrow_python.so",
        "pyarrow/libarrow_python.so.*.*.*",
        "pyarrow/libarrow_python_*.so*",
    ),
    prune_why=(
        "the unpacked wheel (151 MB for arm64) would leave too little of Lambda's 250 MB: "
        "Flight, the S3/GCS/Azure/HDFS file systems (the code reads through boto3), tests, "
        "C++ headers and Cython sources are never loaded; libarrow_python is linked by its "
        "SONAME (.so.NNNN), the other two names are copies"
    ),
)
NUMPY: Final = Package(
    name="numpy",
    version="2.4.6",
    module="numpy",
    native=True,
    why=(
        "the column-wise key parsing and XXH64 key hashes of the inventory pass "
        "(ops/keyparse.py, ops/keylayout.py, ops/keywords.py, core/keyhash.py)"
    ),
    prune=(
        "numpy/*/tests",
        "numpy/tests",
        "numpy/f2py",
        "numpy/_pyinstaller",
        "numpy/typing/tests",
    ),
    prune_why="tests and the Fortran wrapper generator are never imported by the code",
)


@dataclass(frozen=True)
class FunctionPackaging:
    """One function (its spec: name, handler, needs) and the packages it carries."""

    spec: FunctionSpec
    packages: tuple[Package, ...]
    #: Third-party modules its code can import but this function never does, and why
    #: (a module imported inside a function the handler never calls).
    never_imports: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """Its name in the docs and tests."""
        return self.spec.name

    @property
    def handler(self) -> str:
        return self.spec.handler

    @property
    def handler_module(self) -> str:
        return self.spec.handler_module

    @property
    def native(self) -> bool:
        """Whether the asset holds platform wheels (it only runs on its architecture)."""
        return any(package.native for package in self.packages)


_ONLY_FORGETS_RENDITIONS: Final = (
    "removing a segment removes its rendition (Renditions.forget); making one "
    "(Renditions.ensure, PyAV) is the media function's"
)
_RENDITIONS_ARE_MEDIAS: Final = (
    "the media route (Renditions.ensure, PyAV) is in the resolver's code, but API Gateway "
    "routes its path to the media function (infra/media.py), never to this one"
)
_ONE_KEY_AT_A_TIME: Final = (
    "hashes and parses keys one at a time (core/keyhash.py, pure Python); the column-wise "
    "inventory pass (numpy, pyarrow) is the reconcile function's"
)
_ENDS_ERASED_EXPORTS: Final = (
    "an erasure reads the export jobs made of erased footage and ends them failed "
    "(media/erasure.py, media/exports.py); making a clip (Exports.run, PyAV) is the export "
    "function's"
)
_NO_INVENTORY_PASS: Final = {"numpy": _ONE_KEY_AT_A_TIME, "pyarrow": _ONE_KEY_AT_A_TIME}

#: Every function of the stack (``core/functions.py``) and what its asset carries beyond
#: ``video_index``.
FUNCTIONS: Final = (
    FunctionPackaging(functions.INGEST, (), {"av": _ONLY_FORGETS_RENDITIONS, **_NO_INVENTORY_PASS}),
    FunctionPackaging(
        functions.API, (TZDATA,), {"av": _RENDITIONS_ARE_MEDIAS, **_NO_INVENTORY_PASS}
    ),
    FunctionPackaging(functions.MEDIA, (PYAV,), _NO_INVENTORY_PASS),
    FunctionPackaging(functions.RECONCILE, (PYARROW, NUMPY), {"av": _ONLY_FORGETS_RENDITIONS}),
    FunctionPackaging(functions.EXPORT, (PYAV,), _NO_INVENTORY_PASS),
    FunctionPackaging(functions.DELETION, (), {"av": _ENDS_ERASED_EXPORTS, **_NO_INVENTORY_PASS}),
    FunctionPackaging(functions.AGGREGATE, (), _NO_INVENTORY_PASS),
    FunctionPackaging(functions.SILENCE, (), _NO_INVENTORY_PASS),
    # Restore units read inventory slices column-wise, as reconcile does.
    FunctionPackaging(functions.BULK, (PYARROW, NUMPY), {"av": _ONLY_FORGETS_RENDITIONS}),
    FunctionPackaging(functions.RETENTION, (), _NO_INVENTORY_PASS),
)
if [f.spec for f in FUNCTIONS] != list(functions.FUNCTIONS):
    raise ValueError("infra/dependencies.py FUNCTIONS must package every spec of core/functions.py")

#: Third-party modules the deployed code imports somewhere that no function carries, and
#: why that is safe. The import check fails on any other module a handler can reach.
NOT_PACKAGED: Final[Mapping[str, str]] = {}


def packaging_of(spec: FunctionSpec) -> FunctionPackaging:
    """The packaging of the function ``spec``."""
    for function in FUNCTIONS:
        if function.spec == spec:
            return function
    raise KeyError(
        f"no packaging for function {spec.name!r}: add it to FUNCTIONS in "
        "infra/dependencies.py (the packages it needs beyond the runtime and the layer)"
    )
