"""Start the Studio's server: ``python -m ui.serve [options of streamlit run]`` (what ``scripts/studio.sh app`` runs).

Streamlit treats an app with a ``pages/`` folder beside its entry point as a legacy multipage app until the entry
point first calls ``st.navigation``, that is until the first script run of the first session after a start. When that
first request is a page's address (``/data``, a bookmark, a browser restoring its tabs), the legacy router knows no
page of that name, and Streamlit (1.67) shows its "Page not found — running the app's main page" dialog over the
page that ``app.py`` then routes and draws correctly. The Studio's pages live in ``pages/studio/`` and are all routed
by ``st.navigation``, so the legacy mode is never wanted: it is switched off here, before the server starts.

``streamlit run app.py`` works as well; only a page's address as the very first request then shows that dialog.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

#: The entry point, wherever the server is started from.
APP = Path(__file__).resolve().parent.parent / "app.py"
#: What ``app.py`` and the Start page import (pandas, pyarrow, the session state, the cached engine calls): imported
#: before the server answers, so the first visitor's page does not wait for them.
FIRST_PAGE_MODULES: tuple[str, ...] = ("ui.session_store", "ui.common", "ui.links", "ui.state", "ui.cached")


def main(argv: list[str] | None = None) -> None:
    """``streamlit run app.py`` with ``argv`` (default: this process's arguments) as its options."""
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    # Read by every session's PagesManager; Streamlit itself sets it to False once a script calls st.navigation.
    PagesManager.uses_pages_directory = False
    for name in FIRST_PAGE_MODULES:
        importlib.import_module(name)
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
