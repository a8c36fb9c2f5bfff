"""counties-demo, user count tables (validation messages) and the count release runner."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.errors import CancelledError, DataValidationError, InvalidParameterError
from engine.progress import CancelToken
from engine.public_info.count_release import CountReleaseConfig, release_counts
from engine.public_info.count_table import count_table_from_frame, counties_demo, load_count_table


def test_counties_demo_is_deterministic_and_shaped_like_the_paper():
    a, b = counties_demo(), counties_demo()
    assert np.array_equal(a.counts, b.counts) and np.array_equal(a.subcounts, b.subcounts)
    assert a.counts.shape == (67, 24) and a.synthetic and "SYNTHETIC" in a.notes[0]
    assert np.all(a.subcounts <= a.counts) and np.all(a.subcounts >= 0)
    pop = a.population
    assert 12e6 < pop.sum() < 14e6 and pop.max() == 1_600_000 and pop.min() == 4_500
    assert 270_000 in pop
    rate = a.counts.sum(axis=0) / pop.sum()
    assert rate.min() > 3e-4 and rate.max() < 3e-2 and rate.argmax() > 12  # two waves, the later one larger
    assert a.periods[0] == "2020-03" and a.periods[-1] == "2022-02"


def _frame():
    return pd.DataFrame({
        "county": ["a", "a", "b", "b", "c", "c"], "month": [2, 1, 1, 2, 1, 2],
        "cases": [5, 6, 7, 8, 0, 3], "deaths": [1, 0, 2, 2, 0, 3], "pop": [100, 100, 50, 50, 9, 9],
    })


def test_user_table_round_trip():
    t = count_table_from_frame(_frame(), region="county", period="month", count="cases", subcount="deaths",
                               population="pop")
    assert t.regions == ("a", "b", "c") and t.periods == ("1", "2")
    assert t.counts.tolist() == [[6, 5], [7, 8], [0, 3]] and t.subcounts[0].tolist() == [0, 1]
    assert t.population.tolist() == [100, 50, 9]
    again = count_table_from_frame(t.to_frame(), subcount="subcount", population="population")
    assert np.array_equal(again.counts, t.counts)


def test_load_from_csv_bytes():
    data = _frame().to_csv(index=False).encode()
    t = load_count_table(data, filename="x.csv", region="county", period="month", count="cases")
    assert t.counts.shape == (3, 2) and t.subcounts is None


@pytest.mark.parametrize(("edit", "kwargs", "pattern", "column", "row"), [
    (lambda f: f, {"count": "nope"}, r"count column 'nope' is not in the table.*choose the count column", "nope", None),
    (lambda f: f.assign(cases=[5, 6, -7, 8, 0, 3]), {}, r"'cases' \(count\) must be ≥ 0; row 3", "cases", 2),
    (lambda f: f.assign(cases=[5, 6, 7.5, 8, 0, 3]), {}, r"whole numbers; row 3 has 7.5", "cases", 2),
    (lambda f: f.assign(cases=[5, 6, "x", 8, 0, 3]), {}, r"must hold numbers; row 3 has 'x'", "cases", 2),
    (lambda f: f.assign(deaths=[1, 0, 9, 2, 0, 3]), {"subcount": "deaths"}, r"row 3 has 9 > 7", "deaths", 2),
    (lambda f: f.assign(month=[1, 1, 1, 2, 1, 2]), {}, r"region 'a' has period '1' twice \(row 2\)", "month", 1),
    (lambda f: f.iloc[:-1], {}, r"region 'c' has no row for period '2'", "month", None),
    (lambda f: f.assign(pop=[100, 90, 50, 50, 9, 9]), {"population": "pop"}, r"two populations", "pop", 1),
    (lambda f: f.assign(cases=[5, 6, None, 8, 0, 3]), {}, r"empty in row 3", "cases", 2),
])
def test_validation_messages_name_column_row_and_fix(edit, kwargs, pattern, column, row):
    args = {"region": "county", "period": "month", "count": "cases", **kwargs}
    with pytest.raises(DataValidationError, match=pattern) as info:
        count_table_from_frame(edit(_frame()), **args)
    assert info.value.column == column and info.value.row == row


def _small():
    return count_table_from_frame(pd.DataFrame({
        "region": np.repeat(["big", "mid", "small"], 4), "period": np.tile([1, 2, 3, 4], 3),
        "count": [900, 1200, 800, 1000, 200, 150, 260, 240, 3, 0, 5, 2],
        "sub": [20, 30, 10, 15, 4, 2, 3, 6, 1, 0, 5, 0]}), subcount="sub")


@pytest.mark.parametrize(("method", "base"), [("postprocess", "congenial"), ("wasserstein", "naive"),
                                              ("wasserstein", "congenial"), ("wasserstein", "prior")])
def test_release_respects_the_declared_invariants(method, base):
    t = _small()
    cfg = CountReleaseConfig(method=method, base=base, epsilon=0.5, replicates=30)
    seen = []
    out = release_counts(t, cfg, rng=np.random.default_rng(0), progress=seen.append)
    assert out.counts.shape == (30, 3, 4) and len(seen) == 4 and seen[-1].fraction == 1.0
    if not (method == "wasserstein" and base == "naive"):
        assert np.all(out.counts.sum(axis=1) == t.totals[None, :])
        assert np.all((out.subcounts >= 0) & (out.subcounts <= out.counts))
    assert out.guarantee.epsilon == 0.5 and out.guarantee.periods == 4
    assert CountReleaseConfig.from_json(cfg.to_json()) == cfg
    assert (out.regions is not None) == (method == "postprocess")


def test_release_without_public_total_or_subcount_constraint():
    t = _small()
    cfg = CountReleaseConfig(method="postprocess", epsilon=0.5, public=("last-period",), replicates=10)
    out = release_counts(t, cfg, rng=np.random.default_rng(1))
    assert np.all(out.counts >= 0) and np.all(out.subcounts >= 0)


def test_release_large_epsilon_returns_the_truth():
    t = _small()
    for method, base in (("postprocess", "congenial"), ("wasserstein", "congenial"), ("wasserstein", "prior")):
        out = release_counts(t, CountReleaseConfig(method=method, base=base, epsilon=500.0, replicates=3),
                             rng=np.random.default_rng(2))
        assert np.all(out.counts == t.counts[None]) and np.all(out.subcounts == t.subcounts[None])


def test_release_can_be_cancelled():
    token = CancelToken()
    token.cancel()
    with pytest.raises(CancelledError):
        release_counts(_small(), CountReleaseConfig(), rng=np.random.default_rng(0), cancel=token)


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"base": "congenial", "public": ("subcount",)}, "total"),
    ({"base": "prior", "public": ("total",)}, "last-period"),
    ({"public": ("total", "bogus")}, "public"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"replicates": 0}, "replicates"),
])
def test_config_rejects_inconsistent_choices(kwargs, word):
    with pytest.raises(InvalidParameterError, match=word):
        CountReleaseConfig(method="wasserstein", **kwargs)
