"""The decision record: lossless round trip, the five building blocks, clear refusals, and the CLI command works."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.data.demos import load_demo
from engine.data.preparation import DataSpec, Normalization, prepare
from engine.decision_record import (
    SCHEMA_VERSION,
    DecisionRecord,
    TableData,
    build_decision_record,
    load_decision_record,
)
from engine.errors import InvalidParameterError
from engine.evaluation.programs import ProgramConfig
from engine.guarantee import Guarantee
from engine.release import ReleaseConfig
from engine.sweeps import SweepResult, preset
from engine.theory.feasibility import feasibility_report


@pytest.fixture(scope="module")
def togo():
    demo = load_demo("togo-demo")
    return demo, prepare(demo.frame, demo.spec)


def make_record(togo, *, mechanism=None, seed=None, sweeps=(), **overrides):
    demo, prepared = togo
    delta = 1 / (prepared.n + 1)
    candidate = Guarantee(epsilon=1.0, delta=delta, b=0.4)
    kwargs = dict(
        prepared=prepared, source="demo", dataset="togo-demo", title=demo.title, synthetic=demo.synthetic,
        columns=tuple(str(c) for c in demo.frame.columns), candidate=candidate, gammas=(0.99, 0.95),
        delta_is_default=True,
        mechanism=mechanism or {"kind": "gaussian", "b": 0.4, "epsilon": 1.0, "delta": delta},
        seed=seed, program=ProgramConfig(kind="targeting"), rationale="Targeting must stay 99 % accurate.",
        sweeps=sweeps, studio={"eps_max": 8.0, "per_record": {"column": "data_mb"}},
        created="2026-01-01T00:00:00+00:00",
    )
    kwargs.update(overrides)
    return build_decision_record(**kwargs)


def test_round_trip_is_lossless(togo):
    record = make_record(togo, seed=11)
    text = record.to_json()
    again = load_decision_record(text)
    assert again == record
    assert again.to_json() == text
    assert json.loads(text)["schema_version"] == SCHEMA_VERSION


def test_states_every_building_block_with_numbers(togo):
    record = make_record(togo)
    spec = record.specification
    _, prepared = togo
    assert "n = 4,201" in spec.protection_domain and "calls_out" in spec.protection_domain
    assert any("number of records n" in i for i in spec.invariants)
    # Data-dependent standardisation is declared as an unprotected invariant, not hidden.
    assert any("means and standard deviations" in i for i in spec.invariants)
    assert spec.protection_unit.startswith("one person's record")
    assert "B = 0.4" in spec.neighbouring_relation
    assert spec.b == 0.4 and spec.epsilon == 1.0 and spec.delta == 1 / 4202
    assert spec.b_in_data_units == prepared.describe_b(0.4)
    assert "targeted differential privacy" in spec.standard
    # The switch-lemma conversion is labelled as a conversion, with s = ⌈2/0.4⌉ = 5 → ε' = 5.
    assert spec.conversions == (
        f"Conversion (switch lemma, s = ⌈2/B⌉ = 5): implies classic (ε' = 5, δ' = "
        f"{Guarantee(1.0, 1 / 4202, 0.4).implied_dp().delta:.6g})-DP for any two records.",
    )
    assert any("Metadata" in s for s in spec.out_of_scope)
    # Theorem 1 at the candidate's ε: Example 1's m = 5 for γ = 0.99 (δ = 1/(n+1) ≈ 2.4e-4 keeps m = 5).
    assert record.targets.feasibility[0].m == 5
    assert record.targets.feasibility[1] == feasibility_report(0.95, 1.0, 1 / 4202)
    assert record.targets.delta_rule == "1/(n+1)"


def test_data_fingerprint_never_contains_values(togo):
    demo, prepared = togo
    record = make_record(togo)
    text = record.to_json()
    assert record.data.sha256 == prepared.fingerprint
    assert (record.data.n, record.data.d) == (4201, 10)
    # No data value appears in the document (spot-check a few distinctive cells).
    cells = [repr(float(v)) for v in demo.frame["consumption"].head(20)]  # e.g. 0.04932…, distinctive
    assert cells and not any(cell in text for cell in cells)


def test_classic_dp_and_k_anonymity_are_stated_as_such(togo):
    delta = 1 / 4202
    classic = make_record(togo, mechanism={"kind": "gaussian", "b": 2.0, "epsilon": 1.0, "delta": delta})
    assert classic.specification.standard.startswith("approximate differential privacy")
    assert classic.specification.conversions == ()
    kanon = make_record(togo, mechanism={"kind": "mondrian", "k": 5})
    assert kanon.specification.epsilon is None
    assert "NOT differential privacy" in kanon.specification.standard
    assert load_decision_record(kanon.to_json()) == kanon


def test_seeded_record_says_not_private(togo):
    record = make_record(togo, seed=3)
    assert record.seeds.release == 3 and record.seeds.warning == "seeded output is NOT private"
    assert any("NOT private" in a for a in record.specification.assumptions)


def test_sweep_table_round_trips(togo):
    _, prepared = togo
    config = preset("quick", n=prepared.n)
    rng = np.random.default_rng(0)
    table = pd.DataFrame({
        "point": [0, 0, 1], "rep": [0, 1, 0], "reference": ["non-private", "non-private", "grid"],
        "b": [2.0, 2.0, 0.4], "accuracy": [0.9, 0.91, math.nan], "flag": [True, False, True],
        "noise_sd": rng.random(3),
    })
    sweep = SweepResult(config=config, table=table, fingerprint=prepared.fingerprint, n_released=100, n_holdout=20)
    other = SweepResult(config=preset("quick", n=prepared.n, mechanism="gaussian"), table=table.head(2),
                        fingerprint=prepared.fingerprint, n_released=100, n_holdout=20)
    record = make_record(togo, sweeps=(sweep, other), selected={"point": 1})
    again = load_decision_record(record.to_json())
    assert again == record
    assert len(again.tradeoffs) == 2 and again.tradeoffs[1].config.mechanism == "gaussian"
    assert again.tradeoffs[0].selected == {"point": 1} and again.tradeoffs[1].selected is None
    restored = again.tradeoffs[0].to_result()
    pd.testing.assert_frame_equal(restored.table, table, check_dtype=False)
    assert list(restored.table.dtypes.astype(str)) == list(table.dtypes.astype(str))
    assert restored.config == config and again.seeds.sweep == config.seed


def test_table_data_handles_missing_values():
    frame = pd.DataFrame({"a": [1.5, math.nan], "b": ["x", None], "c": [1, 2]})
    back = TableData.from_json(TableData.from_frame(frame).to_json()).to_frame()
    assert math.isnan(back["a"][1]) and back["b"][0] == "x" and back["c"].tolist() == [1, 2]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda text: text[: len(text) // 2], "not valid JSON"),
        (lambda text: json.dumps({"hello": 1}), "not a Studio decision record"),
        (lambda text: text.replace(f'"schema_version": {SCHEMA_VERSION}', '"schema_version": 99'),
         "schema version 99"),
        (lambda text: _edit(text, ["candidate", "epsilon"], -1.0), "epsilon must be in (0, inf); got -1.0"),
        (lambda text: _edit(text, ["release", "mechanism", "delta"], 2.0), "delta"),
        (lambda text: _edit(text, ["data", "features"], ["a"]), "damaged"),
        (lambda text: _edit(text, ["targets", "gammas"], [1.2]), "gamma must be in [0.5, 1)"),
        (lambda text: _edit(text, ["surprise"], 1), "unknown field"),
    ],
)
def test_corrupted_records_are_refused_with_a_clear_message(togo, mutate, message):
    text = make_record(togo).to_json()
    with pytest.raises(InvalidParameterError, match=None) as err:
        load_decision_record(mutate(text))
    assert message in str(err.value)


def test_features_mismatch_between_fingerprint_and_release_is_refused(togo):
    record = make_record(togo)
    data = json.loads(record.to_json())
    data["release"]["data"]["features"] = data["release"]["data"]["features"][:3]
    with pytest.raises(InvalidParameterError, match="name different feature columns"):
        load_decision_record(json.dumps(data))


def _edit(text, path, value):
    data = json.loads(text)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(data)


PROJECTION = {"kind": "projection", "b": 0.4, "epsilon1": 0.75, "delta1": 1e-4 * 2 / 3, "epsilon2": 0.25,
              "delta2": 1e-4 / 3}


@pytest.mark.parametrize("mechanism", [None, PROJECTION], ids=["gaussian", "projection"])
def test_the_exact_cli_command_runs_the_release_from_the_record(togo, tmp_path, capsys, monkeypatch, mechanism):
    record = make_record(togo, seed=5, mechanism=mechanism)
    assert record.command == "python -m engine privatize --config decision-record.json --output private.csv"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "decision-record.json").write_text(record.to_json(), encoding="utf-8")
    argv = record.command.split()[3:]  # after "python -m engine"
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    out = pd.read_csv(tmp_path / "private.csv")
    assert out.shape == (4201, 10) and list(out.columns) == list(record.data.features)
    assert summary["data"]["sha256"] == record.data.sha256
    assert summary["guarantee"]["dict"] == Guarantee.from_dict(summary["guarantee"]["dict"]).to_dict()
    assert summary["guarantee"]["dict"]["b"] == 0.4 and summary["guarantee"]["dict"]["epsilon"] == 1.0
    assert summary["mechanism"] == record.release.kind
    # The same seed reproduces the release exactly (which is why seeded output is not private).
    assert main(argv[:-1] + ["again.csv"]) == 0
    capsys.readouterr()
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "again.csv"), out)


def test_extracted_release_config_works_on_an_uploaded_table(togo, tmp_path, capsys):
    demo, _ = togo
    frame = demo.frame.head(200)
    spec = DataSpec(("calls_out", "sms_out", "data_mb"), normalization=Normalization("maxnorm"))
    prepared = prepare(frame, spec)
    record = make_record(
        (demo, prepared), source="upload", dataset=None, file_sha256="0" * 64,
        mechanism={"kind": "gaussian", "b": 0.5, "epsilon": 2.0, "delta": 1e-4},
    )
    assert "--input YOUR_DATA.csv" in record.command
    config_path = tmp_path / "release-config.json"
    config_path.write_text(record.release_config_json(), encoding="utf-8")
    assert ReleaseConfig.from_json(config_path.read_text()) == record.release
    frame.to_csv(tmp_path / "mine.csv", index=False)
    code = main(["privatize", "--config", str(config_path), "--input", str(tmp_path / "mine.csv"),
                 "--output", str(tmp_path / "out.csv")])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["data"]["sha256"] == prepared.fingerprint
    assert pd.read_csv(tmp_path / "out.csv").shape == (200, 3)


def test_record_is_a_frozen_serializable_dataclass(togo):
    record = make_record(togo)
    with pytest.raises(AttributeError):
        record.rationale = "changed"  # type: ignore[misc]
    assert isinstance(DecisionRecord.from_dict(record.to_dict()), DecisionRecord)


def test_vacuous_implied_dp_is_called_vacuous(togo):
    record = make_record(togo, mechanism={"kind": "gaussian", "b": 0.5, "epsilon": 4.0, "delta": 1e-4})
    (conversion,) = record.specification.conversions
    assert "δ' = 1)" in conversion and "vacuous" in conversion
