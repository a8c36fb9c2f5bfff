"""Guarantees (engine.guarantee) and the step count and switch lemma they rest on (engine.accounting.tdp)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.accounting.tdp import steps, switch_loss, tdp_to_dp
from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee


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
