"""Start: what the Studio does, the workflow, which dataset is loaded, and a way into the demo."""

from __future__ import annotations

import streamlit as st

from ui.cached import current_data
from ui.common import plain, user_errors
from ui.state import get_state, starting_demo

state = get_state()

st.title("Privacy Parameter Studio")
st.markdown(
    "Choose privacy parameters you can defend for a program built on personal data — a cash transfer that "
    "targets the poorest households, a lender scoring applicants from phone records, a payroll statistic. "
    "The Studio shows which settings can possibly deliver the accuracy your program needs, what each setting "
    "protects and against whom, and what it costs; then it writes down the decision so others can check it."
)

st.subheader("The workflow")
steps = [
    ("Data", "pages/studio/data.py", "load a built-in demo or your own table; choose features, target and scaling."),
    (
        "Accuracy targets & feasibility",
        "pages/studio/feasibility.py",
        "say how accurate targeting must be (γ); see which (B, ε) can possibly reach it; pick a candidate.",
    ),
    ("Mechanisms", "pages/studio/mechanisms.py", "privatize the data once with the candidate and inspect the result."),
    ("Tradeoffs", "pages/studio/tradeoffs.py", "sweep the parameters: program effectiveness against protection."),
    ("Per-record", "pages/studio/per_record.py", "who is most exposed, and how per-record policies compare."),
    ("Export", "pages/studio/export.py", "the decision record, an HTML report and the command that makes the release."),
]
for i, (title, path, text) in enumerate(steps, start=1):
    cols = st.columns([0.32, 0.68], vertical_alignment="center")
    cols[0].page_link(path, label=f"{i}. {title}")
    cols[1].markdown(text)

st.subheader("Loaded dataset")
with user_errors():
    loaded = current_data(state)
    if loaded is None:
        st.info("No dataset loaded yet: open the Data page to upload a file or pick a demo.")
    else:
        badge = " :violet-badge[synthetic]" if loaded.synthetic else ""
        st.markdown(f"**{plain(loaded.title)}**{badge}")
        if loaded.description:
            st.markdown(plain(loaded.description))
        c1, c2, c3 = st.columns(3)
        c1.metric("people (n)", f"{loaded.prepared.n:,}")
        c2.metric("features (d)", loaded.prepared.d)
        c3.metric("default δ = 1/(n+1)", f"{1 / (loaded.prepared.n + 1):.2e}")

if st.button("Open the demo", key="start.open_demo", type="primary", icon=":material/play_arrow:"):
    state.source = "demo"
    state.demo_name = starting_demo()
    state.spec = None
    state.switch_data()
    st.switch_page("pages/studio/data.py")

st.caption(
    "Targeted differential privacy (Kohli & Blumenstock) protects people from being told apart from anyone "
    "within distance B of them, while keeping people far apart distinguishable — the property targeting needs. "
    "Every number in the Studio comes from the engine (`python -m engine`), which a data holder can run alone."
)
