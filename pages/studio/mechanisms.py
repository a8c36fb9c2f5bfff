"""Mechanisms: configure one mechanism (prefilled from the candidate), run it once, see what it guarantees, costs
and buys, compare it honestly with the alternatives at the same (B, ε, δ), and download the release.

The page reads the form (:mod:`ui.sections.mechanisms_form`), asks for a run of exactly its configuration
(:class:`ui.state.RunConfig`), makes one engine call (:func:`engine.release_analysis.analyse_release` through
:func:`ui.runs.release_run`) and draws the result (:mod:`ui.sections.mechanisms_results`). A run is shown as current
only while the form holds its configuration; otherwise it is greyed with "settings changed — run again"."""

from __future__ import annotations

import streamlit as st

from engine.rng import SEEDED_WARNING
from engine.workshop import candidate_from_run
from ui.cached import current_data
from ui.common import plain, seed_badge, stale_block, stop_page, user_errors
from ui.figures.theme import fmt, fmt_param
from ui.runs import release_estimate, release_run
from ui.sections.mechanisms_form import (
    KIND_LABELS,
    draw_form,
    draw_run_estimate,
    form_config,
    help_kind,
    kinds,
    on_draw_again,
    starting_config,
)
from ui.sections.mechanisms_results import (
    draw_comparison,
    draw_data_effect,
    draw_download,
    draw_guarantee,
    draw_program_and_protection,
)
from ui.sections.workshop_pin import draw_pin
from ui.state import RunContext, get_state, seed_widget, set_widget, widget

state = get_state()

# ------------------------------------------------------------------------------------------------------- page
st.title("Mechanisms")
st.markdown(
    "Run one mechanism on your data with the candidate (B, ε, δ) and see exactly what it guarantees, what it does "
    "to the data, what it costs the program and how well it resists the three attacks. The comparison panel puts "
    "the alternatives at the same guarantee side by side."
)

loaded = None
with user_errors():
    loaded = current_data(state)
if loaded is None:
    st.info("Load a dataset on the Data page first.", icon=":material/info:")
    st.page_link("pages/studio/data.py", label="Go to the Data page", icon=":material/table_view:")
    stop_page()

prepared = loaded.prepared
candidate = state.candidate_or_default()
st.caption(
    f"Candidate from the feasibility page: B = {fmt_param(candidate.b)}, ε = {fmt_param(candidate.epsilon)}, "
    f"δ = {fmt(candidate.delta)}" + ("" if state.candidate is not None else " (default: the paper's Example 1)")
)

offered = kinds()
stored_kind = state.mechanism.KIND if state.mechanism is not None else offered[0]
seed_widget("mechanisms.kind", stored_kind if stored_kind in offered else offered[0])
if widget("mechanisms.kind") not in offered:  # a mechanism no longer registered
    set_widget("mechanisms.kind", offered[0])
kind = st.radio(
    "Mechanism", offered, key="mechanisms.kind", format_func=KIND_LABELS.get, help=help_kind(),
    horizontal=True,
)

program = None
with user_errors(prefix="Program: "):
    program = state.program_or(loaded.default_program)
if prepared.y is None:
    program = None
context = RunContext(prepared.fingerprint, program, candidate, state.demo_name if state.source == "demo" else None)
start = starting_config(state, kind, candidate, prepared.d)
seed_widget("mechanisms.seed", "" if state.seed is None else str(state.seed))
draw_form(kind, start, prepared, candidate, context)

if state.form_errors.get("mechanisms"):
    st.error(state.form_errors["mechanisms"], icon=":material/error:")

if widget("mechanisms.stop") and state.run_request is not None:  # the Stop button of the run below was pressed
    state.run_request = None
    st.info("Stopped. Nothing of the stopped run is kept" + (" — the previous run is shown." if state.runs else "."),
            icon=":material/stop_circle:")

request = state.run_request
if request is not None and state.remembered_run(request) is None:
    # A run that will take long (a wide table: the attack grows with the square of the columns) is announced first.
    estimate = None
    with user_errors():
        estimate = release_estimate(request, loaded.spec, n=prepared.n, d=prepared.d)
    if estimate is not None and estimate.needs_confirmation and state.run_confirmed != request.confirm_key():
        draw_run_estimate(estimate, request.confirm_key())
        stop_page()
if request is not None:
    with user_errors():
        release_run(state, request, loaded.frame, loaded.spec, shareable=state.run_request_shareable)
    state.run_request = None  # done, or failed with its message above: the form asks again

form = form_config(kind, prepared.d, context)
shown, stale = state.current_run(form)
if shown is None:
    st.info("Set the parameters and press **Run the mechanism**.", icon=":material/info:")
    stop_page()
run, config = shown.result, shown.config
if config.data != prepared.fingerprint:
    st.warning("The last run was made on other data (or another preparation of them) than the loaded: press **Run "
               "the mechanism** to run it on these data.", icon=":material/history:")
    stop_page()

if stale:
    changed = config.differences(form) if form is not None else ["a value in the form, which is not valid now"]
    st.warning("**Settings changed — run again.** The result below (greyed) is of the previous run, "
               f"{plain(config.label())}; since then {plain('; '.join(changed))} changed. Press **Run the "
               "mechanism** for the form's settings.", icon=":material/history:")
with stale_block(stale, "mechanisms"):
    top = st.columns([0.75, 0.25])
    top[0].subheader(f"{run.label}")
    top[1].button("Draw again", key="mechanisms.draw_again", on_click=on_draw_again, args=(config,),
                  icon=":material/casino:", help="Same configuration, new noise (the next seed if you fixed one).")
    st.markdown(seed_badge(config.recorded_seed))
    if config.user_seed:
        st.warning(SEEDED_WARNING, icon=":material/warning:")
    draw_pin("mechanisms.pin", state.pin_label("Mechanisms run", run.mechanism),
             lambda label: candidate_from_run(run, label, program=config.program),
             help="Pin this run — its own mechanism, guarantee and measured evidence — for the Workshop's comparison.")
    draw_guarantee(run, prepared)
    draw_data_effect(run, prepared, config.program, int(config.seed))
    draw_program_and_protection(run, state.gammas, config.candidate, config.program, dict(loaded.spec.roles or {}))
    draw_comparison(run)
    draw_download(run, prepared)
