"""The numeric range of privacy parameters the engine computes reliably, checked where configurations come in.

Every formula in the engine is tested over ε ∈ [1e-9, 1e4] and δ ∈ {0} ∪ [1e-300, 1). Outside that range some
steps overflow or underflow double precision (e^{sε}, (kσ)², a subnormal δ): ε = 1e308, ε = 1e-300 and
δ = 1e-320 used to end in tracebacks or NaN output. Such values carry no meaning for a release either (ε = 1e4
protects nothing; ε = 1e-9 leaves nothing of the data; a δ below 1e-300 is below any probability one can act
on), so a configuration read from the command line, a decision record or a link is refused with a message
naming the parameter, the range and the value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from engine.errors import InvalidParameterError

__all__ = ["DELTA_MIN", "EPSILON_MAX", "EPSILON_MIN", "check_privacy_parameters", "exact_float"]

EPSILON_MIN = 1e-9
EPSILON_MAX = 1e4
DELTA_MIN = 1e-300


def check_privacy_parameters(params: Mapping[str, Any], *, owner: str = "the mechanism") -> None:
    """Refuse ε (any field named ``epsilon…``) outside [1e-9, 1e4] and δ (``delta…``/``target_delta``) in (0, 1e-300).

    Non-numeric values are left to the configuration's own validation.

    Examples
    --------
    >>> check_privacy_parameters({"epsilon": 1.0, "delta": 1e-5})
    >>> check_privacy_parameters({"epsilon": 1e308})
    Traceback (most recent call last):
    ...
    engine.errors.InvalidParameterError: epsilon of the mechanism must be in [1e-09, 10000]; got 1e+308 — ε beyond 1e4 protects nothing and overflows the calculations; choose a smaller ε
    """
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        if name.startswith("epsilon") and not (EPSILON_MIN <= value <= EPSILON_MAX) and value > 0:
            hint = (
                "ε beyond 1e4 protects nothing and overflows the calculations; choose a smaller ε"
                if value > EPSILON_MAX
                else "ε below 1e-9 needs noise beyond double precision; choose a larger ε"
            )
            raise InvalidParameterError(
                f"{name} of {owner} must be in [{EPSILON_MIN:g}, {EPSILON_MAX:g}]; got {value:g} — {hint}"
            )
        if (name.startswith("delta") or name == "target_delta") and 0 < value < DELTA_MIN:
            raise InvalidParameterError(
                f"{name} of {owner} must be 0 or at least {DELTA_MIN:g}; got {value:g} — a δ this small underflows "
                "double precision; use δ ≥ 1e-300 (or 0 where pure DP is possible)"
            )


def exact_float(text: str, name: str) -> float:
    """``float(text)``, refused when double precision turns a non-zero number into 0 or infinity.

    ``float("1e-400")`` is ``0.0`` and ``float("1e400")`` is ``inf``: a δ typed as 1e-400 in a link or a record would
    silently become δ = 0 (pure DP, a different guarantee). ``name`` says where the number is, for the message.

    Examples
    --------
    >>> exact_float("1e-5", "delta"), exact_float("0", "delta"), exact_float("-0.0", "x")
    (1e-05, 0.0, -0.0)
    >>> exact_float("1e-400", "the link's 'cdelta'")
    Traceback (most recent call last):
    ...
    engine.errors.InvalidParameterError: the link's 'cdelta' is 1e-400, which double precision cannot hold (it would become 0) — no parameter takes a value that small; δ must be 0 or at least 1e-300
    """
    value = float(text)
    if value == 0.0 or math.isinf(value):
        import decimal

        try:
            exact = decimal.Decimal(text.strip().replace("_", ""))
        except decimal.InvalidOperation:
            return value
        shown = text.strip() if len(text.strip()) <= 40 else text.strip()[:37] + "…"
        if value == 0.0 and exact.is_finite() and exact != 0:
            raise InvalidParameterError(
                f"{name} is {shown}, which double precision cannot hold (it would become 0) — no parameter takes a "
                f"value that small; δ must be 0 or at least {DELTA_MIN:g}"
            )
        if math.isinf(value) and exact.is_finite():
            raise InvalidParameterError(
                f"{name} is {shown}, which double precision cannot hold (it would become infinite) — no parameter "
                "takes a value that large"
            )
    return value
