"""A corpus of malformed and hostile input files, generated on demand (issue 15 §4) — nothing binary is kept in git.

:func:`hostile_files` returns ``{name: bytes}``; :func:`write_corpus` writes them into a directory. Every entry is a
file a user could pick in the Data page's uploader or pass to ``python -m engine privatize --input``; none of them
may crash the app or the command line. ``LARGE`` names the entries that are big (kept out of quick loops).
"""

from __future__ import annotations

import gzip
import io
import struct
import zlib
from pathlib import Path

__all__ = ["HOSTILE_OUTPUTS", "LARGE", "MARKDOWN_COLUMNS", "hostile_files", "make_hostile_output",
           "parquet_bomb", "parquet_dictionary_bomb", "valid_csv", "write_corpus"]

#: Column names that Streamlit's Markdown would render (an image fetched from an address, bold text).
MARKDOWN_COLUMNS = ("![px](http://127.0.0.1:9/t.png)", "**Approved by**")
#: Entries too large for a quick loop (generated, never committed): big files, and small files that decode into
#: gigabytes (decompression bombs; the command line reads whole files, the dashboard refuses them).
LARGE = frozenset({"over-limit.csv", "parquet-bomb.parquet", "parquet-dictionary-bomb.parquet"})


def valid_csv(rows: int = 40, *, seed: int = 0, names: tuple[str, ...] = ("income", "age", "spend", "size")) -> bytes:
    """A small valid numeric table (deterministic)."""
    lines = [",".join(names)]
    for i in range(rows):
        lines.append(",".join(str((i * 7 + j * 13 + seed) % 97 + j) for j in range(len(names))))
    return ("\n".join(lines) + "\n").encode()


def _numeric_rows(rows: int, cols: int, start: int = 0) -> list[str]:
    return [",".join(str((i * 31 + j * 17 + start) % 89) for j in range(cols)) for i in range(rows)]


def _png() -> bytes:
    """A 1×1 PNG image (valid file signature and chunks)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
            + chunk(b"IEND", b""))


def _parquet(frame_builder) -> bytes:
    import pandas as pd

    buf = io.BytesIO()
    frame_builder(pd).to_parquet(buf, index=False)
    return buf.getvalue()


def parquet_bomb(rows: int = 30_000_000) -> bytes:
    """A Parquet file of ``rows`` rows of one small-integer column: about 100 KB that decode into ``rows`` values
    (issue 35 item 6: 30 million rows in 266 KB took the server from 1.2 to 3 GB)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    chunk = pa.array(np.zeros(1_000_000, dtype=np.int8))  # one chunk, referenced many times: 1 MB in memory
    table = pa.table({"a": pa.chunked_array([chunk] * (rows // 1_000_000))})
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=10_000_000, compression="zstd")
    return buf.getvalue()


def parquet_dictionary_bomb(rows: int = 2_000, value_bytes: int = 1_000_000) -> bytes:
    """A Parquet file of ``rows`` rows whose text column repeats one ``value_bytes``-long value: about 6 KB on disk
    and 1 MB uncompressed (what the metadata says), but ``rows × value_bytes`` (2 GB) once the dictionary is
    expanded."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array(["x" * value_bytes]))
    buf = io.BytesIO()
    pq.write_table(pa.table({"t": text, "n": np.arange(rows)}), buf, compression="zstd")
    return buf.getvalue()


def hostile_files(*, large: bool = True) -> dict[str, bytes]:
    """Every corpus entry as ``{file name: content}`` (``large=False`` leaves out :data:`LARGE`)."""
    header = "a,b,c"
    ok = "\n".join(_numeric_rows(40, 3))
    files: dict[str, bytes] = {
        "empty.csv": b"",
        "whitespace-only.csv": b"   \n\n  \n",
        "header-only.csv": b"a,b,c\n",
        "one-row.csv": b"a,b,c\n1,2,3\n",
        "nineteen-rows.csv": ("a,b,c\n" + "\n".join(_numeric_rows(19, 3)) + "\n").encode(),
        "binary.csv": bytes(range(256)) * 8,
        "image-renamed.csv": _png(),
        "latin1.csv": ("name,größe,wert\n" + "\n".join(f"é{i},{i},{i * 2}" for i in range(40)) + "\n").encode("latin-1"),
        "utf16.csv": (header + "\n" + ok + "\n").encode("utf-16"),
        "bom.csv": b"\xef\xbb\xbf" + (header + "\n" + ok + "\n").encode(),
        "semicolons.csv": ("a;b;c\n" + "\n".join(r.replace(",", ";") for r in _numeric_rows(40, 3)) + "\n").encode(),
        "text-only.csv": ("name,city,remark\n" + "\n".join(f"n{i},c{i},r{i}" for i in range(40)) + "\n").encode(),
        "nan-inf.csv": ("a,b,c\n" + "\n".join(f"{i},{'inf' if i % 3 else '-inf'},nan" for i in range(40)) + "\n").encode(),
        "all-nan.csv": ("a,b,c\n" + "\n".join("nan,nan,nan" for _ in range(40)) + "\n").encode(),
        "huge-1e308.csv": ("a,b,c\n" + "\n".join(f"1e308,{-1e308 if i % 2 else 1e308},{i}" for i in range(40))
                           + "\n").encode(),
        "constant-columns.csv": ("a,b,c\n" + "\n".join("5,5,5" for _ in range(40)) + "\n").encode(),
        "duplicate-columns.csv": ("a,a,b\n" + ok + "\n").encode(),
        "empty-column-names.csv": (",,\n" + ok + "\n").encode(),
        "long-column-name.csv": (("x" * 10_000) + ",b,c\n" + ok + "\n").encode(),
        "script-column-name.csv": ('"<script>alert(1)</script>",<img src=x onerror=alert(1)>,c\n' + ok + "\n").encode(),
        "markdown-column-names.csv": (",".join(f'"{c}"' for c in MARKDOWN_COLUMNS) + ",c\n" + ok + "\n").encode(),
        "formula-injection.csv": ("\"=cmd|' /C calc'!A0\",\"=HYPERLINK(\"\"http://x\"\")\",@SUM(A1:A9)\n"
                                  + "\n".join(f"=1+{i},+{i},-{i}" for i in range(40)) + "\n").encode(),
        "five-thousand-columns.csv": (",".join(f"c{j}" for j in range(5000)) + "\n"
                                      + "\n".join(_numeric_rows(25, 5000)) + "\n").encode(),
        "ragged-rows.csv": b"a,b\n1,2\n3\n4,5,6,7\n",
        "unclosed-quote.csv": b'a,b\n"1,2\n3,4\n',
        "gzip-disguised.csv": gzip.compress((header + "\n" + ok + "\n").encode()),
        "dates.csv": ("day,when\n" + "\n".join(f"2024-01-{i % 28 + 1:02d},2024-02-{i % 28 + 1:02d}"
                                               for i in range(40)) + "\n").encode(),
        "booleans.csv": ("x,y\n" + "\n".join(f"{'true' if i % 2 else 'false'},{'yes' if i % 3 else 'no'}"
                                             for i in range(40)) + "\n").encode(),
        "mixed-types.csv": ("a,b\n" + "\n".join(f"{i if i % 2 else 'x' + str(i)},{i}.5" for i in range(40))
                            + "\n").encode(),
        "null-bytes.csv": ("a,b\n" + "\n".join(f"{i}\x00,{i}" for i in range(40)) + "\n").encode(),
        "only-newlines.csv": b"\n" * 1000,
        "one-column.csv": ("a\n" + "\n".join(str(i % 7) for i in range(40)) + "\n").encode(),
        "tsv-as-csv.csv": ("a\tb\tc\n" + "\n".join(r.replace(",", "\t") for r in _numeric_rows(40, 3))
                           + "\n").encode(),
        "html-page.csv": b"<!DOCTYPE html><html><body><table><tr><td>1</td></tr></table></body></html>\n",
        "json-as-csv.csv": b'[{"a": 1, "b": 2}, {"a": 3, "b": 4}]\n',
        "corrupt.parquet": b"PAR1" + b"\x00garbage\x01" * 50 + b"PAR1",
        "truncated.parquet": _parquet(lambda pd: pd.DataFrame({"a": range(40), "b": range(40)}))[:60],
        "nested.parquet": _parquet(lambda pd: pd.DataFrame({"a": [[1, 2]] * 40, "b": [{"x": 1}] * 40})),
        "csv-named-parquet.parquet": (header + "\n" + ok + "\n").encode(),
        "unknown-extension.xlsx": (header + "\n" + ok + "\n").encode(),
        "deep-quotes.csv": ('a,b\n' + "\n".join('"' + '""' * 500 + f'",{i}' for i in range(40)) + "\n").encode(),
    }
    if large:
        files["parquet-bomb.parquet"] = parquet_bomb()
        files["parquet-dictionary-bomb.parquet"] = parquet_dictionary_bomb()
        row = ",".join(["123456789"] * 10) + "\n"
        files["over-limit.csv"] = (",".join(f"c{j}" for j in range(10)) + "\n").encode() + row.encode() * (
            51 * 1024 * 1024 // len(row) + 1)
    return files


def write_corpus(directory: Path, *, large: bool = True) -> list[Path]:
    """Write :func:`hostile_files` into ``directory``; return the paths (sorted by name)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, content in sorted(hostile_files(large=large).items()):
        path = directory / name
        path.write_bytes(content)
        paths.append(path)
    return paths


#: Hostile output paths (issue 35 items 2, 3, 9): name → what the one-line refusal says. Every command that writes
#: refuses each of them before any work, and nothing on disk changes (tests/engine/test_output_files.py).
HOSTILE_OUTPUTS = {
    "existing-file": "exists already — add --overwrite",
    "symlink-to-a-file": "is a symbolic link",
    "dangling-symlink": "is a symbolic link",
    "symlink-to-the-input": "is the same file as",
    "hard-link-to-the-input": "is the same file as",
    "is-the-input": "is the same file as",
    "dot-dot-spelling-of-the-input": "is the same file as",
    "a-folder": "is a folder",
    "missing-folder": "does not exist",
    "unwritable-folder": "cannot be written",
    "name-too-long": "is too long",
}


def make_hostile_output(name: str, folder: Path, suffix: str, *, input_path: Path) -> tuple[Path, dict[Path, bytes]]:
    """Create the situation :data:`HOSTILE_OUTPUTS` names in ``folder``; return the output path to give the command
    and the files (with their content) that must be left unchanged. ``input_path`` is the command's input."""
    victims = {input_path: input_path.read_bytes()}
    output = folder / f"out{suffix}"
    if name == "existing-file":
        output.write_bytes(b"an earlier result\n")
        victims[output] = output.read_bytes()
    elif name == "symlink-to-a-file":
        victim = folder / "victim.txt"
        victim.write_bytes(b"someone else's file\n")
        output.symlink_to(victim)
        victims[victim] = victim.read_bytes()
    elif name == "dangling-symlink":
        output.symlink_to(folder / "nowhere.txt")
    elif name == "symlink-to-the-input":
        output.symlink_to(input_path)
    elif name == "hard-link-to-the-input":
        import os

        os.link(input_path, output)
    elif name == "is-the-input":
        output = input_path
    elif name == "dot-dot-spelling-of-the-input":
        (folder / "sub").mkdir()
        output = folder / "sub" / ".." / input_path.name
    elif name == "a-folder":
        output.mkdir()
    elif name == "missing-folder":
        output = folder / "no-such-folder" / f"out{suffix}"
    elif name == "unwritable-folder":
        output = Path("/proc") / f"out{suffix}"  # unwritable even for root
    elif name == "name-too-long":
        output = folder / ("x" * 300 + suffix)
    else:
        raise KeyError(name)
    return output, victims
