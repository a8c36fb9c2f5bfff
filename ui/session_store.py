"""Keep a session's work across a page reload: an in-memory store keyed by a random session key in the address.

A browser reload starts a new Streamlit session, which used to lose the upload, every run and a long sweep. The
Studio keeps each session's :class:`~ui.state.StudioState` (with the uploaded bytes) and its results in this
process's memory — never on disk — under a random key (``?sid=…`` in the address bar, 128 bits from the operating
system). Reloading the page restores them; a new tab without the key starts afresh.

What is kept, and what goes first
---------------------------------
* A session with nothing of its own (a visitor who only opened a page: no upload, no run, no sweep, no pin, no
  changed setting) is not stored at all (:func:`worth`), so visitors never push anyone's work out.
* Bounds: :data:`MAX_SESSIONS` sessions and :data:`MAX_BYTES` of uploaded data (identical uploads are held once),
  each kept for :data:`TTL` seconds after its last use. Sized so that a workshop of 20 people, each uploading a file
  of the 50 MB the upload accepts, never evicts anyone's work (20 × 50 MB < :data:`MAX_BYTES`).
* Past a bound the least valuable session goes first (settings only, then runs or an upload, then sweeps, pins and
  a rationale), the least recently used among equals. An evicted session leaves a note (:func:`evicted`) so that
  its user, on reload, is told what was lost and why instead of silently starting afresh.

Nothing survives a server restart. The key is a capability for this session's data: the "Share this scenario" link
never contains it (it carries the scenario, not the data), and the sidebar says to share that link rather than the
address bar.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ui.state import DURABLE_WIDGETS, StudioState

#: Query parameter holding the session key.
SESSION_PARAM = "sid"
#: Sessions kept at once.
MAX_SESSIONS = 64
#: Uploaded bytes kept over all sessions (identical uploads counted once).
MAX_BYTES = 1024 * 1024 * 1024
#: Seconds a session is kept after its last use.
TTL = 2 * 3600.0
#: Notes of evicted sessions kept for their users' next visit.
MAX_NOTES = 512
#: ``st.session_state`` entries kept besides the StudioState (which holds every result with its configuration): the
#: widget values that outlive their page (:data:`ui.state.DURABLE_WIDGETS`).
KEPT_KEYS: tuple[str, ...] = DURABLE_WIDGETS
#: StudioState fields that are bookkeeping or a summary the Data page refreshes, not the user's own work.
_BOOKKEEPING = frozenset({"data_fingerprint", "n", "d", "feature_names", "dataset_title", "synthetic",
                          "link_restored", "notices", "page", "entered_page", "upload_fingerprint", "upload_seen", "upload_error",
                          "editor_bases", "editor_edits", "form_errors", "import_seen", "import_error", "just_imported",
                          "workshop_slide", "workshop_measure", "per_record_fresh_seed", "mechanism_origin",
                          "public_info_work"})


def _has_results(state: StudioState) -> bool:
    """Runs, an upload, a recommendation, a study's results or work under way (or a reload interrupted)."""
    return bool(state.upload_bytes or state.runs or state.recommendation is not None or state.working is not None
                or state.interrupted is not None or state.public_info_work.results is not None
                or state.sweep_partial is not None)


@dataclass
class _Entry:
    state: Any
    extras: dict[str, Any] = field(default_factory=dict)
    used: float = field(default_factory=time.monotonic)
    worth: int = 0


_STORE: collections.OrderedDict[str, _Entry] = collections.OrderedDict()
_NOTES: collections.OrderedDict[str, str] = collections.OrderedDict()
_LOCK = threading.Lock()


def new_key() -> str:
    """A fresh session key (128 random bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def _valid(key: Any) -> bool:
    return isinstance(key, str) and 16 <= len(key) <= 64 and key.replace("-", "").replace("_", "").isalnum()


def worth(state: Any, extras: dict[str, Any]) -> int:
    """How much a session holds that its user would miss: 0 nothing of their own (not stored), 1 settings, 2 runs
    or an upload, 3 sweeps, pinned candidates or a written rationale.

    >>> from engine.workshop import Workshop
    >>> worth(StudioState(), {}), worth(StudioState(workshop=Workshop(rationale="we chose B = 0.1")), {})
    (0, 3)
    >>> worth(StudioState(gammas=(0.9,)), {}), worth(StudioState(upload_bytes=b"a,b"), {})
    (1, 2)
    """
    if not isinstance(state, StudioState):
        return 0
    if state.sweeps or state.workshop.pinned or state.rationale.strip():
        return 3
    if _has_results(state):
        return 2
    fresh = StudioState()
    changed = any(getattr(state, f.name) != getattr(fresh, f.name)
                  for f in dataclasses.fields(StudioState) if f.name not in _BOOKKEEPING)
    return 1 if changed or any(k in extras for k in DURABLE_WIDGETS) else 0


def describe_loss(state: Any, extras: dict[str, Any]) -> str:
    """What an evicted session held, in words (for the note its user sees on the next visit)."""
    parts = []
    if isinstance(state, StudioState):
        if state.upload_bytes:
            parts.append(f"the uploaded file {state.upload_name or ''} ({len(state.upload_bytes) / 1e6:.1f} MB)".replace(
                "file  (", "file ("))
        runs = len(state.runs)
        if runs:
            parts.append(f"{runs} Mechanisms run{'s' if runs != 1 else ''}")
        if state.sweeps:
            parts.append(f"the sweep of {len(state.sweeps)} mechanism{'s' if len(state.sweeps) != 1 else ''}")
        pins = len(state.workshop.pinned)
        if pins:
            parts.append(f"{pins} pinned candidate{'s' if pins != 1 else ''}")
        if state.rationale.strip():
            parts.append("the written rationale")
    parts.append("the settings")
    return ", ".join(parts)


def _size(entry: _Entry) -> tuple[str | None, int]:
    data = getattr(entry.state, "upload_bytes", None)
    if not data:
        return None, 0
    return getattr(entry.state, "upload_fingerprint", None) or str(id(data)), len(data)


def _bytes_held() -> int:
    unique: dict[str, int] = {}
    for entry in _STORE.values():
        fp, n = _size(entry)
        if fp is not None:
            unique[fp] = n
    return sum(unique.values())


def _drop(key: str, why: str) -> None:
    entry = _STORE.pop(key)
    _NOTES[key] = (f"This session's work was removed from the server's memory {why}: it held "
                   f"{describe_loss(entry.state, entry.extras)}. Upload the file again, or import a decision record "
                   "you exported, to go on.")
    while len(_NOTES) > MAX_NOTES:
        _NOTES.popitem(last=False)


def _evict(now: float) -> None:
    for key in [k for k, e in _STORE.items() if now - e.used > TTL]:
        _drop(key, f"after {TTL / 3600:g} hours without use")
    while len(_STORE) > MAX_SESSIONS or _bytes_held() > MAX_BYTES:
        # least valuable first; among equals the least recently used (the store is in order of use)
        key = min(_STORE, key=lambda k: _STORE[k].worth)
        _drop(key, f"because the server keeps at most {MAX_SESSIONS} sessions and {MAX_BYTES / 2**30:g} GiB of "
                   "uploads, and other sessions held more work")


def save(key: str, state: Any, session: Any) -> None:
    """Remember ``state`` and the :data:`KEPT_KEYS` of ``session`` under ``key`` (called after every run); a session
    with nothing of its own (:func:`worth` 0) is not stored."""
    if not _valid(key):
        return
    extras = {k: session[k] for k in KEPT_KEYS if k in session}
    value = worth(state, extras)
    now = time.monotonic()
    with _LOCK:
        if value == 0:
            _STORE.pop(key, None)
            return
        data = getattr(state, "upload_bytes", None)
        fp = getattr(state, "upload_fingerprint", None)
        if data and fp:  # identical uploads are held once (bytes are immutable: sharing them is safe)
            for other in _STORE.values():
                if getattr(other.state, "upload_fingerprint", None) == fp and other.state.upload_bytes == data:
                    state.upload_bytes = other.state.upload_bytes
                    break
        _STORE[key] = _Entry(state, extras, now, value)
        _STORE.move_to_end(key)
        _NOTES.pop(key, None)
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


def evicted(key: Any) -> str | None:
    """The note left by the eviction of ``key``'s session (what was lost and why), once; None if it was not evicted."""
    if not _valid(key):
        return None
    with _LOCK:
        return _NOTES.pop(key, None)


def forget(key: str) -> None:
    with _LOCK:
        _STORE.pop(key, None)


def clear() -> None:
    """Forget every session and note (tests)."""
    with _LOCK:
        _STORE.clear()
        _NOTES.clear()


def stats() -> dict[str, int]:
    """Sessions and uploaded bytes held now, and the limits."""
    with _LOCK:
        return {"sessions": len(_STORE), "bytes": _bytes_held(), "max_sessions": MAX_SESSIONS,
                "max_bytes": MAX_BYTES}
