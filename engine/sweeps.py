r"""Tradeoff sweeps: program effectiveness against protection over a grid of privacy parameters.

A sweep answers "what does each (B, ε, δ) cost my program, and what does it buy against real attacks?" on the
user's own data — the paper's Figures 2 and 3 for any dataset. For every cell of the grid

    mechanism × B values × budgets (ε1, δ1, ε2, δ2) × repetitions

it privatizes the released rows with a fresh random stream, scores the program on the release
(:func:`engine.evaluation.programs.evaluate_program`), runs the attacks (singling out, attribute inference with
the holdout as control, distinguishing) and records one tidy row. Two reference points come with every sweep
(``references=True``): the **non-private** release (the data itself; distinguishing protection 0) and
**classic DP** (B = 2 with the same budgets; the B = 2 grid points when B = 2 is in the grid).

Design
------
* Holdout. One holdout of ``holdout`` rows (default :func:`~engine.attacks.attribute_inference.
  default_holdout_size`) is drawn per sweep from the analysis configuration's holdout seed, BEFORE privatizing; every cell privatizes the
  same released rows, so the non-private program baseline, the non-private singling-out baseline and the CV folds
  are computed once, and repetitions vary the mechanism's noise and the attack's random choices only.
* Seeds. The holdout is drawn from the analysis configuration's ``holdout_seed`` (the same rows for every sweep
  of the same data, so the non-private reference is one number on every page). ``engine.rng.spawn_seeds(seed,
  1 + cells)``: child 0 is left unused (it drew the holdout before), child i + 1 drives cell i
  (grid points in order — non-private, then each budget × B, then extra classic-DP points — repetitions inner).
  Rows are returned in cell order, so the same seed gives the same table whatever the number of workers.
* Parallelism. ``workers > 1`` runs cells in a ``ProcessPoolExecutor`` (``fork`` from a single-threaded caller such
  as the CLI, ``forkserver`` under the threaded dashboard, where forking is unsafe). The data go to each worker
  once through the pool initializer, never per task. Every process limits BLAS to one thread, so inline and pooled
  runs compute bit-identical numbers.
* Gaussian. ``mechanism="gaussian"`` runs the Gaussian mechanism at the same TOTAL budget (ε1 + ε2, δ1 + δ2) and
  the same B, so the Studio can show honestly where the simpler mechanism gives more for the same guarantee.
* Cache. Finished sweeps are kept in an in-process LRU keyed by (data fingerprint, configuration JSON — which
  includes the seed).

Interval convention: :meth:`SweepResult.summary` reports, per grid point, the mean, the sample sd (ddof = 1)
and by default a 95 % confidence interval for the MEAN, mean ± t₀.₉₇₅,r−1 · sd/√r over the r repetitions
(``interval="runs"`` gives the 2.5–97.5 % range of single runs instead: what one release may give).

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods (case studies, privacy attacks), Figures 2–3. Digest:
       ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import hashlib
import math
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from engine.accounting.budget import default_delta, split_delta
from engine.accounting.tdp import tdp_to_dp
from engine.analysis import (
    BASELINE_PREFIX,
    AnalysisConfig,
    AnalysisData,
    PointAnalysis,
    analyse,
    baseline_column,
    mean_interval,
)
from engine.attacks.threat_model import ADVERSARY_TEXT, Adversary
from engine.errors import CancelledError, InsufficientDataError, InvalidParameterError
from engine.evaluation.programs import ProgramConfig, higher_is_better
from engine.progress import CancelToken, Progress, ProgressCallback
from engine.rng import spawn_seeds
from engine.serialization import Serializable
from engine.validation import check_bool, check_choice, check_integer, check_interval

__all__ = [
    "ATTACKS",
    "PAPER_B_VALUES",
    "PROTECTION_COLUMNS",
    "Budget",
    "SweepConfig",
    "SweepResult",
    "analyse_reference",
    "clear_cache",
    "estimate_seconds",
    "paper_budgets",
    "pareto_mask",
    "preset",
    "released_rows",
    "run_sweep",
]

SweepMechanism = Literal["projection", "gaussian", "jl-laplace"]
AttackName = Literal["singling_out", "attribute_inference", "distinguishing"]

#: Attacks a sweep can run, in the order of the table's columns.
ATTACKS: tuple[str, ...] = ("singling_out", "attribute_inference", "distinguishing")
#: Attack → protection column of the tidy table (all in [0, 1], higher = more protection).
PROTECTION_COLUMNS: dict[str, str] = {a: f"protection_{a}" for a in ATTACKS}
#: Mechanisms a sweep can run (``SweepConfig.mechanism``).
SWEEP_MECHANISMS: tuple[str, ...] = ("projection", "gaussian", "jl-laplace")
#: Prefix of the table's per-(adversary, secret column) attribute-inference columns: ``<prefix><knowledge>:<j>``
#: holds that cell's relative protection in one run. :meth:`SweepResult.summary` averages each cell over the runs
#: BEFORE taking the worst cell.
AI_CELL_PREFIX = "attribute_inference_cell:"
#: Default projection dimension of a JL sweep (the paper's settings use k from 2 to 20, k ≪ d).
JL_DEFAULT_K = 5
#: The paper's grid of target distances B.
PAPER_B_VALUES: tuple[float, ...] = (0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.0)
#: Reference labels of the ``reference`` column.
REFERENCES: tuple[str, ...] = ("non-private", "tdp", "classic-dp")
#: Columns that describe a grid point (identical across its repetitions); every other numeric column is a metric.
DESCRIPTOR_COLUMNS: tuple[str, ...] = (
    "point",
    "reference",
    "mechanism",
    "b",
    "epsilon1",
    "delta1",
    "epsilon2",
    "delta2",
    "epsilon",
    "delta",
    "implied_epsilon",
    "implied_delta",
)
#: Upper bound on the number of cells of one sweep (a grid beyond this is almost certainly a typo).
MAX_CELLS = 200_000
#: Finished sweeps kept by the in-process cache.
CACHE_SIZE = 8


# --------------------------------------------------------------------------------------------------------------
# configuration


@dataclass(frozen=True)
class Budget(Serializable):
    """One privacy budget of the grid: (ε1, δ1) for the projection step, (ε2, δ2) for the covariance step.

    The Gaussian mechanism spends the totals ε = ε1 + ε2, δ = δ1 + δ2 (use ε2 = δ2 = 0 for a plain (ε, δ)).

    >>> Budget(3.0, 1e-4, 0.5, 5e-5).epsilon
    3.5
    """

    epsilon1: float
    delta1: float
    epsilon2: float = 0.0
    delta2: float = 0.0

    def __post_init__(self) -> None:
        check_interval("epsilon1", self.epsilon1, 0, None, closed="neither")
        check_interval("delta1", self.delta1, 0, 1, closed="left")
        check_interval("epsilon2", self.epsilon2, 0, None, closed="left")
        check_interval("delta2", self.delta2, 0, 1, closed="left")
        if self.delta1 + self.delta2 >= 1:
            raise InvalidParameterError(
                f"delta1 + delta2 must be < 1; got {self.delta1 + self.delta2:g} — use δ ≤ 1/n"
            )

    @property
    def epsilon(self) -> float:
        return float(self.epsilon1) + float(self.epsilon2)

    @property
    def delta(self) -> float:
        return float(self.delta1) + float(self.delta2)

    def label(self) -> str:
        return f"ε1={self.epsilon1:g}, δ1={self.delta1:.3g}, ε2={self.epsilon2:g}, δ2={self.delta2:.3g}"


def paper_budgets(n: int, epsilon1: Sequence[float] = (2.0, 3.0), epsilon2: Sequence[float] = (0.5, 0.9999),
                  *, partitions: int = 1, delta: float | None = None) -> tuple[Budget, ...]:
    """The paper's budgets: every (ε1, ε2) pair with δ = 1/(n' + 1) split δ1 = 2δ/3, δ2 = δ/3.

    n' = n for one block, ⌈n/m⌉ with ``partitions`` m > 1 (the paper's Nigeria setup). ``delta`` replaces
    1/(n' + 1) (e.g. the candidate's δ, so that a chosen grid point keeps it).

    >>> [(b.epsilon1, b.epsilon2, round(b.delta1 * 4202, 6)) for b in paper_budgets(4201)]
    [(2.0, 0.5, 0.666667), (2.0, 0.9999, 0.666667), (3.0, 0.5, 0.666667), (3.0, 0.9999, 0.666667)]
    """
    epsilon1 = tuple(check_interval("epsilon1", e, 0, None, closed="neither") for e in _values("epsilon1", epsilon1))
    epsilon2 = tuple(check_interval("epsilon2", e, 0, None, closed="left") for e in _values("epsilon2", epsilon2))
    nn = check_integer("n", n, 1, None)
    m = check_integer("partitions", partitions, 1, nn)
    size = nn if m == 1 else math.ceil(nn / m)
    total = default_delta(size) if delta is None else check_interval("delta", delta, 0, 1, closed="neither")
    delta1, delta2 = split_delta(total)
    return tuple(Budget(float(e1), delta1, float(e2), delta2) for e1 in epsilon1 for e2 in epsilon2)


def _values(name: str, values: object) -> tuple:
    """A list-like of values (not text, not a single number)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | np.ndarray):
        raise InvalidParameterError(f"{name} must be a list of numbers; got {values!r}")
    if len(values) == 0:
        raise InvalidParameterError(f"{name} must list at least one value; got none")
    return tuple(values)


@dataclass(frozen=True)
class SweepConfig(Serializable):
    """A tradeoff sweep: the grid, the program, the attacks and the seed. Goes into the decision record.

    Parameters
    ----------
    budgets : tuple of Budget
        Privacy budgets of the grid (at least one).
    b_values : tuple of float
        Target distances B in (0, 2], distinct (default: the paper's 8 values).
    mechanism : {"projection", "gaussian", "jl-laplace"}
        Algorithm 1 (private projection), the Gaussian mechanism at the same total (ε, δ), or the secure-release
        paper's JL projection + Laplace noise (:class:`~engine.mechanisms.jl_laplace.JLLaplace`) at ε = ε1 + ε2
        with δ_fail ≤ the budget's δ1 + δ2 (or ``target_delta``). For ``jl-laplace`` see "JL sweeps" below.
    repetitions : int
        Independent runs per grid point, in [1, 10000].
    seed : int
        Root seed of the sweep (holdout and every cell's random stream).
    program : ProgramConfig
        How the release is used and scored.
    attacks : tuple of {"singling_out", "attribute_inference", "distinguishing"}
        Attacks to run (distinct).
    adversary : {"knows-scale", "paper"}
        ``"knows-scale"`` (default) undoes a known output scale before attacking (the paper's own threat model);
        ``"paper"`` reproduces the authors' code (release attacked as printed, their net sizes and success rule).
        The program official is treated the same way: with ``"knows-scale"`` the program is trained and scored on
        the release with its known output scale undone (value / s; the scale is part of the public algorithm, so
        the data user undoes it as the attacker does); with ``"paper"`` on the release as printed, as the
        authors' code did. This only matters for ``output_scale="paper"`` (s = 1/k).
    holdout : int or None
        Rows held out as the attribute-inference control group; ``None`` = min(500, ⌊n/5⌋). Ignored (0) when
        attribute inference is not run.
    k : int
        Projection dimension: of :class:`~engine.mechanisms.private_projection.PrivateProjection` (default 10⁴),
        and of the JL release (its output has k columns; :func:`preset` uses :data:`JL_DEFAULT_K` for it).
    output_scale, covariance, partitions
        Options of :class:`~engine.mechanisms.private_projection.PrivateProjection`.
    relation : {"row", "element"}
        JL only: the neighbouring relation. ``"row"``: the grid's B is the row-wise change bound (one record moves
        by at most B in L2; B = 2 covers any substitution of unit-ball rows: classic DP). ``"element"``: the
        grid's B is the element-wise change bound (one entry changes by at most B; never classic DP, so no
        classic-DP reference is added).
    target_delta : float or None
        JL only: the δ_fail the noise is calibrated to (smallest c whose per-pair bound is ≤ it). ``None`` = each
        budget's δ1 + δ2 (the presets: 1/(n + 1)).
    known_records : int or None
        JL only: original records the adversary knows (drawn from the released rows with each cell's random
        stream); ``None`` = 2k.
    calibration : {"analytic", "classical"}
        Calibration of the Gaussian mechanism.
    references : bool
        Add the non-private and the classic-DP (B = 2) reference points.

    JL sweeps
    ---------
    The release Z = XP + Laplace noise is n × k with P SECRET. The program official trains on Z (the paper's
    "release for general machine learning"); for a classification program the table also has the paper's own
    program, ``clustering_accuracy`` (k-means on Z against the outcome classes; on X for the non-private point).
    The attacker has Z and the public description but not P. The Studio's adversary **knows a few original
    records, not P** (``known_records``, default 2k, drawn from the released rows): it regresses those records
    on their released rows (:func:`~engine.mechanisms.jl_laplace.known_record_reconstruction`) to get X̂ (n × d)
    and runs singling out and attribute inference on X̂. Distinguishing uses the mechanism's guarantee
    (ε, δ_fail).
    """

    budgets: tuple[Budget, ...]
    b_values: tuple[float, ...] = PAPER_B_VALUES
    mechanism: SweepMechanism = "projection"
    repetitions: int = 10
    seed: int = 0
    program: ProgramConfig = field(default_factory=ProgramConfig)
    attacks: tuple[AttackName, ...] = ATTACKS
    adversary: Adversary = "knows-scale"
    holdout: int | None = None
    k: int = 10_000
    output_scale: Literal["unbiased", "paper"] = "unbiased"
    covariance: Literal["gram", "centred"] = "gram"
    partitions: int = 1
    calibration: Literal["analytic", "classical"] = "analytic"
    references: bool = True
    relation: Literal["row", "element"] = "row"
    target_delta: float | None = None
    known_records: int | None = None

    def __post_init__(self) -> None:
        check_choice("mechanism", self.mechanism, SWEEP_MECHANISMS)
        check_choice("relation", self.relation, ("row", "element"))
        if self.target_delta is not None:
            check_interval("target_delta", self.target_delta, 0, 1, closed="neither",
                           hint="leave it empty for each budget's δ (1/(n+1) in the presets)")
        if self.known_records is not None:
            check_integer("known_records", self.known_records, 1, None, hint="leave it empty for 2k")
        if not self.budgets:
            raise InvalidParameterError("budgets must list at least one (ε1, δ1, ε2, δ2) budget; got none")
        for budget in self.budgets:
            if not isinstance(budget, Budget):
                raise InvalidParameterError(f"budgets must be Budget objects; got {type(budget).__name__}")
        if not self.b_values:
            raise InvalidParameterError("b_values must list at least one B in (0, 2]; got none")
        bs = [check_interval("B", b, 0, 2, closed="right", hint="B = 2 is classic DP") for b in self.b_values]
        if len(set(bs)) != len(bs):
            raise InvalidParameterError(f"b_values must be distinct; got {list(self.b_values)}")
        check_integer("repetitions", self.repetitions, 1, 10_000)
        check_integer("seed", self.seed, 0, None)
        if not isinstance(self.program, ProgramConfig):
            raise InvalidParameterError(f"program must be a ProgramConfig; got {type(self.program).__name__}")
        if len(set(self.attacks)) != len(self.attacks):
            raise InvalidParameterError(f"attacks must be distinct; got {list(self.attacks)}")
        for attack in self.attacks:
            check_choice("attack", attack, ATTACKS)
        check_choice("adversary", self.adversary, ADVERSARY_TEXT)
        if self.holdout is not None:
            check_integer("holdout", self.holdout, 1, None, hint="leave it empty for min(500, n/5)")
        check_integer("k", self.k, 1, None)
        check_choice("output_scale", self.output_scale, ("unbiased", "paper"))
        check_choice("covariance", self.covariance, ("gram", "centred"))
        check_integer("partitions", self.partitions, 1, None)
        check_choice("calibration", self.calibration, ("analytic", "classical"))
        check_bool("references", self.references)
        cells = self.n_cells
        if cells > MAX_CELLS:
            raise InvalidParameterError(
                f"the sweep has {cells} cells, more than the limit of {MAX_CELLS} — use fewer B values, budgets or "
                "repetitions"
            )
        # Build every grid point's mechanism once: its own validation names any impossible combination
        # (e.g. ε2 ≥ 1 for the projection's classical Gaussian step).
        for point in self.points():
            if point.reference != "non-private":
                self.mechanism_for(point.b, point.budget, d=1)

    # ---------------------------------------------------------------- grid
    @property
    def _has_classic(self) -> bool:
        """Whether B = 2 means classic DP (not for the JL element-wise relation, which protects one entry)."""
        return not (self.mechanism == "jl-laplace" and self.relation == "element")

    def points(self) -> list[GridPoint]:
        """Grid points in cell order: non-private, then budget × B, then extra classic-DP points."""
        pts: list[GridPoint] = []
        if self.references:
            pts.append(GridPoint(0, "non-private", math.nan, None))
        for budget in self.budgets:
            for b in self.b_values:
                classic = float(b) == 2.0 and self._has_classic
                pts.append(GridPoint(len(pts), "classic-dp" if classic else "tdp", float(b), budget))
        if self.references and self._has_classic and not any(float(b) == 2.0 for b in self.b_values):
            for budget in self.budgets:
                pts.append(GridPoint(len(pts), "classic-dp", 2.0, budget))
        return pts

    @property
    def n_cells(self) -> int:
        per_rep = len(self.budgets) * len(self.b_values)
        if self.references:
            extra = 0 if not self._has_classic or any(float(b) == 2.0 for b in self.b_values) else len(self.budgets)
            per_rep += 1 + extra
        return per_rep * int(self.repetitions)

    def mechanism_for(self, b: float, budget: Budget, *, d: int | None = None):
        """The mechanism configuration of one grid point.

        ``d`` (the number of feature columns) is needed by ``jl-laplace`` only (its element-wise failure
        probability grows with d, and its release checks it).
        """
        if self.mechanism == "jl-laplace":
            from engine.mechanisms.jl_laplace import JLLaplace

            if d is None:
                raise InvalidParameterError("a JL grid point needs d, the number of feature columns — pass d=")
            target = self.target_delta if self.target_delta is not None else budget.delta
            if not target > 0:
                raise InvalidParameterError(
                    f"the JL release needs δ_fail > 0; the budget {budget.label()} has δ = 0 — set target_delta"
                )
            row = self.relation == "row"
            return JLLaplace(k=self.k, epsilon=budget.epsilon, d=int(d), relation=self.relation,
                             b=float(b) if row else 2.0, element_bound=1.0 if row else float(b),
                             target_delta=float(target))
        if self.mechanism == "projection":
            from engine.mechanisms.private_projection import PrivateProjection

            return PrivateProjection(
                b=float(b),
                epsilon1=float(budget.epsilon1),
                delta1=float(budget.delta1),
                epsilon2=float(budget.epsilon2),
                delta2=float(budget.delta2),
                k=self.k,
                output_scale=self.output_scale,
                covariance=self.covariance,
                partitions=self.partitions,
            )
        from engine.mechanisms.gaussian import GaussianMechanism

        return GaussianMechanism(b=float(b), epsilon=budget.epsilon, delta=budget.delta,
                                 calibration=self.calibration)

    def analysis_config(self) -> AnalysisConfig:
        """How every cell is evaluated (:class:`engine.analysis.AnalysisConfig`)."""
        return AnalysisConfig(program=self.program, attacks=self.attacks, adversary=self.adversary,
                              holdout=self.holdout, known_records=self.known_records,
                              clustering=self.mechanism == "jl-laplace")

    def attack_configs(self):
        """(SinglingOutConfig, AttributeInferenceConfig) for the chosen adversary."""
        return self.analysis_config().attack_configs()

    def describe(self) -> str:
        """One line for logs and the decision record."""
        return (
            f"{self.mechanism} sweep: {len(self.b_values)} B value(s) × {len(self.budgets)} budget(s) × "
            f"{self.repetitions} repetition(s) = {self.n_cells} cells, program {self.program.kind}, attacks "
            f"{', '.join(self.attacks) or 'none'}, adversary {self.adversary}, seed {self.seed}"
        )


@dataclass(frozen=True)
class GridPoint:
    """One point of the grid (``budget`` is None for the non-private reference)."""

    index: int
    reference: str
    b: float
    budget: Budget | None


def released_rows(n: int, attacks: Sequence[str] = ATTACKS, holdout: int | None = None) -> int:
    """Rows a sweep privatizes out of n: all of them, minus the holdout when attribute inference runs.

    >>> released_rows(4201), released_rows(4201, ("singling_out",)), released_rows(1000)
    (3701, 4201, 800)
    """
    nn = check_integer("n", n, 2, None)
    if isinstance(attacks, (str, bytes)) or not isinstance(attacks, Sequence | np.ndarray):
        raise InvalidParameterError(f"attacks must be a list of attack names from {list(ATTACKS)}; got {attacks!r}")
    for attack in attacks:
        if attack not in ATTACKS:
            raise InvalidParameterError(f"attacks must name attacks from {list(ATTACKS)}; got {attack!r}")
    if "attribute_inference" not in attacks:
        return nn
    from engine.attacks.attribute_inference import default_holdout_size

    return nn - (default_holdout_size(nn) if holdout is None else check_integer("holdout", holdout, 1, nn - 1))


def preset(
    name: str,
    n: int,
    *,
    mechanism: SweepMechanism = "projection",
    program: ProgramConfig | None = None,
    seed: int = 0,
    repetitions: int | None = None,
    partitions: int = 1,
    delta: float | None = None,
    **overrides: Any,
) -> SweepConfig:
    """Named sweep configurations.

    ``paper``: B ∈ {0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2}, ε1 ∈ {2, 3}, ε2 ∈ {0.5, 0.9999},
    δ = 1/(n' + 1) split 2/3 : 1/3, k = 10⁴, 50 repetitions.
    ``quick``: the same 8 B values, one budget (ε1 = 3, ε2 = 0.9999 — the paper's Togo headline, ε ≈ 4),
    10 repetitions.
    With ``mechanism="jl-laplace"`` the same budgets give ε = ε1 + ε2 and δ_fail ≤ 1/(n + 1), and k defaults to
    :data:`JL_DEFAULT_K` (pass ``k=`` to change it).

    Parameters
    ----------
    name : {"paper", "quick"}
    n : int
        Rows that will be PRIVATIZED: the prepared rows minus the attribute-inference holdout
        (:func:`released_rows`). δ = 1/(n + 1); with ``partitions`` m > 1, δ = 1/(⌈n/m⌉ + 1) as the paper's
        Nigeria setup.
    delta : float or None
        Total δ of every budget instead of 1/(n + 1) (the dashboard passes the candidate's δ).
    mechanism, program, seed, repetitions, partitions, **overrides
        Passed to :class:`SweepConfig` (``repetitions`` overrides the preset's count).

    Examples
    --------
    >>> cfg = preset("quick", released_rows(4201))
    >>> cfg.n_cells, len(cfg.budgets), cfg.repetitions, round(1 / cfg.budgets[0].delta - 1)
    (90, 1, 10, 3701)
    >>> preset("paper", 3701).n_cells
    1650
    """
    check_choice("preset", name, ("paper", "quick"))
    n_priv = check_integer("n", n, 1, None)
    if name == "paper":
        budgets = paper_budgets(n_priv, partitions=partitions, delta=delta)
        reps = 50
    else:
        budgets = paper_budgets(n_priv, (3.0,), (0.9999,), partitions=partitions, delta=delta)
        reps = 10
    overrides.setdefault("b_values", PAPER_B_VALUES)
    overrides.setdefault("k", JL_DEFAULT_K if mechanism == "jl-laplace" else 10_000)
    return SweepConfig(
        budgets=budgets,
        mechanism=mechanism,
        repetitions=reps if repetitions is None else repetitions,
        seed=seed,
        program=ProgramConfig() if program is None else program,
        partitions=partitions,
        **overrides,
    )


# --------------------------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class SweepResult:
    """A finished (or, after a cancel, partial) sweep.

    Attributes
    ----------
    config : SweepConfig
    table : pandas.DataFrame
        Tidy table, one row per cell in cell order: descriptor columns (:data:`DESCRIPTOR_COLUMNS`), ``rep``,
        the program's metrics, ``<headline>_change`` and the program-specific relative metrics against the
        non-private model on the same rows, ``noise_sd`` (per-coordinate noise sd on the unbiased scale; 0 for the
        non-private release) and the protection columns (:data:`PROTECTION_COLUMNS`) with attack details:
        ``protection_singling_out`` (1 − worst-case share singled out) with ``singling_out_risk`` and
        ``singling_out_worst_net_size``; ``protection_attribute_inference`` (the paper's relative protection,
        worst cell) with the Anonymeter-style ``attribute_inference_risk`` and its ``_ci_low``/``_ci_high``;
        ``protection_distinguishing`` (smallest total error α + β of the best test telling two records apart —
        the hypothesis-testing view, comparable across mechanisms) and ``distinguishing_paper_d`` (the paper's
        D = 1/(U + 1)). The non-private release has distinguishing protection 0. Attribute inference also has one
        column per (adversary, secret column) cell, ``attribute_inference_cell:<knowledge>:<j>`` (that run's
        relative protection), so that :meth:`summary` can average every cell over the runs before taking the
        worst one. JL sweeps of a classification program add ``clustering_accuracy``.
    fingerprint : str
        Data fingerprint the sweep ran on.
    n_released, n_holdout : int
        Rows privatized and rows held out.
    complete : bool
        False for the partial result attached to a :class:`~engine.errors.CancelledError`.
    seconds : float
        Wall time of the run (not part of the table, which is deterministic).
    cpu_seconds : float
        CPU time spent in the cells, summed over workers (independent of how busy the machine is: divided by the
        number of free cores it predicts the wall time on an idle machine, pool start-up excluded).
    from_cache : bool
    """

    config: SweepConfig
    table: pd.DataFrame
    fingerprint: str = ""
    n_released: int = 0
    n_holdout: int = 0
    complete: bool = True
    seconds: float = math.nan
    cpu_seconds: float = math.nan
    from_cache: bool = False

    @property
    def metric_columns(self) -> list[str]:
        """Numeric outcome columns (everything except descriptors and ``rep``)."""
        skip = set(DESCRIPTOR_COLUMNS) | {"rep"}
        return [c for c in self.table.columns if c not in skip and pd.api.types.is_numeric_dtype(self.table[c])]

    @property
    def protection_columns(self) -> list[str]:
        return [c for c in PROTECTION_COLUMNS.values() if c in self.table.columns]

    def summary(self, interval: Literal["mean", "runs"] = "mean", confidence: float = 0.95) -> pd.DataFrame:
        """Per grid point: descriptors, ``runs`` and for every metric ``<m>_mean``, ``<m>_sd``, ``<m>_lo``, ``<m>_hi``.

        ``interval="mean"``: confidence interval of the mean, mean ± t · sd/√r (t the ``(1+confidence)/2``
        quantile of Student's t with r − 1 degrees of freedom; NaN for r = 1). ``interval="runs"``: the
        ``(1−confidence)/2`` and ``(1+confidence)/2`` quantiles of the single runs. sd uses ddof = 1.

        Attribute inference is a worst case over (adversary, secret column) cells. ``protection_attribute_inference_*``
        is the spec's statistic: each cell's relative protection is averaged over the runs FIRST, then the lowest
        cell is taken (its name in ``attribute_inference_worst_cell``, e.g. ``"half:3"``; sd and interval are that
        cell's). The mean of the per-run minima — lower, because a minimum of noisy values is biased low — is kept
        as ``protection_attribute_inference_per_run_min_*``. Tables without the per-cell columns (sweeps recorded
        before they existed) fall back to the per-run minima.
        """
        check_choice("interval", interval, ("mean", "runs"))
        level = check_interval("confidence", confidence, 0, 1, closed="neither")
        descriptors = [c for c in DESCRIPTOR_COLUMNS if c in self.table.columns]
        if self.table.empty or "point" not in self.table.columns:  # e.g. cancelled before the first cell
            return pd.DataFrame(columns=[*descriptors, "runs"])
        metrics = self.metric_columns
        cells = [m for m in metrics if m.startswith(AI_CELL_PREFIX)]
        ai = PROTECTION_COLUMNS["attribute_inference"]
        stats = ("mean", "sd", "lo", "hi")
        rows = []
        for _, group in self.table.groupby("point", sort=True):
            row: dict[str, Any] = {c: group[c].iloc[0] for c in descriptors}
            r = len(group)
            row["runs"] = r
            for m in metrics:
                values = group[m].to_numpy(dtype=float)
                values = values[np.isfinite(values)]
                k = values.size
                mean, sd, lo, hi = mean_interval(values, level)
                if interval == "runs":
                    lo, hi = (
                        (float(np.quantile(values, (1 - level) / 2)), float(np.quantile(values, (1 + level) / 2)))
                        if k
                        else (math.nan, math.nan)
                    )
                row[f"{m}_mean"] = mean
                row[f"{m}_sd"] = sd
                row[f"{m}_lo"] = lo
                row[f"{m}_hi"] = hi
            if cells and ai in metrics:
                means = np.array([row[f"{c}_mean"] for c in cells], dtype=float)
                for st in stats:
                    row[f"{ai}_per_run_min_{st}"] = row[f"{ai}_{st}"]
                if np.isfinite(means).any():
                    worst = cells[int(np.nanargmin(means))]
                    for st in stats:
                        row[f"{ai}_{st}"] = row[f"{worst}_{st}"]
                    row["attribute_inference_worst_cell"] = worst[len(AI_CELL_PREFIX):]
            rows.append(row)
        shown = [m for m in metrics if m not in cells]
        columns = descriptors + ["runs"] + [f"{m}_{st}" for m in shown for st in stats]
        if cells and ai in metrics:
            columns += [f"{ai}_per_run_min_{st}" for st in stats] + ["attribute_inference_worst_cell"]
        return pd.DataFrame(rows, columns=columns)

    def no_better_than_trivial(self, metric: str | None = None, confidence: float = 0.95) -> pd.Series:
        """Per grid point of :meth:`summary`: the trivial rule (``baseline:<rule>:<metric>`` columns) that is at
        least as good as the point's mean ``metric`` even at the favourable end of its interval, else "".

        A point whose interval does not clear a rule that uses no data (target nobody, approve everyone, …) is no
        better than that rule on these data.
        """
        name = self.config.program.headline_metric if metric is None else metric
        summary = self.summary(confidence=confidence)
        up = higher_is_better(name)
        rules = [c[len(BASELINE_PREFIX):-len(":" + name)] for c in self.metric_columns
                 if c.startswith(BASELINE_PREFIX) and c.endswith(":" + name)]
        out = []
        for _, row in summary.iterrows():
            best = row.get(f"{name}_hi" if up else f"{name}_lo")
            if best is None or not np.isfinite(best):
                best = row.get(f"{name}_mean")
            found = ""
            for rule in rules:
                b = row.get(f"{baseline_column(rule, name)}_mean")
                if b is not None and np.isfinite(b) and best is not None and np.isfinite(best) and (
                        (up and b >= best) or (not up and b <= best)):
                    found = rule
                    break
            out.append(found)
        return pd.Series(out, index=summary.index, name="no_better_than")

    def reference_points(self) -> pd.DataFrame:
        """Summary rows of the non-private and classic-DP reference points."""
        summary = self.summary()
        return summary[summary["reference"].isin(["non-private", "classic-dp"])].reset_index(drop=True)

    def pareto(self, utility_metric: str | None = None,
               protection_metric: str = PROTECTION_COLUMNS["singling_out"]) -> pd.DataFrame:
        """Summary with a boolean ``pareto`` column: grid points no other point beats on both axes (means).

        A point is dominated when another point is at least as good on the utility (direction from
        :func:`~engine.evaluation.programs.higher_is_better`: larger is better unless the metric says otherwise,
        e.g. exclusion errors) and at least as protective, and strictly better on one. Points with a missing mean are never on
        the frontier. Reference points take part (they are real options).
        """
        utility = self.config.program.headline_metric if utility_metric is None else utility_metric
        for name in (utility, protection_metric):
            if name not in self.metric_columns:
                raise InvalidParameterError(
                    f"metric {name!r} is not in this sweep; choose one of {self.metric_columns}"
                )
        summary = self.summary()
        sign = 1.0 if higher_is_better(utility) else -1.0
        u = sign * summary[f"{utility}_mean"].to_numpy(dtype=float)
        p = summary[f"{protection_metric}_mean"].to_numpy(dtype=float)
        summary["pareto"] = pareto_mask(u, p)
        return summary


def pareto_mask(utility: np.ndarray, protection: np.ndarray) -> np.ndarray:
    """Non-dominated points when both coordinates are to be maximised (NaN never on the frontier).

    >>> pareto_mask(np.array([1.0, 2.0, 2.0, 0.5]), np.array([3.0, 1.0, 0.5, 3.0])).tolist()
    [True, True, False, False]
    """
    u = np.asarray(utility, dtype=float)
    p = np.asarray(protection, dtype=float)
    ok = np.isfinite(u) & np.isfinite(p)
    mask = np.zeros(u.size, dtype=bool)
    for i in np.flatnonzero(ok):
        others = ok.copy()
        others[i] = False
        dominated = others & (u >= u[i]) & (p >= p[i]) & ((u > u[i]) | (p > p[i]))
        mask[i] = not dominated.any()
    return mask


# --------------------------------------------------------------------------------------------------------------
# running


@dataclass
class _Context:
    """Everything a cell needs that does not depend on the noise (sent to each worker once)."""

    config: SweepConfig
    data: AnalysisData
    points: list[GridPoint]


_WORKER_CONTEXT: _Context | None = None
#: Modules the forkserver imports once, so that forked workers start with them loaded.
_WORKER_MODULES: tuple[str, ...] = (
    "engine.sweeps",
    "engine.mechanisms.private_projection",
    "engine.mechanisms.gaussian",
    "engine.mechanisms.jl_laplace",
    "engine.attacks.singling_out",
    "engine.attacks.attribute_inference",
    "engine.attacks.distinguishing",
    "sklearn.linear_model",
    "threadpoolctl",
)
_CACHE: collections.OrderedDict[str, SweepResult] = collections.OrderedDict()
_CACHE_LOCK = threading.Lock()


def clear_cache() -> None:
    """Forget every cached sweep."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _cache_key(fingerprint: str, config: SweepConfig) -> str:
    return hashlib.sha256((fingerprint + "\x00" + config.to_json(sort_keys=True)).encode()).hexdigest()


def _data_fingerprint(data: Any) -> str:
    """The data's fingerprint (computed from the arrays when the object has none), checking it is prepared data."""
    from engine.analysis import _data_arrays

    return _data_arrays(data, need_outcome=True)[3]


def _point_descriptors(point: GridPoint, config: SweepConfig, mechanism=None) -> dict[str, Any]:
    if point.budget is None:
        return {
            "point": point.index, "reference": point.reference, "mechanism": "none", "b": math.nan,
            "epsilon1": math.nan, "delta1": math.nan, "epsilon2": math.nan, "delta2": math.nan,
            "epsilon": math.nan, "delta": math.nan, "implied_epsilon": math.nan, "implied_delta": math.nan,
        }
    budget = point.budget
    eps, dlt = budget.epsilon, budget.delta
    # The Gaussian mechanism spends the totals; the budget's split is kept so that projection and Gaussian
    # sweeps over the same budgets line up row for row.
    e1, d1, e2, d2 = float(budget.epsilon1), float(budget.delta1), float(budget.epsilon2), float(budget.delta2)
    if config.mechanism == "jl-laplace":
        # δ is the per-pair bound on δ_fail the calibration achieved (≤ the target); element-wise protection
        # covers one entry, so no whole-record (classic DP) statement is implied.
        dlt = float(min(1.0, mechanism.delta_fail))
        if config.relation == "element":
            implied_eps, implied_delta = math.nan, math.nan
        else:
            implied_eps, implied_delta = tdp_to_dp(eps, dlt, point.b)
    else:
        implied_eps, implied_delta = tdp_to_dp(eps, dlt, point.b)
    return {
        "point": point.index, "reference": point.reference, "mechanism": config.mechanism, "b": point.b,
        "epsilon1": e1, "delta1": d1, "epsilon2": e2, "delta2": d2, "epsilon": eps, "delta": dlt,
        "implied_epsilon": float(implied_eps), "implied_delta": float(implied_delta),
    }


def _run_cell(ctx: _Context, cell: int, point_index: int, rep: int, seed: np.random.SeedSequence) -> dict:
    cpu_started = time.process_time()
    point = ctx.points[point_index]
    config = ctx.config
    if point.budget is None:
        mechanism = None
        row: dict[str, Any] = _point_descriptors(point, config)
    else:
        mechanism = config.mechanism_for(point.b, point.budget, d=ctx.data.x_rel.shape[1])
        row = _point_descriptors(point, config, mechanism)
    row["rep"] = rep
    row.update(analyse(ctx.data, mechanism, seed=seed).row())
    # CPU time is a diagnostic (it varies run to run), kept out of the deterministic table.
    return {"cell": cell, **row, "_cpu_seconds": time.process_time() - cpu_started}


def _init_worker(ctx: _Context) -> None:
    global _WORKER_CONTEXT
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    _WORKER_CONTEXT = ctx


def _worker_cell(cell: int, point_index: int, rep: int, seed: np.random.SeedSequence) -> dict:
    assert _WORKER_CONTEXT is not None, "worker initializer did not run"
    return _run_cell(_WORKER_CONTEXT, cell, point_index, rep, seed)


def _build_context(data: Any, config: SweepConfig, holdout_seed) -> _Context:
    analysis_data = AnalysisData.build(data, config.analysis_config(), holdout_seed=holdout_seed)
    if config.mechanism == "jl-laplace":
        # Every grid point's JL mechanism has the sweep's k: check the adversary's known records once, up front.
        known = 2 * config.k if config.known_records is None else config.known_records
        if known >= analysis_data.n_released:
            raise InsufficientDataError(
                f"the JL adversary knows {known} records, but only {analysis_data.n_released} rows are released — "
                "set known_records below the number of released rows (or a smaller k)"
            )
    return _Context(config, analysis_data, config.points())


def run_sweep(
    data: Any,
    config: SweepConfig,
    *,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
    workers: int = 1,
    on_row: Callable[[dict], None] | None = None,
    use_cache: bool = True,
) -> SweepResult:
    """Run a tradeoff sweep on prepared data.

    Parameters
    ----------
    data : PreparedData
        Prepared features ``x`` (rows in the unit L2 ball), outcome ``y``, program ``extras`` and ``fingerprint``
        (any object with these attributes; the fingerprint is computed if missing).
    config : SweepConfig
    progress : callable, optional
        Called with :class:`~engine.progress.Progress` after every finished cell.
    cancel : CancelToken, optional
        Checked between cells. When set, running cells finish, no new cell starts, and
        :class:`~engine.errors.CancelledError` is raised; its attribute ``partial`` is a :class:`SweepResult`
        with ``complete=False`` holding every finished row (also delivered one by one through ``on_row``).
    workers : int
        Worker processes, in [1, 64]; 1 runs inline. The table does not depend on it.
    on_row : callable, optional
        Called with every finished row (a dict) as it arrives (in completion order).
    use_cache : bool
        Reuse (and store) a finished sweep with the same data fingerprint and configuration.

    Returns
    -------
    SweepResult

    Raises
    ------
    CancelledError
        The cancel token was set (``err.partial`` holds the finished rows).
    DataValidationError, InsufficientDataError, InvalidParameterError
        The data do not fit the program or the grid.
    """
    if not isinstance(config, SweepConfig):
        raise InvalidParameterError(f"config must be a SweepConfig; got {type(config).__name__}")
    n_workers = check_integer("workers", workers, 1, 64)
    fingerprint = _data_fingerprint(data)
    key = _cache_key(fingerprint, config)
    if use_cache:
        with _CACHE_LOCK:
            cached = _CACHE.get(key)
            if cached is not None:
                _CACHE.move_to_end(key)
        if cached is not None:
            total = len(cached.table)
            if progress is not None:
                progress(Progress(total, total, "loaded from cache"))
            return SweepResult(**{**cached.__dict__, "table": cached.table.copy(), "from_cache": True})

    started = time.perf_counter()
    if cancel is not None:
        cancel.raise_if_cancelled("the sweep")
    points = config.points()
    tasks = [(p.index, rep) for p in points for rep in range(config.repetitions)]
    seeds = spawn_seeds(config.seed, len(tasks) + 1)
    ctx = _build_context(data, config, None)  # the holdout comes from the analysis configuration's holdout_seed
    total = len(tasks)
    rows: dict[int, dict] = {}

    cpu = [0.0]

    def finished(row: dict) -> None:
        cpu[0] += float(row.pop("_cpu_seconds", 0.0))
        rows[row["cell"]] = row
        if on_row is not None:
            on_row(dict(row))
        if progress is not None:
            point = ctx.points[int(row["point"])]
            label = "non-private" if point.budget is None else f"B={point.b:g}, ε={point.budget.epsilon:g}"
            progress(Progress(len(rows), total, f"{label}, repetition {int(row['rep']) + 1}",
                              elapsed=time.perf_counter() - started))

    cancelled = False
    if n_workers == 1:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            for cell, (point_index, rep) in enumerate(tasks):
                if cancel is not None and cancel.cancelled:
                    cancelled = True
                    break
                finished(_run_cell(ctx, cell, point_index, rep, seeds[cell + 1]))
    else:
        cancelled = _run_pool(ctx, tasks, seeds, n_workers, cancel, finished)

    table = _table([rows[c] for c in sorted(rows)])
    result = SweepResult(
        config=config,
        table=table,
        fingerprint=fingerprint,
        n_released=ctx.data.n_released,
        n_holdout=ctx.data.n_holdout,
        complete=not cancelled,
        seconds=time.perf_counter() - started,
        cpu_seconds=cpu[0],
    )
    if cancelled:
        err = CancelledError(
            f"the sweep was cancelled after {len(rows)} of {total} cells; the finished rows are kept"
        )
        err.partial = result  # type: ignore[attr-defined]
        raise err
    if use_cache:
        with _CACHE_LOCK:
            _CACHE[key] = SweepResult(**{**result.__dict__, "table": table.copy()})
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
    return result


def _start_method() -> str:
    """``fork`` from a single-threaded process (the CLI, scripts: instant start, nothing re-imported);
    ``forkserver`` when other threads run (the dashboard: forking a threaded process is unsafe); ``spawn`` where
    neither exists."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _run_pool(ctx: _Context, tasks, seeds, n_workers: int, cancel: CancelToken | None,
              finished: Callable[[dict], None]) -> bool:
    """Run cells in worker processes, at most 2 × workers in flight; returns True when cancelled."""
    mp_context = multiprocessing.get_context(_start_method())
    if mp_context.get_start_method() == "forkserver":
        # Workers fork from a server that has already imported everything a cell needs.
        mp_context.set_forkserver_preload(list(_WORKER_MODULES))
    cancelled = False
    with cf.ProcessPoolExecutor(max_workers=n_workers, mp_context=mp_context, initializer=_init_worker,
                                initargs=(ctx,)) as pool:
        pending: set[cf.Future] = set()
        next_cell = 0
        while next_cell < len(tasks) or pending:
            while not cancelled and next_cell < len(tasks) and len(pending) < 2 * n_workers:
                point_index, rep = tasks[next_cell]
                pending.add(pool.submit(_worker_cell, next_cell, point_index, rep, seeds[next_cell + 1]))
                next_cell += 1
            done, pending = cf.wait(pending, timeout=0.2, return_when=cf.FIRST_COMPLETED)
            for future in done:
                finished(future.result())
            if cancel is not None and cancel.cancelled and not cancelled:
                cancelled = True
                next_cell = len(tasks)  # submit nothing more; let the running cells finish
    return cancelled


def _table(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    if "cell" in frame.columns:
        frame = frame.drop(columns="cell")
    return frame.reset_index(drop=True)


def analyse_reference(data: Any, config: SweepConfig, mechanism: Any, *, repetitions: int | None = None
                      ) -> PointAnalysis:
    """A mechanism outside the grid (e.g. k-anonymity, the paper's non-DP baseline) analysed on exactly the
    sweep's released rows and holdout, with ``repetitions`` (default: the sweep's) releases, so its marker sits on
    the same axes as the sweep's points.

    Seeds: the sweep's holdout (the analysis configuration's holdout_seed), and releases from a stream spawned from
    the sweep seed that no cell uses.
    """
    reps = config.repetitions if repetitions is None else check_integer("repetitions", repetitions, 1, 10_000)
    built = AnalysisData.build(data, config.analysis_config())
    seeds = np.random.SeedSequence(config.seed, spawn_key=(2**31,)).spawn(reps)
    first = analyse(built, mechanism, seed=seeds[0])
    rows = [first.row()] + [analyse(built, mechanism, seed=s).row() for s in seeds[1:]]
    return PointAnalysis(mechanism, first, tuple(rows))


def estimate_seconds(data: Any, configs: Sequence[SweepConfig], workers: int = 1) -> float:
    """Wall time the sweeps will take, from one timed cell of each (the first private grid point), divided
    among ``workers``. A rough figure to show before a long run starts; the progress bar refines it."""
    n_workers = check_integer("workers", workers, 1, 64)
    total = 0.0
    for config in configs:
        point = next(p for p in config.points() if p.budget is not None)
        built = AnalysisData.build(data, config.analysis_config())
        mechanism = config.mechanism_for(point.b, point.budget, d=built.x_rel.shape[1])
        started = time.perf_counter()
        analyse(built, mechanism, seed=0)
        total += (time.perf_counter() - started) * config.n_cells
    return total / min(n_workers, os.cpu_count() or 1)
