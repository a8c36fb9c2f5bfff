"""Tradeoffs: sweep (B, ε, δ) for one or more mechanisms on the user's data; program effectiveness against each
protection score (the paper's Figure 3), privacy against privacy, Figure-2 bars, the Pareto frontier, the table,
the distinguishing attacker's view; clicking a point makes it the candidate."""

from __future__ import annotations

import functools
import json
import math
import os
import time

import numpy as np
import pandas as pd
import streamlit as st

from engine.accounting.budget import default_delta, split_budget, split_delta
from engine.analysis import gamma_check
from engine.errors import EngineError, InvalidParameterError
from engine.evaluation.programs import METRICS
from engine.export_csv import safe_csv_bytes
from engine.progress import format_seconds
from engine.sweeps import (
    ATTACKS,
    JL_DEFAULT_K,
    PAPER_B_VALUES,
    PROTECTION_COLUMNS,
    SWEEP_MECHANISMS,
    Budget,
    SweepConfig,
    SweepResult,
    pareto_mask,
    preset,
    released_rows,
)
from engine.validation import check_interval
from ui.cached import current_data
from ui.cached_analysis import jl_delta_fail_curves, reference_point, sweep_estimate, tradeoff_curves
from ui.common import HELP, stop_page, user_errors
from ui.compute_target import cluster_caption, compute_controls, sweep_client
from ui.figures.theme import fmt
from ui.figures.tradeoffs import (
    Marker,
    comparison_bars_figure,
    delta_fail_figure,
    hypothesis_testing_figure,
    points_frame,
    privacy_privacy_figure,
    tradeoff_figure,
)
from ui.runs import run_sweeps
from ui.state import get_state, seed_widget

state = get_state()

#: Repetitions of a custom grid when the user leaves the count at 0.
CUSTOM_REPETITIONS = 10
#: Smallest interval between two redraws of the live curves while a sweep runs.
LIVE_REDRAW_SECONDS = 1.5
MECH_LABELS = {"projection": "Private projection (TDP)", "gaussian": "Gaussian (TDP)",
               "jl-laplace": "JL projection + Laplace"}
JL_RELATIONS = {"row": "row-wise (B = row change bound)", "element": "element-wise (B = change of one entry)"}
PRESET_LABELS = {
    "quick": "quick — 8 B values, ε ≈ 4, 10 repetitions",
    "paper": "paper — 8 B × 4 budgets, 50 repetitions (minutes)",
    "custom": "custom grid (below)",
}
ATTACK_LABELS = {
    "singling_out": "singling out",
    "attribute_inference": "attribute inference",
    "distinguishing": "distinguishing",
}
ADVERSARY_LABELS = {
    "knows-scale": "knows the algorithm (undoes known scaling; the paper's assumption)",
    "paper": "authors' code (attacks the release as printed)",
}
PROTECTION_LABELS = {a: f"{ATTACK_LABELS[a]} protection" for a in ATTACKS}
METRIC_LABELS = {m: info.label for m, info in METRICS.items()}
DISTANCE_LABELS = {"any": "any two records (t = 2)", "b": "B apart (t = B)"}


def parse_list(name: str, text: str, low: float, high: float, closed: str = "right") -> tuple[float, ...]:
    """"0.1, 0.25, 2" → (0.1, 0.25, 2.0), each checked against (low, high]."""
    parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise InvalidParameterError(f"{name}: enter at least one value, e.g. 0.25, 0.5, 2")
    values = []
    for p in parts:
        try:
            value = float(p)
        except ValueError:
            raise InvalidParameterError(f"{name} must be numbers separated by commas; got {p!r}") from None
        values.append(check_interval(name, value, low, high, closed=closed))
    return tuple(dict.fromkeys(values))


def build_configs() -> list[SweepConfig]:
    """The sweep configurations typed into the form, one per chosen mechanism (validated by the engine).

    Presets set δ = 1/(n + 1) for the n rows the sweep privatizes (``engine.sweeps.released_rows``).
    """
    s = st.session_state
    mechanisms = list(s["tradeoffs.mechanisms"])
    if not mechanisms:
        raise InvalidParameterError("choose at least one mechanism to sweep")
    attacks = tuple(a for a in ATTACKS if a in s["tradeoffs.attacks"])
    program = state.program_or(loaded.default_program)
    if program is None:
        raise InvalidParameterError("choose a program on the Data page first (targeting, lending, …)")
    reps = int(s["tradeoffs.reps"])
    common = {
        "program": program,
        "seed": int(s["tradeoffs.seed"]),
        # 0 = the preset's own count (quick 10, paper 50; custom 10)
        "repetitions": reps if reps > 0 else (None if s["tradeoffs.preset"] != "custom" else CUSTOM_REPETITIONS),
    }
    extra = {"attacks": attacks, "adversary": s["tradeoffs.adversary"]}
    target = float(s.get("tradeoffs.jl_target_delta", 0.0) or 0.0)
    known = int(s.get("tradeoffs.jl_known", 0) or 0)
    jl = {"k": int(s.get("tradeoffs.jl_k", JL_DEFAULT_K)), "relation": s.get("tradeoffs.jl_relation", "row"),
          "target_delta": target if target > 0 else None, "known_records": known if known > 0 else None}
    configs = []
    for mech in mechanisms:
        mech_extra = {**extra, **jl} if mech == "jl-laplace" else extra
        if s["tradeoffs.preset"] == "custom":
            b_values = parse_list("B values", s["tradeoffs.b_values"], 0, 2)
            eps1 = parse_list("ε1 values", s["tradeoffs.epsilon1"], 0, None, closed="neither")
            eps2 = parse_list("ε2 values", s["tradeoffs.epsilon2"], 0, 1, closed="neither")
            delta = float(s["tradeoffs.delta"])
            # 0 = 1/(n + 1) for the rows this sweep privatizes (depends on whether attribute inference runs)
            delta = default_delta(released_rows(prepared.n, attacks)) if delta == 0 else delta
            delta1, delta2 = split_delta(check_interval("δ", delta, 0, 1, closed="neither"))
            budgets = tuple(Budget(e1, delta1, e2, delta2) for e1 in eps1 for e2 in eps2)
            configs.append(SweepConfig(budgets=budgets, b_values=b_values, mechanism=mech, **common, **mech_extra))
        else:
            # the candidate's δ (default 1/(n + 1) for all n rows, as the real release): a chosen point keeps it
            n_private = released_rows(prepared.n, attacks)
            configs.append(preset(s["tradeoffs.preset"], n_private, mechanism=mech, delta=state.effective_delta(),
                                  **common, **mech_extra))
    return configs


def on_run() -> None:
    try:
        configs = build_configs()
    except EngineError as exc:
        st.session_state["tradeoffs.form_error"] = str(exc)
        return
    st.session_state.pop("tradeoffs.form_error", None)
    st.session_state["tradeoffs.pending"] = [c.to_dict() for c in configs]
    st.session_state["tradeoffs.last_pending"] = [c.to_dict() for c in configs]
    st.session_state["tradeoffs.partial"] = {}
    st.session_state.pop("tradeoffs.stopped", None)


def select_point(point_id: str) -> None:
    """Make the sweep point ``point_id`` ("<mechanism>:<point>") the candidate and the configured mechanism."""
    results = state.sweeps
    kind, _, index = str(point_id).partition(":")
    for result in results:
        if result.config.mechanism != kind:
            continue
        rows = result.table[result.table["point"] == int(index)]
        if rows.empty or rows["reference"].iloc[0] == "non-private":
            return
        row = rows.iloc[0]
        budget = Budget(float(row["epsilon1"]), float(row["delta1"]), float(row["epsilon2"]), float(row["delta2"]))
        mechanism = result.config.mechanism_for(float(row["b"]), budget, d=prepared.d)
        guarantee = mechanism.guarantee()
        # an element-wise JL point protects one entry, not a record: it does not become the (B, ε, δ) candidate
        if guarantee.relation == "row":
            before = state.candidate_or_default()
            state.set_candidate(b=guarantee.b, epsilon=guarantee.epsilon, delta=guarantee.delta)
            if not math.isclose(before.delta, guarantee.delta, rel_tol=1e-9):
                state.notices.append(
                    f"The chosen point's δ = {guarantee.delta:.4g} replaces the candidate's δ = {before.delta:.4g} "
                    "(the grid was run with another δ)."
                )
        state.mechanism = mechanism
        here = state.candidate_or_default()
        # the Mechanisms page opens on this configuration (it belongs to the current candidate)
        st.session_state["mechanisms.origin"] = (here.b, here.epsilon, here.delta)
        state.selected_point = {
            "point_id": str(point_id), "mechanism": kind, "point": int(index), "b": float(row["b"]),
            "epsilon1": budget.epsilon1, "delta1": budget.delta1, "epsilon2": budget.epsilon2,
            "delta2": budget.delta2, "epsilon": guarantee.epsilon, "delta": guarantee.delta,
            "reference": str(row["reference"]),
        }
        st.session_state["tradeoffs.point"] = str(point_id)
        return


def on_chart_select(key: str) -> None:
    event = st.session_state.get(key) or {}
    points = (event.get("selection") or {}).get("points") or []
    for point in reversed(points):
        custom = point.get("customdata")
        if custom and isinstance(custom, list | tuple) and ":" in str(custom[0]):
            select_point(str(custom[0]))
            return


def on_use_point() -> None:
    point_id = st.session_state.get("tradeoffs.point")
    if point_id:
        select_point(point_id)


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
#: Rows privatized with the attacks chosen (the holdout is left out only for attribute inference); the custom grid's
#: default δ = 1/(n + 1) uses it.
chosen_attacks = tuple(a for a in st.session_state.get("tradeoffs.attacks", ATTACKS) if a in ATTACKS)
n_released = released_rows(prepared.n, chosen_attacks) if prepared.n >= 2 else prepared.n

# ---- configuration --------------------------------------------------------------------------------------------
with st.form("tradeoffs.form"):
    c1, c2, c3 = st.columns([0.4, 0.3, 0.3])
    seed_widget("tradeoffs.mechanisms", ["projection", "gaussian"])
    c1.multiselect("Mechanisms (drawn on the same axes)", SWEEP_MECHANISMS, key="tradeoffs.mechanisms",
                   format_func=MECH_LABELS.get,
                   help="Each mechanism is swept over the same grid with the same seed. Classic DP (B = 2) and the "
                   "non-private release are always added as reference points. JL projection + Laplace spends "
                   "ε = ε1 + ε2 with δ_fail ≤ δ; its release has k projected columns and its attacker knows a few "
                   "original records, not the secret projection (options below).")
    seed_widget("tradeoffs.preset", "quick")
    c2.radio("Grid", tuple(PRESET_LABELS), key="tradeoffs.preset", format_func=PRESET_LABELS.get,
             help="quick and paper use the paper's B values with the candidate's δ (default 1/(n+1)) split "
             "2/3 : 1/3. custom uses the values typed below.")
    seed_widget("tradeoffs.reps", 0)
    c3.number_input("Repetitions per point (0 = the grid's default)", key="tradeoffs.reps", min_value=0,
                    max_value=500, step=1,
                    help="Independent releases per grid point; the curves show the mean and its 95 % interval. "
                    f"0 uses the grid's own count: quick 10, paper 50, custom {CUSTOM_REPETITIONS}. More repetitions: "
                    "narrower intervals, longer runs.")
    with st.expander("Custom grid", expanded=False, icon=":material/grid_on:"):
        g1, g2, g3, g4 = st.columns(4)
        seed_widget("tradeoffs.b_values", ", ".join(f"{b:g}" for b in PAPER_B_VALUES))
        g1.text_input("B values", key="tradeoffs.b_values", help=HELP["b"])
        seed_widget("tradeoffs.epsilon1", "3")
        g2.text_input("ε1 values (projection step)", key="tradeoffs.epsilon1",
                      help="Privacy loss of the projection step; the Gaussian mechanism spends ε1 + ε2 in one go.")
        seed_widget("tradeoffs.epsilon2", "0.9999")
        g3.text_input("ε2 values (covariance step, < 1)", key="tradeoffs.epsilon2",
                      help="Privacy loss of the covariance step (needs ε2 < 1).")
        seed_widget("tradeoffs.delta", 0.0)
        g4.number_input("Total δ (0 = 1/(n+1))", key="tradeoffs.delta", min_value=0.0, max_value=0.5,
                        format="%.3e", step=1e-6,
                        help=HELP["delta"] + " 0 (default) = 1/(n+1) with n the rows the sweep privatizes: "
                        f"{n_released:,} with the attacks chosen now (the holdout is left out only for attribute "
                        "inference). Split δ1 = 2δ/3, δ2 = δ/3.")
    with st.expander("JL projection + Laplace options", expanded=False, icon=":material/scatter_plot:"):
        j1, j2, j3, j4 = st.columns(4)
        seed_widget("tradeoffs.jl_k", JL_DEFAULT_K)
        j1.number_input("Projection dimension k", key="tradeoffs.jl_k", min_value=1, max_value=200, step=1,
                        help="Columns of the JL release (the paper: 2 to 20). The attacker is given 2k original "
                        "records, so k must stay well below the number of rows.")
        seed_widget("tradeoffs.jl_relation", "row")
        j2.radio("Protection unit", tuple(JL_RELATIONS), key="tradeoffs.jl_relation", format_func=JL_RELATIONS.get,
                 help="Row-wise: the grid's B bounds how far one record moves (B = 2: any substitution, classic DP). "
                 "Element-wise: B bounds the change of ONE entry — never record-level protection, so no classic-DP "
                 "point is added.")
        seed_widget("tradeoffs.jl_target_delta", 0.0)
        j3.number_input("Target δ_fail (0 = the grid's δ)", key="tradeoffs.jl_target_delta", min_value=0.0,
                        max_value=0.5, format="%.3e", step=1e-6,
                        help="The failure probability the Laplace noise is calibrated to (smallest noise whose "
                        f"per-pair bound is at most it). 0 uses each budget's δ: 1/(n+1) = {default_delta(n_released):.3e} "
                        "in the presets.")
        seed_widget("tradeoffs.jl_known", 0)
        j4.number_input("Records the attacker knows (0 = 2k)", key="tradeoffs.jl_known", min_value=0, step=1,
                        help="The JL attacker never sees the secret projection P; it knows this many original records "
                        "(drawn from the released rows) and regresses them on their released rows to estimate every "
                        "record, then singles out and infers attributes on that estimate. With at least k records "
                        "and little noise it undoes the projection; with k < d it cannot recover d columns.")
    a1, a2, a3, a4 = st.columns([0.35, 0.35, 0.15, 0.15])
    seed_widget("tradeoffs.attacks", list(ATTACKS))
    a1.multiselect("Attacks", ATTACKS, key="tradeoffs.attacks", format_func=ATTACK_LABELS.get,
                   help="Singling out (net attack), attribute inference (nearest neighbour, with a held-out control "
                   "group) and distinguishing (from the guarantee; no data needed).")
    seed_widget("tradeoffs.adversary", "knows-scale")
    a2.radio("Adversary", tuple(ADVERSARY_LABELS), key="tradeoffs.adversary", format_func=ADVERSARY_LABELS.get,
             help="What the attacker knows. The paper assumes it knows the algorithm and its parameters.")
    seed_widget("tradeoffs.seed", 0)
    a3.number_input("Seed", key="tradeoffs.seed", min_value=0, step=1,
                    help="Sweeps are simulations: the seed makes the table reproducible (same seed → same table). "
                    "Nothing from a sweep is released.")
    seed_widget("tradeoffs.workers", 1)
    a4.number_input("Worker processes", key="tradeoffs.workers", min_value=1, max_value=max(os.cpu_count() or 1, 1),
                    step=1, help="Run cells in parallel processes; the table does not depend on it.")
    seed_widget("tradeoffs.compute_on", "local")
    seed_widget("tradeoffs.scheduler", "")
    compute_controls(st.columns([0.5, 0.5])[0])
    st.form_submit_button("Run the sweep", type="primary", key="tradeoffs.run", on_click=on_run,
                          help="Privatize, score and attack over the whole grid; the curves fill in as it runs and "
                          "you can stop it at any time.",
                          icon=":material/play_arrow:")
if st.session_state.get("tradeoffs.form_error"):
    st.error(st.session_state["tradeoffs.form_error"], icon=":material/error:")


def redraw_live(placeholder, configs: list[SweepConfig], partial: dict, draw: int) -> None:
    """Redraw the live curve (utility against singling-out) from the rows finished so far."""
    frames = []
    for i, config in enumerate(configs):
        rows = partial.get(i) or []
        if not rows:
            continue
        summary = SweepResult.from_rows(config, rows).summary()
        frames.append(points_frame(summary, x_metric=PROTECTION_COLUMNS["singling_out"],
                                   y_metric=config.program.headline_metric, series=MECH_LABELS[config.mechanism],
                                   kind=config.mechanism))
    if not frames:
        return
    metric = configs[0].program.headline_metric
    label = METRICS[metric].label if metric in METRICS else metric
    placeholder.plotly_chart(
        tradeoff_figure(pd.concat(frames, ignore_index=True), x_label="singling-out protection", y_label=label,
                        title="Filling in as the sweep runs…", show_pareto=False),
        key=f"tradeoffs.live.{draw}",
    )


# ---- results of another dataset are not shown -------------------------------------------------------------------
old = state.sweeps
if old and old[0].fingerprint and old[0].fingerprint != prepared.fingerprint:
    state.sweeps = ()
    for stale in ("tradeoffs.partial", "tradeoffs.stopped"):
        st.session_state.pop(stale, None)
    st.info("The data changed since the last sweep, so its results were set aside. Run the sweep again.",
            icon=":material/info:")

# ---- running (with progress, live curves and a stop button) -----------------------------------------------------
pending = st.session_state.get("tradeoffs.pending")
if pending and st.session_state.get("tradeoffs.stop"):
    st.session_state.pop("tradeoffs.pending", None)
    st.session_state["tradeoffs.stopped"] = True
    pending = None
if pending:
    configs = [SweepConfig.from_dict(c) for c in pending]
    total = sum(c.n_cells for c in configs)
    n_workers = int(st.session_state.get("tradeoffs.workers", 1))
    with user_errors(prefix="Time estimate: "):
        estimate = sweep_estimate(prepared.fingerprint, tuple(c.to_json() for c in configs), n_workers, prepared)
        st.info(f"Estimated time: about {format_seconds(estimate)} for {total:,} cells (timed on one cell; the "
                "progress bar refines it). You can stop at any time and keep the finished points.",
                icon=":material/timer:")
    stop_slot = st.empty()
    stop_slot.button("Stop the sweep", key="tradeoffs.stop", icon=":material/stop_circle:",
                     help="Stops after the cell that is running; finished points are kept.")
    bar = st.progress(0.0, text=f"Starting {total} cells…")
    live = st.empty()
    partial: dict[int, list] = {}
    draws = [0]
    last_draw = [0.0]

    def on_progress(done: int, total_: int, message: str) -> None:
        bar.progress(min(1.0, done / max(total_, 1)), text=f"{done} of {total_} cells — {message}")

    def on_rows(index: int, rows: list) -> None:
        partial[index] = rows
        st.session_state["tradeoffs.partial"] = dict(partial)
        now = time.monotonic()
        if now - last_draw[0] < LIVE_REDRAW_SECONDS and len(rows) < configs[index].n_cells:
            return  # redraw at most every LIVE_REDRAW_SECONDS (summaries of large partial tables cost time)
        last_draw[0] = now
        draws[0] += 1
        redraw_live(live, configs, partial, draws[0])

    with user_errors() as outcome:
        client = sweep_client(st.session_state)
        if client is not None:
            st.caption(cluster_caption(client))
        results = run_sweeps(prepared, configs, workers=n_workers, on_progress=on_progress, on_rows=on_rows,
                             client=client)
    st.session_state.pop("tradeoffs.pending", None)
    bar.empty()
    live.empty()
    stop_slot.empty()
    if not outcome.failed:
        state.sweeps = tuple(results)
        st.session_state.pop("tradeoffs.partial", None)
        seconds = sum(r.seconds for r in results if np.isfinite(r.seconds))
        st.toast(f"Sweep finished: {total} cells in {seconds:.1f} s.", icon=":material/done_all:")

if st.session_state.get("tradeoffs.stopped"):
    partial = st.session_state.get("tradeoffs.partial") or {}
    done = sum(len(v) for v in partial.values())
    st.warning(f"The sweep was stopped; {done} finished cells are kept below as a partial result. Run again for the "
               "full grid.", icon=":material/stop_circle:")

results = list(state.sweeps)
partial_rows = st.session_state.get("tradeoffs.partial") if st.session_state.get("tradeoffs.stopped") else None
if not results and not partial_rows:
    st.info("Configure the sweep and press **Run the sweep**. The time it will take is estimated when it starts.",
            icon=":material/info:")
    stop_page()


# ---- results ----------------------------------------------------------------------------------------------------
if partial_rows and any(partial_rows.values()):
    pending_configs = [SweepConfig.from_dict(c) for c in st.session_state.get("tradeoffs.last_pending") or []]
    results = [
        SweepResult.from_rows(pending_configs[i], rows)
        for i, rows in sorted(partial_rows.items())
        if rows and i < len(pending_configs)
    ] or results
if not results:
    stop_page()

configs = [r.config for r in results]
summaries = [r.summary() for r in results]
program_metric = configs[0].program.headline_metric
metric_options = [m for m in results[0].metric_columns if m in METRICS]
seed_widget("tradeoffs.utility", program_metric if program_metric in metric_options else metric_options[0])
if st.session_state["tradeoffs.utility"] not in metric_options:
    st.session_state["tradeoffs.utility"] = metric_options[0]
utility = st.selectbox("Program effectiveness measure", metric_options, key="tradeoffs.utility",
                       format_func=METRIC_LABELS.get,
                       help="The y axis of the tradeoff plots. " + "; ".join(
                           f"{METRICS[m].label}: {METRICS[m].description}" for m in metric_options[:6]))
utility_label = METRICS[utility].label
higher = METRICS[utility].higher_is_better
selected = (state.selected_point or {}).get("point_id")

nonprivate = summaries[0][summaries[0]["reference"] == "non-private"]
classic = summaries[0][summaries[0]["reference"] == "classic-dp"]
k_anon = None
with st.spinner("Evaluating the k-anonymity reference on the sweep's rows…"), user_errors(
        prefix="k-anonymity reference: "):
    k_anon = reference_point(prepared.fingerprint, configs[0].to_json(), json.dumps({"kind": "mondrian", "k": 2}),
                             prepared)


def reference_value(frame: pd.DataFrame, column: str) -> float | None:
    if frame.empty or column not in frame:
        return None
    value = float(frame[column].iloc[0])
    return value if np.isfinite(value) else None


def k_anon_value(column: str) -> float | None:
    """Mean of a metric of the k-anonymity reference over its releases (None when it was not measured)."""
    if k_anon is None:
        return None
    value = k_anon.interval(column)[0]
    return value if np.isfinite(value) else None


def markers_for(attack: str) -> list[Marker]:
    col = f"{PROTECTION_COLUMNS[attack]}_mean"
    out = []
    x, y = reference_value(nonprivate, col), reference_value(nonprivate, f"{utility}_mean")
    if x is not None and y is not None:
        out.append(Marker("non-private", x, y, "nonprivate"))
    x, y = reference_value(classic, col), reference_value(classic, f"{utility}_mean")
    if x is not None and y is not None:
        out.append(Marker("classic DP (B = 2)", x, y, "classic_dp"))
    kx, ky = k_anon_value(PROTECTION_COLUMNS[attack]), k_anon_value(utility)
    if kx is not None and ky is not None:
        out.append(Marker("k-anonymity (k = 2)", kx, ky, "kanon"))
    return out


def all_points(x_metric: str, y_metric: str, *, pareto: bool = True) -> pd.DataFrame:
    frames = [
        points_frame(s, x_metric=x_metric, y_metric=y_metric, series=MECH_LABELS[c.mechanism], kind=c.mechanism)
        for s, c in zip(summaries, configs, strict=True)
        if f"{x_metric}_mean" in s and f"{y_metric}_mean" in s
    ]
    frame = pd.concat([f for f in frames if not f.empty], ignore_index=True) if any(
        not f.empty for f in frames) else pd.DataFrame(columns=["point_id", "series", "kind", "b", "x", "y"])
    if pareto and not frame.empty:
        sign = 1.0 if higher else -1.0
        frame["pareto"] = pareto_mask(sign * frame["y"].to_numpy(float), frame["x"].to_numpy(float))
    return frame


attacks_run = [a for a in ATTACKS if f"{PROTECTION_COLUMNS[a]}_mean" in summaries[0]]
if not all(r.complete for r in results):
    st.caption("Partial result (the sweep was stopped).")
st.subheader("Program effectiveness against protection (Figure 3)")
st.caption(
    "One curve per mechanism through the B grid (mean over repetitions; bars: 95 % interval of the mean). Stars: "
    "non-private (black), classic DP at B = 2 (vermillion), k-anonymity k = 2 (green; the sweep's rows and "
    "repetitions). Thick "
    "grey: the Pareto frontier over all mechanisms — no other configuration is better on both axes. Click a point "
    "to make it your candidate (ringed)."
)
if attacks_run:
    tabs = st.tabs([PROTECTION_LABELS[a].capitalize() for a in attacks_run])
    for tab, attack in zip(tabs, attacks_run, strict=True):
        key = f"tradeoffs.fig3.{attack}"
        with tab:
            st.plotly_chart(
                tradeoff_figure(all_points(PROTECTION_COLUMNS[attack], utility), x_label=PROTECTION_LABELS[attack],
                                y_label=utility_label, title=f"{utility_label} against {PROTECTION_LABELS[attack]}",
                                markers=markers_for(attack), selected=selected),
                key=key, on_select=functools.partial(on_chart_select, key), selection_mode="points",
            )
else:
    st.info("No attack was run, so there is no protection axis.", icon=":material/info:")

left, right = st.columns(2)
with left:
    so, ai = PROTECTION_COLUMNS["singling_out"], PROTECTION_COLUMNS["attribute_inference"]
    if "singling_out" in attacks_run and "attribute_inference" in attacks_run:
        pp_markers = []
        x, y = reference_value(nonprivate, f"{so}_mean"), reference_value(nonprivate, f"{ai}_mean")
        if x is not None and y is not None:
            pp_markers.append(Marker("non-private", x, y, "nonprivate"))
        st.plotly_chart(privacy_privacy_figure(all_points(so, ai, pareto=False), markers=pp_markers),
                        key="tradeoffs.privacy_privacy", on_select=functools.partial(on_chart_select,
                                                                                      "tradeoffs.privacy_privacy"),
                        selection_mode="points")
    else:
        st.info("Run both singling out and attribute inference to compare them.", icon=":material/info:")

# ε against δ_fail at fixed noise (the JL release's own privacy–privacy tradeoff), full width below.
jl_results = [r for r in results if r.config.mechanism == "jl-laplace"]

# Figure 2: one bar per approach at the chosen (or best-matching) configuration.
with right:
    bars_labels, bars_values, bars_err, bars_roles = [], [], [], []

    def add_bar(label: str, frame: pd.DataFrame, role: str) -> None:
        value = reference_value(frame, f"{utility}_mean")
        if value is None:
            return
        lo, hi = reference_value(frame, f"{utility}_lo"), reference_value(frame, f"{utility}_hi")
        bars_labels.append(label)
        bars_values.append(value)
        bars_err.append(None if lo is None or hi is None else (hi - lo) / 2)
        bars_roles.append(role)

    add_bar("non-private", nonprivate, "nonprivate")
    add_bar("classic DP (B = 2)", classic, "classic_dp")
    if k_anon_value(utility) is not None:
        _, _, k_lo, k_hi = k_anon.interval(utility)
        bars_labels.append("k-anonymity (k = 2)")
        bars_values.append(k_anon_value(utility))
        bars_err.append((k_hi - k_lo) / 2 if np.isfinite(k_lo) else None)
        bars_roles.append("kanon")
    target_b = (state.selected_point or {}).get("b", state.candidate_or_default().b)
    for summary, config in zip(summaries, configs, strict=True):
        tdp = summary[summary["reference"] == "tdp"]
        if tdp.empty:
            continue
        nearest = tdp.iloc[[int(np.argmin(np.abs(tdp["b"].to_numpy(float) - float(target_b))))]]
        role = "chosen" if config.mechanism == configs[0].mechanism else config.mechanism
        add_bar(f"{MECH_LABELS[config.mechanism]}, B = {fmt(float(nearest['b'].iloc[0]))}", nearest, role)
    if bars_values:
        st.plotly_chart(
            comparison_bars_figure(bars_labels, bars_values, roles=bars_roles, errors=bars_err, y_label=utility_label,
                                   title=f"{utility_label} by approach (Figure 2)"),
            key="tradeoffs.fig2",
        )

if jl_results:
    jl_config = jl_results[0].config
    st.subheader("JL projection + Laplace: ε against δ_fail at fixed noise")
    st.markdown(
        "At a fixed Laplace noise (so a fixed utility), the same release can be described by many (ε, δ_fail) "
        "pairs: claiming a larger ε raises the sensitivity bound c = ε × scale, which fails less often. Solid: "
        "the per-pair bound the Studio states; dashed: the exact probability of the event in the paper's proof; "
        "dotted: the paper's printed bound. Shaded: δ ≥ 1, no guarantee at all."
    )
    j1, j2 = st.columns(2)
    jl_bs = [float(b) for b in jl_config.b_values]
    seed_widget("tradeoffs.jl_curve_b", jl_bs[0])
    if st.session_state["tradeoffs.jl_curve_b"] not in jl_bs:
        st.session_state["tradeoffs.jl_curve_b"] = jl_bs[0]
    curve_b = j1.selectbox("Noise of the grid point with B =", jl_bs, key="tradeoffs.jl_curve_b", format_func=fmt,
                           help="The Laplace scale is that of this grid point (first budget); both relations are "
                           "drawn at that same noise.")
    jl_budget = jl_config.budgets[0]
    with user_errors(prefix="δ_fail curve: "):
        jl_mech = jl_config.mechanism_for(curve_b, jl_budget, d=prepared.d)
        row_b = curve_b if jl_config.relation == "row" else 2.0
        element_bound = curve_b if jl_config.relation == "element" else 1.0
        jl_curves = jl_delta_fail_curves(int(jl_mech.k), int(prepared.d), float(row_b), float(element_bound),
                                         float(jl_mech.laplace_scale), float(4 * jl_mech.epsilon))
        st.plotly_chart(
            delta_fail_figure([
                (f"row-wise (B = {fmt(row_b)})", "row", jl_curves["row"]),
                (f"element-wise (bound {fmt(element_bound)})", "element", jl_curves["element"]),
            ]),
            key="tradeoffs.jl_delta_fail",
        )
        j2.metric(f"δ_fail at the swept ε = {fmt(jl_mech.epsilon)}", fmt(jl_mech.delta_fail),
                  help=f"Laplace scale {fmt(jl_mech.laplace_scale)}, k = {jl_mech.k}, d = {prepared.d}; the "
                  f"paper's bound at this point: {fmt(jl_mech.delta_fail_paper)}.")
        for warning in jl_mech.warnings():
            st.warning(warning, icon=":material/warning:")

# ---- choose a configuration ---------------------------------------------------------------------------------------
st.subheader("Choose a configuration")
choices = {}
for summary, config in zip(summaries, configs, strict=True):
    for _, row in summary[summary["reference"].isin(["tdp", "classic-dp"])].iterrows():
        pid = f"{config.mechanism}:{int(row['point'])}"
        choices[pid] = (
            f"{MECH_LABELS[config.mechanism]} · B = {row['b']:g} · ε = {row['epsilon']:.4g} · δ = {row['delta']:.3g}"
            f" · {utility_label} {fmt(row.get(f'{utility}_mean'))}"
        )
if choices:
    current = selected if selected in choices else next(iter(choices))
    seed_widget("tradeoffs.point", current)
    if st.session_state["tradeoffs.point"] not in choices:
        st.session_state["tradeoffs.point"] = current
    c1, c2 = st.columns([0.75, 0.25])
    c1.selectbox("Configuration", list(choices), key="tradeoffs.point", format_func=choices.get,
                 help="The same as clicking a point in the charts: it becomes the candidate (B, ε, δ) and the "
                 "Mechanisms page's configuration (including the budget split).")
    c2.button("Use this configuration", key="tradeoffs.use_point", on_click=on_use_point, type="primary",
              help="Make the selected configuration the candidate (B, ε, δ) and the Mechanisms page's setup.",
              icon=":material/check:")
if state.selected_point:
    sp = state.selected_point
    st.success(
        f"Chosen: {MECH_LABELS.get(sp['mechanism'], sp['mechanism'])}, B = {sp['b']:g}, ε = {sp['epsilon']:.4g}, "
        f"δ = {sp['delta']:.3g} — now the candidate on every page.", icon=":material/check_circle:",
    )
    for summary, config in zip(summaries, configs, strict=True):
        rows = summary[summary["point"] == sp["point"]] if config.mechanism == sp["mechanism"] else summary.iloc[:0]
        if rows.empty or "decision_agreement_mean" not in rows:
            continue
        row = rows.iloc[0]
        measured = (row["decision_agreement_mean"], row["decision_agreement_lo"], row["decision_agreement_hi"])
        for target in state.gammas:
            check = gamma_check(float(target), measured, b=sp["b"], epsilon=sp["epsilon"], delta=sp["delta"])
            (st.success if check.status == "met" else st.warning)(check.text, icon=":material/target:")

# ---- the distinguishing attacker ----------------------------------------------------------------------------------
st.subheader("What a distinguishing attacker can do")
c = state.candidate_or_default()
seed_widget("tradeoffs.distance", "any")
distance_choice = st.radio(
    "Two records that are…", ("any", "b"), key="tradeoffs.distance", horizontal=True,
    format_func=DISTANCE_LABELS.get,
    help="The attacker sees the release and must decide which of two records is in the data. Any two records of "
    "the unit ball are at most 2 apart; records within B get the full (ε, δ) protection.",
)
distance = 2.0 if distance_choice == "any" else float(c.b)
curve_mechs = []
configured = state.mechanism.to_dict() if state.mechanism is not None else {}
if configured.get("kind") == "projection" and all(
    math.isclose(a, b, rel_tol=1e-9) for a, b in (
        (configured["b"], c.b), (configured["epsilon1"] + configured["epsilon2"], c.epsilon),
        (configured["delta1"] + configured["delta2"], c.delta))
):
    projection = {k: configured[k] for k in ("kind", "b", "epsilon1", "delta1", "epsilon2", "delta2")}
else:
    projection = {"kind": "projection", "b": c.b, **split_budget(c.epsilon, c.delta).as_dict()}
curve_mechs.append(("Private projection, candidate (B, ε, δ)", "projection", projection))
curve_mechs.append(("Gaussian (TDP), candidate (B, ε, δ)", "gaussian",
                    {"kind": "gaussian", "b": c.b, "epsilon": c.epsilon, "delta": c.delta}))
curve_mechs.append(("Gaussian, classic DP (B = 2), same (ε, δ)", "classic-dp",
                    {"kind": "gaussian", "b": 2.0, "epsilon": c.epsilon, "delta": c.delta}))
if configured.get("kind") == "jl-laplace":
    curve_mechs.append(("JL projection + Laplace, as configured", "jl-laplace", configured))
with user_errors():
    curves = tradeoff_curves(tuple(json.dumps(m) for _, _, m in curve_mechs), distance)
    st.plotly_chart(
        hypothesis_testing_figure(
            [(label, kind, cv.alphas, cv.betas) for (label, kind, _), cv in zip(curve_mechs, curves, strict=True)],
            distance=distance,
        ),
        key="tradeoffs.hypothesis",
    )
    st.caption(" ".join(f"{label}: smallest total error {fmt(cv.min_total_error)} ({cv.description})."
                        for (label, _, _), cv in zip(curve_mechs, curves, strict=True)))

# ---- the table ----------------------------------------------------------------------------------------------------
st.subheader("Results table")
shown_cols = ["mechanism", "reference", "b", "epsilon", "delta", "implied_epsilon", "runs", f"{utility}_mean",
              f"{utility}_lo", f"{utility}_hi", "no_better_than", "decision_agreement_mean", "decision_agreement_lo",
              "decision_agreement_hi"] + [f"{PROTECTION_COLUMNS[a]}_mean" for a in attacks_run]
flagged = [s.assign(no_better_than=r.no_better_than_trivial(utility).to_numpy())
           for s, r in zip(summaries, results, strict=True)]
table = pd.concat([s if i == 0 else s[s["reference"] != "non-private"] for i, s in enumerate(flagged)],
                  ignore_index=True)
weak = table[(table["no_better_than"] != "") & (table["reference"] != "non-private")]
if not weak.empty:
    st.warning(
        f"{len(weak)} of {int((table['reference'] != 'non-private').sum())} configurations are no better than a rule "
        f"that uses no data ({', '.join(sorted(set(weak['no_better_than'])))}) on {utility_label}, even at the "
        "favourable end of their 95 % interval: they are marked in the table's 'no_better_than' column.",
        icon=":material/report:",
    )
if "decision_agreement_mean" in table:
    st.caption("decision_agreement is the measured γ: the share of people whose decision on the release equals the "
               "non-private program's decision (Theorem 1's γ), with its 95 % interval over the repetitions.")
st.dataframe(table[[c for c in shown_cols if c in table]], hide_index=True, width="stretch", key="tradeoffs.table")
tidy = pd.concat([r.table for r in results], ignore_index=True)
st.download_button("Download the tidy table (CSV)", lambda: safe_csv_bytes(tidy),
                   file_name="sweep-results.csv", mime="text/csv", key="tradeoffs.download", on_click="ignore",
                   icon=":material/download:",
                   help="One row per cell (grid point × repetition) with every metric; seeds and configuration are on "
                   "the Export page's decision record.")
st.caption(" · ".join(r.config.describe() for r in results))
