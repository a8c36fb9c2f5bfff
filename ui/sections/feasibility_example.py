"""The Feasibility page's reproduction of the paper's Example 1: Theorem 1's numbers for its two ε (the engine's
:func:`engine.theory.feasibility.feasibility_report` through :func:`ui.cached.feasibility_report`) beside the paper's
stated B."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from ui.cached import feasibility_report


def draw_example1(example: dict[str, Any]) -> None:
    """The table of Example 1 (``example``: γ, δ, the ε values and the paper's largest B for each)."""
    st.subheader("The paper's Example 1, reproduced")
    st.markdown(
        "Kohli & Blumenstock (Example 1): for 99 % accurate targeting (γ = 0.99) with δ = 10⁻⁴, ε = 1 allows at most "
        "B = 0.4 and ε = 4 at most B = 1 (with 2/B whole). The engine's numbers:"
    )
    rows = []
    for eps, paper_b in zip(example["epsilons"], example["paper_b"], strict=True):
        r = feasibility_report(example["gamma"], eps, example["delta"])
        rows.append(
            {
                "ε": eps, "Q": round(r.q, 2), "ln Q / ε": round(r.log_q / eps, 3), "m = ⌈ln Q / ε⌉": r.m,
                "largest B (2/B whole)": r.b_max_integer, "supremum of B": r.b_sup, "paper": f"B ≤ {paper_b:g}",
                "classic DP possible": "yes" if r.dp_feasible else "no",
            }
        )
    st.dataframe(pd.DataFrame(rows), hide_index=True)
