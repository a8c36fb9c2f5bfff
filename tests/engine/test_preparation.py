"""Data loading, validation and normalisation into the unit L2 ball (engine.data.preparation)."""

from __future__ import annotations

import io
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from engine.data.preparation import (
    MIN_ROWS,
    Categorical,
    DataSpec,
    MissingRule,
    Normalization,
    TableProblem,
    bounds_from_frame,
    fingerprint,
    load_table,
    prepare,
    privacy_note,
    table_problems,
    validate_table,
)
from engine.errors import DataValidationError, InsufficientDataError, InvalidParameterError


def _frame(n: int = 50, seed: int = 0) -> pd.DataFrame:
    """Heavy-tailed positive features (like phone data), a target and a loan column."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "calls": np.round(np.exp(rng.normal(4, 1, n))),
            "sms": np.round(np.exp(rng.normal(2, 1.2, n))),
            "data_mb": np.exp(rng.normal(5, 1.5, n)),
            "y": rng.random(n),
            "loan": rng.integers(1000, 5000, n).astype(float),
        }
    )


FEATURES = ("calls", "sms", "data_mb")


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


# ---------------------------------------------------------------------------------------------- loading


def test_load_table_reads_csv_from_bytes_path_and_file_object(tmp_path):
    frame = _frame()
    data = _csv(frame)
    path = tmp_path / "phones.csv"
    path.write_bytes(data)
    handle = io.BytesIO(data)
    handle.name = "upload.csv"
    for loaded in (load_table(data, filename="x.csv"), load_table(path), load_table(str(path)), load_table(handle)):
        pd.testing.assert_frame_equal(loaded, frame, check_exact=False, rtol=1e-15)


def test_load_table_reads_parquet_by_magic_bytes_and_extension():
    frame = _frame()
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    for name in ("x.parquet", "no_extension", None):
        pd.testing.assert_frame_equal(load_table(buf.getvalue(), filename=name), frame)


def test_load_table_accepts_semicolons_and_a_byte_order_mark():
    loaded = load_table("\ufeffa;b\n1;2\n3;4\n".encode(), filename="x.csv")
    assert list(loaded.columns) == ["a", "b"] and loaded["b"].tolist() == [2, 4]


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        (
            b"a,b,c,d\n" + b"1,2,3,4\n" * 5 + b"1,2,3,4,5\n",
            "x.csv",
            "could not read 'x.csv' as CSV: line 7 has 5 fields, expected 4 (as in the header)",
        ),
        (b"a,b,c\n1,2,3\n1,2\n", "x.csv", "line 3 has 2 fields, expected 3"),
        (bytes(range(256)) * 4, "x.csv", "it contains binary data"),
        (b"", "x.csv", "'x.csv' is empty"),
        (b"  \n\n", "x.csv", "'x.csv' is empty"),
        (b"a,b\n", "x.csv", "has a header but no data rows"),
        (b"a,b\n1,\xe9t\xe9\n", "x.csv", "line 2 contains the byte 0xe9, which is not UTF-8 text"),
        ("a,b\n1,2\n".encode("utf-16"), "x.csv", "binary data"),
        (b"a,a\n1,2\n", "x.csv", "the header names two columns 'a' (columns 1 and 2)"),
        (b"a,b\n1,2\n", "x.parquet", "could not read 'x.parquet' as Parquet: it does not start with"),
        (b"PAR1 truncated PAR1", "x.parquet", "could not read 'x.parquet' as Parquet"),
        (b"PK\x03\x04rest", "book.xlsx", "Excel workbook"),
        (b"\x1f\x8b\x08rest", "x.csv.gz", "compressed (gzip)"),
        (b"a,b\n1,2\n", "x.json", "unsupported file type '.json'"),
    ],
)
def test_malformed_files_raise_data_validation_error_with_a_fix(data, name, expected):
    with pytest.raises(DataValidationError) as info:
        load_table(data, filename=name)
    message = str(info.value)
    assert expected in message
    assert " — " in message  # every message says what to do
    assert "\n" not in message
    assert info.value.control == "file"


def test_load_table_size_limit_and_missing_file(tmp_path):
    data = b"a,b\n" + b"1,2\n" * 1000
    with pytest.raises(DataValidationError, match=r"'x.csv' is 4 KB, above the limit of 100 bytes"):
        load_table(data, filename="x.csv", max_bytes=100)
    with pytest.raises(DataValidationError, match="is larger than the limit"):
        load_table(io.BytesIO(data), filename="x.csv", max_bytes=100)
    path = tmp_path / "big.csv"
    path.write_bytes(data)
    with pytest.raises(DataValidationError, match="above the limit"):
        load_table(path, max_bytes=100)
    assert load_table(path, max_bytes=len(data)).shape == (1000, 2)
    with pytest.raises(DataValidationError, match="there is no file at"):
        load_table(tmp_path / "absent.csv")
    with pytest.raises(DataValidationError, match="binary mode"):
        load_table(io.StringIO("a,b\n1,2\n"))


# ---------------------------------------------------------------------------------------------- validation


def test_valid_table_has_no_problems():
    assert table_problems(_frame(), DataSpec(FEATURES, "y", {"loan_amount": "loan"})) == []


def test_nan_cell_names_column_and_one_based_data_row():
    frame = _frame()
    frame.loc[6, "sms"] = np.nan
    frame.loc[9, "sms"] = np.nan
    with pytest.raises(DataValidationError) as info:
        validate_table(frame, DataSpec(FEATURES))
    err = info.value
    assert (err.column, err.row, err.control) == ("sms", 6, "features")
    assert str(err) == (
        "feature column 'sms' has a missing value in data row 7 (counting data rows from 1) and in 1 more row — "
        "drop those rows or fill them with a public constant (optionally with a missing-indicator feature)"
    )


def test_text_in_numeric_column_from_a_csv_names_the_cell():
    csv_text = "calls,sms\n" + "".join(f"{i},{i % 7}\n" for i in range(30))
    csv_text = csv_text.replace("\n12,5\n", "\n12,five\n")
    frame = load_table(csv_text.encode(), filename="x.csv")
    with pytest.raises(DataValidationError) as info:
        validate_table(frame, DataSpec(("calls", "sms")))
    assert (info.value.column, info.value.row) == ("sms", 12)
    assert "must be numeric, but data row 13 (counting data rows from 1) holds the text 'five'" in str(info.value)


def test_infinite_constant_and_huge_values():
    frame = _frame()
    frame.loc[3, "calls"] = np.inf
    frame["sms"] = 4.0
    frame.loc[0, "data_mb"] = 1e200
    problems = table_problems(frame, DataSpec(FEATURES))
    assert [(p.column, p.row) for p in problems] == [("calls", 3), ("sms", None), ("data_mb", 0)]
    assert "infinite value in data row 4 (counting data rows from 1)" in str(problems[0])
    assert "same value (4) in every row" in str(problems[1]) and "remove it from the features" in str(problems[1])
    assert "too large" in str(problems[2])


def test_too_few_rows_is_insufficient_data():
    frame = _frame(n=MIN_ROWS - 1)
    with pytest.raises(InsufficientDataError, match=r"19 data rows; at least 20 are needed"):
        validate_table(frame, DataSpec(FEATURES))
    assert table_problems(_frame(n=MIN_ROWS), DataSpec(FEATURES)) == []


def test_missing_columns_suggest_close_names_and_name_the_control():
    problems = table_problems(_frame(), DataSpec(("Calls", "smss", "zzz"), "Y", {"loan_amount": "loan_amt"}))
    text = [str(p) for p in problems]
    assert text[0] == "the table has no column 'Calls' (chosen as feature) — did you mean 'calls'?"
    assert "did you mean 'sms'?" in text[1]
    assert "the table has 'calls', 'sms', 'data_mb', 'y', 'loan'" in text[2]
    assert [p.control for p in problems] == ["features", "features", "features", "target", "role:loan_amount"]
    assert "did you mean 'loan'?" in text[4]


def test_structural_problems_collected_together():
    frame = _frame()
    frame.columns = ["calls", "sms", "calls", "y", "loan"]
    problems = table_problems(frame, DataSpec(("sms", "y"), "y"))
    assert [p.control for p in problems] == ["table", "target"]
    assert "2 columns named 'calls' (columns 1, 3)" in str(problems[0])
    assert "also chosen as a feature" in str(problems[1])
    empty = table_problems(_frame(), DataSpec(()))
    assert [str(p) for p in empty] == ["choose at least one feature column"]


def test_bounds_count_must_match_features():
    spec = DataSpec(FEATURES, normalization=Normalization("bounds", lower=(0, 0), upper=(1, 1)))
    (problem,) = table_problems(_frame(), spec)
    assert problem.control == "normalization" and "bounds are given for 2 feature(s) but 3" in str(problem)


def test_validate_table_raises_first_problem_as_table_problem():
    frame = _frame()
    frame.loc[0, "calls"] = np.nan
    with pytest.raises(TableProblem) as info:
        validate_table(frame, DataSpec(("zzz", "calls")))
    assert info.value.column == "zzz"
    assert isinstance(info.value, DataValidationError)


def test_booleans_and_numeric_strings_are_numbers():
    frame = pd.DataFrame({"flag": [True, False] * 15, "text": [str(i) for i in range(30)]})
    prepared = prepare(frame, DataSpec(("flag", "text")))
    assert prepared.d == 2


# ---------------------------------------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "sphere"}, "normalization method must be one of"),
        ({"method": "clip", "lower": (0.0,), "upper": (1.0,)}, "only used with the normalization method 'bounds'"),
        ({"method": "bounds"}, "one lower and one upper value per feature"),
        ({"method": "bounds", "lower": (0.0, 1.0), "upper": (1.0,)}, "got 2 lower and 1 upper"),
        ({"method": "bounds", "lower": (1.0,), "upper": (1.0,)}, "lower bound must be below upper bound"),
        ({"method": "bounds", "lower": (math.nan,), "upper": (1.0,)}, "lower bounds[0] must be a finite number"),
        ({"standardize": "yes"}, "standardize must be True or False"),
    ],
)
def test_invalid_normalization(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        Normalization(**kwargs)


def test_spec_validation_and_json_round_trip():
    with pytest.raises(InvalidParameterError, match="features lists the column 'a' twice"):
        DataSpec(("a", "b", "a"))
    with pytest.raises(InvalidParameterError, match="feature column name must be non-empty text"):
        DataSpec(("a", ""))
    with pytest.raises(InvalidParameterError, match="features must be a list of column names"):
        DataSpec("abc")
    spec = DataSpec(
        ["a", "b"], "y", {"loan_amount": "l"}, Normalization("bounds", False, [0, -1], [10, 1])
    )
    assert spec.features == ("a", "b") and spec.normalization.lower == (0.0, -1.0)
    assert DataSpec.from_json(spec.to_json()) == spec
    assert spec.columns == ("a", "b", "y", "l")
    assert spec.key() == DataSpec.from_dict(spec.to_dict()).key()
    with pytest.raises(InvalidParameterError, match="method"):
        DataSpec.from_dict({"features": ["a"], "normalization": {"method": "nope"}})


# ---------------------------------------------------------------------------------------------- normalisation


def _bounds_norm(standardize: bool = True) -> Normalization:
    return Normalization("bounds", standardize, lower=(0.0, 0.0, 0.0), upper=(500.0, 100.0, 2000.0))


ALL_NORMALIZATIONS = [
    Normalization(),
    Normalization(standardize=False),
    Normalization("scaled"),
    Normalization("scaled", standardize=False),
    Normalization("maxnorm"),
    Normalization("maxnorm", standardize=False),
    _bounds_norm(),
    _bounds_norm(False),
]


@pytest.mark.parametrize("norm", ALL_NORMALIZATIONS, ids=lambda n: f"{n.method}-{n.standardize}")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_prepared_row_is_in_the_unit_ball(norm, seed):
    prepared = prepare(_frame(n=400, seed=seed), DataSpec(FEATURES, normalization=norm))
    norms = np.linalg.norm(prepared.x, axis=1)
    assert norms.max() <= 1.0
    assert prepared.x.dtype == np.float64 and prepared.x.shape == (400, 3)
    assert not prepared.x.flags.writeable
    np.testing.assert_array_equal(prepared.row_norms(), norms)


@pytest.mark.parametrize("standardize", [True, False])
def test_maxnorm_divides_every_row_by_the_largest_norm(standardize):
    frame = _frame(n=300)
    prepared = prepare(frame, DataSpec(FEATURES, normalization=Normalization("maxnorm", standardize)))
    raw = frame[list(FEATURES)].to_numpy()
    z = (raw - raw.mean(0)) / raw.std(0) if standardize else raw
    biggest = np.linalg.norm(z, axis=1).max()
    assert abs(prepared.row_norms().max() - 1.0) <= 1e-15
    np.testing.assert_allclose(prepared.x, z / biggest, rtol=1e-12, atol=1e-15)
    assert prepared.row_factor == pytest.approx(1 / biggest, rel=1e-12)


def test_scaled_divides_by_twice_root_m_then_clips_only_unusually_long_rows():
    """Issue 34: 'clip' clips every row of a mixed numeric/one-hot table; 'scaled' divides the standardised rows by
    2√m (m = features, a one-hot group and an indicator counted once each) and clips only the rows still longer."""
    frame = _frame(n=300).assign(region=["north", "south", "east"] * 100)
    frame.loc[::7, "calls"] = np.nan
    spec = DataSpec((*FEATURES, "region"), categorical={"region": Categorical(("east", "north", "south"))},
                    missing={"calls": MissingRule("fill", 0, indicator=True)}, normalization=Normalization("scaled"))
    prepared = prepare(frame, spec)
    raw = prepared.feature_kinds
    assert raw == ("numeric", "indicator", "numeric", "numeric", "one-hot", "one-hot", "one-hot", "one-hot")
    m = len(FEATURES) + 1 + 1  # three numeric features, the region group, the indicator
    values = frame[list(FEATURES)].to_numpy().copy()
    values[np.isnan(values)] = 0.0
    z_numeric = (values - values.mean(0)) / values.std(0)
    one_hot = np.column_stack([(frame["region"] == level).to_numpy(float) for level in ("east", "north", "south")])
    z = np.column_stack([z_numeric[:, 0], np.isnan(frame["calls"].to_numpy()), z_numeric[:, 1:], one_hot,
                         np.zeros(300)])
    u = z / (2 * math.sqrt(m))
    expected = u / np.maximum(1.0, np.linalg.norm(u, axis=1))[:, None]
    np.testing.assert_allclose(prepared.x, expected, rtol=1e-12, atol=1e-15)
    assert prepared.row_factor == pytest.approx(1 / (2 * math.sqrt(m)), rel=1e-15)
    assert prepared.clipped_rows == int((np.linalg.norm(u, axis=1) > 1).sum()) < 0.05 * 300
    clip = prepare(frame, DataSpec(**{**spec.__dict__, "normalization": Normalization("clip")}))
    assert clip.clipped_rows == 300 and clip.warnings and "consider 'scaled'" in clip.warnings[0]
    assert prepared.warnings == ()
    assert "2√m" in Normalization("scaled").describe() and "m = 5 features" in prepared.describe_b(0.5)
    assert prepared.b_in_standardized_units(0.5) == pytest.approx(0.5 * 2 * math.sqrt(m))


def test_clip_standardises_then_clips_only_long_rows():
    frame = _frame(n=300)
    prepared = prepare(frame, DataSpec(FEATURES))
    raw = frame[list(FEATURES)].to_numpy()
    z = (raw - raw.mean(0)) / raw.std(0)
    np.testing.assert_allclose(prepared.centre, raw.mean(0), rtol=1e-13)
    np.testing.assert_allclose(prepared.scale, raw.std(0), rtol=1e-13)
    norms = np.linalg.norm(z, axis=1)
    inside = norms <= 1
    assert 0 < inside.sum() < len(norms)
    np.testing.assert_allclose(prepared.x[inside], z[inside], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(prepared.x[~inside], z[~inside] / norms[~inside, None], rtol=1e-12, atol=1e-15)
    assert prepared.clipped_rows == int((~inside).sum())
    np.testing.assert_allclose(prepared.row_norms("input"), norms, rtol=1e-12)


@pytest.mark.parametrize("standardize", [True, False])
def test_bounds_map_is_the_documented_formula(standardize):
    frame = _frame(n=300)
    lower, upper = np.array([0.0, 0.0, 0.0]), np.array([500.0, 100.0, 2000.0])
    prepared = prepare(frame, DataSpec(FEATURES, normalization=_bounds_norm(standardize)))
    v = np.clip(frame[list(FEATURES)].to_numpy(), lower, upper)
    if standardize:
        expected = (v - (lower + upper) / 2) / ((upper - lower) / 2) / math.sqrt(3)
    else:
        expected = v / np.maximum(abs(lower), abs(upper)) / math.sqrt(3)
    np.testing.assert_allclose(prepared.x, expected, rtol=1e-14, atol=1e-16)
    raw = frame[list(FEATURES)].to_numpy()
    assert prepared.clipped_values == int(((raw < lower) | (raw > upper)).sum()) > 0


@pytest.mark.parametrize(
    ("norm", "independent"),
    [(_bounds_norm(), True), (_bounds_norm(False), True), (Normalization(standardize=False), True),
     (Normalization(), False), (Normalization("maxnorm", False), False),
     (Normalization("scaled", False), True), (Normalization("scaled"), False)],
)
def test_changing_one_row_changes_no_other_row_only_for_data_independent_maps(norm, independent):
    frame = _frame(n=200)
    changed = frame.copy()
    changed.loc[17, "calls"] = frame["calls"].max() * 10  # one record changes a lot
    a = prepare(frame, DataSpec(FEATURES, normalization=norm)).x
    b = prepare(changed, DataSpec(FEATURES, normalization=norm)).x
    others = np.arange(200) != 17
    assert norm.data_independent is independent
    assert np.array_equal(a[others], b[others]) is independent
    assert not np.array_equal(a[17], b[17])


def test_target_and_roles_become_y_and_extras():
    frame = _frame()
    prepared = prepare(frame, DataSpec(FEATURES, "y", {"loan_amount": "loan"}))
    np.testing.assert_array_equal(prepared.y, frame["y"].to_numpy())
    np.testing.assert_array_equal(prepared.extras["loan_amount"], frame["loan"].to_numpy())
    assert prepared.feature_names == FEATURES and (prepared.n, prepared.d) == (50, 3)
    assert prepare(frame, DataSpec(FEATURES)).y is None


# ---------------------------------------------------------------------------------------------- B in data units


@pytest.mark.parametrize("norm", [Normalization("maxnorm"), Normalization("maxnorm", False)], ids=["std", "raw"])
def test_b_in_feature_units_moves_a_record_by_exactly_b_maxnorm(norm):
    """Changing one feature by the reported amount moves the row by B under the (fixed) prepared map."""
    frame = _frame(n=300)
    prepared = prepare(frame, DataSpec(FEATURES, normalization=norm))
    units = prepared.b_in_feature_units(0.25)
    for j, name in enumerate(FEATURES):
        moved = frame[list(FEATURES)].to_numpy()[5].copy()
        moved[j] += units[name]
        x_moved = (moved - prepared.centre) / prepared.scale * prepared.row_factor
        assert np.linalg.norm(x_moved - prepared.x[5]) == pytest.approx(0.25, rel=1e-12)


@pytest.mark.parametrize("standardize", [True, False])
def test_b_in_feature_units_moves_a_record_by_exactly_b_bounds(standardize):
    frame = pd.DataFrame({"calls": np.linspace(10, 200, 40), "sms": np.linspace(5, 40, 40) ** 1.1,
                          "data_mb": np.linspace(0, 900, 40)})
    spec = DataSpec(FEATURES, normalization=_bounds_norm(standardize))
    prepared = prepare(frame, spec)
    units = prepared.b_in_feature_units(0.25)
    expected_scale = [250.0, 50.0, 1000.0] if standardize else [500.0, 100.0, 2000.0]
    np.testing.assert_allclose(list(units.values()), 0.25 * math.sqrt(3) * np.array(expected_scale), rtol=1e-14)
    for name in FEATURES:
        moved = frame.copy()
        moved.loc[3, name] += units[name]  # stays inside the bounds
        x_moved = prepare(moved, spec).x  # data-independent map: re-preparing is the same map
        assert np.linalg.norm(x_moved[3] - prepared.x[3]) == pytest.approx(0.25, rel=1e-12)


def test_b_in_feature_units_for_clip_is_sufficient():
    frame = _frame(n=300)
    prepared = prepare(frame, DataSpec(FEATURES))
    units = prepared.b_in_feature_units(0.5)
    np.testing.assert_allclose(list(units.values()), 0.5 * prepared.scale, rtol=1e-15)
    rng = np.random.default_rng(1)
    for row in rng.choice(300, 20, replace=False):
        moved = frame.copy()
        moved.loc[row, "sms"] += units["sms"]
        x2 = prepare(moved, DataSpec(FEATURES)).x
        # standardisation statistics move slightly; the clipped map never stretches a distance
        assert np.linalg.norm(x2[row] - prepared.x[row]) <= 0.5 * 1.05


def test_describe_b_and_privacy_notes():
    prepared = prepare(_frame(), DataSpec(FEATURES, normalization=Normalization("maxnorm")))
    text = prepared.describe_b(0.25)
    m = 1 / prepared.row_factor
    assert f"M = {m:.3g}" in text and f"{0.25 * m:.3g} in L2 norm" in text and "calls" in text
    assert "switch lemma" in text
    with pytest.raises(InvalidParameterError, match=r"B must be in \(0, 2\]"):
        prepared.describe_b(3)
    assert privacy_note(Normalization()).startswith("Not private by itself: the column means and standard")
    assert "largest row norm" in privacy_note(Normalization("maxnorm", False))
    assert privacy_note(_bounds_norm()).startswith("Data-independent")
    assert prepared.privacy_note() == privacy_note(Normalization("maxnorm"))


# ---------------------------------------------------------------------------------------------- fingerprint


def test_fingerprint_is_deterministic_and_content_sensitive():
    frame = _frame()
    spec = DataSpec(FEATURES, "y")
    a, b = prepare(frame, spec), prepare(frame.copy(), spec)
    assert a.fingerprint == b.fingerprint and len(a.fingerprint) == 64
    np.testing.assert_array_equal(a.x, b.x)
    changed = frame.copy()
    changed.loc[3, "sms"] += 1
    assert prepare(changed, spec).fingerprint != a.fingerprint
    assert prepare(frame, DataSpec(FEATURES)).fingerprint != a.fingerprint  # spec is part of it
    unused = frame.assign(loan=0.0)
    assert prepare(unused, spec).fingerprint == a.fingerprint  # columns the spec does not use do not count
    reindexed = frame.set_index(frame.index + 100)
    assert fingerprint(reindexed, spec) == a.fingerprint
    assert fingerprint(frame) != fingerprint(frame.iloc[::-1].reset_index(drop=True))


def test_fingerprint_summary_never_holds_values():
    frame = _frame()
    summary = prepare(frame, DataSpec(FEATURES, "y")).fingerprint_summary()
    assert summary["n"] == 50 and summary["d"] == 3 and summary["features"] == list(FEATURES)
    assert set(summary) == {"n", "d", "features", "target", "roles", "normalization", "sha256"}
    assert re.fullmatch(r"[0-9a-f]{64}", summary["sha256"])
    # Structure, not substrings (a hex digest may contain any digit run): other values of the data give the same
    # summary except the keyed hash, so no leaf of it can hold a data value.
    other = frame.copy()
    other[list(FEATURES)] = other[list(FEATURES)] * 3.0 + 7.0
    other["y"] = other["y"][::-1].to_numpy()
    changed = prepare(other, DataSpec(FEATURES, "y")).fingerprint_summary()
    assert changed["sha256"] != summary["sha256"]
    assert {k: v for k, v in changed.items() if k != "sha256"} == {k: v for k, v in summary.items() if k != "sha256"}


def test_bounds_from_frame_orders_by_features():
    table = pd.DataFrame({"Feature": ["sms", "calls"], "lower": [0, 1], "upper": [5, 9]})
    assert bounds_from_frame(table, ["calls", "sms"]) == ((1.0, 0.0), (9.0, 5.0))
    with pytest.raises(DataValidationError, match=r"no row for feature\(s\) \['data_mb'\]"):
        bounds_from_frame(table, FEATURES)
    with pytest.raises(DataValidationError, match="needs the columns"):
        bounds_from_frame(pd.DataFrame({"feature": ["a"]}), ["a"])


@settings(max_examples=60, deadline=None)
@given(
    data=hnp.arrays(
        np.float64,
        st.tuples(st.integers(MIN_ROWS, 60), st.integers(1, 6)),
        elements=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    ),
    method=st.sampled_from(["clip", "maxnorm"]),
    standardize=st.booleans(),
)
def test_unit_ball_invariant_holds_for_any_finite_table(data, method, standardize):
    frame = pd.DataFrame(data, columns=[f"c{j}" for j in range(data.shape[1])])
    spec = DataSpec(tuple(frame.columns), normalization=Normalization(method, standardize))
    problems = table_problems(frame, spec)
    constant = [c for c in frame.columns if frame[c].nunique() == 1]
    assert [p.column for p in problems] == constant  # the only possible problem here is a constant column
    if problems:
        return
    prepared = prepare(frame, spec)
    norms = np.linalg.norm(prepared.x, axis=1)
    assert np.all(np.isfinite(prepared.x)) and norms.max() <= 1.0
    if method == "maxnorm":
        assert norms.max() >= 1.0 - 1e-12


@pytest.mark.parametrize("method", ["clip", "maxnorm", "bounds"])
def test_prepare_and_a_release_hold_few_copies_of_the_matrix(method):
    """Issue 33 §3: the in-memory release's memory. ``prepare`` builds the matrix and scales it in place, row-wise
    steps work in row blocks, and the numpy sampler adds its noise block by block: measured by tracemalloc (numpy's
    allocations), not by a clock. Before: prepare peaked at 4 matrices beyond its input, the release at 2."""
    import tracemalloc

    from engine.mechanisms.gaussian import GaussianMechanism
    from engine.mechanisms.samplers import NumpySampler

    n, d = 800_000, 6  # 38 MB: the noise's block (2^20 values, 8 MB) is a fifth of it
    mech = GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)  # σ's calibration imports scipy: before the count
    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(n, d)), columns=[f"c{j}" for j in range(d)])
    norm = Normalization(method, lower=[-3.0] * d, upper=[3.0] * d) if method == "bounds" else Normalization(method)
    spec = DataSpec(tuple(frame.columns), normalization=norm)
    matrix = n * d * 8
    tracemalloc.start()
    try:
        prepared = prepare(frame, spec)
        _, peak = tracemalloc.get_traced_memory()
        assert peak <= 2.1 * matrix, peak / matrix  # the decoded columns and the matrix
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        value, _ = NumpySampler(np.random.default_rng(1)).add_gaussian(prepared.x, mech.sigma, sensitivity=0.5,
                                                                        epsilon=1.0)
        _, peak = tracemalloc.get_traced_memory()
        assert peak - before <= 1.3 * matrix, (peak - before) / matrix  # the output and one block of noise
    finally:
        tracemalloc.stop()
    assert value.shape == (n, d) and float(prepared.row_norms().max()) <= 1.0


@pytest.mark.parametrize("d", [1, 2, 15, 40])
@pytest.mark.parametrize("n", [1, 3, 65_536, 65_537, 140_000])
def test_column_statistics_in_row_blocks_are_numpys_value_for_value(n, d):
    """The standardisation's mean and sd, computed in row blocks (issue 33 §3), are bit for bit numpy's
    whole-matrix ``mean(axis=0)`` and ``std(axis=0)``: every prepared value, and so every seeded release and sweep
    table, is unchanged."""
    from engine.data.preparation import _column_mean_sd

    rng = np.random.default_rng(n * 100 + d)
    raw = rng.standard_normal((n, d)) * rng.uniform(0.1, 1e3, d) + rng.uniform(-1e4, 1e4, d)
    unit = np.maximum(raw.max(axis=0), -raw.min(axis=0))
    mean, sd = _column_mean_sd(raw, unit)
    np.testing.assert_array_equal(mean, (raw / unit).mean(axis=0))
    np.testing.assert_array_equal(sd, (raw / unit).std(axis=0))


@pytest.mark.parametrize("d", [1, 2, 7, 8, 15, 33])
@pytest.mark.parametrize("scale", [1e-300, 1e-3, 1.0, 3.0, 1e140])
def test_row_norms_and_ball_projection_equal_their_definitions_bit_for_bit(d, scale):
    """The column-wise row maximum and the masked multiply (issue 33 §2) give the values of the definitions:
    ‖x / max|x|‖·max|x| row by row, and x[over] *= nextafter(1/‖x‖, 0) until no row's norm exceeds 1."""
    from engine.data.preparation import _row_norms, _safe_row_norms, _shrink_into_ball

    rng = np.random.default_rng(d)
    x = rng.standard_normal((5000, d)) * scale
    x[::13] = 0.0
    x[::17, 0] = -0.0
    big = np.max(np.abs(x), axis=1, keepdims=True)
    big[~((big > 0) & np.isfinite(big))] = 1.0
    with np.errstate(all="ignore"):
        want = np.linalg.norm(x / big, axis=1) * big[:, 0]
    assert np.array_equal(_safe_row_norms(x), want)
    y = x / np.maximum(want, 1.0)[:, None]
    expected = y.copy()
    for _ in range(4):
        norms = _row_norms(expected)
        over = norms > 1.0
        if not over.any():
            break
        expected[over] *= np.nextafter(1.0 / norms[over], 0.0)[:, None]
    _shrink_into_ball(y)
    assert np.array_equal(y, expected)
    assert np.linalg.norm(y, axis=1).max() <= 1.0


# ------------------------------------------------------------------------------------------ issue 33 §3: Parquet
def _parquet_table(tmp_path, n: int = 5003):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(33)
    frame = pd.DataFrame({
        "a": rng.normal(size=n) * 1e-3,
        "b": rng.integers(-5, 90, n),
        "c": rng.normal(size=n).astype(np.float32),
        "y": rng.integers(0, 2, n).astype(float),
        "amount": rng.uniform(0, 100, n),
        "text": ["x"] * n,
    })
    frame.loc[::9, "a"] = -0.0  # the fingerprint's canonical form folds −0 into +0
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=700)
    return path


_PARQUET_NORMS = [
    Normalization("clip"), Normalization("clip", standardize=False), Normalization("scaled"),
    Normalization("maxnorm"), Normalization("maxnorm", standardize=False),
    Normalization("bounds", lower=(-0.002, 0.0, -1.0), upper=(0.002, 50.0, 1.0)),
    Normalization("bounds", standardize=False, lower=(-0.002, 0.0, -1.0), upper=(0.002, 50.0, 1.0)),
]


@pytest.mark.parametrize("norm", _PARQUET_NORMS, ids=lambda n: f"{n.method}-{n.standardize}")
@pytest.mark.parametrize("programme", [False, True])
def test_parquet_prepared_column_by_column_is_prepare_of_the_loaded_table(tmp_path, norm, programme):
    """Issue 33 §3: ``prepare_parquet`` gives what ``prepare(load_table(path))`` gives — the same matrix, fingerprint,
    map, counts, target and programme columns — on integer, float32 and float64 columns over several row groups."""
    from engine.data.preparation import prepare_parquet

    path = _parquet_table(tmp_path)
    extra = {"target": "y", "roles": {"loan_amount": "amount"}} if programme else {}
    spec = DataSpec(("a", "b", "c"), normalization=norm, **extra)
    fast, slow = prepare_parquet(path, spec), prepare(load_table(path), spec)
    assert fast is not None
    assert fast.fingerprint == slow.fingerprint
    for name in ("x", "input_norms", "centre", "scale"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert (fast.row_factor, fast.clipped_rows, fast.clipped_values, fast.rows_in_table, fast.feature_names) == (
        slow.row_factor, slow.clipped_rows, slow.clipped_values, slow.rows_in_table, slow.feature_names)
    assert (fast.y is None and slow.y is None) or np.array_equal(fast.y, slow.y)
    assert fast.extras.keys() == slow.extras.keys()
    assert all(np.array_equal(fast.extras[k], slow.extras[k]) for k in fast.extras)
    assert fast.warnings == slow.warnings and fast.dropped_rows == slow.dropped_rows == {}


@pytest.mark.parametrize("case", ["text feature", "absent column", "NaN", "null", "infinite", "huge", "constant",
                                  "negative amount", "too few rows", "categorical", "bounds per feature",
                                  "target among features"])
def test_parquet_that_needs_the_general_path_is_left_to_it(tmp_path, case):
    """Whatever ``prepare`` would refuse or encode is not prepared column by column: ``prepare_parquet`` returns
    None and the command line reads the table whole, so the message is the general path's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.data.preparation import Categorical, prepare_parquet

    n = 3 if case == "too few rows" else 300
    rng = np.random.default_rng(1)
    columns = {"a": rng.normal(size=n), "b": rng.normal(size=n), "amount": rng.uniform(1, 2, n)}
    spec = DataSpec(("a", "b"))
    arrays = {k: pa.array(v) for k, v in columns.items()}
    if case == "text feature":
        arrays["b"] = pa.array(["1.5"] * n)
    elif case == "absent column":
        spec = DataSpec(("a", "zz"))
    elif case in ("NaN", "infinite", "huge", "constant"):
        v = columns["b"].copy()
        if case == "constant":
            v[:] = 4.0
        else:
            v[n // 2] = {"NaN": np.nan, "infinite": np.inf, "huge": 2e150}[case]
        arrays["b"] = pa.array(v)
    elif case == "null":
        arrays["b"] = pa.array(columns["b"], mask=np.arange(n) == 7)
    elif case == "negative amount":
        v = columns["amount"].copy()
        v[5] = -1.0
        arrays["amount"] = pa.array(v)
        spec = DataSpec(("a", "b"), roles={"loan_amount": "amount"})
    elif case == "categorical":
        spec = DataSpec(("a", "b"), categorical={"b": Categorical()})
    elif case == "bounds per feature":
        spec = DataSpec(("a", "b"), normalization=Normalization("bounds", lower=(-3.0,), upper=(3.0,)))
    elif case == "target among features":
        spec = DataSpec(("a", "b"), target="b")
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pydict(arrays), path, row_group_size=64)
    assert prepare_parquet(path, spec) is None


def test_parquet_prepared_column_by_column_holds_the_matrix_and_little_else(tmp_path):
    """Issue 33 §3: the numpy memory of ``prepare_parquet`` is the prepared matrix, its row norms and blocks of
    temporaries (tracemalloc counts numpy's allocations; Arrow's, at most about a column, are not counted); ``prepare``
    of a loaded table holds the decoded columns and the matrix."""
    import tracemalloc

    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.data.preparation import prepare_parquet

    n, d = 600_000, 6
    values = np.random.default_rng(0).normal(size=(n, d))
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(values[:, j]) for j in range(d)], names=[f"c{j}" for j in range(d)]),
                   path, row_group_size=100_000)
    del values
    spec = DataSpec(tuple(f"c{j}" for j in range(d)))
    matrix = n * d * 8
    tracemalloc.start()
    try:
        prepared = prepare_parquet(path, spec)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert prepared is not None and float(prepared.row_norms().max()) <= 1.0
    assert peak <= 1.35 * matrix, peak / matrix  # the matrix, its n row norms (1/d of it) and a block's temporaries
