"""The project state's requests and what a page shows (issue 31; found by a review of the state merge):

- a reload drops the request of the work it interrupted, so that no page starts it again by itself under the notice
  that says it was interrupted; "Run it again" asks for exactly that work anew;
- the Tradeoffs page shows a stopped sweep's finished points when there are some on these data, else the last
  complete sweep — and choosing a point searches the same results the page draws."""

from __future__ import annotations

import pandas as pd

from engine.guarantee import Guarantee
from engine.mechanisms.gaussian import GaussianMechanism
from engine.sweeps import SweepResult, preset
from ui.state import RunConfig, StudioState, SweepProgress, Work, describe_run


def _run() -> RunConfig:
    return RunConfig(data="fp", mechanism=GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5), program=None,
                     candidate=Guarantee(b=0.5, epsilon=1.0, delta=1e-5), seed=6, user_seed=True)


def test_a_reload_drops_the_interrupted_request_and_run_again_asks_for_it_anew():
    state = StudioState()
    config = _run()
    state.request_run(config)
    state.begin_work(Work("run", describe_run(config), run=config))
    state.sweep_pending = (preset("quick", 500),)
    state.recommend_request = None
    state.public_info_work.pending = "{}"
    state.restored_after_reload()
    assert state.interrupted is not None and state.interrupted.run == config and state.working is None
    assert state.run_request is None and state.sweep_pending == () and state.public_info_work.pending is None
    page = state.run_again()
    assert page == "pages/studio/mechanisms.py" and state.run_request == config and state.interrupted is None


def test_the_page_shows_a_stopped_sweeps_points_else_the_last_sweep():
    state = StudioState()
    config = preset("quick", 500)
    complete = SweepResult(config=config, table=pd.DataFrame({"point": [0]}), fingerprint="fp")
    state.set_sweeps((complete,))
    assert state.shown_sweeps("fp") == (complete,) and state.shown_sweeps("other") == ()
    row = {"point": 0, "b": 0.1}
    state.sweep_partial = SweepProgress((config,), rows={0: [row]}, stopped=True, data="fp")
    shown = state.shown_sweeps("fp")
    assert len(shown) == 1 and not shown[0].complete and shown[0].table["b"].tolist() == [0.1]
    assert state.shown_sweeps("other") == ()  # a stopped sweep of other data is not shown here
    state.sweep_partial = SweepProgress((config,), rows={0: [row]}, stopped=False, data="fp")  # under way
    assert state.shown_sweeps("fp") == (complete,)
