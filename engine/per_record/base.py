r"""The interface every per-record mechanism for a sum implements, and their registry.

A *sum mechanism* privatizes a total :math:`q = \sum_r x_r` of non-negative record values. For a sum, a record's
per-record sensitivity is its own value, :math:`Δ(r) = x_r` (Definition 4.2), so the *policy function* — the
privacy loss a record may suffer, as a function of the record (Definition 2.10) — is a function of the value x.

Every mechanism is a frozen, validated, serialisable dataclass with

* class attributes ``KIND`` (command-line name), ``LABEL`` (UI name), ``FAMILY`` ("baseline",
  "transformation" or "additive"), ``UNIT`` ("rho" for P-PRzCDP, "epsilon" for P-PRDP), ``NOISE_PARAMETER``
  (the field that calibration solves for) and ``SOURCES`` (where each formula comes from: "paper …" or
  "ours: …", shown by the UI next to the number);
* ``policy(x)`` in ``UNIT`` and ``policy_rho(x)`` (always ρ), ``max_protected_value(rho)`` (the largest record
  whose ρ-loss is at most ``rho``);
* ``sample(q, *, rng)``: the mechanism's raw output for true totals ``q`` (vectorised). For additive mechanisms
  and the baselines that is ``q + Z``; for transformation mechanisms it is the noisy transformed total
  ``ṽ = f(q + a) + N(0, σ²)`` (Algorithm 1 before the estimator ``g``; any estimator is post-processing);
* ``estimate(output)`` (mean-unbiased estimate of q), ``estimate_median(output)`` (median-unbiased),
  ``interval(output, beta)`` (exact (1−β) confidence interval for q, clipped to q ≥ 0),
  ``variance(q)`` (variance of ``estimate`` at a *planning* total — never publish it at the true total, which is
  confidential), ``variance_estimate(output)`` (unbiased estimate of that variance from the output),
  ``half_width(q, beta)`` (planning half-width of the interval, used for calibration);
* ``with_noise(value)``: a copy with the noise parameter replaced.

References
----------
.. [1] Finley et al., "Slowly Scaling Per-Record Differential Privacy", arXiv:2409.18118.
       Digest: ``shared/spec/003-per-record-dp.md``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar

import numpy as np

from engine.errors import InvalidParameterError
from engine.per_record.units import UNIT_LABELS, Unit, check_nonnegative, epsilon_to_rho, rho_to_epsilon
from engine.serialization import Serializable
from engine.validation import check_array_interval, check_interval


def as_values(name: str, value) -> np.ndarray:
    """Validate non-negative record values / totals (vectorised)."""
    return check_array_interval(name, value, 0, None, hint="sums of non-negative values only")


def as_output(name: str, value) -> np.ndarray:
    """Validate mechanism outputs: any finite or infinite real, not NaN."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must be a number or an array of numbers; got {value!r}") from None
    if np.isnan(arr).any():
        raise InvalidParameterError(f"{name} must not contain NaN")
    return arr


def ret(arr) -> float | np.ndarray:
    """Python float for 0-d results, the array otherwise (R8)."""
    arr = np.asarray(arr, dtype=float)
    return float(arr) if arr.ndim == 0 else arr


#: Shown once on any page that samples these mechanisms (spec gotcha 21).
FLOATING_POINT_NOTE = (
    "The samplers use floating-point arithmetic, which is open to known attacks on naive DP samplers (Mironov "
    "2012); they are for planning and illustration. Use a vetted DP library for a real release."
)


def _nudge_down(x, target, loss_of) -> np.ndarray:
    """Lower each finite x until ``loss_of(x) ≤ target`` (steps of a few ulp, doubling; ends at 0 at worst)."""
    x = np.array(x, dtype=float, copy=True)
    t = np.broadcast_to(np.asarray(target, dtype=float), x.shape)
    # an overflowing closed form (x* beyond float64 in exact arithmetic) starts from the largest float instead
    x = np.where(np.isinf(x) & np.isfinite(t), np.finfo(float).max, x)
    step = np.zeros(x.shape)
    for _ in range(1100):
        with np.errstate(over="ignore", invalid="ignore"):
            bad = np.isfinite(x) & (x > 0) & (np.asarray(loss_of(x), dtype=float) > t)
        if not bad.any():
            break
        step = np.where(bad, np.maximum(2.0 * step, np.abs(x) * np.finfo(float).eps), step)
        x = np.where(bad, np.maximum(x - step, 0.0), x)
    return x


def _finite_where_defined(out, y, what: str, mechanism) -> np.ndarray:
    """Raise an EngineError instead of returning NaN computed from a non-NaN output (float range exceeded)."""
    arr = np.asarray(out, dtype=float)
    if np.isnan(arr).any():
        raise InvalidParameterError(
            f"{mechanism.LABEL}: the {what} exceeds the floating-point range at {mechanism.NOISE_PARAMETER} = "
            f"{mechanism.noise:g} for these outputs; use a less extreme noise parameter"
        )
    return arr


def _quiet():
    """Overflow to ±inf and underflow to 0 are legitimate results here (huge losses, tiny noise); NaN is not."""
    return np.errstate(over="ignore", under="ignore", divide="ignore")


def check_beta(beta: float) -> float:
    return check_interval("beta", beta, 0, 1, closed="neither", hint="β = 0.05 gives a 95% interval")


class SumMechanism(Serializable):
    """Base class of per-record mechanisms for sums of non-negative values (mixin for frozen dataclasses)."""

    KIND: ClassVar[str] = ""
    LABEL: ClassVar[str] = ""
    FAMILY: ClassVar[str] = ""
    UNIT: ClassVar[Unit] = "rho"
    NOISE_PARAMETER: ClassVar[str] = "sigma"
    #: quantity → provenance ("paper Cor. 4.5", "ours: …"). Keys: guarantee, policy, estimator, variance,
    #: variance_estimate, median, interval, sampler.
    SOURCES: ClassVar[dict[str, str]] = {}

    # ----- descriptive -------------------------------------------------------------------------------------
    @property
    def unit(self) -> Unit:
        return self.UNIT

    @property
    def unit_label(self) -> str:
        return UNIT_LABELS[self.UNIT]

    @property
    def source(self) -> str:
        """Where the guarantee comes from (e.g. "paper Cor. 4.5"); see ``SOURCES`` for every quantity."""
        return self.SOURCES.get("guarantee", "")

    @property
    def noise(self) -> float:
        """Current value of the noise parameter ``NOISE_PARAMETER``."""
        return float(getattr(self, self.NOISE_PARAMETER))

    def with_noise(self, value: float):
        """A copy with ``NOISE_PARAMETER`` set to ``value`` (validated again)."""
        return dataclasses.replace(self, **{self.NOISE_PARAMETER: float(value)})  # type: ignore[type-var]

    def params(self) -> dict[str, Any]:
        """The configuration fields (no ``kind``)."""
        d = self.to_dict()
        d.pop("kind", None)
        return d

    def describe(self) -> str:
        """One line: label, parameters, unit of the guarantee."""
        ps = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.params().items())
        kind = "PRzCDP" if self.UNIT == "rho" else "PRDP"
        return f"{self.LABEL} ({ps}): P-{kind}, losses in {UNIT_LABELS[self.UNIT]}"

    def cautions(self) -> tuple[str, ...]:
        """Plain-language warnings about this configuration for the UI (empty when there is nothing to say)."""
        return ()

    # ----- policy --------------------------------------------------------------------------------------------
    def _policy(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must define _policy")

    def _policy_inverse(self, loss: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must define _policy_inverse")

    def policy(self, x):
        """Per-record loss of a record with value (= per-record sensitivity) ``x`` ≥ 0, in ``UNIT``."""
        xx = as_values("x", x)
        with _quiet():
            return ret(self._policy(xx))

    def policy_rho(self, x):
        """Per-record loss in ρ (PRzCDP): the policy itself, or ε·tanh(ε/2) for PRDP mechanisms (Lemma 5.2)."""
        xx = as_values("x", x)
        with _quiet():
            p = self._policy(xx)
            return ret(p if self.UNIT == "rho" else epsilon_to_rho(p))

    def policy_inverse(self, loss):
        """Largest record value whose loss (in ``UNIT``) is at most ``loss`` (the policy is increasing).

        The closed-form inverse is rounded toward privacy: x is nudged down until ``policy(x) ≤ loss`` holds in
        floating point."""
        target = check_nonnegative("loss", loss)
        with _quiet():
            x = self._policy_inverse(target)
            return ret(_nudge_down(x, target, self._policy))

    def max_protected_value(self, rho):
        """Largest record value x* with ρ-loss ≤ ``rho``: the "fully protected record size" (ours).

        Rounded toward privacy: ``policy_rho(x*) ≤ rho`` always holds in floating point."""
        r = check_nonnegative("rho", rho)
        loss = r if self.UNIT == "rho" else np.asarray(rho_to_epsilon(r))
        with _quiet():
            x = self._policy_inverse(loss)

        def rho_of(v):
            p = self._policy(v)
            return p if self.UNIT == "rho" else np.asarray(epsilon_to_rho(p))

        with _quiet():
            return ret(_nudge_down(x, r, rho_of))

    # ----- release -------------------------------------------------------------------------------------------
    def _sample(self, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must define _sample")

    def _variance(self, q: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must define _variance")

    def sample(self, q, *, rng: np.random.Generator):
        """Raw noisy output for true total(s) ``q`` ≥ 0 (vectorised; one independent draw per entry).

        With extremely heavy tails (generalized Gaussian p ≲ 0.007, EPL p = 1 with d → 1, EPL p = 2 with d → 0) a
        draw can exceed float64 and come out ±inf; :meth:`interval` then gives (0, ∞)."""
        if not isinstance(rng, np.random.Generator):
            raise InvalidParameterError("rng must be a numpy Generator (engine.rng.make_rng(seed))")
        qq = as_values("q", q)
        with _quiet():  # extremely heavy tails (EPL d → 1, tiny p) can exceed float64: ±inf
            return ret(self._sample(qq, rng))

    def estimate(self, output):
        """Mean-unbiased estimate of q from a raw output (identity for additive mechanisms)."""
        y = as_output("output", output)
        with _quiet(), np.errstate(invalid="ignore"):
            out = self._estimate(y)
        return ret(_finite_where_defined(out, y, "unbiased estimate", self))

    def _estimate(self, y: np.ndarray) -> np.ndarray:
        return y

    def estimate_median(self, output):
        """Median-unbiased estimate of q from a raw output (identity for symmetric additive noise)."""
        y = as_output("output", output)
        with _quiet():
            return ret(self._estimate_median(y))

    def _estimate_median(self, y: np.ndarray) -> np.ndarray:
        return y

    def variance(self, q=0.0):
        """Variance of :meth:`estimate` when the true total is ``q`` (a planning value; data-independent for
        additive mechanisms). ``inf`` when it exceeds the float range."""
        qq = as_values("q", q)
        with _quiet():
            return ret(self._variance(qq))

    def sd(self, q=0.0):
        """Standard deviation of :meth:`estimate` at total ``q`` (planning)."""
        return ret(np.sqrt(np.asarray(self.variance(q), dtype=float)))

    def variance_estimate(self, output):
        """Unbiased estimate of the variance of :meth:`estimate`, computed from the output only."""
        y = as_output("output", output)
        with _quiet(), np.errstate(invalid="ignore"):
            out = self._variance_estimate(y)
        return ret(_finite_where_defined(out, y, "variance estimate", self))

    def _variance_estimate(self, y: np.ndarray) -> np.ndarray:
        return np.broadcast_to(self._variance(np.zeros(1))[0], y.shape).astype(float)

    def interval(self, output, beta: float = 0.05):
        """Exact (1−β) confidence interval for q from a raw output: ``(low, high)``, with ``low ≥ 0``; an infinite
        output gives ``(0, inf)``."""
        b = check_beta(beta)
        y = as_output("output", output)
        with _quiet(), np.errstate(invalid="ignore"):
            lo, hi = self._interval(y, b)
        lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
        # An infinite output (extremely heavy tails overflow float64: p ≲ 0.007, EPL d → 1) says nothing about q:
        # its interval is the whole range (0, ∞), never NaN.
        lost = ~np.isfinite(np.broadcast_to(y, lo.shape)) | np.isnan(lo) | np.isnan(hi)
        lo = np.where(lost, 0.0, np.maximum(lo, 0.0))
        hi = np.where(lost, np.inf, np.maximum(hi, lo))
        return ret(lo), ret(hi)

    def _interval(self, y: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray]:
        h = self._noise_quantile(1.0 - beta / 2.0)
        return y - h, y + h

    def _noise_quantile(self, u: float) -> float:  # pragma: no cover - abstract (additive)
        raise TypeError(f"{type(self).__name__} must define _noise_quantile")

    def half_width(self, q=0.0, beta: float = 0.05):
        """Planning half-width of the (1−β) interval at total ``q``: half the interval's length when the noise
        draw is zero (additive: the noise's (1−β/2) quantile; ours for transformation mechanisms)."""
        b = check_beta(beta)
        qq = as_values("q", q)
        with _quiet():
            return ret(self._half_width(qq, b))

    def _half_width(self, q: np.ndarray, beta: float) -> np.ndarray:
        return np.broadcast_to(self._noise_quantile(1.0 - beta / 2.0), q.shape).astype(float)


S = TypeVar("S", bound=type[SumMechanism])

#: KIND → class, filled by :func:`register_sum` when ``engine.per_record`` is imported.
SUM_MECHANISMS: dict[str, type[SumMechanism]] = {}


def register_sum(cls: S) -> S:
    """Class decorator adding a sum mechanism to :data:`SUM_MECHANISMS` under its ``KIND``."""
    if not cls.KIND or cls.KIND in SUM_MECHANISMS:
        raise TypeError(f"sum mechanism {cls.__name__} needs a unique KIND; got {cls.KIND!r}")
    SUM_MECHANISMS[cls.KIND] = cls
    return cls


def sum_mechanism_from_dict(data: Any) -> SumMechanism:
    """Rebuild a sum mechanism from its ``to_dict()`` output (the ``kind`` key picks the class)."""
    if not isinstance(data, dict) or "kind" not in data:
        raise InvalidParameterError("a per-record mechanism configuration must be a JSON object with a 'kind' field")
    kind = data["kind"]
    if kind not in SUM_MECHANISMS:
        raise InvalidParameterError(f"mechanism must be one of {sorted(SUM_MECHANISMS)}; got {kind!r}")
    return SUM_MECHANISMS[kind].from_dict(data)


def make_sum_mechanism(kind: str, **params: Any) -> SumMechanism:
    """Build a sum mechanism by KIND with keyword parameters, e.g. ``make_sum_mechanism("log", a=1, sigma=2)``."""
    return sum_mechanism_from_dict({"kind": kind, **params})
