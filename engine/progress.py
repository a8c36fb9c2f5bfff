"""Progress reporting and cancellation for long work (sweeps, attacks).

A long computation takes ``progress: ProgressCallback | None`` and ``cancel: CancelToken | None``. It calls
``progress(Progress(done, total, message))`` after every finished unit of work; the dashboard turns that into a
progress bar, the CLI into lines on stderr. A ``CancelToken`` is checked between units; when set, the
computation raises :class:`engine.errors.CancelledError` (results finished so far are kept by the caller's
callback, never lost silently).
"""

from __future__ import annotations

import math
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from engine.errors import CancelledError


@dataclass(frozen=True)
class Progress:
    """``done`` of ``total`` units finished after ``elapsed`` seconds (NaN when the caller does not time it).

    >>> Progress(10, 40, elapsed=5.0).eta_seconds
    15.0
    """

    done: int
    total: int
    message: str = ""
    elapsed: float = math.nan

    @property
    def fraction(self) -> float:
        return 1.0 if self.total <= 0 else min(1.0, self.done / self.total)

    @property
    def eta_seconds(self) -> float:
        """Estimated seconds left at the pace so far (NaN before the first unit or without timing)."""
        if self.done <= 0 or not math.isfinite(self.elapsed):
            return math.nan
        return self.elapsed / self.done * max(self.total - self.done, 0)

    def describe(self) -> str:
        """``"12 of 90 cells — about 40 s left — <message>"``."""
        left = format_left(self.eta_seconds)
        return f"{self.done} of {self.total}" + (f" — {left}" if left else "") + (
            f" — {self.message}" if self.message else "")


def format_seconds(seconds: float) -> str:
    """A duration for people: "8 s", "2 min 5 s", "1 h 3 min".

    >>> format_seconds(7.6), format_seconds(125), format_seconds(3780)
    ('8 s', '2 min 5 s', '1 h 3 min')
    """
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {(s % 3600) // 60} min"


def format_left(seconds: float) -> str:
    """Time left for people: "about 8 s left", "less than a second left" (not "about 0 s"); "" when unknown (NaN).

    >>> format_left(7.6), format_left(0.3), format_left(float("nan"))
    ('about 8 s left', 'less than a second left', '')
    """
    if not math.isfinite(seconds):
        return ""
    return "less than a second left" if seconds < 0.5 else f"about {format_seconds(seconds)} left"


#: Before any cell has finished, the time of one timed cell can be off by a factor of several (a loaded machine ran a
#: sweep 6× slower than its one-cell estimate: 8 s said, 49 s taken): the first range spans these factors of it.
FIRST_ESTIMATE_SPREAD = (0.5, 3.0)
#: The relative spread of the range never narrows below this (cells differ in cost; the machine's load changes).
MIN_SPREAD = 0.1


def time_left_range(done: int, total: int, elapsed: float, first_estimate: float = math.nan) -> tuple[float, float]:
    """(low, high) seconds left for ``total`` units of which ``done`` finished in ``elapsed`` seconds.

    Before the first unit finishes: the first estimate (the whole run, timed on one unit) times
    :data:`FIRST_ESTIMATE_SPREAD`, less the time already spent. Afterwards, the pace so far — elapsed / done per
    unit — times the units left, within a factor 1 + u, u = max(1/√done, :data:`MIN_SPREAD`): the more units have
    finished, the narrower the range. (NaN, NaN) when nothing is known; (0, 0) when all are done.

    >>> time_left_range(0, 40, 2.0, first_estimate=10.0)
    (3.0, 28.0)
    >>> time_left_range(4, 40, 10.0)
    (60.0, 135.0)
    >>> time_left_range(40, 40, 55.0)
    (0.0, 0.0)
    """
    left = max(int(total) - int(done), 0)
    if left == 0:
        return 0.0, 0.0
    if done <= 0 or not math.isfinite(elapsed) or elapsed <= 0:
        if not math.isfinite(first_estimate):
            return math.nan, math.nan
        spent = elapsed if math.isfinite(elapsed) else 0.0
        low, high = (max(first_estimate * f - spent, 0.0) for f in FIRST_ESTIMATE_SPREAD)
        return low, high
    central = elapsed / done * left
    spread = 1.0 + max(1.0 / math.sqrt(done), MIN_SPREAD)
    return central / spread, central * spread


def format_range(low: float, high: float) -> str:
    """A range of seconds for people: "20–35 s", "1 min 40 s – 2 min 30 s", "under a second"; "" when unknown.

    >>> format_range(19.6, 35.2), format_range(100, 150), format_range(0.1, 0.4), format_range(float("nan"), 1)
    ('20–35 s', '1 min 40 s – 2 min 30 s', 'under a second', '')
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        return ""
    if high < 0.5:
        return "under a second"
    a, b = format_seconds(low), format_seconds(high)
    if a == b:
        return f"about {a}"
    if a.endswith(" s") and b.endswith(" s") and "min" not in a + b:
        return f"{a[:-2]}–{b}"
    return f"{a} – {b}"


ProgressCallback = Callable[[Progress], None]


class CancelToken:
    """Thread-safe flag a UI sets to stop a long computation."""

    def __init__(self, parent: CancelToken | None = None) -> None:
        self._event = threading.Event()
        self._parent = parent

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set() or (self._parent is not None and self._parent.cancelled)

    def child(self) -> CancelToken:
        """A token cancelled with this one, or on its own (work this one's holder does not know about: the other
        threads of a computation that stops for a reason of its own).

        >>> parent = CancelToken(); child = parent.child(); child.cancel()
        >>> child.cancelled, parent.cancelled, (parent.cancel(), parent.child().cancelled)[1]
        (True, False, True)
        """
        return CancelToken(self)

    def raise_if_cancelled(self, what: str = "the computation") -> None:
        if self.cancelled:
            raise CancelledError(f"{what} was cancelled; results finished before the cancel are kept")


@contextmanager
def cancel_on_interrupt(token: CancelToken, notice: Callable[[], None] | None = None) -> Iterator[CancelToken]:
    """Within the block, the first Ctrl-C (SIGINT) sets ``token`` instead of raising; a second one raises
    ``KeyboardInterrupt`` (stop at once).

    For command-line work: the computation sees the token between units of work and raises
    :class:`~engine.errors.CancelledError` with the finished part, which the command then writes. ``notice`` is
    called once on the first Ctrl-C (e.g. to say "stopping after the running cell"); it runs inside the signal
    handler, so it must not write to a buffered stream the main thread may be writing to (use ``os.write``, or a
    "reentrant call" error replaces the clean stop). Only the process and thread
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
