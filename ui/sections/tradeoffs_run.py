"""Running the Tradeoffs page's pending sweep: time estimate, progress, live curves, Stop, and the stored results.

The sweeps themselves are :func:`engine.sweeps.run_sweep` (through :func:`ui.runs.run_sweeps`); their results go to
``StudioState.sweeps`` (each with its configuration and data fingerprint); the rows of a stopped sweep stay in
``StudioState.sweep_partial``.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from engine.data.preparation import PreparedData
from engine.evaluation.programs import METRICS
from engine.progress import format_range, format_seconds, time_left_range
from engine.sweeps import PROTECTION_COLUMNS, SweepConfig, SweepResult, default_workers
from ui.cached import sweep_plan
from ui.common import user_errors
from ui.compute_target import cluster_caption, sweep_client
from ui.figures.tradeoffs import points_frame, tradeoff_figure
from ui.runs import ProgressBar, Throttle, room_turn, run_sweeps, show_wait
from ui.sections.tradeoffs_form import MECH_LABELS
from ui.state import StudioState, SweepProgress, Work, checkpoint, describe_sweeps, widget

#: Redraws of the live curves over a sweep's estimated time, at most one every :data:`LIVE_REDRAW_SECONDS` and at least
#: one every 1 s: each costs the server a summary of the rows so far and the browser a chart (see
#: ``ui.runs.PROGRESS_REDRAW_SECONDS``), which share the cores with the sweep; a short sweep still fills in visibly.
LIVE_REDRAWS = 12
#: Longest interval between two redraws of the live curves while a sweep runs.
LIVE_REDRAW_SECONDS = 3.0


def live_redraw_seconds(estimate: float) -> float:
    """Seconds between two redraws of the live curves for a sweep estimated at ``estimate`` seconds.

    >>> live_redraw_seconds(6.0), live_redraw_seconds(24.0), live_redraw_seconds(300.0), live_redraw_seconds(float("nan"))
    (1.0, 2.0, 3.0, 3.0)
    """
    if not math.isfinite(estimate):
        return LIVE_REDRAW_SECONDS
    return min(LIVE_REDRAW_SECONDS, max(1.0, estimate / LIVE_REDRAWS))


def redraw_live(placeholder, configs: list[SweepConfig], partial: dict, draw: int) -> None:
    """Redraw the live curve (utility against singling-out) from the rows finished so far."""
    frames = []
    for i, config in enumerate(configs):
        rows = partial.get(i) or []
        if not rows:
            continue
        summary = SweepResult.from_rows(config, rows).summary()
        frames.append(points_frame(summary, x_metric=PROTECTION_COLUMNS["singling_out"],
                                   y_metric=config.program.headline_metric, series=MECH_LABELS[config.mechanism],
                                   kind=config.mechanism))
    if not frames:
        return
    metric = configs[0].program.headline_metric
    label = METRICS[metric].label if metric in METRICS else metric
    placeholder.plotly_chart(
        tradeoff_figure(pd.concat(frames, ignore_index=True), x_label="singling-out protection", y_label=label,
                        title="Filling in as the sweep runs…", show_pareto=False),
        key=f"tradeoffs.live.{draw}",
    )


def run_pending(state: StudioState, prepared: PreparedData) -> None:
    """Run the pending sweep with a time estimate, progress, live curves and a Stop button (announced first, so that
    a reload during it says what it interrupted); store the finished results in ``state.sweeps`` with their
    configurations; say so when a sweep was stopped. Results of other data are kept, filed under their fingerprint
    (the page shows them only on those data)."""
    pending = state.sweep_pending
    if pending and widget("tradeoffs.stop"):  # the Stop button of the sweep below was pressed
        state.sweep_pending = ()
        stopped = state.sweep_partial or SweepProgress(pending, data=prepared.fingerprint)
        state.sweep_partial = replace(stopped, stopped=True)
        pending = ()
    if pending:
        configs = list(pending)
        total = sum(c.n_cells for c in configs)
        n_workers = int(widget("tradeoffs.workers", default_workers()))
        estimate_slot = st.empty()  # cleared when the sweep ends: the toast then says how long it took
        estimate = math.nan
        with user_errors(prefix="Time estimate: "):
            n_workers, estimate = sweep_plan(prepared.fingerprint, tuple(configs), n_workers,
                                             prepared)
            estimate_slot.info(f"Estimated time: {format_range(*time_left_range(0, total, 0.0, estimate))} for "
                               f"{total:,} cells (timed on one cell; updated from the cells as they finish). You can "
                               "stop at any time and keep the finished points.", icon=":material/timer:")
        state.begin_work(Work("sweep", describe_sweeps(configs), sweeps=tuple(configs)))
        state.sweep_partial = SweepProgress(tuple(configs), data=prepared.fingerprint)
        checkpoint()
        started = time.perf_counter()
        stop_slot = st.empty()
        stop_slot.button("Stop the sweep", key="tradeoffs.stop", icon=":material/stop_circle:",
                         help="Stops after the cell that is running; finished points are kept.")
        bar = ProgressBar(st.empty(), f"Starting {total} cells…")
        live = st.empty()
        partial: dict[int, list] = {}
        draws = [0]
        live_redraw = Throttle(live_redraw_seconds(estimate))  # summaries of large partial tables cost time

        def on_progress(done: int, total_: int, message: str) -> None:
            bar.update(done / max(total_, 1), f"{done} of {total_} cells — {message}")
            elapsed = time.perf_counter() - started
            left = format_range(*time_left_range(done, total_, elapsed, estimate))
            if left and done < total_:
                estimate_slot.info(f"Time left: {left} — from the {done:,} of {total_:,} cells finished in "
                                   f"{format_seconds(elapsed)} (first estimate, timed on one cell: "
                                   f"{format_seconds(estimate) if math.isfinite(estimate) else 'none'}). You can "
                                   "stop at any time and keep the finished points.", icon=":material/timer:")

        def on_rows(index: int, rows: list) -> None:
            partial[index] = rows
            state.sweep_partial = SweepProgress(tuple(configs), dict(partial), data=prepared.fingerprint)
            if not live_redraw.due(final=len(rows) >= configs[index].n_cells):
                return
            draws[0] += 1
            redraw_live(live, configs, partial, draws[0])

        with user_errors() as outcome:
            client = sweep_client(st.session_state)
            if client is not None:
                st.caption(cluster_caption(client))
            with room_turn("this sweep") as waited:  # a workshop server's queue (ui.room); elsewhere no wait
                results = run_sweeps(prepared, configs, workers=n_workers, on_progress=on_progress,
                                     on_rows=on_rows, client=client)
            show_wait(waited)
        state.sweep_pending = ()
        state.finish_work()
        bar.empty()
        live.empty()
        stop_slot.empty()
        estimate_slot.empty()
        if not outcome.failed:
            state.set_sweeps(tuple(results))
            seconds = sum(r.seconds for r in results if np.isfinite(r.seconds))
            if all(r.from_cache for r in results):
                st.toast(f"Same sweep as before: its {total} cells were taken from this session's results "
                         f"(computed in {seconds:.1f} s).", icon=":material/done_all:")
            else:
                st.toast(f"Sweep finished: {total} cells in {seconds:.1f} s.", icon=":material/done_all:")

    partial_run = state.sweep_partial
    if partial_run is not None and partial_run.stopped:
        st.warning(f"The sweep was stopped; {partial_run.cells} finished cells are kept below as a partial result. Run "
                   "again for the full grid.", icon=":material/stop_circle:")
