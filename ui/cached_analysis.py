"""Cached engine calls of the Mechanisms, Tradeoffs and Per-record pages (dashboard B). A's live in ``ui/cached.py``.

Rules (style guide R11):

* data are keyed by their fingerprint (``PreparedData.fingerprint`` — a hash of the used columns and the spec — or
  the session's data key plus the column names) and passed as underscore arguments, which Streamlit does not hash;
* configurations are passed as their JSON text, seeds explicitly; every decorator sets ``max_entries`` and ``ttl``;
* nothing here computes a number: each function is one ``st.cache_data`` wrapper around an engine call.

Runs that draw progress while they work (a Mechanisms run, the sweeps, the recommender) are not shared caches:
they live in :mod:`ui.runs` and keep their results in the session.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from engine.attacks.distinguishing import TradeoffCurve, tradeoff_curve
from engine.data.preparation import PreparedData
from engine.mechanisms import mechanism_from_dict
from engine.rng import make_rng, spawn_seeds


@st.cache_data(max_entries=16, ttl="1h", show_spinner=False)
def reference_point(fingerprint: str, sweep_json: str, mechanism_json: str, _prepared: PreparedData):
    """A mechanism outside the grid (k-anonymity) on the sweep's own rows and seeds
    (``engine.sweeps.analyse_reference``)."""
    from engine.sweeps import SweepConfig, analyse_reference

    return analyse_reference(_prepared, SweepConfig.from_json(sweep_json),
                             mechanism_from_dict(json.loads(mechanism_json)))


@st.cache_data(max_entries=32, ttl="1h", show_spinner="Timing one cell to estimate the sweep's duration…")
def sweep_estimate(fingerprint: str, sweep_jsons: tuple[str, ...], workers: int, _prepared: PreparedData) -> float:
    """Estimated wall time of the sweeps (``engine.sweeps.estimate_seconds``: one timed cell each)."""
    from engine.sweeps import SweepConfig, estimate_seconds

    return estimate_seconds(_prepared, [SweepConfig.from_json(j) for j in sweep_jsons], workers)


@st.cache_data(max_entries=64, ttl="2h", show_spinner=False)
def tradeoff_curves(mechanism_jsons: tuple[str, ...], distance: float) -> list[TradeoffCurve]:
    """Hypothesis-testing curves (``engine.attacks.distinguishing.tradeoff_curve``) of configured mechanisms."""
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
    from engine.mechanisms.jl_laplace import distance_recovery_sample

    mechanism = mechanism_from_dict(json.loads(mechanism_json))
    rng = np.random.default_rng(spawn_seeds(seed, 4)[3])
    return pd.DataFrame(distance_recovery_sample(_x, _z, mechanism.noise_variance, mechanism.k, rng=rng, pairs=pairs))


# ------------------------------------------------------------------------------------------------- per-record
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
def policy_table(mechanism_dicts_json: str, x_grid: tuple[float, ...], unit: str) -> pd.DataFrame:
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
def cell_release(
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


# ------------------------------------------------------------------------------------------------- workshop
@st.cache_data(max_entries=16, ttl="1h", show_spinner=False)
def workshop_comparison(fingerprint: str, workshop_json: str, d: int | None, _x: np.ndarray | None):
    """The pinned candidates' comparison (``engine.workshop.comparison_rows``) on the prepared rows ``_x`` (keyed by
    the data's fingerprint; None without data: no per-record loss at the nearest distinct row); evidence measured on
    data with another fingerprint is flagged."""
    from engine.workshop import Workshop, comparison_rows

    workshop = Workshop.from_json(workshop_json)
    return comparison_rows(workshop.pinned, x=_x, chosen=workshop.chosen, d=d, fingerprint=fingerprint or None)
