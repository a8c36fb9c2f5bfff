r"""Run one analysis: release the data once, score the program on the release, attack it — the one definition.

"What does this mechanism cost my program, and what does it buy against real attacks?" is answered in exactly one
place, :func:`analyse`. The sweep runner (every cell), the Mechanisms page (through a thin cache wrapper), the
Tradeoffs page's reference markers and ``python -m engine evaluate`` all call it, so the same data, mechanism and
seed give the same numbers everywhere.

Protocol
--------
1. :meth:`AnalysisData.build` (once per data set and configuration): draw the attribute-inference holdout (the
   control group, never released) with its own seed, keep the released rows, score the **non-private** program
   on them (the baseline every change is measured against) and compute the non-private singling-out baseline.
2. :func:`analyse` (once per mechanism and seed): privatize the released rows with a fresh stream, undo a known
   output scale where the threat model says the data user and the attacker know it, score the program on the
   release (its decisions compared person by person with the non-private ones: the **decision agreement** — an average
   over the people of these data, not Theorem 1's worst-case γ),
   then run the attacks: singling out and attribute inference on the release (for a projected release — the JL
   release — on the known-record adversary's reconstruction, never on the secret P), and distinguishing from the
   guarantee. The release is made by the one release function, :func:`engine.release.privatize` (numpy sampler:
   an analysis is a seeded simulation).

The aggregation rule (the same on the Mechanisms page, ``evaluate``, the recommender and every sweep)
-----------------------------------------------------------------------------------------------------
Every release of a configuration is scored AND attacked; nothing is taken from one release only. A configuration's
number is the mean over its releases with a 95 % confidence interval of the mean (:func:`mean_interval`, Student's t
over the r releases). Attribute inference is a worst case over (adversary, secret column) cells: each cell's
relative protection is averaged over the releases FIRST, then the lowest cell is reported, with that cell's
interval (:func:`worst_cell`; the mean of per-release minima, biased low, is kept beside it as
``…_per_run_min``). Distinguishing needs no data: every release gives the same number.

Seeds: the holdout is drawn from the configuration's ``holdout_seed`` (the same rows for every run, so the
non-private reference is one number on every page); each release's stream is spawned from the run's seed exactly as
a one-point sweep spawns its cells, so a run on the Mechanisms page with seed s and ``run_sweep`` of that single
point with seed s give identical numbers.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods (case studies, privacy attacks). Digest: ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from engine.attacks.threat_model import ADVERSARY_TEXT, Adversary
from engine.errors import DataValidationError, InsufficientDataError, InvalidParameterError
from engine.evaluation.metrics import (
    ATTACK_CELL_PREFIX,
    BASELINE_PREFIX,
    attack_cell_column,
    attack_cell_columns,
    attack_cell_name,
    baseline_column,
    baseline_rules,
)
from engine.evaluation.programs import (
    ProgramConfig,
    ProgramResult,
    decision_agreement,
    evaluate_program,
    no_data_agreement,
    relative_to,
)
from engine.mechanisms import RecordMechanism
from engine.progress import CancelToken, Progress, ProgressCallback
from engine.release import privatize
from engine.rng import spawn_seeds
from engine.serialization import Serializable
from engine.validation import check_bool, check_choice, check_integer

__all__ = [
    "ATTACKS",
    "PreparedRows",
    "Seed",
    "AnalysisConfig",
    "AnalysisData",
    "AnalysisResult",
    "AttackMetrics",
    "Metrics",
    "PointAnalysis",
    "analyse",
    "analyse_mechanisms",
    "analysis_seeds",
    "baseline_column",
    "clear_analysis_cache",
    "gamma_check",
    "mean_interval",
    "protection_interval",
    "worst_cell",
]

AttackName = Literal["singling_out", "attribute_inference", "distinguishing"]
#: A seed of an analysis: an integer, a ``numpy.random.SeedSequence``, or None (OS entropy).
Seed = int | np.random.SeedSequence | None


class PreparedRows(Protocol):
    """What an analysis reads of prepared data (:class:`engine.data.preparation.PreparedData` has it): rows in the
    unit ball, the outcome (or None), the program's extra columns and the data's fingerprint."""

    @property
    def x(self) -> np.ndarray: ...

    @property
    def y(self) -> np.ndarray | None: ...

    @property
    def extras(self) -> Mapping[str, np.ndarray]: ...

    @property
    def fingerprint(self) -> str: ...
#: Attacks an analysis can run, in the order of the table's columns.
ATTACKS: tuple[AttackName, ...] = ("singling_out", "attribute_inference", "distinguishing")
#: Prefix of the per-(adversary, secret column) attribute-inference columns of :meth:`Metrics.row`.
AI_CELL_PREFIX = ATTACK_CELL_PREFIX


@dataclass(frozen=True)
class AnalysisConfig(Serializable):
    """How a release is evaluated: the program, the attacks and what the attacker knows.

    Parameters
    ----------
    program : ProgramConfig or None
        How the data user uses the release and how it is scored; None when the data have no outcome (no program
        metrics then).
    attacks : tuple of {"singling_out", "attribute_inference", "distinguishing"}
        Attacks to run (distinct).
    adversary : {"knows-scale", "paper"}
        ``"knows-scale"`` (default): the attacker and the data user know the public algorithm and undo a known
        output scale; ``"paper"``: the release as printed (the authors' code).
    holdout : int or None
        Rows held out as the attribute-inference control group; None = min(500, ⌊n/5⌋). No holdout without
        attribute inference.
    known_records : int or None
        JL release only: original records the adversary knows (None = 2k).
    clustering : bool
        Also score the secure-release paper's program, k-means clustering accuracy on the release (on the data for
        the non-private reference) against the outcome classes; classification programs only (JL sweeps).
    holdout_seed : int
        Seed of the holdout draw. It is part of the configuration, not of a run: every analysis of the same data
        and configuration (a page run, every sweep whatever its seed, the command line) holds out the same rows,
        so the non-private reference — the program on the original released rows — is the same number everywhere.
    """

    program: ProgramConfig | None = field(default_factory=ProgramConfig)
    attacks: tuple[AttackName, ...] = ATTACKS
    adversary: Adversary = "knows-scale"
    holdout: int | None = None
    known_records: int | None = None
    clustering: bool = False
    holdout_seed: int = 0

    def __post_init__(self) -> None:
        if self.program is not None and not isinstance(self.program, ProgramConfig):
            raise InvalidParameterError(f"program must be a ProgramConfig or None; got {type(self.program).__name__}")
        attacks = tuple(self.attacks)
        if len(set(attacks)) != len(attacks):
            raise InvalidParameterError(f"attacks must be distinct; got {list(attacks)}")
        for attack in attacks:
            check_choice("attack", attack, ATTACKS)
        object.__setattr__(self, "attacks", attacks)
        check_choice("adversary", self.adversary, ADVERSARY_TEXT)
        if self.holdout is not None:
            check_integer("holdout", self.holdout, 1, None, hint="leave it empty for min(500, n/5)")
        if self.known_records is not None:
            check_integer("known_records", self.known_records, 1, None, hint="leave it empty for 2k")
        check_bool("clustering", self.clustering)
        check_integer("holdout_seed", self.holdout_seed, 0, None)

    def attack_configs(self):
        """(SinglingOutConfig, AttributeInferenceConfig) for the chosen adversary."""
        from engine.attacks.attribute_inference import AttributeInferenceConfig
        from engine.attacks.singling_out import SinglingOutConfig

        if self.adversary == "paper":
            return SinglingOutConfig.paper(), AttributeInferenceConfig.paper()
        return SinglingOutConfig(), AttributeInferenceConfig()

    def known_for(self, mechanism: RecordMechanism, d: int) -> int:
        """Records the known-record adversary of a projected release knows (the mechanism's default — 2k for the JL
        release — unless set)."""
        return mechanism.default_known_records(d) if self.known_records is None else int(self.known_records)


def analysis_seeds(seed: int | np.random.SeedSequence | None) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """(holdout seed, analysis seed) of a one-point analysis: ``spawn_seeds(seed, 2)``, as ``run_sweep`` spawns
    the holdout (child 0) and its first cell (child 1)."""
    if isinstance(seed, np.random.SeedSequence):
        children = seed.spawn(2)
    else:
        children = spawn_seeds(seed, 2)
    return children[0], children[1]


@dataclass(frozen=True, eq=False)
class AnalysisData:
    """Everything an analysis needs that does not depend on the noise: built once, used by every run.

    Attributes
    ----------
    config : AnalysisConfig
    x_rel, y_rel, extras_rel
        The released rows (all rows minus the holdout), their outcome (None without one) and program columns.
    x_hold : ndarray or None
        The attribute-inference control group (never released); None without attribute inference.
    baseline : ProgramResult or None
        The non-private program on the released rows.
    so_baseline
        The non-private singling-out result (None without singling out).
    classes : ndarray or None
        Outcome classes of a classification program (the JL release's clustering accuracy).
    fingerprint : str
        Of the prepared data.
    """

    config: AnalysisConfig
    x_rel: np.ndarray
    y_rel: np.ndarray | None
    extras_rel: dict[str, np.ndarray]
    x_hold: np.ndarray | None
    baseline: ProgramResult | None
    so_baseline: Any
    classes: np.ndarray | None
    fingerprint: str = ""

    @property
    def n_released(self) -> int:
        return int(self.x_rel.shape[0])

    @functools.cached_property
    def so_index(self) -> Any:
        """The singling-out search's index of the released rows (``engine.attacks._chebyshev.ColumnIndex``): it does
        not depend on the release, so every run on these data shares it. Built on first use in each process (it is
        not pickled: a sweep worker builds its own, in about 0.04 s on nigeria-demo, instead of receiving d² n
        bytes)."""
        from engine.attacks._chebyshev import ColumnIndex

        return ColumnIndex.build(self.x_rel)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("so_index", None)
        return state

    @property
    def n_holdout(self) -> int:
        return 0 if self.x_hold is None else int(self.x_hold.shape[0])

    @classmethod
    def build(cls, data: PreparedRows, config: AnalysisConfig, *, holdout_seed: Seed = None, workers: int = 1,
              cancel: CancelToken | None = None) -> AnalysisData:
        """Split off the holdout and compute the non-private references.

        Parameters
        ----------
        data : PreparedData
            Or any object with ``x`` (rows in the unit ball), ``y`` (or None), ``extras`` and ``fingerprint``.
        config : AnalysisConfig
        holdout_seed : int or numpy.random.SeedSequence, optional
            Seed of the holdout draw; default ``config.holdout_seed`` (what every caller of the Studio uses).
        workers : int
            Threads for the singling-out reference's nearest-row queries (default 1); the result does not depend on it.
        cancel : CancelToken, optional
            Checked between the non-private program and the singling-out reference.

        Raises
        ------
        DataValidationError, InsufficientDataError, InvalidParameterError
            The data do not fit the program or the attacks.
        """
        from engine.attacks.attribute_inference import default_holdout_size, holdout_split

        if not isinstance(config, AnalysisConfig):
            raise InvalidParameterError(f"config must be an AnalysisConfig; got {type(config).__name__}")
        n_workers = check_integer("workers", workers, 1, 16)
        x, y, extras, fingerprint = _data_arrays(data, need_outcome=config.program is not None)
        n, d = x.shape
        if "attribute_inference" in config.attacks and d < 2:
            raise InsufficientDataError(
                "attribute inference needs at least 2 feature columns (one known, one secret); got 1 — add "
                "features or leave attribute inference out"
            )
        if "attribute_inference" in config.attacks:
            size = default_holdout_size(n) if config.holdout is None else config.holdout
            if size >= n:
                raise InvalidParameterError(f"holdout must be smaller than the number of rows ({n}); got {size}")
            seed = config.holdout_seed if holdout_seed is None else holdout_seed
            rel, hold = holdout_split(n, size, rng=np.random.default_rng(seed))
            x_hold = x[hold]
        else:
            rel, x_hold = np.arange(n), None
        x_rel = x[rel]
        y_rel = None if y is None else y[rel]
        extras_rel = {k: v[rel] for k, v in extras.items()}
        baseline = None
        classes = None
        if config.program is not None and y_rel is not None:
            baseline = evaluate_program(x_rel, y_rel, config.program, extras=extras_rel)
            if config.clustering and config.program.kind == "classification":
                classes = np.unique(y_rel)
        so_baseline = index = None
        if cancel is not None:
            cancel.raise_if_cancelled("the analysis")
        if "singling_out" in config.attacks:
            from engine.attacks._chebyshev import ColumnIndex
            from engine.attacks.singling_out import singling_out_baseline

            index = ColumnIndex.build(x_rel)
            so_baseline = singling_out_baseline(x_rel, config.attack_configs()[0], workers=n_workers, index=index)
        for array in (x_rel, y_rel, x_hold, *extras_rel.values()):  # shared by every run (and :meth:`cached`)
            if array is not None:
                array.setflags(write=False)
        built = cls(config, x_rel, y_rel, extras_rel, x_hold, baseline, so_baseline, classes, fingerprint)
        if index is not None:
            built.__dict__["so_index"] = index  # the cached property's value: the baseline's index serves every run
        return built

    @classmethod
    def cached(cls, data: PreparedRows, config: AnalysisConfig, *, workers: int = 1,
               cancel: CancelToken | None = None) -> AnalysisData:
        """:meth:`build` with the configuration's own holdout seed, computed once per (data fingerprint, configuration)
        for the last :data:`_BUILT_SIZE` pairs in this process: a page's runs, a sweep, its time estimate and its
        reference markers on the same data share the holdout split and the non-private references (on nigeria-demo
        the non-private program and singling-out baseline are about 0.7 s of CPU). The result depends on nothing
        else, so a cached one is the one :meth:`build` would return (``workers`` and ``cancel`` as in :meth:`build`)."""
        if not isinstance(config, AnalysisConfig):
            raise InvalidParameterError(f"config must be an AnalysisConfig; got {type(config).__name__}")
        check_integer("workers", workers, 1, 16)  # on a cache hit too
        fingerprint = _data_arrays(data, need_outcome=config.program is not None)[3]
        key = hashlib.sha256((fingerprint + "\x00" + config.to_json(sort_keys=True)).encode()).hexdigest()
        with _BUILT_LOCK:
            built = _BUILT.get(key)
            if built is not None:
                _BUILT.move_to_end(key)
                return built
        built = cls.build(data, config, workers=workers, cancel=cancel)
        with _BUILT_LOCK:
            _BUILT[key] = built
            while len(_BUILT) > _BUILT_SIZE:
                _BUILT.popitem(last=False)
        return built

    def check_mechanism(self, mechanism: RecordMechanism) -> None:
        """Refuse a mechanism this analysis cannot run (e.g. a known-record adversary of a projected release knowing
        as many records as released)."""
        if mechanism.tags().projects:
            known = self.config.known_for(mechanism, int(self.x_rel.shape[1]))
            if known >= self.n_released:
                raise InsufficientDataError(
                    f"the {mechanism.KIND} adversary knows {known} records, but only {self.n_released} rows are "
                    "released — set known_records below the number of released rows (or a smaller k)"
                )


#: :meth:`AnalysisData.cached`: the analysis inputs of the last few (data, configuration) pairs of this process.
_BUILT: collections.OrderedDict[str, AnalysisData] = collections.OrderedDict()
_BUILT_SIZE = 4
_BUILT_LOCK = threading.Lock()


def clear_analysis_cache() -> None:
    """Forget the analysis inputs kept by :meth:`AnalysisData.cached`."""
    with _BUILT_LOCK:
        _BUILT.clear()


@dataclass(frozen=True)
class AttackMetrics:
    """One attack's numbers on one release: its protection in [0, 1], its details (column name → value, in table
    order) and, for attribute inference, every (adversary, secret column) cell's relative protection."""

    attack: str
    protection: float
    details: tuple[tuple[str, float], ...] = ()
    cells: tuple[tuple[str, float], ...] = ()  # ("<knowledge>:<secret>", relative protection)


@dataclass(frozen=True)
class Metrics:
    """Every number one analysed release gives — typed, flattened only where a table is written (:meth:`row`).

    Attributes
    ----------
    program : tuple of (str, float)
        The program's metrics on the release, then ``<headline>_change`` and the program-specific relative metrics
        against the non-private program (empty without a program).
    decision_agreement : float
        Share of people whose decision equals the non-private decision (NaN without a decision program).
    headline : str or None
        The program's headline metric.
    baselines : tuple of (str, float)
        Each rule that uses no data and its headline metric.
    agreement_baselines : tuple of (str, float)
        Each rule that uses no data and its decision agreement with the non-private program
        (:func:`~engine.evaluation.programs.no_data_agreement`).
    clustering_accuracy : float
        k-means accuracy on a projected release of a classification program (NaN otherwise).
    noise_sd : float
        Per-coordinate noise sd on the unbiased scale (0 for the data, NaN without noise).
    attacks : tuple of AttackMetrics
        In :data:`ATTACKS` order, the attacks that ran.
    """

    program: tuple[tuple[str, float], ...] = ()
    decision_agreement: float = math.nan
    headline: str | None = None
    baselines: tuple[tuple[str, float], ...] = ()
    clustering_accuracy: float = math.nan
    noise_sd: float = math.nan
    attacks: tuple[AttackMetrics, ...] = ()
    agreement_baselines: tuple[tuple[str, float], ...] = ()

    def attack(self, name: str) -> AttackMetrics | None:
        """The named attack's numbers, or None when it did not run."""
        return next((a for a in self.attacks if a.attack == name), None)

    def value(self, name: str) -> float:
        """One named number: a program metric, ``decision_agreement``, ``noise_sd``, ``clustering_accuracy``,
        ``protection_<attack>`` or an attack's detail column; NaN when absent."""
        for key, value in self.program:
            if key == name:
                return float(value)
        if name == "decision_agreement":
            return float(self.decision_agreement) if self.program else math.nan
        if name in ("noise_sd", "clustering_accuracy"):
            return float(getattr(self, name))
        for attack in self.attacks:
            if name == f"protection_{attack.attack}":
                return float(attack.protection)
            for key, value in attack.details:
                if key == name:
                    return float(value)
        return math.nan

    def row(self) -> dict[str, float]:
        """The metric columns of a table's row: program metrics, ``<headline>_change`` and the relative metrics,
        ``decision_agreement``, the trivial baselines (``baseline:<rule>:<metric>``), ``clustering_accuracy`` (projected
        releases of a classification program), ``noise_sd`` and the protection columns with their attack details
        and the attribute-inference cells (:mod:`engine.evaluation.metrics` names the columns)."""
        out: dict[str, float] = {}
        if self.program:
            out.update(self.program)
            out["decision_agreement"] = self.decision_agreement
            for rule, value in self.baselines:
                out[baseline_column(rule, str(self.headline))] = value
            for rule, value in self.agreement_baselines:
                out[baseline_column(rule, "decision_agreement")] = value
        if math.isfinite(self.clustering_accuracy):
            out["clustering_accuracy"] = self.clustering_accuracy
        out["noise_sd"] = self.noise_sd
        for attack in self.attacks:
            out[f"protection_{attack.attack}"] = float(attack.protection)
            out.update(attack.details)
            for cell, value in attack.cells:  # per cell, so that summaries average over runs before the worst cell
                out[ATTACK_CELL_PREFIX + cell] = float(value)
        return out

    @classmethod
    def from_row(cls, row: Mapping[str, Any], headline: str | None = None) -> Metrics:
        """The typed numbers of one row of a table written by :meth:`row` (e.g. a sweep's row); ``headline`` names
        the program's headline metric (its baselines are read back)."""
        numbers = {k: float(v) for k, v in row.items() if isinstance(k, str) and isinstance(v, (int, float))}
        attacks = []
        for attack in ATTACKS:
            key = f"protection_{attack}"
            if key not in numbers or not math.isfinite(numbers[key]):
                continue
            prefix = attack + "_"
            details = tuple((k, v) for k, v in numbers.items() if k.startswith(prefix) and not k.startswith(
                ATTACK_CELL_PREFIX))
            cells = tuple((attack_cell_name(c), numbers[c]) for c in attack_cell_columns(numbers)) \
                if attack == "attribute_inference" else ()
            attacks.append(AttackMetrics(attack, numbers[key], details, cells))
        program: tuple[tuple[str, float], ...] = ()
        baselines: tuple[tuple[str, float], ...] = ()
        if headline is not None and headline in numbers:
            skip = {"decision_agreement", "noise_sd", "clustering_accuracy"}
            program = tuple((k, v) for k, v in numbers.items() if k not in skip and not k.startswith(
                ("protection_", BASELINE_PREFIX, ATTACK_CELL_PREFIX, *(a + "_" for a in ATTACKS)))
                and k not in _DESCRIPTORS)
            baselines = tuple((rule, numbers[baseline_column(rule, headline)])
                              for rule in baseline_rules(numbers, headline))
        agreement = tuple((rule, numbers[baseline_column(rule, "decision_agreement")])
                          for rule in baseline_rules(numbers, "decision_agreement"))
        return cls(program=program, decision_agreement=numbers.get("decision_agreement", math.nan),
                   headline=headline, baselines=baselines, agreement_baselines=agreement,
                   clustering_accuracy=numbers.get("clustering_accuracy", math.nan),
                   noise_sd=numbers.get("noise_sd", math.nan), attacks=tuple(attacks))


#: Columns of a sweep's table that describe its grid point, not the release (skipped by :meth:`Metrics.from_row`).
_DESCRIPTORS = frozenset({"point", "rep", "cell", "b", "epsilon1", "delta1", "epsilon2", "delta2", "epsilon",
                          "delta", "implied_epsilon", "implied_delta", "_cpu_seconds"})


@dataclass(frozen=True, eq=False)
class AnalysisResult:
    """One analysis of one release (or of the data themselves, ``mechanism=None``).

    Attributes
    ----------
    mechanism : RecordMechanism or None
    value : ndarray
        The release of the released rows, on the mechanism's output scale.
    scale : float
        The release's known output scale s (E[value] = s·X); 1 for the data themselves.
    noise_sd : float
        Per-coordinate noise sd on the unbiased scale (0 for the data, NaN when the mechanism adds none).
    program, baseline : ProgramResult or None
        The program on the release, and the non-private program on the same rows.
    decision_agreement : float
        Share of people whose decision equals the non-private decision (decision agreement; NaN for regression).
    clustering_accuracy : float
        Projected release of a classification program only (NaN otherwise).
    singling_out, attribute_inference, distinguishing
        Attack results (None when not run).
    n_known : int
        Projected release: original records the adversary knows (0 otherwise).
    """

    mechanism: RecordMechanism | None
    value: np.ndarray
    scale: float
    noise_sd: float
    program: ProgramResult | None
    baseline: ProgramResult | None
    decision_agreement: float
    clustering_accuracy: float
    singling_out: Any
    attribute_inference: Any
    distinguishing: Any
    n_known: int = 0

    @functools.cached_property
    def metrics(self) -> Metrics:
        """The release's numbers, typed (:class:`Metrics`)."""
        program: list[tuple[str, float]] = []
        baselines: tuple[tuple[str, float], ...] = ()
        agreement: tuple[tuple[str, float], ...] = ()
        headline = None
        if self.program is not None and self.baseline is not None:
            program.extend(self.program.metrics.items())
            rel = relative_to(self.program, self.baseline)
            headline = self.program.headline_metric
            program.append((f"{headline}_change", rel[f"{headline}_change"]))
            for key in ("relative_profit", "profit_change_relative", "extra_exclusion_errors_population"):
                if key in rel:
                    program.append((key, rel[key]))
            baselines = tuple((rule, metrics[headline]) for rule, metrics in self.program.baselines.items())
            agreement = tuple(no_data_agreement(self.baseline).items())
        attacks: list[AttackMetrics] = []
        if self.singling_out is not None:
            so = self.singling_out
            attacks.append(AttackMetrics("singling_out", float(so.protection), (
                ("singling_out_risk", float(so.risk)),
                ("singling_out_worst_net_size", float(so.worst_net_size)),
            )))
        if self.attribute_inference is not None:
            ai = self.attribute_inference
            attacks.append(AttackMetrics("attribute_inference", float(ai.protection), (
                ("attribute_inference_risk", float(ai.risk)),
                ("attribute_inference_risk_ci_low", float(ai.risk_ci[0])),
                ("attribute_inference_risk_ci_high", float(ai.risk_ci[1])),
            ), tuple((attack_cell_name(attack_cell_column(c.knowledge, c.secret)), float(c.relative_protection))
                     for c in ai.cells)))
        if self.distinguishing is not None:
            dist = self.distinguishing
            attacks.append(AttackMetrics("distinguishing", float(dist.protection), (
                ("distinguishing_paper_d", float(dist.expected_loss_score)),
                # 1 = the score is exact (the mechanism's own trade-off), 0 = a bound derived from its guarantee
                ("distinguishing_exact", 1.0 if dist.basis == "exact" else 0.0),
            )))
        return Metrics(program=tuple(program), decision_agreement=self.decision_agreement, headline=headline,
                       baselines=baselines, clustering_accuracy=self.clustering_accuracy, noise_sd=self.noise_sd,
                       attacks=tuple(attacks), agreement_baselines=agreement)

    def row(self) -> dict[str, float]:
        """:meth:`Metrics.row` of this release (a sweep table's row)."""
        return self.metrics.row()

    @property
    def trivial_beaters(self) -> list[str]:
        """Trivial rules at least as good as the program on the release (headline metric); [] without a program."""
        return [] if self.program is None else self.program.beaten_by()


def analyse(data: AnalysisData, mechanism: RecordMechanism | None, *, seed: Seed, attacks: bool = True,
            cancel: CancelToken | None = None) -> AnalysisResult:
    """Release ``data``'s released rows once with ``mechanism`` and evaluate the release.

    Parameters
    ----------
    data : AnalysisData
        From :meth:`AnalysisData.build` (holds the configuration).
    mechanism : RecordMechanism or None
        Any record-level mechanism (projection, Gaussian, JL + Laplace, k-anonymity, …); None analyses the data
        themselves (the non-private reference: protection 0 against distinguishing, the non-private attack
        baselines).
    seed : int or numpy.random.SeedSequence
        The run's randomness: the release's noise, the JL adversary's known records, the attacks' random choices.
    attacks : bool
        Run the configuration's attacks (default). ``False`` stops after the program: the release's noise, and so
        every program metric and the decision agreement, are exactly those of the full run with the same seed.
    cancel : CancelToken, optional
        Checked before the attacks and inside attribute inference's search (between its compiled scans); a cancel
        raises :class:`~engine.errors.CancelledError`.

    Returns
    -------
    AnalysisResult
    """
    if not isinstance(data, AnalysisData):
        raise InvalidParameterError(f"data must be AnalysisData (AnalysisData.build); got {type(data).__name__}")
    config = data.config
    rng = np.random.default_rng(seed)
    so_cfg, ai_cfg = config.attack_configs()
    n_known = 0
    if mechanism is None:
        value, view, scale, program, noise_sd = data.x_rel, data.x_rel, 1.0, data.baseline, 0.0
    else:
        data.check_mechanism(mechanism)
        release = privatize(mechanism, data.x_rel, sampler="numpy", rng=rng, seeded=True)
        value = release.value
        scale = release.details.get("output_scale", 1.0)
        scale = 1.0 if scale is None else float(scale)
        reported = release.details.get("noise_sd_per_coordinate")
        noise_sd = math.nan if reported is None else float(reported)
        if math.isnan(noise_sd) and hasattr(mechanism, "sigma"):
            noise_sd = float(mechanism.sigma)
        program = None
        if config.program is not None and data.y_rel is not None:
            # The data user knows the public algorithm as the attacker does: with the "knows-scale" threat model
            # it undoes the known output scale too (the "paper" mode keeps the authors' as-printed values).
            program_input = value / scale if (config.adversary == "knows-scale" and scale != 1.0) else value
            program = evaluate_program(program_input, data.y_rel, config.program, extras=data.extras_rel,
                                       cancel=cancel)
        if mechanism.tags().projects:
            # The adversary has Z and the public description, not P, and knows a few original records.
            from engine.attacks.known_records import known_record_view

            n_known = config.known_for(mechanism, int(data.x_rel.shape[1]))
            view, scale = known_record_view(value, data.x_rel, n_known, rng=rng), 1.0
        else:
            view = value
    agreement = math.nan
    if program is not None and data.baseline is not None:
        agreement = decision_agreement(program, data.baseline)
    clustering = math.nan
    if data.classes is not None:
        from engine.evaluation.clustering import kmeans_accuracy

        clustering = kmeans_accuracy(value, data.y_rel, n_clusters=int(data.classes.size), rng=rng)  # type: ignore[arg-type]
    so = ai = dist = None
    run_attacks = config.attacks if attacks else ()
    if cancel is not None and run_attacks:
        cancel.raise_if_cancelled("the analysis")
    if "singling_out" in run_attacks:
        from engine.attacks.singling_out import singling_out

        so = data.so_baseline if mechanism is None else singling_out(
            data.x_rel, view, so_cfg, release_scale=scale, non_unique=data.so_baseline.non_unique_share,
            index=data.so_index,
        )
    if "attribute_inference" in run_attacks:
        from engine.attacks.attribute_inference import attribute_inference

        ai = attribute_inference(data.x_rel, view, data.x_hold, ai_cfg, release_scale=scale, rng=rng,  # type: ignore[arg-type]
                                 cancel=cancel)
    if "distinguishing" in run_attacks:
        dist = _NON_PRIVATE_DISTINGUISHING if mechanism is None else _distinguishing(mechanism)
    return AnalysisResult(
        mechanism=mechanism,
        value=value,
        scale=scale,
        noise_sd=noise_sd,
        program=program,
        baseline=data.baseline,
        decision_agreement=agreement,
        clustering_accuracy=clustering,
        singling_out=so,
        attribute_inference=ai,
        distinguishing=dist,
        n_known=n_known,
    )


@dataclass(frozen=True)
class _DataDistinguishing:
    """The data themselves: two records are told apart without error."""

    protection: float = 0.0
    expected_loss_score: float = 0.0
    basis: str = "exact"
    basis_text: str = "Exact: the data themselves — two records are told apart without error."


_NON_PRIVATE_DISTINGUISHING = _DataDistinguishing()


@functools.lru_cache(maxsize=256)
def _distinguishing(mechanism: RecordMechanism):
    """Data-free: computed once per mechanism configuration (frozen, so hashable by its fields) and process."""
    from engine.attacks.distinguishing import distinguishing

    return distinguishing(mechanism)


def _data_arrays(data: PreparedRows, *, need_outcome: bool) -> tuple[np.ndarray, np.ndarray | None, dict[str, np.ndarray], str]:
    x = getattr(data, "x", None)
    if x is None:
        raise InvalidParameterError(
            f"data must be prepared data (engine.data.preparation.prepare) with x and y; got {type(data).__name__}"
        )
    x = np.asarray(x, dtype=float)
    y = getattr(data, "y", None)
    if y is None and need_outcome:
        raise DataValidationError("scoring a program needs an outcome — choose a target column")
    y = None if y is None else np.asarray(y, dtype=float)
    extras = {str(k): np.asarray(v, dtype=float) for k, v in (getattr(data, "extras", None) or {}).items()}
    fingerprint = getattr(data, "fingerprint", None) or _fingerprint(x, y, extras)
    return x, y, extras, str(fingerprint)


def _fingerprint(x: np.ndarray, y: np.ndarray | None, extras: Mapping[str, np.ndarray]) -> str:
    import hashlib

    h = hashlib.sha256()
    items: Sequence[tuple[str, np.ndarray]] = [("x", x)] + ([("y", y)] if y is not None else []) + sorted(
        extras.items())
    for name, arr in items:
        a = np.ascontiguousarray(arr, dtype=float)
        h.update(f"{name}:{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float, float]:
    """(mean, sd, lo, hi) of repeated runs: mean ± t · sd/√r with t the ``(1 + confidence)/2`` quantile of Student's
    t with r − 1 degrees of freedom (sd with ddof = 1); non-finite values are left out; lo = hi = NaN for one run.

    >>> [round(v, 4) for v in mean_interval([1.0, 2.0, 3.0])]
    [2.0, 1.0, -0.4841, 4.4841]
    """
    v = np.asarray(list(values), dtype=float)
    v = v[np.isfinite(v)]
    k = v.size
    mean = float(v.mean()) if k else math.nan
    sd = float(v.std(ddof=1)) if k > 1 else math.nan
    if k > 1:
        # Student's t quantile: what scipy.stats.t.ppf computes, ~1000× faster and without importing scipy.stats.
        from scipy.special import stdtrit

        half = float(stdtrit(k - 1, (1 + confidence) / 2)) * sd / math.sqrt(k)
        return mean, sd, mean - half, mean + half
    return mean, sd, math.nan, math.nan


def worst_cell(cells: Mapping[str, Sequence[float]], confidence: float = 0.95
               ) -> tuple[str, tuple[float, float, float, float]] | None:
    """The aggregation rule's worst case over attribute-inference cells: each cell's values over the releases are
    averaged FIRST (:func:`mean_interval`), then the cell with the lowest mean is returned with its
    (mean, sd, lo, hi); None when no cell has a finite mean.

    >>> worst_cell({"one:0": [0.9, 0.7], "half:1": [0.8, 0.9]})[0]
    'one:0'
    """
    best: tuple[str, tuple[float, float, float, float]] | None = None
    for name, values in cells.items():
        stats = mean_interval(values, confidence)
        if math.isfinite(stats[0]) and (best is None or stats[0] < best[1][0]):
            best = (name, stats)
    return best


def protection_interval(runs: Sequence[Metrics], attack: str, confidence: float = 0.95
                        ) -> tuple[float, float, float, float]:
    """(mean, sd, lo, hi) of ``attack``'s protection over the releases ``runs`` of one configuration, by the
    aggregation rule (module docstring): the mean over the releases with its interval; attribute inference the worst
    cell after averaging each cell over the releases (:func:`worst_cell`; the per-release protections when no release
    recorded its cells)."""
    if attack == "attribute_inference":
        cells: dict[str, list[float]] = {}
        for m in runs:
            found = m.attack(attack)
            for name, value in (found.cells if found is not None else ()):
                cells.setdefault(name, []).append(value)
        worst = worst_cell(cells, confidence)
        if worst is not None:
            return worst[1]
    return mean_interval([m.value(f"protection_{attack}") for m in runs], confidence)


@dataclass(frozen=True, eq=False)
class PointAnalysis:
    """One mechanism analysed over ``repetitions`` independent releases of the same released rows.

    ``first`` is the full analysis of the first release (its release, program and attack objects); ``runs`` holds
    every release's typed :class:`Metrics` — program, decision agreement AND attacks for every release (the aggregation
    rule, module docstring). With the same root seed, ``runs[i].row()`` equals row i of ``run_sweep`` on this single
    grid point without references.
    """

    mechanism: RecordMechanism | None
    first: AnalysisResult
    runs: tuple[Metrics, ...]

    @property
    def repetitions(self) -> int:
        return len(self.runs)

    def interval(self, metric: str, confidence: float = 0.95) -> tuple[float, float, float, float]:
        """(mean, sd, lo, hi) of ``metric`` over the repetitions (:func:`mean_interval`); for
        ``protection_attribute_inference`` the worst cell's (:func:`worst_cell`)."""
        if metric == "protection_attribute_inference":
            return self.protection("attribute_inference", confidence)
        return mean_interval([m.value(metric) for m in self.runs], confidence)

    def protection(self, attack: str, confidence: float = 0.95) -> tuple[float, float, float, float]:
        """(mean, sd, lo, hi) of ``attack``'s protection over the releases (:func:`protection_interval`)."""
        return protection_interval(self.runs, attack, confidence)

    @property
    def decision_agreement(self) -> tuple[float, float, float, float]:
        """Decision agreement with the non-private program over the repetitions: (mean, sd, lo, hi)."""
        return self.interval("decision_agreement")

    @property
    def no_data_agreement(self) -> dict[str, float]:
        """The agreement each rule that uses no data reaches with the non-private program (the same in every run)."""
        return dict(self.runs[0].agreement_baselines) if self.runs else {}

    def beaten_by(self, metric: str | None = None, confidence: float = 0.95) -> list[str]:
        """Trivial rules at least as good as this mechanism's program on ``metric`` (default: the headline) even at
        the favourable end of its interval over the repetitions (the mean for one repetition); [] without a
        program."""
        program = self.first.program
        if program is None:
            return []
        from engine.evaluation.programs import beaten_by, higher_is_better

        name = program.headline_metric if metric is None else metric
        mean, _, lo, hi = self.interval(name, confidence)
        best = hi if higher_is_better(name) else lo
        return beaten_by(best if math.isfinite(best) else mean, program.baselines, name)


#: Longest wait of :func:`analyse_mechanisms`' calling thread for its workers before it looks at its cancel token and
#: calls its progress callback again (a Stop, a closed tab or a server shutting down takes effect within it).
WAIT_SECONDS = 0.25

#: Modules an analysis imports on first use, imported before worker threads start: two threads importing the
#: same packages at once can deadlock on Python's import locks (one of them then gets a partly initialised module).
_ANALYSIS_MODULES: tuple[str, ...] = (
    "engine.attacks.singling_out",
    "engine.attacks.attribute_inference",
    "engine.attacks.known_records",
    "engine.attacks.distinguishing",
    "engine.evaluation.clustering",
    "engine.mechanisms",
)


def analyse_mechanisms(data: PreparedRows, mechanisms: Sequence[RecordMechanism], config: AnalysisConfig, *,
                       seed: int | None,
                       repetitions: int = 1, progress: ProgressCallback | None = None,
                       cancel: CancelToken | None = None, workers: int = 1) -> tuple[AnalysisData, list[PointAnalysis]]:
    """Analyse several mechanisms on the same released rows with the same seeds (the Mechanisms page's run).

    Seeds: the holdout comes from ``config.holdout_seed``; ``spawn_seeds(seed, repetitions + 1)`` gives child i
    to the i-th release of every mechanism — exactly the seeds ``run_sweep`` gives a one-point grid without
    references, so a page run and a sweep cell agree to the last digit.

    Parameters
    ----------
    data : PreparedData
    mechanisms : sequence of RecordMechanism
        The chosen mechanism first, then the alternatives to compare it with.
    config : AnalysisConfig
    seed : int
    repetitions : int
        Releases per mechanism, in [1, 100]: every release is scored and attacked, and every number gets an interval
        (the aggregation rule, module docstring).
    progress : callable, optional
        Called with a :class:`~engine.progress.Progress` (releases analysed of ``len(mechanisms) × repetitions``,
        with the time so far) after every release — and, with several workers, every :data:`WAIT_SECONDS` while
        they run — always from the calling thread; the dashboard draws its progress bar from it, and an exception it
        raises (Streamlit's stop of a closed or rerun session) ends the work there: the running releases stop at
        their next cancellation point.
    cancel : CancelToken, optional
        Checked before every release, inside attribute inference's search (:func:`analyse`) and, with several
        workers, every :data:`WAIT_SECONDS` while the calling thread waits for them; a cancelled token raises
        :class:`~engine.errors.CancelledError` within a fraction of a second.
    workers : int
        Threads that analyse releases at once, in [1, 16] (default 1). The numbers do not depend on it (every
        release has its own seed); the attacks' kernels and numpy release the interpreter lock, so 2 threads on 2
        cores take about 60 % of the time of one (nigeria-demo's page run: 9.9 s → 6.2 s).
    """
    reps = check_integer("repetitions", repetitions, 1, 100)
    n_workers = check_integer("workers", workers, 1, 16)
    seeds = spawn_seeds(seed, reps + 1)
    started = time.perf_counter()
    total = len(mechanisms) * reps
    done = 0

    last = [""]

    def step(what: str) -> None:
        last[0] = what
        if cancel is not None:
            cancel.raise_if_cancelled("the analysis")
        if progress is not None:
            progress(Progress(done, total, what, elapsed=time.perf_counter() - started))

    def label(mechanism: RecordMechanism) -> str:
        return getattr(type(mechanism), "LABEL", type(mechanism).__name__)

    step("holding out the attack's control group")
    built = AnalysisData.cached(data, config, workers=n_workers, cancel=cancel)
    results: dict[tuple[int, int], AnalysisResult] = {}
    tasks = [(m, r) for m in range(len(mechanisms)) for r in range(reps)]  # every release carries the attacks
    # What the releases check: the caller's token, and (with several workers) one set as well when the calling thread
    # stops waiting for any reason, so that the running releases stop too instead of finishing in the background.
    stopping = CancelToken() if cancel is None else cancel.child()

    def one(m: int, r: int) -> AnalysisResult:
        return analyse(built, mechanisms[m], seed=seeds[1 + r], attacks=True, cancel=stopping)

    if n_workers == 1 or len(tasks) == 1:
        for m, r in tasks:
            step(f"{label(mechanisms[m])}: release {r + 1} of {reps} with the attacks")
            results[m, r] = one(m, r)
            done += 1
    else:
        import concurrent.futures as cf
        import importlib

        for name in _ANALYSIS_MODULES:
            importlib.import_module(name)
        stop = False

        def guarded(m: int, r: int) -> AnalysisResult | None:
            return None if stop or stopping.cancelled else one(m, r)

        step(f"{label(mechanisms[0])}: release 1 of {reps} with the attacks ({n_workers} at once)")
        # No BLAS limit here: a limit (threadpoolctl, or OpenBLAS's "local" one, which is process-wide too in the
        # wheels' build) is one setting for the whole process, and sessions that overlap would restore each
        # other's. The Studio's server starts with one BLAS/OpenMP thread instead (ui/serve.py: with BLAS's own
        # threads on top of these, the threads outnumber the cores); a library caller keeps its own setting.
        pool = cf.ThreadPoolExecutor(n_workers, thread_name_prefix="analysis")
        # The first releases first (the numbers do not depend on the order: every release has its own seed).
        heavy_first = sorted(tasks, key=lambda task: (task[1] != 0, task))
        futures = {pool.submit(guarded, m, r): (m, r) for m, r in heavy_first}
        pending = set(futures)
        try:
            while pending:
                # A bounded wait: the caller's token and its progress callback are looked at every WAIT_SECONDS.
                finished, pending = cf.wait(pending, timeout=WAIT_SECONDS, return_when=cf.FIRST_COMPLETED)
                if not finished:
                    step(last[0])
                for future in sorted(finished, key=futures.__getitem__):
                    m, r = futures[future]
                    result = future.result()
                    if result is not None:
                        results[m, r] = result
                        done += 1
                    step(f"{label(mechanisms[m])}: release {r + 1} of {reps} done")
        except BaseException:
            stop = True  # releases not started yet are skipped; the running ones stop at their next check
            stopping.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    out = []
    for m, mechanism in enumerate(mechanisms):
        runs = tuple(results[m, r].metrics for r in range(reps))
        out.append(PointAnalysis(mechanism, results[m, 0], runs))
    step("done")
    return built, out


@dataclass(frozen=True)
class GammaCheck:
    """A γ target held against Theorem 1 and, as an agreement target, against the decision agreement measured on the
    data — two different statements, both said.

    Theorem 1's γ is a worst case: a (B, ε, δ)-TDP algorithm is γ-accurate when, on EVERY data set, each decision is
    the non-private one with probability ≥ γ; the theorem says which (B, ε, δ) rule that out (``allowed_by_theorem``).
    The decision agreement is an average over the people of THESE data and over releases; it can exceed the γ
    Theorem 1 allows without contradicting it, and it can be reached by a rule that uses no data at all.

    ``status`` is the agreement target's on these data: ``"met"`` (the whole interval is at or above the target),
    ``"not met"`` (the whole interval is below it), ``"undecided"`` (the interval straddles it), or ``"no data
    needed"`` (met, but a rule that uses no data — ``no_data_rule``, agreement ``no_data_value`` — meets it too).
    """

    target: float
    allowed_by_theorem: bool
    status: str
    text: str
    no_data_rule: str | None = None
    no_data_value: float = math.nan


def gamma_check(target: float, measured: tuple[float, float, float], *, b: float, epsilon: float,
                delta: float, no_data: Mapping[str, float] | None = None) -> GammaCheck:
    """Hold a γ target against Theorem 1 (a worst case over data sets) and against the decision agreement measured on
    the data ``(mean, lo, hi)`` (an average over people), flagging a target that a rule using no data meets
    (``no_data``: each such rule's agreement, :func:`~engine.evaluation.programs.no_data_agreement`).

    Examples
    --------
    >>> gamma_check(0.99, (0.71, 0.70, 0.72), b=0.4, epsilon=1.0, delta=1e-4).text
    'γ = 0.99: Theorem 1 does not rule it out at this (B, ε, δ); decision agreement on these data 0.71 (95 % interval 0.7 to 0.72) — target not met'

    The issue's togo example: B = 2, ε = 0.05, where Theorem 1 allows γ ≤ 0.513, the data agree 0.592 — and
    targeting nobody already agrees 0.75:

    >>> c = gamma_check(0.55, (0.592, 0.584, 0.601), b=2.0, epsilon=0.05, delta=1e-4,
    ...                 no_data={"target everybody": 0.25, "target nobody": 0.75})
    >>> c.allowed_by_theorem, c.status, c.no_data_rule
    (False, 'no data needed', 'target nobody')
    """
    from engine.theory.feasibility import is_feasible

    allowed = bool(is_feasible(b, target, epsilon, delta))
    mean, lo, hi = (float(v) for v in measured)
    head = f"γ = {target:g}: " + ("Theorem 1 does not rule it out at this (B, ε, δ)" if allowed else
                                  "Theorem 1 rules it out at this (B, ε, δ): no algorithm gets every decision right "
                                  "with probability ≥ γ on every data set")
    best_rule, best_value = None, math.nan
    for rule, value in (no_data or {}).items():
        if math.isfinite(value) and (best_rule is None or value > best_value):
            best_rule, best_value = rule, float(value)
    if not math.isfinite(mean):
        return GammaCheck(target, allowed, "undecided", head, best_rule, best_value)
    interval = (f"decision agreement on these data {mean:.4g}"
                + (f" (95 % interval {lo:.4g} to {hi:.4g})" if math.isfinite(lo) else ""))
    if math.isfinite(lo) and lo >= target:
        status, verdict = "met", "target met"
    elif (math.isfinite(hi) and hi < target) or (not math.isfinite(hi) and mean < target):
        status, verdict = "not met", "target not met"
    else:
        status, verdict = "undecided", "the interval straddles the target — run more releases to decide"
    if status == "met" and not allowed:
        verdict += (" on average over these people — Theorem 1's worst case is another statement: the agreement is "
                    "not a γ-accuracy guarantee")
    text = f"{head}; {interval} — {verdict}"
    if best_rule is not None and best_value >= target:
        if status == "met":
            status = "no data needed"
        text += (f". A rule that uses no data meets this target: '{best_rule}' agrees {best_value:.4g} with the "
                 "non-private program — choose a target above what no data gives")
    return GammaCheck(target, allowed, status, text, best_rule, best_value)
