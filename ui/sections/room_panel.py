"""The workshop room in the app (``studio app --workshop``, :mod:`ui.room`): the check at every script run, the
participants' shared data, and the sidebar panel — the facilitator's join link, its rotation and the data sharing."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui import room as rooms
from ui.common import plain
from ui.state import StudioState


def guard() -> rooms.Role | None:
    """On a workshop server: this session's role, or stop the run with a message when its link is no longer valid
    (the join link was rotated). None (and nothing drawn) on an ordinary server."""
    room = rooms.current()
    if room is None:
        return None
    role = rooms.session_role()
    if role is None:
        st.error("This workshop's join link has changed: ask the facilitator for the new link and open it.",
                 icon=":material/lock:")
        st.stop()
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is not None:
        room.seen(ctx.session_id, role)
    return role


def adopt_shared_data(state: StudioState) -> None:
    """A participant's session opens the data the facilitator shares (once per share: ``state.room_data``)."""
    room = rooms.current()
    shared = room.shared() if room is not None else None
    if shared is None or state.room_data == shared.version:
        return
    state.room_data = shared.version
    if shared.source == "demo":
        state.source, state.demo_name = "demo", str(shared.demo_name)
    else:
        state.source, state.upload_name, state.upload_fingerprint = "upload", shared.upload_name, shared.upload_fingerprint
        state.upload_bytes = None  # the bytes stay in the room, once
    state.spec = shared.spec
    state.switch_data()
    state.notices.append(f"The facilitator shares {shared.title} with the room: every page now uses it.")


def share_current_data(state: StudioState) -> rooms.SharedData:
    """The facilitator's data (the demo, or the upload and its bytes) and data spec, shared with the room."""
    room = rooms.current()
    assert room is not None
    if state.source == "upload":
        data = rooms.SharedData(title=state.upload_name or "the uploaded file", source="upload",
                                upload_name=state.upload_name, upload_fingerprint=state.upload_fingerprint,
                                upload_bytes=state.upload_bytes, spec=state.spec)
    else:
        data = rooms.SharedData(title=state.dataset_title or state.demo_name, source="demo",
                                demo_name=state.demo_name, spec=state.spec)
    shared = room.share(data)
    state.room_data = shared.version
    return shared


def draw_room_panel(state: StudioState, role: rooms.Role | None, container: Any) -> None:
    """The sidebar's room section: for the facilitator the join link, its rotation, the participants present and
    the data sharing; for a participant what the room shares."""
    room = rooms.current()
    if room is None or role is None:
        return
    shared = room.shared()
    with container:
        st.markdown("**Workshop room**")
        if role == "participant":
            st.caption(plain(f"Exploring {shared.title}, shared by the facilitator." if shared is not None else
                             "The facilitator has not shared data yet: the demos are open to everyone.")
                       + " " + rooms.ROWS_HIDDEN)
            return
        running, waiting = room.queue.load()
        st.caption(f"{room.participants()} participant(s) present · runs: {running} running, {waiting} waiting")
        from streamlit import config

        from ui.room_gate import lan_addresses

        address, port = str(config.get_option("server.address") or ""), int(config.get_option("server.port"))
        hosts = (lan_addresses() or ["127.0.0.1"]) if address in ("", "0.0.0.0", "::") else [address]
        st.caption("Join link for the room (the token is its key):")
        for host in hosts:
            st.code(room.link(host, port), language=None, wrap_lines=True)
        if st.button("Rotate the join link", key="room.rotate", icon=":material/autorenew:",
                     help="A new link: the old one stops working, and everyone who joined with it must open the "
                          "new one."):
            room.rotate()
            st.rerun()
        if shared is not None:
            st.caption(plain(f"Shared with the room: {shared.title}."))
        label = "Share this data with the room" if shared is None else "Share the data loaded now instead"
        if st.button(label, key="room.share", icon=":material/group_add:",
                     help="Participants open it without uploading anything; the raw rows stay yours to see.",
                     disabled=state.data_fingerprint is None):
            share_current_data(state)
            st.rerun()
