"""Bounded decoding (issue 35 item 6): a Parquet decompression bomb is refused from its metadata before any value is
read; a dictionary bomb before its text is expanded; a CSV's values are counted while it is scanned; a file within
the limits reads exactly as without them."""

from __future__ import annotations

import functools
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from engine.data.checks import TableProblem
from engine.data.io import DecodeLimits, load_table
from engine.errors import InvalidParameterError
from tests.hostile_inputs import parquet_bomb, parquet_dictionary_bomb

ROOT = Path(__file__).resolve().parents[2]
APP_LIKE = DecodeLimits(columns=500, cells=10_000_000, decoded_bytes=400 * 1024 * 1024)


@functools.cache
def bomb() -> bytes:
    return parquet_bomb()


def test_the_bomb_is_small_and_holds_30_million_rows():
    data = bomb()
    assert len(data) < 300_000
    assert pq.ParquetFile(io.BytesIO(data)).metadata.num_rows == 30_000_000


def test_a_parquet_bomb_is_refused_from_its_metadata_without_reading_a_row(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("a row group was read")

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", never)
    monkeypatch.setattr(pq, "read_table", never)
    with pytest.raises(TableProblem) as info:
        load_table(bomb(), filename="bomb.parquet", limits=APP_LIKE)
    message = str(info.value)
    assert message == ("'bomb.parquet' holds 30,000,000 rows × 1 columns = 30,000,000 values, above this app's limit "
                       "of 10,000,000 — use a sample of the rows here, or run the full release with 'python -m "
                       "engine privatize --engine dask'")


def test_a_dictionary_bomb_is_refused_before_its_text_is_expanded():
    """6 KB on disk, 1 MB uncompressed by its metadata, 2 GB once the dictionary is expanded."""
    data = parquet_dictionary_bomb()
    assert len(data) < 20_000
    with pytest.raises(TableProblem, match=r"decodes into more than 1\d{3}\.\d MB, above this app's limit of "
                                           r"400\.0 MB"):
        load_table(data, filename="dict.parquet", limits=APP_LIKE)
    small = parquet_dictionary_bomb(rows=30, value_bytes=1_000)  # the same shape, small: read whole
    frame = load_table(small, filename="small.parquet", limits=APP_LIKE)
    assert frame.shape == (30, 2) and set(frame["t"]) == {"x" * 1_000}
    pd.testing.assert_frame_equal(frame, load_table(small, filename="small.parquet"))  # as without limits


def test_the_metadata_size_and_the_column_count_are_checked_before_reading():
    frame = pd.DataFrame(np.arange(600.0).reshape(1, 600), columns=[f"c{i}" for i in range(600)])
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    with pytest.raises(TableProblem, match="has 600 columns; this app works with at most 500"):
        load_table(buf.getvalue(), filename="wide.parquet", limits=APP_LIKE)
    values = pd.DataFrame({"a": np.arange(100_000.0)})
    buf = io.BytesIO()
    values.to_parquet(buf, index=False, compression="zstd")
    with pytest.raises(TableProblem, match=r"decodes into 980 KB, above this app's limit of 100 KB"):
        load_table(buf.getvalue(), filename="v.parquet", limits=DecodeLimits(decoded_bytes=100 * 1024))


def test_a_csv_is_refused_while_it_is_scanned():
    text = "a,b,c\n" + "\n".join(f"{i},{i},{i}" for i in range(100)) + "\n"
    with pytest.raises(TableProblem, match=r"holds at least 51 rows × 3 columns = 153 values, above this app's "
                                           r"limit of 150"):
        load_table(text.encode(), filename="t.csv", limits=DecodeLimits(cells=150))
    with pytest.raises(TableProblem, match="has 3 columns; this app works with at most 2"):
        load_table(text.encode(), filename="t.csv", limits=DecodeLimits(columns=2))
    assert load_table(text.encode(), filename="t.csv", limits=DecodeLimits(cells=300, columns=3)).shape == (100, 3)


def test_a_table_within_the_limits_reads_exactly_as_without_them():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({
        "x": rng.normal(size=300), "k": rng.integers(-5, 5, 300), "t": rng.choice(["a", "bb", None], 300),
        "flag": rng.random(300) < 0.5, "when": pd.date_range("2024-01-01", periods=300, freq="h"),
        "u": pd.array(rng.integers(0, 3, 300), dtype="Int64"),
    })
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False, row_group_size=64)
    limited = load_table(buf.getvalue(), filename="f.parquet", limits=APP_LIKE)
    pd.testing.assert_frame_equal(limited, load_table(buf.getvalue(), filename="f.parquet"))
    pd.testing.assert_frame_equal(limited, pd.read_parquet(io.BytesIO(buf.getvalue())))


def test_limits_are_validated():
    with pytest.raises(InvalidParameterError, match="cells"):
        DecodeLimits(cells=0)


#: Measures the peak memory of refusing the bomb in a fresh process (Arrow's pool and the process's peak RSS).
MEMORY_PROBE = """
import resource, sys
import pyarrow as pa
from engine.data.io import DecodeLimits, load_table
from engine.errors import EngineError
data = open(sys.argv[1], "rb").read()
limits = DecodeLimits(columns=500, cells=10_000_000, decoded_bytes=400 * 1024 * 1024)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    load_table(data, filename="bomb.parquet", limits=limits if sys.argv[2] == "limited" else None)
    print("read")
except EngineError:
    print("refused")
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) // 1024, pa.default_memory_pool().max_memory() // (1024 * 1024))
"""


def test_refusing_the_bomb_costs_no_memory(tmp_path):
    """The refusal's peak memory: under 30 MB more than before it (reading the bomb costs hundreds of MB)."""
    path = tmp_path / "bomb.parquet"
    path.write_bytes(bomb())
    proc = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(path), "limited"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    outcome, numbers = proc.stdout.split("\n", 1)
    grown_mb, arrow_peak_mb = map(int, numbers.split())
    assert outcome == "refused", proc.stderr
    assert grown_mb < 30 and arrow_peak_mb < 5, (grown_mb, arrow_peak_mb)
