"""``python -m engine privatize``: round trips, the JSON summary, --config with flag overrides, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.cli import COMMANDS, main
from engine.data.demos import load_demo
from engine.data.preparation import DataSpec, Normalization, prepare
from engine.mechanisms.gaussian import gaussian_sigma
from engine.mechanisms.private_projection import projection_sigma1
from engine.release import ReleaseConfig
from engine.rng import SEEDED_WARNING

ROOT = Path(__file__).resolve().parents[2]
GAUSS = ["--mechanism", "gaussian", "--b", "0.5", "--epsilon", "1", "--delta", "1e-5"]
PROJECTION = [
    "--mechanism", "projection", "--b", "0.25", "--epsilon1", "3", "--delta1", "1.6e-4",
    "--epsilon2", "0.9999", "--delta2", "8e-5",
]


def _run(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


@pytest.fixture
def phones(tmp_path) -> Path:
    """The togo demo's features written as a user's CSV file (without the target)."""
    demo = load_demo("togo-demo")
    path = tmp_path / "phones.csv"
    demo.frame.drop(columns=["consumption"]).head(500).to_csv(path, index=False)
    return path


def test_privatize_is_a_registered_command():
    assert "privatize" in COMMANDS


def test_demo_round_trip_writes_features_and_a_complete_summary(tmp_path, capsys):
    out = tmp_path / "private.csv"
    code, summary, err = _run(capsys, "privatize", "--dataset", "togo-demo", *GAUSS, "--seed", "5", "--output", str(out))
    assert code == 0 and err == ""
    demo = load_demo("togo-demo")
    written = pd.read_csv(out)
    assert list(written.columns) == list(demo.spec.features) and len(written) == 4201
    expected_keys = {
        "output", "rows", "columns", "mechanism", "guarantee", "noise_sd_per_coordinate", "details", "seconds",
        "seeded", "seed", "warning", "data", "preparation", "config", "seconds_total", "notes", "sampler",
        "guarantee_file",
    }
    assert set(summary) == expected_keys
    assert summary["guarantee"]["headline"] == "(B = 0.5, ε = 1, δ = 1e-05)-targeted DP for one record"
    assert summary["guarantee"]["describe"][0].startswith(summary["guarantee"]["headline"])
    sigma = gaussian_sigma(0.5, 1.0, 1e-5, "analytic")
    assert summary["noise_sd_per_coordinate"] == pytest.approx(sigma, rel=1e-12)
    assert summary["seeded"] is True and summary["warning"] == SEEDED_WARNING
    assert summary["seconds"] >= 0
    prepared = prepare(demo.frame, demo.spec)
    assert summary["data"] == prepared.fingerprint_summary()
    assert summary["config"]["dataset"] == "togo-demo" and summary["config"]["seed"] == 5
    noise = written.to_numpy() - prepared.x
    # 42,010 draws: sample sd within 5 standard errors (relative se 1/sqrt(2N)) of σ
    assert noise.std() == pytest.approx(sigma, rel=5 / np.sqrt(2 * noise.size))
    again = tmp_path / "again.csv"
    assert main(["privatize", "--dataset", "togo-demo", *GAUSS, "--seed", "5", "--output", str(again)]) == 0
    capsys.readouterr()
    assert again.read_bytes() == out.read_bytes()  # same seed → same release, written losslessly


def test_unseeded_release_says_so(tmp_path, capsys):
    code, summary, _ = _run(capsys, "privatize", "--dataset", "togo-demo", *GAUSS, "--output", str(tmp_path / "o.csv"))
    assert code == 0 and summary["seeded"] is False and summary["warning"] is None and summary["seed"] is None


def test_input_file_projection_to_parquet(phones, tmp_path, capsys):
    out = tmp_path / "private.parquet"
    features = "calls_out,sms_out,data_mb,recharge_amount"
    code, summary, _ = _run(
        capsys, "privatize", "--input", str(phones), "--features", features, *PROJECTION, "--seed", "1",
        "--output", str(out),
    )
    assert code == 0
    written = pd.read_parquet(out)
    assert list(written.columns) == features.split(",") and len(written) == 500
    assert summary["guarantee"]["dict"]["b"] == 0.25
    assert summary["details"]["implementation"] == "fast" and summary["details"]["output_scale"] == 1.0
    sigma1 = projection_sigma1(0.25, 3.0, 1.6e-4, 10000, 4)
    assert summary["details"]["sigma1"] == pytest.approx(sigma1, rel=1e-12)
    assert summary["config"]["dataset"] is None and summary["config"]["data"]["target"] is None
    assert summary["data"]["n"] == 500 and summary["data"]["d"] == 4


def test_paper_scale_and_reference_implementation_flags(phones, tmp_path, capsys):
    code, summary, _ = _run(
        capsys, "privatize", "--input", str(phones), "--features", "calls_out,sms_out", *PROJECTION,
        "--k", "200", "--implementation", "reference", "--output-scale", "paper", "--normalize", "maxnorm",
        "--no-standardize", "--seed", "2", "--output", str(tmp_path / "o.csv"),
    )
    assert code == 0
    assert summary["config"]["mechanism"]["implementation"] == "reference"
    assert summary["config"]["mechanism"]["output_scale"] == "paper" and summary["config"]["mechanism"]["k"] == 200
    assert summary["details"]["output_scale"] == pytest.approx(1 / 200)
    assert summary["config"]["data"]["normalization"] == {
        "method": "maxnorm", "standardize": False, "lower": [], "upper": [],
    }


def test_config_file_with_flag_overrides(tmp_path, capsys):
    saved = tmp_path / "release.json"
    code, first, _ = _run(
        capsys, "privatize", "--dataset", "togo-demo", *GAUSS, "--seed", "9", "--normalize", "maxnorm",
        "--output", str(tmp_path / "a.csv"), "--save-config", str(saved),
    )
    assert code == 0
    config = ReleaseConfig.from_json(saved.read_text())
    assert config.to_dict() == first["config"] and config.dataset == "togo-demo"
    code, second, _ = _run(
        capsys, "privatize", "--config", str(saved), "--b", "1.0", "--output", str(tmp_path / "b.csv")
    )
    assert code == 0
    assert second["config"]["mechanism"] == {**first["config"]["mechanism"], "b": 1.0}
    assert second["config"]["data"] == first["config"]["data"] and second["config"]["seed"] == 9
    # a file that claims to be a decision record is validated as one (schema and version; issue 15): a foreign
    # schema embedding a configuration is refused, not mined for its "release" value (real records:
    # test_decision_record.py runs the record's exact command)
    record = tmp_path / "decision.json"
    record.write_text(json.dumps({"schema": "decision-record/1", "release": config.to_dict(), "rationale": "x"}))
    code, _, err = _run(capsys, "privatize", "--config", str(record), "--output", str(tmp_path / "c.csv"))
    assert code == 2 and "not a Studio decision record" in err and err.count("\n") == 1
    assert not (tmp_path / "c.csv").exists()
    # switching the mechanism starts from that mechanism's own parameters
    code, fourth, _ = _run(
        capsys, "privatize", "--config", str(saved), "--mechanism", "mondrian", "--anonymity-k", "4",
        "--output", str(tmp_path / "d.csv"),
    )
    assert code == 0 and fourth["config"]["mechanism"] == {"kind": "mondrian", "k": 4}
    assert fourth["guarantee"]["headline"].startswith("k-anonymity with k = 4")


def test_lending_demo_keeps_its_program_columns_in_the_config(tmp_path, capsys):
    code, summary, _ = _run(capsys, "privatize", "--dataset", "nigeria-demo", *GAUSS, "--seed", "1",
                            "--output", str(tmp_path / "n.parquet"))
    assert code == 0
    assert summary["config"]["data"]["target"] == "low_risk"
    assert summary["config"]["data"]["roles"] == {
        "loan_amount": "loan_amount", "revenue": "interest", "interest": "interest",
    }
    assert summary["rows"] == 20788 and len(summary["columns"]) == 15


def test_public_bounds_from_lists_and_files(phones, tmp_path, capsys):
    common = ["privatize", "--input", str(phones), "--features", "calls_out,sms_out", *GAUSS, "--seed", "0"]
    code, a, _ = _run(capsys, *common, "--normalize", "bounds", "--lower", "0,0", "--upper", "1000,300",
                      "--output", str(tmp_path / "a.csv"))
    assert code == 0 and a["config"]["data"]["normalization"]["upper"] == [1000.0, 300.0]
    assert a["preparation"]["privacy_note"].startswith("Data-independent")
    csv_bounds = tmp_path / "bounds.csv"
    csv_bounds.write_text("feature,lower,upper\nsms_out,0,300\ncalls_out,0,1000\n")
    json_bounds = tmp_path / "bounds.json"
    json_bounds.write_text(json.dumps({"calls_out": [0, 1000], "sms_out": [0, 300]}))
    for path in (csv_bounds, json_bounds):
        out = tmp_path / f"{path.suffix[1:]}.csv"
        code, b, _ = _run(capsys, *common, "--normalize", "bounds", "--bounds-file", str(path), "--output", str(out))
        assert code == 0 and b["config"]["data"] == a["config"]["data"]
        assert out.read_bytes() == (tmp_path / "a.csv").read_bytes()


def test_target_missing_from_the_input_is_dropped_with_a_note(phones, tmp_path, capsys):
    saved = tmp_path / "cfg.json"
    spec = DataSpec(("calls_out", "sms_out"), "consumption", normalization=Normalization())
    saved.write_text(ReleaseConfig(spec, {"kind": "gaussian", "b": 2.0, "epsilon": 1.0, "delta": 1e-5}).to_json())
    code, summary, _ = _run(capsys, "privatize", "--config", str(saved), "--input", str(phones),
                            "--output", str(tmp_path / "o.csv"))
    assert code == 0 and summary["config"]["data"]["target"] is None
    assert summary["notes"] == [
        "the configuration's target column 'consumption' is not in the input; it is not needed for the release"
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dataset", "togo-demo", "--mechanism", "gaussian", "--b", "0.5"],
         "error: the gaussian mechanism needs epsilon: set it with --epsilon"),
        (["--dataset", "togo-demo", "--mechanism", "gaussian", "--epsilon1", "3"],
         "error: --epsilon1 does not apply to the gaussian mechanism; its parameters are: b, calibration, delta, epsilon"),
        (["--dataset", "togo-demo", *GAUSS[:4], "--epsilon", "1", "--delta", "2"], "error: delta must be in"),
        (["--dataset", "togo-demo", "--mechanism", "mondrian", "--k", "3"], "error: --k is the projection dimension k; for the mondrian mechanism's k use --anonymity-k"),
        (["--dataset", "togo-demo", "--mechanism", "laplace"], "error: --mechanism must be one of"),
        (["--dataset", "togo-demo"], "error: choose a mechanism with --mechanism"),
        (["--dataset", "togo", *GAUSS], "error: unknown demo dataset 'togo'"),
        (["--dataset", "togo-demo", "--features", "calls_out,smsout", *GAUSS],
         "error: the table has no column 'smsout' (chosen as feature) — did you mean 'sms_out'?"),
        (["--dataset", "togo-demo", *GAUSS, "--normalize", "bounds"], "error: --normalize bounds needs public bounds"),
        (["--dataset", "togo-demo", *GAUSS, "--lower", "0"], "error: give both --lower and --upper"),
        (["--config", "/nonexistent/cfg.json", *GAUSS], "error: there is no configuration file at"),
        ([*GAUSS], "error: name the data with --input FILE or --dataset NAME"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, args, message):
    code = main(["privatize", *args, "--output", str(tmp_path / "o.csv")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(message) and err.count("\n") == 1
    assert not (tmp_path / "o.csv").exists()


def test_malformed_input_files_exit_2_naming_the_problem(tmp_path, capsys):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b,c,d\n" + "1,2,3,4\n" * 5 + "1,2,3,4,5\n")
    junk = tmp_path / "junk.csv"
    junk.write_bytes(bytes(range(256)))
    nan = tmp_path / "nan.csv"
    nan.write_text("a,b\n" + "".join(f"{i},{i * i}\n" for i in range(30)).replace("\n7,49\n", "\n7,\n"))
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json")
    cases = [
        (["--input", str(ragged), "--features", "a,b"], "line 7 has 5 fields, expected 4"),
        (["--input", str(junk), "--features", "a"], "it contains binary data"),
        (["--input", str(nan), "--features", "a,b"], "feature column 'b' has a missing value in data row 8 (counting data rows from 1)"),
        (["--config", str(bad_json)], "is not valid JSON (line 1, column 2"),
    ]
    for args, message in cases:
        code = main(["privatize", *args, *GAUSS, "--output", str(tmp_path / "o.csv")])
        _, err = capsys.readouterr()
        assert code == 2 and message in err and err.count("\n") == 1, err


def test_bad_output_paths(tmp_path, capsys, phones):
    code, _, err = _run(capsys, "privatize", "--dataset", "togo-demo", *GAUSS, "--output", str(tmp_path / "o.xlsx"))
    assert code == 2 and "--output must end in .csv, .parquet or .pq" in err
    code, _, err = _run(capsys, "privatize", "--input", str(phones), "--features", "calls_out", *GAUSS,
                        "--output", str(phones))
    assert code == 2 and "is the same file as --input" in err and err.count("\n") == 1
    code, _, err = _run(capsys, "privatize", "--dataset", "togo-demo", *GAUSS,
                        "--output", str(tmp_path / "missing" / "o.csv"))
    assert code == 2 and "does not exist" in err and err.count("\n") == 1


@pytest.mark.slow  # starts a Python process (≈ 2–6 s on a busy machine)
def test_module_entry_point_prints_one_line_without_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "engine", "privatize", "--dataset", "togo-demo", "--mechanism", "gaussian",
         "--b", "5", "--epsilon", "1", "--delta", "1e-5", "--output", str(tmp_path / "o.csv")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "error: b must be in (0, 2]; got 5.0 — B is an L2 distance in the unit ball"
    ]


def test_the_guarantee_is_written_beside_the_release_and_never_over_an_existing_file(tmp_path, capsys):
    """Issue 34 §4: the release and its guarantee travel together (``<output>.guarantee.json``), written atomically
    and never over an existing file; the internal counts of the data stay out of it."""
    out = tmp_path / "private.csv"
    code, summary, _ = _run(capsys, "privatize", "--dataset", "togo-demo", *GAUSS, "--seed", "5", "--output", str(out))
    assert code == 0
    beside = tmp_path / "private.csv.guarantee.json"
    assert summary["guarantee_file"] == str(beside)
    document = json.loads(beside.read_text(encoding="utf-8"))
    assert document["guarantee"] == summary["guarantee"] and document["config"] == summary["config"]
    assert document["output"] == str(out) and document["rows"] == 4201
    assert document["preparation"]["privacy_note"] == summary["preparation"]["privacy_note"]
    assert "internal_not_private" not in document["preparation"] and "details" not in document
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    released = out.read_bytes()
    code = main(["privatize", "--dataset", "togo-demo", *GAUSS, "--seed", "6", "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "exists already" in err and "--overwrite" in err
    assert out.read_bytes() == released and json.loads(beside.read_text(encoding="utf-8")) == document
    # the release gone, its guarantee still there: refused for the guarantee file, nothing written
    moved = tmp_path / "moved.csv"
    out.rename(moved)
    code = main(["privatize", "--dataset", "togo-demo", *GAUSS, "--seed", "6", "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "guarantee file" in err and "exists already" in err
    assert not out.exists() and json.loads(beside.read_text(encoding="utf-8")) == document
    # --overwrite replaces both together
    code = main(["privatize", "--dataset", "togo-demo", *GAUSS, "--seed", "6", "--output", str(out), "--overwrite"])
    capsys.readouterr()
    assert code == 0 and json.loads(beside.read_text(encoding="utf-8"))["seed"] == 6


@pytest.mark.parametrize("flags", [[], ["--normalize", "maxnorm"], ["--target", "y"]])
def test_a_parquet_release_read_column_by_column_is_the_release_of_the_loaded_table(tmp_path, capsys, flags,
                                                                                   monkeypatch):
    """Issue 33 §3: with the features named, a Parquet table of numbers is prepared column by column and released
    without a table in memory; a seeded release writes the values the whole-table path (``run_release`` of
    ``load_table``) gives, value for value, with the same fingerprint — and the output is the same file from CSV."""
    from engine.data.preparation import load_table
    from engine.release import run_release
    from engine.rng import make_rng

    rng = np.random.default_rng(4)
    n = 40_000
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 9, n), "c": rng.normal(size=n) * 1e3,
                          "y": rng.integers(0, 2, n).astype(float)})
    source = tmp_path / "t.parquet"
    frame.to_parquet(source, index=False, row_group_size=7_000)
    out = tmp_path / "o.parquet"
    argv = ["privatize", "--input", str(source), "--features", "a,b,c", *GAUSS, "--seed", "9", *flags]
    with monkeypatch.context() as patch:  # the table is never loaded whole
        patch.setattr("engine.data.preparation.load_table", lambda *a, **k: pytest.fail("the table was loaded"))
        assert main([*argv, "--output", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    spec = DataSpec(("a", "b", "c"), target="y" if "--target" in flags else None,
                    normalization=Normalization("maxnorm" if "maxnorm" in flags else "clip"))
    config = ReleaseConfig(spec, {"kind": "gaussian", "b": 0.5, "epsilon": 1.0, "delta": 1e-5}, seed=9)
    prepared, release = run_release(load_table(source), config, rng=make_rng(9))
    assert np.array_equal(pd.read_parquet(out).to_numpy(), release.value)
    assert summary["data"]["sha256"] == prepared.fingerprint and summary["rows"] == n
    frame.to_csv(tmp_path / "t.csv", index=False)  # the whole-table path of the command itself
    assert main([*argv, "--input", str(tmp_path / "t.csv"), "--output", str(tmp_path / "o2.parquet")]) == 0
    assert np.array_equal(pd.read_parquet(tmp_path / "o2.parquet").to_numpy(), release.value)


def _numbers(n: int = 40, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})


@pytest.mark.parametrize("case", ["period", "index", "nested"])
def test_a_parquet_table_the_whole_table_path_refuses_is_refused_as_before(tmp_path, capsys, case):
    """Found by a review of the column-by-column path (issue 33 §3): a pandas Period column (int64 with an Arrow
    extension type: a date), the pandas index named as a feature, and a nested column anywhere in the file are
    refused with the whole-table path's message — not released as numbers."""
    frame = _numbers()
    if case == "period":  # in a fresh process, where pandas has not yet registered its Period type with pyarrow
        frame["p"] = pd.period_range("2020-01", periods=len(frame), freq="M")
        frame.to_parquet(tmp_path / "t.parquet")
        done = subprocess.run([sys.executable, "-m", "engine", "privatize", "--input", str(tmp_path / "t.parquet"),
                               "--features", "a,p", *GAUSS, "--seed", "1", "--output", str(tmp_path / "o.csv")],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and "holds dates" in done.stderr, done.stderr
        assert not (tmp_path / "o.csv").exists()
        return
    if case == "index":
        frame.index = pd.Index(np.arange(len(frame)) * 3, name="idx")
        features, expected = "a,idx", "no column 'idx'"
        frame.to_parquet(tmp_path / "t.parquet")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(frame, preserve_index=False)
        table = table.append_column("l", pa.array([[1, 2]] * len(frame)))
        pq.write_table(table, tmp_path / "t.parquet")
        features, expected = "a,b", "nested values"
    code = main(["privatize", "--input", str(tmp_path / "t.parquet"), "--features", features, *GAUSS, "--seed", "1",
                 "--output", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert code == 2 and expected in err, err
    assert not (tmp_path / "o.csv").exists()


def test_a_missing_value_in_a_later_chunk_goes_to_the_whole_table_path(tmp_path, monkeypatch):
    """A NaN in any chunk of a column (not only the first) sends the table to the whole-table path, whose rules
    (the row named, or dropped when it is the target's) then apply: pyarrow returns one chunk today, so the chunks
    are made here."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.data.preparation import prepare_parquet

    frame = _numbers(60)
    frame.loc[45, "a"] = np.nan
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({c: pa.array(frame[c].to_numpy()) for c in frame}), path)  # a NaN, not a null
    assert pq.read_table(path).column("a").null_count == 0
    real_read = pq.ParquetFile.read

    def chunked(self, *args, **kwargs):
        table = real_read(self, *args, **kwargs)
        return pa.Table.from_batches(table.to_batches(max_chunksize=20))  # three chunks of 20 rows

    monkeypatch.setattr(pq.ParquetFile, "read", chunked)
    assert prepare_parquet(path, DataSpec(("a", "b"))) is None
    assert prepare_parquet(path, DataSpec(("b",), target="a")) is None
    clean = frame.fillna(0.0)
    pq.write_table(pa.table({c: pa.array(clean[c].to_numpy()) for c in clean}), path)
    fast = prepare_parquet(path, DataSpec(("a", "b")))
    assert fast is not None and fast.fingerprint == prepare(clean, DataSpec(("a", "b"))).fingerprint
