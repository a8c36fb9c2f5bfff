"""A table too large for memory, as an ordered list of partitions that Dask tasks read one at a time.

:func:`open_partitioned_input` takes a Parquet or CSV file, a directory of them or a glob pattern (files in sorted
name order; rows in file order) and plans the partitions:

* **Parquet**: row counts come from the files' metadata (no data read), and the rows are cut into partitions of
  exactly ``partition_rows`` rows (the last one shorter) *whatever the files' own layout*: partition ``j`` holds
  the global rows ``[j·N, (j+1)·N)``. A partition reads only the row groups it overlaps.
* **CSV**: Dask's ``read_csv`` cuts the files into byte blocks of :data:`CSV_BLOCK_BYTES` (at line boundaries);
  each block is a partition. Row counts are known after the first pass.

The partition index is what the release's random streams are keyed by, so for a given input and
``partition_rows`` the seeded output does not depend on how many workers run it.
"""

from __future__ import annotations

import csv
import glob as globlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.data.preparation import CSV_EXTENSIONS, PARQUET_EXTENSIONS, TableProblem
from engine.errors import InvalidParameterError
from engine.validation import check_integer

#: Default rows per partition (Parquet input): ~120 MB of float64 for 15 features, a few hundred MB of work
#: memory per task.
DEFAULT_PARTITION_ROWS = 1_000_000

#: Byte size of a CSV block (one partition) handed to ``dask.dataframe.read_csv``.
CSV_BLOCK_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ParquetPiece:
    """Rows ``[start, stop)`` of one Parquet file (file-local row numbers)."""

    path: str
    start: int
    stop: int


@dataclass(frozen=True)
class PartitionedInput:
    """The planned partitions of an input table.

    Attributes
    ----------
    kind : {"parquet", "csv"}
    paths : tuple of str
        The input files, in the order their rows are read.
    columns : tuple of str
        Column names of the table (from the first file).
    partitions : tuple
        Parquet: one tuple of :class:`ParquetPiece` per partition. CSV: Dask ``Delayed`` objects, one per block.
    rows : int or None
        Total rows (Parquet: from metadata; CSV: None until counted).
    partition_rows : int or None
        Rows per partition (Parquet); None for CSV (byte blocks).
    """

    kind: str
    paths: tuple[str, ...]
    columns: tuple[str, ...]
    partitions: tuple[Any, ...]
    rows: int | None
    partition_rows: int | None

    @property
    def npartitions(self) -> int:
        return len(self.partitions)

    def describe(self) -> dict[str, Any]:
        """JSON-ready description for the run's metadata (file names only, never contents)."""
        return {
            "format": self.kind,
            "files": len(self.paths),
            "partitions": self.npartitions,
            "partition_rows": self.partition_rows,
            "csv_block_bytes": CSV_BLOCK_BYTES if self.kind == "csv" else None,
        }


def _files(source: str) -> list[str]:
    path = Path(source)
    if path.is_dir():
        files = sorted(
            str(p) for p in path.iterdir()
            if p.is_file() and not p.name.startswith((".", "_"))
            and p.suffix.lower() in PARQUET_EXTENSIONS | (CSV_EXTENSIONS - {""})
        )
        if not files:
            raise TableProblem(
                f"the folder {source!r} holds no .parquet or .csv files — name a folder of data files, one file, or a "
                f"glob pattern such as 'data/*.parquet'",
                control="file",
            )
        return files
    if path.is_file():
        return [str(path)]
    if any(ch in source for ch in "*?["):
        files = sorted(p for p in globlib.glob(source) if Path(p).is_file())
        if not files:
            raise TableProblem(f"the pattern {source!r} matches no file — check the path", control="file")
        return files
    raise TableProblem(f"there is no file or folder at {source!r} — check the path", control="file")


def _kind(files: list[str]) -> str:
    kinds = {"parquet" if Path(f).suffix.lower() in PARQUET_EXTENSIONS else "csv" for f in files}
    if len(kinds) != 1:
        raise TableProblem(
            "the input mixes Parquet and CSV files — convert them to one format or name only one kind "
            "(e.g. 'data/*.parquet')",
            control="file",
        )
    return kinds.pop()


def open_partitioned_input(source: str, *, partition_rows: int | None = None) -> PartitionedInput:
    """Plan the partitions of the table at ``source`` (file, folder or glob pattern).

    Parameters
    ----------
    source : str
    partition_rows : int, optional
        Rows per partition for Parquet input (default :data:`DEFAULT_PARTITION_ROWS`). Not accepted for CSV.

    Raises
    ------
    TableProblem
        No such file, no data files, mixed formats, unreadable Parquet metadata or differing columns.
    InvalidParameterError
        ``partition_rows`` out of range, or given for CSV input.
    """
    if not isinstance(source, str) or not source:
        raise InvalidParameterError(f"--input must name a file, folder or glob pattern; got {source!r}")
    files = _files(source)
    kind = _kind(files)
    if kind == "csv":
        if partition_rows is not None:
            raise InvalidParameterError(
                "--partition-rows needs Parquet input (row counts come from its metadata); CSV input is cut into "
                f"blocks of {CSV_BLOCK_BYTES // 2**20} MB — leave out --partition-rows or convert the data to Parquet"
            )
        return _plan_csv(files)
    rows_per = DEFAULT_PARTITION_ROWS if partition_rows is None else check_integer(
        "--partition-rows", partition_rows, 1, None, hint="rows per partition, e.g. 1000000"
    )
    return _plan_parquet(files, rows_per)


def _plan_parquet(files: list[str], rows_per: int) -> PartitionedInput:
    import pyarrow
    import pyarrow.parquet as pq

    counts: list[int] = []
    columns: tuple[str, ...] | None = None
    for f in files:
        try:
            meta = pq.ParquetFile(f).metadata
        except (pyarrow.ArrowException, OSError, ValueError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise TableProblem(
                f"could not read {Path(f).name!r} as Parquet: {reason} — export it again as Parquet", control="file"
            ) from None
        names = tuple(str(meta.schema.column(i).name) for i in range(meta.num_columns))
        if columns is None:
            columns = names
        elif set(names) != set(columns):
            raise TableProblem(
                f"{Path(f).name!r} has the columns {sorted(names)} but {Path(files[0]).name!r} has "
                f"{sorted(columns)} — every file of the input must have the same columns",
                control="file",
            )
        counts.append(int(meta.num_rows))
    total = int(sum(counts))
    if total == 0:
        raise TableProblem("the input has no data rows — add rows", control="file")
    starts = np.concatenate([[0], np.cumsum(counts)])
    partitions = []
    for lo in range(0, total, rows_per):
        hi = min(total, lo + rows_per)
        pieces = []
        for i, f in enumerate(files):
            a, b = max(lo, int(starts[i])), min(hi, int(starts[i + 1]))
            if a < b:
                pieces.append(ParquetPiece(f, a - int(starts[i]), b - int(starts[i])))
        partitions.append(tuple(pieces))
    return PartitionedInput("parquet", tuple(files), columns or (), tuple(partitions), total, rows_per)


def _plan_csv(files: list[str]) -> PartitionedInput:
    import dask.dataframe as dd

    # The header (and the delimiter) from the first file, read the way the in-memory path reads it.
    with open(files[0], "rb") as handle:
        head = handle.read(1 << 16)
    first_line = head.decode("utf-8-sig", errors="replace").lstrip("\r\n").split("\n", 1)[0]
    counts = {sep: first_line.count(sep) for sep in (",", ";", "\t")}
    sep = "," if counts[","] or not any(counts.values()) else max(counts, key=lambda s: counts[s])
    columns = tuple(c.strip() for c in next(csv.reader([first_line.rstrip("\r")], delimiter=sep)))
    if not any(columns):
        raise TableProblem(f"{Path(files[0]).name!r} has no header line — the first line must name the columns",
                           control="file")
    frame = dd.read_csv(
        files,
        blocksize=CSV_BLOCK_BYTES,
        sep=sep,
        encoding="utf-8-sig",
        skipinitialspace=True,
        dtype=object,  # converted (and checked cell by cell) as the in-memory path does
        assume_missing=True,
    )
    return PartitionedInput("csv", tuple(files), columns, tuple(frame.to_delayed()), None, None)


def read_partition(partition: Any, columns: tuple[str, ...]) -> pd.DataFrame | dict[str, np.ndarray]:
    """The rows of one planned partition.

    Parquet: a dict column → NumPy array straight from Arrow (no pandas frame: one copy less on the hot path;
    nulls become NaN). CSV: the block's DataFrame (columns as strings, index reset).
    """
    if isinstance(partition, pd.DataFrame):
        frame = partition.reset_index(drop=True)
        frame.columns = [str(c) for c in frame.columns]
        return frame[list(columns)]
    import pyarrow as pa
    import pyarrow.parquet as pq

    pieces: list[dict[str, np.ndarray]] = []
    for piece in partition:
        pf = pq.ParquetFile(piece.path)
        meta = pf.metadata
        groups, first_row, row = [], None, 0
        for g in range(meta.num_row_groups):
            n = meta.row_group(g).num_rows
            if row < piece.stop and row + n > piece.start:
                groups.append(g)
                first_row = row if first_row is None else first_row
            row += n
        table = pf.read_row_groups(groups, columns=list(columns))
        table = table.slice(piece.start - first_row, piece.stop - piece.start)
        pieces.append({name: _column_values(table.column(name), pa) for name in columns})
    if len(pieces) == 1:
        return pieces[0]
    out: dict[str, np.ndarray] = {}
    for name in columns:
        parts = [p[name] for p in pieces]
        # Files may store a column with different types (numbers here, text there): then keep the cells as objects
        # and let the check convert them cell by cell, as the in-memory path does.
        same = all(p.dtype == np.float64 for p in parts)
        out[name] = np.concatenate(parts if same else [p.astype(object) for p in parts])
    return out


def _column_values(column: Any, pa: Any) -> np.ndarray:
    if pa.types.is_floating(column.type) or pa.types.is_integer(column.type):
        return column.to_numpy().astype(np.float64, copy=False)  # nulls → NaN
    return column.to_numpy()  # text, dates, booleans: converted and checked like the in-memory path


__all__ = [
    "CSV_BLOCK_BYTES",
    "DEFAULT_PARTITION_ROWS",
    "ParquetPiece",
    "PartitionedInput",
    "open_partitioned_input",
    "read_partition",
]
