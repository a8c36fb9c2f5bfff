"""The Public information page's Δ_z column: Figure 4 for the declared model, the Δ_z the release uses, the
guarantee in plain language, the noise it implies, and what goes wrong if the dependence is ignored (oracle O6)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.public_info.dependence import DependenceModel
from engine.public_info.results import DependenceSummary
from ui import cached
from ui.figures import public_info as figs
from ui.figures.theme import fmt


def draw_dependence(summary: DependenceSummary, model: DependenceModel, prior: float, periods: int) -> None:
    """Draw the column (call inside it)."""
    if summary.correlated_delta is not None:
        z, grid = cached.correlated_sensitivity_grid(model.n, 21)
        st.plotly_chart(figs.sensitivity_heatmap(z, grid, model.n, (model.z0, model.z1), summary.correlated_delta),
                        key="public_info.heatmap")
        st.markdown(f"With groups of **n = {model.n}** people and **z0 = {fmt(model.z0)}, z1 = {fmt(model.z1)}**, "
                    f"one person can move a count by up to **k = {summary.correlated_delta}** when nothing ties the "
                    "regions together (the DP value is 1 per count).")
    st.markdown(f"**The release uses {summary.release_delta.describe()}.**")
    lo, hi = summary.band
    st.markdown(
        f"**Guarantee at the first ε:** {summary.guarantee.headline()}.\n\n"
        f"**In plain language:** whatever an adversary who knows Z believed with probability {fmt(prior)} that a "
        f"person's record takes a value, after seeing one period's release they believe it with probability between "
        f"**{fmt(lo)}** and **{fmt(hi)}** (Lemma 4).\n\n"
        f"**Conditioning costs 2ε:** resampling an ε-DP release until it agrees with Z gives "
        f"{summary.conditioned.headline()} (Lemma 8) — the methods below build Z in instead.")
    st.dataframe(pd.DataFrame([{"method": m, "noise DL(a): a": a, "noise sd per count": sd, "E|noise|": mae}
                               for m, a, sd, mae in summary.noise]), hide_index=True)
    for line in cached.study_budget_lines(summary.guarantee.epsilon, periods):
        st.caption(line)
    draw_audit(model, summary.guarantee.epsilon)


def draw_audit(model: DependenceModel, epsilon: float) -> None:
    """"What goes wrong if you ignore Z": the realised ε of one count's exponential mechanism (O6)."""
    audit = cached.dependence_audit(model.to_json(), epsilon)
    with st.container(border=True, key="public_info.audit"):
        st.markdown("**What goes wrong if you ignore the dependence**")
        people = "" if model.kind == "correlated" else " independent people"
        st.caption(f"One count of a group of n = {model.n}{people}, released by the L1 exponential mechanism on {{0..n}} "
                   f"claimed at ε = {fmt(epsilon, 6)}; realised ε = the largest log ratio of the output laws under "
                   "one person's secret pair, computed exactly (digest O6).")
        st.dataframe(pd.DataFrame([
            {"calibrated to": f"the model's Δ_z = {audit.delta_z}", "claimed ε": epsilon,
             "realised ε": audit.calibrated.realised_epsilon, "claim holds": not audit.calibrated.violated},
            {"calibrated to": "the DP sensitivity 1 (Z ignored)", "claimed ε": epsilon,
             "realised ε": audit.ignoring.realised_epsilon, "claim holds": not audit.ignoring.violated},
        ]), hide_index=True, key="public_info.audit_table")
        if audit.ignoring.violated:
            st.error(f"Ignoring the dependence breaks the claim: with Δ = 1 the release is really "
                     f"ε = {fmt(audit.ignoring.realised_epsilon, 4)}-TP, not ε = {fmt(epsilon, 6)}.",
                     icon=":material/gpp_bad:")
        else:
            st.success("With independent people the DP sensitivity 1 keeps the claimed ε.", icon=":material/check:")
