"""The declared dependence between people, and the Δ_z a count-table release must be calibrated to (digest §5.3, G15).

:class:`DependenceModel` is what the user declares about how one person's record moves the others':

* ``"fixed"`` — independent people: one person changes one count by at most 1 (the DP sensitivity);
* ``"correlated"`` — the family Θ_(z0, z1) of §4.4 / Figure 4 for groups of ``n`` people: given one person's
  secret, the other n − 1 records are iid Bernoulli with z0 ≤ p0 ≤ p1 ≤ z1, so one count moves by up to
  Δ_z(n, z0, z1) = W∞(1 + Bin(n − 1, z1), Bin(n − 1, z0)) (exact, G4b).

:func:`derive_sensitivity` derives the Δ_z of a whole period's release — the L1 distance, over every region's count
(and sub-count), between the coupled tables of the two secret-conditional laws — from the model AND the declared
public statistics. Never a free default: the public total changes it (digest G15). The argument, written down
(also in ``docs/paper-notes.md``):

1. **No public total.** Only the secret person's group moves: under ``"fixed"`` one person adds at most one case
   to one region (Δ = 1 per count table); under ``"correlated"`` the group's count moves by
   k = W∞(1 + Bin(n−1, z1), Bin(n−1, z0)) (exact, §4.4), everyone else coupled identically. Exact.
2. **The current total public.** Both secret-conditional laws add up to the same released total, so every case the
   secret moves into one region is taken out of another: the coupled tables differ by 2 per count. Under
   ``"fixed"`` the records of the other people given their total are a conditioned product measure, which has a
   coupling that adds exactly one case (strong Rayleigh property: Borcea, Brändén & Liggett 2009): the secret
   person's case in region a is offset by one case elsewhere, L1 = 2, attained when the offsetting case lies in
   another region. Under ``"correlated"`` the group's count once conditioned on the total is no longer the
   unconditional law: the Studio bounds its move by the group size n (both laws lie in [0, n]), so Δ ≤ 2n per count
   table — an upper bound, at least 2k (it is 2n = 2k whenever z0 = 0 or z1 = 1, as in oracle O3); with z0 = z1 the
   group is independent and the fixed value 2 holds.
3. **A sub-count** (deaths among cases) is a thinning of the count: every case the coupling moves moves at most one
   sub-count unit the same way, so the (count, sub-count) table's Δ is twice the count table's: 2 / 4 under
   ``"fixed"`` without / with the total (4 is attained: a death in region a swapped for a death in region b).
4. **Last period's counts** and the constraint **sub-count ≤ count** do not change Δ: the constraint holds in every
   table, and the models take one person's current record to be independent of last period's records given θ
   (new cases each period). The periods themselves compose (whole-study ε both ways, G15).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engine.errors import InvalidParameterError
from engine.public_info.guarantee import PUBLIC_STATISTICS
from engine.public_info.semantics import AuditResult, exponential_mechanism_audit
from engine.public_info.sensitivity import correlated_counts_sensitivity
from engine.serialization import Serializable
from engine.validation import check_choice, check_integer, check_interval

__all__ = ["DEPENDENCE_KINDS", "DependenceModel", "DependenceAudit", "SensitivityDerivation", "dependence_audit",
           "derive_sensitivity"]

DEPENDENCE_KINDS = {
    "fixed": "independent people (the DP sensitivity)",
    "correlated": "correlated counts, family Θ_(z0, z1) for groups of n people",
}


@dataclass(frozen=True)
class DependenceModel(Serializable):
    """How one person's record moves the others' (the Δ_z of a count release follows from it).

    Examples
    --------
    Digest oracle O3 (n = 100, z0 = 0, z1 = 0.5): one count moves by up to 100 (the release's Δ_z also depends on what
    is public: :func:`derive_sensitivity`).

    >>> m = DependenceModel("correlated", n=100, z0=0.0, z1=0.5)
    >>> m.count_sensitivity, DependenceModel().count_sensitivity
    (100, 1)
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

    def describe(self) -> str:
        """The model in words, for the guarantee: which Δ_z was used and why."""
        if self.kind == "fixed":
            return "independent people"
        return (f"correlated counts, groups of n = {self.n} with z0 = {self.z0:g}, z1 = {self.z1:g}: "
                f"k = {self.count_sensitivity} per count without a public total")


@dataclass(frozen=True)
class SensitivityDerivation:
    """The Δ_z of one period's release and how it was derived (shown in every caption, the CLI and the record).

    ``value`` is the L1 Δ_z the release is calibrated to; ``derived`` the value the model and the public statistics
    give; ``exact`` says whether ``derived`` is the exact supremum (False: an upper bound); ``reason`` says why in one
    sentence; ``override`` is True when the user asked for a larger Δ_z than the derived one.
    """

    value: float
    derived: float
    exact: bool
    reason: str
    override: bool = False

    def describe(self) -> str:
        """One line: the value and why (``Δ_z = 4: 2 per count because the total is public: …``)."""
        if self.override:
            return (f"Δ_z = {self.value:g}, set by the user above the derived {self.derived:g} "
                    f"({self.reason})")
        return f"Δ_z = {self.value:g}: {self.reason}"


def derive_sensitivity(public: Sequence[str], model: DependenceModel, *, subcounts: bool,
                       requested: float | None = None) -> SensitivityDerivation:
    """The Δ_z a count-table release must use, derived from the declared public statistics and dependence model.

    See the module docstring for the argument. ``subcounts``: the table has a sub-count. ``requested``: a Δ_z the
    user asks for instead; it may be larger than the derived value (more noise, still true), never smaller.

    Raises
    ------
    InvalidParameterError
        If ``requested`` is below the derived Δ_z (the guarantee would be false), with the reason.

    Examples
    --------
    Independent people, count + sub-count: the DP value 2 without the public total, 4 with it (digest G15).

    >>> derive_sensitivity((), DependenceModel(), subcounts=True).value
    2.0
    >>> d = derive_sensitivity(("last-period", "total", "subcount"), DependenceModel(), subcounts=True)
    >>> d.value, d.exact
    (4.0, True)
    >>> derive_sensitivity(("total",), DependenceModel(), subcounts=False).describe()[:60]
    'Δ_z = 2: 2 per count because the current total is public: on'

    Oracle O3's model (n = 100, z0 = 0, z1 = 0.5): 100 per count without the total (exact), 200 with it.

    >>> m = DependenceModel("correlated", n=100, z0=0.0, z1=0.5)
    >>> [derive_sensitivity(p, m, subcounts=s).value for p in ((), ("total",)) for s in (False, True)]
    [100.0, 200.0, 200.0, 400.0]
    """
    if not isinstance(model, DependenceModel):
        raise InvalidParameterError(f"model must be a DependenceModel; got {type(model).__name__}")
    for p in public:
        check_choice("public", p, PUBLIC_STATISTICS, hint="declare any of last-period, total, subcount")
    total = "total" in public
    independent = model.kind == "fixed" or model.z0 == model.z1
    sub = "; doubled for the sub-count (each moved case moves at most one sub-count unit)" if subcounts else ""
    if independent:
        who = "independent people" if model.kind == "fixed" else f"z0 = z1 = {model.z0:g}: independent people"
        if total:
            per_count, exact = 2.0, True
            reason = ("2 per count because the current total is public: one person's change moves two regions (one "
                      f"up, another down); {who}")
        else:
            per_count, exact = 1.0, True
            reason = f"1 per count: one person adds at most one case to one region; {who}"
    else:
        k = model.count_sensitivity
        group = f"groups of n = {model.n} with z0 = {model.z0:g}, z1 = {model.z1:g}"
        if total:
            per_count, exact = float(2 * model.n), 2 * model.n == 2 * k
            reason = (f"{2 * model.n} per count because the current total is public: the group's count, conditioned on "
                      f"the total, moves by at most its size n = {model.n} and every case it gains another region "
                      f"loses ({group}; {'exact: here k = n' if exact else f'an upper bound, at least 2k = {2 * k}'})")
        else:
            per_count, exact = float(k), True
            reason = (f"{k} per count: one person's secret moves the other n − 1 records of their group by up to "
                      f"W∞(1 + Bin(n−1, z1), Bin(n−1, z0)) = {k} ({group})")
    derived = per_count * (2 if subcounts else 1)
    reason += sub
    if requested is None:
        return SensitivityDerivation(derived, derived, exact, reason)
    value = check_interval("sensitivity", requested, 0, None, closed="neither")
    if value < derived:
        raise InvalidParameterError(
            f"sensitivity Δ_z = {value:g} is below the {derived:g} this release needs ({reason}): a release calibrated to "
            f"{value:g} would not keep its ε. Leave Δ_z to be derived, or choose at least {derived:g}"
        )
    return SensitivityDerivation(value, derived, exact, reason, override=value > derived)


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
