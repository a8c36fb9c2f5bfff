"""Declared preparation steps: missing values, one-hot encoding, dates, positive class, warnings (issue 9)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.data.preparation import (
    Categorical,
    DataSpec,
    MissingRule,
    Normalization,
    TableProblem,
    feature_names,
    fingerprint,
    preparation_notes,
    preparation_steps,
    prepare,
    table_problems,
)
from engine.data.profile import column_profile, suggest_spec, with_target
from engine.errors import InvalidParameterError


def _frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "income": rng.normal(100, 20, n),
            "size": rng.integers(1, 8, n).astype(float),
            "region": np.array(["north", "south", "east"], dtype=object)[np.arange(n) % 3],
            "outcome": np.array(["good", "bad"], dtype=object)[np.arange(n) % 2],
            "y": rng.random(n),
        }
    )


# ------------------------------------------------------------------------------------------- spec


def test_spec_with_every_new_field_round_trips_through_json():
    spec = DataSpec(
        ("income", "region", "when"),
        target="outcome",
        positive_class=("good", "fine"),
        missing={"income": MissingRule("fill", 0, indicator=True)},
        drop_missing=True,
        categorical={"region": Categorical(("north", "south"), missing_level=True)},
        dates=("when",),
        normalization=Normalization("bounds", lower=(0, 0), upper=(200, 20000)),
    )
    data = spec.to_dict()
    assert data["missing"] == {"income": {"action": "fill", "value": 0.0, "indicator": True}}
    assert data["categorical"] == {
        "region": {"levels": ["north", "south"], "levels_from_data": False, "other": True, "missing_level": True}
    }
    assert (data["dates"], data["positive_class"], data["drop_missing"]) == (["when"], ["good", "fine"], True)
    assert DataSpec.from_json(spec.to_json()) == spec
    assert spec.numeric_features == ("income", "when")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target": "t", "missing": {"t": MissingRule("fill", 0)}}, "always dropped"),
        ({"target": "t", "categorical": {"t": Categorical()}}, "positive class instead"),
        ({"positive_class": ("yes",)}, "choose a target"),
        ({"missing": {"z": MissingRule("fill", 1, indicator=True)}}, "not a feature"),
        ({"categorical": {"a": Categorical(missing_level=True)}, "missing": {"a": MissingRule("drop")}}, "keep one"),
        ({"categorical": {"a": Categorical()}, "dates": ("a",)}, "both as a date and as categorical"),
        ({"target": "t", "positive_class": ("yes", "yes")}, "distinct"),
    ],
)
def test_contradictory_specs_are_refused(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        DataSpec(("a", "b"), **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"action": "drop", "value": 1}, "takes no fill value"),
        ({"action": "drop", "indicator": True}, "takes no fill value"),
        ({"action": "fill"}, "needs the public constant"),
        ({"action": "fill", "value": float("nan")}, "fill value"),
        ({"action": "mean"}, "missing-value action"),
    ],
)
def test_invalid_missing_rules(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        MissingRule(**kwargs)


def test_categorical_defaults_other_for_public_levels_only():
    assert Categorical(("a", "b")).other is True and Categorical(("a", "b")).levels_from_data is False
    assert Categorical().other is False and Categorical().levels_from_data is True
    assert Categorical((1, 2.0)).levels == ("1", "2")
    for bad in (("a", "a"), ("a", ""), ("(other)",)):
        with pytest.raises(InvalidParameterError):
            Categorical(bad)


def test_fingerprint_covers_the_new_spec_fields():
    frame = _frame()
    base = DataSpec(("income", "region"), categorical={"region": Categorical()})
    variants = [
        DataSpec(("income", "region"), categorical={"region": Categorical(("north", "south", "east"))}),
        DataSpec(("income", "region"), categorical={"region": Categorical(missing_level=True)}),
        DataSpec(("income", "region"), categorical={"region": Categorical()}, drop_missing=True),
        DataSpec(("income", "region"), categorical={"region": Categorical()}, missing={"income": MissingRule()}),
    ]
    prints = {fingerprint(frame, s) for s in [base, *variants]}
    assert len(prints) == 5


# ------------------------------------------------------------------------------------------- missing values


def _with_gaps(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame.loc[[2, 5, 7], "income"] = np.nan
    frame.loc[[5, 11], "size"] = np.nan
    frame.loc[[0], "y"] = np.nan
    return frame


def test_missing_cells_without_a_rule_name_every_fix():
    problems = table_problems(_with_gaps(_frame()), DataSpec(("income", "size"), target="y"))
    assert [(p.column, p.row) for p in problems] == [("income", 2), ("size", 5)]
    assert problems[0].control == "features"
    assert str(problems[0]).endswith(
        "has a missing value in data row 3 (counting data rows from 1) and in 2 more rows — drop those rows or "
        "fill them with a public constant (optionally with a missing-indicator feature)"
    )


def test_global_drop_removes_rows_missing_in_any_used_column_and_the_target():
    frame = _with_gaps(_frame())
    p = prepare(frame, DataSpec(("income", "size"), target="y", drop_missing=True))
    assert (p.n, p.rows_in_table, p.rows_dropped) == (40 - 5, 40, 5)  # rows 0, 2, 5, 7, 11
    assert p.dropped_rows == {"income": 3, "size": 2, "y": 1}
    np.testing.assert_array_equal(p.y, frame["y"].drop(index=[0, 2, 5, 7, 11]).to_numpy())


def test_dropping_more_than_a_tenth_of_the_rows_warns_with_the_share_and_the_fill_advice():
    # Found by a new-user run: SLID lost 46 % of its rows to the drop rule with only a grey caption saying so.
    many = prepare(_with_gaps(_frame()), DataSpec(("income", "size"), target="y", drop_missing=True))
    (warning,) = [w for w in many.warnings if w.startswith("missing values:")]
    assert warning.startswith("missing values: 12% of the rows (5 of 40) were dropped because a chosen column is "
                              "missing")
    assert "public constant and a missing-indicator" in warning
    few = _frame()
    few.loc[[3, 4], "y"] = np.nan  # 2 of 40 = 5 %: below the 10 % threshold
    assert not [w for w in prepare(few, DataSpec(("income", "size"), target="y")).warnings
                if w.startswith("missing values:")]


def test_target_rows_are_dropped_even_without_any_rule():
    frame = _frame()
    frame.loc[[3, 4], "y"] = np.nan
    p = prepare(frame, DataSpec(("income", "size"), target="y"))
    assert (p.n, p.dropped_rows, p.filled_cells) == (38, {"y": 2}, {})
    assert preparation_steps(p.spec)[0] == "Rows whose target 'y' is missing are always dropped."
    assert "the number of records kept, n, is released with the data" in p.privacy_note()
    assert "records kept" not in prepare(_frame(), p.spec).privacy_note()  # nothing dropped, nothing declared


def test_fill_with_a_public_constant_and_an_indicator():
    frame = _with_gaps(_frame())
    spec = DataSpec(
        ("income", "size"),
        missing={"income": MissingRule("fill", -1, indicator=True), "size": MissingRule("drop")},
        normalization=Normalization("bounds", standardize=False, lower=(-1, 0), upper=(200, 10)),
    )
    p = prepare(frame, spec)
    assert p.feature_names == ("income", "income (missing)", "size")
    assert p.feature_kinds == ("numeric", "indicator", "numeric")
    assert (p.n, p.dropped_rows, p.filled_cells) == (38, {"size": 2}, {"income": 2})  # row 5 dropped by size
    kept = frame.drop(index=[5, 11]).reset_index(drop=True)
    # bounds without standardising: x = clip(v) / max(|l|, |u|) / sqrt(d) — the filled cells hold -1/200/sqrt(3).
    expected_income = np.where(kept["income"].isna(), -1.0, kept["income"].clip(-1, 200)) / 200 / math.sqrt(3)
    np.testing.assert_allclose(p.x[:, 0], expected_income, rtol=1e-12)
    np.testing.assert_array_equal(p.x[:, 1] * math.sqrt(3), kept["income"].isna().astype(float))
    assert "fill" not in " ".join(preparation_notes(spec))  # filling with a constant is public: no flag


def test_fill_value_must_suit_the_column():
    frame = _with_gaps(_frame())
    problems = table_problems(frame, DataSpec(("income",), missing={"income": MissingRule("fill", "none")}))
    assert [p.column for p in problems] == ["income"] and "is not a number" in str(problems[0])


def test_dropping_down_to_too_few_rows_says_so():
    frame = _frame(25)
    frame.loc[:10, "income"] = np.nan
    problems = table_problems(frame, DataSpec(("income", "size"), drop_missing=True))
    assert str(problems[-1]).startswith("after dropping 11 rows with a missing value, the table keeps 14 data rows")


# ------------------------------------------------------------------------------------------- text features


def test_text_feature_gets_the_encoding_advice_not_the_typo_advice():
    problem = table_problems(_frame(), DataSpec(("income", "region")))[0]
    assert str(problem) == (
        "feature column 'region' is a text column with 3 levels (east, north, south) — encode it as categorical, "
        "or remove it from the features"
    )
    typo = _frame()
    typo["size"] = typo["size"].astype(object)
    typo.loc[4, "size"] = "3,5"
    problem = table_problems(typo, DataSpec(("income", "size")))[0]
    assert (problem.row, problem.column) == (4, "size")
    assert "holds the text '3,5' — correct that cell (digits only, '.' as the decimal point)" in str(problem)


def test_text_target_without_positive_class_names_levels_and_fix():
    problem = table_problems(_frame(), DataSpec(("income",), target="outcome"))[0]
    assert problem.control == "target"
    assert str(problem) == (
        "target column 'outcome' is a text column with 2 levels (bad, good) — choose the positive class(es) to "
        "code as 1 (every other label is coded 0), or choose another target"
    )
    many = pd.DataFrame({"a": np.arange(30.0), "t": [f"L{i % 10}" for i in range(30)]})
    assert "10 levels (L0, L1, L2, L3, L4, L5, L6, L7, … (2 more))" in str(
        table_problems(many, DataSpec(("a",), target="t"))[0]
    )


def test_one_hot_with_public_levels_other_and_missing_level():
    frame = _frame()
    frame.loc[[1, 4], "region"] = None  # rows 1 (south) and 4 (south)
    spec = DataSpec(("income", "region"), categorical={"region": Categorical(("north", "south"), missing_level=True)})
    p = prepare(frame, spec)
    assert p.feature_names == ("income", "region=north", "region=south", "region=(other)", "region=(missing)")
    assert p.feature_kinds == ("numeric", "one-hot", "one-hot", "one-hot", "one-hot")
    assert p.filled_cells == {"region": 2} and p.n == 40
    region = frame["region"]
    expected = np.column_stack(
        [region.eq("north"), region.eq("south"), region.eq("east"), region.isna()]
    ).astype(float)
    # clip with standardize: one-hot columns keep centre 0, scale 1; the row map divides by max(1, ‖z‖).
    z_income = (frame["income"] - frame["income"].mean()) / frame["income"].std(ddof=0)
    z = np.column_stack([z_income, expected])
    np.testing.assert_allclose(p.x, z / np.maximum(1, np.linalg.norm(z, axis=1))[:, None], rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(p.centre[1:], 0.0)
    np.testing.assert_array_equal(p.scale[1:], 1.0)
    assert preparation_notes(spec) == ()  # typed levels: nothing read from the data


def test_unseen_level_without_other_is_a_problem_naming_the_cell():
    spec = DataSpec(("income", "region"), categorical={"region": Categorical(("north", "south"), other=False)})
    problem = table_problems(_frame(), spec)[0]
    assert (problem.column, problem.row) == ("region", 2)
    assert "holds 'east' in data row 3 (counting data rows from 1), which is not among its declared levels" in str(
        problem
    )


def test_levels_read_from_the_data_are_flagged_as_not_private():
    spec = DataSpec(("income", "region"), categorical={"region": Categorical()})
    p = prepare(_frame(), spec)
    assert p.feature_names == ("income", "region=east", "region=north", "region=south")
    assert p.levels == {"region": ("east", "north", "south")}
    note = p.privacy_note()
    assert "Not private by itself: the levels of 'region' (east, north, south) were read from the data" in note
    assert "read from the data (east, north, south) — not private." in p.preparation_steps()[0]


def test_categorical_declared_for_an_unused_column_is_reported():
    spec = DataSpec(("income",), categorical={"region": Categorical()}, dates=("when",))
    messages = [str(p) for p in table_problems(_frame(), spec)]
    assert messages[0].startswith("'region' is declared categorical but is not a feature")
    assert messages[1].startswith("'when' is declared as a date column but is not used")


def test_bounds_are_typed_for_numeric_features_only_one_hot_gets_zero_one():
    frame = _frame()
    spec = DataSpec(
        ("income", "region", "size"),
        categorical={"region": Categorical(("north", "south", "east"), other=False)},
        normalization=Normalization("bounds", lower=(0, 1), upper=(200, 7)),
    )
    p = prepare(frame, spec)
    np.testing.assert_array_equal(p.centre, [100, 0.5, 0.5, 0.5, 4])
    np.testing.assert_array_equal(p.scale, [100, 0.5, 0.5, 0.5, 3])
    assert p.row_factor == pytest.approx(1 / math.sqrt(5))
    wrong = DataSpec(spec.features, categorical=spec.categorical,
                     normalization=Normalization("bounds", lower=(0, 0, 1), upper=(200, 1, 7)))
    problem = table_problems(frame, wrong)[0]
    assert str(problem) == (
        "public bounds are given for 3 feature(s) but 2 numeric feature(s) are chosen — enter one lower and one "
        "upper bound per numeric feature, in the order of the features (the 1 categorical feature(s) and any "
        "missing-indicators get the bounds [0, 1] automatically)"
    )


def test_changing_one_record_changes_only_its_row_with_public_levels_and_bounds():
    frame = _frame()
    spec = DataSpec(("income", "region"), categorical={"region": Categorical(("north", "south"))},
                    missing={"income": MissingRule("fill", 100.0, indicator=True)},
                    normalization=Normalization("bounds", lower=(0,), upper=(200,)))
    other = frame.copy()
    other.loc[7, ["income", "region"]] = [np.nan, "west"]
    a, b = prepare(frame, spec).x, prepare(other, spec).x
    changed = np.flatnonzero(np.any(a != b, axis=1))
    assert changed.tolist() == [7]


# ------------------------------------------------------------------------------------------- outcome and dates


def test_positive_class_codes_the_target_and_counts_match_the_data():
    frame = _frame()
    p = prepare(frame, DataSpec(("income",), target="outcome", positive_class=("good",)))
    np.testing.assert_array_equal(p.y, (frame["outcome"] == "good").astype(float))
    assert p.y.sum() == 20
    both = prepare(frame, DataSpec(("income",), target="outcome", positive_class=("good", "bad")))
    assert both.y.sum() == 40
    coded = prepare(frame.assign(code=np.arange(40) % 4), DataSpec(("income",), target="code", positive_class=("3",)))
    assert coded.y.sum() == 10


def test_positive_class_absent_from_the_target_is_a_problem():
    problem = table_problems(_frame(), DataSpec(("income",), target="outcome", positive_class=("Good",)))[0]
    assert str(problem) == (
        "the positive class 'Good' does not occur in target column 'outcome' (its labels: bad, good) — check the "
        "spelling"
    )


def test_declared_dates_become_days_since_1970():
    frame = _frame(30)
    frame["when"] = [f"2020-01-{d:02d}" for d in range(1, 31)]
    frame.loc[5, "when"] = "2020-01-06T12:00:00Z"
    frame.loc[6, "when"] = None
    spec = DataSpec(("when", "income"), dates=("when",), missing={"when": MissingRule("fill", "1970-01-11")},
                    normalization=Normalization("bounds", standardize=False, lower=(0, 0), upper=(20000, 200)))
    p = prepare(frame, spec)
    days = p.x[:, 0] * 20000 * math.sqrt(2)
    assert days[0] == pytest.approx(18262.0)  # 2020-01-01 is day 18,262 after 1970-01-01
    assert days[5] == pytest.approx(18267.5)
    assert days[6] == pytest.approx(10.0)
    assert p.filled_cells == {"when": 1}


def test_undeclared_and_malformed_dates_say_what_to_do():
    frame = _frame(30)
    frame["when"] = [f"2020-01-{d:02d}" for d in range(1, 31)]
    problem = table_problems(frame, DataSpec(("income", "when")))[0]
    assert str(problem) == (
        "feature column 'when' holds dates (e.g. '2020-01-01') — declare it as a date column (turned into days "
        "since 1970-01-01), or remove it"
    )
    frame.loc[3, "when"] = "soon"
    problem = table_problems(frame, DataSpec(("income", "when"), dates=("when",)))[0]
    assert (problem.row, str(problem)) == (
        3,
        "date column 'when' holds 'soon' in data row 4 (counting data rows from 1), which is not a date — correct "
        "that cell (e.g. 2020-03-31) or remove the column from the date columns",
    )


# ------------------------------------------------------------------------------------------- warnings


def test_clip_warns_when_more_than_half_the_rows_are_shrunk():
    rng = np.random.default_rng(3)
    wide = pd.DataFrame(rng.normal(size=(200, 6)), columns=[f"f{i}" for i in range(6)])
    p = prepare(wide, DataSpec(tuple(wide.columns)))
    share = p.clipped_rows / p.n
    assert share > 0.5
    assert p.warnings[0].startswith(f"clip: {share:.0%} of the rows ({p.clipped_rows:,} of 200) had a norm above 1")
    assert "public bounds" in p.warnings[0]
    narrow = prepare(wide, DataSpec(("f0",)))  # |z| > 1 for about 32 % of a normal sample
    assert narrow.clipped_rows / narrow.n < 0.5 and narrow.warnings == ()


def test_maxnorm_warns_about_one_dominating_outlier_with_both_numbers():
    values = np.r_[np.linspace(1.0, 2.0, 199), 50.0]
    frame = pd.DataFrame({"a": values, "b": np.zeros(200) + np.arange(200) % 2})
    p = prepare(frame, DataSpec(("a",), normalization=Normalization("maxnorm", standardize=False)))
    q99 = float(np.quantile(values, 0.99))
    squashed = float(np.mean(values / 50.0 < 0.2))
    assert p.warnings == (
        f"maxnorm: one record sets the scale — the largest row norm (50) is {50 / q99:.1f}× the 99th percentile of "
        f"the row norms ({q99:.3g}), so every row is divided by it and {squashed:.0%} of the rows end up with a "
        f"norm below 0.2 — consider 'clip' or public bounds",
    )
    assert squashed == 1 - 1 / 200
    calm = prepare(frame.assign(a=np.linspace(1.0, 2.0, 200)), p.spec)
    assert calm.warnings == ()


# ------------------------------------------------------------------------------------------- profile and suggestions


def test_column_profile_kinds_counts_examples_and_identifiers():
    frame = pd.DataFrame(
        {
            "household_id": [f"H{i:03d}" for i in range(30)],
            "seq": np.arange(100, 130),
            "flag": [True, False] * 15,
            "dummy": [0, 1, 1] * 10,
            "amount": np.linspace(0, 1, 30),
            "when": ["2021-05-01"] * 29 + [None],
            "colour": ["red", "blue", "blue"] * 10,
        }
    )
    profile = column_profile(frame).set_index("column")
    assert profile["kind"].to_dict() == {
        "household_id": "text", "seq": "numeric", "flag": "boolean", "dummy": "boolean", "amount": "numeric",
        "when": "date", "colour": "text",
    }
    assert profile["identifier"].to_dict() == {
        "household_id": True, "seq": True, "flag": False, "dummy": False, "amount": False, "when": False,
        "colour": False,
    }
    assert profile.loc["when", "missing"] == 1 and profile.loc["colour", "examples"] == ["blue", "red"]
    assert profile.loc["seq", "examples"] == [str(v) for v in range(100, 108)]


def test_suggest_spec_never_proposes_the_target_and_flags_levels_from_data():
    frame = _frame().assign(id=np.arange(40))
    spec = suggest_spec(frame, target="income")
    assert "income" not in spec.features and "id" not in spec.features
    assert spec.features == ("size", "region", "outcome", "y")
    assert spec.categorical["region"] == Categorical(("east", "north", "south"), levels_from_data=True)
    assert spec.drop_missing and spec.normalization == Normalization("scaled")
    assert any(n.startswith("Not private by itself: the levels of 'region'") for n in preparation_notes(spec))
    assert prepare(frame, spec).d == 1 + 3 + 2 + 1


def test_with_target_moves_a_feature_and_its_rules_instead_of_raising():
    spec = DataSpec(
        ("income", "outcome", "size"),
        categorical={"outcome": Categorical(("good", "bad"))},
        missing={"size": MissingRule("fill", 1, indicator=True)},
        normalization=Normalization("bounds", lower=(0, 1), upper=(200, 7)),
    )
    moved = with_target(spec, "outcome")
    assert (moved.features, moved.target, moved.categorical) == (("income", "size"), "outcome", None)
    assert moved.normalization.lower == (0, 1)  # outcome was categorical: no numeric bound to remove
    moved = with_target(moved, "size")
    assert (moved.features, moved.target, moved.missing, moved.normalization.upper) == (
        ("income",), "size", None, (200.0,))
    assert with_target(moved, None).target is None


def test_feature_names_gives_the_width_a_mechanism_sees():
    spec = DataSpec(("income", "region"), categorical={"region": Categorical(("north",))},
                    missing={"income": MissingRule("fill", 0, indicator=True)})
    assert feature_names(_frame(), spec) == ("income", "income (missing)", "region=north", "region=(other)")
    assert spec.expands_to(feature_names(_frame(), spec))
    assert not spec.expands_to(("income", "region=north", "region=(other)"))
    with pytest.raises(TableProblem):
        feature_names(_frame(), DataSpec(("region",)))


# ------------------------------------------------------------------------------------------- property


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    method=st.sampled_from(["clip", "maxnorm", "bounds"]),
    standardize=st.booleans(),
    missing_level=st.booleans(),
)
def test_any_table_with_text_and_gaps_prepares_into_the_unit_ball(data, method, standardize, missing_level):
    n = data.draw(st.integers(20, 60))
    numbers = data.draw(st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6, allow_subnormal=False)), min_size=n, max_size=n))
    words = data.draw(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "c"])), min_size=n, max_size=n))
    frame = pd.DataFrame({"v": [np.nan if v is None else v for v in numbers], "w": words, "k": np.arange(n) % 5})
    spec = DataSpec(
        ("v", "w", "k"),
        missing={"v": MissingRule("fill", 0.0, indicator=True)},
        categorical={"w": Categorical(("a", "b"), missing_level=missing_level)},
        drop_missing=True,
        normalization=(Normalization("bounds", standardize=standardize, lower=(-10, 0), upper=(10, 4))
                       if method == "bounds" else Normalization(method, standardize=standardize)),
    )
    problems = table_problems(frame, spec)
    kept = n if missing_level else sum(w is not None for w in words)
    if kept < 20:
        assert problems and str(problems[-1]).startswith("after dropping")
        return
    if problems:  # only possible problem: 'v' holds one value on every kept row
        assert [str(p) for p in problems] == [str(problems[0])] and "has the same value" in str(problems[0])
        return
    p = prepare(frame, spec)
    assert p.n == kept and p.d == 3 + 2 + (2 if missing_level else 1)
    assert np.all(np.linalg.norm(p.x, axis=1) <= 1.0)
    one_hot = p.x[:, [i for i, k in enumerate(p.feature_kinds) if k == "one-hot"]]
    assert np.all((one_hot > 0).sum(axis=1) <= 1)


def test_profile_and_encoding_handle_object_booleans_nullable_integers_and_text_dtype():
    frame = pd.DataFrame(
        {
            "flag": pd.Series([True, False, None] * 10, dtype=object),
            "count": pd.Series([1, 2, None] * 10, dtype="Int64"),
            "word": pd.Series(["x", " y ", None] * 10, dtype="str"),
            "v": np.arange(30.0),
        }
    )
    profile = column_profile(frame).set_index("column")
    assert profile["kind"].to_dict() == {"flag": "boolean", "count": "numeric", "word": "text", "v": "numeric"}
    assert profile["missing"].to_dict() == {"flag": 10, "count": 10, "word": 10, "v": 0}
    assert profile.loc["word", "examples"] == ["x", "y"]
    spec = DataSpec(("v", "flag", "count", "word"), categorical={
        "flag": Categorical(("True", "False")), "count": Categorical(("1",)), "word": Categorical(missing_level=True)},
        missing={"flag": MissingRule("fill", "False"), "count": MissingRule("fill", 2)})
    p = prepare(frame, spec)
    assert p.feature_names == ("v", "flag=True", "flag=False", "flag=(other)", "count=1", "count=(other)",
                               "word=x", "word=y", "word=(missing)")
    assert (p.x[:, 1:] > 0).sum(axis=0).tolist() == [10, 20, 0, 10, 20, 10, 10, 10]


def test_spec_is_data_independent_only_without_statistics_or_levels_from_data():
    bounds = Normalization("bounds", lower=(0,), upper=(1,))
    assert DataSpec(("a", "c"), categorical={"c": Categorical(("x",))}, normalization=bounds).data_independent
    assert not DataSpec(("a", "c"), categorical={"c": Categorical()}, normalization=bounds).data_independent
    assert not DataSpec(("a",)).data_independent  # clip with standardisation uses means and sds
    assert DataSpec(("a",), drop_missing=True, normalization=bounds).data_independent
