"""Engine structure: a pure-Python layer that never imports the UI libraries, with an export list per package."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_engine_never_imports_streamlit_or_plotly():
    offenders = []
    for path in (ROOT / "engine").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path}: {n}" for n in names if n.split(".")[0] in {"streamlit", "plotly"}]
    assert offenders == []


#: Packages whose ``__init__`` is edited on another branch at the time of writing (the attacks speed work); they get
#: their export list when that work lands. Keep this set empty otherwise.


def _packages() -> list[str]:
    return sorted(
        ".".join(init.relative_to(ROOT).parent.parts) for init in (ROOT / "engine").rglob("__init__.py")
    )


@pytest.mark.parametrize("package", _packages())
def test_every_engine_package_has_an_export_list_that_resolves(package):
    module = importlib.import_module(package)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list) and exported, f"{package} has no __all__"
    assert len(set(exported)) == len(exported)
    for name in exported:  # a name bound in the package, or one of its modules
        assert hasattr(module, name) or importlib.util.find_spec(f"{package}.{name}") is not None, (package, name)


# ----------------------------------------------------------------------------------------------- import graph
def _type_checking_nodes(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                out.update(id(n) for n in ast.walk(child))
    return out


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.lru_cache(maxsize=1)
def import_graph() -> dict[str, set[str]]:
    """``engine`` module → the ``engine`` modules it imports: EVERY import that runs, including the ones inside
    functions, and the packages whose ``__init__`` Python runs first (not the importer's own). Imports under
    ``if TYPE_CHECKING:`` never run and are left out. (``scripts/contract_metrics.py`` reports from this graph.)"""
    modules = {_module_name(p): p for p in (ROOT / "engine").rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        skip = _type_checking_nodes(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        own = {name.rsplit(".", i)[0] for i in range(name.count(".") + 1)}
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                while target.startswith("engine"):
                    if target not in own:
                        graph[name].add(target)
                    target = target.rpartition(".")[0]
    return graph


def _cycle_from(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for child in sorted(graph[node]):
            if state.get(child) == 1:
                return stack[stack.index(child):] + [child]
            if child not in state:
                found = visit(child)
                if found:
                    return found
        state[node] = 2
        stack.pop()
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_engine_has_no_import_cycle_counting_imports_inside_functions():
    cycle = _cycle_from(import_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


def test_the_cycle_finder_finds_a_lazy_cycle():
    """The check has teeth: an import inside a function that closes a loop is a cycle."""
    graph = {"engine.a": {"engine.b"}, "engine.b": {"engine.c"}, "engine.c": {"engine.a"}, "engine.d": set()}
    assert _cycle_from(graph) == ["engine.a", "engine.b", "engine.c", "engine.a"]
    assert _cycle_from({"engine.a": {"engine.b"}, "engine.b": set()}) is None


#: The core leaf types and the calculus under them: what they may import.
CORE = {"engine.guarantee", "engine.accounting.tdp", "engine.errors", "engine.validation", "engine.constraints",
        "engine.serialization", "engine.accounting", "engine"}
#: Layers above the mechanisms: a mechanism module never imports them.
ABOVE_MECHANISMS = ("engine.analysis", "engine.sweeps", "engine.attacks", "engine.cli", "engine.scale",
                    "engine.recommend", "engine.comparison", "engine.release", "engine.release_analysis",
                    "engine.workshop", "engine.decision_record", "engine.data", "engine.evaluation")


def test_layers_the_core_types_the_mechanisms_and_the_command_line():
    graph = import_graph()
    assert graph["engine.guarantee"] <= CORE, graph["engine.guarantee"] - CORE
    assert graph["engine.accounting.tdp"] <= CORE, graph["engine.accounting.tdp"] - CORE
    for name, imports in graph.items():
        if name.startswith("engine.mechanisms"):
            bad = {i for i in imports if i.startswith(ABOVE_MECHANISMS) and not i.startswith("engine.accounting")}
            assert not bad, (name, bad)
        if name.startswith("engine.scale"):
            assert not {i for i in imports if i.startswith("engine.cli")}, name
