"""Three real public tables through profile → suggestion → preparation (issue 9: real data end to end).

Expected counts are computed with pandas from the table itself (an independent path) and pinned as numbers from
the package versions in requirements-test.txt.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.data.preparation import (
    Categorical,
    DataSpec,
    MissingRule,
    Normalization,
    prepare,
    table_problems,
)
from engine.data.profile import column_profile, suggest_spec, with_target
from tests import real_data


def _in_unit_ball(p) -> bool:
    return bool(np.all(np.linalg.norm(p.x, axis=1) <= 1.0))


# ------------------------------------------------------------------------------------------- carData::SLID


def test_slid_blocked_before_preparation_with_the_fixes_named():
    slid = real_data.slid()
    assert len(slid) == real_data.SLID_ROWS
    problems = table_problems(slid, DataSpec(("education", "age", "sex", "language"), target="wages"))
    messages = [str(p) for p in problems]
    assert messages[0].startswith("feature column 'education' has a missing value in data row")
    assert messages[0].endswith("and in 132 more rows — drop those rows or fill them with a public constant "
                                "(optionally with a missing-indicator feature)")  # 133 of 249 have a wage
    assert messages[1] == ("feature column 'sex' is a text column with 2 levels (Female, Male) — encode it as "
                           "categorical, or remove it from the features")
    assert messages[2] == ("feature column 'language' is a text column with 3 levels (English, French, Other) — "
                           "encode it as categorical, or remove it from the features")


def test_slid_drops_missing_wages_and_encodes_text_features():
    slid = real_data.slid()
    spec = DataSpec(
        ("education", "age", "sex", "language"),
        target="wages",
        missing={"education": MissingRule("fill", 12, indicator=True)},
        categorical={"sex": Categorical(("Female", "Male")), "language": Categorical(missing_level=True)},
    )
    p = prepare(slid, spec)
    expected_rows = int(slid["wages"].notna().sum())
    assert p.n == expected_rows == 7425 - 3278
    assert p.dropped_rows == {"wages": 3278}
    kept = slid[slid["wages"].notna()]
    assert p.filled_cells == {"education": int(kept["education"].isna().sum()),
                              "language": int(kept["language"].isna().sum())}
    assert p.feature_names == (
        "education", "education (missing)", "age", "sex=Female", "sex=Male", "sex=(other)",
        "language=English", "language=French", "language=Other", "language=(missing)",
    )
    np.testing.assert_array_equal(p.y, kept["wages"].to_numpy())
    # One-hot columns are 0/1 (scaled by the clip row map): each row has exactly one language column set.
    language = p.x[:, 6:10] > 0
    np.testing.assert_array_equal(language.sum(axis=1), 1)
    np.testing.assert_array_equal(language[:, 3], kept["language"].isna().to_numpy())
    assert _in_unit_ball(p)
    note = p.privacy_note()
    assert "the levels of 'language' (English, French, Other) were read from the data" in note
    assert "levels of 'sex'" not in note  # typed public levels are not flagged


def test_slid_suggestion_prepares_as_is():
    slid = real_data.slid()
    profile = column_profile(slid).set_index("column")
    assert profile.loc["rownames", "identifier"] and not profile.loc["age", "identifier"]
    assert profile.loc["wages", "missing"] == 3278 and profile.loc["language", "missing"] == 121
    assert profile.loc["sex", "kind"] == "text" and profile.loc["language", "examples"] == ["English", "Other", "French"]
    spec = suggest_spec(slid, target="wages")
    assert spec.features == ("education", "age", "sex", "language")
    p = prepare(slid, spec)
    complete = slid.dropna(subset=["wages", "education", "language"])
    assert p.n == len(complete) == 3987
    assert p.dropped_rows == {"education": 249, "language": 121, "wages": 3278}
    assert _in_unit_ball(p)


# ------------------------------------------------------------------------------------------- Ecdat::Hmda


def test_hmda_text_outcome_with_positive_class_counts_match_the_data():
    hmda = real_data.hmda()
    spec = suggest_spec(hmda, target="deny")
    assert spec.positive_class == ("yes",) and "rownames" not in spec.features and "deny" not in spec.features
    p = prepare(hmda, spec)
    complete = hmda.dropna()
    assert p.n == len(complete) == real_data.HMDA_ROWS - 1  # one row is missing both pbcr and self
    assert p.y.sum() == (complete["deny"] == "yes").sum() == 285
    assert p.dropped_rows == {"pbcr": 1, "self": 1}
    assert _in_unit_ball(p)


def test_hmda_fill_and_missing_level_keep_every_application_with_public_bounds():
    hmda = real_data.hmda()
    spec = DataSpec(
        ("dir", "lvr", "pbcr", "self", "black"),
        target="deny",
        positive_class=("yes",),
        missing={"pbcr": MissingRule("fill", "no", indicator=True)},
        categorical={c: Categorical(("no", "yes"), missing_level=(c == "self")) for c in ("pbcr", "self", "black")},
        normalization=Normalization("bounds", lower=(0, 0), upper=(1.5, 1.5)),
    )
    p = prepare(hmda, spec)
    assert p.n == real_data.HMDA_ROWS and p.dropped_rows == {}
    assert p.filled_cells == {"pbcr": 1, "self": 1}
    assert p.y.sum() == (hmda["deny"] == "yes").sum()
    assert p.feature_names == (
        "dir", "lvr", "pbcr=no", "pbcr=yes", "pbcr=(other)", "pbcr (missing)",
        "self=no", "self=yes", "self=(other)", "self=(missing)", "black=no", "black=yes", "black=(other)",
    )
    assert p.clipped_values == int((hmda["dir"] > 1.5).sum() + (hmda["lvr"] > 1.5).sum())
    assert _in_unit_ball(p)
    assert p.privacy_note().startswith("Data-independent") and "Not private" not in p.privacy_note()


# ------------------------------------------------------------------------------------------- palmerpenguins


def test_penguins_species_island_sex_through_prepare():
    penguins = real_data.penguins()
    spec = DataSpec(
        ("bill_length_mm", "flipper_length_mm", "island", "sex"),
        target="species",
        positive_class=("Adelie", "Chinstrap"),
        drop_missing=True,
        categorical={"island": Categorical(("Biscoe", "Dream", "Torgersen")), "sex": Categorical(missing_level=True)},
    )
    p = prepare(penguins, spec)
    kept = penguins.dropna(subset=["bill_length_mm", "flipper_length_mm"])
    assert p.n == len(kept) == 342
    assert p.y.sum() == kept["species"].isin(["Adelie", "Chinstrap"]).sum() == 151 + 68
    assert p.filled_cells == {"sex": int(kept["sex"].isna().sum())} == {"sex": 9}
    assert p.feature_names[2:] == (
        "island=Biscoe", "island=Dream", "island=Torgersen", "island=(other)", "sex=female", "sex=male",
        "sex=(missing)",
    )
    assert _in_unit_ball(p)


def test_penguins_with_target_moves_species_out_of_the_suggested_features():
    penguins = real_data.penguins()
    spec = suggest_spec(penguins)
    assert "species" in spec.features and spec.categorical["species"].levels_from_data
    spec = with_target(spec, "species")
    assert "species" not in spec.features and "species" not in (spec.categorical or {})
    problem = table_problems(penguins, spec)[0]
    assert str(problem) == (
        "target column 'species' is a text column with 3 levels (Adelie, Chinstrap, Gentoo) — choose the positive "
        "class(es) to code as 1 (every other label is coded 0), or choose another target"
    )
    p = prepare(penguins, DataSpec(**{**spec.__dict__, "positive_class": ("Gentoo",)}))
    assert p.y.sum() == (penguins.dropna(subset=["bill_length_mm", "sex"])["species"] == "Gentoo").sum()


@pytest.mark.parametrize("name", sorted(real_data.TABLES))
def test_real_tables_load_as_documented(name):
    frame = real_data.TABLES[name]()
    rows = {"slid": real_data.SLID_ROWS, "hmda": real_data.HMDA_ROWS, "penguins": real_data.PENGUIN_ROWS,
            "loans": real_data.LOANS_ROWS, "happiness": real_data.HAPPINESS_ROWS}[name]
    assert len(frame) == rows
    assert frame is not real_data.TABLES[name]()  # a fresh copy each call


# ------------------------------------------------------------------ openintro::loans_full_schema (issue 34 §1)


def test_loans_every_usable_column_with_gaps_dropped_is_what_refused_the_upload():
    """Issue 34's failure, reproduced: every numeric and few-level text column as a feature (the suggestion before
    issue 34) with rows with gaps dropped keeps 201 of 10,000 rows, on which two near-constant columns are
    constant. The suggestion must never produce such a spec (next test)."""
    loans = real_data.loans()
    assert loans.shape == (real_data.LOANS_ROWS, real_data.LOANS_COLUMNS)
    profile = column_profile(loans)
    usable = profile[(profile["distinct"] >= 2) & ~profile["identifier"] & (
        profile["kind"].isin(["numeric", "boolean"]) | ((profile["kind"] == "text") & (profile["distinct"] <= 20)))]
    features = tuple(usable["column"])
    text = [c for c in features if profile.set_index("column").loc[c, "kind"] == "text"]
    spec = DataSpec(features, drop_missing=True, categorical={c: Categorical() for c in text})
    assert len(features) == 50 and len(loans.dropna(subset=list(features))) == 201
    messages = [str(p) for p in table_problems(loans, spec)]
    assert messages == [
        "feature column 'current_accounts_delinq' has the same value (0) in every row, so it carries no "
        "information and cannot be standardised — remove it from the features",
        "feature column 'num_accounts_30d_past_due' has the same value (0) in every row, so it carries no "
        "information and cannot be standardised — remove it from the features",
    ]


def test_loans_suggestion_leaves_out_mostly_missing_and_near_constant_columns_and_prepares():
    from engine.data.profile import suggestion

    loans = real_data.loans()
    s = suggestion(loans)
    assert table_problems(loans, s.spec) == []
    gaps = [c for c in s.spec.features if loans[c].isna().any()]
    assert gaps == ["emp_length", "debt_to_income", "months_since_last_credit_inquiry"]
    assert s.kept == len(loans.dropna(subset=gaps)) == 8059 and s.rows == 10_000
    for column in ("annual_income_joint", "verification_income_joint", "debt_to_income_joint",
                   "months_since_last_delinq", "months_since_90d_late"):
        assert s.left_out[column].startswith("mostly missing ("), column
        assert f"{int(loans[column].isna().sum()):,} of 10,000 rows" in s.left_out[column]
    assert s.left_out["current_accounts_delinq"].startswith("near-constant: 9,999 of 10,000 rows hold '0'")
    assert s.left_out["paid_late_fees"].startswith("near-constant: 9,948 of 10,000 rows hold '0' (99.5%)")
    assert s.left_out["emp_title"].startswith("text with 4,411 levels")  # 4,741 before stripping the blanks
    assert s.left_out["issue_month"].startswith("a date column")
    assert "loan_purpose" in s.spec.features and len(s.spec.categorical["loan_purpose"].levels) == 12
    p = prepare(loans, s.spec)
    assert p.n == 8059 and s.spec.normalization.method == "scaled"
    # 'scaled' keeps the rows' lengths: few rows are clipped where 'clip' clips every row.
    clip = prepare(loans, DataSpec(**{**s.spec.__dict__, "normalization": Normalization("clip")}))
    assert clip.clipped_rows == clip.n and p.clipped_rows < 0.02 * p.n


def test_drop_impact_counts_match_pandas_on_the_loan_book():
    from engine.data.checks import drop_impact

    loans = real_data.loans()
    columns = ("emp_length", "debt_to_income", "months_since_last_credit_inquiry", "annual_income")
    impact = drop_impact(loans, DataSpec(columns, drop_missing=True))
    gaps = loans[list(columns)].isna()
    assert impact.rows == 10_000 and impact.kept == int((~gaps.any(axis=1)).sum())
    assert impact.missing == {c: int(gaps[c].sum()) for c in columns if gaps[c].any()}
    alone = gaps.sum(axis=1) == 1
    assert impact.only == {c: int((gaps[c] & alone).sum()) for c in columns if gaps[c].any()}
    # A column filled with a public constant no longer drops rows.
    filled = drop_impact(loans, DataSpec(columns, drop_missing=True,
                                          missing={"emp_length": MissingRule("fill", 0, indicator=True)}))
    assert filled.kept == impact.kept + impact.only["emp_length"] and "emp_length" not in filled.missing


# ------------------------------------------------------------------------ wooldridge::happiness (issue 34 §1)


def test_happiness_suggestion_keeps_at_least_half_the_rows():
    from engine.data.profile import KEEP_SHARE, suggestion

    happiness = real_data.happiness()
    s = suggestion(happiness)
    gaps = [c for c in s.spec.features if happiness[c].isna().any()]
    assert s.kept == len(happiness.dropna(subset=gaps)) >= KEEP_SHARE * len(happiness)
    assert s.kept == 9723
    for column in ("divorce", "widowed", "owngun", "unem10"):  # asked in some survey years only
        assert column not in s.spec.features and "dropping the rows with a gap would keep only" in s.left_out[column]
    assert table_problems(happiness, s.spec) == []
