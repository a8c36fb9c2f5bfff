"""``python -m engine policy``: JSON output with each value's loss and its unit."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main


def _run(capsys, *argv):
    code = main(["policy", *argv])
    out = capsys.readouterr()
    return code, out


def test_example_2_16(capsys):
    code, out = _run(capsys, "--mechanism", "unit-splitting", "--tau", "10", "--sigma", repr(math.sqrt(50)),
                     "--values", "5,5,10,20,30,10000")
    assert code == 0
    payload = json.loads(out.out)
    assert payload["unit"] == "rho" and "ρ" in payload["unit_label"]
    losses = [row["loss"] for row in payload["losses"]]
    assert losses == pytest.approx([1, 1, 1, 4, 9, 1e6])
    assert all(row["unit"] == "rho" and row["rho"] == row["loss"] for row in payload["losses"])
    assert payload["mechanism"] == {"kind": "unit-splitting", "tau": 10.0, "sigma": math.sqrt(50)}
    assert payload["source"]["guarantee"].startswith("paper")


def test_example_4_6_and_4_8(capsys):
    _, out = _run(capsys, "--mechanism", "kth-root", "--k", "4", "--a", "0", "--sigma", "2",
                  "--values", "5,5,10,20,30,10000")
    got = [r["loss"] for r in json.loads(out.out)["losses"]]
    assert got == pytest.approx([0.279508, 0.279508, 0.395285, 0.559017, 0.684653, 12.5], abs=5e-7)
    _, out = _run(capsys, "--mechanism", "log", "--a", "1", "--sigma", "2", "--values", "5,5,10,20,30,10000")
    got = [r["loss"] for r in json.loads(out.out)["losses"]]
    assert got == pytest.approx([0.401300, 0.401300, 0.718738, 1.158640, 1.474034, 10.604026], abs=5e-7)


def test_additive_mechanism_reports_epsilon_and_rho_and_dp(capsys):
    code, out = _run(capsys, "--mechanism", "generalized-gaussian", "--p", "0.5", "--sigma", "4",
                     "--values", "16", "--delta", "1e-6")
    assert code == 0
    payload = json.loads(out.out)
    row = payload["losses"][0]
    assert payload["unit"] == "epsilon" and row["unit"] == "epsilon"
    assert row["loss"] == pytest.approx(2.0) and row["rho"] == pytest.approx(1.5231883, abs=1e-7)
    assert row["rho"] < row["dp_epsilon"] <= row["loss"]
    assert payload["dp_conversion"]["method"] == "cks"


def test_pure_dp_mechanism_never_reports_dp_epsilon_above_its_epsilon(capsys):
    # review finding: ε → ρ → CKS printed 2.39, 9.94, 32.2 for pure losses 0.5, 2, 10
    code, out = _run(capsys, "--mechanism", "generalized-gaussian", "--p", "1", "--sigma", "1",
                     "--values", "0.5,2,10", "--delta", "1e-6")
    assert code == 0
    rows = json.loads(out.out)["losses"]
    assert [r["dp_epsilon"] for r in rows] == [0.5, 2.0, 10.0]
    # a PRzCDP mechanism still goes through the zCDP conversion
    code, out = _run(capsys, "--mechanism", "gaussian", "--sigma", "1", "--values", "1.4142135623730951",
                     "--delta", "1e-6")
    assert json.loads(out.out)["losses"][0]["dp_epsilon"] == pytest.approx(7.766, abs=1e-3)


def test_calibration_option(capsys):
    code, out = _run(capsys, "--mechanism", "log", "--a", "1", "--values", "1", "--target-sd", "1e4",
                     "--q-ref", "1e6")
    assert code == 0
    payload = json.loads(out.out)
    assert payload["calibration"]["sigma"] == pytest.approx(0.00999974, abs=1e-8)
    assert payload["losses"][0]["loss"] == pytest.approx(2402, rel=1e-3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--mechanism", "log", "--k", "3", "--values", "1"], "--k is not a parameter of log"),
        (["--mechanism", "epl2", "--a", "2", "--values", "1"], "a must be in [2.71828"),
        (["--mechanism", "gaussian", "--values", "1,x"], "--values must be a comma-separated list"),
        (["--mechanism", "gaussian", "--values", "-1"], "x must be in [0, inf)"),
        (["--mechanism", "generalized-gaussian", "--p", "2", "--values", "1"], "p must be in (0, 1]"),
    ],
)
def test_errors_exit_2_with_message(capsys, argv, message):
    code, out = _run(capsys, *argv)
    assert code == 2
    assert out.err.startswith("error: ") and message in out.err
    assert out.out == ""


def test_unknown_mechanism_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["policy", "--mechanism", "nope", "--values", "1"])
    assert info.value.code == 2


def test_kinds_list_every_sum_mechanism():
    from engine.cli.policy import KINDS
    from engine.per_record import SUM_MECHANISMS

    assert KINDS == tuple(sorted(SUM_MECHANISMS))


def test_building_the_cli_does_not_import_the_per_record_engine():
    code = ("import sys; from engine.cli import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith('engine.per_record')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "[]", out.stdout
