"""Composition of (B, ε, δ)-TDP guarantees (Kohli & Blumenstock, Lemmas 2 and 3): the one place they are added.

:func:`sequential_composition` (Lemma 2: several releases of the SAME data) and :func:`parallel_composition`
(Lemma 3: releases of DISJOINT parts) take :class:`~engine.guarantee.Guarantee` objects and return the composed
guarantee. Every composed guarantee of the engine is built here (e.g. Algorithm 1's steps 1–3 and step 4, and its
partitioned mode, in :meth:`engine.mechanisms.private_projection.PrivateProjection.guarantee`); a mechanism that
states its own caveats replaces the notes of the result (``dataclasses.replace``), never the numbers.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Lemmas 2–3. Digest: ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee

__all__ = ["parallel_composition", "sequential_composition"]


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


def sequential_composition(guarantees: Iterable[Guarantee]) -> Guarantee:
    r"""Guarantee of running several TDP mechanisms on the SAME data (Lemma 2, sequential composition).

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
    """
    items = _check_guarantees(guarantees, "sequential composition")
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


def parallel_composition(guarantees: Iterable[Guarantee]) -> Guarantee:
    r"""Guarantee of running TDP mechanisms on DISJOINT parts of the data (Lemma 3, parallel composition).

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
    items = _check_guarantees(guarantees, "parallel composition")
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
