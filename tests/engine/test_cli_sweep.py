"""``python -m engine sweep``: table on disk, JSON summary on stdout, progress on stderr, errors as exit code 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.sweeps import clear_cache


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_cache()
    yield
    clear_cache()


def _csv(tmp_path, n=150, lending=False):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(n, 4)), columns=["calls", "sms", "data", "topups"])
    if lending:
        frame["repaid"] = (frame["calls"] + 0.3 * rng.normal(size=n) > 0).astype(int)
        frame["amount"] = rng.uniform(10, 100, size=n)
    else:
        frame["consumption"] = frame["calls"] - frame["sms"] + 0.2 * rng.normal(size=n)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def test_sweep_file_writes_table_and_summary(tmp_path, capsys):
    out = tmp_path / "results.csv"
    code = main(["sweep", "--dataset", str(_csv(tmp_path)), "--target", "consumption", "--reps", "1",
                 "--b-values", "0.5,2", "--seed", "4", "--output", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    table = pd.read_csv(out)
    assert len(table) == 1 + 2
    payload = json.loads(captured.out)
    assert payload["rows"] == 3 and payload["seed"] == 4 and payload["n_released"] + payload["n_holdout"] == 150
    assert payload["config"]["b_values"] == [0.5, 2.0] and payload["config"]["program"]["kind"] == "targeting"
    # the budget follows δ = 1/(n + 1) of the rows privatized, split 2/3 : 1/3
    budget = payload["config"]["budgets"][0]
    assert budget["delta1"] + budget["delta2"] == pytest.approx(1 / (payload["n_released"] + 1))
    refs = [row["reference"] for row in payload["summary"]]
    assert refs == ["non-private", "tdp", "classic-dp"]
    assert "protection_singling_out_mean" in payload["summary"][1]
    assert "[3/3]" in captured.err and "repetition" in captured.err
    # the same command reproduces the same table
    assert main(["sweep", "--dataset", str(_csv(tmp_path)), "--target", "consumption", "--reps", "1",
                 "--b-values", "0.5,2", "--seed", "4", "--output", str(tmp_path / "again.csv")]) == 0
    pd.testing.assert_frame_equal(table, pd.read_csv(tmp_path / "again.csv"))


def test_sweep_lending_with_role_and_gaussian(tmp_path, capsys):
    out = tmp_path / "lend.csv"
    code = main(["sweep", "--dataset", str(_csv(tmp_path, lending=True)), "--target", "repaid", "--program",
                 "lending", "--role", "loan_amount=amount", "--mechanism", "gaussian", "--reps", "1",
                 "--b-values", "1", "--attacks", "singling_out,distinguishing", "--seed", "1", "--output",
                 str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    table = pd.read_csv(out)
    assert {"profit", "profit_change", "profit_change_relative", "relative_profit"} <= set(table.columns)
    assert "protection_attribute_inference" not in table.columns
    assert set(table["mechanism"]) == {"none", "gaussian"}
    payload = json.loads(captured.out)
    assert payload["headline_metric"] == "profit" and payload["n_holdout"] == 0


def test_sweep_demo_dataset(tmp_path, capsys):
    out = tmp_path / "togo.csv"
    code = main(["sweep", "--dataset", "togo-demo", "--reps", "1", "--b-values", "2", "--attacks",
                 "distinguishing", "--seed", "2", "--output", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    payload = json.loads(captured.out)
    assert payload["n_released"] == 4201 and payload["config"]["program"]["kind"] == "targeting"
    dp = [row for row in payload["summary"] if row["reference"] == "classic-dp"][0]
    # The paper's oracle D = 0.8347 is for n = 4201, δ = 1/4202, ε1 = 3, ε2 = 0.9999 at B = 2.
    assert dp["distinguishing_paper_d_mean"] == pytest.approx(0.8347, abs=1e-4)
    # Partitioned release (the paper's Nigeria setup): δ from the part size ⌈4201/6⌉ = 701.
    code = main(["sweep", "--dataset", "togo-demo", "--reps", "1", "--b-values", "2", "--attacks",
                 "distinguishing", "--partitions", "6", "--seed", "2", "--output", str(tmp_path / "p.csv")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    payload = json.loads(captured.out)
    budget = payload["config"]["budgets"][0]
    assert payload["config"]["partitions"] == 6
    assert budget["delta1"] + budget["delta2"] == pytest.approx(1 / 702)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dataset", "no-such-demo", "--target", "y"], "must be a demo name"),
        (["--dataset", "togo-demo", "--reps", "0"], "repetitions must be"),
        (["--dataset", "togo-demo", "--b-values", "3"], "B must be in"),
        (["--dataset", "togo-demo", "--attacks", "membership"], "attacks must name attacks from"),
        (["--dataset", "togo-demo", "--role", "loan_amount"], "ROLE=COLUMN"),
        (["--dataset", "togo-demo", "--partitions", "0"], "partitions must be"),
        (["--dataset", "togo-demo", "--relation", "element"], "--relation applies to --mechanism jl-laplace only"),
        (["--dataset", "togo-demo", "--mechanism", "jl-laplace", "--target-delta", "2"], "target_delta must be in"),
    ],
)
def test_sweep_bad_input_exit_2(tmp_path, capsys, argv, message):
    code = main(["sweep", *argv, "--seed", "0", "--output", str(tmp_path / "r.csv")])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith("error: ") and message in captured.err
    assert not (tmp_path / "r.csv").exists()


def test_sweep_file_needs_target(tmp_path, capsys):
    code = main(["sweep", "--dataset", str(_csv(tmp_path)), "--output", str(tmp_path / "r.csv")])
    assert code == 2 and "--target is required" in capsys.readouterr().err


def test_sweep_jl_laplace(tmp_path, capsys):
    out = tmp_path / "jl.csv"
    argv = ["sweep", "--dataset", str(_csv(tmp_path)), "--target", "consumption", "--mechanism", "jl-laplace",
            "--k", "3", "--relation", "row", "--target-delta", "1e-4", "--reps", "1", "--b-values", "0.5,2",
            "--attacks", "singling_out,distinguishing", "--seed", "2", "--output", str(out)]
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    cfg = payload["config"]
    assert cfg["mechanism"] == "jl-laplace" and cfg["k"] == 3 and cfg["relation"] == "row"
    assert cfg["target_delta"] == 1e-4
    table = pd.read_csv(out)
    assert list(table["reference"]) == ["non-private", "tdp", "classic-dp"]
    assert (table["delta"].iloc[1:] <= 1e-4 * (1 + 1e-9)).all()
    assert table["protection_singling_out"].between(0, 1).all()
