"""One thread per native pool (BLAS, OpenMP) in every process the Studio starts: the one rule for its parallelism.

The Studio runs its work in parallel itself — a Mechanisms run's releases in threads, a sweep's cells and an
out-of-core release's partitions in worker processes, the vetted sampler's chunks in threads — and BLAS's or
OpenMP's own threads on top of those outnumber the cores. The server (:mod:`ui.serve`), the command line
(``python -m engine``, ``studio``) and the sweeps' workers therefore run their native pools on one thread each,
unless the environment already says otherwise (an operator's setting wins). Measured (issue 33): ``privatize
--mechanism projection`` on 10⁶ rows took 1.41× the CPU seconds with BLAS's own threads; the server's Mechanisms run
on 25,000 × 30 took 13.0 / 11.9 / 14.0 / 13.1 s with one thread against 20.5 / 20.2 / 13.6 / 16.7 s.

:func:`limit_native_threads` must run before numpy is first imported (the pools read the variables when they
load); later it changes nothing for this process, only for the processes it starts.
"""

from __future__ import annotations

import os

__all__ = ["NATIVE_THREADS", "limit_native_threads"]

#: The native thread pools' variables, one thread each.
NATIVE_THREADS: dict[str, str] = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def limit_native_threads() -> dict[str, str]:
    """Set :data:`NATIVE_THREADS` in the environment where it does not set them already; returns the values in force.

    >>> limit_native_threads()["OMP_NUM_THREADS"] == os.environ["OMP_NUM_THREADS"]
    True
    """
    for name, value in NATIVE_THREADS.items():
        os.environ.setdefault(name, value)
    return {name: os.environ[name] for name in NATIVE_THREADS}
