"""The interface every record-level mechanism implements, and the registry the CLI, sweeps and UI use.

A mechanism is a frozen, validated, serialisable configuration (``Serializable`` dataclass) with

* ``KIND``: its command-line name (``projection``, ``gaussian``, ``mondrian``, ...),
* ``LABEL``: a plain-language name for the UI,
* ``guarantee()``: the :class:`~engine.guarantee.Guarantee` it gives, computable without data,
* ``release(x, *, rng)``: privatize an n × d matrix whose rows lie in the unit L2 ball, returning a
  :class:`~engine.guarantee.Release`.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import numpy as np

from engine.errors import InvalidParameterError
from engine.guarantee import Guarantee, Release
from engine.serialization import Serializable


class RecordMechanism(Serializable):
    """Base class of record-level mechanisms (mixin for frozen dataclasses)."""

    KIND: ClassVar[str] = ""
    LABEL: ClassVar[str] = ""

    @classmethod
    def from_budget(cls, b: float, epsilon: float, delta: float, **options: Any) -> RecordMechanism:
        """The mechanism spending a total (B, ε, δ) budget; mechanisms without a (B, ε, δ) guarantee refuse."""
        raise InvalidParameterError(
            f"{cls.LABEL or cls.__name__} is not configured from a privacy budget (B, ε, δ) — it gives no such "
            "guarantee; choose a differentially private mechanism"
        )

    def guarantee(self) -> Guarantee:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must define guarantee()")

    def release(self, x: np.ndarray, *, rng: np.random.Generator) -> Release:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must define release()")


M = TypeVar("M", bound=type[RecordMechanism])

#: KIND → class. Filled by :func:`register` when ``engine.mechanisms`` is imported.
MECHANISMS: dict[str, type[RecordMechanism]] = {}


def register(cls: M) -> M:
    """Class decorator adding a mechanism to :data:`MECHANISMS` under its ``KIND``."""
    if not cls.KIND or cls.KIND in MECHANISMS:
        raise TypeError(f"mechanism {cls.__name__} needs a unique KIND; got {cls.KIND!r}")
    MECHANISMS[cls.KIND] = cls
    return cls


def mechanism_from_dict(data: Any) -> RecordMechanism:
    """Rebuild a mechanism configuration from its ``to_dict()`` output (the ``kind`` key picks the class)."""
    if not isinstance(data, dict) or "kind" not in data:
        raise InvalidParameterError("a mechanism configuration must be a JSON object with a 'kind' field")
    kind = data["kind"]
    if kind not in MECHANISMS:
        raise InvalidParameterError(f"mechanism must be one of {sorted(MECHANISMS)}; got {kind!r}")
    from engine.limits import check_privacy_parameters

    check_privacy_parameters(data, owner=f"the {kind} mechanism")  # before building: no overflow on the way
    return MECHANISMS[kind].from_dict(data)
