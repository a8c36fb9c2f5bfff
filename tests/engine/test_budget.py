"""Budget conventions: the default δ and Algorithm 1's default split (one home: engine.accounting.budget)."""

import pytest

from engine.accounting.budget import EPS2_CAP, default_delta, split_budget, split_delta
from engine.errors import InvalidParameterError
from engine.mechanisms.private_projection import PrivateProjection


def test_default_split_spends_the_candidate_budget():
    small = split_budget(1.0, 3e-4)
    assert small.epsilon1 == 0.75 and small.epsilon2 == 0.25
    assert small.delta1 == pytest.approx(2e-4) and small.delta2 == pytest.approx(1e-4)
    large = split_budget(8.0, 3e-4)
    assert large.epsilon2 == EPS2_CAP and large.epsilon1 + large.epsilon2 == pytest.approx(8.0)


def test_projection_from_budget_composes_back_to_the_total():
    mech = PrivateProjection.from_budget(0.25, 4.0, 1e-4, k=100)
    g = mech.guarantee()
    assert g.epsilon == pytest.approx(4.0, abs=1e-12) and g.delta == pytest.approx(1e-4, rel=1e-12)
    assert g.b == 0.25 and mech.k == 100


def test_default_delta_and_split_delta():
    assert default_delta(4201) == 1 / 4202
    d1, d2 = split_delta(3e-4)
    assert d1 + d2 == pytest.approx(3e-4, rel=1e-15) and d1 == pytest.approx(2 * d2)
    with pytest.raises(InvalidParameterError):
        default_delta(0)
    with pytest.raises(InvalidParameterError):
        split_budget(0.0, 1e-4)
