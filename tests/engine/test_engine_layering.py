"""The engine is a pure-Python layer: it never imports the UI libraries (streamlit, plotly)."""

from __future__ import annotations

import ast
import pathlib

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
