"""Privacy Parameter Studio — the Streamlit entry point (``python -m ui.serve``, i.e. ``streamlit run app.py``).

The page scripts live in ``pages/studio/``, one level below ``pages/``: Streamlit's legacy multipage mechanism
only picks up Python files directly in ``pages/``, so a deep link opened as the first request after a server
start (e.g. ``/feasibility``) still runs through this file's ``st.navigation`` and shared sidebar. (``ui/serve.py``
also switches that legacy router off, which would otherwise show a "Page not found" dialog over such a first page.)

Routes the nine pages with ``st.navigation``, keeps one :class:`ui.state.StudioState` per session (kept in memory
under the address's session key, so a reload restores it: :mod:`ui.session_store`), restores a shared scenario link
once per session, draws the shared sidebar after the page (so it shows what the page just changed) and writes the
current scenario back into the address bar.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import session_store
from ui.common import PageStop, render_sidebar, show_interrupted, show_notices, wait_for_warm_up, warm_up
from ui.links import apply_scenario_params, scenario_params
from ui.sections.room_panel import adopt_shared_data, draw_room_panel, guard
from ui.state import get_state, has_session, keep_widget_values, restore_session, session_key, set_session_key

#: (file, title, icon) in workflow order.
PAGES: tuple[tuple[str, str, str], ...] = (
    ("pages/studio/start.py", "Start", ":material/home:"),
    ("pages/studio/data.py", "Data", ":material/table_view:"),
    ("pages/studio/feasibility.py", "Accuracy targets & feasibility", ":material/target:"),
    ("pages/studio/mechanisms.py", "Mechanisms", ":material/shield_lock:"),
    ("pages/studio/tradeoffs.py", "Tradeoffs", ":material/ssid_chart:"),
    ("pages/studio/per_record.py", "Per-record", ":material/person_search:"),
    ("pages/studio/public_info.py", "Public information", ":material/public:"),
    ("pages/studio/workshop.py", "Workshop", ":material/groups:"),
    ("pages/studio/export.py", "Export", ":material/download:"),
)

# The tab icon is a local file: a ":material/…:" page icon makes every browser fetch it from a font service. (The
# Material Symbols font of the page icons in the navigation is bundled with Streamlit and served locally.)
st.set_page_config(page_title="Privacy Parameter Studio", page_icon=str(Path(__file__).parent / "assets" / "favicon.svg"),
                   layout="wide")
# A workshop server lets in only the room (ui.room): stop here when this session's link is no longer valid.
role = guard()

# A reload starts a new session: bring back this session's work kept in memory under the address's key (work that
# was running then is reported as interrupted, with a button to run it again: ui.common.show_interrupted).
evicted_note = None
restored = False
if not has_session():
    asked = st.query_params.get(session_store.SESSION_PARAM)
    kept = session_store.restore(asked)
    if kept is not None and isinstance(asked, str):
        restore_session(*kept)
        set_session_key(asked)
        restored = True
    else:  # evicted work is announced, never dropped silently
        evicted_note = session_store.evicted(asked)
set_session_key(session_store.new_key())

state = get_state()
if not restored:
    state.finish_work()  # work an earlier run of this session announced ended with that run (a Stop or another click)
if evicted_note is not None:
    state.notices.append(evicted_note)
if role == "participant":
    adopt_shared_data(state)  # the data the facilitator shares, without uploading
link_page = None
if not state.link_restored:
    state.link_restored = True
    link = st.query_params.to_dict()
    if link:
        state.notices.extend(apply_scenario_params(state, link))
        link_page = link.get("page")

pages = [st.Page(path, title=title, icon=icon, default=(i == 0)) for i, (path, title, icon) in enumerate(PAGES)]
navigation = st.navigation(pages)
if isinstance(link_page, str) and link_page != navigation.url_path:
    target = next((p for p in pages if p.url_path == link_page), None)
    if target is not None:
        st.switch_page(target)  # a shared link opens on the page it was made on
sidebar = st.sidebar.container()
show_notices(state)
show_interrupted(state)
keep_widget_values()
state.enter_page(navigation.url_path)  # a page drawn again after another one reseeds its widgets from the state
wait_for_warm_up()  # never import alongside the background warm-up (ui.common.wait_for_warm_up)
try:
    navigation.run()
except PageStop:  # the page ended early on purpose (ui.common.stop_page): the shell below still runs
    pass
finally:
    render_sidebar(state, sidebar, page=navigation.url_path)
    draw_room_panel(state, role, sidebar)
    key = session_key() or ""
    wanted = {**scenario_params(state, page=navigation.url_path), session_store.SESSION_PARAM: key}
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
    session_store.save(key, get_state(), st.session_state)
    warm_up()  # after the first page is drawn: import what the later pages need in the background
