"""Progress reporting and cancellation for long work (sweeps, attacks).

A long computation takes ``progress: ProgressCallback | None`` and ``cancel: CancelToken | None``. It calls
``progress(Progress(done, total, message))`` after every finished unit of work; the dashboard turns that into a
progress bar, the CLI into lines on stderr. A ``CancelToken`` is checked between units; when set, the
computation raises :class:`engine.errors.CancelledError` (results finished so far are kept by the caller's
callback, never lost silently).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from engine.errors import CancelledError


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    message: str = ""

    @property
    def fraction(self) -> float:
        return 1.0 if self.total <= 0 else min(1.0, self.done / self.total)


ProgressCallback = Callable[[Progress], None]


class CancelToken:
    """Thread-safe flag a UI sets to stop a long computation."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self, what: str = "the computation") -> None:
        if self._event.is_set():
            raise CancelledError(f"{what} was cancelled; results finished before the cancel are kept")


@contextmanager
def cancel_on_interrupt(token: CancelToken, notice: Callable[[], None] | None = None) -> Iterator[CancelToken]:
    """Within the block, the first Ctrl-C (SIGINT) sets ``token`` instead of raising; a second one raises
    ``KeyboardInterrupt`` (stop at once).

    For command-line work: the computation sees the token between units of work and raises
    :class:`~engine.errors.CancelledError` with the finished part, which the command then writes. ``notice`` is
    called once on the first Ctrl-C (e.g. to say "stopping after the running cell"). Only the process and thread
    that entered the block react: worker processes forked inside it ignore SIGINT (their parent decides). Outside
    the main thread (e.g. in the dashboard) this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield token
        return
    owner = os.getpid()
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum, frame) -> None:  # noqa: ARG001 - the signal module's signature
        if os.getpid() != owner:  # a forked worker: the parent handles Ctrl-C
            return
        if token.cancelled:
            raise KeyboardInterrupt
        token.cancel()
        if notice is not None:
            notice()

    signal.signal(signal.SIGINT, handler)
    try:
        yield token
    finally:
        signal.signal(signal.SIGINT, previous)
