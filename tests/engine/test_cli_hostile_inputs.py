"""``python -m engine privatize --input FILE`` over the hostile-input corpus (tests/hostile_inputs.py, issue 15 §4):
exit code 2 and one line on stderr for every unusable file, never a traceback."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main
from tests.hostile_inputs import hostile_files, write_corpus

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--features", "a,b,c", "--mechanism", "gaussian", "--b", "0.5", "--epsilon", "1", "--delta", "1e-5",
        "--seed", "1"]
#: Files whose columns a, b, c are numeric and usable (delimiter and byte-order-mark detection).
READABLE = frozenset({"bom.csv", "semicolons.csv", "tsv-as-csv.csv"})


@functools.cache
def corpus() -> dict[str, bytes]:
    return hostile_files(large=False)


@pytest.mark.parametrize("name", sorted(corpus()))
def test_every_corpus_file_gives_one_line_and_exit_code_2(name, tmp_path, capsys):
    path = tmp_path / name
    path.write_bytes(corpus()[name])
    code = main(["privatize", "--input", str(path), *ARGS, "--output", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err.strip().splitlines()
    if name in READABLE:
        assert code == 0
        return
    assert code == 2, (name, err)
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in err[0], (name, err)
    assert " — " in err[0] or "name the" in err[0], err  # names the fix


def test_the_corpus_through_the_real_command_line(tmp_path):
    """Two files through a subprocess: the process itself prints one line and exits with 2."""
    paths = {p.name: p for p in write_corpus(tmp_path / "corpus", large=False)}
    for name in ("nested.parquet", "nan-inf.csv"):
        proc = subprocess.run(
            [sys.executable, "-m", "engine", "privatize", "--input", str(paths[name]), *ARGS,
             "--output", str(tmp_path / "o.csv")],
            capture_output=True, text=True, cwd=ROOT, timeout=60,
        )
        assert proc.returncode == 2, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("where", ["flag", "file"])
def test_a_100000_character_column_name_is_shortened_in_the_error_line(where, tmp_path, capsys):
    """Issue 35 item 9: the name is neither echoed whole nor split over lines; the fix stays readable."""
    name = "n" * 100_000
    path = tmp_path / "wide-name.csv"
    header = f"{name},b,c" if where == "file" else "a,b,c"
    path.write_text(header + "\n" + "\n".join(f"{i},{i % 7},{i % 5}" for i in range(40)) + "\n", encoding="utf-8")
    features = "x,b" if where == "file" else f"{name},b"
    code = main(["privatize", "--input", str(path), "--features", features, *ARGS[2:],
                 "--output", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: "), err[:300]
    assert len(err) < 2_100 and "characters left out]" in err and "n" * 201 not in err, err[:300]


def test_a_100000_character_argument_is_shortened_in_argparse_errors(capsys):
    with pytest.raises(SystemExit) as info:
        main(["privatize", "--dataset", "togo-demo", "--mechanism", "gaussian", "--b", "x" * 100_000,
              "--output", "o.csv"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and len(err) < 2_100 and "characters left out]" in err
