"""Mechanisms: configure one mechanism (prefilled from the candidate), run it once, see what it guarantees, costs
and buys, compare it honestly with the alternatives at the same (B, ε, δ), and download the release."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from engine.analysis import AnalysisConfig
from engine.comparison import same_guarantee
from engine.errors import EngineError
from engine.evaluation.programs import METRICS
from engine.export_csv import safe_csv_bytes
from engine.guarantee import Guarantee
from engine.mechanisms import MECHANISMS, RecordMechanism, mechanism_from_dict
from engine.mechanisms.gaussian import GaussianMechanism
from engine.release import ReleaseConfig
from engine.release_analysis import PAGE_REPETITIONS, ReleaseAnalysis
from engine.rng import SEEDED_WARNING, fresh_seed
from ui.cached import current_data
from ui.cached_analysis import jl_distance_recovery
from ui.common import (
    HELP,
    b_in_data_units,
    comparison_table,
    distinguishing_basis,
    distinguishing_note,
    gamma_verdicts,
    program_table,
    seed_badge,
    stop_page,
    user_errors,
)
from ui.figures.mechanisms import (
    comparison_figure,
    distance_recovery_figure,
    noise_by_coordinate_figure,
    original_vs_private_figure,
    projected_columns_figure,
)
from ui.figures.theme import exact, fmt, fmt_param
from ui.runs import release_run, run_key
from ui.state import get_state, parse_seed, seed_widget

state = get_state()

KINDS = ("projection", "gaussian", "mondrian", "jl-laplace")
#: Default projection dimension of the JL release (the secure-release paper uses k from 2 to 20, k ≪ d).
JL_DEFAULT_K = 5
JL_RELATIONS = {"row": "row-wise (one record changes by at most B in L2)",
                "element": "element-wise (one entry changes by at most the element bound)"}
JL_RULES = {"target": "target δ_fail (least noise; ours)", "paper": "the paper's rule (c = 2√k, or c = k·t)"}
#: A dict's bound ``get`` pickles (AppTest and enforceSerializableSessionState need picklable format_func).
KIND_LABELS = {k: MECHANISMS[k].LABEL for k in KINDS}

HELP_KIND = (
    "Private projection: Algorithm 1 of the targeted-DP paper (random projection + Gaussian noise; the paper's "
    "method). Gaussian: add Gaussian noise calibrated to the target distance B directly — the simplest mechanism "
    "with the same kind of guarantee. k-anonymity: Mondrian grouping into classes of at least k, released as class "
    "means — the paper's non-DP baseline. JL projection + Laplace: the secure-release paper — a SECRET random "
    "projection to k columns plus Laplace noise, released for general machine learning; its guarantee holds "
    "except with a failure probability δ_fail over the secret projection."
)
HELP_JL = (
    "Z = XP + Laplace noise, with P (d × k, entries N(0, 1/k)) drawn fresh and kept secret: the release has k "
    "projected columns, not your features. The Laplace scale is c/ε, where c bounds how much one neighbour can move "
    "XP; that bound fails with probability δ_fail over P, so the guarantee is (ε, δ_fail)-DP. Row-wise protects a "
    "whole record moving by at most B (B = 2: any substitution); element-wise protects only one entry changing by "
    "at most the element bound."
)
HELP_SPLIT = (
    "Algorithm 1 spends its budget in two steps: (ε1, δ1) on the noisy random projection and (ε2, δ2) on the noisy "
    "covariance; the total guarantee is (ε1 + ε2, δ1 + δ2). Default: ε2 = min(ε/4, 0.9999), ε1 = ε − ε2, "
    "δ1 = 2δ/3, δ2 = δ/3 (the paper's δ split)."
)


def candidate_mechanisms(candidate: Guarantee, d: int) -> dict[str, dict]:
    """Each mechanism configured from the candidate by its own ``from_budget`` (the defaults the form starts from)."""
    out = {kind: MECHANISMS[kind].from_budget(candidate.b, candidate.epsilon, candidate.delta).to_dict()
           for kind in ("projection", "gaussian")}
    out["mondrian"] = {"kind": "mondrian", "k": 2}
    out["jl-laplace"] = MECHANISMS["jl-laplace"].from_budget(candidate.b, candidate.epsilon, candidate.delta,
                                                             d=d, k=JL_DEFAULT_K).to_dict()
    return out


def _close(a: float, b: float) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-15)


def matches_candidate(mechanism: RecordMechanism, candidate: Guarantee) -> bool:
    """True when a stored mechanism gives exactly the candidate's (B, ε, δ) (or is k-anonymity)."""
    try:
        g = mechanism.guarantee()
    except EngineError:
        return False
    if mechanism.KIND == "mondrian":
        return True
    return _close(g.b, candidate.b) and _close(g.epsilon, candidate.epsilon) and _close(g.delta, candidate.delta)


def starting_config(kind: str, candidate: Guarantee) -> dict:
    """What the form shows: the stored mechanism when it belongs to this candidate, else the candidate's preset."""
    stored = state.mechanism
    origin = st.session_state.get("mechanisms.origin")
    here = (candidate.b, candidate.epsilon, candidate.delta)
    if stored is not None and stored.KIND == kind:
        if origin == here or (origin is None and matches_candidate(stored, candidate)):
            return {**candidate_mechanisms(candidate, prepared.d)[kind], **stored.to_dict()}
    return candidate_mechanisms(candidate, prepared.d)[kind]


def build_from_widgets(kind: str) -> RecordMechanism:
    """The mechanism configuration typed into the form (validated by the engine's dataclass)."""
    s = st.session_state
    if kind == "projection":
        rank = int(s["mechanisms.rank"])
        config = {
            "kind": "projection", "b": s["mechanisms.b"], "epsilon1": s["mechanisms.epsilon1"],
            "delta1": s["mechanisms.delta1"], "epsilon2": s["mechanisms.epsilon2"], "delta2": s["mechanisms.delta2"],
            "k": int(s["mechanisms.k"]), "rank": None if rank == 0 else rank,
            "implementation": s["mechanisms.implementation"], "output_scale": s["mechanisms.output_scale"],
        }
    elif kind == "gaussian":
        config = {
            "kind": "gaussian", "b": s["mechanisms.b"], "epsilon": s["mechanisms.epsilon"],
            "delta": s["mechanisms.delta"], "calibration": s["mechanisms.calibration"],
        }
    elif kind == "jl-laplace":
        row = s["mechanisms.jl_relation"] == "row"
        target = s["mechanisms.jl_rule"] == "target"
        t = float(s["mechanisms.jl_t"])
        config = {
            "kind": "jl-laplace", "k": int(s["mechanisms.jl_k"]), "epsilon": s["mechanisms.jl_epsilon"],
            "d": int(prepared.d), "relation": s["mechanisms.jl_relation"],
            "b": s["mechanisms.b"] if row else 2.0,
            "element_bound": 1.0 if row else s["mechanisms.jl_element_bound"],
            "target_delta": s["mechanisms.jl_target_delta"] if target else None,
            "t": t if (row and not target and t > 0) else None,
        }
    else:
        config = {"kind": "mondrian", "k": int(s["mechanisms.anon_k"])}
    return mechanism_from_dict(config)


def on_run() -> None:
    """Form submit: validate the configuration and the seed, store them; the page body then runs (cached)."""
    kind = st.session_state["mechanisms.kind"]
    try:
        mechanism = build_from_widgets(kind)
        seed = parse_seed(st.session_state.get("mechanisms.seed", ""))
    except EngineError as exc:
        st.session_state["mechanisms.form_error"] = str(exc)
        return
    st.session_state.pop("mechanisms.form_error", None)
    candidate = state.candidate_or_default()
    st.session_state["mechanisms.origin"] = (candidate.b, candidate.epsilon, candidate.delta)
    state.mechanism = mechanism
    state.seed = seed
    st.session_state["mechanisms.args"] = {
        "mechanism": mechanism,
        "seed": seed if seed is not None else fresh_seed(),
        "user_seed": seed is not None,
    }


def on_draw_again() -> None:
    """Same configuration, new noise: the next seed if the user fixed one, else fresh OS randomness."""
    args = st.session_state.get("mechanisms.args")
    if not args:
        return
    if args["user_seed"]:
        new = int(args["seed"]) + 1
        state.seed = new
        st.session_state["mechanisms.seed"] = str(new)
    else:
        new = fresh_seed()
    st.session_state["mechanisms.args"] = {**args, "seed": new}


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

stored_kind = state.mechanism.KIND if state.mechanism is not None else "projection"
seed_widget("mechanisms.kind", stored_kind if stored_kind in KINDS else "projection")
kind = st.radio(
    "Mechanism", KINDS, key="mechanisms.kind", format_func=KIND_LABELS.get, help=HELP_KIND,
    horizontal=True,
)

start = starting_config(kind, candidate)
seed_widget("mechanisms.seed", "" if state.seed is None else str(state.seed))
with st.form("mechanisms.form", border=True):
    if kind == "projection":
        c1, c2, c3 = st.columns(3)
        seed_widget("mechanisms.b", float(start["b"]))
        c1.number_input("Target distance B", key="mechanisms.b", min_value=0.001, max_value=2.0, step=0.01,
                        format="%.4f", help=HELP["b"] + " " + b_in_data_units(prepared, start["b"]))
        seed_widget("mechanisms.k", int(start.get("k", 10_000)))
        c2.number_input("Projection dimension k", key="mechanisms.k", min_value=1, max_value=10_000_000, step=1000,
                        help="Columns of the random projection (the paper: 10,000). The noise per coordinate barely "
                        "depends on k once k ≫ d.")
        seed_widget("mechanisms.rank", int(start.get("rank") or 0))
        c3.number_input("Rank kept (0 = all d)", key="mechanisms.rank", min_value=0, max_value=max(prepared.d, 1),
                        step=1, help="Singular vectors of the noisy covariance kept. At full rank (0 = d, the paper) "
                        "the covariance step does not change the output: (ε2, δ2) buys nothing.")
        st.markdown("**Budget split** (total = step 1–3 + step 4)", help=HELP_SPLIT)
        c1, c2, c3, c4 = st.columns(4)
        for col, name, label, fmt_, helptext in (
            (c1, "epsilon1", "ε1 (projection step)", "%.4f", "Privacy loss spent on the noisy projection."),
            (c2, "delta1", "δ1 (projection step)", "%.3e", "Also covers the chance (≤ δ1/2) that the random "
             "projection exceeds its sensitivity bound."),
            (c3, "epsilon2", "ε2 (covariance step, < 1)", "%.4f", "Privacy loss of the noisy covariance; the "
             "classical Gaussian bound it uses needs ε2 < 1."),
            (c4, "delta2", "δ2 (covariance step)", "%.3e", "δ of the noisy covariance step."),
        ):
            seed_widget(f"mechanisms.{name}", float(start[name]))
            col.number_input(label, key=f"mechanisms.{name}", min_value=0.0, format=fmt_,
                             step=0.05 if name.startswith("eps") else 1e-6, help=helptext)
        c1, c2 = st.columns(2)
        seed_widget("mechanisms.implementation", start.get("implementation", "fast"))
        c1.radio("Implementation", ("fast", "reference"), key="mechanisms.implementation", horizontal=True,
                 help="fast: draws the same output distribution directly in n × d (exact, milliseconds). reference: "
                 "the paper's steps with n × k matrices (seconds; refused when it would need too much memory).")
        seed_widget("mechanisms.output_scale", start.get("output_scale", "unbiased"))
        c2.radio("Output scale", ("unbiased", "paper"), key="mechanisms.output_scale", horizontal=True,
                 help="unbiased: the paper's output multiplied by k (free post-processing), so values are on the "
                 "data's prepared scale. paper: as printed, X/k plus noise (to reproduce the authors).")
    elif kind == "gaussian":
        c1, c2, c3, c4 = st.columns(4)
        seed_widget("mechanisms.b", float(start["b"]))
        c1.number_input("Target distance B", key="mechanisms.b", min_value=0.001, max_value=2.0, step=0.01,
                        format="%.4f", help=HELP["b"] + " " + b_in_data_units(prepared, start["b"]))
        seed_widget("mechanisms.epsilon", float(start["epsilon"]))
        c2.number_input("Privacy loss ε", key="mechanisms.epsilon", min_value=0.0, step=0.1, format="%.4f",
                        help=HELP["epsilon"])
        seed_widget("mechanisms.delta", float(start["delta"]))
        c3.number_input("δ", key="mechanisms.delta", min_value=0.0, max_value=1.0, step=1e-6, format="%.3e",
                        help=HELP["delta"])
        seed_widget("mechanisms.calibration", start.get("calibration", "analytic"))
        c4.radio("Calibration", ("analytic", "classical"), key="mechanisms.calibration",
                 help="analytic (Balle & Wang): the smallest σ with the exact guarantee, any ε. classical: "
                 "σ = B·√(2 ln(1.25/δ))/ε, needs ε < 1 and adds more noise.")
    elif kind == "jl-laplace":
        st.markdown("**JL projection + Laplace noise** (P stays secret)", help=HELP_JL)
        c1, c2, c3 = st.columns(3)
        seed_widget("mechanisms.jl_k", int(start.get("k", JL_DEFAULT_K)))
        c1.number_input("Projection dimension k", key="mechanisms.jl_k", min_value=1, max_value=10_000, step=1,
                        help="Columns of the release. The paper uses k from 2 to 20 (k ≪ d). More columns keep "
                        "distances better (JL) but each carries Laplace noise, and the element-wise failure bound "
                        "needs k > 2 ln d.")
        seed_widget("mechanisms.jl_epsilon", float(start["epsilon"]))
        c2.number_input("Privacy loss ε", key="mechanisms.jl_epsilon", min_value=0.0, step=0.1, format="%.4f",
                        help=HELP["epsilon"] + " The Laplace scale is c/ε.")
        seed_widget("mechanisms.jl_relation", start.get("relation", "row"))
        c3.radio("Protection unit", tuple(JL_RELATIONS), key="mechanisms.jl_relation",
                 format_func=JL_RELATIONS.get,
                 help="What a neighbour is. Row-wise with B = 2 covers any substitution of one person's record "
                 "(prepared rows lie in the unit ball). Element-wise covers one entry only: it is NOT record-level "
                 "protection.")
        c1, c2, c3 = st.columns(3)
        seed_widget("mechanisms.b", float(start.get("b", candidate.b)))
        c1.number_input("Row change bound B (row-wise)", key="mechanisms.b", min_value=0.001, max_value=2.0,
                        step=0.01, format="%.4f",
                        help="Row-wise: the largest L2 change of one record that is protected (α = B²). "
                        + b_in_data_units(prepared, start.get("b", candidate.b)))
        seed_widget("mechanisms.jl_element_bound", float(start.get("element_bound", 1.0)))
        c2.number_input("Element bound (element-wise)", key="mechanisms.jl_element_bound", min_value=0.001,
                        step=0.1, format="%.4f",
                        help="Element-wise: the largest change of ONE entry that is protected (the paper: 1).")
        rule = "paper" if start.get("target_delta") is None else "target"
        seed_widget("mechanisms.jl_rule", rule)
        c3.radio("Noise rule", tuple(JL_RULES), key="mechanisms.jl_rule", format_func=JL_RULES.get,
                 help="target δ_fail: the smallest noise whose rigorous per-pair bound on δ_fail is at most the "
                 "target (ours). The paper's rule: c = 2√k·bound element-wise; c = k·t row-wise (t below; 0 = the "
                 "paper's t_min, whose own bound is exactly 1, i.e. no guarantee).")
        c1, c2 = st.columns(2)
        default_target = start.get("target_delta") or (candidate.delta if 0 < candidate.delta < 1 else
                                                         1.0 / (prepared.n + 1))
        seed_widget("mechanisms.jl_target_delta", float(default_target))
        c1.number_input("Target δ_fail", key="mechanisms.jl_target_delta", min_value=0.0, max_value=0.999999,
                        step=1e-6, format="%.3e",
                        help="With the target rule: the failure probability the noise is calibrated to. "
                        f"1/(n+1) = {1.0 / (prepared.n + 1):.3e} for these data.")
        seed_widget("mechanisms.jl_t", float(start.get("t") or 0.0))
        c2.number_input("Row-wise threshold t (paper's rule; 0 = t_min)", key="mechanisms.jl_t", min_value=0.0,
                        step=0.1, format="%.4f",
                        help="Theorem 5: c = k·t with t ≥ t_min = √(2 ln(2k)·B²/k). The paper's bound on δ_fail "
                        "is 2k·exp(−k t²/(2B²)).")
    else:
        seed_widget("mechanisms.anon_k", int(start.get("k", 2)))
        st.slider("k (smallest group size)", min_value=2, max_value=10, key="mechanisms.anon_k",
                  help="Every released row equals at least k − 1 others. The paper reports k = 2 (the most "
                  "accurate). k-anonymity is NOT differential privacy: it gives no (ε, δ) bound.")
    st.text_input("Seed (leave empty for a real release)", key="mechanisms.seed", help=HELP["seed"],
                  placeholder="empty = fresh randomness from the operating system")
    st.form_submit_button("Run the mechanism", type="primary", key="mechanisms.run", on_click=on_run,
                          help="Release the data once with these settings, then score the program and run the "
                          "attacks on the release (a few seconds).",
                          icon=":material/play_arrow:")

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
    return run_key(prepared.fingerprint, loaded.spec.to_json(), a["mechanism"].to_json(), analysis.to_json(),
                   candidate.to_json(), int(a["seed"]), bool(a["user_seed"]), dataset)


def compute(a: dict) -> ReleaseAnalysis:
    """The run for ``a``: this session's stored one, else computed with a progress bar and a Stop button."""
    config = ReleaseConfig.of(loaded.spec, a["mechanism"], seed=int(a["seed"]) if a["user_seed"] else None,
                              dataset=dataset)
    return release_run(st.session_state, key_of(a), loaded.frame, config, analysis, candidate, int(a["seed"]))


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

# ---- the guarantee -----------------------------------------------------------------------------------------
st.markdown("#### What it guarantees")
(st.success if run.is_dp else st.error)(run.headline, icon=":material/shield:")
for line in run.describe[1:]:
    st.markdown(f"- {line}")
if run.implied_headline:
    st.markdown(f"**Implied classic DP (switch lemma):** {run.implied_headline}")
mech = run.mechanism.to_dict()
reported_sd = run.details.get("noise_sd_per_coordinate")
m1, m2, m3, m4 = st.columns(4)
m1.metric("Noise sd per coordinate", fmt(reported_sd) if reported_sd is not None else "none",
          help="Standard deviation of the noise added to each value, on the prepared (unbiased) scale, as "
          f"reported by the mechanism for this run. Exact: {exact(reported_sd)}" if reported_sd is not None else
          "k-anonymity adds no noise: it replaces rows by their class means.")
if run.kind == "projection":
    m2.metric("σ1 (projection noise, paper scale)", fmt(run.details.get("sigma1")),
              help=f"Exact: {exact(run.details.get('sigma1'))}")
    m3.metric("σ2 (covariance noise)", fmt(run.details.get("sigma2")), help=f"Exact: {exact(run.details.get('sigma2'))}")
    m4.metric("Output scale", fmt(run.details.get("output_scale")),
              help="E[release] = scale × X. 1 = unbiased; 1/k = the paper's as-printed output.")
    split = pd.DataFrame(
        {
            "step": ["1–3: noisy projection (k⁻¹XR + G)", "4: noisy covariance (XᵀX + G')", "total (Theorem 2)"],
            "ε": [mech["epsilon1"], mech["epsilon2"], mech["epsilon1"] + mech["epsilon2"]],
            "δ": [mech["delta1"], mech["delta2"], mech["delta1"] + mech["delta2"]],
            "noise sd": [run.details.get("sigma1"), run.details.get("sigma2"), None],
        }
    )
    st.dataframe(split, hide_index=True, width="stretch", key="mechanisms.split_table")
    if mech.get("rank") in (None, prepared.d):
        st.info(
            "At full rank the covariance step (ε2, δ2) does not change the output at all: the release is in fact "
            f"(B = {fmt(mech['b'])}, ε1 = {fmt(mech['epsilon1'])}, δ1 = {fmt(mech['delta1'])})-TDP. Spend ε2 only "
            "when keeping fewer singular vectors (rank < d).", icon=":material/lightbulb:",
        )
elif run.kind == "gaussian":
    m2.metric("σ (per coordinate)", fmt(run.mechanism.sigma), help=f"Exact: {exact(run.mechanism.sigma)}")
    m3.metric("Calibration", mech["calibration"])
elif run.kind == "jl-laplace":
    jl = run.mechanism
    for warning in jl.warnings():
        st.warning(warning, icon=":material/warning:")
    d_pair, d_event, d_paper = (run.details.get("delta_fail"), run.details.get("delta_fail_proof_event"),
                                run.details.get("delta_fail_paper_bound"))
    m2.metric("δ_fail (the guarantee's δ)", fmt(d_pair),
              help="Rigorous upper bound, per neighbouring pair, on the probability over the secret projection P "
              f"that the sensitivity bound c fails (ours). Exact: {exact(d_pair)}")
    m3.metric("Exact probability of the proof's event", fmt(d_event),
              help="The event the paper's proof needs, for all pairs at once (exact χ² / normal form). "
              f"Exact: {exact(d_event)}")
    m4.metric("The paper's bound", "vacuous (≥ 1)" if d_paper is None or d_paper >= 1 else fmt(d_paper),
              help="The bound printed in the paper (Lemma 2 element-wise: d·e^{−(c−√k)²/2}; Lemma 4 row-wise: "
              f"2k·e^{{−kt²/(2α)}}). A value ≥ 1 guarantees nothing. Exact: {exact(d_paper)}")
    jl_table = pd.DataFrame(
        {
            "quantity": ["projection dimension k", "sensitivity bound c", "Laplace scale c/ε",
                         "noise variance σ² = 2(c/ε)² (for distance recovery)", "row-wise threshold t = c/k",
                         "rule for c"],
            "value": [fmt(jl.k), fmt(jl.c), fmt(jl.laplace_scale), fmt(jl.noise_variance),
                      fmt(jl.threshold_t) if jl.relation == "row" else "—", str(run.details.get("c_rule"))],
        }
    )
    st.dataframe(jl_table, hide_index=True, width="stretch", key="mechanisms.jl_table")
    st.info(
        "**The projection P stays secret.** It is drawn fresh for this release and never stored, shown or exported "
        "(only a seed you typed is recorded). The paper's claim that the data cannot be reconstructed rests on that "
        "secrecy alone — it is not a quantified guarantee: someone who knows a few original records can estimate "
        "P's effect by regression (the protection scores below use exactly that adversary).",
        icon=":material/lock:",
    )
else:
    m2.metric("Classes", fmt(run.details.get("classes")))
    m3.metric("Smallest class", fmt(run.details.get("smallest_class")))
    m4.metric("Distortion (rms)", fmt(run.details.get("distortion_rms_per_coordinate")))
if "b" in mech and mech.get("relation", "row") == "row":
    st.caption("What B means for this data: " + b_in_data_units(prepared, mech["b"]))

# ---- what it does to the data -------------------------------------------------------------------------------
st.markdown("#### What it does to the data")
names = list(prepared.feature_names)
if run.kind == "jl-laplace":
    k_cols = run.value.shape[1]
    st.markdown(
        f"The release has **{k_cols} projected columns** (z1 … z{k_cols}), not your {prepared.d} features: each is a "
        "secret random mix of all features plus Laplace noise, so there is no original-vs-private comparison on the "
        "same axes. What survives is geometry: squared distances between records can be estimated without bias "
        "(Algorithm 2; variance 2‖a‖⁴/k + 14kσ⁴ + 8σ²‖a‖², the corrected formula)."
    )
    zcols = [f"z{i + 1}" for i in range(k_cols)]
    c1, c2 = st.columns(2)
    seed_widget("mechanisms.z_x", zcols[0])
    seed_widget("mechanisms.z_y", zcols[min(1, k_cols - 1)])
    if st.session_state["mechanisms.z_x"] not in zcols:
        st.session_state["mechanisms.z_x"] = zcols[0]
    if st.session_state["mechanisms.z_y"] not in zcols:
        st.session_state["mechanisms.z_y"] = zcols[min(1, k_cols - 1)]
    zx = c1.selectbox("Horizontal projected column", zcols, key="mechanisms.z_x", help="Column of Z on the x axis.")
    zy = c2.selectbox("Vertical projected column", zcols, key="mechanisms.z_y", help="Column of Z on the y axis.")
    labels = None
    if prepared.y is not None and program is not None and program.kind in ("classification", "lending"):
        labels = prepared.y
    left, right = st.columns(2)
    left.plotly_chart(projected_columns_figure(run.value, zcols.index(zx), zcols.index(zy), labels=labels),
                      key="mechanisms.z_scatter")
    recovery = jl_distance_recovery(prepared.fingerprint, run.mechanism.to_json(), int(args["seed"]), prepared.x,
                                    run.value)
    right.plotly_chart(distance_recovery_figure(recovery["true"], recovery["estimate"], recovery["sd"]),
                       key="mechanisms.distance_recovery")
    err = recovery["estimate"] - recovery["true"]
    st.caption(
        f"{len(recovery)} random pairs of records: mean error {fmt(float(err.mean()))} (unbiased: ≈ 0), typical "
        f"error (rms) {fmt(float((err**2).mean() ** 0.5))} against typical true squared distance "
        f"{fmt(float(recovery['true'].mean()))}. The estimator's sd from the corrected variance is "
        f"{fmt(float(recovery['sd'].mean()))} on average."
    )
    scale = 1.0
else:
    scale = float(run.details.get("output_scale", 1.0) or 1.0)
    c1, c2 = st.columns(2)
    seed_widget("mechanisms.feature_x", names[0])
    seed_widget("mechanisms.feature_y", names[min(1, len(names) - 1)])
    fx = c1.selectbox("Horizontal feature", names, key="mechanisms.feature_x", help="Feature on the x axis.")
    fy = c2.selectbox("Vertical feature", names, key="mechanisms.feature_y", help="Feature on the y axis.")
    private_label = "private release" if scale == 1.0 else "private release ÷ output scale"
    left, right = st.columns(2)
    left.plotly_chart(
        original_vs_private_figure(prepared.x, run.value / scale, names, names.index(fx), names.index(fy),
                                   private_label=private_label),
        key="mechanisms.scatter",
    )
    comparison_sd = {}
    if run.kind == "projection":
        # the honest comparison's Gaussian mechanism at the same guarantee (engine.comparison.alternatives)
        for p in run.points[1:]:
            if isinstance(p.mechanism, GaussianMechanism):
                comparison_sd["Gaussian at the same guarantee"] = p.mechanism.sigma
    right.plotly_chart(
        noise_by_coordinate_figure(names, run.measured_sd, reported_sd=reported_sd, comparison_sd=comparison_sd),
        key="mechanisms.noise",
    )

# ---- program and protection ------------------------------------------------------------------------------------
st.markdown("#### What it costs the program and what it buys")
baseline = run.baseline
if run.program is not None and baseline is not None:
    headline = run.program.headline_metric
    info = METRICS.get(headline)
    label = info.label if info else headline
    mean, _, lo, hi = run.points[0].interval(headline)
    cols = st.columns(3)
    cols[0].metric(
        f"{label} (private, mean of {PAGE_REPETITIONS} releases)", fmt(mean),
        delta=fmt(mean - baseline.headline) + " vs non-private",
        delta_color="normal" if (info is None or info.higher_is_better) else "inverse",
        help=(info.description if info else "") + f". 95 % interval of the mean: {fmt(lo)} to {fmt(hi)}. "
        f"Scored on the {run.n_released:,} released rows ({run.n_holdout:,} are held out as the attacks' control "
        "group), as every sweep cell is.",
    )
    cols[1].metric(f"{label} (non-private)", fmt(baseline.headline),
                   help="The same program trained on the original data of the same rows.")
    g_mean, _, g_lo, g_hi = run.points[0].measured_gamma
    if math.isfinite(g_mean):
        cols[2].metric(
            "Measured γ (decision agreement)", fmt(g_mean),
            help="Share of people whose decision on the release equals the non-private program's decision — the γ "
            f"of Theorem 1, measured on your data. 95 % interval over {PAGE_REPETITIONS} releases: {fmt(g_lo)} to "
            f"{fmt(g_hi)}.",
        )
        at = same_guarantee(run.mechanism, candidate)
        verdicts = gamma_verdicts(state.gammas, g_lo, g_hi, at, mean=g_mean)
        for level, text in verdicts:
            (st.success if level == "ok" else st.warning)(text, icon=":material/target:")
    beaters = run.points[0].beaten_by()
    if beaters:
        rule = beaters[0]
        st.error(
            f"**No better than a rule that uses no data.** {label} on these releases is {fmt(mean)} (95 % interval "
            f"{fmt(lo)} to {fmt(hi)}); '{rule}' scores {fmt(run.program.baselines[rule][headline])}. At these "
            "settings the release does not support the program: raise ε or B, or reconsider the program.",
            icon=":material/report:",
        )
    table = program_table(run.program, baseline)
    with st.expander("All program metrics, beside the rules that use no data", icon=":material/table_chart:"):
        st.dataframe(table, hide_index=True, width="stretch", key="mechanisms.program_table")
else:
    st.info("No outcome column and program are chosen, so no program is scored (choose a target and a program on "
            "the Data page).", icon=":material/info:")
p1, p2, p3 = st.columns(3)
p1.metric("Singling-out protection", fmt(run.singling_out.protection),
          help="Share of people NOT isolated by the net attack (boxes around released rows that contain exactly "
          f"one original row), worst case over box sizes. 1 = nobody singled out. Exact: {exact(run.singling_out.protection)}")
if run.attribute_inference is not None:
    p2.metric("Attribute-inference protection", fmt(run.attribute_inference.protection),
              help="How much worse the nearest-neighbour attacker guesses a hidden column for released people than "
              f"for the {run.n_holdout:,} held-out people (1 = no better; paper's relative score, worst case). "
              f"Exact: {exact(run.attribute_inference.protection)}")
else:
    p2.metric("Attribute-inference protection", "—", help="Needs at least 2 features.")
p3.metric(f"Distinguishing protection ({distinguishing_basis(run.distinguishing)})", fmt(run.distinguishing.protection),
          help="Smallest total error (false positives + false negatives) of the best test telling two records apart "
          f"(any two records, distance 2): 1 = a coin flip, 0 = certain. {distinguishing_note(run.distinguishing)} "
          f"The paper's D = {fmt(run.distinguishing.expected_loss_score)}. Exact: {exact(run.distinguishing.protection)}")

if run.kind == "jl-laplace":
    st.caption(
        f"The attacker has the release Z and this page's public description, but NOT the secret projection P. It "
        f"knows {run.n_known} original records (2k) and regresses them on their released rows to estimate every "
        "record (known-record reconstruction); singling out and attribute inference run on that estimate. "
        "Distinguishing follows from the guarantee (ε, δ_fail)."
    )

# ---- honest comparison ---------------------------------------------------------------------------------------
st.markdown("#### Honest comparison at the same guarantee")
utility_label = "program effectiveness"
if run.program is not None:
    info = METRICS.get(run.program.headline_metric)
    utility_label = info.label if info else run.program.headline_metric
compare = comparison_table(run.points, utility_label)
st.plotly_chart(
    comparison_figure(
        compare["mechanism"].tolist(), [type(p.mechanism).KIND for p in run.points],
        compare["noise sd per coordinate"].tolist(), compare[utility_label].tolist(), utility_label=utility_label,
        nonprivate_utility=baseline.headline if baseline is not None else None,
    ),
    key="mechanisms.comparison",
)
st.dataframe(compare, hide_index=True, width="stretch", key="mechanisms.comparison_table")
st.caption(f"Every mechanism released the same rows with the same seeds; the program columns are means of "
           f"{PAGE_REPETITIONS} releases, the attacks use the first.")
for finding in run.findings:
    (st.warning if finding.level == "warning" else st.info)(finding.text, icon=":material/balance:")

# ---- download -------------------------------------------------------------------------------------------------
st.markdown("#### Download the privatized data")
st.markdown("**What this file protects:**\n" + "\n".join(f"- {line}" for line in run.describe))
st.caption(
    "Values are on the prepared scale (each row of the input mapped into the unit ball as set on the Data page), "
    "not in the data's original units. " + prepared.privacy_note()
)
if run.kind == "jl-laplace":
    release_frame = pd.DataFrame(run.value, columns=[f"z{i + 1}" for i in range(run.value.shape[1])])
    st.caption("The file holds the k projected columns z1 … zk (not your features). The projection P is not in it.")
else:
    release_frame = prepared.as_frame(run.value)
st.download_button("Download the release (CSV)", lambda: safe_csv_bytes(release_frame),
                   file_name=f"private-{run.kind}.csv", mime="text/csv", on_click="ignore",
                   key="mechanisms.download", icon=":material/download:",
                   help="The privatized feature matrix of this run, one row per record, in input order.")
st.caption("A data holder reproduces this kind of release with (config from the Export page):")
st.code(run.summary["cli_command"], language="bash")
