"""``python -m engine feasibility``: JSON keys and values (issue oracles), the --b extras, and one-line errors."""

from __future__ import annotations

import json
import math

import pytest

from engine.cli import main
from engine.theory.feasibility import min_epsilon


def _run(capsys, *argv):
    code = main(["feasibility", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_example_1_at_epsilon_1(capsys):
    code, out, err = _run(capsys, "--gamma", "0.99", "--epsilon", "1", "--delta", "1e-4")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["Q"] == pytest.approx(98.43, abs=0.005)
    assert data["m"] == 5
    assert data["B_max_integer"] == pytest.approx(0.4)
    assert data["B_sup"] == pytest.approx(0.5)
    assert data["B_sup_attained"] is False
    assert data["dp_feasible"] is False
    assert data["gamma_max_at_B2"] == pytest.approx((math.e + 1e-4) / (math.e + 1))
    assert data["gamma_max_at_B2"] == pytest.approx(0.73108, abs=1e-5)
    assert "B" not in data and "is_feasible" not in data
    assert any("Theorem 1" in line for line in data["summary"])


def test_example_1_at_epsilon_4_with_b(capsys):
    code, out, _ = _run(capsys, "--gamma", "0.99", "--epsilon", "4", "--delta", "1e-4", "--b", "2")
    assert code == 0
    data = json.loads(out)
    assert (data["m"], data["B_max_integer"], data["B_sup"]) == (2, 1.0, 2.0)
    assert data["B"] == 2.0 and data["steps"] == 1
    assert data["is_feasible"] is False  # the supremum B = 2 is not attained
    assert data["gamma_max"] == pytest.approx(data["gamma_max_at_B2"])
    assert data["gamma_max"] < 0.99
    assert data["min_epsilon"] == pytest.approx(min_epsilon(2.0, 0.99, 1e-4))
    assert data["min_epsilon"] > 4.0


def test_feasible_b(capsys):
    code, out, _ = _run(capsys, "--gamma", "0.99", "--epsilon", "1", "--delta", "1e-4", "--b", "0.4")
    data = json.loads(out)
    assert code == 0 and data["is_feasible"] is True and data["steps"] == 5
    assert data["gamma_max"] >= 0.99 and data["min_epsilon"] <= 1.0


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--gamma", "1.2", "--epsilon", "1", "--delta", "1e-4"], "gamma must be in [0.5, 1)"),
        (["--gamma", "0.9", "--epsilon", "0", "--delta", "1e-4"], "epsilon must be in (0, inf)"),
        (["--gamma", "0.9", "--epsilon", "nan", "--delta", "1e-4"], "epsilon must be in"),
        (["--gamma", "0.9", "--epsilon", "1", "--delta", "1"], "delta must be in [0, 1)"),
        (["--gamma", "0.9", "--epsilon", "1", "--delta", "1e-4", "--b", "3"], "b must be in (0, 2]"),
        (["--gamma", "0.9", "--epsilon", "1", "--delta", "1e-4", "--b", "0"], "b must be in (0, 2]"),
    ],
)
def test_bad_values_exit_2_with_one_line(capsys, argv, match):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and match in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--gamma", "x", "--epsilon", "1", "--delta", "1e-4"],
        ["--epsilon", "1", "--delta", "1e-4"],
    ],
)
def test_unparseable_arguments_exit_2_with_one_line(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(["feasibility", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err
