"""Tradeoff sweeps: grids, determinism under a seed, progress, cancel, cache, summary and Pareto oracles."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from engine.errors import CancelledError, DataValidationError, InsufficientDataError, InvalidParameterError
from engine.evaluation.programs import ProgramConfig
from engine.mechanisms.gaussian import GaussianMechanism
from engine.progress import CancelToken
from engine.sweeps import (
    PAPER_B_VALUES,
    Budget,
    SweepConfig,
    SweepResult,
    clear_cache,
    paper_budgets,
    pareto_mask,
    preset,
    released_rows,
    run_sweep,
)


@dataclass(frozen=True)
class TinyData:
    """Duck-typed prepared data (x in the unit ball, y, extras, fingerprint)."""

    x: np.ndarray
    y: np.ndarray
    extras: dict = field(default_factory=dict)
    fingerprint: str = ""


def _tiny(n=120, d=4, seed=0, lending=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1).max()
    if lending:
        y = (x[:, 0] + 0.2 * rng.normal(size=n) > 0).astype(float)
        return TinyData(x, y, {"loan_amount": rng.uniform(5, 15, size=n)}, f"tiny-lending-{seed}")
    y = x @ np.linspace(1, -1, d) + 0.1 * rng.normal(size=n)
    return TinyData(x, y, {}, f"tiny-{seed}")


def _config(**kw):
    base = dict(
        budgets=(Budget(3.0, 1e-3, 0.9, 5e-4),),
        b_values=(0.25, 2.0),
        repetitions=2,
        seed=11,
        holdout=20,
        program=ProgramConfig(folds=3),
    )
    base.update(kw)
    return SweepConfig(**base)


# ---------------------------------------------------------------------------------------------------------------
# presets and configuration


def test_paper_and_quick_presets_grid():
    n_priv = released_rows(4201)  # the attribute-inference holdout (500 rows) is not privatized
    assert n_priv == 3701
    paper = preset("paper", n_priv)
    assert paper.b_values == PAPER_B_VALUES == (0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.0)
    assert [(b.epsilon1, b.epsilon2) for b in paper.budgets] == [(2.0, 0.5), (2.0, 0.9999), (3.0, 0.5),
                                                                  (3.0, 0.9999)]
    for budget in paper.budgets:
        assert budget.delta == pytest.approx(1 / (n_priv + 1), rel=1e-12)
        assert budget.delta1 == pytest.approx(2 * budget.delta2, rel=1e-12)  # 2/3 : 1/3
    assert paper.repetitions == 50 and paper.k == 10_000
    # 1 non-private + 8 B × 4 budgets (B = 2 is in the grid: the classic-DP points), × 50
    assert paper.n_cells == (1 + 32) * 50
    quick = preset("quick", n_priv)
    assert [(b.epsilon1, b.epsilon2) for b in quick.budgets] == [(3.0, 0.9999)]
    assert quick.repetitions == 10 and quick.n_cells == 9 * 10
    assert [p.reference for p in quick.points()] == ["non-private"] + ["tdp"] * 7 + ["classic-dp"]
    assert released_rows(4201, ("singling_out",)) == 4201
    assert preset("quick", 4201, repetitions=3).budgets[0].delta == pytest.approx(1 / 4202)
    # Partitioned release (Nigeria): δ from the part size ⌈n/m⌉.
    assert paper_budgets(20_788, partitions=6)[0].delta == pytest.approx(1 / (math.ceil(20_788 / 6) + 1))
    assert released_rows(1000) == 800
    with pytest.raises(InvalidParameterError, match="preset must be one of"):
        preset("fast", 100)


def test_classic_dp_reference_added_when_b2_not_in_grid():
    cfg = _config(b_values=(0.1, 0.5))
    refs = [(p.reference, p.b) for p in cfg.points()]
    assert refs[0][0] == "non-private"
    assert refs[-1] == ("classic-dp", 2.0)
    assert cfg.n_cells == (1 + 2 + 1) * 2
    assert _config(b_values=(0.1,), references=False).n_cells == 2


def test_config_round_trip_and_validation():
    cfg = _config(mechanism="gaussian", attacks=("singling_out",), adversary="paper")
    assert SweepConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(InvalidParameterError, match="epsilon2 must be in"):
        _config(budgets=(Budget(3.0, 1e-3, 1.5, 1e-4),))  # the projection's step 4 needs ε2 < 1
    _config(budgets=(Budget(3.0, 1e-3, 1.5, 1e-4),), mechanism="gaussian")  # fine: totals only
    with pytest.raises(InvalidParameterError, match="at least one"):
        _config(budgets=())
    with pytest.raises(InvalidParameterError, match="distinct"):
        _config(b_values=(0.5, 0.5))
    with pytest.raises(InvalidParameterError, match=r"B must be in \(0, 2\]"):
        _config(b_values=(2.5,))
    with pytest.raises(InvalidParameterError, match="attack must be one of"):
        _config(attacks=("membership",))
    with pytest.raises(InvalidParameterError, match="repetitions"):
        _config(repetitions=0)
    with pytest.raises(InvalidParameterError, match="delta1 \\+ delta2"):
        Budget(1.0, 0.6, 0.5, 0.5)


# ---------------------------------------------------------------------------------------------------------------
# running


def test_table_columns_and_reference_rows():
    data = _tiny()
    res = run_sweep(data, _config(), use_cache=False)
    t = res.table
    assert len(t) == res.config.n_cells == 6
    assert res.n_released == 100 and res.n_holdout == 20
    assert res.cpu_seconds > 0 and not any(c.startswith("_") for c in t.columns)  # timing stays out of the table
    assert list(t["point"]) == [0, 0, 1, 1, 2, 2] and list(t["rep"]) == [0, 1] * 3
    assert list(t["reference"]) == ["non-private"] * 2 + ["tdp"] * 2 + ["classic-dp"] * 2
    for col in ("accuracy", "exclusion_errors_population", "accuracy_change", "protection_singling_out",
                "protection_attribute_inference", "protection_distinguishing", "distinguishing_paper_d",
                "noise_sd", "implied_epsilon"):
        assert col in t.columns, col
    nonpriv = t[t.reference == "non-private"]
    assert (nonpriv["protection_distinguishing"] == 0).all() and (nonpriv["noise_sd"] == 0).all()
    assert (nonpriv["accuracy_change"] == 0).all()
    # Continuous data released as is: everybody is singled out.
    assert (nonpriv["protection_singling_out"] < 0.05).all()
    # Protections are in [0, 1]; B = 2 implies classic DP at the same ε.
    for col in res.protection_columns:
        assert t[col].between(0, 1).all(), col
    dp = t[t.reference == "classic-dp"].iloc[0]
    assert dp["implied_epsilon"] == pytest.approx(dp["epsilon"]) and dp["epsilon"] == pytest.approx(3.9)
    tdp = t[t.reference == "tdp"].iloc[0]
    assert tdp["implied_epsilon"] == pytest.approx(8 * 3.9)  # ⌈2/0.25⌉ = 8 steps
    # distinguishing is data-free: identical across repetitions of a point
    assert t[t.point == 1]["protection_distinguishing"].nunique() == 1


def test_same_seed_same_table_regardless_of_workers():
    data = _tiny(seed=1)
    cfg = _config(seed=5)
    inline = run_sweep(data, cfg, workers=1, use_cache=False).table
    pooled = run_sweep(data, cfg, workers=2, use_cache=False).table
    pd.testing.assert_frame_equal(inline, pooled, check_exact=True)
    again = run_sweep(data, cfg, workers=1, use_cache=False).table
    pd.testing.assert_frame_equal(inline, again, check_exact=True)
    other = run_sweep(data, _config(seed=6), workers=1, use_cache=False).table
    assert not inline["protection_attribute_inference"].equals(other["protection_attribute_inference"])
    assert not inline["accuracy"].iloc[2:].equals(other["accuracy"].iloc[2:])


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_pool_start_methods_give_the_same_table(monkeypatch, method):
    import engine.sweeps.runner as sweeps

    data = _tiny(seed=8)
    cfg = _config(attacks=("singling_out", "distinguishing"))
    inline = run_sweep(data, cfg, use_cache=False).table
    monkeypatch.setattr(sweeps, "_start_method", lambda: method)
    pooled = run_sweep(data, cfg, workers=2, use_cache=False).table
    pd.testing.assert_frame_equal(inline, pooled, check_exact=True)


def test_worker_pool_is_started_once_and_serves_sweeps_of_other_data():
    """The session's pool is reused by the next sweep, whose workers swap in the new sweep's data (same tables as
    inline runs), and a shut-down pool is replaced by the next pooled sweep."""
    import engine.sweeps.runner as sweeps

    cfg = _config(attacks=("singling_out",))
    first, second = _tiny(seed=11), _tiny(seed=12)
    pooled_first = run_sweep(first, cfg, workers=2, use_cache=False).table
    pools = dict(sweeps._POOLS)
    pooled_second = run_sweep(second, cfg, workers=2, use_cache=False).table
    assert sweeps._POOLS == pools and len(pools) >= 1  # no new pool for the second sweep
    pd.testing.assert_frame_equal(pooled_first, run_sweep(first, cfg, use_cache=False).table, check_exact=True)
    pd.testing.assert_frame_equal(pooled_second, run_sweep(second, cfg, use_cache=False).table, check_exact=True)
    sweeps.shutdown_pools()
    assert sweeps._POOLS == {}
    again = run_sweep(first, cfg, workers=2, use_cache=False).table
    pd.testing.assert_frame_equal(again, pooled_first, check_exact=True)


def test_plan_runs_short_sweeps_inline_and_long_ones_on_the_workers_asked(monkeypatch):
    """``plan_sweeps``: a sweep estimated under ``INLINE_BELOW_SECONDS`` in one process gets one worker (a pool would
    not repay its start-up), a longer one the workers asked for; the estimate is the one-process estimate divided by
    the workers chosen (capped at the cores)."""
    import engine.sweeps.runner as runner
    from engine.sweeps import default_workers, plan_sweeps

    data = _tiny(seed=14)
    cfg = _config(attacks=("singling_out",))
    monkeypatch.setattr(runner, "estimate_seconds", lambda d, c, w=1: 3.0 if w == 1 else float("nan"))
    assert plan_sweeps(data, [cfg], 2) == (1, 3.0)
    monkeypatch.setattr(runner, "estimate_seconds", lambda d, c, w=1: 12.0 if w == 1 else float("nan"))
    workers, seconds = plan_sweeps(data, [cfg], 2)
    assert workers == 2 and seconds == pytest.approx(12.0 / min(2, os.cpu_count() or 1))
    assert plan_sweeps(data, [cfg], 1) == (1, 12.0)
    with pytest.raises(InvalidParameterError, match="workers"):
        plan_sweeps(data, [cfg], 0)
    assert 1 <= default_workers() <= min(runner.MAX_WORKERS, os.cpu_count() or 1)


def test_analysis_inputs_are_built_once_for_the_estimate_the_sweep_and_its_reference(monkeypatch):
    """The holdout and the non-private references (program, singling-out baseline) are computed once per data and
    analysis configuration, not per sweep, estimate or reference marker; the results equal a fresh build's."""
    from engine.analysis import AnalysisData
    from engine.sweeps import analyse_reference, estimate_seconds

    data = _tiny(seed=13)
    cfg = _config(attacks=("singling_out",))
    fresh = run_sweep(data, cfg, use_cache=False).table
    clear_cache()
    builds = []
    original = AnalysisData.build.__func__

    def counting(cls, *args, **kwargs):
        builds.append(1)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(AnalysisData, "build", classmethod(counting))
    estimate_seconds(data, [cfg])
    pd.testing.assert_frame_equal(run_sweep(data, cfg).table, fresh, check_exact=True)
    run_sweep(data, _config(attacks=("singling_out",), seed=9))  # another seed, same analysis inputs
    analyse_reference(data, cfg, GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-3), repetitions=1)
    assert len(builds) == 1
    clear_cache()
    run_sweep(data, cfg)
    assert len(builds) == 2


def test_the_cell_timed_for_the_estimate_is_not_run_again_and_changes_nothing(monkeypatch):
    """``estimate_seconds`` times one of the sweep's own private cells (its seed, single-threaded BLAS) and keeps the row:
    the sweep that follows runs one cell fewer, reports every cell's progress, and its table is a fresh run's, inline
    and on a pool; a sweep without the cache, or of another configuration, runs every cell."""
    import engine.sweeps.runner as runner
    from engine.sweeps import estimate_seconds

    data = _tiny(seed=15)
    cfg = _config(attacks=("singling_out", "attribute_inference"))
    fresh = run_sweep(data, cfg, use_cache=False).table
    clear_cache()
    calls = []
    original = runner._run_cell

    def counting(*args):
        calls.append(args[1])
        return original(*args)

    monkeypatch.setattr(runner, "_run_cell", counting)
    assert estimate_seconds(data, [cfg]) > 0
    timed = list(calls)
    tasks = [(p, rep) for p in cfg.points() for rep in range(cfg.repetitions)]
    private = [c for c, (p, rep) in enumerate(tasks) if p.budget is not None and rep == 0]
    assert timed == [private[len(private) // 2]]  # the middle private point's first repetition
    seen = []
    result = run_sweep(data, cfg, progress=seen.append)
    pd.testing.assert_frame_equal(result.table, fresh, check_exact=True)
    assert sorted(calls[1:]) == [c for c in range(cfg.n_cells) if c != timed[0]]
    assert [p.done for p in seen] == list(range(1, cfg.n_cells + 1))
    clear_cache()
    estimate_seconds(data, [cfg])
    pd.testing.assert_frame_equal(run_sweep(data, cfg, workers=2).table, fresh, check_exact=True)
    calls.clear()
    estimate_seconds(data, [cfg])
    run_sweep(data, cfg, use_cache=False)
    run_sweep(data, _config(attacks=("singling_out", "attribute_inference"), seed=5), use_cache=False)
    assert len(calls) == 1 + 2 * cfg.n_cells
    # Two configurations: their cells are timed at once (threads), and each sweep takes its own row.
    other = _config(attacks=("singling_out", "attribute_inference"), mechanism="gaussian")
    fresh_other = run_sweep(data, other, use_cache=False).table
    clear_cache()
    calls.clear()
    estimate_seconds(data, [cfg, other], 2)
    assert len(calls) == 2
    pd.testing.assert_frame_equal(run_sweep(data, cfg).table, fresh, check_exact=True)
    pd.testing.assert_frame_equal(run_sweep(data, other).table, fresh_other, check_exact=True)
    assert len(calls) == 2 * cfg.n_cells


def test_reference_point_is_the_same_on_worker_processes():
    """``analyse_reference`` with its releases analysed in the session's worker processes gives the inline run's rows,
    in seed order, and the first release's full analysis: a k-anonymous release (repeated rows) and a Gaussian one,
    whose releases differ (so the order is checked)."""
    from threadpoolctl import threadpool_limits

    from engine.mechanisms.mondrian import MondrianKAnonymity
    from engine.sweeps import analyse_reference

    data = _tiny(seed=16)
    cfg = _config(attacks=("singling_out", "attribute_inference"))
    for mechanism in (MondrianKAnonymity(k=2), GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-3)):
        with threadpool_limits(1):  # as in the workers
            alone = analyse_reference(data, cfg, mechanism, repetitions=4)
        pooled = analyse_reference(data, cfg, mechanism, repetitions=4, workers=2)
        assert pd.DataFrame([m.row() for m in pooled.runs]).equals(pd.DataFrame([m.row() for m in alone.runs]))
        assert len(alone.runs) == 4
        assert pd.DataFrame([pooled.first.row()]).equals(pd.DataFrame([alone.first.row()]))
    assert pd.DataFrame([m.row() for m in alone.runs])["accuracy"].nunique() > 1  # the Gaussian releases differ
    with pytest.raises(InvalidParameterError, match="workers"):
        analyse_reference(data, cfg, MondrianKAnonymity(k=2), workers=0)


def test_a_worker_that_dies_is_reported_as_a_resource_limit_and_its_pool_dropped(monkeypatch):
    """A pool whose worker died (the out-of-memory killer, most often) raises ``BrokenProcessPool`` for every task:
    the sweep and the k-anonymity reference report it as a ``ResourceLimitError`` (an error box on the page, not a
    traceback) that says what to do, and the broken pool is dropped so the next run starts a new one."""
    import concurrent.futures as cf
    from concurrent.futures.process import BrokenProcessPool

    import engine.sweeps.runner as runner
    from engine.errors import ResourceLimitError
    from engine.mechanisms.mondrian import MondrianKAnonymity
    from engine.sweeps import analyse_reference

    class Broken:
        def submit(self, *args, **kwargs):
            future = cf.Future()
            future.set_exception(BrokenProcessPool("a child process terminated abruptly"))
            return future

    broken = Broken()
    monkeypatch.setitem(runner._POOLS, (2, "test"), broken)
    monkeypatch.setattr(runner, "_pool", lambda n_workers, method=None: broken)
    data = _tiny(seed=17)
    cfg = _config(attacks=("singling_out",))
    with pytest.raises(ResourceLimitError, match="worker process stopped.*fewer worker processes"):
        run_sweep(data, cfg, workers=2, use_cache=False)
    assert broken not in runner._POOLS.values()
    runner._POOLS[(2, "test")] = broken
    with pytest.raises(ResourceLimitError, match="worker process stopped"):
        analyse_reference(data, cfg, MondrianKAnonymity(k=2), repetitions=3, workers=2)
    assert broken not in runner._POOLS.values()


def test_warm_pool_starts_the_sessions_pool_once_and_nothing_for_one_worker():
    """``warm_pool``: no pool for one worker; for two, the session's pool (the one a sweep then uses) with its workers
    answering; a second call starts no other pool."""
    import time

    import engine.sweeps.runner as runner

    runner.shutdown_pools()
    runner.warm_pool(1)
    assert runner._POOLS == {}
    runner.warm_pool(2)
    deadline = time.monotonic() + 60
    while not runner._POOLS and time.monotonic() < deadline:  # the forkserver's pool starts on a thread
        time.sleep(0.05)
    (key, pool), = runner._POOLS.items()
    assert key[0] == 2 and runner._pool(2) is pool
    assert pool.submit(os.getpid).result(timeout=60) != os.getpid()  # a worker process answers
    runner.warm_pool(2)
    assert list(runner._POOLS.values()) == [pool]
    runner.shutdown_pools()


def test_progress_after_every_cell_and_rows_delivered():
    data = _tiny(seed=2)
    cfg = _config(attacks=("singling_out",))
    seen, rows = [], []
    res = run_sweep(data, cfg, progress=seen.append, on_row=rows.append, use_cache=False)
    assert [p.done for p in seen] == list(range(1, cfg.n_cells + 1))
    assert {p.total for p in seen} == {cfg.n_cells}
    assert "repetition" in seen[-1].message
    assert len(rows) == cfg.n_cells == len(res.table)


def test_cancel_keeps_finished_rows():
    data = _tiny(seed=3)
    cfg = _config(attacks=("distinguishing",))
    token = CancelToken()
    rows = []

    def progress(p):
        if p.done == 3:
            token.cancel()

    with pytest.raises(CancelledError, match="after 3 of 6 cells") as info:
        run_sweep(data, cfg, progress=progress, cancel=token, on_row=rows.append, use_cache=False)
    partial = info.value.partial
    assert not partial.complete and len(partial.table) == 3 == len(rows)
    # the finished rows are exactly the first rows of the full run
    full = run_sweep(data, cfg, use_cache=False).table
    pd.testing.assert_frame_equal(partial.table, full.iloc[:3], check_exact=True)
    # a token cancelled before the start stops immediately
    with pytest.raises(CancelledError):
        run_sweep(data, cfg, cancel=token, use_cache=False)


def test_cache_hit_by_fingerprint_and_config():
    clear_cache()
    data = _tiny(seed=4)
    cfg = _config(attacks=("distinguishing",))
    first = run_sweep(data, cfg)
    assert not first.from_cache
    seen = []
    second = run_sweep(data, cfg, progress=seen.append)
    assert second.from_cache and len(seen) == 1 and seen[0].done == seen[0].total
    pd.testing.assert_frame_equal(first.table, second.table, check_exact=True)
    second.table.loc[0, "accuracy"] = -1.0  # callers get a copy: the cache is not corrupted
    assert run_sweep(data, cfg).table.loc[0, "accuracy"] == first.table.loc[0, "accuracy"]
    assert not run_sweep(data, _config(attacks=("distinguishing",), seed=99)).from_cache
    assert not run_sweep(TinyData(data.x, data.y, {}, "other-fingerprint"), cfg).from_cache
    clear_cache()


def test_gaussian_sweep_spends_the_same_totals():
    data = _tiny(seed=5)
    cfg = _config(mechanism="gaussian", attacks=("distinguishing",), b_values=(0.5,))
    t = run_sweep(data, cfg, use_cache=False).table
    row = t[t.reference == "tdp"].iloc[0]
    sigma = GaussianMechanism(b=0.5, epsilon=3.9, delta=1.5e-3).sigma
    assert row["noise_sd"] == pytest.approx(sigma)
    assert row["epsilon"] == pytest.approx(3.9) and row["delta"] == pytest.approx(1.5e-3)


def test_lending_sweep_reports_profit_relative_to_nonprivate():
    data = _tiny(seed=6, lending=True)
    cfg = _config(program=ProgramConfig(kind="lending", folds=3), attacks=())
    t = run_sweep(data, cfg, use_cache=False).table
    nonpriv = t[t.reference == "non-private"].iloc[0]
    assert nonpriv["relative_profit"] == pytest.approx(1.0) and nonpriv["profit_change"] == 0.0
    priv = t.iloc[2]
    assert priv["profit_change"] == pytest.approx(priv["profit"] - nonpriv["profit"])
    assert priv["profit_change_relative"] == pytest.approx(
        (priv["profit"] - nonpriv["profit"]) / abs(nonpriv["profit"]))


def test_bad_data_rejected():
    data = _tiny()
    with pytest.raises(DataValidationError, match="needs an outcome"):
        run_sweep(TinyData(data.x, None), _config())  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="prepared data"):
        run_sweep(np.zeros((3, 3)), _config())
    with pytest.raises(InvalidParameterError, match="holdout must be smaller"):
        run_sweep(data, _config(holdout=500), use_cache=False)
    with pytest.raises(InvalidParameterError, match="workers"):
        run_sweep(data, _config(), workers=0)
    with pytest.raises(InsufficientDataError, match="at least 2 feature columns"):
        run_sweep(TinyData(data.x[:, :1], data.y), _config(), use_cache=False)


# ---------------------------------------------------------------------------------------------------------------
# summary and Pareto on known tables


def _known_result():
    cfg = _config(b_values=(0.5,))
    rows = []
    values = {0: [0.9, 0.9, 0.9], 1: [0.5, 0.7, 0.9], 2: [0.4, 0.5, 0.6]}
    protect = {0: [0.0, 0.0, 0.0], 1: [0.6, 0.8, 1.0], 2: [0.9, 0.9, 0.9]}
    refs = {0: "non-private", 1: "tdp", 2: "classic-dp"}
    for point in (0, 1, 2):
        for rep in range(3):
            rows.append({"point": point, "reference": refs[point], "mechanism": "projection", "b": [math.nan, 0.5,
                         2.0][point], "rep": rep, "accuracy": values[point][rep],
                         "protection_singling_out": protect[point][rep]})
    return SweepResult(cfg, pd.DataFrame(rows))


def test_summary_mean_sd_and_intervals_by_hand():
    s = _known_result().summary()
    row = s[s.point == 1].iloc[0]
    assert row["runs"] == 3
    assert row["accuracy_mean"] == pytest.approx(0.7)
    assert row["accuracy_sd"] == pytest.approx(0.2)  # ddof = 1
    half = student_t.ppf(0.975, 2) * 0.2 / math.sqrt(3)  # 4.302653 × 0.11547 = 0.49683
    assert half == pytest.approx(0.49683, abs=1e-5)
    assert row["accuracy_lo"] == pytest.approx(0.7 - half) and row["accuracy_hi"] == pytest.approx(0.7 + half)
    constant = s[s.point == 0].iloc[0]
    assert constant["accuracy_sd"] == 0 and constant["accuracy_lo"] == constant["accuracy_hi"] == 0.9
    runs = _known_result().summary(interval="runs")
    r = runs[runs.point == 1].iloc[0]
    assert r["accuracy_lo"] == pytest.approx(0.5 + 0.025 * 2 * 0.2)  # linear quantile of (0.5, 0.7, 0.9)
    assert r["accuracy_hi"] == pytest.approx(0.9 - 0.025 * 2 * 0.2)
    assert SweepResult(_config(), pd.DataFrame()).summary().empty  # nothing finished yet
    refs = _known_result().reference_points()
    assert list(refs["reference"]) == ["non-private", "classic-dp"]


def test_pareto_flags_by_hand():
    # means: point 0 (0.9, 0.0), point 1 (0.7, 0.8), point 2 (0.5, 0.9): all non-dominated
    flags = _known_result().pareto("accuracy", "protection_singling_out")
    assert flags["pareto"].tolist() == [True, True, True]
    assert pareto_mask(np.array([1, 2, 2, 0.5, np.nan]), np.array([3, 1, 0.5, 3, 9])).tolist() == [
        True, True, False, False, False]
    # lower-is-better utilities are flipped: fewer exclusion errors is better
    cfg = _config(b_values=(0.5,))
    table = pd.DataFrame({"point": [0, 1, 2], "reference": ["non-private", "tdp", "classic-dp"], "rep": [0, 0, 0],
                          "exclusion_errors": [10.0, 20.0, 30.0], "protection_singling_out": [0.1, 0.5, 0.4]})
    flags = SweepResult(cfg, table).pareto("exclusion_errors")
    assert flags["pareto"].tolist() == [True, True, False]
    table["extra_exclusion_errors_population"] = table["exclusion_errors"] * 1000
    assert SweepResult(cfg, table).pareto("extra_exclusion_errors_population")["pareto"].tolist() == [True, True,
                                                                                                     False]
    with pytest.raises(InvalidParameterError, match="not in this sweep"):
        SweepResult(cfg, table).pareto("profit")


def test_best_trivial_rule_by_hand_follows_the_metrics_direction():
    cfg = _config(b_values=(0.5,))
    table = pd.DataFrame({"point": [0, 0, 1, 1], "reference": ["non-private"] * 2 + ["tdp"] * 2, "rep": [0, 1, 0, 1],
                          "accuracy": [0.9, 0.9, 0.6, 0.7], "exclusion_errors": [5.0, 5.0, 9.0, 8.0],
                          "baseline:target everybody:accuracy": [0.3, 0.3, 0.3, 0.3],
                          "baseline:target nobody:accuracy": [0.7, 0.7, 0.7, 0.7],
                          "baseline:random targeting at the same share:accuracy": [0.5, 0.5, np.nan, 0.4],
                          "baseline:target everybody:exclusion_errors": [0.0, 0.0, 0.0, 0.0],
                          "baseline:target nobody:exclusion_errors": [30.0, 30.0, 30.0, 30.0]})
    result = SweepResult(cfg, table)
    best = result.best_trivial("accuracy")
    assert (best.rule, best.metric, best.value) == ("target nobody", "accuracy", 0.7)
    # fewer exclusion errors is better: targeting everybody excludes nobody
    assert result.best_trivial("exclusion_errors").rule == "target everybody"
    assert result.best_trivial("exclusion_errors").value == 0.0
    assert result.best_trivial("tpr") is None  # no rule recorded it
    # the tdp point (mean 0.65, interval [0.0147, 1.285]) clears 0.7 at its favourable end; flags are per point
    assert list(result.flagged_summary("accuracy")["no_better_than"]) == ["", ""]
    assert list(result.flagged_summary("exclusion_errors")["no_better_than"]) == ["target everybody"] * 2


def test_points_that_tie_with_a_rule_to_rounding_are_flagged():
    """Issue 34 §5: on a loan book where 98 % of loans are good every approach approves everyone, so every bar ties
    with 'approve everyone' — but the mean of five equal profits (15,502,106.789999997) differs from the profit by
    one unit in the last place, and its interval (sd 2e-9) then 'cleared' the rule: only one bar was hatched."""
    cfg = _config(b_values=(0.5,))
    profit = 15502106.79
    table = pd.DataFrame({"point": [0] + [1] * 5, "reference": ["non-private"] + ["tdp"] * 5, "rep": [0, 0, 1, 2, 3, 4],
                          "profit": [profit] * 6, "baseline:approve everyone:profit": [profit] * 6,
                          "baseline:approve no one:profit": [-1e6] * 6})
    summary = SweepResult(cfg, table).flagged_summary("profit")
    rule = summary["baseline:approve everyone:profit_mean"].iloc[1]
    assert summary["profit_mean"].iloc[1] != profit and summary["profit_hi"].iloc[1] > rule  # by rounding only
    assert list(summary["no_better_than"]) == ["approve everyone"] * 2
    table.loc[table["point"] == 1, "profit"] = profit + 1.0  # one unit of money better: not a tie
    assert list(SweepResult(cfg, table).flagged_summary("profit")["no_better_than"]) == ["approve everyone", ""]


def test_cancel_in_worker_pool_keeps_finished_rows_identical_to_full_run():
    data = _tiny(seed=7)
    cfg = _config(attacks=("singling_out",), repetitions=4)  # 12 cells
    token = CancelToken()

    def progress(p):
        if p.done == 1:
            token.cancel()

    with pytest.raises(CancelledError) as info:
        run_sweep(data, cfg, progress=progress, cancel=token, workers=2, use_cache=False)
    partial = info.value.partial.table
    # running cells finish (at most 2 × workers in flight), nothing new starts
    assert 1 <= len(partial) <= 4
    full = run_sweep(data, cfg, use_cache=False).table.set_index(["point", "rep"])
    for _, row in partial.iterrows():
        expected = full.loc[(row["point"], row["rep"])]
        assert row["protection_singling_out"] == expected["protection_singling_out"]
        assert row["accuracy"] == expected["accuracy"]


def test_unknown_metric_direction_is_refused_by_pareto():
    cfg = _config(b_values=(0.5,))
    table = pd.DataFrame({"point": [0, 1], "reference": ["non-private", "tdp"], "rep": [0, 0],
                          "noise_sd": [0.0, 1.0], "protection_singling_out": [0.1, 0.5]})
    with pytest.raises(InvalidParameterError, match="no known direction"):
        SweepResult(cfg, table).pareto("noise_sd")


# ---------------------------------------------------------------------------------------------------------------
# attribute inference: worst cell AFTER averaging over runs (review finding)


def test_attribute_inference_worst_cell_after_averaging_over_runs():
    # two cells; run 0: a = 0.2, b = 0.9; run 1: a = 0.9, b = 0.3. Per-run minima 0.2, 0.3 (mean 0.25);
    # cell means a = 0.55, b = 0.6 → the spec's worst case is 0.55 (cell a), with cell a's sd and interval.
    cfg = _config(b_values=(0.5,), references=False)
    table = pd.DataFrame({
        "point": [0, 0], "reference": ["tdp", "tdp"], "rep": [0, 1],
        "protection_attribute_inference": [0.2, 0.3],
        "attribute_inference_cell:one:0": [0.2, 0.9], "attribute_inference_cell:one:1": [0.9, 0.3],
    })
    row = SweepResult(cfg, table).summary().iloc[0]
    assert row["protection_attribute_inference_mean"] == pytest.approx(0.55)
    assert row["protection_attribute_inference_sd"] == pytest.approx(np.std([0.2, 0.9], ddof=1))
    assert row["attribute_inference_worst_cell"] == "one:0"
    assert row["protection_attribute_inference_per_run_min_mean"] == pytest.approx(0.25)
    assert not any(c.startswith("attribute_inference_cell:") for c in SweepResult(cfg, table).summary().columns)


def test_sweep_table_has_one_column_per_inference_cell_consistent_with_run_minimum():
    res = run_sweep(_tiny(), _config(attacks=("attribute_inference",), repetitions=3), use_cache=False)
    cells = [c for c in res.table.columns if c.startswith("attribute_inference_cell:")]
    assert len(cells) == 3 * 4  # (one, half, all-but-one) × d = 4 secret columns
    per_run_min = res.table[cells].min(axis=1)
    np.testing.assert_allclose(per_run_min, res.table["protection_attribute_inference"])
    s = res.summary()
    tdp = s[s.reference != "non-private"]
    # min of means ≥ mean of mins, always
    assert (tdp["protection_attribute_inference_mean"] >= tdp["protection_attribute_inference_per_run_min_mean"]
            - 1e-12).all()


# ---------------------------------------------------------------------------------------------------------------
# the program official sees what the adversary sees (review finding: output_scale="paper")


def test_program_undoes_the_known_output_scale_with_the_knows_scale_adversary():
    data = _tiny(n=150, seed=3)
    # a generous budget at small B keeps the signal (unbiased R² ≈ 0.87 on these data)
    common = dict(b_values=(0.05,), budgets=(Budget(50.0, 1e-3, 0.9, 5e-4),), repetitions=1, attacks=(), k=200,
                  references=False, program=ProgramConfig(kind="regression", folds=3, ridge_alpha=1.0))
    unbiased = run_sweep(data, _config(output_scale="unbiased", **common), use_cache=False).table
    knows = run_sweep(data, _config(output_scale="paper", **common), use_cache=False).table
    paper = run_sweep(data, _config(output_scale="paper", adversary="paper", **common), use_cache=False).table
    # same seed → same noise; value/s with s = 1/k is exactly the unbiased release (up to rounding)
    assert knows["r2"].iloc[0] == pytest.approx(unbiased["r2"].iloc[0], abs=1e-9)
    assert knows["r2"].iloc[0] > 0.5
    # as printed (×1/200) the ridge penalty swamps the tiny features: no fit at all (R² ≈ 0)
    assert paper["r2"].iloc[0] < 0.05


# ---------------------------------------------------------------------------------------------------------------
# JL projection + Laplace (issue 5)


def _jl_config(**kw):
    base = dict(mechanism="jl-laplace", k=2, budgets=(Budget(4.0, 1e-3),), holdout=30)
    base.update(kw)
    return _config(**base)


def test_jl_sweep_runs_is_deterministic_and_has_every_metric_column():
    data = _tiny(n=160)
    cfg = _jl_config()
    first = run_sweep(data, cfg, use_cache=False)
    again = run_sweep(data, cfg, use_cache=False, workers=2)
    pd.testing.assert_frame_equal(first.table, again.table)
    table = first.table
    assert len(table) == 3 * 2  # non-private, B = 0.25, B = 2 (classic DP) × 2 repetitions
    for col in ("accuracy", "accuracy_change", "protection_singling_out", "protection_attribute_inference",
                "protection_distinguishing", "distinguishing_paper_d", "noise_sd"):
        assert table[col].notna().all(), col
    jl = table[table.mechanism == "jl-laplace"]
    assert ((jl[["protection_singling_out", "protection_attribute_inference", "protection_distinguishing"]] >= 0)
            & (jl[["protection_singling_out", "protection_attribute_inference", "protection_distinguishing"]]
               <= 1)).all().all()
    # δ is the calibrated per-pair bound on δ_fail, at most the budget's δ; ε is the budget's
    assert (jl["delta"] <= 1e-3 * (1 + 1e-9)).all() and (jl["epsilon"] == 4.0).all()
    from engine.mechanisms.jl_laplace import JLLaplace

    mech = JLLaplace(k=2, epsilon=4.0, d=4, relation="row", b=0.25, target_delta=1e-3)
    assert jl[jl.b == 0.25]["noise_sd"].iloc[0] == pytest.approx(math.sqrt(mech.noise_variance))
    assert cfg.mechanism_for(0.25, cfg.budgets[0], d=4) == mech
    assert list(first.summary()["reference"]) == ["non-private", "tdp", "classic-dp"]


def test_jl_sweep_classification_reports_clustering_accuracy_and_element_relation_has_no_classic_point():
    base = _tiny(n=160, seed=5)
    y = (base.y > np.median(base.y)).astype(float)
    data = TinyData(base.x, y, {}, "tiny-jl-cls")
    cfg = _jl_config(relation="element", program=ProgramConfig(kind="classification", folds=3))
    res = run_sweep(data, cfg, use_cache=False)
    assert res.table["clustering_accuracy"].between(0.5, 1.0).all()  # best matching of 2 clusters: ≥ 1/2
    assert list(res.summary()["reference"]) == ["non-private", "tdp", "tdp"]  # element-wise: never classic DP
    assert res.table[res.table.mechanism == "jl-laplace"]["implied_epsilon"].isna().all()


def test_jl_adversary_with_known_records_beats_a_blind_one_without_noise_limits():
    # Huge ε (tiny noise): knowing 2k records reconstructs X from Z without P, so singling out succeeds often.
    data = _tiny(n=200, seed=2)
    cfg = _jl_config(k=4, budgets=(Budget(1e4, 1e-3),), b_values=(2.0,), attacks=("singling_out",),
                     references=False, repetitions=1)
    res = run_sweep(data, cfg, use_cache=False)
    assert res.table["protection_singling_out"].iloc[0] < 0.5
    strong = run_sweep(data, _jl_config(k=4, budgets=(Budget(0.05, 1e-3),), b_values=(2.0,),
                                        attacks=("singling_out",), references=False, repetitions=1),
                       use_cache=False)
    assert strong.table["protection_singling_out"].iloc[0] > 0.9


def test_jl_sweep_validation():
    with pytest.raises(InvalidParameterError, match="relation must be one of"):
        _jl_config(relation="column")
    with pytest.raises(InvalidParameterError, match="target_delta must be in"):
        _jl_config(target_delta=1.5)
    with pytest.raises(InvalidParameterError, match="known_records"):
        _jl_config(known_records=0)
    with pytest.raises(InvalidParameterError, match="needs d"):
        _jl_config().mechanism_for(0.5, Budget(1.0, 1e-3))
    with pytest.raises(InsufficientDataError, match="known_records"):
        run_sweep(_tiny(n=60), _jl_config(known_records=100), use_cache=False)
    assert preset("quick", 1000, mechanism="jl-laplace").k == 5
    assert _jl_config(target_delta=1e-6).mechanism_for(2.0, Budget(1.0, 1e-3), d=4).target_delta == 1e-6


def test_released_rows_and_paper_budgets_reject_bad_lists():
    with pytest.raises(InvalidParameterError, match="attacks must name attacks from"):
        released_rows(100, ("nope",))
    assert released_rows(100, ()) == 100
    with pytest.raises(InvalidParameterError, match="epsilon1 must be"):
        paper_budgets(100, ("x",))
    with pytest.raises(InvalidParameterError, match="epsilon1 must be a list"):
        paper_budgets(100, 3.0)


# ---------------------------------------------------------------------------------------------------------------
# sweeps on a Dask cluster (issue 14 §2)


@pytest.fixture(scope="module")
def dask_threads():
    """A two-worker LocalCluster of threads in this process (the real-cluster test starts processes)."""
    from engine.scale.cluster import dask_client

    with dask_client(None, n_workers=2, processes=False) as client:
        yield client


def test_dask_sweep_equals_the_local_run_cell_for_cell(dask_threads):
    data = _tiny(seed=9)
    cfg = _config(seed=4)
    local = run_sweep(data, cfg, workers=1, use_cache=False).table
    seen = []
    on_dask = run_sweep(data, cfg, client=dask_threads, progress=seen.append, use_cache=False)
    pd.testing.assert_frame_equal(on_dask.table, local, check_exact=True)
    assert [p.done for p in seen] == list(range(1, cfg.n_cells + 1)) and on_dask.complete


def test_dask_sweep_cancel_keeps_finished_rows_identical_to_the_full_run(dask_threads):
    data = _tiny(seed=10)
    cfg = _config(attacks=("distinguishing",), b_values=(0.25, 0.5, 1.0, 2.0))
    token = CancelToken()

    def progress(p):
        if p.done == 2:
            token.cancel()

    with pytest.raises(CancelledError) as info:
        run_sweep(data, cfg, client=dask_threads, progress=progress, cancel=token, use_cache=False)
    partial = info.value.partial
    assert not partial.complete and 2 <= len(partial.table) < cfg.n_cells
    full = run_sweep(data, cfg, use_cache=False).table.set_index(["point", "rep"])
    got = partial.table.set_index(["point", "rep"])
    pd.testing.assert_frame_equal(got, full.loc[got.index], check_exact=True)


def test_the_one_line_description_counts_the_reference_cells():
    """A new user read '2 B value(s) × 1 budget(s) × 2 repetition(s) = 6 cells': the line names the non-private
    reference that makes up the difference, so its arithmetic holds."""
    import dataclasses

    from engine.sweeps import preset, released_rows

    quick = preset("quick", released_rows(4201))
    two = dataclasses.replace(quick, b_values=(0.4, 2.0), repetitions=2)
    assert two.n_cells == 6 and "(2 B value(s) × 1 budget(s) + 1 non-private reference) × 2 repetition(s) = 6 cells" in (
        two.describe())
    bare = dataclasses.replace(quick, references=False, repetitions=2)
    assert bare.n_cells == 16 and "(8 B value(s) × 1 budget(s)) × 2 repetition(s) = 16 cells" in bare.describe()


def test_summary_is_computed_once_per_result_and_callers_get_their_own_copy(monkeypatch):
    import pickle

    from engine.sweeps import SweepResult, preset

    table = pd.DataFrame({"point": [0, 0, 1, 1], "rep": [0, 1, 0, 1], "accuracy": [0.8, 0.6, 0.5, 0.7]})
    result = SweepResult(preset("quick", n=100), table)
    calls = []
    compute = SweepResult._summary
    monkeypatch.setattr(SweepResult, "_summary", lambda self, *a: calls.append(a) or compute(self, *a))
    first = result.summary()
    first.loc[0, "accuracy_mean"] = -1.0  # a caller's change stays in its copy
    second = result.summary()
    assert second.loc[0, "accuracy_mean"] == pytest.approx(0.7) and second.loc[1, "accuracy_mean"] == pytest.approx(0.6)
    result.summary(interval="runs")
    result.summary(confidence=0.9)
    assert calls == [("mean", 0.95), ("runs", 0.95), ("mean", 0.9)]  # once per (interval, confidence)
    restored = pickle.loads(pickle.dumps(result))  # the computed summaries are not pickled …
    assert "_summaries" not in restored.__dict__
    assert restored.summary().equals(second)  # … and are made again when asked
