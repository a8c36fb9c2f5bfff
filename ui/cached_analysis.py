"""Cached adapters of the Mechanisms, Tradeoffs and Per-record pages (dashboard B). A's live in ``ui/cached.py``.

Rules (style guide R11):

* data are keyed by their fingerprint (``PreparedData.fingerprint`` — a hash of the used columns and the spec — or
  the session's data key plus the column names) and passed as underscore arguments, which Streamlit does not hash;
* configurations are passed as their JSON text, seeds explicitly; every decorator sets ``max_entries`` and ``ttl``;
* nothing here computes a privacy quantity: every number comes from ``engine/``. These functions only call the
  engine in the right order and bundle the results for a page.

Sweeps are not wrapped in ``st.cache_data``: they report progress while they run (a cached function must not draw),
and :func:`engine.sweeps.run_sweep` keeps its own cache keyed by (data fingerprint, configuration); the page keeps
the finished result in the session state.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from engine.attacks.attribute_inference import AttributeInferenceResult, attribute_inference, holdout_split
from engine.attacks.distinguishing import DistinguishingResult, TradeoffCurve, distinguishing, tradeoff_curve
from engine.attacks.singling_out import SinglingOutResult, singling_out
from engine.data.preparation import DataSpec, PreparedData
from engine.evaluation.programs import PROGRAM_KINDS, ProgramConfig, ProgramResult, evaluate_program
from engine.mechanisms import mechanism_from_dict
from engine.release import ReleaseConfig, cli_command, release_summary, run_release
from engine.rng import make_rng, spawn_seeds


@dataclass(frozen=True)
class MechanismRun:
    """One release of the session's data with one mechanism, and what it costs and buys.

    ``value`` is the release on its output scale (``details["output_scale"]``); ``measured_sd`` is the standard
    deviation over rows of (value / output_scale − x) per feature, i.e. the distortion this run actually added.
    Attribute inference needs a control group that was NOT released, so it is measured on a second, evaluation
    release of the same mechanism that leaves out a holdout (``n_holdout`` rows); everything else is measured on
    the downloadable release of all rows.
    """

    mechanism: dict[str, Any]
    kind: str
    label: str
    value: np.ndarray
    details: dict[str, Any]
    headline: str
    describe: tuple[str, ...]
    implied_headline: str | None
    is_dp: bool
    measured_sd: np.ndarray
    program: ProgramResult | None
    singling_out: SinglingOutResult
    attribute_inference: AttributeInferenceResult | None
    n_holdout: int
    distinguishing: DistinguishingResult
    summary: dict[str, Any]
    seconds: float
    #: JL release only: original records the attacks' adversary knows (it never sees the secret projection P).
    n_known: int = 0


#: Largest ε2 the default split gives Algorithm 1's covariance step (its classical Gaussian needs ε2 < 1).
EPS2_CAP = 0.9999


def default_split(epsilon: float, delta: float) -> dict[str, float]:
    """The dashboard's default budget split of a candidate (ε, δ) for Algorithm 1 (a UI preset, not privacy math).

    ε2 = min(ε/4, 0.9999) (the covariance step's classical Gaussian needs ε2 < 1), ε1 = ε − ε2; δ1 = 2δ/3,
    δ2 = δ/3 as in the paper. For ε ≤ 4 this is ε1 = 3ε/4; above, ε1 takes the rest so the whole candidate
    budget is spent.

    >>> default_split(1.0, 3e-4)["epsilon1"], default_split(8.0, 3e-4)["epsilon2"]
    (0.75, 0.9999)
    """
    eps2 = min(epsilon / 4.0, EPS2_CAP)
    return {"epsilon1": epsilon - eps2, "epsilon2": eps2, "delta1": 2.0 * delta / 3.0, "delta2": delta / 3.0}


def program_config(program: dict[str, Any] | None, demo_program: str | None) -> ProgramConfig | None:
    """The session's program: the Data page's choice, else the demo's program, else None (no outcome to score)."""
    if program is not None:
        return ProgramConfig.from_dict(program)
    if demo_program in PROGRAM_KINDS:
        return ProgramConfig(kind=demo_program)
    return None


@st.cache_data(max_entries=16, ttl="1h", show_spinner=False)
def nonprivate_program(fingerprint: str, program_json: str, _prepared: PreparedData) -> ProgramResult:
    """The program scored on the original prepared data (the non-private baseline)."""
    return evaluate_program(
        _prepared.x, _prepared.y, ProgramConfig.from_json(program_json), extras=_prepared.extras
    )


@st.cache_data(max_entries=24, ttl="1h", show_spinner=False)
def mechanism_run(
    fingerprint: str,
    spec_json: str,
    mechanism_json: str,
    program_json: str | None,
    seed: int,
    user_seed: bool,
    dataset: str | None,
    _frame: pd.DataFrame,
) -> MechanismRun:
    """Release the data with the mechanism (``engine.release.run_release``, as the CLI does), then evaluate it.

    The release uses ``make_rng(seed)``, exactly what ``python -m engine privatize`` does with that seed; the
    evaluation (holdout, attack randomness) uses independent streams spawned from the same seed.
    ``user_seed`` says whether the seed was typed by the user (then it is recorded and the output is labelled
    "not private") or drawn from OS entropy for this run (then it is never shown or exported).
    """
    started = time.perf_counter()
    mechanism = mechanism_from_dict(json.loads(mechanism_json))
    config = ReleaseConfig.of(DataSpec.from_json(spec_json), mechanism, seed=seed if user_seed else None,
                              dataset=dataset)
    prepared, release = run_release(_frame, config, rng=make_rng(seed))
    value = np.asarray(release.value, dtype=float)
    scale = float(release.details.get("output_scale", 1.0) or 1.0)
    projected = value.shape[1] != prepared.d  # the JL release Z has k columns: no per-feature comparison
    measured_sd = np.full(prepared.d, np.nan) if projected else np.std(value / scale - prepared.x, axis=0, ddof=1)

    eval_seeds = spawn_seeds(seed, 3)
    program = None
    if program_json is not None and prepared.y is not None:
        program = evaluate_program(value, prepared.y, ProgramConfig.from_json(program_json), extras=prepared.extras)
    n_known = 0
    if projected:
        # The attacker has Z and the public description, not P; it knows a few original records (engine.sweeps'
        # JL adversary): X̂ = Z W from those records, then the usual attacks on X̂.
        from engine.mechanisms.jl_laplace import known_record_reconstruction

        n_known = min(2 * int(mechanism.k), prepared.n - 1)

        def attack_view(z: np.ndarray, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
            idx = rng.choice(x.shape[0], size=min(n_known, x.shape[0] - 1), replace=False)
            return known_record_reconstruction(z, idx, x[idx])

        so = singling_out(prepared.x, attack_view(value, prepared.x, np.random.default_rng(eval_seeds[2])))
    else:
        so = singling_out(prepared.x, value, release_scale=scale)

    ai = None
    n_holdout = 0
    if prepared.d >= 2 and prepared.n >= 10:
        rng_eval = np.random.default_rng(eval_seeds[0])
        rel, hold = holdout_split(prepared.n, rng=rng_eval)
        eval_release = mechanism.release(prepared.x[rel], rng=rng_eval)
        eval_scale = float(eval_release.details.get("output_scale", 1.0) or 1.0)
        eval_value = eval_release.value
        if projected:
            eval_value, eval_scale = attack_view(eval_value, prepared.x[rel], rng_eval), 1.0
        ai = attribute_inference(
            prepared.x[rel], eval_value, prepared.x[hold], release_scale=eval_scale,
            rng=np.random.default_rng(eval_seeds[1]),
        )
        n_holdout = int(hold.size)
    dist = distinguishing(mechanism)

    guarantee = release.guarantee
    implied = guarantee.implied_dp()
    is_dp = bool(getattr(guarantee, "is_differentially_private", True))
    summary = release_summary(prepared, release, config, seconds=time.perf_counter() - started)
    if not user_seed:
        summary["seed"] = None
    summary["program"] = None if program is None else {
        "kind": program.kind, "headline_metric": program.headline_metric, "metrics": dict(program.metrics),
    }
    summary["protection"] = {
        "singling_out": float(so.protection),
        "attribute_inference": None if ai is None else float(ai.protection),
        "distinguishing": float(dist.protection),
        "distinguishing_paper_D": float(dist.expected_loss_score),
    }
    if projected:
        summary["protection"]["adversary"] = (
            f"knows {n_known} original records, not the secret projection P (known-record reconstruction)"
        )
    summary["cli_command"] = cli_command("release-config.json", input_file=None if dataset else "your-data.csv")
    return MechanismRun(
        mechanism=mechanism.to_dict(),
        kind=type(mechanism).KIND,
        label=type(mechanism).LABEL,
        value=value,
        details=dict(release.details),
        headline=guarantee.headline(),
        describe=tuple(guarantee.describe()),
        implied_headline=None if implied is guarantee else implied.headline(),
        is_dp=is_dp,
        measured_sd=measured_sd,
        program=program,
        singling_out=so,
        attribute_inference=ai,
        n_holdout=n_holdout,
        distinguishing=dist,
        summary=summary,
        seconds=time.perf_counter() - started,
        n_known=n_known,
    )


@st.cache_data(max_entries=32, ttl="2h", show_spinner=False)
def mechanism_noise(mechanism_json: str, d: int) -> dict[str, float]:
    """Data-free noise figures of a configured mechanism: per-coordinate sd before any data is seen.

    Projection: ``sigma1``, ``sigma2`` and the expected per-coordinate sd on the unbiased scale
    (``projection_noise_sd``); Gaussian: ``sigma``. Empty for mechanisms without additive noise.
    """
    from engine.mechanisms.private_projection import projection_noise_sd

    mechanism = mechanism_from_dict(json.loads(mechanism_json))
    kind = type(mechanism).KIND
    if kind == "projection":
        out = {"sigma1": float(mechanism.sigma1(d)), "sigma2": float(mechanism.sigma2)}
        if mechanism.k > d + 1:
            out["noise_sd_expected"] = float(
                projection_noise_sd(mechanism.b, mechanism.epsilon1, mechanism.delta1, mechanism.k, d)
            )
        return out
    if kind == "gaussian":
        return {"sigma": float(mechanism.sigma), "noise_sd_expected": float(mechanism.sigma)}
    return {}


# ----------------------------------------------------------------------------------------------------- sweeps
def run_sweeps(
    prepared: PreparedData,
    configs: Sequence[Any],
    *,
    workers: int,
    on_progress: Callable[[int, int, str], None],
    on_rows: Callable[[int, list[dict]], None],
) -> list[Any]:
    """Run one sweep per configuration (one per mechanism), reporting progress over all of them.

    ``on_progress(done, total, message)`` after every finished cell; ``on_rows(i, rows)`` with the rows of sweep
    ``i`` finished so far whenever a grid point completes its last repetition (and every 10 rows), so a page can
    redraw the curves live. A Streamlit rerun (the Stop button) interrupts this between cells; the rows
    delivered so far stay with the page.
    """
    from engine.sweeps import run_sweep

    total = sum(int(c.n_cells) for c in configs)
    done_before = 0
    results = []
    for index, config in enumerate(configs):
        reps = int(config.repetitions)
        rows: list[dict] = []

        def progress(p, offset=done_before) -> None:
            on_progress(offset + p.done, total, p.message)

        def row(r: dict, rows=rows, reps=reps, index=index) -> None:
            rows.append(r)
            if int(r.get("rep", 0)) == reps - 1 or len(rows) % 10 == 0:
                on_rows(index, list(rows))

        result = run_sweep(prepared, config, progress=progress, on_row=row, workers=workers)
        on_rows(index, result.table.to_dict(orient="records"))
        results.append(result)
        done_before += int(config.n_cells)
    return results


def partial_summary(rows: Sequence[dict], config: Any) -> pd.DataFrame:
    """Per-point summary (engine ``SweepResult.summary``) of the rows finished so far of one mechanism's sweep."""
    from engine.sweeps import SweepResult

    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame(list(rows)).drop(columns="cell", errors="ignore")
    return SweepResult(config=config, table=table, complete=False).summary()


def points_frame(
    summary: pd.DataFrame,
    *,
    x_metric: str,
    y_metric: str,
    series: str,
    kind: str,
    pareto: Sequence[bool] | None = None,
    include_references: bool = False,
) -> pd.DataFrame:
    """The figures' points frame (see :mod:`ui.figures.tradeoffs`) from a sweep summary: TDP (and B = 2) points.

    ``point_id`` is ``"<kind>:<point>"`` so that a click identifies the mechanism and the grid point.
    """
    if summary.empty or f"{x_metric}_mean" not in summary or f"{y_metric}_mean" not in summary:
        return pd.DataFrame(columns=["point_id", "series", "kind", "b", "x", "y", "x_err", "y_err", "pareto"])
    frame = summary.copy()
    if pareto is not None:
        frame["pareto"] = list(pareto)
    keep = frame["reference"].isin(["tdp", "classic-dp"] + (["non-private"] if include_references else []))
    frame = frame[keep]
    budget = frame.apply(
        lambda r: f"ε1={r['epsilon1']:g}, ε2={r['epsilon2']:g}" if np.isfinite(r["epsilon1"]) else "", axis=1
    )
    n_budgets = budget.nunique()
    out = pd.DataFrame(
        {
            "point_id": [f"{kind}:{int(p)}" for p in frame["point"]],
            "series": [series if n_budgets <= 1 else f"{series} ({b})" for b in budget],
            "kind": kind,
            "b": frame["b"].to_numpy(float),
            "x": frame[f"{x_metric}_mean"].to_numpy(float),
            "y": frame[f"{y_metric}_mean"].to_numpy(float),
            "x_err": ((frame[f"{x_metric}_hi"] - frame[f"{x_metric}_lo"]) / 2).to_numpy(float),
            "y_err": ((frame[f"{y_metric}_hi"] - frame[f"{y_metric}_lo"]) / 2).to_numpy(float),
            "pareto": frame["pareto"].to_numpy(bool) if "pareto" in frame else False,
            "hover": [
                f"ε = {e:.6g}, δ = {d:.3g}<br>implied classic DP ε' = {ie:.4g}"
                for e, d, ie in zip(frame["epsilon"], frame["delta"], frame["implied_epsilon"], strict=True)
            ],
        }
    )
    return out.reset_index(drop=True)


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
    """Algorithm 2 on random pairs of released rows: the true squared distance ‖x_i − x_j‖², its unbiased
    estimate from Z (``recover_squared_distance``) and the estimator's sd (corrected variance,
    ``squared_distance_variance``). Pairs are drawn with a stream spawned from the run's seed."""
    from engine.mechanisms.jl_laplace import recover_squared_distance, squared_distance_variance

    mechanism = mechanism_from_dict(json.loads(mechanism_json))
    rng = np.random.default_rng(spawn_seeds(seed, 4)[3])
    n = _x.shape[0]
    i = rng.integers(0, n, size=pairs)
    j = (i + rng.integers(1, n, size=pairs)) % n  # j ≠ i
    true = np.sum((_x[i] - _x[j]) ** 2, axis=1)
    estimate = recover_squared_distance(_z[i], _z[j], mechanism.noise_variance)
    sd = np.sqrt(squared_distance_variance(true, mechanism.k, mechanism.noise_variance))
    return pd.DataFrame({"true": true, "estimate": estimate, "sd": sd})


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
    from engine.per_record.tdp import tdp_record_losses

    return tdp_record_losses(_prepared, epsilon, delta, b)


@st.cache_data(max_entries=16, ttl="2h", show_spinner=False)
def tdp_policy_curve(epsilon: float, delta: float, b: float, points: int = 801):
    """The TDP policy ε(t) on a grid of distances t in [0, 2] (``engine.per_record.tdp.tdp_policy``)."""
    from engine.per_record.tdp import tdp_policy

    return tdp_policy(np.linspace(0.0, 2.0, points), epsilon, delta, b)


def finite_or_none(value: float | None) -> float | None:
    """None for missing or non-finite numbers (for display)."""
    if value is None:
        return None
    v = float(value)
    return v if math.isfinite(v) else None
