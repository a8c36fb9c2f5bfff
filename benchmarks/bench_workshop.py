"""Benchmark a workshop room (issue 36 §3): 10 and 20 participants on one ``studio app --workshop`` server.

The server listens on 127.0.0.1 only. The facilitator uploads a table (3,000 rows × 8 columns, one column of values
unique to this run) and shares it with the room. Then ``PARTICIPANTS`` sessions — each Streamlit's own protocol
(``tests/e2e/streamlit_session.py``: what a browser's page does, without the browser's own CPU) with the join link's
cookie — act at the same time:

1. open the Start page, then change page together, step by step (Data, Accuracy targets & feasibility, Mechanisms,
   Tradeoffs, Workshop, Export): each page change is timed from the request to the end of its script run;
2. press **Run the mechanism** together on the Mechanisms page (everyone the default configuration, as when the
   facilitator says "press Run"): each run is timed, and whether it showed its place in the room's queue is noted;
3. reload: a new session per participant with its address's ``sid`` must find its run again (nobody's work
   evicted).

Reported: page change and run p50/p95 (s), how many runs showed their wait, the server's resident memory before,
at its peak and after, whether any participant received any of the uploaded values (leakage), and how many reloads
found their run. Bounded: at most ``PARTICIPANTS`` connections, every step with a timeout, the server stopped at
the end. Run ``python benchmarks/bench_workshop.py [10 20]`` or ``bash scripts/studio.sh bench workshop``.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import re
import secrets
import statistics
import subprocess
import sys
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.conftest import stop_process_group  # noqa: E402

PAGES = ("data", "feasibility", "mechanisms", "tradeoffs", "workshop", "export")
ROWS = 3000
SIZES = (10, 20)


def _table(marker: int) -> bytes:
    import numpy as np

    rng = np.random.default_rng(7)
    x = rng.normal(size=(ROWS, 7))
    lines = ["income," + ",".join(f"f{j}" for j in range(6)) + ",outcome"]
    for i in range(ROWS):
        lines.append(f"{marker + 17 * i}," + ",".join(f"{v:.4f}" for v in x[i, :6]) + f",{int(x[i, 6] > 0)}")
    return ("\n".join(lines) + "\n").encode()


def _quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered), p95


def _server_rss_mb(pid: int) -> float:
    import psutil

    process = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 2**20


def _cookie(url: str, token: str) -> str:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003
            return None

    try:
        urllib.request.build_opener(NoRedirect).open(f"{url}/?token={token}", timeout=30)
    except urllib.error.HTTPError as answer:  # the 303
        return answer.headers["set-cookie"].split(";")[0]
    raise RuntimeError("the join link set no cookie")


async def _room(url: str, tokens: dict[str, str], n: int, pid: int) -> dict:
    from tests.e2e.streamlit_session import StreamlitSession

    marker = 7_300_000_000 + secrets.randbelow(10**6) * 10**4
    facilitator = StreamlitSession(url, "data", "data=upload:0", cookie=_cookie(url, tokens["facilitator"]))
    await facilitator.open()
    await facilitator.upload("room.csv", _table(marker))
    await facilitator.click("room.share")
    join = _cookie(url, tokens["join"])
    people = [StreamlitSession(url, "", cookie=join) for _ in range(n)]
    rss = {"before": _server_rss_mb(pid)}
    peak = [rss["before"]]

    async def sample() -> None:
        while True:
            peak[0] = max(peak[0], _server_rss_mb(pid))
            await asyncio.sleep(0.5)

    sampler = asyncio.create_task(sample())
    try:
        await asyncio.gather(*(p.open(timeout=300) for p in people))
        changes: list[float] = []

        async def visit(person, page: str) -> float:
            person.page = page
            started = time.perf_counter()
            await person.rerun(timeout=300)
            return time.perf_counter() - started

        for page in PAGES:
            changes += await asyncio.gather(*(visit(p, page) for p in people))
        runs: list[float] = []
        waited = 0

        async def run(person) -> float:
            person.page = "mechanisms"
            await person.rerun(timeout=300)
            before = len(person.received)
            started = time.perf_counter()
            await person.click("mechanisms.run", timeout=600)
            seconds = time.perf_counter() - started
            nonlocal waited
            waited += b"Queued for the room's run slot" in b"".join(person.received[before:])
            return seconds

        runs = list(await asyncio.gather(*(run(p) for p in people)))
        failures = sum(bool(p.exceptions) for p in people)
        first_failure = next((p.exceptions[0] for p in people if p.exceptions), "")
        values = [str(marker + 17 * i).encode() for i in range(ROWS)]
        leaks = sum(any(v in p.received_bytes() for v in values) for p in people)
        control = any(v in facilitator.received_bytes() for v in values)  # the facilitator does see rows
        # Reload: a new session at each participant's address (its sid) finds its run again.
        reloads = [StreamlitSession(url, "mechanisms", p.address_query, cookie=join) for p in people]
        await asyncio.gather(*(r.open(timeout=300) for r in reloads))
        kept = sum("mechanisms.draw_again" in r.widgets for r in reloads)
        await asyncio.gather(*(r.close() for r in reloads))
    finally:
        sampler.cancel()
        await asyncio.gather(*(p.close() for p in [facilitator, *people]), return_exceptions=True)
    await asyncio.sleep(2)
    rss["peak"], rss["after"] = peak[0], _server_rss_mb(pid)
    return {"changes": changes, "runs": runs, "waited": waited, "leaks": leaks, "control": control,
            "kept": kept, "failures": failures, "first_failure": first_failure, "rss": rss}


def _measure(n: int) -> list[dict]:
    from tests.e2e.conftest import free_port
    from tests.e2e.streamlit_session import EventLoopThread

    port = free_port()
    log = REPO / "test-artifacts" / f"bench-workshop-{port}.log"
    log.parent.mkdir(exist_ok=True)
    out = open(log, "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "studio", "app", "--workshop", "--host", "127.0.0.1", "--port",
                             str(port)], cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=out,
                            stderr=subprocess.STDOUT, start_new_session=True)
    loop = EventLoopThread()
    try:
        deadline = time.monotonic() + 120
        while "Join link" not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(log.read_text(errors="replace"))
            time.sleep(0.2)
        text = log.read_text(errors="replace")
        tokens = {"facilitator": re.search(r"Facilitator.*\?token=([\w-]+)", text).group(1),
                  "join": re.search(r"Join link.*\?token=([\w-]+)", text).group(1)}
        result = loop.run(_room(f"http://127.0.0.1:{port}", tokens, n, proc.pid), timeout=1800)
    finally:
        loop.close()
        stop_process_group(proc, timeout=20)
        out.close()
    c50, c95 = _quantiles(result["changes"])
    r50, r95 = _quantiles(result["runs"])
    rss = result["rss"]
    note = (f"load {os.getloadavg()[0]:.1f}; runs that showed their wait {result['waited']}/{n}; leaks "
            f"{result['leaks']}/{n} (facilitator sees rows: {result['control']}); reloads that found their run "
            f"{result['kept']}/{n}; sessions with a traceback {result['failures']} {result['first_failure'][:300]}; server RSS {rss['before']:.0f} MB "
            f"before, peak {rss['peak']:.0f} MB, after {rss['after']:.0f} MB")
    return [
        {"name": f"{n} participants: page change", "seconds": c95, "p50": c50, "p95": c95, "target": 3.0,
         "note": note},
        {"name": f"{n} participants: Mechanisms run", "seconds": r95, "p50": r50, "p95": r95, "peak_mb": rss["peak"]},
    ]


def run(sizes: tuple[int, ...] = SIZES) -> list[dict]:
    rows = []
    for n in sizes:
        rows += _measure(n)
    return rows


if __name__ == "__main__":
    for row in run(tuple(int(a) for a in sys.argv[1:]) or SIZES):
        print(row)
