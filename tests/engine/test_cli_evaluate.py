"""``python -m engine evaluate``: a decision record's analysis from the command line equals the engine's."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.analysis import AnalysisConfig, analyse_mechanisms
from engine.cli import main
from engine.data.demos import load_demo
from engine.data.preparation import prepare
from engine.decision_record import build_decision_record
from engine.evaluation.programs import ProgramConfig
from engine.guarantee import Guarantee


@pytest.fixture(scope="module")
def record_file(tmp_path_factory):
    demo = load_demo("togo-demo")
    prepared = prepare(demo.frame, demo.spec)
    delta = 1 / (prepared.n + 1)
    record = build_decision_record(
        prepared=prepared, source="demo", dataset="togo-demo", title=demo.title, synthetic=True,
        columns=tuple(str(c) for c in demo.frame.columns), candidate=Guarantee(epsilon=4.0, delta=delta, b=0.5),
        gammas=(0.99, 0.6), delta_is_default=True,
        mechanism={"kind": "gaussian", "b": 0.5, "epsilon": 4.0, "delta": delta}, seed=None,
        program=ProgramConfig(kind="targeting", population=4.95e6), rationale="", sweeps=(), studio={},
        created="2026-01-01T00:00:00+00:00",
    )
    path = tmp_path_factory.mktemp("rec") / "record.json"
    path.write_text(record.to_json(), encoding="utf-8")
    return path, prepared, record


def test_evaluate_prints_the_engines_numbers(record_file, capsys):
    path, prepared, record = record_file
    code = main(["evaluate", "--config", str(path), "--seed", "3", "--repetitions", "3",
                 "--attacks", "singling_out"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    _, (point,) = analyse_mechanisms(prepared, [record.release.build_mechanism()],
                                     AnalysisConfig(program=record.program, attacks=("singling_out",)), seed=3,
                                     repetitions=3)
    assert out["program"]["private"]["mean"] == pytest.approx(point.interval("accuracy")[0], rel=1e-12)
    assert out["program"]["decision_agreement"]["mean"] == pytest.approx(point.decision_agreement[0], rel=1e-12)
    assert out["program"]["no_data_agreement"] == point.no_data_agreement and out["program"]["no_data_agreement"]
    # one aggregation rule: the mean over the 3 releases, every one attacked (the page's and the sweep's rule)
    mean, _, lo, hi = point.protection("singling_out")
    assert out["protection"]["protection_singling_out"]["mean"] == pytest.approx(mean, rel=1e-12)
    assert [out["protection"]["protection_singling_out"][k] for k in ("ci_low", "ci_high")] == pytest.approx([lo, hi])
    assert mean == pytest.approx(np.mean([m.value("protection_singling_out") for m in point.runs]), rel=1e-12)
    assert len(out["program"]["gamma_targets"]) == 2
    assert out["program"]["gamma_targets"][0].startswith("γ = 0.99: ")
    assert "not a release" in out["simulation"]


def test_evaluate_refuses_a_missing_or_broken_record(tmp_path, capsys):
    assert main(["evaluate", "--config", str(tmp_path / "none.json")]) == 2
    assert "no decision record" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("[" * 100_000, encoding="utf-8")
    assert main(["evaluate", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err
