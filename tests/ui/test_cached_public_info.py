"""The page's study runner: cell by cell with one generator (the engine's numbers), progress over the whole study,
and Stop keeping the finished cells."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import CancelledError
from engine.progress import CancelToken
from engine.public_info.count_table import counties_demo
from engine.public_info.results import CountStudyConfig, build_count_study
from engine.rng import make_rng
from ui.cached_public_info import cancel_token, forget_run, run_study, stop_run

TABLE = counties_demo(regions=6, periods=3)
CFG = CountStudyConfig(methods=("postprocess", "wasserstein-naive"), epsilons=(0.5, 1.0), replicates=4)


def test_cell_by_cell_equals_one_engine_call_and_progress_covers_the_study():
    seen = []
    got = run_study(TABLE, CFG, seed=5, on_progress=seen.append)
    ref = build_count_study(TABLE, CFG, rng=make_rng(5))
    assert got.config == CFG and got.regions == ref.regions
    for a, b in zip(got.cells, ref.cells, strict=True):
        np.testing.assert_array_equal(a.released, b.released)
        np.testing.assert_array_equal(a.relative_error, b.relative_error)
    assert [p.done for p in seen] == list(range(1, 13)) and {p.total for p in seen} == {12}


def test_stop_keeps_the_finished_cells():
    token = CancelToken()
    kept = []

    def on_cell(partial):
        kept.append(partial)
        if len(partial.cells) == 1:
            token.cancel()

    with pytest.raises(CancelledError):
        run_study(TABLE, CFG, seed=5, on_cell=on_cell, cancel=token)
    ref = build_count_study(TABLE, CFG, rng=make_rng(5))
    assert len(kept) == 1 and len(kept[-1].cells) == 1
    np.testing.assert_array_equal(kept[-1].cells[0].released, ref.cells[0].released)


def test_stop_button_cancels_the_runs_token():
    token = cancel_token("run-1")
    assert not token.cancelled
    stop_run("run-1")
    assert token.cancelled
    forget_run("run-1")
    assert not cancel_token("run-1").cancelled
    forget_run("run-1")
