"""Type check of engine/ with mypy (settings in pyproject.toml, ``[tool.mypy]``), run as a test."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_engine_type_checks(tmp_path):
    # A fresh cache per run (in pytest's tmp dir): nothing is written to the repository, and no stale cache from
    # another checkout can hide an error. About 10 s on the 2-core machine.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "engine", "--cache-dir", str(tmp_path / "mypy-cache"), "--no-color-output"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
