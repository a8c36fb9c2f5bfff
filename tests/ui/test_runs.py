"""The session's runs (``ui.runs``): the public-information study's cancel tokens."""

from __future__ import annotations

from ui.runs import cancel_token, forget_run, stop_run


def test_stop_button_cancels_the_runs_token():
    token = cancel_token("run-1")
    assert not token.cancelled and cancel_token("run-1") is token
    stop_run("run-1")
    assert token.cancelled
    forget_run("run-1")
    assert not cancel_token("run-1").cancelled
    forget_run("run-1")
