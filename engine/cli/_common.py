"""Helpers shared by the subcommands: JSON output and list parsing.

Nothing heavy at import time (every ``python -m engine …`` loads this module): numpy is never imported here;
:func:`_jsonable` converts numpy values only when numpy is already loaded (if it is not, there are none).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from engine.errors import InvalidParameterError


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.ndarray):
            return [_jsonable(v) for v in value.tolist()]
        if isinstance(value, np.generic):
            return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented JSON on stdout (NaN → null, ±inf → "inf"/"-inf")."""
    json.dump(_jsonable(payload), sys.stdout, indent=2, allow_nan=False, ensure_ascii=False)
    sys.stdout.write("\n")


def parse_float_list(name: str, text: str) -> list[float]:
    """Parse "1,2.5,3" into floats, naming the option in the error."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InvalidParameterError(f"{name} must be a comma-separated list of numbers; got {text!r}") from None
    if not values:
        raise InvalidParameterError(f"{name} must list at least one number; got {text!r}")
    return values
