r"""Record mechanisms applied partition by partition: the modes, and what every mode asks of a mechanism.

Two modes (:data:`MODES`); the release states which one ran. What a mechanism supports is its tags'
``partition_modes``; the pieces drawn once on the driver and what each partition runs are the mechanism's own
:meth:`~engine.mechanisms.base.RecordMechanism.partition_plan` (its module is the one home of its algorithm), and
every partition releases its rows through the one release function, :func:`engine.release.privatize`, with the
sampler the release asked for.

``global`` (default) — ONE release of the whole table whose output distribution is exactly that of the in-memory
  release: a mechanism whose rows get independent noise shares nothing (the Gaussian mechanism); the private
  projection draws R once, privatizes the covariance of the WHOLE table (computed by a reduction over the
  partitions) once and broadcasts its operators; JL + Laplace draws its secret P once and broadcasts it.

``partitioned`` — the targeted-DP paper's partitioned setup (Nigeria: m disjoint parts): every partition is a
  disjoint part and runs the whole mechanism on its own rows with its own randomness. Each record is in exactly
  one part, so parallel composition (Lemma 3) gives the same guarantee; the parts here are the input's row ranges
  (fixed before the data are seen), not a random split.

A mechanism refuses, in one line saying why, what it cannot do partition by partition
(:meth:`~engine.mechanisms.base.RecordMechanism.partition_refusal`): e.g. Mondrian k-anonymity (its median splits
need the whole table).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from engine.errors import InvalidParameterError

if TYPE_CHECKING:  # annotations only: `privatize --help` reads MODES without importing the mechanisms
    from engine.guarantee import GuaranteeStatement
    from engine.mechanisms import RecordMechanism

#: Execution modes of the out-of-core release → what the guarantee says about them.
MODES: dict[str, str] = {
    "global": (
        "one global release: the shared pieces (the mechanism's random projection, privatized covariance or noise "
        "operators, if any) were computed once and broadcast, and every partition drew its own noise — the "
        "output has exactly the distribution of the in-memory release"
    ),
    "partitioned": (
        "partitioned mode of the targeted-DP paper: the rows were split into {m} disjoint parts (the input's row "
        "ranges, fixed before the data were seen) and the mechanism ran on each part with its own randomness; each "
        "record is in exactly one part, so parallel composition (Lemma 3) keeps the same guarantee"
    ),
}


def check_mode(mode: str) -> str:
    """``mode`` when it is one of :data:`MODES`."""
    if mode not in MODES:
        raise InvalidParameterError(f"--dask-mode must be one of {', '.join(MODES)}; got {mode!r}")
    return mode


def check_supported(mechanism: RecordMechanism, mode: str) -> tuple[str, str | None]:
    """The mode that runs for ``mode`` and a note when it differs; refuses, in one line saying why, what cannot run
    partition by partition."""
    return mechanism.partition_mode(check_mode(mode))


def stated_guarantee(guarantee: GuaranteeStatement, mode: str, parts: int) -> GuaranteeStatement:
    """``guarantee`` with one more note saying which out-of-core mode ran."""
    note = "Out-of-core release (Dask): " + MODES[mode].format(m=parts) + "."
    notes = tuple(getattr(guarantee, "notes", ()))
    return dataclasses.replace(guarantee, notes=(*notes, note))  # type: ignore[type-var]


__all__ = ["MODES", "check_mode", "check_supported", "stated_guarantee"]
