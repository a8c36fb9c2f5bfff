"""What an uploaded table holds, and a first :class:`~engine.data.preparation.DataSpec` for it.

Pure helpers for the Data page (and anyone starting from a raw table):

* :func:`column_profile` — one row per column: its kind (numeric, text, date, boolean), missing and distinct
  counts, up to 8 example levels and whether it looks like an identifier.
* :func:`suggestion` (and :func:`suggest_spec`, its spec) — defaults for an upload: numeric non-identifier columns
  as features, text columns with few levels one-hot encoded (levels read from the data, so flagged as not
  private), rows with a missing value dropped, the target never among the features; mostly-missing and
  near-constant columns left out, each with the reason, so that the suggestion always prepares (issue 34: a loan
  book was refused because the suggestion dropped 98 % of its rows and a column became constant).
* :func:`with_target` — choose a column as the target, moving it out of the features (and out of its feature
  rules) instead of raising.

The profile reads the data and is shown only to the data holder; the suggested spec declares everything it
reads from the data (levels), so the decision record discloses it (see
:func:`engine.data.preparation.preparation_notes`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.data.checks import _NA_TEXT, TooFewRowsError, _text_codes, drop_impact
from engine.data.preparation import (
    MIN_ROWS,
    Categorical,
    DataSpec,
    Normalization,
    _is_present,
    _level_text,
    _looks_like_dates,
    _parse_numeric,
    table_problems,
)
from engine.errors import InvalidParameterError

#: Text columns with at most this many levels are proposed as categorical features by :func:`suggest_spec`.
MAX_SUGGESTED_LEVELS = 20

#: A column missing in more than this share of the rows is not suggested: dropping its gaps would drop most rows.
MOSTLY_MISSING_SHARE = 0.5

#: A column whose most common value fills at least this share of its present cells is near-constant and not
#: suggested: it carries almost no information and becomes constant once a few rows are dropped.
NEAR_CONSTANT_SHARE = 0.99

#: The suggestion leaves out the columns whose gaps would drop rows until it keeps at least this share of the rows.
KEEP_SHARE = 0.5

#: Example levels shown per column by :func:`column_profile`.
EXAMPLES = 8

_ID_NAME = re.compile(r"(^|[_\s.-])(id|ids|key|uuid|guid|rownames?|row|index|idx)$|^unnamed: ?\d+$", re.IGNORECASE)

PROFILE_COLUMNS = ("column", "kind", "missing", "distinct", "examples", "identifier")


def _as_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("inf")


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
    counts = level_counts(series)
    levels = list(counts)
    missing = len(series) - sum(counts.values())
    coded = _text_codes(series)
    if coded is not None:  # text cells only: each distinct level read as a number once
        numbers = pd.to_numeric(pd.Series(levels, dtype=object), errors="coerce").to_numpy(dtype=float)
        is_text = np.isnan(numbers)
        present_cells = sum(counts.values())
        text_cells = sum(c for c, t in zip(counts.values(), is_text, strict=True) if t)
        number_set = set(numbers[~is_text].tolist())
    else:
        values, text = _parse_numeric(series)
        present = values == values
        present_cells, text_cells = int((present | text).sum()), int(text.sum())
        number_set = set(np.unique(values[present]).tolist())
    if present_cells and not text_cells:
        if number_set <= {0.0, 1.0}:
            return "boolean", levels[:EXAMPLES], len(levels), missing
        return "numeric", levels[:EXAMPLES], len(levels), missing
    if _looks_like_dates(levels):
        return "date", levels[:EXAMPLES], len(levels), missing
    if present_cells and text_cells <= present_cells / 2:
        return "numeric", levels[:EXAMPLES], len(levels), missing  # numbers with a few stray text cells (a typo)
    return "text", levels[:EXAMPLES], len(levels), missing


def level_counts(series: pd.Series) -> dict[str, int]:
    """Every level of a column as text (:func:`~engine.data.spec._level_text`: stripped, whole numbers without
    '.0') → its count, most frequent first (ties by number, then text); missing cells are left out. The levels a
    categorical feature or a text outcome can take, all of them (issue 34: the controls offered only 8).

    >>> level_counts(pd.Series([" b", "a", "b", None, "NA", 2.0, 2]))
    {'2': 2, 'b': 2, 'a': 1}
    """
    coded = _text_codes(series)
    texts: dict[str, int] = {}
    if coded is not None:
        codes, uniques = coded
        counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
        for value, count in zip(uniques, counts.tolist(), strict=True):
            text = value.strip()
            if text.lower() not in _NA_TEXT:
                texts[text] = texts.get(text, 0) + count
    else:
        values = series.astype(object)
        present = values.map(_is_present).to_numpy(dtype=bool)
        for value, count in values[present].map(_level_text).value_counts(sort=False).items():
            texts[str(value)] = texts.get(str(value), 0) + int(count)
    return {t: texts[t] for t in sorted(texts, key=lambda t: (-texts[t], _as_number(t), t))}


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


@dataclass(frozen=True)
class Suggestion:
    """:func:`suggestion`'s answer: the suggested spec, why each other column is not in it, and the rows it keeps.

    Attributes
    ----------
    spec : DataSpec
        The suggested spec; it prepares the table without a problem unless no column can be suggested.
    left_out : dict of str to str
        Column (never the target) → why it is not a suggested feature, in plain language with the way to add it.
        The reasons quote counts of the data: for the data holder, not for publication.
    rows, kept : int
        Rows of the table, and rows the suggested missing-value rule keeps.
    """

    spec: DataSpec
    left_out: dict[str, str] = field(default_factory=dict)
    rows: int = 0
    kept: int = 0


def _top_share(series: pd.Series) -> tuple[float, str, int, int]:
    """(share of the present cells holding the most common value, that value as text, its count, present cells)."""
    if pd.api.types.is_numeric_dtype(series.dtype):
        counts = series.value_counts(sort=True)
        top, value = (int(counts.iloc[0]), _level_text(counts.index[0])) if len(counts) else (0, "")
        present = int(counts.sum())
    else:
        levels = level_counts(series)
        value, top = next(iter(levels.items()), ("", 0))
        present = sum(levels.values())
    return (top / present if present else 0.0), value, top, present


def suggestion(frame: pd.DataFrame, target: str | None = None, *, profile: pd.DataFrame | None = None) -> Suggestion:
    """Default :class:`DataSpec` for an upload, and why every other column is left out; each choice is a
    suggestion for the data holder to review.

    * features: numeric and boolean columns, then text columns with 2 to :data:`MAX_SUGGESTED_LEVELS` levels as
      categorical features whose levels are read from the data (``levels_from_data=True``: flagged as not private;
      type public levels to remove the flag);
    * left out, each with its reason (:attr:`Suggestion.left_out`): identifiers, constant columns, dates, text
      with more levels, columns missing in more than :data:`MOSTLY_MISSING_SHARE` of the rows (dropping their gaps
      would drop most rows), near-constant columns (the most common value in at least :data:`NEAR_CONSTANT_SHARE`
      of the present cells) and, after that, the column missing most often while the rows kept are fewer than
      :data:`KEEP_SHARE` of the table (several columns' gaps together), and any column the rows kept still cannot
      use (constant once the rows with gaps are dropped, infinite values, …);
    * the target is never among the features; a yes/no or true/false text target gets the positive class
      "yes"/"true" (as written in the data);
    * missing values: rows with a missing value in a used column are dropped (``drop_missing=True``);
    * normalisation: ``scaled`` (standardise, divide every row by 2√m, clip the few longer rows): unlike ``clip``
      it keeps the rows' lengths when numeric and text features are mixed (see :class:`Normalization`).

    Column order follows the table. ``profile``: :func:`column_profile` of ``frame`` when already computed.

    Examples
    --------
    >>> frame = pd.DataFrame({"id": range(100), "x": np.arange(100.0) % 7, "g": ["a", "b", "c", "d"] * 25,
    ...                       "y": ["yes", "no"] * 50, "rare": [1] + [0] * 99, "gap": [1.0] * 10 + [None] * 90})
    >>> s = suggestion(frame, target="y")
    >>> s.spec.features, s.spec.positive_class, s.spec.categorical["g"].levels, s.kept
    (('x', 'g'), ('yes',), ('a', 'b', 'c', 'd'), 100)
    >>> s.left_out["rare"]
    "near-constant: 99 of 100 rows hold '0' (99.0%) — it carries almost no information and becomes constant once a few rows are dropped; add it if those rows matter"
    >>> sorted(s.left_out)
    ['gap', 'id', 'rare']
    """
    profile = column_profile(frame) if profile is None else profile
    names = list(profile["column"])
    if target is not None and target not in names:
        raise InvalidParameterError(f"the table has no column {target!r} to use as the target")
    n = len(frame)
    features: list[str] = []
    categorical: dict[str, Categorical] = {}
    left_out: dict[str, str] = {}
    for row in profile.itertuples(index=False):
        if row.column == target:
            continue
        series = frame.iloc[:, names.index(row.column)]
        if row.identifier:
            left_out[row.column] = ("an identifier (named like one, or a different value in every row): a record "
                                    "key, never a feature")
            continue
        if row.distinct < 2:
            left_out[row.column] = ("no value in any row" if row.distinct == 0 else
                                    "the same value in every row: it carries no information")
            continue
        if row.kind == "date":
            left_out[row.column] = "a date column — add it to use it as days since 1970-01-01"
            continue
        if row.kind == "text" and row.distinct > MAX_SUGGESTED_LEVELS:
            left_out[row.column] = (f"text with {row.distinct:,} levels — add it to encode them (rare levels can be "
                                    "grouped into '(other)')")
            continue
        if row.kind not in ("numeric", "boolean", "text"):
            continue
        if row.missing > MOSTLY_MISSING_SHARE * n:
            left_out[row.column] = (
                f"mostly missing ({row.missing:,} of {n:,} rows, {row.missing / n:.0%}): dropping those rows would "
                f"leave at most {n - row.missing:,} — add it with a public fill value and a missing-indicator "
                "(or, for text, missing as its own level)"
            )
            continue
        share, value, count, present = _top_share(series)
        if share >= NEAR_CONSTANT_SHARE:
            left_out[row.column] = (
                f"near-constant: {count:,} of {present:,} rows hold {value!r} ({share:.1%}) — it carries almost no "
                "information and becomes constant once a few rows are dropped; add it if those rows matter"
            )
            continue
        features.append(row.column)
        if row.kind == "text":
            categorical[row.column] = Categorical(tuple(sorted(level_counts(series))), levels_from_data=True)
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
    def spec_of(chosen: list[str]) -> DataSpec:
        return DataSpec(
            features=tuple(chosen),
            target=target,
            normalization=Normalization("scaled"),
            drop_missing=True,
            categorical={c: v for c, v in categorical.items() if c in chosen} or None,
            positive_class=positive,
        )

    spec = spec_of(features)
    # What the rows kept still cannot use (a column constant once the rows with gaps are dropped, infinite values,
    # too few rows left): leave that column out too, with the engine's own message, until the spec prepares.
    while features:
        problems = table_problems(frame, spec)
        impact = drop_impact(frame, spec)
        bad = {str(p.column): p for p in problems if p.control == "features" and p.column in features}
        if impact.kept < KEEP_SHARE * n and impact.missing:
            # The gaps of several columns together drop most rows: leave out the column missing most often first.
            worst = max((c for c in impact.missing if c in features), key=impact.missing.__getitem__)
            left_out[worst] = (
                f"missing in {impact.missing[worst]:,} of {n:,} rows: with it and the other columns with gaps, "
                f"dropping the rows with a gap would keep only {impact.kept:,} — add it with a public fill value and "
                "a missing-indicator (or, for text, missing as its own level)")
            features.remove(worst)
        elif bad:
            for column, problem in bad.items():
                left_out[column] = f"with the suggested rows: {problem}"
                features.remove(column)
        elif any(isinstance(p, TooFewRowsError) for p in problems):
            gappy = [c for c in impact.missing if c in features]
            if not gappy:
                break
            worst = max(gappy, key=impact.missing.__getitem__)
            left_out[worst] = (f"missing in {impact.missing[worst]:,} of {n:,} rows: with it, too few rows are left "
                               "once the rows with gaps are dropped — add it with a public fill value")
            features.remove(worst)
        else:
            break
        spec = spec_of(features)
    impact = drop_impact(frame, spec)
    return Suggestion(spec=spec, left_out=left_out, rows=n, kept=impact.kept)


def unusable(frame: pd.DataFrame, profile: pd.DataFrame | None = None) -> str | None:
    """Why no choice in the app can make ``frame`` usable — the only reasons an upload is refused once it is read
    (issue 34: a table was refused for a consequence of the suggested preparation) — or None.

    * fewer than :data:`MIN_ROWS` data rows (no choice adds rows);
    * no column could be a feature: every column is empty, holds one value only, or — for numbers — fewer than two
      different finite values within the range the engine computes with. An identifier, a date, a text column with
      many levels, a mostly-missing column can all be chosen on the Data page, so they do not count here.

    ``profile`` is :func:`column_profile` of ``frame`` when already computed.

    >>> unusable(pd.DataFrame({"a": [5] * 30, "b": [None] * 30}))
    'no column has two different usable values (a: one value only; b: empty) — such columns are what a release privatizes; add the columns with the data'
    >>> unusable(pd.DataFrame({"a": range(19)}))
    'the table has 19 data rows; at least 20 are needed — add rows (protection and accuracy estimates on fewer records are meaningless)'
    >>> unusable(pd.DataFrame({"id": [f"p{i}" for i in range(30)]})) is None  # an identifier can still be chosen
    True
    """
    from engine.data.checks import MAX_ABS_VALUE

    if len(frame) < MIN_ROWS:
        return (f"the table has {len(frame)} data row{'s' if len(frame) != 1 else ''}; at least {MIN_ROWS} are needed "
                "— add rows (protection and accuracy estimates on fewer records are meaningless)")
    profile = column_profile(frame) if profile is None else profile
    why: list[str] = []
    for i, row in enumerate(profile.itertuples(index=False)):
        if row.distinct == 0:
            why.append(f"{row.column}: empty")
            continue
        if row.distinct < 2:
            why.append(f"{row.column}: one value only")
            continue
        if row.kind not in ("numeric", "boolean"):
            return None  # text or dates: an encoding or a date declaration makes it a feature
        values, _ = _parse_numeric(frame.iloc[:, i])
        usable = values[np.isfinite(values) & (np.abs(values) <= MAX_ABS_VALUE)]
        if np.unique(usable).size >= 2:
            return None
        why.append(f"{row.column}: fewer than two finite values")
    shown = "; ".join(why[:6]) + (f"; … ({len(why) - 6} more)" if len(why) > 6 else "")
    return (f"no column has two different usable values ({shown}) — such columns are what a release privatizes; add "
            "the columns with the data")


def suggest_spec(frame: pd.DataFrame, target: str | None = None) -> DataSpec:
    """The spec of :func:`suggestion` (the default :class:`DataSpec` for an upload).

    >>> frame = pd.DataFrame({"id": range(30), "x": np.arange(30.0) % 7, "g": ["a", "b", "c"] * 10,
    ...                       "y": ["yes", "no"] * 15})
    >>> spec = suggest_spec(frame, target="y")
    >>> spec.features, spec.target, spec.positive_class, spec.categorical["g"].levels, spec.drop_missing
    (('x', 'g'), 'y', ('yes',), ('a', 'b', 'c'), True)
    """
    return suggestion(frame, target).spec


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


__all__ = [
    "EXAMPLES",
    "KEEP_SHARE",
    "MAX_SUGGESTED_LEVELS",
    "MOSTLY_MISSING_SHARE",
    "NEAR_CONSTANT_SHARE",
    "PROFILE_COLUMNS",
    "Suggestion",
    "column_profile",
    "level_counts",
    "suggest_spec",
    "suggestion",
    "unusable",
    "with_target",
]
