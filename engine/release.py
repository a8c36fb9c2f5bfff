"""A release configuration — data spec, mechanism and seed — and the one function that runs it.

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

import math
import shlex
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from engine.constraints import Constraint, Integer, check_declared
from engine.data.preparation import DataSpec, PreparedData, prepare
from engine.errors import InvalidParameterError
from engine.guarantee import Release
from engine.mechanisms import RecordMechanism, mechanism_from_dict
from engine.rng import SEEDED_WARNING
from engine.serialization import Serializable
from engine.validation import check_rng


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


def run_release(
    frame: pd.DataFrame, config: ReleaseConfig, *, rng: np.random.Generator
) -> tuple[PreparedData, Release]:
    """Prepare ``frame`` with ``config.data`` and privatize it with ``config``'s mechanism.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (only the spec's columns are read).
    config : ReleaseConfig
    rng : numpy.random.Generator
        All randomness; build it with ``engine.rng.make_rng(config.seed)``.

    Returns
    -------
    (PreparedData, Release)
        The prepared data (fingerprint, map, B in data units) and the release, whose ``value`` is on the
        prepared scale (rows of the input in the unit L2 ball), with the mechanism's guarantee.

    Raises
    ------
    DataValidationError
        The table does not fit the spec (see :func:`engine.data.preparation.table_problems`).
    EngineError
        The mechanism refuses the data (e.g. too few rows per part, memory limit of the reference path).
    """
    if not isinstance(config, ReleaseConfig):
        raise InvalidParameterError(f"config must be a ReleaseConfig; got {type(config).__name__}")
    check_rng(rng)
    mechanism = config.build_mechanism()
    prepared = prepare(frame, config.data)
    return prepared, mechanism.release(prepared.x, rng=rng)


def release_frame(prepared: PreparedData, release: Release) -> pd.DataFrame:
    """The released values as a table: one column per feature, or ``z1 … zk`` when the mechanism changes the
    dimension (the JL–Laplace release lives in k projected dimensions, not in the features)."""
    values = np.asarray(release.value, dtype=float)
    if values.shape[1] == prepared.d:
        return prepared.as_frame(values)
    return pd.DataFrame(values, columns=[f"z{i + 1}" for i in range(values.shape[1])])


def release_summary(
    prepared: PreparedData, release: Release, config: ReleaseConfig, *, seconds: float | None = None
) -> dict[str, Any]:
    """JSON-ready account of a release: guarantee, noise, preparation, data fingerprint, config and seed.

    Keys: ``mechanism``, ``guarantee`` (``headline``, ``describe`` lines, ``dict``, ``implied_dp``),
    ``noise_sd_per_coordinate`` (unbiased scale; None when the mechanism adds no noise), ``details``,
    ``seconds``, ``seeded``, ``seed``, ``warning`` (the seeded-output warning or None), ``data`` (the
    fingerprint summary: n, d, column names, hash — never values), ``preparation`` (the declared steps, the
    normalisation, the privacy note with every not-private step flagged, and internal counts and warnings) and
    ``config``.
    """
    guarantee = release.guarantee
    implied = guarantee.implied_dp()  # type: ignore[attr-defined]
    noise = release.noise_scale
    norm = config.data.normalization
    return {
        "mechanism": config.kind,
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


__all__ = ["ReleaseConfig", "cli_command", "release_summary", "run_release"]
