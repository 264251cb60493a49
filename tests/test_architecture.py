"""The house rules that a reader cannot check by eye (docs/architecture.md), read from the
source itself: imports point down (no package and no module imports what imports it),
``bench/`` does not import ``tests/``, modules stay at most 400 lines, and functions of
the product at most 80 unless a ``# long: <reason>`` comment stands right above them.

The import graph is static (``ast``): every ``import`` and ``from … import``, those inside
functions included (a lazy import is still a dependency); only imports under ``if
TYPE_CHECKING:`` are left out, since they never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
PACKAGE_DIR: Final = ROOT / "functions" / "video_index"
MAX_MODULE_LINES: Final = 400
MAX_FUNCTION_LINES: Final = 80
LONG_MARK: Final = "# long:"


def _sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(sub) for sub in ast.walk(node))
    return skipped


def imported_names(tree: ast.AST, module: str = "") -> Iterator[str]:
    """Every module name an import of ``tree`` may name (``from a import b`` gives ``a``
    and ``a.b``: ``b`` may be a module); relative imports resolved against ``module``."""
    skipped = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: -node.level]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


@cache
def module_graph() -> dict[str, frozenset[str]]:
    """Each module of ``video_index`` with the modules of ``video_index`` it imports."""
    paths = {_module_name(p): p for p in _sources(PACKAGE_DIR)}
    graph: dict[str, frozenset[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        targets = {t for t in imported_names(tree, package + ".x") if t in paths and t != name}
        graph[name] = frozenset(targets)
    return graph


def _subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (PACKAGE_DIR / parts[1]).is_dir() else None


def package_graph() -> dict[str, frozenset[str]]:
    """Each subpackage of ``video_index`` (``query``, ``api`` …) with those it imports."""
    edges: dict[str, set[str]] = {}
    for module, targets in module_graph().items():
        source = _subpackage(module)
        for target in map(_subpackage, targets):
            if source is not None and target is not None and target != source:
                edges.setdefault(source, set()).add(target)
    return {package: frozenset(targets) for package, targets in edges.items()}


def cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(graph) | {t for targets in graph.values() for t in targets}):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle() -> None:
    # Given a graph with one cycle of three and a chain beside it
    graph = {
        "a": frozenset({"b"}),
        "b": frozenset({"c"}),
        "c": frozenset({"a", "d"}),
        "d": frozenset({"e"}),
    }
    # Then exactly that cycle is found
    assert cycles(graph) == [["a", "b", "c"]]


def test_imports_inside_functions_count_and_type_checking_ones_do_not() -> None:
    # Given a module importing lazily in a function, and only for type checking
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from video_index.app import routes\n"
        "def f():\n"
        "    from video_index.media.remux import fragment\n"
        "    import video_index.ingest.ingestor\n"
    )
    # Then the lazy imports are dependencies and the type-checking one is not
    names = set(imported_names(tree))
    assert {"video_index.media.remux", "video_index.ingest.ingestor"} <= names
    assert not any(name.startswith("video_index.app") for name in names)


def test_no_package_cycles() -> None:
    # Given the import graph of video_index's subpackages
    graph = package_graph()
    # Then it has edges (the graph was read) and no package imports one that imports it
    assert graph["query"] and "core" in graph["query"]
    assert cycles(graph) == []


def test_no_module_cycles() -> None:
    # Given the import graph of video_index's modules
    graph = module_graph()
    # Then no module imports one that imports it, directly or not
    assert graph["video_index.api.resolver"]
    assert cycles(graph) == []


def test_capabilities_import_the_api_and_never_the_app() -> None:
    # Given the packages that serve routes, and the composition root that joins them
    graph = package_graph()
    capabilities = ("query", "annotations", "deletion", "media", "viewer")
    # Then each uses the api package, none imports the app, and the api imports only core
    for capability in capabilities:
        assert "api" in graph[capability], capability
        assert "app" not in graph[capability], capability
    assert graph["api"] == frozenset({"core"})
    assert set(capabilities) <= graph["app"]
    # And the query layer reaches ingest's write path only through what app hands it
    assert "ingest" not in graph["query"]


def test_bench_does_not_import_tests() -> None:
    # Given every import of bench/
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _sources(ROOT / "bench")
        for name in imported_names(ast.parse(path.read_text()))
        if name == "tests" or name.startswith("tests.")
    ]
    # Then none names the tests package
    assert offenders == []


def _line_counts(*folders: str) -> dict[str, int]:
    return {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for folder in folders
        for path in _sources(ROOT / folder)
    }


def test_modules_of_functions_and_infra_are_at_most_400_lines() -> None:
    # Given the line count of every module of the product and its infrastructure
    counts = _line_counts("functions", "infra")
    assert counts["functions/video_index/api/resolver.py"] > 0
    # Then none is longer than 400 lines
    assert {path: n for path, n in counts.items() if n > MAX_MODULE_LINES} == {}


def _long_functions(folder: Path) -> Iterator[str]:
    for path in _sources(folder):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            marked = first >= 2 and lines[first - 2].strip().startswith(LONG_MARK)
            if length > MAX_FUNCTION_LINES and not marked:
                yield f"{path.relative_to(folder.parent)}::{node.name} ({length} lines)"


def test_a_long_function_without_a_reason_is_found(tmp_path: Path) -> None:
    # Given a module with two long functions, one marked with its reason
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    source = f"def unmarked():\n{body}\n# long: a reason\ndef marked():\n{body}"
    (tmp_path / "m.py").write_text(source)
    # Then only the unmarked one is reported
    assert [f.split("::")[1] for f in _long_functions(tmp_path)] == ["unmarked (81 lines)"]


def test_functions_of_the_product_are_at_most_80_lines_or_say_why() -> None:
    # Given every function of functions/
    # Then each is at most 80 lines, or a "# long: <reason>" comment stands above it
    assert list(_long_functions(ROOT / "functions")) == []
