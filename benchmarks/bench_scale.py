"""Benchmark the out-of-core release on Dask (``privatize --engine dask``) against the in-memory path.

1. Generate a partitioned Parquet dataset of n × 15 (10 files), n = 10⁶ by default, 10⁷ with
   ``STUDIO_BENCH_FULL=1`` (or any n with ``STUDIO_BENCH_SCALE_ROWS``).
2. Release it with the private projection (k = 10⁴, clip + standardise, so pass 1 runs) through a LocalCluster of
   2 single-threaded worker processes, then of 1 worker, then of 2 again (the faster 2-worker run gives the
   measured scaling 1 → 2). Peak memory per worker is the
   worker processes' own peak resident set (``getrusage``, the workers are spawned fresh for every cluster).
   Targets at 10⁷ rows: < 60 s wall, < 2 GB peak per worker.
3. The in-memory path (read the whole table, ``run_release``, write one Parquet file) in a fresh subprocess, for
   time and peak memory (VmHWM).
4. From these: throughput per core (rows/s), and on paper the cost of 10⁸ rows on 16 workers and the largest
   table the in-memory path can take on a 24 GB machine.

The machine is shared: the load average is recorded with the figures.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

D = 15
FILES = 10
K = 10_000
FEATURES = tuple(f"f{i:02d}" for i in range(D))


def _rows() -> int:
    if os.environ.get("STUDIO_BENCH_SCALE_ROWS"):
        return int(os.environ["STUDIO_BENCH_SCALE_ROWS"])
    return 10_000_000 if os.environ.get("STUDIO_BENCH_FULL") == "1" else 1_000_000


def _generate(folder: pathlib.Path, n: int) -> float:
    """n × 15 rows in FILES Parquet files, one file at a time (memory of one file only). Returns seconds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    started = time.perf_counter()
    folder.mkdir()
    rng = np.random.default_rng(2026)
    scales = np.linspace(1.0, 50.0, D)
    for i, rows in enumerate(np.diff(np.linspace(0, n, FILES + 1).astype(int))):
        block = rng.standard_normal((rows, D)) * scales + 3.0 * scales
        table = pa.Table.from_arrays([pa.array(block[:, j]) for j in range(D)], names=list(FEATURES))
        pq.write_table(table, folder / f"part-{i:03d}.parquet", row_group_size=250_000)
    return time.perf_counter() - started


def _config():
    from engine.data.preparation import DataSpec, Normalization
    from engine.mechanisms.private_projection import PrivateProjection
    from engine.release import ReleaseConfig

    mech = PrivateProjection(b=0.25, epsilon1=3.0, delta1=1e-8, epsilon2=0.9999, delta2=1e-8, k=K)
    return ReleaseConfig(DataSpec(FEATURES, normalization=Normalization("clip")), mech.to_dict())


def _partition_rows(n: int) -> int:
    """20 partitions: 10 tasks per worker on 2 workers (load balance), 500,000 rows (60 MB of input) at n = 10⁷."""
    return max(1_000, -(-n // 20))


def _count(source: pathlib.Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(source.glob("*.parquet")))


def _worker_peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _dask_run(source: pathlib.Path, out: pathlib.Path, workers: int) -> dict:
    from engine.scale.cluster import dask_client
    from engine.scale.out_of_core import run_out_of_core_release

    started = time.perf_counter()
    with dask_client(None, n_workers=workers, memory_limit="4GiB") as client:
        startup = time.perf_counter() - started
        t0 = time.perf_counter()
        summary = run_out_of_core_release(client, str(source), str(out), _config(),
                                          partition_rows=_partition_rows(_count(source)))
        seconds = time.perf_counter() - t0
        peaks = sorted(client.run(_worker_peak_rss_mb).values())
    return {"seconds": seconds, "startup": startup, "peaks": peaks, "passes": summary["execution"]["passes_seconds"],
            "partitions": summary["execution"]["input"]["partitions"]}


_IN_MEMORY = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import pandas as pd
from benchmarks.bench_scale import _config
from engine.release import release_frame, run_release
from engine.rng import make_rng
t0 = time.perf_counter()
frame = pd.read_parquet(sys.argv[2])
t1 = time.perf_counter()
config = _config()
prepared, release = run_release(frame, config, rng=make_rng(None))
del frame
t2 = time.perf_counter()
release_frame(prepared, release).to_parquet(sys.argv[3], index=False)
t3 = time.perf_counter()
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) / 1024
print(json.dumps({"read": t1 - t0, "release": t2 - t1, "write": t3 - t2, "seconds": t3 - t0, "peak_mb": peak}))
"""


def _in_memory_run(source: pathlib.Path, out: pathlib.Path) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", _IN_MEMORY, str(ROOT), str(source), str(out)],
        capture_output=True, text=True, check=True, cwd=str(ROOT),
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def run() -> list[dict]:
    n = _rows()
    load = os.getloadavg()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        base = pathlib.Path(tmp)
        source = base / "input"
        gen = _generate(source, n)
        size_mb = sum(f.stat().st_size for f in source.iterdir()) / 1e6
        # 2 workers before and after the 1-worker run: on a shared machine the load changes from minute to minute,
        # so both are reported and the faster one is used for the ratios.
        first = _dask_run(source, base / "out2a", 2)
        one = _dask_run(source, base / "out1", 1)
        second = _dask_run(source, base / "out2b", 2)
        two = min(first, second, key=lambda r: r["seconds"])
        memory = _in_memory_run(source, base / "memory.parquet")

    per_core = n / (two["seconds"] * 2)
    scaling = one["seconds"] / two["seconds"]
    efficiency = scaling / 2
    # Super-linear "efficiency" on a shared machine is load noise: never let it make the estimate optimistic.
    efficiency_for_estimate = min(1.0, efficiency)
    # On paper: 10⁸ rows on 16 workers at this per-core throughput and the measured 1 → 2 efficiency, plus the
    # cluster's fixed cost (startup excluded; scheduling ~ms per task, 100 partitions per pass).
    est_108 = 1e8 / (per_core * 16 * efficiency_for_estimate)
    bytes_per_row = memory["peak_mb"] * 1e6 / n
    largest_in_memory = 24e9 * 0.9 / bytes_per_row  # 10 % left for the OS
    note_load = f"load average {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f} on {os.cpu_count()} cores (shared machine)"
    rows.append({"name": f"generate {n:,} × {D} Parquet ({FILES} files)", "seconds": gen,
                 "note": f"{size_mb:.0f} MB on disk"})
    rows.append({
        "name": f"dask release n={n:,} d={D} k={K}, 2 workers",
        "seconds": two["seconds"],
        "peak_mb": max(two["peaks"]),
        "target": "< 60 s and < 2048 MB per worker at n = 10⁷",
        "note": (f"{two['partitions']} partitions; passes {json.dumps({k: round(v, 2) for k, v in two['passes'].items()})}; "
                 f"worker peaks {[round(p) for p in two['peaks']]} MB; cluster start {two['startup']:.1f} s; "
                 f"the two 2-worker runs took {first['seconds']:.1f} s and {second['seconds']:.1f} s; "
                 f"{note_load}"),
    })
    rows.append({
        "name": f"dask release n={n:,}, 1 worker",
        "seconds": one["seconds"],
        "peak_mb": max(one["peaks"]),
        "ratio": scaling,
        "note": f"scaling 1 → 2 workers: {scaling:.2f}× (efficiency {efficiency:.0%})",
    })
    rows.append({
        "name": f"in-memory release n={n:,} (read + release + write, fresh process)",
        "seconds": memory["seconds"],
        "peak_mb": memory["peak_mb"],
        "ratio": memory["seconds"] / two["seconds"],
        "note": f"read {memory['read']:.1f} s, release {memory['release']:.1f} s, write {memory['write']:.1f} s",
    })
    rows.append({
        "name": "throughput and estimates",
        "seconds": 0.0,
        "note": (f"{per_core:,.0f} rows/s per core (2 workers); on paper 10⁸ rows on 16 workers ≈ {est_108:.0f} s "
                 f"(+ cluster start); in-memory peak {bytes_per_row:.0f} bytes/row → largest table on a 24 GB "
                 f"machine ≈ {largest_in_memory / 1e6:.0f} million rows × {D}"),
    })
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
