"""Type check of engine/ with mypy (settings in pyproject.toml, ``[tool.mypy]``), run as a test."""

from __future__ import annotations

import hashlib
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_engine_type_checks():
    # The incremental cache lives in the system's temp directory, one per checkout (never in the repository).
    # mypy checks every cached module against its source before reusing it, so a stale cache cannot hide an error;
    # it only saves time: about 10 CPU s from scratch on the 2-core machine, a few seconds after.
    key = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    cache = pathlib.Path(tempfile.gettempdir()) / f"pps-mypy-cache-{key}"
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "engine", "--cache-dir", str(cache), "--no-color-output"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
