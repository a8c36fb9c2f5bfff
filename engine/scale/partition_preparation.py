r"""Preparation of a table partition by partition: checks, column statistics by reduction, and the row map.

The in-memory :func:`engine.data.preparation.prepare` maps row i to :math:`x_i = g((v_i - c)/h)` with a centre c,
a scale h and a row map g (module docstring of :mod:`engine.data.preparation`). Out of core the same map is applied
to every partition once c, h and the global row factor are known:

* ``bounds`` (and ``clip`` without standardisation): c, h come from public numbers; no pass over the data.
* ``clip``/``maxnorm`` with standardisation: pass 1 computes, per partition, the count, the largest |value|
  :math:`u_p` and the mean and sum of squared deviations of :math:`v/u_p` (the in-memory path's rescaling, so
  tiny or huge values neither underflow nor overflow); :func:`combine_moments` merges them with Chan et al.'s
  pairwise update. c and h equal the in-memory sample mean and population sd up to float summation order.
* ``maxnorm``: one more pass for :math:`M = \max_i \lVert z_i\rVert_2` (a max, so exact).

Like the in-memory path these statistics come from the sensitive data and are NOT covered by the mechanism's
guarantee (:func:`engine.data.preparation.privacy_note`); they are never written to the output.

Checks: each partition is checked with :func:`engine.data.preparation.table_problems` (text, missing, infinite,
huge and negative-amount cells), except the two whole-table checks — at least ``MIN_ROWS`` rows and no constant
feature — which are made on the combined counts and column ranges. Problems travel back from the workers as
plain data (row numbers relative to the partition) and are raised on the driver with whole-table row numbers.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

# _numeric / _shrink_into_ball: the in-memory path's exact cell conversion and final ball projection, shared so
# that both paths prepare a row identically.
from engine.data.preparation import (
    MAX_ABS_VALUE,
    MIN_ROWS,
    SCALED_SPREAD,
    DataSpec,
    Normalization,
    TableProblem,
    TooFewRowsError,
    _numeric,
    _safe_row_norms,
    _shrink_into_ball,
    row_label,
    table_problems,
)


@dataclass(frozen=True)
class PreparationMap:
    """The row map fixed for the whole table: centre c, scale h (data units) and the global row factor.

    ``row_factor`` is 1 for ``clip`` (rows clipped one by one), 1/M for ``maxnorm`` and 1/√d for ``bounds``;
    ``max_norm`` is M for ``maxnorm`` (rows are divided by it, as in memory) and None otherwise.
    """

    normalization: Normalization
    centre: np.ndarray
    scale: np.ndarray
    row_factor: float
    max_norm: float | None = None


def public_map(normalization: Normalization, d: int) -> PreparationMap | None:
    """The map when it needs no statistic of the data (``bounds``, or ``clip`` without standardisation), else None.

    >>> m = public_map(Normalization("bounds", lower=(0, 0), upper=(2, 4)), 2)
    >>> m.centre.tolist(), m.scale.tolist(), round(m.row_factor, 6)
    ([1.0, 2.0], [1.0, 2.0], 0.707107)
    """
    if normalization.method == "bounds":
        lower = np.asarray(normalization.lower, dtype=float)
        upper = np.asarray(normalization.upper, dtype=float)
        if normalization.standardize:
            centre, scale = (lower + upper) / 2.0, (upper - lower) / 2.0
        else:
            centre, scale = np.zeros(d), np.maximum(np.abs(lower), np.abs(upper))
        return PreparationMap(normalization, centre, scale, 1.0 / math.sqrt(d))
    if normalization.method == "clip" and not normalization.standardize:
        return PreparationMap(normalization, np.zeros(d), np.ones(d), 1.0)
    if normalization.method == "scaled" and not normalization.standardize:  # numeric features only: m = d
        return PreparationMap(normalization, np.zeros(d), np.ones(d), 1.0 / (SCALED_SPREAD * math.sqrt(d)))
    return None


# ---------------------------------------------------------------------------------------------------- checks
def check_partition(
    data: pd.DataFrame | dict[str, np.ndarray], spec: DataSpec, ranges: dict[str, tuple[float, float]] | None = None
) -> tuple[dict[str, Any] | None, dict[str, np.ndarray]]:
    """The first problem of one partition (as plain data, row relative to the partition) and the float64 columns.

    ``data`` is a DataFrame or a dict of column arrays (:func:`engine.scale.partitioned_input.read_partition`).
    Clean numeric partitions take a fast vectorised check; any partition that fails it is checked by
    :func:`engine.data.preparation.table_problems`, so the message is the in-memory path's. The whole-table checks
    (row count, constant features) are left to the driver. When the fast check passes and ``ranges`` is given, it
    receives each non-empty column's (smallest, largest) value: the check computes them anyway, and the column
    ranges of the whole-table check come from them (empty when a partition took the slow check).
    """
    values = {c: _as_float(data[c]) for c in spec.columns}
    if _clean(values, spec, ranges):
        return None, cast(dict[str, np.ndarray], values)  # clean: every column converted to float64
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame({c: data[c] for c in spec.columns})
    problems = [
        p for p in table_problems(frame, spec)
        if not isinstance(p, TooFewRowsError) and not _is_constant_problem(p, frame, spec)
    ]
    if problems:
        p = problems[0]
        return {"message": str(p), "control": p.control, "column": p.column, "row": p.row}, {}
    return None, {c: _numeric(frame[c])[0] for c in spec.columns}


def _as_float(column: Any) -> np.ndarray | None:
    """float64 values of a numeric column (None when it holds text or other types)."""
    if isinstance(column, np.ndarray):
        return column if column.dtype == np.float64 else None
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype) \
            and not pd.api.types.is_complex_dtype(column.dtype):
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    return None


def _clean(values: dict[str, np.ndarray | None], spec: DataSpec,
           ranges: dict[str, tuple[float, float]] | None = None) -> bool:
    """True when every used column is finite float64 within ±MAX_ABS_VALUE and role columns are non-negative.

    One smallest and one largest value per column decide it (a NaN makes both NaN, which fails the comparisons; an
    infinity is out of range), and are kept in ``ranges``."""
    roles = set((spec.roles or {}).values())
    found: dict[str, tuple[float, float]] = {}
    for column, v in values.items():
        if v is None:
            return False
        if not v.size:
            continue
        lo, hi = float(v.min()), float(v.max())
        if not (-MAX_ABS_VALUE <= lo and hi <= MAX_ABS_VALUE):
            return False
        if column in roles and lo < 0:
            return False
        found[column] = (lo, hi)
    if ranges is not None:
        ranges.update(found)
    return True


def _is_constant_problem(problem: TableProblem, frame: pd.DataFrame, spec: DataSpec) -> bool:
    """True for the "same value in every row" problem, which only the whole table can decide."""
    if problem.control != "features" or problem.column not in spec.features or problem.row is not None:
        return False
    values = _numeric(frame[problem.column])[0]
    return bool(values.size and np.all(values == values[0]))


def raise_problem(problem: dict[str, Any], offset: int) -> None:
    """Raise a partition's problem on the driver, its row number counted in the whole table."""
    message, row = problem["message"], problem["row"]
    if row is not None:
        message = message.replace(row_label(row), row_label(row + offset))
        row = row + offset
    raise TableProblem(message, control=problem["control"], column=problem["column"], row=row)


def check_whole_table(rows: int, minimum: np.ndarray, maximum: np.ndarray, spec: DataSpec) -> None:
    """The checks only the whole table can decide: at least ``MIN_ROWS`` rows, no constant feature."""
    for j, name in enumerate(spec.features):
        if minimum[j] == maximum[j]:
            why = " and cannot be standardised" if spec.normalization.standardize else ""
            raise TableProblem(
                f"feature column {name!r} has the same value ({minimum[j]:g}) in every row, so it carries no "
                f"information{why} — remove it from the features",
                control="features",
                column=name,
            )
    if rows < MIN_ROWS:
        raise TooFewRowsError(
            f"the table has {rows} data row{'s' if rows != 1 else ''}; at least {MIN_ROWS} are needed — add rows "
            f"(protection and accuracy estimates on fewer records are meaningless)",
            control="table",
        )


def feature_matrix(values: dict[str, np.ndarray], spec: DataSpec) -> np.ndarray:
    """The n × d float64 matrix of the spec's features (columns in the spec's order)."""
    return np.column_stack([values[f] for f in spec.features])


def canonical_digest(values: dict[str, np.ndarray], spec: DataSpec, rows: int, *, finite: bool = False) -> str:
    """Plain SHA-256 of one partition's used columns in the fingerprint's canonical form (float64, −0 → 0, one NaN).

    Stays inside the cluster: the driver combines the digests of all partitions under the data holder's key
    (:func:`engine.scale.out_of_core.partitioned_fingerprint`), which is what a record shows. ``finite`` says the
    columns hold no NaN (:func:`check_partition`'s fast check passed): each column is then canonicalised and hashed
    in blocks of :data:`_DIGEST_VALUES` values (the same bytes in the same order, so the same digest, without a copy
    of the column).
    """
    h = hashlib.sha256(f"rows={rows}\n".encode())
    buffer = np.empty(_DIGEST_VALUES, dtype="<f8") if finite else None
    for column in spec.columns:
        v = values[column]
        h.update(b"column\x00" + column.encode("utf-8") + b"\x00f8\x00")
        if buffer is None or v.dtype != np.float64:
            h.update(np.where(np.isnan(v), np.nan, v + 0.0).astype("<f8", copy=False).tobytes())
            continue
        for start in range(0, v.shape[0], _DIGEST_VALUES):
            block = buffer[:min(_DIGEST_VALUES, v.shape[0] - start)]
            np.add(v[start:start + _DIGEST_VALUES], 0.0, out=block)  # −0 + 0 = +0: the canonical zero
            h.update(block.data)  # the block's bytes (contiguous)
    return h.hexdigest()


#: Values per block of :func:`canonical_digest`'s canonical form (a block stays in the core's cache).
_DIGEST_VALUES = 1 << 15


# ---------------------------------------------------------------------------------------------------- pass 1
def partition_moments(raw: np.ndarray) -> dict[str, np.ndarray]:
    """Per-column count, largest |value| u, and mean and sum of squared deviations of raw/u (one partition)."""
    unit = np.max(np.abs(raw), axis=0)
    unit[unit == 0] = 1.0
    scaled = raw / unit
    mean = scaled.mean(axis=0)
    m2 = ((scaled - mean) ** 2).sum(axis=0)
    return {"n": np.array(raw.shape[0]), "unit": unit, "mean": mean, "m2": m2}


def combine_moments(parts: list[dict[str, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Merge :func:`partition_moments` into the table's column mean and population sd (data units).

    Each partition's moments are first expressed in units of the global largest |value| U (as the in-memory path
    divides by U), then merged pairwise (Chan, Golub & LeVeque 1979): for parts a, b with n = n_a + n_b,
    δ = mean_b − mean_a: mean = mean_a + δ n_b/n, M2 = M2_a + M2_b + δ² n_a n_b / n.

    >>> rng = np.random.default_rng(0); v = rng.normal(5, 2, size=(100, 2))
    >>> c, h = combine_moments([partition_moments(v[:30]), partition_moments(v[30:])])
    >>> bool(np.allclose(c, v.mean(axis=0), rtol=1e-13) and np.allclose(h, v.std(axis=0), rtol=1e-13))
    True
    """
    units = np.max([p["unit"] for p in parts], axis=0)
    n = 0.0
    mean = np.zeros_like(units)
    m2 = np.zeros_like(units)
    for p in parts:
        nb = float(p["n"])
        if nb == 0:
            continue
        ratio = p["unit"] / units
        mb, m2b = p["mean"] * ratio, p["m2"] * ratio**2
        total = n + nb
        delta = mb - mean
        mean = mean + delta * (nb / total)
        m2 = m2 + m2b + delta**2 * (n * nb / total)
        n = total
    return mean * units, np.sqrt(m2 / n) * units


def partition_max_norm(raw: np.ndarray, centre: np.ndarray, scale: np.ndarray) -> float:
    """Largest ‖z_i‖ of one partition, z = (v − c)/h, computed as the in-memory path does (row-wise rescaling)."""
    return float(_input_norms(raw, centre, scale)[1].max()) if raw.shape[0] else 0.0


def _input_norms(raw: np.ndarray, centre: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = np.array(raw, dtype=np.float64, order="C")  # a copy: raw is the partition's decoded columns
        _standardize(x, centre, scale)
        norms = _safe_row_norms(x)  # as the in-memory path: row by row, in row blocks
    return x, norms


# ---------------------------------------------------------------------------------------------------- pass 2
#: Rows per block of the partition's preparation: a block and its temporaries stay in the core's cache, so the map's
#: steps (centre, scale, row norm, clip, the ball check) make one pass over memory instead of one each.
PREPARE_BLOCK_ROWS = 2048


def prepare_rows(raw: np.ndarray, prep: PreparationMap) -> tuple[np.ndarray, int, int]:
    """Apply the fixed map to one partition: (x with rows in the unit ball, clipped rows, clipped values).

    Row by row the same operations as :func:`engine.data.preparation.prepare` given the same c, h and row factor
    (every step is element-wise or within a row, so applying them a block of rows at a time gives the same values).
    ``raw`` is not changed.
    """
    x = np.array(raw, dtype=np.float64, order="C")
    rows = values = 0
    for start in range(0, x.shape[0], PREPARE_BLOCK_ROWS):
        r, v = _prepare_block(x[start:start + PREPARE_BLOCK_ROWS], prep)
        rows, values = rows + r, values + v
    return x, rows, values


def prepare_columns(columns: dict[str, np.ndarray], features: tuple[str, ...],
                    prep: PreparationMap) -> tuple[np.ndarray, int, int]:
    """:func:`prepare_rows` of the matrix whose columns are ``columns[f]`` for ``f`` in ``features``, built a block
    of rows at a time (no separate stacked copy of the partition: each block is filled and prepared in the cache).

    >>> rng = np.random.default_rng(1); v = rng.normal(size=(5000, 3)) * 4
    >>> prep = public_map(Normalization("clip", standardize=False), 3)
    >>> a = prepare_columns({"a": v[:, 0], "b": v[:, 1], "c": v[:, 2]}, ("a", "b", "c"), prep)
    >>> b = prepare_rows(v, prep)
    >>> bool(np.array_equal(a[0], b[0])) and a[1:] == b[1:]
    True
    """
    n = int(columns[features[0]].shape[0]) if features else 0
    x = np.empty((n, len(features)))
    rows = values = 0
    for start in range(0, n, PREPARE_BLOCK_ROWS):
        block = x[start:start + PREPARE_BLOCK_ROWS]
        for j, name in enumerate(features):
            block[:, j] = columns[name][start:start + PREPARE_BLOCK_ROWS]
        r, v = _prepare_block(block, prep)
        rows, values = rows + r, values + v
    return x, rows, values


def _prepare_block(x: np.ndarray, prep: PreparationMap) -> tuple[int, int]:
    """The map applied in place to a block of raw rows (C-ordered); its clipped rows and clipped values."""
    norm = prep.normalization
    clipped_rows = clipped_values = 0
    if norm.method == "bounds":
        lower = np.asarray(norm.lower, dtype=float)
        upper = np.asarray(norm.upper, dtype=float)
        clipped_values = int(((x < lower) | (x > upper)).sum())
        np.clip(x, lower, upper, out=x)
        x -= prep.centre
        x /= prep.scale
        np.clip(x, -1.0, 1.0, out=x)
        x *= prep.row_factor
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            _standardize(x, prep.centre, prep.scale)
            norms = _safe_row_norms(x)  # as the in-memory path: each row divided by its largest |entry|
            if norm.method in ("clip", "scaled"):  # 'scaled': the rows divided by 2√m first (row_factor)
                if norm.method == "scaled":
                    norms = norms * prep.row_factor
                    x *= prep.row_factor
                clipped_rows = int((norms > 1.0).sum())
                x /= np.maximum(norms, 1.0)[:, None]
            else:
                x /= prep.max_norm
    _shrink_into_ball(x)
    return clipped_rows, clipped_values


def _standardize(x: np.ndarray, centre: np.ndarray, scale: np.ndarray) -> None:
    """x ← (x − c)/h in place; subtracting 0 and dividing by 1 change no value, so they are skipped."""
    if np.any(centre != 0.0):
        x -= centre
    if not np.all(scale == 1.0):
        x /= scale


__all__ = [
    "PreparationMap",
    "canonical_digest",
    "check_partition",
    "check_whole_table",
    "combine_moments",
    "feature_matrix",
    "partition_max_norm",
    "partition_moments",
    "prepare_columns",
    "prepare_rows",
    "public_map",
    "raise_problem",
]
