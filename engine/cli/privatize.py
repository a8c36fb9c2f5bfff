"""``python -m engine privatize``: the data holder's release, outside the dashboard.

Examples::

    python -m engine privatize --dataset togo-demo --mechanism gaussian --b 0.25 --epsilon 1 --delta 1e-5 \\
        --output private.csv
    python -m engine privatize --input phones.csv --features calls_out,sms_out,data_mb \\
        --mechanism projection --b 0.25 --epsilon1 3 --delta1 1.6e-4 --epsilon2 0.9999 --delta2 8e-5 \\
        --output private.parquet
    python -m engine privatize --config decision.json --input phones.csv --output private.csv

Reads the table, prepares the feature columns (into the unit L2 ball, as ``--normalize`` says), runs the
mechanism, writes the privatized features (CSV, or Parquet for ``.parquet``/``.pq``; same column names, values on
the prepared scale) and, beside them, ``<output>.guarantee.json`` — the guarantee, the noise scale, the preparation
and the configuration, so the release and its guarantee travel together (never the internal counts of the data) —
and prints a JSON summary: the guarantee, the noise scale, the time taken, the data fingerprint (never the data)
and the full configuration, which ``--config`` reads back. Flags override the configuration's fields. Without
``--features`` (and without a configuration) the features are the ones the Studio suggests for the table, as for
``sweep`` and ``recommend`` (:func:`engine.cli._dataset.default_spec`). Without ``--seed`` the noise comes from the operating system's entropy — for the Gaussian
mechanism drawn by OpenDP's vetted sampler (``--sampler opendp``, the default there); with a seed the output is
reproducible and NOT private (numpy's sampler; ``--sampler opendp`` with a seed is refused).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.cli._common import _jsonable, add_overwrite_argument, checked_output, one_line, print_json
from engine.cli._data_flags import add_data_flags, feature_width
from engine.cli._parameter_flags import PARAMETER_FLAGS
from engine.cli.privatize_dask import add_arguments as add_engine_arguments
from engine.cli.privatize_dask import check_engine_flags, run_dask_release
from engine.data.spec import METHODS
from engine.errors import CancelledError, InvalidParameterError
from engine.progress import CancelToken, Progress, ProgressCallback, cancel_on_interrupt, format_seconds

if TYPE_CHECKING:
    import pandas as pd

# The engine's numerical modules (pandas, the mechanisms, the release) are imported in run(): `privatize --help`
# takes about as long as `import numpy` (issue 33).

def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "privatize",
        help="release a privatized copy of a table's feature columns, with its guarantee",
        description=(
            "Prepare the feature columns of a CSV/Parquet table (or a built-in demo) into the unit L2 ball, "
            "privatize them with a record-level mechanism and write the result; prints the guarantee, noise "
            "scale, time, data fingerprint and configuration as JSON."
        ),
        epilog=(
            "A saved configuration (--config, e.g. from the dashboard's decision record) holds the data spec, "
            "the mechanism and the seed; flags override its fields. Released values are on the prepared scale. "
            "Never use --seed for a real release: seeded noise can be regenerated and removed."
        ),
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--input", metavar="FILE", help="CSV or Parquet table")
    source.add_argument("--dataset", metavar="NAME", help="built-in demo dataset (togo-demo, nigeria-demo, …)")
    parser.add_argument("--config", metavar="FILE", help="saved release configuration (JSON)")
    parser.add_argument("--features", metavar="COLS",
                        help="comma-separated feature columns (default: the configuration's, the demo's, or the "
                             "columns the Studio suggests for the table — as sweep and recommend)")
    parser.add_argument("--target", metavar="COL", help="outcome column to record in the data spec (not released)")
    parser.add_argument("--mechanism", metavar="KIND",
                        help="a registered mechanism's KIND (e.g. gaussian, projection); any other is refused with the "
                        "list of registered mechanisms (the registry is read when the command runs, not for --help)")
    group = parser.add_argument_group("mechanism parameters")
    for dest, (_, kind, text) in PARAMETER_FLAGS.items():
        group.add_argument("--" + dest.replace("_", "-"), dest=dest, type=kind, default=None, help=text)
    group.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="any other mechanism field (VALUE read as JSON if possible); repeatable",
    )
    prep = parser.add_argument_group("preparation")
    prep.add_argument("--normalize", choices=sorted(METHODS), help="how rows are put into the unit ball")
    prep.add_argument(
        "--standardize",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="centre and scale each column first (default: yes, except as the configuration says)",
    )
    prep.add_argument("--bounds-file", metavar="F", help="public bounds: CSV (feature,lower,upper) or JSON {feature: [lo, hi]}")
    prep.add_argument("--lower", metavar="LIST", help="public lower bounds, comma-separated, one per numeric feature "
                      "in feature order (--categorical columns get [0, 1] automatically)")
    prep.add_argument("--upper", metavar="LIST", help="public upper bounds, comma-separated, one per numeric feature")
    add_data_flags(parser)
    parser.add_argument("--seed", type=int, default=None, help="seed (simulations only: seeded output is not private)")
    parser.add_argument(
        "--sampler", choices=("opendp", "numpy"), default=None,
        help="noise sampler: opendp (vetted, OS entropy; the default for --mechanism gaussian without --seed) or "
        "numpy (floating point; the only choice with --seed or for the mechanisms OpenDP cannot express)",
    )
    parser.add_argument("--output", metavar="FILE", required=True,
                        help="where to write (.csv, .parquet or .pq); the guarantee goes beside it, in "
                             "FILE.guarantee.json (an existing one is replaced only with --overwrite)")
    parser.add_argument("--save-config", metavar="FILE", help="also write the effective configuration (JSON) here")
    add_overwrite_argument(parser)
    add_engine_arguments(parser)  # --engine dask and its flags (engine.scale)
    parser.set_defaults(func=run)


def _write(frame: pd.DataFrame, path: Path, *, overwrite: bool = False) -> None:
    """The released table, written atomically (engine.output_files): a temporary file renamed into place; Parquet a
    row group at a time (:func:`engine.output_files.write_parquet`)."""
    from engine.data.preparation import PARQUET_EXTENSIONS
    from engine.export_csv import write_safe_csv
    from engine.output_files import write_parquet

    if path.suffix.lower() in PARQUET_EXTENSIONS:
        write_parquet(path, frame, overwrite=overwrite)
    else:
        write_safe_csv(frame, path, overwrite=overwrite)  # formula-like headers and text cells neutralised (OWASP)


def guarantee_path(output: Path) -> Path:
    """Where the guarantee of a release written to ``output`` goes: ``<output>.guarantee.json``.

    >>> guarantee_path(Path("out/private.csv")).as_posix()
    'out/private.csv.guarantee.json'
    """
    return output.with_name(output.name + ".guarantee.json")


def guarantee_document(summary: dict[str, Any]) -> dict[str, Any]:
    """What travels with the release: the guarantee, the noise, the preparation and the configuration — never the
    internal counts of the data (rows dropped, cells clipped: statistics of the confidential data)."""
    preparation = {k: v for k, v in summary["preparation"].items() if k != "internal_not_private"}
    keys = ("output", "rows", "columns", "mechanism", "guarantee", "noise_sd_per_coordinate", "seeded", "seed",
            "warning", "data", "config", "sampler")
    return {**{k: summary[k] for k in keys if k in summary}, "preparation": preparation}


#: A vetted release estimated longer than this is announced on stderr first, with its progress while it runs.
ANNOUNCE_SECONDS = 60.0
#: Seconds between progress lines of a long vetted release.
PROGRESS_EVERY = 10.0


def _stopping() -> None:
    # Runs inside the SIGINT handler: os.write, never a buffered stream the main thread may be writing to.
    os.write(sys.stderr.fileno(), b"stopping the release after the running chunks (Ctrl-C again: stop at once)\n")


def _vetted_progress(sampler: str, rows: int, width: int) -> ProgressCallback | None:
    """For a release with OpenDP's sampler estimated over :data:`ANNOUNCE_SECONDS`: announce it (how long, how to
    stop it, what is faster) and return a callback printing its progress every :data:`PROGRESS_EVERY` seconds."""
    from engine.mechanisms.samplers import OPENDP_SECONDS_PER_VALUE, available_cores, vetted_noise_seconds

    if sampler != "opendp":
        return None
    values = rows * width
    estimate = vetted_noise_seconds(values)
    if estimate < ANNOUNCE_SECONDS:
        return None
    print(f"note: OpenDP's vetted sampler draws about {1 / OPENDP_SECONDS_PER_VALUE:,.0f} values a second per core; "
          f"{values:,} values on {available_cores()} core(s) will take about {format_seconds(estimate)} "
          "(Ctrl-C stops it; nothing is written until it is complete)", file=sys.stderr, flush=True)
    last = [time.perf_counter()]

    def report(p: Progress) -> None:
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_EVERY or p.done >= p.total:
            last[0] = now
            print(f"[{p.done:,}/{p.total:,} values] {p.message}", file=sys.stderr, flush=True)

    return report


def _parquet_columns(path: str) -> list[str] | None:
    """The column names of a Parquet file (from its metadata), or None for any other input."""
    from engine.data.preparation import PARQUET_EXTENSIONS

    if Path(path).suffix.lower() not in PARQUET_EXTENSIONS or not Path(path).is_file():
        return None
    import pyarrow.parquet

    try:
        return [str(c) for c in pyarrow.parquet.ParquetFile(path).schema_arrow.names]
    except (OSError, ValueError, TypeError, pyarrow.ArrowException):
        return None  # not readable as Parquet: load_table says why, in one line


def _check_memory(path: str, spec: Any) -> None:
    """Refuse up front a Parquet table whose in-memory release would not fit in this machine's available memory
    (its size is in the file's metadata), saying up to which size this machine releases in memory and suggesting
    ``--engine dask``; CSV is read as before (its size in memory is not known before it is parsed). ``spec``: the
    data spec when the table may be prepared column by column (then only its columns count, at the lower peak of
    :func:`engine.release.in_memory_release_bytes`), None when it is read whole."""
    from engine.data.preparation import PARQUET_EXTENSIONS
    from engine.release import check_in_memory_fits

    if Path(path).suffix.lower() not in PARQUET_EXTENSIONS or not Path(path).is_file():
        return
    import psutil
    import pyarrow.parquet

    try:
        meta = pyarrow.parquet.ParquetFile(path).metadata
    except (OSError, ValueError, pyarrow.ArrowException):
        return  # not readable as Parquet: load_table says why, in one line
    columns = len(spec.columns) if spec is not None else int(meta.num_columns)
    check_in_memory_fits(int(meta.num_rows), columns, int(psutil.virtual_memory().available),
                         by_column=spec is not None)


def run(args: argparse.Namespace) -> int:
    check_engine_flags(args)
    if args.engine == "dask":
        return run_dask_release(args)
    from engine.cli._release_flags import data_spec, mechanism_dict, read_config, save_config
    from engine.data.preparation import PARQUET_EXTENSIONS, load_table, prepare, prepare_parquet
    from engine.output_files import write_text
    from engine.release import (
        ReleaseConfig,
        release_frame,
        release_prepared,
        release_sampler,
        release_summary,
    )

    started = time.perf_counter()
    config = read_config(args.config) if args.config else None
    output = Path(args.output)
    if output.suffix.lower() not in PARQUET_EXTENSIONS | {".csv"}:
        raise InvalidParameterError(f"--output must end in .csv, .parquet or .pq; got {args.output!r}")
    inputs = [("--input", args.input), ("--config", args.config), ("--bounds-file", args.bounds_file)]
    checked_output(output, inputs=inputs, overwrite=args.overwrite)  # writable, not an input — before any work
    guarantee_file = guarantee_path(output)  # the release's guarantee travels beside it, under the same rules
    checked_output(guarantee_file, flag="--output's guarantee file", inputs=[*inputs, ("--output", output)],
                   overwrite=args.overwrite)
    if args.save_config:
        checked_output(args.save_config, flag="--save-config", inputs=[*inputs, ("--output", output)],
                       overwrite=args.overwrite)

    dataset = args.dataset if args.dataset else (None if args.input else (config.dataset if config else None))
    base_spec = config.data if config else None
    notes: list[str] = []
    prepared = spec = None
    frame: pd.DataFrame | None = None
    if args.input:
        columns = _parquet_columns(args.input)
        if columns is not None and (args.features is not None or base_spec is not None):
            # Feature columns named: a Parquet table of plain numbers is prepared column by column, without a table
            # in memory (engine.data.preparation.prepare_parquet); anything else is read whole, as before.
            fast_notes: list[str] = []
            spec = data_spec(args, base_spec, columns, fast_notes)
            _check_memory(args.input, spec)
            prepared = prepare_parquet(args.input, spec)
            if prepared is not None:
                notes += fast_notes
        if prepared is None:
            spec = None  # the whole table: its spec made from the table's own columns, as for any other input
            _check_memory(args.input, None)
            frame = load_table(args.input)
    elif dataset:
        from engine.data.demos import load_demo

        demo = load_demo(dataset)  # demos are cached: the cache keeps the table
        frame = demo.frame
        if base_spec is None:
            base_spec = demo.spec
        del demo
    else:
        raise InvalidParameterError("name the data with --input FILE or --dataset NAME (or a --config made on a demo)")

    if spec is None:
        assert frame is not None
        spec = data_spec(args, base_spec, [str(c) for c in frame.columns], notes, frame)
    width = len(spec.features) if prepared is not None else feature_width(frame, spec)
    mechanism = mechanism_dict(args, config.mechanism if config else None, width)
    seed = args.seed if args.seed is not None else (config.seed if config else None)
    release_config = ReleaseConfig(data=spec, mechanism=mechanism, seed=seed, dataset=None if args.input else dataset)
    sampler = release_sampler(release_config, args.sampler)  # refuse before any work
    if args.save_config:
        save_config(args, release_config)

    t0 = time.perf_counter()
    try:
        with cancel_on_interrupt(CancelToken(), _stopping) as token:
            if prepared is None:  # prepared here, and the table dropped before the noise is drawn
                assert frame is not None
                prepared = prepare(frame, spec)
                del frame
            progress = _vetted_progress(sampler, prepared.n, prepared.d)
            release = release_prepared(prepared, release_config, sampler=sampler, cancel=token, progress=progress)
    except CancelledError:
        print(one_line("error: the release was stopped (Ctrl-C) before its noise was complete; nothing was written"),
              file=sys.stderr)
        return 130
    seconds = time.perf_counter() - t0
    released = release_frame(prepared, release)
    summary = release_summary(prepared, release, release_config, seconds=seconds)
    rows = prepared.n
    del prepared  # the prepared matrix is no longer needed: its memory is free before the output is encoded
    _write(released, output, overwrite=args.overwrite)

    summary = {
        "output": str(output),
        "rows": rows,
        "columns": [str(c) for c in released.columns],
        **summary,
        "seconds_total": time.perf_counter() - started,
        "notes": notes,
        "guarantee_file": str(guarantee_file),
    }
    write_text(guarantee_file, json.dumps(_jsonable(guarantee_document(summary)), indent=2, allow_nan=False,
                                          ensure_ascii=False) + "\n", flag="--output's guarantee file",
               overwrite=args.overwrite)
    print_json(summary)
    return 0


__all__ = ["PARAMETER_FLAGS", "register", "run"]
