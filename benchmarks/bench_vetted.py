"""What one value of vetted Gaussian noise costs, per sampler and per OpenDP noise granularity (issue 33 §1).

Rows (CPU µs per value on one core, ``time.thread_time`` around the draw; OS-entropy samplers cannot be seeded, so
no two runs draw the same values):

* numpy's ``Generator.normal`` — the floor (floating-point sampler; fine for simulations, not vetted);
* OpenDP's ``make_gaussian`` (the Studio's vetted sampler, pinned in requirements.txt) at OpenDP's default
  granularity and at k = −40, −30 (the Studio's :data:`~engine.mechanisms.samplers.OPENDP_K`), −20, −10: exact
  sampling of a discrete Gaussian on the 2^k grid (Canonne, Kamath & Steinke 2020), with user and system time apart
  (OpenDP reads the operating system's entropy through OpenSSL many times a value);
* the Studio's :class:`~engine.mechanisms.samplers.OpenDPSampler` on one thread and on every core (the
  cores it keeps busy), and what 10⁶ × 15 values cost at that rate;
* other Gaussian samplers on PyPI that claim to be safe for DP, when they are installed (they are not Studio
  dependencies; ``pip install python-dp diffprivlib tmlt.core`` into a scratch environment to compare):
  PyDP (``python-dp``: Google's C++ library — a binomial approximation of the Gaussian, accepted by a
  floating-point approximation of its probabilities, so not an exact sampler), diffprivlib's ``GaussianDiscrete``
  (Canonne–Kamath–Steinke in Python, integer outputs) and Tumult Core's ``sample_dgauss`` (exact, rational
  arithmetic in python-flint).

Run ``python benchmarks/bench_vetted.py`` (or ``bash scripts/studio.sh bench vetted``).
"""

from __future__ import annotations

import os
import pathlib
import resource
import sys
import time
from collections.abc import Callable

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

VALUES = 1 << 13  # one OpenDP call's worth (the Studio's chunk)


def _load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def _per_value(draw: Callable[[], object], values: int, repeat: int) -> tuple[float, float, float]:
    """(CPU, user, system) µs per value of ``draw`` (which draws ``values`` values), after one warm-up call."""
    draw()
    t0, r0 = time.thread_time(), resource.getrusage(resource.RUSAGE_THREAD)
    for _ in range(repeat):
        draw()
    t1, r1 = time.thread_time(), resource.getrusage(resource.RUSAGE_THREAD)
    scale = 1e6 / (values * repeat)
    return (t1 - t0) * scale, (r1.ru_utime - r0.ru_utime) * scale, (r1.ru_stime - r0.ru_stime) * scale


def _opendp_rows() -> list[dict]:
    import opendp.prelude as dp

    from engine.mechanisms.samplers import OPENDP_K, OpenDPSampler, available_cores, opendp_version

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=VALUES), dp.l2_distance(T=float)
    x = np.random.default_rng(0).uniform(-0.25, 0.25, VALUES)
    rows = []
    rng = np.random.default_rng(0)
    floor, _, _ = _per_value(lambda: x + rng.normal(0.0, 1.0, VALUES), VALUES, 200)
    rows.append({"name": "numpy Generator.normal (the floor; not vetted)", "seconds": floor * VALUES / 1e6,
                 "cpu_us_per_value": round(floor, 4), "note": f"load {_load()}"})
    for k in (None, -40, -30, -20, -10):
        meas = dp.m.make_gaussian(*space, scale=1.0, k=k)
        cpu, user, system = _per_value(lambda meas=meas: meas(x), VALUES, 1 if k is None else 4)
        label = "OpenDP's default (the subnormal grid)" if k is None else f"k = {k}"
        rows.append({"name": f"OpenDP {opendp_version()} make_gaussian, {label}"
                             + (" — the Studio's" if k == OPENDP_K else ""),
                     "seconds": cpu * VALUES / 1e6, "cpu_us_per_value": round(cpu, 2),
                     "user_us": round(user, 2), "system_us": round(system, 2),
                     "ratio_to_numpy": round(cpu / floor), "note": f"load {_load()}"})
    block = np.zeros((1 << 13, 16))
    one, _, _ = _per_value(lambda: OpenDPSampler(workers=1).add_gaussian(block, 1.0, sensitivity=0.25,
                                                                          epsilon=1.0), block.size, 1)
    rows.append({"name": "the Studio's OpenDPSampler, one thread", "seconds": one * block.size / 1e6,
                 "cpu_us_per_value": round(one, 2), "note": f"load {_load()}"})
    cores = available_cores()
    big = np.zeros((1 << 15, 16))
    r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    OpenDPSampler(workers=cores).add_gaussian(big, 1.0, sensitivity=0.25, epsilon=1.0)
    r1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - w0
    used = ((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) / wall
    per_value_wall = wall / big.size
    rows.append({"name": f"the Studio's OpenDPSampler, {cores} threads", "seconds": wall,
                 "cores_used": round(used, 2), "wall_us_per_value": round(per_value_wall * 1e6, 2),
                 "note": (f"10⁶ × 15 values at this rate: {per_value_wall * 15e6:.0f} s wall (goal ≤ 120 s on 2 "
                          f"cores); load {_load()}")})
    return rows


def _other_rows() -> list[dict]:
    rows = []
    try:
        from pydp.algorithms.numerical_mechanisms import GaussianMechanism  # type: ignore[import-not-found]
    except ImportError:
        rows.append({"name": "PyDP (python-dp) GaussianMechanism", "seconds": "", "note": "not installed"})
    else:
        mech = GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=0.25)
        cpu, _, _ = _per_value(lambda: mech.add_noise(0.1), 1, 20_000)
        rows.append({"name": "PyDP (python-dp) GaussianMechanism: binomial approximation, not exact",
                     "seconds": cpu / 1e6, "cpu_us_per_value": round(cpu, 2), "note": f"load {_load()}"})
    try:
        from diffprivlib.mechanisms import GaussianDiscrete  # type: ignore[import-not-found]
    except ImportError:
        rows.append({"name": "diffprivlib GaussianDiscrete", "seconds": "", "note": "not installed"})
    else:
        disc = GaussianDiscrete(epsilon=0.5, delta=1e-5, sensitivity=1)
        cpu, _, _ = _per_value(lambda: disc.randomise(0), 1, 2_000)
        rows.append({"name": "diffprivlib GaussianDiscrete (integers)", "seconds": cpu / 1e6,
                     "cpu_us_per_value": round(cpu, 2), "note": f"load {_load()}"})
    try:
        from tmlt.core.random.discrete_gaussian import sample_dgauss  # type: ignore[import-not-found]
    except ImportError:
        rows.append({"name": "Tumult Core sample_dgauss", "seconds": "", "note": "not installed"})
    else:
        cpu, _, _ = _per_value(lambda: sample_dgauss(2**60), 1, 300)
        rows.append({"name": "Tumult Core sample_dgauss (exact; σ² = 2^60, a 2^-30 grid at σ = 1)",
                     "seconds": cpu / 1e6, "cpu_us_per_value": round(cpu, 2), "note": f"load {_load()}"})
    return rows


def run() -> list[dict]:
    rows = _other_rows()
    try:
        import opendp  # noqa: F401
    except ImportError:
        return rows
    return _opendp_rows() + rows


if __name__ == "__main__":
    for row in run():
        print(row)
