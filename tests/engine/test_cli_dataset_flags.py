"""``sweep`` and ``recommend`` take the data, program and preparation flags from ONE definition
(``engine.cli._dataset``), on the real loan book of issue 34 (openintro::loans_full_schema, 10,000 × 55).

Each command records the features, roles and preparation it used; a role column that is also a feature stays one (as
in the app) with a note; ``privatize``, ``sweep`` and ``recommend`` share the rule for a missing ``--features``.
"""

from __future__ import annotations

import argparse
import json

import pandas as pd
import pytest

from engine.cli import build_parser, main
from engine.cli._dataset import add_dataset_arguments
from engine.data.preparation import prepare
from engine.data.profile import suggest_spec
from engine.sweeps import clear_cache
from tests import real_data

#: A small program on the loan book: three features (one text), lending on 'repaid' = every status but charged off
#: and late, approving the top 90 %.
LENDING = [
    "--features", "annual_income,debt_to_income,loan_purpose", "--categorical", "loan_purpose",
    "--missing", "drop", "--positive-class", "Current", "--positive-class", "Fully Paid",
    "--positive-class", "In Grace Period", "--program", "lending", "--approve-share", "0.9",
    "--role", "loan_amount=loan_amount",
]


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_cache()
    yield
    clear_cache()


@pytest.fixture(scope="module")
def loans(tmp_path_factory):
    return real_data.write_csv("loans", tmp_path_factory.mktemp("loans"))


def _run(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def _flags(command: str) -> set[str]:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {opt for action in sub._actions for opt in action.option_strings}


def test_sweep_and_recommend_take_the_same_data_and_program_flags_from_one_definition():
    shared = argparse.ArgumentParser()
    add_dataset_arguments(shared, outcome=("--target-column",))
    flags = {opt for action in shared._actions for opt in action.option_strings} - {"-h", "--help"}
    for needed in ("--missing", "--categorical", "--group-rare", "--positive-class", "--role", "--approve-threshold",
                   "--approve-share", "--target-share", "--population", "--config", "--program", "--features",
                   "--loan-amount", "--revenue-rate", "--interest-rate", "--profit-convention"):
        assert needed in flags, needed
    assert flags <= _flags("sweep") and flags <= _flags("recommend")
    assert "--target" in _flags("sweep") and "--target-column" in _flags("sweep")  # the outcome, in both spellings


def test_recommend_runs_on_the_loan_book_with_the_preparation_and_program_flags(loans, tmp_path, capsys):
    out = tmp_path / "rec.json"
    code, printed, err = _run(
        capsys, "recommend", "--dataset", str(loans), "--target-column", "loan_status", *LENDING,
        "--target", "gamma>=0.8", "--mechanisms", "gaussian", "--b-values", "2", "--steps", "1",
        "--max-repetitions", "3", "--seed", "1", "--output", str(out),
    )
    assert code == 0, err
    data = printed["data"]
    assert data["features"] == ["annual_income", "debt_to_income", "loan_purpose"]
    assert data["roles"] == {"loan_amount": "loan_amount"} and data["target"] == "loan_status"
    assert data["spec"]["positive_class"] == ["Current", "Fully Paid", "In Grace Period"]
    assert data["preparation"]["features"][2:] == [f"loan_purpose={p}" for p in sorted(
        real_data.loans()["loan_purpose"].unique())]
    assert data["preparation"]["internal_not_private"]["rows_dropped"] == 24  # debt_to_income's gaps
    assert printed["program"]["kind"] == "lending" and printed["program"]["approve_share"] == 0.9
    assert json.loads(out.read_text())["data"] == data


def test_sweep_keeps_a_role_column_among_the_features_and_says_so(loans, tmp_path, capsys):
    """``sweep --role loan_amount=loan_amount`` used to drop the column from the default features (the app keeps it
    and warns): −143,866 against −95,740 for the same program. Now both keep it; the JSON records what was used."""
    code, printed, err = _run(  # a regression (a ridge fit is quick on 8,059 × 71); the rule is the program's own
        capsys, "sweep", "--dataset", str(loans), "--target", "interest_rate", "--program", "regression",
        "--role", "loan_amount=loan_amount", "--mechanism", "gaussian", "--reps", "1", "--b-values", "2",
        "--attacks", "distinguishing", "--seed", "1", "--output", str(tmp_path / "s.csv"),
    )
    assert code == 0, err
    suggested = suggest_spec(real_data.loans(), "interest_rate")
    assert printed["features"] == list(suggested.features) and "loan_amount" in printed["features"]
    assert printed["roles"] == {"loan_amount": "loan_amount"}
    assert printed["notes"][0].startswith("'loan_amount' (loan amount) is also a privatized feature")
    assert "note: 'loan_amount' (loan amount) is also a privatized feature" in err
    assert printed["spec"]["normalization"]["method"] == "scaled"
    assert printed["preparation"]["internal_not_private"]["rows_in_table"] == 10_000


def test_privatize_without_features_uses_the_features_sweep_suggests(loans, tmp_path, capsys):
    code, summary, err = _run(
        capsys, "privatize", "--input", str(loans), "--target", "loan_status", "--positive-class", "Current",
        "--mechanism", "gaussian",
        "--b", "1", "--epsilon", "1", "--delta", "1e-5", "--seed", "2", "--output", str(tmp_path / "p.csv"),
    )
    assert code == 0, err
    suggested = suggest_spec(real_data.loans(), "loan_status")
    assert summary["config"]["data"]["features"] == list(suggested.features)
    suggested = suggested.__class__(**{**suggested.__dict__, "positive_class": ("Current",)})
    assert summary["columns"] == list(prepare(real_data.loans(), suggested).feature_names)
    assert summary["notes"][0].startswith("no --features: the suggested features emp_length, homeownership")


def test_categorical_takes_a_comma_list(loans, tmp_path, capsys):
    code, summary, err = _run(
        capsys, "privatize", "--input", str(loans), "--features", "annual_income,homeownership,verified_income",
        "--categorical", "homeownership,verified_income", "--mechanism", "gaussian", "--b", "1", "--epsilon", "1",
        "--delta", "1e-5", "--seed", "2", "--output", str(tmp_path / "p.csv"),
    )
    assert code == 0, err
    assert summary["columns"] == [
        "annual_income", "homeownership=MORTGAGE", "homeownership=OWN", "homeownership=RENT",
        "verified_income=Not Verified", "verified_income=Source Verified", "verified_income=Verified",
    ]


def test_group_rare_puts_the_rare_loan_purposes_into_other(loans, tmp_path, capsys):
    code, summary, err = _run(
        capsys, "privatize", "--input", str(loans), "--features", "annual_income,loan_purpose",
        "--group-rare", "loan_purpose=100", "--mechanism", "gaussian", "--b", "1", "--epsilon", "1",
        "--delta", "1e-5", "--seed", "2", "--output", str(tmp_path / "p.csv"),
    )
    assert code == 0, err
    counts = real_data.loans()["loan_purpose"].value_counts()
    assert summary["columns"][1:] == [f"loan_purpose={p}" for p in sorted(counts[counts >= 100].index)] + [
        "loan_purpose=(other)"]
    written = pd.read_csv(tmp_path / "p.csv")
    assert len(written) == 10_000
    assert "held by fewer than 100 rows" in summary["preparation"]["steps"][0]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--group-rare", "loan_purpose"], "--group-rare must be COL=K"),
        (["--group-rare", "loan_purpose=0"], "--group-rare must be COL=K"),
        (["--categorical", "a,,b"], "empty column name"),
    ],
)
def test_flag_mistakes_are_one_line(loans, tmp_path, capsys, flags, message):
    code = main(["privatize", "--input", str(loans), "--features", "annual_income", *flags, "--mechanism",
                 "gaussian", "--b", "1", "--epsilon", "1", "--delta", "1e-5", "--output", str(tmp_path / "x.csv")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err


def test_sweep_and_recommend_read_the_data_spec_and_program_of_a_configuration(loans, tmp_path, capsys):
    """``--config``: a saved release configuration's data spec (here from ``privatize --save-config``); the flags
    still override it (the program)."""
    saved = tmp_path / "release.json"
    code, _, err = _run(
        capsys, "privatize", "--input", str(loans), "--features", "annual_income,loan_purpose,loan_amount",
        "--group-rare", "loan_purpose=100", "--target", "loan_status", "--positive-class", "Current",
        "--positive-class", "Fully Paid", "--missing", "drop", "--mechanism", "gaussian", "--b", "1", "--epsilon",
        "1", "--delta", "1e-5", "--seed", "2", "--output", str(tmp_path / "p.csv"), "--save-config", str(saved),
    )
    assert code == 0, err
    code, printed, err = _run(
        capsys, "sweep", "--config", str(saved), "--dataset", str(loans), "--program", "lending",
        "--role", "loan_amount=loan_amount", "--mechanism", "gaussian", "--reps", "1", "--b-values", "2",
        "--attacks", "distinguishing", "--seed", "1", "--output", str(tmp_path / "s.csv"),
    )
    assert code == 0, err
    assert printed["features"] == ["annual_income", "loan_purpose", "loan_amount"]
    assert printed["spec"]["categorical"]["loan_purpose"]["min_count"] == 100
    assert printed["spec"]["positive_class"] == ["Current", "Fully Paid"]
    assert printed["config"]["program"]["kind"] == "lending" and printed["roles"] == {"loan_amount": "loan_amount"}
