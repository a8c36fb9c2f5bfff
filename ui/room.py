"""The workshop room (``studio app --workshop``, issue 36): who may use the server, the data the facilitator shares with
the room, the runs the room shares and the queue of heavy runs.

Access
------
A workshop server listens on the local network, so it lets in only people holding one of two secrets (128 random bits
each, from the operating system), as Jupyter's token does:

* the **facilitator's token**, printed on the facilitator's terminal only;
* the **join token**, in the join link the facilitator shows the room. :meth:`Room.rotate` replaces it: the old link
  stops working, and everyone who joined with it is refused at their next request or script run (they ask for the
  new link).

Opening a link sets a cookie (an HMAC of the role and the token under a key made for this server process, never the
token itself) and redirects to the same address without the token; :mod:`ui.room_gate` refuses every request
without a valid token or cookie — pages, static files, the websocket, the health and upload endpoints — and the app
checks the cookie again at every script run (:func:`session_role`), so a rotation also ends the sessions already open.

Shared data and work
--------------------
The facilitator loads the data once and shares it (:meth:`Room.share`): participants' sessions open on it without
uploading anything. Their sessions use the same data key as the facilitator's (``upload:<fingerprint>``, or the
demo's), so the prepared data, profiles and every other ``st.cache_data`` entry are computed once for the room. The
uploaded bytes stay in this process's memory, once, in the room; a participant's session holds none. The raw rows
(the Data page's preview, the column examples, the per-record page's list of records) are the facilitator's only
(:func:`may_see_rows`).

A Mechanisms run on the room's data with fresh randomness (no seed of the participant's) is shared: a participant
asking for a configuration someone in the room already ran gets that run (:meth:`Room.remember_run`), labelled so.
Heavy runs (a Mechanisms run, a sweep) wait for one of the room's run slots in order of arrival (:class:`RunQueue`),
with their position shown, instead of all competing for the two cores at once.

Nothing here is kept on disk or survives a restart. Outside a workshop server (:func:`current` is None) nothing of
this module changes the Studio's behaviour.
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import itertools
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlencode

Role = Literal["facilitator", "participant"]

#: Query parameter of a link's token, and the cookie it is exchanged for.
TOKEN_PARAM = "token"
COOKIE = "studio_room"
#: Runs the room keeps for sharing (least recently used dropped first).
SHARED_RUNS = 32
#: A participant counts as present this long after their last script run (seconds).
PRESENT_SECONDS = 600.0


def run_slots() -> int:
    """Heavy runs at once: one per two cores (a Mechanisms run already uses several threads), at least one."""
    return max(1, (os.cpu_count() or 1) // 2)


@dataclass(frozen=True)
class SharedData:
    """What the facilitator shares: a demo by name, or an uploaded file's bytes (kept here, once), with the data spec
    the facilitator prepared it with. ``version`` counts the shares, so sessions notice a new one."""

    title: str
    source: Literal["demo", "upload"]
    demo_name: str | None = None
    upload_name: str | None = None
    upload_fingerprint: str | None = None
    upload_bytes: bytes | None = field(default=None, repr=False)
    spec: Any = None
    version: int = 0


class RunQueue:
    """First come, first served: at most ``slots`` runs at once; the others wait, knowing their place."""

    def __init__(self, slots: int) -> None:
        self.slots = max(1, int(slots))
        self._lock = threading.Lock()
        self._tickets = itertools.count(1)
        self._waiting: list[int] = []
        self._running: set[int] = set()

    def enter(self) -> int:
        """A ticket at the end of the line."""
        with self._lock:
            ticket = next(self._tickets)
            self._waiting.append(ticket)
            return ticket

    def try_start(self, ticket: int) -> bool:
        """Start ``ticket``'s run if a slot is free and no earlier ticket waits; True once it runs."""
        with self._lock:
            if ticket in self._running:
                return True
            if len(self._running) < self.slots and self._waiting and self._waiting[0] == ticket:
                self._waiting.pop(0)
                self._running.add(ticket)
                return True
            return False

    def position(self, ticket: int) -> tuple[int, int]:
        """(runs waiting ahead of ``ticket``, runs running); (0, n) once it runs."""
        with self._lock:
            ahead = self._waiting.index(ticket) if ticket in self._waiting else 0
            return ahead, len(self._running)

    def leave(self, ticket: int) -> None:
        """Give up the place or the slot (a finished, failed or abandoned run)."""
        with self._lock:
            self._running.discard(ticket)
            if ticket in self._waiting:
                self._waiting.remove(ticket)

    def load(self) -> tuple[int, int]:
        """(running, waiting) now."""
        with self._lock:
            return len(self._running), len(self._waiting)


class Room:
    """One workshop server's room: its two tokens, the shared data and runs, the run queue and who is present."""

    def __init__(self, *, slots: int | None = None) -> None:
        self.facilitator_token = secrets.token_urlsafe(16)
        self.join_token = secrets.token_urlsafe(16)
        self._key = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self._shared: SharedData | None = None
        self._runs: collections.OrderedDict[str, Any] = collections.OrderedDict()
        self._present: dict[str, tuple[Role, float]] = {}
        self.queue = RunQueue(run_slots() if slots is None else slots)

    # ------------------------------------------------------------------------------------------------ access
    def _cookie(self, role: Role, token: str) -> str:
        digest = hmac.new(self._key, f"{role}:{token}".encode(), hashlib.sha256).hexdigest()
        return f"{role[0]}.{digest}"

    def role_for_token(self, token: str | None) -> Role | None:
        """The role a link's token gives, or None."""
        if not isinstance(token, str):
            return None
        if hmac.compare_digest(token.encode(), self.facilitator_token.encode()):
            return "facilitator"
        if hmac.compare_digest(token.encode(), self.join_token.encode()):
            return "participant"
        return None

    def cookie_for(self, role: Role) -> str:
        """The cookie value a link of ``role`` sets (it changes when the join token is rotated)."""
        return self._cookie(role, self.facilitator_token if role == "facilitator" else self.join_token)

    def role_for_cookie(self, value: str | None) -> Role | None:
        """The role a cookie value gives now, or None (unknown, forged, or made with a rotated join token)."""
        if not isinstance(value, str):
            return None
        for role in ("facilitator", "participant"):
            if hmac.compare_digest(value.encode(), self.cookie_for(role).encode()):
                return role
        return None

    def rotate(self) -> str:
        """A new join token: the old link and the cookies it set stop working. Returns the new token."""
        with self._lock:
            self.join_token = secrets.token_urlsafe(16)
            self._present = {k: v for k, v in self._present.items() if v[0] == "facilitator"}
            return self.join_token

    def link(self, host: str, port: int, role: Role = "participant") -> str:
        """The address to open: ``http://host:port/?token=…``."""
        token = self.facilitator_token if role == "facilitator" else self.join_token
        return f"http://{host}:{port}/?{urlencode({TOKEN_PARAM: token})}"

    # ------------------------------------------------------------------------------------------------ presence
    def seen(self, session: str, role: Role) -> None:
        with self._lock:
            self._present[session] = (role, time.monotonic())

    def participants(self) -> int:
        """Participants whose session ran a page in the last :data:`PRESENT_SECONDS`."""
        now = time.monotonic()
        with self._lock:
            return sum(1 for role, at in self._present.values()
                       if role == "participant" and now - at <= PRESENT_SECONDS)

    # ------------------------------------------------------------------------------------------------ sharing
    def share(self, data: SharedData) -> SharedData:
        """Share ``data`` with the room (replacing what was shared); returns it with its new version."""
        with self._lock:
            version = (self._shared.version if self._shared is not None else 0) + 1
            self._shared = SharedData(**{**data.__dict__, "version": version})
            self._runs.clear()
            return self._shared

    def unshare(self) -> None:
        with self._lock:
            self._shared = None
            self._runs.clear()

    def shared(self) -> SharedData | None:
        with self._lock:
            return self._shared

    def shared_bytes(self, fingerprint: str | None) -> bytes | None:
        """The shared upload's bytes when ``fingerprint`` is its fingerprint, else None."""
        shared = self.shared()
        if shared is None or fingerprint is None or shared.upload_fingerprint != fingerprint:
            return None
        return shared.upload_bytes

    def remember_run(self, key: str, run: Any) -> None:
        with self._lock:
            self._runs[key] = run
            self._runs.move_to_end(key)
            while len(self._runs) > SHARED_RUNS:
                self._runs.popitem(last=False)

    def run(self, key: str) -> Any:
        """The run the room already made under ``key``, or None."""
        with self._lock:
            run = self._runs.get(key)
            if run is not None:
                self._runs.move_to_end(key)
            return run


_ROOM: Room | None = None


def activate(room: Room | None) -> None:
    """Make ``room`` this server's room (``ui.room_gate.install``); None: no room (tests)."""
    global _ROOM
    _ROOM = room


def current() -> Room | None:
    """This server's room, or None when it is not a workshop server."""
    return _ROOM


# ---------------------------------------------------------------------------------------------- in a script run
def session_role() -> Role | None:
    """This session's role in the room, from the cookie its connection was opened with (None: no room, or no valid
    cookie — e.g. the join link was rotated since)."""
    room = current()
    if room is None:
        return None
    import streamlit as st

    try:
        value = st.context.cookies.get(COOKIE)
    except Exception:  # noqa: BLE001 - no request behind this run (AppTest): nobody
        value = None
    return room.role_for_cookie(value)


def is_participant() -> bool:
    """True in a participant's session of a workshop server."""
    return current() is not None and session_role() == "participant"


def may_see_rows() -> bool:
    """Whether this session may see raw rows of the data: always, except a participant in a workshop room."""
    return not is_participant()


ROWS_HIDDEN = "Raw rows are shown to the workshop's facilitator only."


def shared_upload(fingerprint: str | None) -> bytes | None:
    """The room's shared upload when ``fingerprint`` is its fingerprint (a participant's session holds no bytes of its
    own), else None."""
    room = current()
    return room.shared_bytes(fingerprint) if room is not None else None
