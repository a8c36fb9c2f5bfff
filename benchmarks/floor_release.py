"""The floor of the out-of-core release (issue 33 §2): the least a release of a partitioned Parquet table can cost.

Plain pyarrow and numpy, nothing of the Studio: each of ``processes`` worker processes reads its share of the input
files, stacks the columns into one matrix, clips every row into the unit L2 ball (one norm per row), adds numpy
Gaussian noise and writes one Parquet file per input file. No checks, no fingerprint, no guarantee, no scheduler:
what `privatize --engine dask` (numpy sampler) is compared with, as a ratio of CPU seconds and of wall seconds.

Run ``python benchmarks/floor_release.py INPUT_FOLDER OUTPUT_FOLDER [PROCESSES]``; ``bench_issue33.py`` runs it on
the table it generates and reports the ratio.
"""

from __future__ import annotations

import multiprocessing
import os
import pathlib
import resource
import sys
import time


def _release_files(files: list[str], out: str, sigma: float, seed: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    for name in files:
        table = pq.read_table(name)
        x = np.column_stack([table.column(i).to_numpy() for i in range(table.num_columns)])
        del table
        norms = np.linalg.norm(x, axis=1)
        x /= np.maximum(norms, 1.0)[:, None]
        x += rng.normal(0.0, sigma, size=x.shape)
        columns = [pa.array(x[:, j]) for j in range(x.shape[1])]
        pq.write_table(pa.Table.from_arrays(columns, names=[f"f{j:02d}" for j in range(x.shape[1])]),
                       pathlib.Path(out) / pathlib.Path(name).name, compression="none", use_dictionary=False)


def floor_release(source: pathlib.Path, out: pathlib.Path, processes: int = 2, sigma: float = 1.0) -> dict:
    """Release every ``*.parquet`` file of ``source`` into ``out`` on ``processes`` processes.

    Returns wall seconds and the CPU seconds of the worker processes (user + system, from ``getrusage``).
    """
    files = sorted(str(p) for p in pathlib.Path(source).glob("*.parquet"))
    out.mkdir(parents=True, exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_release_files, args=(files[i::processes], str(out), sigma, i))
               for i in range(processes)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
        if worker.exitcode != 0:
            raise RuntimeError(f"a floor worker failed (exit code {worker.exitcode})")
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": seconds, "cpu_seconds": cpu, "load": os.getloadavg()[0]}


if __name__ == "__main__":
    result = floor_release(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]),
                           int(sys.argv[3]) if len(sys.argv) > 3 else 2)
    print(result)
