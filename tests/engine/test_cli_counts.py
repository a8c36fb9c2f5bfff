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
    # two replicates in one file: the printed guarantee is that of both (2 × ε per period), and the seed says simulation
    assert payload["guarantee"]["kind"] == "tp_guarantee" and payload["guarantee"]["epsilon"] == 2.0
    assert payload["guarantee"]["composition"] == "replicates" and payload["epsilon_per_replicate"] == 1.0
    assert payload["study_epsilon"] == {"per_period": 2.0, "parallel": 2.0, "sequential": 48.0}
    assert payload["data"]["synthetic"] is True and "not private" in payload["warning"]
    # the demo declares all three public statistics and has deaths: Δ_z = 4, derived and said why
    assert payload["delta_z"]["value"] == 4.0 == payload["guarantee"]["sensitivity"] and payload["delta_z"]["exact"]
    assert "2 per count because the current total is public" in payload["delta_z"]["reason"]
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
     "sensitivity Δ_z = 50 is below the 200 this release needs"),
    # under independence too (the reproduction: 0.5 was accepted, realised ε = 4 at a claimed 1)
    (["--method", "postprocess", "--epsilon", "1", "--public", "", "--sensitivity", "0.5"],
     "sensitivity Δ_z = 0.5 is below the 1 this release needs"),
    (["--method", "postprocess", "--epsilon", "1", "--subcount", "deaths", "--sensitivity", "2"],
     "sensitivity Δ_z = 2 is below the 4 this release needs (2 per count because the current total is public"),
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


@pytest.mark.parametrize(("subcount", "public", "expected"), [
    (True, "last-period", 200.0), (False, "last-period", 100.0), (True, "total,subcount", 400.0),
    (False, "total", 200.0),
])
def test_counts_dependence_model_sets_delta_z(tmp_path, capsys, subcount, public, expected):
    """O3's model (n = 100, z0 = 0, z1 = 0.5): Δ_z = 100 per count, doubled with a sub-count, doubled again with the
    total public; noise rate ε/Δ_z."""
    path, _ = _input(tmp_path)
    code = main(["counts", "--input", str(path), "--region", "county", "--period", "month", "--count", "cases",
                 *(["--subcount", "deaths"] if subcount else []), "--method", "postprocess", "--epsilon", "0.5",
                 "--public", public, "--dependence", "100,0,0.5", "--seed", "1", "--output", str(tmp_path / "o.csv")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    payload = json.loads(captured.out)
    assert payload["delta_z"]["value"] == expected == payload["guarantee"]["sensitivity"]
    assert payload["config"]["sensitivity"] is None  # derived, not chosen
    assert payload["config"]["dependence"] == {"kind": "correlated", "n": 100, "z0": 0.0, "z1": 0.5}
    assert "groups of n = 100 with z0 = 0, z1 = 0.5" in payload["guarantee"]["basis"]
    assert ("because the current total is public" in payload["delta_z"]["reason"]) == ("total" in public)


def test_unseeded_replicates_carry_the_composed_guarantee(tmp_path, capsys):
    """R releases written to one file spend R·ε per period: the JSON says so, never "ε of one release"."""
    path, _ = _input(tmp_path)
    code = main(["counts", "--input", str(path), "--region", "county", "--period", "month", "--count", "cases",
                 "--method", "wasserstein", "--base", "naive", "--epsilon", "0.5", "--public", "",
                 "--replicates", "10", "--output", str(tmp_path / "o.csv")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    payload = json.loads(captured.out)
    g = payload["guarantee"]
    assert g["epsilon"] == 5.0 and g["composition"] == "replicates" and payload["replicates"] == 10
    assert payload["study_epsilon"]["per_period"] == 5.0
    assert payload["statement"][0].startswith("ε-TP with ε = 5 ")
    assert any("10 replicates of one release published together" in line for line in payload["statement"])
    assert "spend ε = 5 per period" in payload["warning"] and payload["seed"] is None
    one = main(["counts", "--input", str(path), "--region", "county", "--period", "month", "--count", "cases",
                "--method", "wasserstein", "--base", "naive", "--epsilon", "0.5", "--public", "",
                "--output", str(tmp_path / "one.csv")])
    single = json.loads(capsys.readouterr().out)
    assert one == 0 and single["guarantee"]["epsilon"] == 0.5 and single["guarantee"]["composition"] == "single"
    assert "warning" not in single


@pytest.mark.parametrize("config", [
    CountReleaseConfig(method="postprocess", epsilon=0.5, public=("total", "subcount"), sensitivity=5.0),
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
