"""The declared dependence between people, and the Δ_z a count-table release must be calibrated to (digest §5.3).

:class:`DependenceModel` is what the user declares about how one person's record moves the others':

* ``"fixed"`` — independent people: one person changes one count by at most 1 (the DP sensitivity);
* ``"correlated"`` — the family Θ_(z0, z1) of §4.4 / Figure 4 for groups of ``n`` people: given one person's
  secret, the other n − 1 records are iid Bernoulli with z0 ≤ p0 ≤ p1 ≤ z1, so one count moves by up to
  Δ_z(n, z0, z1) = W∞(1 + Bin(n − 1, z1), Bin(n − 1, z0)) (exact, G4b).

:meth:`DependenceModel.release_sensitivity` is the Δ_z of one region's (count, sub-count) pair in L1: the count's
Δ_z, plus the same again for the sub-count when the table has one (a sub-count is a thinning of the count —
deaths among cases — so a coupling that moves the count by k moves the sub-count by at most k). Under ``"fixed"``
that is the DP value 2 (1 + 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from engine.errors import InvalidParameterError
from engine.public_info.semantics import AuditResult, exponential_mechanism_audit
from engine.public_info.sensitivity import correlated_counts_sensitivity
from engine.serialization import Serializable
from engine.validation import check_choice, check_integer, check_interval

__all__ = ["DEPENDENCE_KINDS", "DependenceModel", "DependenceAudit", "dependence_audit"]

DEPENDENCE_KINDS = {
    "fixed": "independent people (the DP sensitivity)",
    "correlated": "correlated counts, family Θ_(z0, z1) for groups of n people",
}


@dataclass(frozen=True)
class DependenceModel(Serializable):
    """How one person's record moves the others' (the Δ_z of a count release follows from it).

    Examples
    --------
    Digest oracle O3 (n = 100, z0 = 0, z1 = 0.5): one count moves by up to 100; with a sub-count, the pair by 200.

    >>> m = DependenceModel("correlated", n=100, z0=0.0, z1=0.5)
    >>> m.count_sensitivity, m.release_sensitivity(subcounts=True), m.release_sensitivity(subcounts=False)
    (100, 200.0, 100.0)
    >>> DependenceModel().release_sensitivity(subcounts=True)
    2.0
    >>> DependenceModel.from_dict(m.to_dict()) == m
    True
    """

    kind: Literal["fixed", "correlated"] = "fixed"
    n: int = 20
    z0: float = 0.2
    z1: float = 0.6

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, DEPENDENCE_KINDS)
        check_integer("n", self.n, 1, 5000, hint="groups of at most 5000 people (Δ_z is exact and costs O(n))")
        check_interval("z0", self.z0, 0, 1)
        check_interval("z1", self.z1, 0, 1)
        if self.z0 > self.z1:
            raise InvalidParameterError(
                f"z0 must be ≤ z1 (bounded positive dependence); got z0 = {self.z0:g}, z1 = {self.z1:g} — swap them"
            )

    def to_dict(self) -> dict[str, Any]:
        """Only what the model uses: ``{"kind": "fixed"}`` for independent people."""
        return {"kind": "fixed"} if self.kind == "fixed" else super().to_dict()

    @property
    def count_sensitivity(self) -> int:
        """Δ_z of one count: 1 for independent people, W∞(1 + Bin(n−1, z1), Bin(n−1, z0)) when correlated."""
        if self.kind == "fixed":
            return 1
        return correlated_counts_sensitivity(self.n, self.z0, self.z1)

    def release_sensitivity(self, *, subcounts: bool) -> float:
        """Δ_z of one region's release: the count's Δ_z, twice when the table has a sub-count (see the module)."""
        return float(self.count_sensitivity * (2 if subcounts else 1))

    def describe(self) -> str:
        """The model in words, for the guarantee: which Δ_z was used and why."""
        if self.kind == "fixed":
            return "independent people: 1 per count"
        return (f"correlated counts, groups of n = {self.n} with z0 = {self.z0:g}, z1 = {self.z1:g}: "
                f"{self.count_sensitivity} per count")


@dataclass(frozen=True)
class DependenceAudit:
    """Oracle O6 for one model: the congenial exponential mechanism on one count at a claimed ε, calibrated to the
    model's Δ_z (``calibrated``) and to the DP sensitivity 1 (``ignoring``, what goes wrong if Z is ignored)."""

    model: DependenceModel
    epsilon: float
    delta_z: int
    calibrated: AuditResult
    ignoring: AuditResult


def dependence_audit(model: DependenceModel, epsilon: float) -> DependenceAudit:
    """The realised ε of the congenial L1 exponential mechanism on one count of the model's group (digest O6).

    Examples
    --------
    >>> a = dependence_audit(DependenceModel("correlated", n=20, z0=0.3, z1=0.7), 1.0)
    >>> a.delta_z, round(a.calibrated.realised_epsilon, 4), round(a.ignoring.realised_epsilon, 4), a.ignoring.violated
    (9, 0.4854, 4.3046, True)
    """
    if not isinstance(model, DependenceModel):
        raise InvalidParameterError(f"model must be a DependenceModel; got {type(model).__name__}")
    eps = check_interval("epsilon", epsilon, 0, None, closed="neither")
    z0, z1 = (model.z0, model.z1) if model.kind == "correlated" else (0.5, 0.5)
    delta = model.count_sensitivity
    return DependenceAudit(
        model=model, epsilon=eps, delta_z=delta,
        calibrated=exponential_mechanism_audit(model.n, z0, z1, eps, float(delta)),
        ignoring=exponential_mechanism_audit(model.n, z0, z1, eps, 1.0),
    )
