"""Where out-of-core work runs: a Dask ``LocalCluster`` sized to this machine, or a running cluster at an address.

One entry point, :func:`dask_client`, used by the out-of-core release (``python -m engine privatize --engine
dask``) and meant for any other engine computation that runs on Dask (e.g. a sweep executor)::

    with dask_client(None) as client:                      # LocalCluster: one single-threaded worker per core
        ...
    with dask_client("tcp://10.0.0.5:8786") as client:     # a running cluster (validated, bounded wait)
        ...

A scheduler address is validated first (:func:`validate_scheduler_address`: ``tcp://HOST:PORT``); then the address
is probed (:func:`check_scheduler_handshake`): a Dask scheduler speaks first, sending its handshake as soon as a
connection is accepted, so the probe reads that message with a timeout and checks it before any Dask client is
built. Something that is not a Dask scheduler — an HTTP server (whose reply Dask's client read as a frame length and
tried to allocate 3 EiB for), a port that accepts and stays silent (on which the client waited forever), a port
nobody listens on — raises :class:`ClusterUnreachableError` with one line saying which address failed and what to
check, within the timeout. :func:`cluster_summary` describes the cluster for a run's metadata and for a UI (worker
count, threads, memory, dashboard link).
"""

from __future__ import annotations

import contextlib
import importlib.util
import ipaddress
import os
import re
import signal
import socket
import struct
import time
from collections.abc import Iterator
from typing import Any

from engine.errors import EngineError, InvalidParameterError
from engine.validation import check_integer

#: Seconds to wait for a scheduler to answer before giving up.
CONNECT_TIMEOUT_SECONDS = 10.0
#: Largest handshake message accepted from a scheduler (Dask's is about 100 bytes).
MAX_HANDSHAKE_BYTES = 64 * 1024

_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")


class ClusterUnreachableError(EngineError):
    """No Dask scheduler answered at the given address within the timeout."""


def validate_scheduler_address(address: str) -> str:
    """Check a Dask scheduler address and return it in canonical form ``tcp://HOST:PORT``.

    Accepts ``tcp://HOST:PORT`` or ``HOST:PORT``; HOST is a host name, an IPv4 address or a bracketed IPv6
    address, PORT an integer in 1..65535.

    Raises
    ------
    InvalidParameterError
        The text is not such an address (the message shows the expected form).

    Examples
    --------
    >>> validate_scheduler_address("127.0.0.1:8786")
    'tcp://127.0.0.1:8786'
    >>> validate_scheduler_address("tcp://[::1]:8786")
    'tcp://[::1]:8786'
    >>> validate_scheduler_address("http://x:1")
    Traceback (most recent call last):
    ...
    engine.errors.InvalidParameterError: scheduler address must look like tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786); got 'http://x:1' — only the tcp:// protocol is supported
    """
    form = "scheduler address must look like tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786)"
    if not isinstance(address, str) or not address.strip():
        raise InvalidParameterError(f"{form}; got {address!r}")
    text = address.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme.lower() != "tcp":
        raise InvalidParameterError(f"{form}; got {address!r} — only the tcp:// protocol is supported")
    match = re.fullmatch(r"(\[[^\]]+\]|[^:/\[\]]+):(\d{1,5})", rest)
    if match is None:
        raise InvalidParameterError(f"{form}; got {address!r} — give the host and the port, nothing else")
    host, port_text = match.groups()
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise InvalidParameterError(f"{form}; got port {port} in {address!r} — ports run from 1 to 65535")
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise InvalidParameterError(f"{form}; got {address!r} — {host} is not an IPv6 address") from None
    elif not _HOSTNAME.match(host):
        raise InvalidParameterError(f"{form}; got {address!r} — {host!r} is not a valid host name or IP address")
    return f"tcp://{host}:{port}"


def machine_cores() -> int:
    """Cores this process may use (the CPU affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def dask_client(
    address: str | None = None,
    *,
    n_workers: int | None = None,
    processes: bool = True,
    memory_limit: str | int = "auto",
    timeout: float | None = None,
) -> Iterator[Any]:
    """A ``distributed.Client`` for the duration of a ``with`` block; closes what it started.

    Parameters
    ----------
    address : str or None
        ``None`` starts a ``LocalCluster`` on this machine (``n_workers`` single-threaded workers, default one per
        core, no dashboard server, 127.0.0.1 only) and shuts it down afterwards. Otherwise the address of a running
        scheduler (:func:`validate_scheduler_address`); the cluster is left running.
    n_workers : int, optional
        Workers of the local cluster (ignored with an address).
    processes : bool
        Local workers as processes (default; true parallelism) or threads in this process (tests).
    memory_limit : str or int
        Memory limit per local worker (Dask's "auto" shares the machine's memory between workers).
    timeout : float, optional
        Seconds to wait for a remote scheduler (default :data:`CONNECT_TIMEOUT_SECONDS`).

    Raises
    ------
    InvalidParameterError
        Malformed address or worker count.
    ClusterUnreachableError
        Nothing answered at the address in time.
    """
    from distributed import Client, LocalCluster

    if address is None:
        workers = machine_cores() if n_workers is None else check_integer("n_workers", n_workers, 1, 1024)
        # Ctrl-C in a terminal reaches the whole process group, the workers too: started with SIGINT blocked (the
        # threads that spawn them inherit this thread's mask, and a process keeps it across exec), they leave it to
        # this process, which stops the release and closes them — instead of each printing a traceback as it dies.
        # A Ctrl-C during the start is delivered once the mask is restored.
        ours = _start_resource_tracker() if processes else False
        mask = _block_sigint() if processes else None
        try:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=processes,
                memory_limit=memory_limit,
                host="127.0.0.1" if processes else None,  # thread workers talk in-process, not over TCP
                dashboard_address=None,
                # The scheduler's HTTP endpoints (health, metrics) on a free port: several clusters can run at once.
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0" if processes else ":0"},
                silence_logs=50,
            )
        except BaseException:
            _restore_mask(mask)
            raise
        try:
            _restore_mask(mask)
            with Client(cluster, set_as_default=False) as client:
                try:
                    yield client
                except BaseException:  # a stop (Ctrl-C) or an error: let the running tasks see it and end first
                    _wait_until_idle(client, STOP_WAIT_SECONDS)
                    raise
        finally:
            cluster.close()
            if ours:
                _stop_resource_tracker()
        return
    client = connect(address, timeout=timeout)
    try:
        yield client
    finally:
        client.close()


def _block_sigint() -> set[int | signal.Signals] | None:
    """Block SIGINT in this thread; the previous mask (None where signal masks do not exist).

    Call :func:`_start_resource_tracker` first: started later, by the thread that spawns the first worker,
    multiprocessing's resource tracker would unblock SIGINT in that thread once it has spawned the tracker
    (``ensure_running`` ends with ``SIG_UNBLOCK`` whatever the mask was), and every worker after it would get
    Ctrl-C again."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _start_resource_tracker() -> bool:
    """Start multiprocessing's resource tracker (the local cluster's spawned workers use it); True when this call
    started it — only then does the cluster stop it (:func:`_stop_resource_tracker`): one already running belongs
    to something else of this process (a sweep's worker pool), whose processes hold its pipe open."""
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker, "_resource_tracker", None)
    running = getattr(tracker, "_fd", None) is not None
    resource_tracker.ensure_running()
    return not running


def _restore_mask(mask: set[int | signal.Signals] | None) -> None:
    if mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


#: Longest wait, after a stop, for the local workers' running tasks to end before the cluster is closed: a worker
#: closed while it runs a task takes about 4 s to be shut down; a task that looks at its cancel token (the vetted
#: noise of a partition: :class:`engine.scale.out_of_core.StagingCancelToken`) ends within half a second.
STOP_WAIT_SECONDS = 2.0


def _wait_until_idle(client: Any, seconds: float) -> None:
    """Wait up to ``seconds`` until no worker of ``client``'s cluster executes a task (cancelled ones included)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            busy = client.run(lambda dask_worker: dask_worker.state.executing_count)
        except Exception:  # noqa: BLE001 - a cluster that cannot answer is closed as it is
            return
        if not any(busy.values()):
            return
        time.sleep(0.05)


#: Longest wait for the resource tracker to exit once its pipe is closed (it exits at once unless another process
#: holds the pipe: then it is left to exit with that process, and this process is not blocked).
TRACKER_STOP_SECONDS = 2.0


def _stop_resource_tracker() -> None:
    """Stop and reap the resource tracker :func:`_start_resource_tracker` started: left to itself it exits only
    after this process has, orphaned, so a command's process group outlived the command (issue 33 §2). The wait is
    bounded: a process forked meanwhile (a sweep's worker pool started by another thread) holds the tracker's pipe
    open, and multiprocessing's own ``_stop`` would wait for it forever. It is started again on demand if anything
    needs it."""
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker, "_resource_tracker", None)
    lock = getattr(tracker, "_lock", None)
    if tracker is None or lock is None:  # pragma: no cover - another Python's multiprocessing
        return
    with lock:
        fd, pid = getattr(tracker, "_fd", None), getattr(tracker, "_pid", None)
        if fd is None:
            return
        os.close(fd)  # closing the pipe's last write end stops the tracker
        tracker._fd = None
        if pid is None:  # pragma: no cover - a tracker inherited from a parent process
            return
        deadline = time.monotonic() + TRACKER_STOP_SECONDS
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # reaped already
                done = pid
            if done == pid:
                tracker._pid = None
                return
            if time.monotonic() >= deadline:
                return  # another process holds its pipe: it exits with that process
            time.sleep(0.02)


def connect(address: str, *, timeout: float | None = None) -> Any:
    """A ``distributed.Client`` to the running scheduler at ``address`` (the caller closes it); ``timeout`` in
    seconds, by default :data:`CONNECT_TIMEOUT_SECONDS` (read at the call).

    Raises
    ------
    InvalidParameterError
        Malformed address (:func:`validate_scheduler_address`).
    ClusterUnreachableError
        Nothing answered at the address within ``timeout`` seconds.
    """
    from distributed import Client

    canonical = validate_scheduler_address(address)
    timeout = CONNECT_TIMEOUT_SECONDS if timeout is None else timeout
    check_scheduler_handshake(canonical, timeout=timeout)
    try:
        return Client(canonical, timeout=f"{float(timeout)}s", set_as_default=False)
    except Exception as exc:  # an answer that is not what a scheduler says: one line, never a traceback
        reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise _unreachable(canonical, timeout, reason) from None


def _unreachable(canonical: str, timeout: float, reason: str) -> ClusterUnreachableError:
    return ClusterUnreachableError(
        f"cannot reach a Dask scheduler at {canonical} within {timeout:g} s ({reason}) — check that "
        f"'dask scheduler' runs there and that the port is open, or compute on this machine instead (leave out "
        "--scheduler; in the dashboard, choose 'this machine')"
    )


def check_scheduler_handshake(address: str, *, timeout: float | None = None) -> None:
    """Check that a Dask scheduler answers at ``address``, within ``timeout`` seconds in all, before connecting.

    A Dask scheduler writes its handshake as soon as it accepts a connection: an 8-byte frame length, then
    msgpack frames holding a mapping with ``compression``, ``python`` and ``pickle-protocol``. This reads that
    message with a deadline (never more than :data:`MAX_HANDSHAKE_BYTES`) and decodes it; nothing is sent.

    Raises
    ------
    InvalidParameterError
        Malformed address.
    ClusterUnreachableError
        Nothing listens; the peer stays silent until the deadline; closes the connection; or answers with
        something that is not a Dask handshake (e.g. an HTTP server).
    """
    canonical = validate_scheduler_address(address)
    timeout = CONNECT_TIMEOUT_SECONDS if timeout is None else float(timeout)
    host, _, port = canonical[len("tcp://"):].rpartition(":")
    deadline = time.monotonic() + timeout

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        return remaining

    received = b""
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:

            def read(n: int) -> bytes:
                nonlocal received
                data = b""
                while len(data) < n:
                    sock.settimeout(left())
                    chunk = sock.recv(min(n - len(data), 65536))
                    if not chunk:
                        raise ConnectionAbortedError
                    data += chunk
                    received += chunk
                return data

            (length,) = struct.unpack("Q", read(8))  # as distributed.comm.tcp reads it
            if not 0 < length <= MAX_HANDSHAKE_BYTES:
                raise _not_dask(canonical, received)
            payload = read(length)
    except TimeoutError:
        if received:
            raise _not_dask(canonical, received) from None
        raise _unreachable(
            canonical, timeout, "the port accepted the connection but sent no Dask handshake: it is not a Dask "
            "scheduler, or it is busy"
        ) from None
    except ConnectionAbortedError:
        raise _unreachable(canonical, timeout, "the connection was closed without a Dask handshake") from None
    except OSError as exc:
        raise _unreachable(canonical, timeout, exc.strerror or type(exc).__name__) from None
    try:
        from distributed.protocol.core import loads
        from distributed.protocol.utils import unpack_frames

        message = loads(unpack_frames(payload), deserialize=False)
    except Exception:  # whatever the bytes are, they are no handshake
        raise _not_dask(canonical, received) from None
    if not isinstance(message, dict) or not {"compression", "python"} <= set(message):
        raise _not_dask(canonical, received)


def _not_dask(canonical: str, received: bytes) -> ClusterUnreachableError:
    start = received[:16].decode("ascii", "replace")
    shown = "".join(c if c.isprintable() else "?" for c in start)
    return ClusterUnreachableError(
        f"the server at {canonical} is not a Dask scheduler (it answered {shown!r}… instead of a Dask handshake) — "
        "give the address of the scheduler (the tcp:// address 'dask scheduler' prints, usually port 8786), not "
        "that of its dashboard or another service"
    )


def cluster_summary(client: Any) -> dict[str, Any]:
    """What a run's metadata (and a UI) says about the cluster: address, workers, threads, memory, dashboard.

    ``dashboard`` is the scheduler's dashboard link, or None when the cluster serves none.
    """
    info = client.scheduler_info(n_workers=-1) if _accepts_n_workers(client) else client.scheduler_info()
    workers = info.get("workers", {})
    dashboard = None
    # The scheduler always serves HTTP (health, metrics); its dashboard pages exist only where bokeh is installed,
    # which is known for a local cluster and assumed for a remote one.
    local = getattr(client, "cluster", None) is not None
    if info.get("services", {}).get("dashboard") and (not local or importlib.util.find_spec("bokeh") is not None):
        with contextlib.suppress(Exception):
            dashboard = client.dashboard_link
    return {
        "scheduler": client.scheduler.address,
        "workers": len(workers),
        "threads": int(sum(w.get("nthreads", 0) for w in workers.values())),
        "memory_limit_bytes_per_worker": sorted({int(w.get("memory_limit") or 0) for w in workers.values()}),
        "dashboard": dashboard,
    }


def _accepts_n_workers(client: Any) -> bool:
    import inspect

    return "n_workers" in inspect.signature(client.scheduler_info).parameters


__all__ = [
    "CONNECT_TIMEOUT_SECONDS",
    "ClusterUnreachableError",
    "check_scheduler_handshake",
    "cluster_summary",
    "connect",
    "dask_client",
    "machine_cores",
    "validate_scheduler_address",
]
