"""Error types of the engine.

Every error the engine raises on purpose is an :class:`EngineError`. Its ``str()`` is written for a program
designer and is shown verbatim by the dashboard and by ``python -m engine``: it names the problem, the allowed
values, the value received and, where useful, the next step. Anything that is not an ``EngineError`` is a bug.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class. ``str(err)`` is shown verbatim in the UI and the CLI."""


class InvalidParameterError(EngineError, ValueError):
    """A parameter is of the wrong type or outside its allowed range."""


class DataValidationError(EngineError, ValueError):
    """The user's data cannot be used as it is (missing column, NaN, too few rows, ...).

    ``column`` and ``row`` (0-based row position in the uploaded table) say where, when known.
    """

    def __init__(self, message: str, *, column: str | None = None, row: int | None = None) -> None:
        super().__init__(message)
        self.column = column
        self.row = row


class InsufficientDataError(DataValidationError):
    """Too few rows (or columns) for the requested computation."""


class InfeasibleTargetError(EngineError):
    """Theorem 1 (or another necessary condition) rules the requested target out."""


class ResourceLimitError(EngineError):
    """The computation would exceed a memory or size limit; the message says the limit and the way around it."""


class CancelledError(EngineError):
    """A long computation (sweep, attack) was cancelled by the user."""
