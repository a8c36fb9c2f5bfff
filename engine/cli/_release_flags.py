"""Flags of ``python -m engine privatize`` shared by its in-memory and out-of-core (``--engine dask``) branches.

:func:`read_config` reads a saved configuration or decision record; :func:`mechanism_dict` builds the mechanism's
configuration from it and the parameter flags (:data:`PARAMETER_FLAGS`; a mechanism's ``FLAGS`` rename a flag);
:func:`data_spec` the data spec from it and the preparation flags.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any, cast

from engine.cli._common import parse_float_list
from engine.cli._data_flags import apply_data_flags
from engine.cli._parameter_flags import PARAMETER_FLAGS
from engine.data.preparation import DataSpec, Normalization, bounds_from_frame, load_table
from engine.errors import InvalidParameterError
from engine.mechanisms import MECHANISMS
from engine.output_files import write_text
from engine.release import ReleaseConfig


def read_config(path: str) -> ReleaseConfig:
    """A :class:`ReleaseConfig` from a decision record (schema and version checked) or a saved configuration."""
    from engine.decision_record import load_release_config_file

    return load_release_config_file(path)


def mechanism_dict(args: argparse.Namespace, base: dict[str, Any] | None, n_features: int) -> dict[str, Any]:
    """The mechanism configuration of the command line: ``--config``'s, overridden by the parameter flags (each
    flag sets the field its mechanism names it for: ``PARAMETER_FLAGS``, renamed by the mechanism's ``FLAGS``)."""
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
    renamed = dict(cls.FLAGS)  # field → the flag this mechanism sets it with
    for dest, (name, _, _) in PARAMETER_FLAGS.items():
        value = getattr(args, dest)
        if value is None:
            continue
        flag = "--" + dest.replace("_", "-")
        if name in fields and renamed.get(name, name) != dest:
            wanted = "--" + renamed.get(name, name).replace("_", "-")
            meaning = PARAMETER_FLAGS[dest][2].split(" (")[0]
            raise InvalidParameterError(f"{flag} is the {meaning}; for the {kind} mechanism's {name} use {wanted}")
        if name not in fields:
            raise InvalidParameterError(
                f"{flag} does not apply to the {kind} mechanism; its parameters are: {', '.join(sorted(fields))}"
            )
        out[name] = value
    if cls.TAGS.needs_d and "d" not in out:
        out["d"] = n_features  # the data's column count
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


def data_spec(args: argparse.Namespace, base: DataSpec | None, columns: list[str], notes: list[str],
              frame: Any = None) -> DataSpec:
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


__all__ = ["PARAMETER_FLAGS", "data_spec", "mechanism_dict", "read_config"]


def save_config(args: argparse.Namespace, config: ReleaseConfig) -> None:
    """``--save-config``: the effective configuration, written atomically (engine.output_files)."""
    write_text(args.save_config, config.to_json(indent=2) + "\n", flag="--save-config", overwrite=args.overwrite)
