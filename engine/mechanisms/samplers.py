"""Where a release's noise comes from: OpenDP's vetted Gaussian sampler, or numpy's floating-point sampler.

A mechanism draws its noise through a :class:`NoiseSampler` handed to its ``release`` (the one release function,
:func:`engine.release.privatize`, builds it from the sampler's name). Two samplers:

``"opendp"`` — :class:`OpenDPSampler`
    :func:`opendp.measurements.make_gaussian` applied to the released values, with L2 distance metric, sensitivity
    the mechanism's and ``scale`` = its calibrated σ. Two B-neighbouring data sets differ in one row by at most B in
    L2 norm, so the flattened matrix moves by at most B: the measurement applied to the whole matrix (or to blocks of
    whole rows, as here and in every partition of the out-of-core release) is the same mechanism as applying it to
    each row (i.i.d. N(0, σ²) on every entry), and its privacy map covers every block at once. OpenDP draws from
    the operating system's entropy: it cannot be seeded. OpenDP's own privacy map certifies ρ = Δ²/(2σ²)
    zero-concentrated DP (checked on every block: ``details["opendp_rho"]``); the stated (ε, δ) is the exact
    analytic profile of the Gaussian with that σ (Balle & Wang 2018), tighter than OpenDP's zCDP → (ε, δ)
    conversion (both are reported). Exact sampling is slow (about 90 µs a value): a data holder's release, not a
    dashboard what-if.
``"numpy"`` — :class:`NumpySampler`
    ``numpy.random.Generator`` draws. The only choice with a seed (then a simulation, not private) and for the
    mechanisms OpenDP cannot express exactly (each says why in its tags: ``MechanismTags.opendp_reason``).

Which mechanisms accept which sampler is their tag ``samplers`` (:class:`engine.mechanisms.base.MechanismTags`);
the default (:func:`engine.release.resolve_sampler`) is ``"opendp"`` for an unseeded release of a mechanism that
supports it and ``"numpy"`` otherwise, stated plainly in every output (:func:`engine.release.sampler_note`).

References
----------
.. [1] OpenDP, ``make_gaussian`` (version pinned in ``requirements.txt``) and its proof document,
       https://docs.opendp.org/en/v0.16.0/proofs/rust/src/measurements/noise/distribution/gaussian/make_gaussian.pdf
.. [2] I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
.. [3] B. Balle and Y.-X. Wang, ICML 2018, Theorem 8.
"""

from __future__ import annotations

import math
from typing import Literal, Protocol

import numpy as np

from engine.errors import InvalidParameterError
from engine.validation import check_choice, check_rng

__all__ = [
    "SAMPLERS",
    "NoiseSampler",
    "NumpySampler",
    "OpenDPSampler",
    "Sampler",
    "make_sampler",
    "opendp_gaussian_noise",
    "opendp_version",
]

Sampler = Literal["opendp", "numpy"]

SAMPLERS: dict[str, str] = {
    "opendp": "OpenDP's vetted Gaussian sampler (exact sampling, OS entropy; mechanisms tagged for it only)",
    "numpy": "numpy's floating-point sampler (fine for simulations; seeded output is not private)",
}

#: Values OpenDP noises per call (whole rows): bounds the Python list OpenDP's API takes to a few tens of MB.
_OPENDP_BLOCK = 1 << 20


class NoiseSampler(Protocol):
    """What a mechanism's ``release`` draws its noise from."""

    @property
    def name(self) -> str: ...

    def add_gaussian(self, x: np.ndarray, sigma: float, *, sensitivity: float,
                     epsilon: float) -> tuple[np.ndarray, dict[str, str | float]]: ...

    def add_laplace(self, x: np.ndarray, scale: float) -> tuple[np.ndarray, dict[str, str | float]]: ...


class NumpySampler:
    """Noise drawn from a ``numpy.random.Generator`` (the mechanism's stream: the same draws as ``rng.normal``)."""

    name = "numpy"

    def __init__(self, rng: np.random.Generator) -> None:
        check_rng(rng)
        self.rng = rng

    def add_gaussian(self, x: np.ndarray, sigma: float, *, sensitivity: float,
                     epsilon: float) -> tuple[np.ndarray, dict[str, str | float]]:
        return x + self.rng.normal(0.0, sigma, size=x.shape), {}

    def add_laplace(self, x: np.ndarray, scale: float) -> tuple[np.ndarray, dict[str, str | float]]:
        return x + self.rng.laplace(0.0, scale, size=x.shape), {}


def opendp_version() -> str:
    """The installed OpenDP version (pinned in requirements.txt)."""
    from importlib.metadata import version

    return version("opendp")


def _dp():
    import opendp.prelude as dp

    dp.enable_features("contrib")  # make_gaussian is a contrib component in OpenDP 0.16
    return dp


def _measurement(size: int, sigma: float):
    dp = _dp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size), dp.l2_distance(T=float)
    return dp.m.make_gaussian(*space, scale=float(sigma))


def _check_sigma(sigma: float) -> float:
    if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma > 0):
        raise InvalidParameterError(f"sigma must be a positive finite number; got {sigma!r}")
    return float(sigma)


class OpenDPSampler:
    """Gaussian noise drawn by OpenDP's vetted measurement, applied to the values themselves (module docstring)."""

    name = "opendp"

    def add_gaussian(self, x: np.ndarray, sigma: float, *, sensitivity: float,
                     epsilon: float) -> tuple[np.ndarray, dict[str, str | float]]:
        sigma = _check_sigma(sigma)
        arr = np.asarray(x, dtype=float)
        flat = arr.reshape(arr.shape[0], -1) if arr.ndim > 1 else arr.reshape(-1, 1)
        rows_per_block = max(1, _OPENDP_BLOCK // max(1, flat.shape[1]))
        out = np.empty_like(flat)
        rho = math.nan
        measurements: dict[int, object] = {}
        for start in range(0, flat.shape[0], rows_per_block):
            block = flat[start:start + rows_per_block]
            meas = measurements.get(block.size)
            if meas is None:  # one measurement per block size (the last block may be shorter)
                meas = measurements[block.size] = _measurement(block.size, sigma)
                rho = float(meas.map(float(sensitivity)))
                expected = float(sensitivity) ** 2 / (2.0 * sigma**2)
                if not math.isclose(rho, expected, rel_tol=1e-9):  # a changed OpenDP map must not pass silently
                    raise RuntimeError(f"OpenDP's privacy map gave ρ = {rho!r}, expected Δ²/(2σ²) = {expected!r}")
            noisy = meas(block.ravel().tolist())  # type: ignore[operator]
            out[start:start + block.shape[0]] = np.asarray(noisy, dtype=float).reshape(block.shape)
        dp = _dp()
        certified = _measurement(1, sigma)
        opendp_delta = float(dp.c.make_zCDP_to_approxDP(certified).map(float(sensitivity)).delta(float(epsilon)))
        details: dict[str, str | float] = {
            "implementation": "opendp",
            "opendp_version": opendp_version(),
            "opendp_rho": rho,
            "opendp_delta_at_epsilon": opendp_delta,
            "note": (
                f"Noise drawn with OpenDP {opendp_version()}'s vetted Gaussian measurement (make_gaussian, scale "
                f"σ = {sigma:.6g}, L2 sensitivity {float(sensitivity):g}); OpenDP certifies ρ = {rho:.6g}-zCDP, "
                f"which by its conversion gives (ε = {float(epsilon):g}, δ = {opendp_delta:.3g}); the stated δ is the "
                "exact analytic profile of the Gaussian with this σ."
            ),
        }
        return out.reshape(arr.shape), details

    def add_laplace(self, x: np.ndarray, scale: float) -> tuple[np.ndarray, dict[str, str | float]]:
        raise InvalidParameterError(
            "the OpenDP sampler draws Gaussian noise only; a mechanism adding Laplace noise must use --sampler numpy"
        )


def opendp_gaussian_noise(shape: tuple[int, ...], sigma: float) -> np.ndarray:
    """Noise of standard deviation ``sigma`` drawn by OpenDP's Gaussian measurement (OS entropy; cannot be seeded).

    >>> opendp_gaussian_noise((2, 3), 1.0).shape
    (2, 3)
    """
    sigma = _check_sigma(sigma)
    size = int(np.prod(shape))
    out = _measurement(size, sigma)([0.0] * size)
    return np.asarray(out, dtype=float).reshape(shape)


def make_sampler(name: str, rng: np.random.Generator | None) -> NoiseSampler:
    """The noise sampler called ``name`` (``rng`` is the numpy sampler's stream; OpenDP needs none)."""
    chosen = check_choice("sampler", name, SAMPLERS)
    if chosen == "opendp":
        return OpenDPSampler()
    if rng is None:
        raise InvalidParameterError("the numpy sampler needs rng (a numpy.random.Generator)")
    return NumpySampler(rng)
