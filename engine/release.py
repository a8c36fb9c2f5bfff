"""The one release function, and a release configuration — data spec, mechanism and seed — with what runs it.

:func:`privatize` is the ONLY place data become a release: the scored releases of every analysis
(:func:`engine.analysis.analyse`: the Mechanisms page, every sweep cell, ``evaluate``, the recommender), the
dashboard's download and ``python -m engine privatize`` (:func:`run_release`) and every partition of the
out-of-core release (:mod:`engine.scale.out_of_core`) call it. It takes the noise sampler as an argument
(:mod:`engine.mechanisms.samplers`), refuses one the mechanism cannot use, and names the sampler that ran in the
release's guarantee notes and details.

:class:`ReleaseConfig` is the object a decision record embeds and ``python -m engine privatize --config FILE``
reads: everything needed to redo a release except the data itself. The dashboard and the command line both call
:func:`run_release`, so a release made in the dashboard can be reproduced by a data holder with one command
(:func:`cli_command`).

Example configuration file::

    {"data": {"features": ["calls_out", "sms_out"], "target": null, "roles": null,
              "normalization": {"method": "clip", "standardize": true, "lower": [], "upper": []}},
     "mechanism": {"kind": "gaussian", "b": 0.25, "epsilon": 1.0, "delta": 1e-05, "calibration": "analytic"},
     "seed": null, "dataset": null}
"""

from __future__ import annotations

import dataclasses
import math
import shlex
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np
import pandas as pd

from engine.constraints import Constraint, Integer, check_declared
from engine.data.preparation import DataSpec, PreparedData, prepare
from engine.errors import InvalidParameterError
from engine.guarantee import Release
from engine.mechanisms import RecordMechanism, mechanism_from_dict
from engine.mechanisms.base import MECHANISMS, MechanismTags
from engine.mechanisms.samplers import SAMPLERS, NoiseSampler, make_sampler, opendp_version
from engine.progress import CancelToken, ProgressCallback
from engine.rng import SEEDED_WARNING, make_rng
from engine.serialization import Serializable
from engine.validation import check_choice, check_rng


def _vetted_kinds() -> list[str]:
    return [kind for kind, cls in MECHANISMS.items() if "opendp" in cls.TAGS.samplers]


def resolve_sampler(sampler: str | None, *, seed: int | None, kind: str, tags: MechanismTags) -> str:
    """The sampler to use for a release of mechanism ``kind`` with ``tags``: the one asked for (validated), or the
    default — ``"opendp"`` without a seed when the mechanism supports it, ``"numpy"`` otherwise.

    Raises
    ------
    InvalidParameterError
        ``"opendp"`` with a seed (OpenDP draws from OS entropy and cannot be seeded), or for a mechanism whose tags
        do not list it.

    Examples
    --------
    >>> gauss = MECHANISMS["gaussian"].TAGS
    >>> resolve_sampler(None, seed=None, kind="gaussian", tags=gauss), resolve_sampler(None, seed=3, kind="gaussian", tags=gauss)
    ('opendp', 'numpy')
    """
    if sampler is None:
        return "opendp" if seed is None and "opendp" in tags.samplers else "numpy"
    chosen = check_choice("sampler", sampler, SAMPLERS)
    if chosen == "opendp" and seed is not None:
        raise InvalidParameterError(
            "sampler 'opendp' draws from the operating system's entropy and cannot be seeded; got a seed "
            f"({seed}) — drop the seed for a real release, or use --sampler numpy for a seeded simulation"
        )
    if chosen not in tags.samplers:
        vetted = ", ".join(f"--mechanism {k}" for k in _vetted_kinds()) or "none"
        raise InvalidParameterError(
            f"sampler {chosen!r} cannot express the {kind} mechanism exactly "
            f"({tags.opendp_reason or 'OpenDP has no measurement for it'}) — use a mechanism whose noise OpenDP "
            f"draws ({vetted}) for a release with vetted noise, or --sampler numpy"
        )
    return chosen


def sampler_note(sampler: str, *, kind: str, tags: MechanismTags, seeded: bool) -> str:
    """One plain sentence for every release output: which sampler drew the noise, and what follows.

    >>> sampler_note("numpy", kind="projection", tags=MECHANISMS["projection"].TAGS, seeded=False)[:22]
    'Noise drawn with numpy'
    """
    chosen = check_choice("sampler", sampler, SAMPLERS)
    if chosen == "opendp":
        return (
            f"Noise drawn with OpenDP {opendp_version()}'s vetted Gaussian sampler from the operating system's entropy."
        )
    if tags.noiseless:
        return f"The {kind} mechanism adds no noise: no sampler is involved ({tags.opendp_reason or 'no noise'})."
    if seeded:
        return "Noise drawn with numpy's floating-point sampler from a seed: a simulation — not private."
    text = "Noise drawn with numpy's floating-point sampler from the operating system's entropy (not a vetted sampler)."
    if "opendp" not in tags.samplers:
        vetted = ", ".join(f"--mechanism {k}" for k in _vetted_kinds())
        text += (
            f" OpenDP cannot express the {kind} mechanism exactly ({tags.opendp_reason or 'no OpenDP measurement'});"
            f" for a release with vetted noise use a mechanism whose noise OpenDP draws ({vetted})."
        )
    else:
        text += " For a release with vetted noise, leave out the seed and the sampler: OpenDP then draws it."
    return text


class ReleaseTarget(Protocol):
    """What :func:`privatize` releases with: a mechanism, or a partition plan of one (``engine.mechanisms.base``)."""

    @property
    def KIND(self) -> str: ...  # noqa: N802

    def tags(self) -> MechanismTags: ...

    def release(self, x: np.ndarray, *, rng: np.random.Generator | None = None,
                sampler: NoiseSampler | None = None) -> Release: ...


def privatize(target: ReleaseTarget, x: np.ndarray, *, sampler: str = "numpy",
              rng: np.random.Generator | None = None, seeded: bool = False, workers: int | None = None,
              cancel: CancelToken | None = None, progress: ProgressCallback | None = None) -> Release:
    """Release ``x`` with ``target`` (a mechanism or a partition plan), drawing its noise with ``sampler`` — THE
    release function of the engine (see the module docstring).

    Parameters
    ----------
    target : RecordMechanism or PartitionPlan
    x : ndarray
        n × d prepared rows.
    sampler : {"numpy", "opendp"}
        The noise sampler; it must be one of ``target.tags().samplers`` (:func:`resolve_sampler` picks the default
        for a configuration and a seed).
    rng : numpy.random.Generator, optional
        The release's other randomness (random projections, partitions) and the numpy sampler's stream; required
        unless the mechanism draws everything from OpenDP.
    seeded : bool
        Whether ``rng`` comes from a seed (the note then says: a simulation, not private).
    workers : int, optional
        Threads OpenDP's sampler draws on (default: every core this process may use; the output's distribution
        does not depend on it). The numpy sampler draws on one.
    cancel : CancelToken, optional
        Looked at between the vetted sampler's chunks (a fraction of a second each): a cancel raises
        :class:`~engine.errors.CancelledError` and nothing is released.
    progress : callable, optional
        Receives :class:`~engine.progress.Progress` (values noised) after every chunk of the vetted sampler.

    Returns
    -------
    Release
        With the sampler's note appended to the guarantee's notes and ``details["sampler"]``.

    Raises
    ------
    InvalidParameterError
        A sampler the mechanism cannot use (or OpenDP with a seed), or no ``rng`` where one is needed.
    """
    tags = target.tags()
    chosen = resolve_sampler(sampler, seed=None, kind=target.KIND, tags=tags)
    if seeded and chosen == "opendp":
        raise InvalidParameterError(
            "sampler 'opendp' draws from the operating system's entropy and cannot be seeded — drop the seed for a "
            "real release, or use the numpy sampler for a seeded simulation"
        )
    if rng is None and chosen == "numpy":
        raise InvalidParameterError("the numpy sampler needs rng (a numpy.random.Generator)")
    release = target.release(x, rng=rng, sampler=make_sampler(chosen, rng, workers=workers, cancel=cancel,
                                                             progress=progress))
    note = sampler_note(chosen, kind=target.KIND, tags=tags, seeded=seeded)
    guarantee = release.guarantee
    if dataclasses.is_dataclass(guarantee) and hasattr(guarantee, "notes") and note not in guarantee.notes:
        guarantee = dataclasses.replace(guarantee, notes=(*guarantee.notes, note))
    return Release(value=release.value, guarantee=guarantee, details=dict(release.details, sampler=chosen))


@dataclass(frozen=True)
class ReleaseConfig(Serializable):
    """What to release and how: the data spec, the mechanism (as its ``to_dict()``) and the seed.

    Parameters
    ----------
    data : DataSpec
        Feature columns, target, program roles and normalisation.
    mechanism : dict
        A mechanism configuration's ``to_dict()`` (with its ``"kind"``); a mechanism object is accepted and
        converted. It is validated on construction by rebuilding it with
        :func:`~engine.mechanisms.mechanism_from_dict` and stored in that canonical form (defaults filled in).
    seed : int or None
        None (default) draws fresh randomness from the operating system — the only choice for a real release.
        A seed makes the output reproducible and therefore NOT private (:data:`engine.rng.SEEDED_WARNING`).
    dataset : str or None
        Name of a built-in demo dataset the configuration was made on, if any (the command line then needs no
        ``--input``); None for the user's own data.

    Examples
    --------
    >>> from engine.data.preparation import DataSpec
    >>> config = ReleaseConfig(DataSpec(("a", "b")), {"kind": "gaussian", "b": 0.5, "epsilon": 1.0, "delta": 1e-5})
    >>> config.build_mechanism().KIND, config.mechanism["calibration"]
    ('gaussian', 'analytic')
    >>> ReleaseConfig.from_json(config.to_json()) == config
    True
    """

    data: DataSpec
    mechanism: dict[str, Any]
    seed: int | None = None
    dataset: str | None = None

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {"seed": Integer(0, optional=True)}

    def __post_init__(self) -> None:
        if isinstance(self.data, dict):
            object.__setattr__(self, "data", DataSpec.from_dict(self.data))
        if not isinstance(self.data, DataSpec):
            raise InvalidParameterError(f"data must be a DataSpec; got {type(self.data).__name__}")
        mechanism = self.mechanism
        if isinstance(mechanism, RecordMechanism):
            mechanism = mechanism.to_dict()
        object.__setattr__(self, "mechanism", mechanism_from_dict(mechanism).to_dict())
        check_declared(self)
        if self.dataset is not None and (not isinstance(self.dataset, str) or not self.dataset):
            raise InvalidParameterError(f"dataset must be a demo dataset name or null; got {self.dataset!r}")

    @classmethod
    def of(
        cls, data: DataSpec, mechanism: RecordMechanism, *, seed: int | None = None, dataset: str | None = None
    ) -> ReleaseConfig:
        """Build from a mechanism object (the dashboard's usual path)."""
        return cls(data=data, mechanism=mechanism.to_dict(), seed=seed, dataset=dataset)

    @property
    def kind(self) -> str:
        """The mechanism's command-line name (``projection``, ``gaussian``, ``mondrian``, …)."""
        return str(self.mechanism["kind"])

    @property
    def seeded(self) -> bool:
        """True when the output is reproducible from the seed (simulations only, never a real release)."""
        return self.seed is not None

    def build_mechanism(self) -> RecordMechanism:
        """The mechanism configuration object."""
        return mechanism_from_dict(self.mechanism)


def release_sampler(config: ReleaseConfig, sampler: str | None = None) -> str:
    """The sampler a release of ``config`` uses: ``sampler`` (validated) or the default — OpenDP's vetted sampler for
    an unseeded release of a mechanism that supports it, numpy otherwise (:func:`resolve_sampler`)."""
    mechanism = config.build_mechanism()
    return resolve_sampler(sampler, seed=config.seed, kind=mechanism.KIND, tags=mechanism.tags())


def run_release(
    frame: pd.DataFrame, config: ReleaseConfig, *, rng: np.random.Generator | None = None,
    sampler: str | None = None, cancel: CancelToken | None = None, progress: ProgressCallback | None = None,
) -> tuple[PreparedData, Release]:
    """Prepare ``frame`` with ``config.data`` and privatize it with ``config``'s mechanism (:func:`privatize`).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (only the spec's columns are read).
    config : ReleaseConfig
    rng : numpy.random.Generator, optional
        The release's randomness; default ``engine.rng.make_rng(config.seed)`` (OS entropy without a seed).
    sampler : {"numpy", "opendp"}, optional
        Default :func:`release_sampler` (OpenDP for an unseeded Gaussian release, numpy otherwise).
    cancel, progress : optional
        As :func:`privatize`'s (the vetted sampler's chunks).

    Returns
    -------
    (PreparedData, Release)
        The prepared data (fingerprint, map, B in data units) and the release, whose ``value`` is on the
        prepared scale (rows of the input in the unit L2 ball), with the mechanism's guarantee and
        ``details["sampler"]``.

    Raises
    ------
    DataValidationError
        The table does not fit the spec (see :func:`engine.data.preparation.table_problems`).
    EngineError
        The mechanism refuses the data (e.g. too few rows per part, memory limit of the reference path).
    """
    if not isinstance(config, ReleaseConfig):
        raise InvalidParameterError(f"config must be a ReleaseConfig; got {type(config).__name__}")
    if rng is not None:
        check_rng(rng)
    release_sampler(config, sampler)  # refused before the data are prepared
    prepared = prepare(frame, config.data)
    return prepared, release_prepared(prepared, config, rng=rng, sampler=sampler, cancel=cancel, progress=progress)


def release_prepared(
    prepared: PreparedData, config: ReleaseConfig, *, rng: np.random.Generator | None = None,
    sampler: str | None = None, cancel: CancelToken | None = None, progress: ProgressCallback | None = None,
) -> Release:
    """The release of data already prepared with ``config.data`` (:func:`engine.data.preparation.prepare`, or
    :func:`~engine.data.preparation.prepare_parquet` for a Parquet table read column by column): what
    :func:`run_release` does after preparing, with the same defaults, so the same seed gives the same values.

    Raises
    ------
    InvalidParameterError
        ``prepared`` was made with another data spec, or the sampler is refused (:func:`release_sampler`).
    """
    if not isinstance(config, ReleaseConfig):
        raise InvalidParameterError(f"config must be a ReleaseConfig; got {type(config).__name__}")
    if prepared.spec != config.data:
        raise InvalidParameterError("the data were prepared with another data spec than the configuration's — "
                                    "prepare them with config.data")
    if rng is not None:
        check_rng(rng)
    chosen = release_sampler(config, sampler)
    stream = rng if rng is not None else make_rng(config.seed)
    return privatize(config.build_mechanism(), prepared.x, sampler=chosen, rng=stream, seeded=config.seeded,
                     cancel=cancel, progress=progress)


#: Peak resident memory of an in-memory release (``privatize`` without ``--engine dask``: read, prepare, release,
#: write), in multiples of the table's values as float64 (rows × columns × 8 bytes), when the table is read whole
#: (CSV, or Parquet whose columns need the general preparation). Measured on 2,000,000 × 15 Parquet in and out with
#: numpy noise (``benchmarks/bench_issue33.py``): 4.9 (6.5 before issue 33 §3's column-by-column path); rounded up.
IN_MEMORY_PEAK_FACTOR = 6.0
#: The same for a Parquet table of plain number columns prepared column by column
#: (:func:`engine.data.preparation.prepare_parquet`): the prepared matrix and the release's output, each once, plus
#: one column while it is read. Measured on the same table: 2.52× above the interpreter and libraries (see
#: docs/performance.md, "Release at scale"); rounded up.
BY_COLUMN_PEAK_FACTOR = 2.6
#: What the interpreter and the libraries take before any data (bytes).
_BASE_BYTES = 300 * 2**20


def in_memory_release_bytes(rows: int, columns: int, *, by_column: bool = False) -> int:
    """Bytes an in-memory release of a ``rows`` × ``columns`` numeric table needs at its peak (an estimate:
    :data:`IN_MEMORY_PEAK_FACTOR`, or :data:`BY_COLUMN_PEAK_FACTOR` for a Parquet table prepared column by column).

    >>> round(in_memory_release_bytes(10_000_000, 15) / 1e9, 1)
    7.5
    >>> round(in_memory_release_bytes(60_000_000, 15, by_column=True) / 1e9, 1)
    19.0
    """
    factor = BY_COLUMN_PEAK_FACTOR if by_column else IN_MEMORY_PEAK_FACTOR
    return int(factor * rows * columns * 8 + _BASE_BYTES)


def in_memory_row_limit(columns: int, available: int, *, by_column: bool = False) -> int:
    """The most rows of ``columns`` columns an in-memory release fits in ``available`` bytes: beyond it, release
    out of core (``--engine dask``).

    >>> in_memory_row_limit(15, 24 * 2**30, by_column=True)  # a 24 GiB machine, Parquet of plain numbers
    81587278
    >>> in_memory_row_limit(15, 24 * 2**30)  # the same table read whole (CSV)
    35354487
    """
    factor = BY_COLUMN_PEAK_FACTOR if by_column else IN_MEMORY_PEAK_FACTOR
    return max(0, int((available - _BASE_BYTES) // (factor * max(1, columns) * 8)))


def check_in_memory_fits(rows: int, columns: int, available: int, *, by_column: bool = False) -> None:
    """Refuse, before reading it, a table whose in-memory release needs more than ``available`` bytes, saying up to
    how many rows this machine releases in memory and naming the out-of-core release instead.

    Raises
    ------
    InvalidParameterError
        With the table's size, the estimate, what is available, the row limit and ``--engine dask``.

    Examples
    --------
    >>> check_in_memory_fits(1_000, 15, 2**30)
    >>> check_in_memory_fits(100_000_000, 15, 24 * 2**30, by_column=True)
    Traceback (most recent call last):
    ...
    engine.errors.InvalidParameterError: the table (100,000,000 rows × 15 columns) needs about 32 GB of memory for an in-memory release and 26 GB is available: this machine releases up to about 81,587,278 rows of 15 columns in memory — release it out of core with --engine dask (partition by partition, on this machine's cores or a cluster)
    """
    need = in_memory_release_bytes(rows, columns, by_column=by_column)
    if need > available:
        limit = in_memory_row_limit(columns, available, by_column=by_column)
        raise InvalidParameterError(
            f"the table ({rows:,} rows × {columns:,} columns) needs about {need / 1e9:.0f} GB of memory for an "
            f"in-memory release and {available / 1e9:.0f} GB is available: this machine releases up to about "
            f"{limit:,} rows of {columns:,} columns in memory — release it out of core with --engine dask "
            "(partition by partition, on this machine's cores or a cluster)"
        )


def release_frame(prepared: PreparedData, release: Release) -> pd.DataFrame:
    """The released values as a table: one column per feature, or ``z1 … zk`` when the mechanism changes the
    dimension (the JL–Laplace release lives in k projected dimensions, not in the features). The table holds the
    release's array itself (not a copy)."""
    values = np.asarray(release.value, dtype=float)
    if values.shape[1] == prepared.d:
        names = list(prepared.feature_names)
    else:
        names = [f"z{i + 1}" for i in range(values.shape[1])]
    return pd.DataFrame(values, columns=names, copy=False)  # the release's own array: no second copy (issue 33 §3)


def release_summary(
    prepared: PreparedData, release: Release, config: ReleaseConfig, *, seconds: float | None = None
) -> dict[str, Any]:
    """JSON-ready account of a release: guarantee, noise, preparation, data fingerprint, config and seed.

    Keys: ``mechanism``, ``sampler`` (``name`` and ``note``: which sampler drew the noise), ``guarantee`` (``headline``, ``describe`` lines, ``dict``, ``implied_dp``),
    ``noise_sd_per_coordinate`` (unbiased scale; None when the mechanism adds no noise), ``details``,
    ``seconds``, ``seeded``, ``seed``, ``warning`` (the seeded-output warning or None), ``data`` (the
    fingerprint summary: n, d, column names, hash — never values), ``preparation`` (the declared steps, the
    normalisation, the privacy note with every not-private step flagged, and internal counts and warnings) and
    ``config``.
    """
    guarantee = release.guarantee
    implied = guarantee.implied_dp()
    noise = release.noise_scale
    norm = config.data.normalization
    mechanism = config.build_mechanism()
    sampler = str(release.details.get("sampler", "numpy"))
    return {
        "mechanism": config.kind,
        "sampler": {
            "name": sampler,
            "note": sampler_note(sampler, kind=mechanism.KIND, tags=mechanism.tags(), seeded=config.seeded),
        },
        "guarantee": {
            "headline": guarantee.headline(),
            "describe": list(guarantee.describe()),
            "dict": guarantee.to_dict(),
            "implied_dp": implied.to_dict() if implied is not guarantee else None,
        },
        "noise_sd_per_coordinate": None if math.isnan(noise) else noise,
        "details": dict(release.details),
        "seconds": seconds,
        "seeded": config.seeded,
        "seed": config.seed,
        "warning": SEEDED_WARNING if config.seeded else None,
        "data": prepared.fingerprint_summary(),
        "preparation": {
            "steps": list(prepared.preparation_steps()),
            "description": norm.describe(),
            "privacy_note": prepared.privacy_note(),
            # Exact counts computed from the data: for the data holder's own log, NOT covered by the guarantee.
            "internal_not_private": {
                "clipped_rows": prepared.clipped_rows,
                "clipped_values": prepared.clipped_values,
                "rows_in_table": prepared.rows_in_table,
                "rows_dropped": prepared.rows_dropped,
                "dropped_rows_by_column": dict(prepared.dropped_rows),
                "filled_cells_by_column": dict(prepared.filled_cells),
                "warnings": list(prepared.warnings),
                "note": "exact counts from the confidential data: keep internal, do not publish with the release",
            },
            "output_units": (
                "prepared scale: each input row was mapped into the unit L2 ball as described; the released "
                "values are not in the data's original units"
            ),
        },
        "config": config.to_dict(),
    }


def cli_command(
    config_file: str = "release-config.json", *, input_file: str | None = None, output_file: str = "private.csv"
) -> str:
    """The command a data holder runs to make the release described by a saved :class:`ReleaseConfig`.

    >>> cli_command("decision.json", input_file="my data.csv")
    "python -m engine privatize --config decision.json --input 'my data.csv' --output private.csv"
    """
    parts = ["python", "-m", "engine", "privatize", "--config", config_file]
    if input_file is not None:
        parts += ["--input", input_file]
    parts += ["--output", output_file]
    return " ".join(shlex.quote(p) for p in parts)


__all__ = ["BY_COLUMN_PEAK_FACTOR", "IN_MEMORY_PEAK_FACTOR", "ReleaseConfig", "ReleaseTarget", "check_in_memory_fits",
           "cli_command", "in_memory_release_bytes", "in_memory_row_limit", "privatize", "release_frame",
           "release_prepared", "release_sampler", "release_summary", "resolve_sampler", "run_release", "sampler_note"]
