"""Establishment demo data: deterministic synthetic long-tailed payroll and the paper's Table 1."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.data import establishments as est
from engine.errors import InvalidParameterError


def test_table1_exact():
    t = est.table1_toy()
    assert t["employees"].tolist() == [5, 5, 10, 20, 30, 10000]
    assert t["industry"].tolist() == ["Retail", "Retail", "Retail", "Services", "Hospitality", "Technology"]
    assert t[est.ID_COLUMN].tolist() == [1, 2, 3, 4, 5, 6]
    pd.testing.assert_frame_equal(t, est.TABLE1_TOY)
    t.loc[0, "employees"] = 99  # a copy: the module constant is untouched
    assert est.table1_toy()["employees"].iloc[0] == 5


def test_generator_deterministic_and_shaped():
    a = est.make_establishments()
    b = est.make_establishments()
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == est.DEFAULT_N
    assert list(a.columns) == [est.ID_COLUMN, *est.CELL_COLUMNS, "employees", "payroll"]
    assert a[est.ID_COLUMN].is_unique
    assert not a.isna().any().any()
    assert (a["employees"] >= 1).all() and (a["payroll"] > 0).all()
    assert a["industry"].nunique() == 8 and a["county"].nunique() == 12
    c = est.make_establishments(seed=1)
    assert not a["payroll"].equals(c["payroll"])


def test_long_tailed():
    df = est.make_establishments(n=20_000)
    emp = df["employees"].to_numpy()
    assert np.median(emp) < 15
    assert emp.max() > 100 * np.median(emp)
    top1 = np.sort(df["payroll"].to_numpy())[-200:].sum() / df["payroll"].sum()
    assert top1 > 0.2  # the largest 1% of establishments hold a large share of payroll


def test_validation_and_registration_constants():
    with pytest.raises(InvalidParameterError, match=r"^n must be a whole number"):
        est.make_establishments(n=5)
    with pytest.raises(InvalidParameterError, match=r"^seed must be"):
        est.make_establishments(seed=-1)
    assert est.DEMO_NAME == "establishments-demo" and est.PROGRAM == "sums"
    assert set(est.VALUE_COLUMNS) <= set(est.make_establishments(n=10).columns)


def test_cell_levels_are_the_public_universe_of_the_generator():
    from engine.data.establishments import CELL_LEVELS, make_establishments

    df = make_establishments(seed=5, n=500)
    for col, levels in CELL_LEVELS.items():
        assert set(df[col]) <= set(levels)
    assert len(CELL_LEVELS["industry"]) == 8 and len(CELL_LEVELS["county"]) == 12
