"""The contract every record-level mechanism keeps, its capability tags, and the registry everything is derived from.

A mechanism is a frozen, validated, serialisable configuration (``Serializable`` dataclass) registered under its
``KIND`` (:func:`register`). The registry :data:`MECHANISMS` and each class's :class:`MechanismTags` are the ONLY
place the rest of the Studio learns what mechanisms exist and what each can do: the sweeps, the recommender, the
honest comparison, the command line, the out-of-core release, the dashboard's forms and the contract tests derive
their lists from them, and never branch on a mechanism's name (``kind == …``) or class (``isinstance``) outside the
mechanism's own module. A new mechanism is one module that subclasses :class:`RecordMechanism` and registers.

The contract (what each method answers; the defaults below are the honest answer for a mechanism that does not
offer the ability, and its tags say so):

* ``KIND`` (command-line name), ``LABEL`` (plain-language name), ``TAGS`` (:class:`MechanismTags`, the class's
  abilities; :meth:`RecordMechanism.tags` refines them for one configuration);
* :meth:`~RecordMechanism.guarantee` — the :class:`~engine.guarantee.Guarantee` it gives, computable without data;
* :meth:`~RecordMechanism.release` — privatize an n × d matrix, drawing noise from a sampler
  (:mod:`engine.mechanisms.samplers`); called through the one release function, :func:`engine.release.privatize`;
* :meth:`~RecordMechanism.from_budget` — the configuration spending a total (B, ε, δ) (``tags.budgeted``);
* :meth:`~RecordMechanism.exact_tradeoff`, :meth:`~RecordMechanism.distance_statements`,
  :meth:`~RecordMechanism.expected_loss` — what the distinguishing attack needs (:mod:`engine.attacks.distinguishing`);
* :meth:`~RecordMechanism.output_dimension` — columns of the release (``tags.projects``: not the features);
* :meth:`~RecordMechanism.partition_plan` — the pieces drawn once on the driver of an out-of-core release, and the
  plan every partition runs (``tags.partition_modes``);
* :meth:`~RecordMechanism.report` — the figures a reviewer reads beside the guarantee (dashboard, decision record);
* :meth:`~RecordMechanism.examples` — configurations the contract tests run;
* ``FORM`` and :meth:`~RecordMechanism.from_form` — how the dashboard's form shows and reads its fields; ``FLAGS``
  — command-line flags that name a field differently.

The capability tags follow scikit-learn's estimator tags (``sklearn/utils/_tags.py``): a frozen dataclass of
plain values with defaults, declared on the class and refined per instance.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from engine.errors import InvalidParameterError
from engine.guarantee import GuaranteeStatement, Release
from engine.serialization import Serializable

if TYPE_CHECKING:
    from engine.accounting.budget import BudgetSplit
    from engine.mechanisms.samplers import NoiseSampler


@dataclass(frozen=True)
class MechanismTags:
    """What a mechanism can do — the capabilities every list of mechanisms is derived from.

    Parameters
    ----------
    budgeted : bool
        :meth:`RecordMechanism.from_budget` configures it from a total (B, ε, δ): it can be swept, searched by the
        recommender and compared at the same guarantee.
    needs_d : bool
        ``from_budget`` and the configuration need ``d``, the number of feature columns.
    sweep_options : tuple of str
        Fields of :class:`engine.sweeps.SweepConfig` passed to ``from_budget`` as options (e.g. ``k``).
    sweep_defaults : tuple of (str, value)
        Defaults of those :class:`~engine.sweeps.SweepConfig` fields for this mechanism's presets.
    preselected : bool
        Chosen by default where several mechanisms are compared over a grid (Tradeoffs, the recommender).
    projects : bool
        The release lives in other coordinates than the features (``output_dimension``): the attacks run on the
        known-record adversary's reconstruction, and the secure-release paper's clustering program is scored.
    unit_ball : bool
        The release assumes rows in the unit L2 ball (row-level neighbouring relation) and refuses rows outside it.
    noiseless : bool
        Adds no noise (a deterministic function of the data).
    differentially_private : bool
        Gives a differential-privacy-type (ε, δ) guarantee (k-anonymity does not).
    samplers : tuple of str
        Noise samplers it can draw from (:data:`engine.mechanisms.samplers.SAMPLERS`).
    opendp_reason : str
        Why OpenDP's vetted sampler cannot express it (said in every numpy-sampled release's note).
    partition_modes : tuple of str
        Modes of the out-of-core release it supports (:data:`engine.scale.partition_mechanisms.MODES`); empty: not
        partitionable.
    exact_tradeoff : bool
        :meth:`RecordMechanism.exact_tradeoff` gives its exact hypothesis-testing trade-off (else a bound from the
        guarantee).
    recovers_distances : bool
        :meth:`RecordMechanism.distance_recovery` estimates distances between records from the release.
    """

    budgeted: bool = False
    needs_d: bool = False
    sweep_options: tuple[str, ...] = ()
    sweep_defaults: tuple[tuple[str, Any], ...] = ()
    preselected: bool = False
    projects: bool = False
    unit_ball: bool = True
    noiseless: bool = False
    differentially_private: bool = True
    samplers: tuple[str, ...] = ("numpy",)
    opendp_reason: str = ""
    partition_modes: tuple[str, ...] = ()
    exact_tradeoff: bool = False
    recovers_distances: bool = False


@dataclass(frozen=True)
class FormField:
    """How the dashboard's form shows one field of a mechanism (the widget follows the field's declared constraint).

    ``zero_is_none``: an optional field shown as a number where 0 means "not set". ``options`` labels the choices of
    a ``Choice`` field. ``low``/``high`` override the constraint's bounds for the widget; ``high_is_d``: at most the
    data's number of features.
    """

    name: str
    label: str
    help: str = ""
    format: str | None = None
    step: float | None = None
    zero_is_none: bool = False
    options: tuple[tuple[str, str], ...] = ()
    low: float | None = None
    high: float | None = None
    high_is_d: bool = False


@dataclass(frozen=True)
class ReportMetric:
    """One figure of a mechanism's report: a label, a number (or a word) and what it means."""

    label: str
    value: float | str | None
    help: str = ""


@dataclass(frozen=True)
class ReportTable:
    """A small table of a mechanism's report: column name → values (numbers or words)."""

    key: str
    columns: tuple[tuple[str, tuple[Any, ...]], ...]


@dataclass(frozen=True)
class MechanismReport:
    """What a reviewer reads about one release beside its guarantee: up to three figures, tables and notes.

    ``notes`` are ``(level, text)`` with level ``"info"`` or ``"warning"``.
    """

    metrics: tuple[ReportMetric, ...] = ()
    tables: tuple[ReportTable, ...] = ()
    notes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class NoiseProfile:
    """The same release described by many (ε, δ) pairs at a FIXED noise (so a fixed utility), for a mechanism whose
    guarantee trades ε against δ that way: named curves, each a mapping of series name → values (``epsilon`` and the
    δ's), drawn together; the figure at the configured ε; warnings."""

    title: str
    text: str
    curves: tuple[tuple[str, str, dict[str, tuple[float, ...]]], ...]  # (label, group, series)
    metric: ReportMetric
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class GaussianTradeoff:
    """An exact hypothesis-testing trade-off: the privacy loss between two records ``distance`` apart is that of
    N(0, σ²) against N(distance, σ²) (Gaussian DP with μ = distance/σ)."""

    distance: float
    sigma: float


class PartitionPlan:
    """What every partition of an out-of-core release runs, with the pieces drawn once on the driver.

    A plan releases a partition's rows through the one release function (:func:`engine.release.privatize` calls
    :meth:`release`) and completes the release's details from the partitions' (:meth:`finish`). The default plan —
    for a mechanism whose rows are released independently with nothing shared — is the mechanism itself.
    """

    def __init__(self, mechanism: RecordMechanism) -> None:
        self.mechanism = mechanism

    @property
    def KIND(self) -> str:  # noqa: N802 - the mechanism's name, as a release target's
        return self.mechanism.KIND

    def tags(self) -> MechanismTags:
        return self.mechanism.tags()

    def output_dimension(self, d: int) -> int:
        return self.mechanism.output_dimension(d)

    def release(self, x: np.ndarray, *, rng: np.random.Generator | None = None,
                sampler: NoiseSampler | None = None) -> Release:
        return self.mechanism.release(x, rng=rng, sampler=sampler)

    def finish(self, details: dict[str, Any], parts: list[tuple[int, dict[str, Any]]], d: int) -> dict[str, Any]:
        """The whole release's details from the driver's and each partition's ``(rows, details)``."""
        first = next((dict(part) for rows, part in parts if rows), {})
        return {**details, **first}


class RecordMechanism(Serializable):
    """Base class of record-level mechanisms (mixin for frozen dataclasses); see the module docstring."""

    KIND: ClassVar[str] = ""
    LABEL: ClassVar[str] = ""
    #: A few words for labels that head a column (pins in the Workshop); empty: :attr:`LABEL`.
    SHORT_LABEL: ClassVar[str] = ""
    TAGS: ClassVar[MechanismTags] = MechanismTags()
    #: The dashboard form's fields, in order (empty: every field, labelled by its name).
    FORM: ClassVar[tuple[FormField, ...]] = ()
    #: Command-line flags (argparse dest) that set a field of another name, e.g. ``{"k": "anonymity_k"}``.
    FLAGS: ClassVar[Mapping[str, str]] = {}

    # ------------------------------------------------------------------ capabilities
    def tags(self) -> MechanismTags:
        """This configuration's tags (the class's, refined where an option changes an ability)."""
        return type(self).TAGS

    @classmethod
    def examples(cls, d: int) -> dict[str, RecordMechanism]:
        """Named example configurations for data with ``d`` features (the contract tests run every one)."""
        return {}

    @classmethod
    def from_budget(cls, b: float, epsilon: float, delta: float, *, d: int | None = None,
                    split: BudgetSplit | None = None, **options: Any) -> RecordMechanism:
        """The mechanism spending a total (B, ε, δ) (``tags.budgeted``).

        ``d`` is the number of features (``tags.needs_d``); ``split`` a split of the total between the mechanism's
        steps, for a mechanism that has several; ``options`` its other fields (``tags.sweep_options``).
        Mechanisms without a (B, ε, δ) guarantee refuse.
        """
        raise InvalidParameterError(
            f"{cls.LABEL or cls.__name__} is not configured from a privacy budget (B, ε, δ) — it gives no such "
            "guarantee; choose a differentially private mechanism"
        )

    @classmethod
    def from_form(cls, values: Mapping[str, Any], *, d: int) -> RecordMechanism:
        """The configuration typed into the dashboard's form (``FORM``'s fields; validated by the dataclass)."""
        data = {"kind": cls.KIND, **values}
        if cls.TAGS.needs_d:
            data["d"] = int(d)
        return mechanism_from_dict(data)

    @classmethod
    def form_fields(cls) -> tuple[FormField, ...]:
        """``FORM``, or every field but ``d`` labelled by its name."""
        if cls.FORM:
            return cls.FORM
        names = [f.name for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
        return tuple(FormField(name, name) for name in names if not (cls.TAGS.needs_d and name == "d"))

    # ------------------------------------------------------------------ the release
    def guarantee(self) -> GuaranteeStatement:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must define guarantee()")

    def release(self, x: np.ndarray, *, rng: np.random.Generator | None = None,
                sampler: NoiseSampler | None = None) -> Release:  # pragma: no cover - abstract
        """Privatize ``x`` (n × d): randomness from ``rng``, noise from ``sampler`` (default: numpy on ``rng``).
        Call it through :func:`engine.release.privatize`, which checks and names the sampler."""
        raise TypeError(f"{type(self).__name__} must define release()")

    def output_dimension(self, d: int) -> int:
        """Columns of the release of d features (``tags.projects``: its own dimension)."""
        return int(d)

    # ------------------------------------------------------------------ what the attacks need
    def exact_tradeoff(self, distance: float) -> GaussianTradeoff | None:
        """The exact trade-off between two records ``distance`` apart, or None (then a bound from the guarantee)."""
        return None

    def distance_statements(self, distance: float) -> tuple[list[tuple[float, float]], str]:
        """Valid (ε, δ) statements for two records ``distance`` apart, and one phrase saying where they come from:
        by default the guarantee translated by the switch lemma."""
        guarantee = self.guarantee()
        eps, dlt = guarantee.loss_at_distance(distance)
        return [(float(eps), float(dlt))], f"the mechanism's guarantee at distance {distance:g} (switch lemma)"

    def expected_loss(self, distance: float) -> tuple[float, str] | None:
        """A closed form of the expected privacy loss U at ``distance`` and its name, or None (then the loss is
        attributed to the translated guarantee)."""
        return None

    def default_known_records(self, d: int) -> int:
        """Records the known-record adversary of a projected release knows by default: 2 × its dimension."""
        return 2 * self.output_dimension(d)

    def distance_recovery(self, x: np.ndarray, z: np.ndarray, *, rng: np.random.Generator,
                          pairs: int = 400) -> dict[str, np.ndarray] | None:
        """Distances between records estimated from the release (``tags.recovers_distances``), else None."""
        return None

    def noise_profile(self, d: int) -> NoiseProfile | None:
        """ε against δ at this configuration's fixed noise, for d features (None: not offered)."""
        return None

    # ------------------------------------------------------------------ out of core
    def partition_mode(self, requested: str) -> tuple[str, str | None]:
        """The out-of-core mode that runs for ``requested`` and a note when it differs; refuses unsupported modes."""
        if requested not in self.tags().partition_modes:
            raise InvalidParameterError(self.partition_refusal(requested))
        return requested, None

    def partition_refusal(self, mode: str) -> str:
        """Why this configuration cannot run partition by partition in ``mode`` (one line)."""
        return (f"the {self.KIND} mechanism cannot run under --engine dask in --dask-mode {mode} — use the in-memory "
                "engine")

    def partition_plan(self, mode: str, d: int, rng: np.random.Generator,
                       covariance: Callable[[str], np.ndarray]) -> tuple[PartitionPlan, dict[str, Any]]:
        """The pieces drawn once on the driver (from ``rng``; ``covariance(kind)`` reduces XᵀX over the partitions
        when the mechanism needs it) and the release's data-free details. Default: nothing shared."""
        self.partition_mode(mode)
        release = self.release(np.zeros((1, d)), rng=np.random.default_rng(0))  # data-free details
        return PartitionPlan(self), dict(release.details)

    # ------------------------------------------------------------------ what a reviewer reads
    def report(self, details: Mapping[str, Any]) -> MechanismReport:
        """The figures, tables and notes shown beside the guarantee for a release with ``details``."""
        return MechanismReport()


M = TypeVar("M", bound=type[RecordMechanism])

#: KIND → class, in registration order (the order every list shows). Filled by :func:`register`.
MECHANISMS: dict[str, type[RecordMechanism]] = {}


def register(cls: M) -> M:
    """Class decorator adding a mechanism to :data:`MECHANISMS` under its ``KIND``."""
    if not cls.KIND or cls.KIND in MECHANISMS:
        raise TypeError(f"mechanism {cls.__name__} needs a unique KIND; got {cls.KIND!r}")
    if not isinstance(cls.TAGS, MechanismTags):
        raise TypeError(f"mechanism {cls.__name__} needs TAGS, a MechanismTags")
    MECHANISMS[cls.KIND] = cls
    return cls


def unregister(kind: str) -> None:
    """Remove a mechanism from the registry (tests that register a toy mechanism clean up with it)."""
    MECHANISMS.pop(kind, None)


def mechanism_from_dict(data: object) -> RecordMechanism:
    """Rebuild a mechanism configuration from its ``to_dict()`` output (the ``kind`` key picks the class)."""
    if not isinstance(data, dict) or "kind" not in data:
        raise InvalidParameterError("a mechanism configuration must be a JSON object with a 'kind' field")
    kind = data["kind"]
    if kind not in MECHANISMS:
        raise InvalidParameterError(f"mechanism must be one of {sorted(MECHANISMS)}; got {kind!r}")
    from engine.limits import check_privacy_parameters

    check_privacy_parameters(data, owner=f"the {kind} mechanism")  # before building: no overflow on the way
    return MECHANISMS[kind].from_dict(data)


def budgeted_kinds() -> tuple[str, ...]:
    """Registered mechanisms configurable from a (B, ε, δ) budget, in registration order."""
    return tuple(kind for kind, cls in MECHANISMS.items() if cls.TAGS.budgeted)


def reference_mechanism(b: float, epsilon: float, delta: float) -> RecordMechanism:
    """The simplest mechanism spending (B, ε, δ) exactly — what a budget stands for where no mechanism was chosen
    (a decision record without one, a budget pinned in the workshop): the first registered budget-configurable
    mechanism with an exact trade-off that needs no ``d`` (the Gaussian mechanism)."""
    for cls in MECHANISMS.values():
        if cls.TAGS.budgeted and cls.TAGS.exact_tradeoff and not cls.TAGS.needs_d:
            return cls.from_budget(b, epsilon, delta)
    raise InvalidParameterError("no registered mechanism spends a (B, ε, δ) budget exactly")  # pragma: no cover


def baseline_mechanism(d: int) -> RecordMechanism | None:
    """The non-DP baseline a comparison shows beside the private mechanisms: the first registered mechanism that gives
    no (ε, δ) guarantee, in its first example configuration (k-anonymity with k = 2, the targeted-DP paper's); None
    when there is none."""
    for cls in MECHANISMS.values():
        if not cls.TAGS.differentially_private:
            examples = cls.examples(d)
            if examples:
                return next(iter(examples.values()))
    return None


def preselected_kinds() -> tuple[str, ...]:
    """Budget-configurable mechanisms chosen by default where several are compared over a grid."""
    return tuple(kind for kind, cls in MECHANISMS.items() if cls.TAGS.budgeted and cls.TAGS.preselected)


__all__ = [
    "MECHANISMS",
    "FormField",
    "GaussianTradeoff",
    "MechanismReport",
    "MechanismTags",
    "NoiseProfile",
    "PartitionPlan",
    "RecordMechanism",
    "ReportMetric",
    "ReportTable",
    "baseline_mechanism",
    "budgeted_kinds",
    "mechanism_from_dict",
    "preselected_kinds",
    "reference_mechanism",
    "register",
    "unregister",
]

