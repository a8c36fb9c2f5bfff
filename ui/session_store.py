"""Keep a session's work across a page reload: an in-memory store keyed by a random session key in the address.

A browser reload starts a new Streamlit session, which used to lose the upload, every run and a long sweep. The
Studio now keeps each session's :class:`~ui.state.StudioState` (with the uploaded bytes) and its results in this
process's memory — never on disk — under a random key (``?sid=…`` in the address bar, 128 bits from the operating
system). Reloading the page restores them; a new tab without the key starts afresh.

Bounds: at most :data:`MAX_SESSIONS` sessions and :data:`MAX_BYTES` of uploaded data, each kept for :data:`TTL`
seconds after its last use; the least recently used go first. Nothing survives a server restart.

The key is a capability for this session's data: the "Share this scenario" link never contains it (it carries the
scenario, not the data), and the sidebar says to share that link rather than the address bar.
"""

from __future__ import annotations

import collections
import copy
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ui import room as rooms
from ui.state import DURABLE_WIDGETS

#: Query parameter holding the session key.
SESSION_PARAM = "sid"
#: Sessions kept at once (least recently used dropped first).
MAX_SESSIONS = 16
#: Sessions kept at once on a workshop server (ui.room): a room of participants must not push each other's work out;
#: their sessions hold no uploaded bytes (the room shares the facilitator's once), so each costs little memory.
ROOM_MAX_SESSIONS = 64
#: Uploaded bytes kept over all sessions.
MAX_BYTES = 400 * 1024 * 1024
#: Seconds a session is kept after its last use.
TTL = 2 * 3600.0
#: ``st.session_state`` entries (besides the StudioState) that hold results worth keeping.
KEPT_KEYS: tuple[str, ...] = (
    "mechanisms.args", "mechanisms.last_good", "mechanisms.runs", "mechanisms.origin",
    "tradeoffs.last_pending",
    *DURABLE_WIDGETS,
)


@dataclass
class _Entry:
    state: Any
    extras: dict[str, Any] = field(default_factory=dict)
    used: float = field(default_factory=time.monotonic)

    @property
    def size(self) -> int:
        data = getattr(self.state, "upload_bytes", None)
        return len(data) if data else 0


_STORE: collections.OrderedDict[str, _Entry] = collections.OrderedDict()
_LOCK = threading.Lock()


def new_key() -> str:
    """A fresh session key (128 random bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def _valid(key: Any) -> bool:
    return isinstance(key, str) and 16 <= len(key) <= 64 and key.replace("-", "").replace("_", "").isalnum()


def _evict(now: float) -> None:
    for key in [k for k, e in _STORE.items() if now - e.used > TTL]:
        del _STORE[key]
    limit = MAX_SESSIONS if rooms.current() is None else ROOM_MAX_SESSIONS
    while len(_STORE) > limit or sum(e.size for e in _STORE.values()) > MAX_BYTES:
        _STORE.popitem(last=False)


def save(key: str, state: Any, session: Any) -> None:
    """Remember ``state`` and the :data:`KEPT_KEYS` of ``session`` under ``key`` (called after every run)."""
    if not _valid(key):
        return
    extras = {k: session[k] for k in KEPT_KEYS if k in session}
    now = time.monotonic()
    with _LOCK:
        _STORE[key] = _Entry(state, extras, now)
        _STORE.move_to_end(key)
        _evict(now)


def restore(key: Any) -> tuple[Any, dict[str, Any]] | None:
    """A private copy of the state and results kept under ``key``, or None (unknown, expired or malformed key)."""
    if not _valid(key):
        return None
    now = time.monotonic()
    with _LOCK:
        _evict(now)
        entry = _STORE.get(key)
        if entry is None:
            return None
        entry.used = now
        _STORE.move_to_end(key)
        return copy.deepcopy(entry.state), copy.deepcopy(entry.extras)


def forget(key: str) -> None:
    with _LOCK:
        _STORE.pop(key, None)


def clear() -> None:
    """Forget every session (tests)."""
    with _LOCK:
        _STORE.clear()


def stats() -> dict[str, int]:
    """Sessions and uploaded bytes held now."""
    with _LOCK:
        return {"sessions": len(_STORE), "bytes": sum(e.size for e in _STORE.values())}
