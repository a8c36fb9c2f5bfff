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

from engine.attacks.distinguishing import TradeoffCurve, tradeoff_curve
from engine.data.preparation import DataSpec, PreparedData
from engine.evaluation.programs import ProgramConfig
from engine.mechanisms import mechanism_from_dict
from engine.progress import Progress, format_seconds
from engine.release import ReleaseConfig, cli_command, release_summary, run_release
from engine.rng import make_rng, spawn_seeds


@dataclass(frozen=True)
class MechanismRun:
    """One release of the session's data with one mechanism, and its analysis beside the alternatives.

    ``value`` is the downloadable release of ALL rows (``engine.release.run_release``, as the CLI does), on its
    output scale (``details["output_scale"]``); ``measured_sd`` is the sd over rows of (value / output_scale − x)
    per feature. Every number about the program and the attacks comes from ``engine.analysis.analyse_mechanisms``
    on the released rows (all rows minus the attribute-inference holdout) with the run's seed — the same numbers a
    one-point sweep gives: ``points[0]`` is this mechanism, the rest are the alternatives at the same guarantee.
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
    points: tuple[Any, ...]
    findings: tuple[Any, ...]
    n_holdout: int
    n_released: int
    summary: dict[str, Any]
    seconds: float

    @property
    def analysis(self):
        """The chosen mechanism's full analysis (first release): program, measured γ, attacks."""
        return self.points[0].first

    @property
    def program(self):
        return self.analysis.program

    @property
    def baseline(self):
        return self.analysis.baseline

    @property
    def singling_out(self):
        return self.analysis.singling_out

    @property
    def attribute_inference(self):
        return self.analysis.attribute_inference

    @property
    def distinguishing(self):
        return self.analysis.distinguishing

    @property
    def n_known(self) -> int:
        return self.analysis.n_known


#: Repetitions of each release on the Mechanisms page: the program metrics and the measured γ get an interval.
PAGE_REPETITIONS = 5


def session_program(state: Any, default: ProgramConfig | None) -> ProgramConfig | None:
    """The session's program: the Data page's settings, else ``default`` (the demo's own program with its
    population, ``LoadedData.default_program``; None for an upload without chosen settings)."""
    return state.program if state.program is not None else default


def mechanism_run(
    fingerprint: str,
    spec_json: str,
    mechanism_json: str,
    analysis_json: str,
    candidate_json: str,
    seed: int,
    user_seed: bool,
    dataset: str | None,
    _frame: pd.DataFrame,
    *,
    on_progress: Callable[[Progress], None] | None = None,
) -> MechanismRun:
    """Release the data with the mechanism (``run_release``, as the CLI does), then analyse it beside the
    alternatives at the same guarantee (``analyse_mechanisms``, as a sweep does), all from one seed.

    ``user_seed`` says whether the seed was typed by the user (then it is recorded and the output is labelled
    "simulation — not private") or drawn from OS entropy for this run (then it is never shown or exported).

    Not a shared cache: the page keeps its last runs in the session (:func:`remembered_run`), so that
    ``on_progress`` can draw a progress bar. Drawing is a Streamlit call, the point where a rerun (the page's Stop
    button) or a closed tab ends the work; inside ``st.cache_data`` those calls would be recorded and replayed.
    """
    from engine.analysis import AnalysisConfig, analyse_mechanisms
    from engine.comparison import alternatives, comparison_verdict
    from engine.guarantee import Guarantee

    started = time.perf_counter()
    mechanism = mechanism_from_dict(json.loads(mechanism_json))
    config = ReleaseConfig.of(DataSpec.from_json(spec_json), mechanism, seed=seed if user_seed else None,
                              dataset=dataset)
    prepared, release = run_release(_frame, config, rng=make_rng(seed))
    value = np.asarray(release.value, dtype=float)
    scale = float(release.details.get("output_scale", 1.0) or 1.0)
    projected = value.shape[1] != prepared.d  # the JL release Z has k columns: no per-feature comparison
    measured_sd = np.full(prepared.d, np.nan) if projected else np.std(value / scale - prepared.x, axis=0, ddof=1)

    analysis = AnalysisConfig.from_json(analysis_json)
    candidate = Guarantee.from_json(candidate_json)
    others = alternatives(mechanism, d=prepared.d, candidate=candidate)
    data, points = analyse_mechanisms(prepared, [mechanism, *others], analysis, seed=seed,
                                      repetitions=PAGE_REPETITIONS, progress=on_progress)
    first = points[0].first

    guarantee = release.guarantee
    implied = guarantee.implied_dp()
    is_dp = bool(getattr(guarantee, "is_differentially_private", True))
    summary = release_summary(prepared, release, config, seconds=time.perf_counter() - started)
    if not user_seed:
        summary["seed"] = None
    program = first.program
    gamma = points[0].measured_gamma
    summary["program"] = None if program is None else {
        "kind": program.kind, "headline_metric": program.headline_metric, "metrics": dict(program.metrics),
        "measured_gamma": {"mean": gamma[0], "ci_low": gamma[2], "ci_high": gamma[3],
                           "repetitions": points[0].repetitions},
        "no_better_than": program.beaten_by(),
        "evaluated_on": f"{data.n_released} released rows ({data.n_holdout} held out as the attack's control group)",
    }
    dist = first.distinguishing
    summary["protection"] = {
        "singling_out": None if first.singling_out is None else float(first.singling_out.protection),
        "attribute_inference": None if first.attribute_inference is None else float(
            first.attribute_inference.protection),
        "distinguishing": None if dist is None else float(dist.protection),
        "distinguishing_paper_D": None if dist is None else float(dist.expected_loss_score),
    }
    if projected:
        summary["protection"]["adversary"] = (
            f"knows {first.n_known} original records, not the secret projection P (known-record reconstruction)"
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
        points=tuple(points),
        findings=tuple(comparison_verdict(points)),
        n_holdout=data.n_holdout,
        n_released=data.n_released,
        summary=summary,
        seconds=time.perf_counter() - started,
    )


#: Runs one session keeps (the current one and the last good one), newest last.
KEPT_RUNS = 2


def remembered_run(session: Any, key: str) -> MechanismRun | None:
    """The run this session already made for ``key`` (see :func:`run_key`), or None."""
    for stored_key, run in session.get("mechanisms.runs", ()):
        if stored_key == key:
            return run
    return None


def remember_run(session: Any, key: str, run: MechanismRun) -> None:
    """Keep ``run`` under ``key`` in the session, with at most :data:`KEPT_RUNS` runs (bounded memory)."""
    runs = [(k, r) for k, r in session.get("mechanisms.runs", ()) if k != key]
    session["mechanisms.runs"] = tuple([*runs, (key, run)][-KEPT_RUNS:])


def run_key(*parts: Any) -> str:
    """One string naming a run's inputs (data fingerprint, spec, mechanism, analysis, candidate, seed …)."""
    return json.dumps([str(p) for p in parts])


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
    client: Any = None,
) -> list[Any]:
    """Run one sweep per configuration (one per mechanism), reporting progress over all of them.

    ``on_progress(done, total, message)`` after every finished cell; ``on_rows(i, rows)`` with the rows of sweep
    ``i`` finished so far whenever a grid point completes its last repetition (and every 10 rows), so a page can
    redraw the curves live. A Streamlit rerun (the Stop button) interrupts this between cells; the rows
    delivered so far stay with the page. ``client``: a Dask client to compute on (``ui.compute_target``), or None
    for this machine's processes.
    """
    from engine.sweeps import run_sweep

    total = sum(int(c.n_cells) for c in configs)
    done_before = 0
    results = []
    for index, config in enumerate(configs):
        reps = int(config.repetitions)
        rows: list[dict] = []

        def progress(p, offset=done_before) -> None:
            eta = p.eta_seconds
            left = "" if not math.isfinite(eta) else f"about {format_seconds(eta)} left for this mechanism — "
            on_progress(offset + p.done, total, left + p.message)

        def row(r: dict, rows=rows, reps=reps, index=index) -> None:
            rows.append(r)
            if int(r.get("rep", 0)) == reps - 1 or len(rows) % 10 == 0:
                on_rows(index, list(rows))

        result = run_sweep(prepared, config, progress=progress, on_row=row, workers=workers, client=client)
        on_rows(index, result.table.to_dict(orient="records"))
        results.append(result)
        done_before += int(config.n_cells)
    return results


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
    from engine.per_record.tdp_losses import tdp_record_losses

    return tdp_record_losses(_prepared, epsilon, delta, b)


@st.cache_data(max_entries=16, ttl="2h", show_spinner=False)
def tdp_policy_curve(epsilon: float, delta: float, b: float, points: int = 801):
    """The TDP policy ε(t) on a grid of distances t in [0, 2] (``engine.per_record.tdp_losses.tdp_policy``)."""
    from engine.per_record.tdp_losses import tdp_policy

    return tdp_policy(np.linspace(0.0, 2.0, points), epsilon, delta, b)


def finite_or_none(value: float | None) -> float | None:
    """None for missing or non-finite numbers (for display)."""
    if value is None:
        return None
    v = float(value)
    return v if math.isfinite(v) else None


# ------------------------------------------------------------------------------------------------- recommendation
def recommendation(session: Any, prepared: PreparedData, program_json: str, config_json: str):
    """``engine.recommend.recommend`` on the session's data, with a progress bar and a Stop button.

    The result is kept in the session (the last one, keyed by the data's fingerprint and both configurations), not in
    a shared cache, so that the progress updates are Streamlit calls: a Stop click or a closed tab ends the search at
    the next evaluated point.
    """
    from engine.recommend import RecommendConfig, recommend

    key = run_key(prepared.fingerprint, program_json, config_json)
    kept = session.get("feasibility.recommendation")
    if kept is not None and kept[0] == key:
        return kept[1]
    stop_slot, bar = st.empty(), st.empty()
    stop_slot.button("Stop the search", key="feasibility.rec_stop", icon=":material/stop_circle:",
                     help="Stops at the next evaluated point; nothing of the search is kept.")
    bar.progress(0.0, text="Searching the frontier…")

    def on_progress(p: Progress) -> None:
        bar.progress(p.fraction, text=f"Searching the frontier: {p.describe()}")

    try:
        result = recommend(prepared, ProgramConfig.from_json(program_json), RecommendConfig.from_json(config_json),
                           progress=on_progress)
    finally:
        stop_slot.empty()
        bar.empty()
    session["feasibility.recommendation"] = (key, result)
    return result
