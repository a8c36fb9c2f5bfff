r"""Loading, validating and preparing a user's table for the record-level mechanisms.

The mechanisms of the targeted-DP paper work on an n × d matrix whose rows lie in the unit L2 ball
(Kohli & Blumenstock, Setting; digest ``shared/spec/000-targeted-dp.md``). This module turns a table into such a
matrix and records exactly how, so that the choice is part of the configuration and the target distance B can be
explained in the data's own units:

1. :func:`load_table` reads CSV or Parquet from a path, bytes or a binary file (never writing to disk) and turns
   every malformed file into a :class:`~engine.errors.DataValidationError` with a plain message.
2. :func:`table_problems` lists every problem of a table for a :class:`DataSpec` (missing or text columns,
   missing or infinite cells, constant features, too few rows, …); each problem names the column, the row and
   the control that fixes it, including the fixes the spec can declare. :func:`validate_table` raises the first.
3. :func:`prepare` applies the declared steps, then maps the feature columns into the unit L2 ball with a
   :class:`Normalization` and returns :class:`PreparedData` (the matrix, the target, program columns, a
   fingerprint, the map itself, internal counts and :func:`normalization_warnings`).

Declared steps (all in the :class:`DataSpec`, so the decision record carries them and ``python -m engine
privatize --config`` replays them), applied before the normalisation:

* missing values (:class:`MissingRule` per column, or ``drop_missing`` for every used column): drop the rows, or
  fill with a public constant, optionally with a 0/1 indicator feature ``"<column> (missing)"``; rows whose
  target is missing are always dropped;
* text features one-hot encoded (:class:`Categorical`): one 0/1 column ``"<column>=<level>"`` per level, plus
  ``"<column>=(other)"`` for values outside typed levels and ``"<column>=(missing)"`` for missing cells; levels
  typed by the user are public, levels read from the data are flagged as not private (:func:`preparation_notes`);
* declared date columns become days since 1970-01-01;
* a text outcome becomes 1 for the ``positive_class`` label(s) and 0 otherwise.

One-hot and indicator columns are on a public 0/1 scale: they are never standardised (centre 0, scale 1) and take
the bounds [0, 1] in ``bounds`` mode, where public bounds are typed for the numeric features only.

The row map (``z`` is a row after centring and scaling each column, ``d`` the number of features):

============  ==============================================  ================================================
method        row map                                         centre c and scale h of column j
============  ==============================================  ================================================
``clip``      :math:`x = z / \max(1, \lVert z\rVert_2)`       sample mean and sd (``standardize=True``) or 0, 1
``scaled``    :math:`x = u / \max(1, \lVert u\rVert_2)`,       as for ``clip``
              :math:`u = z / (2\sqrt m)`, m feature groups
``maxnorm``   :math:`x = z / M`, :math:`M = \max_i \lVert z_i\rVert_2`   as for ``clip``
``bounds``    :math:`x = z / \sqrt d`, after clipping each    midpoint and half-width of the public bounds
              value to its public bounds :math:`[l_j, u_j]`   (``standardize=True``) or 0 and
                                                              :math:`\max(|l_j|, |u_j|)` (``standardize=False``)
============  ==============================================  ================================================

with :math:`z_j = (v_j - c_j) / h_j`. In ``bounds`` mode every :math:`|z_j| \le 1`, so every row has norm at
most :math:`\sqrt d / \sqrt d = 1` whatever the data: the map is fixed before the data are seen.

Privacy of the preparation itself
---------------------------------
The mechanisms' guarantees cover the release *of the prepared matrix*. Data-dependent preparation (column means
and standard deviations, the largest row norm) is computed from the sensitive data and is not protected by that
guarantee: one record can change the mean, the sd or — for ``maxnorm`` — the scale of every other row, so two
neighbouring tables need not give neighbouring prepared matrices. Public bounds (``method="bounds"``) avoid this:
the map depends only on numbers fixed in advance, each record is mapped on its own, and the guarantee covers the
whole pipeline from the table to the release. :func:`privacy_note` says this for a given normalisation.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Setting and case studies (standardise, then scale rows into the unit ball).
.. [2] The authors' replication code divides every row by the largest row norm
       (``shared/reference/tdp-replication/NOTES.md``): ``method="maxnorm"``, ``standardize=False``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from engine.data.checks import MAX_ABS_VALUE as MAX_ABS_VALUE

# The spec, the checks and the file reading live in their own modules; this module re-exports their names so that
# ``from engine.data.preparation import …`` keeps working.
from engine.data.checks import (
    MIN_ROWS,
    TableProblem,
    TooFewRowsError,
    _check_table,
    _numeric,
    row_label,
    table_problems,
    validate_table,
)
from engine.data.checks import _is_present as _is_present
from engine.data.checks import _looks_like_dates as _looks_like_dates
from engine.data.checks import _parse_numeric as _parse_numeric
from engine.data.io import CSV_EXTENSIONS as CSV_EXTENSIONS
from engine.data.io import DEFAULT_MAX_BYTES, load_table
from engine.data.io import PARQUET_EXTENSIONS as PARQUET_EXTENSIONS
from engine.data.spec import (
    INDICATOR_SUFFIX,
    METHODS,
    MISSING_LEVEL,
    OTHER_LEVEL,
    SCALED_SPREAD,
    Categorical,
    DataSpec,
    MissingRule,
    Normalization,
    preparation_notes,
    preparation_steps,
    privacy_note,
)
from engine.data.spec import FeatureKind as FeatureKind
from engine.data.spec import Method as Method
from engine.data.spec import _level_text as _level_text
from engine.errors import InvalidParameterError
from engine.fingerprint import keyed_hasher
from engine.validation import check_choice, check_interval

__all__ = [
    "CLIP_WARN_SHARE",
    "DEFAULT_MAX_BYTES",
    "INDICATOR_SUFFIX",
    "METHODS",
    "MIN_ROWS",
    "MISSING_LEVEL",
    "OTHER_LEVEL",
    "OUTLIER_RATIO",
    "SQUASHED_NORM",
    "Categorical",
    "DataSpec",
    "MissingRule",
    "Normalization",
    "PreparedData",
    "TableProblem",
    "TooFewRowsError",
    "bounds_from_frame",
    "feature_groups",
    "feature_names",
    "fingerprint",
    "load_table",
    "normalization_warnings",
    "preparation_notes",
    "preparation_steps",
    "prepare",
    "prepare_parquet",
    "privacy_note",
    "row_label",
    "table_problems",
    "validate_table",
]

_FINGERPRINT_VERSION = b"privacy-parameter-studio/table/v1\n"


# ----------------------------------------------------------------------------------------------------------------
# Fingerprint
# ----------------------------------------------------------------------------------------------------------------


def fingerprint(frame: pd.DataFrame, spec: DataSpec | None = None) -> str:
    """Keyed SHA-256 (HMAC, hex; :mod:`engine.fingerprint`) of a table's content in a canonical form, plus the spec.

    Never the data itself, and not testable without the key: a plain hash published with a release would let an
    adversary who knows all rows but one recover the missing value by trying candidates.

    Canonical form: a version tag, then for each column (the spec's :attr:`DataSpec.columns` in order, or all
    columns in table order when ``spec`` is None) its name and its values — numeric columns as little-endian
    float64 with ``-0.0`` folded into ``0.0`` and one NaN pattern, so ``1`` and ``1.0`` hash alike; other
    columns as their text — and finally the spec's canonical JSON. Row order matters; the index does not.

    >>> a = pd.DataFrame({"x": [1, 2, 3]})
    >>> fingerprint(a) == fingerprint(pd.DataFrame({"x": [1.0, 2.0, 3.0]}))
    True
    >>> fingerprint(a) == fingerprint(pd.DataFrame({"x": [1.0, 2.0, 4.0]}))
    False
    """
    return _fingerprint(frame, spec, {})


def _fingerprint(frame: pd.DataFrame, spec: DataSpec | None, known: dict[str, np.ndarray]) -> str:
    h = keyed_hasher()  # keyed: a plain hash would let anyone test guesses about the rows (engine.fingerprint)
    h.update(_FINGERPRINT_VERSION)
    names = [str(c) for c in frame.columns]
    columns = list(spec.columns) if spec is not None else names
    h.update(f"rows={len(frame)}\n".encode())
    for column in columns:
        h.update(b"column\x00" + column.encode("utf-8") + b"\x00")
        if column not in names:
            h.update(b"absent\x00")
            continue
        series = frame.iloc[:, names.index(column)]
        values, text_pos = (known[column], None) if column in known else _numeric(series)[:2]
        if text_pos is None:
            canon = np.where(np.isnan(values), np.nan, values + 0.0).astype("<f8", copy=False)
            h.update(b"f8\x00" + canon.tobytes())
        else:
            h.update(b"text\x00" + "\x1f".join(map(str, series.astype(object).tolist())).encode("utf-8"))
    if spec is not None:
        h.update(b"spec\x00" + spec.key().encode("utf-8"))
    return h.hexdigest()


# ----------------------------------------------------------------------------------------------------------------
# Preparation
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PreparedData:
    r"""A table prepared for a record-level mechanism: rows of ``x`` lie in the unit L2 ball.

    Arrays are read-only; equality is identity (compare ``fingerprint`` to compare contents). The prepared row is :math:`x_i = g(z_i)` with :math:`z_{ij} = (v_{ij} - c_j)/h_j`
    (``centre`` c, ``scale`` h, both in the data's units) and the row map g of the normalisation
    (:math:`g(z) = z/\max(1,\lVert z\rVert)` for ``clip``, :math:`z \cdot` ``row_factor`` otherwise).

    Attributes
    ----------
    x : ndarray, shape (n, d)
        Prepared features, float64; every row norm ≤ 1.
    y : ndarray, shape (n,), or None
        Target values (float64), unchanged.
    feature_names : tuple of str
    spec : DataSpec
    extras : dict of str to ndarray
        Program role → column values (float64), e.g. ``extras["loan_amount"]``.
    fingerprint : str
        :func:`fingerprint` of the table's used columns and the spec.
    centre, scale : ndarray, shape (d,)
        Column centre and scale used for z (data units).
    row_factor : float
        Global factor applied to z: 1 for ``clip`` (rows are clipped individually), 1/(2√m) for ``scaled`` (then
        rows still longer than 1 are clipped), 1/M for ``maxnorm``, 1/√d for ``bounds``.
    input_norms : ndarray, shape (n,)
        ‖z_i‖ before the row map (the "before" histogram of the preview).
    clipped_rows : int
        Rows changed by the row map's clipping (``clip``: rows with ‖z‖ > 1).
    clipped_values : int
        Cells clipped to their public bounds (``bounds``).
    feature_kinds : tuple of {"numeric", "one-hot", "indicator"}
        Kind of each prepared column. One-hot and indicator columns are 0/1 on a public scale: they are never
        standardised (centre 0, scale 1) and get the bounds [0, 1] in ``bounds`` mode.
    rows_in_table : int
        Rows of the table before the missing-value rules dropped any (``n`` is what is left).
    dropped_rows : dict of str to int
        Column → rows with a missing value in that column that were dropped (a row missing in two columns counts
        for both; ``rows_in_table - n`` is the total). Exact counts from the data: internal, not private.
    filled_cells : dict of str to int
        Column → missing cells filled with the public constant or encoded as the level "(missing)" (kept rows).
    levels : dict of str to tuple of str
        Categorical column → the levels encoded (typed, or read from the data).
    """

    x: np.ndarray
    y: np.ndarray | None
    feature_names: tuple[str, ...]
    spec: DataSpec
    extras: dict[str, np.ndarray]
    fingerprint: str
    centre: np.ndarray
    scale: np.ndarray
    row_factor: float
    input_norms: np.ndarray
    clipped_rows: int = 0
    clipped_values: int = 0
    feature_kinds: tuple[str, ...] = ()
    rows_in_table: int | None = None
    dropped_rows: dict[str, int] = field(default_factory=dict)
    filled_cells: dict[str, int] = field(default_factory=dict)
    levels: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.feature_kinds:
            object.__setattr__(self, "feature_kinds", ("numeric",) * int(self.x.shape[1]))
        if self.rows_in_table is None:
            object.__setattr__(self, "rows_in_table", int(self.x.shape[0]))

    @property
    def n(self) -> int:
        """Number of records."""
        return int(self.x.shape[0])

    @property
    def d(self) -> int:
        """Number of features."""
        return int(self.x.shape[1])

    def row_norms(self, stage: Literal["prepared", "input"] = "prepared") -> np.ndarray:
        """L2 norm of each row: of the prepared rows (all ≤ 1), or of z before the row map (``"input"``)."""
        check_choice("stage", stage, ("prepared", "input"))
        if stage == "input":
            return self.input_norms
        return np.linalg.norm(self.x, axis=1)

    def as_frame(self, values: np.ndarray | None = None) -> pd.DataFrame:
        """``values`` (default: the prepared ``x``, e.g. a release's value) as a DataFrame with feature names."""
        arr = self.x if values is None else np.asarray(values, dtype=float)
        if arr.ndim != 2 or arr.shape[1] != self.d:
            raise InvalidParameterError(f"values must have {self.d} columns (one per feature); got shape {arr.shape}")
        return pd.DataFrame(np.array(arr), columns=list(self.feature_names))

    def b_in_standardized_units(self, b: float) -> float:
        """L2 distance between two records' z rows (centred/scaled features) that keeps them B-neighbours.

        Equal to ``b / row_factor``. For ``clip`` and ``scaled`` it is a sufficient condition: clipping to the unit ball never
        increases a distance, so records whose z rows are within B are B-neighbours after preparation.
        """
        b = check_interval("B", b, 0, 2, closed="right")
        return b / self.row_factor

    def b_in_feature_units(self, b: float) -> dict[str, float]:
        """For each feature: the change of that feature alone (in its own units) that moves a record by B.

        Two records differing only in feature j by at most this amount are B-neighbours and get the full
        (ε, δ) protection; larger differences are protected less (switch lemma). Equals
        ``b / row_factor * scale[j]`` (a sufficient condition for ``clip``, see
        :meth:`b_in_standardized_units`).
        """
        radius = self.b_in_standardized_units(b)
        return {name: float(radius * s) for name, s in zip(self.feature_names, self.scale, strict=True)}

    def describe_b(self, b: float) -> str:
        """Plain-language meaning of the target distance B for this data (for help texts and the decision record)."""
        radius = self.b_in_standardized_units(b)
        method = self.spec.normalization.method
        units = self.b_in_feature_units(b)
        per_feature = "; ".join(f"{name} {_fmt(v)}" for name, v in units.items())
        if method == "bounds":
            space = "features scaled by their public bounds (each bound range spans 2 units)"
        elif self.spec.normalization.standardize:
            space = "standardised features (each feature in standard deviations)"
        else:
            space = "features in their own units"
        lines = [
            f"B = {b:g} on the prepared scale (rows in the unit ball; B = 2 covers any two records). Two records "
            f"are protected as neighbours when their {space} differ by at most {_fmt(radius)} in L2 norm",
        ]
        if method == "maxnorm":
            lines[0] += f" (B × the largest row norm M = {_fmt(1 / self.row_factor)})"
        elif method == "scaled":
            lines[0] += f" (B × {SCALED_SPREAD:g}√m = {_fmt(1 / self.row_factor)}, m = {feature_groups(self.spec)} features)"
        elif method == "bounds":
            lines[0] += f" (B × √d, d = {self.d})"
        lines[0] += "."
        lines.append(f"For a difference in one feature only, that is at most: {per_feature}.")
        if method in ("clip", "scaled"):
            lines.append(
                "Clipping rows to the unit ball never increases a distance, so this is a sufficient condition "
                f"({self.clipped_rows} of {self.n} rows were clipped)."
            )
        lines.append(
            "Records that differ by more are told apart more easily: their protection degrades step by step "
            "(switch lemma, ⌈distance / B⌉ steps)."
        )
        return " ".join(lines)

    def fingerprint_summary(self) -> dict[str, Any]:
        """What identifies the data in a decision record: size, column names and a keyed hash — never the values.

        The hash is keyed (:mod:`engine.fingerprint`): only the holder of the key can match it to data.
        """
        return {
            "n": self.n,
            "d": self.d,
            "features": list(self.feature_names),
            "target": self.spec.target,
            "roles": dict(self.spec.roles or {}),
            "normalization": self.spec.normalization.to_dict(),
            "sha256": self.fingerprint,
        }

    def privacy_note(self) -> str:
        """:func:`privacy_note` of this data's normalisation, then :func:`preparation_notes` (levels read from the
        data, rows dropped)."""
        notes = preparation_notes(self.spec, self.levels, self.rows_dropped)
        return " ".join([privacy_note(self.spec.normalization), *notes])

    def preparation_steps(self) -> tuple[str, ...]:
        """:func:`preparation_steps` of this data's spec, with the levels actually encoded."""
        return preparation_steps(self.spec, self.levels)

    @property
    def rows_dropped(self) -> int:
        """Rows removed by the missing-value rules (internal count, not private)."""
        return int(self.rows_in_table or 0) - self.n

    @property
    def warnings(self) -> tuple[str, ...]:
        """:func:`normalization_warnings` of this data (plain-language, internal: they quote statistics of the data)."""
        return normalization_warnings(self)


def _fmt(value: float) -> str:
    return f"{value:.3g}"


#: ``clip`` warns when more than this share of the rows is shrunk onto the unit sphere.
CLIP_WARN_SHARE = 0.5
#: Dropping rows with a missing value warns when it removes more than this share of the table's rows.
DROP_WARN_SHARE = 0.1
#: ``maxnorm`` warns when the largest row norm exceeds this multiple of the 99th percentile of the row norms …
OUTLIER_RATIO = 3.0
#: … and reports the share of prepared rows whose norm falls below this.
SQUASHED_NORM = 0.2


def normalization_warnings(prepared: PreparedData) -> tuple[str, ...]:
    """Warnings about a preparation that throws information away (issue 9, item 5), in plain language.

    * ``clip`` (and ``scaled``): more than :data:`CLIP_WARN_SHARE` of the rows had norm > 1 after standardising
      (and scaling) and were shrunk onto the sphere (their lengths are lost): say the share and suggest ``scaled``
      (for ``clip``) or public bounds.
    * ``maxnorm``: the largest row norm M exceeds :data:`OUTLIER_RATIO` × the 99th percentile q of the row norms
      (one outlier sets the scale of every row): say M, q and the share of rows squashed below
      :data:`SQUASHED_NORM`.
    * missing values: the drop rule removed more than :data:`DROP_WARN_SHARE` of the table's rows (the program is
      then designed on the people with complete answers, who may differ from the rest): say the share and suggest a
      public fill value with a missing-indicator.

    The numbers quoted are statistics of the confidential data: for the data holder, not for publication.

    >>> frame = pd.DataFrame({"a": [0.0] * 199 + [1000.0], "b": np.arange(200.0) % 10})
    >>> p = prepare(frame, DataSpec(("a", "b"), normalization=Normalization("maxnorm", standardize=False)))
    >>> normalization_warnings(p)[0].startswith("maxnorm: one record sets the scale")
    True
    """
    out: list[str] = []
    method = prepared.spec.normalization.method
    n = prepared.n
    if n == 0:
        return ()
    total = int(prepared.rows_in_table or 0)
    if total and prepared.rows_dropped / total > DROP_WARN_SHARE:
        out.append(
            f"missing values: {prepared.rows_dropped / total:.0%} of the rows ({prepared.rows_dropped:,} of "
            f"{total:,}) were dropped because a chosen column is missing, so the program is designed and scored on "
            f"the people with complete answers, who may differ from the rest — consider filling those columns with "
            f"a public constant and a missing-indicator (or a level of their own for text columns)"
        )
    if method in ("clip", "scaled"):
        share = prepared.clipped_rows / n
        if share > CLIP_WARN_SHARE:
            instead = ("'scaled' (which divides every row by 2√m first, so only unusually long rows are clipped) or "
                       if method == "clip" else "")
            out.append(
                f"{method}: {share:.0%} of the rows ({prepared.clipped_rows:,} of {n:,}) had a norm above 1 and were "
                f"shrunk onto the unit sphere, so their lengths (how far each record is from the centre) are lost "
                f"— consider {instead}public bounds (method 'bounds') chosen from public knowledge, which also make "
                f"the preparation data-independent"
            )
    elif method == "maxnorm":
        norms = prepared.input_norms
        biggest = float(norms.max())
        q99 = float(np.quantile(norms, 0.99))
        if biggest > 0 and biggest > OUTLIER_RATIO * q99:
            squashed = float(np.mean(prepared.row_norms() < SQUASHED_NORM))
            ratio = f"{biggest / q99:.1f}× " if q99 > 0 else ""
            out.append(
                f"maxnorm: one record sets the scale — the largest row norm ({biggest:.3g}) is {ratio}the 99th "
                f"percentile of the row norms ({q99:.3g}), so every row is divided by it and {squashed:.0%} of the "
                f"rows end up with a norm below {SQUASHED_NORM:g} — consider 'clip' or public bounds"
            )
    return tuple(out)


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


#: Rows per block of the row-wise steps (norms, largest entries): their temporaries are one block, not the matrix.
_ROW_BLOCK = 1 << 14


def _row_norms(x: np.ndarray) -> np.ndarray:
    """``np.linalg.norm(x, axis=1)``, computed in row blocks (each row's sum is the same; issue 33 §3: the
    whole-matrix call holds a squared copy of the matrix)."""
    out = np.empty(x.shape[0])
    for start in range(0, x.shape[0], _ROW_BLOCK):
        out[start:start + _ROW_BLOCK] = np.linalg.norm(x[start:start + _ROW_BLOCK], axis=1)
    return out


def _safe_row_norms(x: np.ndarray) -> np.ndarray:
    """Row norms of each row divided by its own largest |entry| (row by row, so a row's result never depends on
    other rows): no underflow for rows of tiny values, no overflow for huge ones. In row blocks (as
    :func:`_row_norms`)."""
    out = np.empty(x.shape[0])
    for start in range(0, x.shape[0], _ROW_BLOCK):
        block = x[start:start + _ROW_BLOCK]
        big = _row_max_abs(block)[:, None]
        big[~((big > 0) & np.isfinite(big))] = 1.0
        out[start:start + _ROW_BLOCK] = np.linalg.norm(block / big, axis=1) * big[:, 0]
    return out


def _row_max_abs(x: np.ndarray) -> np.ndarray:
    """``np.max(np.abs(x), axis=1)`` (a maximum is exact, NaN included), taken column by column: numpy reduces a
    row of a few values slowly, and a column at full speed."""
    if x.shape[1] == 0:
        return np.max(np.abs(x), axis=1)
    big = np.abs(x[:, 0])
    for j in range(1, x.shape[1]):
        np.maximum(big, np.abs(x[:, j]), out=big)
    return big


def _column_mean_sd(raw: np.ndarray, unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``((raw / unit).mean(axis=0), (raw / unit).std(axis=0))``, value for value, without a matrix of temporaries.

    numpy reduces a C-ordered matrix along axis 0 row after row into each column's sum, so carrying the running sum
    from one row block into the next (the block's rows appended to it) adds the same numbers in the same order as the
    whole-matrix call; the variance is numpy's: the mean of the squared deviations from the mean. A single column
    is reduced pairwise by numpy: it is computed as before (its temporaries are one column).
    """
    n, d = raw.shape
    if d == 1 or not raw.flags.c_contiguous:
        rescaled = raw / unit
        return rescaled.mean(axis=0), rescaled.std(axis=0)

    def column_sums(term: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        total: np.ndarray | None = None
        for start in range(0, n, _ROW_BLOCK):
            block = term(raw[start:start + _ROW_BLOCK])
            total = np.add.reduce(block if total is None else np.concatenate([total[None], block]), axis=0)
        assert total is not None
        return total

    mean = column_sums(lambda block: block / unit) / n

    def squared_deviation(block: np.ndarray) -> np.ndarray:
        dev = block / unit - mean
        return np.multiply(dev, dev, out=dev)

    return mean, np.sqrt(column_sums(squared_deviation) / n)


def _all_finite(x: np.ndarray) -> bool:
    """``np.all(np.isfinite(x))`` in row blocks (no matrix of booleans)."""
    return all(bool(np.isfinite(x[i:i + _ROW_BLOCK]).all()) for i in range(0, x.shape[0], _ROW_BLOCK))


def _shrink_into_ball(x: np.ndarray) -> None:
    """Scale (in place) any row whose computed norm exceeds 1 by rounding so that it is ≤ 1 exactly.

    Row by row (in blocks of :data:`_ROW_BLOCK` rows: each row's result is its own, and the temporaries are a
    block's): while a row's norm exceeds 1, it is multiplied by nextafter(1/norm, 0)."""
    for start in range(0, x.shape[0], _ROW_BLOCK):
        block = x[start:start + _ROW_BLOCK]
        for _ in range(4):
            norms = np.linalg.norm(block, axis=1)
            over = norms > 1.0
            if not over.any():
                break
            # block[over] *= nextafter(1/norm, 0) for the rows over 1, without gathering and scattering them (the
            # same products; after a clip about half the rows are over by a rounding)
            with np.errstate(divide="ignore"):
                factor = np.nextafter(1.0 / norms, 0.0)
            np.multiply(block, factor[:, None], out=block, where=over[:, None])
        else:
            raise AssertionError("rows could not be brought into the unit ball")  # unreachable for finite input


def _map_rows(raw: np.ndarray, kinds: tuple[str, ...], names: tuple[str, ...], spec: DataSpec) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, float, np.ndarray, int, int]:
    """The row map of :func:`prepare` applied IN PLACE to ``raw`` (n × d, C-ordered; its columns' ``kinds`` and
    ``names``): (x, centre, scale, row_factor, input_norms, clipped_rows, clipped_values), every row of x in the
    unit ball. The one implementation of the map on a whole table (:func:`prepare`, :func:`prepare_parquet`)."""
    unit_cols = np.array([kind != "numeric" for kind in kinds])  # one-hot and indicator columns: 0/1, public
    n, d = raw.shape
    norm = spec.normalization
    clipped_rows = clipped_values = 0
    if norm.method == "bounds":
        lower = np.zeros(d)
        upper = np.ones(d)
        lower[~unit_cols] = norm.lower
        upper[~unit_cols] = norm.upper
        clipped_values = int(sum(((block < lower) | (block > upper)).sum()
                                 for block in (raw[i:i + _ROW_BLOCK] for i in range(0, n, _ROW_BLOCK))))
        if norm.standardize:
            centre = (lower + upper) / 2.0
            scale = (upper - lower) / 2.0
        else:
            centre = np.zeros(d)
            scale = np.maximum(np.abs(lower), np.abs(upper))
        # In place, value for value the same as clip((clip(raw, lower, upper) − centre) / scale, −1, 1): one matrix.
        x = np.clip(raw, lower, upper, out=raw)
        x -= centre
        x /= scale
        np.clip(x, -1.0, 1.0, out=x)
        row_factor = 1.0 / math.sqrt(d)
        input_norms = _row_norms(x)
        x *= row_factor
    else:
        if norm.standardize:
            # Mean and sd of each column computed on the column divided by its largest |value| (an exact
            # power-free rescaling), so tiny (1e-250) or huge (1e250) values neither underflow nor overflow.
            unit = np.maximum(raw.max(axis=0), -raw.min(axis=0))  # max |value|, without a matrix of |values|
            unit[unit == 0] = 1.0
            mean, sd = _column_mean_sd(raw, unit)  # (raw / unit).mean(axis=0) and .std(axis=0), in row blocks
            centre = mean * unit
            scale = sd * unit
            centre[unit_cols] = 0.0  # one-hot and indicator columns keep their public 0/1 scale
            scale[unit_cols] = 1.0
        else:
            centre = np.zeros(d)
            scale = np.ones(d)
        # Spreads that underflow to 0 (values ~1e-300) or overflow make x non-finite here; the check below turns
        # that into a message naming the column instead of a ZeroDivisionError or a warning.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            x = raw  # z = raw − centre, then scaled, in place (the same values as `raw - centre`)
            x -= centre
            x /= scale
            input_norms = _safe_row_norms(x)
            if norm.method == "clip":
                row_factor = 1.0
                clipped_rows = int((input_norms > 1.0).sum())
                for start in range(0, n, _ROW_BLOCK):  # rows of norm ≤ 1 are divided by exactly 1
                    x[start:start + _ROW_BLOCK] /= np.maximum(input_norms[start:start + _ROW_BLOCK], 1.0)[:, None]
            elif norm.method == "scaled":
                row_factor = 1.0 / (SCALED_SPREAD * math.sqrt(feature_groups(spec)))
                norms = input_norms * row_factor
                clipped_rows = int((norms > 1.0).sum())
                x *= row_factor
                x /= np.maximum(norms, 1.0)[:, None]
            else:
                biggest = float(input_norms.max())
                row_factor = 1.0 / biggest if biggest > 0 else math.inf
                x /= biggest
    if not (_all_finite(x) and np.all(np.isfinite(scale)) and np.all(scale > 0)):
        bad = int(np.flatnonzero(~(np.isfinite(scale) & (scale > 0)))[0]) if not np.all(scale > 0) else 0
        raise TableProblem(
            f"feature column {names[bad]!r} cannot be scaled (its spread is zero or too large) — rescale "
            f"or remove it",
            control="features",
            column=names[bad],
        )
    _shrink_into_ball(x)
    return x, centre, scale, float(row_factor), input_norms, clipped_rows, clipped_values


def prepare(frame: pd.DataFrame, spec: DataSpec) -> PreparedData:
    r"""Validate ``frame`` for ``spec`` and map its feature rows into the unit L2 ball.

    Parameters
    ----------
    frame : pandas.DataFrame
    spec : DataSpec

    Returns
    -------
    PreparedData
        ``x`` with every row norm ≤ 1 (exactly, in floating point), ``y``, ``extras`` and the map.

    Raises
    ------
    TableProblem
        The first of :func:`table_problems`.

    Notes
    -----
    ``clip``/``maxnorm`` with ``standardize=True`` use the sample mean and population sd of each column, and
    ``maxnorm`` the largest row norm: statistics of the sensitive data that the mechanisms do not protect (see
    :func:`privacy_note`). ``bounds`` uses only the public bounds; changing one record changes only that
    record's prepared row. For ``maxnorm`` the largest prepared row norm is 1 (up to one unit in the last place).

    Examples
    --------
    >>> frame = pd.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0) ** 2})
    >>> p = prepare(frame, DataSpec(("a", "b"), normalization=Normalization("maxnorm")))
    >>> p.n, p.d, round(float(p.row_norms().max()), 12)
    (20, 2, 1.0)
    """
    problems, decoded = _check_table(frame, spec)
    if problems:
        raise problems[0]
    # What the result keeps of the decoded columns, taken before the matrix is built: the decoded columns are then
    # dropped, and the matrix is scaled in place (issue 33 §3: the in-memory release's peak memory).
    fingerprint = _fingerprint(frame, spec, decoded.raw)
    y = decoded.y.copy() if decoded.y is not None else None
    extras = {role: _readonly(decoded.extras[role].copy()) for role in (spec.roles or {})}
    dropped, filled, levels = dict(decoded.dropped), dict(decoded.filled), dict(decoded.levels)
    columns = [c for f in spec.features for c in decoded.features[f]]
    names = tuple(name for name, _, _ in columns)
    kinds = tuple(kind for _, _, kind in columns)
    raw = np.column_stack([values for _, values, _ in columns])
    del columns, decoded
    x, centre, scale, row_factor, input_norms, clipped_rows, clipped_values = _map_rows(raw, kinds, names, spec)
    return PreparedData(
        x=_readonly(np.ascontiguousarray(x)),
        y=None if y is None else _readonly(y),
        feature_names=names,
        spec=spec,
        extras=extras,
        fingerprint=fingerprint,
        centre=_readonly(np.asarray(centre, dtype=float)),
        scale=_readonly(np.asarray(scale, dtype=float)),
        row_factor=float(row_factor),
        input_norms=_readonly(input_norms),
        clipped_rows=clipped_rows,
        clipped_values=clipped_values,
        feature_kinds=kinds,
        rows_in_table=len(frame),
        dropped_rows=dropped,
        filled_cells=filled,
        levels=levels,
    )



def prepare_parquet(path: str | os.PathLike[str], spec: DataSpec) -> PreparedData | None:
    """:func:`prepare` of the Parquet file at ``path``, read column by column: the same :class:`PreparedData` (the
    same values, fingerprint and counts) as ``prepare(load_table(path), spec)`` without a table in memory — its peak
    is the prepared matrix and one column (issue 33 §3: an in-memory release of a country's register).

    Returns None when the file or the spec needs the general path — a feature, target or program column that is
    not a number column of the file, a missing, infinite or too large value, a negative amount, a constant feature,
    too few rows, encoded (categorical, date, missing-value or positive-class) steps, or any problem of the spec —
    so the caller reads the table with :func:`load_table` and :func:`prepare` says what is wrong, as always.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> frame = pd.DataFrame({"a": np.arange(30.0), "b": (np.arange(30) % 7).astype("int64")})
    >>> path = tempfile.mkdtemp() + "/t.parquet"
    >>> pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    >>> spec = DataSpec(("a", "b"))
    >>> fast, slow = prepare_parquet(path, spec), prepare(frame, spec)
    >>> fast.fingerprint == slow.fingerprint and bool(np.array_equal(fast.x, slow.x))
    True
    """
    if spec.categorical or spec.missing or spec.dates or spec.positive_class or not spec.features:
        return None
    import pyarrow
    import pyarrow.parquet

    try:
        parquet = pyarrow.parquet.ParquetFile(path)
        schema = parquet.schema_arrow
    except (pyarrow.ArrowException, OSError, ValueError, TypeError):
        return None
    names = [str(c) for c in schema.names]
    if len(set(names)) != len(names) or any(c not in names for c in spec.columns):
        return None
    if not all(_plain_number_column(pyarrow, schema, c) for c in spec.columns):
        return None
    if any(pyarrow.types.is_nested(field.type) for field in schema):
        return None  # load_table refuses a file with nested columns anywhere, used or not: it says why
    n = int(parquet.metadata.num_rows)
    empty = pd.DataFrame({c: pd.Series([], dtype=float) for c in spec.columns})
    if n < MIN_ROWS or any(not isinstance(p, TooFewRowsError) for p in table_problems(empty, spec)):
        return None  # what the spec itself gets wrong (bounds per feature, the target among the features, …)
    roles = set((spec.roles or {}).values())
    h = keyed_hasher()  # as _fingerprint: the same bytes in the same order
    h.update(_FINGERPRINT_VERSION)
    h.update(f"rows={n}\n".encode())
    raw = np.empty((n, len(spec.features)))
    kept: dict[str, np.ndarray] = {}
    canon = np.empty(1 << 15)
    for column in spec.columns:
        try:
            chunks = parquet.read(columns=[column], use_threads=False).column(0)
        except (pyarrow.ArrowException, OSError, ValueError, TypeError):
            return None
        if chunks.null_count:
            return None
        # Chunk by chunk, as pyarrow returns the column (without a concatenated copy of it): its range, its
        # canonical bytes into the fingerprint, its values into the matrix.
        lo, hi = math.inf, -math.inf
        h.update(b"column\x00" + column.encode("utf-8") + b"\x00f8\x00")
        row, values = 0, None
        for chunk in chunks.chunks:
            values = chunk.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
            if values.size:
                low, high = float(values.min()), float(values.max())
                if not (-MAX_ABS_VALUE <= low and high <= MAX_ABS_VALUE):  # a NaN in any chunk fails these
                    return None
                lo, hi = min(lo, low), max(hi, high)
            for start in range(0, values.size, canon.size):
                block = canon[:min(canon.size, values.size - start)]
                np.add(values[start:start + canon.size], 0.0, out=block)  # −0 → +0; no NaN here
                h.update(block.data)  # the block's bytes (contiguous)
            if column in spec.features:
                raw[row:row + values.size, spec.features.index(column)] = values
            if column == spec.target or column in roles:
                kept.setdefault(column, np.empty(n))[row:row + values.size] = values
            row += values.size
        del chunks, values
        pyarrow.default_memory_pool().release_unused()  # the column's Arrow buffers go back to the system
        if row != n or (column in roles and lo < 0) or (column in spec.features and lo == hi):
            return None
    h.update(b"spec\x00" + spec.key().encode("utf-8"))
    names_out = tuple(spec.features)
    kinds = ("numeric",) * len(names_out)
    x, centre, scale, row_factor, input_norms, clipped_rows, clipped_values = _map_rows(raw, kinds, names_out, spec)
    return PreparedData(
        x=_readonly(x),
        y=None if spec.target is None else _readonly(kept[spec.target].copy()),
        feature_names=names_out,
        spec=spec,
        extras={role: _readonly(kept[column].copy()) for role, column in (spec.roles or {}).items()},
        fingerprint=h.hexdigest(),
        centre=_readonly(np.asarray(centre, dtype=float)),
        scale=_readonly(np.asarray(scale, dtype=float)),
        row_factor=float(row_factor),
        input_norms=_readonly(input_norms),
        clipped_rows=clipped_rows,
        clipped_values=clipped_values,
        feature_kinds=kinds,
        rows_in_table=n,
    )


def _plain_number_column(pyarrow: Any, schema: Any, column: str) -> bool:
    """Whether ``column`` of a Parquet file's Arrow ``schema`` is read by :func:`load_table` as a column of plain
    numbers: an integer or floating Arrow type, no Arrow extension type (pandas stores a Period column as int64 with
    the extension ``pandas.period``: a date), not the pandas index (``load_table`` does not make it a column), and
    not stored by pandas as anything but numbers (a categorical's codes, a Period's ordinals).

    >>> import pyarrow as pa
    >>> frame = pd.DataFrame({"a": [1.0, 2.0], "p": pd.period_range("2020-01", periods=2, freq="M")},
    ...                      index=pd.Index([5, 6], name="idx"))
    >>> schema = pa.Table.from_pandas(frame).schema
    >>> [_plain_number_column(pa, schema, c) for c in ("a", "p", "idx")]
    [True, False, False]
    """
    field = schema.field(column)
    kind = field.type
    if not (pyarrow.types.is_floating(kind) or pyarrow.types.is_integer(kind)):
        return False
    if isinstance(kind, pyarrow.BaseExtensionType) or b"ARROW:extension:name" in (field.metadata or {}):
        return False
    meta = schema.pandas_metadata or {}
    if column in [c for c in meta.get("index_columns", []) if isinstance(c, str)]:
        return False
    for entry in meta.get("columns", []):
        if isinstance(entry, dict) and entry.get("field_name", entry.get("name")) == column:
            return str(entry.get("pandas_type")) in _PANDAS_NUMBER_TYPES
    return True


#: pandas' stored types of a column it reads back as numbers (its nullable Int64/Float64 too: pandas_type "int64").
_PANDAS_NUMBER_TYPES = frozenset(
    {f"int{b}" for b in (8, 16, 32, 64)} | {f"uint{b}" for b in (8, 16, 32, 64)} | {"float16", "float32", "float64"}
)

def feature_groups(spec: DataSpec) -> int:
    """m of the ``scaled`` normalisation: the feature columns of ``spec``, each missing-indicator counted once more
    (a text feature's one-hot columns are one group: exactly one of them is 1 in a row).

    >>> feature_groups(DataSpec(("a", "c"), categorical={"c": Categorical()},
    ...                         missing={"a": MissingRule("fill", 0, indicator=True)}))
    3
    """
    return len(spec.features) + sum(
        1 for column, rule in (spec.missing or {}).items() if rule.indicator and column in spec.features
    )


def feature_names(frame: pd.DataFrame, spec: DataSpec) -> tuple[str, ...]:
    """The prepared feature names ``spec`` gives on ``frame`` (one-hot and indicator columns expanded), without
    normalising; the width d a mechanism sees. Raises the first :func:`table_problems` like :func:`prepare`.

    >>> frame = pd.DataFrame({"a": range(20), "c": ["x", "y"] * 10})
    >>> feature_names(frame, DataSpec(("a", "c"), categorical={"c": Categorical()}))
    ('a', 'c=x', 'c=y')
    """
    problems, decoded = _check_table(frame, spec)
    if problems:
        raise problems[0]
    return tuple(name for f in spec.features for name, _, _ in decoded.features[f])


def bounds_from_frame(frame: pd.DataFrame, features: Iterable[str]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Public bounds from a small table with columns ``feature``, ``lower``, ``upper`` (one row per feature).

    Returns ``(lower, upper)`` in the order of ``features``, for :class:`Normalization`.

    >>> bounds_from_frame(pd.DataFrame({"feature": ["b", "a"], "lower": [0, 1], "upper": [5, 9]}), ["a", "b"])
    ((1.0, 0.0), (9.0, 5.0))
    """
    columns = {str(c).strip().lower(): c for c in frame.columns}
    missing = [c for c in ("feature", "lower", "upper") if c not in columns]
    if missing:
        raise TableProblem(
            f"the bounds table needs the columns 'feature', 'lower' and 'upper'; missing {missing} — one row per "
            f"feature",
            control="normalization",
        )
    table: dict[str, tuple[float, float]] = {}
    for i, (name, lo, hi) in enumerate(
        zip(frame[columns["feature"]], frame[columns["lower"]], frame[columns["upper"]], strict=True)
    ):
        try:
            table[str(name).strip()] = (float(lo), float(hi))
        except (TypeError, ValueError):
            raise TableProblem(
                f"the bounds table has a non-numeric bound in {row_label(i)} ({lo!r}, {hi!r}) — use numbers",
                control="normalization",
                row=i,
            ) from None
    features = list(features)
    absent = [f for f in features if f not in table]
    if absent:
        raise TableProblem(
            f"the bounds table has no row for feature(s) {absent} — add one row per feature", control="normalization"
        )
    return tuple(table[f][0] for f in features), tuple(table[f][1] for f in features)
