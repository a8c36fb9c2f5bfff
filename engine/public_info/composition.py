"""Composition of ε-TP guarantees (Lemmas 6–8) with the digest's caveats (G5, G6) and the study budget (G15).

Only :class:`~engine.public_info.guarantee.TPGuarantee` objects compose here; passing a (B, ε, δ)-TDP
:class:`engine.guarantee.Guarantee`, a zCDP statement or anything else raises
:class:`~engine.public_info.guarantee.IncompatibleGuaranteeError`: the standards protect different things and
adding their ε's would be meaningless.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.public_info.guarantee import (
    PARALLEL_CAVEAT,
    SEQUENTIAL_CAVEAT,
    IncompatibleGuaranteeError,
    TPGuarantee,
)
from engine.validation import check_integer, check_interval

__all__ = ["StudyBudget", "compose_sequential", "compose_parallel", "compose_replicates", "condition_on_public",
           "study_budget"]


def _check_all_tp(guarantees: Sequence[object]) -> list[TPGuarantee]:
    given = list(guarantees)
    if not given:
        raise IncompatibleGuaranteeError("guarantees must list at least one ε-TP guarantee; got none")
    items: list[TPGuarantee] = []
    for i, g in enumerate(given):
        if isinstance(g, TPGuarantee):
            items.append(g)
        else:
            raise IncompatibleGuaranteeError(
                f"guarantees[{i}] is a {type(g).__name__}, not an ε-TP guarantee — ε-TP (Pufferfish subject to Z) "
                "does not compose with (B, ε, δ)-TDP or ρ-zCDP statements; account for them separately"
            )
    return items


def _merge(items: list[TPGuarantee], epsilon: float, composition: str, caveat: str) -> TPGuarantee:
    public = tuple(dict.fromkeys(p for g in items for p in g.public))
    notes = tuple(dict.fromkeys(n for g in items for n in g.notes))
    return TPGuarantee(
        epsilon=epsilon,
        sensitivity=max(g.sensitivity for g in items),
        public=public,
        mechanism=" + ".join(dict.fromkeys(g.mechanism for g in items if g.mechanism)),
        unit=items[0].unit,
        exact=all(g.exact for g in items),
        composition=composition,  # type: ignore[arg-type]
        periods=max(g.periods for g in items),
        notes=notes + ((caveat,) if caveat not in notes else ()),
        basis="; ".join(dict.fromkeys(g.basis for g in items if g.basis)),
    )


def compose_sequential(guarantees: Sequence[object]) -> TPGuarantee:
    """Lemma 6 as the paper states it: ε1 + ε2 + … (with the G5 counterexample warning in the notes).

    Examples
    --------
    >>> g = TPGuarantee(epsilon=0.5, sensitivity=2.0)
    >>> compose_sequential([g, g]).epsilon
    1.0
    """
    items = _check_all_tp(guarantees)
    return _merge(items, float(sum(g.epsilon for g in items)), "sequential", SEQUENTIAL_CAVEAT)


def compose_parallel(guarantees: Sequence[object]) -> TPGuarantee:
    """Lemma 7 as the paper states it: max ε over disjoint blocks (with the G6 warning in the notes)."""
    items = _check_all_tp(guarantees)
    return _merge(items, float(max(g.epsilon for g in items)), "parallel", PARALLEL_CAVEAT)


def compose_replicates(guarantee: object, replicates: int) -> TPGuarantee:
    """R independent draws of one mechanism on the same data, published together: R·ε per period.

    Not Lemma 6 (whose G5 caveat is about different releases): the R draws are one joint mechanism whose loss is
    the sum of the R losses, so on the SAME Wasserstein-∞ coupling of the two secret-conditional laws (coupled
    tables within Δ_z) the joint density ratio is at most e^{Rε}; integrating over the coupling gives Rε-TP (the
    proof of Theorem 9 applied to the joint release). One replicate: unchanged.

    Examples
    --------
    >>> g = TPGuarantee(epsilon=0.5, sensitivity=4.0)
    >>> compose_replicates(g, 10).epsilon, compose_replicates(g, 1) is g
    (5.0, True)
    """
    (g,) = _check_all_tp([guarantee])
    r = check_integer("replicates", replicates, 1, None)
    if r == 1:
        return g
    note = (f"{r} replicates of one release published together: each spends ε = {g.epsilon:.6g} on the same data, "
            f"so together ε = {r} × {g.epsilon:.6g} = {r * g.epsilon:.6g} per period (one joint mechanism on the "
            "same coupling; averaging the replicates removes noise accordingly).")
    return TPGuarantee(
        epsilon=r * g.epsilon, sensitivity=g.sensitivity, public=g.public, mechanism=g.mechanism, unit=g.unit,
        exact=g.exact, composition="replicates", periods=g.periods, notes=g.notes + (note,), basis=g.basis,
    )


def condition_on_public(guarantee: object) -> TPGuarantee:
    """Lemma 8: an ε-DP output conditioned on agreeing with Z is 2ε-TP for the class renormalised on Z."""
    (g,) = _check_all_tp([guarantee])
    note = "Lemma 8: conditioning an ε-DP output on its agreement with Z doubles ε (attained, digest O7)."
    return TPGuarantee(
        epsilon=2 * g.epsilon, sensitivity=g.sensitivity, public=g.public, mechanism=g.mechanism, unit=g.unit,
        exact=g.exact, composition="conditioned", periods=g.periods, notes=g.notes + (note,), basis=g.basis,
    )


@dataclass(frozen=True)
class StudyBudget:
    """Per-period ε and the whole-study ε under the two readings of digest G15."""

    epsilon_per_period: float
    periods: int
    parallel: float
    sequential: float

    def describe(self) -> list[str]:
        return [
            f"ε = {self.epsilon_per_period:.6g} per period over {self.periods} periods.",
            f"Whole study if each person is counted in one period only (parallel, Lemma 7): ε = {self.parallel:.6g}.",
            f"Whole study if the same person may appear in every period (sequential, Lemma 6): "
            f"ε = {self.sequential:.6g}.",
            SEQUENTIAL_CAVEAT,
        ]


def study_budget(epsilon_per_period: float, periods: int) -> StudyBudget:
    """Whole-study ε: parallel (ε) and sequential (T·ε) — both shown, neither silently chosen (G15).

    Examples
    --------
    >>> study_budget(0.5, 24).sequential
    12.0
    """
    eps = check_interval("epsilon_per_period", epsilon_per_period, 0, None, closed="neither")
    t = check_integer("periods", periods, 1, None)
    return StudyBudget(eps, t, eps, eps * t)
