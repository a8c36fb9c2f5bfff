r"""Checking a table against a :class:`~engine.data.spec.DataSpec`, and decoding its columns.

:func:`table_problems` lists every problem of a table for a spec (missing or text columns, missing or infinite
cells, constant features, too few rows, …); each :class:`TableProblem` names the column, the row and the control
that fixes it, including the fixes the spec can declare. :func:`validate_table` raises the first. The decoding of
numeric, date and categorical columns used by the checks and by :func:`engine.data.preparation.prepare` lives here
so that both read a cell the same way.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from engine.data.spec import (
    INDICATOR_SUFFIX,
    MISSING_LEVEL,
    OTHER_LEVEL,
    Categorical,
    DataSpec,
    MissingRule,
    _level_text,
    _shown_levels,
)
from engine.errors import DataValidationError, InsufficientDataError, InvalidParameterError

__all__ = ["MAX_ABS_VALUE", "MIN_ROWS", "DropImpact", "TableProblem", "TooFewRowsError", "drop_impact", "row_label",
           "table_problems", "validate_table"]

#: Fewest data rows a table must have.
MIN_ROWS = 20

#: Values beyond this magnitude overflow when squared (norms, variances); such columns are rejected.
MAX_ABS_VALUE = 1e150


# ----------------------------------------------------------------------------------------------------------------
# Problems
# ----------------------------------------------------------------------------------------------------------------


class TableProblem(DataValidationError):
    """A data problem tied to the control that fixes it.

    ``control`` is one of ``"file"`` (the upload itself), ``"table"`` (rows or column names of the table),
    ``"features"``, ``"target"``, ``"role:<name>"`` (a program column such as ``role:loan_amount``) or
    ``"normalization"``. ``column`` and ``row`` (0-based position in the table) say where, when known.
    """

    def __init__(self, message: str, *, control: str, column: str | None = None, row: int | None = None) -> None:
        super().__init__(message, column=column, row=row)
        self.control = control


class TooFewRowsError(TableProblem, InsufficientDataError):
    """The table has fewer than :data:`MIN_ROWS` data rows."""


def row_label(position: int) -> str:
    """How a 0-based row position is shown to users: the data row counted from 1 below the header.

    >>> row_label(0)
    'data row 1 (counting data rows from 1)'
    """
    return f"data row {position + 1} (counting data rows from 1)"


def _file_error(label: str, kind: str, reason: str, fix: str) -> TableProblem:
    return TableProblem(f"could not read {label} as {kind}: {reason} — {fix}", control="file")


def _suggest(name: str, options: Iterable[str]) -> str:
    options = list(options)
    lowered = {o.lower().strip(): o for o in options}
    if name.lower().strip() in lowered:
        return f"did you mean {lowered[name.lower().strip()]!r}?"
    close = difflib.get_close_matches(name, options, n=3, cutoff=0.6)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    shown = ", ".join(repr(o) for o in options[:8]) + (", …" if len(options) > 8 else "")
    return f"the table has {shown}" if options else "the table has no columns"


def _numeric(series: pd.Series) -> tuple[np.ndarray, int | None, str]:
    """Values as float64, plus (position, text) of the first cell that is present but not a number."""
    values, text = _parse_numeric(series)
    if pd.api.types.is_datetime64_any_dtype(series.dtype) or isinstance(series.dtype, pd.PeriodDtype):
        return values, 0, "a date/time"
    if text.any():
        first = int(np.argmax(text))
        return values, first, str(series.astype(object).iloc[first])
    return values, None, ""


def _parse_numeric(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Values as float64 (NaN where missing or not a number) and the mask of cells present but not a number."""
    n = len(series)
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan), np.zeros(n, dtype=bool)
    if pd.api.types.is_numeric_dtype(series.dtype):
        if pd.api.types.is_complex_dtype(series.dtype):
            return np.full(n, np.nan), np.ones(n, dtype=bool)
        return series.to_numpy(dtype=np.float64, na_value=np.nan), np.zeros(n, dtype=bool)
    if pd.api.types.is_datetime64_any_dtype(series.dtype) or isinstance(series.dtype, pd.PeriodDtype):
        return np.full(n, np.nan), series.notna().to_numpy(dtype=bool)
    as_object = series.astype(object)
    coerced = pd.to_numeric(as_object.map(_strip), errors="coerce")
    values = coerced.to_numpy(dtype=np.float64, na_value=np.nan)
    return values, _present(series) & np.isnan(values)


def _text_codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """(codes, distinct cells) of a column of text cells and gaps (``pd.factorize``; code -1 = NaN/None), or None
    when some cell is not text (numbers and booleans would be merged by value: 1, 1.0 and True are one key)."""
    # A pandas string column (pyarrow-backed, what a CSV's text reads as) is factorized as it is: converting it to
    # Python objects first cost most of the time of a wide table's checks.
    values = series if isinstance(series.dtype, pd.StringDtype) else series.astype(object).to_numpy()
    try:
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
    except TypeError:  # unhashable cells
        return None
    uniques = np.asarray(uniques, dtype=object)
    if not all(isinstance(u, str) for u in uniques):
        return None
    return np.asarray(codes), uniques


def _present(series: pd.Series) -> np.ndarray:
    """Mask of the cells that hold a value (not NaN/None/empty text/'NA'); ±inf counts as present."""
    if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_datetime64_any_dtype(series.dtype):
        return series.notna().to_numpy(dtype=bool)
    coded = _text_codes(series)
    if coded is not None:  # the common case (a text column read from a file): each distinct text checked once
        codes, uniques = coded
        ok = np.array([u.strip().lower() not in _NA_TEXT for u in uniques], dtype=bool)
        return (codes >= 0) & np.append(ok, False)[codes]
    values = series.astype(object)
    blank = _stripped(values).str.lower().isin(_NA_TEXT).to_numpy(dtype=bool)  # non-text cells give NaN: False
    return ~pd.isna(values.to_numpy()) & ~blank


def _stripped(values: pd.Series) -> pd.Series:
    """Text cells stripped of surrounding blanks; every other cell NaN (object dtype)."""
    try:
        return values.astype(object).str.strip()
    except AttributeError:  # no text cell at all (e.g. only booleans): pandas refuses the .str accessor
        return pd.Series(np.nan, index=values.index, dtype=object)


def _texts(series: pd.Series) -> np.ndarray:
    """Every cell as its level text (:func:`_level_text`); missing cells as ''."""
    out = np.full(len(series), "", dtype=object)
    if not (pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_datetime64_any_dtype(series.dtype)):
        coded = _text_codes(series)
        if coded is not None:  # text cells and gaps: each distinct text stripped once
            codes, uniques = coded
            labels = np.array([u.strip() if u.strip().lower() not in _NA_TEXT else "" for u in uniques] + [""],
                              dtype=object)
            return labels[codes]
    present = _present(series)
    values = series.astype(object).to_numpy()
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        distinct, inverse = np.unique(values[present].astype(np.float64), return_inverse=True)
        out[present] = np.array([_level_text(v) for v in distinct], dtype=object)[inverse]
        return out
    stripped = _stripped(pd.Series(values, dtype=object)).to_numpy()
    is_text = np.array([isinstance(v, str) for v in stripped], dtype=bool) & present
    out[is_text] = stripped[is_text]
    others = present & ~is_text
    if others.any():
        out[others] = [_level_text(v) for v in values[others]]
    return out


_DATE_LIKE = re.compile(
    r"^\s*(\d{4}-\d{1,2}-\d{1,2}([ T]\S*)?|\d{4}/\d{1,2}/\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}\.\d{1,2}\.\d{4}"
    r"|[A-Za-z]{3,9}[- ]\d{2,4}|\d{1,2}[- ][A-Za-z]{3,9}[- ]\d{2,4})\s*$"
)
_EPOCH = pd.Timestamp("1970-01-01", tz="UTC")


def _looks_like_dates(texts: Iterable[str]) -> bool:
    texts = [t for t in texts if t]
    return bool(texts) and sum(bool(_DATE_LIKE.match(t)) for t in texts) > len(texts) / 2


def _parse_dates(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Days since 1970-01-01 (UTC; fractions for times of day) and the mask of present cells that are no date.

    Text is read per distinct value (ISO 8601, ``Dec-2011``, ``03/31/2020`` month first); time zones are
    converted to UTC and naive times taken as UTC.
    """
    n = len(series)
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        stamps = pd.to_datetime(series, utc=True)
        days = ((stamps - _EPOCH) / pd.Timedelta(days=1)).to_numpy(dtype=np.float64, na_value=np.nan)
        return days, np.zeros(n, dtype=bool)
    present = _present(series)
    if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        return np.full(n, np.nan), present
    texts = _texts(series)
    distinct = sorted({t for t in texts[present]})
    if distinct:
        parsed = pd.to_datetime(pd.Index(distinct), format="mixed", errors="coerce", utc=True)
        table = dict(zip(distinct, ((parsed - _EPOCH) / pd.Timedelta(days=1)).to_numpy(dtype=np.float64,
                                                                                        na_value=np.nan), strict=True))
    else:
        table = {}
    days = np.array([table.get(t, np.nan) if p else np.nan for t, p in zip(texts, present, strict=True)])
    return days, present & np.isnan(days)


def _strip(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        return text if text else None
    if isinstance(value, bool | np.bool_):
        return float(value)
    return value


_NA_TEXT = ("", "nan", "na", "n/a", "null")


def _is_present(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return value.strip().lower() not in _NA_TEXT
    if isinstance(value, float):
        return value == value
    try:
        return not bool(pd.isna(value))
    except (TypeError, ValueError):
        return True


def _text_problem(
    series: pd.Series, text_mask: np.ndarray, keep: np.ndarray, column: str, role_text: str, control: str
) -> TableProblem:
    """The message for a column with cells that are not numbers: a text column, a date column, or a typo."""
    present = _present(series) & keep
    bad = text_mask & keep
    first = int(np.argmax(bad))
    if pd.api.types.is_datetime64_any_dtype(series.dtype) or isinstance(series.dtype, pd.PeriodDtype):
        sample = str(series.iloc[first])
        return TableProblem(
            f"{role_text} {column!r} holds dates (e.g. {sample!r}) — declare it as a date column (turned into "
            f"days since 1970-01-01), or remove it",
            control=control, column=column, row=first,
        )
    texts = _texts(series)
    if bad.sum() > present.sum() / 2:  # most values are not numbers: a genuine text (or date) column
        levels = sorted({t for t in texts[present]})
        if _looks_like_dates(levels):
            return TableProblem(
                f"{role_text} {column!r} holds dates (e.g. {levels[0]!r}) — declare it as a date column (turned "
                f"into days since 1970-01-01), or remove it",
                control=control, column=column, row=first,
            )
        described = (
            f"{role_text} {column!r} is a text column with {len(levels)} level{'s' if len(levels) != 1 else ''} "
            f"({_shown_levels(levels)})"
        )
        if control == "features":
            fix = "encode it as categorical, or remove it from the features"
        elif control == "target":
            fix = "choose the positive class(es) to code as 1 (every other label is coded 0), or choose another target"
        else:
            fix = "choose a column of amounts (numbers)"
        return TableProblem(f"{described} — {fix}", control=control, column=column, row=first)
    return TableProblem(
        f"{role_text} {column!r} must be numeric, but {row_label(first)} holds the text {texts[first]!r} — "
        f"correct that cell (digits only, '.' as the decimal point) or choose another column",
        control=control, column=column, row=first,
    )


def _missing_problem(
    missing: np.ndarray, column: str, role_text: str, control: str, categorical: bool
) -> TableProblem:
    first = int(np.argmax(missing))
    more = int(missing.sum()) - 1
    fixes = ["drop those rows", "fill them with a public constant"]
    if control == "features":
        fixes[-1] += " (optionally with a missing-indicator feature)"
    if categorical:
        fixes.append("encode missing as its own level")
    return TableProblem(
        f"{role_text} {column!r} has a missing value in {row_label(first)}"
        + (f" and in {more} more row{'s' if more != 1 else ''}" if more else "")
        + f" — {', '.join(fixes[:-1])} or {fixes[-1]}",
        control=control,
        column=column,
        row=first,
    )


def _value_problem(values: np.ndarray, rows: np.ndarray, column: str, role_text: str, control: str) -> TableProblem | None:
    """Infinite or too large values (``values`` are the kept rows, ``rows`` their positions in the table)."""
    inf = np.isinf(values)
    if inf.any():
        first = int(rows[np.argmax(inf)])
        fix = "remove it from the features" if control == "features" else "choose another column"
        return TableProblem(
            f"{role_text} {column!r} has an infinite value in {row_label(first)} — {fix}, or replace the value "
            f"with a finite number in the file",
            control=control, column=column, row=first,
        )
    huge = np.abs(values) > MAX_ABS_VALUE
    if huge.any():
        i = int(np.argmax(huge))
        first = int(rows[i])
        fix = "remove it from the features" if control == "features" else "choose another column"
        return TableProblem(
            f"{role_text} {column!r} has the value {values[i]:.3g} in {row_label(first)}, too large to "
            f"compute with (limit {MAX_ABS_VALUE:.0e}) — {fix}, or rescale the column in the file (e.g. to "
            f"thousands)",
            control=control, column=column, row=first,
        )
    return None


@dataclass
class _Decoded:
    """A table decoded for a spec: kept rows and every used column as float64 over those rows."""

    keep: np.ndarray
    features: dict[str, list[tuple[str, np.ndarray, str]]] = field(default_factory=dict)
    y: np.ndarray | None = None
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    filled: dict[str, int] = field(default_factory=dict)
    levels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    raw: dict[str, np.ndarray] = field(default_factory=dict)


def table_problems(frame: pd.DataFrame, spec: DataSpec) -> list[TableProblem]:
    """Every problem that stops :func:`prepare` from using ``frame`` with ``spec``; an empty list means usable.

    Checks, in order: duplicate column names; at least one feature chosen; the target is not also a feature;
    every declared encoding, date or missing-value rule is for a used column; every chosen column exists (with
    a suggestion of close names); then, on the rows kept after the missing-value rules (rows with a missing
    target are always dropped), every column is usable as declared — numbers (a text column is told to be
    encoded, a date column to be declared as a date, a stray text cell to be corrected), dates, levels, a
    positive class that occurs in the target — with no missing cell left unhandled and finite values; no numeric
    feature is constant; one public bound per numeric feature (``bounds`` mode); at least :data:`MIN_ROWS` rows
    kept. Each problem names the column and the first bad row (``row`` is the 0-based position in the table;
    messages say "data row k", counting from 1 below the header) and says how to fix it. Columns the spec does
    not use are not checked.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (e.g. from :func:`load_table`).
    spec : DataSpec
        The chosen columns, their preparation and the normalisation.

    Returns
    -------
    list of TableProblem
        In the order above; ``problem.control`` says which control fixes it.
    """
    return _check_table(frame, spec)[0]


def _check_table(frame: pd.DataFrame, spec: DataSpec) -> tuple[list[TableProblem], _Decoded]:
    """:func:`table_problems` plus the decoded columns (converted once)."""
    if not isinstance(frame, pd.DataFrame):
        not_a_table = TableProblem(f"expected a table (pandas DataFrame); got {type(frame).__name__}", control="file")
        return [not_a_table], _Decoded(keep=np.zeros(0, dtype=bool))
    if not isinstance(spec, DataSpec):
        raise InvalidParameterError(f"spec must be a DataSpec; got {type(spec).__name__}")
    problems: list[TableProblem] = []
    problem: TableProblem | None
    names = [str(c) for c in frame.columns]
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    for name, count in counts.items():
        if count > 1:
            positions = [i + 1 for i, n in enumerate(names) if n == name]
            problems.append(
                TableProblem(
                    f"the table has {count} columns named {name!r} (columns {', '.join(map(str, positions))}) — "
                    f"rename them so every column name is unique",
                    control="table",
                    column=name,
                )
            )
    if not spec.features:
        problems.append(TableProblem("choose at least one feature column", control="features"))
    if spec.target is not None and spec.target in spec.features:
        problems.append(
            TableProblem(
                f"the target {spec.target!r} is also chosen as a feature — the outcome must not be part of the "
                f"privatized features; remove it from the features or choose another target",
                control="target",
                column=spec.target,
            )
        )
    categorical = spec.categorical or {}
    rules = spec.missing or {}
    for column in categorical:
        if column not in spec.features:
            problems.append(TableProblem(
                f"{column!r} is declared categorical but is not a feature — add it to the features or remove its "
                f"encoding", control="features", column=column))
    for column in spec.dates:
        if column not in spec.columns:
            problems.append(TableProblem(
                f"{column!r} is declared as a date column but is not used — add it to the features or remove it "
                f"from the date columns", control="features", column=column))
    for column in rules:
        if column not in spec.columns:
            problems.append(TableProblem(
                f"there is a missing-value rule for {column!r}, which is not used — add the column or remove the "
                f"rule", control="features", column=column))

    checks: list[tuple[str, str, str]] = [(f, "features", "feature column") for f in spec.features]
    if spec.target is not None:
        checks.append((spec.target, "target", "target column"))
    for role, column in (spec.roles or {}).items():
        checks.append((column, f"role:{role}", f"{role.replace('_', ' ')} column"))
    lookup = {name: i for i, name in enumerate(names) if counts[name] == 1}
    n_rows = len(frame)

    # 1. Rows dropped by the missing-value rules (decided per record, before anything else is read).
    keep = np.ones(n_rows, dtype=bool)
    present: dict[str, np.ndarray] = {}
    decoded = _Decoded(keep=keep)
    for column, _, _ in checks:
        if column not in lookup or column in present:
            continue
        present[column] = _present(frame.iloc[:, lookup[column]])
    for column in dict.fromkeys(c for c, _, _ in checks):
        if column in present and _drops_gaps(spec, column) and not present[column].all():
            keep &= present[column]
            decoded.dropped[column] = int((~present[column]).sum())
    rows = np.flatnonzero(keep)

    # 2. Each used column as declared, on the kept rows.
    checked: set[tuple[str, str]] = set()
    for column, control, role_text in checks:
        if (column, control) in checked:
            continue
        checked.add((column, control))
        if column not in counts:
            problems.append(
                TableProblem(
                    f"the table has no column {column!r} (chosen as {role_text.removesuffix(' column')}) — "
                    f"{_suggest(column, names)}",
                    control=control,
                    column=column,
                )
            )
            continue
        if column not in lookup:
            continue  # duplicate name, reported above
        series = frame.iloc[:, lookup[column]]
        missing = ~present[column] & keep
        rule = rules.get(column)
        is_feature = control == "features"
        cat = categorical.get(column) if is_feature else None
        if cat is not None:
            problem = _decode_categorical(series, missing, keep, rows, column, cat, rule, decoded)
            if problem is not None:
                problems.append(problem)
            continue
        if control == "target" and spec.positive_class:
            texts = _texts(series)[keep]
            found = set(texts)
            absent = [p for p in spec.positive_class if p not in found]
            if absent:
                levels = sorted(found)
                problems.append(TableProblem(
                    f"the positive class {absent[0]!r} does not occur in target column {column!r} (its labels: "
                    f"{_shown_levels(levels)}) — check the spelling", control="target", column=column))
                continue
            decoded.y = np.isin(texts, spec.positive_class).astype(np.float64)
            continue
        is_date = column in spec.dates
        if is_date:
            values, bad = _parse_dates(series)
            if (bad & keep).any():
                first = int(np.argmax(bad & keep))
                what = (
                    "holds numbers, not dates — remove it from the date columns (numbers are used as they are)"
                    if pd.api.types.is_numeric_dtype(series.dtype)
                    else f"holds {str(series.iloc[first])!r} in {row_label(first)}, which is not a date — correct "
                    f"that cell (e.g. 2020-03-31) or remove the column from the date columns"
                )
                problems.append(TableProblem(f"date column {column!r} {what}", control=control, column=column,
                                             row=first))
                continue
        else:
            values, bad = _parse_numeric(series)
            if (bad & keep).any():
                problems.append(_text_problem(series, bad, keep, column, role_text, control))
                continue
            if not bad.any():
                decoded.raw[column] = values
        if missing.any():
            if rule is None or rule.action != "fill":
                problems.append(_missing_problem(missing, column, role_text, control, categorical=False))
                continue
            fill = _fill_number(rule.value, column, is_date)
            if isinstance(fill, TableProblem):
                problems.append(fill)
                continue
            values = np.where(present[column], values, fill)
            decoded.filled[column] = int(missing.sum())
        kept = values[keep]
        problem = _value_problem(kept, rows, column, role_text, control)
        if problem is not None:
            problems.append(problem)
            continue
        if control.startswith("role:") and kept.size and np.any(kept < 0):
            first = int(rows[np.flatnonzero(kept < 0)[0]])
            problems.append(
                TableProblem(
                    f"{role_text} {column!r} holds amounts and must not be negative; {row_label(first)} has "
                    f"{float(values[first]):g} — correct that cell or choose another column",
                    control=control,
                    column=column,
                    row=first,
                )
            )
        if is_feature and kept.size and np.all(kept == kept[0]):
            why = " and cannot be standardised" if spec.normalization.standardize else ""
            problems.append(
                TableProblem(
                    f"feature column {column!r} has the same value ({kept[0]:g}) in every row, so it carries no "
                    f"information{why} — remove it from the features",
                    control="features",
                    column=column,
                )
            )
        if is_feature:
            out = [(column, kept, "numeric")]
            if rule is not None and rule.indicator:
                out.append((column + INDICATOR_SUFFIX, (~present[column][keep]).astype(np.float64), "indicator"))
            decoded.features[column] = out
        elif control == "target":
            decoded.y = kept
        else:
            decoded.extras[control.removeprefix("role:")] = kept
    norm = spec.normalization
    numeric_features = spec.numeric_features
    if norm.method == "bounds" and spec.features and len(norm.lower) != len(numeric_features):
        encoded = len(spec.features) - len(numeric_features)
        problems.append(
            TableProblem(
                f"public bounds are given for {len(norm.lower)} feature(s) but {len(numeric_features)} numeric "
                f"feature(s) are chosen — enter one lower and one upper bound per numeric feature, in the order of "
                f"the features"
                + (
                    f" (the {encoded} categorical feature(s) and any missing-indicators get the bounds [0, 1] "
                    f"automatically)"
                    if encoded
                    else ""
                ),
                control="normalization",
            )
        )
    kept_rows = int(keep.sum())
    if kept_rows < MIN_ROWS:
        dropped = n_rows - kept_rows
        where = (
            f"after dropping {dropped} row{'s' if dropped != 1 else ''} with a missing value, the table keeps "
            if dropped
            else "the table has "
        )
        problems.append(
            TooFewRowsError(
                f"{where}{kept_rows} data row{'s' if kept_rows != 1 else ''}; at least {MIN_ROWS} are needed — "
                + ("fill missing cells instead of dropping rows, or add rows" if dropped else "add rows")
                + " (protection and accuracy estimates on fewer records are meaningless)",
                control="table",
            )
        )
    return problems, decoded


def _drops_gaps(spec: DataSpec, column: str) -> bool:
    """Whether a missing cell of the used ``column`` drops its row under ``spec`` (the target's always do)."""
    rule = (spec.missing or {}).get(column)
    cat = (spec.categorical or {}).get(column) if column in spec.features else None
    return (
        column == spec.target
        or (rule is not None and rule.action == "drop")
        or (rule is None and spec.drop_missing and not (cat is not None and cat.missing_level))
    )


@dataclass(frozen=True)
class DropImpact:
    """How many rows the missing-value rules of a spec keep, and what each dropping column costs (internal counts
    of the data, for the data holder: not private).

    Attributes
    ----------
    rows : int
        Rows of the table.
    kept : int
        Rows kept by the spec's missing-value rules (the n a release would have, before any other problem).
    missing : dict of str to int
        Used column whose gaps drop rows → its missing cells.
    only : dict of str to int
        The same columns → rows dropped for that column alone (present in every other dropping column): the rows
        kept would grow by this much if its gaps were filled (or the column left out) instead.
    """

    rows: int
    kept: int
    missing: dict[str, int]
    only: dict[str, int]


def drop_impact(frame: pd.DataFrame, spec: DataSpec) -> DropImpact:
    """The rows ``spec`` keeps and the rows each column whose gaps are dropped costs (see :class:`DropImpact`).

    Columns the table lacks are skipped (:func:`table_problems` reports them).

    >>> frame = pd.DataFrame({"a": [1, None, 3, None, 5], "b": [None, 2, 3, None, 5], "c": [1, 2, 3, 4, None]})
    >>> impact = drop_impact(frame, DataSpec(("a", "b", "c"), drop_missing=True))
    >>> impact.kept, impact.missing, impact.only
    (1, {'a': 2, 'b': 2, 'c': 1}, {'a': 1, 'b': 1, 'c': 1})
    """
    names = [str(c) for c in frame.columns]
    gaps: dict[str, np.ndarray] = {}
    for column in spec.columns:
        if column in names and names.count(column) == 1 and _drops_gaps(spec, column):
            missing = ~_present(frame.iloc[:, names.index(column)])
            if missing.any():
                gaps[column] = missing
    lost = np.zeros(len(frame), dtype=int)
    for missing in gaps.values():
        lost += missing
    return DropImpact(
        rows=len(frame),
        kept=int((lost == 0).sum()),
        missing={c: int(m.sum()) for c, m in gaps.items()},
        only={c: int((m & (lost == 1)).sum()) for c, m in gaps.items()},
    )


def _fill_number(value: float | str | None, column: str, is_date: bool) -> float | TableProblem:
    if isinstance(value, str):
        if is_date:
            days, bad = _parse_dates(pd.Series([value], dtype=object))
            if not bad[0]:
                return float(days[0])
        try:
            return float(value)
        except ValueError:
            kind = "a date (e.g. 2020-01-01) or a number of days" if is_date else "a number"
            return TableProblem(
                f"the fill value {value!r} for column {column!r} is not {kind} — type {kind}",
                control="features", column=column,
            )
    return float(value)  # type: ignore[arg-type]


def _decode_categorical(
    series: pd.Series,
    missing: np.ndarray,
    keep: np.ndarray,
    rows: np.ndarray,
    column: str,
    cat: Categorical,
    rule: MissingRule | None,
    decoded: _Decoded,
) -> TableProblem | None:
    """One-hot columns of a categorical feature over the kept rows (or the problem that stops them)."""
    texts = _texts(series)
    is_missing = texts == ""
    if missing.any():
        if cat.missing_level:
            decoded.filled[column] = int(missing.sum())
        elif rule is not None and rule.action == "fill":
            texts = np.where(is_missing, _level_text(rule.value), texts)
            decoded.filled[column] = int(missing.sum())
        else:
            return _missing_problem(missing, column, "feature column", "features", categorical=True)
    kept = texts[keep]
    kept_missing = is_missing[keep] if cat.missing_level else np.zeros(kept.size, dtype=bool)
    if cat.levels:
        levels = cat.levels
    else:
        found, counts = np.unique(kept[~kept_missing].astype(str), return_counts=True)
        levels = tuple(str(t) for t, c in zip(found, counts, strict=True) if c >= max(cat.min_count, 1))
    known = np.isin(kept, levels) | kept_missing
    if not cat.other and not known.all():
        i = int(np.argmax(~known))
        return TableProblem(
            f"feature column {column!r} holds {kept[i]!r} in {row_label(int(rows[i]))}, which is not among its "
            f"declared levels ({_shown_levels(list(levels))}) — add it to the levels or add the level "
            f"{OTHER_LEVEL!r}",
            control="features", column=column, row=int(rows[i]),
        )
    out = [(f"{column}={level}", (kept == level).astype(np.float64) * ~kept_missing, "one-hot") for level in levels]
    if cat.other:
        out.append((f"{column}={OTHER_LEVEL}", (~known).astype(np.float64), "one-hot"))
    if cat.missing_level:
        out.append((f"{column}={MISSING_LEVEL}", kept_missing.astype(np.float64), "one-hot"))
    rule_indicator = rule is not None and rule.indicator
    if rule_indicator:
        out.append((column + INDICATOR_SUFFIX, is_missing[keep].astype(np.float64), "indicator"))
    if not out:
        return TableProblem(
            f"feature column {column!r} has no level on the rows kept — remove it from the features",
            control="features", column=column,
        )
    decoded.levels[column] = tuple(levels)
    decoded.features[column] = out
    return None


def validate_table(frame: pd.DataFrame, spec: DataSpec) -> None:
    """Raise the first of :func:`table_problems` (a :class:`TableProblem`, i.e. a ``DataValidationError``).

    >>> validate_table(pd.DataFrame({"a": range(30), "b": [1.0] * 30}), DataSpec(("a", "b")))
    Traceback (most recent call last):
    ...
    engine.data.checks.TableProblem: feature column 'b' has the same value (1) in every row, so it carries no information and cannot be standardised — remove it from the features
    """
    problems = table_problems(frame, spec)
    if problems:
        raise problems[0]
