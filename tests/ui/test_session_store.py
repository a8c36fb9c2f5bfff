"""The reload store keeps everyone's work (issue 35 item 5): visitors are not stored, eviction takes the least
valuable session first and tells its user what was lost, the limits are visible, and a workshop of 20 people
uploading the largest file the app accepts never evicts anyone."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from engine.guarantee import Guarantee
from engine.workshop import Candidate, Workshop
from tests.app.conftest import APP, TIMEOUT, start_app
from ui import cached, session_store
from ui.session_store import new_key, restore, save
from ui.state import StudioState


@pytest.fixture(autouse=True)
def _empty_store():
    session_store.clear()
    yield
    session_store.clear()


def uploader(size: int, name: str = "survey.csv", content: bytes | None = None) -> StudioState:
    data = content if content is not None else new_key().encode() * (size // 22 + 1)
    return StudioState(source="upload", upload_name=name, upload_bytes=data[:size],
                       upload_fingerprint=str(hash(data[:size])))


def with_runs(state: StudioState, count: int) -> StudioState:
    """``state`` holding ``count`` Mechanisms runs (stand-ins: the store only counts them)."""
    state.runs = tuple(f"run {i + 1}" for i in range(count))  # type: ignore[assignment]
    return state


def pinned() -> StudioState:
    g = Guarantee(epsilon=1.0, delta=1e-5, b=0.5)
    return StudioState(workshop=Workshop(pinned=(Candidate(label="Gaussian B = 0.5", source="feasibility", guarantee=g),)))


def test_visitors_who_only_open_a_page_are_not_stored_and_evict_nobody():
    """The issue's reproduction: 16 visitors who only opened the Start page pushed out an earlier user's upload."""
    mine = new_key()
    save(mine, with_runs(uploader(1000), 1), {"tradeoffs.reps": 1})
    for _ in range(4 * session_store.MAX_SESSIONS):
        save(new_key(), StudioState(), {})
    assert session_store.stats()["sessions"] == 1
    state, extras = restore(mine)
    assert state.upload_bytes is not None and state.runs == ("run 1",) and extras == {"tradeoffs.reps": 1}


def test_uploads_by_others_do_not_evict_earlier_work():
    """12 uploads of 35 MB by others (the issue's second reproduction) fit beside an earlier user's work."""
    mine = new_key()
    save(mine, pinned(), {})
    for i in range(12):
        save(new_key(), uploader(35 * 2**20, name=f"f{i}.csv"), {})
    assert restore(mine) is not None and session_store.stats()["sessions"] == 13


def test_a_workshop_of_twenty_uploading_the_largest_file_evicts_nobody():
    assert 20 * cached.MAX_UPLOAD_MB * 2**20 <= session_store.MAX_BYTES and session_store.MAX_SESSIONS >= 20
    keys = [new_key() for _ in range(20)]
    for i, key in enumerate(keys):
        save(key, uploader(cached.MAX_UPLOAD_MB * 2**20, name=f"p{i}.csv"), {})
    assert all(restore(k) is not None for k in keys)


def test_identical_uploads_are_held_once():
    data = b"x" * 10_000
    for _ in range(5):
        save(new_key(), uploader(len(data), content=data), {})
    assert session_store.stats()["bytes"] == len(data)


def test_eviction_takes_the_least_valuable_first_and_leaves_a_note(monkeypatch):
    monkeypatch.setattr(session_store, "MAX_SESSIONS", 3)
    valuable, settings, upload = new_key(), new_key(), new_key()
    save(valuable, pinned(), {})  # the oldest, but the most valuable
    save(settings, StudioState(gammas=(0.9,)), {})
    save(upload, with_runs(uploader(100, name="loans.csv"), 2), {})
    save(new_key(), StudioState(workshop=Workshop(rationale="chosen")), {})  # one too many: the settings-only one goes
    assert restore(valuable) is not None and restore(upload) is not None and restore(settings) is None
    note = session_store.evicted(settings)
    assert note is not None and "at most 3 sessions" in note and "the settings" in note
    assert session_store.evicted(settings) is None  # said once
    save(new_key(), StudioState(workshop=Workshop(rationale="another")), {})  # next: the upload with two runs goes
    assert restore(upload) is None
    note = session_store.evicted(upload)
    assert "the uploaded file loans.csv (0.0 MB), 2 Mechanisms runs" in note


def test_an_evicted_user_is_told_on_reload_what_was_lost(monkeypatch):
    key = new_key()
    monkeypatch.setattr(session_store, "MAX_SESSIONS", 1)
    save(key, uploader(100, name="loans.csv"), {})
    save(new_key(), pinned(), {})  # evicts the upload (less valuable)
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params[session_store.SESSION_PARAM] = key  # the reload of the evicted session's address
    at.run()
    assert not at.exception
    shown = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "This session's work was removed from the server's memory" in shown and "loans.csv" in shown


def test_the_limits_are_shown_in_the_sidebar():
    at = start_app()
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert f"of {session_store.MAX_SESSIONS} sessions" in captions and "never on disk" in captions
