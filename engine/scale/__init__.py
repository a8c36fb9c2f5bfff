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
engine works without it; the package's names are imported on first use.
"""

import importlib
from typing import Any

_HOMES = {
    "ClusterUnreachableError": "engine.scale.cluster",
    "cluster_summary": "engine.scale.cluster",
    "dask_client": "engine.scale.cluster",
    "machine_cores": "engine.scale.cluster",
    "validate_scheduler_address": "engine.scale.cluster",
    "run_out_of_core_release": "engine.scale.out_of_core",
}


def __getattr__(name: str) -> Any:
    """The package's names, imported on first use (PEP 562): importing one submodule (e.g. the modes, for a
    command's ``--help``) does not import pandas and the release."""
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ClusterUnreachableError",
    "cluster_summary",
    "dask_client",
    "machine_cores",
    "run_out_of_core_release",
    "validate_scheduler_address",
]
