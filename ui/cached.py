"""Every ``st.cache_data`` wrapper of the app: one module, a section per page (style guide R11).

Rules (R11):

* data are keyed by a fingerprint computed once and passed as underscore arguments, which Streamlit does not hash:
  ``PreparedData.fingerprint`` (a hash of the used columns and the spec), the session's data key plus the column
  names, or a count table's key (``counties-demo``, or the upload's keyed SHA-256 plus the chosen columns);
* configurations are passed as the engine's frozen objects themselves, hashed by ONE function
  (:data:`CONFIG_HASH`: :meth:`engine.serialization.Serializable.config_key`, the class and its canonical JSON —
  every configuration class, including a mechanism registered later); seeds explicitly; every decorator sets
  ``max_entries`` and ``ttl``;
* entries built from uploaded data are keyed by the file's fingerprint, so only a session holding the same file can
  hit them, and they expire after an hour; nothing is persisted to disk;
* nothing here computes a number: each function is one ``st.cache_data`` wrapper around an engine call (engine
  modules beyond the data's are imported inside the wrappers, so a page only loads what it draws).

Runs that draw progress while they work (a Mechanisms run, the sweeps, the recommender, the public-information
study) are not shared caches: they live in :mod:`ui.runs` and keep their results in the session.

:func:`current_data` is the one way pages get the session's data: it loads the demo or the upload, prepares it
with the session's :class:`~engine.data.preparation.DataSpec` and refreshes the sidebar summary in the state.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import pandas as pd
import streamlit as st

from engine.data.demos import DemoDataset, load_demo
from engine.data.io import DecodeLimits
from engine.data.preparation import DataSpec, PreparedData, load_table, prepare
from engine.fingerprint import keyed_digest
from engine.rng import make_rng, spawn_seeds
from engine.serialization import Serializable
from engine.theory import feasibility
from ui.figures.feasibility import FeasibilitySurface
from ui.room import shared_upload
from ui.state import StudioState

if TYPE_CHECKING:
    from engine.analysis import PointAnalysis
    from engine.attacks.distinguishing import TradeoffCurve
    from engine.evaluation.programs import ProgramConfig
    from engine.mechanisms import RecordMechanism
    from engine.mechanisms.base import NoiseProfile
    from engine.per_record.base import SumMechanism
    from engine.public_info.count_table import CountTable
    from engine.public_info.dependence import DependenceAudit, SensitivityDerivation
    from engine.public_info.results import DependenceSummary
    from engine.public_info.sensitivity import GaussianSensitivityReport
    from engine.recommend import TargetSuggestion
    from engine.sweeps import SweepConfig
    from engine.workshop import Workshop

#: Largest upload the Data page accepts, in MB (also ``server.maxUploadSize`` in .streamlit/config.toml).
MAX_UPLOAD_MB = 50
#: Widest uploaded table the Data page accepts. Profiling, preparing and attacking grow with every column (a 1 MB
#: file of 5,000 columns took minutes of CPU and gigabytes of memory in a Mechanisms run); wider tables are refused
#: with a message naming the limit (the command line has no such limit).
MAX_UPLOAD_COLUMNS = 500
#: Most values (rows × columns) one uploaded file may decode into: a 50 MB CSV holds at most about 25 million, a
#: compressed Parquet file any number (a 266 KB file of 30 million rows took the server from 1.2 to 3 GB). Checked
#: from a Parquet file's metadata before anything is read, and while a CSV is scanned.
MAX_UPLOAD_CELLS = 10_000_000
#: Most bytes one uploaded file may decode into (Parquet: uncompressed size, text expanded from its dictionaries).
MAX_UPLOAD_DECODED_MB = 400


def upload_limits() -> DecodeLimits:
    """What one uploaded file may decode into (read at each upload: tests lower the limits here)."""
    return DecodeLimits(columns=MAX_UPLOAD_COLUMNS, cells=MAX_UPLOAD_CELLS,
                        decoded_bytes=MAX_UPLOAD_DECODED_MB * 1024 * 1024)


def _config_hash(obj: Serializable) -> str:
    return obj.config_key()


class _ConfigHashFuncs(Mapping):
    """``hash_funcs`` for every engine configuration class — each subclass of ``Serializable``, looked up when a
    cached function is called (Streamlit matches the exact type), so a mechanism registered after this module was
    imported is hashed the same way."""

    def _classes(self) -> list[type]:
        out, todo = [], [Serializable]
        while todo:
            cls = todo.pop()
            for sub in cls.__subclasses__():
                out.append(sub)
                todo.append(sub)
        return out

    def __getitem__(self, key: object) -> Any:
        if isinstance(key, type) and issubclass(key, Serializable):
            return _config_hash
        raise KeyError(key)

    def __iter__(self) -> Iterator[type]:
        return iter(self._classes())

    def __len__(self) -> int:
        return len(self._classes())


#: The one hash of the configurations passed to the caches below.
#: Typed as Streamlit's ``hash_funcs`` parameter (a mapping read by key is all it needs).
CONFIG_HASH = cast("dict[str | type[Any], Callable[[Any], Any]]", _ConfigHashFuncs())


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
    """Parse an uploaded CSV/Parquet file held in memory (keyed by its fingerprint), within :func:`upload_limits`.

    A file beyond the limits raises before it is decoded, and a raising call caches nothing; a file refused later
    (unusable as a table) is dropped from the cache by the caller (:func:`forget_uploaded_table`)."""
    return load_table(io.BytesIO(_content), filename=filename, limits=upload_limits())


def forget_uploaded_table(fingerprint: str, filename: str, content: bytes) -> None:
    """Drop a refused upload's parsed table and suggested settings from the caches (a refused file must not stay
    in memory for the caches' hour)."""
    key = f"upload:{fingerprint}"
    uploaded_table.clear(fingerprint, filename, content)
    for cache in (upload_suggestion, table_profile, unusable_upload):  # the frame argument is not hashed
        cache.clear(key, None)


@st.cache_data(max_entries=6, ttl="1h", show_spinner="Preparing the data…", hash_funcs=CONFIG_HASH)
def prepared_data(data_key: str, spec: DataSpec, _frame: pd.DataFrame) -> PreparedData:
    """``prepare(frame, spec)`` keyed by the data key and the spec."""
    return prepare(_frame, spec)


@st.cache_data(max_entries=6, ttl="1h")
def row_norms(data_key: str, spec_json: str, _x: np.ndarray) -> np.ndarray:
    """L2 norm of every prepared row (for the Data page's distribution plot)."""
    return np.linalg.norm(_x, axis=1)


@st.cache_data(max_entries=6, ttl="1h", show_spinner="Reading the columns…")
def table_profile(data_key: str, _frame: pd.DataFrame) -> pd.DataFrame:
    """What each column holds (``engine.data.profile.column_profile``), for the Data page's controls."""
    from engine.data.profile import column_profile

    return column_profile(_frame)


@st.cache_data(max_entries=8, ttl="1h", show_spinner="Suggesting columns…")
def upload_suggestion(data_key: str, _frame: pd.DataFrame):
    """Starting point for an uploaded table and why each other column is left out
    (``engine.data.profile.suggestion``): numeric columns and text columns with few levels as features (levels
    flagged as read from the data), no identifiers, mostly-missing or near-constant columns, no target, rows with a
    missing value dropped, 'scaled'."""
    from engine.data.profile import suggestion

    return suggestion(_frame, profile=table_profile(data_key, _frame))


def default_upload_spec(data_key: str, _frame: pd.DataFrame) -> DataSpec:
    """The spec of :func:`upload_suggestion`."""
    return upload_suggestion(data_key, _frame).spec


@st.cache_data(max_entries=64, ttl="1h", show_spinner=False)
def column_levels(data_key: str, column: str, _frame: pd.DataFrame) -> dict[str, int]:
    """Every level of a column with its count, most frequent first (``engine.data.profile.level_counts``)."""
    from engine.data.profile import level_counts

    return level_counts(_frame[column])


@st.cache_data(max_entries=16, ttl="1h", show_spinner=False)
def rows_kept(data_key: str, spec_json: str, _frame: pd.DataFrame):
    """The rows a spec's missing-value rules keep and what each dropping column costs
    (``engine.data.checks.drop_impact``)."""
    from engine.data.checks import drop_impact

    return drop_impact(_frame, DataSpec.from_json(spec_json))


@st.cache_data(max_entries=8, ttl="1h", show_spinner=False)
def unusable_upload(data_key: str, _frame: pd.DataFrame) -> str | None:
    """Why no choice in the app can make the table usable, or None (``engine.data.profile.unusable``)."""
    from engine.data.profile import unusable

    return unusable(_frame, table_profile(data_key, _frame))


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
        # A workshop participant's session holds no bytes: the room shares the facilitator's upload (ui.room).
        content = state.upload_bytes if state.upload_bytes is not None else shared_upload(state.upload_fingerprint)
        if content is None or state.upload_fingerprint is None:
            return None
        return uploaded_table(state.upload_fingerprint, state.upload_name or "upload.csv", content), None
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
    prepared = prepared_data(key, spec, frame)
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


# ------------------------------------------------------------- Theorem 1 (Feasibility page): keyed by the numbers only

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
def feasibility_click_grid(
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


# ------------------------------------------------------------------------------ Mechanisms and Tradeoffs pages
@st.cache_data(max_entries=16, ttl="1h", show_spinner=False, hash_funcs=CONFIG_HASH)
def sweep_reference_point(fingerprint: str, sweep: SweepConfig, mechanism: RecordMechanism, _prepared: PreparedData,
                          _workers: int = 1) -> PointAnalysis:
    """A mechanism outside the grid (the non-DP baseline) on the sweep's own rows and seeds
    (``engine.sweeps.analyse_reference``), its releases on ``_workers`` processes (the result does not depend on
    it, so it is not part of the cache key)."""
    from engine.sweeps import analyse_reference

    return analyse_reference(_prepared, sweep, mechanism, workers=_workers)


@st.cache_data(max_entries=32, ttl="1h", show_spinner="Timing one cell to estimate the sweep's duration…",
               hash_funcs=CONFIG_HASH)
def sweep_plan(fingerprint: str, sweeps: tuple[SweepConfig, ...], workers: int,
               _prepared: PreparedData) -> tuple[int, float]:
    """Worker processes and estimated wall time of the sweeps (``engine.sweeps.plan_sweeps``: one timed cell each)."""
    from engine.sweeps import plan_sweeps

    return plan_sweeps(_prepared, list(sweeps), workers)


@st.cache_data(max_entries=64, ttl="2h", show_spinner=False, hash_funcs=CONFIG_HASH)
def tradeoff_curves(mechanisms: tuple[RecordMechanism, ...], distance: float) -> list[TradeoffCurve]:
    """Hypothesis-testing curves (``engine.attacks.distinguishing.tradeoff_curve``) of configured mechanisms."""
    from engine.attacks.distinguishing import tradeoff_curve

    return [tradeoff_curve(m, distance=distance) for m in mechanisms]


@st.cache_data(max_entries=32, ttl="2h", show_spinner=False, hash_funcs=CONFIG_HASH)
def noise_profile(mechanism: RecordMechanism, d: int) -> NoiseProfile | None:
    """ε against δ at the mechanism's fixed noise (``RecordMechanism.noise_profile``; None when it offers none)."""
    return mechanism.noise_profile(d)


@st.cache_data(max_entries=16, ttl="1h", show_spinner=False, hash_funcs=CONFIG_HASH)
def distance_recovery(fingerprint: str, mechanism: RecordMechanism, seed: int, _x: np.ndarray, _z: np.ndarray,
                      pairs: int = 400) -> pd.DataFrame | None:
    """Distances between records estimated from a release (``RecordMechanism.distance_recovery``; the JL release's
    Algorithm 2), the pairs drawn with a stream spawned from the run's seed; None when the mechanism offers none."""
    rng = np.random.default_rng(spawn_seeds(seed, 4)[3])
    out = mechanism.distance_recovery(_x, _z, rng=rng, pairs=pairs)
    return None if out is None else pd.DataFrame(out)


# ------------------------------------------------------------------------------------------------- Per-record page
@st.cache_data(max_entries=32, ttl="2h", show_spinner=False, hash_funcs=CONFIG_HASH)
def calibrated_sum_mechanisms(
    mechanisms: tuple[SumMechanism, ...], target: float, q_ref: float, by: Literal["sd", "relative_sd", "half_width"]
) -> list[dict[str, Any]]:
    """Each sum mechanism with its noise parameter solved for the same accuracy (``calibrate_accuracy``; ours), as
    the configurations' dicts the session keeps."""
    from engine.per_record.calibration import calibrate_accuracy

    return [calibrate_accuracy(mechanism, target, q_ref, by=by).to_dict() for mechanism in mechanisms]


@st.cache_data(max_entries=32, ttl="2h", show_spinner=False, hash_funcs=CONFIG_HASH)
def policy_curves_table(mechanisms: tuple[SumMechanism, ...], x_grid: tuple[float, ...],
                        unit: Literal["native", "rho", "epsilon"]) -> pd.DataFrame:
    """Long table of policy curves in ONE unit (``engine.per_record.losses.policy_curves``)."""
    from engine.per_record.losses import policy_curves

    return policy_curves(list(mechanisms), np.asarray(x_grid), unit=unit, names=[m.LABEL for m in mechanisms])


@st.cache_data(max_entries=16, ttl="1h", show_spinner=False, hash_funcs=CONFIG_HASH)
def column_losses(
    data_key: str,
    value: str,
    mechanism: SumMechanism,
    unit: Literal["native", "rho", "epsilon"],
    threshold: float | None,
    id_columns: tuple[str, ...],
    _frame: pd.DataFrame,
):
    """Each record's loss when the column ``value`` is summed (``engine.per_record.losses.record_losses``)."""
    from engine.per_record.losses import record_losses

    return record_losses(_frame, value, mechanism, unit=unit, threshold=threshold, id_columns=list(id_columns))


@st.cache_data(max_entries=16, ttl="1h", show_spinner=False, hash_funcs=CONFIG_HASH)
def cell_sums_release(
    data_key: str,
    value: str,
    by: tuple[str, ...],
    mechanism: SumMechanism,
    seed: int,
    id_columns: tuple[str, ...],
    _frame: pd.DataFrame,
    levels: dict[str, list[Any]] | None = None,
):
    """Per-cell sums of ``value`` over the ``by`` columns released once (``engine.per_record.cells``), over the cell
    universe of the declared public levels (``levels``: column → list of levels; None or a missing column =
    categorical categories or levels read from the data, which the release's notes flag)."""
    from engine.per_record.cells import release_cells

    return release_cells(_frame, value, list(by), mechanism, rng=make_rng(seed), id_columns=list(id_columns),
                         levels=levels)


@st.cache_data(max_entries=16, ttl="1h", show_spinner=False)
def tdp_losses(fingerprint: str, epsilon: float, delta: float, b: float, _prepared: PreparedData):
    """Targeted DP's per-record losses at each record's nearest-neighbour distance and at t = 2."""
    from engine.per_record.tdp_losses import tdp_record_losses

    return tdp_record_losses(_prepared, epsilon, delta, b)


@st.cache_data(max_entries=16, ttl="2h", show_spinner=False)
def tdp_policy_curve(epsilon: float, delta: float, b: float, points: int = 801):
    """The TDP policy ε(t) on a grid of distances t in [0, 2] (``engine.per_record.tdp_losses.tdp_policy``)."""
    from engine.per_record.tdp_losses import tdp_policy

    return tdp_policy(np.linspace(0.0, 2.0, points), epsilon, delta, b)


# --------------------------------------------------------------------------------------------------- Workshop page
@st.cache_data(max_entries=16, ttl="1h", show_spinner=False, hash_funcs=CONFIG_HASH)
def workshop_comparison(fingerprint: str, workshop: Workshop, d: int | None, _x: np.ndarray | None):
    """The pinned candidates' comparison (``engine.workshop.comparison_rows``) on the prepared rows ``_x`` (keyed by
    the data's fingerprint; None without data: no per-record loss at the nearest distinct row); evidence measured on
    data with another fingerprint is flagged."""
    from engine.workshop import comparison_rows

    return comparison_rows(workshop.pinned, x=_x, chosen=workshop.chosen, d=d, fingerprint=fingerprint or None)


# ----------------------------------------------------------------------- Public information page (issue 13)
# Count tables are keyed by their data key (``counties-demo``, or the upload's fingerprint plus the chosen columns).
@st.cache_data(max_entries=2, ttl="6h", show_spinner="Generating the synthetic counties-demo table…")
def demo_count_table(name: str) -> CountTable:
    """The synthetic counties-demo count table (``name``: its key, ``COUNTIES_DEMO``)."""
    from engine.public_info.count_table import counties_demo

    return counties_demo()


@st.cache_data(max_entries=4, ttl="1h", show_spinner="Checking the count table…")
def uploaded_count_table(data_key: str, columns_json: str, filename: str, _content: bytes) -> CountTable:
    """The validated table (raises ``DataValidationError`` with the engine's message on a bad file), built from the
    upload parsed within :func:`upload_limits` (:func:`uploaded_table`)."""
    from engine.public_info.count_table import count_table_from_frame

    frame = uploaded_table(data_key, filename, _content)
    return count_table_from_frame(frame, label=filename, **json.loads(columns_json))


@st.cache_data(max_entries=8, ttl="1h")
def default_highlighted_regions(data_key: str, _table: CountTable) -> tuple[str, ...]:
    """Largest, mid-sized and smallest region (``engine.public_info.results.default_highlights``)."""
    from engine.public_info.results import default_highlights

    return default_highlights(_table)


@st.cache_data(max_entries=32, ttl="2h", show_spinner=False, hash_funcs=CONFIG_HASH)
def noise_advice(mechanism: RecordMechanism, d: int) -> str:
    """What reduces this mechanism's noise, read from the mechanism (``engine.comparison.less_noise_advice``)."""
    from engine.comparison import less_noise_advice

    return less_noise_advice(mechanism, d=d)


@st.cache_data(max_entries=16, ttl="2h", show_spinner=False, hash_funcs=CONFIG_HASH)
def suggested_target(fingerprint: str, _prepared: PreparedData, program: ProgramConfig) -> TargetSuggestion:
    """A recommender target between the best rule that uses no data and the non-private program
    (``engine.recommend.suggest_target``), cached by the prepared data's ``fingerprint`` (the used columns and the
    spec: a table's key alone would serve one preparation's suggestion for another)."""
    from engine.recommend import suggest_target

    return suggest_target(_prepared, program)


@st.cache_data(max_entries=64, ttl="2h")
def derive_sensitivity(public: tuple[str, ...], model_json: str, subcounts: bool) -> SensitivityDerivation:
    """Δ_z a release must use, and why (``engine.public_info.dependence.derive_sensitivity``)."""
    from engine.public_info import dependence

    return dependence.derive_sensitivity(public, dependence.DependenceModel.from_json(model_json), subcounts=subcounts)


@st.cache_data(max_entries=64, ttl="2h")
def dependence_summary(study_json: str, periods: int, subcounts: bool, prior: float) -> DependenceSummary:
    """Δ_z, the noise and the guarantee of the study at its first ε (``engine.public_info.results``)."""
    from engine.public_info import results

    return results.dependence_summary(results.CountStudyConfig.from_json(study_json), periods, subcounts, prior)


@st.cache_data(max_entries=32, ttl="2h", show_spinner=False)
def dependence_audit(model_json: str, epsilon: float) -> DependenceAudit:
    """Oracle O6 for the declared model: realised ε with its Δ_z and with the DP sensitivity 1."""
    from engine.public_info import dependence

    return dependence.dependence_audit(dependence.DependenceModel.from_json(model_json), epsilon)


@st.cache_data(max_entries=32, ttl="2h", show_spinner=False)
def gaussian_sensitivity_calculator(inputs_json: str) -> GaussianSensitivityReport:
    """Example 1: the corrected Δ_z and the paper's Eq. 16 value (keyword arguments of the engine function)."""
    from engine.public_info.sensitivity import gaussian_sensitivity_report

    return gaussian_sensitivity_report(**json.loads(inputs_json))


@st.cache_data(max_entries=32, ttl="2h", show_spinner="Computing Δ_z (exact W∞)…")
def binary_sensitivity_calculator(inputs_json: str) -> int:
    """Example 2 / Eq. 35 (keyword arguments of the engine function)."""
    from engine.public_info.sensitivity import binary_sdl_sensitivity

    return binary_sdl_sensitivity(**json.loads(inputs_json))


@st.cache_data(max_entries=16, ttl="2h", show_spinner="Computing Δ_z over (z0, z1)…")
def correlated_sensitivity_grid(n: int, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Figure 4: Δ_z(n, z0, z1) on a steps × steps grid of [0, 1]² (NaN where z0 > z1)."""
    from engine.public_info.sensitivity import correlated_counts_grid

    z = np.linspace(0.0, 1.0, steps)
    return z, correlated_counts_grid(n, z, z)


@st.cache_data(max_entries=64, ttl="2h")
def study_budget_lines(epsilon: float, periods: int) -> list[str]:
    """The per-period and whole-study ε in words (``engine.accounting.composition.study_budget``)."""
    from engine.accounting.composition import study_budget

    return study_budget(epsilon, periods).describe()


@st.cache_data(max_entries=16, ttl="2h", show_spinner="Running the inference demo…")
def inference_demo(demo_json: str, y: int, draws: int, seed: int) -> dict[str, Any]:
    """Exact posterior mean vs Algorithm 1 vs Algorithm 2 (O10), the Bayes risks (O8) and the powers (O9)."""
    from engine.public_info.inference import KAnonymityDemo, power_comparison, two_cell_bayes_risk

    cfg = json.loads(demo_json)
    demo = KAnonymityDemo(n=cfg["n"], k=cfg["k"], epsilon=cfg["epsilon"])
    rng = make_rng(seed)
    alg1 = demo.algorithm1(y, draws, rng=rng)
    alg2 = demo.algorithm2(y, draws, rng=rng)
    return {
        "exact": demo.exact_posterior_mean(y),
        "alg1_mean": float(np.mean(alg1.draws)), "alg1_draws": np.asarray(alg1.draws), "alg1_acceptance": alg1.acceptance,
        "alg2_mean": float(alg2.estimate), "alg2_ess": float(alg2.ess),
        "risk": two_cell_bayes_risk(cfg["n"], 0.3, cfg["epsilon"]),
        "power_laplace": power_comparison(cfg["n"], 0.3, 0.7, epsilon=cfg["epsilon"]),
        "power_gaussian": power_comparison(cfg["n"], 0.3, 0.7, noise="gaussian", sd=2.0 / cfg["epsilon"]),
    }
