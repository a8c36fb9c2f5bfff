"""Every ``st.cache_data`` wrapper of the app: one module, a section per page (style guide R11).

Rules (R11):

* data are keyed by a fingerprint computed once and passed as underscore arguments, which Streamlit does not hash:
  ``PreparedData.fingerprint`` (a hash of the used columns and the spec), the session's data key plus the column
  names, or a count table's key (``counties-demo``, or the upload's keyed SHA-256 plus the chosen columns);
* configurations are passed as their JSON text, seeds explicitly; every decorator sets ``max_entries`` and ``ttl``;
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st

from engine.data.demos import DemoDataset, load_demo
from engine.data.preparation import DataSpec, PreparedData, load_table, prepare
from engine.fingerprint import keyed_digest
from engine.rng import make_rng, spawn_seeds
from engine.theory import feasibility
from ui.figures.feasibility import FeasibilitySurface
from ui.state import StudioState

if TYPE_CHECKING:
    from engine.attacks.distinguishing import TradeoffCurve
    from engine.public_info.count_table import CountTable
    from engine.public_info.dependence import DependenceAudit, SensitivityDerivation
    from engine.public_info.results import DependenceSummary
    from engine.public_info.sensitivity import GaussianSensitivityReport

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
@st.cache_data(max_entries=16, ttl="1h", show_spinner=False)
def sweep_reference_point(fingerprint: str, sweep_json: str, mechanism_json: str, _prepared: PreparedData,
                          _workers: int = 1):
    """A mechanism outside the grid (k-anonymity) on the sweep's own rows and seeds
    (``engine.sweeps.analyse_reference``), its releases on ``_workers`` processes (the result does not depend on
    it, so it is not part of the cache key)."""
    from engine.mechanisms import mechanism_from_dict
    from engine.sweeps import SweepConfig, analyse_reference

    return analyse_reference(_prepared, SweepConfig.from_json(sweep_json),
                             mechanism_from_dict(json.loads(mechanism_json)), workers=_workers)


@st.cache_data(max_entries=32, ttl="1h", show_spinner="Timing one cell to estimate the sweep's duration…")
def sweep_plan(fingerprint: str, sweep_jsons: tuple[str, ...], workers: int, _prepared: PreparedData) -> tuple[int, float]:
    """Worker processes and estimated wall time of the sweeps (``engine.sweeps.plan_sweeps``: one timed cell each)."""
    from engine.sweeps import SweepConfig, plan_sweeps

    return plan_sweeps(_prepared, [SweepConfig.from_json(j) for j in sweep_jsons], workers)


@st.cache_data(max_entries=64, ttl="2h", show_spinner=False)
def tradeoff_curves(mechanism_jsons: tuple[str, ...], distance: float) -> list[TradeoffCurve]:
    """Hypothesis-testing curves (``engine.attacks.distinguishing.tradeoff_curve``) of configured mechanisms."""
    from engine.attacks.distinguishing import tradeoff_curve
    from engine.mechanisms import mechanism_from_dict

    return [tradeoff_curve(mechanism_from_dict(json.loads(m)), distance=distance) for m in mechanism_jsons]


# ------------------------------------------------------------------------------------------ JL + Laplace (issue 5)
@st.cache_data(max_entries=32, ttl="2h", show_spinner=False)
def jl_delta_fail_curves(k: int, d: int, b: float, element_bound: float, laplace_scale: float,
                         eps_max: float, points: int = 80) -> dict[str, dict[str, list[float]]]:
    """ε–δ_fail curves at the fixed Laplace scale, row-wise (change bound ``b``) and element-wise
    (``element_bound``): :func:`engine.mechanisms.jl_laplace.delta_fail_curve` on ε from eps_max/100 to eps_max."""
    from engine.mechanisms.jl_laplace import delta_fail_curve

    eps = np.geomspace(eps_max / 100.0, eps_max, points)
    out = {}
    for relation in ("row", "element"):
        curve = delta_fail_curve(eps, laplace_scale=laplace_scale, k=k, relation=relation, d=d, b=b,
                                 element_bound=element_bound)
        out[relation] = {key: np.asarray(v, dtype=float).tolist() for key, v in curve.items()}
    return out


@st.cache_data(max_entries=16, ttl="1h", show_spinner=False)
def jl_distance_recovery(fingerprint: str, mechanism_json: str, seed: int, _x: np.ndarray, _z: np.ndarray,
                         pairs: int = 400) -> pd.DataFrame:
    """Algorithm 2 on random pairs of records (:func:`engine.mechanisms.jl_laplace.distance_recovery_sample`),
    the pairs drawn with a stream spawned from the run's seed."""
    from engine.mechanisms import mechanism_from_dict
    from engine.mechanisms.jl_laplace import distance_recovery_sample

    mechanism = mechanism_from_dict(json.loads(mechanism_json))
    rng = np.random.default_rng(spawn_seeds(seed, 4)[3])
    return pd.DataFrame(distance_recovery_sample(_x, _z, mechanism.noise_variance, mechanism.k, rng=rng, pairs=pairs))


# ------------------------------------------------------------------------------------------------- Per-record page
@st.cache_data(max_entries=32, ttl="2h", show_spinner=False)
def calibrated_sum_mechanisms(
    mechanism_jsons: tuple[str, ...], target: float, q_ref: float, by: str
) -> list[dict[str, Any]]:
    """Each sum mechanism with its noise parameter solved for the same accuracy (``calibrate_accuracy``; ours)."""
    from engine.per_record import sum_mechanism_from_dict
    from engine.per_record.calibration import calibrate_accuracy

    out = []
    for text in mechanism_jsons:
        mechanism = sum_mechanism_from_dict(json.loads(text))
        out.append(calibrate_accuracy(mechanism, target, q_ref, by=by).to_dict())
    return out


@st.cache_data(max_entries=32, ttl="2h", show_spinner=False)
def policy_curves_table(mechanism_dicts_json: str, x_grid: tuple[float, ...], unit: str) -> pd.DataFrame:
    """Long table of policy curves in ONE unit (``engine.per_record.losses.policy_curves``)."""
    from engine.per_record import sum_mechanism_from_dict
    from engine.per_record.losses import policy_curves

    mechanisms = [sum_mechanism_from_dict(d) for d in json.loads(mechanism_dicts_json)]
    return policy_curves(mechanisms, np.asarray(x_grid), unit=unit, names=[m.LABEL for m in mechanisms])


@st.cache_data(max_entries=16, ttl="1h", show_spinner=False)
def column_losses(
    data_key: str,
    value: str,
    mechanism_json: str,
    unit: str,
    threshold: float | None,
    id_columns: tuple[str, ...],
    _frame: pd.DataFrame,
):
    """Each record's loss when the column ``value`` is summed (``engine.per_record.losses.record_losses``)."""
    from engine.per_record import sum_mechanism_from_dict
    from engine.per_record.losses import record_losses

    mechanism = sum_mechanism_from_dict(json.loads(mechanism_json))
    return record_losses(_frame, value, mechanism, unit=unit, threshold=threshold, id_columns=list(id_columns))


@st.cache_data(max_entries=16, ttl="1h", show_spinner=False)
def cell_sums_release(
    data_key: str,
    value: str,
    by: tuple[str, ...],
    mechanism_json: str,
    seed: int,
    id_columns: tuple[str, ...],
    _frame: pd.DataFrame,
    levels_json: str = "null",
):
    """Per-cell sums of ``value`` over the ``by`` columns released once (``engine.per_record.cells``), over the cell
    universe of the declared public levels (``levels_json``: JSON of column → list of levels; ``"null"`` or a
    missing column = categorical categories or levels read from the data, which the release's notes flag)."""
    from engine.per_record import sum_mechanism_from_dict
    from engine.per_record.cells import release_cells

    mechanism = sum_mechanism_from_dict(json.loads(mechanism_json))
    levels = json.loads(levels_json) or None
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
@st.cache_data(max_entries=16, ttl="1h", show_spinner=False)
def workshop_comparison(fingerprint: str, workshop_json: str, d: int | None, _x: np.ndarray | None):
    """The pinned candidates' comparison (``engine.workshop.comparison_rows``) on the prepared rows ``_x`` (keyed by
    the data's fingerprint; None without data: no per-record loss at the nearest distinct row); evidence measured on
    data with another fingerprint is flagged."""
    from engine.workshop import Workshop, comparison_rows

    workshop = Workshop.from_json(workshop_json)
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
    """The validated table (raises ``DataValidationError`` with the engine's message on a bad file)."""
    from engine.public_info.count_table import load_count_table

    return load_count_table(_content, filename=filename, **json.loads(columns_json))


@st.cache_data(max_entries=8, ttl="1h")
def default_highlighted_regions(data_key: str, _table: CountTable) -> tuple[str, ...]:
    """Largest, mid-sized and smallest region (``engine.public_info.results.default_highlights``)."""
    from engine.public_info.results import default_highlights

    return default_highlights(_table)


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
    """The per-period and whole-study ε in words (``engine.public_info.composition.study_budget``)."""
    from engine.public_info.composition import study_budget

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
