"""Data: a built-in demo or an uploaded table; features, target, program columns and normalisation; preview."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from engine.data.demos import demo_names
from engine.data.preparation import DataSpec, Normalization, privacy_note, table_problems
from engine.errors import EngineError
from engine.evaluation.programs import LENDING_ROLES, PROGRAM_KINDS, ProgramConfig
from ui.cached import (
    MAX_UPLOAD_MB,
    current_data,
    data_key,
    default_upload_spec,
    demo_dataset,
    observed_bounds,
    raw_table,
    sha256_bytes,
    uploaded_table,
)
from ui.common import DATA_DEPENDENT_NOTE, HELP, b_in_data_units, field_error, user_errors
from ui.figures.data import row_norm_figure
from ui.figures.theme import fmt
from ui.state import get_state, seed_widget

state = get_state()

DEMO, UPLOAD = "Built-in demo", "Upload a file"
NO_COLUMN = "(none)"
#: Widget keys that describe the columns of ONE table; cleared when the table changes so they reseed.
COLUMN_KEYS = (
    "data.features", "data.target", "data.program", "data.norm_method", "data.standardize", "data.bounds",
    *(f"data.role.{role}" for role in LENDING_ROLES),
)
METHOD_LABELS = {
    "clip": "clip — standardise, shrink rows longer than 1 (default)",
    "maxnorm": "maxnorm — divide by the largest row norm (the paper's case studies)",
    "bounds": "bounds — public bounds per feature (data-independent)",
}
PROGRAM_LABELS = {
    "targeting": "targeting — rank people by predicted outcome, select the poorest share",
    "lending": "lending — approve applicants predicted to repay; score profit",
    "classification": "classification — predict a yes/no label",
    "regression": "regression — predict a number",
}


def _reset_column_widgets() -> None:
    for key in (*COLUMN_KEYS, "data.bounds_base"):
        st.session_state.pop(key, None)


def on_source_change() -> None:
    """Switching between demo and upload activates the demo, or the upload already held in memory."""
    if st.session_state["data.source"] == DEMO:
        state.source = "demo"
        state.demo_name = st.session_state.get("data.demo", state.demo_name)
    elif state.upload_bytes is not None:
        state.source = "upload"
    else:
        return  # nothing uploaded yet: keep the current data until a file arrives
    state.spec = None
    state.switch_data()
    _reset_column_widgets()


def on_demo_change() -> None:
    state.source = "demo"
    state.demo_name = st.session_state["data.demo"]
    state.spec = None
    state.program = None
    state.switch_data()
    _reset_column_widgets()


def fill_bounds_from_data() -> None:
    """Put the data's own min and max in the bounds table (exploration only; flagged as not private)."""
    table = raw_table(state)
    if table is None:
        return
    features = tuple(st.session_state.get("data.features", ()))
    lower, upper = observed_bounds(data_key(state), features, table[0])
    st.session_state["data.bounds_base"] = pd.DataFrame({"feature": list(features), "lower": lower, "upper": upper})
    st.session_state.pop("data.bounds", None)


def handle_upload(file: object) -> str | None:
    """Take a newly uploaded file into the session (memory only); return a message if it cannot be used.

    On failure nothing the user already did changes: the previous dataset and every setting stay.
    """
    content = file.getvalue()  # type: ignore[attr-defined]
    name = str(file.name)  # type: ignore[attr-defined]
    if len(content) > MAX_UPLOAD_MB * 1024 * 1024:
        return (
            f"'{name}' is {len(content) / 1024 / 1024:.1f} MB, above this app's limit of {MAX_UPLOAD_MB} MB — use a "
            "sample of the rows here, or run the full release with 'python -m engine privatize'."
        )
    fingerprint = sha256_bytes(content)
    try:
        frame = uploaded_table(fingerprint, name, content)
    except EngineError as exc:
        return f"{exc}. Your previous data and settings are unchanged."
    linked = state.source == "upload" and state.upload_bytes is None and state.upload_fingerprint == fingerprint
    if state.upload_fingerprint is not None and state.upload_bytes is None and not linked:
        state.notices.append(
            f"This file's fingerprint ({fingerprint[:12]}…) differs from the one in the shared link "
            f"({state.upload_fingerprint[:12]}…): the link's data settings were not applied."
        )
        state.spec = None
    state.source = "upload"
    state.upload_bytes = content
    state.upload_name = name
    state.upload_fingerprint = fingerprint
    if not linked:
        state.spec = default_upload_spec(frame)
    state.switch_data()
    _reset_column_widgets()
    return None


st.title("Data")
st.markdown(
    "Load the table the program works on, say which columns are the people's features (these get privatized), "
    "which is the outcome, and how features are scaled into the unit ball that targeted DP measures distances in."
)

# ----------------------------------------------------------------------------------------------------------------
# Source
# ----------------------------------------------------------------------------------------------------------------
seed_widget("data.source", DEMO if state.source == "demo" else UPLOAD)
st.radio("Where do the data come from?", [DEMO, UPLOAD], key="data.source", horizontal=True,
         on_change=on_source_change,
         help="A built-in demo (synthetic people, safe to show in a workshop) or your own table. Switching keeps "
         "the other source's data in this session.")
if st.session_state["data.source"] == DEMO:
    names = demo_names()
    seed_widget("data.demo", state.demo_name if state.demo_name in names else names[0])
    st.selectbox("Demo dataset", names, key="data.demo", on_change=on_demo_change,
                 help="Built-in datasets. All except 'replication' are synthetic: generated, not real people.")
    with user_errors():
        demo = demo_dataset(st.session_state["data.demo"])
        badge = ":violet-badge[synthetic]" if demo.synthetic else ":blue-badge[real data — authors' replication input]"
        st.markdown(f"**{demo.title}** {badge}")
        st.caption(demo.description)
else:
    st.file_uploader(
        f"CSV or Parquet file (at most {MAX_UPLOAD_MB} MB)", type=["csv", "tsv", "txt", "parquet", "pq"],
        key="data.upload", help=HELP["upload"],
    )
    upload = st.session_state.get("data.upload")
    if upload is not None and st.session_state.get("data.upload_seen") != upload.file_id:
        st.session_state["data.upload_seen"] = upload.file_id
        st.session_state["data.upload_error"] = handle_upload(upload)
    field_error(st.session_state.get("data.upload_error"))
    if state.upload_bytes is not None:
        st.caption(
            f"In memory for this session only: **{state.upload_name}** ({len(state.upload_bytes) / 1024:,.0f} KB, "
            f"fingerprint {state.upload_fingerprint[:12]}…). Nothing is written to disk."
        )
    elif state.upload_fingerprint:
        st.info(
            f"The shared link was made on an uploaded file (fingerprint {state.upload_fingerprint[:12]}…). Upload "
            "the same file to continue with its settings."
        )
table_box = st.container()

# ----------------------------------------------------------------------------------------------------------------
# Columns and normalisation
# ----------------------------------------------------------------------------------------------------------------
with user_errors():
    table = raw_table(state)
if table is None:
    st.info("Upload a file, or switch back to a built-in demo, to choose columns.")
else:
    frame, demo = table
    active_spec = state.spec if state.spec is not None else (demo.spec if demo is not None else default_upload_spec(frame))
    columns = [str(c) for c in frame.columns]
    label = demo.title if demo is not None else state.upload_name
    st.subheader(f"Columns of {label}")
    st.caption(f"{len(frame):,} rows × {len(columns)} columns.")

    left, right = st.columns(2, gap="large")
    with left:
        seed_widget("data.features", [f for f in active_spec.features if f in columns])
        st.multiselect("Feature columns (privatized)", columns, key="data.features", help=HELP["features"])
        features_box = st.container()
        target_options = [NO_COLUMN, *columns]
        seed_widget("data.target", active_spec.target if active_spec.target in columns else NO_COLUMN)
        st.selectbox("Target (outcome the program predicts)", target_options, key="data.target",
                     help=HELP["target"])
        target_box = st.container()

        demo_program = {"kind": demo.program} if demo is not None and demo.program in PROGRAM_KINDS else None
        base_program = state.program or demo_program
        seed_widget("data.program", (base_program or {}).get("kind", "targeting"))
        st.selectbox("Program", PROGRAM_KINDS, key="data.program", format_func=PROGRAM_LABELS.get,
                     help="What the program official does with the released features; the Mechanisms and Tradeoffs "
                     "pages score it.")
        role_boxes = {}
        with st.expander("Program columns (loan amount, revenue, interest)",
                         expanded=st.session_state["data.program"] == "lending"):
            st.caption(HELP["roles"] + " Without them the lending program uses its default amounts.")
            for role in LENDING_ROLES:
                current = (active_spec.roles or {}).get(role)
                seed_widget(f"data.role.{role}", current if current in columns else NO_COLUMN)
                st.selectbox(role.replace("_", " ").capitalize() + " column", target_options,
                             key=f"data.role.{role}",
                             help=f"The column holding each applicant's {role.replace('_', ' ')} (numbers ≥ 0), "
                             "read by the lending program to score profit; never privatized.")
                role_boxes[role] = st.container()
    with right:
        seed_widget("data.norm_method", active_spec.normalization.method)
        st.radio("Normalisation into the unit ball", list(METHOD_LABELS), key="data.norm_method",
                 format_func=METHOD_LABELS.get, help=HELP["normalization"])
        seed_widget("data.standardize", active_spec.normalization.standardize)
        st.checkbox("Standardise columns first", key="data.standardize", help=HELP["standardize"])
        lower: tuple[float, ...] = ()
        upper: tuple[float, ...] = ()
        bounds_from_data = False
        features = list(st.session_state["data.features"])
        if st.session_state["data.norm_method"] == "bounds":
            st.caption("Public bounds per feature — from a codebook, legal limits or published ranges, never from "
                       "these data. Values outside are clipped to the bounds.")
            base = st.session_state.get("data.bounds_base")
            if base is None or list(base["feature"]) != features:
                known = dict(zip(active_spec.features, zip(active_spec.normalization.lower,
                                                            active_spec.normalization.upper, strict=False),
                                 strict=False))
                base = pd.DataFrame(
                    {"feature": features,
                     "lower": [known.get(f, (math.nan, math.nan))[0] for f in features],
                     "upper": [known.get(f, (math.nan, math.nan))[1] for f in features]}
                )
                st.session_state["data.bounds_base"] = base
                st.session_state.pop("data.bounds", None)
            edited = st.data_editor(base, key="data.bounds", hide_index=True, disabled=["feature"],
                                    num_rows="fixed", width="stretch")
            lower = tuple(float(v) for v in edited["lower"])
            upper = tuple(float(v) for v in edited["upper"])
            st.button("Fill with the data's own min and max (exploration only)", key="data.fill_bounds",
                      on_click=fill_bounds_from_data, icon=":material/warning:",
                      help="Reads the bounds from the sensitive data itself, so the preparation is no longer "
                      "data-independent. Use it to explore; enter public bounds before a real release.")
            bounds_from_data = bool(features) and (lower, upper) == observed_bounds(
                data_key(state), tuple(features), frame)
            if bounds_from_data:
                st.warning("These bounds are the data's own minimum and maximum: they reveal the most extreme "
                           "records and are NOT public bounds. Replace them before a real release.",
                           icon=":material/warning:")
        norm_box = st.container()

    # Build the spec from the controls; put every problem next to the control that fixes it.
    boxes = {"features": features_box, "target": target_box, "normalization": norm_box, "table": table_box,
             "file": table_box, **{f"role:{r}": b for r, b in role_boxes.items()}}
    spec = None
    roles = {r: st.session_state[f"data.role.{r}"] for r in LENDING_ROLES
             if st.session_state[f"data.role.{r}"] != NO_COLUMN}
    target = st.session_state["data.target"]
    try:
        if any(math.isnan(v) for v in (*lower, *upper)):
            raise EngineError("enter a lower and an upper public bound for every feature (empty cells remain)")
        normalization = Normalization(
            st.session_state["data.norm_method"], standardize=bool(st.session_state["data.standardize"]),
            lower=lower, upper=upper,
        )
        spec = DataSpec(tuple(features), target=None if target == NO_COLUMN else target, roles=roles or None,
                        normalization=normalization)
    except EngineError as exc:
        field_error(str(exc), norm_box)
    problems = table_problems(frame, spec) if spec is not None else []
    for problem in problems:
        field_error(str(problem), boxes.get(problem.control, table_box))
    with norm_box:
        chosen = spec.normalization if spec is not None else active_spec.normalization
        if not bounds_from_data:  # otherwise the warning under the bounds says what matters
            (st.success if chosen.data_independent else st.warning)(privacy_note(chosen))
        if not chosen.data_independent:
            st.caption(DATA_DEPENDENT_NOTE)

    if spec is not None and not problems:
        default = demo.spec if demo is not None else None
        wanted = None if default is not None and spec == default else spec
        if wanted != state.spec:
            state.spec = wanted
            state.forget_data_results()
        program_kind = st.session_state["data.program"]
        if base_program is None or base_program.get("kind") != program_kind:
            merged = {**(base_program or {}), "kind": program_kind}
            with user_errors():
                state.program = ProgramConfig.from_dict(merged).to_dict()
    else:
        st.caption(":material/info: Until these are fixed, the other pages keep using the last valid settings.")

    # ------------------------------------------------------------------------------------------------------------
    # Preview
    # ------------------------------------------------------------------------------------------------------------
    st.subheader("Preview")
    loaded = None
    try:
        loaded = current_data(state)
    except EngineError as exc:
        if problems or spec is None:  # already shown next to the controls that fix it
            st.caption(":material/info: No preview until the problems above are fixed.")
        else:
            st.error(str(exc), icon=":material/error:")
    if loaded is not None:
        prepared = loaded.prepared
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("people (n)", f"{prepared.n:,}")
        c2.metric("features (d)", prepared.d)
        c3.metric("rows clipped", f"{prepared.clipped_rows:,}",
                  help="Rows whose length exceeded 1 and were scaled back onto the unit ball ('clip').")
        c4.metric("values clipped to bounds", f"{prepared.clipped_values:,}",
                  help="Cells outside their public bounds ('bounds').")
        if prepared.clipped_rows > prepared.n / 2:
            st.warning(
                f"{prepared.clipped_rows:,} of {prepared.n:,} rows were longer than 1 and were shrunk onto the unit "
                "sphere: clipping changes most records and discards how far out they were. 'maxnorm' (the "
                "paper's case studies) or public bounds keep the rows' relative lengths.",
                icon=":material/warning:",
            )
        before, after = st.columns(2, gap="large")
        with before:
            st.markdown("**Before** (first rows, data units)")
            st.dataframe(loaded.frame.loc[:, list(prepared.feature_names)].head(8), hide_index=True)
        with after:
            st.markdown("**After** (prepared: every row in the unit ball)")
            st.dataframe(prepared.as_frame().head(8).round(4), hide_index=True)
        st.plotly_chart(
            row_norm_figure(prepared.row_norms("input"), np.asarray(prepared.row_norms()),
                            method=prepared.spec.normalization.method),
            key="data.norms_chart", theme=None, config={"displaylogo": False},
        )
        cand = state.candidate_or_default()
        st.markdown(f"**What the candidate B = {fmt(cand.b)} means here:** "
                    + b_in_data_units(prepared, cand.b))
        st.caption(f"Data fingerprint (SHA-256 of the used columns and these settings): `{prepared.fingerprint}`")
