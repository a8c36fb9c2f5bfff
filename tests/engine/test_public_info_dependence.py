"""The declared dependence model sets the release's Δ_z (digest §5.3, O3), the release refuses a smaller one, the
guarantee says which Δ_z was used, and the O6 audit shows what ignoring the dependence does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.errors import InvalidParameterError
from engine.public_info.count_release import CountReleaseConfig, release_counts, sensitivity_for
from engine.public_info.count_table import count_table_from_frame, counties_demo
from engine.public_info.dependence import DependenceModel, dependence_audit
from engine.public_info.discrete_laplace import dl_mean_abs
from engine.public_info.results import CountStudyConfig

O3_MODEL = DependenceModel("correlated", n=100, z0=0.0, z1=0.5)


def big_counts(regions: int = 200, periods: int = 2):
    """Counts of 10^7 (no sub-count): the projection onto ≥ 0 never binds, so release − truth is the noise."""
    frame = pd.DataFrame([{"region": f"r{j}", "period": t, "count": 10_000_000}
                          for j in range(regions) for t in range(periods)])
    return count_table_from_frame(frame)


def test_o3_model_sets_the_release_sensitivity():
    assert O3_MODEL.count_sensitivity == 100  # O3: float quantiles give 88
    assert sensitivity_for(big_counts(4, 2), O3_MODEL) == 100.0
    assert sensitivity_for(counties_demo(regions=4, periods=2), O3_MODEL) == 200.0  # count + sub-count
    assert sensitivity_for(counties_demo(regions=4, periods=2), DependenceModel()) == 2.0  # the DP value 1 + 1
    assert DependenceModel("correlated", n=100, z0=0.1, z1=0.9).count_sensitivity == 81
    assert DependenceModel("correlated", n=20, z0=0.4, z1=0.4).count_sensitivity == 1  # independence


def test_released_noise_scale_is_delta_z_over_epsilon_for_a_correlated_model():
    table = big_counts()
    eps = 1.0
    cfg = CountReleaseConfig(method="postprocess", epsilon=eps, public=(), replicates=50,
                             sensitivity=sensitivity_for(table, O3_MODEL), dependence=O3_MODEL)
    assert 1 / cfg.noise_rate == pytest.approx(100 / eps)  # the noise DL(a) has scale 1/a = Δ_z/ε
    rel = release_counts(table, cfg, rng=np.random.default_rng(3))
    noise = (rel.counts - table.counts[None]).ravel()  # 20,000 draws of DL(0.01): E|K| ≈ 100, sd(|K|) ≈ 100
    assert abs(np.mean(np.abs(noise)) - dl_mean_abs(cfg.noise_rate)) < 4.0  # ≈ 5.6 standard errors (se ≈ 0.71)
    assert np.mean(np.abs(noise)) > 90  # the DP calibration (Δ = 1) would give E|K| ≈ 1
    g = rel.guarantee
    assert g.sensitivity == 100.0 and "Δ_z = 100 from correlated counts, groups of n = 100" in g.headline()
    assert "z0 = 0, z1 = 0.5: 100 per count" in g.headline()


def test_a_release_below_the_models_delta_z_is_refused():
    with pytest.raises(InvalidParameterError, match="below the Δ_z = 100 of one count"):
        CountReleaseConfig(sensitivity=2.0, dependence=O3_MODEL)
    cfg = CountReleaseConfig(method="postprocess", sensitivity=100.0, dependence=O3_MODEL)
    with pytest.raises(InvalidParameterError, match="below the Δ_z = 200 this table needs.*use 200"):
        release_counts(counties_demo(regions=4, periods=2), cfg, rng=np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="z0 must be ≤ z1"):
        DependenceModel("correlated", z0=0.7, z1=0.3)


def test_study_config_carries_the_model_into_every_release_and_round_trips():
    study = CountStudyConfig(methods=("postprocess", "wasserstein-congenial"), epsilons=(0.5,), replicates=2,
                             sensitivity=200.0, dependence=O3_MODEL)
    assert {study.release_config(m, 0.5).dependence for m in study.methods} == {O3_MODEL}
    assert CountStudyConfig.from_json(study.to_json()) == study
    assert DependenceModel().to_dict() == {"kind": "fixed"}
    assert CountStudyConfig.from_dict({"methods": ["postprocess"]}).dependence == DependenceModel()  # older records
    fixed = release_counts(counties_demo(regions=4, periods=2), CountReleaseConfig(method="postprocess"),
                           rng=np.random.default_rng(0)).guarantee
    assert "(Δ_z = 2)" in fixed.headline() and "valid only without dependence" in fixed.notes[0]


@pytest.mark.parametrize(("z0", "z1", "dz", "with_dz", "with_dp"), [
    (0.5, 0.5, 1, 0.5067, 0.5067), (0.3, 0.7, 9, 0.4854, 4.3046), (0.1, 0.9, 17, 0.4785, 8.1972),
])
def test_o6_dependence_audit(z0, z1, dz, with_dz, with_dp):
    a = dependence_audit(DependenceModel("correlated", n=20, z0=z0, z1=z1), 1.0)
    assert a.delta_z == dz
    assert a.calibrated.realised_epsilon == pytest.approx(with_dz, abs=6e-5) and not a.calibrated.violated
    assert a.ignoring.realised_epsilon == pytest.approx(with_dp, abs=6e-5) and a.ignoring.violated == (dz > 1)
    assert a.ignoring.sensitivity_used == 1.0 and a.calibrated.sensitivity_used == dz


def test_o6_audit_of_independent_people_holds():
    a = dependence_audit(DependenceModel(n=20), 1.0)
    assert a.delta_z == 1 and a.ignoring.realised_epsilon == pytest.approx(0.5067, abs=6e-5)
    assert not a.ignoring.violated
