"""Benchmark Algorithm 1 (private projection) and the Mondrian k-anonymity baseline.

1. Fast vs reference at the Togo size (n = 4,201, d = 10, k = 10⁴). Target: fast ≥ 100× faster.
2. Fast path at n = 1,000,000, d = 15, k = 10⁴, in a fresh subprocess so that its peak memory is its own.
   Target: < 2 s and < 1 GB peak. Peak memory is measured two ways: the process's peak resident set
   (VmHWM of ``/proc/self/status``, which includes the interpreter, numpy, the 120 MB input and the 120 MB output) and the
   peak of numpy allocations during the release alone (``tracemalloc``, in a separate untimed run). The reference
   path's memory need at that size is computed (:func:`reference_memory_bytes`), not run.
3. Mondrian k = 2 at the Nigeria size (n = 20,788, d = 15).

Run ``python benchmarks/bench_projection.py`` or ``bash scripts/studio.sh bench projection``.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine.mechanisms.mondrian import MondrianKAnonymity  # noqa: E402
from engine.mechanisms.private_projection import PrivateProjection, reference_memory_bytes  # noqa: E402

K = 10_000


def _data(n: int, d: int, seed: int) -> np.ndarray:
    """Rows in the unit L2 ball, built in place (one n × d array)."""
    x = np.random.default_rng(seed).standard_normal((n, d))
    x /= np.sqrt(np.einsum("ij,ij->i", x, x).max())
    return x


def _mechanism(n: int, implementation: str) -> PrivateProjection:
    delta = 1.0 / (n + 1)  # the paper's Togo setup: δ1 = 2δ/3, δ2 = δ/3
    return PrivateProjection(
        b=0.25, epsilon1=3.0, delta1=2 * delta / 3, epsilon2=0.9999, delta2=delta / 3, k=K,
        implementation=implementation,
    )


def _best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def bench_fast_vs_reference() -> list[dict]:
    n, d = 4201, 10
    x = _data(n, d, 0)
    fast, ref = _mechanism(n, "fast"), _mechanism(n, "reference")
    t_fast = _best_of(lambda: fast.release(x, rng=np.random.default_rng(1)), 5)
    t_ref = _best_of(lambda: ref.release(x, rng=np.random.default_rng(1)), 1)
    return [
        {"name": f"projection fast n={n} d={d} k={K}", "seconds": t_fast},
        {
            "name": f"projection reference n={n} d={d} k={K}",
            "seconds": t_ref,
            "ratio": t_ref / t_fast,
            "target": "fast ≥ 100× faster",
            "note": f"reference n×k matrices: {reference_memory_bytes(n, K) / 1e6:.0f} MB",
        },
    ]


def _peak_rss_mb() -> float:
    """Peak resident set of this process image: VmHWM from /proc (reset by exec), else getrusage.

    ``getrusage(...).ru_maxrss`` is not used first because Linux carries the parent's high-water mark at fork into
    the child's value, which would charge this subprocess with the parent's reference run.
    """
    try:
        for line in pathlib.Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def _child_large() -> dict:
    """Runs in a fresh interpreter: time and measure the fast path at n = 10⁶, d = 15."""
    import tracemalloc

    n, d = 1_000_000, 15
    x = _data(n, d, 0)
    rss_before_mb = _peak_rss_mb()
    mech = _mechanism(n, "fast")
    seconds = _best_of(lambda: mech.release(x, rng=np.random.default_rng(1)), 3)
    tracemalloc.start()
    mech.release(x, rng=np.random.default_rng(2))
    _, alloc_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "seconds": seconds,
        "peak_mb": _peak_rss_mb(),
        "release_alloc_peak_mb": alloc_peak / 1024**2,
        "input_mb": x.nbytes / 1024**2,
        "peak_mb_before_release": rss_before_mb,
    }


def bench_fast_large() -> list[dict]:
    n, d = 1_000_000, 15
    proc = subprocess.run(
        [sys.executable, __file__, "--child-large"], capture_output=True, text=True, check=True, cwd=ROOT
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    need = reference_memory_bytes(n, K)
    return [
        {
            "name": f"projection fast n={n} d={d} k={K}",
            "seconds": result["seconds"],
            "peak_mb": result["peak_mb"],
            "peak_mb_before_release": result["peak_mb_before_release"],
            "release_alloc_peak_mb": result["release_alloc_peak_mb"],
            "target": "< 2 s, < 1 GB peak",
            "note": (
                "peak_mb = whole-process peak RSS (interpreter + numpy + 120 MB input + output); "
                "release_alloc_peak_mb = numpy allocations during one release (tracemalloc)"
            ),
        },
        {
            "name": f"projection reference n={n} d={d} k={K} (computed, not run)",
            "seconds": float("nan"),
            "reference_memory_gb": need / 1e9,
            "note": f"two n×k float64 matrices (XR/k and G): {need / 1e9:.0f} GB = {need / 1024**3:.0f} GiB",
        },
    ]


def bench_mondrian() -> list[dict]:
    n, d = 20_788, 15
    x = _data(n, d, 3)
    mech = MondrianKAnonymity(k=2)
    seconds = _best_of(lambda: mech.release(x, rng=np.random.default_rng(0)), 3)
    classes = mech.release(x, rng=np.random.default_rng(0)).details["classes"]
    return [{"name": f"mondrian k=2 n={n} d={d}", "seconds": seconds, "note": f"{classes} classes"}]


def run() -> list[dict]:
    return bench_fast_vs_reference() + bench_fast_large() + bench_mondrian()


if __name__ == "__main__":
    if "--child-large" in sys.argv:
        print(json.dumps(_child_large()))
        sys.exit(0)
    for row in run():
        print(json.dumps(row, ensure_ascii=False))
