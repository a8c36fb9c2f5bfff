"""The "Pin this candidate" control every page with a candidate draws (Feasibility, Mechanisms, Tradeoffs and the
recommendation): a label and a button that add the page's candidate to the session's workshop
(``StudioState.workshop``, :class:`engine.workshop.Workshop`), shown on the Workshop page."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from engine.errors import EngineError
from engine.workshop import MAX_PINNED, Candidate
from ui.common import plain
from ui.state import get_state, widget


def draw_pin(key: str, default_label: str, build: Callable[[str], Candidate], *, help: str = "") -> None:
    """A label input and a "Pin this candidate" button; ``build(label)`` makes the :class:`Candidate` when the button
    is pressed (an ``EngineError`` it raises — e.g. a seventh pin — is shown, not raised). ``key`` namespaces the
    widgets (``"<page>.pin"``). ``build`` is called in the page run, never kept as a callback (session state stays
    picklable)."""
    state = get_state()
    with st.container(border=True):
        c1, c2 = st.columns([0.7, 0.3], vertical_alignment="bottom")
        c1.text_input("Label for the workshop", key=f"{key}.label", max_chars=80, placeholder=default_label,
                      help="How this candidate is named in the Workshop's comparison and the decision record (empty: "
                      "the name shown in grey).")
        pressed = c2.button("Pin this candidate", key=f"{key}.button", icon=":material/push_pin:",
                            help=help or f"Add it to the Workshop's comparison (at most {MAX_PINNED} candidates).")
        if not pressed:
            if state.workshop.pinned:
                st.caption(f"{len(state.workshop.pinned)} of {MAX_PINNED} pinned.")
            return
        try:
            candidate = state.pin(build(str(widget(f"{key}.label") or "").strip() or default_label))
        except EngineError as exc:
            st.error(plain(exc), icon=":material/push_pin:")
            return
        st.success(plain(f"Pinned “{candidate.label}” ({len(state.workshop.pinned)} of {MAX_PINNED}) — compare the "
                         "pinned candidates on the Workshop page."), icon=":material/push_pin:")
        st.page_link("pages/studio/workshop.py", label="Open the Workshop", icon=":material/groups:")


def draw_pin_budget(key: str = "feasibility.pin") -> None:
    """Pin the Feasibility page's current candidate (B, ε, δ): a budget, measured on the Workshop page."""
    state = get_state()
    cand = state.candidate_or_default()
    draw_pin(key, state.pin_label("Feasibility", guarantee=cand),
             lambda label: Candidate(label=label, source="feasibility", guarantee=cand),
             help="Pin the candidate (B, ε, δ) — a budget; the Workshop measures it on your data with the Gaussian "
             "mechanism spending it.")


def draw_pin_recommendation(recommendation, d: int, fingerprint: str, program,
                            key: str = "feasibility.pin_recommended") -> None:
    """Pin the recommended point with the search's evidence (:func:`engine.workshop.candidate_from_recommendation`)."""
    from engine.workshop import candidate_from_recommendation

    point = recommendation.recommended
    draw_pin(key, get_state().pin_label("Recommended", point.build_mechanism(d)),
             lambda label: candidate_from_recommendation(recommendation, label, d=d, data=fingerprint, program=program),
             help="Pin the recommended configuration with the search's measured metric and protections.")
