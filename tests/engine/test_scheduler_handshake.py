"""``--scheduler`` pointing at something that is not a Dask scheduler (issue 35 item 7): exit code 2 and one line
within the connection timeout, never a traceback or a hang. Every server here is started by the test on 127.0.0.1.

The command runs in a subprocess with a deadline, so a hang fails the test instead of stalling the suite."""

from __future__ import annotations

import contextlib
import http.server
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.scale.cluster import ClusterUnreachableError, check_scheduler_handshake, connect

ROOT = Path(__file__).resolve().parents[2]
#: The command line with a 2-second connection timeout (the default is 10 s).
SHORT_TIMEOUT = """
import sys
import engine.scale.cluster as cluster
cluster.CONNECT_TIMEOUT_SECONDS = 2.0
from engine.cli import main
sys.exit(main(sys.argv[1:]))
"""


@contextlib.contextmanager
def _silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never says anything."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


@contextlib.contextmanager
def _http_server() -> Iterator[int]:
    """A real HTTP server: it answers a request (Dask's client sends one first: its handshake) with a 400."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    server.timeout = 0.2
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextlib.contextmanager
def _greeting_server(greeting: bytes) -> Iterator[int]:
    """A server that writes ``greeting`` to every connection at once, then closes it."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                with contextlib.suppress(OSError):
                    conn.sendall(greeting)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        server.close()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SERVERS = {
    "silent-port": (lambda: _silent_port(), "sent no Dask handshake"),
    "http-server": (lambda: _http_server(), "sent no Dask handshake"),
    "http-greeting": (lambda: _greeting_server(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
                      "is not a Dask scheduler (it answered 'HTTP/1.1'…"),
    "huge-frame-length": (lambda: _greeting_server(b"\xff" * 8 + b"x" * 100), "is not a Dask scheduler"),
    "garbage-frames": (lambda: _greeting_server((12).to_bytes(8, "little") + b"not msgpack!"),
                       "is not a Dask scheduler"),
    "closes-at-once": (lambda: _greeting_server(b""), "closed without a Dask handshake"),
}


@pytest.mark.parametrize("kind", sorted(SERVERS))
def test_something_that_is_not_a_scheduler_is_refused_within_the_timeout(kind):
    make, message = SERVERS[kind]
    with make() as port:
        started = time.monotonic()
        with pytest.raises(ClusterUnreachableError) as info:
            check_scheduler_handshake(f"127.0.0.1:{port}", timeout=1.0)
        assert time.monotonic() - started < 1.0 + 5.0  # the deadline, plus slack for a loaded machine
    text = str(info.value)
    assert message in text and "\n" not in text and f"tcp://127.0.0.1:{port}" in text, text


def test_nothing_listening_is_refused():
    port = _free_port()
    with pytest.raises(ClusterUnreachableError, match="refused"):
        check_scheduler_handshake(f"127.0.0.1:{port}", timeout=1.0)


def test_a_real_scheduler_passes_the_probe_and_connects():
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address=None, silence_logs=50) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        check_scheduler_handshake(address, timeout=5.0)
        client = connect(address, timeout=5.0)
        try:
            assert client.submit(lambda x: x + 1, 1).result(timeout=30) == 2
        finally:
            client.close()


@pytest.mark.parametrize(("command", "kind"), [("privatize", "silent-port"), ("privatize", "http-server"),
                                               ("privatize", "http-greeting"), ("sweep", "http-server")])
def test_the_command_line_exits_2_with_one_line_and_no_hang(kind, command, tmp_path):
    """Before: the HTTP server gave a 59-line MemoryError traceback ("Unable to allocate 3.07 EiB"), the silent
    port a hang of more than 180 s."""
    source = tmp_path / "in.parquet"
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.normal(size=(40, 2)), columns=["a", "b"]).assign(y=np.arange(40) % 2).to_parquet(source)
    make, message = SERVERS[kind]
    with make() as port:
        scheduler = f"tcp://127.0.0.1:{port}"
        argv = {
            "privatize": ["privatize", "--engine", "dask", "--scheduler", scheduler, "--input", str(source),
                          "--features", "a,b", "--mechanism", "gaussian", "--b", "0.5", "--epsilon", "1", "--delta",
                          "1e-5", "--seed", "1", "--output", str(tmp_path / "out")],
            "sweep": ["sweep", "--engine", "dask", "--scheduler", scheduler, "--dataset", str(source), "--target",
                      "y", "--preset", "quick", "--reps", "1", "--seed", "1", "--output", str(tmp_path / "s.csv")],
        }[command]
        proc = subprocess.run([sys.executable, "-c", SHORT_TIMEOUT, *argv], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
    lines = proc.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and len(errors) == 1 and errors[0] == lines[-1], proc.stderr[-2000:]
    assert message in errors[0] and scheduler in errors[0]
    assert not (tmp_path / "out").exists() and not (tmp_path / "s.csv").exists()
