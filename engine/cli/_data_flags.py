"""Command-line flags for the declared data preparation, shared by ``privatize`` and ``sweep``.

``--missing``, ``--categorical``, ``--positive-class`` and ``--date`` become fields of the
:class:`~engine.data.preparation.DataSpec` (so a saved configuration replays them):

======================================  =====================================================================
flag                                    DataSpec field
======================================  =====================================================================
``--missing drop``                      ``drop_missing=True`` (rows with a missing value in a used column)
``--missing COL=drop``                  ``missing[COL] = MissingRule("drop")``
``--missing COL=fill:VALUE``            ``missing[COL] = MissingRule("fill", VALUE)`` (a number if it reads as
                                        one, else text: a level or a date)
``--missing COL=fill:VALUE:indicator``  the same plus the 0/1 feature ``"COL (missing)"``
``--categorical COL``                   ``categorical[COL] = Categorical()`` (levels read from the data: flagged
                                        as not private); ``--categorical A,B`` declares both columns
``--categorical COL=A|B|C``             ``Categorical(("A", "B", "C"))`` (public levels, plus "(other)"); the
                                        token ``(missing)`` in the list encodes missing cells as their own level
``--group-rare COL=K``                  ``Categorical(min_count=K)``: levels read from the data, those held by
                                        fewer than K rows grouped into "(other)" (flagged as not private)
``--positive-class LABEL``              ``positive_class`` (repeatable: several labels coded 1)
``--date COL``                          ``dates`` (days since 1970-01-01)
======================================  =====================================================================

Each flag is repeatable; a flag for a column replaces that column's rule from ``--config``.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING, Any

from engine.data.spec import MISSING_LEVEL, OTHER_LEVEL, Categorical, DataSpec, MissingRule
from engine.errors import InvalidParameterError

if TYPE_CHECKING:  # pandas and the preparation are imported where used: `privatize --help` needs neither
    import pandas as pd

    from engine.data.preparation import PreparedData

MISSING_SYNTAX = "drop, COL=drop, COL=fill:VALUE or COL=fill:VALUE:indicator"


def add_data_flags(parser: argparse.ArgumentParser) -> None:
    """Add the preparation flags (an argument group) to a subcommand's parser."""
    group = parser.add_argument_group("missing values, text columns and dates (declared in the data spec)")
    group.add_argument(
        "--missing", action="append", default=[], metavar="RULE",
        help=f"missing values: {MISSING_SYNTAX} (VALUE is a public constant, never a statistic of the data); "
             "repeatable. Rows with a missing target are always dropped",
    )
    group.add_argument(
        "--categorical", action="append", default=[], metavar="COL[,COL…]|COL=LEVEL|LEVEL|…",
        help="one-hot encode feature columns (a comma list, or repeat the flag); typed levels are public (values "
             "outside them go to '(other)'), without levels they are read from the data and flagged as not "
             "private; add '(missing)' to the levels to encode missing cells as a level",
    )
    group.add_argument(
        "--group-rare", dest="group_rare", action="append", default=[], metavar="COL=K",
        help="one-hot encode COL with the levels read from the data that at least K rows hold; rarer levels go "
             "to '(other)' (flagged as not private); repeatable",
    )
    group.add_argument(
        "--positive-class", dest="positive_class", action="append", default=[], metavar="LABEL",
        help="for a text outcome: the label coded 1 (every other label is 0); repeatable",
    )
    group.add_argument(
        "--date", dest="dates", action="append", default=[], metavar="COL",
        help="a date column, turned into days since 1970-01-01 (a public map); repeatable",
    )


def parse_missing(items: list[str]) -> tuple[bool, dict[str, MissingRule]]:
    """``--missing`` values → (drop rows with any missing value, per-column rules).

    >>> parse_missing(["drop", "wages=fill:0:indicator", "language=drop"])[1]["wages"]
    MissingRule(action='fill', value=0.0, indicator=True)
    """
    drop_all = False
    rules: dict[str, MissingRule] = {}
    for item in items:
        text = item.strip()
        if text == "drop":
            drop_all = True
            continue
        if text.endswith("=drop") and len(text) > len("=drop"):
            rules[text[: -len("=drop")].strip()] = MissingRule("drop")
            continue
        column, sep, rest = text.partition("=fill:")
        if not sep or not column.strip() or not rest.strip():
            raise InvalidParameterError(f"--missing must be {MISSING_SYNTAX}; got {item!r}")
        indicator = rest.endswith(":indicator")
        if indicator:
            rest = rest[: -len(":indicator")]
        if not rest.strip():
            raise InvalidParameterError(f"--missing {item!r} needs the fill value after 'fill:'")
        rules[column.strip()] = MissingRule("fill", _number_or_text(rest), indicator=indicator)
    return drop_all, rules


def _number_or_text(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text.strip()


def parse_categorical(items: list[str]) -> dict[str, Categorical]:
    """``--categorical`` values → column → :class:`Categorical`.

    A comma list without '=' declares several columns (levels read from the data); levels are separated by '|'.

    >>> parse_categorical(["island=Biscoe|Dream", "sex=(missing)"])
    {'island': Categorical(levels=('Biscoe', 'Dream'), levels_from_data=False, other=True, missing_level=False, min_count=0), 'sex': Categorical(levels=(), levels_from_data=True, other=False, missing_level=True, min_count=0)}
    >>> list(parse_categorical(["Home,Marital"]))
    ['Home', 'Marital']
    """
    out: dict[str, Categorical] = {}
    for item in items:
        if "=" not in item and "," in item:
            for column in item.split(","):
                if not column.strip():
                    raise InvalidParameterError(f"--categorical {item!r} has an empty column name (two ',' in a row)")
                out[column.strip()] = Categorical()
            continue
        column, sep, rest = item.partition("=")
        column = column.strip()
        if not column:
            raise InvalidParameterError(f"--categorical must be COL or COL=LEVEL|LEVEL|…; got {item!r}")
        levels = [v.strip() for v in rest.split("|")] if sep else []
        if sep and not any(levels):
            raise InvalidParameterError(
                f"--categorical {item!r} lists no level after '=' — type the levels separated by '|', or give "
                f"only the column to read them from the data"
            )
        missing_level = MISSING_LEVEL in levels
        other = True if OTHER_LEVEL in levels else None
        typed = tuple(v for v in levels if v not in (MISSING_LEVEL, OTHER_LEVEL))
        if "" in typed:
            raise InvalidParameterError(f"--categorical {item!r} has an empty level (two '|' in a row)")
        out[column] = Categorical(typed, other=other, missing_level=missing_level)
    return out


def parse_group_rare(items: list[str]) -> dict[str, Categorical]:
    """``--group-rare COL=K`` values → column → ``Categorical(min_count=K)``.

    >>> parse_group_rare(["state=200"])["state"].min_count
    200
    """
    out: dict[str, Categorical] = {}
    for item in items:
        column, sep, count = item.partition("=")
        try:
            k = int(count.strip())
        except ValueError:
            k = -1
        if not sep or not column.strip() or k < 1:
            raise InvalidParameterError(
                f"--group-rare must be COL=K with K a whole number ≥ 1 (the rows a level needs); got {item!r}")
        out[column.strip()] = Categorical(min_count=k)
    return out


def apply_data_flags(args: argparse.Namespace, spec: DataSpec, base: DataSpec | None = None) -> DataSpec:
    """``spec`` with the preparation fields of ``base`` (a saved configuration; rules for columns ``spec`` no
    longer uses are left out) and then of the flags (a flag for a column replaces its rule)."""
    used = set(spec.columns)
    fields: dict[str, Any] = {
        "missing": dict(spec.missing or {}),
        "drop_missing": spec.drop_missing,
        "categorical": dict(spec.categorical or {}),
        "dates": list(spec.dates),
        "positive_class": spec.positive_class,
    }
    if base is not None:
        fields["missing"].update({c: r for c, r in (base.missing or {}).items() if c in used and c != spec.target})
        fields["categorical"].update({c: r for c, r in (base.categorical or {}).items() if c in spec.features})
        fields["drop_missing"] = fields["drop_missing"] or base.drop_missing
        fields["dates"] += [c for c in base.dates if c in used and c not in fields["dates"]]
        if base.target == spec.target and spec.target is not None and not fields["positive_class"]:
            fields["positive_class"] = base.positive_class
    drop_all, rules = parse_missing(list(getattr(args, "missing", []) or []))
    fields["drop_missing"] = fields["drop_missing"] or drop_all
    fields["missing"].update(rules)
    fields["categorical"].update(parse_categorical(list(getattr(args, "categorical", []) or [])))
    fields["categorical"].update(parse_group_rare(list(getattr(args, "group_rare", []) or [])))
    for column in getattr(args, "dates", []) or []:
        column = column.strip()
        if not column:
            raise InvalidParameterError("--date needs a column name")
        if column not in fields["dates"]:
            fields["dates"].append(column)
    positive = [p for p in (getattr(args, "positive_class", []) or [])]
    if positive:
        fields["positive_class"] = tuple(positive)
    return dataclasses.replace(
        spec,
        missing=fields["missing"] or None,
        drop_missing=bool(fields["drop_missing"]),
        categorical=fields["categorical"] or None,
        dates=tuple(fields["dates"]),
        positive_class=tuple(fields["positive_class"]),
    )


def feature_width(frame: pd.DataFrame, spec: DataSpec) -> int:
    """The number of prepared feature columns (one-hot and indicator columns counted) — the d a mechanism sees."""
    if not spec.categorical and not any(r.indicator for r in (spec.missing or {}).values()):
        return len(spec.features)
    from engine.data.preparation import feature_names

    return len(feature_names(frame, spec))


def preparation_summary(prepared: PreparedData) -> dict[str, Any]:
    """The declared steps, the privacy note (every not-private step flagged) and the warnings, for a JSON summary."""
    return {
        "steps": list(prepared.preparation_steps()),
        "privacy_note": prepared.privacy_note(),
        "features": list(prepared.feature_names),
        "internal_not_private": {
            "rows_in_table": prepared.rows_in_table,
            "rows_dropped": prepared.rows_dropped,
            "dropped_rows_by_column": dict(prepared.dropped_rows),
            "filled_cells_by_column": dict(prepared.filled_cells),
            "warnings": list(prepared.warnings),
        },
    }


__all__ = [
    "add_data_flags",
    "apply_data_flags",
    "feature_width",
    "parse_categorical",
    "parse_group_rare",
    "parse_missing",
    "preparation_summary",
]
