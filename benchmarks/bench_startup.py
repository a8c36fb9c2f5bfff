"""Benchmark the command line's start-up (issue 11): ``python -m engine --help`` and a whole ``privatize``.

Rows:

* ``python -m engine --help`` — a fresh interpreter each time; wall seconds (median of 5), the modules it loads
  (``-X importtime`` total) and whether numpy, pandas, scipy or scikit-learn were imported. Target ≤ 0.4 s.
* ``python -m engine privatize (togo-demo, projection)`` — the data holder's whole command on the authors' demo
  input (``README`` example: B = 0.25, ε1 = 3, δ1 = 1.6e-4, ε2 = 0.9999, δ2 = 7.9e-5, seeded, CSV output to a
  temporary directory), wall seconds (median of 3), with the slowest imports named. Target ≤ 1 s.

Run ``python benchmarks/bench_startup.py`` or ``bash scripts/studio.sh bench startup``.
"""

from __future__ import annotations

import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
PRIVATIZE = ["privatize", "--dataset", "togo-demo", "--mechanism", "projection", "--b", "0.25", "--epsilon1", "3",
             "--delta1", "1.6e-4", "--epsilon2", "0.9999", "--delta2", "7.9e-5", "--seed", "1"]


def _wall(argv: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "engine", *argv], cwd=REPO, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _imports(argv: list[str]) -> tuple[float, list[tuple[str, float]]]:
    """Total import seconds and the five slowest top-level imports (cumulative) under ``-X importtime``."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-m", "engine", *argv], cwd=REPO, check=True,
                         capture_output=True, text=True).stderr
    top: list[tuple[str, float]] = []
    for line in err.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if match and len(match.group(2)) <= 1:  # first-level imports only
            top.append((match.group(3), int(match.group(1)) / 1e6))
    return sum(s for _, s in top), sorted(top, key=lambda t: -t[1])[:5]


def run() -> list[dict]:
    rows = []
    total, _ = _imports(["--help"])
    loaded = subprocess.run(
        [sys.executable, "-c", "import runpy, sys\nsys.argv = ['engine', '--help']\ntry:\n"
         "    runpy.run_module('engine', run_name='__main__')\nexcept SystemExit:\n    pass\n"
         "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pandas', 'scipy', 'sklearn'}),"
         " file=sys.stderr)"],
        cwd=REPO, capture_output=True, text=True, check=True).stderr.strip()
    rows.append({"name": "python -m engine --help", "seconds": _wall(["--help"], 5), "import_seconds": total,
                 "heavy_modules_loaded": loaded, "target": "<= 0.4 s", "note": "median of 5, fresh interpreters"})
    with tempfile.TemporaryDirectory() as tmp:
        argv = [*PRIVATIZE, "--output", str(pathlib.Path(tmp) / "private.csv")]
        wall = _wall(argv, 3)
        total, top = _imports(argv)
    rows.append({"name": "python -m engine privatize (togo-demo, projection, whole command)", "seconds": wall,
                 "import_seconds": total, "slowest_imports": ", ".join(f"{m} {s:.2f}s" for m, s in top),
                 "target": "<= 1 s", "note": "median of 3, fresh interpreters"})
    return rows


if __name__ == "__main__":
    for row in run():
        extras = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
                           if k != "name")
        print(f"{row['name']}: {extras}")
