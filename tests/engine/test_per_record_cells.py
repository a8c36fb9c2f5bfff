"""Cell releases (parallel composition) and per-record loss summaries."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from engine.errors import DataValidationError, InvalidParameterError
from engine.per_record import (
    EPL1,
    EPL2,
    GaussianSum,
    GeneralizedGaussian,
    KthRootTransformation,
    LogTransformation,
    UnitSplitting,
)
from engine.per_record.cells import release_cells
from engine.per_record.losses import (
    CONFIDENTIAL_NOTE,
    policy_curves,
    record_losses,
    share_protected,
    summarize_losses,
)

TOY = pd.DataFrame({
    "id": [1, 2, 3, 4, 5, 6],
    "industry": ["Retail", "Retail", "Retail", "Services", "Hospitality", "Technology"],
    "employees": [5, 5, 10, 20, 30, 10000],
})


def _frame(n=600, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        "industry": rng.choice(["a", "b", "c"], n),
        "county": rng.choice(["x", "y"], n),
        "payroll": np.round(np.exp(rng.normal(5, 1.5, n)), 2),
    })


def test_table1_losses_are_examples_2_16_4_6_4_8():
    cases = [
        (UnitSplitting(tau=10.0, sigma=math.sqrt(50.0)), [1, 1, 1, 4, 9, 1e6]),
        (KthRootTransformation(k=4, a=0.0, sigma=2.0), [0.279508, 0.279508, 0.395285, 0.559017, 0.684653, 12.5]),
        (LogTransformation(a=1.0, sigma=2.0), [0.401300, 0.401300, 0.718738, 1.158640, 1.474034, 10.604026]),
    ]
    for mechanism, expected in cases:
        r = release_cells(TOY, "employees", ["industry"], mechanism, rng=np.random.default_rng(1), id_columns=["id"])
        np.testing.assert_allclose(r.records["loss"], expected, rtol=1e-6, atol=5e-7)
        # parallel composition: a record's loss is the same whichever cells the column is split into
        whole = release_cells(TOY, "employees", [], mechanism, rng=np.random.default_rng(1))
        np.testing.assert_array_equal(whole.records["loss"], r.records["loss"])
        assert r.loss_summary.top["id"].iloc[0] == 6
        assert r.unit == "rho"


def test_cell_table_contents():
    r = release_cells(TOY, "employees", ["industry"], GaussianSum(sigma=3.0), rng=np.random.default_rng(2),
                      beta=0.1)
    c = r.cells.set_index("industry")
    assert c.loc["Retail", "true_sum"] == 20 and c.loc["Retail", "n_records_internal"] == 3
    assert c.loc["Technology", "max_value"] == 10000
    assert c.loc["Technology", "max_loss"] == pytest.approx(10000**2 / 18)
    np.testing.assert_allclose(c["error"], c["estimate"] - c["true_sum"])
    np.testing.assert_allclose(c["relative_error"], c["error"] / c["true_sum"])
    assert (c["high"] - c["low"] > 0).all() and (c["low"] >= 0).all()
    np.testing.assert_allclose(c["sd_estimate"], 3.0)
    np.testing.assert_allclose(c["sd_true"], 3.0)
    assert r.records["cell"].tolist() == [1, 1, 1, 2, 0, 3]  # sorted cells: Hospitality, Retail, Services, Tech
    assert CONFIDENTIAL_NOTE in r.notes
    m = r.metrics()
    assert m["n_cells"] == 4 and 0 <= m["coverage"] <= 1 and m["unit"] == "rho"


def test_release_is_reproducible_and_uses_the_mechanism():
    df = _frame()
    mech = LogTransformation(a=100.0, sigma=0.05)
    a = release_cells(df, "payroll", ["industry", "county"], mech, rng=np.random.default_rng(3))
    b = release_cells(df, "payroll", ["industry", "county"], mech, rng=np.random.default_rng(3))
    pd.testing.assert_frame_equal(a.cells, b.cells)
    assert len(a.cells) == 6 and a.cells["n_records_internal"].sum() == len(df)
    np.testing.assert_allclose(a.cells["true_sum"].sum(), df["payroll"].sum())
    # transformation output is on the log scale; the estimate is the unbiased g(ṽ)
    np.testing.assert_allclose(a.cells["estimate"], np.exp(a.cells["output"] - 0.05**2 / 2) - 100.0)
    # sd_true is the mechanism's SD at the true total (internal), sd_estimate comes from the output
    np.testing.assert_allclose(a.cells["sd_true"], np.sqrt(mech.variance(a.cells["true_sum"].to_numpy())))


def test_coverage_over_many_cells_within_binomial_tolerance():
    # 2,000 cells, 90% intervals: coverage within 3 binomial SEs (√(0.09/2000) ≈ 0.0067)
    n = 2000
    df = pd.DataFrame({"cell": np.arange(n), "v": np.random.default_rng(4).lognormal(3, 1, n)})
    for mech in (KthRootTransformation(k=2, a=1.0, sigma=0.5), GeneralizedGaussian(p=0.5, sigma=2.0)):
        r = release_cells(df, "v", ["cell"], mech, rng=np.random.default_rng(5), beta=0.1)
        assert abs(r.metrics()["coverage"] - 0.9) <= 3 * math.sqrt(0.09 / n)


def test_heavy_tailed_mechanism_reports_median_and_no_sd():
    r = release_cells(TOY, "employees", ["industry"], EPL1(d=1.5, scale=10.0), rng=np.random.default_rng(6),
                      unit="epsilon")
    assert r.cells["sd_estimate"].isna().all()
    assert any("median-unbiased" in n for n in r.notes)
    np.testing.assert_allclose(r.cells["estimate"], r.cells["estimate_median"])
    assert r.unit == "epsilon"
    np.testing.assert_allclose(r.records["loss"], 1.5 * np.log1p(TOY["employees"] / 10.0))


def test_missing_cell_keys_form_their_own_cell():
    df = TOY.assign(industry=["Retail", None, "Retail", "Services", None, "Technology"])
    r = release_cells(df, "employees", ["industry"], GaussianSum(sigma=1.0), rng=np.random.default_rng(7))
    assert r.cells["n_records_internal"].sum() == 6 and len(r.cells) == 4


@pytest.mark.parametrize(
    ("frame", "value", "by", "error", "match"),
    [
        (TOY, "payroll", [], DataValidationError, "column 'payroll' is not in the table"),
        (TOY, "employees", ["county"], InvalidParameterError, "column 'county' is not in the table"),
        (TOY.assign(employees=[5, -1, 10, 20, 30, 1]), "employees", [], DataValidationError, "row 1"),
        (TOY.assign(employees=[5, np.nan, 10, 20, 30, 1]), "employees", [], DataValidationError, "row 1"),
        (TOY.assign(employees=["5", "x", "1", "2", "3", "4"]), "employees", [], DataValidationError, "row 1"),
        (TOY, "employees", ["employees"], InvalidParameterError, "cannot also be a cell column"),
        (TOY.iloc[:0], "employees", [], InvalidParameterError, "no rows"),
    ],
)
def test_bad_tables(frame, value, by, error, match):
    with pytest.raises(error, match=match):
        release_cells(frame, value, by, GaussianSum(), rng=np.random.default_rng(0))


def test_bad_rows_are_named():
    with pytest.raises(DataValidationError) as info:
        record_losses(TOY.assign(employees=[5, 5, 10, 20, np.inf, 1]), "employees", GaussianSum())
    assert info.value.row == 4 and info.value.column == "employees"


# ----- loss summaries -----------------------------------------------------------------------------------------
def test_record_losses_summary_and_threshold():
    r = record_losses(TOY, "employees", UnitSplitting(tau=10.0, sigma=math.sqrt(50.0)), threshold=2.0,
                      id_columns=["id", "industry"], top_n=3)
    s = r.summary
    assert s.n == 6 and s.unit == "rho" and "ρ" in s.label
    assert s.median == pytest.approx(2.5) and s.max == pytest.approx(1e6)
    assert s.p90 == pytest.approx(np.quantile([1, 1, 1, 4, 9, 1e6], 0.9))
    assert s.share_above == pytest.approx(0.5)
    assert s.top["id"].tolist() == [6, 5, 4] and s.top["industry"].tolist()[0] == "Technology"
    assert s.top["employees"].tolist() == [10000, 30, 20]
    assert s.top["rank"].tolist() == [1, 2, 3]
    d = s.to_dict()
    assert d["top"][0]["id"] == 6 and d["threshold"] == 2.0
    assert r.note == CONFIDENTIAL_NOTE


def test_record_losses_units():
    lap = GeneralizedGaussian(p=1.0, sigma=10.0)
    eps = record_losses(TOY, "employees", lap, unit="epsilon")
    rho = record_losses(TOY, "employees", lap, unit="rho")
    native = record_losses(TOY, "employees", lap, unit="native")
    np.testing.assert_allclose(eps.records["loss"], TOY["employees"] / 10.0)
    np.testing.assert_allclose(rho.records["loss"], eps.records["loss_rho"])
    assert native.unit == "epsilon"
    with pytest.raises(InvalidParameterError, match="no ε-PRDP value"):
        record_losses(TOY, "employees", GaussianSum(), unit="epsilon")


def test_summarize_losses_validation():
    with pytest.raises(InvalidParameterError, match="zero records"):
        summarize_losses([], unit="rho")
    with pytest.raises(InvalidParameterError, match="NaN"):
        summarize_losses([1.0, np.nan], unit="rho")
    with pytest.raises(InvalidParameterError, match=r"^threshold must be"):
        summarize_losses([1.0], unit="rho", threshold=-1)
    s = summarize_losses([3.0, 1.0], unit="rho")
    assert s.share_above is None and s.threshold is None


def test_share_protected_matches_max_protected_value():
    df = _frame(2000)
    mech = LogTransformation(a=50.0, sigma=0.1)
    share = share_protected(mech, df["payroll"], 1.0)
    assert share == pytest.approx(np.mean(df["payroll"] <= mech.max_protected_value(1.0)))
    assert 0 < share < 1


def test_policy_curves_share_one_unit():
    ms = [GaussianSum(sigma=100.0), EPL2(d=1.0, a=math.e, sigma=100.0), KthRootTransformation(k=2, sigma=1.0)]
    x = np.logspace(0, 6, 13)
    t = policy_curves(ms, x)
    assert set(t["unit"]) == {"rho"} and len(t) == 39
    np.testing.assert_allclose(t[t["kind"] == "epl2"]["loss"], ms[1].policy_rho(x))
    eps = policy_curves(ms, x, unit="epsilon")
    assert set(eps["kind"]) == {"epl2"} and set(eps["unit"]) == {"epsilon"}
    assert eps["source"].iloc[0].startswith("paper")
    with pytest.raises(InvalidParameterError, match="different units"):
        policy_curves(ms, x, unit="native")
    with pytest.raises(InvalidParameterError, match="no mechanism has ε"):
        policy_curves(ms[:1], x, unit="epsilon")


def test_cell_rows_align_with_record_cells_including_missing_keys():
    rng = np.random.default_rng(8)
    n = 400
    df = pd.DataFrame({
        "industry": rng.choice(np.array(["b", "a", None, "c"], dtype=object), n),
        "county": rng.choice(np.array(["y", None, "x"], dtype=object), n),
        "payroll": rng.lognormal(2, 1, n),
    })
    r = release_cells(df, "payroll", ["industry", "county"], GaussianSum(sigma=1.0), rng=np.random.default_rng(9))
    assert r.cells["n_records_internal"].sum() == n
    for i, row in r.cells.iterrows():
        members = r.records[r.records["cell"] == i]
        assert len(members) == row["n_records_internal"]
        assert members["payroll"].sum() == pytest.approx(row["true_sum"], rel=1e-12)
        for col in ("industry", "county"):
            keys = members[col]
            assert (keys.isna().all() and pd.isna(row[col])) or (keys == row[col]).all()


# ----- the cell universe is public (review finding: cells present only when they hold records) -----------------
def test_every_cell_of_the_declared_universe_is_released_even_if_empty():
    levels = {"industry": ["Retail", "Services", "Hospitality", "Technology", "Mining"]}
    full = release_cells(TOY, "employees", ["industry"], GaussianSum(sigma=1.0), rng=np.random.default_rng(1),
                         levels=levels)
    # drop the only record of the Hospitality cell: the set of released cells must not change
    dropped = release_cells(TOY[TOY["industry"] != "Hospitality"], "employees", ["industry"],
                            GaussianSum(sigma=1.0), rng=np.random.default_rng(1), levels=levels)
    assert full.cells["industry"].tolist() == dropped.cells["industry"].tolist() == levels["industry"]
    assert full.published["industry"].tolist() == dropped.published["industry"].tolist()
    hosp = dropped.cells.set_index("industry").loc["Hospitality"]
    assert hosp["true_sum"] == 0 and hosp["n_records_internal"] == 0 and np.isfinite(hosp["output"])
    assert np.isnan(hosp["max_loss"]) and np.isnan(hosp["max_value"])
    mining = full.cells.set_index("industry").loc["Mining"]
    assert mining["true_sum"] == 0 and mining["output"] != 0  # noise is added to empty cells too
    assert full.metrics()["n_empty_cells"] == 1 and dropped.metrics()["n_empty_cells"] == 2
    # exact counts and true sums are not in the publishable part
    assert "n_records_internal" not in full.published.columns and "true_sum" not in full.published.columns
    assert not any("taken from the data" in n for n in full.notes)


def test_unused_categorical_levels_are_released_and_product_of_levels_is_the_universe():
    df = _frame(50).assign(
        industry=lambda f: pd.Categorical(f["industry"], categories=["a", "b", "c", "d"]),
        county=lambda f: pd.Categorical(f["county"], categories=["x", "y", "z"]),
    )
    r = release_cells(df, "payroll", ["industry", "county"], GaussianSum(sigma=1.0), rng=np.random.default_rng(2))
    assert len(r.cells) == 12  # 4 × 3, including the unused levels d and z
    assert r.cells[r.cells["industry"] == "d"]["true_sum"].eq(0).all()
    assert r.levels == {"industry": ("a", "b", "c", "d"), "county": ("x", "y", "z")}
    np.testing.assert_allclose(r.cells["true_sum"].sum(), df["payroll"].sum())


def test_observed_levels_come_with_a_public_levels_note_and_full_product():
    df = pd.DataFrame({"i": ["a", "a", "b"], "c": ["x", "y", "x"], "v": [1.0, 2.0, 3.0]})
    r = release_cells(df, "v", ["i", "c"], GaussianSum(sigma=1.0), rng=np.random.default_rng(3))
    assert len(r.cells) == 4  # (b, y) has no record but is released
    assert r.cells.set_index(["i", "c"]).loc[("b", "y"), "true_sum"] == 0
    assert any("must be public" in n and "'i', 'c'" in n for n in r.notes)


def test_keys_outside_the_declared_levels_are_rejected():
    with pytest.raises(DataValidationError, match=r"row 5 has industry = 'Technology'") as info:
        release_cells(TOY, "employees", ["industry"], GaussianSum(), rng=np.random.default_rng(0),
                      levels={"industry": ["Retail", "Services", "Hospitality"]})
    assert info.value.row == 5
    with pytest.raises(InvalidParameterError, match="not a cell column"):
        release_cells(TOY, "employees", ["industry"], GaussianSum(), rng=np.random.default_rng(0),
                      levels={"county": ["x"]})
    with pytest.raises(InvalidParameterError, match="twice"):
        release_cells(TOY, "employees", ["industry"], GaussianSum(), rng=np.random.default_rng(0),
                      levels={"industry": ["Retail", "Retail"]})


# ----- units with several rows (review finding: each row was treated as a record) -------------------------------
def test_repeated_ids_are_one_unit_summed_within_cells_and_losses_summed_over_cells():
    df = pd.DataFrame({
        "id": [1, 1, 2, 1, 3],
        "industry": ["a", "a", "a", "b", "b"],
        "v": [3.0, 4.0, 5.0, 2.0, 1.0],
    })
    mech = GaussianSum(sigma=1.0)
    r = release_cells(df, "v", ["industry"], mech, rng=np.random.default_rng(4), id_columns=["id"])
    rec = r.records.set_index(["id", "industry"])
    assert rec.loc[(1, "a"), "v"] == 7.0 and rec.loc[(1, "a"), "n_rows"] == 2
    assert rec.loc[(1, "a"), "loss"] == pytest.approx(7.0**2 / 2)  # not 3²/2 + 4²/2 = 12.5
    assert rec.loc[(1, "a"), "unit_loss"] == pytest.approx(7.0**2 / 2 + 2.0**2 / 2)
    assert r.loss_summary.n == 3 and r.loss_summary.max == pytest.approx(26.5)
    assert r.loss_summary.top["id"].iloc[0] == 1
    c = r.cells.set_index("industry")
    assert c.loc["a", "true_sum"] == 12.0 and c.loc["a", "n_records_internal"] == 2
    assert any("several rows" in n for n in r.notes)
    # record_losses: a unit's loss is that of its total
    rl = record_losses(df, "v", mech, id_columns=["id"])
    assert rl.records["id"].tolist() == [1, 2, 3] and rl.records["v"].tolist() == [9.0, 5.0, 1.0]
    np.testing.assert_allclose(rl.records["loss"], [40.5, 12.5, 0.5])
    assert rl.records["n_rows"].tolist() == [3, 1, 1] and rl.notes
