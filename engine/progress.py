"""Progress reporting and cancellation for long work (sweeps, attacks).

A long computation takes ``progress: ProgressCallback | None`` and ``cancel: CancelToken | None``. It calls
``progress(Progress(done, total, message))`` after every finished unit of work; the dashboard turns that into a
progress bar, the CLI into lines on stderr. A ``CancelToken`` is checked between units; when set, the
computation raises :class:`engine.errors.CancelledError` (results finished so far are kept by the caller's
callback, never lost silently).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
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
