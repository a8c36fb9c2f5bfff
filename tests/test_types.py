"""Type check of engine/ and the app (app.py, ui/, pages/) with mypy (settings in pyproject.toml, ``[tool.mypy]``),
run as a test."""

from __future__ import annotations

import hashlib
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_engine_and_app_type_check():
    # The incremental cache lives in the system's temp directory, one per checkout (never in the repository).
    # mypy checks every cached module against its source before reusing it, so a stale cache cannot hide an error;
    # it only saves time: about 19 CPU s from scratch on the 2-core machine (14 of them engine/), under 1 s after.
    key = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    cache = pathlib.Path(tempfile.gettempdir()) / f"pps-mypy-cache-{key}"
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "engine", "ui", "pages", "app.py", "--cache-dir", str(cache),
         "--no-color-output"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # wall time: from scratch on a machine shared with other work it took 54 s
    )
    assert result.returncode == 0, result.stdout + result.stderr
