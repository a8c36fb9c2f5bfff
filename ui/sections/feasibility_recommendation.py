"""The Feasibility page's recommendation result: the recommended point, its guarantee and protections in words,
the frontier table and the searched (mechanism, B) pairs that met the target at no ε (issue 12)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from engine.attacks.threat_model import protection_in_words
from engine.data.preparation import PreparedData
from engine.evaluation.programs import ProgramConfig
from engine.mechanisms import MECHANISMS, budgeted_kinds, preselected_kinds
from ui.cached import suggested_target
from ui.common import readable_table
from ui.figures.theme import fmt
from ui.sections.tradeoffs_form import MECH_LABELS
from ui.sections.workshop_pin import draw_pin_recommendation
from ui.state import seed_widget


def draw_recommendation(rec: Any, prepared: Any, use_recommended: Callable[..., None], program: Any) -> None:
    """Draw the engine's :class:`engine.recommend.Recommendation` for the session's ``prepared`` data (searched with
    ``program``); ``use_recommended(point, d)`` is the button's callback that makes the point the candidate."""
    for note in rec.notes:
        st.warning(note, icon=":material/warning:")
    point = rec.recommended
    if point is not None:
        st.success(
            f"**Recommended:** {MECHANISMS[point.mechanism].LABEL}, B = {fmt(point.b)}, ε = {fmt(point.epsilon, 4)}, δ = "
            f"{fmt(point.delta)} — {rec.config.target.describe()} met: mean {fmt(point.mean, 4)}, one-sided "
            f"bound {fmt(point.lower if rec.config.target.op == '>=' else point.upper, 4)} over {len(point.values)} "
            f"releases.",
            icon=":material/recommend:",
        )
        implied = point.implied_dp()
        (st.warning if implied.vacuous else st.caption)(
            f"Implied classic DP for any two records: {implied.headline()}."
            + (" Records further apart than B are not protected by it." if implied.vacuous else ""))
        if rec.theorem1.get("gamma") is not None:
            st.caption(f"Theorem 1 for γ = {rec.theorem1['gamma']:g}: inside the region (ε is "
                       f"{fmt(rec.theorem1['epsilon_over_min'])}× its smallest allowed value at this B); "
                       f"accuracy ceiling γ_max = {fmt(rec.theorem1['gamma_max'], 4)}.")
        st.button("Use the recommended point as the candidate", key="feasibility.use_recommended",
                  on_click=use_recommended, args=(point, int(prepared.d)), icon=":material/check:")
        draw_pin_recommendation(rec, int(prepared.d), prepared.fingerprint, program)
        if rec.protections:
            st.caption("Protections at the recommended point (one release): " + "; ".join(
                f"{k.removeprefix('protection_').replace('_', ' ')} {fmt(v)} ("
                f"{protection_in_words(v, records=k.endswith('distinguishing'))})"
                for k, v in rec.protections.items()))
    frontier, headers = readable_table(pd.DataFrame([p.to_dict() for p in rec.frontier]),
                                       metric=rec.config.target.metric)
    st.dataframe(frontier, hide_index=True, width="stretch", key="feasibility.frontier", column_config=headers)
    unmet = rec.unmet()
    st.caption(f"The frontier: per mechanism and B, the smallest ε whose releases meet the target "
               f"({len(rec.evaluated)} points evaluated in {fmt(rec.seconds)} s; a seeded simulation, not a "
               "release)." + ("" if not unmet else " No ε in the searched range meets the target for: " + "; ".join(
                   f"{MECHANISMS[m].LABEL} at B = {fmt(b)}" for m, b in unmet) + "."))


def draw_recommend_form(prepared: PreparedData, program: ProgramConfig) -> None:
    """The recommender's form: the target — by default halfway between the best rule that uses no data and the
    non-private program (:func:`ui.cached.suggested_target`) —, the mechanisms searched and the confidence."""
    headline = program.headline_metric
    with st.form("feasibility.recommend_form"):
        r1, r2, r3 = st.columns([0.4, 0.35, 0.25])
        suggested = suggested_target(prepared.fingerprint, prepared, program)
        default = (f"{headline}>=0" if suggested.target is None else
                   f"{suggested.target.metric}{suggested.target.op}{suggested.target.value:g}")
        seed_widget("feasibility.rec_target", default)
        r1.text_input("Target", key="feasibility.rec_target",
                      help="METRIC>=VALUE or METRIC<=VALUE: accuracy>=0.75, gamma>=0.9 (the decision agreement on "
                      "these data — not Theorem 1's worst-case γ), profit>=90% (of the non-private profit), "
                      "extra_exclusion_errors_population<=10000. The default sits halfway between the best rule "
                      "that uses no data and the non-private program: " + suggested.text + ".")
        seed_widget("feasibility.rec_mechanisms", list(preselected_kinds()))
        r2.multiselect("Mechanisms", budgeted_kinds(), key="feasibility.rec_mechanisms",
                       format_func=MECH_LABELS.get)
        seed_widget("feasibility.rec_confidence", 0.95)
        r3.number_input("Confidence", key="feasibility.rec_confidence", min_value=0.5, max_value=0.999, step=0.01)
        st.form_submit_button("Recommend", type="primary", key="feasibility.recommend", icon=":material/explore:")
    if suggested.target is None:
        st.warning(suggested.text[0].upper() + suggested.text[1:] + ".", icon=":material/report:")
