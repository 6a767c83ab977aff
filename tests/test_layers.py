"""The layout rules of docs/ARCHITECTURE.md, checked on the source: imports point down only,
no module cycles, no function over 120 lines, cli.py at most 250 lines.

Every import of a ragmeter module counts, at the top of a module or inside a function. For the
layers, ``if TYPE_CHECKING:`` blocks are exempt (they never run); for cycles they count too: two
modules that name each other's types, one of them at run time, are one module in two files.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "ragmeter"

#: the layer of each top-level module or package; a module may import its own layer or lower
LAYERS: dict[str, int] = {
    "errors": 0,
    "_accel": 0,
    "_native": 0,
    "data": 0,
    "measures": 1,
    "core": 1,
    "io": 2,
    "metrics": 3,
    "stats": 3,
    "evaluation": 4,
    "sweep": 4,
    "analysis": 5,
    "judges": 5,
    "pipeline": 5,
    "store": 5,
    "report": 6,
    "workflows": 7,
    "web": 8,
    "commands": 9,
    "cli": 10,
    "__main__": 11,
    "__init__": 11,
}
#: known exceptions, each to be removed when fixed (the test fails on any other)
KNOWN_CYCLES: set[frozenset[str]] = set()
KNOWN_LONG: set[str] = set()
MAX_FUNCTION_LINES = 120
MAX_CLI_LINES = 250


def _module(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(
    tree: ast.AST, module: str, is_package: bool, *, typing: bool = False
) -> list[tuple[str, int]]:
    """``(imported name, line)`` of every ragmeter import that runs (with ``typing``, also those
    under ``if TYPE_CHECKING:``): ``X`` for ``import X``, ``X.a`` for ``from X import a`` (the
    submodule ``a`` or a name in ``X``)."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not typing:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = module.split(".")
            base = base[: len(base) - node.level + (1 if is_package else 0)]
            name = ".".join([*base, node.module or ""]) if node.level else node.module or ""
            # from X import a: the submodule X.a when there is one, else X (resolved later)
            found.extend((f"{name.rstrip('.')}.{a.name}", node.lineno) for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [(name, line) for name, line in found if name.split(".")[0] == "ragmeter"]


def _sources() -> list[tuple[Path, str, ast.Module]]:
    return [
        (path, _module(path), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(SRC.rglob("*.py"))
    ]


def _known_module(name: str, modules: set[str]) -> str | None:
    """The ragmeter module ``name`` refers to (a name imported from a package: the package)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def test_imports_point_down() -> None:
    upward = []
    for path, module, tree in _sources():
        own = _top(module)
        for name, line in _imports(tree, module, path.name == "__init__.py"):
            target = _top(name)
            if target == own or target not in LAYERS:
                continue  # a top-level name of ragmeter (ragmeter.evaluate) is no module
            if LAYERS[target] > LAYERS.get(own, 5):
                upward.append(f"{path.relative_to(SRC.parent)}:{line} {own} imports {name}")
    assert not upward, "\n".join(upward)


def _cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(frozenset(component))
    return out


def _edges(sources: list[tuple[Path, str, ast.Module]]) -> dict[str, set[str]]:
    """Module -> the ragmeter modules it imports, run-time and type-checking imports alike."""
    modules = {module for _, module, _ in sources}
    edges: dict[str, set[str]] = {}
    for path, module, tree in sources:
        if module == "ragmeter":
            continue
        for name, _ in _imports(tree, module, path.name == "__init__.py", typing=True):
            target = _known_module(name, modules)
            # every import loads the root package first, so an edge to it is no cycle
            if target not in (None, "ragmeter", module):
                edges.setdefault(module, set()).add(target)
    return edges


def test_no_module_cycles() -> None:
    cycles = [c for c in _cycles(_edges(_sources())) if c not in KNOWN_CYCLES]
    assert not cycles, "\n".join(" <-> ".join(sorted(c)) for c in cycles)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a function-level import one way, a module-level one the other
        ("def f():\n    from ragmeter.core.b import g\n", "from ragmeter.core.a import f\n"),
        # a function-level import one way, a type-only one the other (core.align <-> judgments)
        (
            "def f():\n    from ragmeter.core.b import g\n",
            "if TYPE_CHECKING:\n    from ragmeter.core.a import f\n",
        ),
    ],
)
def test_the_cycle_scan(a: str, b: str) -> None:
    sources = [
        (SRC / "core" / f"{name}.py", f"ragmeter.core.{name}", ast.parse(text))
        for name, text in (("a", a), ("b", b))
    ]
    assert _cycles(_edges(sources)) == [frozenset({"ragmeter.core.a", "ragmeter.core.b"})]


def test_no_function_over_120_lines() -> None:
    long = []
    for path, module, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                name = f"{module}.{node.name}"
                if lines > MAX_FUNCTION_LINES and name not in KNOWN_LONG:
                    long.append(f"{path.relative_to(SRC.parent)}:{node.lineno} {name} {lines}")
    assert not long, "\n".join(long)


def test_cli_is_short() -> None:
    lines = len((SRC / "cli.py").read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_CLI_LINES, f"cli.py has {lines} lines"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ragmeter.io.readers import read_run", ["ragmeter.io.readers.read_run"]),
        ("from ragmeter import evaluation", ["ragmeter.evaluation"]),
        ("if TYPE_CHECKING:\n    import ragmeter.cli", []),
        ("def f():\n    import ragmeter.cli", ["ragmeter.cli"]),
        ("from . import state", ["ragmeter.web.state"]),
    ],
)
def test_the_import_scan(source: str, expected: list[str]) -> None:
    tree = ast.parse(source)
    assert [n for n, _ in _imports(tree, "ragmeter.web", is_package=True)] == expected
