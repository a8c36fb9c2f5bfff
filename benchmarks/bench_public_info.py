"""Benchmark the public-information count release on ``counties-demo`` (67 regions × 24 periods, 100 replicates).

One full release per method (post-processing; Wasserstein with the naive, congenial and prior-congenial bases) at
ε = 1 and ε = 0.01. Targets (issue 13): post-processing ≤ 1 s for the whole study; the exact congenial sampler
≤ 5 s for all 100 replicates of one period (reported: the slowest period of the study, from the progress
callback's timestamps). Single process; wall-clock and CPU seconds are both reported, with the machine's load
average, because the 2-core machine is shared (under load the wall clock overstates the cost).

Run ``python benchmarks/bench_public_info.py`` or ``bash scripts/studio.sh bench public_info``.
"""

from __future__ import annotations

import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine.public_info.count_release import CountReleaseConfig, release_counts  # noqa: E402
from engine.public_info.count_table import counties_demo  # noqa: E402

REPLICATES = 100
METHODS = (("postprocess", "congenial"), ("wasserstein", "naive"), ("wasserstein", "congenial"),
           ("wasserstein", "prior"))


def _one(table, method: str, base: str, epsilon: float) -> dict:
    config = CountReleaseConfig(method=method, base=base, epsilon=epsilon, replicates=REPLICATES)
    stamps: list[tuple[float, float]] = []
    started = (time.perf_counter(), time.process_time())
    release = release_counts(table, config, rng=np.random.default_rng(0),
                             progress=lambda p: stamps.append((time.perf_counter(), time.process_time())))
    seconds = time.perf_counter() - started[0]
    cpu = time.process_time() - started[1]
    per_period = np.diff([started[0], *(s[0] for s in stamps)])
    per_period_cpu = np.diff([started[1], *(s[1] for s in stamps)])
    rel = np.abs(release.counts - table.counts[None]) / np.maximum(table.counts[None], 1)
    row = {
        "name": f"{config.label} ε={epsilon:g} (67×24×{REPLICATES})",
        "seconds": round(seconds, 3),
        "cpu_s": round(cpu, 3),
        "slowest_period_s": round(float(per_period.max()), 3),
        "slowest_period_cpu_s": round(float(per_period_cpu.max()), 3),
        "median_rel_error": round(float(np.median(rel)), 5),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    if method == "postprocess":
        row["target"] = "≤ 1 s whole study"
        row["ratio"] = round(seconds / 1.0, 3)
    elif base in ("congenial", "prior"):
        row["target"] = "≤ 5 s per period (100 replicates)"
        row["ratio"] = round(float(per_period.max()) / 5.0, 3)
    return row


def run() -> list[dict]:
    table = counties_demo()
    rows = []
    for method, base in METHODS:
        for epsilon in (1.0, 0.01):
            rows.append(_one(table, method, base, epsilon))
    return rows


if __name__ == "__main__":
    for r in run():
        print(r, flush=True)
