"""Formula injection (issue 15 §5 item 2): released CSVs neutralise formula-like text in cells and headers."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd

from engine.cli import main
from engine.export_csv import safe_csv_bytes, safe_frame

HOSTILE = ["=cmd|' /C calc'!A0", '=HYPERLINK("http://127.0.0.1:9/x","click")', "@SUM(A1:A9)", "+1+2", "-2+3",
           "\tTAB", "\rCR"]


def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def test_headers_and_text_cells_are_prefixed_with_a_quote_and_numbers_stay_numbers():
    frame = pd.DataFrame({name: [-1.5, 2.0] for name in HOSTILE})
    frame["label"] = ["=1+1", "fine"]
    frame["flag"] = [True, False]
    rows = _rows(safe_csv_bytes(frame))
    assert rows[0][: len(HOSTILE)] == ["'" + h for h in HOSTILE]
    assert rows[0][-2:] == ["label", "flag"]
    assert rows[1][0] == "-1.5" and rows[1][-2] == "'=1+1" and rows[2][-2] == "fine"
    assert rows[1][-1] == "True"
    for row in rows:  # nothing a spreadsheet would evaluate
        assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for cell in row)
        assert not any(cell.startswith("-") and not _is_number(cell) for cell in row)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_safe_frame_does_not_change_the_input_and_keeps_duplicate_and_numeric_columns():
    frame = pd.DataFrame([[1.0, "=x"], [-2.0, "y"]], columns=["a", "a"])
    out = safe_frame(frame)
    assert list(frame.iloc[:, 1]) == ["=x", "y"]
    assert list(out.columns) == ["a", "a"] and list(out.iloc[:, 1]) == ["'=x", "y"]
    np.testing.assert_array_equal(out.iloc[:, 0].to_numpy(dtype=float), [1.0, -2.0])


def test_privatize_output_header_is_neutralised(tmp_path, capsys):
    data = pd.DataFrame({
        "=cmd|' /C calc'!A0": np.linspace(-1, 1, 40),
        "@SUM(A1:A9)": np.cos(np.arange(40.0)),
        "=HYPERLINK(\"http://x\")": np.sin(np.arange(40.0)),
    })
    src = tmp_path / "in.csv"
    data.to_csv(src, index=False)
    out = tmp_path / "out.csv"
    code = main(["privatize", "--input", str(src), "--features", ",".join(data.columns), "--mechanism", "gaussian",
                 "--b", "2", "--epsilon", "1", "--delta", "1e-5", "--seed", "1", "--output", str(out)])
    summary = json.loads(capsys.readouterr()[0])
    assert code == 0
    header = _rows(out.read_bytes())[0]
    assert header == ["'=cmd|' /C calc'!A0", "'@SUM(A1:A9)", "'=HYPERLINK(\"http://x\")"]
    assert summary["columns"] == list(data.columns)  # the summary (JSON) keeps the true names
    body = pd.read_csv(out)
    assert body.shape == (40, 3) and body.dtypes.map(lambda t: t.kind == "f").all()


def test_a_large_table_is_written_in_row_blocks_with_the_same_bytes(tmp_path, monkeypatch):
    """Issue 33 §3: a large CSV output is made and written a block of rows at a time (not one string of the whole
    text, and its encoded copy): the file is byte for byte what safe_csv_bytes gives, header once, cells neutralised."""
    import numpy as np

    from engine import export_csv

    monkeypatch.setattr(export_csv, "_CSV_ROWS", 7)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"=a": rng.normal(size=30), "b": ["@x", "-1.5", "ok"] * 10, "c": np.arange(30)})
    export_csv.write_safe_csv(frame, tmp_path / "o.csv")
    assert (tmp_path / "o.csv").read_bytes() == export_csv.safe_csv_bytes(frame)
    assert (tmp_path / "o.csv").read_bytes().count(b"'=a") == 1
