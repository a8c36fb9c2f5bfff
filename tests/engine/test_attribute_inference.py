"""Attribute inference: holdout split, success rules, Wilson/Anonymeter statistics, extremes, authors' numbers."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from engine.attacks.attribute_inference import (
    AttributeInferenceConfig,
    attribute_inference,
    attribute_inference_baseline,
    default_holdout_size,
    holdout_split,
    inference_success,
    known_column_count,
    relative_protection,
    residual_risk,
    wilson_rate,
)
from engine.errors import EngineError, InsufficientDataError, InvalidParameterError

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("STUDIO_SHARED", REPO / ".." / "shared"))
REFERENCE = SHARED / "reference" / "tdp-replication"


def _unit_ball(rng, n, d):
    x = rng.normal(size=(n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True).max()


# ------------------------------------------------------------------------------------------- holdout split
def test_holdout_split_is_a_disjoint_partition_of_the_requested_size():
    rel, hold = holdout_split(4201, 500, rng=np.random.default_rng(0))
    assert len(hold) == 500 and len(rel) == 3701
    assert not set(rel.tolist()) & set(hold.tolist())
    np.testing.assert_array_equal(np.sort(np.concatenate([rel, hold])), np.arange(4201))
    assert np.all(np.diff(rel) > 0) and np.all(np.diff(hold) > 0)


def test_holdout_split_is_reproducible_and_random():
    a = holdout_split(100, 20, rng=np.random.default_rng(5))
    b = holdout_split(100, 20, rng=np.random.default_rng(5))
    c = holdout_split(100, 20, rng=np.random.default_rng(6))
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[1], c[1])


def test_default_holdout_size():
    assert default_holdout_size(4201) == 500
    assert default_holdout_size(1000) == 200
    assert default_holdout_size(2) == 1
    rel, hold = holdout_split(50, rng=np.random.default_rng(0))
    assert len(hold) == 10 and len(rel) == 40


@pytest.mark.parametrize("n, n_holdout", [(1, None), (10, 0), (10, 10), (10, 2.5)])
def test_holdout_split_rejects_bad_sizes(n, n_holdout):
    with pytest.raises(InvalidParameterError):
        holdout_split(n, n_holdout, rng=np.random.default_rng(0))


def test_holdout_split_needs_a_generator():
    with pytest.raises(InvalidParameterError, match="Generator"):
        holdout_split(10, 2, rng=0)


# ------------------------------------------------------------------------------------------- success rules
def test_relative_rule():
    guesses = np.array([1.04, 1.0500001, 0.96, -1.0, 0.0, 1e-9, -2.09])
    secrets = np.array([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, -2.0])
    assert inference_success(guesses, secrets, rule="relative").tolist() == [True, False, True, False, True, False, True]


def test_spread_rule_does_not_depend_on_the_origin():
    # Review finding: the relative rule on centred data makes protection depend on where zero lies.
    rng = np.random.default_rng(8)
    x = _unit_ball(rng, 1500, 5)
    rel, hold = holdout_split(len(x), 300, rng=rng)
    noisy = x[rel] + rng.normal(scale=0.02, size=(len(rel), 5))
    shift = np.full(5, 3.0)
    a = attribute_inference(x[rel], noisy, x[hold], rng=np.random.default_rng(1))
    b = attribute_inference(x[rel] + shift, noisy + shift, x[hold] + shift, rng=np.random.default_rng(1))
    assert [c.main_success for c in a.cells] == [c.main_success for c in b.cells]
    assert a.protection == b.protection
    rel_a = attribute_inference(x[rel], noisy, x[hold], AttributeInferenceConfig(success_rule="relative"),
                                rng=np.random.default_rng(1))
    rel_b = attribute_inference(x[rel] + shift, noisy + shift, x[hold] + shift,
                                AttributeInferenceConfig(success_rule="relative"), rng=np.random.default_rng(1))
    assert rel_a.protection != rel_b.protection  # the origin-dependence the default avoids


def test_anonymeter_rule_reproduces_its_sign_quirk():
    # Anonymeter 1.0 divides by the signed guess: any negative guess "succeeds"; 1.04 vs 1 is judged
    # relative to the guess (0.04/1.04 ≤ 0.05).
    guesses = np.array([-3.0, 1.04, 1.2, 0.0])
    secrets = np.array([5.0, 1.0, 1.0, 0.0])
    assert inference_success(guesses, secrets, rule="anonymeter").tolist() == [True, True, False, True]


def test_success_rule_validation():
    with pytest.raises(InvalidParameterError, match="success_rule"):
        inference_success(np.zeros(1), np.zeros(1), rule="absolute")
    with pytest.raises(InvalidParameterError, match="tolerance"):
        inference_success(np.zeros(1), np.zeros(1), tolerance=-0.1)


# ------------------------------------------------------------------------------------------- statistics
@pytest.mark.parametrize("k, n", [(0, 500), (1, 500), (250, 500), (480, 500), (500, 500), (3, 7)])
def test_wilson_interval_solves_the_score_equation(k, n):
    """Independent oracle: the Wilson bounds p solve (p̂ − p)² = z² p(1 − p)/n (the score test's boundary)."""
    centre, err = wilson_rate(k, n, 0.95)
    z = norm.ppf(0.975)
    p_hat = k / n
    for p in (centre - err, centre + err):
        assert (p_hat - p) ** 2 == pytest.approx(z**2 * p * (1 - p) / n, rel=1e-9, abs=1e-15)


def test_residual_risk_matches_first_order_error_propagation():
    a, ea = wilson_rate(400, 500)
    c, ec = wilson_rate(100, 500)
    risk, (low, high) = residual_risk(400, 500, 100, 500)
    expected = (a - c) / (1 - c)
    # Numerical partial derivatives of (a − c)/(1 − c): an oracle independent of the closed-form derivative.
    h = 1e-7
    da = ((a + h - c) / (1 - c) - (a - h - c) / (1 - c)) / (2 * h)
    dc = ((a - c - h) / (1 - c - h) - (a - c + h) / (1 - c + h)) / (2 * h)
    err = math.hypot(da * ea, dc * ec)
    assert risk == pytest.approx(expected, rel=1e-12)
    assert low == pytest.approx(expected - err, rel=1e-6)
    assert high == pytest.approx(expected + err, rel=1e-6)


def test_residual_risk_is_clipped_to_unit_interval():
    risk, (low, high) = residual_risk(10, 500, 200, 500)  # control far more successful
    assert risk == 0.0 and low == 0.0 and 0.0 <= high <= 1.0


def test_relative_protection_equals_one_minus_residual_on_plain_rates():
    for a, c in [(0.3, 0.1), (0.9, 0.05), (0.5, 0.5)]:
        assert relative_protection(a, c) == pytest.approx(1 - (a - c) / (1 - c))
    assert relative_protection(0.05, 0.1) == 1.0  # release "better" than holdout: clipped
    assert relative_protection(1.0, 1.0) == 1.0


def test_known_column_count():
    assert [known_column_count(k, 10) for k in ("one", "half", "all-but-one")] == [1, 5, 9]
    assert [known_column_count(k, 15) for k in ("one", "half", "all-but-one")] == [1, 8, 14]
    assert [known_column_count(k, 2) for k in ("one", "half", "all-but-one")] == [1, 1, 1]


# ------------------------------------------------------------------------------------------- the attack
def test_releasing_the_data_lets_every_adversary_succeed():
    rng = np.random.default_rng(20)
    x = _unit_ball(rng, 2500, 6)
    rel, hold = holdout_split(len(x), 500, rng=rng)
    res = attribute_inference_baseline(x[rel], x[hold], rng=rng)
    # Continuous data without ties: the nearest released row on any known columns is the target itself.
    assert all(cell.main_success == 1.0 for cell in res.cells)
    assert res.protection == 0.0
    assert res.risk >= 0.95 and res.risk_ci[0] >= 0.9
    assert len(res.cells) == 3 * 6


def test_pure_noise_release_gives_relative_protection_near_one():
    rng = np.random.default_rng(21)
    x = _unit_ball(rng, 3000, 6)
    rel, hold = holdout_split(len(x), 500, rng=rng)
    noise = _unit_ball(rng, len(rel), 6)  # independent of the data: carries no information about anyone
    res = attribute_inference(x[rel], noise, x[hold], rng=rng)
    rel_prot = np.array([cell.relative_protection for cell in res.cells])
    # Main and control success are both ~3 % with n = 500 each: per-cell sd of (1−a)/(1−c) ≈ 0.011. The worst
    # of 18 cells stays within ~3 sd of 1, the mean (clipped at 1) within ~0.5 sd.
    assert res.protection >= 0.94
    assert rel_prot.mean() >= 0.99
    assert res.risk <= 0.08


def test_cells_cover_every_secret_for_every_adversary():
    rng = np.random.default_rng(22)
    x = rng.normal(size=(400, 5))
    rel, hold = holdout_split(400, 80, rng=rng)
    res = attribute_inference(x[rel], x[rel] + rng.normal(scale=0.5, size=(320, 5)), x[hold], rng=rng)
    for knowledge, h in (("one", 1), ("half", 3), ("all-but-one", 4)):
        cells = [c for c in res.cells if c.knowledge == knowledge]
        assert [c.secret for c in cells] == list(range(5))
        for c in cells:
            assert c.h == h and len(c.known) == h and c.secret not in c.known
            assert len(set(c.known)) == h
    assert res.n_attacks == 320 and res.n_control == 80
    assert res.protection == min(c.relative_protection for c in res.cells)
    assert res.worst.relative_protection == res.protection
    assert res.risk == max(c.risk for c in res.cells)
    assert res.anonymeter_protection == 1 - res.risk
    assert set(res.protection_by_knowledge()) == {"one", "half", "all-but-one"}


def test_same_seed_same_result_and_small_groups_are_capped():
    rng_data = np.random.default_rng(23)
    x = rng_data.normal(size=(40, 3))
    x_priv = x[:30] + rng_data.normal(scale=0.2, size=(30, 3))
    a = attribute_inference(x[:30], x_priv, x[30:], rng=np.random.default_rng(1))
    b = attribute_inference(x[:30], x_priv, x[30:], rng=np.random.default_rng(1))
    assert a == b
    assert a.n_attacks == 30 and a.n_control == 10


def test_knows_scale_adversary_undoes_output_scale():
    rng = np.random.default_rng(24)
    x = _unit_ball(rng, 1500, 5)
    rel, hold = holdout_split(len(x), 300, rng=rng)
    noisy = x[rel] + rng.normal(scale=0.02, size=(len(rel), 5))
    k = 10_000
    unscaled = attribute_inference(x[rel], noisy, x[hold], rng=np.random.default_rng(3))
    rescaled = attribute_inference(x[rel], noisy / k, x[hold], release_scale=1 / k, rng=np.random.default_rng(3))
    as_printed = attribute_inference(
        x[rel], noisy / k, x[hold], AttributeInferenceConfig(adversary="paper", success_rule="relative"),
        release_scale=1 / k, rng=np.random.default_rng(3),
    )
    assert [c.main_success for c in rescaled.cells] == [c.main_success for c in unscaled.cells]
    assert unscaled.protection < 0.8  # mild noise leaks secrets to an adversary who rescales
    # Guesses 10⁴ times too small never come within 5 % of the truth.
    assert all(c.main_success == 0.0 for c in as_printed.cells) and as_printed.protection == 1.0


def test_config_round_trip_and_paper_preset():
    cfg = AttributeInferenceConfig.paper()
    assert cfg.success_rule == "anonymeter" and cfg.adversary == "paper"
    assert AttributeInferenceConfig.from_json(cfg.to_json()) == cfg
    custom = AttributeInferenceConfig(n_attacks=100, knowledge=("all-but-one",), tolerance=0.1)
    assert AttributeInferenceConfig.from_dict(custom.to_dict()) == custom


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"n_attacks": 0}, "n_attacks"),
        ({"tolerance": -1.0}, "tolerance"),
        ({"knowledge": ()}, "knowledge"),
        ({"knowledge": ("two",)}, "knowledge"),
        ({"success_rule": "exact"}, "success_rule"),
        ({"adversary": "omniscient"}, "adversary"),
        ({"confidence_level": 1.0}, "confidence_level"),
    ],
)
def test_config_rejects_bad_values(kwargs, fragment):
    with pytest.raises(InvalidParameterError, match=fragment):
        AttributeInferenceConfig(**kwargs)


def test_bad_inputs_raise_engine_errors():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 3))
    with pytest.raises(InsufficientDataError, match="at least 2 columns"):
        attribute_inference(x[:, :1], x[:, :1], x[:5, :1], rng=rng)
    with pytest.raises(InvalidParameterError, match="x_priv must have as many columns"):
        attribute_inference(x, x[:, :2], x, rng=rng)
    with pytest.raises(InvalidParameterError, match="x_holdout must have as many columns"):
        attribute_inference(x, x, x[:, :2], rng=rng)
    with pytest.raises(InvalidParameterError, match="Generator"):
        attribute_inference(x, x, x, rng=1)
    with pytest.raises(InvalidParameterError, match="release_scale"):
        attribute_inference(x, x, x, release_scale=-1.0, rng=rng)
    with pytest.raises(EngineError, match="AttributeInferenceConfig"):
        attribute_inference(x, x, x, {"n_attacks": 5}, rng=rng)


@pytest.mark.skipif(not (REFERENCE / "replication_input.csv").exists(), reason="shared/ reference data not available")
def test_paper_mode_matches_the_authors_nonprivate_anonymeter_risks():
    """Their nonprivate_attribute_inference_metrics.csv (Anonymeter 1.0, 5 simulations; sd of max ≈ 0.001)."""
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(REFERENCE / "replication_input.csv")
    x = frame.drop(columns=["targeting_variable"]).to_numpy(float)
    x = x / np.max(np.linalg.norm(x, axis=1))
    expected = pd.read_csv(REFERENCE / "outputs" / "nonprivate_attribute_inference_metrics.csv")
    rng = np.random.default_rng(2024)
    rel, hold = holdout_split(len(x), 500, rng=rng)
    res = attribute_inference_baseline(x[rel], x[hold], AttributeInferenceConfig.paper(), rng=rng)
    for style, knowledge in (("but_one", "all-but-one"), ("half", "half"), ("one", "one")):
        risks = [c.risk for c in res.cells if c.knowledge == knowledge]
        row = expected[expected["attack_style"] == style].iloc[0]
        # One simulation against the mean of 5: allow 0.01 (≈ 5× their simulation sd of the median/max).
        assert np.median(risks) == pytest.approx(row["avg_median_risk"], abs=0.01)
        assert max(risks) == pytest.approx(row["avg_max_risk"], abs=0.01)


@pytest.mark.parametrize("columns", [1, 2, 6, 7, 9])
def test_nearest_neighbour_search_is_exact_l1(columns):
    from engine.attacks._neighbours import nearest_on_column_sets

    rng = np.random.default_rng(30 + columns)
    candidates = rng.normal(size=(700, columns))
    queries = rng.normal(size=(150, columns))
    brute = np.argmin(np.abs(queries[:, None, :] - candidates[None, :, :]).sum(axis=2), axis=1)
    np.testing.assert_array_equal(nearest_on_column_sets(candidates, queries, [np.arange(columns)])[0], brute)


# ------------------------------------------------------------------------------------------- fast search == reference
def _reference_nearest(candidates, queries):
    """The previous implementation's search (k-d tree up to 6 columns, scikit-learn's argmin reduction beyond)."""
    from scipy.spatial import cKDTree
    from sklearn.metrics import pairwise_distances_argmin

    if candidates.shape[1] <= 6:
        return cKDTree(candidates).query(queries, k=1, p=1)[1]
    return pairwise_distances_argmin(queries, candidates, metric="manhattan")


def _reference_attribute_inference(x_released, x_priv, x_holdout, config=None, *, release_scale=1.0, rng):
    """The attack as implemented before the vectorised search: one search per (adversary, secret) cell."""
    from engine.attacks.attribute_inference import AttributeInferenceResult, InferenceCell
    from engine.attacks.threat_model import adversary_view

    config = AttributeInferenceConfig() if config is None else config
    xr, xp, xh = (np.asarray(a, dtype=float) for a in (x_released, x_priv, x_holdout))
    d = xr.shape[1]
    view = adversary_view(xp, release_scale=release_scale, adversary=config.adversary)
    n_main = min(config.n_attacks, xr.shape[0])
    n_control = min(config.n_attacks, xh.shape[0])
    main = xr[rng.choice(xr.shape[0], size=n_main, replace=False)]
    control = xh[rng.choice(xh.shape[0], size=n_control, replace=False)]
    targets = np.vstack([main, control])
    stacked = np.vstack([view, targets])
    ranges = stacked.max(axis=0) - stacked.min(axis=0)
    ranges[ranges == 0] = 1.0
    spreads = xr.std(axis=0)
    cells = []
    for knowledge in config.knowledge:
        h = known_column_count(knowledge, d)
        for j in range(d):
            others = np.delete(np.arange(d), j)
            known = others if h == d - 1 else np.sort(rng.choice(others, size=h, replace=False))
            nearest = _reference_nearest(view[:, known] / ranges[known], targets[:, known] / ranges[known])
            ok = inference_success(view[nearest, j], targets[:, j], tolerance=config.tolerance,
                                   rule=config.success_rule, spread=float(spreads[j]))
            s_main, s_ctrl = int(np.count_nonzero(ok[:n_main])), int(np.count_nonzero(ok[n_main:]))
            risk, ci = residual_risk(s_main, n_main, s_ctrl, n_control, config.confidence_level)
            a, c = s_main / n_main, s_ctrl / n_control
            cells.append(InferenceCell(knowledge, h, j, tuple(int(k) for k in known), a, c,
                                       relative_protection(a, c), risk, ci))
    worst = min(cells, key=lambda cell: cell.relative_protection)
    riskiest = max(cells, key=lambda cell: cell.risk)
    return AttributeInferenceResult(
        protection=worst.relative_protection, risk=riskiest.risk, risk_ci=riskiest.risk_ci, worst=worst,
        cells=tuple(cells), n_attacks=n_main, n_control=n_control, tolerance=config.tolerance,
        success_rule=config.success_rule, adversary=config.adversary, release_scale=float(release_scale),
        confidence_level=config.confidence_level,
    )


@pytest.mark.parametrize("seed", range(40))
def test_vectorised_attack_equals_the_previous_implementation(seed):
    """Same rng → identical result (every cell) on continuous data, where the nearest row is never an exact tie."""
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(30, 400))
    d = int(rng.integers(2, 10))
    x = _unit_ball(rng, n, d)
    rel, hold = holdout_split(n, rng=rng)
    kind = seed % 4
    scale = 1.0
    if kind == 0:  # the data itself (the baseline): the nearest row of a main target is the target
        x_priv = x[rel]
    elif kind == 1:  # mild noise
        x_priv = x[rel] + rng.normal(scale=0.02, size=(len(rel), d))
    elif kind == 2:  # strong noise, output scale undone by the adversary
        scale = 1e-4
        x_priv = scale * (x[rel] + rng.normal(scale=0.5, size=(len(rel), d)))
    else:  # a release with a different number of rows
        x_priv = _unit_ball(rng, int(rng.integers(2, 300)), d)
    config = AttributeInferenceConfig(
        n_attacks=int(rng.integers(5, 200)), success_rule=("spread", "relative", "anonymeter")[seed % 3]
    )
    fast = attribute_inference(x[rel], x_priv, x[hold], config, release_scale=scale,
                               rng=np.random.default_rng(seed))
    slow = _reference_attribute_inference(x[rel], x_priv, x[hold], config, release_scale=scale,
                                          rng=np.random.default_rng(seed))
    assert fast == slow


def _lattice(rng, n, d):
    """Integer data: many exact ties between distances, and duplicate rows."""
    return rng.integers(-2, 3, size=(n, d)).astype(float)


def _lowest_index_brute(rows, queries, known):
    """Independent oracle of the tie rule: sequential L1 sum over ``known`` in column order, lowest index."""
    out = []
    for q in queries:
        dist = np.zeros(len(rows))
        for k in known:
            dist = dist + np.abs(q[k] - rows[:, k])
        out.append(int(np.flatnonzero(dist == dist.min())[0]))
    return np.array(out)


@pytest.mark.parametrize("seed", range(12))
def test_nearest_row_search_breaks_ties_to_the_lowest_index(seed):
    from engine.attacks._neighbours import nearest_on_column_sets

    rng = np.random.default_rng(500 + seed)
    d = int(rng.integers(2, 7))
    rows = _lattice(rng, int(rng.integers(1, 120)), d)
    queries = _lattice(rng, int(rng.integers(1, 60)), d)
    if seed % 2:  # mix in continuous values: ties on some columns only
        rows[:, 0] += rng.normal(scale=0.3, size=len(rows))
    sets = [np.sort(rng.choice(d, size=h, replace=False)) for h in range(1, d + 1)]
    sets += [np.delete(np.arange(d), j) for j in range(d)]
    for known, found in zip(sets, nearest_on_column_sets(rows, queries, sets), strict=True):
        np.testing.assert_array_equal(found, _lowest_index_brute(rows, queries, known))


def test_all_but_one_search_is_exact_on_a_real_sized_noisy_release():
    from engine.attacks._neighbours import canonical_nearest, nearest_on_column_sets

    rng = np.random.default_rng(77)
    x = _unit_ball(rng, 1500, 8)
    rows = x[:1200] + rng.normal(scale=0.05, size=(1200, 8))
    queries = x[1000:]
    sets = [np.delete(np.arange(8), j) for j in range(8)]
    for known, found in zip(sets, nearest_on_column_sets(rows, queries, sets), strict=True):
        np.testing.assert_array_equal(found, canonical_nearest(rows, queries, known))


def test_duplicate_release_rows_resolve_to_the_first_copy():
    # The released rows 1 and 3 are identical and both nearest to the target: the first copy (row 1) is used.
    from engine.attacks._neighbours import nearest_on_column_sets

    rows = np.array([[5.0, 5.0, 0.0], [1.0, 1.0, 7.0], [3.0, 3.0, 3.0], [1.0, 1.0, 7.0]])
    target = np.array([[1.0, 1.2, 0.0]])
    found = nearest_on_column_sets(rows, target, [np.array([0, 1]), np.array([0])])
    assert [f.tolist() for f in found] == [[1], [1]]
