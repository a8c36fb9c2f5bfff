"""The Workshop page's parts: the comparison table, one candidate's slide, the presenter mode's style, measuring a
candidate pinned without evidence, choosing and unpinning. Every number comes from :mod:`engine.workshop`; user text
(labels, the rationale) is shown as plain text (:func:`ui.common.plain`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from engine.rng import fresh_seed
from engine.workshop import SIMULATION_LABEL, ComparisonRow, comparison_cells, comparison_frame
from ui.common import plain
from ui.figures.workshop import workshop_figure
from ui.runs import release_run
from ui.state import RunConfig, StudioState, forget_widget, get_state, widget

#: Large type for a projector (presenter mode): the page's text, tables and buttons at about twice the size.
PRESENTER_CSS = """<style>
.stMainBlockContainer { max-width: 100%; padding-top: 1.5rem; }
.stMainBlockContainer p, .stMainBlockContainer li,
.stMainBlockContainer label, .stMainBlockContainer button { font-size: 1.3rem !important; line-height: 1.4; }
.stMainBlockContainer td, .stMainBlockContainer th { font-size: 1.05rem !important; line-height: 1.35; }
.stMainBlockContainer h1 { font-size: 1.6rem !important; padding: 0; }
.stMainBlockContainer h2 { font-size: 2.3rem !important; }
.stMainBlockContainer h3 { font-size: 1.9rem !important; }
</style>"""

#: A presenter's slide: the guarantee on the left, the evidence on the right (the rest stays in the comparison).
SLIDE_GUARANTEE: tuple[str, ...] = ("Targeted DP (B, ε, δ)", "Implied classic DP (ε', δ') — conversion",
                                    "Per-record loss at t = 2 (ε, δ)")
SLIDE_EVIDENCE: tuple[str, ...] = (
    "Program metric [95 % interval]", "Extra exclusion errors in people", "Profit", "Singling-out protection",
    "Attribute-inference protection", "Distinguishing protection", "Noise sd per coordinate", "Evidence",
)


def plain_table(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every cell, header and index label escaped (``st.table`` renders Markdown)."""
    out = frame.map(plain)
    out.columns = [plain(c) for c in frame.columns]
    out.index = [plain(i) for i in frame.index]
    return out


#: What the comparison's three protection lines mean (their numbers come with words from the engine's bands).
PROTECTIONS_NOTE = (
    "**Protections** run from 0 (the attack always succeeds) to 1 (the release gives the attacker nothing). "
    "*Singling out*: the share of people an attacker cannot isolate from the release; *attribute inference*: how "
    "much worse a nearest-neighbour attacker guesses a hidden column for released people than for held-out ones "
    "(1 = no better); both are *measured* by running the attacks on the candidate's releases. *Distinguishing*: the "
    "smallest total error of the best test telling two records apart (1 = a coin flip), computed from the "
    "mechanism: *exact*, or a worst-case *bound*."
)


def draw_chart(rows: Sequence[ComparisonRow], key: str, *, height: int = 460, wide: bool = False) -> None:
    """The metric-against-privacy-loss chart, or — when no pinned candidate has a program metric (no outcome and
    program on the Data page, or nothing measured yet) — a line saying so instead of markers on an empty axis."""
    if not any(r.evidence is not None and r.evidence.value is not None for r in rows):
        st.info("No program metric to compare yet: measure the candidates on data with an outcome and a program "
                "(Data page). The table still compares their guarantees and protections.", icon=":material/info:")
        return
    st.plotly_chart(workshop_figure(rows, height=height, legend_chars=90 if wide else 56), key=key, theme=None,
                    config={"displaylogo": False})
    st.caption("Up and to the left is better: a higher program metric at a smaller loss for any two records. Open "
               "markers have no program metric yet. A candidate whose implied classic DP is vacuous (δ' = 1) bounds "
               "nothing for two records further apart than B: it is listed as \"no bound\", not plotted at a number.")


#: The comparison's line of the attacker's odds: a sentence per candidate in the table, a few words on a projector.
ODDS_LINE = "Attacker's odds from 50:50 — bound"


def draw_table(rows: Sequence[ComparisonRow], *, compact: bool = False) -> None:
    """The comparison: one column per candidate, the lines of :data:`engine.workshop.COMPARISON_LINES` (``compact``,
    for many columns and in presenter mode: the odds bound in a few words, :func:`engine.workshop.odds_headline`,
    with the full sentences in an expander below the table)."""
    frame = comparison_frame(rows)
    if compact:
        frame.loc[ODDS_LINE] = [r.odds_headline for r in rows]
    st.table(plain_table(frame))
    if compact:
        with st.expander("The attacker's odds in full (bounds)"):
            for r in rows:
                st.markdown(plain(f"{r.index + 1}. {r.label}: {r.odds_text}"))
    st.caption(PROTECTIONS_NOTE)
    for r in rows:
        weak = r.evidence.no_better_than if r.evidence is not None else []
        if weak and r.evidence is not None:
            st.error(plain(f"{r.index + 1}. {r.label}: no better than '{weak[0]}' "
                           f"({r.evidence.baselines[weak[0]]:.3g}), a rule that uses no data — on these data the "
                           "program could do as well without the release."), icon=":material/block:")
    if any(r.other_data for r in rows):
        st.warning("Some evidence was measured on other data than the loaded: measure it again before comparing.",
                   icon=":material/warning:")
    if any(r.simulation for r in rows):
        st.warning(f"Evidence marked “{SIMULATION_LABEL}” was measured with a fixed seed: it describes a simulation, "
                   "not a private release.", icon=":material/warning:")


def draw_slide(row: ComparisonRow) -> None:
    """One candidate, large: its label and origin, the odds bound in short, the guarantee beside the evidence."""
    cells = comparison_cells(row)
    st.header(plain(f"{row.index + 1}. {row.label}") + (" ✓ chosen" if row.chosen else ""))
    st.caption(plain(f"{row.mechanism} · pinned from the {row.source}"))
    st.markdown(f"**Attacker's odds:** {plain(row.odds_headline)}")
    left, right = st.columns(2, gap="large")
    for column, lines in ((left, SLIDE_GUARANTEE), (right, SLIDE_EVIDENCE)):
        for line in lines:
            if cells[line] != "—":
                column.markdown(f"**{plain(line)}:** {plain(cells[line])}")
    if row.evidence is not None and row.evidence.no_better_than:
        st.error(plain(f"No better than '{row.evidence.no_better_than[0]}', a rule that uses no data."),
                 icon=":material/block:")
    if row.simulation:
        st.warning(f"{SIMULATION_LABEL}: the evidence was measured with a fixed seed.", icon=":material/warning:")


def measure(state: StudioState, index: int, loaded: Any, program: Any) -> None:
    """Measure pinned candidate ``index`` on the data with the Mechanisms page's run
    (:func:`ui.runs.release_run` → :func:`engine.release_analysis.analyse_release`: the session's seed, else fresh
    randomness) and keep its evidence (with the program it was measured with)."""
    from engine.workshop import candidate_from_run

    candidate = state.workshop.pinned[index]
    mechanism = candidate.build_mechanism(int(loaded.prepared.d))
    user_seed = state.seed is not None
    seed = int(state.seed) if state.seed is not None else fresh_seed()
    config = RunConfig(data=loaded.prepared.fingerprint, mechanism=mechanism, program=program,
                       candidate=candidate.guarantee, seed=seed, user_seed=user_seed,
                       dataset=state.demo_name if state.source == "demo" else None)
    run = release_run(state, config, loaded.frame, loaded.spec, stop_key=f"workshop.stop_{index}")
    evidence = candidate_from_run(run.result, candidate.label, program=program).evidence
    assert evidence is not None  # candidate_from_run always measures
    state.workshop = state.workshop.replace_candidate(index, candidate.with_evidence(evidence))


def on_choose() -> None:
    value = widget("workshop.choice")
    get_state().choose(None if value in (None, -1) else int(value))


def on_rationale() -> None:
    get_state().rationale = str(widget("workshop.rationale") or "")


def on_slide(step: int) -> None:
    """Presenter mode's Previous (−1) / Next (+1); the page clamps the screen to the ones that exist."""
    state = get_state()
    state.workshop_slide = int(state.workshop_slide) + step


def on_unpin(index: int) -> None:
    get_state().unpin(index)
    forget_widget("workshop.choice")  # reseeded from the workshop's choice


__all__ = ["PRESENTER_CSS", "draw_slide", "draw_table", "measure", "on_choose", "on_rationale",
           "on_slide", "on_unpin", "plain_table"]
