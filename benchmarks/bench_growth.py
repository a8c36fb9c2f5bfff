"""Benchmark: how a sweep's cost grows with the number of rows (issue 11).

Rows:

* ``quick sweep, generated n × 15`` for n ∈ {4,200, 20,800, 200,000} — the ``quick`` preset (90 cells) on a generated
  table with a binary outcome (classification program, all three attacks), 2 workers of the session's pool. The
  note gives seconds per cell (wall and CPU) and the stages' CPU per cell, measured inline on a few cells at
  B = 0.25, with the dominating one named. Target: the 200,000-row sweep within 2 minutes.
* ``quick sweep, generated 25,000 × 30`` — the table the dashboard's browser target names (a quick sweep in the
  browser ≤ 30 s); measured here in-process, without the browser (its drawing is in ``bench_dashboard``).

Run: ``bash scripts/studio.sh bench growth`` (about 4 minutes on the 2-core machine).
"""

from __future__ import annotations

import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

WORKERS = 2
SIZES: tuple[tuple[int, int], ...] = ((4_200, 15), (20_800, 15), (200_000, 15), (25_000, 30))
#: The issue's statement for 200,000 rows, in seconds.
TARGETS = {(200_000, 15): 120.0, (25_000, 30): 30.0}


def _stages(data, cells: int = 3) -> dict[str, float]:
    """CPU seconds per cell of each stage at B = 0.25 (bench_sweep's measurement, on these data)."""
    from bench_sweep import _stage_rows

    return {row["name"].removeprefix("cell "): row["seconds"] for row in _stage_rows(data, cells)}


def run() -> list[dict]:
    from bench_dashboard import _generated_table
    from bench_sweep import _load

    from engine.data.preparation import prepare
    from engine.sweeps import preset, released_rows, run_sweep

    rows: list[dict] = []
    for n, d in SIZES:
        frame, spec, program = _generated_table(n, d)
        data = prepare(frame, spec)
        config = preset("quick", released_rows(data.n), program=program, seed=1)
        started = time.perf_counter()
        result = run_sweep(data, config, workers=WORKERS, use_cache=False)
        seconds = time.perf_counter() - started
        stages = _stages(data)
        dominating = max(stages, key=stages.get)
        row = {"name": f"quick sweep, generated {n:,} × {d}", "seconds": seconds,
               "cpu_seconds": result.cpu_seconds,
               "note": (f"{config.n_cells} cells, {WORKERS} workers: {seconds / config.n_cells:.3f} s per cell "
                        f"(CPU {result.cpu_seconds / config.n_cells:.3f} s); per cell at B = 0.25: "
                        + ", ".join(f"{k} {v:.3f} s" for k, v in stages.items())
                        + f"; dominating: {dominating} ({_load()})")}
        if (n, d) in TARGETS:
            row.update(target=TARGETS[n, d], ratio=seconds / TARGETS[n, d])
        rows.append(row)
    return rows


if __name__ == "__main__":  # print through the benchmarks' runner (one table format)
    from run import main

    sys.exit(main([sys.argv[0], "growth"]))
