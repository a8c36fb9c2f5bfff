"""The page's study runner (``run_count_study``): cell by cell with one generator (the engine's numbers), progress
over the whole study, and a cancel keeping the finished cells; the Δ_z column's summary (``dependence_summary``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.errors import CancelledError
from engine.progress import CancelToken
from engine.public_info.count_table import counties_demo
from engine.public_info.dependence import DependenceModel
from engine.public_info.discrete_laplace import dl_mean_abs, dl_variance
from engine.public_info.results import (
    CountStudyConfig,
    build_count_study,
    dependence_summary,
    run_count_study,
)
from engine.public_info.sensitivity import correlated_counts_sensitivity
from engine.rng import make_rng

TABLE = counties_demo(regions=6, periods=3)
CFG = CountStudyConfig(methods=("postprocess", "wasserstein-naive"), epsilons=(0.5, 1.0), replicates=4)


def test_cell_by_cell_equals_one_engine_call_and_progress_covers_the_study():
    seen = []
    got = run_count_study(TABLE, CFG, rng=make_rng(5), on_progress=seen.append)
    ref = build_count_study(TABLE, CFG, rng=make_rng(5))
    assert got.config == CFG and got.regions == ref.regions
    for a, b in zip(got.cells, ref.cells, strict=True):
        np.testing.assert_array_equal(a.released, b.released)
        np.testing.assert_array_equal(a.relative_error, b.relative_error)
    assert [p.done for p in seen] == list(range(1, 13)) and {p.total for p in seen} == {12}


def test_cancel_keeps_the_finished_cells():
    token = CancelToken()
    kept = []

    def on_cell(partial):
        kept.append(partial)
        if len(partial.cells) == 1:
            token.cancel()

    with pytest.raises(CancelledError):
        run_count_study(TABLE, CFG, rng=make_rng(5), on_cell=on_cell, cancel=token)
    ref = build_count_study(TABLE, CFG, rng=make_rng(5))
    assert len(kept) == 1 and len(kept[-1].cells) == 1 and kept[-1].config == CFG
    np.testing.assert_array_equal(kept[-1].cells[0].released, ref.cells[0].released)


def test_dependence_summary_of_a_correlated_model_with_subcounts():
    model = DependenceModel("correlated", n=20, z0=0.2, z1=0.6)
    count_delta = correlated_counts_sensitivity(20, 0.2, 0.6)
    delta = 2 * count_delta  # no public total: the count's Δ_z, doubled for the sub-count (exact)
    cfg = CountStudyConfig(methods=("postprocess", "wasserstein-naive"), epsilons=(0.8, 2.0), public=("last-period",),
                           dependence=model)
    s = dependence_summary(cfg, periods=5, subcounts=True, prior=0.3)
    assert s.correlated_delta == count_delta and s.release_delta.value == delta and s.release_delta.exact
    # DL rate a = ε/Δ_z for post-processing, ε/(2Δ_z) for the exponential mechanism, at the first ε
    rates = [a for _, a, _, _ in s.noise]
    assert rates == pytest.approx([0.8 / delta, 0.8 / (2 * delta)], rel=1e-12)
    for _, a, sd, mae in s.noise:
        assert sd == pytest.approx(math.sqrt(dl_variance(a)), rel=1e-12) and mae == pytest.approx(dl_mean_abs(a))
    assert s.guarantee.epsilon == 0.8 and s.guarantee.periods == 5 and s.conditioned.epsilon == pytest.approx(1.6)
    # Lemma 4: p e^{-ε} / (p e^{-ε} + 1 − p) ≤ posterior ≤ p e^{ε} / (p e^{ε} + 1 − p)
    lo = 0.3 * math.exp(-0.8) / (0.3 * math.exp(-0.8) + 0.7)
    hi = 0.3 * math.exp(0.8) / (0.3 * math.exp(0.8) + 0.7)
    assert s.band == pytest.approx((lo, hi), rel=1e-12)

