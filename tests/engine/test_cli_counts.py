"""``python -m engine counts``: released CSV on disk, guarantee JSON on stdout, one-line errors with exit code 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.public_info.count_release import CountReleaseConfig
from engine.public_info.dependence import DependenceModel


def _input(tmp_path):
    frame = pd.DataFrame({
        "county": np.repeat(["big", "mid", "small"], 3), "month": np.tile(["2021-01", "2021-02", "2021-03"], 3),
        "cases": [900, 1200, 800, 200, 150, 260, 3, 0, 5], "deaths": [20, 30, 10, 4, 2, 3, 1, 0, 5],
    })
    path = tmp_path / "counts.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_counts_demo_postprocess(tmp_path, capsys):
    out = tmp_path / "released.csv"
    code = main(["counts", "--dataset", "counties-demo", "--method", "postprocess", "--epsilon", "1",
                 "--replicates", "2", "--seed", "3", "--output", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    payload = json.loads(captured.out)
    assert payload["guarantee"]["kind"] == "tp_guarantee" and payload["guarantee"]["epsilon"] == 1.0
    assert payload["study_epsilon"] == {"per_period": 1.0, "parallel": 1.0, "sequential": 24.0}
    assert payload["data"]["synthetic"] is True and "warning" in payload
    table = pd.read_csv(out)
    assert len(table) == 2 * 67 * 24 and list(table.columns) == ["region", "period", "replicate", "count", "subcount"]
    assert (table["subcount"] <= table["count"]).all() and (table["subcount"] >= 0).all()


@pytest.mark.parametrize("base", ["naive", "congenial", "prior"])
def test_counts_input_wasserstein(tmp_path, capsys, base):
    path, frame = _input(tmp_path)
    out = tmp_path / "released.csv"
    code = main(["counts", "--input", str(path), "--region", "county", "--period", "month", "--count", "cases",
                 "--subcount", "deaths", "--method", "wasserstein", "--base", base, "--epsilon", "0.5",
                 "--replicates", "4", "--seed", "1", "--output", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    released = pd.read_csv(out)
    assert len(released) == 4 * 9
    if base != "naive":
        totals = released.groupby(["replicate", "period"])["count"].sum()
        assert (totals.groupby(level="period").nunique() == 1).all()
        assert set(totals.groupby(level="period").first()) == set(frame.groupby("month")["cases"].sum())


@pytest.mark.parametrize(("args", "message"), [
    (["--method", "wasserstein", "--base", "prior", "--epsilon", "1", "--public", "total"], "last-period"),
    (["--method", "postprocess", "--epsilon", "-1"], "epsilon"),
    (["--method", "postprocess", "--epsilon", "1", "--public", "total,nope"], "public"),
    (["--method", "postprocess", "--epsilon", "1", "--count", "nope"], "count column 'nope'"),
    (["--method", "postprocess", "--epsilon", "1", "--dependence", "100,0.5"], "--dependence must be N,Z0,Z1"),
    (["--method", "postprocess", "--epsilon", "1", "--dependence", "10,0.7,0.3"], "z0 must be ≤ z1"),
    (["--method", "postprocess", "--epsilon", "1", "--dependence", "100,0,0.5", "--sensitivity", "50"],
     "below the Δ_z = 100 of one count"),
])
def test_counts_bad_input_exits_2_with_one_line(tmp_path, capsys, args, message):
    path, _ = _input(tmp_path)
    code = main(["counts", "--input", str(path), "--region", "county", "--period", "month",
                 *(["--count", "cases"] if "--count" not in args else []), *args, "--output", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and "\n" not in err and "Traceback" not in err


def test_counts_missing_file(tmp_path, capsys):
    code = main(["counts", "--input", str(tmp_path / "none.csv"), "--method", "postprocess", "--epsilon", "1",
                 "--output", str(tmp_path / "o.csv")])
    assert code == 2 and "--input" in capsys.readouterr().err


@pytest.mark.parametrize(("subcount", "expected"), [(True, 200.0), (False, 100.0)])
def test_counts_dependence_model_sets_delta_z(tmp_path, capsys, subcount, expected):
    """O3's model (n = 100, z0 = 0, z1 = 0.5): Δ_z = 100 per count, doubled with a sub-count; noise rate ε/Δ_z."""
    path, _ = _input(tmp_path)
    code = main(["counts", "--input", str(path), "--region", "county", "--period", "month", "--count", "cases",
                 *(["--subcount", "deaths"] if subcount else []), "--method", "postprocess", "--epsilon", "0.5",
                 "--dependence", "100,0,0.5", "--seed", "1", "--output", str(tmp_path / "o.csv")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    payload = json.loads(captured.out)
    assert payload["config"]["sensitivity"] == expected == payload["guarantee"]["sensitivity"]
    assert payload["config"]["dependence"] == {"kind": "correlated", "n": 100, "z0": 0.0, "z1": 0.5}
    assert payload["guarantee"]["basis"].startswith("correlated counts, groups of n = 100 with z0 = 0, z1 = 0.5")


@pytest.mark.parametrize("config", [
    CountReleaseConfig(method="postprocess", epsilon=0.5, public=("total", "subcount"), sensitivity=3.0),
    CountReleaseConfig(method="wasserstein", base="prior", epsilon=2.0, alpha=0.5,
                       public=("last-period", "total"), replicates=2),
    CountReleaseConfig(method="wasserstein", base="naive", epsilon=1.0, public=(),
                       dependence=DependenceModel(kind="correlated", n=20, z0=0.2, z1=0.6), sensitivity=20.0),
])
def test_the_export_pages_counts_command_makes_the_recorded_release(config, tmp_path, capsys):
    """The command the Export page shows for a recorded count release, run through the real command line, makes ONE
    release with exactly that configuration (a study's replicates are simulations, not releases to publish) and
    without a seed (OS randomness)."""
    import dataclasses
    import shlex

    argv = shlex.split(config.cli_command(output=str(tmp_path / "released.csv")))
    assert argv[:4] == ["python", "-m", "engine", "counts"] and "--seed" not in argv
    assert main(argv[3:]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert CountReleaseConfig.from_dict(printed["config"]) == dataclasses.replace(config, replicates=1)
    assert printed["seed"] is None and printed["guarantee"]["composition"] == "single"
    written = pd.read_csv(tmp_path / "released.csv")
    assert set(written["replicate"]) == {0}
