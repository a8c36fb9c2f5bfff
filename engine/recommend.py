r"""Accuracy-first recommendation: the most protective (B, ε) that still meets the program's target on the data.

Theorem 1 of the targeted-DP paper says which (B, ε, δ) are ruled out for γ-accurate targeting; it is necessary, not
sufficient, so it cannot say which of the remaining points keep *this* program accurate on *these* data. This module
closes that gap by search instead of a full grid:

1. **No pruning by Theorem 1.** Theorem 1's γ is a worst case (every data set, each decision right with probability
   ≥ γ); a target on the decision agreement is an average over the people of these data, which Theorem 1 does not
   bound (it can be met where Theorem 1 rules γ out). Theorem 1's region is reported around the recommendation as
   context, never used to skip a point.
2. **Bisection in ε for each B** (log scale), using that the program metric improves with ε (less noise): the
   upper end must meet the target, the lower end must not; after ``steps`` halvings the frontier ε*(B) is the
   smallest ε found to meet it.
3. **Sequential testing at each evaluated point.** Releases are added only while the decision is open: after
   r ≥ ``min_repetitions`` releases the point *meets* the target when the one-sided lower confidence bound of the
   mean metric (Student t, ``confidence`` level corrected by Bonferroni over the possible looks
   ``max_repetitions − min_repetitions + 1``) is at or above the target, and *fails* when the upper bound is below
   it; otherwise one more release is drawn, up to ``max_repetitions`` (then the point counts as failing: the
   recommendation never rests on an undecided point). So each "meets" verdict is wrong with probability at most
   1 − ``confidence`` (for a metric whose mean over releases is the quantity targeted and approximately normal).
4. **Recommendation.** Among the frontier points of all mechanisms, the most protective worst case: the smallest
   implied classic-DP ε' (the switch lemma's loss for any two records, distance 2) among the points whose implied
   statement guarantees something (δ' < 1); points whose implied classic DP is VACUOUS (δ' = 1) rank after them, by
   the larger B then the smaller ε — their ε' is not a protection. When the best point is at the smallest searched B,
   B is halved (down to :data:`B_FLOOR`) while that improves it, so the optimum is interior; otherwise the result
   says it is at the edge of the search. With its interval, its three protections (attacks run once at that point)
   and Theorem 1's region around it (how far inside: ε*/min_ε and the accuracy ceiling γ_max).
5. **Targets a rule using no data meets** (target nobody / approve everyone …, on the program's metric or on the
   decision agreement) are flagged in the notes and in ``no_data_rule``; :func:`suggest_target` proposes a target
   between the best such rule and the non-private program, and says when the non-private program itself is no
   better than a rule that uses no data.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Theorem 1 and Figure 3.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from engine.errors import CancelledError, InvalidParameterError
from engine.mechanisms import RecordMechanism
from engine.progress import CancelToken, Progress, ProgressCallback
from engine.serialization import Serializable
from engine.validation import check_choice, check_integer, check_interval

if TYPE_CHECKING:
    from engine.analysis import PreparedRows
    from engine.evaluation.programs import ProgramConfig

__all__ = [
    "B_FLOOR",
    "FrontierPoint",
    "Recommendation",
    "RecommendConfig",
    "Target",
    "TargetSuggestion",
    "frontier_for_b",
    "point_verdict",
    "recommend",
    "suggest_target",
]

#: The smallest B the search extends to when the best point sits at the smallest B searched (the Studio's range).
B_FLOOR = 0.001
#: At most this many halvings of B beyond the grid.
MAX_B_EXTENSIONS = 6

def _preselected() -> tuple[str, ...]:
    from engine.mechanisms import preselected_kinds

    return preselected_kinds()


#: Aliases users type for metric names.
METRIC_ALIASES = {"gamma": "decision_agreement", "γ": "decision_agreement", "agreement": "decision_agreement"}
_TARGET = re.compile(r"^\s*([A-Za-zγ_]+)\s*(>=|<=|≥|≤)\s*([-+0-9.eE]+)\s*(%?)\s*$")


@dataclass(frozen=True)
class Target(Serializable):
    """The program's target as the program states it, e.g. ``accuracy ≥ 0.72`` or ``profit ≥ 90 %`` (of the
    non-private profit).

    >>> Target.parse("gamma>=0.9")
    Target(metric='decision_agreement', op='>=', value=0.9, relative=False)
    >>> t = Target.parse("profit>=90%"); (t.metric, t.value, t.relative)
    ('profit', 0.9, True)
    """

    metric: str
    op: Literal[">=", "<="] = ">="
    value: float = 0.0
    relative: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.metric, str) or not self.metric:
            raise InvalidParameterError(f"the target names a metric, e.g. accuracy>=0.72; got {self.metric!r}")
        check_choice("target operator", self.op, (">=", "<="))
        check_interval("target value", self.value, None, None)

    @classmethod
    def parse(cls, text: str) -> Target:
        """``"accuracy>=0.72"``, ``"gamma>=0.95"``, ``"profit>=90%"`` (relative to non-private),
        ``"extra_exclusion_errors_population<=10000"``."""
        match = _TARGET.match(str(text))
        if match is None:
            raise InvalidParameterError(
                f"the target must look like METRIC>=VALUE or METRIC<=VALUE (e.g. accuracy>=0.72, gamma>=0.9, "
                f"profit>=90%); got {text!r}"
            )
        metric, symbol, value, percent = match.groups()
        op: Literal[">=", "<="] = ">=" if symbol in (">=", "≥") else "<="
        try:
            number = float(value)
        except ValueError:
            raise InvalidParameterError(f"the target value must be a number; got {value!r}") from None
        metric = METRIC_ALIASES.get(metric, metric)
        return cls(metric=metric, op=op, value=number / 100.0 if percent else number, relative=bool(percent))

    def describe(self) -> str:
        shown = f"{self.value:.0%} of the non-private value" if self.relative else f"{self.value:g}"
        return f"{self.metric} {'≥' if self.op == '>=' else '≤'} {shown}"

    def threshold(self, nonprivate: float) -> float:
        """The absolute threshold (a relative target is a share of the non-private value)."""
        return self.value * nonprivate if self.relative else self.value


@dataclass(frozen=True)
class RecommendConfig(Serializable):
    """The search: target, mechanisms, grid of B, ε range, confidence and compute budget.

    Parameters
    ----------
    target : Target
    mechanisms : tuple of str
        Registered mechanisms configurable from a budget (default: those tagged ``preselected`` — the private
        projection and the Gaussian mechanism).
    b_values : tuple of float
        Target distances searched (each in (0, 2]); B = 2 is classic DP.
    delta : float or None
        δ of every candidate; None = 1/(n + 1).
    epsilon_min, epsilon_max : float
        The ε range searched.
    steps : int
        Bisection halvings of log ε per B (resolution factor (ε_max/ε_min)^(1/2^steps)).
    confidence : float
        Level of each "meets the target" verdict (see the module docstring).
    min_repetitions, max_repetitions : int
        Releases per evaluated point: at least / at most.
    gamma : float or None
        A γ for Theorem 1's region around the recommendation (default: the target's value when it is a γ target).
    seed : int
        Root seed of the search (a simulation: nothing here is released).
    """

    target: Target
    mechanisms: tuple[str, ...] = field(default_factory=lambda: _preselected())
    b_values: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.0)
    delta: float | None = None
    epsilon_min: float = 0.01
    epsilon_max: float = 20.0
    steps: int = 7
    confidence: float = 0.95
    min_repetitions: int = 3
    max_repetitions: int = 10
    gamma: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.target, str):
            object.__setattr__(self, "target", Target.parse(self.target))
        if not isinstance(self.target, Target):
            raise InvalidParameterError(f"target must be a Target; got {type(self.target).__name__}")
        mechanisms = tuple(self.mechanisms)
        if not mechanisms:
            raise InvalidParameterError("choose at least one mechanism to search")
        from engine.mechanisms import budgeted_kinds

        for kind in mechanisms:
            check_choice("mechanism", kind, budgeted_kinds(),
                         hint="a registered mechanism configurable from a (B, ε, δ) budget")
        object.__setattr__(self, "mechanisms", mechanisms)
        bs = tuple(check_interval("B", b, 0, 2, closed="right") for b in self.b_values)
        if not bs:
            raise InvalidParameterError("b_values must list at least one B in (0, 2]")
        object.__setattr__(self, "b_values", tuple(sorted(set(bs))))
        if self.delta is not None:
            check_interval("delta", self.delta, 0, 1, closed="neither")
        check_interval("epsilon_min", self.epsilon_min, 0, None, closed="neither")
        check_interval("epsilon_max", self.epsilon_max, self.epsilon_min, None, closed="neither",
                       hint="epsilon_max must be above epsilon_min")
        check_integer("steps", self.steps, 1, 30)
        check_interval("confidence", self.confidence, 0.5, 1, closed="left")
        check_integer("min_repetitions", self.min_repetitions, 2, 1000)
        check_integer("max_repetitions", self.max_repetitions, self.min_repetitions, 1000)
        if self.gamma is not None:
            check_interval("gamma", self.gamma, 0.5, 1, closed="neither")
        check_integer("seed", self.seed, 0, None)

    @property
    def theorem_gamma(self) -> float | None:
        """The γ of Theorem 1's region: ``gamma``, else the target's value for a γ target."""
        if self.gamma is not None:
            return self.gamma
        if self.target.metric == "decision_agreement" and self.target.op == ">=" and not self.target.relative:
            return float(self.target.value) if 0.5 <= self.target.value < 1 else None
        return None


@dataclass(frozen=True)
class FrontierPoint:
    """The smallest ε found to meet the target at one B, for one mechanism, with its evidence."""

    mechanism: str
    b: float
    epsilon: float
    delta: float
    values: tuple[float, ...]
    mean: float
    lower: float
    upper: float
    implied_epsilon: float

    def build_mechanism(self, d: int | None = None) -> RecordMechanism:
        """The mechanism that spends this point's (B, ε, δ) (``from_budget`` of its kind; ``d`` features for the
        mechanisms that need them)."""
        from engine.mechanisms import MECHANISMS

        return MECHANISMS[self.mechanism].from_budget(self.b, self.epsilon, self.delta, d=d)

    def implied_dp(self):
        """The classic-DP statement for any two records that the point's (B, ε, δ)-TDP implies (switch lemma), as
        an :class:`engine.guarantee.Guarantee` — its ``headline()`` starts with "VACUOUS" when it guarantees nothing
        (δ' ≥ 1), as it does wherever the Studio shows a guarantee.

        >>> FrontierPoint("gaussian", 0.1, 1.0, 1e-5, (0.8,), 0.8, 0.8, 0.8, 20.0).implied_dp().headline()
        'VACUOUS — guarantees nothing: (ε = 20, δ = 1)-DP for one record (classic DP, B = 2)'
        >>> FrontierPoint("gaussian", 0.4, 1.0, 1e-5, (0.8,), 0.8, 0.8, 0.8, 5.0).implied_dp().vacuous
        False
        """
        from engine.guarantee import Guarantee

        return Guarantee(self.epsilon, self.delta, b=self.b).implied_dp()

    @property
    def vacuous(self) -> bool:
        """Whether the implied classic-DP statement guarantees nothing (δ' = 1)."""
        return bool(self.implied_dp().vacuous)

    def rank(self, sign: float) -> tuple[float, ...]:
        """Sort key, most protective first: non-vacuous points by their implied ε′ (then the larger B), then the
        vacuous ones by the larger B and the smaller ε; ties by the better mean (``sign`` −1 when larger is better)."""
        if self.vacuous:
            return (1.0, 0.0, -self.b, self.epsilon, sign * self.mean)
        return (0.0, self.implied_epsilon, -self.b, self.epsilon, sign * self.mean)

    def to_dict(self) -> dict[str, Any]:
        implied = self.implied_dp()
        return {"mechanism": self.mechanism, "b": self.b, "epsilon": self.epsilon, "delta": self.delta,
                "repetitions": len(self.values), "mean": self.mean, "ci_low": self.lower, "ci_high": self.upper,
                "implied_classic_dp_epsilon": self.implied_epsilon,
                "implied_classic_dp_delta": float(implied.delta), "vacuous": bool(implied.vacuous),
                "implied_classic_dp": implied.headline()}


@dataclass(frozen=True)
class Recommendation:
    """The search's answer: the recommended point (or None), every frontier point, and what was evaluated."""

    config: RecommendConfig
    recommended: FrontierPoint | None
    frontier: tuple[FrontierPoint, ...]
    evaluated: tuple[dict[str, Any], ...]
    theorem1: dict[str, Any] = field(default_factory=dict)
    protections: dict[str, float] = field(default_factory=dict)
    complete: bool = True
    seconds: float = math.nan
    notes: tuple[str, ...] = ()
    at_edge: bool = False
    no_data_rule: tuple[str, float] | None = None

    def unmet(self) -> list[tuple[str, float]]:
        """The searched (mechanism, B) pairs without a frontier point: no ε in the searched range met the target
        there (or Theorem 1 rules every ε out at that B). Empty after a stopped search, which searched less.

        >>> cfg = RecommendConfig(Target.parse("accuracy>=0.7"), mechanisms=("gaussian",), b_values=(0.5, 1.0))
        >>> point = FrontierPoint("gaussian", 1.0, 2.0, 1e-5, (0.71,), 0.71, 0.7, 0.72, 3.0)
        >>> Recommendation(cfg, point, (point,), ()).unmet()
        [('gaussian', 0.5)]
        """
        if not self.complete:
            return []
        found = {(p.mechanism, float(p.b)) for p in self.frontier}
        return [(m, float(b)) for m in self.config.mechanisms for b in self.config.b_values
                if (m, float(b)) not in found]

    def to_dict(self) -> dict[str, Any]:
        return {
            "simulation": "seeded search — not a release; nothing here is private",
            "target": self.config.target.describe(),
            "config": self.config.to_dict(),
            "recommended": None if self.recommended is None else self.recommended.to_dict(),
            "frontier": [p.to_dict() for p in self.frontier],
            "theorem1": self.theorem1,
            "protections": self.protections,
            "evaluations": len(self.evaluated),
            "complete": self.complete,
            "seconds": self.seconds,
            "notes": list(self.notes),
            "at_edge_of_search": self.at_edge,
            "no_data_rule": None if self.no_data_rule is None else {"rule": self.no_data_rule[0],
                                                                    "value": self.no_data_rule[1]},
        }


def _bounds(values: Sequence[float], confidence: float, looks: int) -> tuple[float, float, float]:
    v = np.asarray(values, dtype=float)
    mean = float(v.mean())
    if v.size < 2:
        return mean, -math.inf, math.inf
    # Student's t quantile: scipy.stats.t.ppf's values without importing scipy.stats.
    from scipy.special import stdtrit

    alpha = (1.0 - confidence) / max(looks, 1)
    sd = float(v.std(ddof=1))
    half = float(stdtrit(v.size - 1, 1.0 - alpha)) * sd / math.sqrt(v.size)
    return mean, mean - half, mean + half


def point_verdict(values: Sequence[float], threshold: float, op: str, confidence: float, looks: int) -> str:
    """``"meets"``, ``"fails"`` or ``"open"`` for the releases so far (one-sided bounds, Bonferroni over looks).

    >>> point_verdict([0.80, 0.81, 0.79], 0.7, ">=", 0.95, 8)
    'meets'
    >>> point_verdict([0.60, 0.61, 0.59], 0.7, ">=", 0.95, 8)
    'fails'
    """
    _, lo, hi = _bounds(values, confidence, looks)
    if op == ">=":
        return "meets" if lo >= threshold else ("fails" if hi < threshold else "open")
    return "meets" if hi <= threshold else ("fails" if lo > threshold else "open")


Evaluator = Callable[[float, float, int], float]


def _decide(evaluate: Evaluator, b: float, epsilon: float, threshold: float, config: RecommendConfig,
            log: list[dict[str, float | int | str]]) -> tuple[bool, list[float]]:
    looks = config.max_repetitions - config.min_repetitions + 1
    values = [evaluate(b, epsilon, i) for i in range(config.min_repetitions)]
    verdict = point_verdict(values, threshold, config.target.op, config.confidence, looks)
    while verdict == "open" and len(values) < config.max_repetitions:
        values.append(evaluate(b, epsilon, len(values)))
        verdict = point_verdict(values, threshold, config.target.op, config.confidence, looks)
    log.append({"b": b, "epsilon": epsilon, "repetitions": len(values), "mean": float(np.mean(values)),
                "verdict": verdict})
    return verdict == "meets", values


def frontier_for_b(evaluate: Evaluator, b: float, threshold: float, config: RecommendConfig, *,
                   epsilon_floor: float | None = None, log: list[dict[str, float | int | str]] | None = None
                   ) -> tuple[float, list[float]] | None:
    """Bisect log ε in [max(ε_min, floor), ε_max] for the smallest ε whose releases meet the target at B.

    ``evaluate(b, epsilon, i)`` returns the metric of the i-th release at (B, ε). Returns (ε*, the metric values
    at ε*) or None when even ε_max does not meet the target.
    """
    log = [] if log is None else log
    lo = max(config.epsilon_min, epsilon_floor or 0.0)
    hi = config.epsilon_max
    if lo >= hi:
        return None
    ok, values_hi = _decide(evaluate, b, hi, threshold, config, log)
    if not ok:
        return None
    ok_lo, values_lo = _decide(evaluate, b, lo, threshold, config, log)
    if ok_lo:
        return lo, values_lo
    for _ in range(config.steps):
        mid = math.sqrt(lo * hi)
        ok, values = _decide(evaluate, b, mid, threshold, config, log)
        if ok:
            hi, values_hi = mid, values
        else:
            lo = mid
    return hi, values_hi


def _no_data_values(baseline: Any, metric: str) -> dict[str, float]:
    """Each rule that uses no data and its value of ``metric`` (decision agreement: with the non-private program)."""
    from engine.evaluation.programs import no_data_agreement

    if metric == "decision_agreement":
        return no_data_agreement(baseline)
    return {rule: float(values[metric]) for rule, values in baseline.baselines.items() if metric in values}


def _no_data_rule(baseline: Any, metric: str, threshold: float, op: str) -> tuple[str, float] | None:
    """The rule that uses no data which meets ``metric op threshold`` best, or None."""
    values = _no_data_values(baseline, metric)
    meets = {r: v for r, v in values.items() if math.isfinite(v) and (v >= threshold if op == ">=" else v <= threshold)}
    if not meets:
        return None
    rule = (max if op == ">=" else min)(meets, key=meets.__getitem__)
    return rule, meets[rule]


@dataclass(frozen=True)
class TargetSuggestion:
    """A target for the recommender that means something on these data (:func:`suggest_target`).

    ``target`` is None when no target can: the non-private program itself is no better than a rule that uses no
    data (``text`` says so). ``nonprivate`` is the non-private program's value, ``best_rule`` the best rule that uses
    no data and its value."""

    target: Target | None
    text: str
    nonprivate: float
    best_rule: tuple[str, float] | None


def suggest_target(data: PreparedRows, program: ProgramConfig, metric: str | None = None) -> TargetSuggestion:
    """A default target between the best rule that uses no data and the non-private program, on ``metric`` (default:
    the program's headline): halfway, so that meeting it needs the data and does not need the data unprotected.

    Never a target a rule using no data meets (on a 25 % targeting share, "accuracy ≥ 0.75" is what targeting nobody
    scores); when the non-private program is itself no better than such a rule (lending where almost every loan is
    repaid: the program is "approve everyone"), no target is suggested and the text says why.
    """
    from engine.analysis import AnalysisConfig, AnalysisData
    from engine.evaluation.metrics import ROUNDING_NOISE
    from engine.evaluation.programs import ProgramConfig, higher_is_better

    if not isinstance(program, ProgramConfig):
        raise InvalidParameterError(f"program must be a ProgramConfig; got {type(program).__name__}")
    built = AnalysisData.build(data, AnalysisConfig(program=program, attacks=()))
    baseline = built.baseline
    if baseline is None:
        raise InvalidParameterError("a target needs a program and an outcome — choose a target column")
    name = program.headline_metric if metric is None else metric
    if name not in baseline.metrics:
        raise InvalidParameterError(f"the program does not measure {name!r}; choose one of {sorted(baseline.metrics)}")
    nonprivate = float(baseline.metrics[name])
    up = higher_is_better(name)
    values = _no_data_values(baseline, name)
    best = (max if up else min)(values, key=values.__getitem__) if values else None
    best_rule = None if best is None else (best, float(values[best]))
    if best_rule is None:
        value = nonprivate * (0.9 if up == (nonprivate >= 0) else 1.1)
        target = Target(name, ">=" if up else "<=", float(f"{value:.4g}"))
        return TargetSuggestion(target, f"{target.describe()}: 90 % of the non-private program's {nonprivate:.4g}",
                                nonprivate, None)
    rule, floor = best_rule
    slack = ROUNDING_NOISE * max(abs(floor), abs(nonprivate), 1.0)
    if (up and nonprivate <= floor + slack) or (not up and nonprivate >= floor - slack):
        return TargetSuggestion(None, (
            f"the non-private program itself is no better than '{rule}' on {name} ({nonprivate:.4g} vs {floor:.4g}), "
            "a rule that uses no data: no release can do better than that rule here, so no target is suggested — "
            "reconsider the program first (its outcome, threshold or share)"), nonprivate, best_rule)
    middle = floor + 0.5 * (nonprivate - floor)
    value = float(f"{middle:.4g}")
    if (up and value <= floor) or (not up and value >= floor):
        value = middle
    target = Target(name, ">=" if up else "<=", value)
    return TargetSuggestion(target, (
        f"{target.describe()}: halfway between '{rule}' ({floor:.4g}), which uses no data, and the non-private "
        f"program ({nonprivate:.4g})"), nonprivate, best_rule)


def recommend(data: PreparedRows, program: ProgramConfig | None, config: RecommendConfig, *,
              progress: ProgressCallback | None = None,
              cancel: CancelToken | None = None) -> Recommendation:
    """Search every mechanism's frontier on ``data`` (prepared) for ``program`` and recommend one point.

    Every evaluation runs the one analysis (:func:`engine.analysis.analyse`) without attacks; the attacks run
    once, at the recommended point. With ``cancel`` set, the frontier found so far is returned
    (``complete=False``).
    """
    from engine.accounting.budget import default_delta
    from engine.accounting.tdp import tdp_to_dp
    from engine.analysis import ATTACKS, AnalysisConfig, AnalysisData, analyse
    from engine.mechanisms import MECHANISMS
    from engine.theory.feasibility import gamma_max, is_feasible, min_epsilon

    if not isinstance(config, RecommendConfig):
        raise InvalidParameterError(f"config must be a RecommendConfig; got {type(config).__name__}")
    started = time.perf_counter()
    analysis = AnalysisConfig(program=program, attacks=())
    built = AnalysisData.build(data, analysis)
    if built.baseline is None:
        raise InvalidParameterError("the recommendation needs a program and an outcome — choose a target column")
    metric = config.target.metric
    measured = analyse(built, None, seed=0, attacks=False).metrics
    names = [name for name, _ in measured.program] + ["decision_agreement"]
    if metric not in names:
        raise InvalidParameterError(
            f"the target's metric {metric!r} is not measured for this program; choose one of {sorted(names)}"
        )
    threshold = config.target.threshold(measured.value(metric))
    notes: list[str] = []
    no_data_rule = _no_data_rule(built.baseline, metric, threshold, config.target.op)
    if no_data_rule is not None:
        rule, value = no_data_rule
        notes.append(
            f"the target {config.target.describe()} is met by '{rule}' ({value:.4g}), a rule that uses no data: a "
            "release meeting it may still be useless for the program — choose a stricter target (suggest_target "
            "proposes one between the best such rule and the non-private program)"
        )
    delta = default_delta(built.n_released) if config.delta is None else float(config.delta)
    gamma = config.theorem_gamma
    d = built.x_rel.shape[1]
    log: list[dict[str, float | int | str]] = []
    frontier: list[FrontierPoint] = []
    total = len(config.mechanisms) * len(config.b_values)
    done = 0
    complete = True

    def search(m_index: int, kind: str, b_index: int, b: float) -> FrontierPoint | None:
        cls = MECHANISMS[kind]

        def evaluate(bb: float, eps: float, i: int) -> float:
            mechanism = cls.from_budget(bb, eps, delta, d=d)
            # one stream per (mechanism, B, ε, release): the bit pattern of ε makes the key exact
            eps_bits = int(np.float64(eps).view(np.uint64))
            seed = np.random.SeedSequence(config.seed, spawn_key=(m_index, b_index, eps_bits, i))
            return analyse(built, mechanism, seed=seed, attacks=False).metrics.value(metric)

        found = frontier_for_b(evaluate, b, threshold, config, log=log)
        if found is None:
            return None
        eps, values = found
        mean, lo, hi = _bounds(values, config.confidence, config.max_repetitions - config.min_repetitions + 1)
        implied = float(tdp_to_dp(eps, delta, b)[0])
        return FrontierPoint(kind, float(b), float(eps), delta, tuple(values), mean, lo, hi, implied)

    for m_index, kind in enumerate(config.mechanisms):
        for b_index, b in enumerate(config.b_values):
            if cancel is not None and cancel.cancelled:
                complete = False
                break
            point = search(m_index, kind, b_index, b)
            if point is not None:
                frontier.append(point)
            done += 1
            if progress is not None:
                progress(Progress(done, total, f"{kind}, B = {b:g}", elapsed=time.perf_counter() - started))
        if not complete:
            break
    # The most protective point: FrontierPoint.rank (non-vacuous by ε′, then vacuous by B and ε; the better mean of
    # the target's metric on a tie — two mechanisms often reach the same ε on the same bisection grid).
    sign = -1.0 if config.target.op == ">=" else 1.0
    recommended = min(frontier, key=lambda p: p.rank(sign)) if frontier else None
    at_edge = False
    extensions = 0
    smallest = min(config.b_values)
    while complete and recommended is not None and recommended.b == smallest:
        # the best point is at the smallest B searched: halve B (same mechanism) while that improves it
        if recommended.b <= B_FLOOR or extensions == MAX_B_EXTENSIONS or (cancel is not None and cancel.cancelled):
            at_edge = True
            break
        extensions += 1
        smallest = max(B_FLOOR, recommended.b / 2)
        kind = recommended.mechanism
        point = search(config.mechanisms.index(kind), kind, len(config.b_values) + extensions, smallest)
        if point is None or point.rank(sign) >= recommended.rank(sign):
            break  # interior: the next smaller B does not protect more
        frontier.append(point)
        recommended = point
    if recommended is not None and not at_edge and recommended.b == max(config.b_values) < 2.0:
        at_edge = True  # the largest B searched, below classic DP's 2: a larger B was not searched
    if at_edge and recommended is not None:
        notes.append(f"the recommendation is at the edge of the search (B = {recommended.b:g}): B beyond it was not "
                     "searched, so a more protective point may exist there")
    elif extensions and recommended is not None:
        notes.append(f"the best point was at the smallest B of the grid, so B was halved while that helped: the "
                     f"recommendation at B = {recommended.b:g} is interior (B = {smallest:g} protects less)")
    theorem: dict[str, Any] = {}
    protections: dict[str, float] = {}
    if recommended is not None:
        theorem["gamma_max"] = float(gamma_max(recommended.b, recommended.epsilon, delta))
        theorem["note"] = ("Theorem 1 is a worst case over data sets (each decision right with probability ≥ γ); the "
                           "target is checked on these data, on average over the people — a different statement")
        if gamma is not None:
            least = float(min_epsilon(recommended.b, gamma, delta))
            theorem.update(gamma=gamma, min_epsilon=least,
                           inside=bool(is_feasible(recommended.b, gamma, recommended.epsilon, delta)),
                           epsilon_over_min=recommended.epsilon / least if least > 0 else math.inf)
        if recommended.vacuous:
            notes.append("every point that meets the target implies a VACUOUS classic-DP statement (δ′ = 1): the "
                         "recommendation is the most protective by B and ε, and its (B, ε, δ)-TDP guarantee is the "
                         "statement that holds — no classic-DP guarantee for two arbitrary records")
        chosen = MECHANISMS[recommended.mechanism].from_budget(recommended.b, recommended.epsilon, delta, d=d)
        full = AnalysisData.build(data, AnalysisConfig(program=program, attacks=ATTACKS))
        measured_there = analyse(full, chosen, seed=np.random.SeedSequence(config.seed, spawn_key=(2**31,))).metrics
        protections = {f"protection_{a.attack}": float(a.protection) for a in measured_there.attacks}
    else:
        notes.append("no searched configuration meets the target with the required confidence — relax the target, "
                     "allow a larger ε or a smaller B (each adds less noise, and protects less), or check that the "
                     "non-private program meets it")
    result = Recommendation(config, recommended, tuple(frontier), tuple(log), theorem, protections, complete,
                            time.perf_counter() - started, tuple(notes), at_edge, no_data_rule)
    if not complete:
        err = CancelledError("the search was cancelled; the frontier found so far is kept")
        err.partial = result  # type: ignore[attr-defined]
        raise err
    return result
