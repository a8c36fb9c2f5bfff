"""Declared parameter constraints: each configuration states the range of its fields once, as data.

A configuration class lists its fields' constraints in a ``PARAMETER_CONSTRAINTS`` class attribute and calls
:func:`check_declared` from ``__post_init__``; the invalid-input meta-test
(``tests/engine/test_public_api_validation.py``) reads the same declarations to generate values just outside each
range (:meth:`violations`) and asserts that every one is refused with a message naming the field. A range is
therefore typed once: changing it changes both what the engine accepts and what the test tries. This follows
scikit-learn's ``_parameter_constraints`` (``Interval(Real, 0, None, closed="neither")``, ``StrOptions``) read by
``validate_params`` and by ``sklearn/tests/test_public_functions.py``.

Constraints that relate two fields (``lower < upper``, the classical Gaussian calibration's ε < 1, a δ the
mechanism needs only in one mode) stay in ``__post_init__`` after :func:`check_declared`; the meta-test lists them
separately.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Example:
...     epsilon: float = 1.0
...     PARAMETER_CONSTRAINTS = {"epsilon": Real(0, None, closed="neither")}
...     def __post_init__(self):
...         check_declared(self)
>>> Example(epsilon=-1.0)
Traceback (most recent call last):
...
engine.errors.InvalidParameterError: epsilon must be in (0, inf); got -1.0
>>> Real(0, 1, closed="left").violations()
(-0.5, 1.0, 1.5)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from engine.errors import InvalidParameterError
from engine.validation import Closed, check_bool, check_choice, check_integer, check_interval

__all__ = ["Choice", "Constraint", "Each", "Flag", "Integer", "Real", "check_declared", "declared_constraints"]


class Constraint(Protocol):
    """What every declared constraint offers: a check (returns the normalised value) and values that break it."""

    @property
    def label(self) -> str: ...

    @property
    def optional(self) -> bool: ...

    def check(self, name: str, value: Any) -> Any: ...

    def violations(self) -> tuple[Any, ...]: ...


def _beyond(bound: float, direction: int) -> float:
    """A value clearly past ``bound`` in ``direction`` (−1 below, +1 above): half the bound's size, at least 0.5."""
    return float(bound + direction * max(0.5, abs(bound) / 2))


@dataclass(frozen=True)
class Real:
    """A finite real number in an interval; ``None`` bounds are open ends (``Real(0, None, closed="neither")`` is
    (0, ∞))."""

    low: float | None
    high: float | None
    closed: Closed = "both"
    hint: str = ""
    label: str = ""
    optional: bool = False  # None is allowed (the field means "not given")

    def check(self, name: str, value: Any) -> float:
        return check_interval(name, value, self.low, self.high, closed=self.closed, hint=self.hint)

    def violations(self) -> tuple[Any, ...]:
        out: list[float] = []
        if self.low is not None:
            if self.closed not in ("both", "left"):
                out.append(float(self.low))
            out.append(_beyond(self.low, -1))
        if self.high is not None:
            if self.closed not in ("both", "right"):
                out.append(float(self.high))
            out.append(_beyond(self.high, +1))
        return tuple(out)


@dataclass(frozen=True)
class Integer:
    """A whole number in ``[low, high]`` (inclusive; ``None`` = unbounded). ``3.0`` is accepted as 3."""

    low: int | None
    high: int | None = None
    hint: str = ""
    label: str = ""
    optional: bool = False

    def check(self, name: str, value: Any) -> int:
        return check_integer(name, value, self.low, self.high, hint=self.hint)

    def violations(self) -> tuple[Any, ...]:
        out: list[int] = []
        if self.low is not None:
            out += [self.low - 1]
        if self.high is not None:
            out += [self.high + 1]
        return tuple(out)


@dataclass(frozen=True)
class Choice:
    """One of a closed set of strings."""

    options: tuple[str, ...]
    hint: str = ""
    label: str = ""
    optional: bool = False

    def check(self, name: str, value: Any) -> str:
        return check_choice(name, value, self.options, hint=self.hint)

    def violations(self) -> tuple[Any, ...]:
        return ("not-an-option",)


@dataclass(frozen=True)
class Flag:
    """True or False (not 1, not "yes")."""

    label: str = ""
    optional: bool = False

    def check(self, name: str, value: Any) -> bool:
        return check_bool(name, value)

    def violations(self) -> tuple[Any, ...]:
        return ("yes", 1)


@dataclass(frozen=True)
class Each:
    """A tuple whose entries each satisfy ``item``, with at least ``min_len`` entries."""

    item: Real | Integer | Choice
    min_len: int = 1
    label: str = ""
    optional: bool = False

    def check(self, name: str, value: Any) -> tuple[Any, ...]:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise InvalidParameterError(f"{name} must be a list of numbers; got {value!r}")
        entries = tuple(value)
        if len(entries) < self.min_len:
            if isinstance(self.item, Choice):
                allowed = "one of " + ", ".join(repr(o) for o in self.item.options)
            elif isinstance(self.item, Integer):
                allowed = "whole numbers"
            else:
                allowed = "numbers"
            raise InvalidParameterError(f"{name} must list at least {self.min_len} value ({allowed}); got {value!r}")
        return tuple(self.item.check(name, v) for v in entries)

    def violations(self) -> tuple[Any, ...]:
        empty: tuple[Any, ...] = ((),) if self.min_len > 0 else ()
        return empty + tuple((v,) for v in self.item.violations())


def declared_constraints(cls: type) -> Mapping[str, Constraint]:
    """The class's ``PARAMETER_CONSTRAINTS`` (empty if it declares none)."""
    return getattr(cls, "PARAMETER_CONSTRAINTS", {})


def check_declared(obj: Any) -> None:
    """Check every declared field of ``obj`` (a frozen dataclass) and store the checked value: reals as ``float``
    (a NumPy scalar becomes a plain number, so the configuration writes to JSON), whole numbers as ``int``
    (3.0 → 3), lists as tuples.

    Fields are checked in declaration order, so the first bad field is the one reported.
    """
    for name, constraint in declared_constraints(type(obj)).items():
        value = getattr(obj, name)
        if value is None and constraint.optional:
            continue
        object.__setattr__(obj, name, constraint.check(constraint.label or name, value))
