"""Composition of guarantees: the ONE module where guarantees are combined, whatever their standard.

Modelled on OpenDP's ``combinators`` (one combinator per operation, generic over the privacy measure, refusing to
mix measures): :func:`sequential_composition` (several releases of the SAME data) and
:func:`parallel_composition` (releases of DISJOINT parts) take guarantees of one standard and return the composed
guarantee of that standard:

* (B, ε, δ)-targeted DP (:class:`~engine.guarantee.Guarantee`): Kohli & Blumenstock's Lemma 2 (sequential) and
  Lemma 3 (parallel);
* ε-TP subject to public information (:class:`~engine.public_info.guarantee.TPGuarantee`): Seeman, Reimherr &
  Slavković's Lemma 6 (sequential) and Lemma 7 (parallel) as the paper states them, with the digest's caveats
  G5 and G6 in the notes; :func:`study_budget` is the per-period and whole-study ε of digest G15. (Their Lemma 8,
  conditioning on the public Z, is not a composition: it lives with the conditioning mechanism,
  :func:`engine.public_info.conditioning.condition_on_public`.)

Mixing standards is refused (they protect different things; adding their ε's would be meaningless). Every
composed guarantee of the engine is built here (e.g. Algorithm 1's steps 1–3 and step 4, and its partitioned
mode, in :meth:`engine.mechanisms.private_projection.PrivateProjection.guarantee`); a mechanism that states its
own caveats replaces the notes of the result (``dataclasses.replace``), never the numbers.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Lemmas 2–3. Digest: ``shared/spec/000-targeted-dp.md``.
.. [2] Seeman, Reimherr & Slavković, "Formal Privacy for Partially Private Data", Lemmas 6–8. Digest:
       ``shared/spec/001-partially-private-data.md`` (G5, G6, G15).
.. [3] OpenDP, ``opendp.combinators`` (``make_sequential_composition``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee
from engine.validation import check_integer, check_interval

if TYPE_CHECKING:
    from engine.public_info.guarantee import TPGuarantee

__all__ = ["StudyBudget", "compose_replicates", "parallel_composition", "sequential_composition", "study_budget"]

#: Where the ε-TP guarantee type lives. It is imported only to compose ε-TP statements — never to compose TDP ones:
#: an object can only be a TPGuarantee once that module is loaded (see :func:`_is_tp`), so combining the mechanisms'
#: TDP guarantees does not load the public-information package.
_TP_MODULE = "engine.public_info.guarantee"


def _check_guarantees(guarantees: Iterable[Guarantee], what: str) -> list[Guarantee]:
    items: list[Guarantee] = [guarantees] if isinstance(guarantees, Guarantee) else list(guarantees)
    if not items:
        raise InvalidParameterError(f"{what} needs at least one guarantee; got none")
    for i, g in enumerate(items):
        if not isinstance(g, Guarantee):
            raise InvalidParameterError(f"{what} takes Guarantee objects; item {i} is {type(g).__name__}")
    relations = {g.relation for g in items}
    if len(relations) > 1:
        raise InvalidParameterError(
            f"{what} needs guarantees with the same neighbouring relation; got {sorted(relations)} — "
            "a row-level and an entry-level guarantee protect different units and do not compose"
        )
    return items


def _combined_name(items: list[Guarantee]) -> str:
    names = [g.mechanism for g in items if g.mechanism]
    return " + ".join(dict.fromkeys(names))


def _combined_notes(items: list[Guarantee], lead: str) -> tuple[str, ...]:
    notes = [lead]
    for g in items:
        for note in g.notes:
            if note not in notes:
                notes.append(note)
    return tuple(notes)


def _is_tp(guarantees: object) -> bool:
    """Whether ``guarantees`` are ε-TP statements (decided by the first one; the rest are checked to match)."""
    module = sys.modules.get(_TP_MODULE)
    if module is None:  # nothing can be a TPGuarantee before its module is loaded
        return False
    first = guarantees[0] if isinstance(guarantees, (list, tuple)) and guarantees else guarantees
    return isinstance(first, module.TPGuarantee)


def sequential_composition(guarantees: Iterable[Guarantee] | Sequence[object]):
    r"""Guarantee of running several mechanisms on the SAME data (sequential composition), in their standard.

    ε-TP statements (:class:`~engine.public_info.guarantee.TPGuarantee`) compose by Seeman et al.'s Lemma 6 as
    the paper states it, ε1 + ε2 + …, with the G5 counterexample warning in the notes; (B, ε, δ)-TDP statements
    as follows (Kohli & Blumenstock, Lemma 2).

    .. math:: (B_j, \varepsilon_j, \delta_j)\text{-TDP},\ j = 1..J \;\Rightarrow\;
              \bigl(\min_j B_j,\ \textstyle\sum_j \varepsilon_j,\ \min\{1, \sum_j \delta_j\}\bigr)\text{-TDP}

    Parameters
    ----------
    guarantees : iterable of Guarantee
        At least one; all with the same ``relation``.

    Returns
    -------
    Guarantee
        The composed guarantee. δ is clipped at 1 (then the statement is vacuous and says so).

    Raises
    ------
    InvalidParameterError
        Empty input, a non-Guarantee item, or mixed neighbouring relations.

    Notes
    -----
    The smallest B wins because a pair of records within ``min_j B_j`` of each other is a neighbouring pair
    for every mechanism; a pair further apart than some B_j is not covered by that mechanism's statement
    (use the switch lemma, :func:`engine.accounting.tdp.switch_loss`, to bound it). For ``relation="element"`` B plays no role and
    stays 2.

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Lemma 2 (sequential composition).

    Examples
    --------
    >>> from engine.guarantee import Guarantee
    >>> g = sequential_composition([Guarantee(3.0, 2e-4, b=0.25), Guarantee(0.9999, 1e-4, b=0.5)])
    >>> (g.b, round(g.epsilon, 4), round(g.delta, 6))
    (0.25, 3.9999, 0.0003)
    >>> from engine.public_info.guarantee import TPGuarantee
    >>> tp = TPGuarantee(epsilon=0.5, sensitivity=2.0)
    >>> sequential_composition([tp, tp]).epsilon
    1.0
    """
    if _is_tp(guarantees):
        from engine.public_info.guarantee import SEQUENTIAL_CAVEAT

        tp = _check_all_tp(guarantees)
        return _merge_tp(tp, float(sum(g.epsilon for g in tp)), "sequential", SEQUENTIAL_CAVEAT)
    items = _check_guarantees(guarantees, "sequential composition")  # type: ignore[arg-type]
    if len(items) == 1:
        return items[0]
    return Guarantee(
        epsilon=float(sum(g.epsilon for g in items)),
        delta=float(min(1.0, sum(g.delta for g in items))),
        b=float(min(g.b for g in items)),
        relation=items[0].relation,
        mechanism=_combined_name(items),
        notes=_combined_notes(
            items, f"sequential composition (Lemma 2) of {len(items)} releases of the same data"
        ),
    )


def parallel_composition(guarantees: Iterable[Guarantee] | Sequence[object]):
    r"""Guarantee of running mechanisms on DISJOINT parts of the data (parallel composition), in their standard.

    ε-TP statements compose by Seeman et al.'s Lemma 7 as the paper states it, max ε over disjoint blocks, with the
    G6 warning in the notes; (B, ε, δ)-TDP statements as follows (Kohli & Blumenstock, Lemma 3).

    .. math:: (B_j, \varepsilon_j, \delta_j)\text{-TDP on disjoint row sets} \;\Rightarrow\;
              \bigl(\min_j B_j,\ \max_j \varepsilon_j,\ \max_j \delta_j\bigr)\text{-TDP}

    This is how the paper's partitioned mode (Nigeria: six random disjoint parts) keeps the guarantee of one
    part. The partition must not depend on the data in a way a neighbouring data set could change (a random
    split, or a split on a public attribute).

    Parameters
    ----------
    guarantees : iterable of Guarantee
        One per disjoint part; at least one; all with the same ``relation``.

    Returns
    -------
    Guarantee

    Raises
    ------
    InvalidParameterError
        Empty input, a non-Guarantee item, or mixed neighbouring relations.

    References
    ----------
    .. [1] Kohli & Blumenstock, arXiv:2408.13424, Lemma 3 (parallel composition on disjoint data).

    Examples
    --------
    >>> from engine.guarantee import Guarantee
    >>> g = parallel_composition([Guarantee(1.0, 1e-4, b=0.1), Guarantee(2.0, 5e-5, b=0.25)])
    >>> (g.b, g.epsilon, g.delta)
    (0.1, 2.0, 0.0001)
    """
    if _is_tp(guarantees):
        from engine.public_info.guarantee import PARALLEL_CAVEAT

        tp = _check_all_tp(guarantees)
        return _merge_tp(tp, float(max(g.epsilon for g in tp)), "parallel", PARALLEL_CAVEAT)
    items = _check_guarantees(guarantees, "parallel composition")  # type: ignore[arg-type]
    if len(items) == 1:
        return items[0]
    return Guarantee(
        epsilon=float(max(g.epsilon for g in items)),
        delta=float(max(g.delta for g in items)),
        b=float(min(g.b for g in items)),
        relation=items[0].relation,
        mechanism=_combined_name(items),
        notes=_combined_notes(
            items, f"parallel composition (Lemma 3) over {len(items)} disjoint parts of the data"
        ),
    )


# ------------------------------------------------------------------------------- ε-TP (Seeman et al., Lemmas 6–8)
def _check_all_tp(guarantees: object) -> list[TPGuarantee]:
    from engine.public_info.guarantee import IncompatibleGuaranteeError, TPGuarantee

    given = [guarantees] if isinstance(guarantees, TPGuarantee) else list(guarantees)  # type: ignore[call-overload]
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


def _merge_tp(items: list[TPGuarantee], epsilon: float, composition: str, caveat: str) -> TPGuarantee:
    from engine.public_info.guarantee import TPGuarantee

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


def compose_replicates(guarantee: object, replicates: int) -> TPGuarantee:
    """R independent draws of one ε-TP release on the same data, published together: R·ε per period.

    Not Lemma 6 (whose G5 caveat is about different releases): the R draws are one joint mechanism whose loss is
    the sum of the R losses, so on the SAME Wasserstein-∞ coupling of the two secret-conditional laws (coupled
    tables within Δ_z) the joint density ratio is at most e^{Rε}; integrating over the coupling gives Rε-TP (the
    proof of Theorem 9 applied to the joint release). One replicate: unchanged.

    Examples
    --------
    >>> from engine.public_info.guarantee import TPGuarantee
    >>> g = TPGuarantee(epsilon=0.5, sensitivity=4.0)
    >>> compose_replicates(g, 10).epsilon, compose_replicates(g, 1) is g
    (5.0, True)
    """
    from engine.public_info.guarantee import TPGuarantee

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


@dataclass(frozen=True)
class StudyBudget:
    """Per-period ε and the whole-study ε under the two readings of digest G15."""

    epsilon_per_period: float
    periods: int
    parallel: float
    sequential: float

    def describe(self) -> list[str]:
        from engine.public_info.guarantee import SEQUENTIAL_CAVEAT

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
