"""CSV export that spreadsheet programs cannot execute: formula-injection-safe cells and headers.

A cell or a column name that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as a
formula by Excel, LibreOffice and Google Sheets when the CSV is opened (``=cmd|' /C calc'!A0``,
``=HYPERLINK("http://…")``, ``@SUM(A1:A9)``). Following the OWASP recommendation, such TEXT is prefixed with a single
quote, which spreadsheets display as text. Numbers are written as numbers: ``-1.5`` in a numeric column stays
``-1.5`` (only strings are neutralised, so a negative number is never altered), and so does text that is exactly a
decimal number (``"-1.5"``, ``"+3e-5"`` in a text column: a spreadsheet reads it as that number, nothing else).

Every CSV the Studio writes goes through this module — the command line's outputs through :func:`write_safe_csv`
(atomically, :mod:`engine.output_files`), the dashboard's downloads through :func:`safe_csv_bytes`.

References
----------
.. [1] OWASP, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from engine.output_files import write_bytes, write_with

__all__ = ["FORMULA_PREFIXES", "neutralise_cell", "safe_csv_bytes", "safe_frame", "write_safe_csv"]

#: First characters that make a spreadsheet treat a cell as a formula (OWASP).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
#: Text that is exactly a decimal number: a spreadsheet reads it as that number, so it is left as it is.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def neutralise_cell(value: Any) -> Any:
    """``value`` with a leading single quote if it is text starting with a formula character; else unchanged.

    >>> neutralise_cell("=HYPERLINK(\\"http://x\\")"), neutralise_cell("@SUM(A1:A9)"), neutralise_cell("plain")
    ('\\'=HYPERLINK("http://x")', "'@SUM(A1:A9)", 'plain')
    >>> neutralise_cell(-1.5), neutralise_cell("-1.5"), neutralise_cell("-2+3"), neutralise_cell("-North")
    (-1.5, '-1.5', "'-2+3", "'-North")
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names are neutralised (numeric columns untouched)."""
    if not isinstance(frame, pd.DataFrame):
        from engine.errors import InvalidParameterError

        raise InvalidParameterError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
    columns = {}
    for i in range(frame.shape[1]):
        col = frame.iloc[:, i]
        if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            columns[i] = col.reset_index(drop=True)
        else:
            columns[i] = col.astype(object).map(neutralise_cell).reset_index(drop=True)
    out = pd.DataFrame(columns, index=range(len(frame)))
    out.columns = [neutralise_cell(str(c)) for c in frame.columns]
    return out


def safe_csv_bytes(frame: pd.DataFrame) -> bytes:
    """UTF-8 CSV bytes of ``frame`` with formula injection neutralised (for downloads and files).

    Examples
    --------
    >>> frame = pd.DataFrame({"=cmd|' /C calc'!A0": [-1.5, 2.0], "note": ["@SUM(A1:A9)", "ok"]})
    >>> safe_csv_bytes(frame).decode().splitlines()
    ["'=cmd|' /C calc'!A0,note", "-1.5,'@SUM(A1:A9)", '2.0,ok']
    """
    # CRLF line ends (RFC 4180): then a field holding a CR or an LF is always quoted by the csv writer (with "\n"
    # alone, a bare CR inside a header or cell would be written unquoted and split the row when read back).
    return safe_frame(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def write_safe_csv(frame: pd.DataFrame, path, *, flag: str = "--output", overwrite: bool = False) -> None:
    """Write :func:`safe_csv_bytes` of ``frame`` to ``path`` atomically (:func:`engine.output_files.write_bytes`:
    a temporary file renamed into place; an existing file is replaced only with ``overwrite``). A large table is
    written in blocks of rows: the same bytes, without the whole text in memory."""
    if not isinstance(frame, pd.DataFrame) or len(frame) <= _CSV_ROWS:
        write_bytes(path, safe_csv_bytes(frame), flag=flag, overwrite=overwrite)
        return

    def write(handle) -> None:  # the same bytes as safe_csv_bytes, written block by block (issue 33 §3)
        for start in range(0, len(frame), _CSV_ROWS):
            block = safe_frame(frame.iloc[start:start + _CSV_ROWS])
            handle.write(block.to_csv(index=False, header=start == 0, lineterminator="\r\n").encode("utf-8"))

    write_with(path, write, flag=flag, overwrite=overwrite)


#: Rows per block of a large CSV output: its text is made and written a block at a time, not as one string.
_CSV_ROWS = 100_000
