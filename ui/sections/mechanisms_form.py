"""The Mechanisms page's form: the mechanism to run, prefilled from the candidate (B, ε, δ), and its seed.

:func:`draw_form` draws the inputs of one mechanism kind; :func:`on_run` (the submit callback) builds the engine's
mechanism object from them (:func:`build_from_widgets`, validated by its dataclass) and stores it with the seed in
``StudioState`` and ``st.session_state["mechanisms.args"]``, which the page then runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import streamlit as st

from engine.data.preparation import PreparedData
from engine.errors import EngineError
from engine.guarantee import Guarantee
from engine.mechanisms import MECHANISMS, RecordMechanism, mechanism_from_dict
from engine.mechanisms.jl_laplace import JLLaplace
from engine.progress import format_seconds
from engine.release_analysis import RunEstimate
from engine.rng import fresh_seed
from ui.common import HELP, b_in_data_units
from ui.state import STUDIO_B, StudioState, get_state, parse_seed, seed_widget

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


#: The largest projection dimension the JL + Laplace mechanism accepts (its declared constraint, read not retyped).
JL_K_MAX = JLLaplace.PARAMETER_CONSTRAINTS["k"].high


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


def starting_config(state: StudioState, kind: str, candidate: Guarantee, d: int) -> dict:
    """What the form shows: the stored mechanism when it belongs to this candidate, else the candidate's preset."""
    stored = state.mechanism
    origin = st.session_state.get("mechanisms.origin")
    here = (candidate.b, candidate.epsilon, candidate.delta)
    if stored is not None and stored.KIND == kind:
        if origin == here or (origin is None and matches_candidate(stored, candidate)):
            return {**candidate_mechanisms(candidate, d)[kind], **stored.to_dict()}
    return candidate_mechanisms(candidate, d)[kind]


def _projection_config(s: Any, d: int) -> dict:
    rank = int(s["mechanisms.rank"])
    return {
        "kind": "projection", "b": s["mechanisms.b"], "epsilon1": s["mechanisms.epsilon1"],
        "delta1": s["mechanisms.delta1"], "epsilon2": s["mechanisms.epsilon2"], "delta2": s["mechanisms.delta2"],
        "k": int(s["mechanisms.k"]), "rank": None if rank == 0 else rank,
        "implementation": s["mechanisms.implementation"], "output_scale": s["mechanisms.output_scale"],
    }


def _gaussian_config(s: Any, d: int) -> dict:
    return {"kind": "gaussian", "b": s["mechanisms.b"], "epsilon": s["mechanisms.epsilon"],
            "delta": s["mechanisms.delta"], "calibration": s["mechanisms.calibration"]}


def _jl_config(s: Any, d: int) -> dict:
    row = s["mechanisms.jl_relation"] == "row"
    target = s["mechanisms.jl_rule"] == "target"
    t = float(s["mechanisms.jl_t"])
    return {
        "kind": "jl-laplace", "k": int(s["mechanisms.jl_k"]), "epsilon": s["mechanisms.jl_epsilon"],
        "d": int(d), "relation": s["mechanisms.jl_relation"],
        "b": s["mechanisms.b"] if row else 2.0,
        "element_bound": 1.0 if row else s["mechanisms.jl_element_bound"],
        "target_delta": s["mechanisms.jl_target_delta"] if target else None,
        "t": t if (row and not target and t > 0) else None,
    }


def _mondrian_config(s: Any, d: int) -> dict:
    return {"kind": "mondrian", "k": int(s["mechanisms.anon_k"])}


#: Each kind's form values → its configuration dict (``mechanism_from_dict`` validates it).
CONFIGS: dict[str, Callable[[Any, int], dict]] = {
    "projection": _projection_config, "gaussian": _gaussian_config, "jl-laplace": _jl_config,
    "mondrian": _mondrian_config,
}


def build_from_widgets(kind: str, d: int) -> RecordMechanism:
    """The mechanism configuration typed into the form (validated by the engine's dataclass)."""
    return mechanism_from_dict(CONFIGS[kind](st.session_state, d))


def on_run(d: int) -> None:
    """Form submit: validate the configuration and the seed, store them; the page body then runs (cached)."""
    state = get_state()
    kind = st.session_state["mechanisms.kind"]
    try:
        mechanism = build_from_widgets(kind, d)
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


def confirm_run(key: str) -> None:
    """``on_click`` of "Run it" under a long run's estimate: runs with these inputs go ahead (any seed)."""
    st.session_state["mechanisms.confirmed"] = key


def cancel_run() -> None:
    """``on_click`` of "Cancel" under a long run's estimate: back to the last finished run (or to the form)."""
    last = st.session_state.get("mechanisms.last_good")
    if last:
        st.session_state["mechanisms.args"] = last
    else:
        st.session_state.pop("mechanisms.args", None)
    st.session_state.pop("mechanisms.confirmed", None)


def draw_run_estimate(estimate: RunEstimate, key: str) -> None:
    """Say how long a run will take before it starts (a wide table's attack takes minutes: issue 35), and let the
    user go on (:func:`confirm_run` with ``key``, the run's inputs without its seed) or cancel (:func:`cancel_run`)."""
    st.warning(estimate.describe(), icon=":material/schedule:")
    go, back = st.columns(2)
    go.button(f"Run it (about {format_seconds(estimate.seconds)})", key="mechanisms.confirm", type="primary",
              icon=":material/play_arrow:", on_click=confirm_run, args=(key,),
              help="You can stop the run at any time with its Stop button.")
    back.button("Cancel", key="mechanisms.cancel_run", icon=":material/close:", on_click=cancel_run,
                help="Nothing is computed; the previous run (if any) is shown again.")


def on_draw_again() -> None:
    """Same configuration, new noise: the next seed if the user fixed one, else fresh OS randomness."""
    args = st.session_state.get("mechanisms.args")
    if not args:
        return
    if args["user_seed"]:
        new = int(args["seed"]) + 1
        get_state().seed = new
        st.session_state["mechanisms.seed"] = str(new)
    else:
        new = fresh_seed()
    st.session_state["mechanisms.args"] = {**args, "seed": new}



def _projection_inputs(start: dict, prepared: PreparedData, candidate: Guarantee) -> None:
    c1, c2, c3 = st.columns(3)
    seed_widget("mechanisms.b", float(start["b"]))
    c1.number_input("Target distance B", key="mechanisms.b", min_value=STUDIO_B[0], max_value=STUDIO_B[1], step=0.01,
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


def _gaussian_inputs(start: dict, prepared: PreparedData, candidate: Guarantee) -> None:
    c1, c2, c3, c4 = st.columns(4)
    seed_widget("mechanisms.b", float(start["b"]))
    c1.number_input("Target distance B", key="mechanisms.b", min_value=STUDIO_B[0], max_value=STUDIO_B[1], step=0.01,
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


def _jl_inputs(start: dict, prepared: PreparedData, candidate: Guarantee) -> None:
    st.markdown("**JL projection + Laplace noise** (P stays secret)", help=HELP_JL)
    c1, c2, c3 = st.columns(3)
    seed_widget("mechanisms.jl_k", int(start.get("k", JL_DEFAULT_K)))
    c1.number_input("Projection dimension k", key="mechanisms.jl_k", min_value=1, max_value=JL_K_MAX, step=1,
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
    c1.number_input("Row change bound B (row-wise)", key="mechanisms.b", min_value=STUDIO_B[0], max_value=STUDIO_B[1],
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


def _mondrian_inputs(start: dict, prepared: PreparedData, candidate: Guarantee) -> None:
    seed_widget("mechanisms.anon_k", int(start.get("k", 2)))
    st.slider("k (smallest group size)", min_value=2, max_value=10, key="mechanisms.anon_k",
              help="Every released row equals at least k − 1 others. The paper reports k = 2 (the most "
              "accurate). k-anonymity is NOT differential privacy: it gives no (ε, δ) bound.")


#: The inputs of each mechanism kind.
INPUTS: dict[str, Callable[[dict, PreparedData, Guarantee], None]] = {
    "projection": _projection_inputs, "gaussian": _gaussian_inputs, "jl-laplace": _jl_inputs,
    "mondrian": _mondrian_inputs,
}


def draw_form(kind: str, start: dict, prepared: PreparedData, candidate: Guarantee) -> None:
    """The form of mechanism ``kind`` (starting from ``start``, see :func:`starting_config`), the seed and the run
    button."""
    with st.form("mechanisms.form", border=True):
        INPUTS[kind](start, prepared, candidate)
        st.text_input("Seed (leave empty for a real release)", key="mechanisms.seed", help=HELP["seed"],
                      placeholder="empty = fresh randomness from the operating system")
        st.form_submit_button("Run the mechanism", type="primary", key="mechanisms.run", on_click=on_run,
                              args=(int(prepared.d),),
                              help="Release the data once with these settings, then score the program and run the "
                              "attacks on the release (a few seconds).",
                              icon=":material/play_arrow:")
