"""Structural metrics of the mechanism contract (issue 32), counted from the source tree with the standard library.

Run from the repository root::

    python scripts/contract_metrics.py            # the summary
    python scripts/contract_metrics.py --details  # every counted line

What is counted (every count is over ``engine/``, ``ui/``, ``pages/`` and ``app.py`` unless said otherwise):

name switches
    A branch on a record mechanism's identity outside that mechanism's own module: a comparison (``==``, ``!=``,
    ``in``, ``not in``) against a registered mechanism's KIND string, or an ``isinstance`` / ``issubclass`` check
    against a registered mechanism class.
hand-kept lists
    A literal tuple, list, set, dict (keys) or ``Literal[...]`` naming two or more registered KIND strings, in the
    product code or in ``tests/engine/test_mechanism_contract.py`` (whose lists the issue names).
other name references
    Any other string constant equal to a registered KIND outside that mechanism's module (docstrings excluded):
    e.g. ``MECHANISMS["mondrian"]`` or a default selection. Reported, not a goal.
release implementations
    Functions outside the mechanisms package (``engine/mechanisms/``: each mechanism's module and the contract they
    share) that turn data into a release: they
    call a mechanism's ``release(...)`` or a partition plan's ``privatize(...)``, call the OpenDP release helper,
    or draw a release's noise themselves (``rng.normal`` / ``rng.laplace`` in ``engine/scale``).
import cycles
    Strongly connected components (size > 1) of the graph of ``engine`` modules, with an edge for EVERY import
    that runs, including imports inside functions (``import a.b`` and ``from a.b import c`` count as an edge to
    ``a.b.c`` when that is a module, else to ``a.b``, and to every package above it that is not above the importing
    module, since Python runs those packages' ``__init__`` first; a package ``__init__`` is the package's module).
    Imports under ``if TYPE_CHECKING:`` never run and are not counted.
``Any`` parameters
    Functions in ``engine/`` with at least one parameter annotated with a type that mentions ``Any``, and the
    number of such parameters.

The mechanism registry is read by importing ``engine.mechanisms`` (KIND → class → module).
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Files whose mechanism-like strings name something else: per-record sum mechanisms (their own registry), the
#: ε-TP calculators' noise laws, and the secure-release paper's clustering experiment labels.
OTHER_REGISTRIES = {
    "engine/per_record",
    "engine/public_info",
    "engine/evaluation/clustering.py",
    "engine/cli/policy.py",
    "ui/sections/per_record_policy.py",
    "ui/sections/public_info_calculators.py",
    "ui/cached.py:power_comparison",
}


def _registry() -> tuple[dict[str, str], dict[str, str]]:
    """(KIND → module path, class name → module path) of the registered record mechanisms."""
    import importlib

    mechanisms = importlib.import_module("engine.mechanisms")
    kinds, classes = {}, {}
    for kind, cls in mechanisms.MECHANISMS.items():
        module = sys.modules[cls.__module__]
        path = str(pathlib.Path(module.__file__).resolve().relative_to(ROOT))
        if path.startswith("tests/"):
            continue  # a toy mechanism registered by a test run in this process
        kinds[kind] = path
        classes[cls.__name__] = path
    return kinds, classes


def _product_files() -> list[pathlib.Path]:
    files = sorted((ROOT / "engine").rglob("*.py")) + sorted((ROOT / "ui").rglob("*.py"))
    files += sorted((ROOT / "pages").rglob("*.py")) + [ROOT / "app.py"]
    return [f for f in files if f.exists()]


def _rel(path: pathlib.Path) -> str:
    return str(path.relative_to(ROOT))


def _excluded(rel: str) -> bool:
    return any(rel == e or rel.startswith(e + "/") for e in OTHER_REGISTRIES if ":" not in e)


def _docstring_nodes(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def mechanism_names(details: bool) -> dict[str, int]:
    kinds, classes = _registry()
    switches: list[str] = []
    lists: list[str] = []
    others: list[str] = []
    files = _product_files() + [ROOT / "tests/engine/test_mechanism_contract.py"]
    for path in files:
        rel = _rel(path)
        if _excluded(rel):
            continue
        is_test = rel.startswith("tests/")
        tree = ast.parse(path.read_text(), filename=rel)
        docstrings = _docstring_nodes(tree)
        counted: set[int] = set()
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Compare) and not is_test:
                names = [s for s in _strings(node) if s in kinds and kinds[s] != rel]
                if names:
                    switches.append(f"{where}: compares with {names}")
                    counted.update(id(n) for n in ast.walk(node))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not is_test:
                if node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
                    names = [n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node.args[1])
                             if isinstance(n, (ast.Name, ast.Attribute))]
                    hits = [n for n in names if n in classes and classes[n] != rel]
                    if hits:
                        switches.append(f"{where}: isinstance against {hits}")
            elif isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Subscript)):
                if isinstance(node, ast.Dict):
                    elements = [k for k in node.keys if k is not None]
                elif isinstance(node, ast.Subscript):
                    if not (isinstance(node.value, ast.Name) and node.value.id == "Literal"):
                        continue
                    elements = [node.slice]
                else:
                    elements = list(node.elts)
                names = [s for e in elements for s in _strings(e) if s in kinds and kinds[s] != rel]
                if len(names) >= 2 and id(node) not in counted:
                    lists.append(f"{where}: lists {names}")
                    counted.update(id(n) for n in ast.walk(node))
        if is_test:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in kinds
                    and kinds[node.value] != rel and id(node) not in counted and id(node) not in docstrings):
                if rel == "ui/cached.py" and node.value == "gaussian":
                    continue  # power_comparison's noise law (public_info), not a record mechanism
                others.append(f"{rel}:{node.lineno}: {node.value!r}")
    if details:
        for title, rows in (("name switches", switches), ("hand-kept lists", lists), ("other references", others)):
            print(f"--- {title} ({len(rows)})")
            for row in rows:
                print("   ", row)
    return {
        "name switches (lines)": len(switches),
        "name switches (files)": len({s.split(":")[0] for s in switches}),
        "hand-kept mechanism lists": len(lists),
        "other mechanism-name references": len(others),
    }


def release_implementations(details: bool) -> int:
    found: list[str] = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        rel = _rel(path)
        if rel.startswith("engine/mechanisms/"):
            continue
        tree = ast.parse(path.read_text(), filename=rel)
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            why = None
            for node in ast.walk(func):
                if not isinstance(node, ast.Call):
                    continue
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                keywords = {k.arg for k in node.keywords}
                if name == "release" and "rng" in keywords:
                    why = "calls a mechanism's release(…, rng=…)"
                elif name == "privatize" and isinstance(f, ast.Attribute) and rel.startswith("engine/scale"):
                    why = "calls a partition plan's privatize(…)"
                elif name in ("opendp_gaussian_release",):
                    why = f"calls {name}"
                elif name in ("normal", "laplace") and rel.startswith("engine/scale"):
                    why = f"draws noise itself (rng.{name})"
            if why:
                found.append(f"{rel}:{func.lineno} {func.name}: {why}")
    if details:
        print(f"--- release implementations ({len(found)})")
        for row in found:
            print("   ", row)
    return len(found)


def import_graph() -> dict[str, set[str]]:
    """Module → the engine modules it imports (every import that runs, at any depth): the layering test's graph
    (``tests/engine/test_engine_layering.py``), so the figure reported here is the one the test checks."""
    from tests.engine.test_engine_layering import import_graph as graph

    return {name: set(targets) for name, targets in graph().items()}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def lazy_imports() -> int:
    count = 0
    for path in (ROOT / "engine").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for func in ast.walk(tree):
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                count += sum(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(func))
    return count


def any_parameters(details: bool) -> tuple[int, int]:
    functions = parameters = 0
    rows = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = func.args
            params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p is not None]
            hits = [p.arg for p in params if p.annotation is not None and "Any" in ast.unparse(p.annotation)]
            if hits:
                functions += 1
                parameters += len(hits)
                rows.append(f"{_rel(path)}:{func.lineno} {func.name}({', '.join(hits)})")
    if details:
        print(f"--- functions with Any parameters ({functions})")
        for row in rows:
            print("   ", row)
    return functions, parameters


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list every counted line")
    args = parser.parse_args(argv)
    results: dict[str, object] = dict(mechanism_names(args.details))
    results["release implementations"] = release_implementations(args.details)
    graph = import_graph()
    cycles = import_cycles(graph)
    if args.details:
        print(f"--- import cycles ({len(cycles)})")
        for c in cycles:
            print("   ", " ↔ ".join(c))
    results["import cycles (with lazy imports)"] = len(cycles)
    results["modules in import cycles"] = sum(len(c) for c in cycles)
    results["imports inside functions"] = lazy_imports()
    functions, params = any_parameters(args.details)
    results["engine functions with Any parameters"] = functions
    results["Any parameters in engine"] = params
    width = max(len(k) for k in results)
    for key, value in results.items():
        print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
