"""The house rules that a reader cannot check by eye (docs/architecture.md), read from the
source itself: imports point down (no package and no module imports what imports it),
``bench/`` and ``worlds/`` do not import ``tests/``; modules stay at most 400 lines and
functions at most 80 unless a ``# long: <reason>`` comment stands right above them (a mark
above a function that fits is stale, and fails) — in every folder of Python (the product,
``infra/``, ``worlds/``, ``bench/``, ``app.py``, the tests' support code) and in the
viewer's JavaScript (functions found by acorn, the parser from npm).

The import graph is static (``ast``): every ``import`` and ``from … import``, those inside
functions included (a lazy import is still a dependency); only imports under ``if
TYPE_CHECKING:`` are left out, since they never run.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Final

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


def test_bench_and_worlds_do_not_import_tests() -> None:
    # Given every import of bench/ and worlds/ (worlds/ is shared by both, so it imports
    # neither)
    forbidden = {"bench": ("tests",), "worlds": ("tests", "bench")}
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for folder, packages in forbidden.items()
        for path in _sources(ROOT / folder)
        for name in imported_names(ast.parse(path.read_text()))
        if name.split(".")[0] in packages
    ]
    # Then none names them
    assert offenders == []


# --- sizes: modules ≤ 400 lines, functions ≤ 80 (docs/architecture.md) ----------------------

#: Every folder of Python the house rules hold; under ``tests/``, the support code (fixtures,
#: worlds, doubles: every module not named ``test_*.py``). The test modules themselves are
#: tables of cases read one at a time, held to no size.
PYTHON_FOLDERS: Final = ("functions", "infra", "worlds", "bench", "tests")
VIEWER_SCRIPTS: Final = PACKAGE_DIR / "viewer" / "static"
ACORN: Final = ROOT / ".cache" / "npm" / "node_modules" / "acorn"
JS_FUNCTIONS: Final = ROOT / "tests" / "support" / "js_functions.cjs"

#: Functions allowed over 80 lines without a ``# long:`` mark, each with its reason (none
#: today); an entry that is no longer too long fails the test below, so none outlives it.
EXEMPT: Final[dict[str, str]] = {}


def house_sources(root: Path = ROOT) -> list[Path]:
    """Every Python module the house rules hold: the folders above and ``app.py``."""
    found = [root / "app.py"] if (root / "app.py").is_file() else []
    for folder in PYTHON_FOLDERS:
        if (root / folder).is_dir():
            found += [
                path
                for path in _sources(root / folder)
                if not (folder == "tests" and path.name.startswith("test_"))
            ]
    return found


def _line_count(path: Path) -> int:
    return len(path.read_text().splitlines())


def _functions(path: Path) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(qualified name, node) of every function and method of a module."""

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, Any]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield f"{prefix}{child.name}", child
                yield from visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, f"{prefix}{child.name}.")
            else:
                yield from visit(child, prefix)

    yield from visit(_tree(path), "")


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _long_functions(paths: list[Path], root: Path = ROOT) -> Iterator[str]:
    """``path::name (n lines)`` of each function over the limit without a ``# long:`` line
    right above it (or above its decorators)."""
    for path, name, length, marked in _measured(paths):
        if length > MAX_FUNCTION_LINES and not marked:
            yield f"{path.relative_to(root).as_posix()}::{name} ({length} lines)"


def _measured(paths: list[Path]) -> Iterator[tuple[Path, str, int, bool]]:
    for path in paths:
        lines = path.read_text().splitlines()
        for name, node in _functions(path):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            marked = first >= 2 and lines[first - 2].strip().startswith(LONG_MARK)
            yield path, name, length, marked


def _stale_marks(paths: list[Path], root: Path = ROOT) -> list[str]:
    """Each ``# long:`` line that stands above no function over the limit."""
    stale = []
    for path in paths:
        lines = path.read_text().splitlines()
        needed = {
            min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            for _, node in _functions(path)
            if (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_FUNCTION_LINES
        }
        for number, line in enumerate(lines, start=1):
            if line.strip().startswith(LONG_MARK) and number not in needed:
                stale.append(f"{path.relative_to(root).as_posix()}:{number}")
    return stale


def test_a_long_function_without_a_reason_is_found(tmp_path: Path) -> None:
    # Given a module with two long functions, one marked with its reason, and a long method
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    method = "".join(f"        x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    source = (
        f"def unmarked():\n{body}\n# long: a reason\ndef marked():\n{body}\n"
        f"class C:\n    def method(self):\n{method}"
    )
    (tmp_path / "m.py").write_text(source)
    # Then only the unmarked ones are reported, by qualified name
    found = [f.split("::")[1] for f in _long_functions([tmp_path / "m.py"], tmp_path)]
    assert found == ["unmarked (81 lines)", "C.method (81 lines)"]


def test_a_mark_above_a_short_function_or_nothing_is_stale(tmp_path: Path) -> None:
    # Given a mark above a short function, one above nothing, and one that is needed
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    source = (
        "# long: no longer\ndef short():\n    pass\n\n# long: orphan\nX = 1\n\n"
        f"# long: needed\n@decorator\ndef long():\n{body}"
    )
    (tmp_path / "m.py").write_text(source)
    # Then the first two are stale
    assert _stale_marks([tmp_path / "m.py"], tmp_path) == ["m.py:1", "m.py:5"]


def test_the_house_rules_cover_every_folder_of_python() -> None:
    # Given the modules the rules hold
    held = {path.relative_to(ROOT).as_posix() for path in house_sources()}
    # Then every folder of Python is among them, the tests' support code but no test module
    for expected in (
        "app.py",
        "functions/video_index/api/resolver.py",
        "infra/stack.py",
        "worlds/inventory_fixtures.py",
        "bench/reconcile.py",
        "tests/support/browser.py",
        "tests/conftest.py",
    ):
        assert expected in held, expected
    assert not any(Path(name).name.startswith("test_") for name in held)


def test_modules_are_at_most_400_lines() -> None:
    # Given the line count of every module the house rules hold
    counts = {p.relative_to(ROOT).as_posix(): _line_count(p) for p in house_sources()}
    assert counts["functions/video_index/api/resolver.py"] > 0
    # Then none is longer than 400 lines
    assert {path: n for path, n in counts.items() if n > MAX_MODULE_LINES} == {}


def test_functions_are_at_most_80_lines_or_say_why() -> None:
    # Given every function of every module the house rules hold
    found = list(_long_functions(house_sources()))
    # Then each is at most 80 lines, or a "# long: <reason>" comment stands above it, or it
    # is one of the few named exemptions
    assert [f for f in found if f.split(" (")[0] not in EXEMPT] == []
    # And every exemption is still needed (else it goes)
    assert sorted(set(EXEMPT) - {f.split(" (")[0] for f in found}) == []


def test_no_long_mark_is_stale() -> None:
    # A "# long:" above a function that fits, or above nothing, hides the next long one
    assert _stale_marks(house_sources()) == []


# --- the viewer's JavaScript ---------------------------------------------------------------


def js_functions(paths: list[Path]) -> dict[Path, list[dict[str, Any]]]:
    """Every function of each script (name, first and last line), parsed by acorn."""
    assert (ACORN / "package.json").is_file(), f"{ACORN} is missing: run `make install`"
    node = shutil.which("node")
    assert node, "node is missing: the house rules parse the viewer's JavaScript with it"
    listed = subprocess.run(
        [node, str(JS_FUNCTIONS), str(ACORN), *map(str, paths)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return {Path(name): found for name, found in json.loads(listed.stdout).items()}


def test_the_js_function_finder_sees_every_kind_of_function(tmp_path: Path) -> None:
    # Given a script with a declaration, an arrow function in a variable, a method, an object
    # method and braces inside a string, a template and a regular expression
    script = tmp_path / "s.js"
    script.write_text(
        'function a() {\n  return "}";\n}\n'
        "const b = () => {\n  return `${1}}`;\n};\n"
        "class C {\n  m() {\n    return /}/;\n  }\n}\n"
        "export const o = { k() {} };\n"
    )
    # Then each is found with its lines
    found = [(f["name"], f["start"], f["end"]) for f in js_functions([script])[script]]
    assert found == [("a", 1, 3), ("b", 4, 6), ("m", 8, 10), ("k", 12, 12)]


def test_the_viewer_scripts_are_at_most_400_lines_and_their_functions_80() -> None:
    # Given every script of the viewer's page
    scripts = sorted(VIEWER_SCRIPTS.glob("*.js"))
    assert len(scripts) > 10
    # Then none is longer than 400 lines
    lengths = {p.name: _line_count(p) for p in scripts}
    assert {name: n for name, n in lengths.items() if n > MAX_MODULE_LINES} == {}
    # And no function of theirs is longer than 80
    long = [
        f"{path.name}::{f['name']} ({f['end'] - f['start'] + 1} lines)"
        for path, found in js_functions(scripts).items()
        for f in found
        if f["end"] - f["start"] + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []
