"""Where the Tradeoffs page computes a sweep: this machine's processes (default) or a Dask cluster the user names.

The page draws :func:`compute_controls` inside its sweep form and passes :func:`sweep_client` to the sweep runner
(``engine.sweeps.run_sweep(client=…)``: the same table as on this machine, cell for cell). A cluster connection is
a shared resource (``st.cache_resource``, one per address, at most :data:`MAX_CLIENTS`, dropped after an hour);
an address that is malformed or does not answer within a few seconds is a message next to the form, never a
traceback, and the sweep does not start.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from engine.errors import EngineError

#: Cluster connections kept at once (one per scheduler address).
MAX_CLIENTS = 2
#: Seconds to wait for a scheduler before saying it cannot be reached.
CONNECT_SECONDS = 5.0
CHOICES = {"local": "this machine", "dask": "a Dask cluster"}


def compute_controls(column: Any) -> None:
    """The "Compute on" choice and the scheduler address (widgets of the sweep form)."""
    column.radio("Compute on", tuple(CHOICES), key="tradeoffs.compute_on", format_func=CHOICES.get,
                 help="This machine's processes (default), or the workers of a running Dask cluster: start one with "
                 "`dask scheduler` and `dask worker tcp://HOST:8786` on the machines (with this project installed); "
                 "the table is the same for the same seed.")
    column.text_input("Scheduler address", key="tradeoffs.scheduler", placeholder="tcp://127.0.0.1:8786",
                      help="Used with 'a Dask cluster': the address `dask scheduler` prints.")


class _Connection:
    """Holds a ``distributed.Client``: Streamlit refuses to cache an awaitable object itself."""

    def __init__(self, client: Any) -> None:
        self.client = client


@st.cache_resource(max_entries=MAX_CLIENTS, ttl=3600, show_spinner="Connecting to the Dask cluster…",
                   validate=lambda connection: connection.client.status == "running",
                   on_release=lambda connection: connection.client.close())
def _connection(address: str) -> _Connection:
    from engine.scale.cluster import connect

    return _Connection(connect(address, timeout=CONNECT_SECONDS))


def sweep_client(session: Any) -> Any:
    """The Dask client the sweep should use, or None for this machine.

    Raises ``EngineError`` (malformed address, nothing answering) with a message naming the fix; a cached client
    whose cluster has gone away fails validation and is connected again.
    """
    if session.get("tradeoffs.compute_on", "local") != "dask":
        return None
    address = str(session.get("tradeoffs.scheduler") or "").strip()
    if not address:
        raise EngineError("type the scheduler address (for example tcp://127.0.0.1:8786) or choose 'this machine'")
    return _connection(address).client


def cluster_caption(client: Any) -> str:
    """One line for the page: the cluster's workers and, where it serves one, its dashboard link."""
    from engine.scale.cluster import cluster_summary

    info = cluster_summary(client)
    text = f"Computing on the Dask cluster at {info['scheduler']}: {info['workers']} workers, {info['threads']} threads."
    if info["dashboard"]:
        text += f" [Cluster dashboard]({info['dashboard']})"
    return text
