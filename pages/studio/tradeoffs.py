"""Tradeoffs: sweep (B, ε, δ) for one or more mechanisms on the user's data; program effectiveness against each
protection score (the paper's Figure 3), privacy against privacy, Figure-2 bars, the Pareto frontier, the table,
the distinguishing attacker's view; clicking a point makes it the candidate.

The page reads the form (:mod:`ui.sections.tradeoffs_form`: the engine's ``SweepConfig`` objects), runs the pending
sweep (:mod:`ui.sections.tradeoffs_run`) and draws its results (:mod:`ui.sections.tradeoffs_results`): as current
while the form and the session give the sweep's own configurations, greyed with "settings changed — run again"
otherwise; a sweep of other data is kept but not shown."""

from __future__ import annotations

import streamlit as st

from ui.cached import current_data
from ui.common import plain, stale_block, stop_page, user_errors
from ui.sections.tradeoffs_form import draw_form, form_configs
from ui.sections.tradeoffs_results import (
    draw_choice,
    draw_distinguishing,
    draw_figure2,
    draw_figure3,
    draw_noise_profiles,
    draw_privacy_privacy,
    draw_program_basis,
    draw_table,
    sweep_view,
)
from ui.sections.tradeoffs_run import run_pending
from ui.state import get_state

state = get_state()

# ------------------------------------------------------------------------------------------------------- page
st.title("Tradeoffs")
st.markdown(
    "What does each (B, ε, δ) cost your program, and what does it buy against real attacks? A sweep privatizes "
    "your data many times over a grid, scores the program on every release and runs the three attacks — the "
    "paper's Figures 2 and 3, on your data. Click a point to make it your candidate."
)
loaded = None
with user_errors():
    loaded = current_data(state)
if loaded is None:
    st.info("Load a dataset on the Data page first.", icon=":material/info:")
    stop_page()
prepared = loaded.prepared
if prepared.y is None:
    st.info("A sweep scores a program, which needs an outcome: choose a target column on the Data page.",
            icon=":material/info:")
    stop_page()

draw_form(prepared.n, loaded.default_program, prepared.fingerprint)
run_pending(state, prepared)

status = state.sweeps_status(prepared.fingerprint, form_configs(state, prepared.n, loaded.default_program))
results = list(state.shown_sweeps(prepared.fingerprint))  # a stopped sweep's points, else the last sweep's
partial_results = [r for r in results if not r.complete]
if status == "other-data":
    st.info("The session's last sweep was computed on other data (or another preparation of them); it is kept and "
            "shown again when those data are loaded. Run the sweep for these data.", icon=":material/history:")
if status in ("none", "other-data") and not partial_results:
    st.info("Configure the sweep and press **Run the sweep**. The time it will take is estimated when it starts.",
            icon=":material/info:")
    stop_page()

# ---- results ----------------------------------------------------------------------------------------------------
stale = not partial_results and status == "stale"
if stale:
    st.warning("**Settings changed — run again.** The results below (greyed) are of the last sweep, "
               f"{plain(' · '.join(r.config.describe() for r in results))}; the form or the session's program or δ "
               "no longer give that sweep. Press **Run the sweep** for the current settings.", icon=":material/history:")
with stale_block(stale, "tradeoffs"):
    view = sweep_view(results, state, prepared)
    if not all(r.complete for r in results):
        st.caption("Partial result (the sweep was stopped).")
    draw_program_basis(view, dict(loaded.spec.roles or {}))
    draw_figure3(view)
    left, right = st.columns(2)
    with left:
        draw_privacy_privacy(view)
    with right:
        draw_figure2(view, state.selected_point.b if state.selected_point is not None else
                     state.candidate_or_default().b)
    draw_noise_profiles(view)
    draw_choice(view, state)
    draw_distinguishing(state)
    draw_table(view)
