r"""Sweep grid: the budgets, the configuration and its grid points (the paper's Figures 2 and 3 grids).

A sweep runs mechanism × B values × budgets (ε1, δ1, ε2, δ2) × repetitions; this module holds what describes that
grid — :class:`Budget`, :class:`SweepConfig`, :class:`GridPoint`, :func:`paper_budgets`, :func:`preset`,
:func:`released_rows` and the table's constants. Running it is :mod:`engine.sweeps.runner`; the finished table is
:mod:`engine.sweeps.results`.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods (case studies, privacy attacks), Figures 2–3. Digest:
       ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from engine.accounting.budget import BudgetSplit, default_delta, split_delta
from engine.analysis import (
    AnalysisConfig,
)
from engine.attacks.threat_model import ADVERSARY_TEXT, Adversary
from engine.constraints import Choice, Constraint, Each, Flag, Integer, Real, check_declared
from engine.errors import InvalidParameterError
from engine.evaluation.metrics import ATTACK_CELL_PREFIX
from engine.evaluation.programs import ProgramConfig
from engine.mechanisms import MECHANISMS, RecordMechanism, budgeted_kinds
from engine.serialization import Serializable
from engine.validation import check_choice, check_integer, check_interval

__all__ = [
    "AI_CELL_PREFIX",
    "ATTACKS",
    "DESCRIPTOR_COLUMNS",
    "MAX_CELLS",
    "PAPER_B_VALUES",
    "PROTECTION_COLUMNS",
    "REFERENCES",
    "AttackName",
    "Budget",
    "GridPoint",
    "SweepConfig",
    "paper_budgets",
    "preset",
    "released_rows",
    "sweep_mechanisms",
]

AttackName = Literal["singling_out", "attribute_inference", "distinguishing"]

#: Attacks a sweep can run, in the order of the table's columns.
ATTACKS: tuple[AttackName, ...] = ("singling_out", "attribute_inference", "distinguishing")
#: Attack → protection column of the tidy table (all in [0, 1], higher = more protection).
PROTECTION_COLUMNS: dict[str, str] = {a: f"protection_{a}" for a in ATTACKS}
#: Prefix of the table's per-(adversary, secret column) attribute-inference columns: ``<prefix><knowledge>:<j>``
#: holds that cell's relative protection in one run. :meth:`SweepResult.summary` averages each cell over the runs
#: BEFORE taking the worst cell (:func:`engine.analysis.worst_cell`).
AI_CELL_PREFIX = ATTACK_CELL_PREFIX


def sweep_mechanisms() -> tuple[str, ...]:
    """Mechanisms a sweep can run (``SweepConfig.mechanism``): every registered one configurable from a budget."""
    return budgeted_kinds()
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

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "epsilon1": Real(0, None, closed="neither"),
        "delta1": Real(0, 1, closed="left"),
        "epsilon2": Real(0, None, closed="left"),
        "delta2": Real(0, 1, closed="left"),
    }

    def __post_init__(self) -> None:
        check_declared(self)
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

    def split(self) -> BudgetSplit:
        """The budget as a split of its total between a mechanism's two steps (Algorithm 1's projection and
        covariance steps; a one-step mechanism spends the total)."""
        return BudgetSplit(float(self.epsilon1), float(self.delta1), float(self.epsilon2), float(self.delta2))


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
    mechanism : str
        Any registered mechanism configurable from a budget (:func:`sweep_mechanisms`), configured at each grid
        point by its own ``from_budget`` with the budget's split and the options its tags name
        (``MechanismTags.sweep_options``): Algorithm 1 (``projection``) spends the split, the Gaussian mechanism the
        same total (ε, δ), the secure-release paper's JL projection + Laplace noise
        (:class:`~engine.mechanisms.jl_laplace.JLLaplace`) ε = ε1 + ε2 with δ_fail ≤ the budget's δ1 + δ2 (or
        ``target_delta``). For ``jl-laplace`` see "JL sweeps" below. Default: the first registered one.
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
    on their released rows (:func:`~engine.attacks.known_records.known_record_reconstruction`) to get X̂ (n × d)
    and runs singling out and attribute inference on X̂. Distinguishing uses the mechanism's guarantee
    (ε, δ_fail).
    """

    budgets: tuple[Budget, ...]
    b_values: tuple[float, ...] = PAPER_B_VALUES
    mechanism: str = field(default_factory=lambda: budgeted_kinds()[0])
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

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "relation": Choice(("row", "element")),
        "target_delta": Real(0, 1, closed="neither", optional=True,
                             hint="leave it empty for each budget's δ (1/(n+1) in the presets)"),
        "known_records": Integer(1, optional=True, hint="leave it empty for 2k"),
        "b_values": Each(Real(0, 2, closed="right", hint="B = 2 is classic DP"), label="B"),
        "repetitions": Integer(1, 10_000),
        "seed": Integer(0),
        "adversary": Choice(tuple(ADVERSARY_TEXT)),
        "holdout": Integer(1, optional=True, hint="leave it empty for min(500, n/5)"),
        "k": Integer(1),
        "output_scale": Choice(("unbiased", "paper")),
        "covariance": Choice(("gram", "centred")),
        "partitions": Integer(1),
        "calibration": Choice(("analytic", "classical")),
        "references": Flag(),
    }

    def __post_init__(self) -> None:
        check_choice("mechanism", self.mechanism, sweep_mechanisms(),
                     hint="a registered mechanism configurable from a (B, ε, δ) budget")
        check_declared(self)
        if not self.budgets:
            raise InvalidParameterError("budgets must list at least one (ε1, δ1, ε2, δ2) budget; got none")
        for budget in self.budgets:
            if not isinstance(budget, Budget):
                raise InvalidParameterError(f"budgets must be Budget objects; got {type(budget).__name__}")
        if len(set(self.b_values)) != len(self.b_values):
            raise InvalidParameterError(f"b_values must be distinct; got {list(self.b_values)}")
        if not isinstance(self.program, ProgramConfig):
            raise InvalidParameterError(f"program must be a ProgramConfig; got {type(self.program).__name__}")
        if len(set(self.attacks)) != len(self.attacks):
            raise InvalidParameterError(f"attacks must be distinct; got {list(self.attacks)}")
        for attack in self.attacks:
            check_choice("attack", attack, ATTACKS)
        cells = self.n_cells
        if cells > MAX_CELLS:
            raise InvalidParameterError(
                f"the sweep has {cells} cells, more than the limit of {MAX_CELLS} — use fewer B values, budgets or "
                "repetitions"
            )
        # Build every grid point's mechanism once: its own validation names any impossible combination
        # (e.g. ε2 ≥ 1 for the projection's classical Gaussian step).
        for point in self.points():
            if point.budget is not None:  # every point but the non-private reference
                self.mechanism_for(point.b, point.budget, d=1)

    # ---------------------------------------------------------------- grid
    @property
    def mechanism_class(self) -> type[RecordMechanism]:
        """The swept mechanism's class (from the registry)."""
        return MECHANISMS[self.mechanism]

    @property
    def _has_classic(self) -> bool:
        """Whether B = 2 means classic DP: not when the mechanism takes the sweep's neighbouring relation and it is
        element-wise (one entry, never a whole record)."""
        return not ("relation" in self.mechanism_class.TAGS.sweep_options and self.relation == "element")

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

    def mechanism_for(self, b: float, budget: Budget, *, d: int | None = None) -> RecordMechanism:
        """The mechanism configuration of one grid point: the mechanism's own ``from_budget`` at (B, the budget's
        total ε and δ) with the budget's split and the sweep's options its tags name.

        ``d`` (the number of feature columns) is needed by mechanisms tagged ``needs_d`` (the JL release: its
        element-wise failure probability grows with d, and its release checks it).
        """
        cls = self.mechanism_class
        if cls.TAGS.needs_d and d is None:
            raise InvalidParameterError(
                f"a {self.mechanism} grid point needs d, the number of feature columns — pass d="
            )
        options = {name: getattr(self, name) for name in cls.TAGS.sweep_options}
        return cls.from_budget(float(b), budget.epsilon, budget.delta, d=d, split=budget.split(), **options)

    def analysis_config(self) -> AnalysisConfig:
        """How every cell is evaluated (:class:`engine.analysis.AnalysisConfig`)."""
        return AnalysisConfig(program=self.program, attacks=self.attacks, adversary=self.adversary,
                              holdout=self.holdout, known_records=self.known_records,
                              clustering=self.mechanism_class.TAGS.projects)

    def attack_configs(self):
        """(SinglingOutConfig, AttributeInferenceConfig) for the chosen adversary."""
        return self.analysis_config().attack_configs()

    def describe(self) -> str:
        """One line for logs and the decision record."""
        grid = len(self.b_values) * len(self.budgets)
        extra = self.n_cells // int(self.repetitions) - grid  # reference points per repetition (see n_cells)
        references = ""
        if extra > 0:
            references = " + 1 non-private reference" + ("" if extra == 1 else " + classic DP (B = 2) per budget")
        return (
            f"{self.mechanism} sweep: ({len(self.b_values)} B value(s) × {len(self.budgets)} budget(s){references}) × "
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
    mechanism: str | None = None,
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
    the JL release's default (its tags' ``sweep_defaults``; pass ``k=`` to change it). ``mechanism`` defaults to
    the first registered budget-configurable mechanism (the private projection).

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
    kind = sweep_mechanisms()[0] if mechanism is None else check_choice("mechanism", mechanism, sweep_mechanisms())
    overrides.setdefault("b_values", PAPER_B_VALUES)
    for name, value in MECHANISMS[kind].TAGS.sweep_defaults:
        overrides.setdefault(name, value)
    return SweepConfig(
        budgets=budgets,
        mechanism=kind,
        repetitions=reps if repetitions is None else repetitions,
        seed=seed,
        program=ProgramConfig() if program is None else program,
        partitions=partitions,
        **overrides,
    )
