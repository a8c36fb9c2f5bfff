"""The TDP calculus (engine.accounting.tdp) — rounding of step counts, switch lemma — and the composition lemmas
(engine.accounting.composition)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.accounting.composition import parallel_composition, sequential_composition
from engine.accounting.tdp import (
    MAX_STEPS,
    steps,
    switch_loss,
    tdp_to_dp,
    tolerant_ceil,
)
from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee

# ------------------------------------------------------------------------------------------- step counts


def test_tolerant_ceil_treats_float_noise_at_whole_numbers_as_exact():
    assert tolerant_ceil(2.0 / 0.4) == 5.0
    assert tolerant_ceil(5.0 + 5e-10) == 5.0  # within the absolute 1e-9 band
    assert tolerant_ceil(5.0 + 5e-9) == 6.0  # outside it (the old relative band forgave 5e-9 here)
    assert tolerant_ceil(5.0 + 1e-7) == 6.0  # genuinely above
    assert tolerant_ceil(0.0) == 0.0 and tolerant_ceil(1e-12) == 0.0
    assert tolerant_ceil(0.3) == 1.0
    assert tolerant_ceil(np.inf) == float(MAX_STEPS)
    assert list(tolerant_ceil(np.array([0.5, 1.0, 1.5]))) == [1.0, 1.0, 2.0]


def test_steps_saturate_instead_of_overflowing():
    assert steps(2.0, 1e-300) == MAX_STEPS
    assert list(steps(2.0, np.array([1e-300, 0.4, 2.0]))) == [MAX_STEPS, 5, 1]


@pytest.mark.parametrize("b", [0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.0])  # the paper's B grid
def test_paper_grid_step_counts(b):
    assert steps(2.0, b) == math.ceil(round(2.0 / b, 9))


def test_switch_lemma_at_intermediate_distances():
    # A record moved by t is protected at s(t) = ⌈t/B⌉ steps: (sε, (e^{sε}−1)/(e^ε−1)·δ).
    for t, s in [(0.1, 1), (0.25, 1), (0.26, 2), (1.0, 4), (2.0, 8)]:
        eps, dlt = switch_loss(0.5, 1e-6, 0.25, t)
        assert eps == pytest.approx(0.5 * s)
        assert dlt == pytest.approx(sum(math.exp(0.5 * i) for i in range(s)) * 1e-6, rel=1e-12)
    assert switch_loss(0.5, 1e-6, 0.25, 0.0) == (0.0, 0.0)
    assert tdp_to_dp(1.0, 1e-4, 2.0) == (1.0, pytest.approx(1e-4))  # B = 2: DP unchanged


# ------------------------------------------------------------------------------------------- composition


def test_sequential_composition_algorithm_1_budget():
    # Theorem 2 of the paper: steps 3 and 4 of Algorithm 1 compose to (B, ε1 + ε2, δ1 + δ2).
    delta = 1 / 4202
    step3 = Guarantee(3.0, 2 * delta / 3, b=0.25, mechanism="projection")
    step4 = Guarantee(0.9999, delta / 3, b=0.25, mechanism="covariance")
    g = sequential_composition([step3, step4])
    assert g.b == 0.25
    assert g.epsilon == pytest.approx(3.9999)
    assert g.delta == pytest.approx(delta)
    assert g.mechanism == "projection + covariance"
    assert "Lemma 2" in g.notes[0]


def test_sequential_composition_takes_the_smallest_b_and_clips_delta():
    g = sequential_composition([Guarantee(1.0, 0.6, b=2.0), Guarantee(2.0, 0.7, b=0.1), Guarantee(0.5, 0.0, b=0.5)])
    assert (g.b, g.epsilon, g.delta) == (0.1, 3.5, 1.0)
    assert g.vacuous and "VACUOUS" in " ".join(g.describe())


def test_parallel_composition_of_partitions():
    # The paper's Nigeria mode: six disjoint parts, each (B, ε, δ)-TDP → (B, ε, δ)-TDP overall.
    part = Guarantee(3.9999, 1 / 3466, b=0.1, mechanism="projection")
    g = parallel_composition([part] * 6)
    assert (g.b, g.epsilon, g.delta) == (0.1, 3.9999, 1 / 3466)
    assert g.mechanism == "projection" and "Lemma 3" in g.notes[0]
    mixed = parallel_composition([Guarantee(1.0, 1e-4, b=0.1), Guarantee(2.0, 5e-5, b=0.25), Guarantee(0.5, 2e-4)])
    assert (mixed.b, mixed.epsilon, mixed.delta) == (0.1, 2.0, 2e-4)


def test_composition_of_one_guarantee_is_that_guarantee():
    g = Guarantee(1.0, 1e-5, b=0.5, mechanism="m", notes=("caveat",))
    assert sequential_composition([g]) is g
    assert parallel_composition([g]) is g
    assert sequential_composition(g) is g  # a bare Guarantee counts as a list of one


def test_composition_keeps_relation_and_notes():
    a = Guarantee(1.0, 0.0, relation="element", notes=("x",))
    b = Guarantee(2.0, 1e-6, relation="element", notes=("x", "y"))
    g = sequential_composition([a, b])
    assert g.relation == "element" and g.notes[1:] == ("x", "y")
    assert Guarantee.from_json(g.to_json()) == g


@pytest.mark.parametrize("compose", [sequential_composition, parallel_composition])
@pytest.mark.parametrize(
    ("items", "match"),
    [
        ([], "at least one guarantee"),
        ([Guarantee(1.0, 0.0), (1.0, 0.0)], "item 1 is tuple"),
        ([Guarantee(1.0, 0.0), Guarantee(1.0, 0.0, relation="element")], "same neighbouring relation"),
    ],
)
def test_composition_rejects_bad_input(compose, items, match):
    with pytest.raises(InvalidParameterError, match=match):
        compose(items)


_guarantees = st.builds(
    Guarantee,
    epsilon=st.floats(1e-3, 10.0),
    delta=st.floats(0.0, 0.1),
    b=st.floats(0.01, 2.0),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(_guarantees, min_size=1, max_size=6), st.randoms())
def test_composition_is_order_free_and_parallel_never_costs_more(items, rnd):
    shuffled = list(items)
    rnd.shuffle(shuffled)
    seq, par = sequential_composition(items), parallel_composition(items)
    seq2, par2 = sequential_composition(shuffled), parallel_composition(shuffled)
    assert (seq.b, par.b) == (seq2.b, par2.b) == (min(g.b for g in items),) * 2
    assert seq.epsilon == pytest.approx(seq2.epsilon) and seq.delta == pytest.approx(seq2.delta)
    assert (par.epsilon, par.delta) == (par2.epsilon, par2.delta)
    assert par.epsilon <= seq.epsilon + 1e-12 and par.delta <= seq.delta + 1e-12


def test_steps_never_round_down_just_below_a_whole_ratio():
    # Review finding: a relative tolerance rounded ⌈2/B⌉ down for B just below 0.4 (overstating privacy).
    from engine.accounting.tdp import steps, switch_loss

    b = 0.4 * (1 - 5e-10)
    assert steps(2.0, b) == 6
    assert switch_loss(1.0, 1e-6, b, 2.0)[0] == 6.0
    # Typed decimals B = 2/s give exactly s steps (their nearest floats lie above the decimal).
    for b_typed, s in ((0.4, 5), (0.1, 20), (0.05, 40), (0.025, 80), (0.02, 100), (0.008, 250), (0.075, 27)):
        assert steps(2.0, b_typed) == s


def test_switch_loss_is_finite_for_huge_losses_and_zero_delta():
    from engine.accounting.tdp import switch_loss
    from engine.guarantee import Guarantee

    assert switch_loss(1.0, 0.0, 0.001, 2.0) == (2000.0, 0.0)
    assert switch_loss(800.0, 1e-5, 1.0, 2.0) == (1600.0, 1.0)
    eps, dlt = switch_loss(1e-9, 1e-6, 0.5, 2.0)  # tiny ε: growth → s = 4
    assert dlt == pytest.approx(4e-6, rel=1e-6)
    assert Guarantee(1.0, 0.0, b=0.001).implied_dp().delta == 0.0
