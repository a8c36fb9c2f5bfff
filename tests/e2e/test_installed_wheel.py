"""The Studio installed like Python software, offline (issue 36 §1–2).

``studio bundle DIR`` (run from this checkout, on this connected machine) writes a wheelhouse: the Studio's wheel and
every pinned dependency. A fresh virtual environment OUTSIDE the checkout then installs the Studio from it exactly as
on a machine without internet — ``pip install --no-index --find-links DIR privacy-parameter-studio``, with pip's own
configuration and environment switched off, so no index and no other folder of wheels can help. From a folder outside
the checkout, the installed ``studio`` command then shows its help, makes a release of a demo, and serves the app,
whose page Chromium loads.

The bundle and the installation are made once for the module (a fixture): together they are most of its cost (about
a minute of wall time on the 2-core machine, mostly pip reading and writing files, so the other test worker keeps
going meanwhile). Bytecode is not compiled at install (``--no-compile``): Python compiles what it imports.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, free_port, idle, no_exception, stop_process_group

pytestmark = pytest.mark.e2e
TIMINGS: dict[str, float] = {}


def _run(command: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    TIMINGS[Path(command[0]).name + " " + " ".join(command[1:3])] = time.perf_counter() - started
    assert result.returncode == 0, f"{command} exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def _outside_env() -> dict[str, str]:
    """This process's environment without pip's settings (no extra index, no extra folder of wheels: pip reads no
    configuration file) and without anything that would put the checkout on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv folder, a working folder outside the checkout, the wheelhouse) after bundling and installing offline."""
    top = tmp_path_factory.mktemp("installed")
    assert ROOT not in top.parents
    house, venv, work = top / "wheelhouse", top / "venv", top / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    _run([sys.executable, "-m", "studio", "bundle", str(house)], cwd=work, env=env)
    TIMINGS["bundle"] = time.perf_counter() - started
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", "--without-pip", str(venv)], cwd=work, env=_outside_env())
    started = time.perf_counter()
    _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-index",
          "--find-links", str(house), "--no-compile", "--quiet", "privacy-parameter-studio"], cwd=work,
         env=_outside_env())
    TIMINGS["offline install"] = time.perf_counter() - started
    size = sum(p.stat().st_size for p in house.glob("*.whl"))
    print(f"\nwheelhouse: {len(list(house.glob('*.whl')))} wheels, {size / 2**20:.0f} MB; timings (s): "
          + ", ".join(f"{k} {v:.1f}" for k, v in TIMINGS.items()))
    return venv, work, house


def test_the_bundle_holds_the_studio_every_pinned_dependency_and_an_install_note(installed):
    _, _, house = installed
    names = {p.name.split("-")[0].lower().replace("_", "-") for p in house.glob("*.whl")}
    pins = [line.split("==")[0].split("[")[0].lower() for line in (ROOT / "requirements.txt").read_text().split(
        "# [scale]")[0].splitlines() if line and not line.startswith("#")]
    assert "privacy-parameter-studio" in names
    assert set(pins) <= names, set(pins) - names
    note = (house / "INSTALL.txt").read_text()
    assert "pip install --no-index --find-links" in note and "privacy-parameter-studio" in note


def test_the_installed_package_is_imported_from_the_venv_not_the_checkout(installed):
    venv, work, _ = installed
    out = _run([str(venv / "bin" / "python"), "-c", "import engine, studio, ui.serve; "
                "print(engine.__file__); print(ui.serve.APP)"], cwd=work, env=_outside_env()).stdout.split()
    assert all(str(venv) in line for line in out), out
    assert out[1].endswith("studio/app/app.py")


def test_studio_help_lists_the_app_and_the_engine_commands(installed):
    venv, work, _ = installed
    out = _run([str(venv / "bin" / "studio"), "--help"], cwd=work, env=_outside_env()).stdout
    for command in ("app", "bundle", "privatize", "sweep", "feasibility"):
        assert re.search(rf"^\s+{command}\s", out, re.M), (command, out)


def test_studio_privatize_releases_a_demo_with_its_guarantee(installed):
    venv, work, _ = installed
    out = _run([str(venv / "bin" / "studio"), "privatize", "--dataset", "togo-demo", "--mechanism", "gaussian",
                "--b", "0.5", "--epsilon", "1", "--delta", "1e-5", "--output", "private.csv"], cwd=work,
               env=_outside_env()).stdout
    summary = json.loads(out)
    assert summary["guarantee"]["dict"]["epsilon"] == 1.0 and summary["guarantee"]["dict"]["b"] == 0.5
    assert summary["seeded"] is False and summary["data"]["n"] == 4201
    lines = (work / "private.csv").read_text().splitlines()
    assert len(lines) == 4201 + 1 and len(lines[0].split(",")) == 10


def test_studio_app_serves_the_installed_app_to_chromium(installed, page):
    venv, work, _ = installed
    port = free_port()
    log = open(work / "app.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([str(venv / "bin" / "studio"), "app", "--port", str(port), "--demo", "nigeria-demo"],
                            cwd=work, env=_outside_env(), stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, (work / "app.log").read_text()
            try:
                with urllib.request.urlopen(url + "_stcore/health", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                assert time.monotonic() < deadline, "the installed app did not answer within 90 s"
                time.sleep(0.2)
        # the test process's browser page (``page``: a page of its own would cost Chromium about 3 CPU seconds more)
        page.goto(url)
        page.wait_for_selector("h1", timeout=60_000)
        idle(page)
        no_exception(page)
        assert page.locator("h1").first.inner_text().strip() == "Privacy Parameter Studio"
        # --demo: new sessions open on the Nigeria demo (the Start page names the loaded dataset)
        assert page.get_by_text("Nigeria micro-loans (synthetic)").count() >= 1
    finally:
        stop_process_group(proc, timeout=15)
        log.close()
