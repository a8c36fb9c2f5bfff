"""Start the Studio's server: ``python -m ui.serve [options of streamlit run]`` (what ``scripts/studio.sh app`` runs).

Streamlit treats an app with a ``pages/`` folder beside its entry point as a legacy multipage app until the entry
point first calls ``st.navigation``, that is until the first script run of the first session after a start. When that
first request is a page's address (``/data``, a bookmark, a browser restoring its tabs), the legacy router knows no
page of that name, and Streamlit (1.67) shows its "Page not found — running the app's main page" dialog over the
page that ``app.py`` then routes and draws correctly. The Studio's pages live in ``pages/studio/`` and are all routed
by ``st.navigation``, so the legacy mode is never wanted: it is switched off here, before the server starts.

It also gives the server's native thread pools (BLAS, OpenMP) one thread each, unless the environment already sets
them (:data:`engine.native_threads.NATIVE_THREADS`, the one rule): the Studio runs its work in parallel itself — a Mechanisms run's releases in
``PAGE_THREADS`` threads, a sweep's cells in worker processes — and BLAS threads on top of those outnumber the cores.
Measured on the 2-core machine (``benchmarks/bench_dashboard.py``, Mechanisms run on a generated 25,000 × 30
table, 4 runs each): 20.5 / 20.2 / 13.6 / 16.7 s with BLAS's own threads, 13.0 / 11.9 / 14.0 / 13.1 s with one;
nigeria-demo (15 columns) unchanged. One setting for the whole process, made before numpy loads, also means that
no session can change it under another (a ``threadpoolctl`` limit per run would be process-wide too).

``streamlit run app.py`` works as well; only a page's address as the very first request then shows that dialog,
and BLAS keeps its own threads.

Where the app's files are (:func:`app_dir`): the checkout's top folder when the Studio runs from a checkout, else the
copy an installed wheel holds in ``studio/app/`` (``setup.py``). Streamlit reads the ``.streamlit/config.toml``
beside the script it runs, so the installed app keeps the Studio's settings from any working directory.

A workshop server (``studio app --workshop``, :mod:`ui.room`) is the same server with the room's access gate in front
of every request (:func:`ui.room_gate.install`).

Importing those modules before the server's runtime exists made Streamlit log "No runtime found, using
MemoryCacheStorageManager" once per ``st.cache_data`` decorator (35 lines at every start, issue 34): the check runs
when a decorator is created, while each cache picks the runtime's storage when it is first called, once the server
runs. :func:`import_first_page_modules` drops exactly that message during the imports; every other log line passes.
"""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from engine.native_threads import limit_native_threads

if TYPE_CHECKING:
    from ui.room import Room


def app_dir() -> Path:
    """The folder holding ``app.py``, ``pages/studio/``, ``assets/`` and ``.streamlit/config.toml``: the checkout's top
    folder (a checkout or an editable install), else the installed package's copy ``studio/app/``."""
    top = Path(__file__).resolve().parent.parent
    if (top / "app.py").is_file() and (top / "pages" / "studio").is_dir():
        return top
    return top / "studio" / "app"


#: The entry point, wherever the server is started from.
APP = app_dir() / "app.py"
#: What ``app.py`` and the Start page import (pandas, pyarrow, the session state, the cached engine calls): imported
#: before the server answers, so the first visitor's page does not wait for them.
FIRST_PAGE_MODULES: tuple[str, ...] = ("ui.session_store", "ui.common", "ui.links", "ui.state", "ui.cached",
                                       "ui.sections.room_panel")


#: The logger of Streamlit's ``st.cache_data`` and the message it logs for a decorator created before the runtime.
CACHE_LOGGER = "streamlit.runtime.caching.cache_data_api"
NO_RUNTIME = "No runtime found"


def _not_no_runtime(record: logging.LogRecord) -> bool:
    return NO_RUNTIME not in record.getMessage()


def import_first_page_modules() -> None:
    """Import :data:`FIRST_PAGE_MODULES` without Streamlit's "No runtime found" warning per cache decorator (see the
    module docstring); a filter on that one logger, removed again afterwards."""
    logger = logging.getLogger(CACHE_LOGGER)
    logger.addFilter(_not_no_runtime)
    try:
        for name in FIRST_PAGE_MODULES:
            importlib.import_module(name)
    finally:
        logger.removeFilter(_not_no_runtime)


def main(argv: list[str] | None = None, *, room: Room | None = None) -> None:
    """``streamlit run app.py`` with ``argv`` (default: this process's arguments) as its options; with ``room``, a
    workshop server that lets in only the room's links (:mod:`ui.room_gate`)."""
    limit_native_threads()  # before numpy (imported by streamlit) starts its pools: engine.native_threads
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    # Read by every session's PagesManager; Streamlit itself sets it to False once a script calls st.navigation.
    PagesManager.uses_pages_directory = False
    import_first_page_modules()
    if room is not None:
        from ui import room_gate

        room_gate.install(room)
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
