"""k-anonymity baseline (strict Mondrian, class-mean release): hand oracle, class sizes, means, determinism,
order invariance, ties, the guarantee statement, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.errors import DataValidationError, InsufficientDataError, InvalidParameterError
from engine.mechanisms import MECHANISMS, mechanism_from_dict
from engine.mechanisms.mondrian import KAnonymityGuarantee, MondrianKAnonymity, mondrian_partition


def _release(x, k=2, seed=0):
    return MondrianKAnonymity(k=k).release(x, rng=np.random.default_rng(seed))


def test_hand_oracle_cuts_the_widest_normalised_feature():
    # Root: both features have normalised width 1 → the first (feature 0) is cut at its lower median 0.3.
    # Each half then has feature-0 width 0.3/0.7 < feature-1 width 1 → cut feature 1: pairs with equal feature 1.
    x = np.array(
        [[0.0, 0], [0.1, 1], [0.2, 0], [0.3, 1], [0.4, 0], [0.5, 1], [0.6, 0], [0.7, 1]], dtype=float
    )
    rel = _release(x)
    expected = np.array(
        [[0.1, 0], [0.2, 1], [0.1, 0], [0.2, 1], [0.5, 0], [0.6, 1], [0.5, 0], [0.6, 1]], dtype=float
    )
    np.testing.assert_allclose(rel.value, expected, atol=1e-15)
    assert rel.details["classes"] == 4 and rel.details["smallest_class"] == 2 == rel.details["largest_class"]
    assert mondrian_partition(x, 2).tolist() == [0, 1, 0, 1, 2, 3, 2, 3]


@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_class_sizes_means_and_k_anonymity_on_continuous_data(k):
    rng = np.random.default_rng(k)
    x = rng.normal(size=(3000, 6))
    labels = mondrian_partition(x, k)
    counts = np.bincount(labels)
    # With distinct values every partition of ≥ 2k rows can be cut, so classes have k … 2k − 1 rows.
    assert counts.min() >= k and counts.max() <= 2 * k - 1
    rel = _release(x, k)
    # Class means: released rows equal the mean of their class; sums per class (hence column means) preserved.
    for c in (0, counts.size // 2, counts.size - 1):
        members = labels == c
        np.testing.assert_allclose(rel.value[members], np.tile(x[members].mean(axis=0), (members.sum(), 1)))
    np.testing.assert_allclose(rel.value.mean(axis=0), x.mean(axis=0), atol=1e-12)
    # k-anonymity of the output: every released row has at least k − 1 identical copies.
    _, inverse, multiplicity = np.unique(rel.value, axis=0, return_inverse=True, return_counts=True)
    assert multiplicity[inverse.ravel()].min() >= k
    assert rel.details["classes"] == counts.size


def test_deterministic_rng_ignored_and_row_order_invariant():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(500, 4))
    a, b = _release(x, 3, seed=1), _release(x, 3, seed=99)
    np.testing.assert_array_equal(a.value, b.value)
    perm = rng.permutation(500)
    np.testing.assert_allclose(_release(x[perm], 3).value, a.value[perm], atol=1e-15)


def test_ties_are_kept_together_and_classes_still_have_k_members():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, size=(400, 3)).astype(float)  # only 27 distinct rows: heavy ties
    for k in (2, 7):
        labels = mondrian_partition(x, k)
        assert np.bincount(labels).min() >= k
        # Strict partitioning: identical records always share a class (so they are released identically).
        _, first = np.unique(x, axis=0, return_inverse=True)
        for group in np.unique(first):
            assert np.unique(labels[first.ravel() == group]).size == 1


def test_constant_columns_and_tiny_inputs():
    x = np.column_stack([np.zeros(9), np.arange(9.0)])
    rel = _release(x, 3)
    # Median cut at 4: {0..4} (5 rows) and {5..8} (4 rows); neither can be cut again into two halves of ≥ 3.
    assert (rel.details["classes"], rel.details["smallest_class"], rel.details["largest_class"]) == (2, 4, 5)
    np.testing.assert_allclose(rel.value[:, 1], [2, 2, 2, 2, 2, 6.5, 6.5, 6.5, 6.5])
    np.testing.assert_allclose(rel.value[:, 0], 0.0)
    single = _release(np.array([[1.0, 2.0], [3.0, 4.0]]), 2)  # n = k: one class
    np.testing.assert_allclose(single.value, [[2.0, 3.0], [2.0, 3.0]])


def test_paper_sized_input_runs():
    # Nigeria-sized (20,788 × 15); the benchmark times it.
    x = np.random.default_rng(1).normal(size=(20_788, 15))
    rel = _release(x, 2)
    assert rel.details["smallest_class"] >= 2 and rel.value.shape == x.shape


def test_guarantee_is_honest_about_not_being_dp():
    mech = MondrianKAnonymity(k=4)
    g = mech.guarantee()
    assert isinstance(g, KAnonymityGuarantee) and g.k == 4
    assert g.epsilon == math.inf and g.delta == 1.0 and not g.is_classic_dp and g.vacuous
    assert not g.is_differentially_private and g.implied_dp() is g and g.loss_at_distance(0.1) == (math.inf, 1.0)
    assert "NOT differential privacy" in g.headline() and "at least 3 others" in g.headline()
    text = " ".join(g.describe())
    assert "mean of its class" in text and "no (ε, δ) bound" in text and "singling-out" in text
    assert KAnonymityGuarantee.from_json(g.to_json()) == g
    assert _release(np.random.default_rng(0).normal(size=(20, 2)), 4).guarantee == g


def test_registry_and_round_trip():
    assert MECHANISMS["mondrian"] is MondrianKAnonymity
    assert MondrianKAnonymity.LABEL == "k-anonymity (Mondrian)"
    mech = MondrianKAnonymity(k=5.0)
    assert isinstance(mech.k, int)
    assert mechanism_from_dict(mech.to_dict()) == mech
    assert MondrianKAnonymity().k == 2


@pytest.mark.parametrize("k", [1, 11, 2.5, "2", True, None])
def test_invalid_k(k):
    with pytest.raises(InvalidParameterError, match="k must be a whole number in \\[2, 10\\]"):
        MondrianKAnonymity(k=k)


def test_bad_data():
    with pytest.raises(InsufficientDataError, match="at least 5 rows"):
        _release(np.zeros((4, 2)), 5)
    x = np.ones((10, 2))
    x[3, 1] = np.nan
    with pytest.raises(DataValidationError, match="row 3, column 1"):
        _release(x, 2)
    with pytest.raises(InvalidParameterError, match="k must be a whole number"):
        KAnonymityGuarantee(k=1)
