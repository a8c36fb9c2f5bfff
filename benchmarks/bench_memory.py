"""Benchmark the memory one session can pin (issue 15 §4): large but legal uploads, one after another.

One Streamlit session (``AppTest`` of ``app.py``, in this process, so the shared ``st.cache_data`` caches and the
session store are this process's) uploads ``FILES`` different CSV files of about ``ROWS`` × ``COLUMNS`` numbers
each on the Data page, then opens the Mechanisms page once. Rows: the process's resident memory before, at its
peak (sampled after every upload) and after the session is dropped and the caches are cleared, with the MB of CSV
uploaded. What stays is bounded by the caches' ``max_entries`` (``ui/cached.py``) and the session store's bounds
(``ui/session_store.py``: sessions, uploaded bytes and time), not by the number of files uploaded.

Run ``python benchmarks/bench_memory.py`` or ``bash scripts/studio.sh bench memory``.
"""

from __future__ import annotations

import gc
import io
import os
import pathlib
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
FILES = 20
ROWS = 60_000
COLUMNS = 12


def _rss_mb() -> float:
    import psutil

    return psutil.Process(os.getpid()).memory_info().rss / 2**20


def _csv(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(ROWS, COLUMNS))
    buffer = io.StringIO()
    buffer.write(",".join(f"c{j}" for j in range(COLUMNS - 1)) + ",outcome\n")
    np.savetxt(buffer, x, delimiter=",", fmt="%.6f")
    return buffer.getvalue().encode()


def run() -> list[dict]:
    sys.path.insert(0, str(REPO))
    os.chdir(REPO)
    from streamlit.testing.v1 import AppTest

    from ui import session_store

    started = time.perf_counter()
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300).run()
    at.switch_page("pages/studio/data.py").run()
    at.radio(key="data.source").set_value("Upload a file").run()
    gc.collect()
    before = peak = _rss_mb()
    uploaded = 0
    for i in range(FILES):
        content = _csv(i)
        uploaded += len(content)
        at.file_uploader(key="data.upload").set_value((f"large-{i}.csv", content, "text/csv")).run()
        assert not at.exception, [e.value for e in at.exception]
        peak = max(peak, _rss_mb())
    at.switch_page("pages/studio/mechanisms.py").run()
    peak = max(peak, _rss_mb())
    held = _rss_mb()
    del at
    session_store.clear()
    import streamlit as st

    st.cache_data.clear()
    gc.collect()
    after = _rss_mb()
    seconds = time.perf_counter() - started
    note = (f"{FILES} uploads of {uploaded / FILES / 2**20:.1f} MB ({ROWS:,} × {COLUMNS}) in one session: "
            f"RSS {before:.0f} MB before, peak {peak:.0f} MB, {held:.0f} MB while the session lives, "
            f"{after:.0f} MB after it is dropped and the caches cleared")
    return [
        {"name": "memory: one session, many large uploads", "seconds": round(seconds, 1), "peak_mb": round(peak),
         "note": note},
        {"name": "memory: held by the live session and caches", "seconds": 0.0, "peak_mb": round(held - before)},
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
