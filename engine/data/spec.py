r"""The declared preparation of a table: :class:`DataSpec` and its parts.

A :class:`DataSpec` names the feature, target and program columns and declares every step that turns the table
into rows in the unit L2 ball (missing values with :class:`MissingRule`, text features one-hot encoded with
:class:`Categorical`, dates, the positive class, the :class:`Normalization`). It is part of the configuration, so
the decision record carries it and ``python -m engine privatize --config`` replays it.
:func:`preparation_steps` and :func:`preparation_notes` say what the steps do and what is not private about them;
:func:`privacy_note` says whether the normalisation depends on the data. Applying a spec is
:func:`engine.data.preparation.prepare`; see that module for the row maps.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Setting and case studies (standardise, then scale rows into the unit ball).
.. [2] The authors' replication code divides every row by the largest row norm
       (``shared/reference/tdp-replication/NOTES.md``): ``method="maxnorm"``, ``standardize=False``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from engine.constraints import Choice, Constraint, Flag, check_declared
from engine.errors import InvalidParameterError
from engine.serialization import Serializable
from engine.validation import check_bool, check_choice, check_integer, check_real

__all__ = [
    "INDICATOR_SUFFIX",
    "METHODS",
    "MISSING_LEVEL",
    "OTHER_LEVEL",
    "SCALED_SPREAD",
    "Categorical",
    "DataSpec",
    "FeatureKind",
    "Method",
    "MissingRule",
    "Normalization",
    "preparation_notes",
    "preparation_steps",
    "privacy_note",
]

Method = Literal["clip", "scaled", "maxnorm", "bounds"]

#: Normalisation methods and their one-line descriptions (for the UI's radio buttons and the CLI's help).
METHODS: dict[str, str] = {
    "clip": "scale each row whose norm exceeds 1 back onto the unit sphere (others unchanged)",
    "scaled": "divide every row by 2√m (m features, a text feature counted once) so a typical row has length ½, "
              "then scale the few rows still longer than 1 back onto the unit sphere",
    "maxnorm": "divide every row by the largest row norm in the data (the authors' code)",
    "bounds": "map public per-feature bounds onto the unit ball; no statistic of the data is used",
}


# ----------------------------------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Normalization(Serializable):
    """How feature rows are put into the unit L2 ball (see the module docstring for the exact maps).

    Parameters
    ----------
    method : {"clip", "scaled", "maxnorm", "bounds"}
        ``clip`` (default): after centring/scaling, rows of norm > 1 are scaled to norm 1.
        ``scaled``: after centring/scaling, every row is divided by :data:`SCALED_SPREAD` × √m, with m the number of
        feature groups (a numeric feature, a text feature's one-hot group and a missing-indicator count 1 each), and
        rows still longer than 1 are scaled to norm 1. A standardised feature adds about 1 to a row's squared length
        and a one-hot group exactly 1, so a typical row lands at length ½ and only rows more than twice the typical
        length are clipped — ``clip`` clips nearly every row once there are two features (or one numeric and one
        text feature). The suggested default for an uploaded table (:func:`engine.data.profile.suggest_spec`).
        ``maxnorm``: every row is divided by the largest row norm (the authors' replication code).
        ``bounds``: public per-feature bounds ``lower``/``upper`` define the map; the data are not consulted.
    standardize : bool
        Centre and scale each column before the row map. For ``clip``, ``scaled`` and ``maxnorm`` this uses the column's
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

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "method": Choice(tuple(METHODS), label="normalization method",
                         hint="clip (default), scaled (suggested for uploads), maxnorm (authors' code) or bounds"),
        "standardize": Flag(),
    }

    def __post_init__(self) -> None:
        check_declared(self)
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
        return self.method == "bounds" or (self.method in ("clip", "scaled") and not self.standardize)

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
        second = {
            "clip": "then scale each row whose L2 norm exceeds 1 back to norm 1",
            "scaled": f"then divide every row by {SCALED_SPREAD:g}√m (m = the number of features, a text feature "
                      "counted once: each adds about 1 to a standardised row's squared length, so a typical row "
                      "has length ½) and scale the few rows still longer than 1 back to norm 1",
        }.get(self.method, "then divide every row by the largest row L2 norm in the data")
        return f"{first}, {second}."


#: ``scaled`` divides each row by this multiple of √m: a typical standardised row lands at length 1/SCALED_SPREAD.
SCALED_SPREAD = 2.0


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
    min_count : int
        Group rare levels: read the levels from the data (``levels`` empty) and keep as a column only those held
        by at least ``min_count`` of the rows kept; every other value goes to ``"<column>=(other)"`` (implies
        ``other``). 0 (the default): no grouping. Which levels are rare is read from the data, so it is flagged
        as not private like every level list read from the data. Left out of :meth:`to_dict` at 0, so a spec
        without it keeps its JSON (and the data fingerprint) from before it existed.

    Examples
    --------
    >>> Categorical(("Biscoe", "Dream")).to_dict()
    {'levels': ['Biscoe', 'Dream'], 'levels_from_data': False, 'other': True, 'missing_level': False}
    >>> Categorical().levels_from_data, Categorical().other
    (True, False)
    >>> Categorical(min_count=30).to_dict()
    {'levels': [], 'levels_from_data': True, 'other': True, 'missing_level': False, 'min_count': 30}
    """

    levels: tuple[str, ...] = ()
    levels_from_data: bool = False
    other: bool | None = None
    missing_level: bool = False
    min_count: int = 0

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
        object.__setattr__(self, "min_count", check_integer(
            "min_count", self.min_count, 0, None, hint="rows a level needs to keep its own column; 0 = no grouping"))
        if self.min_count:
            if levels:
                raise InvalidParameterError(
                    f"grouping levels seen in fewer than {self.min_count} rows reads the levels from the data; got "
                    f"typed levels too ({_shown_levels(list(levels))}) — remove the levels or the grouping"
                )
            if self.other is False:
                raise InvalidParameterError(
                    "grouping rare levels puts them into '(other)'; other=False leaves them nowhere — remove other=False"
                )
            object.__setattr__(self, "other", True)
        if self.other is None:
            object.__setattr__(self, "other", not self.levels_from_data)
        check_bool("other", self.other)
        check_bool("missing_level", self.missing_level)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if not out.get("min_count"):
            out.pop("min_count", None)
        return out


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


def _shown_levels(levels: list[str], limit: int = 8) -> str:
    return ", ".join(levels[:limit]) + (f", … ({len(levels) - limit} more)" if len(levels) > limit else "")


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


def _rule_map(what: str, value: Any, cls: type[Any]) -> dict | None:
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
            if cat.min_count:
                tail = tail.replace(f"{OTHER_LEVEL!r} for any other value",
                                    f"{OTHER_LEVEL!r} for the levels held by fewer than {cat.min_count} rows")
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
            rare = (f" (and which levels are held by fewer than {cat.min_count} rows, grouped into "
                    f"{OTHER_LEVEL!r})" if cat.min_count else "")
            notes.append(
                f"Not private by itself: the levels of {column!r}{listed} were read from the data{rare} — the list "
                f"of levels is a statistic of the sensitive data (a rare level can reveal that one record is "
                f"present) and is not covered by the mechanism's guarantee. Type the levels from public knowledge "
                f"(a code list, a questionnaire) to cover it."
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
