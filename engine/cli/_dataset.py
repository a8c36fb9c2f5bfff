"""The data a program is scored on, from the command line: ONE definition for ``sweep`` and ``recommend``.

:func:`add_dataset_arguments` adds the flags and :func:`load_dataset` reads them, so both commands take the same
flags with the same meaning (issue 34: ``recommend`` had none of ``sweep``'s preparation and program flags):

=================================  ===================================================================================
flag                               meaning
=================================  ===================================================================================
``--dataset NAME|FILE``            a built-in demo or a CSV/Parquet file (optional when ``--config`` names a demo)
``--config FILE``                  a decision record (its data spec and program) or a saved release configuration
                                   (its data spec); the other flags override its fields
outcome (``--target`` in sweep,    the outcome column (default: the configuration's or the demo's)
``--target-column`` in both)
``--features COLS``                comma-separated feature columns (default: :func:`default_spec`)
``--role ROLE=COL``                a program column (lending: loan_amount, revenue, interest); repeatable. The column
                                   stays a feature if it is one — as in the app — with a note saying so
``--program KIND``                 targeting, lending, classification or regression
``--paper-faithful``               score the program as the authors' code
program settings                   :mod:`engine.cli._program` (``--target-share``, ``--population``,
                                   ``--approve-share``/``--approve-threshold``, units, lending assumptions)
preparation                        :mod:`engine.cli._data_flags` (``--missing``, ``--categorical``,
                                   ``--group-rare``, ``--positive-class``, ``--date``)
=================================  ===================================================================================

:func:`default_spec` is also ``privatize``'s rule for a missing ``--features``.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.cli._data_flags import add_data_flags, apply_data_flags, preparation_summary
from engine.cli._program import add_program_arguments, program_overrides
from engine.errors import InvalidParameterError

__all__ = ["Dataset", "add_dataset_arguments", "default_spec", "load_dataset", "parse_roles", "role_notes"]


@dataclass(frozen=True)
class Dataset:
    """What :func:`load_dataset` read: the prepared data, the program, the spec and the notes to print."""

    prepared: Any  # engine.data.preparation.PreparedData (imported lazily: the CLI starts light)
    program: Any  # engine.evaluation.programs.ProgramConfig
    spec: Any  # engine.data.preparation.DataSpec
    dataset: str | None
    notes: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        """The features, target, roles and preparation actually used, for every JSON output."""
        return {
            "dataset": self.dataset,
            "features": list(self.spec.features),
            "target": self.spec.target,
            "roles": dict(self.spec.roles or {}),
            "spec": self.spec.to_dict(),
            "preparation": preparation_summary(self.prepared),
            "notes": list(self.notes),
        }


def add_dataset_arguments(parser: argparse.ArgumentParser, *, outcome: tuple[str, ...] = ("--target",)) -> None:
    """The data, program and preparation flags (see the module docstring). ``outcome`` names the outcome flag(s)
    (``recommend`` keeps ``--target`` for the metric target)."""
    parser.add_argument("--dataset", metavar="NAME|FILE",
                        help="built-in demo (togo-demo, nigeria-demo, replication) or a CSV/Parquet file")
    parser.add_argument("--config", metavar="FILE",
                        help="decision record (its data spec and program) or saved release configuration (its data "
                             "spec); flags override its fields")
    parser.add_argument(*outcome, dest="outcome", metavar="COL",
                        help="outcome column (default: the configuration's or the demo's)")
    parser.add_argument("--features", metavar="COLS",
                        help="comma-separated feature columns (default: the configuration's, the demo's, or the "
                             "columns the Studio suggests for the table — numeric and few-level text columns, no "
                             "identifiers, mostly-missing or near-constant columns — with its encodings)")
    parser.add_argument("--role", metavar="ROLE=COL", action="append", default=[],
                        help="program column, e.g. loan_amount=Amount (repeatable; lending reads loan_amount, revenue, "
                             "interest). A role column that is also a feature stays one, as in the app (noted)")
    parser.add_argument("--program", choices=("targeting", "lending", "classification", "regression"),
                        help="default: the configuration's or the demo's program, else targeting")
    parser.add_argument("--paper-faithful", action="store_true",
                        help="score the program as the authors' code (per-fold thresholds, averaged)")
    add_program_arguments(parser)
    add_data_flags(parser)
    parser.set_defaults(outcome_flags=outcome)


def parse_roles(items: list[str]) -> dict[str, str]:
    """``--role ROLE=COL`` values → role → column.

    >>> parse_roles(["loan_amount=Amount", " revenue = fee "])
    {'loan_amount': 'Amount', 'revenue': 'fee'}
    """
    roles: dict[str, str] = {}
    for item in items:
        role, sep, column = item.partition("=")
        if not sep or not role.strip() or not column.strip():
            raise InvalidParameterError(f"--role must look like ROLE=COLUMN; got {item!r}")
        roles[role.strip()] = column.strip()
    return roles


def role_notes(spec: Any) -> list[str]:
    """A note for every program column that is also a privatized feature (the app's warning, in words).

    >>> from engine.data.preparation import DataSpec
    >>> role_notes(DataSpec(("Amount", "Age"), roles={"loan_amount": "Amount"}))[0][:52]
    "'Amount' (loan amount) is also a privatized feature:"
    """
    return [
        f"{column!r} ({role.replace('_', ' ')}) is also a privatized feature: the program's profit uses its exact "
        "values while the model sees the noisy ones — give --features without it to keep it out of the release"
        for role, column in (spec.roles or {}).items() if column in spec.features
    ]


def default_spec(frame: Any, target: str | None, base: Any | None) -> Any:
    """The spec when ``--features`` is not given — one rule for ``privatize``, ``sweep`` and ``recommend``.

    ``base`` (a configuration's or a demo's spec) with ``target`` as the outcome (moved out of the features with its
    rules, :func:`engine.data.profile.with_target`); without a base, the spec the app suggests for the table
    (:func:`engine.data.profile.suggest_spec`: numeric and few-level text columns as features with their levels read
    from the data, no identifiers, mostly-missing or near-constant columns, rows with a gap dropped, ``scaled``).
    """
    from engine.data.profile import suggest_spec, with_target

    if base is not None:
        return with_target(base, target) if target != base.target else base
    return suggest_spec(frame, target)


def _read_config(path: str) -> tuple[Any, Any | None]:
    """(release configuration, program or None) of a decision record or a saved release configuration."""
    from engine.decision_record import load_decision_record, load_release_config_file

    release = load_release_config_file(path)  # checks the file (exists, size, schema) and validates it
    try:
        program = load_decision_record(Path(path).read_bytes()).program
    except InvalidParameterError:
        program = None  # a saved release configuration: no program
    return release, program


def load_dataset(args: argparse.Namespace) -> Dataset:
    """The prepared data and the program the flags describe (see the module docstring)."""
    from engine.data.demos import demo_names, load_demo
    from engine.data.preparation import DataSpec, Normalization, load_table, prepare
    from engine.evaluation.programs import PROGRAM_KINDS, ProgramConfig

    release, base_program = _read_config(args.config) if args.config else (None, None)
    base = release.data if release is not None else None
    name = args.dataset or (release.dataset if release is not None else None)
    if name is None:
        raise InvalidParameterError("name the data with --dataset (a demo or a CSV/Parquet file)")
    population = None
    demo_kind = None
    dataset: str | None = None
    if name in demo_names():
        demo = load_demo(name)
        frame, dataset, demo_kind, population = demo.frame, name, demo.program, demo.population
        if base is None:
            base = demo.spec
    else:
        path = Path(name)
        if not path.is_file():
            raise InvalidParameterError(
                f"--dataset must be a demo name ({', '.join(demo_names())}) or an existing file; got {name!r}"
            )
        frame = load_table(path)
    target = args.outcome or (base.target if base is not None else None)
    if target is None:
        flag = getattr(args, "outcome_flags", ("--target",))[0]
        raise InvalidParameterError(f"{flag} is required for a file: name the outcome column")
    roles = {**((base.roles or {}) if base is not None else {}), **parse_roles(list(args.role))}
    if args.features is not None:
        features = tuple(c.strip() for c in args.features.split(",") if c.strip())
        if not features:
            raise InvalidParameterError(f"--features must list at least one column; got {args.features!r}")
        spec = DataSpec(features, target=target, roles=roles or None,
                        normalization=base.normalization if base is not None else Normalization())
        spec = apply_data_flags(args, spec, base)
    else:
        spec = default_spec(frame, target, base)
        spec = apply_data_flags(args, dataclasses.replace(spec, roles=roles or None))
    kind = args.program or (base_program.kind if base_program is not None else None) or (
        demo_kind if demo_kind in PROGRAM_KINDS else "targeting")
    settings: dict[str, Any] = {}
    if base_program is not None and base_program.kind == kind:
        settings = {k: v for k, v in base_program.to_dict().items() if k != "kind"}
    elif population is not None:
        settings["population"] = population
    settings.update(program_overrides(args, kind))
    if args.paper_faithful:
        settings["paper_faithful"] = True
    program = ProgramConfig(kind=kind, **settings)  # type: ignore[arg-type]  # kind: validated by the config
    prepared = prepare(frame, spec)
    return Dataset(prepared=prepared, program=program, spec=spec, dataset=dataset, notes=tuple(role_notes(spec)))

