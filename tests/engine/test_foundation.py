"""Errors, validation, serialisation, guarantees and the TDP calculus basics."""

from __future__ import annotations

import ast
import math
import pathlib
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.accounting.tdp import steps, switch_loss, tdp_to_dp
from engine.errors import EngineError, InvalidParameterError
from engine.guarantee import Guarantee
from engine.serialization import Serializable
from engine.validation import check_choice, check_integer, check_interval, check_matrix

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_engine_never_imports_streamlit_or_plotly():
    offenders = []
    for path in (ROOT / "engine").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path}: {n}" for n in names if n.split(".")[0] in {"streamlit", "plotly"}]
    assert offenders == []


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


@dataclass(frozen=True)
class _Inner(Serializable):
    KIND = "inner"
    a: float
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Outer(Serializable):
    name: str
    k: int
    mode: Literal["fast", "reference"]
    inner: _Inner
    maybe: float | None = None
    weights: dict[str, float] | None = None

    def __post_init__(self) -> None:
        check_integer("k", self.k, 1, None)


@given(
    name=st.text(max_size=20),
    k=st.integers(1, 10**12),
    mode=st.sampled_from(["fast", "reference"]),
    a=st.floats(allow_nan=False, allow_infinity=False),
    tags=st.lists(st.text(max_size=5), max_size=3),
    maybe=st.none() | st.floats(allow_nan=False, allow_infinity=False),
)
def test_serialisation_round_trip_is_lossless(name, k, mode, a, tags, maybe):
    obj = _Outer(name, k, mode, _Inner(a, tuple(tags)), maybe, {"x": 1.5})
    back = _Outer.from_json(obj.to_json())
    assert back == obj
    assert type(back.inner.tags) is tuple


def test_deserialisation_rejects_bad_input_with_clear_messages():
    good = _Outer("n", 2, "fast", _Inner(1.0)).to_dict()
    with pytest.raises(InvalidParameterError, match="unknown field"):
        _Outer.from_dict({**good, "surprise": 1})
    with pytest.raises(InvalidParameterError, match="missing the required field 'k'"):
        _Outer.from_dict({k: v for k, v in good.items() if k != "k"})
    with pytest.raises(InvalidParameterError, match=r"mode must be one of \['fast', 'reference'\]"):
        _Outer.from_dict({**good, "mode": "turbo"})
    with pytest.raises(InvalidParameterError, match="k must be a whole number in"):
        _Outer.from_dict({**good, "k": 0})  # __post_init__ runs again on import
    with pytest.raises(InvalidParameterError, match="not valid JSON"):
        _Outer.from_json("{nope")


def test_steps_treat_float_representation_of_exact_ratios_as_exact():
    assert steps(2.0, 0.4) == 5
    assert steps(2.0, 0.1) == 20
    assert steps(2.0, 2.0) == 1
    assert steps(2.0, 0.3) == 7  # 6.67 rounds up (toward privacy)
    assert list(steps(np.array([0.0, 0.5, 0.51, 2.0]), 0.5)) == [0, 1, 2, 4]


def test_switch_lemma_matches_closed_form():
    eps, dlt = switch_loss(0.5, 1e-5, 0.25, 2.0)  # s = 8
    assert eps == pytest.approx(4.0)
    assert dlt == pytest.approx((math.exp(4.0) - 1) / (math.exp(0.5) - 1) * 1e-5)
    assert tdp_to_dp(1.0, 0.3, 0.4)[1] == 1.0  # clipped at 1


def test_guarantee_classic_and_implied_dp():
    g = Guarantee(epsilon=1.0, delta=1e-4, b=0.4, mechanism="test")
    assert not g.is_classic_dp
    dp = g.implied_dp()
    assert dp.is_classic_dp and dp.epsilon == pytest.approx(5.0)
    assert dp.delta == pytest.approx((math.e**5 - 1) / (math.e - 1) * 1e-4)
    assert Guarantee(1.0, 1e-4, b=2.0).implied_dp() == Guarantee(1.0, 1e-4, b=2.0)
    assert Guarantee.from_json(g.to_json()) == g
    assert "targeted DP" in g.describe()[0]
    with pytest.raises(InvalidParameterError, match="b must be in"):
        Guarantee(1.0, 1e-4, b=2.5)


@dataclass(frozen=True)
class _HasKindField(Serializable):
    kind: str = "targeting"  # a field that happens to be called "kind" (no KIND tag)
    q: float = 0.29


@dataclass(frozen=True)
class _Holder(Serializable):
    program: _HasKindField | None = None


def test_optional_dataclass_with_its_own_kind_field_round_trips():
    obj = _Holder(program=_HasKindField("lending", 0.3))
    assert _Holder.from_json(obj.to_json()) == obj
    assert _Holder.from_json(_Holder().to_json()) == _Holder()
