"""Deliberately mis-calibrated copies of real mechanisms, to prove that an audit has teeth.

:func:`scaled_noise` returns a copy of a Gaussian, private-projection or JL + Laplace mechanism whose noise is
multiplied by ``factor`` (< 1: less noise) while everything else — its configuration, its ``guarantee()``, its
release code — is the real mechanism's. An audit that passes the real mechanism must flag the copy: it still prints
the real claim but no longer keeps it. These classes are never registered (:data:`engine.mechanisms.MECHANISMS` does
not list them), so no command, page or configuration file can reach them.

The per-record sum mechanisms need no class: ``mechanism.with_noise(mechanism.noise * factor)`` is the mutant, audited
against the original's printed loss. A count release's mutant is its configuration with a smaller Δ_z
(:func:`with_sensitivity`), built without the configuration's validation — the engine refuses a Δ_z below the one
the public statistics require (issue 30 §1), and the mutant is exactly such a configuration.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import Any, ClassVar

from engine.errors import InvalidParameterError
from engine.mechanisms.gaussian import GaussianMechanism
from engine.mechanisms.jl_laplace import JLLaplace
from engine.mechanisms.private_projection import PrivateProjection
from engine.public_info.count_release import CountReleaseConfig
from engine.public_info.dependence import SensitivityDerivation, derive_sensitivity
from engine.validation import check_interval

__all__ = ["scaled_noise", "with_sensitivity"]


class _ScaledGaussian(GaussianMechanism):
    NOISE_FACTOR: ClassVar[float] = 1.0

    @cached_property
    def sigma(self) -> float:
        return float(GaussianMechanism.sigma.func(self)) * self.NOISE_FACTOR  # type: ignore[attr-defined]


class _ScaledProjection(PrivateProjection):
    NOISE_FACTOR: ClassVar[float] = 1.0

    def sigma1(self, d: int) -> float:
        return float(PrivateProjection.sigma1(self, d)) * self.NOISE_FACTOR


class _ScaledJL(JLLaplace):
    NOISE_FACTOR: ClassVar[float] = 1.0

    @property
    def laplace_scale(self) -> float:
        return float(JLLaplace.laplace_scale.fget(self)) * self.NOISE_FACTOR  # type: ignore[attr-defined]


_BASES: tuple[tuple[type, type], ...] = (
    (GaussianMechanism, _ScaledGaussian),
    (PrivateProjection, _ScaledProjection),
    (JLLaplace, _ScaledJL),
)


def scaled_noise(mechanism: Any, factor: float) -> Any:
    """A copy of ``mechanism`` with its noise scale multiplied by ``factor`` and its printed guarantee unchanged.

    Gaussian: σ; private projection: σ1 (step 3, the only noise at full rank); JL + Laplace: the Laplace scale.

    >>> mech = GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)
    >>> half = scaled_noise(mech, 0.5)
    >>> round(half.sigma / mech.sigma, 12), half.guarantee().epsilon == mech.guarantee().epsilon
    (0.5, True)
    """
    f = check_interval("factor", factor, 0, None, closed="neither")
    for base, scaled in _BASES:
        if isinstance(mechanism, base) and dataclasses.is_dataclass(mechanism):
            cls = type(f"{base.__name__}NoiseTimes{f:g}", (scaled,), {"NOISE_FACTOR": f, "__module__": __name__})
            fields = {fld.name: getattr(mechanism, fld.name) for fld in dataclasses.fields(mechanism)}
            return cls(**fields)
    raise InvalidParameterError(
        f"scaled_noise covers the Gaussian, projection and JL + Laplace mechanisms; got {type(mechanism).__name__} "
        "— for a per-record sum mechanism use mechanism.with_noise(...)"
    )


class _WeakenedCountRelease(CountReleaseConfig):
    """A count-release configuration whose Δ_z is taken as given, below the derived one (a mutant: never released)."""

    def __post_init__(self) -> None:  # the configuration was validated before it was weakened
        pass

    def delta_z(self, *, subcounts: bool) -> SensitivityDerivation:
        derived = derive_sensitivity(self.public, self.dependence, subcounts=subcounts)
        value = float(self.sensitivity if self.sensitivity is not None else derived.value)
        return SensitivityDerivation(value, derived.derived, derived.exact, "a mutant's Δ_z, below the derived one")


def with_sensitivity(config: CountReleaseConfig, sensitivity: float) -> CountReleaseConfig:
    """A copy of a count-release configuration with Δ_z replaced, skipping its validation (a mutant the engine would
    refuse to build: "the total ignored"). Only the exact-law audit reads it (through ``config.noise_rate``); no
    release is ever made with it.

    >>> config = CountReleaseConfig(method="postprocess", epsilon=1.0, public=("total",), sensitivity=4.0)
    >>> with_sensitivity(config, 2.0).noise_rate(subcounts=False), config.noise_rate(subcounts=False)
    (0.5, 0.25)
    """
    if not isinstance(config, CountReleaseConfig):
        raise InvalidParameterError(f"config must be a CountReleaseConfig; got {type(config).__name__}")
    value = check_interval("sensitivity", sensitivity, 0, None, closed="neither")
    fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    return _WeakenedCountRelease(**{**fields, "sensitivity": float(value)})
