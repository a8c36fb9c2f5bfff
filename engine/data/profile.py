"""What an uploaded table holds, and a first :class:`~engine.data.preparation.DataSpec` for it.

Pure helpers for the Data page (and anyone starting from a raw table):

* :func:`column_profile` — one row per column: its kind (numeric, text, date, boolean), missing and distinct
  counts, up to 8 example levels and whether it looks like an identifier.
* :func:`suggest_spec` — defaults for an upload: numeric non-identifier columns as features, text columns with
  few levels one-hot encoded (levels read from the data, so flagged as not private), rows with a missing value
  dropped, the target never among the features.
* :func:`with_target` — choose a column as the target, moving it out of the features (and out of its feature
  rules) instead of raising.

The profile reads the data and is shown only to the data holder; the suggested spec declares everything it
reads from the data (levels), so the decision record discloses it (see
:func:`engine.data.preparation.preparation_notes`).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd

from engine.data.preparation import (
    MIN_ROWS,
    Categorical,
    DataSpec,
    Normalization,
    _is_present,
    _level_text,
    _looks_like_dates,
    _parse_numeric,
)
from engine.errors import InvalidParameterError

#: Text columns with at most this many levels are proposed as categorical features by :func:`suggest_spec`.
MAX_SUGGESTED_LEVELS = 20

#: Example levels shown per column by :func:`column_profile`.
EXAMPLES = 8

_ID_NAME = re.compile(r"(^|[_\s.-])(id|ids|key|uuid|guid|rownames?|row|index|idx)$|^unnamed: ?\d+$", re.IGNORECASE)

PROFILE_COLUMNS = ("column", "kind", "missing", "distinct", "examples", "identifier")


def _as_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("inf")


def _ranked(counts: pd.Series) -> list[str]:
    """Level texts of a value → count table, most frequent first, ties by number then text."""
    texts: dict[str, int] = {}
    for value, count in counts.items():
        text = _level_text(value)
        texts[text] = texts.get(text, 0) + int(count)
    return sorted(texts, key=lambda t: (-texts[t], _as_number(t), t))


def _kind_and_levels(series: pd.Series) -> tuple[str, list[str], int, int]:
    """Kind, up to :data:`EXAMPLES` level texts (most frequent first), the distinct and the missing counts."""
    if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_datetime64_any_dtype(series.dtype):
        present_values = series.dropna()
        missing = len(series) - len(present_values)
        counts = present_values.value_counts(sort=False)
        top = counts.sort_values(ascending=False, kind="stable")
        # Examples: the most frequent values (ties by value), as level texts.
        frame = pd.DataFrame({"value": top.index, "count": top.to_numpy()})
        if not pd.api.types.is_datetime64_any_dtype(series.dtype):
            frame = frame.sort_values(["count", "value"], ascending=[False, True], kind="stable")
        examples = [_level_text(v) for v in frame["value"].head(EXAMPLES)]
        distinct = len(counts)
        if pd.api.types.is_bool_dtype(series.dtype):
            return "boolean", examples, distinct, missing
        if pd.api.types.is_datetime64_any_dtype(series.dtype):
            return "date", examples, distinct, missing
        if pd.api.types.is_complex_dtype(series.dtype):
            return "text", examples, distinct, missing
        if distinct and set(counts.index.astype(float)) <= {0.0, 1.0}:
            return "boolean", examples, distinct, missing
        return "numeric", examples, distinct, missing
    values = series.astype(object)
    present = values.map(_is_present).to_numpy(dtype=bool)
    missing = int((~present).sum())
    levels = _ranked(values[present].map(_level_text).value_counts(sort=False))
    numbers, text = _parse_numeric(series)
    if present.any() and not text.any():
        if set(np.unique(numbers[present])) <= {0.0, 1.0}:
            return "boolean", levels[:EXAMPLES], len(levels), missing
        return "numeric", levels[:EXAMPLES], len(levels), missing
    if _looks_like_dates(levels):
        return "date", levels[:EXAMPLES], len(levels), missing
    if present.any() and text.sum() <= present.sum() / 2:
        return "numeric", levels[:EXAMPLES], len(levels), missing  # numbers with a few stray text cells (a typo)
    return "text", levels[:EXAMPLES], len(levels), missing


def column_profile(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per column of ``frame``: what it holds, for choosing features, the target and encodings.

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    pandas.DataFrame
        Columns ``column`` (name), ``kind`` (``"numeric"``, ``"text"``, ``"date"`` or ``"boolean"`` — bool
        cells or numbers that are all 0/1), ``missing`` (cells without a value), ``distinct`` (distinct present
        values), ``examples`` (up to 8 levels as text, most frequent first) and ``identifier`` (True for a column
        named like an id — ``id``, ``*_id``, ``rownames``, ``Unnamed: 0`` — or whose present values are all
        different text, or all different whole numbers in increasing order: a record key, never a feature).

    Examples
    --------
    >>> frame = pd.DataFrame({"id": range(30), "x": [0.5, 1.5, None] * 10, "g": ["a", "b", "b"] * 10})
    >>> column_profile(frame)[["column", "kind", "missing", "distinct", "identifier"]].to_dict("records")[1:]
    [{'column': 'x', 'kind': 'numeric', 'missing': 10, 'distinct': 2, 'identifier': False}, {'column': 'g', 'kind': 'text', 'missing': 0, 'distinct': 2, 'identifier': False}]
    >>> column_profile(frame)["examples"].iloc[2]
    ['b', 'a']
    """
    if not isinstance(frame, pd.DataFrame):
        raise InvalidParameterError(f"expected a table (pandas DataFrame); got {type(frame).__name__}")
    rows = []
    for i, name in enumerate(frame.columns):
        series = frame.iloc[:, i]
        kind, examples, distinct, missing = _kind_and_levels(series)
        present = len(series) - missing
        identifier = bool(_ID_NAME.search(str(name)))
        if not identifier and present >= MIN_ROWS and distinct == present:
            if kind == "text":
                identifier = True
            elif kind == "numeric":
                numbers, _ = _parse_numeric(series)
                numbers = numbers[~np.isnan(numbers)]
                identifier = bool(np.all(numbers == np.round(numbers)) and np.all(np.diff(numbers) > 0))
        rows.append(
            {
                "column": str(name),
                "kind": kind,
                "missing": missing,
                "distinct": distinct,
                "examples": examples,
                "identifier": identifier,
            }
        )
    return pd.DataFrame(rows, columns=list(PROFILE_COLUMNS))


def suggest_spec(frame: pd.DataFrame, target: str | None = None) -> DataSpec:
    """Default :class:`DataSpec` for an upload; every choice is a suggestion for the data holder to review.

    * features: numeric and boolean columns that are not identifiers and not constant, then text columns with
      2 to :data:`MAX_SUGGESTED_LEVELS` levels as categorical features whose levels are read from the data
      (``levels_from_data=True``: flagged as not private; type public levels to remove the flag);
    * the target is never among the features; a yes/no or true/false text target gets the positive class
      "yes"/"true" (as written in the data);
    * missing values: rows with a missing value in a used column are dropped (``drop_missing=True``);
    * normalisation: the default (:class:`Normalization`).

    Dates and identifiers are not proposed. Column order follows the table.

    Examples
    --------
    >>> frame = pd.DataFrame({"id": range(30), "x": np.arange(30.0) % 7, "g": ["a", "b", "c"] * 10,
    ...                       "y": ["yes", "no"] * 15})
    >>> spec = suggest_spec(frame, target="y")
    >>> spec.features, spec.target, spec.positive_class, spec.categorical["g"].levels, spec.drop_missing
    (('x', 'g'), 'y', ('yes',), ('a', 'b', 'c'), True)
    """
    profile = column_profile(frame)
    names = list(profile["column"])
    if target is not None and target not in names:
        raise InvalidParameterError(f"the table has no column {target!r} to use as the target")
    features: list[str] = []
    categorical: dict[str, Categorical] = {}
    for row in profile.itertuples(index=False):
        if row.column == target or row.identifier or row.distinct < 2:
            continue
        if row.kind in ("numeric", "boolean"):
            features.append(row.column)
        elif row.kind == "text" and row.distinct <= MAX_SUGGESTED_LEVELS:
            features.append(row.column)
            series = frame.iloc[:, names.index(row.column)].astype(object)
            levels = sorted({_level_text(v) for v in series if _is_present(v)})
            categorical[row.column] = Categorical(tuple(levels), levels_from_data=True)
    positive: tuple[str, ...] = ()
    if target is not None:
        kind = profile.loc[profile["column"] == target, "kind"].iloc[0]
        if kind == "text":
            levels = profile.loc[profile["column"] == target, "examples"].iloc[0]
            lowered = {str(v).lower(): v for v in levels}
            for yes, no in (("yes", "no"), ("true", "false"), ("y", "n")):
                if set(lowered) == {yes, no}:
                    positive = (lowered[yes],)
                    break
    return DataSpec(
        features=tuple(features),
        target=target,
        normalization=Normalization(),
        drop_missing=True,
        categorical=categorical or None,
        positive_class=positive,
    )


def with_target(spec: DataSpec, target: str | None) -> DataSpec:
    """``spec`` with ``target`` as the outcome: the column leaves the features (with its encoding, date
    declaration, missing-value rule and public bounds) instead of raising; ``None`` clears the target.

    The positive class is kept only when the target does not change. The old target does not become a feature.

    >>> spec = DataSpec(("a", "b", "c"), normalization=Normalization("bounds", lower=(0, 0, 0), upper=(1, 2, 3)))
    >>> moved = with_target(spec, "b")
    >>> moved.features, moved.target, moved.normalization.upper
    (('a', 'c'), 'b', (1.0, 3.0))
    """
    if not isinstance(spec, DataSpec):
        raise InvalidParameterError(f"spec must be a DataSpec; got {type(spec).__name__}")
    if target is not None and (not isinstance(target, str) or not target):
        raise InvalidParameterError(f"the target must be a column name; got {target!r}")
    if target == spec.target:
        return spec
    features = spec.features
    norm = spec.normalization
    categorical = dict(spec.categorical or {})
    missing = dict(spec.missing or {})
    dates = spec.dates
    if target is not None and target in features:
        if norm.method == "bounds" and target in spec.numeric_features and len(norm.lower) == len(spec.numeric_features):
            i = spec.numeric_features.index(target)
            norm = dataclasses.replace(
                norm, lower=norm.lower[:i] + norm.lower[i + 1 :], upper=norm.upper[:i] + norm.upper[i + 1 :]
            )
        features = tuple(f for f in features if f != target)
        categorical.pop(target, None)
        dates = tuple(d for d in dates if d != target)
    if target is not None:
        missing.pop(target, None)  # rows with a missing target are always dropped
    return dataclasses.replace(
        spec,
        features=features,
        target=target,
        normalization=norm,
        categorical=categorical or None,
        missing=missing or None,
        dates=dates,
        positive_class=(),
    )


__all__ = ["EXAMPLES", "MAX_SUGGESTED_LEVELS", "PROFILE_COLUMNS", "column_profile", "suggest_spec", "with_target"]
