"""The one analysis entry point: a page run equals a sweep cell; decision agreement; trivial baselines; the comparison."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from engine.analysis import (
    AnalysisConfig,
    AnalysisData,
    analyse,
    analyse_mechanisms,
    analysis_seeds,
    baseline_column,
    mean_interval,
)
from engine.comparison import alternatives, comparison_verdict
from engine.data.demos import load_demo
from engine.data.preparation import prepare
from engine.errors import InsufficientDataError, InvalidParameterError
from engine.evaluation.programs import ProgramConfig, decision_agreement, evaluate_program, trivial_baselines
from engine.guarantee import Guarantee
from engine.mechanisms.gaussian import GaussianMechanism
from engine.mechanisms.jl_laplace import JLLaplace
from engine.mechanisms.mondrian import MondrianKAnonymity
from engine.mechanisms.private_projection import PrivateProjection
from engine.sweeps import Budget, SweepConfig, run_sweep


@pytest.fixture(scope="module")
def togo():
    demo = load_demo("togo-demo")
    return prepare(demo.frame, demo.spec)


def _one_point_sweep(mechanism: str, b: float, budget: Budget, seed: int, reps: int, **kw) -> SweepConfig:
    return SweepConfig(budgets=(budget,), b_values=(b,), mechanism=mechanism, repetitions=reps, seed=seed,
                       references=False, **kw)


@pytest.mark.parametrize("kind", ["gaussian", "projection"])
def test_page_run_equals_the_sweep_cell_for_the_same_seed(togo, kind):
    budget = Budget(3.0, 1e-4, 0.9999, 5e-5)
    cfg = _one_point_sweep(kind, 0.25, budget, seed=11, reps=3)
    sweep = run_sweep(togo, cfg, use_cache=False)
    mechanism = cfg.mechanism_for(0.25, budget, d=togo.d)
    _, (point,) = analyse_mechanisms(togo, [mechanism], cfg.analysis_config(), seed=11, repetitions=3)
    table = sweep.table
    for rep, metrics in enumerate(point.runs):
        row = metrics.row()
        assert set(row) <= set(table.columns)
        for key, value in row.items():  # every release is scored AND attacked, as every sweep cell (one rule)
            expected = table[key].iloc[rep]
            assert value == expected or (math.isnan(value) and math.isnan(expected)), (rep, key)
    assert point.first.singling_out.protection == table["protection_singling_out"].iloc[0]
    assert point.first.attribute_inference.protection == table["protection_attribute_inference"].iloc[0]
    # one aggregation rule: the page's protection over its releases is the sweep summary's at that point
    summary = sweep.summary().iloc[0]
    for attack in ("singling_out", "attribute_inference", "distinguishing"):
        mean, sd, lo, hi = point.protection(attack)
        assert (mean, lo, hi) == (summary[f"protection_{attack}_mean"], summary[f"protection_{attack}_lo"],
                                  summary[f"protection_{attack}_hi"]), attack


def test_paper_output_scale_is_undone_for_the_program_as_for_the_attacker(togo):
    """The page used to score the as-printed X/k (0.5825) while the sweep scored the rescaled release (0.6153)."""
    config = AnalysisConfig(program=ProgramConfig(), attacks=())
    data = AnalysisData.build(togo, config, holdout_seed=1)
    printed = PrivateProjection(b=0.25, epsilon1=3, delta1=1e-4, epsilon2=0.9999, delta2=5e-5, output_scale="paper")
    unbiased = PrivateProjection(b=0.25, epsilon1=3, delta1=1e-4, epsilon2=0.9999, delta2=5e-5)
    a = analyse(data, printed, seed=5)
    b = analyse(data, unbiased, seed=5)
    assert a.scale == pytest.approx(1e-4)
    np.testing.assert_allclose(a.value / a.scale, b.value, rtol=1e-12, atol=1e-12)
    assert a.program.metrics["accuracy"] == pytest.approx(b.program.metrics["accuracy"], abs=1e-3)


def test_measured_gamma_is_one_for_the_data_and_matches_its_definition(togo):
    config = AnalysisConfig(program=ProgramConfig(), attacks=())
    data = AnalysisData.build(togo, config, holdout_seed=2)
    assert analyse(data, None, seed=1).decision_agreement == 1.0
    res = analyse(data, GaussianMechanism(0.5, 1.0, 1e-4), seed=3)
    priv, base = res.program.decisions, data.baseline.decisions
    assert res.decision_agreement == pytest.approx(np.mean(priv == base))
    # both select the poorest 29 % (no ties): every person moved in is matched by one moved out
    moved_in = np.count_nonzero(priv & ~base)
    assert res.decision_agreement == pytest.approx(1 - 2 * moved_in / priv.size, abs=2 / priv.size)


def test_pure_noise_release_is_flagged_as_no_better_than_a_trivial_rule(togo):
    """A tiny budget makes targeting random: the result must name the trivial rule it does not beat."""
    config = AnalysisConfig(program=ProgramConfig(), attacks=())
    data = AnalysisData.build(togo, config, holdout_seed=3)
    res = analyse(data, GaussianMechanism(0.05, 0.01, 1e-6), seed=4)
    assert "target nobody" in res.trivial_beaters
    q = 0.29
    p = float(np.mean(data.baseline.decisions))
    assert p == pytest.approx(q, abs=1e-3)
    # the random rule at the same share scores s·p + (1 − s)(1 − p) in expectation; measured γ of noise ≈ the same
    assert res.decision_agreement == pytest.approx(p * p + (1 - p) * (1 - p), abs=0.05)
    # and the release's row carries what the rules that use no data agree with the non-private program
    row = res.row()
    assert row[baseline_column("target nobody", "decision_agreement")] == pytest.approx(1 - p, abs=1e-12)
    assert row[baseline_column("target everybody", "decision_agreement")] == pytest.approx(p, abs=1e-12)
    assert row[baseline_column("random targeting at the same share", "decision_agreement")] == pytest.approx(
        p * p + (1 - p) * (1 - p), abs=1e-12)
    # noise this strong agrees no better than targeting nobody: a γ target it meets needs no data
    from engine.analysis import gamma_check

    no_data = dict(res.metrics.agreement_baselines)
    check = gamma_check(0.6, (res.decision_agreement, res.decision_agreement, res.decision_agreement), b=0.05,
                        epsilon=0.01, delta=1e-6, no_data=no_data)
    assert check.no_data_rule == "target nobody" and "A rule that uses no data meets this target" in check.text
    assert res.row()[baseline_column("target nobody", "accuracy")] == pytest.approx(
        res.program.baselines["target nobody"]["accuracy"])


def test_trivial_baselines_oracles():
    truth = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0], bool)  # 3 eligible of 10
    selected = np.array([1, 0, 0, 1, 0, 0, 0, 0, 0, 0], bool)  # share 0.2
    b = trivial_baselines(selected, truth, ProgramConfig(population=1000.0))
    assert b["target nobody"]["accuracy"] == pytest.approx(0.7)
    assert b["target everybody"]["accuracy"] == pytest.approx(0.3)
    assert b["random targeting at the same share"]["accuracy"] == pytest.approx(0.2 * 0.3 + 0.8 * 0.7)
    assert b["target nobody"]["exclusion_errors_population"] == pytest.approx(300.0)
    assert b["target nobody"]["exclusion_rate"] == pytest.approx(1.0)
    cfg = ProgramConfig(kind="lending", loan_amount=10.0, revenue_rate=0.2, interest_rate=0.1)
    lend = trivial_baselines(selected, truth, cfg)
    # approve all: 3 × +2 revenue, 7 × −(10 + 1) default; approve none: 3 × −2 lost revenue
    assert lend["approve everyone"]["profit"] == pytest.approx(3 * 2 - 7 * 11)
    assert lend["approve no one"]["profit"] == pytest.approx(-6.0)
    assert lend["random approval at the same rate"]["profit"] == pytest.approx(0.2 * (6 - 77) + 0.8 * -6)


def test_exclusion_rate_is_the_social_protection_rate():
    x = np.arange(40.0).reshape(-1, 1)
    y = np.arange(40.0)[::-1] % 7  # a poor predictor
    r = evaluate_program(x, y, ProgramConfig(quantile=0.3))
    m = r.metrics
    assert m["exclusion_rate"] == pytest.approx(m["fnr"])
    assert m["inclusion_rate"] == pytest.approx(1 - m["precision"])
    assert m["exclusion_errors_population"] == m["exclusion_errors"]  # no population: the sample itself


def test_lending_top_share_rule_and_rates_as_amounts():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    y = (x[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(float)
    loan = rng.uniform(100, 1000, 400)
    rate = np.full(400, 12.0)  # percent
    cfg = ProgramConfig(kind="lending", approval_rule="top_share", approve_share=0.3, interest_unit="percent")
    r = evaluate_program(x, y, cfg, extras={"loan_amount": loan, "interest": rate})
    assert r.metrics["approval_rate"] == pytest.approx(0.3, abs=1 / 400)
    as_amount = evaluate_program(x, y, ProgramConfig(kind="lending", approval_rule="top_share", approve_share=0.3),
                                 extras={"loan_amount": loan, "interest": rate * loan / 100})
    assert r.metrics["profit"] == pytest.approx(as_amount.metrics["profit"])
    with pytest.raises(InvalidParameterError, match="approval_rule"):
        ProgramConfig(kind="lending", approval_rule="top_share", paper_faithful=True)


def test_jl_adversary_knowing_every_released_row_is_refused(togo):
    config = AnalysisConfig(program=None, attacks=("singling_out",), known_records=togo.n)
    data = AnalysisData.build(togo, config, holdout_seed=1)
    with pytest.raises(InsufficientDataError, match="known_records"):
        analyse(data, JLLaplace.from_budget(0.5, 2.0, 1e-4, d=togo.d), seed=1)


def test_k_anonymity_runs_through_the_same_analysis(togo):
    _, (point,) = analyse_mechanisms(togo, [MondrianKAnonymity(k=2)], AnalysisConfig(), seed=3)
    assert 0.0 <= point.first.singling_out.protection <= 1.0
    assert point.first.distinguishing.protection == pytest.approx(0.0)  # k-anonymity bounds nothing


def test_honest_comparison_says_when_the_gaussian_needs_less_noise(togo):
    candidate = Guarantee(epsilon=1.0, delta=1e-4, b=0.25)
    chosen = PrivateProjection.from_budget(0.25, 1.0, 1e-4)
    others = alternatives(chosen, d=togo.d, candidate=candidate)
    assert [m.KIND for m in others] == ["gaussian", "jl-laplace", "mondrian"]
    assert others[0].epsilon == pytest.approx(1.0) and others[0].delta == pytest.approx(1e-4)
    _, points = analyse_mechanisms(togo, [chosen, others[0]], AnalysisConfig(attacks=()), seed=1, repetitions=2)
    findings = comparison_verdict(points)
    assert any("Gaussian" in f.text and "less noise" in f.text for f in findings)


def test_analysis_seeds_are_the_one_point_sweep_seeds():
    h, a = analysis_seeds(7)
    from engine.rng import spawn_seeds

    s = spawn_seeds(7, 2)
    assert (h.entropy, h.spawn_key) == (s[0].entropy, s[0].spawn_key)
    assert (a.entropy, a.spawn_key) == (s[1].entropy, s[1].spawn_key)


def test_mean_interval_oracle():
    mean, sd, lo, hi = mean_interval([0.70, 0.72, 0.71, 0.69])
    assert mean == pytest.approx(0.705) and sd == pytest.approx(np.std([0.70, 0.72, 0.71, 0.69], ddof=1))
    assert hi - mean == pytest.approx(3.182446305 * sd / 2, rel=1e-6)  # t_0.975,3
    assert math.isnan(mean_interval([1.0])[2])


def test_analysis_config_round_trips_and_validates():
    cfg = AnalysisConfig(program=ProgramConfig(kind="lending", approval_rule="top_share", approve_share=0.4),
                         attacks=("singling_out",), holdout=50)
    assert AnalysisConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(InvalidParameterError, match="attack"):
        AnalysisConfig(attacks=("membership",))
    with pytest.raises(InvalidParameterError, match="distinct"):
        AnalysisConfig(attacks=("singling_out", "singling_out"))


def test_no_outcome_no_program(togo):
    frame = pd.DataFrame(togo.x, columns=list(togo.feature_names))
    from engine.data.preparation import DataSpec

    bare = prepare(frame, DataSpec(tuple(togo.feature_names)))
    data = AnalysisData.build(bare, AnalysisConfig(program=None, attacks=("singling_out",)), holdout_seed=0)
    res = analyse(data, GaussianMechanism(0.5, 1.0, 1e-4), seed=0)
    assert res.program is None and math.isnan(res.decision_agreement)
    assert "accuracy" not in res.row() and "protection_singling_out" in res.row()
    assert decision_agreement(evaluate_program(togo.x, togo.y), evaluate_program(togo.x, togo.y)) == 1.0


def _same_rows(a, b):
    a, b = a.row(), b.row()
    return a.keys() == b.keys() and all(a[k] == b[k] or (isinstance(a[k], float) and math.isnan(a[k])
                                                        and math.isnan(b[k])) for k in a)


def test_threads_give_the_serial_numbers_and_report_every_release(togo):
    """workers=2 analyses releases in two threads: every row (program, measured γ, the three attacks) equals the
    serial run's for the same seed, progress comes from the calling thread after every release, and a cancelled
    token stops the run."""
    import threading

    from engine.errors import CancelledError
    from engine.progress import CancelToken

    demo_program = load_demo("togo-demo").program_config()
    mechanisms = [GaussianMechanism.from_budget(0.5, 2.0, 1e-4), MondrianKAnonymity(k=2)]
    config = AnalysisConfig(program=demo_program)
    _, serial = analyse_mechanisms(togo, mechanisms, config, seed=4, repetitions=2)
    callers, seen = set(), []

    def record(p):
        callers.add(threading.current_thread().name)
        seen.append(p.done)

    _, threaded = analyse_mechanisms(togo, mechanisms, config, seed=4, repetitions=2, workers=2, progress=record)
    for mine, theirs in zip(threaded, serial, strict=True):
        assert len(mine.runs) == len(theirs.runs) == 2
        assert all(_same_rows(a, b) for a, b in zip(mine.runs, theirs.runs, strict=True))
    assert callers == {threading.current_thread().name}
    assert seen[-1] == 4 and sorted(seen) == seen and seen.count(4) >= 2  # each of 2 × 2 releases, then "done"

    token = CancelToken()

    def stop_at_first(p):
        if p.done == 1:
            token.cancel()

    with pytest.raises(CancelledError):
        analyse_mechanisms(togo, mechanisms, AnalysisConfig(attacks=()), seed=2, repetitions=3, workers=2,
                           progress=stop_at_first, cancel=token)


def test_page_run_reports_progress_and_can_be_cancelled(togo):
    """Every release is reported (the dashboard's progress bar and its interruption points) and a cancelled token
    stops the run before the next release."""
    from engine.errors import CancelledError
    from engine.progress import CancelToken

    mechanisms = [GaussianMechanism.from_budget(0.25, 1.0, 1e-4), MondrianKAnonymity(k=2)]
    seen = []
    _, points = analyse_mechanisms(togo, mechanisms, AnalysisConfig(attacks=()), seed=2, repetitions=3,
                                   progress=seen.append)
    assert [p.done for p in seen] == [0, 0, 1, 2, 3, 4, 5, 6]  # before each of 2 × 3 releases, then "done"
    assert all(p.total == 6 for p in seen) and seen[-1].message == "done"
    assert all(b.elapsed >= a.elapsed for a, b in zip(seen, seen[1:], strict=False))
    quiet = analyse_mechanisms(togo, mechanisms, AnalysisConfig(attacks=()), seed=2, repetitions=3)[1]
    assert [[m.row() for m in p.runs] for p in quiet] == [[m.row() for m in p.runs] for p in points]  # no change

    token = CancelToken()

    def stop_after_two(p):
        if p.done == 2:
            token.cancel()

    with pytest.raises(CancelledError):
        analyse_mechanisms(togo, mechanisms, AnalysisConfig(attacks=()), seed=2, repetitions=3,
                           progress=stop_after_two, cancel=token)


def test_analysis_inputs_are_built_once_per_data_and_configuration(monkeypatch):
    """AnalysisData.cached returns build's inputs, made once per (data fingerprint, configuration) for the last four
    pairs: a page's second run on the same data reuses the holdout split and the non-private references."""
    import engine.analysis as analysis_module

    analysis_module.clear_analysis_cache()
    built = []
    original = AnalysisData.build.__func__
    monkeypatch.setattr(AnalysisData, "build", classmethod(lambda cls, *a, **k: built.append(1) or original(cls, *a, **k)))
    demo = load_demo("togo-demo")
    data = prepare(demo.frame.head(600), demo.spec)
    config = AnalysisConfig(program=demo.program_config(), attacks=("singling_out",))
    first = AnalysisData.cached(data, config)
    assert AnalysisData.cached(data, config) is first and len(built) == 1
    fresh = original(AnalysisData, data, config)
    np.testing.assert_array_equal(first.x_rel, fresh.x_rel)
    np.testing.assert_array_equal(first.x_hold, fresh.x_hold)
    assert first.baseline.metrics == fresh.baseline.metrics
    other = AnalysisData.cached(data, AnalysisConfig(program=demo.program_config(), attacks=("singling_out",),
                                                     holdout_seed=config.holdout_seed + 1))
    assert other is not first and len(built) == 2
    for seed in range(2, 6):  # four more configurations push the first one out
        AnalysisData.cached(data, AnalysisConfig(attacks=("singling_out",), holdout_seed=seed))
    assert AnalysisData.cached(data, config) is not first and len(built) == 7
    analysis_module.clear_analysis_cache()


def test_references_built_in_two_threads_are_the_same_and_the_page_uses_its_threads(togo, monkeypatch):
    """The singling-out reference's scan is split between the page's threads (each share of the centres on its own
    thread); the reference is the same as with one."""
    import threading

    import engine.attacks._chebyshev as chebyshev
    from engine.analysis import clear_analysis_cache

    calls: list[tuple[str, int]] = []
    scan = chebyshev.two_nearest_chebyshev

    def recording(rows, centres, *args, **kwargs):
        calls.append((threading.current_thread().name, len(centres)))
        return scan(rows, centres, *args, **kwargs)

    monkeypatch.setattr(chebyshev, "two_nearest_chebyshev", recording)
    config = AnalysisConfig(attacks=("singling_out",))
    one = AnalysisData.build(togo, config)
    assert [name for name, _ in calls] == ["MainThread"]
    centres = calls[0][1]
    calls.clear()
    two = AnalysisData.build(togo, config, workers=2)
    assert sorted(size for _, size in calls) == sorted([centres // 2, centres - centres // 2])
    assert all(name.startswith("singling-out") for name, _ in calls)
    assert two.so_baseline == one.so_baseline and np.array_equal(two.x_rel, one.x_rel)
    clear_analysis_cache()
    calls.clear()
    analyse_mechanisms(togo, [GaussianMechanism.from_budget(0.25, 3.0, 1e-4)], config, seed=1, workers=2)
    assert sum(name.startswith("singling-out") for name, _ in calls) == 2  # the page's reference, in its 2 threads
    for bad in (0, 17):
        with pytest.raises(InvalidParameterError, match="workers"):
            AnalysisData.build(togo, config, workers=bad)
        with pytest.raises(InvalidParameterError, match="workers"):
            AnalysisData.cached(togo, config, workers=bad)  # a cache hit checks it too


def test_singling_out_index_is_shared_by_runs_and_not_pickled(togo):
    """The singling-out search's index depends on the released rows only: the build's baseline made it, every run
    reuses that object, and a pickled copy (a sweep worker's) leaves it out and builds an equal one on first use."""
    import pickle

    from engine.attacks.singling_out import singling_out

    built = AnalysisData.build(togo, AnalysisConfig(attacks=("singling_out",)))
    index = built.__dict__["so_index"]
    assert built.so_index is index and index.filtered
    copy = pickle.loads(pickle.dumps(built))
    assert "so_index" not in copy.__dict__ and len(pickle.dumps(built)) < index.nbytes
    np.testing.assert_array_equal(copy.so_index.codes, index.codes)
    np.testing.assert_array_equal(copy.so_index.order, index.order)
    mech = GaussianMechanism.from_budget(0.25, 3.0, 1e-4)
    view = mech.release(built.x_rel, rng=np.random.default_rng(5)).value
    assert singling_out(built.x_rel, view, index=index) == singling_out(built.x_rel, view)
