"""Targeted DP as a per-record guarantee: the switch-lemma policy over distances and per-record losses."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from engine.accounting.tdp import switch_loss
from engine.errors import DataValidationError, InsufficientDataError, InvalidParameterError
from engine.per_record.tdp_losses import nearest_neighbour_distances, tdp_policy, tdp_record_losses


def test_policy_is_steps_times_epsilon_with_switch_lemma_delta():
    t = np.array([0.0, 0.1, 0.4, 0.41, 0.8, 2.0])
    pol = tdp_policy(t, 0.5, 1e-6, 0.4)
    assert pol.steps.tolist() == [0, 1, 1, 2, 2, 5]
    np.testing.assert_allclose(pol.epsilon, 0.5 * pol.steps)
    # δ(t) = (e^{sε} − 1)/(e^ε − 1)·δ (Lemma 4), independent formula
    expected = np.where(pol.steps == 0, 0.0, np.expm1(0.5 * pol.steps) / math.expm1(0.5) * 1e-6)
    np.testing.assert_allclose(pol.delta, expected, rtol=1e-12)
    assert pol.unit == "tdp_epsilon" and "switch lemma" in pol.source
    frame = pol.to_frame()
    assert list(frame.columns) == ["distance", "steps", "epsilon", "delta"]


def test_policy_validation():
    with pytest.raises(InvalidParameterError, match=r"distance must lie in \[0, 2\]"):
        tdp_policy([2.5], 1.0, 1e-6, 0.5)
    with pytest.raises(InvalidParameterError, match=r"^b must be in \(0, 2\]"):
        tdp_policy([1.0], 1.0, 1e-6, 3.0)
    with pytest.raises(InvalidParameterError, match=r"^epsilon must be"):
        tdp_policy([1.0], 0.0, 1e-6, 0.5)


def test_nearest_neighbours_are_distinct_rows_duplicates_are_not_protected_by_their_copies():
    # review finding: a duplicate got distance 0 ⇒ loss 0 ("no loss"), although a copy protects nothing
    x = np.array([[0.0, 0.0], [0.3, 0.0], [0.3, 0.0], [0.0, 0.9]])
    dist, idx, mult = nearest_neighbour_distances(x, return_multiplicity=True)
    np.testing.assert_allclose(dist, [0.3, 0.3, 0.3, 0.9])
    assert idx.tolist() == [1, 0, 0, 0] and mult.tolist() == [1, 2, 2, 1]
    assert np.all(np.linalg.norm(x[idx] - x, axis=1) > 0)
    r = tdp_record_losses(x, 1.0, 1e-6, 0.25)
    assert (r.records["epsilon_nn"] > 0).all() and r.summary_nn.median == 2.0  # ⌈0.3/0.25⌉ = 2 steps
    assert r.records["multiplicity"].tolist() == [1, 2, 2, 1]
    with pytest.raises(InsufficientDataError, match="identical"):
        tdp_record_losses(np.array([[0.1, 0.0], [0.1, 0.0]]), 1.0, 1e-6, 0.5)


def test_record_losses_at_nearest_neighbour_and_worst_case():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(500, 3))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=1))[:, None]
    frame = pd.DataFrame({"household": [f"h{i}" for i in range(500)]})
    r = tdp_record_losses(x, 1.0, 1e-5, 0.1, threshold=1.5, frame=frame, id_columns=["household"], top_n=5)
    # brute-force nearest-neighbour distances
    d = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=2)
    np.fill_diagonal(d, np.inf)
    np.testing.assert_allclose(r.records["nn_distance"], d.min(axis=1), rtol=1e-12)
    eps, dlt = switch_loss(1.0, 1e-5, 0.1, r.records["nn_distance"].to_numpy())
    np.testing.assert_allclose(r.records["epsilon_nn"], eps)
    np.testing.assert_allclose(r.records["delta_nn"], dlt)
    worst = switch_loss(1.0, 1e-5, 0.1, 2.0)
    assert (r.records["epsilon_worst"] == worst[0]).all() and worst[0] == 20.0
    assert r.summary_worst.max == 20.0 and r.summary_worst.share_above == 1.0
    assert r.summary_nn.max == pytest.approx(r.records["epsilon_nn"].max())
    assert r.summary_nn.share_above == pytest.approx(np.mean(r.records["epsilon_nn"] > 1.5))
    top = r.summary_nn.top
    assert top["household"].iloc[0] == frame["household"].iloc[int(np.argmax(d.min(axis=1)))]
    assert "nn_distance" in top.columns and r.summary_nn.unit == "tdp_epsilon"


def test_accepts_prepared_data_objects():
    from engine.data.preparation import DataSpec, prepare

    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    prepared = prepare(df, DataSpec(features=("a", "b")))
    r = tdp_record_losses(prepared, 0.5, 0.0, 0.5)
    assert len(r.records) == prepared.n
    assert (r.records["delta_nn"] == 0).all()


def test_bad_data():
    with pytest.raises(DataValidationError, match="norm"):
        tdp_record_losses(np.array([[2.0, 0.0], [0.0, 0.1]]), 1.0, 1e-6, 0.5)
    with pytest.raises(InsufficientDataError, match="at least 2 records"):
        tdp_record_losses(np.array([[0.1, 0.0]]), 1.0, 1e-6, 0.5)
    with pytest.raises(DataValidationError, match="missing or infinite"):
        tdp_record_losses(np.array([[np.nan, 0.0], [0.0, 0.1]]), 1.0, 1e-6, 0.5)
    with pytest.raises(InvalidParameterError, match="need the row-aligned frame"):
        tdp_record_losses(np.array([[0.0, 0.0], [0.0, 0.1]]), 1.0, 1e-6, 0.5, id_columns=["x"])
