"""Wide tables (issue 35 item 1): the attacks' search stays exact beyond 40 columns (32-bit grid, subset sums per block
of four columns, a bounded shared-pair plan), every long search can be cancelled between its compiled calls, and the
run's cost is known before it starts.

The oracle is the canonical brute force (:func:`engine.attacks._neighbours.canonical_nearest`): the L1 sums added in
ascending column order in float64, the lowest row on exact ties.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.attacks import _l1, _neighbours
from engine.attacks._neighbours import canonical_nearest, nearest_on_column_sets
from engine.errors import CancelledError
from engine.progress import CancelToken


def _wide_case(seed: int, n: int, d: int, m: int):
    """Rows and queries of ``d`` columns: heavy-tailed values with a noisy release of some queries among the rows,
    ties on a column and duplicate rows (kind 0), a coarse lattice of exact ties (kind 1), or a tight cloud next to
    far outliers that set the grid's spread (kind 2)."""
    rng = np.random.default_rng(seed)
    kind = seed % 3
    if kind == 0:
        x = rng.lognormal(size=(n + m, d)) * rng.choice([-1.0, 1.0], size=(n + m, d))
        rows = x[:n] + rng.normal(scale=0.3, size=(n, d))
        rows[::5, 0] = 0.0
        rows[7] = rows[3]
        queries = np.vstack([x[: m // 2], x[n : n + m - m // 2]])
    elif kind == 1:
        rows = np.round(rng.normal(size=(n, d)), 1) * 0.1
        rows[rng.integers(0, n, size=n // 4)] = rows[0]
        queries = np.vstack([rows[: m // 3], np.round(rng.normal(size=(m - m // 3, d)), 1) * 0.1])
    else:
        rows = 1e-7 * rng.normal(size=(n, d))
        rows[:4] = 1e3 * rng.normal(size=(4, d))
        queries = 1e-7 * rng.normal(size=(m, d))
    return rng, rows, queries


@pytest.mark.parametrize("seed", range(3))
def test_wide_joint_scan_equals_the_canonical_brute_force_at_300_columns(seed):
    """300 columns take the 32-bit grid and the block-subset joint scan (:func:`engine.attacks._l1._joint_blocks`):
    its rows are the brute force's for random sets of every size, for every all-but-one set, on every candidate
    subset that holds the answers, and the separate scans agree."""
    rng, rows, queries = _wide_case(seed, 600, 300, 40)
    d = rows.shape[1]
    block_q, _, _, _ = _l1.quantized_copies(np.ascontiguousarray(rows.T), queries)
    assert block_q.dtype == np.uint32
    sets = [np.sort(rng.choice(d, size=int(size), replace=False)) for size in (2, 3, 5, 31, 64, 150, 151, 299)]
    per_set, every = _l1.joint_nearest(rows, queries, sets, _neighbours.SLACK, True)
    for known, found in zip(sets, per_set, strict=True):
        expected = canonical_nearest(rows, queries, known)
        np.testing.assert_array_equal(found, expected)
        np.testing.assert_array_equal(_l1.scan_nearest(rows, queries, known), expected)
    separate = _l1.all_but_one_nearest(rows, queries, _neighbours.SLACK)
    for j in range(0, d, 13):
        expected = canonical_nearest(rows, queries, np.delete(np.arange(d), j))
        np.testing.assert_array_equal(every[:, j], expected)
        np.testing.assert_array_equal(separate[:, j], expected)
    subset = np.union1d(np.concatenate(per_set + [every.ravel()]), rng.choice(rows.shape[0], size=100, replace=False))
    again, every_again = _l1.joint_nearest(rows, queries, sets, _neighbours.SLACK, True, subset)
    for a, b in zip(per_set, again, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(every, every_again)


@pytest.mark.parametrize("scan", ["model", "joint", "separate"])
def test_the_bounded_search_at_300_columns_equals_the_brute_force(scan, monkeypatch):
    """Enough (query, row) pairs for the bounded path (query groups, box bounds, the all-but-one sets' shared upper
    bound), with its cost model or either scan forced: the brute force's rows for every set."""
    forced = {"joint": {"separate": 1e9, "all-but-one": 1e9, "joint": 0.0, "joint all-but-one": 0.0},
              "separate": {"separate": 0.0, "all-but-one": 0.0, "joint": 1e9, "joint all-but-one": 1e9}}
    if scan in forced:
        monkeypatch.setattr(_neighbours, "_WIDE_COSTS", forced[scan])
    monkeypatch.setattr(_neighbours, "_GROUP_SIZE", 64)  # several groups
    rng, rows, queries = _wide_case(0, 1400, 300, 200)
    d = rows.shape[1]
    assert rows.shape[0] * queries.shape[0] > _neighbours._SCAN_PAIRS
    sets = [np.sort(rng.choice(d, size=150, replace=False)) for _ in range(3)]
    sets += [np.delete(np.arange(d), j) for j in (0, 17, 299)] + [np.array([5])]
    for known, found in zip(sets, nearest_on_column_sets(rows, queries, sets), strict=True):
        np.testing.assert_array_equal(found, canonical_nearest(rows, queries, known))


def test_attribute_inference_on_a_wide_table_equals_the_brute_force_attack():
    """The whole attack on 44 columns (the 32-bit grid, the bounded search), every cell's successes as the brute
    force gets them: the nearest released row of each target on each known-column set by :func:`canonical_nearest`,
    scored with the same rule, from the same draws of targets and sets."""
    from engine.attacks.attribute_inference import attribute_inference, inference_success
    from engine.attacks.threat_model import adversary_view

    rng = np.random.default_rng(3)
    n, n_hold, d = 560, 60, 44
    x = rng.lognormal(size=(n + n_hold, d)) * rng.choice([-1.0, 1.0], size=(n + n_hold, d))
    x /= np.linalg.norm(x, axis=1).max()
    released = x[:n] + rng.normal(scale=0.02, size=(n, d))
    result = attribute_inference(x[:n], released, x[n:], rng=np.random.default_rng(5))
    draw = np.random.default_rng(5)  # the attack's first draws: its main and control targets
    main = x[:n][draw.choice(n, size=500, replace=False)]
    control = x[n:][draw.choice(n_hold, size=n_hold, replace=False)]
    targets = np.vstack([main, control])
    assert released.shape[0] * targets.shape[0] > _neighbours._SCAN_PAIRS  # the bounded search
    view = adversary_view(released, release_scale=1.0, adversary="knows-scale")
    stacked = np.vstack([view, targets])
    ranges = stacked.max(axis=0) - stacked.min(axis=0)
    ranges[ranges == 0] = 1.0
    assert len(result.cells) == 3 * d
    for cell in result.cells[::4]:  # every adversary, a quarter of the secret columns (the brute force is slow)
        nearest = canonical_nearest(view / ranges, targets / ranges, np.array(cell.known))
        ok = inference_success(view[nearest, cell.secret], targets[:, cell.secret],
                               spread=float(x[:n, cell.secret].std()))
        assert cell.main_success == np.count_nonzero(ok[:500]) / 500
        assert cell.control_success == np.count_nonzero(ok[500:]) / n_hold


def test_shared_pairs_keep_the_greedy_plan_and_stop_at_their_limit():
    """The pair counts kept up to date give the plan of recounting every pair at each step (the greedy of Paar, first
    pair in sorted order on ties), and no more pairs than the limit: the plan's cost is bounded whatever the sets."""

    def recounted(sets, d):
        member = np.zeros((len(sets), d + sum(len(s) for s in sets)), dtype=np.int64)
        for r, terms in enumerate(sets):
            member[r, terms] = 1
        pairs, width = [], d
        while True:
            counts = member[:, :width].T @ member[:, :width]
            np.fill_diagonal(counts, 0)
            a, b = divmod(int(np.argmax(counts)), width)
            if counts[a, b] < 2:
                break
            both = (member[:, a] == 1) & (member[:, b] == 1)
            member[both, a] = member[both, b] = 0
            member[both, width] = 1
            pairs.append((a, b))
            width += 1
        return pairs, [np.flatnonzero(row).tolist() for row in member]

    for seed in range(30):
        rng = np.random.default_rng(seed)
        d = int(rng.integers(2, 40))
        sets = [sorted(rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False).tolist())
                for _ in range(int(rng.integers(1, 40)))]
        pairs, plan = _l1.shared_pairs(sets, d, limit=10**6)
        expected_pairs, expected_plan = recounted(sets, d)
        assert pairs.tolist() == [list(p) for p in expected_pairs] and plan == expected_plan
        limited, _ = _l1.shared_pairs(sets, d, limit=3)
        assert limited.tolist() == pairs.tolist()[:3]
    rng = np.random.default_rng(0)
    wide = [sorted(rng.choice(200, size=100, replace=False).tolist()) for _ in range(200)]
    assert len(_l1.shared_pairs(wide, 200)[0]) == _l1.pair_limit(200) == 56  # the greedy would make thousands
    assert _l1.pair_limit(300) == 0  # the 300 columns' own term rows fill the tile's budget
    assert _l1.pair_limit(15) > 400  # narrow tables keep their whole plan


@pytest.mark.parametrize("path", ["joint", "separate", "attack"])
def test_a_cancel_during_a_wide_search_stops_it_before_the_next_compiled_call(path, monkeypatch):
    """The scans look at the token before every call of a compiled kernel (each call a bounded number of (query,
    row, addition) triples, ``_CALL_ADDITIONS``): a cancel given during the third call lets that call finish and no
    other start, and CancelledError is raised — in the joint scan, in the separate scans and in the whole attack."""
    from engine.attacks.attribute_inference import attribute_inference

    monkeypatch.setattr(_l1, "_CALL_ADDITIONS", 1 << 22)  # small calls: several per scan on these inputs
    token = CancelToken()
    calls = []
    for name in ("_joint_blocks", "_scan", "_all_but_one"):
        kernel = getattr(_l1, name)

        def counted(*a, _k=kernel):
            calls.append(token.cancelled)
            if len(calls) == 3:
                token.cancel()  # a Stop while the third call runs
            return _k(*a)

        monkeypatch.setattr(_l1, name, counted)
    _, rows, queries = _wide_case(0, 900, 200, 300)
    sets = [np.arange(0, 200, 2), np.arange(1, 200, 2)]
    with pytest.raises(CancelledError):
        if path == "joint":
            _l1.joint_nearest(rows, queries, sets, _neighbours.SLACK, True, cancel=token)
        elif path == "separate":
            _l1.scan_nearest(rows, queries, sets[0], cancel=token)
        else:
            attribute_inference(rows[:600], rows[:600], rows[600:], rng=np.random.default_rng(0), cancel=token)
    assert calls == [False, False, False]  # the third call finished; none started after the cancel


def test_a_cancel_from_another_thread_ends_a_page_run_on_a_wide_table_and_its_threads(monkeypatch):
    """The page's run (:func:`engine.release_analysis.analyse_release`, two worker threads) on 2,000 × 120 (the
    attacks take seconds there): a cancel set while the first kernel calls run raises CancelledError in the caller,
    and every worker thread ends after at most the call it was in — no attack computes on for nobody."""
    import threading

    import pandas as pd

    from engine.analysis import AnalysisConfig, clear_analysis_cache
    from engine.data.spec import DataSpec
    from engine.mechanisms.gaussian import GaussianMechanism
    from engine.release import ReleaseConfig
    from engine.release_analysis import analyse_release

    rng = np.random.default_rng(1)
    d = 120
    frame = pd.DataFrame(rng.lognormal(size=(2000, d)), columns=[f"x{i}" for i in range(d)])
    spec = DataSpec(features=tuple(frame.columns))
    mechanism = GaussianMechanism.from_budget(0.25, 4.0, 1e-4)
    token = CancelToken()
    calls_after: list[str] = []
    lock = threading.Lock()
    for name in ("_joint_blocks", "_scan", "_all_but_one"):
        kernel = getattr(_l1, name)

        def counted(*a, _k=kernel):
            with lock:
                if token.cancelled:
                    calls_after.append(threading.current_thread().name)
                else:
                    token.cancel()  # from inside the first kernel call: the worst moment, mid-call
            return _k(*a)

        monkeypatch.setattr(_l1, name, counted)
    clear_analysis_cache()
    before = set(threading.enumerate())
    with pytest.raises(CancelledError):
        analyse_release(frame, ReleaseConfig.of(spec, mechanism), AnalysisConfig(program=None), mechanism.guarantee(),
                        seed=3, workers=2, cancel=token)
    for thread in set(threading.enumerate()) - before:
        thread.join(timeout=60)
        assert not thread.is_alive()
    # At most the one call the other thread had been let into before the cancel; none after its next look.
    assert len(calls_after) <= 1


def test_the_attacks_cost_model_grows_as_the_square_of_the_columns():
    """The attack's cost model (:func:`engine.attacks.attribute_inference.attribute_inference_seconds`): d sets of
    about d/2 columns, so about d² once the per-column work is outgrown; linear in the rows and in the targets."""
    from engine.attacks.attribute_inference import attribute_inference_seconds as seconds

    assert seconds(1600, 400, 500) / seconds(1600, 400, 100) > 10  # 5× the columns, more than 10× the time
    assert 3 < seconds(1600, 400, 1000) / seconds(1600, 400, 500) < 4  # towards (1000/500)² = 4
    assert seconds(3200, 400, 500) == pytest.approx(2 * seconds(1600, 400, 500))
    assert seconds(1600, 400, 20) < 0.1


def test_a_run_on_a_wide_table_is_estimated_long_and_a_narrow_one_short():
    """The run's estimate (:func:`engine.release_analysis.estimate_release_analysis`): more than ``CONFIRM_SECONDS``
    on 2,000 × 500 (the page asks first), far less on a narrow table; mostly the attack; the sentence says why."""
    from engine.analysis import AnalysisConfig
    from engine.data.spec import DataSpec
    from engine.mechanisms.private_projection import PrivateProjection
    from engine.release import ReleaseConfig
    from engine.release_analysis import CONFIRM_SECONDS, estimate_release_analysis

    mechanism = PrivateProjection.from_budget(0.25, 4.0, 1e-4)

    def estimate(d):
        spec = DataSpec(features=tuple(f"x{i}" for i in range(d)))
        return estimate_release_analysis(ReleaseConfig.of(spec, mechanism), AnalysisConfig(program=None),
                                         mechanism.guarantee(), n=2000, d=d)

    wide, narrow = estimate(500), estimate(10)
    assert wide.needs_confirmation and wide.seconds > CONFIRM_SECONDS and wide.mechanisms == 4
    assert not narrow.needs_confirmation and narrow.seconds < 5
    assert wide.attack_seconds > wide.cpu_seconds / 2
    assert estimate(400).needs_confirmation  # the browser test's 2,000 × 400 is asked about
    text = wide.describe()
    assert "2,000 rows × 500 columns" in text and "attribute-inference attack" in text and "square" in text


def test_an_exception_of_the_progress_callback_stops_the_running_releases_too(monkeypatch):
    """A Streamlit page that waits in :func:`engine.analysis.analyse_mechanisms` itself gets a Stop or a closed tab
    as an exception from its progress callback, which the waiting loop calls every ``WAIT_SECONDS`` while the
    workers compute: the exception ends the run, and the releases that were computing stop at their next look at
    their token instead of finishing in the background."""
    import threading

    import pandas as pd

    from engine.analysis import AnalysisConfig, analyse_mechanisms, clear_analysis_cache
    from engine.data.preparation import prepare
    from engine.data.spec import DataSpec
    from engine.mechanisms.gaussian import GaussianMechanism
    from engine.mechanisms.mondrian import MondrianKAnonymity

    class Stop(Exception):
        pass

    rng = np.random.default_rng(2)
    d = 120
    frame = pd.DataFrame(rng.lognormal(size=(2000, d)), columns=[f"x{i}" for i in range(d)])
    prepared = prepare(frame, DataSpec(features=tuple(frame.columns)))
    computing = threading.Event()
    stopped = threading.Event()
    calls_after: list[str] = []
    for name in ("_joint_blocks", "_scan", "_all_but_one"):
        kernel = getattr(_l1, name)

        def counted(*a, _k=kernel):
            if stopped.is_set():
                calls_after.append(threading.current_thread().name)
            computing.set()
            return _k(*a)

        monkeypatch.setattr(_l1, name, counted)

    def progress(p):
        if computing.is_set():
            stopped.set()
            raise Stop  # what Streamlit raises in the page's thread

    clear_analysis_cache()
    before = set(threading.enumerate())
    with pytest.raises(Stop):
        analyse_mechanisms(prepared, [GaussianMechanism.from_budget(0.25, 4.0, 1e-4), MondrianKAnonymity(k=2)],
                           AnalysisConfig(program=None), seed=1, workers=2, progress=progress)
    for thread in set(threading.enumerate()) - before:
        thread.join(timeout=60)
        assert not thread.is_alive()
    assert len(calls_after) <= 2  # at most the call each worker had been let into before the stop


def test_the_float32_bounds_allowance_covers_the_rounding_of_hundreds_of_columns(monkeypatch):
    """The box bound is a float32 sum of h gaps, whose rounding can reach (h + 1)·2⁻²⁴ relative: 3·10⁻⁵ at 500
    columns, beyond the 10⁻⁵ every set was allowed before wide tables were searched. Here one target, the nearest
    row's 499 gaps 1 and 498 × just over half a float32 ulp of 1 (each addition rounds up): its computed bound
    exceeds its distance by 3.7·10⁻⁵ relative. With 10⁻⁵ the bounded search dropped that row and every other (and
    failed); with :func:`engine.attacks._neighbours.bound_slack` it returns the canonical row."""
    d, n = 500, 200
    rows = np.full((n, d), 5.0)
    rows[:, 0] = np.arange(n)
    rows[150] = 0.0
    rows[150, 1] = 1.0
    rows[150, 2:] = 2.0**-24 * (1 + 2.0**-20)
    rows[160] = 0.0
    rows[160, 1] = 1.0 + 5e-5  # the next nearest
    query = np.zeros((1, d))
    known = np.arange(1, d)
    gaps, _ = _l1.box_gaps(np.ascontiguousarray(rows.T), query[0], query[0])  # the search's own bound, one target
    membership = np.ones((1, d), np.float32)
    membership[0, 0] = 0.0
    rounded = float(np.einsum("sk,kn->sn", membership, gaps)[0, 150])
    exact = float(np.sum(rows[150, 1:]))
    assert (rounded - exact) / exact > 2.5e-5  # the float32 sum's rounding: beyond the old allowance
    assert _neighbours.bound_slack(d - 1) >= d * 2.0**-24 and _neighbours.bound_slack(40) == _neighbours._BOUND_SLACK
    monkeypatch.setattr(_neighbours, "_SCAN_PAIRS", 0)  # the bounded search, on these few rows
    for known_columns in (known, known[:250]):
        found = nearest_on_column_sets(rows, query, [known_columns])[0]
        np.testing.assert_array_equal(found, canonical_nearest(rows, query, known_columns))
    assert nearest_on_column_sets(rows, query, [known])[0].tolist() == [150]
