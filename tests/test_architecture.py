"""The package's structure: its modules import one another without a cycle (function-local
imports count: they only hide a cycle), and the library leaves the command line to cli/."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gpmetis"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imported(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The package's modules that ``node`` (in ``module``) imports."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                 for alias in node.names]
    return {name for name in names if name in MODULES}


def import_graph() -> dict[str, set[str]]:
    """Each module's imports of the package's modules, except those made for type checkers."""
    graph = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        graph[module] = {dep for node in ast.walk(tree) if id(node) not in skipped
                         and isinstance(node, (ast.Import, ast.ImportFrom))
                         for dep in imported(module, node)} - {module}
    return graph


def test_no_import_cycle():
    try:
        tuple(TopologicalSorter(import_graph()).static_order())
    except CycleError as exc:
        raise AssertionError(f"import cycle: {' -> '.join(exc.args[1])}") from None


def test_the_finder_sees_a_cycle():
    # the check above can fail: two modules importing each other, one inside a function
    graph = import_graph()
    graph["gpmetis.graph"] = graph["gpmetis.graph"] | {"gpmetis.api"}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError:
        return
    raise AssertionError("a cycle through gpmetis.api was not found")


def test_library_never_imports_click():
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] != "click" for a in node.names), module
            elif isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] != "click", module
