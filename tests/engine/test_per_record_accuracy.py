"""Accuracy curves, Monte Carlo simulation of one total, privacy–accuracy frontier, sequential composition."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.errors import CancelledError, InvalidParameterError
from engine.per_record import (
    EPL1,
    EPL2,
    GaussianSum,
    GeneralizedGaussian,
    KthRootTransformation,
    LogTransformation,
)
from engine.per_record.accuracy import accuracy_curves, privacy_accuracy_frontier, simulate_total
from engine.per_record.losses import composed_rho
from engine.progress import CancelToken


def test_accuracy_curves_shapes_of_error():
    q = np.array([0.0, 1e2, 1e4, 1e6])
    t = accuracy_curves([GaussianSum(sigma=10.0), LogTransformation(a=1.0, sigma=0.1),
                         KthRootTransformation(k=2, sigma=1.0), EPL1(d=2.5, scale=1.0)], q)
    g = t[t["kind"] == "gaussian"]
    np.testing.assert_allclose(g["sd"], 10.0)  # additive: flat in absolute terms
    assert np.isnan(g["relative_sd"].iloc[0]) and g["relative_sd"].iloc[-1] == pytest.approx(1e-5)
    lg = t[t["kind"] == "log"]
    np.testing.assert_allclose(lg["sd"], math.sqrt(math.expm1(0.01)) * (q + 1))  # constant relative SD
    k2 = t[t["kind"] == "kth-root"]
    np.testing.assert_allclose(k2["sd"], np.sqrt(2 + 4 * q))  # grows with q
    heavy = t[t["kind"] == "epl1"]
    assert heavy["sd"].isna().all() and (heavy["half_width"] > 0).all()  # no SD, but an interval
    with pytest.raises(InvalidParameterError, match="q must be"):
        accuracy_curves([GaussianSum()], [-1.0])


@pytest.mark.parametrize(
    "mechanism",
    [GaussianSum(sigma=3.0), KthRootTransformation(k=4, a=0.0, sigma=0.2), LogTransformation(a=1.0, sigma=0.3),
     EPL2(d=2.0, a=5.0, sigma=10.0)],
    ids=lambda m: m.KIND,
)
def test_simulate_total_agrees_with_formulas(mechanism):
    n = 40_000
    sim = simulate_total(mechanism, 1000.0, n, rng=np.random.default_rng(9), beta=0.1)
    s = sim.summary
    assert abs(s["bias_in_se"]) <= 3  # unbiased within 3 SE (N = 40,000)
    assert abs(s["coverage"] - 0.9) <= 3 * s["coverage_se"]
    assert abs(s["share_median_below_q"] - 0.5) <= 3 * math.sqrt(0.25 / n)
    assert s["mc_variance"] == pytest.approx(s["variance"], rel=0.05)  # light tails: 4 SE of s² ≈ 3% here
    assert len(sim.draws) == n and set(sim.draws.columns) >= {"output", "estimate", "covered"}


def test_simulate_total_heavy_tails_notes():
    sim = simulate_total(EPL1(d=1.8, scale=1.0), 10.0, 1000, rng=np.random.default_rng(1))
    assert sim.summary["variance"] is None
    assert any("median-unbiased" in n for n in sim.notes)
    sim2 = simulate_total(GeneralizedGaussian(p=0.5, sigma=1.0), 10.0, 1000, rng=np.random.default_rng(1))
    assert any("Heavy-tailed" in n for n in sim2.notes)


def test_frontier_matches_calibration_by_hand():
    ms = [GaussianSum(), LogTransformation(a=1e3), EPL1(d=2.5)]
    seen = []
    t = privacy_accuracy_frontier(ms, [0.01, 0.05], 1e6, [1e4, 1e6], progress=seen.append)
    assert len(t) == 3 * 2 * 2 and len(seen) == 6 and seen[-1].fraction == 1.0
    g = t[(t["kind"] == "gaussian") & (t["target"] == 0.01)]
    np.testing.assert_allclose(g["rho"], [0.5, 5000.0])  # spec §5.4 at 1% relative SE
    lg = t[(t["kind"] == "log") & (t["target"] == 0.01)]
    np.testing.assert_allclose(lg["rho"], [2.881e4, 2.391e5], rtol=2e-3)
    assert t[t["kind"] == "epl1"]["rho"].isna().all()  # no variance: SD target unreachable
    assert t[t["kind"] == "epl1"]["status"].str.startswith("infeasible: no finite standard deviation").all()
    assert (t[t["kind"] != "epl1"]["status"] == "ok").all()
    looser = t[(t["kind"] == "gaussian") & (t["target"] == 0.05)]["rho"].to_numpy()
    assert np.all(looser < g["rho"].to_numpy())  # less accuracy, less loss
    token = CancelToken()
    token.cancel()
    with pytest.raises(CancelledError):
        privacy_accuracy_frontier(ms, [0.01], 1e6, [1.0], cancel=token)


def test_composed_rho_adds_policies_and_constant():
    a, b = GaussianSum(sigma=1.0), LogTransformation(a=1.0, sigma=2.0)
    x1, x2 = np.array([1.0, 10.0, 0.0]), np.array([5.0, 0.0, 30.0])
    got = composed_rho([a, b], [x1, x2], constant_rho=0.25)
    np.testing.assert_allclose(got, 0.25 + a.policy_rho(x1) + b.policy_rho(x2))
    with pytest.raises(InvalidParameterError, match="one value array per release"):
        composed_rho([a], [x1, x2])
    with pytest.raises(InvalidParameterError, match="same length"):
        composed_rho([a, b], [x1, x2[:2]])


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"by": "nope"}, "by"), ({"q_ref": -1.0}, "q_ref"), ({"beta": 1.5}, "beta"), ({"targets": [0.0]}, "targets"),
    ({"record_values": ["x"]}, "record_values"), ({"by": "relative_sd", "q_ref": 0.0}, "q_ref"),
])
def test_frontier_rejects_invalid_arguments_instead_of_nan_rows(kwargs, name):
    args = {"mechanisms": [GaussianSum()], "targets": [0.01], "q_ref": 1e6, "record_values": [1.0]} | kwargs
    with pytest.raises(InvalidParameterError, match=rf"^{name}\b"):
        privacy_accuracy_frontier(**args)


def test_frontier_half_width_target_is_feasible_without_a_variance():
    t = privacy_accuracy_frontier([EPL1(d=2.5)], [1e3], 1e6, [1e4], by="half_width")
    assert t["status"].tolist() == ["ok"] and t["rho"].iloc[0] > 0
