"""``privatize`` and ``sweep`` on real public tables with the preparation flags (issue 9: real data end to end)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.cli._data_flags import parse_categorical, parse_missing
from engine.data.preparation import Categorical, DataSpec, MissingRule, Normalization, load_table, prepare
from engine.release import ReleaseConfig
from tests import real_data

GAUSS = ["--mechanism", "gaussian", "--b", "0.5", "--epsilon", "1", "--delta", "1e-5", "--seed", "3"]


def _run(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("real")
    return {name: real_data.write_csv(name, folder) for name in real_data.TABLES}


def test_slid_privatize_drops_missing_encodes_text_and_replays_from_config(tables, tmp_path, capsys):
    out, saved = tmp_path / "private.csv", tmp_path / "config.json"
    code, summary, err = _run(
        capsys, "privatize", "--input", str(tables["slid"]), "--features", "education,age,sex,language",
        "--target", "wages", "--missing", "drop", "--categorical", "sex=Female|Male", "--categorical", "language",
        *GAUSS, "--output", str(out), "--save-config", str(saved),
    )
    assert code == 0 and err == ""
    slid = real_data.slid()
    complete = slid.dropna(subset=["wages", "education", "language"])
    assert summary["rows"] == len(complete) == 3987
    names = ["education", "age", "sex=Female", "sex=Male", "sex=(other)", "language=English", "language=French",
             "language=Other"]
    assert summary["columns"] == names and list(pd.read_csv(out).columns) == names
    prep = summary["preparation"]
    assert "the levels of 'language' (English, French, Other) were read from the data" in prep["privacy_note"]
    assert "levels of 'sex'" not in prep["privacy_note"]
    assert prep["steps"][0] == "Rows whose target 'wages' is missing are always dropped."
    internal = prep["internal_not_private"]
    assert (internal["rows_in_table"], internal["rows_dropped"]) == (7425, 7425 - 3987)
    assert internal["dropped_rows_by_column"] == {"education": 249, "language": 121, "wages": 3278}
    config = ReleaseConfig.from_json(saved.read_text())
    assert config.data.drop_missing and config.data.categorical == {
        "sex": Categorical(("Female", "Male")), "language": Categorical()}
    prepared = prepare(load_table(tables["slid"]), config.data)
    assert prepared.n == 3987 and np.all(np.linalg.norm(prepared.x, axis=1) <= 1.0)
    # The saved configuration replays the preparation (and, seeded, the same release).
    again = tmp_path / "again.csv"
    code, replay, _ = _run(capsys, "privatize", "--config", str(saved), "--input", str(tables["slid"]),
                           "--output", str(again))
    assert code == 0 and replay["columns"] == names and replay["data"]["sha256"] == summary["data"]["sha256"]
    pd.testing.assert_frame_equal(pd.read_csv(again), pd.read_csv(out))


def test_hmda_text_outcome_fill_indicator_and_public_bounds(tables, tmp_path, capsys):
    out, saved = tmp_path / "private.csv", tmp_path / "config.json"
    code, summary, _ = _run(
        capsys, "privatize", "--input", str(tables["hmda"]), "--features", "dir,lvr,pbcr,self,black",
        "--target", "deny", "--positive-class", "yes", "--missing", "pbcr=fill:no:indicator",
        "--categorical", "pbcr=no|yes", "--categorical", "self=no|yes|(missing)", "--categorical", "black=no|yes",
        "--normalize", "bounds", "--lower", "0,0", "--upper", "1.5,1.5", *GAUSS,
        "--output", str(out), "--save-config", str(saved),
    )
    assert code == 0
    assert summary["rows"] == real_data.HMDA_ROWS
    assert summary["columns"] == [
        "dir", "lvr", "pbcr=no", "pbcr=yes", "pbcr=(other)", "pbcr (missing)", "self=no", "self=yes",
        "self=(other)", "self=(missing)", "black=no", "black=yes", "black=(other)",
    ]
    prep = summary["preparation"]
    assert prep["privacy_note"].startswith("Data-independent") and "Not private" not in prep["privacy_note"]
    assert prep["internal_not_private"]["filled_cells_by_column"] == {"pbcr": 1, "self": 1}
    config = ReleaseConfig.from_json(saved.read_text())
    assert config.data.positive_class == ("yes",)
    assert config.data.missing == {"pbcr": MissingRule("fill", "no", indicator=True)}
    prepared = prepare(load_table(tables["hmda"]), config.data)
    assert prepared.y.sum() == (real_data.hmda()["deny"] == "yes").sum() == 285
    assert np.all(np.linalg.norm(prepared.x, axis=1) <= 1.0)


def test_penguins_text_target_without_positive_class_is_one_line_exit_2(tables, tmp_path, capsys):
    code = main(["privatize", "--input", str(tables["penguins"]), "--features", "bill_length_mm",
                 "--target", "species", "--missing", "drop", *GAUSS, "--output", str(tmp_path / "x.csv")])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert err == (
        "error: target column 'species' is a text column with 3 levels (Adelie, Chinstrap, Gentoo) — choose the "
        "positive class(es) to code as 1 (every other label is coded 0), or choose another target\n"
    )


def test_penguins_sweep_with_flags_reports_preparation(tables, tmp_path, capsys):
    out = tmp_path / "sweep.csv"
    code, summary, _ = _run(
        capsys, "sweep", "--dataset", str(tables["penguins"]), "--features",
        "bill_length_mm,flipper_length_mm,island,sex", "--categorical", "island", "--categorical",
        "sex=female|male|(missing)", "--target", "species", "--positive-class", "Adelie", "--positive-class",
        "Chinstrap", "--missing", "drop", "--mechanism", "gaussian", "--reps", "2", "--b-values", "0.5,2",
        "--seed", "1", "--output", str(out),
    )
    assert code == 0
    prep = summary["preparation"]
    assert prep["features"] == [
        "bill_length_mm", "flipper_length_mm", "island=Biscoe", "island=Dream", "island=Torgersen", "sex=female",
        "sex=male", "sex=(other)", "sex=(missing)",
    ]
    assert "the levels of 'island' (Biscoe, Dream, Torgersen) were read from the data" in prep["privacy_note"]
    assert prep["internal_not_private"]["rows_in_table"] == 344
    assert prep["internal_not_private"]["rows_dropped"] == 2
    assert prep["internal_not_private"]["filled_cells_by_column"] == {"sex": 9}
    assert len(pd.read_csv(out)) == summary["rows"] > 0


def test_declared_date_column_from_the_command_line(tables, tmp_path, capsys):
    penguins = real_data.penguins()
    penguins["observed"] = penguins["year"].astype(str) + "-11-01"
    path = tmp_path / "dated.csv"
    penguins.to_csv(path, index=False)
    base = ["privatize", "--input", str(path), "--features", "bill_length_mm,observed", "--missing", "drop", *GAUSS]
    code = main([*base, "--output", str(tmp_path / "a.csv")])
    _, err = capsys.readouterr()
    assert code == 2 and "holds dates (e.g. '2007-11-01') — declare it as a date column" in err
    saved = tmp_path / "c.json"
    code, summary, _ = _run(capsys, *base, "--date", "observed", "--output", str(tmp_path / "b.csv"),
                            "--save-config", str(saved))
    assert code == 0 and summary["rows"] == 342
    spec = ReleaseConfig.from_json(saved.read_text()).data
    assert spec.dates == ("observed",)
    # Days since 1970-01-01, read back through public bounds without standardising: x = days / 20000 / sqrt(2).
    bounded = dataclasses.replace(
        spec, normalization=Normalization("bounds", standardize=False, lower=(0, 0), upper=(100, 20000))
    )
    days = prepare(penguins, bounded).x[:, 1] * 20000 * math.sqrt(2)
    expected = penguins.dropna(subset=["bill_length_mm"])["year"].map({2007: 13818, 2008: 14184, 2009: 14549})
    np.testing.assert_allclose(days, expected.to_numpy(dtype=float), rtol=1e-12)


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (["--missing", "wages=mean"], "--missing must be drop, COL=drop, COL=fill:VALUE or COL=fill:VALUE:indicator"),
        (["--missing", "wages=fill:"], "--missing must be"),
        (["--missing", "wages=fill::indicator"], "needs the fill value"),
        (["--categorical", "=a|b"], "--categorical must be COL or COL=LEVEL|LEVEL|…"),
        (["--categorical", "sex="], "lists no level after '='"),
        (["--categorical", "sex=a||b"], "empty level"),
        (["--positive-class", "yes"], "positive class codes the target column"),
        (["--missing", "wages=fill:0:indicator"], "is not a feature"),
    ],
)
def test_bad_flag_syntax_is_one_line_and_exit_2(tables, tmp_path, capsys, flag, message):
    code = main(["privatize", "--input", str(tables["slid"]), "--features", "age", *flag, *GAUSS,
                 "--output", str(tmp_path / "x.csv")])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and message in err


def test_flag_parsers():
    assert parse_missing(["drop"]) == (True, {})
    assert parse_missing(["a=drop", "b=fill:2.5", "c=fill:n/a:indicator"]) == (
        False, {"a": MissingRule("drop"), "b": MissingRule("fill", 2.5), "c": MissingRule("fill", "n/a", indicator=True)})
    assert parse_categorical(["g", "h=x|y|(missing)"]) == {
        "g": Categorical(), "h": Categorical(("x", "y"), missing_level=True)}


def test_decision_record_on_penguins_carries_and_replays_the_preparation(tmp_path, capsys):
    from engine.decision_record import build_decision_record, load_decision_record
    from engine.evaluation.programs import ProgramConfig
    from engine.guarantee import Guarantee

    penguins = real_data.penguins()
    spec = DataSpec(
        ("bill_length_mm", "island", "sex"), target="species", positive_class=("Gentoo",), drop_missing=True,
        categorical={"island": Categorical(), "sex": Categorical(("female", "male"), missing_level=True)},
    )
    prepared = prepare(penguins, spec)
    delta = 1 / (prepared.n + 1)
    record = build_decision_record(
        prepared=prepared, source="upload", dataset=None, title="penguins", synthetic=False,
        columns=tuple(penguins.columns), candidate=Guarantee(epsilon=1.0, delta=delta, b=0.4), gammas=(0.95,),
        delta_is_default=True, mechanism={"kind": "gaussian", "b": 0.4, "epsilon": 1.0, "delta": delta}, seed=2,
        program=ProgramConfig(kind="targeting"), rationale="test", file_sha256="0" * 64,
        created="2026-01-01T00:00:00+00:00",
    )
    again = load_decision_record(record.to_json())
    assert again == record and again.release.data == spec
    assert again.data.features == prepared.feature_names  # expanded names, checked against the spec
    spec_text = json.dumps(again.specification.to_dict())
    assert "the levels of 'island' (Biscoe, Dream, Torgersen) were read from the data" in spec_text
    assert "'sex' is one-hot encoded with the public levels female, male" in spec_text
    config = tmp_path / "release.json"
    config.write_text(record.release_config_json(), encoding="utf-8")
    penguins.to_csv(tmp_path / "penguins.csv", index=False)
    code, summary, _ = _run(capsys, "privatize", "--config", str(config), "--input", str(tmp_path / "penguins.csv"),
                            "--output", str(tmp_path / "out.csv"))
    assert code == 0 and summary["columns"] == list(prepared.feature_names) and summary["rows"] == prepared.n
    assert summary["data"]["sha256"] == prepared.fingerprint
