"""The Per-record page's cell release (simulated, with its public table) and the paper's Table 1 walkthrough."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from engine.data.establishments import CELL_LEVELS, ID_COLUMN, table1_toy
from engine.export_csv import safe_csv_bytes
from engine.per_record import sum_mechanism_from_dict
from engine.per_record.cells import COUNTS_NOTE, observed_levels_note
from engine.per_record.cells import SOURCE as CELLS_SOURCE
from engine.per_record.losses import CONFIDENTIAL_NOTE
from engine.per_record.units import UNIT_LABELS
from engine.rng import SEEDED_WARNING, fresh_seed
from ui.cached import cell_sums_release, column_losses
from ui.common import HELP, plain, user_errors
from ui.figures.theme import fmt
from ui.state import StudioState, get_state, parse_seed, seed_widget, widget

#: How a user declares the level of rows with a missing cell key.
MISSING_LEVEL = "(missing)"

TABLE1_EXAMPLES = (
    ("Example 2.16: unit splitting (τ = 10, σ² = 50)", {"kind": "unit-splitting", "tau": 10.0, "sigma": math.sqrt(50.0)}),
    ("Example 4.6: 4th root (a = 0, σ = 2)", {"kind": "kth-root", "k": 4, "a": 0.0, "sigma": 2.0}),
    ("Example 4.8: log (a = 1, σ = 2)", {"kind": "log", "a": 1.0, "sigma": 2.0}),
)


def _draw_again() -> None:
    """New noise from the operating system for the cell release (when no seed is typed)."""
    get_state().per_record_fresh_seed = fresh_seed()


def draw_cell_release(state: StudioState, saved: dict, source: str, key: str, value: str, by: list[str],
                      mech_dict: dict, id_columns: tuple[str, ...], frame: pd.DataFrame) -> None:
    """Section 3: the column's sums per cell released once with the chosen calibrated mechanism."""
    st.subheader("3 · Per-cell release (simulated)")
    st.caption(f"Provenance: {CELLS_SOURCE}.")
    declared: dict[str, list[Any]] = {}
    if source == "establishments" and all(c in CELL_LEVELS for c in by):
        declared = {c: list(CELL_LEVELS[c]) for c in by}
        sizes = " × ".join(f"{len(declared[c])} {plain(c)} levels" for c in by)
        st.caption(f"Public cell levels: the demo's declared lists ({sizes}). Every cell of that universe is "
                   "released, empty cells included, so which cells appear reveals nothing about the data.")
    else:
        st.markdown("**Public cell levels.** A cell release is private only if the list of cells is public and "
                    "fixed before seeing the data. Declare each cell column's levels (e.g. the official list of "
                    "counties); every combination is released, empty cells included.")
        level_cols = st.columns(len(by))
        for col_widget, col in zip(level_cols, by, strict=True):
            seed_widget(f"per_record.levels.{col}", saved.get("levels", {}).get(col, ""))
            text = col_widget.text_area(
                f"Public levels of '{plain(col)}'", key=f"per_record.levels.{col}", height=90,
                placeholder="one level per line (empty: read from the data — NOT private)",
                help="Levels separated by new lines or commas. Leave empty to read them from the data; then the "
                "release reveals which levels occur unless that list is itself public.")
            if frame[col].isna().any():
                col_widget.caption(f"'{plain(col)}' has rows without a value: list {MISSING_LEVEL} as a level to release "
                                   "their cell.")
            parsed = [t.strip() for t in text.replace(",", "\n").splitlines() if t.strip()]
            if parsed:
                observed = {str(v): v for v in pd.unique(frame[col].dropna())}
                declared[col] = [None if t == MISSING_LEVEL else observed.get(t, t) for t in parsed]
        state.per_record["levels"] = {c: widget(f"per_record.levels.{c}", "") for c in by}
        undeclared = [c for c in by if c not in declared]
        if undeclared:
            st.warning("**The level lists must be public.** " + observed_levels_note(undeclared),
                       icon=":material/warning:")
    seed_widget("per_record.seed", "")
    st.text_input("Seed (leave empty for a real release)", key="per_record.seed", help=HELP["seed"],
                  placeholder="empty = fresh randomness from the operating system")
    seed_text = str(widget("per_record.seed")).strip()
    user_seed = None
    with user_errors(prefix="Seed: "):
        user_seed = parse_seed(seed_text)
    if user_seed is None and state.per_record_fresh_seed is None:
        state.per_record_fresh_seed = fresh_seed()  # OS entropy; never shown or exported
    draw_seed = user_seed if user_seed is not None else int(state.per_record_fresh_seed or 0)
    st.button("Draw again", key="per_record.draw_again", icon=":material/casino:", on_click=_draw_again,
              help="New noise from the operating system (when no seed is typed).")
    with user_errors():
        cells = cell_sums_release(key, value, tuple(by), sum_mechanism_from_dict(mech_dict), draw_seed, id_columns,
                                  frame, declared or None)
        public_notes = [n for n in cells.notes if n not in (CONFIDENTIAL_NOTE, COUNTS_NOTE)]
        what = (f"the noisy output, the unbiased and median-unbiased estimates, the {fmt(100 * (1 - cells.beta))} % "
                "interval and the SD estimated from the output")
        if user_seed is None:
            st.markdown(f"**Public table** — what may be published ({len(cells.published):,} cells; noise from the "
                        f"operating system's randomness): {what}.")
            file_name = "cell-release.csv"
        else:
            st.markdown(f"**Simulated table — simulation, not private** ({len(cells.published):,} cells): drawn "
                        f"with the seed {user_seed}, so anyone with the seed can regenerate the noise and recover "
                        f"the exact sums. {what}. Clear the seed for a table that may be published.")
            st.warning(SEEDED_WARNING, icon=":material/warning:")
            file_name = f"cell-release-seed-{user_seed}-simulation-not-private.csv"
        st.dataframe(cells.published, hide_index=True, width="stretch", key="per_record.published")
        st.download_button("Download this table (CSV)", lambda: safe_csv_bytes(cells.published),
                           file_name=file_name, mime="text/csv", on_click="ignore", key="per_record.download",
                           icon=":material/download:")
        for note in public_notes:
            (st.warning if "must be public" in note else st.caption)(note)
        with st.container(border=True):
            st.markdown("**Internal evaluation — do not publish.** Exact record counts, true sums, errors, "
                        "coverage and the SD at the true total are computed from the confidential data.")
            metrics = cells.metrics()
            k1, k2, k3, k4 = st.columns(4)
            k1.metric("Cells released", f"{metrics['n_cells']:,}")
            k2.metric("Empty cells (internal)", f"{metrics['n_empty_cells']:,}",
                      help="Released like every other cell: true total 0 plus noise.")
            k3.metric("Median |relative error|", fmt(metrics["median_abs_relative_error"]),
                      help="Over cells with a positive true total.")
            k4.metric("Interval coverage", fmt(metrics["coverage"]),
                      help=f"Share of cells whose {fmt(100 * (1 - cells.beta))} % interval covers the true total.")
            internal = cells.cells[[*by, *(c for c in cells.cells.columns if c not in cells.published.columns)]]
            internal = internal.rename(columns={"max_loss": f"max_loss ({UNIT_LABELS[cells.unit]})"})
            st.dataframe(internal, hide_index=True, width="stretch", key="per_record.cells")
            st.caption(COUNTS_NOTE)


def draw_table1(source: str) -> None:
    """The paper's Table 1 walkthrough (Examples 2.16, 4.6, 4.8)."""
    with st.expander("The paper's Table 1 walkthrough (Examples 2.16, 4.6, 4.8)", expanded=source == "table1",
                     icon=":material/menu_book:"):
        toy = table1_toy()
        st.caption("Six toy establishments; each example's loss per establishment in ρ (per-record zCDP), with the "
                   "paper's own parameters (not calibrated to equal accuracy).")
        walk = toy.copy()
        with user_errors():
            for label, config in TABLE1_EXAMPLES:
                res = column_losses("table1", "employees", sum_mechanism_from_dict(config), "rho", None,
                                    (ID_COLUMN,), toy)
                walk[label] = res.records["loss"].round(6).to_numpy()
        st.dataframe(walk, hide_index=True, width="stretch", key="per_record.table1")
