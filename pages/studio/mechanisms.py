"""Mechanisms: configure one mechanism (prefilled from the candidate), run it once, see what it guarantees, costs
and buys, compare it honestly with the alternatives at the same (B, ε, δ), and download the release.

The page reads the form (:mod:`ui.sections.mechanisms_form`), builds the engine's release and analysis configurations,
makes one engine call (:func:`engine.release_analysis.analyse_release` through :func:`ui.runs.release_run`) and draws
the result (:mod:`ui.sections.mechanisms_results`)."""

from __future__ import annotations

import streamlit as st

from engine.analysis import AnalysisConfig
from engine.release import ReleaseConfig
from engine.release_analysis import ReleaseAnalysis, estimate_release_analysis
from engine.rng import SEEDED_WARNING
from engine.workshop import candidate_from_run
from ui.cached import current_data
from ui.common import seed_badge, stop_page, user_errors
from ui.figures.theme import fmt, fmt_param
from ui.runs import release_run, remembered_run, run_key
from ui.sections.mechanisms_form import (
    KIND_LABELS,
    draw_form,
    draw_run_estimate,
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
from ui.state import get_state, seed_widget

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
if st.session_state["mechanisms.kind"] not in offered:  # a mechanism no longer registered
    st.session_state["mechanisms.kind"] = offered[0]
kind = st.radio(
    "Mechanism", offered, key="mechanisms.kind", format_func=KIND_LABELS.get, help=help_kind(),
    horizontal=True,
)

start = starting_config(state, kind, candidate, prepared.d)
seed_widget("mechanisms.seed", "" if state.seed is None else str(state.seed))
draw_form(kind, start, prepared, candidate)

if st.session_state.get("mechanisms.form_error"):
    st.error(st.session_state["mechanisms.form_error"], icon=":material/error:")

args = st.session_state.get("mechanisms.args")
if not args:
    st.info("Set the parameters and press **Run the mechanism**.", icon=":material/info:")
    stop_page()

program = None
with user_errors(prefix="Program: "):
    program = state.program_or(loaded.default_program)
if prepared.y is None:
    program = None
analysis = AnalysisConfig(program=program)
dataset = state.demo_name if state.source == "demo" else None

if st.session_state.get("mechanisms.stop"):  # the Stop button of the run below was pressed: back to the last run
    last = st.session_state.get("mechanisms.last_good")
    if last and last != args:
        st.session_state["mechanisms.args"] = args = last
    elif not last:
        st.session_state.pop("mechanisms.args", None)
    st.info("Stopped. Nothing of the stopped run is kept" + (" — the previous run is shown." if last else "."),
            icon=":material/stop_circle:")
    if not last:
        stop_page()


def key_of(a: dict) -> str:
    return run_key(prepared.fingerprint, loaded.spec.config_key(), a["mechanism"].config_key(),
                   analysis.config_key(), candidate.config_key(), int(a["seed"]), bool(a["user_seed"]), dataset)


def release_config(a: dict) -> ReleaseConfig:
    return ReleaseConfig.of(loaded.spec, a["mechanism"], seed=int(a["seed"]) if a["user_seed"] else None,
                            dataset=dataset)


def compute(a: dict) -> ReleaseAnalysis:
    """The run for ``a``: this session's stored one, else computed with a progress bar and a Stop button."""
    # A run with fresh randomness (no seed of the user's, not drawn again) may be shared in a workshop room (ui.room).
    shared = None if a["user_seed"] or a.get("again") else run_key(
        prepared.fingerprint, loaded.spec.config_key(), a["mechanism"].config_key(), analysis.config_key(),
        candidate.config_key(), "fresh randomness", dataset)
    return release_run(st.session_state, key_of(a), loaded.frame, release_config(a), analysis, candidate,
                       int(a["seed"]), shared_key=shared)


# A run that will take long (a wide table: the attack grows with the square of the columns) is announced first.
if remembered_run(st.session_state, key_of(args)) is None:
    estimate = None
    with user_errors():
        estimate = estimate_release_analysis(release_config(args), analysis, candidate, n=prepared.n, d=prepared.d)
    confirm_key = run_key(prepared.fingerprint, loaded.spec.config_key(), args["mechanism"].config_key(),
                          analysis.config_key(), candidate.config_key(), dataset)
    if (estimate is not None and estimate.needs_confirmation
            and st.session_state.get("mechanisms.confirmed") != confirm_key):
        draw_run_estimate(estimate, confirm_key)
        stop_page()

run = None
with user_errors() as outcome:
    run = compute(args)
if outcome.failed:
    last = st.session_state.get("mechanisms.last_good")
    if last and last != args:
        with user_errors(prefix="The previous run cannot be shown either: "):
            run = compute(last)
            st.session_state["mechanisms.args"] = args = last
            st.caption("Showing the previous successful run.")
if run is None:
    stop_page()
st.session_state["mechanisms.last_good"] = args

top = st.columns([0.75, 0.25])
top[0].subheader(f"{run.label}")
top[1].button("Draw again", key="mechanisms.draw_again", on_click=on_draw_again, icon=":material/casino:",
              help="Same configuration, new noise (the next seed if you fixed one).")
st.markdown(seed_badge(args["seed"] if args["user_seed"] else None))
if args["user_seed"]:
    st.warning(SEEDED_WARNING, icon=":material/warning:")


draw_pin("mechanisms.pin", f"{run.label}, B = {candidate.b:g}, ε = {candidate.epsilon:g}",
         lambda label: candidate_from_run(run, label),
         help="Pin this run — its mechanism, guarantee and measured evidence — for the Workshop's comparison.")
draw_guarantee(run, prepared)
draw_data_effect(run, prepared, program, int(args["seed"]))
draw_program_and_protection(run, state.gammas, candidate, program, dict(loaded.spec.roles or {}))
draw_comparison(run)
draw_download(run, prepared)
