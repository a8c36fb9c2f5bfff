"""Vacuous guarantees are flagged wherever a guarantee is shown or exported (issue 15)."""

from __future__ import annotations

import json

import pytest

from engine.guarantee import Guarantee
from engine.mechanisms.jl_laplace import JLLaplace
from engine.mechanisms.mondrian import KAnonymityGuarantee, MondrianKAnonymity


def test_delta_one_is_flagged_in_headline_describe_and_to_dict():
    g = Guarantee(31.9992, 1.0)  # the implied classic DP the issue quotes
    assert g.vacuous
    assert g.headline().startswith("VACUOUS — guarantees nothing: ")
    assert g.describe()[0].startswith("VACUOUS")
    assert any("VACUOUS" in line and "δ ≥ 1" in line for line in g.describe())
    d = g.to_dict()
    assert d["vacuous"] is True and "δ ≥ 1" in d["vacuous_reason"]
    # The derived keys are for readers: reading the file back ignores them (recomputed from the fields).
    assert Guarantee.from_dict(d) == g
    edited = dict(d, vacuous=False, vacuous_reason=None)
    assert Guarantee.from_dict(edited).vacuous


def test_a_meaningful_guarantee_is_not_flagged():
    g = Guarantee(1.0, 1e-5, b=0.5)
    assert not g.vacuous and g.vacuous_reason is None
    assert "VACUOUS" not in g.headline() and not any("VACUOUS" in line for line in g.describe())
    assert g.to_dict()["vacuous"] is False
    assert json.loads(g.to_json())["vacuous"] is False


def test_implied_classic_dp_that_is_vacuous_is_flagged_in_the_tdp_description():
    g = Guarantee(4.0, 1e-3, b=0.25)  # s = 8: δ' = δ(e^{32} − 1)/(e^4 − 1) clips to 1
    dp = g.implied_dp()
    assert dp.delta == 1.0 and dp.vacuous
    assert dp.headline().startswith("VACUOUS")
    assert not g.vacuous  # the TDP statement itself protects B-neighbours
    assert any("implied classic-DP statement is VACUOUS" in line for line in g.describe())


@pytest.mark.parametrize(("epsilon", "vacuous"), [(689.0, False), (700.0, True), (1e6, True)])
def test_astronomical_epsilon_is_vacuous(epsilon, vacuous):
    g = Guarantee(epsilon, 0.0)
    assert g.vacuous is vacuous
    assert g.headline().startswith("VACUOUS") is vacuous


def test_jl_guarantee_with_delta_fail_one_is_flagged():
    mech = JLLaplace(k=2, epsilon=1.0, d=3, relation="element")  # k < 2 ln d: the paper's setting, vacuous
    g = mech.guarantee()
    if g.delta >= 1.0:
        assert g.headline().startswith("VACUOUS")
    else:  # our per-pair bound may still be informative; then it must not be flagged
        assert not g.headline().startswith("VACUOUS")


def test_k_anonymity_exports_its_vacuity():
    g = MondrianKAnonymity(k=3).guarantee()
    assert isinstance(g, KAnonymityGuarantee)
    d = g.to_dict()
    assert d["vacuous"] is True
    assert KAnonymityGuarantee.from_dict(d) == g
