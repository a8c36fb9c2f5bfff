"""The Data page's preview: the prepared data's size, what preparation did, rows before and after, row norms."""

from __future__ import annotations

import numpy as np
import streamlit as st

from engine.errors import EngineError
from ui.cached import current_data
from ui.common import b_in_data_units, plain
from ui.figures.data import row_norm_figure
from ui.figures.theme import fmt
from ui.room import ROWS_HIDDEN, may_see_rows
from ui.state import StudioState


def draw_preview(state: StudioState, problems: list, spec) -> None:
    """The preview of the session's prepared data (``problems``/``spec``: the form's, to stay quiet about errors
    already shown next to their controls)."""
    st.subheader("Preview")
    loaded = None
    try:
        loaded = current_data(state)
    except EngineError as exc:
        if problems or spec is None:  # already shown next to the controls that fix it
            st.caption(":material/info: No preview until the problems above are fixed.")
        else:
            st.error(plain(exc), icon=":material/error:")
    if loaded is not None:
        prepared = loaded.prepared
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("people (n)", f"{prepared.n:,}")
        c2.metric("features (d)", prepared.d)
        c3.metric("rows clipped", f"{prepared.clipped_rows:,}",
                  help="Rows whose length exceeded 1 and were scaled back onto the unit ball ('clip').")
        c4.metric("values clipped to bounds", f"{prepared.clipped_values:,}",
                  help="Cells outside their public bounds ('bounds').")
        for warning in prepared.warnings:  # the engine's: clipping that loses most rows' lengths, a maxnorm outlier
            st.warning(warning[0].upper() + warning[1:] + " (internal: statistics of the data).",
                       icon=":material/warning:")
        if prepared.rows_dropped:
            st.caption(f"{prepared.rows_dropped:,} of {prepared.rows_in_table:,} rows were dropped for missing "
                       "values (internal count; the released n reveals it).")
        if may_see_rows():
            before, after = st.columns(2, gap="large")
            with before:
                st.markdown("**Before** (first rows, data units)")
                st.dataframe(loaded.frame.loc[:, list(prepared.spec.features)].head(8), hide_index=True)
            with after:
                st.markdown("**After** (prepared: every row in the unit ball)")
                st.dataframe(prepared.as_frame().head(8).round(4), hide_index=True)
        else:  # a workshop participant: the rows are the facilitator's only (ui.room)
            st.caption(ROWS_HIDDEN)
        st.plotly_chart(
            row_norm_figure(prepared.row_norms("input"), np.asarray(prepared.row_norms()),
                            method=prepared.spec.normalization.method),
            key="data.norms_chart", theme=None, config={"displaylogo": False},
        )
        cand = state.candidate_or_default()
        st.markdown(f"**What the candidate B = {fmt(cand.b)} means here:** "
                    + b_in_data_units(prepared, cand.b))
        st.caption(f"Data fingerprint (SHA-256 of the used columns and these settings): `{prepared.fingerprint}`")
