"""Connecting to Dask clusters (engine.scale.cluster), and a release on a real scheduler + two worker processes
started with Dask's own command-line entry points."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.errors import InvalidParameterError
from engine.scale.cluster import (
    ClusterUnreachableError,
    cluster_summary,
    dask_client,
    validate_scheduler_address,
)

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("tcp://127.0.0.1:8786", "tcp://127.0.0.1:8786"),
        ("10.0.0.5:8786", "tcp://10.0.0.5:8786"),
        ("  tcp://scheduler.internal:1 ", "tcp://scheduler.internal:1"),
        ("tcp://[::1]:65535", "tcp://[::1]:65535"),
    ],
)
def test_valid_scheduler_addresses_are_canonicalised(text, canonical):
    assert validate_scheduler_address(text) == canonical


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "tcp://HOST:PORT"),
        ("tcp://host", "give the host and the port"),
        ("tcp://host:0", "ports run from 1 to 65535"),
        ("tcp://host:70000", "ports run from 1 to 65535"),
        ("http://host:8786", "only the tcp:// protocol"),
        ("tcp://bad_host!:8786", "not a valid host name"),
        ("tcp://[zz::1]:8786", "not an IPv6 address"),
        ("tcp://host:8786/path", "give the host and the port"),
    ],
)
def test_malformed_scheduler_addresses_are_refused_with_the_expected_form(text, why):
    with pytest.raises(InvalidParameterError, match="tcp://HOST:PORT") as info:
        validate_scheduler_address(text)
    assert why in str(info.value)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_scheduler_is_one_clear_line_within_the_timeout():
    port = _free_port()  # nothing listens there
    started = time.monotonic()
    with pytest.raises(ClusterUnreachableError) as info, dask_client(f"127.0.0.1:{port}", timeout=1.0):
        pass
    assert time.monotonic() - started < 10
    message = str(info.value)
    assert "\n" not in message and f"tcp://127.0.0.1:{port}" in message and "dask scheduler" in message


def test_local_cluster_is_sized_and_described():
    with dask_client(None, n_workers=2, processes=False) as client:
        summary = cluster_summary(client)
    assert summary["workers"] == 2 and summary["threads"] == 2
    assert summary["dashboard"] is None  # no bokeh here: no dashboard pages to link


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.mark.slow
def test_release_and_sweep_on_a_scheduler_and_two_workers_started_from_the_dask_command_line(tmp_path, capsys):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    common = {"cwd": str(ROOT), "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    processes = [
        subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                          "--no-dashboard", "--dashboard-address", "127.0.0.1:0"], **common)
    ]
    try:
        for i in range(2):
            processes.append(subprocess.Popen(
                [str(BIN / "dask"), "worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
                 "--no-dashboard", "--name", f"w{i}", "--death-timeout", "30"], **common))
        from distributed import Client

        with Client(address, timeout="30s", set_as_default=False) as client:
            client.wait_for_workers(2, timeout=30)
        rng = np.random.default_rng(0)
        source = tmp_path / "in"
        source.mkdir()
        for i in range(2):
            pd.DataFrame(rng.normal(size=(150, 3)), columns=["a", "b", "c"]).to_parquet(source / f"{i}.parquet")
        out = tmp_path / "out"
        from engine.cli import main

        code = main(["privatize", "--input", str(source), "--features", "a,b,c", "--mechanism", "gaussian",
                     "--b", "0.5", "--epsilon", "1", "--delta", "1e-5", "--engine", "dask", "--scheduler", address,
                     "--partition-rows", "100", "--seed", "4", "--output", str(out)])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        summary = json.loads(captured.out)
        assert summary["rows"] == 300 and summary["execution"]["cluster"]["workers"] == 2
        assert summary["execution"]["cluster"]["scheduler"] == address
        assert "release: [" in captured.err  # the progress bar
        released = pd.concat([pd.read_parquet(f) for f in sorted(out.glob("part-*.parquet"))])
        assert released.shape == (300, 3) and (out / "_release.json").is_file()

        # The sweep half (issue 14 §2): the same sweep through the scheduler and on this machine, cell for cell.
        sweep = ["sweep", "--dataset", "togo-demo", "--preset", "quick", "--reps", "1", "--b-values", "0.5,2",
                 "--attacks", "distinguishing", "--seed", "3"]
        code = main([*sweep, "--engine", "dask", "--scheduler", address, "--output", str(tmp_path / "dask.csv")])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert f"computing on the Dask cluster {address}" in captured.err
        code = main([*sweep, "--output", str(tmp_path / "local.csv")])
        assert code == 0, capsys.readouterr().err
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "dask.csv"), pd.read_csv(tmp_path / "local.csv"),
                                      check_exact=True)
    finally:
        for process in reversed(processes):
            _stop(process)
    assert all(p.poll() is not None for p in processes)


def test_sweep_engine_flags_are_checked_before_any_work(tmp_path, capsys, monkeypatch):
    import engine.scale.cluster
    from engine.cli import main

    monkeypatch.setattr(engine.scale.cluster, "CONNECT_TIMEOUT_SECONDS", 1.0)  # the unreachable case: 1 s, not 10

    base = ["sweep", "--dataset", "togo-demo", "--output", str(tmp_path / "s.csv")]
    assert main([*base, "--scheduler", "tcp://127.0.0.1:8786"]) == 2
    assert "--scheduler applies to --engine dask only" in capsys.readouterr().err
    assert main([*base, "--engine", "dask", "--scheduler", "http://x:1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "scheduler" in err
    port = _free_port()  # nothing listens there
    assert main([*base, "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") <= 2 and f"tcp://127.0.0.1:{port}" in err and "Traceback" not in err
    assert not (tmp_path / "s.csv").exists()


_TRACKER_OF_A_POOL = """
import multiprocessing, os
from multiprocessing import resource_tracker
from engine.scale.cluster import dask_client

with multiprocessing.get_context("forkserver").Pool(1) as pool:  # a sweep's worker pool: it holds the tracker's pipe
    assert pool.apply(os.getpid) > 0
    tracker = resource_tracker._resource_tracker
    before = tracker._pid
    for processes in (False, True):
        with dask_client(None, n_workers=1, processes=processes) as client:
            assert client.submit(sum, [1, 2]).result() == 3
        assert tracker._pid == before and tracker._fd is not None, "the pool's tracker was stopped"
        os.kill(before, 0)  # still running
print("ok")
"""


@pytest.mark.slow  # a real local cluster in a fresh interpreter (≈ 5 s)
def test_a_local_cluster_returns_and_leaves_a_resource_tracker_it_did_not_start():
    """A resource tracker already running (a sweep's worker pool started it, and the pool's processes hold its pipe)
    is not the cluster's to stop: stopping it waited for the pool's processes forever (a Dask release after a sweep
    in the same process, e.g. the app, never returned). The 120 s is only a guard against that hang."""
    out = subprocess.run([sys.executable, "-c", _TRACKER_OF_A_POOL], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
