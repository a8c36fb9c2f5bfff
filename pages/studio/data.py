"""Data: a built-in demo or an uploaded table; features, target, program columns and normalisation; preview."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from engine.data.demos import demo_label, demo_names
from engine.data.preparation import (
    Categorical,
    MissingRule,
    Normalization,
    preparation_notes,
    privacy_note,
    table_problems,
)
from engine.errors import EngineError
from ui.cached import (
    MAX_UPLOAD_MB,
    column_levels,
    data_key,
    demo_dataset,
    observed_bounds,
    raw_table,
    rows_kept,
    table_profile,
    upload_suggestion,
)
from ui.common import DATA_DEPENDENT_NOTE, HELP, field_error, plain, show_notices, user_errors
from ui.data_controls import (
    COLUMN_KEY_PREFIXES,
    bounds_controls,
    build_spec,
    categorical_controls,
    feature_picker,
    missing_controls,
    positive_class_control,
    program_controls,
    reset_column_widgets,
    role_controls,
)
from ui.room import ROWS_HIDDEN, may_see_rows, shared_upload
from ui.sections.data_choices import draw_left_out, draw_rows_kept
from ui.sections.data_preview import draw_preview
from ui.sections.data_upload import handle_upload
from ui.state import forget_widget, forget_widgets_with_prefix, get_state, seed_widget, widget

state = get_state()
if state.entered_page:
    # Streamlit may hand back a widget's first value after a visit to another page (a text box of typed levels came
    # back empty): the per-column controls start again from the session's spec, which holds what they describe.
    forget_widgets_with_prefix(*COLUMN_KEY_PREFIXES)

DEMO, UPLOAD = "Built-in demo", "Upload a file"
METHOD_LABELS = {
    "scaled": "scaled — standardise, divide rows by 2√m, shrink the few longer than 1 (suggested for uploads)",
    "clip": "clip — standardise, shrink rows longer than 1 (the demos' default)",
    "maxnorm": "maxnorm — divide by the largest row norm (the paper's case studies)",
    "bounds": "bounds — public bounds per feature (data-independent)",
}


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
    reset_column_widgets()


def on_demo_change() -> None:
    state.source = "demo"
    state.demo_name = st.session_state["data.demo"]
    state.spec = None
    state.program = None
    state.switch_data()
    reset_column_widgets()


def fill_bounds_from_data(features: tuple[str, ...]) -> None:
    """Put the data's own min and max in the bounds table (exploration only; flagged as not private)."""
    table = raw_table(state)
    if table is None:
        return
    lower, upper = observed_bounds(data_key(state), features, table[0])
    state.set_editor_base("bounds", pd.DataFrame({"feature": list(features), "lower": lower, "upper": upper}))
    forget_widget("data.bounds")


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
                 format_func=demo_label,
                 help="Built-in datasets, all synthetic: generated, not real people. The name in brackets is the "
                 "one the command line and shared links use.")
    with user_errors():
        chosen_demo = demo_dataset(st.session_state["data.demo"])
        badge = (":violet-badge[synthetic]" if chosen_demo.synthetic
                 else ":blue-badge[real data — authors' replication input]")
        st.markdown(f"**{plain(chosen_demo.title)}** {badge}")
        st.caption(plain(chosen_demo.description))
else:
    st.file_uploader(
        f"CSV or Parquet file (at most {MAX_UPLOAD_MB} MB)", type=["csv", "tsv", "txt", "parquet", "pq"],
        key="data.upload", help=HELP["upload"],
    )
    upload = widget("data.upload")
    if upload is not None and state.upload_seen != upload.file_id:
        state.upload_seen = upload.file_id
        state.upload_error = handle_upload(state, upload)
        show_notices(state)  # what the new file changed (its columns, the settings kept), right under it
    field_error(state.upload_error)
    if state.upload_bytes is not None:
        st.caption(
            f"In memory for this session only: **{plain(state.upload_name)}** ({len(state.upload_bytes) / 1024:,.0f} KB, "
            f"fingerprint {(state.upload_fingerprint or '')[:12]}…). Nothing is written to disk."
        )
    elif shared_upload(state.upload_fingerprint) is not None:
        st.info(f"The workshop's facilitator shares **{plain(state.upload_name)}** with the room: it stays in the "
                "server's memory, and you explore it without uploading anything.", icon=":material/groups:")
    elif state.upload_fingerprint:
        st.info(
            f"The shared link was made on an uploaded file (fingerprint {state.upload_fingerprint[:12]}…). Upload "
            "the same file to continue with its settings."
        )
table_box = st.container()

# ----------------------------------------------------------------------------------------------------------------
# Columns, preparation and the program
# ----------------------------------------------------------------------------------------------------------------
with user_errors():
    table = raw_table(state)
if table is None:
    st.info("Upload a file, or switch back to a built-in demo, to choose columns.")
else:
    frame, demo = table
    key = data_key(state)
    suggestion = upload_suggestion(key, frame) if demo is None else None
    if state.spec is not None:
        active_spec = state.spec
    elif demo is not None:
        active_spec = demo.spec
    else:
        assert suggestion is not None  # an upload always has a suggestion
        active_spec = suggestion.spec

    def levels_of(column: str) -> dict[str, int]:
        return column_levels(key, column, frame)

    profile = table_profile(key, frame)
    columns = list(profile["column"])
    label = demo.title if demo is not None else state.upload_name
    st.subheader(f"Columns of {plain(label)}")
    st.caption(f"{len(frame):,} rows × {len(columns)} columns.")
    with st.expander("What each column holds", icon=":material/table_rows:"):
        if not may_see_rows():  # a workshop participant: no example values (ui.room)
            profile = profile.drop(columns="examples")
            st.caption(ROWS_HIDDEN)
        else:
            profile = profile.assign(examples=profile["examples"].map(lambda v: " | ".join(map(str, v))))
        st.dataframe(profile, hide_index=True, width="stretch", key="data.profile")

    left, right = st.columns(2, gap="large")
    spec = None
    categorical: dict[str, Categorical] | None
    missing: dict[str, MissingRule] | None
    with left:
        target_box = st.container()
        features, target = feature_picker(profile, active_spec, target_box)
        features_box = st.container()
        if suggestion is not None:
            draw_left_out(suggestion.left_out, features, st.container())
        positive = positive_class_control(profile, active_spec, target, st.container(), levels_of)
        prep_box = st.container()
        try:
            categorical = categorical_controls(profile, active_spec, features, prep_box, levels_of, len(frame))
            missing, categorical = missing_controls(profile, active_spec, [*features, *([target] if target else [])],
                                                    categorical, target, prep_box)
        except EngineError as exc:
            field_error(str(exc), prep_box)
            categorical, missing = None, None
        rows_box = prep_box.container()
        st.markdown("**The program**")
        program = None
        with user_errors():
            program = program_controls(state.program_or(demo.program_config() if demo is not None else None),
                                       demo.program if demo is not None else None,
                                       len(frame), st.container())
        role_boxes = {}
        with st.expander("Program columns (loan amount, revenue, interest)",
                         expanded=st.session_state["data.program"] == "lending"):
            st.caption(HELP["roles"] + " Without them the lending program uses the assumed values above.")
            roles = role_controls(columns, active_spec, features, st.container())
            role_boxes = {f"role:{r}": st.container() for r in roles}
        if program is not None and target is not None:
            st.markdown("**What the program's score assumes**")
            st.caption("\n".join(f"- {plain(line)}" for line in program.assumptions(roles)))
    with right:
        seed_widget("data.norm_method", active_spec.normalization.method)
        st.radio("Normalisation into the unit ball", list(METHOD_LABELS), key="data.norm_method",
                 format_func=METHOD_LABELS.get, help=HELP["normalization"])
        seed_widget("data.standardize", active_spec.normalization.standardize)
        st.checkbox("Standardise columns first", key="data.standardize", help=HELP["standardize"])
        lower: tuple[float, ...] = ()
        upper: tuple[float, ...] = ()
        bounds_from_data = False
        kinds = dict(zip(profile["column"], profile["kind"], strict=True))
        numeric_features = [f for f in features if kinds.get(f) in ("numeric", "boolean", "date")]
        if st.session_state["data.norm_method"] == "bounds":
            st.caption("Public bounds per numeric feature — from a codebook, legal limits or published ranges, never "
                       "from these data. Values outside are clipped to the bounds. Encoded text columns are 0/1 and "
                       "need no bounds.")
            lower, upper = bounds_controls(active_spec, numeric_features, st.container())
            st.button("Fill with the data's own min and max (exploration only)", key="data.fill_bounds",
                      on_click=fill_bounds_from_data, args=(tuple(numeric_features),), icon=":material/warning:",
                      help="Reads the bounds from the sensitive data itself, so the preparation is no longer "
                      "data-independent, and the extreme values would appear in the decision record (shareable "
                      "links leave them out). Use it to explore; enter public bounds before a real release.")
            bounds_from_data = bool(numeric_features) and (lower, upper) == observed_bounds(
                key, tuple(numeric_features), frame)
            if bounds_from_data:
                st.warning("These bounds are the data's own minimum and maximum: they reveal the most extreme "
                           "records and are NOT public bounds. Replace them before a real release. Shareable "
                           "links leave these data settings out; the decision record and the report contain them.",
                           icon=":material/warning:")
        norm_box = st.container()

    # Build the spec from the controls; put every problem next to the control that fixes it.
    boxes = {"features": features_box, "target": target_box, "normalization": norm_box, "table": table_box,
             "file": table_box, "missing": prep_box, "categorical": prep_box, **role_boxes}
    try:
        if any(math.isnan(v) for v in (*lower, *upper)):
            raise EngineError("enter a lower and an upper public bound for every numeric feature (empty cells remain)")
        if categorical is None or missing is None:
            raise EngineError("fix the encoding and missing-value settings above")
        normalization = Normalization(
            st.session_state["data.norm_method"], standardize=bool(st.session_state["data.standardize"]),
            lower=lower, upper=upper,
        )
        spec = build_spec(features, target, roles, normalization, categorical, missing, positive, profile)
    except EngineError as exc:
        field_error(str(exc), norm_box)
        spec = None
    problems = table_problems(frame, spec) if spec is not None else []
    for problem in problems:
        field_error(str(problem), boxes.get(problem.control, table_box))
    if spec is not None:
        draw_rows_kept(rows_kept(key, spec.to_json(), frame), spec.target, rows_box)
    with norm_box:
        chosen = spec if spec is not None else active_spec
        if not bounds_from_data:  # otherwise the warning under the bounds says what matters
            read = {c: tuple(sorted(v for v, n in levels_of(c).items() if n >= max(cat.min_count, 1)))
                    for c, cat in (chosen.categorical or {}).items()
                    if cat.levels_from_data and not cat.levels and c in columns}
            notes = ([plain(note) for note in preparation_notes(chosen, read)]
                     or [plain(privacy_note(chosen.normalization))])
            (st.success if chosen.data_independent else st.warning)(  # one point per column or rule, data escaped
                notes[0] if len(notes) == 1 else "\n".join(f"- {note}" for note in notes))
        if not chosen.normalization.data_independent:
            st.caption(DATA_DEPENDENT_NOTE)

    if spec is not None and not problems:
        state.bounds_from_data = bounds_from_data
        default = demo.spec if demo is not None else None
        wanted = None if default is not None and spec == default else spec
        if wanted != state.spec:
            state.spec = wanted
            state.forget_data_results()
        if program is not None and program != state.program:
            default_program = demo.program_config() if demo is not None else None
            state.program = None if program == default_program else program
    else:
        st.caption(":material/info: Until these are fixed, the other pages keep using the last valid settings.")

    draw_preview(state, problems, spec)
