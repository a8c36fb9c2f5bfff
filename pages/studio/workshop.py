"""Workshop: the pinned candidates side by side — guarantee in words and numbers, what an attacker could learn in
odds, the program's metric in people, the three protections — one chosen and the group's reasons; a presenter mode
shows one candidate per screen in large type and the comparison at the end.

The page reads the session's workshop (``StudioState.workshop``), makes one cached engine call
(:func:`engine.workshop.comparison_rows` through :func:`ui.cached.workshop_comparison`) and draws
(:mod:`ui.sections.workshop_view`, :mod:`ui.figures.workshop`)."""

from __future__ import annotations

import streamlit as st

from engine.workshop import MAX_PINNED
from ui.cached import current_data, workshop_comparison
from ui.common import plain, stop_page, user_errors
from ui.sections.workshop_view import (
    PRESENTER_CSS,
    draw_chart,
    draw_slide,
    draw_table,
    measure,
    on_choose,
    on_rationale,
    on_slide,
    on_unpin,
)
from ui.state import get_state, seed_widget

#: Most pinned candidates whose table is drawn beside the chart; more get the page's full width.
WIDE_TABLE = 3

state = get_state()
workshop = state.workshop

st.title("Workshop")
presenter = st.toggle("Presenter mode", key="workshop.presenter",
                      help="For a projector: large type, one candidate per screen, the comparison at the end.")
if not presenter:
    st.markdown(
        f"Compare up to {MAX_PINNED} candidates pinned on the other pages (**Pin this candidate** on Accuracy "
        "targets & feasibility, Mechanisms, Tradeoffs and the recommendation), choose one and write down why. The "
        "decision record and the HTML report on the Export page carry all of it."
    )
if not workshop.pinned:
    st.info("Nothing is pinned yet. Pin a candidate on one of these pages:", icon=":material/push_pin:")
    st.page_link("pages/studio/feasibility.py", label="Accuracy targets & feasibility", icon=":material/target:")
    st.page_link("pages/studio/mechanisms.py", label="Mechanisms", icon=":material/shield_lock:")
    st.page_link("pages/studio/tradeoffs.py", label="Tradeoffs", icon=":material/ssid_chart:")
    stop_page()

loaded = None
with user_errors():
    loaded = current_data(state)
program = None
if loaded is not None and loaded.prepared.y is not None:
    with user_errors(prefix="Program: "):
        program = state.program_or(loaded.default_program)

with user_errors():
    if loaded is not None and state.workshop_measure:
        state.workshop_measure = False
        for i, c in enumerate(state.workshop.pinned):
            if c.evidence is None or c.evidence.data not in (None, loaded.prepared.fingerprint):
                measure(state, i, loaded, program)
    workshop = state.workshop
rows = workshop_comparison(loaded.prepared.fingerprint if loaded is not None else "", workshop,
                           int(loaded.prepared.d) if loaded is not None else None,
                           loaded.prepared.x if loaded is not None else None)

if presenter:
    st.html(PRESENTER_CSS)
    slides = len(rows) + 1  # one per candidate, then the comparison
    slide = min(max(int(state.workshop_slide), 0), slides - 1)
    state.workshop_slide = slide
    prev, where, nxt = st.columns([0.2, 0.6, 0.2], vertical_alignment="center")
    prev.button("Previous", key="workshop.prev", icon=":material/arrow_back:", disabled=slide == 0,
                on_click=on_slide, args=(-1,))
    nxt.button("Next", key="workshop.next", icon=":material/arrow_forward:", disabled=slide == slides - 1,
               on_click=on_slide, args=(1,))
    where.caption(f"Screen {slide + 1} of {slides}")
    if slide < len(rows):
        draw_slide(rows[slide])
    else:
        st.header("The comparison")
        draw_chart(rows, "workshop.chart_presenter", height=380, wide=True)
        draw_table(rows, compact=True)
    stop_page()

unmeasured = [r.label for r in rows if r.evidence is None or r.other_data]
if unmeasured and loaded is not None:
    m1, m2 = st.columns([0.7, 0.3], vertical_alignment="center")
    m1.caption(plain(f"Not measured on the loaded data: {', '.join(unmeasured)}. Measuring runs each one as the "
                     "Mechanisms page does (5 releases with the attacks; fresh randomness unless the session has a "
                     "seed)."))
    if m2.button("Measure them", key="workshop.measure", icon=":material/play_arrow:"):
        state.workshop_measure = True
        st.rerun()

if len(rows) <= WIDE_TABLE:
    left, right = st.columns([0.6, 0.4], gap="large")
    with left:
        st.subheader("The candidates compared")
        draw_table(rows)
    with right:
        st.subheader("Metric against privacy loss")
        draw_chart(rows, "workshop.chart")
else:  # more columns than a side-by-side table shows legibly at 1280 px: the chart, then the table, full width
    st.subheader("Metric against privacy loss")
    draw_chart(rows, "workshop.chart", height=380, wide=True)
    st.subheader("The candidates compared")
    draw_table(rows, compact=True)

st.subheader("The decision")
options = [-1, *range(len(workshop.pinned))]
seed_widget("workshop.choice", -1 if workshop.chosen is None else workshop.chosen)
choice_labels = {-1: "not yet", **{i: plain(f"{i + 1}. {c.label}") for i, c in enumerate(workshop.pinned)}}
st.radio("The group chooses", options, key="workshop.choice", on_change=on_choose, horizontal=True,
         format_func=choice_labels.get)
seed_widget("workshop.rationale", state.rationale)
st.text_area("Why the group chose it", key="workshop.rationale", on_change=on_rationale, height=120, max_chars=10_000,
             placeholder="e.g. Candidate 2 keeps exclusion errors under 5,000 people and no attacker can move "
             "beyond 3:1 odds about a neighbour …")

with st.expander("Unpin a candidate"):
    for i, c in enumerate(workshop.pinned):
        st.button(f"Unpin {i + 1}. {plain(c.label)}", key=f"workshop.unpin_{i}", on_click=on_unpin, args=(i,),
                  icon=":material/close:")
st.page_link("pages/studio/export.py", label="Export the decision record and report", icon=":material/download:")
