"""The Per-record page's last section: targeted DP read as a per-record guarantee on the prepared data."""

from __future__ import annotations

import numpy as np
import streamlit as st

from engine.per_record.tdp_losses import SOURCE as TDP_SOURCE
from engine.per_record.units import UNIT_LABELS
from ui.cached import current_data, tdp_losses, tdp_policy_curve
from ui.common import plain, stop_page, user_errors
from ui.figures.per_record import distance_loss_histogram, tdp_policy_figure
from ui.figures.theme import exact, fmt
from ui.room import ROWS_HIDDEN, may_see_rows
from ui.state import StudioState


def draw_tdp(state: StudioState, by: list[str]) -> None:
    """Targeted DP's per-record losses at each record's nearest distinct neighbour and at t = 2 (internal)."""
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
            if may_see_rows():
                st.dataframe(top, hide_index=True, width="stretch", key="per_record.tdp_top")
            else:  # a workshop participant (ui.room)
                st.caption(ROWS_HIDDEN)
