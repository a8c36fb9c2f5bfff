"""Every file the Studio writes goes through one module (issue 35 items 2 and 3): ``engine/output_files.py`` writes
files atomically, ``engine/export_csv.py`` makes every CSV (formula cells neutralised) and the Dask release's
staging folder is written by ``engine/scale/atomic_output.py`` and committed through ``engine.output_files``.

This walks the source of ``engine/``, ``ui/``, ``pages/`` and ``app.py`` for calls that write a file — ``to_csv``,
``to_parquet``, ``to_json``/``to_excel`` with a path, ``write_text``, ``write_bytes``, ``write_table``, ``open`` or
``os.open`` for writing, and any ``to_csv`` (a CSV made as text for a download must be neutralised too) — and
allows them only in those modules (plus the exceptions listed, each with its
reason). A new writer elsewhere fails here: route it through ``engine.output_files``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Where writing is allowed, and why.
ALLOWED = {
    "engine/output_files.py": "the one output module",
    "engine/export_csv.py": "the one CSV writer (bytes for downloads; files through engine.output_files)",
    "engine/scale/atomic_output.py": "partition files and the sidecar inside the hidden staging folder, which "
                                     "engine.output_files' checks and commit publish",
    "engine/fingerprint.py": "the installation's secret fingerprint key (configuration, not a command's output)",
}
WRITING_METHODS = {"to_csv", "to_parquet", "to_excel", "write_text", "write_bytes", "write_table", "to_feather"}


def _writes(tree: ast.AST) -> list[tuple[int, str]]:
    """Calls that write a file. Allowed: the output module's own functions called by name (``write_text(…)``
    imported from engine.output_files), and whatever a ``write_with(path, writer)`` call's writer does (it writes
    into the output module's temporary file)."""
    inside_write_with = {
        id(inner) for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "write_with"
        for argument in node.args[1:] for inner in ast.walk(argument)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in inside_write_with:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if isinstance(func, ast.Name) and name in ("write_text", "write_bytes"):
            continue  # engine.output_files' functions, imported by name
        if name in WRITING_METHODS:
            found.append((node.lineno, name))  # to_csv without a target too: every CSV comes from export_csv
        elif name == "open":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            flags = ast.unparse(node.args[1]) if isinstance(func, ast.Attribute) and len(node.args) > 1 else ""
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax+"):
                found.append((node.lineno, f"open(..., {mode.value!r})"))
            elif "O_WRONLY" in flags or "O_RDWR" in flags or "O_CREAT" in flags:
                found.append((node.lineno, "os.open for writing"))
    return found


def test_files_are_written_only_through_the_output_module():
    sources = [*ROOT.glob("engine/**/*.py"), *ROOT.glob("ui/**/*.py"), *ROOT.glob("pages/**/*.py"), ROOT / "app.py"]
    assert len(sources) > 100
    offenders = []
    for path in sources:
        relative = path.relative_to(ROOT).as_posix()
        if relative in ALLOWED:
            continue
        for line, call in _writes(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{relative}:{line}: {call}")
    assert not offenders, "write through engine.output_files instead:\n" + "\n".join(offenders)


def test_the_walk_finds_the_writes_it_must_refuse():
    """The detector itself: each kind of write is found (a check that finds nothing cannot fail)."""
    code = "\n".join([
        "frame.to_csv(path, index=False)", "frame.to_csv(index=False)", "frame.to_parquet(p)",
        "Path(p).write_text('x')", "open(p, 'wb')", "open(p)", "os.open(p, os.O_WRONLY | os.O_CREAT)",
        "pq.write_table(t, p)", "write_text(p, 'x')", "write_with(p, lambda h: frame.to_parquet(h))",
    ])
    assert [call for _, call in _writes(ast.parse(code))] == [
        "to_csv", "to_csv", "to_parquet", "write_text", "open(..., 'wb')", "os.open for writing", "write_table"]
