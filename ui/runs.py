"""Runs a page keeps in this session and draws progress for: a Mechanisms run, the Tradeoffs sweeps, the recommender,
the public-information study.

They are not shared caches (``st.cache_data``): while they run they draw a progress bar and a Stop button, and
drawing is a Streamlit call, the point where a rerun (the Stop button) or a closed tab ends the work; inside
``st.cache_data`` those calls would be recorded and replayed. The Mechanisms run computes in a worker thread while
the page's thread looks at it every :data:`POLL_SECONDS` (:func:`in_background`): one release's attacks on a wide
table make no Streamlit call for minutes, and the page must still stop it (issue 35). Each keeps its last results in
the session's state, with the configuration they were computed from (bounded: :data:`ui.state.KEPT_RUNS` Mechanisms
runs, one recommendation; sweeps go to ``StudioState.sweeps``; the study's finished cells to
``StudioState.public_info_work``). Every number comes from the engine
(:func:`engine.release_analysis.analyse_release`, :func:`engine.sweeps.run_sweep`, :func:`engine.recommend.recommend`,
:func:`engine.public_info.results.run_count_study`).
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from engine.analysis import AnalysisConfig
from engine.data.preparation import DataSpec, PreparedData
from engine.errors import EngineError
from engine.evaluation.programs import ProgramConfig
from engine.progress import CancelToken, Progress, ProgressCallback
from engine.release import ReleaseConfig
from engine.release_analysis import (
    PAGE_REPETITIONS,
    PAGE_THREADS,
    ReleaseAnalysis,
    RunEstimate,
    analyse_release,
    estimate_release_analysis,
)
from ui import room as rooms
from ui.state import (
    MechanismRun,
    RecommendationRun,
    RecommendRequest,
    RunConfig,
    StudioState,
    Work,
    checkpoint,
    describe_run,
    execution_check,
)

# ------------------------------------------------------------------------------------------------ progress bars
#: Shortest time between two redraws of a progress bar (seconds). Every redraw is a message to the browser, which
#: then renders the page again: a quick sweep finishing 15–20 cells a second kept Chromium's renderer as busy as the
#: server for as long as it ran (measured on the 2-core machine; the live curves are throttled separately). At 0.5 s
#: (and live curves every 1.5 s), Chromium still took 4.4-5.3 CPU s of the 2 cores during the page's 30-second quick
#: sweep of 25,000 × 30; at 1 s (and 3 s) 3.4-3.8 s.
PROGRESS_REDRAW_SECONDS = 1.0


class Throttle:
    """Says when a redraw is due: at most once every ``seconds`` (the first time at once), and always for the
    ``final`` one. ``clock`` is for tests."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._seconds = seconds
        self._clock = clock
        self._last = -math.inf

    def due(self, *, final: bool = False) -> bool:
        now = self._clock()
        if not final and now - self._last < self._seconds:
            return False
        self._last = now
        return True


class ProgressBar:
    """A progress bar in ``slot`` (an ``st.empty()``), drawn at once and then redrawn at most every
    :data:`PROGRESS_REDRAW_SECONDS` — always when the work is done (``fraction`` 1). A skipped update sends nothing
    (the next drawn one carries the newer count and time estimate) but is still a point where a Stop click or a
    closed tab ends the work (:func:`execution_check`). ``clock`` and ``check`` are for tests."""

    def __init__(self, slot: Any, text: str, *, clock: Callable[[], float] = time.monotonic,
                 check: Callable[[], None] | None = None) -> None:
        self._slot = slot
        self._throttle = Throttle(PROGRESS_REDRAW_SECONDS, clock=clock)
        self._check = execution_check if check is None else check
        self._throttle.due(final=True)
        self._slot.progress(0.0, text=text)

    def update(self, fraction: float, text: str) -> bool:
        """Draw ``fraction`` (clipped to [0, 1]) with ``text`` unless the last drawing is too recent; return
        whether it was drawn."""
        if not self._throttle.due(final=fraction >= 1.0):
            self._check()
            return False
        self._slot.progress(min(1.0, max(0.0, fraction)), text=text)
        return True

    def empty(self) -> None:
        self._slot.empty()


# ------------------------------------------------------------------------------------ the workshop room's queue
#: How often a queued run looks at its place in line (seconds).
QUEUE_POLL_SECONDS = 0.25


@contextlib.contextmanager
def room_turn(what: str) -> Iterator[float]:
    """On a workshop server, wait for one of the room's run slots (:class:`ui.room.RunQueue`, first come first served)
    before the heavy work in the ``with`` block, showing the place in line while waiting; yields the seconds waited.
    Elsewhere: nothing (yields 0). A Stop click or a closed tab leaves the line (:func:`execution_check`)."""
    room = rooms.current()
    if room is None:
        yield 0.0
        return
    queue = room.queue
    ticket = queue.enter()
    started = time.monotonic()
    slot = st.empty()
    try:
        shown = None
        while not queue.try_start(ticket):
            ahead, running = queue.position(ticket)
            if (ahead, running) != shown:
                shown = (ahead, running)
                slot.info(f"Queued for the room's run slot: {ahead} run(s) waiting ahead of {what}, {running} "
                          f"running (waiting {time.monotonic() - started:.0f} s so far). It starts by itself.",
                          icon=":material/hourglass_top:")
            time.sleep(QUEUE_POLL_SECONDS)
            execution_check()
        slot.empty()
        yield time.monotonic() - started
    finally:
        queue.leave(ticket)


def show_wait(seconds: float) -> None:
    """Say how long a run waited in the room's queue (nothing when it did not wait)."""
    if seconds >= 1.0:
        st.toast(f"Your run waited {seconds:.0f} s for the room's run slot.", icon=":material/hourglass_bottom:")


# ------------------------------------------------------------------------------------------ work off the page
#: Seconds between two looks of the page's thread at work running in a worker thread (:func:`in_background`): each
#: look is a Streamlit call, where a Stop click, a closed tab or the server shutting down takes effect.
POLL_SECONDS = 0.1

T = TypeVar("T")


def in_background(work: Callable[[CancelToken, ProgressCallback], T], on_progress: Callable[[Progress], Any], *,
                  check: Callable[[], None] | None = None, poll: float = POLL_SECONDS, name: str = "studio-run") -> T:
    """``work(cancel, progress)`` in a worker thread while the page's (the script's) thread looks at it every ``poll``
    seconds: it draws the newest progress with ``on_progress`` (throttled by the caller, :class:`ProgressBar`) or
    else makes a Streamlit call that sends nothing (``check``, default :func:`execution_check`). Either is where
    Streamlit stops a script whose Stop button was clicked, whose tab was closed or whose server is shutting down
    (a rerun or stop exception raised here); then ``cancel`` is set, the work stops at its next cancellation point
    (a fraction of a second in the engine's long loops) and the exception goes on. Without this, a run that makes no
    Streamlit call for minutes — one attack release on a wide table — could not be stopped at all.

    Returns what ``work`` returns; an exception of ``work`` (an :class:`~engine.errors.EngineError`) is raised here.
    """
    check = execution_check if check is None else check
    token = CancelToken()
    newest: list[Progress | None] = [None]
    outcome: dict[str, Any] = {}

    def progress(p: Progress) -> None:  # from the worker thread: only kept, drawn by the page's thread
        newest[0] = p

    def target() -> None:
        try:
            outcome["value"] = work(token, progress)
        except BaseException as exc:  # noqa: BLE001 - handed to the page's thread, which raises it
            outcome["error"] = exc

    # Not a daemon: a server shutting down waits for it, and it ends within a fraction of a second of the cancel.
    worker = threading.Thread(target=target, name=name)
    drawn: Progress | None = None
    try:
        worker.start()
        while worker.is_alive():
            worker.join(poll)
            latest = newest[0]
            if latest is not None and latest is not drawn:
                drawn = latest
                on_progress(latest)
            else:
                check()
    except BaseException:
        token.cancel()  # a Stop, a closed tab, a shutdown (or a failed drawing): the work stops too
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


# --------------------------------------------------------------------------------------------- Mechanisms page
def _release_config(config: RunConfig, spec: DataSpec) -> ReleaseConfig:
    return ReleaseConfig.of(spec, config.mechanism, seed=config.recorded_seed, dataset=config.dataset)


def release_estimate(config: RunConfig, spec: DataSpec, *, n: int, d: int) -> RunEstimate:
    """How long the Mechanisms page's run of ``config`` will take (:func:`engine.release_analysis.estimate_release_analysis`),
    so that a long one is announced before it starts."""
    return estimate_release_analysis(_release_config(config, spec), AnalysisConfig(program=config.program),
                                     config.candidate, n=n, d=d)


def release_run(state: StudioState, config: RunConfig, frame: pd.DataFrame, spec: DataSpec, *,
                shareable: bool = False, stop_key: str = "mechanisms.stop") -> MechanismRun:
    """The Mechanisms page's run of ``config``: this session's finished one, else
    :func:`engine.release_analysis.analyse_release` in a worker thread (:func:`in_background`) with a progress bar
    and a Stop button (``mechanisms.stop``), which stop it within a second or two wherever it is; announced first
    (:meth:`ui.state.StudioState.begin_work`, so that a reload during it says what it interrupted) and kept in
    ``state.runs`` with its configuration.

    On a workshop server (:mod:`ui.room`) a ``shareable`` run with fresh randomness (the Mechanisms form's Run button:
    ``state.run_request_shareable``; never a Workshop measurement, "Draw again" or a seed of one's own) is the room's: one that anyone in the room already made with the same setup
    (:meth:`ui.state.RunConfig.confirm_key`) is taken, else it is made once in the room's queue (:func:`room_turn`)
    and kept for the others."""
    stored = state.remembered_run(config)
    if stored is not None:
        return stored
    release = _release_config(config, spec)
    analysis = AnalysisConfig(program=config.program)
    room = rooms.current()
    shared_key = config.confirm_key() if shareable and not config.user_seed else None
    if room is not None and shared_key is not None:
        shared = room.run(shared_key)
        if shared is not None:
            st.toast("The same run was already made in this room: its results are shown.", icon=":material/groups:")
            run = MechanismRun(config, shared)
            state.remember_run(run)
            return run
    state.begin_work(Work("run", describe_run(config), run=config))
    checkpoint()
    stop_slot = st.empty()
    stop_slot.button("Stop the run", key=stop_key, icon=":material/stop_circle:",
                     help="Stops the run within a second or two; the previous run stays.")
    bar = ProgressBar(st.empty(), "Releasing the data…")

    def on_progress(p: Progress) -> None:
        bar.update(p.fraction, f"Scoring the program ({PAGE_REPETITIONS} releases per mechanism) and running "
                     f"the attacks, for this mechanism and the alternatives at the same guarantee: {p.describe()}")

    def work(cancel: CancelToken, progress: ProgressCallback) -> ReleaseAnalysis:
        return analyse_release(frame, release, analysis, config.candidate, seed=config.seed, progress=progress,
                               workers=PAGE_THREADS, cancel=cancel)

    try:
        with room_turn("this run") as waited:
            shared = room.run(shared_key) if room is not None and shared_key is not None else None
            result = shared if shared is not None else in_background(work, on_progress, name="mechanisms-run")
    except EngineError:
        state.finish_work()
        raise
    finally:  # a reload or a closed tab (Streamlit's stop) leaves the work announced: the next session says so
        stop_slot.empty()
        bar.empty()
    state.finish_work()
    show_wait(waited)
    if room is not None and shared_key is not None:
        room.remember_run(shared_key, result)
    run = MechanismRun(config, result)
    state.remember_run(run)
    return run


# ---------------------------------------------------------------------------------------------- Tradeoffs page
def run_sweeps(
    prepared: PreparedData,
    configs: Sequence[Any],
    *,
    workers: int,
    on_progress: Callable[[int, int, str], None],
    on_rows: Callable[[int, list[dict]], None],
    client: Any = None,
) -> list[Any]:
    """Run one sweep per configuration (one per mechanism), reporting progress over all of them.

    ``on_progress(done, total, message)`` after every finished cell; ``on_rows(i, rows)`` with the rows of sweep
    ``i`` finished so far whenever a grid point completes its last repetition (and every 10 rows), so a page can
    redraw the curves live. A Streamlit rerun (the Stop button) interrupts this between cells; the rows
    delivered so far stay with the page. ``client``: a Dask client to compute on (``ui.compute_target``), or None
    for this machine's processes.
    """
    from engine.sweeps import run_sweep

    total = sum(int(c.n_cells) for c in configs)
    done_before = 0
    results = []
    for index, config in enumerate(configs):
        reps = int(config.repetitions)
        rows: list[dict] = []

        def progress(p, offset=done_before) -> None:
            # the time left over all mechanisms is the page's (a range, engine.progress.time_left_range)
            on_progress(offset + p.done, total, p.message)

        def row(r: dict, rows=rows, reps=reps, index=index) -> None:
            rows.append(r)
            if int(r.get("rep", 0)) == reps - 1 or len(rows) % 10 == 0:
                on_rows(index, list(rows))

        result = run_sweep(prepared, config, progress=progress, on_row=row, workers=workers, client=client)
        on_rows(index, result.table.to_dict(orient="records"))
        results.append(result)
        done_before += int(config.n_cells)
    return results


# -------------------------------------------------------------------------------------------- Feasibility page
def recommendation(state: StudioState, prepared: PreparedData, request: RecommendRequest) -> RecommendationRun:
    """``engine.recommend.recommend`` on the session's data, with a progress bar and a Stop button.

    The result is kept in the session with the request it answers (the data's fingerprint and both
    configurations), not in a shared cache, so that the progress updates are Streamlit calls: a Stop click or a
    closed tab ends the search at the next evaluated point.
    """
    from engine.recommend import RecommendConfig, recommend

    kept = state.recommendation
    if kept is not None and kept.request == request:
        return kept
    if request.data != prepared.fingerprint:
        raise EngineError("the recommendation was asked for other data than the loaded — press Recommend again")
    state.begin_work(Work("recommendation", "the search for a recommended (B, ε)", recommend=request))
    checkpoint()
    stop_slot = st.empty()
    stop_slot.button("Stop the search", key="feasibility.rec_stop", icon=":material/stop_circle:",
                     help="Stops at the next evaluated point; nothing of the search is kept.")
    bar = ProgressBar(st.empty(), "Searching the frontier…")

    def on_progress(p: Progress) -> None:
        bar.update(p.fraction, f"Searching the frontier: {p.describe()}")

    try:
        result = recommend(prepared, ProgramConfig.from_json(request.program), RecommendConfig.from_json(request.config),
                           progress=on_progress)
    except EngineError:
        state.finish_work()
        raise
    finally:
        stop_slot.empty()
        bar.empty()
    state.finish_work()
    state.recommendation = RecommendationRun(request, result)
    return state.recommendation


# ------------------------------------------------------------------------------------- Public information page
#: Cancel tokens of running studies, by run id — a fresh random id per run and session, since this registry is shared
#: by every session (a token holds a threading.Event, which session state cannot pickle).
_TOKENS: dict[str, CancelToken] = {}


def cancel_token(run_id: str) -> CancelToken:
    """The cancel token of the study ``run_id`` (made on first use) — what the engine's run checks between periods."""
    return _TOKENS.setdefault(run_id, CancelToken())


def stop_run(run_id: str) -> None:
    """``on_click`` of the Stop button: cancel the run (it stops after the period that is running)."""
    cancel_token(run_id).cancel()


def forget_run(run_id: str) -> None:
    """Drop the token of a finished or stopped run."""
    _TOKENS.pop(run_id, None)
