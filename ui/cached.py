"""Every ``st.cache_data`` wrapper of the Start, Data, Feasibility and Export pages (B's live in ``cached_analysis``).

Rules (style guide R11): data are keyed by a fingerprint computed once and passed as an underscore argument (not
hashed); configs are passed as their JSON text; every decorator sets ``max_entries`` and ``ttl``. Entries built
from uploaded data are keyed by the SHA-256 of the file, so only a session holding the same file can hit them,
and they expire after an hour; nothing is persisted to disk.

:func:`current_data` is the one way pages get the session's data: it loads the demo or the upload, prepares it
with the session's :class:`~engine.data.preparation.DataSpec` and refreshes the sidebar summary in the state.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from engine.data.demos import DemoDataset, load_demo
from engine.data.preparation import DataSpec, PreparedData, load_table, prepare
from engine.errors import EngineError
from ui.state import StudioState

#: Largest upload the Data page accepts, in MB (also ``server.maxUploadSize`` in .streamlit/config.toml).
MAX_UPLOAD_MB = 50


@dataclass(frozen=True)
class LoadedData:
    """The session's data: raw table, the spec in use, the prepared matrix and what the sidebar shows."""

    key: str
    frame: pd.DataFrame
    spec: DataSpec
    default_spec: DataSpec | None
    prepared: PreparedData
    title: str
    description: str
    synthetic: bool
    program: Any
    notes: Any


def sha256_bytes(content: bytes) -> str:
    """Fingerprint of an uploaded file (hex SHA-256 of its bytes)."""
    return hashlib.sha256(content).hexdigest()


@st.cache_data(max_entries=8, ttl="6h", show_spinner="Loading the demo dataset…")
def demo_dataset(name: str) -> DemoDataset:
    """A built-in demo dataset (synthetic, or the replication input when shared/ is present)."""
    return load_demo(name)


@st.cache_data(max_entries=4, ttl="1h", show_spinner="Reading the uploaded file…")
def uploaded_table(fingerprint: str, filename: str, _content: bytes) -> pd.DataFrame:
    """Parse an uploaded CSV/Parquet file held in memory (keyed by its fingerprint)."""
    return load_table(io.BytesIO(_content), filename=filename)


@st.cache_data(max_entries=16, ttl="1h", show_spinner="Preparing the data…")
def prepared_data(data_key: str, spec_json: str, _frame: pd.DataFrame) -> PreparedData:
    """``prepare(frame, spec)`` keyed by the data key and the spec's JSON text."""
    return prepare(_frame, DataSpec.from_json(spec_json))


@st.cache_data(max_entries=16, ttl="1h")
def row_norms(data_key: str, spec_json: str, _x: np.ndarray) -> np.ndarray:
    """L2 norm of every prepared row (for the Data page's distribution plot)."""
    return np.linalg.norm(_x, axis=1)


def data_key(state: StudioState) -> str:
    """Cache key of the session's raw table: ``demo:<name>`` or ``upload:<sha256>``."""
    if state.source == "upload":
        return f"upload:{state.upload_fingerprint}"
    return f"demo:{state.demo_name}"


def raw_table(state: StudioState) -> tuple[pd.DataFrame, DemoDataset | None] | None:
    """The session's raw table (and the demo it came from), or None while an upload is awaited."""
    if state.source == "upload":
        if state.upload_bytes is None or state.upload_fingerprint is None:
            return None
        return uploaded_table(state.upload_fingerprint, state.upload_name or "upload.csv", state.upload_bytes), None
    demo = demo_dataset(state.demo_name)
    return demo.frame, demo


def current_data(state: StudioState) -> LoadedData | None:
    """Load and prepare the session's data (cached); refresh the state's summary. None while no data is loaded.

    Raises
    ------
    EngineError
        When the table cannot be read or does not fit the spec (``DataValidationError`` names the column).
    """
    table = raw_table(state)
    if table is None:
        return None
    frame, demo = table
    default_spec = demo.spec if demo is not None else None
    spec = state.spec if state.spec is not None else default_spec
    if spec is None:
        raise EngineError("choose the feature columns of the uploaded file on the Data page first")
    key = data_key(state)
    prepared = prepared_data(key, spec.to_json(), frame)
    title = demo.title if demo is not None else (state.upload_name or "uploaded file")
    if state.data_fingerprint != prepared.fingerprint:
        state.data_fingerprint = prepared.fingerprint
        state.n, state.d = prepared.n, prepared.d
        state.feature_names = tuple(prepared.feature_names)
    state.dataset_title = title
    state.synthetic = bool(demo.synthetic) if demo is not None else False
    return LoadedData(
        key=key,
        frame=frame,
        spec=spec,
        default_spec=default_spec,
        prepared=prepared,
        title=title,
        description=demo.description if demo is not None else "",
        synthetic=state.synthetic,
        program=demo.program if demo is not None else None,
        notes=demo.notes if demo is not None else (),
    )
