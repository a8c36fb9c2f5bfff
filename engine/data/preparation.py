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

import csv
import difflib
import io
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from engine.errors import DataValidationError, InsufficientDataError, InvalidParameterError
from engine.fingerprint import keyed_hasher
from engine.serialization import Serializable
from engine.validation import check_bool, check_choice, check_interval, check_real

Method = Literal["clip", "maxnorm", "bounds"]

#: Normalisation methods and their one-line descriptions (for the UI's radio buttons and the CLI's help).
METHODS: dict[str, str] = {
    "clip": "scale each row whose norm exceeds 1 back onto the unit sphere (others unchanged)",
    "maxnorm": "divide every row by the largest row norm in the data (the authors' code)",
    "bounds": "map public per-feature bounds onto the unit ball; no statistic of the data is used",
}

#: Fewest data rows a table must have.
MIN_ROWS = 20

#: Default upload size limit of :func:`load_table` callers (the dashboard states it next to the uploader).
DEFAULT_MAX_BYTES = 200 * 1024 * 1024

#: Values beyond this magnitude overflow when squared (norms, variances); such columns are rejected.
MAX_ABS_VALUE = 1e150

CSV_EXTENSIONS = frozenset({".csv", ".txt", ".tsv", ""})
PARQUET_EXTENSIONS = frozenset({".parquet", ".pq", ".parq"})

_FINGERPRINT_VERSION = b"privacy-parameter-studio/table/v1\n"


# ----------------------------------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Normalization(Serializable):
    """How feature rows are put into the unit L2 ball (see the module docstring for the exact maps).

    Parameters
    ----------
    method : {"clip", "maxnorm", "bounds"}
        ``clip`` (default): after centring/scaling, rows of norm > 1 are scaled to norm 1.
        ``maxnorm``: every row is divided by the largest row norm (the authors' replication code).
        ``bounds``: public per-feature bounds ``lower``/``upper`` define the map; the data are not consulted.
    standardize : bool
        Centre and scale each column before the row map. For ``clip`` and ``maxnorm`` this uses the column's
        sample mean and standard deviation (population sd, ``ddof=0``) — statistics of the sensitive data. For
        ``bounds`` it uses the midpoint and half-width of the public bounds (data-independent); without it,
        ``bounds`` divides each feature by ``max(|lower|, |upper|)`` and keeps 0 at 0.
    lower, upper : tuple of float
        Public bounds, one per numeric feature in the order of :attr:`DataSpec.features` (one-hot and
        missing-indicator columns get [0, 1] automatically); required for ``bounds`` and not allowed otherwise.
        Values outside are clipped to the bounds before the map.

    Examples
    --------
    >>> Normalization().to_dict()
    {'method': 'clip', 'standardize': True, 'lower': [], 'upper': []}
    >>> Normalization("bounds", lower=(0, 0), upper=(10, 1)).data_independent
    True
    """

    method: Method = "clip"
    standardize: bool = True
    lower: tuple[float, ...] = ()
    upper: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        check_choice(
            "normalization method", self.method, METHODS, hint="clip (default), maxnorm (authors' code) or bounds"
        )
        check_bool("standardize", self.standardize)
        lower = _float_tuple("lower bounds", self.lower)
        upper = _float_tuple("upper bounds", self.upper)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        if self.method == "bounds":
            if not lower or len(lower) != len(upper):
                raise InvalidParameterError(
                    f"public bounds need one lower and one upper value per feature; got {len(lower)} lower and "
                    f"{len(upper)} upper value(s) — enter both bounds for every feature"
                )
            for i, (lo, hi) in enumerate(zip(lower, upper, strict=True)):
                if not lo < hi:
                    raise InvalidParameterError(
                        f"lower bound must be below upper bound for feature {i + 1}; got [{lo:g}, {hi:g}] — "
                        f"widen the interval"
                    )
        elif lower or upper:
            raise InvalidParameterError(
                f"lower/upper bounds are only used with the normalization method 'bounds'; got "
                f"{len(lower)} lower and {len(upper)} upper value(s) with method {self.method!r} — choose "
                f"'bounds' or remove the bounds"
            )

    @property
    def data_independent(self) -> bool:
        """True when the map uses no statistic of the data (public bounds, or clipping raw values)."""
        return self.method == "bounds" or (self.method == "clip" and not self.standardize)

    def describe(self) -> str:
        """One sentence saying what the preparation does."""
        if self.method == "bounds":
            first = (
                "centre each feature at the midpoint of its public bounds and divide by half their width"
                if self.standardize
                else "divide each feature by the larger absolute value of its public bounds"
            )
            return (
                f"Clip each value to its public bounds, {first}, then divide every row by √d: every row lands "
                f"in the unit ball without looking at the data."
            )
        first = (
            "Standardise each feature (subtract its mean, divide by its standard deviation)"
            if self.standardize
            else "Use the features as they are (no standardisation)"
        )
        second = (
            "then scale each row whose L2 norm exceeds 1 back to norm 1"
            if self.method == "clip"
            else "then divide every row by the largest row L2 norm in the data"
        )
        return f"{first}, {second}."


def _float_tuple(name: str, values: Any) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidParameterError(f"{name} must be a list of numbers; got {values!r}")
    return tuple(check_real(f"{name}[{i}]", v) for i, v in enumerate(values))


def privacy_note(normalization: Normalization) -> str:
    """Plain-language statement of what the preparation itself reveals (shown next to the normalisation control).

    >>> privacy_note(Normalization("bounds", lower=(0,), upper=(1,))).startswith("Data-independent")
    True
    """
    if normalization.method == "bounds":
        return (
            "Data-independent: the public bounds are fixed before the data are seen and every record is mapped on "
            "its own (values outside the bounds are clipped to them), so the mechanism's guarantee covers the "
            "whole pipeline from your table to the release. Choose the bounds from public knowledge (tariffs, "
            "legal limits, published ranges), never from the data."
        )
    if normalization.data_independent:
        return (
            "Data-independent: each row is clipped on its own and no statistic of the data is used, so the "
            "mechanism's guarantee covers the whole pipeline. Features keep their raw units, so a feature with "
            "large numbers dominates the row norm; consider public bounds instead."
        )
    used = []
    if normalization.standardize:
        used.append("the column means and standard deviations")
    if normalization.method == "maxnorm":
        used.append("the largest row norm (set by the single most extreme record)")
    return (
        f"Not private by itself: {' and '.join(used)} are computed from the sensitive data and are not covered "
        f"by the mechanism's guarantee — one record can shift how every other record is prepared. The guarantee "
        f"applies to the prepared matrix. To cover the whole pipeline, use public bounds (method 'bounds')."
    )


#: Names given to the extra one-hot columns of a categorical feature and to a missing-indicator column.
OTHER_LEVEL = "(other)"
MISSING_LEVEL = "(missing)"
INDICATOR_SUFFIX = " (missing)"

#: Kinds of prepared feature columns (:attr:`PreparedData.feature_kinds`).
FeatureKind = Literal["numeric", "one-hot", "indicator"]


@dataclass(frozen=True)
class MissingRule(Serializable):
    """What to do with a missing cell in one used column (a public rule, applied record by record).

    Parameters
    ----------
    action : {"drop", "fill"}
        ``drop``: rows with a missing value in this column are removed. ``fill``: the missing cell is replaced by
        ``value``, a public constant chosen without looking at the data (never the column's mean or median).
    value : float or str or None
        The fill constant (``fill`` only): a number for a numeric column, a date (``"2020-01-01"``) or a number of
        days for a date column, a level for a categorical column.
    indicator : bool
        ``fill`` only, features only: also add a 0/1 feature ``"<column> (missing)"`` that is 1 where the cell was
        missing, so the program can tell a filled value from a real one.

    Examples
    --------
    >>> MissingRule("fill", 0, indicator=True).to_dict()
    {'action': 'fill', 'value': 0.0, 'indicator': True}
    """

    action: Literal["drop", "fill"] = "drop"
    value: float | str | None = None
    indicator: bool = False

    def __post_init__(self) -> None:
        check_choice("missing-value action", self.action, ("drop", "fill"), hint="drop (the rows) or fill")
        check_bool("missing-indicator", self.indicator)
        if self.action == "drop":
            if self.value is not None or self.indicator:
                raise InvalidParameterError(
                    "a 'drop' rule for missing values takes no fill value and no indicator (the dropped rows are "
                    "gone) — choose 'fill' to keep the rows"
                )
            return
        value = self.value
        if value is None:
            raise InvalidParameterError("a 'fill' rule needs the public constant to fill missing cells with")
        if isinstance(value, str):
            if not value.strip():
                raise InvalidParameterError("the fill value must not be empty text — type a number or a level")
            object.__setattr__(self, "value", value.strip())
        else:
            object.__setattr__(self, "value", check_real("fill value", value))

    def describe(self, column: str) -> str:
        """One phrase: what happens to a missing cell of ``column``."""
        if self.action == "drop":
            return f"rows with a missing {column!r} are dropped"
        value = self.value if isinstance(self.value, str) else _fmt_number(float(self.value))  # type: ignore[arg-type]
        text = f"missing {column!r} cells are filled with the public constant {value}"
        if self.indicator:
            text += f" and flagged in the 0/1 feature {column + INDICATOR_SUFFIX!r}"
        return text


@dataclass(frozen=True)
class Categorical(Serializable):
    """One-hot encoding of a text (or coded) feature column: one 0/1 feature per level.

    Parameters
    ----------
    levels : tuple of str
        The levels, in the order of the one-hot columns ``"<column>=<level>"``. Typed levels are public (fixed
        before the data are seen, e.g. from a code list or a questionnaire). Empty: read the levels from the data
        at preparation time (sorted) — then ``levels_from_data`` is set.
    levels_from_data : bool
        True when the levels come from the data (read now, or suggested from the data by :func:`suggest_spec`):
        the level list is then a statistic of the sensitive data, flagged as not private (see
        :func:`preparation_notes`).
    other : bool or None
        Add the column ``"<column>=(other)"`` for values not among the levels. Default: yes for typed public
        levels, no for levels read from the data (no value is unseen). Without it an unseen value is a problem.
    missing_level : bool
        Encode a missing cell as the level ``"(missing)"`` (its own column ``"<column>=(missing)"``) instead of
        dropping or filling it.

    Examples
    --------
    >>> Categorical(("Biscoe", "Dream")).to_dict()
    {'levels': ['Biscoe', 'Dream'], 'levels_from_data': False, 'other': True, 'missing_level': False}
    >>> Categorical().levels_from_data, Categorical().other
    (True, False)
    """

    levels: tuple[str, ...] = ()
    levels_from_data: bool = False
    other: bool | None = None
    missing_level: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.levels, str) or not isinstance(self.levels, Iterable):
            raise InvalidParameterError(f"categorical levels must be a list of texts; got {self.levels!r}")
        levels = tuple(_level_text(v) for v in self.levels)
        seen: set[str] = set()
        for level in levels:
            if not level:
                raise InvalidParameterError("a categorical level must not be empty — remove the empty entry")
            if level in (OTHER_LEVEL, MISSING_LEVEL):
                raise InvalidParameterError(
                    f"{level!r} is added by the encoding itself — remove it from the levels (use the 'other' and "
                    f"'missing level' options)"
                )
            if level in seen:
                raise InvalidParameterError(f"the level {level!r} is listed twice — list each level once")
            seen.add(level)
        object.__setattr__(self, "levels", levels)
        check_bool("levels_from_data", self.levels_from_data)
        if not levels:
            object.__setattr__(self, "levels_from_data", True)
        if self.other is None:
            object.__setattr__(self, "other", not self.levels_from_data)
        check_bool("other", self.other)
        check_bool("missing_level", self.missing_level)


def _level_text(value: Any) -> str:
    """How a cell or a typed level is compared with the levels: stripped text; whole numbers without '.0'.

    >>> _level_text(" Dream "), _level_text(2.0), _level_text(True), _level_text(0.5)
    ('Dream', '2', 'True', '0.5')
    """
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isfinite(v) and v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return repr(v)
    return str(value).strip()


def _fmt_number(value: float) -> str:
    return str(int(value)) if value == int(value) and abs(value) < 1e15 else f"{value:g}"


def _name_tuple(what: str, values: Any) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InvalidParameterError(f"{what} must be a list of column names; got {values!r}")
    out = tuple(values)
    for v in out:
        _check_name(what.removesuffix("s") + " name", v)
    if len(set(out)) != len(out):
        raise InvalidParameterError(f"{what} lists a column twice — name each column once")
    return out


@dataclass(frozen=True)
class DataSpec(Serializable):
    """Which columns of a table a program uses, and how they are prepared.

    Every transformation is declared here (so the decision record carries it and ``python -m engine privatize
    --config`` replays it); :func:`prepare` applies exactly these and nothing else.

    Parameters
    ----------
    features : tuple of str
        Feature columns (the sensitive matrix X), in order. A categorical feature expands into its one-hot
        columns at its place; a missing-indicator follows its column.
    target : str or None
        Outcome column (consumption, low-risk label, …); never privatized, used by the program evaluation.
        Rows whose target is missing are always dropped.
    roles : dict or None
        Program column roles → column names, e.g. ``{"loan_amount": "loan_amount", "interest": "interest"}``.
    normalization : Normalization
        The map into the unit L2 ball. Public bounds are typed for the numeric features only (in order);
        one-hot and missing-indicator columns get the bounds [0, 1] automatically.
    missing : dict of str to MissingRule, or None
        Per-column rule for missing cells (``drop`` the rows, or ``fill`` with a public constant, optionally with an
        indicator feature). Not allowed for the target (its missing rows are always dropped).
    drop_missing : bool
        Drop the rows with a missing value in any used column that has no rule of its own (and is not a
        categorical feature with a missing level).
    categorical : dict of str to Categorical, or None
        Feature columns one-hot encoded, with their levels.
    dates : tuple of str
        Date columns, turned into days since 1970-01-01 (a fixed public map; times of day become fractions).
    positive_class : tuple of str
        For a text (or coded) target: the label(s) coded 1; every other label is coded 0. A numeric 0/1 target
        needs none.

    Notes
    -----
    The spec validates each field on its own and the fields against each other; whether it fits a table
    (columns exist, the target is not also a feature, one bound per numeric feature, every declared column is
    used) is checked by :func:`table_problems`, so that a dashboard can show every problem next to the control
    that fixes it.

    Examples
    --------
    >>> spec = DataSpec(("bill", "island"), target="species", positive_class=("Adelie",), drop_missing=True,
    ...                 categorical={"island": Categorical(("Biscoe", "Dream", "Torgersen"))})
    >>> DataSpec.from_json(spec.to_json()) == spec
    True
    >>> spec.to_dict()["categorical"]
    {'island': {'levels': ['Biscoe', 'Dream', 'Torgersen'], 'levels_from_data': False, 'other': True, 'missing_level': False}}
    """

    features: tuple[str, ...]
    target: str | None = None
    roles: dict[str, str] | None = None
    normalization: Normalization = field(default_factory=Normalization)
    missing: dict[str, MissingRule] | None = None
    drop_missing: bool = False
    categorical: dict[str, Categorical] | None = None
    dates: tuple[str, ...] = ()
    positive_class: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.features, str) or not isinstance(self.features, Iterable):
            raise InvalidParameterError(f"features must be a list of column names; got {self.features!r}")
        features = tuple(self.features)
        for f in features:
            _check_name("feature column name", f)
        seen: set[str] = set()
        for f in features:
            if f in seen:
                raise InvalidParameterError(f"features lists the column {f!r} twice — choose each column once")
            seen.add(f)
        object.__setattr__(self, "features", features)
        if self.target is not None:
            _check_name("target column name", self.target)
        if self.roles is not None:
            if not isinstance(self.roles, Mapping):
                raise InvalidParameterError(f"roles must map role names to column names; got {self.roles!r}")
            for role, column in self.roles.items():
                _check_name("role name", role)
                _check_name(f"column for role {role!r}", column)
            object.__setattr__(self, "roles", dict(self.roles))
        if isinstance(self.normalization, Mapping):
            object.__setattr__(self, "normalization", Normalization.from_dict(dict(self.normalization)))
        if not isinstance(self.normalization, Normalization):
            raise InvalidParameterError(
                f"normalization must be a Normalization; got {type(self.normalization).__name__}"
            )
        object.__setattr__(self, "missing", _rule_map("missing", self.missing, MissingRule))
        object.__setattr__(self, "categorical", _rule_map("categorical", self.categorical, Categorical))
        check_bool("drop_missing", self.drop_missing)
        object.__setattr__(self, "dates", _name_tuple("date columns", self.dates))
        if isinstance(self.positive_class, str) or not isinstance(self.positive_class, Iterable):
            raise InvalidParameterError(f"positive_class must be a list of labels; got {self.positive_class!r}")
        positive = tuple(_level_text(v) for v in self.positive_class)
        if any(not p for p in positive) or len(set(positive)) != len(positive):
            raise InvalidParameterError(f"positive_class must list distinct, non-empty labels; got {list(positive)}")
        object.__setattr__(self, "positive_class", positive)
        # Cross-field rules that do not depend on a table.
        if positive and self.target is None:
            raise InvalidParameterError(
                "a positive class codes the target column; choose a target or remove the positive class"
            )
        if self.target is not None:
            if self.target in (self.missing or {}):
                raise InvalidParameterError(
                    f"the target {self.target!r} has a missing-value rule, but rows whose target is missing are "
                    f"always dropped (an outcome cannot be filled in) — remove the rule"
                )
            if self.target in (self.categorical or {}):
                raise InvalidParameterError(
                    f"the target {self.target!r} is declared categorical; a text outcome is coded with a positive "
                    f"class instead — remove the encoding and choose the positive class(es)"
                )
        for column, rule in (self.missing or {}).items():
            if rule.indicator and column not in features:
                raise InvalidParameterError(
                    f"a missing-indicator is a feature column, but {column!r} is not a feature — add it to the "
                    f"features or remove the indicator"
                )
            cat = (self.categorical or {}).get(column)
            if cat is not None and cat.missing_level:
                raise InvalidParameterError(
                    f"{column!r} encodes missing cells as the level {MISSING_LEVEL!r} and also has a missing-value "
                    f"rule — keep one of the two"
                )
        both = sorted(set(self.dates) & set(self.categorical or {}))
        if both:
            raise InvalidParameterError(
                f"{both[0]!r} is declared both as a date and as categorical — choose one"
            )

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column the spec reads: features, then the target, then role columns (each once)."""
        out = list(self.features)
        if self.target is not None:
            out.append(self.target)
        out += list((self.roles or {}).values())
        return tuple(dict.fromkeys(out))

    @property
    def data_independent(self) -> bool:
        """True when no step reads a statistic of the data: the normalisation is data-independent and every
        categorical feature has typed (public) levels. Dropping rows is per record and does not change this (but n
        is released: see :func:`preparation_notes`).

        >>> DataSpec(("a",), categorical={"a": Categorical()}, normalization=Normalization("clip", False)).data_independent
        False
        """
        return self.normalization.data_independent and not any(
            c.levels_from_data for c in (self.categorical or {}).values()
        )

    @property
    def numeric_features(self) -> tuple[str, ...]:
        """Features that are not one-hot encoded (numbers and dates): the ones public bounds are typed for."""
        return tuple(f for f in self.features if f not in (self.categorical or {}))

    def key(self) -> str:
        """Canonical JSON (sorted keys): equal specs give equal keys; use it to hash or cache a spec.

        The preparation fields added later (missing values, encodings, dates, positive class) are left out while
        they hold their defaults, so a spec without them keeps the key — and the data fingerprint — it had before
        they existed.

        >>> DataSpec(("a",)).key()
        '{"features":["a"],"normalization":{"lower":[],"method":"clip","standardize":true,"upper":[]},"roles":null,"target":null}'
        """
        data = self.to_dict()
        for name, default in _LATER_DEFAULTS.items():
            if data.get(name) == default:
                del data[name]
        return json.dumps(data, sort_keys=True, allow_nan=False, separators=(",", ":"))

    def expands_to(self, names: Iterable[str]) -> bool:
        """Whether ``names`` are the prepared feature names this spec can produce (one-hot and indicator columns
        in place). Used to check a decision record whose fingerprint lists the expanded names.

        >>> DataSpec(("a", "c"), categorical={"c": Categorical(("x", "y"))}).expands_to(["a", "c=x", "c=y", "c=(other)"])
        True
        """
        names = list(names)
        i = 0
        for column in self.features:
            cat = (self.categorical or {}).get(column)
            if cat is None:
                if i >= len(names) or names[i] != column:
                    return False
                i += 1
            else:
                start = i
                while i < len(names) and names[i].startswith(column + "="):
                    i += 1
                if i == start:
                    return False
            rule = (self.missing or {}).get(column)
            if rule is not None and rule.indicator:
                if i >= len(names) or names[i] != column + INDICATOR_SUFFIX:
                    return False
                i += 1
        return i == len(names)


#: DataSpec fields added with issue 9, and their JSON at the default (left out of :meth:`DataSpec.key`).
_LATER_DEFAULTS: dict[str, Any] = {
    "missing": None, "drop_missing": False, "categorical": None, "dates": [], "positive_class": [],
}


def _rule_map(what: str, value: Any, cls: type) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidParameterError(f"{what} must map column names to rules; got {value!r}")
    out = {}
    for column, rule in value.items():
        _check_name(f"{what} column name", column)
        if isinstance(rule, Mapping):
            rule = cls.from_dict(dict(rule))
        if not isinstance(rule, cls):
            raise InvalidParameterError(f"the {what} rule for {column!r} must be a {cls.__name__}; got {rule!r}")
        out[column] = rule
    return out or None


def preparation_steps(spec: DataSpec, levels: Mapping[str, tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """Plain-language list of the declared transformations before the normalisation, in the order applied.

    ``levels`` are the levels actually encoded (:attr:`PreparedData.levels`), shown for levels read from the
    data. Each step says whether it is public (fixed without the data) or reads the data.

    >>> spec = DataSpec(("a", "c"), target="t", positive_class=("yes",), dates=("a",),
    ...                 categorical={"c": Categorical(("x", "y"), missing_level=True)})
    >>> for step in preparation_steps(spec): print(step)
    Rows whose target 't' is missing are always dropped.
    'a' is turned into days since 1970-01-01 (a public map).
    'c' is one-hot encoded with the public levels x, y, plus '(other)' for any other value and '(missing)' for a missing cell.
    The target 't' is coded 1 for yes and 0 for every other label.
    """
    steps: list[str] = []
    rules = spec.missing or {}
    if spec.target is not None:
        steps.append(f"Rows whose target {spec.target!r} is missing are always dropped.")
    for column, rule in rules.items():
        steps.append(rule.describe(column)[0].upper() + rule.describe(column)[1:] + ".")
    if spec.drop_missing:
        others = [c for c in spec.columns if c not in rules and c != spec.target]
        if others:
            steps.append(
                "Rows with a missing value in any other used column ("
                + ", ".join(repr(c) for c in others)
                + ") are dropped."
            )
    for column in spec.dates:
        steps.append(f"{column!r} is turned into days since 1970-01-01 (a public map).")
    for column, cat in (spec.categorical or {}).items():
        extra = []
        if cat.other:
            extra.append(f"{OTHER_LEVEL!r} for any other value")
        if cat.missing_level:
            extra.append(f"{MISSING_LEVEL!r} for a missing cell")
        tail = (", plus " + " and ".join(extra)) if extra else ""
        if cat.levels_from_data:
            shown = (levels or {}).get(column, cat.levels)
            listed = f" ({_shown_levels(list(shown))})" if shown else ""
            steps.append(
                f"{column!r} is one-hot encoded with the levels read from the data{listed}{tail} — not private."
            )
        else:
            steps.append(f"{column!r} is one-hot encoded with the public levels {', '.join(cat.levels)}{tail}.")
    if spec.positive_class and spec.target is not None:
        steps.append(
            f"The target {spec.target!r} is coded 1 for {', '.join(spec.positive_class)} and 0 for every other label."
        )
    return tuple(steps)


def preparation_notes(
    spec: DataSpec, levels: Mapping[str, tuple[str, ...]] | None = None, rows_dropped: int = 0
) -> tuple[str, ...]:
    """What the declared transformations reveal beyond the mechanism's guarantee (next to :func:`privacy_note`).

    Levels read from the data are flagged as not private, exactly as a data-dependent normalisation is; dropping
    rows (declared, or ``rows_dropped`` > 0 rows dropped for a missing target) is done record by record, but the
    number of records kept is published with the release. Filling with a
    public constant, indicators, typed levels, dates and the positive class are public maps applied to each
    record on its own (the target is never released).

    >>> preparation_notes(DataSpec(("c",), categorical={"c": Categorical()}))[0].startswith("Not private by itself")
    True
    >>> preparation_notes(DataSpec(("c",), categorical={"c": Categorical(("x", "y"))}))
    ()
    """
    notes: list[str] = []
    for column, cat in (spec.categorical or {}).items():
        if cat.levels_from_data:
            shown = (levels or {}).get(column, cat.levels)
            listed = f" ({_shown_levels(list(shown))})" if shown else ""
            notes.append(
                f"Not private by itself: the levels of {column!r}{listed} were read from the data — the list of "
                f"levels is a statistic of the sensitive data (a rare level can reveal that one record is present) "
                f"and is not covered by the mechanism's guarantee. Type the levels from public knowledge (a code "
                f"list, a questionnaire) to cover it."
            )
    if rows_dropped > 0 or spec.drop_missing or any(r.action == "drop" for r in (spec.missing or {}).values()):
        notes.append(
            "Rows with a missing value are dropped record by record (no statistic of the data is used), but the "
            "number of records kept, n, is released with the data and reveals how many records had missing "
            "values."
        )
    return tuple(notes)


def _check_name(what: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise InvalidParameterError(f"{what} must be non-empty text; got {value!r}")


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


def _present(series: pd.Series) -> np.ndarray:
    """Mask of the cells that hold a value (not NaN/None/empty text/'NA'); ±inf counts as present."""
    if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_datetime64_any_dtype(series.dtype):
        return series.notna().to_numpy(dtype=bool)
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
    present = _present(series)
    out = np.full(len(series), "", dtype=object)
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


def _shown_levels(levels: list[str], limit: int = 8) -> str:
    return ", ".join(levels[:limit]) + (f", … ({len(levels) - limit} more)" if len(levels) > limit else "")


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
        return TableProblem(
            f"{role_text} {column!r} has an infinite value in {row_label(first)} — replace it with a finite "
            f"number or drop the row",
            control=control, column=column, row=first,
        )
    huge = np.abs(values) > MAX_ABS_VALUE
    if huge.any():
        i = int(np.argmax(huge))
        first = int(rows[i])
        return TableProblem(
            f"{role_text} {column!r} has the value {values[i]:.3g} in {row_label(first)}, too large to "
            f"compute with (limit {MAX_ABS_VALUE:.0e}) — rescale the column (e.g. to thousands)",
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
        problem = TableProblem(f"expected a table (pandas DataFrame); got {type(frame).__name__}", control="file")
        return [problem], _Decoded(keep=np.zeros(0, dtype=bool))
    if not isinstance(spec, DataSpec):
        raise InvalidParameterError(f"spec must be a DataSpec; got {type(spec).__name__}")
    problems: list[TableProblem] = []
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
        if column not in present:
            continue
        rule = rules.get(column)
        cat = categorical.get(column) if column in spec.features else None
        drops = (
            column == spec.target
            or (rule is not None and rule.action == "drop")
            or (rule is None and spec.drop_missing and not (cat is not None and cat.missing_level))
        )
        if drops and not present[column].all():
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
    levels = cat.levels or tuple(sorted({t for t in kept[~kept_missing]}))
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
    engine.data.preparation.TableProblem: feature column 'b' has the same value (1) in every row, so it carries no information and cannot be standardised — remove it from the features
    """
    problems = table_problems(frame, spec)
    if problems:
        raise problems[0]


# ----------------------------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------------------------


def _megabytes(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / 1024 / 1024:.1f} MB"
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"


def _read_source(source: Any, filename: str | None, max_bytes: int | None) -> tuple[str | None, bytes]:
    if max_bytes is not None:
        max_bytes = int(check_interval("max_bytes", max_bytes, 1, None))
    name = filename
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        name = name or path.name
        if not path.exists():
            raise TableProblem(f"there is no file at {str(path)!r} — check the path", control="file")
        if path.is_dir():
            raise TableProblem(f"{str(path)!r} is a folder, not a file — name the CSV or Parquet file", control="file")
        size = path.stat().st_size
        if max_bytes is not None and size > max_bytes:
            raise _too_big(name, size, max_bytes)
        return name, path.read_bytes()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read() if max_bytes is None else source.read(max_bytes + 1)
        if isinstance(raw, str):
            raise TableProblem(
                "the file was opened as text; open it in binary mode ('rb') or pass its bytes", control="file"
            )
        data = bytes(raw)
        if name is None and isinstance(getattr(source, "name", None), str):
            name = os.path.basename(source.name)
    else:
        raise TableProblem(
            f"cannot read a table from {type(source).__name__}; pass a file path, the file's bytes or a binary "
            f"file object",
            control="file",
        )
    if max_bytes is not None and len(data) > max_bytes:
        raise _too_big(name, None if hasattr(source, "read") else len(data), max_bytes)
    return name, data


def _too_big(name: str | None, size: int | None, limit: int) -> TableProblem:
    """``size`` None means "more than the limit" (a stream read only up to the limit)."""
    label = f"'{name}'" if name else "the data"
    how_big = f"is {_megabytes(size)}, above" if size is not None else "is larger than"
    return TableProblem(
        f"{label} {how_big} the limit of {_megabytes(limit)} — use a sample of the rows here, or run the full "
        f"release with 'python -m engine privatize'",
        control="file",
    )


def load_table(source: Any, *, filename: str | None = None, max_bytes: int | None = None) -> pd.DataFrame:
    """Read a CSV or Parquet table from a path, bytes or a binary file object; nothing is written to disk.

    The format is chosen by the file name's extension (``.csv``/``.tsv``/``.txt`` or ``.parquet``/``.pq``) and
    the content (Parquet files start with ``PAR1``). CSV must be UTF-8 text (a byte-order mark is allowed);
    the delimiter is a comma, or a semicolon/tab if the header uses one. Column names become strings.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file object
        Where the table is. An uploaded file's bytes plus ``filename`` is what the dashboard passes.
    filename : str, optional
        Name used for the format and in messages (defaults to the path's or file object's name).
    max_bytes : int, optional
        Reject larger inputs (see :data:`DEFAULT_MAX_BYTES`).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    TableProblem
        (a :class:`~engine.errors.DataValidationError`, ``control="file"``) for a missing, empty, too large,
        binary, badly encoded, ragged or otherwise unreadable file, with a message saying how to fix it.

    Examples
    --------
    >>> load_table(b"a,b\\n1,2\\n3,4\\n", filename="x.csv").shape
    (2, 2)
    >>> load_table(b"a,b\\n1,2\\n3,4,5\\n", filename="x.csv")
    Traceback (most recent call last):
    ...
    engine.data.preparation.TableProblem: could not read 'x.csv' as CSV: line 3 has 3 fields, expected 2 (as in the header) — fix that line or export the file again as CSV
    """
    name, data = _read_source(source, filename, max_bytes)
    label = f"'{name}'" if name else "the uploaded data"
    if not data.strip():
        raise TableProblem(
            f"{label} is empty — choose a file with a header row and at least {MIN_ROWS} data rows", control="file"
        )
    ext = Path(name).suffix.lower() if name else ""
    if data[:4] == b"PAR1":
        frame = _read_parquet(label, data)
    elif ext in PARQUET_EXTENSIONS:
        raise _file_error(
            label,
            "Parquet",
            "it does not start with the Parquet marker 'PAR1'",
            "export it again as Parquet, or as CSV with a .csv name",
        )
    elif data[:2] == b"PK":
        raise TableProblem(
            f"{label} is a ZIP archive or an Excel workbook, not a CSV or Parquet file — open it and save the "
            f"sheet as 'CSV UTF-8'",
            control="file",
        )
    elif data[:2] == b"\x1f\x8b":
        raise TableProblem(f"{label} is compressed (gzip) — decompress it and upload the CSV", control="file")
    elif ext in CSV_EXTENSIONS:
        frame = _read_csv(label, data)
    else:
        raise TableProblem(
            f"{label} has the unsupported file type {ext!r} — upload a CSV (.csv) or Parquet (.parquet) file",
            control="file",
        )
    frame.columns = [str(c) for c in frame.columns]
    if frame.shape[1] == 0:
        raise TableProblem(f"{label} has no columns — check that the first line is a header", control="file")
    if len(frame) == 0:
        raise TableProblem(
            f"{label} has a header but no data rows — add at least {MIN_ROWS} data rows", control="file"
        )
    return frame


_PANDAS_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _line_of(data: bytes, position: int) -> int:
    """1-based line number of a byte position."""
    return data.count(b"\n", 0, position) + 1


def _read_csv(label: str, data: bytes) -> pd.DataFrame:
    kind, fix = "CSV", "export the file again as CSV"
    nul = data.find(b"\x00")
    if nul >= 0:
        raise _file_error(
            label,
            kind,
            f"it contains binary data (a NUL byte on line {_line_of(data, nul)})",
            "export it again as CSV (UTF-8 text; UTF-16 files also look like this)",
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        raise _file_error(
            label,
            kind,
            f"line {line} contains the byte 0x{data[exc.start]:02x}, which is not UTF-8 text",
            "save the file with UTF-8 encoding (in Excel: 'CSV UTF-8')",
        ) from None
    first_line = text.lstrip("\r\n").split("\n", 1)[0]
    counts = {sep: first_line.count(sep) for sep in (",", ";", "\t")}
    sep = "," if counts[","] or not any(counts.values()) else max(counts, key=lambda s: counts[s])
    try:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
        header: list[str] | None = None
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if header is None:
                header = [h.strip() for h in row]
                seen: dict[str, int] = {}
                for i, h in enumerate(header):
                    if h in seen and h:
                        raise _file_error(
                            label,
                            kind,
                            f"the header names two columns {h!r} (columns {seen[h] + 1} and {i + 1})",
                            "rename one of them so every column name is unique",
                        )
                    seen[h] = i
                continue
            if len(row) != len(header):
                raise _file_error(
                    label,
                    kind,
                    f"line {reader.line_num} has {len(row)} field{'s' if len(row) != 1 else ''}, expected "
                    f"{len(header)} (as in the header)",
                    "fix that line or " + fix,
                )
    except csv.Error as exc:
        raise _file_error(label, kind, f"{exc} (near line {reader.line_num})", fix) from None
    try:
        return pd.read_csv(io.BytesIO(data), sep=sep, encoding="utf-8-sig", skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise TableProblem(f"{label} is empty — choose a file with a header row and data rows", control="file") from None
    except (pd.errors.ParserError, ValueError) as exc:
        message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        match = _PANDAS_FIELDS.search(message)
        if match:
            expected, line, saw = match.groups()
            message = f"line {line} has {saw} fields, expected {expected}"
        raise _file_error(label, kind, message, fix) from None


def _read_parquet(label: str, data: bytes) -> pd.DataFrame:
    import pyarrow  # pandas' Parquet engine; imported here to keep module import light
    import pyarrow.parquet

    try:
        table = pyarrow.parquet.read_table(io.BytesIO(data))
    except (pyarrow.ArrowException, OSError, ValueError, TypeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _file_error(label, "Parquet", reason, "export it again as Parquet or as CSV") from None
    nested = [f.name for f in table.schema if pyarrow.types.is_nested(f.type)]
    if nested:  # lists, structs and maps are not table cells a feature can hold
        shown = ", ".join(repr(n) for n in nested[:5]) + (f" and {len(nested) - 5} more" if len(nested) > 5 else "")
        raise _file_error(
            label, "Parquet", f"column(s) {shown} hold nested values (lists, structs or maps), not one value per cell",
            "flatten them into one column per value, or leave them out of the export",
        )
    try:
        return table.to_pandas()
    except (pyarrow.ArrowException, ValueError, TypeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _file_error(label, "Parquet", reason, "export it again as Parquet or as CSV") from None


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
        Global factor applied to z: 1 for ``clip`` (rows are clipped individually), 1/M for ``maxnorm``,
        1/√d for ``bounds``.
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

        Equal to ``b / row_factor``. For ``clip`` it is a sufficient condition: clipping to the unit ball never
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
        elif method == "bounds":
            lines[0] += f" (B × √d, d = {self.d})"
        lines[0] += "."
        lines.append(f"For a difference in one feature only, that is at most: {per_feature}.")
        if method == "clip":
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
#: ``maxnorm`` warns when the largest row norm exceeds this multiple of the 99th percentile of the row norms …
OUTLIER_RATIO = 3.0
#: … and reports the share of prepared rows whose norm falls below this.
SQUASHED_NORM = 0.2


def normalization_warnings(prepared: PreparedData) -> tuple[str, ...]:
    """Warnings about a preparation that throws information away (issue 9, item 5), in plain language.

    * ``clip``: more than :data:`CLIP_WARN_SHARE` of the rows had norm > 1 after standardising and were shrunk
      onto the sphere (their lengths are lost): say the share and suggest public bounds.
    * ``maxnorm``: the largest row norm M exceeds :data:`OUTLIER_RATIO` × the 99th percentile q of the row norms
      (one outlier sets the scale of every row): say M, q and the share of rows squashed below
      :data:`SQUASHED_NORM`.

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
    if method == "clip":
        share = prepared.clipped_rows / n
        if share > CLIP_WARN_SHARE:
            out.append(
                f"clip: {share:.0%} of the rows ({prepared.clipped_rows:,} of {n:,}) had a norm above 1 and were "
                f"shrunk onto the unit sphere, so their lengths (how far each record is from the centre) are lost "
                f"— consider public bounds (method 'bounds') chosen from public knowledge, which also make the "
                f"preparation data-independent"
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


def _shrink_into_ball(x: np.ndarray) -> None:
    """Scale (in place) any row whose computed norm exceeds 1 by rounding so that it is ≤ 1 exactly."""
    for _ in range(4):
        norms = np.linalg.norm(x, axis=1)
        over = norms > 1.0
        if not over.any():
            return
        x[over] *= np.nextafter(1.0 / norms[over], 0.0)[:, None]
    raise AssertionError("rows could not be brought into the unit ball")  # unreachable for finite input


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
    columns = [c for f in spec.features for c in decoded.features[f]]
    names = tuple(name for name, _, _ in columns)
    kinds = tuple(kind for _, _, kind in columns)
    raw = np.column_stack([values for _, values, _ in columns])
    unit_cols = np.array([kind != "numeric" for kind in kinds])  # one-hot and indicator columns: 0/1, public
    n, d = raw.shape
    norm = spec.normalization
    clipped_rows = clipped_values = 0
    if norm.method == "bounds":
        lower = np.zeros(d)
        upper = np.ones(d)
        lower[~unit_cols] = norm.lower
        upper[~unit_cols] = norm.upper
        clipped_values = int(((raw < lower) | (raw > upper)).sum())
        bounded = np.clip(raw, lower, upper)
        if norm.standardize:
            centre = (lower + upper) / 2.0
            scale = (upper - lower) / 2.0
        else:
            centre = np.zeros(d)
            scale = np.maximum(np.abs(lower), np.abs(upper))
        z = np.clip((bounded - centre) / scale, -1.0, 1.0)
        row_factor = 1.0 / math.sqrt(d)
        input_norms = np.linalg.norm(z, axis=1)
        x = z * row_factor
    else:
        if norm.standardize:
            # Mean and sd of each column computed on the column divided by its largest |value| (an exact
            # power-free rescaling), so tiny (1e-250) or huge (1e250) values neither underflow nor overflow.
            unit = np.max(np.abs(raw), axis=0)
            unit[unit == 0] = 1.0
            centre = (raw / unit).mean(axis=0) * unit
            scale = (raw / unit).std(axis=0) * unit
            centre[unit_cols] = 0.0  # one-hot and indicator columns keep their public 0/1 scale
            scale[unit_cols] = 1.0
        else:
            centre = np.zeros(d)
            scale = np.ones(d)
        # Spreads that underflow to 0 (values ~1e-300) or overflow make x non-finite here; the check below turns
        # that into a message naming the column instead of a ZeroDivisionError or a warning.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            x = raw - centre  # z, then scaled in place into x
            x /= scale
            # Row norms of each row divided by its own largest |entry| (row by row, so a row's result never
            # depends on other rows): no underflow for rows of tiny values, no overflow for huge ones.
            big = np.max(np.abs(x), axis=1, keepdims=True)
            big[~((big > 0) & np.isfinite(big))] = 1.0
            input_norms = np.linalg.norm(x / big, axis=1) * big[:, 0]
            if norm.method == "clip":
                row_factor = 1.0
                clipped_rows = int((input_norms > 1.0).sum())
                x /= np.maximum(input_norms, 1.0)[:, None]  # rows of norm ≤ 1 are divided by exactly 1
            else:
                biggest = float(input_norms.max())
                row_factor = 1.0 / biggest if biggest > 0 else math.inf
                x /= biggest
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(scale)) and np.all(scale > 0)):
        bad = int(np.flatnonzero(~(np.isfinite(scale) & (scale > 0)))[0]) if not np.all(scale > 0) else 0
        raise TableProblem(
            f"feature column {names[bad]!r} cannot be scaled (its spread is zero or too large) — rescale "
            f"or remove it",
            control="features",
            column=names[bad],
        )
    _shrink_into_ball(x)
    y = decoded.y.copy() if decoded.y is not None else None
    extras = {role: _readonly(decoded.extras[role].copy()) for role in (spec.roles or {})}
    return PreparedData(
        x=_readonly(np.ascontiguousarray(x)),
        y=None if y is None else _readonly(y),
        feature_names=names,
        spec=spec,
        extras=extras,
        fingerprint=_fingerprint(frame, spec, decoded.raw),
        centre=_readonly(np.asarray(centre, dtype=float)),
        scale=_readonly(np.asarray(scale, dtype=float)),
        row_factor=float(row_factor),
        input_norms=_readonly(input_norms),
        clipped_rows=clipped_rows,
        clipped_values=clipped_values,
        feature_kinds=kinds,
        rows_in_table=len(frame),
        dropped_rows=dict(decoded.dropped),
        filled_cells=dict(decoded.filled),
        levels=dict(decoded.levels),
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
    "feature_names",
    "fingerprint",
    "load_table",
    "normalization_warnings",
    "preparation_notes",
    "preparation_steps",
    "prepare",
    "privacy_note",
    "row_label",
    "table_problems",
    "validate_table",
]
