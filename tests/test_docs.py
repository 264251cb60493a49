"""docs/ held to the code: what the code defines, the docs describe (docs/README.md: "docs/
is the product's description and must stay true").

* every environment variable the package defines (a module-level ``ENV_*`` string
  constant, wherever it is) has a row in docs/operations.md's runtime configuration;
* every metric the functions publish (each ``add_metric(name=…)``: a literal, a constant,
  or one of the two loops named below) is named in docs/operations.md's metrics section;
* every package folder of ``video_index`` has a row in docs/README.md's layout table, and
  every document in docs/ a row in its table of documents;
* nothing cites a specification the repository does not hold ("SPEC §"): docs/ is it.

The names are read from the source (``ast``), never imported from the modules under
test, so a constant added anywhere is found without this test knowing its module.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
PACKAGE: Final = ROOT / "functions" / "video_index"
DOCS: Final = ROOT / "docs"

#: Defined but read nowhere, in a folder another change is rewriting (issue 30): the
#: lead removes each after merging; the test fails once it is gone, so the entry goes too.
NOT_YET_REMOVED: Final = {
    "VIDEO_INDEX_RESTORE_WORKERS": "bulk/names.py: dead; bulk/ is being rewritten (issue 30)",
}

#: The two places a metric's name is not written at the call: (file, the call's ``name=``
#: argument) -> how this test finds the names from the source.
DYNAMIC_METRICS: Final = {
    ("handlers/reconcile.py", "name"): "the values of REPORT_METRICS",
    ("ingest/batches.py", "str(outcome)"): "the values of the Outcome enum (ingest/ingestor.py)",
}


@cache
def _modules() -> tuple[tuple[Path, ast.Module], ...]:
    paths = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
    return tuple((path, ast.parse(path.read_text(), str(path))) for path in paths)


@cache
def _string_constants() -> dict[str, str]:
    """Every module-level ``NAME = "text"`` (annotated or not) of the package, by name."""
    found: dict[str, str] = {}
    for _, tree in _modules():
        for node in tree.body:
            target = node.target if isinstance(node, ast.AnnAssign) else None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
            value = getattr(node, "value", None)
            constant = isinstance(value, ast.Constant) and isinstance(value.value, str)
            if isinstance(target, ast.Name) and constant:
                found[target.id] = value.value  # type: ignore[union-attr]
    return found


def _section(document: Path, heading: str) -> str:
    """The text of ``## heading`` up to the next heading of the same level."""
    text = document.read_text()
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"{document.name} has no section '## {heading}'"
    return match.group(1)


def _first_column(text: str) -> set[str]:
    """The backquoted names in the first column of the tables of ``text``."""
    return set(re.findall(r"^\| `([^`]+)` \|", text, re.M))


# --- settings -----------------------------------------------------------------------------


def environment_variables() -> dict[str, str]:
    """Every ``ENV_*`` constant of the package: variable name -> constant name."""
    return {value: name for name, value in _string_constants().items() if name.startswith("ENV_")}


def test_every_environment_variable_is_documented() -> None:
    # Given every environment variable the package defines (contract, access, bulk, cli …)
    variables = environment_variables()
    assert {"VIDEO_INDEX_BUCKET", "VIDEO_INDEX_ACCESS_POLICY", "VIDEO_INDEX_STACK"} <= set(
        variables
    )
    # And the rows of docs/operations.md's runtime configuration
    documented = _first_column(_section(DOCS / "operations.md", "Runtime configuration"))
    # Then each has a row, but those named as awaiting removal
    missing = set(variables) - documented - set(NOT_YET_REMOVED)
    assert sorted(missing) == []
    # And each awaiting removal is still defined (else its entry above goes too)
    assert set(NOT_YET_REMOVED) <= set(variables)


def test_no_documented_variable_is_gone_from_the_code() -> None:
    documented = _first_column(_section(DOCS / "operations.md", "Runtime configuration"))
    assert sorted(documented - set(environment_variables())) == []


# --- metrics ------------------------------------------------------------------------------


def _dict_values(tree: ast.Module, name: str) -> set[str]:
    constants = _string_constants()
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == name:
            assert isinstance(node.value, ast.Dict), name
            values = node.value.values
            return {
                v.value if isinstance(v, ast.Constant) else constants[ast.unparse(v)]
                for v in values
            }
    raise AssertionError(f"{name} not found")


def _enum_values(tree: ast.Module, name: str) -> set[str]:
    (enum,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    return {
        node.value.value
        for node in enum.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
    }


def published_metrics() -> set[str]:
    """Every metric name an ``add_metric`` call of the package can publish."""
    constants = _string_constants()
    trees = {path.relative_to(PACKAGE).as_posix(): tree for path, tree in _modules()}
    names: set[str] = set()
    for relative, tree in trees.items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "add_metric":
                continue
            (argument,) = [k.value for k in node.keywords if k.arg == "name"]
            if isinstance(argument, ast.Constant):
                names.add(str(argument.value))
            elif isinstance(argument, ast.Name) and argument.id in constants:
                names.add(constants[argument.id])
            else:
                where = (relative, ast.unparse(argument))
                assert where in DYNAMIC_METRICS, f"a metric name this test cannot read: {where}"
    names |= _dict_values(trees["handlers/reconcile.py"], "REPORT_METRICS")
    names |= _enum_values(trees["ingest/ingestor.py"], "Outcome")
    return names


def test_every_published_metric_is_documented() -> None:
    # Given every metric the functions publish
    metrics = published_metrics()
    assert {"Applied", "PartitionsRepaired", "SilentDevices", "RetentionDeleted"} <= metrics
    # Then docs/operations.md's metrics section names each
    section = _section(DOCS / "operations.md", "Metrics and alarms")
    assert sorted(m for m in metrics if f"`{m}`" not in section) == []


def test_the_metrics_table_has_a_row_per_service_that_publishes() -> None:
    # Given the service names of the functions (``*_SERVICE_NAME``)
    services = {v for k, v in _string_constants().items() if k.endswith("_SERVICE_NAME")}
    assert "video-index-ingest" in services
    # Then each is in the metrics table, with its metrics or "none of their own"
    section = _section(DOCS / "operations.md", "Metrics and alarms")
    assert sorted(s for s in services if f"`{s}`" not in section) == []


# --- layout -------------------------------------------------------------------------------


def test_every_package_is_in_the_layout_table() -> None:
    # Given every package folder of video_index
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert {"core", "aggregate", "holds"} <= packages
    # Then docs/README.md's layout table has a row for each, and none for a package gone
    layout = _section(DOCS / "README.md", "How the code is laid out")
    rows = {name.rstrip("/") for name in _first_column(layout)}
    assert sorted(packages - rows) == []
    assert sorted(rows - packages) == []


def test_every_document_is_in_the_table_of_documents() -> None:
    documents = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    listed = set(
        re.findall(r"^\| \[[^\]]+\]\(([^)]+\.md)\) \|", (DOCS / "README.md").read_text(), re.M)
    )
    assert sorted(documents - listed) == []
    assert sorted(listed - documents) == []


def test_nothing_cites_a_specification_outside_docs() -> None:
    # Given the code, tests, tooling and docs
    folders = ("functions", "infra", "worlds", "bench", "tests", "docs")
    suffixes = {".py", ".js", ".html", ".css", ".md"}
    files = [p for f in folders for p in (ROOT / f).rglob("*") if p.suffix in suffixes]
    files = [p for p in files if "node_modules" not in p.parts and p != Path(__file__)]
    # Then none points to "SPEC §…": the product's description is docs/
    assert [str(p.relative_to(ROOT)) for p in files if "SPEC §" in p.read_text()] == []
