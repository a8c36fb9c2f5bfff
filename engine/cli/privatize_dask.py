"""``python -m engine privatize --engine dask``: the out-of-core release from the command line.

Example::

    python -m engine privatize --config record.json --input 'phones/*.parquet' --output private_phones \\
        --engine dask [--scheduler tcp://10.0.0.5:8786] [--partition-rows 1000000] [--dask-mode global]

Reads the same configuration and flags as the in-memory command (:mod:`engine.cli._release_flags`), starts a
``LocalCluster`` sized to the machine (or connects to ``--scheduler``), runs
:func:`engine.scale.out_of_core.run_out_of_core_release` with the sampler asked for (``--sampler``; the default is
resolved where the release is made: OpenDP for an unseeded release of a mechanism it can express), shows a progress
bar on stderr and prints the JSON summary (also written as ``OUTPUT/_release.json``) on stdout.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from engine.errors import InvalidParameterError
from engine.progress import Progress

#: ``--engine`` choices.
ENGINES = ("memory", "dask")

_DASK_ONLY = {"scheduler": "--scheduler", "partition_rows": "--partition-rows", "workers": "--workers",
              "dask_mode": "--dask-mode"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The engine flags of ``privatize``."""
    from engine.scale.partition_mechanisms import MODES

    group = parser.add_argument_group("scale-out (Dask)")
    group.add_argument("--engine", choices=ENGINES, default="memory",
                       help="memory (default): the whole table in this process; dask: out of core on a Dask cluster, "
                            "--input a Parquet/CSV file, folder or glob, --output a new folder")
    group.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                       help="address of a running Dask scheduler (default: a local cluster, one worker per core)")
    group.add_argument("--partition-rows", dest="partition_rows", type=int, default=None, metavar="N",
                       help="rows per partition for Parquet input (default 1000000); the seeded output depends on it")
    group.add_argument("--workers", type=int, default=None, metavar="N",
                       help="workers of the local cluster (default: one per core)")
    group.add_argument("--dask-mode", dest="dask_mode", choices=sorted(MODES), default=None,
                       help="global (default): one release, distributed exactly as in memory; partitioned: the "
                            "projection runs on each partition as a disjoint part (parallel composition)")


def check_engine_flags(args: argparse.Namespace) -> None:
    """Refuse the Dask-only flags without ``--engine dask``."""
    if getattr(args, "engine", "memory") == "dask":
        return
    for dest, flag in _DASK_ONLY.items():
        if getattr(args, dest, None) is not None:
            raise InvalidParameterError(f"{flag} applies to --engine dask only — add --engine dask or remove {flag}")


class StderrProgress:
    """A text progress bar on stderr: redrawn in place on a terminal, one line per update otherwise."""

    def __init__(self, stream: TextIO | None = None, width: int = 30) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.width = width

    def __call__(self, progress: Progress) -> None:
        filled = int(round(self.width * progress.fraction))
        bar = "#" * filled + "." * (self.width - filled)
        line = f"{progress.message}: [{bar}] {progress.done}/{progress.total} partitions"
        tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        end = "\n" if (not tty or progress.done >= progress.total) else ""
        self.stream.write(("\r" if tty else "") + line + end)
        self.stream.flush()


def run_dask_release(args: argparse.Namespace) -> int:
    """The ``--engine dask`` branch of ``python -m engine privatize``."""
    from engine.cli._common import checked_output, print_json, print_notes
    from engine.cli._release_flags import data_spec, mechanism_dict, read_config, save_config
    from engine.release import ReleaseConfig, release_sampler
    from engine.scale.atomic_output import check_output_directory
    from engine.scale.cluster import cluster_summary, dask_client, validate_scheduler_address
    from engine.scale.out_of_core import run_out_of_core_release
    from engine.scale.partition_mechanisms import check_supported
    from engine.scale.partitioned_input import open_partitioned_input

    if not args.input:
        raise InvalidParameterError(
            "--engine dask reads the data from --input (a Parquet/CSV file, folder or glob pattern); the built-in "
            "demo datasets fit in memory — leave out --engine dask"
        )
    mode = args.dask_mode or "global"
    scheduler = validate_scheduler_address(args.scheduler) if args.scheduler is not None else None
    if scheduler is not None and args.workers is not None:
        raise InvalidParameterError("--workers sizes the local cluster; with --scheduler the cluster has its own workers")
    config = read_config(args.config) if args.config else None
    overwrite = bool(getattr(args, "overwrite", False))
    inputs = [("--input", args.input), ("--config", args.config), ("--bounds-file", getattr(args, "bounds_file", None))]
    output, notes_on_leftovers = check_output_directory(args.output, overwrite=overwrite, inputs=inputs)
    if args.save_config:
        checked_output(args.save_config, flag="--save-config", inputs=[*inputs, ("--output", args.output)],
                       overwrite=overwrite)
    print_notes(notes_on_leftovers)
    plan = open_partitioned_input(args.input, partition_rows=args.partition_rows)
    check_output_directory(args.output, overwrite=overwrite, inputs=[("--input", p) for p in plan.paths])
    notes: list[str] = []
    spec = data_spec(args, config.data if config else None, list(plan.columns), notes)
    mechanism = mechanism_dict(args, config.mechanism if config else None, len(spec.features))
    seed = args.seed if args.seed is not None else (config.seed if config else None)
    release_config = ReleaseConfig(data=spec, mechanism=mechanism, seed=seed, dataset=None)
    check_supported(release_config.build_mechanism(), mode)
    release_sampler(release_config, args.sampler)  # refuse a sampler the mechanism cannot use, before any work
    if args.save_config:
        save_config(args, release_config)
    with dask_client(scheduler, n_workers=args.workers) as client:
        summary = run_out_of_core_release(
            client, plan, str(output), release_config, mode=mode, sampler=args.sampler, progress=StderrProgress(),
            cluster=cluster_summary(client), overwrite=overwrite,
        )
    print_json({**summary, "notes": notes})
    return 0


__all__ = ["ENGINES", "StderrProgress", "add_arguments", "check_engine_flags", "run_dask_release"]
