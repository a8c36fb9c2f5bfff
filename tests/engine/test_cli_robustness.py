"""Command-line robustness (issue 15 §5 item 7): Ctrl-C keeps the finished part of a sweep, output paths are
checked before any work (unwritable, the input itself or a hard link to it), extreme ε and δ give one line."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.output_files import check_output_path, same_file

ROOT = Path(__file__).resolve().parents[2]
GAUSS = ["--mechanism", "gaussian", "--b", "0.5", "--epsilon", "1", "--delta", "1e-5"]


@pytest.fixture
def table(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    path = tmp_path / "in.csv"
    pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60), "y": rng.integers(0, 2, 60)}).to_csv(
        path, index=False
    )
    return path


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--epsilon", "1e308", "epsilon of the gaussian mechanism must be in [1e-09, 10000]; got 1e+308"),
        ("--epsilon", "1e-300", "epsilon of the gaussian mechanism must be in [1e-09, 10000]; got 1e-300"),
        ("--delta", "1e-320", "delta of the gaussian mechanism must be 0 or at least 1e-300"),
    ],
)
def test_extreme_epsilon_and_delta_give_one_line(tmp_path, capsys, flag, value, message):
    args = dict(zip(GAUSS[::2], GAUSS[1::2], strict=True)) | {flag: value}
    code = main(["privatize", "--dataset", "togo-demo", *[x for kv in args.items() for x in kv], "--seed", "1",
                 "--output", str(tmp_path / "o.csv")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_projection_with_tiny_epsilon_is_refused_not_a_traceback(tmp_path, capsys):
    code = main(["privatize", "--dataset", "togo-demo", "--mechanism", "projection", "--b", "0.5", "--epsilon1",
                 "1e-300", "--delta1", "1e-5", "--epsilon2", "0.5", "--delta2", "1e-5", "--seed", "1",
                 "--output", str(tmp_path / "o.csv")])
    _, err = capsys.readouterr()
    assert code == 2 and "epsilon1 of the projection mechanism" in err and err.count("\n") == 1


def test_output_that_is_a_hard_link_to_the_input_is_refused_and_the_input_kept(tmp_path, capsys, table):
    link = tmp_path / "link.csv"
    os.link(table, link)
    before = table.read_bytes()
    code = main(["privatize", "--input", str(table), "--features", "a,b", *GAUSS, "--seed", "1",
                 "--output", str(link)])
    _, err = capsys.readouterr()
    assert code == 2 and "is the same file as --input" in err and err.count("\n") == 1
    assert table.read_bytes() == before
    code = main(["sweep", "--dataset", str(table), "--target", "y", "--output", str(link), "--seed", "1"])
    _, err = capsys.readouterr()
    assert code == 2 and "is the same file as --dataset" in err and table.read_bytes() == before


def test_unwritable_output_is_refused_before_any_work(capsys, table):
    started = time.perf_counter()
    code = main(["sweep", "--dataset", "togo-demo", "--preset", "quick", "--seed", "1", "--output", "/proc/o.csv"])
    _, err = capsys.readouterr()
    assert code == 2 and "cannot be written" in err and err.count("\n") == 1, err
    assert time.perf_counter() - started < 3.0  # refused up front, not after a sweep
    code = main(["privatize", "--input", str(table), "--features", "a,b", *GAUSS, "--output", "/proc/o.csv"])
    _, err = capsys.readouterr()
    assert code == 2 and "cannot be written" in err


def test_check_output_path_units(tmp_path, table):
    assert same_file(table, table) and not same_file(table, tmp_path / "none.csv")
    assert check_output_path(tmp_path / "new.csv", inputs=[("--input", table)]) == tmp_path / "new.csv"
    assert not (tmp_path / "new.csv").exists()  # the check creates nothing
    from engine.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="is a folder"):
        check_output_path(tmp_path)
    with pytest.raises(InvalidParameterError, match="does not exist"):
        check_output_path(tmp_path / "missing" / "o.csv")
    symlink = tmp_path / "sym.csv"
    symlink.symlink_to(table)
    with pytest.raises(InvalidParameterError, match="same file as --input"):
        check_output_path(symlink, inputs=[("--input", table)])


@pytest.mark.slow  # a real process and a real SIGINT (≈ 5–10 s)
def test_ctrl_c_during_sweep_writes_the_partial_table_and_one_line(tmp_path):
    out = tmp_path / "sweep.csv"
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "sweep", "--dataset", "togo-demo", "--preset", "quick", "--mechanism",
         "gaussian", "--seed", "1", "--output", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    seen = []
    while True:  # wait until two cells have finished
        line = proc.stderr.readline()
        seen.append(line)
        if not line or line.startswith("[2/"):
            break
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and stdout == ""
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: the sweep was cancelled after") and "rows written to" in last
    written = pd.read_csv(out)
    assert 2 <= len(written) < 90


@pytest.mark.parametrize("epsilon", ["1e-300", "1e-12"])
def test_blob_experiment_extreme_epsilon_gives_one_line(capsys, epsilon):
    code = main(["blob-experiment", "--d", "3", "--k", "2", "--epsilon", epsilon, "--reps", "1"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "epsilon of the jl-laplace mechanism" in err


def test_mechanism_constructors_refuse_parameters_that_overflow():
    from engine.errors import InvalidParameterError
    from engine.mechanisms.jl_laplace import JLLaplace
    from engine.mechanisms.private_projection import PrivateProjection

    with pytest.raises(InvalidParameterError, match="epsilon1 of the projection mechanism"):
        PrivateProjection(b=0.5, epsilon1=1e-300, delta1=1e-5, epsilon2=0.5, delta2=1e-5)
    with pytest.raises(InvalidParameterError, match="delta2 of the projection mechanism"):
        PrivateProjection(b=0.5, epsilon1=1.0, delta1=1e-5, epsilon2=0.5, delta2=1e-320)
    with pytest.raises(InvalidParameterError, match="epsilon of the jl-laplace mechanism"):
        JLLaplace(k=5, epsilon=1e-300, d=3)


@pytest.mark.slow  # a real process and a real SIGINT (≈ 5 s)
def test_ctrl_c_stops_a_long_vetted_release_within_seconds(tmp_path):
    """Issue 35 item 8: the default (OpenDP) release draws its noise in chunks and looks at Ctrl-C between them.
    A release announced as taking about a minute or more stops within a few seconds of Ctrl-C, says so in one line,
    exits 130 and writes nothing (before: one uninterruptible call, 138 s on 200,000 rows)."""
    from engine.cli.privatize import ANNOUNCE_SECONDS
    from engine.mechanisms.samplers import OPENDP_SECONDS_PER_VALUE, available_cores

    rows = int(ANNOUNCE_SECONDS * 1.5 * available_cores() / OPENDP_SECONDS_PER_VALUE / 15)  # announced: ≥ 90 s
    table = tmp_path / "big.parquet"
    pd.DataFrame(np.random.default_rng(0).normal(size=(rows, 15)), columns=[f"c{j}" for j in range(15)]).to_parquet(table)
    out = tmp_path / "private.csv"
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "privatize", "--input", str(table), "--features",
         ",".join(f"c{j}" for j in range(15)), *GAUSS, "--output", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    announced = proc.stderr.readline()
    assert announced.startswith("note: OpenDP's vetted sampler draws about"), announced
    assert "Ctrl-C stops it" in announced
    time.sleep(2.0)  # into the chunks (preparing 750,000 rows takes about a second)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)  # a hang guard: the whole release is 90 s or more of wall time
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # What the command spent in all (CPU, so a loaded machine does not change it): imports, preparing, 2 s of chunks
    # on every core and the chunks in flight when Ctrl-C came — a few CPU seconds; the whole release would take
    # ANNOUNCE_SECONDS × 1.5 × cores ≥ 90 CPU s.
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and stdout == ""
    assert stderr.strip().splitlines()[-1] == ("error: the release was stopped (Ctrl-C) before its noise was "
                                               "complete; nothing was written")
    assert spent < 4.0 + 2.0 * 2.5 * available_cores(), spent  # a stopped release, not a finished one (≥ 90 CPU s)
    assert not out.exists() and not list(tmp_path.glob("private.csv*"))


def _as_from_a_terminal() -> None:
    """In the child before exec: SIGINT as a shell started from a terminal gives it (default action, not blocked) —
    not whatever this test process inherited or was left with by an earlier test in the same worker (a blocked or
    ignored SIGINT is inherited across exec, and Python installs no KeyboardInterrupt handler over an ignored one)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _session_members(sid: int) -> list[str]:
    """Processes (alive or not yet reaped) whose session is ``sid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:
            found.append(f"{stat.parent.name} ({fields[0]})")
    return found


@pytest.mark.slow  # a real local cluster (≈ 5 s)
def test_a_dask_release_leaves_no_process_behind(tmp_path):
    """Issue 33 §2: after `privatize --engine dask` ends, nothing of its local cluster is left in its session (the
    resource tracker of the spawned workers used to outlive the command, orphaned)."""
    table = tmp_path / "t.parquet"
    pd.DataFrame(np.random.default_rng(0).normal(size=(2_000, 3)), columns=["a", "b", "c"]).to_parquet(table)
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "privatize", "--engine", "dask", "--workers", "1", "--input", str(table),
         "--features", "a,b,c", *GAUSS, "--sampler", "numpy", "--output", str(tmp_path / "out")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    _, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr
    assert _session_members(proc.pid) == []


@pytest.mark.slow  # a real local cluster, a real Ctrl-C (≈ 15 s)
def test_ctrl_c_stops_a_vetted_dask_release_and_leaves_nothing_behind(tmp_path):
    """Issue 35 item 8 on Dask: Ctrl-C in a terminal (SIGINT to the whole process group, the workers too) during the
    vetted release pass stops it — the partition tasks see their staging folder gone between noise chunks — with one
    line and exit 130: no traceback from the workers, no output or staging folder, no process left in the session.
    The release would take over a minute (9 million values at about 16 µs each on 2 cores); the 60 s wait is only a
    guard against a hang (it stops in a few seconds)."""
    rows = 600_000
    table = tmp_path / "big.parquet"
    pd.DataFrame(np.random.default_rng(0).normal(size=(rows, 15)), columns=[f"c{j}" for j in range(15)]).to_parquet(table)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "privatize", "--engine", "dask", "--workers", "2", "--input", str(table),
         "--features", ",".join(f"c{j}" for j in range(15)), *GAUSS, "--normalize", "clip", "--no-standardize",
         "--partition-rows", "150000", "--output", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=_as_from_a_terminal,
    )
    seen = []
    while not seen or (seen[-1] and not seen[-1].startswith("release:")):  # the release pass has started
        seen.append(proc.stderr.readline())
    assert seen[-1].startswith("release:"), seen
    time.sleep(2.0)  # the workers are drawing noise
    os.killpg(proc.pid, signal.SIGINT)
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # a hang: end it, and say what the command printed
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"Ctrl-C did not stop the release within 60 s; it printed: {''.join(seen)}{stderr}")
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr and stdout == "", stderr
    assert stderr.strip().splitlines()[-1] == "error: interrupted (Ctrl-C); no output was written"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.parquet"]  # no output, no staging folder
    assert _session_members(proc.pid) == []


def test_a_table_too_large_for_memory_is_refused_up_front_with_the_dask_engine_named(tmp_path, capsys, monkeypatch):
    """Issue 33 §3: a Parquet table whose in-memory release would not fit (its size read from the file's metadata)
    is refused before it is read, in one line that names --engine dask."""
    import types

    import psutil

    from engine.release import in_memory_release_bytes

    table = tmp_path / "t.parquet"
    pd.DataFrame(np.random.default_rng(0).normal(size=(5_000, 3)), columns=["a", "b", "c"]).to_parquet(table)
    need = in_memory_release_bytes(5_000, 3, by_column=True)  # named number columns: prepared column by column
    monkeypatch.setattr(psutil, "virtual_memory", lambda: types.SimpleNamespace(available=need - 1))
    out = tmp_path / "o.csv"
    code = main(["privatize", "--input", str(table), "--features", "a,b,c", *GAUSS, "--output", str(out)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "--engine dask" in err and "5,000 rows × 3 columns" in err, err
    assert "this machine releases up to about 4,999 rows of 3 columns in memory" in err, err  # where to switch
    assert not out.exists()
    monkeypatch.setattr(psutil, "virtual_memory", lambda: types.SimpleNamespace(available=need))
    assert main(["privatize", "--input", str(table), "--features", "a,b,c", *GAUSS, "--sampler", "numpy",
                 "--output", str(out)]) == 0
