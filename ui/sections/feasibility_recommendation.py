"""The Feasibility page's recommendation result: the recommended point, its guarantee and protections in words,
the frontier table and the searched (mechanism, B) pairs that met the target at no ε (issue 12)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from engine.attacks.threat_model import protection_in_words
from engine.mechanisms import MECHANISMS
from ui.common import readable_table
from ui.figures.theme import fmt
from ui.sections.workshop_pin import draw_pin_recommendation


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
