"""ε-TP guarantees: building blocks, JSON round trip, composition rules and their caveats."""

from __future__ import annotations

import pytest

from engine.accounting.composition import parallel_composition as compose_parallel
from engine.accounting.composition import sequential_composition as compose_sequential
from engine.accounting.composition import study_budget
from engine.guarantee import Guarantee
from engine.public_info.conditioning import condition_on_public
from engine.public_info.guarantee import IncompatibleGuaranteeError, TPGuarantee


def _g(eps=0.5, **kw):
    return TPGuarantee(epsilon=eps, sensitivity=2.0, public=("total", "subcount"), mechanism="m", **kw)


def test_building_blocks_and_round_trip():
    g = _g(periods=24)
    text = "\n".join(g.describe())
    assert "subject to the public information Z" in g.headline()
    for block in ("Scope:", "Unit: one person", "Relation: secret pairs", "ε-TP", "ε = 0.5"):
        assert block in text
    assert g.study_epsilon_parallel == 0.5 and g.study_epsilon_sequential == 12.0
    assert TPGuarantee.from_json(g.to_json()) == g
    assert TPGuarantee.from_dict(g.to_dict()).public == ("total", "subcount")
    assert not g.is_classic_dp and not g.vacuous


def test_approximate_label():
    assert _g(exact=False).headline().startswith("approximate ε-TP")


def test_sequential_and_parallel_composition_carry_caveats():
    seq = compose_sequential([_g(0.5), _g(0.25)])
    assert seq.epsilon == 0.75 and seq.composition == "sequential"
    assert any("G5" in n for n in seq.notes) and any("G5" in line for line in seq.describe())
    par = compose_parallel([_g(0.5), _g(0.25)])
    assert par.epsilon == 0.5 and any("G6" in n for n in par.notes)
    assert condition_on_public(_g(0.5)).epsilon == 1.0


@pytest.mark.parametrize("other", [Guarantee(epsilon=1.0, delta=1e-6), "zCDP rho=0.5", None])
def test_mixing_standards_is_refused(other):
    with pytest.raises(IncompatibleGuaranteeError, match="does not compose"):
        compose_sequential([_g(), other])


def test_study_budget_shows_both_readings():
    b = study_budget(0.1, 24)
    assert (b.parallel, b.sequential) == pytest.approx((0.1, 2.4))
    assert any("parallel" in line for line in b.describe()) and any("sequential" in line for line in b.describe())


@pytest.mark.parametrize(("kwargs", "word"), [({"epsilon": 0}, "epsilon"), ({"sensitivity": -1}, "sensitivity"),
                                              ({"composition": "x"}, "composition"), ({"periods": 0}, "periods")])
def test_invalid_guarantee(kwargs, word):
    base = {"epsilon": 1.0, "sensitivity": 2.0}
    with pytest.raises(IncompatibleGuaranteeError.__mro__[1], match=word):
        TPGuarantee(**{**base, **kwargs})


def test_corrupted_json_is_rejected():
    with pytest.raises(IncompatibleGuaranteeError.__mro__[1], match="epsilon"):
        TPGuarantee.from_json('{"kind": "tp_guarantee", "epsilon": -1, "sensitivity": 2}')
