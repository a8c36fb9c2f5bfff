"""Scale-out on Dask: releases of tables that do not fit in memory, run on a local or remote Dask cluster.

* :mod:`engine.scale.cluster` — a ``LocalCluster`` sized to the machine or a validated scheduler address
  (:func:`dask_client`, :func:`validate_scheduler_address`, :class:`ClusterUnreachableError`);
* :mod:`engine.scale.partitioned_input` — the input as an ordered list of partitions;
* :mod:`engine.scale.partition_preparation` — checks, column statistics by reduction and the row map;
* :mod:`engine.scale.partition_mechanisms` — mechanisms applied per partition with shared pieces drawn once;
* :mod:`engine.scale.atomic_output` — partitioned Parquet written atomically, with a sidecar JSON;
* :mod:`engine.scale.out_of_core` — :func:`run_out_of_core_release`, the whole release;
* :mod:`engine.cli.privatize_dask` — ``python -m engine privatize --engine dask`` (the command line).

Nothing here imports ``dask`` at module import time except inside the functions that need it, so the rest of the
engine works without it.
"""

from engine.scale.cluster import (
    ClusterUnreachableError,
    cluster_summary,
    dask_client,
    machine_cores,
    validate_scheduler_address,
)
from engine.scale.out_of_core import run_out_of_core_release

__all__ = [
    "ClusterUnreachableError",
    "cluster_summary",
    "dask_client",
    "machine_cores",
    "run_out_of_core_release",
    "validate_scheduler_address",
]
