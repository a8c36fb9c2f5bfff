"""Shared parameter checks: one message shape for every bad argument.

Each check names the parameter, the allowed set, the value received and (optionally) a hint saying what to do:

    epsilon must be in (0, 1) for the classical Gaussian mechanism; got 1.5 — lower ε or use the analytic calibration

Public engine functions validate their inputs once, at the boundary, with these helpers; private helpers assume
valid input.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Literal

import numpy as np

from engine.errors import InvalidParameterError

Closed = Literal["both", "left", "right", "neither"]


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return repr(value)


def _interval_text(low: float | None, high: float | None, closed: Closed) -> str:
    left = "[" if closed in ("both", "left") and low is not None else "("
    right = "]" if closed in ("both", "right") and high is not None else ")"
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    return f"{left}{lo}, {hi}{right}"


def _message(name: str, allowed: str, value: object, hint: str) -> str:
    text = f"{name} must be {allowed}; got {_fmt(value)}"
    return f"{text} — {hint}" if hint else text


def check_real(name: str, value: object, *, hint: str = "") -> float:
    """Return ``value`` as a finite float, or raise :class:`InvalidParameterError`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(_message(name, "a real number", value, hint))
    out = float(value)
    if not math.isfinite(out):
        raise InvalidParameterError(_message(name, "a finite number", value, hint))
    return out


def check_interval(
    name: str,
    value: object,
    low: float | None,
    high: float | None,
    *,
    closed: Closed = "both",
    hint: str = "",
    allow_inf: bool = False,
) -> float:
    """Return ``value`` as a float if it lies in the interval, else raise :class:`InvalidParameterError`.

    Infinite values are rejected unless ``allow_inf`` (an interval written "(0, inf)" is open at infinity).

    >>> check_interval("delta", 0.5, 0, 1, closed="left")
    0.5
    >>> check_interval("epsilon", 1.5, 0, 1, closed="neither")
    Traceback (most recent call last):
    ...
    engine.errors.InvalidParameterError: epsilon must be in (0, 1); got 1.5
    """
    # The interval's text is built only for a message: these checks run thousands of times per attack.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(_message(name, f"a number in {_interval_text(low, high, closed)}", value, hint))
    x = float(value)
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        allowed = "in " + _interval_text(low, high, closed)
        raise InvalidParameterError(_message(name, f"finite and {allowed}" if math.isinf(x) else allowed, value, hint))
    ok = True
    if low is not None:
        ok &= x >= low if closed in ("both", "left") else x > low
    if high is not None:
        ok &= x <= high if closed in ("both", "right") else x < high
    if not ok:
        raise InvalidParameterError(_message(name, "in " + _interval_text(low, high, closed), value, hint))
    return x


def check_integer(
    name: str, value: object, low: int | None = None, high: int | None = None, *, hint: str = ""
) -> int:
    """Return ``value`` as an int in ``[low, high]`` (inclusive), else raise.

    Floats with an integral value (``3.0``) are accepted; ``True``/``False`` are not.
    """
    def refused() -> InvalidParameterError:  # the message's text is built only when it is needed
        return InvalidParameterError(_message(name, f"a whole number in {_interval_text(low, high, 'both')}", value,
                                              hint))

    if isinstance(value, bool):
        raise refused()
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        out = int(value)  # type: ignore[call-overload]
    else:
        raise refused()
    if (low is not None and out < low) or (high is not None and out > high):
        raise refused()
    return out


def check_choice(name: str, value: object, options: Iterable[str], *, hint: str = "") -> str:
    """Return ``value`` if it is one of ``options`` (strings), else raise.

    >>> check_choice("scale", "paper", ["unbiased", "paper"])
    'paper'
    """
    opts = list(options)
    if not isinstance(value, str) or value not in opts:
        allowed = "one of " + ", ".join(repr(o) for o in opts)
        raise InvalidParameterError(_message(name, allowed, value, hint))
    return value


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(_message(name, "True or False", value, ""))
    return bool(value)


def check_array_interval(
    name: str,
    value: object,
    low: float | None,
    high: float | None,
    *,
    closed: Closed = "both",
    hint: str = "",
    allow_inf: bool = False,
) -> np.ndarray:
    """Vectorised :func:`check_interval`: return ``np.asarray(value, float)`` if every entry is in the interval.

    Booleans and text are refused; infinite entries too unless ``allow_inf``. The message reports the first
    offending entry.
    """
    raw = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if isinstance(value, (bool, np.bool_)) or raw.dtype == bool or raw.dtype.kind in "OUSV" and not _all_real(raw):
        raise InvalidParameterError(_message(name, "a number or an array of numbers", value, hint))
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(_message(name, "a number or an array of numbers", value, hint)) from None
    bad = np.isnan(arr) if allow_inf else ~np.isfinite(arr)
    if low is not None:
        bad |= arr < low if closed in ("both", "left") else arr <= low
    if high is not None:
        bad |= arr > high if closed in ("both", "right") else arr >= high
    if bad.any():
        first = arr.flat[int(np.flatnonzero(bad.ravel())[0])]
        raise InvalidParameterError(
            _message(name, "in " + _interval_text(low, high, closed), float(first), hint)
        )
    return arr


def check_array_integer(name: str, value: object, low: int | None = None, *, hint: str = "") -> np.ndarray:
    """Vectorised :func:`check_integer`: every entry a whole number ≥ ``low`` (returned as a float array)."""
    arr = check_array_interval(name, value, low, None, hint=hint)
    frac = arr != np.floor(arr)
    if frac.any():
        first = float(arr.flat[int(np.flatnonzero(frac.ravel())[0])])
        raise InvalidParameterError(_message(name, f"a whole number in {_interval_text(low, None, 'both')}", first, hint))
    return arr


def _all_real(arr: np.ndarray) -> bool:
    """True if an object array holds only real numbers (no bools, no text)."""
    return all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in arr.ravel().tolist())


def check_matrix(name: str, value: object, *, min_rows: int = 1, min_cols: int = 1) -> np.ndarray:
    """Return a finite 2-D float array, or raise naming the first bad row/column."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must be a numeric matrix; got {type(value).__name__}") from None
    if arr.ndim != 2:
        raise InvalidParameterError(f"{name} must be a 2-D matrix (rows × columns); got {arr.ndim} dimension(s)")
    if arr.shape[0] < min_rows or arr.shape[1] < min_cols:
        raise InvalidParameterError(
            f"{name} must have at least {min_rows} rows and {min_cols} columns; got {arr.shape[0]} × {arr.shape[1]}"
        )
    finite = np.isfinite(arr)
    if not finite.all():
        r, c = np.argwhere(~finite)[0]
        raise InvalidParameterError(
            f"{name} has a missing or infinite value at row {int(r)}, column {int(c)} — clean or drop it first"
        )
    return arr


#: Rows may exceed the unit ball by this much (rounding in the preparation step) and still count as inside.
UNIT_BALL_TOLERANCE = 1e-9


def check_unit_ball(x: object, *, mechanism: str) -> np.ndarray:
    """Return ``x`` as a finite 2-D float array whose rows all lie in the unit L2 ball, else raise.

    Record-level guarantees in the Studio are stated for prepared rows (L2 norm ≤ 1): B = 2 means "any two
    records" only under that assumption. The error names the first row outside and the way to fix it.
    """
    from engine.errors import DataValidationError

    arr = check_matrix("data", x)
    sq = np.einsum("ij,ij->i", arr, arr)
    bad = np.flatnonzero(sq > (1.0 + UNIT_BALL_TOLERANCE) ** 2)
    if bad.size:
        row = int(bad[0])
        raise DataValidationError(
            f"row {row} has L2 norm {math.sqrt(sq[row]):.4g} > 1 ({bad.size} row(s) outside the unit ball): "
            f"the guarantee of {mechanism} assumes every row in the unit L2 ball — prepare the data first "
            "(clip, maxnorm or public bounds)",
            row=row,
        )
    return arr


def check_rng(rng: object, *, allow_none: bool = False, hint: str = "use engine.rng.make_rng(seed)") -> None:
    """Raise unless ``rng`` is a ``numpy.random.Generator`` (or None when ``allow_none``)."""
    if allow_none and rng is None:
        return
    if not isinstance(rng, np.random.Generator):
        allowed = "a numpy.random.Generator" + (" or None" if allow_none else "")
        raise InvalidParameterError(f"rng must be {allowed}; got {type(rng).__name__} — {hint}")
