"""Per-record: who pays what. Policy functions of the per-record mechanisms for sums compared at equal accuracy,
the loss distribution over a column with the most exposed records, per-cell releases, the paper's Table 1
walkthrough, and targeted DP read as a per-record guarantee on the prepared data."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.data.establishments import CELL_COLUMNS, ID_COLUMN, table1_toy
from ui.cached import current_data, data_key, demo_dataset
from ui.common import stop_page, user_errors
from ui.sections.per_record_cells import draw_cell_release, draw_table1
from ui.sections.per_record_policy import draw_losses, draw_policies, draw_policy_form
from ui.sections.per_record_tdp import draw_tdp
from ui.state import get_state, seed_widget

state = get_state()

SOURCES = {
    "establishments": "Establishment payroll demo (synthetic)",
    "table1": "The paper's Table 1 (six establishments)",
    "loaded": "The loaded dataset",
}


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

draw_policy_form(saved, source)
calibrated, values, unit, threshold = draw_policies(state, source, value, by, frame)
mech_dict = draw_losses(calibrated, values, unit, threshold, key, value, title, id_columns, frame)
if mech_dict is not None and by:
    draw_cell_release(state, saved, source, key, value, by, mech_dict, id_columns, frame)
draw_table1(source)
draw_tdp(state, by)
