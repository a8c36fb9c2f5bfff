r"""The workshop: up to six pinned candidate configurations, compared side by side, one chosen and why (issue 12).

A *candidate* (:class:`Candidate`) is a (B, ε, δ) budget, optionally with the configured mechanism that spends it and
the evidence measured for it on the data (:class:`Evidence`: the program metric with its interval, the decision agreement,
extra exclusion errors in people, profit, the three protections, the noise per coordinate). The designer pins
candidates from any page — the feasibility map (a budget), a Mechanisms run, a Tradeoffs sweep point, a
recommendation — into a :class:`Workshop` (at most :data:`MAX_PINNED`), compares them (:func:`comparison_rows`),
chooses one and writes the group's rationale; the decision record carries the whole workshop.

Nothing here is new science: every number comes from an existing engine function — the guarantee
(:class:`engine.guarantee.Guarantee`), its implied classic DP and per-record loss (the switch lemma,
:func:`engine.per_record.tdp_losses.tdp_policy`), the analysis' rows (:func:`engine.analysis.analyse_mechanisms`,
:func:`engine.sweeps.run_sweep`) and their intervals (:func:`engine.analysis.mean_interval`).

What an attacker can learn, in odds (:func:`odds_bound`)
-------------------------------------------------------
For an (ε, δ) guarantee between two neighbouring datasets D (X's record in) and D' (another record instead), every
set S of outputs satisfies P[M(D) ∈ S] ≤ e^ε · P[M(D') ∈ S] + δ. Bayes' rule then bounds an adversary's posterior
odds after seeing S:

.. math:: \frac{P[D \mid S]}{P[D' \mid S]} \le \Bigl(e^\varepsilon + \frac{\delta}{P[M(D') \in S]}\Bigr)
          \cdot \frac{P[D]}{P[D']}.

So from 50:50 (odds 1:1) the adversary moves to at most e^ε : 1 — exactly, for every outcome, when δ = 0. With
δ > 0 the e^ε factor holds for outcomes that are much more likely than δ; δ is the total probability by which the
release may exceed the e^ε ratio on any set of outcomes, so rarer outcomes can move the odds further. The statement
is a **bound** (the most the guarantee allows; a real mechanism may allow less). For a targeted-DP guarantee it
holds for two records within B of each other; for any two records it holds with the implied classic-DP (ε', δ').

Example
-------
>>> from engine.guarantee import Guarantee
>>> c = Candidate(label="Example 1", source="feasibility", guarantee=Guarantee(epsilon=1.0, delta=1e-6, b=0.4))
>>> w = Workshop().pin(c)
>>> round(odds_bound(1.0), 4), len(w.pinned), comparison_rows(w.pinned)[0].implied_epsilon
(2.7183, 1, 5.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from engine.attacks.threat_model import protection_in_words
from engine.constraints import Constraint, Integer, Real, check_declared
from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee
from engine.serialization import Serializable

if TYPE_CHECKING:  # imported where used: the session state imports this module on every page
    import pandas as pd

    from engine.analysis import Metrics
    from engine.mechanisms import RecordMechanism
    from engine.recommend import Recommendation
    from engine.release_analysis import ReleaseAnalysis
    from engine.sweeps import SweepResult

__all__ = [
    "MAX_PINNED",
    "PROTECTIONS",
    "SIMULATION_LABEL",
    "SOURCES",
    "Candidate",
    "ComparisonRow",
    "Evidence",
    "Interval",
    "Workshop",
    "candidate_from_recommendation",
    "candidate_from_run",
    "candidate_from_sweep",
    "COMPARISON_LINES",
    "comparison_cells",
    "comparison_frame",
    "comparison_rows",
    "evidence_from_runs",
    "odds_bound",
    "odds_headline",
    "odds_statement",
]

#: Most candidates one workshop compares (a projector shows six columns legibly).
MAX_PINNED = 6
#: Longest candidate label (it is a column heading and a slide title).
MAX_LABEL = 80
#: Longest rationale (the group's few paragraphs; a record stays small).
MAX_RATIONALE = 10_000
#: Where a candidate was pinned, and how the Studio names that place.
Source = Literal["feasibility", "mechanisms", "tradeoffs", "recommendation"]
SOURCES: dict[str, str] = {
    "feasibility": "feasibility map (a budget)",
    "mechanisms": "Mechanisms run",
    "tradeoffs": "Tradeoffs sweep point",
    "recommendation": "recommendation",
}
#: Shown wherever evidence measured with a fixed seed is shown or exported.
SIMULATION_LABEL = "simulation — not private"
#: The three protections (the analysis' ``protection_<name>`` columns), in the order the Studio shows them.
PROTECTIONS: tuple[str, ...] = ("singling_out", "attribute_inference", "distinguishing")


@dataclass(frozen=True)
class Interval(Serializable):
    """A measured mean with its confidence interval (``low``/``high`` None for a single run)."""

    mean: float
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        for name in ("mean", "low", "high"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not math.isfinite(value)):
                raise InvalidParameterError(f"an interval's {name} must be a finite number; got {value!r}")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise InvalidParameterError(f"an interval's low end {self.low:g} is above its high end {self.high:g}")

    @classmethod
    def of(cls, values: Sequence[float], confidence: float = 0.95) -> Interval | None:
        """Mean and interval of repeated runs (:func:`engine.analysis.mean_interval`); None without a finite value."""
        from engine.analysis import mean_interval

        mean, _, lo, hi = mean_interval(values, confidence)
        if not math.isfinite(mean):
            return None
        finite = math.isfinite(lo) and math.isfinite(hi)
        return cls(mean=float(mean), low=float(lo) if finite else None, high=float(hi) if finite else None)


@dataclass(frozen=True)
class Evidence(Serializable):
    """What was measured for a candidate on the data.

    Attributes
    ----------
    metric : str or None
        The program's headline metric (``accuracy``, ``profit``, ``r2``, or the recommender's target metric); None
        when the data have no outcome (no program ran).
    value : Interval or None
        That metric over the releases.
    repetitions : int
        Releases the intervals are over.
    measured_gamma : Interval or None
        Decision agreement with the non-private program.
    extra_exclusion_errors : Interval or None
        Targeting: extra exclusion errors against the non-private program, scaled to the population.
    profit : Interval or None
        Lending: total profit.
    protections : dict
        ``singling_out``, ``attribute_inference``, ``distinguishing`` → protection score in [0, 1] (absent when that
        attack did not run).
    distinguishing_exact : bool or None
        True when the distinguishing score is the mechanism's exact trade-off, False when a bound from its guarantee.
    noise_sd : float or None
        Per-coordinate noise sd on the unbiased scale.
    seed : int or None
        The seed the evidence was produced with (None = OS entropy). A seeded result is a simulation, not private.
    data : str or None
        Fingerprint of the prepared data it was measured on (``PreparedData.fingerprint``), so that evidence from
        other data is flagged (:attr:`ComparisonRow.other_data`) rather than compared as if it were this data's.
    baselines : dict
        The rules that use no data (target nobody, approve everyone, …) → their mean value of ``metric`` on the same
        rows, so that a candidate no better than one of them is flagged (:attr:`no_better_than`).
    """

    metric: str | None
    value: Interval | None
    repetitions: int
    measured_gamma: Interval | None = None
    extra_exclusion_errors: Interval | None = None
    profit: Interval | None = None
    protections: dict[str, float] = field(default_factory=dict)
    distinguishing_exact: bool | None = None
    noise_sd: float | None = None
    seed: int | None = None
    data: str | None = None
    baselines: dict[str, float] = field(default_factory=dict)

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "repetitions": Integer(1),
        "noise_sd": Real(0, None, closed="left", optional=True),
        "seed": Integer(0, optional=True, hint="a seed is a whole number ≥ 0 (or null for OS entropy)"),
    }

    def __post_init__(self) -> None:
        check_declared(self)
        unknown = sorted(set(self.protections) - set(PROTECTIONS))
        if unknown:
            raise InvalidParameterError(f"unknown protection(s) {unknown}; the Studio measures {list(PROTECTIONS)}")
        for name, score in self.protections.items():
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= score <= 1.0:
                raise InvalidParameterError(f"the {name.replace('_', ' ')} protection must lie in [0, 1]; got {score!r}")
        if (self.metric is None) != (self.value is None):
            raise InvalidParameterError("evidence states a program metric and its value together, or neither")

    @property
    def seeded(self) -> bool:
        return self.seed is not None

    @property
    def no_better_than(self) -> list[str]:
        """The rules that use no data at least as good as this candidate's program metric even at the favourable
        end of its interval (its mean when there is no interval): such a candidate is no better than that rule on
        these data, and is flagged wherever it is shown.

        >>> ev = Evidence("accuracy", Interval(0.68, 0.66, 0.69), 5, baselines={"target nobody": 0.697})
        >>> ev.no_better_than
        ['target nobody']
        >>> Evidence("accuracy", Interval(0.75, 0.73, 0.77), 5, baselines={"target nobody": 0.697}).no_better_than
        []
        """
        from engine.evaluation.metrics import higher_is_better
        from engine.evaluation.programs import beaten_by

        if self.metric is None or self.value is None:
            return []
        up = higher_is_better(self.metric)
        best = self.value.high if up else self.value.low
        best = self.value.mean if best is None else best
        return beaten_by(best, {rule: {self.metric: v} for rule, v in self.baselines.items()}, self.metric)


def evidence_from_runs(runs: Sequence[Metrics], metric: str | None, *, seed: int | None,
                       confidence: float = 0.95, data: str | None = None) -> Evidence:
    """Evidence from the typed numbers (:class:`engine.analysis.Metrics`) of repeated releases of one configuration —
    a Mechanisms run's ``PointAnalysis.runs`` or a sweep point's (:meth:`engine.sweeps.SweepResult.metrics_at`).

    Every number is aggregated over the releases by the one rule (:mod:`engine.analysis`): the mean (with an interval
    for the program's metrics); each protection by :func:`engine.analysis.protection_interval` (attribute inference:
    the worst cell after averaging each cell over the releases). ``metric`` is the program's headline metric (None
    without a program); ``data`` the prepared data's fingerprint.
    """
    from engine.analysis import protection_interval

    if not runs:
        raise InvalidParameterError("no releases were analysed for this candidate — run it first")

    def column(name: str) -> list[float]:
        return [m.value(name) for m in runs]

    def mean_of(values: Sequence[float]) -> float | None:
        finite = np.asarray(values, dtype=float)
        finite = finite[np.isfinite(finite)]
        return float(finite.mean()) if finite.size else None

    protections = {p: protection_interval(runs, p, confidence)[0] for p in PROTECTIONS}
    dist = [m.attack("distinguishing") for m in runs]
    exact = mean_of([dict(a.details).get("distinguishing_exact", math.nan) for a in dist if a is not None])
    rules = dict(runs[0].baselines) if metric else {}
    baselines = {rule: mean_of([dict(m.baselines).get(rule, math.nan) for m in runs]) for rule in rules}
    value = Interval.of(column(metric), confidence) if metric else None
    return Evidence(
        metric=metric if value is not None else None,
        value=value,
        repetitions=len(runs),
        measured_gamma=Interval.of(column("decision_agreement"), confidence),
        extra_exclusion_errors=Interval.of(column("extra_exclusion_errors_population"), confidence),
        profit=Interval.of(column("profit"), confidence),
        protections={p: min(1.0, max(0.0, v)) for p, v in protections.items() if math.isfinite(v)},
        distinguishing_exact=None if exact is None else exact >= 0.5,
        noise_sd=mean_of(column("noise_sd")),
        seed=seed,
        data=data,
        baselines={rule: v for rule, v in baselines.items() if v is not None},
    )


@dataclass(frozen=True)
class Candidate(Serializable):
    """One pinned configuration: a label, where it was pinned, its (B, ε, δ) guarantee, and optionally the mechanism
    that gives it and the evidence measured for it.

    ``mechanism`` is a mechanism's ``to_dict()`` (validated by rebuilding it, as :class:`engine.release.ReleaseConfig`
    does); its guarantee must be ``guarantee``. Without a mechanism (a budget pinned from the feasibility map) the
    evidence is measured with the Gaussian mechanism spending the budget (:meth:`build_mechanism`).
    """

    KIND: ClassVar[str] = "candidate"

    label: str
    source: Source
    guarantee: Guarantee
    mechanism: dict[str, Any] | None = None
    evidence: Evidence | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label.strip():
            raise InvalidParameterError("a pinned candidate needs a label — type a short name for it")
        if len(self.label) > MAX_LABEL:
            raise InvalidParameterError(f"a candidate's label is at most {MAX_LABEL} characters; got {len(self.label)}")
        if self.source not in SOURCES:
            raise InvalidParameterError(f"a candidate's source must be one of {list(SOURCES)}; got {self.source!r}")
        if not isinstance(self.guarantee, Guarantee):
            raise InvalidParameterError("a candidate's guarantee must be a (B, ε, δ) Guarantee")
        if self.mechanism is not None:
            from engine.mechanisms import RecordMechanism, mechanism_from_dict

            mechanism = self.mechanism
            if isinstance(mechanism, RecordMechanism):
                mechanism = mechanism.to_dict()
            built = mechanism_from_dict(mechanism)
            object.__setattr__(self, "mechanism", built.to_dict())
            stated = built.guarantee()
            if not isinstance(stated, Guarantee):
                raise InvalidParameterError(
                    f"{type(built).LABEL} gives no (B, ε, δ) guarantee, so it cannot be compared in the workshop — "
                    "pin a differentially private mechanism"
                )
            same = (stated.relation == self.guarantee.relation
                    and all(math.isclose(getattr(stated, k), getattr(self.guarantee, k), rel_tol=1e-9, abs_tol=1e-300)
                            for k in ("epsilon", "delta", "b")))
            if not same:
                raise InvalidParameterError(
                    f"the candidate {self.label!r} states {self.guarantee.headline()} but its mechanism gives "
                    f"{stated.headline()} — the file was edited; export it again"
                )

    @classmethod
    def of(cls, label: str, source: Source, mechanism: RecordMechanism, evidence: Evidence | None = None) -> Candidate:
        """A candidate for a configured mechanism: the guarantee is the mechanism's own.

        Raises
        ------
        InvalidParameterError
            The mechanism gives no (B, ε, δ) guarantee (k-anonymity).
        """
        stated = mechanism.guarantee()
        if not isinstance(stated, Guarantee):
            raise InvalidParameterError(
                f"{type(mechanism).LABEL} gives no (B, ε, δ) guarantee, so it cannot be compared in the workshop — "
                "pin a differentially private mechanism"
            )
        return cls(label=label, source=source, guarantee=stated, mechanism=mechanism.to_dict(), evidence=evidence)

    def build_mechanism(self, d: int | None = None) -> RecordMechanism:
        """The pinned mechanism, or — for a budget — the simplest mechanism spending it exactly (what evidence is
        measured with: ``engine.mechanisms.base.reference_mechanism``, the Gaussian mechanism). ``d`` (the number of
        features) is not needed by either."""
        from engine.mechanisms import mechanism_from_dict
        from engine.mechanisms.base import reference_mechanism

        if self.mechanism is not None:
            return mechanism_from_dict(self.mechanism)
        g = self.guarantee
        return reference_mechanism(g.b, g.epsilon, g.delta)

    @property
    def seeded(self) -> bool:
        """True when the evidence was produced with a seed: a simulation, not private."""
        return self.evidence is not None and self.evidence.seeded

    def with_evidence(self, evidence: Evidence) -> Candidate:
        """The same candidate with ``evidence`` (measured by the Workshop for a candidate pinned without it)."""
        return replace(self, evidence=evidence)


@dataclass(frozen=True)
class Workshop(Serializable):
    """The pinned candidates (at most :data:`MAX_PINNED`), the one the group chose (an index) and its rationale.

    Immutable: :meth:`pin`, :meth:`unpin`, :meth:`choose` and :meth:`with_rationale` return a new workshop.
    """

    KIND: ClassVar[str] = "workshop"

    pinned: tuple[Candidate, ...] = ()
    chosen: int | None = None
    rationale: str = ""

    def __post_init__(self) -> None:
        if len(self.pinned) > MAX_PINNED:
            raise InvalidParameterError(
                f"a workshop compares at most {MAX_PINNED} candidates; got {len(self.pinned)}"
            )
        if self.chosen is not None:
            if isinstance(self.chosen, bool) or not isinstance(self.chosen, int) or not (
                    0 <= self.chosen < len(self.pinned)):
                raise InvalidParameterError(
                    f"the chosen candidate must be one of the {len(self.pinned)} pinned (0 to "
                    f"{len(self.pinned) - 1}); got {self.chosen!r}"
                )
        if not isinstance(self.rationale, str):
            raise InvalidParameterError("the rationale must be text")
        if len(self.rationale) > MAX_RATIONALE:
            raise InvalidParameterError(f"the rationale is at most {MAX_RATIONALE:,} characters; got "
                                        f"{len(self.rationale):,} — shorten it")

    @property
    def choice(self) -> Candidate | None:
        return None if self.chosen is None else self.pinned[self.chosen]

    def pin(self, candidate: Candidate) -> Workshop:
        """Add ``candidate``.

        Raises
        ------
        InvalidParameterError
            Six are already pinned, or the same configuration is (same guarantee, mechanism and evidence).
        """
        if len(self.pinned) >= MAX_PINNED:
            raise InvalidParameterError(
                f"{MAX_PINNED} candidates are already pinned, the most a workshop compares — unpin one on the "
                "Workshop page before pinning another"
            )
        for other in self.pinned:
            if (other.guarantee, other.mechanism, other.evidence) == (
                    candidate.guarantee, candidate.mechanism, candidate.evidence):
                raise InvalidParameterError(f"this configuration is already pinned as {other.label!r}")
        return replace(self, pinned=(*self.pinned, candidate))

    def unpin(self, index: int) -> Workshop:
        """Remove the candidate at ``index``; the choice follows its candidate (cleared if it was the one removed)."""
        if not 0 <= index < len(self.pinned):
            raise InvalidParameterError(f"there is no pinned candidate {index + 1}")
        chosen = self.chosen
        if chosen is not None:
            chosen = None if chosen == index else chosen - (chosen > index)
        return replace(self, pinned=self.pinned[:index] + self.pinned[index + 1:], chosen=chosen)

    def replace_candidate(self, index: int, candidate: Candidate) -> Workshop:
        """The candidate at ``index`` replaced (e.g. with measured evidence added)."""
        if not 0 <= index < len(self.pinned):
            raise InvalidParameterError(f"there is no pinned candidate {index + 1}")
        return replace(self, pinned=self.pinned[:index] + (candidate,) + self.pinned[index + 1:])

    def choose(self, index: int | None) -> Workshop:
        return replace(self, chosen=index)

    def with_rationale(self, text: str) -> Workshop:
        return replace(self, rationale=str(text))


def candidate_from_run(run: ReleaseAnalysis, label: str) -> Candidate:
    """A Mechanisms run (:class:`engine.release_analysis.ReleaseAnalysis`) as a candidate with its evidence: the
    chosen mechanism's releases (``points[0].runs``) and the run's recorded seed (None for a real release)."""
    program = run.program
    evidence = evidence_from_runs(run.points[0].runs, None if program is None else program.headline_metric,
                                  seed=run.summary.get("seed"), data=(run.summary.get("data") or {}).get("sha256"))
    return Candidate.of(label, "mechanisms", run.mechanism, evidence)


def candidate_from_sweep(result: SweepResult, point: int, label: str, *, d: int | None = None) -> Candidate:
    """Grid point ``point`` of a sweep (:class:`engine.sweeps.SweepResult`) as a candidate: its mechanism
    (:meth:`SweepResult.mechanism_at`) and the evidence of its rows (a sweep is seeded: a simulation)."""
    found = result.mechanism_at(int(point), d=d)
    if found is None:
        raise InvalidParameterError("the non-private reference is not a candidate — choose a private point")
    metric = result.config.program.headline_metric
    return Candidate.of(label, "tradeoffs", found[0],
                        evidence_from_runs(result.metrics_at(int(point)), metric, seed=int(result.config.seed),
                                           data=result.fingerprint or None))


def candidate_from_recommendation(recommendation: Recommendation, label: str, *, d: int | None = None,
                                  data: str | None = None) -> Candidate:
    """The recommended point of :func:`engine.recommend.recommend` as a candidate: the mechanism spending its
    (B, ε, δ), the target metric's interval from the search's releases and the protections measured there (the
    search is seeded: a simulation). ``data`` is the fingerprint of the prepared data searched."""
    point = recommendation.recommended
    if point is None:
        raise InvalidParameterError("the search found no configuration that meets the target — nothing to pin")
    mechanism = point.build_mechanism(d)
    finite = math.isfinite(point.lower) and math.isfinite(point.upper)
    evidence = Evidence(
        metric=recommendation.config.target.metric,
        value=Interval(point.mean, point.lower if finite else None, point.upper if finite else None),
        repetitions=len(point.values),
        protections={p: float(recommendation.protections[f"protection_{p}"]) for p in PROTECTIONS
                     if f"protection_{p}" in recommendation.protections},
        seed=recommendation.config.seed,
        data=data,
    )
    return Candidate.of(label, "recommendation", mechanism, evidence)


# ---------------------------------------------------------------------------------------------------- odds
def odds_bound(epsilon: float, prior_odds: float = 1.0) -> float:
    """The largest posterior odds an (ε, 0) guarantee allows from ``prior_odds``: e^ε × prior odds (a bound; see the
    module docstring for δ > 0). ``inf`` when e^ε overflows.

    >>> round(odds_bound(1.0), 6), round(odds_bound(0.5, 3.0), 6)
    (2.718282, 4.946164)
    """
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon >= 0):
        raise InvalidParameterError(f"ε must be a finite number ≥ 0; got {epsilon!r}")
    if not (isinstance(prior_odds, (int, float)) and math.isfinite(prior_odds) and prior_odds > 0):
        raise InvalidParameterError(f"prior odds must be a finite number > 0; got {prior_odds!r}")
    try:
        return math.exp(epsilon) * float(prior_odds)
    except OverflowError:
        return math.inf


def _move_to(odds: float) -> str:
    """"to at most 2.72:1", or for odds beyond a million the plain statement that almost nothing is protected."""
    if not math.isfinite(odds) or odds >= 1e6:
        return "to odds beyond 1,000,000:1 (this protects almost nothing)"
    return f"to at most {odds:,.3g}:1"


def odds_statement(guarantee: Guarantee) -> str:
    """One sentence: how far an adversary at 50:50 can move, for records within B and for any two records (a bound).

    >>> odds_statement(Guarantee(epsilon=1.0, delta=0.0)).split(" — ")[0]
    'Bound: an adversary who thought it 50:50 that X is in the program could move to at most 2.72:1'
    """
    g = guarantee
    delta_text = (
        "exactly, for every outcome (δ = 0)" if g.delta == 0 else
        f"for every outcome much more likely than δ = {g.delta:.3g}; δ is the total probability by which the release "
        "may exceed that ratio, so rarer outcomes can move the odds further"
    )
    if g.relation == "element":
        return (f"Bound: an adversary who thought it 50:50 which of two values one entry has could move "
                f"{_move_to(odds_bound(g.epsilon))} — {delta_text}.")
    if g.is_classic_dp:
        return (f"Bound: an adversary who thought it 50:50 that X is in the program could move "
                f"{_move_to(odds_bound(g.epsilon))} — for any two records, {delta_text}.")
    dp = g.implied_dp()
    anyone = (
        "against someone with any record nothing is bounded (the implied classic DP is vacuous: δ' = 1)" if dp.vacuous
        else f"against someone with any record, {_move_to(odds_bound(dp.epsilon))} (implied classic DP, δ' = "
        f"{dp.delta:.3g})"
    )
    return (
        f"Bound: an adversary who thought it 50:50 that X is in the program (rather than someone whose record is within "
        f"B = {g.b:g}) could move {_move_to(odds_bound(g.epsilon))}; {anyone} — {delta_text}."
    )


def odds_headline(guarantee: Guarantee) -> str:
    """The odds bound in a few words (presenter mode): "50:50 → at most 2.72:1 within B = 0.4; any record: …".

    >>> odds_headline(Guarantee(epsilon=1.0, delta=1e-6, b=0.4))
    '50:50 → at most 2.72:1 within B = 0.4; any record: at most 148:1 (bounds, up to δ)'
    """
    g = guarantee

    def short(odds: float) -> str:
        return "beyond 1,000,000:1" if not math.isfinite(odds) or odds >= 1e6 else f"at most {odds:,.3g}:1"

    suffix = " (bound, up to δ)" if g.delta > 0 else " (bound)"
    if g.relation == "element":
        return f"50:50 → {short(odds_bound(g.epsilon))} for one entry" + suffix
    if g.is_classic_dp:
        return f"50:50 → {short(odds_bound(g.epsilon))} for any record" + suffix
    dp = g.implied_dp()
    anyone = "no bound (vacuous)" if dp.vacuous else short(odds_bound(dp.epsilon))
    return f"50:50 → {short(odds_bound(g.epsilon))} within B = {g.b:g}; any record: {anyone}" + suffix.replace(
        "bound", "bounds")


# ---------------------------------------------------------------------------------------------- comparison
@dataclass(frozen=True)
class ComparisonRow:
    """One pinned candidate's column of the comparison, every number from an engine function.

    ``loss_t2`` is the (ε, δ) protecting a record against one at distance 2 (the farthest two rows of the unit
    ball can be: the switch lemma); ``loss_nn_median`` / ``loss_nn_max`` the per-record ε at each record's nearest
    distinct row (:func:`engine.per_record.tdp_losses.tdp_policy`), its median and largest over the records (None
    without data or for an element-level guarantee). ``odds`` and ``odds_classic`` are :func:`odds_bound` from 1:1 at
    ε and at the implied classic ε'; ``odds_text`` says it in a sentence (:func:`odds_statement`), ``odds_headline``
    in a few words (:func:`odds_headline`). ``other_data`` is True when the evidence was measured on data other than
    the loaded (another fingerprint).
    """

    index: int
    label: str
    source: str
    mechanism: str
    headline: str
    b: float
    epsilon: float
    delta: float
    implied_epsilon: float
    implied_delta: float
    loss_t2: tuple[float, float] | None
    loss_nn_median: float | None
    loss_nn_max: float | None
    odds: float
    odds_classic: float
    odds_text: str
    odds_headline: str
    evidence: Evidence | None
    simulation: bool
    chosen: bool
    other_data: bool = False

    def protection_basis(self, name: str) -> str:
        """How a protection score was obtained: "exact" or "bound" (distinguishing, as the analysis labels it), or
        "measured" (an attack run on the release)."""
        if name == "distinguishing" and self.evidence is not None and self.evidence.distinguishing_exact is not None:
            return "exact" if self.evidence.distinguishing_exact else "bound"
        return "measured"


def comparison_rows(pinned: Sequence[Candidate], *, x: np.ndarray | None = None, chosen: int | None = None,
                    d: int | None = None, fingerprint: str | None = None) -> list[ComparisonRow]:
    """The comparison of the pinned candidates, one :class:`ComparisonRow` each.

    Parameters
    ----------
    pinned : sequence of Candidate
    x : ndarray, optional
        The prepared rows (unit ball): gives each record's nearest distinct row, for the per-record loss there.
    chosen : int, optional
        Index of the chosen candidate (flagged in its row).
    d : int, optional
        Number of features (a JL release's label needs it only to rebuild a budget-only candidate).
    fingerprint : str, optional
        The loaded data's fingerprint: evidence measured on other data is flagged (``other_data``).
    """
    distances = None
    if x is not None and len(x) >= 2:
        from engine.per_record.tdp_losses import nearest_neighbour_distances

        try:
            distances = nearest_neighbour_distances(np.asarray(x, dtype=float))[0]
        except InvalidParameterError:  # all rows identical: no distinct neighbour
            distances = None
    rows = []
    for i, c in enumerate(pinned):
        g = c.guarantee
        dp = g.implied_dp()
        loss_t2: tuple[float, float] | None = None
        nn_median = nn_max = None
        if g.relation == "row":
            loss_t2 = tuple(float(v) for v in g.loss_at_distance(2.0))  # type: ignore[assignment]
            if distances is not None:
                from engine.per_record.tdp_losses import tdp_policy

                eps_nn = tdp_policy(np.minimum(distances, 2.0), g.epsilon, g.delta, g.b).epsilon
                nn_median, nn_max = float(np.median(eps_nn)), float(np.max(eps_nn))
        mechanism = c.build_mechanism(d)
        label = type(mechanism).LABEL + ("" if c.mechanism is not None else " (spending the pinned budget)")
        rows.append(ComparisonRow(
            index=i, label=c.label, source=SOURCES[c.source], mechanism=label, headline=g.headline(),
            b=float(g.b), epsilon=float(g.epsilon), delta=float(g.delta),
            implied_epsilon=float(dp.epsilon), implied_delta=float(dp.delta),
            loss_t2=loss_t2, loss_nn_median=nn_median, loss_nn_max=nn_max,
            odds=odds_bound(g.epsilon), odds_classic=odds_bound(dp.epsilon), odds_text=odds_statement(g),
            odds_headline=odds_headline(g),
            evidence=c.evidence, simulation=c.seeded, chosen=chosen == i,
            other_data=bool(fingerprint and c.evidence is not None and c.evidence.data not in (None, fingerprint)),
        ))
    return rows


def _interval_text(interval: Interval | None, *, digits: int = 3, people: bool = False) -> str:
    if interval is None:
        return "—"
    fmt = (lambda v: f"{v:,.0f}") if people else (lambda v: f"{v:.{digits}g}")
    if interval.low is None or interval.high is None:
        return f"{fmt(interval.mean)} (one release)"
    return f"{fmt(interval.mean)} [{fmt(interval.low)}, {fmt(interval.high)}]"


#: The comparison's lines, in the order the table, the report and the presenter show them.
COMPARISON_LINES: tuple[str, ...] = (
    "Pinned from", "Mechanism", "Guarantee", "Targeted DP (B, ε, δ)", "Implied classic DP (ε', δ') — conversion",
    "Per-record loss at t = 2 (ε, δ)", "Per-record ε at the nearest distinct row: median (largest)",
    "Attacker's odds from 50:50 — bound", "Program metric [95 % interval]", "Decision agreement",
    "Extra exclusion errors in people", "Profit", "Singling-out protection", "Attribute-inference protection",
    "Distinguishing protection", "Noise sd per coordinate", "Evidence",
)


def comparison_cells(row: ComparisonRow) -> dict[str, str]:
    """One candidate's column of the comparison table as text, keyed by :data:`COMPARISON_LINES`."""
    ev = row.evidence
    protections = ev.protections if ev is not None else {}

    def protection(name: str) -> str:
        if name not in protections:
            return "not measured"
        value = protections[name]
        text = f"{value:.3f} ({row.protection_basis(name)})"
        if 0.0 <= value <= 1.0:  # the scores' range; words for a reader who should not have to interpret 0.013
            text += ": " + protection_in_words(value, records=name == "distinguishing")
        return text

    if ev is None:
        status = "not measured yet — measure it on the data"
    elif ev.seeded:
        status = f"{SIMULATION_LABEL} (seed {ev.seed}, {ev.repetitions} releases)"
    else:
        status = f"fresh randomness, {ev.repetitions} releases"
    if row.other_data:
        status = "measured on OTHER data than the loaded — measure it again before comparing; " + status
    return {
        "Pinned from": row.source,
        "Mechanism": row.mechanism,
        "Guarantee": row.headline,
        "Targeted DP (B, ε, δ)": f"B = {row.b:.4g}, ε = {row.epsilon:.4g}, δ = {row.delta:.3g}",
        "Implied classic DP (ε', δ') — conversion": f"ε' = {row.implied_epsilon:.4g}, δ' = {row.implied_delta:.3g}",
        "Per-record loss at t = 2 (ε, δ)": "—" if row.loss_t2 is None else
        f"ε = {row.loss_t2[0]:.4g}, δ = {row.loss_t2[1]:.3g}",
        "Per-record ε at the nearest distinct row: median (largest)": "—" if row.loss_nn_median is None else
        f"{row.loss_nn_median:.4g} ({row.loss_nn_max:.4g})",
        "Attacker's odds from 50:50 — bound": row.odds_text,
        "Program metric [95 % interval]": "—" if ev is None or ev.value is None else
        f"{ev.metric}: {_interval_text(ev.value)}" + "".join(
            f" — NO BETTER than '{rule}' ({ev.baselines[rule]:.3g}), a rule that uses no data"
            for rule in ev.no_better_than[:1]),
        "Decision agreement": "—" if ev is None else _interval_text(ev.measured_gamma),
        "Extra exclusion errors in people": "—" if ev is None else _interval_text(ev.extra_exclusion_errors, people=True),
        "Profit": "—" if ev is None else _interval_text(ev.profit, people=True),
        "Singling-out protection": protection("singling_out"),
        "Attribute-inference protection": protection("attribute_inference"),
        "Distinguishing protection": protection("distinguishing"),
        "Noise sd per coordinate": "—" if ev is None or ev.noise_sd is None else f"{ev.noise_sd:.4g}",
        "Evidence": status,
    }


def comparison_frame(rows: Sequence[ComparisonRow]) -> pd.DataFrame:
    """The comparison as a table: one line per :data:`COMPARISON_LINES` entry, one column per candidate (its label,
    numbered; "✓ chosen" marks the choice)."""
    import pandas as pd

    columns = {f"{r.index + 1}. {r.label}" + (" ✓ chosen" if r.chosen else ""): comparison_cells(r) for r in rows}
    frame = pd.DataFrame({name: [cells[line] for line in COMPARISON_LINES] for name, cells in columns.items()},
                         index=list(COMPARISON_LINES))
    frame.index.name = "Candidate"
    return frame
