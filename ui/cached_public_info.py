"""Cached adapters of the "Public information" page (issue 13). Every number comes from ``engine.public_info``.

Rules (style guide R11): tables are keyed by their data key (``counties-demo`` or the upload's SHA-256 plus the
chosen columns) and passed as underscore arguments; configurations are passed as JSON text; every decorator sets
``max_entries`` and ``ttl``. The study itself (:func:`run_study`) is not cached: it reports progress while it runs
and keeps its finished cells when stopped; the page keeps the result in the session state.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from engine.progress import CancelToken, Progress
from engine.public_info.composition import condition_on_public, study_budget
from engine.public_info.count_release import release_guarantee
from engine.public_info.count_table import COUNTIES_DEMO, CountTable, counties_demo, load_count_table
from engine.public_info.dependence import DependenceAudit, DependenceModel, dependence_audit
from engine.public_info.discrete_laplace import dl_mean_abs, dl_variance
from engine.public_info.guarantee import TPGuarantee
from engine.public_info.inference import KAnonymityDemo, power_comparison, two_cell_bayes_risk
from engine.public_info.results import (
    CountStudyConfig,
    CountStudyResults,
    build_count_study,
    default_highlights,
)
from engine.public_info.semantics import posterior_band
from engine.public_info.sensitivity import (
    GaussianSensitivityReport,
    binary_sdl_sensitivity,
    correlated_counts_grid,
    gaussian_sensitivity_report,
)
from engine.rng import make_rng

__all__ = ["demo_table", "uploaded_count_table", "highlights", "dependence_summary", "heatmap", "budget_summary",
           "release_sensitivity", "audit", "gaussian_calculator", "binary_calculator",
           "inference_demo", "run_study", "cancel_token", "stop_run", "forget_run", "DependenceSummary"]


@st.cache_data(max_entries=2, ttl="6h", show_spinner="Generating the synthetic counties-demo table…")
def demo_table(name: str = COUNTIES_DEMO) -> CountTable:
    return counties_demo()


@st.cache_data(max_entries=4, ttl="1h", show_spinner="Checking the count table…")
def uploaded_count_table(data_key: str, columns_json: str, filename: str, _content: bytes) -> CountTable:
    """The validated table (raises ``DataValidationError`` with the engine's message on a bad file)."""
    return load_count_table(_content, filename=filename, **json.loads(columns_json))


@st.cache_data(max_entries=8, ttl="1h")
def highlights(data_key: str, _table: CountTable) -> tuple[str, ...]:
    return default_highlights(_table)


@dataclass(frozen=True)
class DependenceSummary:
    """What the page shows about Δ_z, the noise and the guarantee for one configuration."""

    correlated_delta: int | None  # Δ_z of one count under the (n, z0, z1) family, or None for the fixed model
    release_delta: float  # Δ_z the releases use (the study's sensitivity)
    noise: tuple[tuple[str, float, float, float], ...]  # (method label, DL rate a, sd, E|noise|)
    guarantee: TPGuarantee
    conditioned: TPGuarantee
    band: tuple[float, float]


@st.cache_data(max_entries=64, ttl="2h")
def release_sensitivity(model_json: str, subcounts: bool) -> float:
    """Δ_z a release must use under the declared model (engine: DependenceModel.release_sensitivity)."""
    return DependenceModel.from_json(model_json).release_sensitivity(subcounts=subcounts)


@st.cache_data(max_entries=64, ttl="2h")
def dependence_summary(study_json: str, periods: int, subcounts: bool, prior: float) -> DependenceSummary:
    study = CountStudyConfig.from_json(study_json)
    model = study.dependence
    corr = model.count_sensitivity if model.kind == "correlated" else None
    eps = study.epsilons[0]
    noise = []
    for key in study.methods:
        cfg = study.release_config(key, eps)
        a = cfg.noise_rate
        noise.append((cfg.label, a, float(np.sqrt(dl_variance(a))), dl_mean_abs(a)))
    guarantee = release_guarantee(study.release_config(study.methods[0], eps), periods, subcounts)
    lo, hi = posterior_band(eps, prior)
    return DependenceSummary(corr, study.sensitivity, tuple(noise), guarantee, condition_on_public(guarantee),
                             (lo, hi))


@st.cache_data(max_entries=32, ttl="2h", show_spinner=False)
def audit(model_json: str, epsilon: float) -> DependenceAudit:
    """Oracle O6 for the declared model: realised ε with its Δ_z and with the DP sensitivity 1."""
    return dependence_audit(DependenceModel.from_json(model_json), epsilon)


@st.cache_data(max_entries=32, ttl="2h", show_spinner=False)
def gaussian_calculator(inputs_json: str) -> GaussianSensitivityReport:
    """Example 1: the corrected Δ_z and the paper's Eq. 16 value (keyword arguments of the engine function)."""
    return gaussian_sensitivity_report(**json.loads(inputs_json))


@st.cache_data(max_entries=32, ttl="2h", show_spinner="Computing Δ_z (exact W∞)…")
def binary_calculator(inputs_json: str) -> int:
    """Example 2 / Eq. 35 (keyword arguments of the engine function)."""
    return binary_sdl_sensitivity(**json.loads(inputs_json))


@st.cache_data(max_entries=16, ttl="2h", show_spinner="Computing Δ_z over (z0, z1)…")
def heatmap(n: int, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Figure 4: Δ_z(n, z0, z1) on a steps × steps grid of [0, 1]² (NaN where z0 > z1)."""
    z = np.linspace(0.0, 1.0, steps)
    return z, correlated_counts_grid(n, z, z)


@st.cache_data(max_entries=64, ttl="2h")
def budget_summary(epsilon: float, periods: int) -> list[str]:
    return study_budget(epsilon, periods).describe()


@st.cache_data(max_entries=16, ttl="2h", show_spinner="Running the inference demo…")
def inference_demo(demo_json: str, y: int, draws: int, seed: int) -> dict[str, Any]:
    """Exact posterior mean vs Algorithm 1 vs Algorithm 2 (O10), the Bayes risks (O8) and the powers (O9)."""
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


#: Cancel tokens of running studies, by run id (tokens hold a threading.Event, which session state cannot pickle).
_TOKENS: dict[str, CancelToken] = {}


def cancel_token(run_id: str) -> CancelToken:
    return _TOKENS.setdefault(run_id, CancelToken())


def stop_run(run_id: str) -> None:
    """``on_click`` of the Stop button: cancel the run (it stops after the period that is running)."""
    cancel_token(run_id).cancel()


def forget_run(run_id: str) -> None:
    _TOKENS.pop(run_id, None)


def run_study(
    table: CountTable,
    config: CountStudyConfig,
    *,
    seed: int | None,
    on_progress: Callable[[Progress], None] | None = None,
    on_cell: Callable[[CountStudyResults], None] | None = None,
    cancel: CancelToken | None = None,
) -> CountStudyResults:
    """``build_count_study`` one (method, ε) cell at a time with ONE generator, so the numbers are those of a single
    ``build_count_study(table, config, rng=make_rng(seed))`` call; ``on_cell`` receives the finished cells so far
    (kept when the run is stopped)."""
    rng = make_rng(seed)
    names = config.highlight or default_highlights(table)
    cells: list = []
    units = len(config.methods) * len(config.epsilons) * len(table.periods)
    first: CountStudyResults | None = None
    for key in config.methods:
        for eps in config.epsilons:
            offset = len(cells) * len(table.periods)

            def relay(p: Progress, offset=offset) -> None:
                if on_progress is not None:
                    on_progress(Progress(offset + p.done, units, p.message))

            one = dataclasses.replace(config, methods=(key,), epsilons=(eps,), highlight=names)
            part = build_count_study(table, one, rng=rng, progress=relay, cancel=cancel)
            first = first or part
            cells.extend(part.cells)
            merged = dataclasses.replace(first, config=config, cells=tuple(cells))
            if on_cell is not None:
                on_cell(merged)
    assert first is not None
    return dataclasses.replace(first, config=config, cells=tuple(cells))


def release_config_dicts(config: CountStudyConfig) -> list[dict[str, Any]]:
    """The CountReleaseConfig of every (method, ε) cell, for the decision record."""
    return [config.release_config(m, e).to_dict() for m in config.methods for e in config.epsilons]

