"""Every output of every command through one module (issue 35 items 2, 3 and 9): checked before any work, written
atomically, never through a link or over an input, never over an existing file without ``--overwrite``; a process
killed mid-write leaves the old file or none; leftovers of a killed write are cleaned by the next run.

The hostile output paths (symbolic links, dangling links, hard links, the input itself, existing files and folders)
are part of the hostile corpus (tests/hostile_inputs.py, :data:`HOSTILE_OUTPUTS`)."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.errors import InvalidParameterError
from engine.output_files import (
    PARTIAL_MARK,
    _host_tag,
    check_output_path,
    clean_leftovers,
    write_bytes,
    write_text,
    written_outputs,
)
from tests.hostile_inputs import HOSTILE_OUTPUTS, make_hostile_output

ROOT = Path(__file__).resolve().parents[2]
GAUSS = ["--mechanism", "gaussian", "--b", "0.5", "--epsilon", "1", "--delta", "1e-5"]
PRECIOUS = b"precious,content\n1,2\n"


@pytest.fixture
def table(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    path = tmp_path / "in.csv"
    pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60), "y": rng.integers(0, 2, 60)}).to_csv(
        path, index=False
    )
    return path


@pytest.fixture
def counts_table(tmp_path) -> Path:
    frame = pd.DataFrame({
        "region": np.repeat(['=HYPERLINK("http://127.0.0.1:9/x","click")', "+cmd|' /C calc'!A0", "@SUM(A1:A9)",
                             "-North", "\tTab", "plain"], 2),
        "period": np.tile([-1, 2], 6),
        "count": [90, 120, 80, 20, 15, 26, 3, 0, 5, 7, 40, 41],
    })
    path = tmp_path / "counts.csv"
    frame.to_csv(path, index=False)
    return path


def _command(kind: str, output: Path, table: Path, counts_table: Path) -> list[str]:
    """One command of every kind that writes, with ``output`` where it writes."""
    return {
        "privatize": ["privatize", "--input", str(table), "--features", "a,b", *GAUSS, "--seed", "1",
                      "--output", str(output)],
        "privatize-parquet": ["privatize", "--input", str(table), "--features", "a,b", *GAUSS, "--seed", "1",
                              "--output", str(output)],
        "save-config": ["privatize", "--input", str(table), "--features", "a,b", *GAUSS, "--seed", "1",
                        "--output", str(output.parent / "released-new.csv"), "--save-config", str(output)],
        "sweep": ["sweep", "--dataset", str(table), "--target", "y", "--preset", "quick", "--reps", "1",
                  "--b-values", "2", "--attacks", "singling_out", "--seed", "1", "--workers", "1",
                  "--output", str(output)],
        "counts": ["counts", "--input", str(counts_table), "--method", "postprocess", "--epsilon", "1",
                   "--public", "total", "--seed", "1", "--output", str(output)],
        "recommend": ["recommend", "--dataset", str(table), "--target-column", "y", "--target", "accuracy>=0.5",
                      "--mechanisms", "gaussian", "--b-values", "2", "--steps", "1", "--max-repetitions", "3",
                      "--output", str(output)],
    }[kind]


KINDS = ("privatize", "privatize-parquet", "save-config", "sweep", "counts", "recommend")
SUFFIX = {"privatize-parquet": ".parquet", "save-config": ".json", "recommend": ".json"}


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("hostile", sorted(HOSTILE_OUTPUTS))
def test_every_hostile_output_path_of_every_command_is_refused_before_any_work(kind, hostile, tmp_path, capsys,
                                                                             table, counts_table):
    """The hostile output corpus × every command that writes: one line, exit 2, nothing changed on disk."""
    output, victims = make_hostile_output(hostile, tmp_path, SUFFIX.get(kind, ".csv"),
                                          input_path=counts_table if kind == "counts" else table)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = _run(_command(kind, output, table, counts_table), capsys)
    assert code == 2, (hostile, kind, err)
    assert out == "" and err.count("\n") == 1 and err.startswith("error: ") and " — " in err, err
    assert HOSTILE_OUTPUTS[hostile] in err, (hostile, err)
    for path, content in victims.items():
        assert path.read_bytes() == content, (hostile, kind, path)  # nothing written through a link or over a file
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # and nothing new (no temporary file left)


@pytest.mark.parametrize("kind", KINDS)
def test_overwrite_replaces_an_existing_output_but_never_through_a_hard_link(kind, tmp_path, capsys, table,
                                                                           counts_table):
    """With --overwrite the name gets the new file; another hard link to the old file keeps the old content."""
    output = tmp_path / f"out{SUFFIX.get(kind, '.csv')}"
    output.write_bytes(PRECIOUS)
    other = tmp_path / "other-name-of-the-same-file"
    os.link(output, other)
    code, _, err = _run([*_command(kind, output, table, counts_table), "--overwrite"], capsys)
    assert code == 0, err
    assert other.read_bytes() == PRECIOUS  # the other name still holds the old file
    assert output.read_bytes() != PRECIOUS and os.stat(output).st_nlink == 1
    assert not [p for p in tmp_path.iterdir() if PARTIAL_MARK in p.name]


def test_counts_refuses_its_own_input_by_inode_and_keeps_it(tmp_path, capsys, counts_table):
    """Item 3: ``counts --input X.csv --output X.csv`` (also through another name of the same file, and with
    --overwrite) is refused and X is unchanged."""
    before = counts_table.read_bytes()
    alias = tmp_path / "alias.csv"
    os.link(counts_table, alias)
    base = ["counts", "--input", str(counts_table), "--method", "postprocess", "--epsilon", "1", "--seed", "1"]
    for output in (str(counts_table), str(alias), str(tmp_path / "." / "counts.csv")):
        for extra in ([], ["--overwrite"]):
            code, _, err = _run([*base, "--output", output, *extra], capsys)
            assert code == 2 and "is the same file as --input" in err and err.count("\n") == 1, err
    assert counts_table.read_bytes() == before


def test_counts_csv_neutralises_formula_region_names_and_keeps_numbers(tmp_path, capsys, counts_table):
    """Item 3: region names that spreadsheets would run as formulas get a leading quote; numbers (a negative
    period too) stay numbers."""
    out = tmp_path / "released.csv"
    code, _, err = _run(["counts", "--input", str(counts_table), "--method", "postprocess", "--epsilon", "1",
                         "--public", "total", "--seed", "1", "--output", str(out)], capsys)
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"), newline="")))
    assert rows[0] == ["region", "period", "replicate", "count"]
    regions = {r[0] for r in rows[1:]}
    assert regions == {"'=HYPERLINK(\"http://127.0.0.1:9/x\",\"click\")", "'+cmd|' /C calc'!A0", "'@SUM(A1:A9)",
                       "'-North", "'\tTab", "plain"}
    assert {r[1] for r in rows[1:]} == {"-1", "2"}  # a negative number stays a number
    for row in rows[1:]:
        for cell in row[1:]:
            float(cell)  # every count, period and replicate is a number


def test_counts_refuses_epsilon_outside_the_engines_range(tmp_path, capsys):
    """Item 9: ε = 1e-100 and 1e200 are outside engine.limits' range: one line, nothing written."""
    for eps, why in (("1e-100", "below 1e-9"), ("1e200", "beyond 1e4")):
        out = tmp_path / "o.csv"
        code, _, err = _run(["counts", "--dataset", "counties-demo", "--method", "postprocess", "--epsilon", eps,
                             "--seed", "1", "--output", str(out)], capsys)
        assert code == 2 and err.count("\n") == 1 and "[1e-09, 10000]" in err and why in err, err
        assert not out.exists()


# ---- the atomic writer ---------------------------------------------------------------------------------------

def test_write_bytes_never_replaces_a_file_that_appeared_without_overwrite(tmp_path):
    path = tmp_path / "o.csv"
    check_output_path(path)  # the check passes: nothing there yet …
    path.write_bytes(PRECIOUS)  # … then another program creates the file
    with pytest.raises(InvalidParameterError, match="appeared while the command ran — nothing was replaced"):
        write_bytes(path, b"new")
    assert path.read_bytes() == PRECIOUS and sorted(p.name for p in tmp_path.iterdir()) == ["o.csv"]
    write_bytes(path, b"new", overwrite=True)
    assert path.read_bytes() == b"new" and str(path) in written_outputs()


def test_write_parquet_writes_the_frame_a_row_group_at_a_time(tmp_path):
    """The values of ``to_parquet`` (read back equal, column names and order kept, no index column), in row
    groups of the given size, atomically; and an empty frame is written with its columns."""
    import pyarrow.parquet as pq

    from engine.output_files import write_parquet

    frame = pd.DataFrame(np.random.default_rng(3).normal(size=(2_500, 3)), columns=["b", "a", "z1"])
    path = tmp_path / "o.parquet"
    write_parquet(path, frame, rows=1_000)
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    pd.testing.assert_frame_equal(pd.read_parquet(path), frame, check_exact=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.parquet"] and str(path) in written_outputs()
    with pytest.raises(InvalidParameterError, match="appeared while the command ran"):
        write_parquet(path, frame)
    write_parquet(path, frame.iloc[:0], overwrite=True)
    assert list(pd.read_parquet(path).columns) == ["b", "a", "z1"] and len(pd.read_parquet(path)) == 0


def test_a_replaced_file_keeps_its_permissions_and_a_new_one_gets_the_umasks(tmp_path):
    """A release kept private (mode 600) stays private when --overwrite replaces it."""
    path = tmp_path / "private.csv"
    path.write_bytes(PRECIOUS)
    path.chmod(0o600)
    write_bytes(path, b"new", overwrite=True)
    assert path.read_bytes() == b"new" and (path.stat().st_mode & 0o777) == 0o600
    mask = os.umask(0o022)
    try:
        write_bytes(tmp_path / "fresh.csv", b"x")
    finally:
        os.umask(mask)
    assert ((tmp_path / "fresh.csv").stat().st_mode & 0o777) == 0o644


def test_write_text_refuses_a_link_that_appeared_meanwhile(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(PRECIOUS)
    path = tmp_path / "o.json"
    path.symlink_to(victim)
    for overwrite in (False, True):
        with pytest.raises(InvalidParameterError, match="symbolic link"):
            write_text(path, "{}", overwrite=overwrite)
    assert victim.read_bytes() == PRECIOUS and path.is_symlink()


def test_an_interrupted_write_removes_its_temporary_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    import engine.output_files as output_files

    path = tmp_path / "o.csv"
    path.write_bytes(PRECIOUS)

    def ctrl_c(temp: str, written: int) -> None:
        assert Path(temp).exists() and written == 4
        raise KeyboardInterrupt

    monkeypatch.setattr(output_files, "CHUNK_BYTES", 4)
    monkeypatch.setattr(output_files, "_after_chunk", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        write_bytes(path, b"0123456789", overwrite=True)
    assert path.read_bytes() == PRECIOUS and sorted(p.name for p in tmp_path.iterdir()) == ["o.csv"]


def test_leftovers_of_dead_processes_are_removed_and_others_named(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "out.csv"
    host = _host_tag()
    stale_file = tmp_path / f".out.csv{PARTIAL_MARK}{host}-{dead.pid}-abcd1234-0123456789ab"
    stale_file.write_bytes(b"half a tab")
    stale_dir = tmp_path / f".out.csv{PARTIAL_MARK}{host}-{dead.pid}-ffff0000"
    stale_dir.mkdir()
    (stale_dir / "part-00000.parquet").write_bytes(b"x")
    running = tmp_path / f".out.csv{PARTIAL_MARK}{host}-1-00000000"  # process 1 runs: not removed
    running.write_bytes(b"x")
    elsewhere = tmp_path / f".out.csv{PARTIAL_MARK}zzzzzz-{dead.pid}-00000000"  # another machine's
    elsewhere.write_bytes(b"x")
    unrelated = tmp_path / f".other.csv{PARTIAL_MARK}{host}-{dead.pid}-00000000"
    unrelated.write_bytes(b"x")
    notes = clean_leftovers(out)
    assert not stale_file.exists() and not stale_dir.exists()
    assert running.exists() and elsewhere.exists() and unrelated.exists()
    assert sum(n.startswith("removed ") and "left by an interrupted run" in n for n in notes) == 2
    named = [n for n in notes if "was left by another run" in n]
    assert len(named) == 2 and any(running.name in n for n in named) and any(elsewhere.name in n for n in named)


def test_a_release_folder_moved_aside_by_a_killed_replacement_is_put_back(tmp_path):
    """A run killed between the two renames of --overwrite leaves the previous release aside; the next run puts it
    back under its name (and removes a parked one once a newer release holds the name)."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "released"
    aside = tmp_path / f".released.replaced-{_host_tag()}-{dead.pid}-0a0b0c0d"
    aside.mkdir()
    (aside / "_release.json").write_text("{}")
    notes = clean_leftovers(out)
    assert notes == [f"put back the previous {str(out)!r}, which an interrupted run had moved aside"]
    assert (out / "_release.json").is_file() and not aside.exists()
    aside.mkdir()
    assert clean_leftovers(out) == [f"removed {str(aside)!r}, left by an interrupted run"] and not aside.exists()


# ---- SIGKILL in the middle of a write ---------------------------------------------------------------------

#: Runs ``python -m engine`` with the writer's test hook: after the second chunk of the output is in the temporary
#: file, say so (the temporary path in the marker file) and wait to be killed. Deterministic: the parent kills only
#: once the marker exists, i.e. exactly in the middle of the write.
SLOW_WRITER = """
import sys, time
import engine.output_files as output_files

output_files.CHUNK_BYTES = 4096
marker = sys.argv[1]

def hold(temp, written):
    if written >= 2 * 4096:
        with open(marker + ".tmp", "w") as handle:
            handle.write(temp)
        import os
        os.rename(marker + ".tmp", marker)
        time.sleep(600)

output_files._after_chunk = hold
from engine.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _kill_when_held(script: str, argv: list[str], marker: Path) -> None:
    """Run ``script`` (a hook that writes ``marker`` and holds), SIGKILL it once ``marker`` exists."""
    log = marker.with_suffix(".log")
    with open(log, "wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-c", script, str(marker), *argv], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            deadline = time.monotonic() + 180  # generous: the kill itself never depends on timing
            while not marker.exists():
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "the command never reached the hook"
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == -signal.SIGKILL
    log.unlink()


def _kill_mid_write(argv: list[str], marker: Path) -> Path:
    """Run the command with the slow writer, SIGKILL it in the middle of its write; the temporary file's path."""
    _kill_when_held(SLOW_WRITER, argv, marker)
    temp = Path(marker.read_text())
    marker.unlink()
    return temp


@pytest.mark.parametrize("existing", [True, False], ids=["old-file", "no-file"])
def test_sigkill_during_the_write_leaves_the_old_file_or_none_never_a_truncated_one(existing, tmp_path, capsys):
    out = tmp_path / "released.csv"
    argv = ["privatize", "--dataset", "togo-demo", *GAUSS, "--seed", "1", "--sampler", "numpy", "--output", str(out)]
    if existing:
        out.write_bytes(PRECIOUS)
        argv.append("--overwrite")
    temp = _kill_mid_write(argv, tmp_path / "marker")
    # The kill came in the middle of the write: the temporary file holds part of the table …
    assert temp.parent == tmp_path and temp.name.startswith(f".released.csv{PARTIAL_MARK}{_host_tag()}-")
    assert temp.stat().st_size == 2 * 4096
    # … and the output's name still holds the old file, or nothing.
    if existing:
        assert out.read_bytes() == PRECIOUS
    else:
        assert not out.exists()
    # The next run removes the killed run's temporary file, says so, and writes the whole table.
    code, _, err = _run(argv, capsys)
    assert code == 0, err
    assert f"note: removed {str(temp)!r}, left by an interrupted run" in err
    assert not temp.exists() and len(pd.read_csv(out)) == 4201


# ---- the Dask folder output ------------------------------------------------------------------------------

def _parquet_input(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    folder = tmp_path / "in"
    folder.mkdir()
    pd.DataFrame(rng.normal(size=(120, 2)), columns=["a", "b"]).to_parquet(folder / "f.parquet", index=False)
    return folder


DASK = ["--engine", "dask", "--features", "a,b", "--normalize", "bounds", "--lower=-5,-5", "--upper", "5,5",
        *GAUSS, "--seed", "1", "--sampler", "numpy", "--workers", "1"]


@pytest.fixture
def thread_cluster(monkeypatch):
    """The command line's local Dask cluster with thread workers (one process: fast, nothing left running)."""
    import engine.scale.cluster as cluster

    original = cluster.dask_client

    def threads(address=None, **kwargs):
        kwargs["processes"] = False
        return original(address, **kwargs)

    monkeypatch.setattr(cluster, "dask_client", threads)


def test_dask_dangling_symlink_output_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    """Item 9: a dangling symbolic link as the Dask --output is refused up front (it used to run the whole release
    and end in a traceback)."""
    import engine.scale.cluster as cluster

    source = _parquet_input(tmp_path)
    out = tmp_path / "released"
    out.symlink_to(tmp_path / "nowhere")
    monkeypatch.setattr(cluster, "dask_client", lambda *a, **k: pytest.fail("a cluster was started"))
    code, _, err = _run(["privatize", "--input", str(source), *DASK, "--output", str(out)], capsys)
    assert code == 2 and err.count("\n") == 1 and "is a symbolic link" in err and "does not exist" in err, err
    assert out.is_symlink() and not (tmp_path / "nowhere").exists()


def test_dask_output_holding_the_input_is_refused_even_with_overwrite(tmp_path, capsys, thread_cluster):
    source = _parquet_input(tmp_path)
    code, _, err = _run(["privatize", "--input", str(source / "f.parquet"), *DASK, "--output", str(source),
                         "--overwrite"], capsys)
    assert code == 2 and "holds --input" in err and err.count("\n") == 1, err
    assert sorted(p.name for p in source.iterdir()) == ["f.parquet"]


def test_dask_overwrite_replaces_only_a_release_folder(tmp_path, capsys, thread_cluster):
    source = _parquet_input(tmp_path)
    out = tmp_path / "released"
    argv = ["privatize", "--input", str(source), *DASK, "--output", str(out)]
    assert _run(argv, capsys)[0] == 0
    first = (out / "part-00000.parquet").read_bytes()
    code, _, err = _run(argv, capsys)
    assert code == 2 and "exists already — add --overwrite" in err
    out.chmod(0o700)  # kept private by its owner: the replacement stays private
    code, _, err = _run([*argv, "--param", "delta=2e-5", "--overwrite"], capsys)
    assert code == 0, err
    assert (out.stat().st_mode & 0o777) == 0o700
    assert (out / "part-00000.parquet").read_bytes() != first
    assert json.loads((out / "_release.json").read_text())["config"]["mechanism"]["delta"] == 2e-5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "released"]  # nothing parked aside
    mine = tmp_path / "my-folder"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    code, _, err = _run([*argv[:-1], str(mine), "--overwrite"], capsys)
    assert code == 2 and "is never replaced" in err
    assert (mine / "notes.txt").read_text() == "mine"


def test_ctrl_c_after_a_committed_release_says_the_output_is_complete(tmp_path, capsys, thread_cluster,
                                                                        monkeypatch):
    """Item 9: Ctrl-C after the release folder was committed (here: while the summary is printed) must not say
    that nothing was written."""
    import engine.cli._common as common

    source = _parquet_input(tmp_path)
    out = tmp_path / "released"

    def interrupted(payload):
        raise KeyboardInterrupt

    monkeypatch.setattr(common, "print_json", interrupted)
    code, _, err = _run(["privatize", "--input", str(source), *DASK, "--output", str(out)], capsys)
    assert code == 130
    line = err.strip().splitlines()[-1]
    assert line == f"error: interrupted (Ctrl-C) after {str(out)!r} was written completely; nothing else was written"
    assert (out / "_release.json").is_file()


def test_ctrl_c_before_any_output_says_none_was_written(tmp_path, capsys, monkeypatch):
    import engine.release

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    # the command imports release_prepared when it runs (its --help imports numpy at most)
    monkeypatch.setattr(engine.release, "release_prepared", interrupted)
    code, _, err = _run(["privatize", "--dataset", "togo-demo", *GAUSS, "--seed", "1", "--output",
                         str(tmp_path / "o.csv"), "--save-config", str(tmp_path / "c.json")], capsys)
    assert code == 130
    assert err.strip() == (f"error: interrupted (Ctrl-C) after {str(tmp_path / 'c.json')!r} was written completely; "
                           "nothing else was written")
    assert not (tmp_path / "o.csv").exists()


#: A Dask release killed while committing: the driver holds just before the rename (deterministically), with every
#: partition and the sidecar in the staging folder; it runs its cluster on threads so the kill leaves no process.
SLOW_COMMIT = """
import os, sys, time
import engine.scale.atomic_output as atomic_output
import engine.scale.cluster as cluster

original_client = cluster.dask_client

def threads(address=None, **kwargs):
    kwargs["processes"] = False
    return original_client(address, **kwargs)

cluster.dask_client = threads
marker = sys.argv[1]

def hold(staging, output, sidecar, overwrite=False):
    with open(marker + ".tmp", "w") as handle:
        handle.write(str(staging))
    os.rename(marker + ".tmp", marker)
    time.sleep(600)

atomic_output.commit = hold
import engine.scale.out_of_core as out_of_core
out_of_core.commit = hold
from engine.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_sigkill_during_a_dask_release_leaves_no_output_and_the_next_run_cleans_up(tmp_path, capsys,
                                                                                      thread_cluster):
    source = _parquet_input(tmp_path)
    out = tmp_path / "released"
    argv = ["privatize", "--input", str(source), *DASK, "--output", str(out)]
    marker = tmp_path / "marker"
    _kill_when_held(SLOW_COMMIT, argv, marker)
    staging = Path(marker.read_text())
    marker.unlink()
    assert staging.is_dir() and staging.name.startswith(f".released{PARTIAL_MARK}{_host_tag()}-")
    assert not out.exists()  # never a folder under the output's name
    code, _, err = _run(argv, capsys)
    assert code == 0, err
    assert f"note: removed {str(staging)!r}, left by an interrupted run" in err
    assert not staging.exists() and (out / "_release.json").is_file()
