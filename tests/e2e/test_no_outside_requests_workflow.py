"""No outside request over a whole workflow (issue 36 §2: an offline enclave). The app's server runs with a guard
(tests/e2e/outside_guard/sitecustomize.py) that refuses and logs any connection to, or name lookup of, anything but
this machine — before a packet leaves. A session then walks every page, uploads a table, runs a mechanism and opens
the export; the log must stay empty. A positive control shows the guard catches an attempt."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.e2e.conftest import ARTIFACTS, ROOT, free_port, stop_process_group
from tests.e2e.streamlit_session import EventLoopThread, StreamlitSession

pytestmark = pytest.mark.e2e
GUARD = ROOT / "tests" / "e2e" / "outside_guard"
PAGES = ("", "data", "feasibility", "mechanisms", "tradeoffs", "per_record", "public_info", "workshop", "export")


def test_the_guard_catches_an_outside_connection(tmp_path):
    log = tmp_path / "outside.log"
    env = {**os.environ, "PYTHONPATH": str(GUARD), "STUDIO_OUTSIDE_LOG": str(log)}
    code = "import socket\ntry:\n    socket.create_connection(('192.0.2.1', 80), timeout=1)\nexcept OSError: pass"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert "192.0.2.1" in log.read_text()


def test_a_whole_workflow_makes_no_outside_request(tmp_path):
    log = tmp_path / "outside.log"
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    out = open(ARTIFACTS / f"outside-{port}.log", "wb")  # noqa: SIM115 - closed below
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(GUARD), str(ROOT)]), "STUDIO_OUTSIDE_LOG": str(log)}
    proc = subprocess.Popen([sys.executable, "-m", "studio", "app", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    loop = EventLoopThread()
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=1).read()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.2)

        async def walk():
            session = StreamlitSession(url, "")
            await session.open()
            for page in PAGES[1:]:
                session.page = page
                await session.rerun()
            session.page = "mechanisms"
            await session.rerun()
            await session.click("mechanisms.run", timeout=300)
            session.page = "export"
            await session.rerun()
            upload = StreamlitSession(url, "data", "data=upload:0")
            await upload.open()
            rows = "a,b,c\n" + "".join(f"{i % 7},{i % 11},{i % 3}\n" for i in range(60))
            await upload.upload("mine.csv", rows.encode())
            await session.close()
            await upload.close()
            return session.exceptions + upload.exceptions

        assert loop.run(walk(), timeout=600) == []
    finally:
        loop.close()
        stop_process_group(proc, timeout=15)
        out.close()
    assert not log.exists() or log.read_text() == "", log.read_text()
