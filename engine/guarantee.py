"""What a record-level release protects: the :class:`Guarantee` every mechanism states, and :class:`Release`.

A guarantee is computable without data (like OpenDP's privacy map), so the dashboard and sweeps can show the
cost of a configuration before anything runs. Its fields follow the building blocks of a DP specification
(``shared/spec/004-privacy-framework.md``): the protection unit and neighbouring relation (one row of the
prepared data, changed by at most ``b`` in L2 norm — or one entry), the standard (approximate (ε, δ)
indistinguishability) and the intensity (ε, δ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from engine.accounting.tdp import steps, tdp_to_dp
from engine.constraints import Choice, Constraint, Real, check_declared
from engine.serialization import Serializable

Relation = Literal["row", "element"]

RELATION_TEXT = {
    "row": "substitution of one record (row) of the prepared data; rows lie in the unit L2 ball",
    "element": "change of one entry of the data matrix by at most a stated amount (see the notes)",
}


@dataclass(frozen=True)
class Guarantee(Serializable):
    r"""(B, ε, δ)-targeted DP for record substitution; B = 2 is ordinary (ε, δ)-DP.

    Parameters
    ----------
    epsilon, delta : float
        Intensity of protection. ``delta`` may be 0 (pure DP) and is at most 1 (1 means vacuous).
    b : float
        Target distance B in (0, 2]: two records whose prepared rows are within L2 distance B cannot be told
        apart beyond (ε, δ). Only meaningful for ``relation="row"``.
    relation : {"row", "element"}
        The neighbouring relation. ``"element"`` is the element-wise notion of the JL–Laplace paper.
    mechanism : str
        Name of the mechanism that gives the guarantee.
    notes : tuple of str
        Caveats a reviewer must read (e.g. "steps 4–5 buy nothing at full rank").
    """

    KIND = "guarantee"
    DERIVED_KEYS = ("vacuous", "vacuous_reason")

    epsilon: float
    delta: float
    b: float = 2.0
    relation: Relation = "row"
    mechanism: str = ""
    notes: tuple[str, ...] = field(default=())

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "epsilon": Real(0, None, closed="neither"),
        "delta": Real(0, 1, closed="both"),
        "b": Real(0, 2, closed="right"),
        "relation": Choice(tuple(RELATION_TEXT)),
    }

    def __post_init__(self) -> None:
        check_declared(self)

    @property
    def is_classic_dp(self) -> bool:
        """True when the guarantee protects every record substitution (B = 2)."""
        return self.relation == "row" and steps(2.0, self.b) <= 1

    @property
    def vacuous_reason(self) -> str | None:
        """Why the statement guarantees nothing, or ``None`` when it guarantees something.

        Vacuous when δ ≥ 1 (every mechanism is (ε, 1)-DP), or when ε is so large that the best test's total error
        allowed by (ε, δ), 2(1 − δ)/(1 + e^ε), is below 1e-300 (ε ≳ 690): the two inputs may then be told apart
        with certainty for every practical purpose.
        """
        if self.delta >= 1.0:
            return "δ ≥ 1: every mechanism satisfies this, so it guarantees nothing"
        if self.epsilon > 690.0:
            return (
                f"ε = {self.epsilon:.6g}: e^ε is so large that the two inputs may be told apart with certainty "
                "for every practical purpose"
            )
        return None

    @property
    def vacuous(self) -> bool:
        """True when the statement guarantees nothing (δ ≥ 1 or ε > 690; see :attr:`vacuous_reason`)."""
        return self.vacuous_reason is not None

    def implied_dp(self) -> Guarantee:
        """Classic (ε', δ')-DP implied by the switch lemma (s = ⌈2/B⌉)."""
        if self.relation != "row" or self.is_classic_dp:
            return self
        eps, dlt = tdp_to_dp(self.epsilon, self.delta, self.b)
        return Guarantee(
            epsilon=eps,
            delta=dlt,
            b=2.0,
            relation="row",
            mechanism=self.mechanism,
            notes=(f"implied by the switch lemma from ({self.b:g}, {self.epsilon:g}, {self.delta:.3g})-TDP",),
        )

    def loss_at_distance(self, distance: float) -> tuple[float, float]:
        """(ε, δ) protecting a record against one at L2 distance ``distance`` (switch lemma)."""
        from engine.accounting.tdp import switch_loss

        return switch_loss(self.epsilon, self.delta, self.b, distance)

    def headline(self) -> str:
        """One line: the standard, its parameters and the unit — prefixed "VACUOUS" when it guarantees nothing.

        >>> Guarantee(31.9992, 1.0).headline()
        'VACUOUS — guarantees nothing: (ε = 31.9992, δ = 1)-DP for one record (classic DP, B = 2)'
        """
        text = self._statement()
        return f"VACUOUS — guarantees nothing: {text}" if self.vacuous else text

    def _statement(self) -> str:
        if self.relation == "element":
            return f"(ε = {self.epsilon:.6g}, δ = {self.delta:.3g})-DP for a bounded change of one entry"
        if self.is_classic_dp:
            return f"(ε = {self.epsilon:.6g}, δ = {self.delta:.3g})-DP for one record (classic DP, B = 2)"
        return f"(B = {self.b:.6g}, ε = {self.epsilon:.6g}, δ = {self.delta:.3g})-targeted DP for one record"

    def describe(self) -> list[str]:
        """Plain-language statement, one sentence a line, for the UI, the CLI and the decision record."""
        lines = [self.headline() + (f" — by {self.mechanism}" if self.mechanism else "") + "."]
        lines.append(f"Neighbouring relation: {RELATION_TEXT[self.relation]}.")
        if self.relation == "row" and not self.is_classic_dp:
            dp = self.implied_dp()
            lines.append(
                f"Records whose prepared rows differ by less than B = {self.b:g} cannot be told apart beyond "
                f"(ε, δ); records further apart are protected less: any two records at most "
                f"(ε' = {dp.epsilon:.4g}, δ' = {dp.delta:.3g}) apart (switch lemma, s = {steps(2.0, self.b)})."
                + (
                    f" That implied classic-DP statement is VACUOUS ({dp.vacuous_reason}): nothing is guaranteed "
                    f"for two records more than B = {self.b:g} apart."
                    if dp.vacuous and not self.vacuous
                    else ""
                )
            )
        if self.vacuous:
            lines.append(f"This statement is VACUOUS — it guarantees nothing ({self.vacuous_reason}).")
        lines.extend(self.notes)
        return lines


@runtime_checkable
class GuaranteeStatement(Protocol):
    """What every release states about its protection: :class:`Guarantee` for DP-style mechanisms, or a
    non-DP statement such as ``engine.mechanisms.mondrian.KAnonymityGuarantee`` (k-anonymity is not DP: its
    ``epsilon`` is ∞ and its ``delta`` 1). Both are frozen dataclasses with ``notes``."""

    @property
    def epsilon(self) -> float: ...

    @property
    def delta(self) -> float: ...

    @property
    def b(self) -> float: ...

    @property
    def relation(self) -> str: ...

    @property
    def notes(self) -> tuple[str, ...]: ...

    @property
    def is_classic_dp(self) -> bool: ...

    @property
    def vacuous(self) -> bool: ...

    def implied_dp(self) -> GuaranteeStatement: ...

    def loss_at_distance(self, distance: float) -> tuple[float, float]: ...

    def headline(self) -> str: ...

    def describe(self) -> list[str]: ...

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Release:
    """Output of a record-level mechanism together with its guarantee.

    ``details`` holds the numbers a reviewer checks (noise standard deviations, budget split, implementation);
    values are floats, ints or strings so that they serialise.
    """

    value: np.ndarray
    guarantee: GuaranteeStatement
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        arr = np.asarray(self.value)
        if arr.ndim != 2:
            raise ValueError("a release value must be a 2-D array")  # a programming error, not user input
        if not all(isinstance(v, (str, int, float, bool)) or v is None for v in self.details.values()):
            raise ValueError("release details must be plain numbers or strings")

    @property
    def noise_scale(self) -> float:
        """Per-coordinate standard deviation of the added noise on the unbiased scale, if the mechanism reports it."""
        value = self.details.get("noise_sd_per_coordinate", math.nan)
        return float(value) if value is not None else math.nan
