"""``python -m engine sweep``: the privacy–effectiveness tradeoff of a mechanism over a grid, on your data.

Example::

    python -m engine sweep --dataset togo-demo --program targeting --mechanism projection --preset quick \\
        --seed 1 --workers 2 --output results.csv
    python -m engine sweep --dataset togo-demo --mechanism jl-laplace --k 5 --relation row --preset quick \
        --seed 1 --output jl.csv

Writes the tidy per-run table (one row per grid point × repetition) to ``--output`` (CSV), prints progress lines
on stderr and a JSON summary on stdout: the effective configuration (with the seed — rerun it with the same
command to get the same table), the data fingerprint, and mean / sd / 95 % interval of every metric per grid
point, with the non-private and classic-DP (B = 2) reference points.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from engine.cli._common import add_overwrite_argument, checked_output, parse_float_list, print_json
from engine.cli._dataset import add_dataset_arguments, load_dataset
from engine.errors import CancelledError, InvalidParameterError
from engine.export_csv import write_safe_csv
from engine.mechanisms import MECHANISMS
from engine.progress import CancelToken, cancel_on_interrupt, format_left
from engine.rng import fresh_seed
from engine.sweeps import (
    ATTACKS,
    default_workers,
    preset,
    released_rows,
    run_sweep,
    sweep_mechanisms,
)


def _taking(option: str) -> list[str]:
    """The sweepable mechanisms that take a sweep option (their tags' ``sweep_options``; ``known_records``: the
    mechanisms whose release is projected, whose attacker knows a few records)."""
    return [k for k in sweep_mechanisms() if option in MECHANISMS[k].TAGS.sweep_options
            or (option == "known_records" and MECHANISMS[k].TAGS.projects)]


def _default(option: str, kind: str) -> str:
    return ", ".join(f"{k}: default {dict(MECHANISMS[k].TAGS.sweep_defaults).get(option, 10_000)}"
                     for k in _taking(option)) or kind


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="program effectiveness vs. protection over a grid of (B, ε, δ)",
        description=(
            "Privatize the data at every grid point (mechanism × B × budget × repetition), score the program on "
            "the release and run the singling-out, attribute-inference and distinguishing attacks. The preset "
            "'paper' is the targeted-DP paper's grid (8 B values × 4 budgets × 50 runs); 'quick' is 8 B values × "
            "one budget × 10 runs. δ = 1/(n + 1) of the rows privatized, split 2/3 : 1/3."
        ),
        epilog="Progress goes to stderr; the JSON summary to stdout; the per-run table to --output.",
    )
    add_dataset_arguments(parser, outcome=("--target", "--target-column"))  # the same flags as recommend's
    kinds = sweep_mechanisms()
    parser.add_argument("--mechanism", choices=kinds, default=kinds[0],
                        help="; ".join(f"{k}: {MECHANISMS[k].LABEL}" for k in kinds)
                        + f" (default {kinds[0]}; each at the grid's budget — a projected release's attacks use an "
                        "adversary who knows a few original records, not the projection)")
    parser.add_argument("--k", type=int, default=None,
                        help=f"projection dimension ({_default('k', 'none')})")
    parser.add_argument("--relation", choices=("row", "element"), default="row",
                        help=f"{', '.join(_taking('relation'))}: row (B = row-wise L2 change bound, default) or "
                             "element (B = change bound of one entry)")
    parser.add_argument("--target-delta", type=float, default=None,
                        help=f"{', '.join(_taking('target_delta'))}: the δ_fail the noise is calibrated to (default "
                             "1/(n + 1))")
    parser.add_argument("--known-records", type=int, default=None,
                        help=f"{', '.join(_taking('known_records'))}: original records the adversary knows "
                             "(default 2 × the release's dimension)")
    parser.add_argument("--preset", choices=("quick", "paper"), default="quick")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per grid point (overrides the preset)")
    parser.add_argument("--b-values", metavar="LIST", help="comma-separated B values (overrides the preset)")
    parser.add_argument("--attacks", metavar="LIST", default=",".join(ATTACKS),
                        help=f"comma-separated subset of {', '.join(ATTACKS)} (default: all)")
    parser.add_argument("--adversary", choices=("knows-scale", "paper"), default="knows-scale",
                        help="knows-scale (default) undoes a known output scale before attacking; paper = "
                             "the authors' code")
    parser.add_argument("--output-scale", choices=("unbiased", "paper"), default="unbiased",
                        help="projection output: unbiased (×k, default) or the paper's as-printed X/k")
    parser.add_argument("--partitions", type=int, default=1,
                        help="projection: split the rows into M disjoint parts (the paper's Nigeria setup uses 6; "
                             "δ then comes from the part size)")
    parser.add_argument("--seed", type=int, default=None,
                        help="root seed (default: a fresh random seed, printed so the run can be repeated)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes on this machine (default one per core); with --engine dask and no --scheduler, "
                             "the workers of the local Dask cluster (default one per core)")
    parser.add_argument("--engine", choices=("local", "dask"), default="local",
                        help="local (default): this machine's processes; dask: the cells as tasks on a Dask cluster "
                             "(the same table for the same seed)")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                        help="with --engine dask: address of a running Dask scheduler (default: a local cluster)")
    parser.add_argument("--output", metavar="FILE", required=True, help="where to write the per-run table (CSV)")
    add_overwrite_argument(parser)
    parser.set_defaults(func=run)


@contextlib.contextmanager
def _executor(args: argparse.Namespace):
    """None for this machine's processes, or a Dask client (``--engine dask``: a running scheduler or a local
    cluster started for this sweep and shut down after it)."""
    if args.engine != "dask":
        yield None
        return
    from engine.scale.cluster import dask_client

    with dask_client(args.scheduler, n_workers=args.workers) as client:
        print(f"computing on the Dask cluster {client.scheduler.address}", file=sys.stderr)
        yield client


def _check_engine_flags(args: argparse.Namespace) -> None:
    if args.engine != "dask" and args.scheduler is not None:
        raise InvalidParameterError("--scheduler applies to --engine dask only — add --engine dask or remove it")
    if args.scheduler is not None:
        from engine.scale.cluster import validate_scheduler_address

        validate_scheduler_address(args.scheduler)


def run(args: argparse.Namespace) -> int:
    _check_engine_flags(args)  # before any work
    dataset_file = args.dataset if args.dataset and Path(args.dataset).is_file() else None
    output = checked_output(args.output, inputs=[("--dataset", dataset_file), ("--config", args.config)],
                            overwrite=args.overwrite)  # before any work
    loaded = load_dataset(args)  # the same data, program and preparation as recommend's (engine.cli._dataset)
    data, program = loaded.prepared, loaded.program
    for note in loaded.notes:
        print(f"note: {note}", file=sys.stderr)
    attacks = tuple(a.strip() for a in args.attacks.split(",") if a.strip())
    seed = fresh_seed() if args.seed is None else args.seed
    overrides = {}
    if args.b_values:
        overrides["b_values"] = tuple(parse_float_list("--b-values", args.b_values))
    if args.k is not None:
        overrides["k"] = args.k
    options = {"relation": args.relation, "target_delta": args.target_delta, "known_records": args.known_records}
    given = {"relation": args.relation != "row", "target_delta": args.target_delta is not None,
             "known_records": args.known_records is not None}
    for option, used in given.items():
        if args.mechanism in _taking(option):
            overrides[option] = options[option]
        elif used:
            flag = "--" + option.replace("_", "-")
            raise InvalidParameterError(
                f"{flag} applies to --mechanism {' or '.join(_taking(option)) or 'none'} only — remove it or choose "
                "such a mechanism"
            )
    config = preset(
        args.preset,
        released_rows(data.n, attacks),
        mechanism=args.mechanism,
        program=program,
        seed=seed,
        repetitions=args.reps,
        attacks=attacks,
        adversary=args.adversary,
        output_scale=args.output_scale,
        partitions=args.partitions,
        **overrides,  # type: ignore[arg-type]
    )
    print(f"{config.describe()}; {data.n} rows", file=sys.stderr)

    def report(p) -> None:
        eta = p.eta_seconds
        left = f" {format_left(eta)} —" if eta == eta else ""
        print(f"[{p.done}/{p.total}]{left} {p.message}", file=sys.stderr, flush=True)

    def notice() -> None:
        # Runs inside the SIGINT handler, possibly while the main thread is printing to stderr: a buffered write
        # here would raise "reentrant call"; os.write on the descriptor is safe.
        os.write(sys.stderr.fileno(), b"stopping after the running cell(s); the finished rows will be written "
                 b"(Ctrl-C again: stop at once)\n")

    workers = default_workers() if args.workers is None else args.workers
    try:
        with cancel_on_interrupt(CancelToken(), notice) as token, _executor(args) as client:
            result = run_sweep(data, config, progress=report, workers=workers, cancel=token, client=client)
    except CancelledError as err:  # Ctrl-C: keep what finished
        partial = err.partial  # type: ignore[attr-defined]
        write_safe_csv(partial.table, output, overwrite=args.overwrite)
        print(f"error: {err}; {len(partial.table)} rows written to {output} (seed {seed})", file=sys.stderr)
        return 130
    write_safe_csv(result.table, output, overwrite=args.overwrite)
    summary = result.summary()
    summary["no_better_than"] = result.no_better_than_trivial().to_numpy()
    print_json(
        {
            "output": str(output),
            "rows": len(result.table),
            "seconds": round(result.seconds, 3),
            "cpu_seconds": round(result.cpu_seconds, 3),
            "seed": seed,
            "fingerprint": result.fingerprint,
            **loaded.summary(),
            "n_released": result.n_released,
            "n_holdout": result.n_holdout,
            "headline_metric": config.program.headline_metric,
            "config": config.to_dict(),
            "summary": summary.to_dict(orient="records"),
        }
    )
    return 0
