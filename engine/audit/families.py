r"""One audit per mechanism family the Studio prints a guarantee for; each returns an :class:`AuditRecord`.

Every function runs the REAL release path (``release(x, rng=...)``, the OpenDP sampler, ``SumMechanism.sample``,
``release_counts``' pieces) on the worst-case inputs of :mod:`engine.audit.neighbours` and compares what it measures
with the guarantee the mechanism prints:

* statistical audits (continuous outputs) report a Clopper–Pearson lower confidence bound on ε at the printed δ
  (:func:`engine.audit.distinguishing.empirical_privacy`; threshold chosen on one half, bound on the other), at
  confidence ``1 − 1e-6`` by default: a mechanism that keeps its claim shows a bound above it with probability at
  most 1e-6;
* exact audits (count releases) report the realised ε of the exact output laws (:mod:`engine.audit.counts`).

The same functions run in ``tests/engine/test_privacy_audit.py`` (small sizes, fixed seeds) and in
``benchmarks/bench_privacy_audit.py`` (more samples), which writes ``docs/privacy-audit.md``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from engine.audit.counts import audit_count_release
from engine.audit.distinguishing import PrivacyAudit, empirical_privacy
from engine.audit.exact import ExactAudit
from engine.audit.neighbours import CoupledTables, jl_element_experiments, jl_row_experiments, tdp_pair
from engine.errors import InvalidParameterError
from engine.release import privatize
from engine.validation import check_integer, check_interval, check_rng

__all__ = [
    "CONFIDENCE",
    "AuditRecord",
    "count_release_audit",
    "gaussian_audit",
    "jl_laplace_audit",
    "opendp_gaussian_audit",
    "per_record_audit",
    "per_record_claim",
    "projection_audit",
    "tdp_policy_audit",
]

#: Default joint confidence of the Clopper–Pearson bounds: a mechanism that keeps its claim fails an audit with
#: probability at most 1e-6.
CONFIDENCE = 1.0 - 1e-6


@dataclass(frozen=True)
class AuditRecord:
    """One row of the audit table.

    Attributes
    ----------
    family, mechanism : str
        Family and the configuration audited (plain language).
    claimed_epsilon, claimed_delta : float
        The guarantee the Studio prints for this pair of inputs.
    method : {"exact", "lower bound"}
        ``"exact"``: ``audited_epsilon`` is the rigorous lower end of the exact realised loss; ``"lower bound"``:
        a Clopper–Pearson lower confidence bound at the printed δ.
    audited_epsilon : float
    detail : str
        The full result (point estimate, confidence, unresolved mass, ...).
    samples : int
        Releases drawn (both inputs) or outputs enumerated.
    cpu_seconds : float
    mutation : str
        Empty for the real mechanism; otherwise what was weakened while the printed claim was kept.
    """

    family: str
    mechanism: str
    claimed_epsilon: float
    claimed_delta: float
    method: Literal["exact", "lower bound"]
    audited_epsilon: float
    detail: str
    samples: int
    cpu_seconds: float
    mutation: str = ""

    @property
    def exceeds_claim(self) -> bool:
        """Whether the audit shows the printed claim false (a tolerance of 1e-9 relative for exact ties)."""
        return self.audited_epsilon > self.claimed_epsilon * (1.0 + 1e-9) + 1e-12

    @property
    def verdict(self) -> str:
        if self.mutation:
            return "caught" if self.exceeds_claim else "NOT CAUGHT"
        return "CLAIM VIOLATED" if self.exceeds_claim else "within the claim"


def _stat_record(family: str, mechanism: str, claim: tuple[float, float], audit: PrivacyAudit, samples: int,
                 started: float, mutation: str) -> AuditRecord:
    return AuditRecord(family, mechanism, float(claim[0]), float(claim[1]), "lower bound", audit.epsilon_lower,
                       audit.describe(), samples, time.process_time() - started, mutation)


def gaussian_audit(mechanism: Any, n: int, *, rng: np.random.Generator, confidence: float = CONFIDENCE,
                   mutation: str = "") -> tuple[PrivacyAudit, AuditRecord]:
    """Gaussian mechanism under (B, ε, δ)-TDP: n releases of each of two records at distance exactly B.

    One call of the one release function (:func:`engine.release.privatize`, the path every release ships by) on n
    stacked copies of the record is n independent releases of it (i.i.d. noise per entry); the
    statistic is the first coordinate (the direction of the difference: the likelihood-ratio statistic).
    """
    check_rng(rng)
    nn = check_integer("n", n, 100, None)
    started = time.process_time()
    g = mechanism.guarantee()
    x0, x1 = tdp_pair(mechanism.b, 2)
    s0 = privatize(mechanism, np.tile(x0, (nn, 1)), rng=rng).value[:, 0]
    s1 = privatize(mechanism, np.tile(x1, (nn, 1)), rng=rng).value[:, 0]
    audit = empirical_privacy(s0, s1, delta=g.delta, confidence=confidence)
    label = f"Gaussian, {mechanism.calibration} σ (B = {mechanism.b:g})"
    return audit, _stat_record("Gaussian (targeted DP)", label, (g.epsilon, g.delta), audit, 2 * nn, started,
                               mutation)


def opendp_gaussian_audit(mechanism: Any, n: int, *, confidence: float = CONFIDENCE,
                          mutation: str = "") -> tuple[PrivacyAudit, AuditRecord]:
    """The same experiment through the one release function with OpenDP's sampler
    (:func:`engine.release.privatize` with ``sampler="opendp"``), the sampler the CLI uses by default for an unseeded
    Gaussian release. OpenDP draws from the operating system's entropy: this audit cannot be seeded."""
    nn = check_integer("n", n, 100, None)
    started = time.process_time()
    g = mechanism.guarantee()
    x0, x1 = tdp_pair(mechanism.b, 2)
    s0 = privatize(mechanism, np.tile(x0, (nn, 1)), sampler="opendp").value[:, 0]
    s1 = privatize(mechanism, np.tile(x1, (nn, 1)), sampler="opendp").value[:, 0]
    audit = empirical_privacy(s0, s1, delta=g.delta, confidence=confidence)
    label = f"Gaussian through OpenDP's sampler (B = {mechanism.b:g})"
    return audit, _stat_record("OpenDP sampler", label, (g.epsilon, g.delta), audit, 2 * nn, started, mutation)


def projection_audit(mechanism: Any, n: int, *, rng: np.random.Generator, d: int = 1,
                     confidence: float = CONFIDENCE, mutation: str = "") -> tuple[PrivacyAudit, AuditRecord]:
    """Algorithm 1 on two records at distance B: n independent one-record releases in one call.

    ``partitions = n`` runs Algorithm 1 on each record separately with fresh R and fresh noise (parallel
    composition: the printed guarantee does not depend on the number of parts), so the n rows of the output are n
    independent releases of that record. ``d`` features (``d > rank`` exercises the covariance step).
    """
    check_rng(rng)
    nn = check_integer("n", n, 100, None)
    dd = check_integer("d", d, 1, None)
    started = time.process_time()
    mech = dataclasses.replace(mechanism, partitions=nn)
    g = mech.guarantee()
    x0, x1 = tdp_pair(mech.b, dd)
    s0 = privatize(mech, np.tile(x0, (nn, 1)), rng=rng).value[:, 0]
    s1 = privatize(mech, np.tile(x1, (nn, 1)), rng=rng).value[:, 0]
    audit = empirical_privacy(s0, s1, delta=g.delta, confidence=confidence)
    opts = [f"k = {mech.k}", f"{mech.implementation} path", f"{mech.output_scale} scale"]
    if mech.rank is not None:
        opts.append(f"rank {mech.rank} of d = {dd}")
    label = f"Private projection, {', '.join(opts)} (B = {mech.b:g})"
    return audit, _stat_record("Private projection (Algorithm 1)", label, (g.epsilon, g.delta), audit, 2 * nn,
                               started, mutation)


def jl_laplace_audit(mechanism: Any, n: int, *, rng: np.random.Generator, per_release: int | None = None,
                     known: int = 400, confidence: float = CONFIDENCE,
                     mutation: str = "") -> tuple[PrivacyAudit, AuditRecord]:
    """JL + Laplace, either neighbouring relation, with an adversary who learns P from the other rows.

    Each release carries ``per_release`` independent experiments (one column each; the mechanism is rebuilt with
    d = ``per_release`` columns, which leaves the printed per-pair (ε, δ) unchanged — checked; default 500
    element-wise and 16 row-wise, where the input has m(1 + known) × m entries, mostly zeros):
    element-wise, the changing entry sits next to a row ``1e6 · e_i`` that reveals P_i; row-wise, the record ±(B/2)e_i
    sits next to ``known`` rows e_i (:mod:`engine.audit.neighbours`). The statistic is the Laplace likelihood ratio
    given the estimated P_i.
    """
    check_rng(rng)
    nn = check_integer("n", n, 100, None)
    kn = check_integer("known", known, 1, None)
    if per_release is None:
        per_release = 500 if mechanism.relation == "element" else 16
    m = check_integer("per_release", per_release, 1, None)
    started = time.process_time()
    g0 = mechanism.guarantee()
    mech = dataclasses.replace(mechanism, d=m)
    g = mech.guarantee()
    if (g.epsilon, g.delta) != (g0.epsilon, g0.delta):
        raise InvalidParameterError("the JL guarantee changed with d; the stacked experiments would not audit it")
    if mech.relation == "element":
        exp = jl_element_experiments(m, mech.element_bound)
    else:
        exp = jl_row_experiments(m, mech.b, kn)
    calls = math.ceil(nn / m)
    s0 = np.concatenate([exp.statistic(privatize(mech, exp.x0, rng=rng).value) for _ in range(calls)])[:nn]
    s1 = np.concatenate([exp.statistic(privatize(mech, exp.x1, rng=rng).value) for _ in range(calls)])[:nn]
    audit = empirical_privacy(s0, s1, delta=g.delta, confidence=confidence)
    rel = (f"element-wise (one entry ± {mech.element_bound:g})" if mech.relation == "element"
           else f"row-wise (B = {mech.b:g})")
    rule = f"c for δ ≤ {mech.target_delta:g}" if mech.target_delta is not None else "the paper's c"
    label = f"JL + Laplace, {rel}, k = {mech.k}, {rule}"
    return audit, _stat_record("JL + Laplace", label, (g.epsilon, g.delta), audit, 2 * nn, started, mutation)


def per_record_claim(mechanism: Any, x: float, delta: float) -> tuple[float, float]:
    """The (ε, δ) the Studio's per-record loss of a record of value ``x`` implies.

    Pure per-record DP (unit ε): (policy(x), 0). Per-record zCDP (unit ρ): the ε of (ε, ``delta``)-DP implied by
    ρ = policy(x) (:func:`engine.per_record.units.dp_epsilon`, the conversion the Studio shows).
    """
    from engine.per_record.units import dp_epsilon

    if mechanism.UNIT == "epsilon":
        return float(mechanism.policy(x)), 0.0
    dl = check_interval("delta", delta, 0, 1, closed="neither")
    return float(dp_epsilon(float(mechanism.policy_rho(x)), "rho", dl)), dl


def per_record_audit(mechanism: Any, x: float, n: int, *, rng: np.random.Generator,
                     claim: tuple[float, float], confidence: float = CONFIDENCE,
                     mutation: str = "") -> tuple[PrivacyAudit, AuditRecord]:
    """A record of value ``x`` alone (the other records total 0) vs no record: n outputs of ``sample`` each.

    ``claim`` is the printed per-record loss of that record (:func:`per_record_claim` of the REAL mechanism — a
    mutant is audited against the original's claim).
    """
    check_rng(rng)
    nn = check_integer("n", n, 100, None)
    started = time.process_time()
    s0 = np.asarray(mechanism.sample(np.zeros(nn), rng=rng), dtype=float)
    s1 = np.asarray(mechanism.sample(np.full(nn, float(x)), rng=rng), dtype=float)
    # Extremely heavy tails can overflow to ±inf; clipping to the largest float keeps the order (post-processing).
    big = np.finfo(float).max
    audit = empirical_privacy(np.clip(s0, -big, big), np.clip(s1, -big, big), delta=claim[1],
                              confidence=confidence)
    label = f"{mechanism.LABEL} ({mechanism.NOISE_PARAMETER} = {mechanism.noise:.4g}), record x = {float(x):.4g}"
    return audit, _stat_record("Per-record sums", label, claim, audit, 2 * nn, started, mutation)


def tdp_policy_audit(mechanism: Any, distance: float, n: int, *, rng: np.random.Generator,
                     confidence: float = CONFIDENCE, mutation: str = "") -> tuple[PrivacyAudit, AuditRecord]:
    """Targeted DP read as a per-record policy: a record replaced by one ``distance`` away (possibly > B), audited
    against the printed (ε(t), δ(t)) of :func:`engine.per_record.tdp_losses.tdp_policy` (switch lemma)."""
    from engine.per_record.tdp_losses import tdp_policy

    check_rng(rng)
    nn = check_integer("n", n, 100, None)
    started = time.process_time()
    g = mechanism.guarantee()
    pol = tdp_policy([distance], g.epsilon, g.delta, mechanism.b)
    claim = (float(pol.epsilon[0]), float(pol.delta[0]))
    x0, x1 = tdp_pair(float(distance), 2)
    s0 = privatize(mechanism, np.tile(x0, (nn, 1)), rng=rng).value[:, 0]
    s1 = privatize(mechanism, np.tile(x1, (nn, 1)), rng=rng).value[:, 0]
    audit = empirical_privacy(s0, s1, delta=claim[1], confidence=confidence)
    label = f"Targeted DP per record: Gaussian B = {mechanism.b:g}, records {float(distance):g} apart"
    return audit, _stat_record("Per-record (targeted DP policy)", label, claim, audit, 2 * nn, started, mutation)


def count_release_audit(tables: CoupledTables, config: Any, *, tail: float = 1e-9, floor: float | None = None,
                        mutation: str = "") -> tuple[ExactAudit, AuditRecord]:
    """Exact realised ε of one period's count release between the coupled tables (:mod:`engine.audit.counts`)."""
    started = time.process_time()
    audit = audit_count_release(tables, config, tail=tail, floor=floor)
    public = ", ".join(config.public) if config.public else "nothing"
    label = (f"{config.label}, public: {public}; Δ_z = {config.sensitivity:g}; {tables.describe()}")
    record = AuditRecord("Count releases (ε-TP)", label, float(config.epsilon), 0.0, "exact", audit.epsilon_lower,
                         audit.describe(), int(audit.resolved), time.process_time() - started, mutation)
    return audit, record
