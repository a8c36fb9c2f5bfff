"""Benchmark the dashboard's own waits (issue 11): first paint, a Mechanisms run, and where a run's time goes.

Rows:

* ``first paint`` — ``streamlit run app.py`` started, then (a) seconds until the health endpoint answers and
  (b) seconds from then until the Start page is drawn and idle in headless Chromium (the issue's "first paint
  after the server is up"; target ≤ 2 s). Needs Chromium (``chromium`` on PATH) and Playwright; skipped
  otherwise.
* ``page change, cached`` — in the same browser session, after a Mechanisms run and a quick sweep (one repetition)
  on the demo, every page visited once, then a second lap: the slowest page change of that lap (sidebar link clicked
  → the new page drawn and idle), every page's data and results already cached (target ≤ 0.6 s, issue 33 §5). Each
  page's note gives its wall seconds and the CPU seconds that change cost Chromium's renderer and GPU processes and
  the server (``/proc``, summed over each process tree), so a loaded machine's waiting is told from the drawing.
* ``Mechanisms click → result drawn (generated 25,000 × 30)`` — in the same browser session, after the upload below:
  the Mechanisms page's defaults (the private projection), seconds from the click on *Run the mechanism* to the
  honest comparison drawn and the page idle (target ≤ 1.5 s), with the CPU seconds of the server (the engine call
  and the page's script), Chromium's renderer and its GPU process.
* ``quick sweep in the browser (generated 25,000 × 30)`` — in the same browser session, a generated 25,000 × 30 table
  with a yes/no outcome (:func:`_generated_table`) uploaded as a CSV on the Data page, the outcome and its positive
  value chosen, the classification program, then the Tradeoffs page's default sweep: the quick grid (8 B values ×
  10 repetitions + references, all three attacks) for both default mechanisms, the private projection and the
  Gaussian mechanism, the live curves drawn: seconds from the click on *Run the sweep* to the results table drawn
  and the page idle (target ≤ 30 s).
* ``Mechanisms run (<data>)`` — the page's one engine call, :func:`engine.release_analysis.analyse_release`, as
  the page makes it: the chosen private projection (B = 0.25, ε = 4, δ = 1/(n + 1)) released, then it and its
  alternatives at the same guarantee (Gaussian, JL + Laplace, k-anonymity with k = 2) analysed — five releases
  each, the program on each, the three attacks on every release. On nigeria-demo (20,788 × 15, lending; target
  ≤ 2 s) and a generated 25,000 × 30 table (classification on a generated outcome; target ≤ 3 s), with the page's
  threads (``PAGE_THREADS``: one per core, at most 4). Wall and CPU
  seconds, and the CPU seconds of each part (release + program, singling out, attribute inference) summed over
  the four mechanisms, so the dominating term is named.

Run ``python benchmarks/bench_dashboard.py`` or ``bash scripts/studio.sh bench dashboard``.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
if __name__ == "__main__":
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu(root: int) -> dict[str, float]:
    """CPU seconds (user + system) so far of ``root``'s descendants (not ``root`` itself), by kind: Chromium's
    processes by their ``--type`` (``renderer``, ``gpu-process``, ``utility``, ``zygote``; the browser process is
    ``browser``), Python processes (the Streamlit server and its sweep workers) as ``server``. Read from ``/proc``;
    empty where there is none. A process that ended since is no longer counted: compare readings of live processes
    only."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            stats[int(entry)] = fields
            children.setdefault(int(fields[1]), []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            tree.append(child)
            todo.append(child)
    cpu: dict[str, float] = {}
    for pid in tree:
        try:
            with open(f"/proc/{pid}/cmdline") as f:
                words = f.read().replace("\0", " ").split()  # Chromium rewrites its arguments as one string
        except OSError:
            continue
        if not words or pid not in stats:
            continue
        program = os.path.basename(words[0])
        if "chrom" in program:
            kind = next((w.split("=", 1)[1] for w in words if w.startswith("--type=")), "browser")
        elif "python" in program:
            kind = "server"
        else:
            continue
        fields = stats[pid]
        cpu[kind] = cpu.get(kind, 0.0) + (int(fields[11]) + int(fields[12])) / _TICK
    return cpu


def cpu_spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {kind: after[kind] - before.get(kind, 0.0) for kind in after}


def first_paint() -> list[dict]:
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - the test requirements install it
        chromium = None
    if chromium is None:
        return [{"name": "first paint", "seconds": float("nan"), "note": "skipped: no Chromium or Playwright"}]
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "ui.serve", "--server.port", str(port), "--server.headless",
             "true", "--server.address", "127.0.0.1"],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            env={**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"})
        try:
            while True:
                with contextlib.suppress(OSError):
                    with urllib.request.urlopen(url + "_stcore/health", timeout=1) as response:
                        if response.status == 200:
                            break
                if time.perf_counter() - started > 60:
                    raise RuntimeError("streamlit did not answer its health check within 60 s")
                time.sleep(0.05)
            up = time.perf_counter()
            page = browser.new_page()
            page.goto(url)
            page.wait_for_selector("h1")
            page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000)
            painted = time.perf_counter()
            try:
                changes, change_cpu = page_changes(page)
            except Exception as exc:  # noqa: BLE001 - reported in the row; first paint is kept
                changes, change_cpu = {f"failed: {type(exc).__name__}": float("nan")}, {}
            try:
                click, swept = browser_runs_on_a_generated_table(page, url)
                assert swept is not None
                sweep = swept
            except Exception as exc:  # noqa: BLE001 - reported in the row; the other rows are kept
                note = f"failed: {type(exc).__name__}: {exc}"[:300]
                click = {"name": MECHANISMS_CLICK_ROW, "seconds": float("nan"), "note": note}
                sweep = {"name": "quick sweep in the browser (generated 25,000 × 30)", "seconds": float("nan"),
                         "note": note}
        finally:
            os.killpg(proc.pid, 15)
            proc.wait()
            browser.close()
    return [{"name": "first paint (server up → Start page drawn and idle in Chromium)",
             "seconds": painted - up, "target": 2.0, "ratio": (painted - up) / 2.0,
             "note": f"server start → health {up - started:.2f} s; fresh server process ({_load()})"},
            {"name": "page change, cached (slowest of a lap over every page)", "seconds": max(changes.values()),
             "target": PAGE_CHANGE_TARGET, "ratio": max(changes.values()) / PAGE_CHANGE_TARGET,
             "renderer_cpu_seconds": max((c.get("renderer", 0.0) for c in change_cpu.values()), default=float("nan")),
             "note": "; ".join(f"{k} {v:.2f} s" + (f" (CPU s: {_cpu_note(change_cpu[k])})" if k in change_cpu else "")
                               for k, v in changes.items()) + f" ({_load()})"},
            click, sweep]


def _cpu_note(cpu: dict[str, float]) -> str:
    """The CPU seconds of a step: Chromium's renderer and GPU process, and the server."""
    return ", ".join(f"{label} {cpu.get(kind, 0.0):.2f}" for kind, label in
                     (("renderer", "renderer"), ("gpu-process", "GPU"), ("server", "server")))


#: Seconds a quick sweep on the generated 25,000 × 30 table may take in the browser.
BROWSER_SWEEP_TARGET = 30.0


#: Seconds from the click on the Mechanisms page's run button to its result drawn, on the generated 25,000 × 30 table.
MECHANISMS_CLICK_TARGET = 1.5
MECHANISMS_CLICK_ROW = "Mechanisms click → result drawn (generated 25,000 × 30, Chromium)"


def browser_runs_on_a_generated_table(page, url: str, *, sweep: bool = True) -> tuple[dict, dict | None]:
    """Upload the generated 25,000 × 30 table and set its outcome and program; then time the Mechanisms page's run
    (click → the honest comparison drawn and idle) and the Tradeoffs page's quick sweep (click → the results table)
    (the e2e tests' own helpers drive the pages); without ``sweep``, only the Mechanisms run (no sweep row)."""
    import tempfile

    from tests.e2e.conftest import (
        choose,
        click_button,
        go,
        idle,
        no_exception,
        open_upload_on_data_page,
        upload_file,
    )

    frame, _, _ = _generated_table()
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "generated-25000x30.csv"
        frame.to_csv(path, index=False)
        open_upload_on_data_page(page, url)
        upload_file(page, path)
    choose(page, "Target (the outcome", "outcome")
    # every label is offered with its count (ui.data_controls)
    choose(page, "Which value(s) of", f"yes ({int((frame['outcome'] == 'yes').sum()):,})")
    page.keyboard.press("Escape")
    choose(page, "Program", "classification — predict a yes/no label")
    no_exception(page)
    go(page, "mechanisms")
    idle(page)
    before, started = process_cpu(os.getpid()), time.perf_counter()
    click_button(page, "Run the mechanism")
    page.get_by_text("Honest comparison at the same guarantee", exact=True).wait_for(timeout=300_000)
    idle(page, timeout=300_000)
    seconds = time.perf_counter() - started
    cpu = cpu_spent(before, process_cpu(os.getpid()))
    no_exception(page)
    click = {"name": MECHANISMS_CLICK_ROW, "seconds": seconds, "target": MECHANISMS_CLICK_TARGET,
             "ratio": seconds / MECHANISMS_CLICK_TARGET, "renderer_cpu_seconds": cpu.get("renderer", 0.0),
             "server_cpu_seconds": cpu.get("server", 0.0),
             "note": "uploaded CSV, classification program, the page's defaults (private projection, its honest "
                     f"comparison): click → the comparison drawn and idle; CPU s: {_cpu_note(cpu)} ({_load()})"}
    if not sweep:
        return click, None
    go(page, "tradeoffs")
    idle(page)
    started = time.perf_counter()
    click_button(page, "Run the sweep")
    page.get_by_text("Results table", exact=True).wait_for(timeout=300_000)
    idle(page, timeout=300_000)
    seconds = time.perf_counter() - started
    no_exception(page)
    return click, {
        "name": "quick sweep in the browser (generated 25,000 × 30)", "seconds": seconds,
        "target": BROWSER_SWEEP_TARGET, "ratio": seconds / BROWSER_SWEEP_TARGET,
        "note": "uploaded CSV, classification program, the Tradeoffs page's defaults: the quick grid for the "
                "private projection and the Gaussian mechanism (2 × 90 cells, 3 attacks, live curves), one worker "
                f"process per core; click → results table drawn and idle ({_load()})"}


#: Seconds a cached page change may take (issue 33 §5).
PAGE_CHANGE_TARGET = 0.6
#: The pages' addresses (``st.navigation`` uses the file names), in the sidebar's order.
PAGE_PATHS = ("", "data", "feasibility", "mechanisms", "tradeoffs", "per_record", "public_info", "workshop", "export")
_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def _go(page, path: str) -> float:
    """Click the sidebar link to ``path``; seconds until the new page's title is drawn and its run is idle."""
    before = page.locator("h1").first.inner_text()
    started = time.perf_counter()
    href = '"/"]' if path == "" else f'"/{path}"]'
    page.locator(f'a[data-testid="stSidebarNavLink"][href$={href}').click()
    page.wait_for_function("t => { const h = document.querySelector('h1'); return h && h.innerText !== t; }",
                           arg=before, timeout=120_000)
    page.wait_for_selector(_IDLE, timeout=120_000)
    return time.perf_counter() - started


def _click_and_wait(page, name: str) -> None:
    page.get_by_role("button", name=name).first.click()
    page.wait_for_timeout(300)
    page.wait_for_selector(_IDLE, timeout=300_000)


def page_changes(page) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Run the mechanism and a one-repetition quick sweep on the demo, visit every page, then time a second lap:
    each page's seconds, and the CPU seconds it cost each kind of process (:func:`process_cpu`)."""
    _go(page, "mechanisms")
    _click_and_wait(page, "Run the mechanism")
    _go(page, "tradeoffs")
    reps = page.get_by_role("spinbutton", name="Repetitions per point")
    reps.fill("1")
    reps.press("Tab")
    page.wait_for_timeout(300)
    page.wait_for_selector(_IDLE)
    _click_and_wait(page, "Run the sweep")
    page.get_by_text("Results table", exact=True).wait_for(timeout=300_000)
    for path in PAGE_PATHS:  # first visits: each page computes and caches what it shows
        if path != "tradeoffs":
            _go(page, path)
    changes, cpu = {}, {}
    for path in (*PAGE_PATHS[1:], PAGE_PATHS[0]):
        before = process_cpu(os.getpid())
        changes[path or "start"] = _go(page, path)
        cpu[path or "start"] = cpu_spent(before, process_cpu(os.getpid()))
    return changes, cpu


def _generated_table(n: int = 25_000, d: int = 30, seed: int = 0) -> tuple[pd.DataFrame, object, object]:
    """A generated n × d table with a binary outcome that depends on a few columns, and its spec and program."""
    from engine.data.spec import DataSpec, Normalization
    from engine.evaluation.programs import ProgramConfig

    rng = np.random.default_rng(seed)
    x = rng.lognormal(size=(n, d)) * rng.choice([-1.0, 1.0], size=(n, d))
    logit = x[:, :4] @ np.array([0.8, -0.6, 0.4, 0.3])
    frame = pd.DataFrame(x, columns=[f"x{i}" for i in range(d)])
    frame["outcome"] = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    spec = DataSpec(features=tuple(frame.columns[:d]), target="outcome", positive_class=("yes",),
                    normalization=Normalization(method="clip"))
    return frame, spec, ProgramConfig(kind="classification")


_TOTALS_LOCK = threading.Lock()
_INSIDE = threading.local()  # a part called inside another measured part (in the same thread) counts only there


def _timed(module, name: str, totals: dict[str, float], part: str | None = None, clock=time.thread_time):
    """``clock``: this thread's CPU (the attacks, in the page's analysis threads) or the process's, for work that
    runs BEFORE those threads start and may use threads of its own (the references' k-d tree queries); if it
    overlapped the analysis threads, their CPU would be counted twice."""
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        if getattr(_INSIDE, "part", None) is not None:
            return original(*args, **kwargs)
        _INSIDE.part = part or name
        started = clock()
        try:
            return original(*args, **kwargs)
        finally:
            _INSIDE.part = None
            with _TOTALS_LOCK:
                totals[part or name] = totals.get(part or name, 0.0) + clock() - started

    return original, wrapper


def mechanisms_run(label: str, frame: pd.DataFrame, spec, program, target: float) -> dict:
    from threadpoolctl import threadpool_limits

    import engine.attacks.attribute_inference as ai
    import engine.attacks.singling_out as so
    from engine.analysis import AnalysisConfig, AnalysisData, clear_analysis_cache
    from engine.mechanisms.private_projection import PrivateProjection
    from engine.release import ReleaseConfig
    from engine.release_analysis import PAGE_THREADS, analyse_release

    n = len(frame)
    mechanism = PrivateProjection.from_budget(0.25, 4.0, 1.0 / (n + 1))
    config = ReleaseConfig.of(spec, mechanism)
    analysis = AnalysisConfig(program=program)
    totals: dict[str, float] = {}
    build = AnalysisData.__dict__["build"]  # the classmethod object, restored as it was
    _, build_wrapper = _timed(AnalysisData, "build", totals, "non-private references",
                              time.process_time)
    patched = [(so, "singling_out", *_timed(so, "singling_out", totals)),
               (ai, "attribute_inference", *_timed(ai, "attribute_inference", totals))]
    for module, name, _, wrapper in patched:
        setattr(module, name, wrapper)
    AnalysisData.build = staticmethod(build_wrapper)  # the wrapper calls the bound classmethod
    clear_analysis_cache()  # a first run on this data, as the page's: the references are built in it
    try:
        # One BLAS/OpenMP thread, as the server has (engine.native_threads.NATIVE_THREADS; here, where this one thread controls
        # the process's pools, threadpoolctl sets the same).
        with threadpool_limits(1):
            started, started_cpu = time.perf_counter(), time.process_time()
            analyse_release(frame, config, analysis, mechanism.guarantee(), seed=1, workers=PAGE_THREADS)
            wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    finally:
        for module, name, original, _ in patched:
            setattr(module, name, original)
        AnalysisData.build = build
    parts = {"preparation, releases, programs, distinguishing": cpu - sum(totals.values()),
             "non-private references (holdout, program and attacks on the data; once per data)":
                 totals.get("non-private references", 0.0),
             "singling out": totals.get("singling_out", 0.0),
             "attribute inference": totals.get("attribute_inference", 0.0)}
    return {"name": f"Mechanisms run ({label})", "seconds": wall, "cpu_seconds": cpu, "target": target,
            "ratio": wall / target, "cpu_by_part": ", ".join(f"{k} {v:.1f} s" for k, v in parts.items()),
            "note": f"4 mechanisms × 5 releases, each attacked, {PAGE_THREADS} threads and 1 BLAS thread as the "
                    "page's server; dominating: "
                    f"{max(parts, key=parts.get)} ({_load()})"}


def run() -> list[dict]:
    from engine.data.demos import load_demo

    rows = first_paint()
    demo = load_demo("nigeria-demo")
    rows.append(mechanisms_run("nigeria-demo, 20,788 × 15, lending", demo.frame, demo.spec, demo.program_config(),
                               2.0))
    frame, spec, program = _generated_table()
    rows.append(mechanisms_run("generated 25,000 × 30, classification", frame, spec, program, 3.0))
    return rows


if __name__ == "__main__":  # print through the benchmarks' runner (one table format)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from run import main

    sys.exit(main(["run.py", "dashboard"]))
