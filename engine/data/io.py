r"""Reading a user's table: :func:`load_table` for CSV or Parquet from a path, bytes or a binary file.

Nothing is written to disk; every malformed file, and every file over the size limit, becomes a
:class:`~engine.data.checks.TableProblem` (a :class:`~engine.errors.DataValidationError`) with a plain message.

What a caller lets a file decode into is bounded (:class:`DecodeLimits`; the dashboard sets them, the command line
reads whole files): a Parquet file is checked from its metadata before any data is read — columns, rows × columns
and the uncompressed size — and then read one row group at a time with text columns kept dictionary-encoded until
their decoded size is known, so a 266 KB file of 30 million rows (a decompression bomb) is refused without decoding
a row; a CSV's header is checked before anything is parsed and its rows are counted while they are scanned.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from engine.data.checks import MIN_ROWS, TableProblem, _file_error
from engine.validation import check_interval

__all__ = ["CSV_EXTENSIONS", "DEFAULT_MAX_BYTES", "PARQUET_EXTENSIONS", "DecodeLimits", "load_table"]

#: Default upload size limit of :func:`load_table` callers (the dashboard states it next to the uploader).
DEFAULT_MAX_BYTES = 200 * 1024 * 1024

CSV_EXTENSIONS = frozenset({".csv", ".txt", ".tsv", ""})
PARQUET_EXTENSIONS = frozenset({".parquet", ".pq", ".parq"})


@dataclass(frozen=True)
class DecodeLimits:
    """How much one file may decode into; None = no limit.

    Attributes
    ----------
    columns : int, optional
        Most columns.
    cells : int, optional
        Most rows × columns (checked from a Parquet file's metadata before reading, and while a CSV is scanned).
    decoded_bytes : int, optional
        Most bytes of decoded values (Parquet: the metadata's uncompressed size first, then, row group by row
        group, 8 bytes per value plus the bytes of every text value once expanded from its dictionary).
    """

    columns: int | None = None
    cells: int | None = None
    decoded_bytes: int | None = None

    def __post_init__(self) -> None:
        for name in ("columns", "cells", "decoded_bytes"):
            value = getattr(self, name)
            if value is not None:
                check_interval(name, value, 1, None)


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


def load_table(source: Any, *, filename: str | None = None, max_bytes: int | None = None,
               limits: DecodeLimits | None = None) -> pd.DataFrame:
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
    limits : DecodeLimits, optional
        Reject files that would decode into more columns, cells or bytes — before decoding them.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    TableProblem
        (a :class:`~engine.errors.DataValidationError`, ``control="file"``) for a missing, empty, too large,
        binary, badly encoded, ragged or otherwise unreadable file, or one beyond ``limits``, with a message saying
        how to fix it.

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
    limits = limits or DecodeLimits()
    label = f"'{name}'" if name else "the uploaded data"
    if not data.strip():
        raise TableProblem(
            f"{label} is empty — choose a file with a header row and at least {MIN_ROWS} data rows", control="file"
        )
    ext = Path(name).suffix.lower() if name else ""
    if data[:4] == b"PAR1":
        frame = _read_parquet(label, data, limits)
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
        frame = _read_csv(label, data, limits)
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


def _too_wide(label: str, columns: int, limit: int) -> TableProblem:
    return TableProblem(
        f"{label} has {columns:,} columns; this app works with at most {limit:,} (the attacks and the profile grow "
        "with every column) — keep only the columns you need (features, target, program columns), or run the "
        "release on the full table with 'python -m engine privatize'",
        control="file",
    )


def _too_many_cells(label: str, rows: int, columns: int, limit: int, *, at_least: bool = False) -> TableProblem:
    return TableProblem(
        f"{label} holds {'at least ' if at_least else ''}{rows:,} rows × {columns:,} columns = "
        f"{rows * columns:,} values, above this app's limit of {limit:,} — use a sample of the rows here, or run the "
        "full release with 'python -m engine privatize --engine dask'",
        control="file",
    )


def _too_much_decoded(label: str, size: int, limit: int, *, at_least: bool = False) -> TableProblem:
    return TableProblem(
        f"{label} decodes into {'more than ' if at_least else ''}{_megabytes(size)}, above this app's limit of "
        f"{_megabytes(limit)} (it is compressed far more than a table usually is) — use a sample of the rows "
        "here, or run the full release with 'python -m engine privatize --engine dask'",
        control="file",
    )


def _read_csv(label: str, data: bytes, limits: DecodeLimits) -> pd.DataFrame:
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
                if limits.columns is not None and len(header) > limits.columns:
                    raise _too_wide(label, len(header), limits.columns)
                rows = 0
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
            rows += 1
            if limits.cells is not None and rows * len(header) > limits.cells:
                raise _too_many_cells(label, rows, len(header), limits.cells, at_least=True)
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


def _read_parquet(label: str, data: bytes, limits: DecodeLimits) -> pd.DataFrame:
    import pyarrow  # pandas' Parquet engine; imported here to keep module import light
    import pyarrow.parquet

    def unreadable(exc: BaseException) -> TableProblem:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return _file_error(label, "Parquet", reason, "export it again as Parquet or as CSV")

    try:
        # One thread: a refused file must not leave Arrow's thread pool holding objects that are torn down at
        # interpreter exit (seen as "terminate called without an active exception" after the one-line error).
        meta = pyarrow.parquet.ParquetFile(io.BytesIO(data)).metadata
        schema = meta.schema.to_arrow_schema()
    except (pyarrow.ArrowException, OSError, ValueError, TypeError) as exc:
        raise unreadable(exc) from None
    nested = [f.name for f in schema if pyarrow.types.is_nested(f.type)]
    if nested:  # lists, structs and maps are not table cells a feature can hold
        shown = ", ".join(repr(n) for n in nested[:5]) + (f" and {len(nested) - 5} more" if len(nested) > 5 else "")
        raise _file_error(
            label, "Parquet", f"column(s) {shown} hold nested values (lists, structs or maps), not one value per cell",
            "flatten them into one column per value, or leave them out of the export",
        )
    rows, columns = int(meta.num_rows), len(schema)
    # From the metadata, before any value is decoded: the decompression bomb (a small file of millions of rows).
    if limits.columns is not None and columns > limits.columns:
        raise _too_wide(label, columns, limits.columns)
    if limits.cells is not None and rows * columns > limits.cells:
        raise _too_many_cells(label, rows, columns, limits.cells)
    if limits.decoded_bytes is not None:
        uncompressed = sum(int(meta.row_group(i).total_byte_size) for i in range(meta.num_row_groups))
        if uncompressed > limits.decoded_bytes:
            raise _too_much_decoded(label, uncompressed, limits.decoded_bytes)
    texts = [f.name for f in schema
             if pyarrow.types.is_string(f.type) or pyarrow.types.is_large_string(f.type)
             or pyarrow.types.is_binary(f.type) or pyarrow.types.is_large_binary(f.type)]
    try:
        # Text columns stay dictionary-encoded while read, so their decoded size is known before it is spent.
        parquet = pyarrow.parquet.ParquetFile(io.BytesIO(data), read_dictionary=texts)
        parts: list[Any] = []
        decoded = 0
        for i in range(parquet.num_row_groups):
            part = parquet.read_row_group(i, use_threads=False)
            decoded += _decoded_size(part)
            if limits.decoded_bytes is not None and decoded > limits.decoded_bytes:
                del part, parts
                raise _too_much_decoded(label, decoded, limits.decoded_bytes, at_least=True)
            parts.append(_undictionary(part, schema))
        table = pyarrow.concat_tables(parts) if parts else schema.empty_table()
        del parts
        # Arrow's buffers are released column by column as pandas takes them, and no consolidated 2-D copy is made:
        # the table is held once, not three times, while it is converted (issue 33 §3).
        return table.to_pandas(use_threads=False, self_destruct=True, split_blocks=True)
    except TableProblem:
        raise
    except (pyarrow.ArrowException, OSError, ValueError, TypeError) as exc:
        raise unreadable(exc) from None


def _decoded_size(table: Any) -> int:
    """Bytes of ``table``'s values once decoded: Arrow's buffers, with every dictionary-encoded text value counted
    at its full length each time it occurs (what decoding the dictionary would allocate)."""
    import pyarrow
    import pyarrow.compute as pc

    size = 0
    for column in table.columns:
        for chunk in column.chunks:
            if pyarrow.types.is_dictionary(chunk.type):
                lengths = pc.binary_length(chunk.dictionary)
                expanded = pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0
                size += int(expanded) + 8 * len(chunk)
            else:
                size += int(chunk.nbytes)
    return size


def _undictionary(table: Any, schema: Any) -> Any:
    """``table`` with its dictionary-encoded text columns decoded back to the file's own types."""
    import pyarrow

    arrays = [column.cast(schema.field(i).type) if pyarrow.types.is_dictionary(column.type) else column
              for i, column in enumerate(table.columns)]
    return pyarrow.Table.from_arrays(arrays, schema=schema)
