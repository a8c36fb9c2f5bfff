r"""Reading a user's table: :func:`load_table` for CSV or Parquet from a path, bytes or a binary file.

Nothing is written to disk; every malformed file, and every file over the size limit, becomes a
:class:`~engine.data.checks.TableProblem` (a :class:`~engine.errors.DataValidationError`) with a plain message.
"""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from engine.data.checks import MIN_ROWS, TableProblem, _file_error
from engine.validation import check_interval

__all__ = ["CSV_EXTENSIONS", "DEFAULT_MAX_BYTES", "PARQUET_EXTENSIONS", "load_table"]

#: Default upload size limit of :func:`load_table` callers (the dashboard states it next to the uploader).
DEFAULT_MAX_BYTES = 200 * 1024 * 1024

CSV_EXTENSIONS = frozenset({".csv", ".txt", ".tsv", ""})
PARQUET_EXTENSIONS = frozenset({".parquet", ".pq", ".parq"})


# ----------------------------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------------------------


def _megabytes(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / 1024 / 1024:.1f} MB"
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"


def _read_source(source: Any, filename: str | None, max_bytes: int | None) -> tuple[str | None, bytes]:
    if max_bytes is not None:
        max_bytes = int(check_interval("max_bytes", max_bytes, 1, None))
    name = filename
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        name = name or path.name
        if not path.exists():
            raise TableProblem(f"there is no file at {str(path)!r} — check the path", control="file")
        if path.is_dir():
            raise TableProblem(f"{str(path)!r} is a folder, not a file — name the CSV or Parquet file", control="file")
        size = path.stat().st_size
        if max_bytes is not None and size > max_bytes:
            raise _too_big(name, size, max_bytes)
        return name, path.read_bytes()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read() if max_bytes is None else source.read(max_bytes + 1)
        if isinstance(raw, str):
            raise TableProblem(
                "the file was opened as text; open it in binary mode ('rb') or pass its bytes", control="file"
            )
        data = bytes(raw)
        if name is None and isinstance(getattr(source, "name", None), str):
            name = os.path.basename(source.name)
    else:
        raise TableProblem(
            f"cannot read a table from {type(source).__name__}; pass a file path, the file's bytes or a binary "
            f"file object",
            control="file",
        )
    if max_bytes is not None and len(data) > max_bytes:
        raise _too_big(name, None if hasattr(source, "read") else len(data), max_bytes)
    return name, data


def _too_big(name: str | None, size: int | None, limit: int) -> TableProblem:
    """``size`` None means "more than the limit" (a stream read only up to the limit)."""
    label = f"'{name}'" if name else "the data"
    how_big = f"is {_megabytes(size)}, above" if size is not None else "is larger than"
    return TableProblem(
        f"{label} {how_big} the limit of {_megabytes(limit)} — use a sample of the rows here, or run the full "
        f"release with 'python -m engine privatize'",
        control="file",
    )


def load_table(source: Any, *, filename: str | None = None, max_bytes: int | None = None) -> pd.DataFrame:
    """Read a CSV or Parquet table from a path, bytes or a binary file object; nothing is written to disk.

    The format is chosen by the file name's extension (``.csv``/``.tsv``/``.txt`` or ``.parquet``/``.pq``) and
    the content (Parquet files start with ``PAR1``). CSV must be UTF-8 text (a byte-order mark is allowed);
    the delimiter is a comma, or a semicolon/tab if the header uses one. Column names become strings.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file object
        Where the table is. An uploaded file's bytes plus ``filename`` is what the dashboard passes.
    filename : str, optional
        Name used for the format and in messages (defaults to the path's or file object's name).
    max_bytes : int, optional
        Reject larger inputs (see :data:`DEFAULT_MAX_BYTES`).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    TableProblem
        (a :class:`~engine.errors.DataValidationError`, ``control="file"``) for a missing, empty, too large,
        binary, badly encoded, ragged or otherwise unreadable file, with a message saying how to fix it.

    Examples
    --------
    >>> load_table(b"a,b\\n1,2\\n3,4\\n", filename="x.csv").shape
    (2, 2)
    >>> load_table(b"a,b\\n1,2\\n3,4,5\\n", filename="x.csv")
    Traceback (most recent call last):
    ...
    engine.data.checks.TableProblem: could not read 'x.csv' as CSV: line 3 has 3 fields, expected 2 (as in the header) — fix that line or export the file again as CSV
    """
    name, data = _read_source(source, filename, max_bytes)
    label = f"'{name}'" if name else "the uploaded data"
    if not data.strip():
        raise TableProblem(
            f"{label} is empty — choose a file with a header row and at least {MIN_ROWS} data rows", control="file"
        )
    ext = Path(name).suffix.lower() if name else ""
    if data[:4] == b"PAR1":
        frame = _read_parquet(label, data)
    elif ext in PARQUET_EXTENSIONS:
        raise _file_error(
            label,
            "Parquet",
            "it does not start with the Parquet marker 'PAR1'",
            "export it again as Parquet, or as CSV with a .csv name",
        )
    elif data[:2] == b"PK":
        raise TableProblem(
            f"{label} is a ZIP archive or an Excel workbook, not a CSV or Parquet file — open it and save the "
            f"sheet as 'CSV UTF-8'",
            control="file",
        )
    elif data[:2] == b"\x1f\x8b":
        raise TableProblem(f"{label} is compressed (gzip) — decompress it and upload the CSV", control="file")
    elif ext in CSV_EXTENSIONS:
        frame = _read_csv(label, data)
    else:
        raise TableProblem(
            f"{label} has the unsupported file type {ext!r} — upload a CSV (.csv) or Parquet (.parquet) file",
            control="file",
        )
    frame.columns = [str(c) for c in frame.columns]
    if frame.shape[1] == 0:
        raise TableProblem(f"{label} has no columns — check that the first line is a header", control="file")
    if len(frame) == 0:
        raise TableProblem(
            f"{label} has a header but no data rows — add at least {MIN_ROWS} data rows", control="file"
        )
    return frame


_PANDAS_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _line_of(data: bytes, position: int) -> int:
    """1-based line number of a byte position."""
    return data.count(b"\n", 0, position) + 1


def _read_csv(label: str, data: bytes) -> pd.DataFrame:
    kind, fix = "CSV", "export the file again as CSV"
    nul = data.find(b"\x00")
    if nul >= 0:
        raise _file_error(
            label,
            kind,
            f"it contains binary data (a NUL byte on line {_line_of(data, nul)})",
            "export it again as CSV (UTF-8 text; UTF-16 files also look like this)",
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        raise _file_error(
            label,
            kind,
            f"line {line} contains the byte 0x{data[exc.start]:02x}, which is not UTF-8 text",
            "save the file with UTF-8 encoding (in Excel: 'CSV UTF-8')",
        ) from None
    first_line = text.lstrip("\r\n").split("\n", 1)[0]
    counts = {sep: first_line.count(sep) for sep in (",", ";", "\t")}
    sep = "," if counts[","] or not any(counts.values()) else max(counts, key=lambda s: counts[s])
    try:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
        header: list[str] | None = None
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if header is None:
                header = [h.strip() for h in row]
                seen: dict[str, int] = {}
                for i, h in enumerate(header):
                    if h in seen and h:
                        raise _file_error(
                            label,
                            kind,
                            f"the header names two columns {h!r} (columns {seen[h] + 1} and {i + 1})",
                            "rename one of them so every column name is unique",
                        )
                    seen[h] = i
                continue
            if len(row) != len(header):
                raise _file_error(
                    label,
                    kind,
                    f"line {reader.line_num} has {len(row)} field{'s' if len(row) != 1 else ''}, expected "
                    f"{len(header)} (as in the header)",
                    "fix that line or " + fix,
                )
    except csv.Error as exc:
        raise _file_error(label, kind, f"{exc} (near line {reader.line_num})", fix) from None
    try:
        return pd.read_csv(io.BytesIO(data), sep=sep, encoding="utf-8-sig", skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise TableProblem(f"{label} is empty — choose a file with a header row and data rows", control="file") from None
    except (pd.errors.ParserError, ValueError) as exc:
        message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        match = _PANDAS_FIELDS.search(message)
        if match:
            expected, line_text, saw = match.groups()
            message = f"line {line_text} has {saw} fields, expected {expected}"
        raise _file_error(label, kind, message, fix) from None


def _read_parquet(label: str, data: bytes) -> pd.DataFrame:
    import pyarrow  # pandas' Parquet engine; imported here to keep module import light
    import pyarrow.parquet

    try:
        # One thread: a refused file must not leave Arrow's thread pool holding objects that are torn down at
        # interpreter exit (seen as "terminate called without an active exception" after the one-line error).
        table = pyarrow.parquet.read_table(io.BytesIO(data), use_threads=False)
    except (pyarrow.ArrowException, OSError, ValueError, TypeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _file_error(label, "Parquet", reason, "export it again as Parquet or as CSV") from None
    nested = [f.name for f in table.schema if pyarrow.types.is_nested(f.type)]
    if nested:  # lists, structs and maps are not table cells a feature can hold
        del table  # nothing of Arrow's stays referenced from the error's traceback
        shown = ", ".join(repr(n) for n in nested[:5]) + (f" and {len(nested) - 5} more" if len(nested) > 5 else "")
        raise _file_error(
            label, "Parquet", f"column(s) {shown} hold nested values (lists, structs or maps), not one value per cell",
            "flatten them into one column per value, or leave them out of the export",
        )
    try:
        return table.to_pandas(use_threads=False)
    except (pyarrow.ArrowException, ValueError, TypeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _file_error(label, "Parquet", reason, "export it again as Parquet or as CSV") from None
