"""Every ``st.cache_data`` wrapper of the Start, Data, Feasibility and Export pages (B's live in ``cached_analysis``).

Rules (style guide R11): data are keyed by a fingerprint computed once and passed as an underscore argument (not
hashed); configs are passed as their JSON text; every decorator sets ``max_entries`` and ``ttl``. Entries built
from uploaded data are keyed by the SHA-256 of the file, so only a session holding the same file can hit them,
and they expire after an hour; nothing is persisted to disk.

:func:`current_data` is the one way pages get the session's data: it loads the demo or the upload, prepares it
with the session's :class:`~engine.data.preparation.DataSpec` and refreshes the sidebar summary in the state.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from engine.data.demos import DemoDataset, load_demo
from engine.data.preparation import DataSpec, PreparedData, load_table, prepare
from engine.fingerprint import keyed_digest
from engine.theory import feasibility
from ui.figures.feasibility import FeasibilitySurface
from ui.state import StudioState

#: Largest upload the Data page accepts, in MB (also ``server.maxUploadSize`` in .streamlit/config.toml).
MAX_UPLOAD_MB = 50
#: Widest uploaded table the Data page accepts. Profiling, preparing and attacking grow with every column (a 1 MB
#: file of 5,000 columns took minutes of CPU and gigabytes of memory in a Mechanisms run); wider tables are refused
#: with a message naming the limit (the command line has no such limit).
MAX_UPLOAD_COLUMNS = 500


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
    #: The demo's own program (with its population), None for an upload.
    default_program: Any = None


def sha256_bytes(content: bytes) -> str:
    """Fingerprint of an uploaded file: keyed HMAC-SHA256 of its bytes (engine.fingerprint). A plain hash in a
    shared link would let anyone who knows all rows but one test guesses about the last."""
    return keyed_digest(content)


@st.cache_data(max_entries=8, ttl="6h", show_spinner="Loading the demo dataset…")
def demo_dataset(name: str) -> DemoDataset:
    """A built-in demo dataset (synthetic, or the replication input when shared/ is present)."""
    return load_demo(name)


@st.cache_data(max_entries=3, ttl="1h", show_spinner="Reading the uploaded file…")
def uploaded_table(fingerprint: str, filename: str, _content: bytes) -> pd.DataFrame:
    """Parse an uploaded CSV/Parquet file held in memory (keyed by its fingerprint)."""
    return load_table(io.BytesIO(_content), filename=filename)


@st.cache_data(max_entries=6, ttl="1h", show_spinner="Preparing the data…")
def prepared_data(data_key: str, spec_json: str, _frame: pd.DataFrame) -> PreparedData:
    """``prepare(frame, spec)`` keyed by the data key and the spec's JSON text."""
    return prepare(_frame, DataSpec.from_json(spec_json))


@st.cache_data(max_entries=6, ttl="1h")
def row_norms(data_key: str, spec_json: str, _x: np.ndarray) -> np.ndarray:
    """L2 norm of every prepared row (for the Data page's distribution plot)."""
    return np.linalg.norm(_x, axis=1)


@st.cache_data(max_entries=6, ttl="1h", show_spinner="Reading the columns…")
def table_profile(data_key: str, _frame: pd.DataFrame) -> pd.DataFrame:
    """What each column holds (``engine.data.profile.column_profile``), for the Data page's controls."""
    from engine.data.profile import column_profile

    return column_profile(_frame)


@st.cache_data(max_entries=8, ttl="1h", show_spinner=False)
def default_upload_spec(data_key: str, _frame: pd.DataFrame) -> DataSpec:
    """Starting point for an uploaded table (``engine.data.profile.suggest_spec``): numeric columns and text
    columns with few levels as features (levels flagged as read from the data), no identifiers, no target, rows
    with a missing value dropped, 'clip'."""
    from engine.data.profile import suggest_spec

    return suggest_spec(_frame)


@st.cache_data(max_entries=16, ttl="1h")
def observed_bounds(
    data_key: str, features: tuple[str, ...], _frame: pd.DataFrame
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Smallest and largest value of each feature in the data — for exploring only: bounds read from the data are
    not public bounds, and using them makes the preparation data-dependent again."""
    values = [pd.to_numeric(_frame[f], errors="coerce") for f in features]
    return tuple(float(v.min()) for v in values), tuple(float(v.max()) for v in values)


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
    key = data_key(state)
    default_spec = demo.spec if demo is not None else default_upload_spec(key, frame)
    spec = state.spec if state.spec is not None else default_spec
    prepared = prepared_data(key, spec.to_json(), frame)
    title = demo.title if demo is not None else (state.upload_name or "uploaded file")
    if state.data_fingerprint != prepared.fingerprint:
        old_default = state.default_delta()
        state.data_fingerprint = prepared.fingerprint
        state.n, state.d = prepared.n, prepared.d
        state.feature_names = tuple(prepared.feature_names)
        c = state.candidate
        if state.delta is None and c is not None and old_default is not None and c.delta == old_default:
            # The candidate used the default δ = 1/(n+1) of the previous data: follow the new n.
            state.set_candidate(b=c.b, epsilon=c.epsilon, delta=state.effective_delta())
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
        default_program=demo.program_config() if demo is not None else None,
    )


# ---------------------------------------------------------------------------------------------------------------
# Theorem 1 (feasibility page). No data involved: keyed by the numbers only.
# ---------------------------------------------------------------------------------------------------------------

#: ε resolution of the feasibility curves, and the (ε × B) resolution of the clickable overlay.
EPS_POINTS = 400
CLICK_EPS_POINTS, CLICK_B_POINTS = 48, 40
#: B values of the accuracy-ceiling chart.
CEILING_BS: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.0)


def epsilon_axis(eps_max: float, points: int) -> np.ndarray:
    """ε grid (0, eps_max] with ``points`` evenly spaced values."""
    return np.linspace(eps_max / points, eps_max, points)


def b_axis(points: int) -> np.ndarray:
    """B grid (0, 2] with ``points`` evenly spaced values (the last one is exactly 2: classic DP)."""
    return np.linspace(2.0 / points, 2.0, points)


@st.cache_data(max_entries=32, ttl="2h", show_spinner="Evaluating Theorem 1…")
def feasibility_surface(gammas: tuple[float, ...], delta: float, eps_max: float) -> FeasibilitySurface:
    """Theorem 1's largest feasible B along the ε grid for each γ (engine.theory.feasibility)."""
    eps = epsilon_axis(eps_max, EPS_POINTS)
    return FeasibilitySurface(
        epsilon=eps,
        delta=delta,
        gammas=gammas,
        b_max_integer={g: np.asarray(feasibility.max_feasible_b_integer(g, eps, delta)) for g in gammas},
        b_sup={g: np.asarray(feasibility.b_supremum(g, eps, delta)) for g in gammas},
    )


@st.cache_data(max_entries=32, ttl="2h")
def click_grid(
    delta: float, eps_max: float, gammas: tuple[float, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flattened (ε, B, γ_max, verdict text) of the coarse clickable grid over the feasibility map."""
    # Round steps, so that a clicked point is a readable number (ε = 1.2, B = 0.5 — not 0.49999999999999994).
    step = next((s for s in (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0) if eps_max / s <= CLICK_EPS_POINTS), 5.0)
    eps = np.round(step * np.arange(1, int(eps_max / step + 1e-9) + 1), 10)
    b = np.round(b_axis(CLICK_B_POINTS), 10)
    ee, bb = np.meshgrid(eps, b)
    gm = np.asarray(feasibility.gamma_max(bb, ee, delta)).ravel()
    ok = {g: np.asarray(feasibility.is_feasible(bb, g, ee, delta)).ravel() for g in gammas}
    verdict = np.array(
        ["<br>".join(f"γ = {g:g}: {'not ruled out' if ok[g][i] else 'ruled out'}" for g in gammas)
         for i in range(gm.size)]
    )
    return ee.ravel(), bb.ravel(), gm, verdict


@st.cache_data(max_entries=32, ttl="2h")
def gamma_ceiling(delta: float, eps_max: float, bs: tuple[float, ...]) -> tuple[np.ndarray, dict[float, np.ndarray]]:
    """γ_max against ε for each B in ``bs``."""
    eps = epsilon_axis(eps_max, EPS_POINTS)
    return eps, {b: np.asarray(feasibility.gamma_max(b, eps, delta)) for b in bs}


@st.cache_data(max_entries=64, ttl="2h")
def feasibility_report(gamma: float, epsilon: float, delta: float) -> feasibility.FeasibilityReport:
    """All of Theorem 1's answers for one (γ, ε, δ)."""
    return feasibility.feasibility_report(gamma, epsilon, delta)


@st.cache_data(max_entries=64, ttl="2h")
def candidate_checks(b: float, epsilon: float, delta: float, gammas: tuple[float, ...]) -> dict[str, Any]:
    """For the candidate: γ_max, whether each γ passes, the smallest ε for each γ at this B."""
    return {
        "gamma_max": float(feasibility.gamma_max(b, epsilon, delta)),
        "feasible": {g: bool(feasibility.is_feasible(b, g, epsilon, delta)) for g in gammas},
        "min_epsilon": {g: float(feasibility.min_epsilon(b, g, delta)) for g in gammas},
    }
