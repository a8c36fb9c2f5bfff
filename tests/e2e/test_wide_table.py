"""A wide table's Mechanisms run in real Chromium (issue 35 item 1): the page says how long the run will take before
it starts, and the Stop button and the server's shutdown end it within 2 s.

On 2,000 rows × 400 columns the attribute-inference attack of one release computes for seconds without a Streamlit
call. Before, the page waited for it in ``as_completed`` and nothing stopped it: not the Stop button, not a closed
tab, and SIGTERM left the server in "Stopping…" until it was killed. The run now computes in a worker thread while
the page's thread looks at it every 0.1 s (``ui.runs.in_background``), and the attacks' kernels look at the run's
cancel token between their calls.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pandas as pd
import psutil
import pytest

from tests.e2e.conftest import (
    ARTIFACTS,
    ROOT,
    VIEWPORT,
    click_button,
    free_port,
    go,
    no_exception,
    open_upload_on_data_page,
    upload_file,
)
from tests.e2e.test_closed_tab import _cpu_seconds, _server

pytestmark = pytest.mark.e2e

ROWS, COLUMNS = 2_000, 400
#: Seconds within which a Stop or a shutdown must take effect (the issue's requirement).
STOP_SECONDS = 2.0
#: The browser window of these tests. They run in the module's page (``page``, shared by the modules of a test
#: process: a new page costs Chromium about 3 CPU seconds for its renderer and the frontend's scripts), resized.
WINDOW = {"width": 1280, "height": 1200}


@pytest.fixture(scope="module")
def wide_csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(np.round(rng.lognormal(size=(ROWS, COLUMNS)), 4), columns=[f"x{i}" for i in range(COLUMNS)])
    path = tmp_path_factory.mktemp("wide") / f"wide-{ROWS}x{COLUMNS}.csv"
    frame.to_csv(path, index=False)
    return path


def _start_a_wide_run(page, url: str, csv) -> None:
    """Upload the wide table, ask for a run: the page first says how long it will take; go on; wait for the run's
    progress bar, then until the releases with the attacks are computing (the server busy)."""
    from playwright.sync_api import expect

    open_upload_on_data_page(page, url)
    upload_file(page, csv)
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar).to_contain_text(csv.name, timeout=120_000)  # the upload is read and prepared
    expect(sidebar).to_contain_text(f"d = {COLUMNS} features", timeout=120_000)
    go(page, "mechanisms")
    click_button(page, "Run the mechanism")
    expect(page.get_by_text("This run will take about").first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("attribute-inference attack").first).to_be_visible()
    no_exception(page)
    click_button(page, "Run it")
    page.get_by_text("Scoring the program").first.wait_for(timeout=120_000)
    page.wait_for_timeout(3_000)  # into the attacks of the first releases


def _quiet_after(process: psutil.Process, started: float, deadline: float = 20.0) -> float:
    """Seconds from ``started`` to the start of the first quarter of a second in which the server (and its children)
    used less than a fifth of a core."""
    while time.monotonic() - started < deadline:
        window = time.monotonic()
        before = _cpu_seconds(process)
        time.sleep(0.25)
        if _cpu_seconds(process) - before < 0.05:
            return window - started
    return float("inf")


def test_a_long_run_is_announced_and_the_stop_button_ends_it_within_two_seconds(page, server, wide_csv):
    from playwright.sync_api import expect

    url, _, _ = server
    process = _server(url)
    page.set_viewport_size(WINDOW)
    try:
        _start_a_wide_run(page, url, wide_csv)
        busy = _cpu_seconds(process)
        page.wait_for_timeout(500)
        assert _cpu_seconds(process) - busy > 0.2, "the run was not computing when the Stop was given"
        started = time.monotonic()
        page.get_by_role("button", name="Stop the run").click()
        quiet = _quiet_after(process, started)  # sampled from the click on, while the page redraws
        expect(page.get_by_text("Stopped. Nothing of the stopped run is kept").first).to_be_visible(timeout=30_000)
        no_exception(page)
        assert quiet <= STOP_SECONDS, f"the server computed on for {quiet:.1f} s after the Stop"
    finally:
        page.set_viewport_size(VIEWPORT)


def test_the_server_shuts_down_within_two_seconds_during_a_wide_run(page, wide_csv):
    """SIGTERM (what Ctrl-C and ``kill`` send) while the attacks run: the server stops the session's script, the
    script cancels the run, the attacks stop at their next look at the token and the process exits."""
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / f"server-{port}-shutdown.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ui.serve", "--server.port", str(port), "--server.headless", "true",
             "--server.address", "127.0.0.1"],
            cwd=ROOT, env={**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(url + "_stcore/health", timeout=1) as response:
                        if response.status == 200:
                            break
                except OSError:
                    time.sleep(0.1)
            page.set_viewport_size(WINDOW)
            _start_a_wide_run(page, url, wide_csv)
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail("the server was still running 30 s after SIGTERM")
            exited = time.monotonic() - started
            assert exited <= STOP_SECONDS, f"the server took {exited:.1f} s to exit after SIGTERM"
        finally:
            page.set_viewport_size(VIEWPORT)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
