"""Where a release's noise comes from: OpenDP's vetted Gaussian sampler, or numpy's floating-point sampler.

The engine's mechanisms draw their noise with ``numpy.random.Generator`` — fine for simulations, sweeps and the
dashboard's what-ifs, but a floating-point Gaussian sampler is not what a real release should use (naive float
samplers leak through their low-order bits; Mironov 2012). For the data holder's release (``python -m engine
privatize``) this module draws the Gaussian TDP mechanism's noise with OpenDP's vetted Gaussian measurement
instead (:func:`opendp_gaussian_release`).

Samplers
--------
``"opendp"``
    :func:`opendp.measurements.make_gaussian` on the released matrix flattened to one vector, with L2 distance
    metric and ``scale`` = our calibrated σ (:func:`engine.mechanisms.gaussian.gaussian_sigma`). Two
    B-neighbouring data sets differ in one row by at most B in L2 norm, so the flattened matrix moves by at most B:
    applying the measurement to the whole matrix with sensitivity B is the same mechanism as applying it to each
    row's vector (i.i.d. N(0, σ²) on every entry) and its privacy map covers the whole release at once. OpenDP
    draws from the operating system's entropy: it cannot be seeded. OpenDP's own privacy map certifies
    ρ = B²/(2σ²) zero-concentrated DP (checked on every release: ``details["opendp_rho"]``); our (ε, δ) is the
    exact analytic profile of the Gaussian with that σ (Balle & Wang 2018), which is tighter than OpenDP's
    zCDP → (ε, δ) conversion (both are reported). Only the Gaussian TDP mechanism can be expressed exactly.
``"numpy"``
    The mechanism's own ``release(x, rng=...)`` with a ``numpy.random.Generator``. The only choice with a seed
    (then a simulation, not private) and for mechanisms OpenDP cannot express exactly: the private projection's
    correlated noise (its covariance depends on the data), JL–Laplace (a secret random projection with Laplace
    noise) and Mondrian k-anonymity (no noise).

Default: ``"opendp"`` for the Gaussian TDP mechanism when no seed is given; ``"numpy"`` otherwise, stated plainly
in the release summary (:func:`sampler_note`).

References
----------
.. [1] OpenDP, ``make_gaussian`` (version pinned in ``requirements.txt``) and its proof document,
       https://docs.opendp.org/en/v0.16.0/proofs/rust/src/measurements/noise/distribution/gaussian/make_gaussian.pdf
.. [2] I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012.
.. [3] B. Balle and Y.-X. Wang, ICML 2018, Theorem 8.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import numpy as np

from engine.errors import InvalidParameterError
from engine.guarantee import Release
from engine.mechanisms.gaussian import GaussianMechanism, gaussian_delta
from engine.validation import check_choice, check_unit_ball

__all__ = [
    "OPENDP_KINDS",
    "SAMPLERS",
    "Sampler",
    "opendp_gaussian_noise",
    "opendp_gaussian_release",
    "opendp_version",
    "release_with_sampler",
    "resolve_sampler",
    "run_release_with_sampler",
    "sampler_note",
]

Sampler = Literal["opendp", "numpy"]

SAMPLERS: dict[str, str] = {
    "opendp": "OpenDP's vetted Gaussian sampler (exact discrete sampling, OS entropy; Gaussian mechanism only)",
    "numpy": "numpy's floating-point sampler (fine for simulations; seeded output is not private)",
}

#: Mechanism kinds whose noise OpenDP expresses exactly.
OPENDP_KINDS = frozenset({"gaussian"})

_NOT_EXPRESSIBLE = {
    "projection": "its noise is correlated through a data-dependent covariance step",
    "jl-laplace": "it multiplies by a secret random projection before adding Laplace noise",
    "mondrian": "it adds no noise (k-anonymity is not differential privacy)",
}


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


def opendp_gaussian_noise(shape: tuple[int, ...], sigma: float) -> np.ndarray:
    """Noise of standard deviation ``sigma`` drawn by OpenDP's Gaussian measurement (OS entropy; cannot be seeded).

    >>> opendp_gaussian_noise((2, 3), 1.0).shape
    (2, 3)
    """
    if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma > 0):
        raise InvalidParameterError(f"sigma must be a positive finite number; got {sigma!r}")
    size = int(np.prod(shape))
    out = _measurement(size, sigma)([0.0] * size)
    return np.asarray(out, dtype=float).reshape(shape)


def opendp_gaussian_release(mechanism: GaussianMechanism, x: np.ndarray) -> Release:
    """The Gaussian TDP mechanism's release with OpenDP drawing the noise (see the module docstring).

    The OpenDP measurement takes the flattened matrix, L2 sensitivity B and ``scale`` = ``mechanism.sigma``
    exactly; its privacy map must give ρ = B²/(2σ²), which is checked. The guarantee is the mechanism's, with a
    note naming the sampler and OpenDP's certified ρ.
    """
    if not isinstance(mechanism, GaussianMechanism):
        raise InvalidParameterError(
            f"the OpenDP sampler expresses the Gaussian TDP mechanism only; got {type(mechanism).__name__}"
        )
    arr = check_unit_ball(x, mechanism="the Gaussian mechanism")
    sigma = float(mechanism.sigma)
    meas = _measurement(arr.size, sigma)
    rho = float(meas.map(float(mechanism.b)))
    expected = float(mechanism.b) ** 2 / (2.0 * sigma**2)
    if not math.isclose(rho, expected, rel_tol=1e-9):  # a changed OpenDP map must not pass silently
        raise RuntimeError(f"OpenDP's privacy map gave ρ = {rho!r}, expected B²/(2σ²) = {expected!r}")
    value = np.asarray(meas(arr.ravel().tolist()), dtype=float).reshape(arr.shape)
    dp = _dp()
    opendp_delta = float(dp.c.make_zCDP_to_approxDP(meas).map(float(mechanism.b)).delta(float(mechanism.epsilon)))
    guarantee = mechanism.guarantee()
    note = (
        f"Noise drawn with OpenDP {opendp_version()}'s vetted Gaussian measurement (make_gaussian, scale σ = "
        f"{sigma:.6g}, L2 sensitivity B = {mechanism.b:g}); OpenDP certifies ρ = {rho:.6g}-zCDP, which by its "
        f"conversion gives (ε = {mechanism.epsilon:g}, δ = {opendp_delta:.3g}); the stated δ = {mechanism.delta:.3g} "
        "is the exact analytic profile of the Gaussian with this σ."
    )
    guarantee = dataclasses.replace(guarantee, notes=(*guarantee.notes, note))
    return Release(
        value=value,
        guarantee=guarantee,
        details={
            "noise_sd_per_coordinate": sigma,
            "output_scale": 1.0,
            "calibration": mechanism.calibration,
            "implementation": "opendp",
            "sensitivity_l2": float(mechanism.b),
            "delta_at_sigma": float(gaussian_delta(mechanism.b, sigma, mechanism.epsilon)),
            "sampler": "opendp",
            "opendp_version": opendp_version(),
            "opendp_rho": rho,
            "opendp_delta_at_epsilon": opendp_delta,
        },
    )


def resolve_sampler(sampler: str | None, *, seed: int | None, kind: str) -> str:
    """The sampler to use: the one asked for (validated), or the default.

    Default: ``"opendp"`` for the Gaussian TDP mechanism without a seed, ``"numpy"`` otherwise.

    Raises
    ------
    InvalidParameterError
        ``"opendp"`` with a seed (OpenDP draws from OS entropy and cannot be seeded), or for a mechanism it cannot
        express exactly.

    Examples
    --------
    >>> resolve_sampler(None, seed=None, kind="gaussian"), resolve_sampler(None, seed=3, kind="gaussian")
    ('opendp', 'numpy')
    >>> resolve_sampler(None, seed=None, kind="projection")
    'numpy'
    """
    if sampler is None:
        return "opendp" if seed is None and kind in OPENDP_KINDS else "numpy"
    chosen = check_choice("sampler", sampler, SAMPLERS)
    if chosen == "opendp" and seed is not None:
        raise InvalidParameterError(
            "sampler 'opendp' draws from the operating system's entropy and cannot be seeded; got a seed "
            f"({seed}) — drop the seed for a real release, or use --sampler numpy for a seeded simulation"
        )
    if chosen == "opendp" and kind not in OPENDP_KINDS:
        raise InvalidParameterError(
            f"sampler 'opendp' cannot express the {kind} mechanism exactly "
            f"({_NOT_EXPRESSIBLE.get(kind, 'OpenDP has no measurement for it')}) — use the Gaussian TDP mechanism "
            "(--mechanism gaussian) for a release with vetted noise, or --sampler numpy"
        )
    return chosen


def sampler_note(sampler: str, *, kind: str, seeded: bool) -> str:
    """One plain sentence for the release summary and the guarantee: which sampler drew the noise, and what follows.

    >>> sampler_note("numpy", kind="projection", seeded=False).startswith("Noise drawn with numpy")
    True
    """
    chosen = check_choice("sampler", sampler, SAMPLERS)
    if chosen == "opendp":
        return (
            f"Noise drawn with OpenDP {opendp_version()}'s vetted Gaussian sampler from the operating system's entropy."
        )
    if seeded:
        return "Noise drawn with numpy's floating-point sampler from a seed: a simulation — not private."
    text = "Noise drawn with numpy's floating-point sampler from the operating system's entropy (not a vetted sampler)."
    if kind in _NOT_EXPRESSIBLE:
        text += (
            f" OpenDP cannot express the {kind} mechanism exactly ({_NOT_EXPRESSIBLE[kind]}); for a release with "
            "vetted noise use the Gaussian TDP mechanism (--mechanism gaussian), whose noise OpenDP draws."
        )
    return text


def _with_note(release: Release, note: str, sampler: str) -> Release:
    guarantee = release.guarantee
    if dataclasses.is_dataclass(guarantee) and hasattr(guarantee, "notes") and note not in guarantee.notes:
        guarantee = dataclasses.replace(guarantee, notes=(*guarantee.notes, note))
    return Release(value=release.value, guarantee=guarantee, details=dict(release.details, sampler=sampler))


def release_with_sampler(
    mechanism, x: np.ndarray, *, sampler: str, rng: np.random.Generator | None, seeded: bool = False
) -> Release:
    """Run ``mechanism`` on ``x`` with the given sampler; the guarantee's notes name the sampler (:func:`sampler_note`).

    ``rng`` is used by the numpy sampler only (required there); ``seeded`` says whether it came from a seed.
    """
    chosen = check_choice("sampler", sampler, SAMPLERS)
    kind = getattr(type(mechanism), "KIND", "")
    if chosen == "opendp":
        resolve_sampler("opendp", seed=None, kind=kind)  # refuses mechanisms OpenDP cannot express
        release = opendp_gaussian_release(mechanism, x)
    else:
        if rng is None:
            raise InvalidParameterError("the numpy sampler needs rng (a numpy.random.Generator)")
        release = mechanism.release(x, rng=rng)
    return _with_note(release, sampler_note(chosen, kind=kind, seeded=seeded), chosen)


def run_release_with_sampler(frame, config, *, sampler: str | None):
    """:func:`engine.release.run_release` with the sampler chosen by :func:`resolve_sampler`.

    Returns
    -------
    (PreparedData, Release, str)
        As ``run_release``, plus the sampler used.
    """
    from engine.data.preparation import prepare
    from engine.release import ReleaseConfig
    from engine.rng import make_rng

    if not isinstance(config, ReleaseConfig):
        raise InvalidParameterError(f"config must be a ReleaseConfig; got {type(config).__name__}")
    chosen = resolve_sampler(sampler, seed=config.seed, kind=config.kind)
    mechanism = config.build_mechanism()
    prepared = prepare(frame, config.data)
    rng = make_rng(config.seed) if chosen == "numpy" else None
    release = release_with_sampler(mechanism, prepared.x, sampler=chosen, rng=rng, seeded=config.seeded)
    return prepared, release, chosen
