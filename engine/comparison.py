r"""The honest comparison: the alternatives at the same guarantee, and what the numbers say about them.

A designer who picked the targeted-DP paper's private projection should learn when the simpler Gaussian mechanism
gives more for the same (B, ε, δ) on their data — the Studio says so instead of leaving it to the eye.

* :func:`alternatives` — the other mechanisms configured at the same guarantee (each mechanism's ``from_budget``).
* :func:`distinguishing_references` — the mechanisms whose distinguishing curves are compared at a candidate.
* :func:`comparison_verdict` — plain-language findings from analysed mechanisms: which adds the least noise, which
  serves the program best (with intervals when there are repetitions), and which results are no better than a
  rule that needs no data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.errors import InvalidParameterError
from engine.evaluation.programs import METRICS, higher_is_better
from engine.guarantee import GuaranteeStatement
from engine.mechanisms import MECHANISMS, RecordMechanism

if TYPE_CHECKING:
    from engine.analysis import PointAnalysis

__all__ = ["Finding", "alternatives", "comparison_verdict", "distinguishing_references", "less_noise_advice",
           "same_guarantee"]


def same_guarantee(mechanism: RecordMechanism, candidate: GuaranteeStatement) -> tuple[float, float, float]:
    """(B, ε, δ) the alternatives are configured at: the mechanism's own record-level guarantee, or the candidate's
    when the mechanism has none (k-anonymity) or protects less than a record (element-wise JL) or guarantees
    nothing (δ ≥ 1)."""
    guarantee = mechanism.guarantee()
    record_level = (mechanism.tags().differentially_private and hasattr(guarantee, "epsilon")
                    and getattr(guarantee, "relation", "row") == "row")
    if record_level and math.isfinite(float(guarantee.epsilon)) and 0 <= float(guarantee.delta) < 1:
        return float(guarantee.b), float(guarantee.epsilon), float(guarantee.delta)
    return float(candidate.b), float(candidate.epsilon), float(candidate.delta)


def alternatives(mechanism: RecordMechanism, *, d: int, candidate: GuaranteeStatement) -> list[RecordMechanism]:
    """The other budget-configurable mechanisms at :func:`same_guarantee` (each by its own ``from_budget``; one that
    refuses the budget — e.g. the JL release, whose δ_fail must be in (0, 1) — is left out), then the non-DP
    baselines (mechanisms that give no (ε, δ) guarantee, in their first example configuration: k-anonymity with
    k = 2, the paper's) unless one is the chosen mechanism. In registration order.

    >>> from engine.mechanisms.gaussian import GaussianMechanism
    >>> from engine.guarantee import Guarantee
    >>> [m.KIND for m in alternatives(GaussianMechanism(0.5, 1.0, 1e-5), d=4, candidate=Guarantee(1.0, 1e-5, 0.5))]
    ['projection', 'jl-laplace', 'mondrian']
    """
    b, epsilon, delta = same_guarantee(mechanism, candidate)
    out: list[RecordMechanism] = []
    for kind, cls in MECHANISMS.items():
        if kind == mechanism.KIND:
            continue
        if cls.TAGS.budgeted:
            try:
                out.append(cls.from_budget(b, epsilon, delta, d=d))
            except InvalidParameterError:
                continue  # this budget is outside what the mechanism can spend
        elif not cls.TAGS.differentially_private:
            examples = cls.examples(d)
            if examples:
                out.append(next(iter(examples.values())))
    return out


def distinguishing_references(candidate: GuaranteeStatement, configured: RecordMechanism | None = None
                              ) -> list[tuple[str, RecordMechanism]]:
    """The mechanisms whose distinguishing (hypothesis-testing) curves are compared at ``candidate``'s (B, ε, δ).

    As ``(role, mechanism)`` pairs: every budget-configurable mechanism that does not need the number of features
    (role: its KIND) — the ``configured`` one when it spends exactly the candidate's budget, else its own
    ``from_budget`` — then ``"classic-dp"``, the first one with an exact trade-off at B = 2 (any two records: classic
    DP) with the same (ε, δ), and the ``configured`` differentially private mechanism under its KIND when it is not
    among them (e.g. the JL release).

    >>> from engine.guarantee import Guarantee
    >>> [(role, m.b) for role, m in distinguishing_references(Guarantee(epsilon=1.0, delta=1e-5, b=0.4))]
    [('projection', 0.4), ('gaussian', 0.4), ('classic-dp', 2.0)]
    """
    b, epsilon, delta = float(candidate.b), float(candidate.epsilon), float(candidate.delta)
    out: list[tuple[str, RecordMechanism]] = []
    for kind, cls in MECHANISMS.items():
        if not cls.TAGS.budgeted or cls.TAGS.needs_d:
            continue
        if configured is not None and configured.KIND == kind and _spends(configured, b, epsilon, delta):
            out.append((kind, configured))  # its curve depends on its budget (and split) only
        else:
            out.append((kind, cls.from_budget(b, epsilon, delta)))
    exact = next((cls for cls in MECHANISMS.values() if cls.TAGS.budgeted and cls.TAGS.exact_tradeoff
                  and not cls.TAGS.needs_d), None)
    if exact is not None:
        out.append(("classic-dp", exact.from_budget(2.0, epsilon, delta)))
    if (configured is not None and configured.tags().differentially_private
            and configured.KIND not in {role for role, _ in out}):
        out.append((configured.KIND, configured))
    return out


def _spends(mechanism: RecordMechanism, b: float, epsilon: float, delta: float) -> bool:
    g = mechanism.guarantee()
    return all(math.isclose(float(x), y, rel_tol=1e-9) for x, y in ((g.b, b), (g.epsilon, epsilon),
                                                                      (g.delta, delta)))


@dataclass(frozen=True)
class Finding:
    """One sentence of the verdict and how prominently to show it (``"warning"`` or ``"info"``)."""

    level: str
    text: str


def _noise_sd(mechanism: RecordMechanism, d: int) -> float:
    """The per-coordinate noise sd a mechanism's release states (data-free: a seeded release of one zero row)."""
    import numpy as np

    from engine.release import privatize

    release = privatize(mechanism, np.zeros((1, d)), sampler="numpy", rng=np.random.default_rng(0), seeded=True)
    value = release.details.get("noise_sd_per_coordinate")
    return math.nan if value is None else float(value)


def less_noise_advice(mechanism: RecordMechanism, *, d: int) -> str:
    """What reduces this mechanism's noise, read from the mechanism itself (not assumed): its noise at twice the ε and
    at half the B, each configured from the same budget (``from_budget``). For the TDP mechanisms a larger B adds
    noise — B is the distance within which records are protected — so the advice is a larger ε or a smaller B, each a
    weaker guarantee.

    >>> from engine.mechanisms.gaussian import GaussianMechanism
    >>> text = less_noise_advice(GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5), d=3)
    >>> "a larger ε" in text, "a smaller B (B / 2: noise sd × 0.5)" in text, "a larger B" in text
    (True, True, False)
    """
    tags = mechanism.tags()
    guarantee = mechanism.guarantee()
    if not tags.budgeted or not hasattr(guarantee, "b"):
        return ("This mechanism is not configured from a privacy budget; a budgeted mechanism (on the Mechanisms page) "
                "states what its noise costs.")
    b, eps, dlt = float(guarantee.b), float(guarantee.epsilon), float(guarantee.delta)
    cls = type(mechanism)
    now = _noise_sd(mechanism, d)
    parts = []
    for label, (bb, ee) in (("a larger ε (2 × ε", (b, 2 * eps)), ("a smaller B (B / 2", (b / 2, eps)),
                            ("a larger B (2 × B", (min(2.0, 2 * b), eps))):
        if bb == b and ee == eps:
            continue
        try:
            other = _noise_sd(cls.from_budget(bb, ee, dlt, d=d), d)
        except InvalidParameterError:
            continue
        if math.isfinite(now) and math.isfinite(other) and now > 0 and other < now * (1 - 1e-9):
            parts.append(f"{label}: noise sd × {other / now:.2g})")
    if not parts:
        return "This mechanism's noise does not fall with a larger ε or a smaller B here; reconsider the program."
    return f"Less noise at this mechanism needs {' or '.join(parts)} — each a weaker guarantee."


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def comparison_verdict(points: Sequence[PointAnalysis]) -> list[Finding]:
    """Findings from analysed mechanisms (:class:`engine.analysis.PointAnalysis`, the chosen one first).

    * Noise: when another mechanism adds less noise per coordinate than the chosen one at the same guarantee.
    * Program: the best mechanism for the program's headline metric, with "within the intervals" when the
      repetitions' confidence intervals overlap (then the data do not separate them).
    * Baselines: every mechanism whose program result is no better than a rule that needs no data.
    """
    if not points:
        return []
    findings: list[Finding] = []
    chosen = points[0]
    label = _label(chosen.mechanism)
    sd = {id(p): p.first.noise_sd for p in points}
    quieter = [p for p in points[1:] if math.isfinite(sd[id(p)]) and math.isfinite(sd[id(chosen)])
               and sd[id(p)] < sd[id(chosen)]]
    if quieter:
        best = min(quieter, key=lambda p: sd[id(p)])
        findings.append(Finding(
            "warning",
            f"{_label(best.mechanism)} adds less noise at the same guarantee: sd {_fmt(sd[id(best)])} per "
            f"coordinate against {_fmt(sd[id(chosen)])} for {label} ({_fmt(sd[id(chosen)] / sd[id(best)])}× more).",
        ))
    program = chosen.first.program
    if program is not None:
        metric = program.headline_metric
        name = METRICS[metric].label if metric in METRICS else metric
        up = higher_is_better(metric)
        scored = [p for p in points if p.first.program is not None]
        stats = {id(p): p.interval(metric) for p in scored}
        private = [p for p in scored if _is_dp(p.mechanism)]
        best = max(private or scored, key=lambda p: stats[id(p)][0] if up else -stats[id(p)][0])
        if best is not chosen:
            m_best, _, lo_b, hi_b = stats[id(best)]
            m_ch, _, lo_c, hi_c = stats[id(chosen)]
            overlap = all(math.isfinite(v) for v in (lo_b, hi_b, lo_c, hi_c)) and lo_b <= hi_c and lo_c <= hi_b
            text = (f"{_label(best.mechanism)} serves the program better on these data: {name} "
                    f"{_fmt(m_best)} against {_fmt(m_ch)} for {label}")
            if overlap:
                text += " — but within the 95 % intervals of the repetitions, so the data do not separate them."
                findings.append(Finding("info", text))
            else:
                findings.append(Finding("warning", text + "."))
        for p in scored:
            if not _is_dp(p.mechanism) and p is not chosen:
                m = stats[id(p)][0]
                if (up and m > stats[id(best)][0]) or (not up and m < stats[id(best)][0]):
                    findings.append(Finding(
                        "info",
                        f"{_label(p.mechanism)} scores {name} {_fmt(m)}, but it gives no (ε, δ) guarantee at "
                        "all: it is shown as the paper's non-DP baseline, not as an alternative at the same "
                        "guarantee.",
                    ))
        for p in scored:
            beaters = p.beaten_by()
            scored_program = p.first.program
            if beaters and scored_program is not None:
                findings.append(Finding(
                    "warning",
                    f"{_label(p.mechanism, 'The data')}: {name} "
                    f"{_fmt(stats[id(p)][0])} is no better than '{beaters[0]}' "
                    f"({_fmt(scored_program.baselines[beaters[0]][metric])}), a rule that uses no data.",
                ))
    return findings


def _label(mechanism: RecordMechanism | None, data: str = "the data") -> str:
    """A mechanism's plain-language name (``data`` for the data themselves)."""
    return data if mechanism is None else type(mechanism).LABEL


def _is_dp(mechanism: RecordMechanism | None) -> bool:
    """Whether the mechanism gives a differential-privacy-type guarantee (k-anonymity does not; its tags say so)."""
    return mechanism is None or mechanism.tags().differentially_private
