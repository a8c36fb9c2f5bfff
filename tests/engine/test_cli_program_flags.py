"""Program settings on the command line: the sweep uses them, and nonsense combinations are one-line errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from engine.cli import main


def _summary(capsys) -> dict:
    out = capsys.readouterr().out
    return json.loads(out[out.index("{"):])


def test_sweep_takes_the_targeted_share_and_population(tmp_path, capsys):
    out = tmp_path / "s.csv"
    code = main(["sweep", "--dataset", "togo-demo", "--reps", "2", "--b-values", "0.5", "--attacks", "singling_out",
                 "--target-share", "0.4", "--population", "1000", "--seed", "1", "--output", str(out)])
    assert code == 0
    summary = _summary(capsys)
    program = summary["config"]["program"]
    assert program["quantile"] == 0.4 and program["population"] == 1000.0
    table = pd.read_csv(out)
    nonprivate = table[table["reference"] == "non-private"].iloc[0]
    assert nonprivate["decision_agreement"] == 1.0
    # targeting nobody at share 0.4: accuracy = share of people above the 40th percentile
    assert nonprivate["baseline:target nobody:accuracy"] == pytest.approx(0.6, abs=1e-3)
    assert nonprivate["exclusion_errors_population"] == pytest.approx(
        nonprivate["exclusion_errors"] / summary["n_released"] * 1000)
    assert {row["no_better_than"] for row in summary["summary"]} <= {"", "target nobody", "target everybody",
                                                                    "random targeting at the same share"}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--approve-share", "0.3"], "apply to lending and classification"),
        (["--program", "lending", "--target-share", "0.3"], "--target-share applies to the targeting program"),
        (["--program", "lending", "--approve-share", "1.5"], "approve_share must be"),
    ],
)
def test_program_flag_mistakes_are_one_line(tmp_path, capsys, flags, message):
    code = main(["sweep", "--dataset", "togo-demo", "--reps", "1", "--output", str(tmp_path / "x.csv"), *flags])
    err = capsys.readouterr().err
    assert code == 2 and message in err
    assert err.strip().count("\n") == 0
