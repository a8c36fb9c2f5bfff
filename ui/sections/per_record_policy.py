"""The Per-record page's first two sections: the sum mechanisms' policy functions at equal accuracy, and who pays
what in the chosen column (internal).

Every number comes from the engine through :mod:`ui.cached` (calibration to equal accuracy, policy curves,
per-record losses) and the per-record mechanisms' own methods.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd
import streamlit as st

from engine.errors import EngineError
from engine.per_record import SUM_MECHANISMS, sum_mechanism_from_dict
from engine.per_record.losses import CONFIDENTIAL_NOTE
from engine.per_record.units import CONVERSION_TEXT, UNIT_LABELS, dp_epsilon
from ui.cached import calibrated_sum_mechanisms, column_losses, policy_curves_table
from ui.common import Labels, plain, stop_page, user_errors
from ui.figures.per_record import PolicyCurve, loss_ecdf_figure, policy_figure
from ui.figures.theme import exact, fmt
from ui.state import StudioState, seed_widget

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


def draw_policy_form(saved: dict, source: str) -> None:
    """Section 1's form: mechanisms, accuracy target, planning total, loss unit, threshold and shape parameters."""
    st.subheader("1 · Policy functions at equal accuracy")
    st.caption(
        "Comparing mechanisms at the same noise parameter is meaningless (σ lives on different scales), so every "
        "mechanism is tuned to the same accuracy at a planning total you choose **[ours: calibration to equal accuracy, "
        "digest §5.4]**. Use a planning value, never the confidential true total."
    )
    with st.form("per_record.form"):
        f1, f2, f3, f4 = st.columns(4)
        seed_widget("per_record.mechanisms", saved.get("mechanisms", ["gaussian", "kth-root", "log", "generalized-gaussian", "epl2"]))
        f1.multiselect("Mechanisms", tuple(SHAPE_PARAMETERS), key="per_record.mechanisms", format_func=Labels(MECH_LABELS),
                       help="Gaussian and unit splitting are the baselines; k-th root and log transform the total "
                       "(ρ, per-record zCDP); generalized Gaussian and EPL add heavy-tailed noise (ε, per-record pure DP).")
        seed_widget("per_record.accuracy", saved.get("accuracy", "relative_sd"))
        f2.selectbox("Accuracy measure", tuple(ACCURACY_CHOICES), key="per_record.accuracy",
                     format_func=Labels(ACCURACY_CHOICES), help="What is held equal across mechanisms.")
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


def draw_policies(state: StudioState, source: str, value: str, by: list[str], frame: pd.DataFrame):
    """Keep this page's settings, calibrate the chosen mechanisms to equal accuracy and draw their policy curves.

    Returns ``(calibrated, values, unit, threshold)``: the calibrated mechanisms (``to_dict()``), the column's values,
    the loss unit and the acceptable loss."""
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
            tuple(sum_mechanism_from_dict(m) for m in shapes), float(st.session_state["per_record.target"]),
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
            curves = policy_curves_table(tuple(sum_mechanism_from_dict(m) for m in calibrated), grid, unit)
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
    return calibrated, values, unit, threshold


def draw_losses(calibrated: list[dict], values, unit: Literal["rho", "epsilon"], threshold: float | None, key: str, value: str, title: str,
                id_columns: tuple[str, ...], frame: pd.DataFrame) -> dict | None:
    """Section 2 (internal): each record's loss under one calibrated mechanism. Returns that mechanism's
    ``to_dict()`` (None when none is shown)."""
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
            chosen = st.selectbox("Mechanism", options, key="per_record.loss_mechanism", format_func=Labels(MECH_LABELS),
                                  help="The calibrated mechanism whose per-record losses are shown.")
            mech_dict = next(m for m in calibrated if m["kind"] == chosen)
            with user_errors(), st.container(border=True):
                losses = column_losses(key, value, sum_mechanism_from_dict(mech_dict), unit, threshold, id_columns,
                                       frame)
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
    return mech_dict
