"""``python -m ui.serve``: ``streamlit run app.py`` without Streamlit's legacy page router, with the first page's
modules imported before the server answers (the deep-link dialog it prevents: tests/e2e/test_deep_link.py)."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager

from ui import serve

ROOT = Path(__file__).resolve().parents[2]


def test_serve_runs_the_app_with_the_legacy_router_off_and_the_first_page_imported(monkeypatch):
    seen = []

    def fake_cli_main() -> None:  # what streamlit's command line would start, and the state it would start in
        seen.append((list(sys.argv), PagesManager.uses_pages_directory,
                     [name for name in serve.FIRST_PAGE_MODULES if name not in sys.modules],
                     {name: os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                              "MKL_NUM_THREADS")}))

    monkeypatch.setattr("streamlit.web.cli.main", fake_cli_main)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # an operator's own setting is kept
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)  # as in a new server process
    monkeypatch.setattr(sys, "argv", ["serve"])
    serve.main(["--server.port", "8999"])
    assert seen == [(["streamlit", "run", str(ROOT / "app.py"), "--server.port", "8999"], False, [],
                     {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "1"})]


def test_the_first_page_modules_are_what_the_app_and_the_start_page_import():
    imported = set()
    for script in (ROOT / "app.py", ROOT / "pages" / "studio" / "start.py"):
        for node in ast.walk(ast.parse(script.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "ui":  # from ui import session_store
                imported.update(f"ui.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ui."):
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names if alias.name.startswith("ui."))
    assert imported == set(serve.FIRST_PAGE_MODULES)


def test_importing_the_first_page_modules_logs_no_runtime_warning():
    """Issue 34 §5: the server's start printed 35 "No runtime found, using MemoryCacheStorageManager" lines, one per
    ``st.cache_data`` decorator created before the runtime exists. A fresh interpreter imports the modules as the
    server does and logs none; another warning of the same logger still passes the filter."""
    import subprocess

    code = (
        "import sys; from ui import serve; serve.import_first_page_modules(); "
        "print('--- imported', file=sys.stderr, flush=True); "
        "import streamlit as st; st.cache_data(lambda: 1)"  # after the filter: Streamlit's own warning again
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    during, after = done.stderr.split("--- imported")
    assert "No runtime found" not in during  # 35 lines before: one per cache decorator of ui.cached
    assert after.count("No runtime found") == 1  # the filter is gone again: only the modules' imports were quiet
