"""Built-in demo datasets (engine.data.demos): Table S1 statistics, determinism, realism, the authors' input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold

from engine.data.demos import (
    NIGERIA_POSITIVES,
    demo_names,
    load_demo,
    replication_path,
    shared_dir,
    table_s1_consumption_quantiles,
)
from engine.data.preparation import DataSpec, Normalization, prepare
from engine.errors import InvalidParameterError

HAVE_SHARED = replication_path().is_file()


def _targeting_accuracy(x: np.ndarray, y: np.ndarray, q: float = 29) -> float:
    """The authors' protocol: KFold(5, shuffle, seed 0), Ridge(), q-th percentile rule on actual and predicted."""
    accs = []
    for train, test in KFold(n_splits=5, shuffle=True, random_state=0).split(x):
        pred = Ridge().fit(x[train], y[train]).predict(x[test])
        actual = y[test] <= np.percentile(y[test], q)
        chosen = pred <= np.percentile(pred, q)
        accs.append(np.mean(actual == chosen))
    return float(np.mean(accs))


def test_demo_registry_lists_generated_demos():
    names = demo_names()
    assert names[:2] == ["togo-demo", "nigeria-demo"]
    assert ("replication" in names) is HAVE_SHARED
    with pytest.raises(InvalidParameterError, match="unknown demo dataset 'togo'; available: togo-demo"):
        load_demo("togo")


def test_togo_demo_matches_table_s1():
    demo = load_demo("togo-demo")
    assert demo.frame.shape == (4201, 11) and len(demo.spec.features) == 10
    assert demo.program == "targeting" and demo.synthetic and "synthetic" in demo.title.lower()
    y = demo.frame[demo.spec.target].to_numpy()
    # exact by construction (quantiles of a fitted template), so the tolerances are numerical only
    assert y.min() == pytest.approx(0.005, abs=1e-12) and y.max() == pytest.approx(1.0, abs=1e-12)
    assert y.mean() == pytest.approx(0.073, abs=1e-9)
    assert y.std() == pytest.approx(0.068, abs=1e-9)
    assert y.std(ddof=1) == pytest.approx(0.068, abs=1e-5)
    targeted = y <= np.percentile(y, 29)
    assert abs(targeted.mean() - 0.29) <= 1 / 4201  # the percentile is one record's value; ties impossible
    features = demo.frame[list(demo.spec.features)]
    assert (features.to_numpy() >= 0).all()
    # skewed like call-detail records: mean above median for every count/amount feature
    skewed = [c for c in features if c != "active_days"]
    assert (features[skewed].mean() > features[skewed].median()).all()
    assert (features["data_mb"] == 0).mean() == pytest.approx(0.25, abs=0.05)
    np.testing.assert_array_equal(np.sort(y), table_s1_consumption_quantiles())


def test_togo_demo_target_is_driven_by_the_features():
    demo = load_demo("togo-demo")
    y = demo.frame["consumption"]
    correlations = demo.frame[list(demo.spec.features)].corrwith(y, method="spearman")
    assert (correlations > 0.15).all() and (correlations < 0.8).all()


def test_togo_demo_non_private_targeting_is_realistic():
    demo = load_demo("togo-demo")
    prepared = prepare(demo.frame, demo.spec)
    accuracy = _targeting_accuracy(prepared.x, prepared.y)
    assert 0.70 <= accuracy <= 0.85
    assert accuracy == pytest.approx(0.7701, abs=5e-4)  # measured value, stated in the module docstring


def test_nigeria_demo_matches_table_s1_and_has_profit_columns():
    demo = load_demo("nigeria-demo")
    assert demo.frame.shape == (20788, 18) and len(demo.spec.features) == 15
    assert demo.program == "lending" and demo.synthetic
    assert demo.spec.target == "low_risk"
    assert demo.spec.roles == {"loan_amount": "loan_amount", "revenue": "interest", "interest": "interest"}
    y = demo.frame["low_risk"].to_numpy()
    assert set(np.unique(y)) == {0.0, 1.0} and y.sum() == NIGERIA_POSITIVES
    assert y.mean() == pytest.approx(0.633, abs=5e-5)
    assert y.std(ddof=1) == pytest.approx(0.482, abs=5e-4)
    loan, interest = demo.frame["loan_amount"], demo.frame["interest"]
    assert (loan >= 1000).all() and (loan <= 200000).all() and (loan % 500 == 0).all()
    rate = interest / loan
    assert rate.min() >= 0.10 - 1e-3 and rate.max() <= 0.45 + 1e-3
    assert rate.mean() == pytest.approx(0.28, abs=0.005)
    assert not set(demo.spec.features) & {"low_risk", "loan_amount", "interest"}
    # riskier borrowers pay higher rates on average
    assert rate[y == 0].mean() > rate[y == 1].mean()


def test_nigeria_demo_non_private_lending_is_realistic_and_profitable():
    demo = load_demo("nigeria-demo")
    prepared = prepare(demo.frame, demo.spec)
    accs = []
    for train, test in KFold(n_splits=5, shuffle=True, random_state=0).split(prepared.x):
        model = LogisticRegression(max_iter=1000).fit(prepared.x[train], prepared.y[train])
        accs.append(np.mean(model.predict(prepared.x[test]) == prepared.y[test]))
    accuracy = float(np.mean(accs))
    assert 0.70 <= accuracy <= 0.85
    assert accuracy == pytest.approx(0.8031, abs=5e-4)
    from engine.evaluation.programs import ProgramConfig, evaluate_program

    result = evaluate_program(prepared.x, prepared.y, ProgramConfig(kind="lending"), extras=prepared.extras)
    assert result.metrics["accuracy"] == pytest.approx(accuracy, abs=5e-4)
    assert result.metrics["profit"] > 0  # the paper's four cases; a lender that loses money non-privately is no demo


def test_demos_are_deterministic_and_callers_cannot_mutate_the_cache():
    first = load_demo("togo-demo")
    first.frame.loc[0, "calls_out"] = -1.0
    first.frame["consumption"] = 0.0
    second = load_demo("togo-demo")
    assert second.frame.loc[0, "calls_out"] >= 0 and second.frame["consumption"].mean() == pytest.approx(0.073)
    third = load_demo("togo-demo")
    pd.testing.assert_frame_equal(second.frame, third.frame)
    assert prepare(second.frame, second.spec).fingerprint == prepare(third.frame, third.spec).fingerprint
    nigeria = load_demo("nigeria-demo")
    assert prepare(nigeria.frame, nigeria.spec).fingerprint != prepare(second.frame, second.spec).fingerprint


def test_replication_is_absent_without_the_shared_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("STUDIO_SHARED", str(tmp_path))
    assert shared_dir() == tmp_path
    assert "replication" not in demo_names()
    with pytest.raises(InvalidParameterError, match="not available here: it reads the authors' demo input"):
        load_demo("replication")


@pytest.mark.skipif(not HAVE_SHARED, reason="shared/reference/tdp-replication is not present")
def test_replication_demo_is_the_authors_input_with_their_preparation():
    demo = load_demo("replication")
    assert demo.frame.shape == (4201, 11)
    assert demo.spec.features == tuple(str(i) for i in range(10))
    assert demo.spec.target == "targeting_variable"
    assert demo.spec.normalization == Normalization(method="maxnorm", standardize=False)
    assert "synthetic" in demo.title.lower() and demo.synthetic
    raw = demo.frame[list(demo.spec.features)].to_numpy()
    prepared = prepare(demo.frame, demo.spec)
    # their L2_normalizer: every row divided by the largest row norm (here 1.5·√10, the corner of their cube)
    biggest = np.linalg.norm(raw, axis=1).max()
    assert biggest == pytest.approx(1.5 * math.sqrt(10), rel=1e-12)
    np.testing.assert_allclose(prepared.x, raw / biggest, rtol=1e-13, atol=1e-16)
    # and their non-private targeting accuracy (outputs/nonprivate_prediction_metrics.csv) follows exactly
    assert _targeting_accuracy(prepared.x, prepared.y) == pytest.approx(0.9095430609818245, abs=1e-12)


def test_establishments_demo_when_its_generator_is_installed():
    if "establishments-demo" not in demo_names():
        pytest.skip("engine/data/establishments.py has not landed")
    demo = load_demo("establishments-demo")
    assert demo.program == "sums" and demo.synthetic and len(demo.frame) >= 20
    assert isinstance(demo.spec, DataSpec)
