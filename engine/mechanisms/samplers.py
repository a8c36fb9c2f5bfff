"""Where a release's noise comes from: OpenDP's vetted Gaussian sampler, or numpy's floating-point sampler.

A mechanism draws its noise through a :class:`NoiseSampler` handed to its ``release`` (the one release function,
:func:`engine.release.privatize`, builds it from the sampler's name). Two samplers:

``"opendp"`` — :class:`OpenDPSampler`
    :func:`opendp.measurements.make_gaussian` with L2 distance metric and noise granularity ``k`` =
    :data:`OPENDP_K`, applied to chunks of whole rows of the released matrix. Its proof document [1] states what
    one call does: every value is rounded to the nearest multiple of 2^k (``make_float_to_bigint``), discrete
    Gaussian noise of scale σ/2^k is added to the integer numerators (Canonne, Kamath & Steinke 2020, Theorem 14)
    and the result is rounded back to the nearest float (post-processing). The rounding can move two vectors of m
    values apart by √m·(2^k − 2^k_min) more in L2 (``get_rounding_distance``), so OpenDP's privacy map certifies
    ρ = Δ'²/(2σ²)-zCDP for the EFFECTIVE sensitivity Δ' = B + √m·2^k (2^k_min, the subnormal spacing, neglected
    upwards). The rows are cut into chunks by position (independent of the data; :data:`OPENDP_CHUNK_VALUES` values
    of whole rows each): a neighbouring data set changes one row, so one chunk, and each chunk is its own
    measurement — the release's guarantee is one chunk's. σ is therefore raised from the mechanism's σ to
    σ' = σ·Δ'/B (the Gaussian's privacy depends on σ/Δ only), so that the EXACT analytic (ε, δ) profile of the
    Gaussian (Balle & Wang 2018) at Δ' and σ' is the mechanism's at B and σ; this is checked on every release
    against OpenDP's map (``details["opendp_rho"]``, ``details["opendp_effective_sensitivity"]``) and stated in the
    release's notes, beside OpenDP's own zCDP → (ε, δ) conversion (looser; ``details["opendp_delta_at_epsilon"]``).
    With k = −30 and chunks of 8,192 values Δ' − B = 8.4·10⁻⁸: σ' exceeds σ by 3.4·10⁻⁷ relative at B = 0.25 (and
    by at most 2^-31 more: σ' is rounded up to :data:`SIGMA_BITS` significant bits, which OpenDP samples faster).
    OpenDP draws from the operating system's entropy: it cannot be seeded. Each call releases the interpreter lock,
    so chunks are drawn by ``workers`` threads at once; between chunks the sampler reports progress and looks at
    its cancel token (a chunk takes a fraction of a second), so Ctrl-C and the app's Stop take effect within
    about a second. Exact sampling costs about 15 µs a value per core (:data:`OPENDP_SECONDS_PER_VALUE`; at
    k = None, OpenDP's default, 59–84 µs): a data holder's release, not a dashboard what-if. It is the fastest
    exact sampler found on PyPI (``benchmarks/bench_vetted.py`` compares PyDP, diffprivlib and Tumult Core:
    docs/performance.md); the only faster one, PyDP, samples an approximation of the Gaussian, so it is not used.
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
.. [4] C. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
       Theorem 14.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from typing import Literal, Protocol

import numpy as np

from engine.errors import InvalidParameterError
from engine.progress import CancelToken, Progress
from engine.validation import check_choice, check_integer, check_rng

__all__ = [
    "OPENDP_CHUNK_VALUES",
    "OPENDP_K",
    "OPENDP_SECONDS_PER_VALUE",
    "SAMPLERS",
    "SIGMA_BITS",
    "NoiseSampler",
    "NumpySampler",
    "OpenDPSampler",
    "Sampler",
    "available_cores",
    "make_sampler",
    "opendp_gaussian_noise",
    "opendp_version",
    "vetted_noise_seconds",
]

Sampler = Literal["opendp", "numpy"]

SAMPLERS: dict[str, str] = {
    "opendp": "OpenDP's vetted Gaussian sampler (exact sampling, OS entropy; mechanisms tagged for it only)",
    "numpy": "numpy's floating-point sampler (fine for simulations; seeded output is not private)",
}

#: OpenDP's noise granularity: values are rounded to multiples of 2^k and the noise is a discrete Gaussian on that
#: grid (module docstring). None — OpenDP's default, the subnormal spacing 2^-1074 — costs 59–84 µs a value; any k
#: from −40 to −10 about 14–16 µs (``benchmarks/bench_vetted.py``; docs/performance.md), so a fine one with a
#: negligible rounding term.
OPENDP_K = -30
#: Values per OpenDP call: whole rows, about this many values (about 0.15 s of one core). Bounds what
#: crosses into OpenDP at once (memory), the wait for Ctrl-C or Stop, and the rounding term √m·2^k.
OPENDP_CHUNK_VALUES = 1 << 13
#: CPU seconds per value of the vetted sampler at :data:`OPENDP_K` (measured on the 2-core development machine under
#: load 1–8: 14.4–18.6 µs; benchmarks/bench_vetted.py): the estimate the command line warns with.
OPENDP_SECONDS_PER_VALUE = 16e-6
#: Values per numpy block (in-memory releases draw and add the noise in row blocks: one block's noise at a time).
_NUMPY_BLOCK_VALUES = 1 << 20


def available_cores() -> int:
    """The cores this process may use (its CPU affinity where the system reports it).

    >>> available_cores() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def vetted_noise_seconds(values: int, workers: int | None = None) -> float:
    """Wall seconds the vetted sampler needs for ``values`` values on ``workers`` cores (default: every available
    core), at :data:`OPENDP_SECONDS_PER_VALUE` — an estimate for a warning, not a promise (a loaded machine is
    slower).

    >>> round(vetted_noise_seconds(1_000_000 * 15, workers=2))
    120
    """
    cores = available_cores() if workers is None else max(1, int(workers))
    return float(values) * OPENDP_SECONDS_PER_VALUE / cores


class NoiseSampler(Protocol):
    """What a mechanism's ``release`` draws its noise from."""

    @property
    def name(self) -> str: ...

    def add_gaussian(self, x: np.ndarray, sigma: float, *, sensitivity: float,
                     epsilon: float) -> tuple[np.ndarray, dict[str, str | float]]: ...

    def add_laplace(self, x: np.ndarray, scale: float) -> tuple[np.ndarray, dict[str, str | float]]: ...


def _row_blocks(n: int, width: int, values: int) -> range:
    """Start rows of blocks of whole rows holding about ``values`` values each (at least one row)."""
    return range(0, n, max(1, values // max(1, width)))


class NumpySampler:
    """Noise drawn from a ``numpy.random.Generator`` (the mechanism's stream: the same draws as ``rng.normal``).

    The noise is drawn and added in row blocks into one output array (the generator's stream is the same, value for
    value, as one draw of the whole shape): a release holds its input, its output and one block of noise, not a
    second matrix of noise.
    """

    name = "numpy"

    def __init__(self, rng: np.random.Generator) -> None:
        check_rng(rng)
        self.rng = rng

    def _add(self, x: np.ndarray, draw: Callable[[tuple[int, ...]], np.ndarray]) -> np.ndarray:
        arr = np.asarray(x, dtype=float)
        if arr.ndim < 2 or arr.size <= _NUMPY_BLOCK_VALUES:
            return arr + draw(arr.shape)
        out = np.empty_like(arr)
        width = arr.size // arr.shape[0]
        for start in _row_blocks(arr.shape[0], width, _NUMPY_BLOCK_VALUES):
            block = arr[start:start + max(1, _NUMPY_BLOCK_VALUES // width)]
            np.add(block, draw(block.shape), out=out[start:start + block.shape[0]])
        return out

    def add_gaussian(self, x: np.ndarray, sigma: float, *, sensitivity: float,
                     epsilon: float) -> tuple[np.ndarray, dict[str, str | float]]:
        return self._add(x, lambda shape: self.rng.normal(0.0, sigma, size=shape)), {}

    def add_laplace(self, x: np.ndarray, scale: float) -> tuple[np.ndarray, dict[str, str | float]]:
        return self._add(x, lambda shape: self.rng.laplace(0.0, scale, size=shape)), {}


def opendp_version() -> str:
    """The installed OpenDP version (pinned in requirements.txt)."""
    from importlib.metadata import version

    return version("opendp")


def _dp():
    import opendp.prelude as dp

    dp.enable_features("contrib")  # make_gaussian is a contrib component in OpenDP 0.16
    return dp


def _measurement(size: int, sigma: float):
    """OpenDP's Gaussian measurement on vectors of ``size`` floats, scale ``sigma``, granularity 2^OPENDP_K."""
    dp = _dp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size), dp.l2_distance(T=float)
    return dp.m.make_gaussian(*space, scale=float(sigma), k=OPENDP_K)


def _check_sigma(sigma: float) -> float:
    if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma > 0):
        raise InvalidParameterError(f"sigma must be a positive finite number; got {sigma!r}")
    return float(sigma)


def effective_sensitivity(sensitivity: float, values: int, k: int | None = None) -> float:
    """Δ' = Δ + √m·2^k: the L2 sensitivity OpenDP's map certifies for a chunk of ``values`` values rounded to the
    2^k grid (rounded up: never below the exact sum).

    >>> effective_sensitivity(0.25, 16384, -30) - 0.25 > 128 * 2.0**-30 * (1 - 1e-9)
    True
    """
    exact = float(sensitivity) + math.sqrt(values) * 2.0 ** (OPENDP_K if k is None else k)
    return float(np.nextafter(exact, math.inf))


#: Significant bits σ' is rounded up to: OpenDP samples in exact rational arithmetic on σ', and a float with a full
#: 53-bit mantissa costs it about 10–15 % more CPU a value than one with 32 (benchmarks/bench_vetted.py's scales,
#: 2026-11-28); rounding UP by at most 2^-31 relative only adds noise (σ'/Δ' ≥ σ/Δ still holds).
SIGMA_BITS = 32


def raised_sigma(sigma: float, sensitivity: float, effective: float) -> float:
    """σ' ≥ σ·Δ'/Δ with σ'/Δ' ≥ σ/Δ in floating point: the same σ-to-sensitivity ratio at the effective
    sensitivity, so every (ε, δ) the Gaussian has at (Δ, σ) it has at (Δ', σ'); rounded up to
    :data:`SIGMA_BITS` significant bits (at most 2^-31 more, relative).

    >>> s = raised_sigma(1.0, 0.25, 0.25 + 1e-7); s > 1.0 and s / (0.25 + 1e-7) >= 1.0 / 0.25
    True
    >>> m, _ = math.frexp(s); (m * 2**SIGMA_BITS).is_integer() and s <= 1.0 * (0.25 + 1e-7) / 0.25 * (1 + 2**-31)
    True
    """
    raised = float(sigma) * (float(effective) / float(sensitivity))
    mantissa, exponent = math.frexp(raised)
    raised = math.ldexp(math.ceil(mantissa * 2**SIGMA_BITS), exponent - SIGMA_BITS)  # exact: a short mantissa
    while raised / effective < sigma / sensitivity:
        raised = float(np.nextafter(raised, math.inf))
    return raised


class OpenDPSampler:
    """Gaussian noise drawn by OpenDP's vetted measurement, applied to the values themselves in chunks of whole rows
    by ``workers`` threads, with progress and cancellation between chunks (module docstring).

    Parameters
    ----------
    workers : int, optional
        Threads drawing chunks at once (default: every core this process may use). OpenDP's calls release the
        interpreter lock, so the threads run in parallel; the output does not depend on their number.
    cancel : CancelToken, optional
        Looked at between chunks; when set the release raises :class:`~engine.errors.CancelledError` (nothing is
        released).
    progress : callable, optional
        Receives :class:`~engine.progress.Progress` (values noised of the total) after every chunk.
    chunk_values : int, optional
        Values per OpenDP call (whole rows; default :data:`OPENDP_CHUNK_VALUES`).
    """

    name = "opendp"

    def __init__(self, *, workers: int | None = None, cancel: CancelToken | None = None,
                 progress: Callable[[Progress], None] | None = None,
                 chunk_values: int | None = None) -> None:
        self.workers = available_cores() if workers is None else check_integer("workers", workers, 1, 256)
        self.cancel = cancel
        self.progress = progress
        self.chunk_values = check_integer("chunk_values", OPENDP_CHUNK_VALUES if chunk_values is None else chunk_values,
                                          1, None)

    def add_gaussian(self, x: np.ndarray, sigma: float, *, sensitivity: float,
                     epsilon: float) -> tuple[np.ndarray, dict[str, str | float]]:
        sigma = _check_sigma(sigma)
        sens = float(sensitivity)
        arr = np.asarray(x, dtype=float)
        flat = arr.reshape(arr.shape[0], -1) if arr.ndim > 1 else arr.reshape(-1, 1)
        n, width = flat.shape
        rows_per_chunk = max(1, self.chunk_values // max(1, width))
        chunk = rows_per_chunk * width  # the chunk size the guarantee is stated for (a shorter last chunk: less)
        effective = effective_sensitivity(sens, chunk)
        raised = raised_sigma(sigma, sens, effective)  # the Gaussian mechanism checks its δ at (Δ', σ')
        last = (n - (max(n - 1, 0) // rows_per_chunk) * rows_per_chunk) * width  # the last chunk's values
        # checked for every chunk size drawn; stated for a whole chunk (the largest, whatever the data's length)
        rho = self._certified_rho(raised, sens, sorted({chunk, min(chunk, n * width), last} - {0}))
        out = np.empty_like(flat)
        self._draw(flat, out, raised, rows_per_chunk)
        dp = _dp()
        opendp_delta = float(dp.c.make_zCDP_to_approxDP(
            _measurement(chunk, raised)).map(sens).delta(float(epsilon)))
        version = opendp_version()
        details: dict[str, str | float] = {
            "implementation": "opendp",
            "opendp_version": version,
            "opendp_k": float(OPENDP_K),
            "opendp_chunk_values": float(chunk),
            "opendp_effective_sensitivity": effective,
            "opendp_rho": rho,
            "opendp_delta_at_epsilon": opendp_delta,
            "noise_sd_per_coordinate": raised,
            "mechanism_sigma": sigma,
            "note": (
                f"Noise drawn with OpenDP {version}'s vetted Gaussian measurement (make_gaussian, noise granularity "
                f"2^{OPENDP_K}) on chunks of {chunk:,} values (whole rows, cut by position: a neighbouring data set "
                f"changes one chunk, and the guarantee is one chunk's). Rounding to the 2^{OPENDP_K} grid raises "
                f"the L2 sensitivity from {sens:g} to Δ' = {effective:.10g}, for which OpenDP certifies "
                f"ρ = {rho:.6g}-zCDP (by its conversion ε = {float(epsilon):g}, δ = {opendp_delta:.3g}); σ was "
                f"raised accordingly from {sigma:.6g} to {raised:.9g} (σ'/Δ' ≥ σ/{sens:g}), so the exact analytic "
                f"(ε, δ) profile of the Gaussian at Δ' is the one stated at B."
            ),
        }
        return out.reshape(arr.shape), details

    @staticmethod
    def _certified_rho(sigma: float, sensitivity: float, sizes: list[int]) -> float:
        """OpenDP's ρ for chunks of each size, checked against (Δ + √m·2^k)²/(2σ²); the largest."""
        rho = 0.0
        for size in sizes:
            got = float(_measurement(size, sigma).map(sensitivity))
            expected = (sensitivity + math.sqrt(size) * 2.0**OPENDP_K) ** 2 / (2.0 * sigma**2)
            if not math.isclose(got, expected, rel_tol=1e-9):  # a changed OpenDP map must not pass silently
                raise RuntimeError(f"OpenDP's privacy map gave ρ = {got!r}, expected (Δ + √m·2^k)²/(2σ²) = "
                                   f"{expected!r} for chunks of {size} values")
            rho = max(rho, got)
        return rho

    def _draw(self, flat: np.ndarray, out: np.ndarray, sigma: float, rows_per_chunk: int) -> None:
        """Fill ``out`` with ``flat`` + noise, chunk by chunk, on ``self.workers`` threads."""
        starts = list(range(0, flat.shape[0], rows_per_chunk))
        total = flat.size
        lock = threading.Lock()
        state = {"next": 0, "done": 0}
        failures: list[BaseException] = []
        stop = threading.Event()

        def cancelled() -> bool:
            return stop.is_set() or (self.cancel is not None and self.cancel.cancelled)

        def work(report: bool = False) -> None:
            measurements: dict[int, object] = {}  # one measurement per chunk size, per thread
            try:
                while not cancelled():
                    with lock:
                        if state["next"] >= len(starts):
                            return
                        start = starts[state["next"]]
                        state["next"] += 1
                    block = np.array(flat[start:start + rows_per_chunk], dtype=float, order="C").ravel()  # writable
                    meas = measurements.get(block.size)
                    if meas is None:
                        meas = measurements[block.size] = _measurement(block.size, sigma)
                    noisy = meas(block)  # type: ignore[operator]  # the interpreter lock is released meanwhile
                    rows = block.size // flat.shape[1]
                    out[start:start + rows] = np.asarray(noisy, dtype=float).reshape(rows, flat.shape[1])
                    with lock:
                        state["done"] += block.size
                    if report and self.progress is not None:
                        self.progress(Progress(state["done"], total, "vetted noise (OpenDP)"))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, which raises it
                failures.append(exc)
                stop.set()

        threads = [threading.Thread(target=work, name=f"opendp-noise-{i}", daemon=True)
                   for i in range(min(self.workers, len(starts)))] if min(self.workers, len(starts)) > 1 else []
        for thread in threads:
            thread.start()
        reported = -1
        try:
            if not threads:
                work(report=True)  # one worker: this thread draws (a chunk at a time: Ctrl-C is seen between chunks)
                reported = state["done"]
            else:
                while any(t.is_alive() for t in threads):
                    threads[0].join(0.1)  # short waits: a signal handler (Ctrl-C) runs between them
                    if self.progress is not None and state["done"] != reported:
                        reported = state["done"]
                        self.progress(Progress(reported, total, "vetted noise (OpenDP)"))
                    if self.cancel is not None and self.cancel.cancelled:
                        stop.set()
        except BaseException:
            stop.set()
            raise
        finally:
            for thread in threads:
                thread.join()
        if failures:
            raise failures[0]
        if self.cancel is not None:
            self.cancel.raise_if_cancelled("the release (vetted noise)")
        if self.progress is not None and state["done"] != reported:
            self.progress(Progress(state["done"], total, "vetted noise (OpenDP)"))

    def add_laplace(self, x: np.ndarray, scale: float) -> tuple[np.ndarray, dict[str, str | float]]:
        raise InvalidParameterError(
            "the OpenDP sampler draws Gaussian noise only; a mechanism adding Laplace noise must use --sampler numpy"
        )


def opendp_gaussian_noise(shape: tuple[int, ...], sigma: float) -> np.ndarray:
    """Noise of standard deviation ``sigma`` drawn by OpenDP's Gaussian measurement (OS entropy; cannot be seeded;
    on the 2^:data:`OPENDP_K` grid).

    >>> opendp_gaussian_noise((2, 3), 1.0).shape
    (2, 3)
    """
    sigma = _check_sigma(sigma)
    size = int(np.prod(shape))
    out = _measurement(size, sigma)(np.zeros(size))
    return np.asarray(out, dtype=float).reshape(shape)


def make_sampler(name: str, rng: np.random.Generator | None, *, workers: int | None = None,
                 cancel: CancelToken | None = None,
                 progress: Callable[[Progress], None] | None = None) -> NoiseSampler:
    """The noise sampler called ``name`` (``rng`` is the numpy sampler's stream; OpenDP needs none; ``workers``,
    ``cancel`` and ``progress`` are OpenDP's: see :class:`OpenDPSampler`)."""
    chosen = check_choice("sampler", name, SAMPLERS)
    if chosen == "opendp":
        return OpenDPSampler(workers=workers, cancel=cancel, progress=progress)
    if rng is None:
        raise InvalidParameterError("the numpy sampler needs rng (a numpy.random.Generator)")
    return NumpySampler(rng)
