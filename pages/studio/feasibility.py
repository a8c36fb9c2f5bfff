"""Accuracy targets & feasibility: γ and δ in; Theorem 1's feasible (B, ε) region out; the user picks a candidate."""

from __future__ import annotations

from typing import Any

import streamlit as st

from engine.errors import EngineError
from engine.evaluation.programs import ProgramConfig
from engine.validation import check_interval
from ui.cached import (
    CEILING_BS,
    candidate_checks,
    current_data,
    feasibility_click_grid,
    feasibility_report,
    feasibility_surface,
    gamma_ceiling,
)
from ui.common import HELP, b_in_data_units, field_error, stale_block, user_errors
from ui.figures.feasibility import b_max_figure, gamma_max_figure, region_figure
from ui.figures.theme import exact, fmt, fmt_param
from ui.runs import recommendation
from ui.sections.feasibility_example import draw_example1
from ui.sections.feasibility_recommendation import draw_recommend_form, draw_recommendation
from ui.sections.workshop_pin import draw_pin_budget
from ui.state import (
    STUDIO_B,
    STUDIO_DELTA_MAX,
    STUDIO_EPSILON,
    RecommendRequest,
    get_state,
    persist,
    seed_widget,
    set_widget,
    widget,
)

state = get_state()

EXAMPLE1: dict[str, Any] = {"gamma": 0.99, "delta": 1e-4, "epsilons": (1.0, 4.0), "paper_b": (0.4, 1.0)}


def parse_gammas(text: str) -> tuple[float, ...]:
    """"0.99, 0.95" → (0.99, 0.95); each γ must be in [1/2, 1) (Theorem 1's range)."""
    parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise EngineError("enter at least one accuracy target γ, e.g. 0.99")
    values = []
    for p in parts:
        try:
            value = float(p)
        except ValueError:
            raise EngineError(f"γ must be a number in [0.5, 1); got {p!r}") from None
        values.append(check_interval("gamma", value, 0.5, 1, closed="left", hint="e.g. 0.99 for 99 % accuracy"))
    return tuple(dict.fromkeys(values))  # keep order, drop repeats


def _set_candidate_widgets(b: float, epsilon: float) -> None:
    set_widget("feasibility.b", float(b))
    set_widget("feasibility.epsilon", float(epsilon))


def use_recommended(point, d: int) -> None:
    """Make the recommended point the candidate (and the controls that show it), and its mechanism the one the
    Mechanisms page opens on."""
    state.set_candidate(b=point.b, epsilon=point.epsilon, delta=point.delta)
    _set_candidate_widgets(point.b, point.epsilon)
    state.configure_mechanism(point.build_mechanism(d))


def on_region_select() -> None:
    """Clicking a point of the feasibility map picks (ε, B) as the candidate."""
    event = widget("feasibility.region")
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    if not points:
        return
    point = points[-1]
    custom = point.get("customdata")
    if isinstance(custom, dict):  # Streamlit hands customdata rows over as {"0": ..., "1": ...}
        custom = [custom.get(str(i)) for i in range(len(custom))]
    eps, b = (custom[0], custom[1]) if custom else (point.get("x"), point.get("y"))
    if eps is None or b is None:
        return
    _set_candidate_widgets(b, eps)


def on_example1() -> None:
    """Load the paper's Example 1 inputs: γ = 0.99, δ = 1e-4, ε = 1 (then B ≤ 0.4)."""
    set_widget("feasibility.gammas", "0.99")
    set_widget("feasibility.delta_default", False)
    set_widget("feasibility.delta", EXAMPLE1["delta"])
    _set_candidate_widgets(EXAMPLE1["paper_b"][0], EXAMPLE1["epsilons"][0])
    state.gammas = (EXAMPLE1["gamma"],)
    state.delta = EXAMPLE1["delta"]


def on_use_largest_b() -> None:
    """Set B to the largest feasible B (2/B whole) for the strictest γ at the current ε."""
    eps = float(widget("feasibility.epsilon", state.candidate_or_default().epsilon))
    report = feasibility_report(max(state.gammas), eps, state.effective_delta())
    set_widget("feasibility.b", float(report.b_max_integer))


st.title("Accuracy targets & feasibility")
st.markdown(
    "Say how accurate the program's targeting must stay (γ), and Theorem 1 of the targeted-DP paper shows which "
    "combinations of target distance B and privacy loss ε can possibly deliver it — for **any** algorithm. "
    "Grey means ruled out. The theorem is a necessary condition: a configuration that passes may still miss γ "
    "on your data (the Tradeoffs page measures that)."
)

loaded = None
with user_errors():
    loaded = current_data(state)

controls, chart = st.columns([0.3, 0.7], gap="large")
with controls:
    st.subheader("Targets")
    seed_widget("feasibility.gammas", ", ".join(f"{g:g}" for g in state.gammas))
    st.text_input("Accuracy target γ (one or several, comma-separated)", key="feasibility.gammas", help=HELP["gamma"])
    try:
        state.gammas = parse_gammas(st.session_state["feasibility.gammas"])
    except EngineError as exc:
        field_error(f"{exc}. Still using γ = {', '.join(f'{g:g}' for g in state.gammas)}.")

    seed_widget("feasibility.delta_default", state.delta is None)
    default_delta = state.default_delta()
    st.checkbox("Default δ = 1/(n+1)", key="feasibility.delta_default", help=HELP["delta"])
    if default_delta is not None and st.session_state["feasibility.delta_default"]:
        st.caption(f"δ = {fmt(default_delta)} for n = {state.n:,} people.")
    if st.session_state["feasibility.delta_default"]:
        state.delta = None
    else:
        seed_widget("feasibility.delta", state.effective_delta())
        st.number_input(
            "δ", key="feasibility.delta", min_value=0.0, max_value=STUDIO_DELTA_MAX, step=1e-5, format="%.3e",
            help=HELP["delta"],
        )
        try:
            state.delta = check_interval(
                "delta", st.session_state["feasibility.delta"], 0, 1, closed="left",
                hint="0 is pure DP; otherwise use something well below 1/n",
            )
        except EngineError as exc:
            field_error(str(exc))
        if state.n is not None and state.delta is not None and state.delta >= 1 / state.n:
            st.warning(
                f"δ ≥ 1/n = {fmt(1 / state.n)}: a mechanism that publishes each record in the clear with "
                "probability δ would meet this guarantee — about δ·n people exposed. Use δ well below 1/n.",
                icon=":material/warning:",
            )
    delta = state.effective_delta()

    st.subheader("Candidate (B, ε, δ)")
    st.caption("Type values or click a point on the map; the candidate carries to the next pages.")
    current = state.candidate_or_default()
    seed_widget("feasibility.epsilon", float(current.epsilon))
    seed_widget("feasibility.b", float(current.b))
    st.number_input("Privacy loss ε", key="feasibility.epsilon", min_value=STUDIO_EPSILON[0], max_value=STUDIO_EPSILON[1], step=0.1,
                    format="%.3f", help=HELP["epsilon"])
    b_help = HELP["b"]
    if loaded is not None:
        b_help += " " + b_in_data_units(loaded.prepared, st.session_state["feasibility.b"])
    st.number_input("Target distance B", key="feasibility.b", min_value=STUDIO_B[0], max_value=STUDIO_B[1], step=0.01,
                    format="%.3f", help=b_help)
    st.button("Use the largest feasible B at this ε", key="feasibility.largest_b", on_click=on_use_largest_b,
              help="Sets B to 2/m, the largest value with 2/B whole that Theorem 1 allows for the strictest γ.")
    with user_errors():
        state.set_candidate(
            b=st.session_state["feasibility.b"], epsilon=st.session_state["feasibility.epsilon"], delta=delta
        )
    if loaded is not None:
        with st.expander(f"What B = {fmt(state.candidate_or_default().b)} means in this data"):
            st.caption(b_in_data_units(loaded.prepared, state.candidate_or_default().b))
    st.button("Load the paper's Example 1 inputs", key="feasibility.example1", on_click=on_example1,
              help="γ = 0.99, δ = 1e-4, ε = 1: the paper finds B ≤ 0.4.")
    seed_widget("feasibility.eps_max", float(state.eps_max))
    st.number_input("Largest ε shown", key="feasibility.eps_max", min_value=1.0, max_value=STUDIO_EPSILON[1], step=1.0,
                    on_change=persist, args=("feasibility.eps_max", "eps_max"),
                    help="Right end of the ε axis of the charts below. It changes nothing else.")

cand = state.candidate_or_default()
strictest = max(state.gammas)
with chart:
    report = feasibility_report(strictest, cand.epsilon, delta)
    st.markdown(f"**At ε = {fmt_param(cand.epsilon)}, δ = {fmt(delta)}, for γ = {strictest:g}:**")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Largest feasible B", fmt(report.b_max_integer, 4),
              help=f"Exact: {exact(report.b_max_integer)}. 2/m with m = ⌈ln Q/ε⌉ = {report.m}.")
    m2.metric("Every B below", fmt(report.b_sup, 4),
              help=f"Supremum 2/(m − 1) = {exact(report.b_sup)} (not attained unless it is 2).")
    m3.metric("Steps m", report.m, help=f"Q = {exact(report.q)}, ln Q = {exact(report.log_q)}.")
    m4.metric("Classic DP (B = 2)?", "yes" if report.dp_feasible else "no",
              help=f"Classic DP allows at most γ = {exact(report.gamma_max_at_b2)} at this (ε, δ); it needs "
              f"ε ≥ {exact(report.min_epsilon_at_b2)} for γ = {strictest:g}.")
    checks = candidate_checks(cand.b, cand.epsilon, delta, state.gammas)
    for g in state.gammas:
        if checks["feasible"][g]:
            st.success(
                f"Candidate B = {fmt_param(cand.b)}, ε = {fmt_param(cand.epsilon)} is **not ruled out** for γ = {g:g} "
                f"(γ_max = {checks['gamma_max']:.6g}).", icon=":material/check_circle:",
            )
        else:
            st.error(
                f"Candidate B = {fmt_param(cand.b)}, ε = {fmt_param(cand.epsilon)} is **ruled out** for γ = {g:g}: no "
                f"(B, ε, δ)-TDP algorithm can be that accurate (γ_max = {checks['gamma_max']:.6g}). At this B "
                f"it needs ε ≥ {fmt(checks['min_epsilon'][g], 4)}, or a smaller B.", icon=":material/block:",
            )
    draw_pin_budget()
    surface = feasibility_surface(state.gammas, delta, state.eps_max)
    st.plotly_chart(
        region_figure(surface, candidate=(cand.epsilon, cand.b), click_grid=feasibility_click_grid(delta, state.eps_max, state.gammas)),
        key="feasibility.region", on_select=on_region_select, selection_mode="points", theme=None,
        config={"displaylogo": False},
    )
    with st.expander("What am I looking at?"):
        for line in report.describe():
            st.markdown("- " + line)

left, right = st.columns(2, gap="large")
with left:
    st.plotly_chart(b_max_figure(surface, candidate=(cand.epsilon, cand.b)), key="feasibility.bmax_chart",
                    theme=None, config={"displaylogo": False})
with right:
    bs = tuple(sorted(set(CEILING_BS) | {round(float(cand.b), 6)}))
    eps_axis, curves = gamma_ceiling(delta, state.eps_max, bs)
    st.plotly_chart(gamma_max_figure(eps_axis, curves, state.gammas, candidate_b=round(float(cand.b), 6)),
                    key="feasibility.ceiling_chart", theme=None,
                    config={"displaylogo": False})

draw_example1(EXAMPLE1)

# ---- from "what is allowed" to "what we choose": the accuracy-first recommendation -------------------------------
st.subheader("Recommend: the most protective (B, ε) that keeps the program accurate on these data")
st.markdown(
    "Theorem 1 is necessary, not sufficient: a point it does not rule out may still ruin the program. State the "
    "program's target the way the program states it; the Studio searches each mechanism's frontier on your data "
    "(ε is bisected for each B, releases are added only while the verdict is open at the chosen confidence) and "
    "recommends the point with the smallest worst-case loss for any two records. Theorem 1's γ is a worst case over "
    "data sets; a target on the decision agreement is checked on these data, on average over the people — so "
    "Theorem 1 does not prune the search, it is shown beside the result."
)
rec_loaded = None
with user_errors():
    rec_loaded = current_data(state)
rec_program = state.program_or(rec_loaded.default_program) if rec_loaded is not None else None
if rec_loaded is None or rec_loaded.prepared.y is None or rec_program is None:
    st.info("Choose a target column and a program on the Data page to get a recommendation.", icon=":material/info:")
else:
    draw_recommend_form(rec_loaded.prepared, rec_program)
    asked = None
    with user_errors(prefix="Recommendation: "):
        from engine.recommend import RecommendConfig, Target

        rec_config = RecommendConfig(Target.parse(widget("feasibility.rec_target")),
                                     mechanisms=tuple(widget("feasibility.rec_mechanisms")),
                                     delta=delta, confidence=float(widget("feasibility.rec_confidence")),
                                     steps=5, gamma=state.gammas[0] if len(state.gammas) else None)
        asked = RecommendRequest(rec_loaded.prepared.fingerprint, rec_program.to_json(), rec_config.to_json())
        if widget("feasibility.recommend"):
            state.recommend_request = asked
    if widget("feasibility.rec_stop") and state.recommend_request is not None:  # Stop pressed during the search
        state.recommend_request = None
        st.info("Stopped: the search was interrupted and nothing of it is kept. Press Recommend to search again.",
                icon=":material/stop_circle:")
    if state.recommend_request is not None:
        with user_errors(prefix="Recommendation: "):
            recommendation(state, rec_loaded.prepared, state.recommend_request)
        state.recommend_request = None
    kept = state.recommendation
    if kept is not None and kept.request.data != rec_loaded.prepared.fingerprint:
        st.info("The last recommendation was searched on other data (or another preparation of them): press "
                "Recommend to search these data.", icon=":material/history:")
    elif kept is not None:
        stale = kept.request != asked
        if stale:
            st.warning("**Settings changed — run again.** The recommendation below (greyed) was searched with "
                       "other settings (the target, the mechanisms, the confidence, δ or the program); press "
                       "Recommend for the current ones.", icon=":material/history:")
        with stale_block(stale, "recommendation"):
            draw_recommendation(kept.result, rec_loaded.prepared, use_recommended,
                                ProgramConfig.from_json(kept.request.program))
