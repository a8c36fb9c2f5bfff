"""The session's runs (``ui.runs``): the public-information study's cancel tokens, the throttled progress bar."""

from __future__ import annotations

import pytest

from ui.runs import PROGRESS_REDRAW_SECONDS, ProgressBar, Throttle, cancel_token, forget_run, stop_run


def test_stop_button_cancels_the_runs_token():
    token = cancel_token("run-1")
    assert not token.cancelled and cancel_token("run-1") is token
    stop_run("run-1")
    assert token.cancelled
    forget_run("run-1")
    assert not cancel_token("run-1").cancelled
    forget_run("run-1")


class _Slot:
    """Stands in for ``st.empty()``: records what is drawn."""

    def __init__(self):
        self.drawn: list[tuple[float, str]] = []

    def progress(self, value, text):
        self.drawn.append((value, text))

    def empty(self):
        self.drawn.append((None, ""))


def test_progress_bar_redraws_at_most_every_half_second_and_always_when_done():
    now = [100.0]
    slot = _Slot()
    checks = []
    bar = ProgressBar(slot, "Starting…", clock=lambda: now[0], check=lambda: checks.append(now[0]))
    assert slot.drawn == [(0.0, "Starting…")]  # drawn at once
    assert not bar.update(0.1, "1 of 10")  # too soon after the first drawing
    now[0] += PROGRESS_REDRAW_SECONDS - 0.01
    assert not bar.update(0.2, "2 of 10")
    now[0] += 0.02
    assert bar.update(0.3, "3 of 10")  # the newest count is what is drawn
    assert not bar.update(0.4, "4 of 10")
    assert len(checks) == 3  # every skipped update is still a point where a Stop click or a closed tab takes effect
    assert bar.update(1.0, "10 of 10")  # the end is always drawn, however soon
    now[0] += 10
    assert bar.update(1.7, "over")  # clipped to [0, 1]
    now[0] += 10
    assert bar.update(-1.0, "under")
    bar.empty()
    assert slot.drawn == [(0.0, "Starting…"), (0.3, "3 of 10"), (1.0, "10 of 10"), (1.0, "over"), (0.0, "under"),
                          (None, "")]


def test_the_execution_check_is_a_streamlit_yield_point_that_draws_nothing(monkeypatch):
    """``execution_check`` reads session state, which Streamlit's script runner turns into its stop/rerun check."""
    import streamlit as st

    from ui.state import STATE_KEY, execution_check

    class _State:
        def __init__(self):
            self.asked = []

        def __contains__(self, key):
            self.asked.append(key)
            return False

    state = _State()
    monkeypatch.setattr(st, "session_state", state)
    execution_check()
    assert state.asked == [STATE_KEY]


def test_throttle_is_due_at_once_then_at_most_every_interval_and_always_when_final():
    now = [5.0]
    throttle = Throttle(1.5, clock=lambda: now[0])
    assert throttle.due()  # the first redraw is not held back
    now[0] += 1.4
    assert not throttle.due()
    assert throttle.due(final=True)  # the last one is always drawn …
    now[0] += 1.0
    assert not throttle.due()  # … and counts as a drawing
    now[0] += 0.5
    assert throttle.due()


def test_live_curves_redraw_about_twelve_times_a_sweep_every_one_to_three_seconds():
    from ui.sections.tradeoffs_run import LIVE_REDRAW_SECONDS, live_redraw_seconds

    assert live_redraw_seconds(6.0) == 1.0  # a short sweep still fills in visibly
    assert live_redraw_seconds(24.0) == pytest.approx(2.0)
    assert live_redraw_seconds(600.0) == LIVE_REDRAW_SECONDS == 3.0
    assert live_redraw_seconds(float("nan")) == LIVE_REDRAW_SECONDS  # no estimate (it failed): the longest


def test_work_in_the_background_returns_its_value_and_its_progress_is_drawn_by_the_page():
    """``in_background``: the work runs in another thread; its progress is drawn by the calling (page) thread, and
    a look with nothing new to draw is a Streamlit yield point (``check``)."""
    import threading

    from engine.progress import Progress
    from ui.runs import in_background

    drawn, checks = [], []
    page = threading.current_thread()

    def work(cancel, progress):
        assert threading.current_thread() is not page
        for i in range(3):
            progress(Progress(i, 3))
            threading.Event().wait(0.03)
        return "result"

    def on_progress(p):
        assert threading.current_thread() is page
        drawn.append(p.done)

    assert in_background(work, on_progress, check=lambda: checks.append(1), poll=0.01) == "result"
    assert drawn and drawn == sorted(drawn) and set(drawn) <= {0, 1, 2}
    assert checks  # looks without new progress


def test_a_stop_seen_by_the_page_cancels_the_work_which_ends_at_its_next_check():
    """A Stop click, a closed tab or a server shutting down is an exception raised by a Streamlit call of the page's
    thread (here ``check``): it propagates, and the work's cancel token is set, so the work ends at its next
    cancellation point instead of computing on for nobody."""
    import threading

    from engine.errors import CancelledError
    from ui.runs import in_background

    class Stop(Exception):
        pass

    ended = threading.Event()
    started = threading.Event()
    seen = {}

    def work(cancel, progress):
        started.set()
        try:
            while True:  # a long computation with cancellation points
                cancel.raise_if_cancelled("the work")
                threading.Event().wait(0.005)
        except CancelledError as exc:
            seen["error"] = exc
            raise
        finally:
            ended.set()

    def check():
        if started.is_set():
            raise Stop

    with pytest.raises(Stop):
        in_background(work, lambda p: None, check=check, poll=0.01)
    assert ended.wait(5) and isinstance(seen["error"], CancelledError)


def test_an_error_of_the_work_is_raised_in_the_page_thread():
    from engine.errors import InvalidParameterError
    from ui.runs import in_background

    def work(cancel, progress):
        raise InvalidParameterError("bad input — fix it")

    with pytest.raises(InvalidParameterError, match="bad input"):
        in_background(work, lambda p: None, check=lambda: None, poll=0.01)
