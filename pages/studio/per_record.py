"""Per-record: who pays what. Policy functions of the per-record mechanisms for sums compared at equal accuracy,
the loss distribution over a column with the most exposed records, per-cell releases, the paper's Table 1
walkthrough, and targeted DP read as a per-record guarantee on the prepared data."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import streamlit as st

from engine.data.establishments import CELL_COLUMNS, CELL_LEVELS, ID_COLUMN, table1_toy
from engine.errors import EngineError
from engine.export_csv import safe_csv_bytes
from engine.per_record import SUM_MECHANISMS, sum_mechanism_from_dict
from engine.per_record.cells import COUNTS_NOTE, observed_levels_note
from engine.per_record.cells import SOURCE as CELLS_SOURCE
from engine.per_record.losses import CONFIDENTIAL_NOTE
from engine.per_record.tdp_losses import SOURCE as TDP_SOURCE
from engine.per_record.units import CONVERSION_TEXT, UNIT_LABELS, dp_epsilon
from engine.rng import SEEDED_WARNING, fresh_seed
from ui.cached import current_data, data_key, demo_dataset
from ui.cached_analysis import (
    calibrated_sum_mechanisms,
    cell_release,
    column_losses,
    policy_table,
    tdp_losses,
    tdp_policy_curve,
)
from ui.common import HELP, plain, stop_page, user_errors
from ui.figures.per_record import (
    PolicyCurve,
    distance_loss_histogram,
    loss_ecdf_figure,
    policy_figure,
    tdp_policy_figure,
)
from ui.figures.theme import exact, fmt
from ui.state import get_state, parse_seed, seed_widget

state = get_state()

SOURCES = {
    "establishments": "Establishment payroll demo (synthetic)",
    "table1": "The paper's Table 1 (six establishments)",
    "loaded": "The loaded dataset",
}
#: Mechanisms offered, in display order, with their editable shape parameters (not the noise: that is calibrated).
SHAPE_PARAMETERS: dict[str, dict[str, float]] = {
    "gaussian": {},
    "unit-splitting": {"tau": 1000.0},
    "kth-root": {"k": 2, "a": 0.0},
    "log": {"a": 1000.0},
    "generalized-gaussian": {"p": 1.0},
    "epl1": {"d": 4.0},
    "epl2": {"d": 4.0, "a": math.e},
}
PARAMETER_HELP = {
    "tau": "Unit splitting: a record with value x is split into ⌈x/τ⌉ rows of at most τ.",
    "k": "Root order k of the k-th root transformation (a whole number ≥ 1).",
    "a": "Offset a: the transformation acts on q + a (roots: a ≥ 0; log: a > 0). Small offsets charge small "
         "records a lot. For EPL p = 2 the offset must be at least e.",
    "p": "Shape p of the generalized Gaussian noise, 0 < p ≤ 1 (p = 1 is the Laplace mechanism).",
    "d": "Exponent d of the exponential polylogarithmic noise: larger d, lighter tails.",
}
MECH_LABELS = {k: SUM_MECHANISMS[k].LABEL for k in SHAPE_PARAMETERS}
UNIT_CHOICES = {"rho": UNIT_LABELS["rho"], "epsilon": UNIT_LABELS["epsilon"] + " — additive mechanisms only"}
ACCURACY_CHOICES = {
    "relative_sd": "relative standard deviation at the planning total",
    "sd": "standard deviation",
    "half_width": "half-width of the 95 % interval",
}
#: How a user declares the level of rows with a missing cell key.
MISSING_LEVEL = "(missing)"
TABLE1_EXAMPLES = (
    ("Example 2.16: unit splitting (τ = 10, σ² = 50)", {"kind": "unit-splitting", "tau": 10.0, "sigma": math.sqrt(50.0)}),
    ("Example 4.6: 4th root (a = 0, σ = 2)", {"kind": "kth-root", "k": 4, "a": 0.0, "sigma": 2.0}),
    ("Example 4.8: log (a = 1, σ = 2)", {"kind": "log", "a": 1.0, "sigma": 2.0}),
)


def source_frame(source: str):
    """(data key, raw table, title) of the chosen source, or None when the loaded dataset is missing."""
    if source == "establishments":
        demo = demo_dataset("establishments-demo")
        return "demo:establishments-demo", demo.frame, demo.title
    if source == "table1":
        return "table1", table1_toy(), "Table 1 of Finley et al. (toy data)"
    with user_errors():
        loaded = current_data(state)
        if loaded is not None:
            return data_key(state), loaded.frame, loaded.title
    return None


def mechanism_configs() -> list[dict]:
    """The chosen mechanisms with their shape parameters from the widgets (noise set later by calibration)."""
    configs = []
    for kind in st.session_state["per_record.mechanisms"]:
        config = {"kind": kind}
        for name, default in SHAPE_PARAMETERS[kind].items():
            value = st.session_state.get(f"per_record.{kind}.{name}", default)
            config[name] = int(value) if name == "k" else float(value)
        configs.append(sum_mechanism_from_dict(config).to_dict())
    return configs


st.title("Per-record privacy")
st.markdown(
    "A payroll total that includes one firm with 10,000 employees: under uniform DP either the total is useless or "
    "the big firm is exposed. Per-record DP makes each record's privacy loss a function of the record — the "
    "**policy function**. Here you compare the mechanisms of Finley et al. at **equal accuracy**, see who in your "
    "data pays what, and read targeted DP the same way."
)
st.info(
    "**What may be published:** the policy curves (section 1, without the data's percentile lines) and the public "
    "table of a cell release. Everything marked **internal — do not publish** is computed from the confidential "
    "records (per-record losses, exact counts, true totals, errors). Our own additions to the paper are marked "
    "**ours**.",
    icon=":material/lock:",
)

saved = state.per_record  # this page's durable settings (survive page switches; go into the decision record)
# An uploaded table is what the user came with: it is the default source (the payroll demo otherwise).
seed_widget("per_record.source", saved.get("source", "loaded" if state.source == "upload" else "establishments"))
source = st.radio("Data", tuple(SOURCES), key="per_record.source", format_func=SOURCES.get, horizontal=True,
                  help="The establishments demo is synthetic long-tailed payroll (ours). Table 1 is the paper's toy "
                  "data. The loaded dataset is whatever the Data page holds (any non-negative numeric column).")
state.per_record["source"] = source
picked = source_frame(source)
if picked is None:
    st.info("Load a dataset on the Data page, or pick the establishments demo.", icon=":material/info:")
    stop_page()
key, frame, title = picked
numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]) and c != ID_COLUMN]
categorical = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c]) and c != ID_COLUMN]
if not numeric:
    st.error("This table has no numeric column to sum.", icon=":material/error:")
    stop_page()
c1, c2 = st.columns(2)
default_value = "payroll" if "payroll" in numeric else ("employees" if "employees" in numeric else numeric[0])
if saved.get("value") in numeric:
    default_value = saved["value"]
if st.session_state.get("per_record.value") not in numeric:
    st.session_state["per_record.value"] = default_value
value = c1.selectbox("Column to sum", numeric, key="per_record.value",
                     help="Each record's value is its per-record sensitivity: its own contribution to the sum. Values "
                     "must be non-negative.")
default_by = [c for c in CELL_COLUMNS if c in categorical] if source == "establishments" else []
if saved.get("by") and all(c in categorical for c in saved["by"]):
    default_by = list(saved["by"])
if any(c not in categorical for c in st.session_state.get("per_record.by", [])):
    st.session_state["per_record.by"] = default_by
seed_widget("per_record.by", default_by)
by = c2.multiselect("Cells (released separately)", categorical, key="per_record.by",
                    help="Sums are released per cell (e.g. industry × county). Cells are disjoint, so each record "
                    "pays only its own cell's loss (parallel composition).")
id_columns = tuple(c for c in (ID_COLUMN,) if c in frame.columns)

# ---- 1. policy functions at equal accuracy ------------------------------------------------------------------------
st.subheader("1 · Policy functions at equal accuracy")
st.caption(
    "Comparing mechanisms at the same noise parameter is meaningless (σ lives on different scales), so every "
    "mechanism is tuned to the same accuracy at a planning total you choose **[ours: calibration to equal accuracy, "
    "digest §5.4]**. Use a planning value, never the confidential true total."
)
with st.form("per_record.form"):
    f1, f2, f3, f4 = st.columns(4)
    seed_widget("per_record.mechanisms", saved.get("mechanisms", ["gaussian", "kth-root", "log", "generalized-gaussian", "epl2"]))
    f1.multiselect("Mechanisms", tuple(SHAPE_PARAMETERS), key="per_record.mechanisms", format_func=MECH_LABELS.get,
                   help="Gaussian and unit splitting are the baselines; k-th root and log transform the total "
                   "(ρ, per-record zCDP); generalized Gaussian and EPL add heavy-tailed noise (ε, per-record pure DP).")
    seed_widget("per_record.accuracy", saved.get("accuracy", "relative_sd"))
    f2.selectbox("Accuracy measure", tuple(ACCURACY_CHOICES), key="per_record.accuracy",
                 format_func=ACCURACY_CHOICES.get, help="What is held equal across mechanisms.")
    seed_widget("per_record.target", saved.get("target", 0.01))
    f3.number_input("Target accuracy", key="per_record.target", min_value=0.0, format="%.4g",
                    help="E.g. 0.01 = 1 % relative standard deviation at the planning total.")
    demo_q_ref = {"establishments": 1e5, "table1": 1e4}.get(source, 0.0)  # the loaded data: the user types it
    seed_widget("per_record.q_ref", saved.get("q_ref", demo_q_ref))
    f4.number_input("Planning total q₀ (public)", key="per_record.q_ref", min_value=0.0, format="%.6g",
                    help="A typical cell total you plan for — public knowledge, e.g. last year's published figure "
                    "for this column; never the confidential total of these data. Every mechanism is calibrated to "
                    "the target accuracy at this total, so it must be of the right order of magnitude.")
    g1, g2 = st.columns(2)
    seed_widget("per_record.unit", saved.get("unit", "rho"))
    g1.radio("Loss unit on the axis", tuple(UNIT_CHOICES), key="per_record.unit", format_func=UNIT_CHOICES.get,
             horizontal=True, help="ρ (zCDP) lets every mechanism share one axis: ε-losses are converted with "
             "ρ = ε·tanh(ε/2) (Lemma 5.2). ε shows only the additive mechanisms, in their own unit.")
    seed_widget("per_record.threshold", saved.get("threshold", 1.0))
    g2.number_input("Acceptable loss per record (in the unit shown)", key="per_record.threshold", min_value=0.0,
                    format="%.4g", help="Records whose loss exceeds this are counted as exposed.")
    with st.expander("Shape parameters", icon=":material/tune:"):
        cols = st.columns(4)
        i = 0
        for kind, params in SHAPE_PARAMETERS.items():
            for name, default in params.items():
                seed_widget(f"per_record.{kind}.{name}", saved.get("shapes", {}).get(kind, {}).get(name, default))
                cols[i % 4].number_input(f"{MECH_LABELS[kind]}: {name}", key=f"per_record.{kind}.{name}",
                                         help=PARAMETER_HELP[name], format="%g" if name != "k" else "%d",
                                         step=1 if name == "k" else None)
                i += 1
    st.form_submit_button("Compare", type="primary", key="per_record.run", icon=":material/compare_arrows:",
                          help="Calibrate every chosen mechanism to the target accuracy and redraw.")

unit = st.session_state["per_record.unit"]
threshold = float(st.session_state["per_record.threshold"]) or None
state.per_record.update({
    "source": source, "value": value, "by": list(by),
    "mechanisms": list(st.session_state["per_record.mechanisms"]),
    "accuracy": st.session_state["per_record.accuracy"], "target": float(st.session_state["per_record.target"]),
    "q_ref": float(st.session_state["per_record.q_ref"]), "unit": unit,
    "threshold": float(st.session_state["per_record.threshold"]),
    "shapes": {kind: {name: st.session_state.get(f"per_record.{kind}.{name}", default)
                      for name, default in params.items()} for kind, params in SHAPE_PARAMETERS.items()},
})
calibrated: list[dict] = []
if float(st.session_state["per_record.q_ref"]) <= 0:
    st.info("Type a **planning total q₀** for this column above (a public figure of the right order of magnitude, "
            "e.g. last year's published total) and press **Compare**: the mechanisms are calibrated at it.",
            icon=":material/edit:")
    stop_page()
with user_errors():
    shapes = mechanism_configs()
    if not shapes:
        raise EngineError("choose at least one mechanism")
    calibrated = calibrated_sum_mechanisms(
        tuple(json.dumps(m) for m in shapes), float(st.session_state["per_record.target"]),
        float(st.session_state["per_record.q_ref"]), st.session_state["per_record.accuracy"],
    )
    state.per_record["calibrated"] = calibrated
values = None
with user_errors():
    from engine.per_record.losses import value_column

    values = value_column(frame, value)
if calibrated and values is not None:
    positive = values[values > 0]
    top = float(positive.max()) if positive.size else 1.0
    low = float(positive.min()) if positive.size else 1e-3
    grid = tuple(np.geomspace(max(low / 10, 1e-6), max(top * 10, 10.0), 200).tolist())
    with user_errors():
        curves = policy_table(json.dumps(calibrated), grid, unit)
        kept = curves["kind"].unique().tolist()
        percentiles = dict(zip(("median", "p90", "p99", "max"),
                               np.quantile(values, [0.5, 0.9, 0.99, 1.0]).tolist(), strict=True))
        st.plotly_chart(
            policy_figure(
                [PolicyCurve(g["mechanism"].iloc[0], g["x"], g["loss"], ours="ours" in str(g["source"].iloc[0]))
                 for _, g in curves.groupby("mechanism", sort=False)],
                unit_label=UNIT_LABELS[unit], percentiles=percentiles, threshold=threshold,
                value_label=f"record value x of '{value}' (= its per-record sensitivity)",
                title=f"Policy functions at equal accuracy — shown in {UNIT_LABELS[unit]}",
            ),
            key="per_record.policy",
        )
        st.caption("The dotted vertical lines mark percentiles of the confidential column (internal: publish the "
                   "curves without them). Dashed curves are our additions. Every curve is in "
                   f"{UNIT_LABELS[unit]}" + (": ε-losses of the additive mechanisms were converted with "
                   "ρ = ε·tanh(ε/2) (Lemma 5.2)." if unit == "rho" else "; only the additive mechanisms have one."))
        rows = []
        for m in calibrated:
            mech = sum_mechanism_from_dict(m)
            if unit == "epsilon" and mech.UNIT != "epsilon":
                continue
            rows.append({
                "mechanism": mech.LABEL,
                "guarantee unit": UNIT_LABELS[mech.UNIT],
                "noise parameter": mech.NOISE_PARAMETER,
                "calibrated value": mech.noise,
                "SD at q₀": float(mech.sd(float(st.session_state["per_record.q_ref"])))
                if not (mech.KIND == "epl1" and m.get("d", 4) <= 3) else float("nan"),
                "largest record with ρ ≤ threshold (ours)": (float(mech.max_protected_value(threshold)) if threshold and unit == "rho"
                                                      else float("nan")),
                "source": mech.SOURCES.get("policy", ""),
            })
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="per_record.calibration_table")
        if unit == "epsilon" and len(kept) < len(calibrated):
            st.caption("Transformation mechanisms and the baselines are analysed in ρ only; switch to ρ to see them.")

# ---- 2. who pays what (internal) -----------------------------------------------------------------------------
st.subheader(f"2 · Who pays what in '{plain(value)}' ({plain(title)})")
st.error(
    "**Internal — do not publish.** Everything in this section is computed from the confidential records: "
    + CONFIDENTIAL_NOTE + " (Finley et al., remark after Def. 2.10.)",
    icon=":material/lock:",
)
options: list[str] = []
mech_dict: dict | None = None
if calibrated and values is not None:
    options = [m["kind"] for m in calibrated if unit == "rho" or SUM_MECHANISMS[m["kind"]].UNIT == "epsilon"]
    if options:
        if st.session_state.get("per_record.loss_mechanism") not in options:
            st.session_state["per_record.loss_mechanism"] = options[0]
        chosen = st.selectbox("Mechanism", options, key="per_record.loss_mechanism", format_func=MECH_LABELS.get,
                              help="The calibrated mechanism whose per-record losses are shown.")
        mech_dict = next(m for m in calibrated if m["kind"] == chosen)
        with user_errors(), st.container(border=True):
            losses = column_losses(key, value, json.dumps(mech_dict), unit, threshold, id_columns, frame)
            s = losses.summary
            sym = "ρ" if unit == "rho" else "ε"
            st.markdown(f"**Internal: per-record losses of the real records**, in {UNIT_LABELS[unit]}")
            m1, m2, m3 = st.columns(3)
            m4, m5, m6 = st.columns(3)
            m1.metric(f"Median {sym}", fmt(s.median), help=f"Exact: {exact(s.median)}")
            m2.metric(f"90th percentile {sym}", fmt(s.p90), help=f"Exact: {exact(s.p90)}")
            m3.metric(f"99th percentile {sym}", fmt(s.p99), help=f"Exact: {exact(s.p99)}")
            m4.metric(f"Largest {sym}", fmt(s.max), help=f"Exact: {exact(s.max)}")
            m5.metric("Share above the threshold", fmt(s.share_above) if s.share_above is not None else "—",
                      help="Share of records whose loss is strictly above the acceptable loss.")
            dp_delta = 1.0 / (s.n + 1)
            largest_dp = float(dp_epsilon(s.max, unit, dp_delta))
            how = (f"from ρ by the {CONVERSION_TEXT['cks']}" if unit == "rho" else
                   "pure ε-DP implies (ε, δ)-DP, so this never exceeds ε; the " + CONVERSION_TEXT["cks"]
                   + " applied to ρ = ε·tanh(ε/2) may lower it")
            m6.metric("Largest, as (ε, δ)-DP ε", fmt(largest_dp),
                      help=f"Exact: {exact(largest_dp)}. The largest loss read as {UNIT_LABELS['dp_epsilon']} at "
                      f"δ = 1/(n+1) = {dp_delta:.3g} (n = {s.n:,} records) — a different unit from the {sym} "
                      f"to its left: {how}. [ours: not in the paper]")
            left, right = st.columns([0.55, 0.45])
            left.plotly_chart(
                loss_ecdf_figure(losses.records["loss"].to_numpy(), unit_label=UNIT_LABELS[unit], threshold=threshold,
                                 highlights={"p99": s.p99, "max": s.max},
                                 title="Internal: per-record losses over the data"),
                key="per_record.ecdf",
            )
            right.markdown("**Most exposed records** (internal)")
            right.dataframe(s.top, hide_index=True, width="stretch", key="per_record.top")
            for note in losses.notes:
                st.caption(note)
    else:
        st.info("No chosen mechanism reports losses in this unit.", icon=":material/info:")

# ---- 3. per-cell release ------------------------------------------------------------------------------------------
if mech_dict is not None and by:
    st.subheader("3 · Per-cell release (simulated)")
    st.caption(f"Provenance: {CELLS_SOURCE}.")
    declared = {}
    if source == "establishments" and all(c in CELL_LEVELS for c in by):
        declared = {c: list(CELL_LEVELS[c]) for c in by}
        sizes = " × ".join(f"{len(declared[c])} {plain(c)} levels" for c in by)
        st.caption(f"Public cell levels: the demo's declared lists ({sizes}). Every cell of that universe is "
                   "released, empty cells included, so which cells appear reveals nothing about the data.")
    else:
        st.markdown("**Public cell levels.** A cell release is private only if the list of cells is public and "
                    "fixed before seeing the data. Declare each cell column's levels (e.g. the official list of "
                    "counties); every combination is released, empty cells included.")
        level_cols = st.columns(len(by))
        for col_widget, col in zip(level_cols, by, strict=True):
            seed_widget(f"per_record.levels.{col}", saved.get("levels", {}).get(col, ""))
            text = col_widget.text_area(
                f"Public levels of '{plain(col)}'", key=f"per_record.levels.{col}", height=90,
                placeholder="one level per line (empty: read from the data — NOT private)",
                help="Levels separated by new lines or commas. Leave empty to read them from the data; then the "
                "release reveals which levels occur unless that list is itself public.")
            if frame[col].isna().any():
                col_widget.caption(f"'{plain(col)}' has rows without a value: list {MISSING_LEVEL} as a level to release "
                                   "their cell.")
            parsed = [t.strip() for t in text.replace(",", "\n").splitlines() if t.strip()]
            if parsed:
                observed = {str(v): v for v in pd.unique(frame[col].dropna())}
                declared[col] = [None if t == MISSING_LEVEL else observed.get(t, t) for t in parsed]
        state.per_record["levels"] = {c: st.session_state.get(f"per_record.levels.{c}", "") for c in by}
        undeclared = [c for c in by if c not in declared]
        if undeclared:
            st.warning("**The level lists must be public.** " + observed_levels_note(undeclared),
                       icon=":material/warning:")
    seed_widget("per_record.seed", "")
    st.text_input("Seed (leave empty for a real release)", key="per_record.seed", help=HELP["seed"],
                  placeholder="empty = fresh randomness from the operating system")
    seed_text = str(st.session_state["per_record.seed"]).strip()
    user_seed = None
    with user_errors(prefix="Seed: "):
        user_seed = parse_seed(seed_text)
    if user_seed is None and st.session_state.get("per_record.fresh_seed") is None:
        st.session_state["per_record.fresh_seed"] = fresh_seed()  # OS entropy; never shown or exported
    draw_seed = user_seed if user_seed is not None else int(st.session_state["per_record.fresh_seed"])
    st.button("Draw again", key="per_record.draw_again", icon=":material/casino:",
              on_click=lambda: st.session_state.update({"per_record.fresh_seed": fresh_seed()}),
              help="New noise from the operating system (when no seed is typed).")
    with user_errors():
        cells = cell_release(key, value, tuple(by), json.dumps(mech_dict), draw_seed, id_columns, frame,
                             json.dumps(declared or None))
        public_notes = [n for n in cells.notes if n not in (CONFIDENTIAL_NOTE, COUNTS_NOTE)]
        what = (f"the noisy output, the unbiased and median-unbiased estimates, the {fmt(100 * (1 - cells.beta))} % "
                "interval and the SD estimated from the output")
        if user_seed is None:
            st.markdown(f"**Public table** — what may be published ({len(cells.published):,} cells; noise from the "
                        f"operating system's randomness): {what}.")
            file_name = "cell-release.csv"
        else:
            st.markdown(f"**Simulated table — simulation, not private** ({len(cells.published):,} cells): drawn "
                        f"with the seed {user_seed}, so anyone with the seed can regenerate the noise and recover "
                        f"the exact sums. {what}. Clear the seed for a table that may be published.")
            st.warning(SEEDED_WARNING, icon=":material/warning:")
            file_name = f"cell-release-seed-{user_seed}-simulation-not-private.csv"
        st.dataframe(cells.published, hide_index=True, width="stretch", key="per_record.published")
        st.download_button("Download this table (CSV)", lambda: safe_csv_bytes(cells.published),
                           file_name=file_name, mime="text/csv", on_click="ignore", key="per_record.download",
                           icon=":material/download:")
        for note in public_notes:
            (st.warning if "must be public" in note else st.caption)(note)
        with st.container(border=True):
            st.markdown("**Internal evaluation — do not publish.** Exact record counts, true sums, errors, "
                        "coverage and the SD at the true total are computed from the confidential data.")
            metrics = cells.metrics()
            k1, k2, k3, k4 = st.columns(4)
            k1.metric("Cells released", f"{metrics['n_cells']:,}")
            k2.metric("Empty cells (internal)", f"{metrics['n_empty_cells']:,}",
                      help="Released like every other cell: true total 0 plus noise.")
            k3.metric("Median |relative error|", fmt(metrics["median_abs_relative_error"]),
                      help="Over cells with a positive true total.")
            k4.metric("Interval coverage", fmt(metrics["coverage"]),
                      help=f"Share of cells whose {fmt(100 * (1 - cells.beta))} % interval covers the true total.")
            internal = cells.cells[[*by, *(c for c in cells.cells.columns if c not in cells.published.columns)]]
            internal = internal.rename(columns={"max_loss": f"max_loss ({UNIT_LABELS[cells.unit]})"})
            st.dataframe(internal, hide_index=True, width="stretch", key="per_record.cells")
            st.caption(COUNTS_NOTE)

# ---- Table 1 walkthrough ------------------------------------------------------------------------------------------
with st.expander("The paper's Table 1 walkthrough (Examples 2.16, 4.6, 4.8)", expanded=source == "table1",
                 icon=":material/menu_book:"):
    toy = table1_toy()
    st.caption("Six toy establishments; each example's loss per establishment in ρ (per-record zCDP), with the "
               "paper's own parameters (not calibrated to equal accuracy).")
    walk = toy.copy()
    with user_errors():
        for label, config in TABLE1_EXAMPLES:
            res = column_losses("table1", "employees", json.dumps(sum_mechanism_from_dict(config).to_dict()),
                                "rho", None, (ID_COLUMN,), toy)
            walk[label] = res.records["loss"].round(6).to_numpy()
    st.dataframe(walk, hide_index=True, width="stretch", key="per_record.table1")

# ---- 4. targeted DP as a per-record guarantee -----------------------------------------------------------------------
st.subheader(("4" if by else "3") + " · Targeted DP as a per-record guarantee")
loaded = None
with user_errors():
    loaded = current_data(state)
if loaded is None:
    st.info("Load a dataset on the Data page to see targeted DP's per-record losses.", icon=":material/info:")
    stop_page()
c = state.candidate_or_default()
st.caption(
    f"Under (B = {fmt(c.b)}, ε = {fmt(c.epsilon)}, δ = {fmt(c.delta)})-TDP (the candidate), a record that could be "
    f"replaced by one at distance t loses ⌈t/B⌉·ε (switch lemma), shown in {UNIT_LABELS['tdp_epsilon']} — a "
    f"different unit from sections 1–2 (ρ or per-record ε). The policy curve is public; the losses below are per "
    f"record of the prepared data '{plain(loaded.title)}': against its nearest DISTINCT neighbour (identical copies are "
    "skipped — swapping a record for its copy changes nothing; their count is the record's multiplicity) and in the "
    f"worst case t = 2. Provenance: {TDP_SOURCE}."
)
with st.spinner("Finding every record's nearest distinct neighbour…"), user_errors():
    tdp = tdp_losses(loaded.prepared.fingerprint, float(c.epsilon), float(c.delta), float(c.b), loaded.prepared)
    policy = tdp_policy_curve(float(c.epsilon), float(c.delta), float(c.b))
    nn = tdp.records["nn_distance"].to_numpy()
    multiplicity = tdp.records["multiplicity"].to_numpy()
    st.plotly_chart(
        tdp_policy_figure(policy.distance, policy.epsilon, b=c.b, epsilon=c.epsilon,
                          marks={"median NN distance (internal)": float(np.median(nn)), "worst case t =": 2.0}),
        key="per_record.tdp_policy",
    )
    with st.container(border=True):
        st.markdown("**Internal — do not publish:** targeted DP's losses of the real records " + "(" + tdp.note + ")")
        t1, t2, t3 = st.columns(3)
        t4, t5, _ = st.columns(3)
        t1.metric("Median nearest-distinct-neighbour distance", fmt(float(np.median(nn))))
        t2.metric("Median ε at the nearest neighbour", fmt(tdp.summary_nn.median),
                  help=f"Exact: {exact(tdp.summary_nn.median)}")
        t3.metric("Largest ε at the nearest neighbour", fmt(tdp.summary_nn.max),
                  help=f"Exact: {exact(tdp.summary_nn.max)}")
        t4.metric("Worst case ε (t = 2)", fmt(tdp.summary_worst.max), help=f"Exact: {exact(tdp.summary_worst.max)}")
        t5.metric("Records with an identical copy", fmt(float(np.mean(multiplicity > 1))),
                  help="Share of records whose prepared row occurs more than once (multiplicity > 1). Duplicates "
                  "are no better protected: their loss is measured against the nearest different row.")
        st.plotly_chart(
            distance_loss_histogram(tdp.records["epsilon_nn"].to_numpy(), unit_label=UNIT_LABELS["tdp_epsilon"],
                                    worst_case=tdp.summary_worst.max,
                                    title="Internal: each record's loss against its nearest distinct neighbour"),
            key="per_record.tdp_hist",
        )
        top = tdp.summary_nn.top.copy()
        top.insert(len(top.columns) - 2, "multiplicity", multiplicity[top["row"].to_numpy()])
        st.markdown("**Records most exposed against their nearest distinct neighbour** (internal)")
        st.dataframe(top, hide_index=True, width="stretch", key="per_record.tdp_top")
