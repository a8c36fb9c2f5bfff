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
import dataclasses
import json
import time
from pathlib import Path
from typing import Any, cast

from engine.cli._common import _jsonable, parse_float_list, print_json
from engine.cli._data_flags import add_data_flags, apply_data_flags, feature_width
from engine.data.preparation import (
    METHODS,
    PARQUET_EXTENSIONS,
    DataSpec,
    Normalization,
    bounds_from_frame,
    load_table,
)
from engine.errors import InvalidParameterError
from engine.export_csv import write_safe_csv
from engine.mechanisms import MECHANISMS
from engine.mechanisms.samplers import resolve_sampler, run_release_with_sampler, sampler_note
from engine.output_files import check_output_path
from engine.release import ReleaseConfig, release_frame, release_summary
from engine.scale.command import add_arguments as add_engine_arguments
from engine.scale.command import check_engine_flags, run_dask_release

#: Command-line flag (argparse dest) → (mechanism field, type, help).
PARAMETER_FLAGS: dict[str, tuple[str, type, str]] = {
    "b": ("b", float, "target distance B in (0, 2] (2 = classic DP)"),
    "epsilon": ("epsilon", float, "ε (gaussian)"),
    "delta": ("delta", float, "δ (gaussian)"),
    "epsilon1": ("epsilon1", float, "ε1 of the projection step (projection)"),
    "delta1": ("delta1", float, "δ1 of the projection step (projection)"),
    "epsilon2": ("epsilon2", float, "ε2 of the covariance step, < 1 (projection)"),
    "delta2": ("delta2", float, "δ2 of the covariance step (projection)"),
    "k": ("k", int, "projection dimension k (projection; default 10000)"),
    "rank": ("rank", int, "number of singular vectors kept, ≤ d (projection; default d)"),
    "calibration": ("calibration", str, "analytic or classical (gaussian)"),
    "covariance": ("covariance", str, "gram (XᵀX, the paper) or centred (the authors' code) (projection)"),
    "partitions": ("partitions", int, "split rows into this many disjoint parts (projection; the paper's Nigeria: 6)"),
    "anonymity_k": ("k", int, "minimum class size k (mondrian)"),
    "implementation": ("implementation", str, "fast (default) or reference (projection)"),
    "output_scale": ("output_scale", str, "unbiased (default; ×k) or paper (as printed: X/k + noise) (projection)"),
    "relation": ("relation", str, "row (one record changes by at most B) or element (one entry) (jl-laplace)"),
    "element_bound": ("element_bound", float, "largest change of one entry protected, element-wise (jl-laplace; default 1)"),
    "t": ("t", float, "row-wise per-coordinate threshold t ≥ t_min (jl-laplace)"),
    "target_delta": ("target_delta", float, "row-wise: choose t so the paper's failure bound equals this δ (jl-laplace)"),
}


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
    parser.add_argument("--mechanism", metavar="KIND", help=f"one of: {', '.join(sorted(MECHANISMS))}")
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
        "numpy (floating point; the only choice with --seed or for the other mechanisms)",
    )
    parser.add_argument("--output", metavar="FILE", required=True,
                        help="where to write (.csv, .parquet or .pq); the guarantee goes beside it, in "
                             "FILE.guarantee.json (never over an existing file)")
    parser.add_argument("--save-config", metavar="FILE", help="also write the effective configuration (JSON) here")
    add_engine_arguments(parser)  # --engine dask and its flags (engine.scale)
    parser.set_defaults(func=run)


def _read_config(path: str) -> ReleaseConfig:
    """A :class:`ReleaseConfig` from a decision record (schema and version checked) or a saved configuration."""
    from engine.decision_record import load_release_config_file

    return load_release_config_file(path)


def _mechanism_dict(args: argparse.Namespace, base: dict[str, Any] | None, n_features: int) -> dict[str, Any]:
    kind = args.mechanism or (base or {}).get("kind")
    if not kind:
        raise InvalidParameterError(
            f"choose a mechanism with --mechanism ({', '.join(sorted(MECHANISMS))}) or give --config"
        )
    if kind not in MECHANISMS:
        raise InvalidParameterError(f"--mechanism must be one of {', '.join(sorted(MECHANISMS))}; got {kind!r}")
    cls = MECHANISMS[kind]
    fields = {f.name for f in dataclasses.fields(cast(Any, cls)) if f.init}  # every registered mechanism is a dataclass
    out = dict(base) if base and base.get("kind") == kind else {}
    out["kind"] = kind
    for dest, (name, _, _) in PARAMETER_FLAGS.items():
        value = getattr(args, dest)
        if value is None:
            continue
        flag = "--" + dest.replace("_", "-")
        if kind == "mondrian" and dest == "k":
            raise InvalidParameterError("--k is the projection dimension; for mondrian's class size use --anonymity-k")
        if kind != "mondrian" and dest == "anonymity_k":
            raise InvalidParameterError(f"--anonymity-k applies to the mondrian mechanism only, not {kind}")
        if name not in fields:
            raise InvalidParameterError(
                f"{flag} does not apply to the {kind} mechanism; its parameters are: {', '.join(sorted(fields))}"
            )
        out[name] = value
    if "d" in fields and "d" not in out:
        out["d"] = n_features  # the data's column count (jl-laplace)
    for item in args.param:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InvalidParameterError(f"--param must look like NAME=VALUE; got {item!r}")
        if name not in fields:
            raise InvalidParameterError(
                f"--param {name} does not apply to the {kind} mechanism; its parameters are: {', '.join(sorted(fields))}"
            )
        try:
            out[name] = json.loads(text)
        except json.JSONDecodeError:
            out[name] = text
    try:
        return cls.from_dict(out).to_dict()
    except InvalidParameterError as exc:
        message = str(exc)
        for field in sorted(fields):
            if message.endswith(f"missing the required field {field!r}"):
                flag = next(
                    ("--" + d.replace("_", "-") for d, (n, _, _) in PARAMETER_FLAGS.items() if n == field),
                    f"--param {field}=VALUE",
                )
                message = f"the {kind} mechanism needs {field}: set it with {flag}"
                break
        raise InvalidParameterError(message) from None


def _bounds(args: argparse.Namespace, features: tuple[str, ...]) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    if args.bounds_file and (args.lower or args.upper):
        raise InvalidParameterError("give the public bounds either with --bounds-file or with --lower/--upper, not both")
    if args.bounds_file:
        path = Path(args.bounds_file)
        if path.suffix.lower() == ".json":
            if not path.is_file():
                raise InvalidParameterError(f"there is no bounds file at {args.bounds_file!r} — check the path")
            try:
                table = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise InvalidParameterError(
                    f"the bounds file {args.bounds_file!r} is not valid JSON (line {exc.lineno}: {exc.msg})"
                ) from None
            if not isinstance(table, dict) or not all(
                isinstance(v, list) and len(v) == 2 for v in table.values()
            ):
                raise InvalidParameterError(
                    "a JSON bounds file must map each feature to [lower, upper], e.g. {\"calls_out\": [0, 2000]}"
                )
            missing = [f for f in features if f not in table]
            if missing:
                raise InvalidParameterError(f"the bounds file has no bounds for feature(s) {missing}")
            return tuple(table[f][0] for f in features), tuple(table[f][1] for f in features)
        return bounds_from_frame(load_table(path), features)
    if args.lower or args.upper:
        if not (args.lower and args.upper):
            raise InvalidParameterError("give both --lower and --upper (one value per feature each)")
        return tuple(parse_float_list("--lower", args.lower)), tuple(parse_float_list("--upper", args.upper))
    return None


def _data_spec(args: argparse.Namespace, base: DataSpec | None, columns: list[str], notes: list[str],
               frame=None) -> DataSpec:
    """The data spec of the flags over ``base``. ``frame``: the table in memory, for the suggested features when
    neither ``--features`` nor a configuration names them (the out-of-core release has only the column names)."""
    if args.features is not None:
        features = tuple(f.strip() for f in args.features.split(",") if f.strip())
        if not features:
            raise InvalidParameterError(f"--features must list at least one column; got {args.features!r}")
    elif base is not None:
        features = base.features
    elif frame is None:
        raise InvalidParameterError("name the feature columns with --features (comma-separated) or give --config")
    else:
        # One rule with sweep and recommend: the spec the Studio suggests for the table (its features, encodings and
        # rule for gaps; the normalisation flags below still apply).
        from engine.cli._dataset import default_spec

        suggested = default_spec(frame, args.target, None)
        if not suggested.features:
            raise InvalidParameterError(
                "no column of the input can be suggested as a feature — name the feature columns with --features")
        notes.append(f"no --features: the suggested features {', '.join(suggested.features)} (as the app and sweep "
                     "suggest them)")
        base, features = suggested, suggested.features
    norm = base.normalization if base is not None else Normalization()
    method = args.normalize or norm.method
    standardize = norm.standardize if args.standardize is None else args.standardize
    bounds = _bounds(args, features)
    if method == "bounds":
        if bounds is None:
            if norm.method != "bounds" or features != (base.features if base else ()):
                raise InvalidParameterError(
                    "--normalize bounds needs public bounds: --bounds-file F or --lower/--upper lists (one value per "
                    "feature)"
                )
            bounds = (norm.lower, norm.upper)
        norm = Normalization(method="bounds", standardize=standardize, lower=bounds[0], upper=bounds[1])
    else:
        if bounds is not None:
            raise InvalidParameterError(f"public bounds are only used with --normalize bounds; the method is {method!r}")
        norm = Normalization(method=method, standardize=standardize)
    target = args.target if args.target is not None else (base.target if base is not None else None)
    if args.target is None and target is not None and target not in columns:
        notes.append(f"the configuration's target column {target!r} is not in the input; it is not needed for the release")
        target = None
    roles = dict(base.roles) if base is not None and base.roles else None
    if roles:
        absent = {r: c for r, c in roles.items() if c not in columns}
        if absent:
            notes.append(f"program column(s) {sorted(absent.values())} not in the input; not needed for the release")
            roles = {r: c for r, c in roles.items() if c in columns} or None
    return apply_data_flags(args, DataSpec(features=features, target=target, roles=roles, normalization=norm), base)


def _write(frame, path: Path) -> None:
    try:
        if path.suffix.lower() in PARQUET_EXTENSIONS:
            frame.to_parquet(path, index=False)
        else:
            write_safe_csv(frame, path)  # formula-like headers and text cells neutralised (OWASP)
    except OSError as exc:
        raise InvalidParameterError(f"cannot write the output file {str(path)!r}: {exc.strerror or exc}") from None


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


def _write_guarantee(path: Path, text: str) -> None:
    """``text`` into ``path`` atomically and never over an existing file: a new temporary file beside it, flushed,
    then published under the name with ``link`` (which fails if the name exists). The reliability branch's
    ``engine.output_files.write_text(path, text, overwrite=…)`` does the same; use it once merged."""
    import os
    import tempfile

    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.partial-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(temporary, path)
    except FileExistsError:
        raise InvalidParameterError(f"the guarantee file {str(path)!r} appeared while the release ran — nothing was "
                                    "written over it; move it away and run again") from None
    except OSError as exc:
        raise InvalidParameterError(f"cannot write the guarantee file {str(path)!r}: {exc.strerror or exc}") from None
    finally:
        os.unlink(temporary)


def run(args: argparse.Namespace) -> int:
    check_engine_flags(args)
    if args.engine == "dask":
        return run_dask_release(args)
    started = time.perf_counter()
    config = _read_config(args.config) if args.config else None
    output = Path(args.output)
    if output.suffix.lower() not in PARQUET_EXTENSIONS | {".csv"}:
        raise InvalidParameterError(f"--output must end in .csv, .parquet or .pq; got {args.output!r}")
    inputs = [("--input", args.input), ("--config", args.config), ("--bounds-file", args.bounds_file)]
    check_output_path(output, inputs=inputs)  # writable and not an input — before any work
    guarantee_file = guarantee_path(output)
    check_output_path(guarantee_file, flag="--output's guarantee file", inputs=[*inputs, ("--output", output)])
    if guarantee_file.exists() or guarantee_file.is_symlink():
        raise InvalidParameterError(
            f"the guarantee file {str(guarantee_file)!r} (written beside --output) exists already — move it away or "
            "choose another --output; a release's guarantee is never overwritten"
        )
    if args.save_config:
        check_output_path(args.save_config, flag="--save-config", inputs=[*inputs, ("--output", output)])

    dataset = args.dataset if args.dataset else (None if args.input else (config.dataset if config else None))
    base_spec = config.data if config else None
    if args.input:
        frame = load_table(args.input)
    elif dataset:
        from engine.data.demos import load_demo

        demo = load_demo(dataset)
        frame = demo.frame
        if base_spec is None:
            base_spec = demo.spec
    else:
        raise InvalidParameterError("name the data with --input FILE or --dataset NAME (or a --config made on a demo)")

    notes: list[str] = []
    spec = _data_spec(args, base_spec, [str(c) for c in frame.columns], notes, frame)
    mechanism = _mechanism_dict(args, config.mechanism if config else None, feature_width(frame, spec))
    seed = args.seed if args.seed is not None else (config.seed if config else None)
    release_config = ReleaseConfig(data=spec, mechanism=mechanism, seed=seed, dataset=None if args.input else dataset)
    resolve_sampler(args.sampler, seed=seed, kind=release_config.kind)  # refuse before any work
    if args.save_config:
        try:
            Path(args.save_config).write_text(release_config.to_json(indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise InvalidParameterError(f"cannot write {args.save_config!r}: {exc.strerror or exc}") from None

    t0 = time.perf_counter()
    prepared, release, sampler = run_release_with_sampler(frame, release_config, sampler=args.sampler)
    seconds = time.perf_counter() - t0
    released = release_frame(prepared, release)
    _write(released, output)

    summary = release_summary(prepared, release, release_config, seconds=seconds)
    summary = {
        "output": str(output),
        "rows": prepared.n,
        "columns": [str(c) for c in released.columns],
        **summary,
        "sampler": {
            "name": sampler,
            "note": sampler_note(sampler, kind=release_config.kind, seeded=release_config.seeded),
        },
        "seconds_total": time.perf_counter() - started,
        "notes": notes,
        "guarantee_file": str(guarantee_file),
    }
    _write_guarantee(guarantee_file, json.dumps(_jsonable(guarantee_document(summary)), indent=2, allow_nan=False,
                                                ensure_ascii=False) + "\n")
    print_json(summary)
    return 0


__all__ = ["PARAMETER_FLAGS", "register", "run"]
