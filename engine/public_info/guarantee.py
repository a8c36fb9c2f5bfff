"""ε-TP guarantees: (ε, {Θ_z})-Pufferfish subject to public information Z (Seeman, Reimherr & Slavković, Def. 3).

A :class:`TPGuarantee` states the five building blocks every guarantee of the Studio states: the scope
("subject to the public information Z", with the declared public statistics), the protection unit, the
neighbouring relation (the secret pairs), the standard (ε-TP, a family of Pufferfish guarantees, one per released
z) and the intensity ε. It is a frozen dataclass that round-trips through JSON (:class:`engine.serialization.
Serializable`). It never composes silently with (B, ε, δ)-TDP or ρ-zCDP statements: see
:mod:`engine.accounting.composition`.

References
----------
.. [1] Seeman, Reimherr & Slavković, "Formal Privacy for Partially Private Data", Def. 3 (Eq. 10–11), Lemma 4–8.
   Digest: ``shared/spec/001-partially-private-data.md`` §2.4, §3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from engine.errors import InvalidParameterError
from engine.serialization import Serializable
from engine.validation import check_choice, check_integer, check_interval

__all__ = ["PUBLIC_STATISTICS", "Composition", "TPGuarantee", "IncompatibleGuaranteeError"]

#: Public statistics a count-table release may declare, with their plain-language meaning.
PUBLIC_STATISTICS: dict[str, str] = {
    "last-period": "last period's counts of every region",
    "total": "the current period's total count over all regions",
    "subcount": "the constraint sub-count ≤ count in every cell",
}

Composition = Literal["single", "sequential", "parallel", "conditioned", "replicates"]

SCOPE = "subject to the public information Z"

COMPOSITION_TEXT = {
    "single": "one release",
    "sequential": "sequential composition (Lemma 6, ε's added)",
    "parallel": "parallel composition over disjoint blocks (Lemma 7, largest ε)",
    "conditioned": "an ε-DP output conditioned on agreeing with Z (Lemma 8, cost 2ε)",
    "replicates": "R draws of one release on the same data, analysed jointly (R·ε)",
}

SEQUENTIAL_CAVEAT = (
    "Caveat (digest G5): Lemma 6 adds the ε's only if the releases are independent given the secret and θ_z; "
    "for a restricted class Θ_z two releases that each leak nothing can together reveal a record "
    "(Y1 = X1⊕X2⊕X3 and Y2 = X2⊕X3). For safety compute Δ_z of the joint query and run one mechanism."
)
PARALLEL_CAVEAT = (
    "Caveat (digest G6): Lemma 7 (parallel composition) holds only if the blocks are independent given (Z, θ_z); "
    "correlation across blocks (households, outbreaks) voids it."
)


class IncompatibleGuaranteeError(InvalidParameterError):
    """An ε-TP guarantee was combined with a guarantee of another standard ((B, ε, δ)-TDP, ρ-zCDP, ...)."""


@dataclass(frozen=True)
class TPGuarantee(Serializable):
    r"""ε-TP: (ε, {Θ_z})-Pufferfish subject to the public information Z.

    For every released z, every admissible secret pair (s1, s2) (one person's record takes one value or another,
    both possible under every θ_z — Eq. 10) and every data distribution θ_z ∈ Θ_z,
    :math:`e^{-ε} \le P(Y∈B \mid s_1, θ_z)/P(Y∈B \mid s_2, θ_z) \le e^{ε}` (Eq. 11).

    Parameters
    ----------
    epsilon : float
        Intensity ε > 0 of one release (per period for a count table).
    sensitivity : float
        The Wasserstein-∞ sensitivity Δ_z the mechanism was calibrated to (≥ the DP sensitivity, Lemma 12).
    public : tuple of str
        Declared public statistics (the scope): keys of :data:`PUBLIC_STATISTICS` or free text.
    mechanism : str
        Name of the mechanism.
    unit : str
        The protection unit.
    exact : bool
        False when the sampler only approximates the target law (MCMC, digest G12; or a support cut where the
        weights are negligible): the statement is then "approximate ε-TP", and a note says how close.
    composition : {"single", "sequential", "parallel", "conditioned"}
        How the statement was obtained.
    periods : int
        Number of periods released with this guarantee each (a count table's study length).
    notes : tuple of str
        Caveats a reviewer must read.
    basis : str
        Where Δ_z came from (the declared dependence model), shown in the headline when given.

    Examples
    --------
    >>> g = TPGuarantee(epsilon=1.0, sensitivity=2.0, public=("total",), mechanism="discrete Laplace")
    >>> g.headline()
    'ε-TP with ε = 1 subject to the public information Z (Δ_z = 2) for one person'
    >>> TPGuarantee.from_json(g.to_json()) == g
    True
    """

    KIND = "tp_guarantee"

    epsilon: float
    sensitivity: float
    public: tuple[str, ...] = ()
    mechanism: str = ""
    unit: str = "one person"
    exact: bool = True
    composition: Composition = "single"
    periods: int = 1
    notes: tuple[str, ...] = field(default=())
    basis: str = ""

    def __post_init__(self) -> None:
        check_interval("epsilon", self.epsilon, 0, None, closed="neither", allow_inf=True)
        check_interval("sensitivity", self.sensitivity, 0, None, closed="neither")
        check_choice("composition", self.composition, COMPOSITION_TEXT)
        check_integer("periods", self.periods, 1, None)
        if not all(isinstance(p, str) and p for p in self.public):
            raise InvalidParameterError(f"public must be a tuple of non-empty names; got {self.public!r}")

    # The GuaranteeStatement protocol of engine.guarantee
    @property
    def is_classic_dp(self) -> bool:
        """Always False: ε-TP is a Pufferfish guarantee conditional on Z, not classic DP."""
        return False

    @property
    def vacuous(self) -> bool:
        """True for ε = ∞ (no protection)."""
        return self.epsilon == float("inf")

    @property
    def standard(self) -> str:
        return "ε-TP" if self.exact else "approximate ε-TP"

    @property
    def relation(self) -> str:
        return (
            "secret pairs: one person's record takes one value or another (or is absent), for every data "
            "distribution θ_z in Θ_z consistent with the released z in which both secrets are possible"
        )

    @property
    def scope(self) -> str:
        if not self.public:
            return SCOPE
        names = ", ".join(PUBLIC_STATISTICS.get(p, p) for p in self.public)
        return f"{SCOPE} ({names})"

    @property
    def study_epsilon_sequential(self) -> float:
        """Whole-study ε if every period is charged in full (sequential composition over periods, G15)."""
        return self.epsilon * self.periods

    @property
    def study_epsilon_parallel(self) -> float:
        """Whole-study ε if each person contributes to one period only (parallel composition, G15)."""
        return self.epsilon

    def headline(self) -> str:
        return (
            f"{self.standard} with ε = {self.epsilon:.6g} {SCOPE} (Δ_z = {self.sensitivity:.6g}"
            f"{': ' + self.basis if self.basis else ''}) for {self.unit}"
        )

    def describe(self) -> list[str]:
        lines = [self.headline() + (f" — by {self.mechanism}" if self.mechanism else "") + "."]
        lines.append(f"Scope: {self.scope}; the guarantee holds for the z actually released, not for other z.")
        lines.append(f"Unit: {self.unit}. Relation: {self.relation}.")
        lines.append(f"Obtained by {COMPOSITION_TEXT[self.composition]}.")
        if not self.exact:
            lines.append("The sampler only approximates the mechanism's law (MCMC): the ε-TP statement is approximate.")
        if self.periods > 1:
            lines.append(
                f"Over the {self.periods} periods: ε = {self.study_epsilon_parallel:.6g} if each person is counted "
                f"in one period only (parallel), up to ε = {self.study_epsilon_sequential:.6g} if the same person "
                "can appear in every period (sequential) — digest G15."
            )
        if self.composition == "sequential":
            lines.append(SEQUENTIAL_CAVEAT)
        if self.composition == "parallel":
            lines.append(PARALLEL_CAVEAT)
        lines.extend(self.notes)
        return lines
