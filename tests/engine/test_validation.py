"""Parameter validation (engine.validation) and its messages: parameter, allowed range, value and fix."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import EngineError, InvalidParameterError
from engine.validation import check_choice, check_integer, check_interval, check_matrix


@pytest.mark.parametrize(
    ("value", "low", "high", "closed", "ok"),
    [
        (0.0, 0, 1, "left", True),
        (0.0, 0, 1, "neither", False),
        (1.0, 0, 1, "right", True),
        (1.0, 0, 1, "left", False),
        (float("nan"), 0, 1, "both", False),
        (True, 0, 1, "both", False),
        ("0.5", 0, 1, "both", False),
        (5.0, 0, None, "neither", True),
    ],
)
def test_check_interval_table(value, low, high, closed, ok):
    if ok:
        assert check_interval("x", value, low, high, closed=closed) == float(value)
    else:
        with pytest.raises(InvalidParameterError, match=r"^x must be"):
            check_interval("x", value, low, high, closed=closed)


def test_messages_name_parameter_range_value_and_hint():
    with pytest.raises(InvalidParameterError) as info:
        check_interval("epsilon", 1.5, 0, 1, closed="neither", hint="lower ε or use the analytic calibration")
    assert str(info.value) == "epsilon must be in (0, 1); got 1.5 — lower ε or use the analytic calibration"
    assert isinstance(info.value, ValueError) and isinstance(info.value, EngineError)


def test_check_integer_and_choice():
    assert check_integer("k", 3.0, 1, 10) == 3
    for bad in (0, 11, 2.5, True, "3"):
        with pytest.raises(InvalidParameterError, match="k must be a whole number in"):
            check_integer("k", bad, 1, 10)
    with pytest.raises(InvalidParameterError, match="one of 'a', 'b'; got 'c'"):
        check_choice("mode", "c", ["a", "b"])


def test_check_matrix_names_first_bad_cell():
    x = np.ones((3, 2))
    x[2, 1] = np.nan
    with pytest.raises(InvalidParameterError, match="row 2, column 1"):
        check_matrix("X", x)
