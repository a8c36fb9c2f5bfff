"""Issue 33's table in one run: each row against its floor or anchor, in CPU seconds, with the load average.

Rows (n = 2·10⁶ rows × 15 by default; ``STUDIO_BENCH_FULL=1``: 10⁷ as in the issue; ``STUDIO_BENCH_BROWSER=1`` adds
the browser rows of ``bench_dashboard``):

1. the vetted sampler per value on one core (CPU µs) against numpy's (the floor) and OpenDP's default granularity
   (before), its use of two cores, and what 10⁶ × 15 costs on 2 cores;
2. ``privatize --engine dask`` (numpy noise, 2 workers) against ``floor_release.py`` (2 processes), CPU and wall,
   and the processes left in the command's session after it ended;
3. the in-memory release's peak memory against the data's size;
4. ``privatize --help`` against ``import numpy``;
5. ``privatize --mechanism projection`` on 10⁶ rows: CPU with the command's one BLAS thread against BLAS's own threads;
6. the quick nigeria-demo sweep and the paper togo-demo sweep, in CPU seconds (the command and its workers).

CPU seconds are the processes' own (``getrusage``: user + system, children included once they are waited for).
"""

from __future__ import annotations

import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

D = 15
FEATURES = ",".join(f"f{j:02d}" for j in range(D))
GAUSS = ["--mechanism", "gaussian", "--b", "0.25", "--epsilon", "1", "--delta", "1e-5"]


def _rows() -> int:
    if os.environ.get("STUDIO_BENCH_ISSUE33_ROWS"):
        return int(os.environ["STUDIO_BENCH_ISSUE33_ROWS"])
    return 10_000_000 if os.environ.get("STUDIO_BENCH_FULL") == "1" else 2_000_000


def _load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def _generate(folder: pathlib.Path, n: int, files: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True)
    rng = np.random.default_rng(33)
    for i, rows in enumerate(np.diff(np.linspace(0, n, files + 1).astype(int))):
        block = rng.standard_normal((rows, D)) * np.linspace(1.0, 50.0, D)
        pq.write_table(pa.Table.from_arrays([pa.array(block[:, j]) for j in range(D)],
                                            names=[f"f{j:02d}" for j in range(D)]),
                       folder / f"part-{i:03d}.parquet", row_group_size=250_000)


def _command(argv: list[str], *, env: dict[str, str] | None = None, session: bool = False) -> dict:
    """Run ``python -m engine *argv``: wall and CPU seconds (with its children) and the processes it left."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "engine", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=session)
    out, err = proc.communicate()
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:2]} failed: {err.strip().splitlines()[-1:]}")
    left = _session_members(proc.pid) if session else 0
    return {"seconds": seconds, "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "left": left, "stdout": out}


def _session_members(sid: int) -> int:
    """Processes still alive in the session ``sid`` (a command started with its own session)."""
    time.sleep(0.5)
    count = 0
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # fields after the name: state, ppid, pgrp, session
            count += 1
    return count


def _vetted_rows() -> list[dict]:
    import opendp.prelude as dp

    from engine.mechanisms.samplers import OPENDP_K, OpenDPSampler

    dp.enable_features("contrib")
    x = np.zeros((1 << 13, 16))  # 131,072 values
    t0 = time.thread_time()
    OpenDPSampler(workers=1).add_gaussian(x, 1.0, sensitivity=0.25, epsilon=1.0)
    vetted = (time.thread_time() - t0) / x.size
    rng = np.random.default_rng(0)
    t0 = time.thread_time()
    for _ in range(10):
        x + rng.normal(0.0, 1.0, size=x.shape)
    floor = (time.thread_time() - t0) / (10 * x.size)
    size = 1 << 13
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size), dp.l2_distance(T=float)
    default = dp.m.make_gaussian(*space, scale=1.0)  # k = None: OpenDP's default granularity (before)
    t0 = time.thread_time()
    default(np.zeros(size))
    before = (time.thread_time() - t0) / size
    big = np.zeros((1 << 14, 16))
    r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    OpenDPSampler(workers=2).add_gaussian(big, 1.0, sensitivity=0.25, epsilon=1.0)
    r1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - w0
    cores = ((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) / wall
    million = 1e6 * D * vetted / 2
    return [
        {"name": f"vetted sampler (OpenDP, k = {OPENDP_K}) per value, one core", "seconds": vetted * x.size,
         "cpu_us_per_value": round(vetted * 1e6, 2), "ratio": round(vetted / floor),
         "note": (f"numpy (floor): {floor * 1e9:.0f} ns a value; OpenDP's default k (before): {before * 1e6:.1f} µs "
                  f"({before / vetted:.1f}× this); goal ≤ 12 µs; load {_load()}")},
        {"name": "vetted sampler on 2 threads", "seconds": wall, "cores_used": round(cores, 2),
         "wall_us_per_value": round(wall / big.size * 1e6, 2),
         "note": f"10⁶ × 15 on 2 cores at this CPU cost: {million:.0f} s (goal ≤ 120 s); load {_load()}"},
    ]


def _dask_rows(source: pathlib.Path, base: pathlib.Path, n: int) -> list[dict]:
    from benchmarks.floor_release import floor_release

    floor = floor_release(source, base / "floor", 2)
    rows = []
    # The floor's work (clip each row into the ball, no statistics), then the default (clip + standardise: a first
    # pass over the data for the column statistics).
    for label, flags in (("clip, as the floor", ["--normalize", "clip", "--no-standardize"]),
                         ("clip + standardise, the default", [])):
        dask = _command(["privatize", "--engine", "dask", "--workers", "2", "--input", str(source), "--features",
                         FEATURES, *GAUSS, *flags, "--sampler", "numpy", "--partition-rows", str(max(1000, n // 20)),
                         "--output", str(base / f"dask-{len(rows)}")], session=True)
        rows.append({"name": f"dask release {n:,} × {D} (numpy noise; {label}), 2 workers, against the floor",
                     "seconds": dask["seconds"], "cpu_seconds": round(dask["cpu"], 1),
                     "ratio": round(dask["cpu"] / floor["cpu_seconds"], 2),
                     "note": (f"floor (floor_release.py, 2 processes): {floor['cpu_seconds']:.1f} CPU s, "
                              f"{floor['seconds']:.1f} s; wall ratio {dask['seconds'] / floor['seconds']:.2f}; goal "
                              f"≤ 1.5× in CPU; processes left in the command's session after it ended: "
                              f"{dask['left']}; load {_load()}")})
    return rows


_PEAK = (
    "import runpy, sys\n"
    "sys.argv = ['engine', *sys.argv[1:]]\n"
    "code = 0\n"
    "try:\n    runpy.run_module('engine', run_name='__main__', alter_sys=True)\n"
    "except SystemExit as exc:\n    code = exc.code if isinstance(exc.code, int) else 1\n"
    "if code:\n    sys.exit(code)\n"
    "peak = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')) / 1024\n"
    "print(f'PEAK_MB {peak:.1f}', file=sys.stderr)\n"
)


def _peak_mb(argv: list[str]) -> tuple[float, float, float]:
    """The command's own peak resident memory (VmHWM), wall and CPU seconds, in a fresh interpreter."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _PEAK, *argv], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{argv[:2]} failed: {out.stderr.strip().splitlines()[-1:]}")
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = float(next(line.split()[1] for line in out.stderr.splitlines() if line.startswith("PEAK_MB")))
    return peak, seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _memory_rows(single: pathlib.Path, base: pathlib.Path, n: int) -> list[dict]:
    idle, _, _ = _peak_mb(["--version"])
    peak, seconds, cpu = _peak_mb(["privatize", "--input", str(single), "--features", FEATURES, *GAUSS,
                                   "--sampler", "numpy", "--output", str(base / "memory.parquet")])
    data_mb = n * D * 8 / 2**20
    from engine.release import in_memory_row_limit

    limit = in_memory_row_limit(D, 24 * 2**30, by_column=True)  # where the command's memory check switches
    return [{"name": f"in-memory release {n:,} × {D} (numpy noise, Parquet in and out), peak memory",
             "seconds": seconds, "cpu_seconds": round(cpu, 1), "peak_mb": round(peak),
             "ratio": round(peak / data_mb, 2),
             "note": (f"data {data_mb:.0f} MiB; the interpreter alone {idle:.0f} MB (so {(peak - idle) / data_mb:.2f}× "
                      f"the data above it); goal ≤ 3× the data; a 24 GiB machine releases up to {limit:,} rows × {D} "
                      f"in memory (beyond: --engine dask); load {_load()}")}]


def _help_rows() -> list[dict]:
    def median_seconds(argv: list[str]) -> float:
        times = []
        for _ in range(5):
            started = time.perf_counter()
            subprocess.run(argv, cwd=ROOT, capture_output=True, check=True)
            times.append(time.perf_counter() - started)
        return statistics.median(times)

    help_s = median_seconds([sys.executable, "-m", "engine", "privatize", "--help"])
    numpy_s = median_seconds([sys.executable, "-c", "import numpy"])
    return [{"name": "privatize --help (median of 5)", "seconds": round(help_s, 3), "ratio": round(help_s / numpy_s, 2),
             "note": f"import numpy (floor): {numpy_s:.3f} s; goal ≤ 0.3 s; load {_load()}"}]


def _blas_rows(single: pathlib.Path, base: pathlib.Path) -> list[dict]:
    argv = ["privatize", "--input", str(single), "--features", FEATURES, "--mechanism", "projection", "--b", "0.25",
            "--epsilon1", "3", "--delta1", "1e-8", "--epsilon2", "0.9999", "--delta2", "1e-8", "--seed", "1",
            "--output", str(base / "projection.parquet"), "--overwrite"]
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                             "MKL_NUM_THREADS")}
    one = _command(argv, env=env)
    own = _command(argv, env={**env, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"})
    return [{"name": "privatize --mechanism projection: BLAS's own threads against the command's one",
             "seconds": one["seconds"], "cpu_seconds": round(one["cpu"], 2), "ratio": round(own["cpu"] / one["cpu"], 2),
             "note": f"with 2 BLAS threads: {own['cpu']:.2f} CPU s, {own['seconds']:.2f} s; load {_load()}"}]


def _sweep_rows(base: pathlib.Path) -> list[dict]:
    rows = []
    for dataset, preset, goal in (("nigeria-demo", "quick", 8), ("togo-demo", "paper", 30)):
        run = _command(["sweep", "--dataset", dataset, "--preset", preset, "--seed", "1",
                        "--output", str(base / f"{dataset}-{preset}.csv")])
        rows.append({"name": f"sweep {preset} {dataset} (the command and its workers)", "seconds": run["seconds"],
                     "cpu_seconds": round(run["cpu"], 1), "target": f"≤ {goal} CPU s", "note": f"load {_load()}"})
    return rows


def run() -> list[dict]:
    n = _rows()
    rows: list[dict] = []
    rows += _vetted_rows()
    rows += _help_rows()
    with tempfile.TemporaryDirectory(prefix="bench-issue33-") as tmp:
        base = pathlib.Path(tmp)
        source = base / "input"
        _generate(source, n, 20)
        single = base / "single" / "table.parquet"
        _generate(single.parent, n, 1)
        (single.parent / "part-000.parquet").rename(single)
        rows += _dask_rows(source, base, n)
        rows += _memory_rows(single, base, n)
        small = base / "million.parquet"
        import pyarrow.parquet as pq

        pq.write_table(pq.read_table(single).slice(0, 1_000_000), small)
        rows += _blas_rows(small, base)
        if os.environ.get("STUDIO_BENCH_ISSUE33_SWEEPS", "1") == "1":
            rows += _sweep_rows(base)
    if os.environ.get("STUDIO_BENCH_BROWSER") == "1":
        from benchmarks import bench_dashboard

        rows += [row for row in bench_dashboard.run() if "page change" in row["name"] or "Mechanisms run" in row["name"]]
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
