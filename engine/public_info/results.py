"""Everything the dashboard's "Public information" page draws for a count-table study (the paper's Figures 1–3).

:func:`build_count_study` runs methods × ε × replicates on a :class:`~engine.public_info.count_table.CountTable`
with a progress callback and a cancel token and returns a :class:`CountStudyResults`:

* Figure 1 — per highlighted region, the released counts (and rates per 100,000 when populations are known) over
  replicates × periods, with the truth;
* Figure 2 — relative errors |ŷ − x| / x over all cells with x > 0, by method and ε, with quantile summaries;
* Figure 3 — frequency of the contraction effects for the highlighted regions: released count 0 while the truth is
  positive (CaseZeros), released sub-count 0 while the truth is positive (SubcountZeros), released sub-count equal
  to a positive released count while the true sub-count is smaller (ContractedRates); for post-processing also the
  stage-1 regions of digest §7.5 (polar, axis, diagonal).

Every cell carries the guarantee it was made under. Highlighted regions default to the largest, the one closest
to 270,000 (a mid-sized county, like Erie) and the smallest — by population, or by total count without populations.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from engine.errors import InvalidParameterError
from engine.progress import CancelToken, Progress, ProgressCallback
from engine.public_info.conditioning import condition_on_public
from engine.public_info.count_release import CountReleaseConfig, release_counts, release_guarantee
from engine.public_info.count_table import CountTable
from engine.public_info.dependence import DependenceModel, SensitivityDerivation
from engine.public_info.discrete_laplace import dl_mean_abs, dl_variance
from engine.public_info.guarantee import PUBLIC_STATISTICS, TPGuarantee
from engine.public_info.projection import REGION_CODES
from engine.public_info.semantics import posterior_band
from engine.serialization import Serializable
from engine.validation import check_choice, check_integer, check_interval, check_rng

__all__ = ["STUDY_METHODS", "CountStudyConfig", "StudyCell", "CountStudyResults", "DependenceSummary",
           "default_highlights", "build_count_study", "run_count_study", "dependence_summary"]

#: Method keys of a study → (method, base).
STUDY_METHODS: dict[str, tuple[Literal["postprocess", "wasserstein"], Literal["naive", "congenial", "prior"]]] = {
    "postprocess": ("postprocess", "congenial"),
    "wasserstein-naive": ("wasserstein", "naive"),
    "wasserstein-congenial": ("wasserstein", "congenial"),
    "wasserstein-prior": ("wasserstein", "prior"),
}
MID_POPULATION = 270_000


@dataclass(frozen=True)
class CountStudyConfig(Serializable):
    """Methods × ε grid × replicates of a count-table study (JSON round-trippable for the decision record)."""

    KIND = "count_study"

    methods: tuple[str, ...] = ("postprocess", "wasserstein-naive", "wasserstein-congenial", "wasserstein-prior")
    epsilons: tuple[float, ...] = (0.01, 1.0)
    replicates: int = 100
    public: tuple[str, ...] = ("last-period", "total", "subcount")
    alpha: float = 1.0
    sensitivity: float | None = None  # None: the Δ_z derived from the public statistics and the dependence model
    highlight: tuple[str, ...] = ()
    dependence: DependenceModel = DependenceModel()

    def __post_init__(self) -> None:
        if not self.methods:
            raise InvalidParameterError("methods must list at least one of " + ", ".join(STUDY_METHODS))
        for m in self.methods:
            check_choice("methods", m, STUDY_METHODS)
        if not self.epsilons:
            raise InvalidParameterError("epsilons must list at least one ε > 0")
        for e in self.epsilons:
            check_interval("epsilons", e, 0, None, closed="neither")
        check_integer("replicates", self.replicates, 1, 10_000)
        for p in self.public:
            check_choice("public", p, PUBLIC_STATISTICS)
        check_interval("alpha", self.alpha, 0, None, closed="neither")
        for m in self.methods:  # the release configs validate the public-information requirements
            self.release_config(m, self.epsilons[0])

    def release_config(self, method_key: str, epsilon: float) -> CountReleaseConfig:
        method, base = STUDY_METHODS[method_key]
        return CountReleaseConfig(method=method, base=base, epsilon=epsilon, public=self.public, alpha=self.alpha,
                                  replicates=self.replicates, sensitivity=self.sensitivity,
                                  dependence=self.dependence)

    def release_configs(self) -> tuple[CountReleaseConfig, ...]:
        """The :class:`CountReleaseConfig` of every (method, ε) cell, methods first (the decision record lists them).

        >>> [(c.method, c.base, c.epsilon) for c in CountStudyConfig(methods=("postprocess",),
        ...                                                           epsilons=(0.5, 1.0)).release_configs()]
        [('postprocess', 'congenial', 0.5), ('postprocess', 'congenial', 1.0)]
        """
        return tuple(self.release_config(m, e) for m in self.methods for e in self.epsilons)


@dataclass(frozen=True)
class StudyCell:
    """One method at one ε: what Figures 1–3 need, and the guarantee."""

    method: str
    label: str
    epsilon: float
    guarantee: TPGuarantee
    released: np.ndarray  # (R, H, T) released counts of the highlighted regions
    released_subcounts: np.ndarray | None  # (R, H, T)
    released_rates: np.ndarray | None  # (R, H, T) per 100,000 population
    relative_error: np.ndarray  # all (replicate, region, period) cells with truth > 0, flattened
    error_quantiles: dict[str, float]
    contraction: dict[str, dict[str, float]]  # highlighted region → effect → frequency over replicates × periods
    seconds: float


@dataclass(frozen=True)
class CountStudyResults:
    config: CountStudyConfig
    regions: tuple[str, ...]  # highlighted
    periods: tuple[str, ...]
    truth: np.ndarray  # (H, T) counts
    truth_subcounts: np.ndarray | None
    truth_rates: np.ndarray | None  # per 100,000
    cells: tuple[StudyCell, ...]
    synthetic: bool
    notes: tuple[str, ...] = field(default=())

    def cell(self, method: str, epsilon: float) -> StudyCell:
        for c in self.cells:
            if c.method == method and c.epsilon == epsilon:
                return c
        raise InvalidParameterError(f"no study cell for method {method!r} at ε = {epsilon:g}")


def default_highlights(table: CountTable) -> tuple[str, ...]:
    """Largest, mid-sized (closest to 270,000 population, or the median total) and smallest region."""
    size = table.population if table.population is not None else table.counts.sum(axis=1)
    order = np.argsort(-size, kind="stable")
    largest, smallest = int(order[0]), int(order[-1])
    target = MID_POPULATION if table.population is not None else float(np.median(size))
    rest = [i for i in order if i not in (largest, smallest)]
    picks = [largest]
    if rest:
        picks.append(int(min(rest, key=lambda i: abs(float(size[i]) - target))))
    if smallest != largest:
        picks.append(smallest)
    return tuple(table.regions[i] for i in picks)


def _contraction(c, d, truth_c, truth_d, regions_code) -> dict[str, float]:
    out = {"CaseZeros": float(np.mean((c == 0) & (truth_c > 0)))}
    if d is not None:
        out["SubcountZeros"] = float(np.mean((d == 0) & (truth_d > 0)))
        out["ContractedRates"] = float(np.mean((d == c) & (c > 0) & (truth_d < truth_c)))
    if regions_code is not None:
        for code, name in REGION_CODES.items():
            if code:
                out[f"stage1_{name}"] = float(np.mean(regions_code == code))
    return out


def build_count_study(
    table: CountTable,
    config: CountStudyConfig,
    *,
    rng: np.random.Generator,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
) -> CountStudyResults:
    """Run the study (methods × ε × replicates); progress after each period of each cell, cancel between periods."""
    check_rng(rng)
    if not isinstance(config, CountStudyConfig):
        raise InvalidParameterError(f"config must be a CountStudyConfig; got {type(config).__name__}")
    names = config.highlight or default_highlights(table)
    index = {r: i for i, r in enumerate(table.regions)}
    for r in names:
        if r not in index:
            raise InvalidParameterError(f"highlight names region {r!r}, which is not in the table")
    h = np.array([index[r] for r in names])
    t = len(table.periods)
    total = len(config.methods) * len(config.epsilons) * t
    per100k = None if table.population is None else 1e5 / table.population[h][:, None]
    truth = table.counts[h]
    truth_d = None if table.subcounts is None else table.subcounts[h]
    cells = []
    done = 0
    for key in config.methods:
        for eps in config.epsilons:
            cfg = config.release_config(key, eps)
            offset = done

            def relay(p: Progress, offset=offset, label=cfg.label, eps=eps) -> None:
                if progress is not None:
                    progress(Progress(offset + p.done, total, f"{label}, ε = {eps:g}: {p.message.split(': ')[-1]}"))

            started = time.perf_counter()
            rel = release_counts(table, cfg, rng=rng, progress=relay, cancel=cancel)
            seconds = time.perf_counter() - started
            done += t
            pos = table.counts > 0
            errors = (np.abs(rel.counts - table.counts[None]) / np.where(pos, table.counts, 1)[None])[:, pos].ravel()
            q = np.quantile(errors, [0.5, 0.95, 1.0]) if errors.size else np.full(3, np.nan)
            c_h = rel.counts[:, h]
            d_h = None if rel.subcounts is None else rel.subcounts[:, h]
            contraction = {
                names[k]: _contraction(
                    c_h[:, k], None if d_h is None else d_h[:, k], truth[k][None],
                    None if truth_d is None else truth_d[k][None],
                    None if rel.regions is None else rel.regions[:, h[k]],
                )
                for k in range(h.size)
            }
            cells.append(StudyCell(
                method=key, label=cfg.label, epsilon=eps, guarantee=rel.guarantee, released=c_h,
                released_subcounts=d_h, released_rates=None if per100k is None else c_h * per100k[None],
                relative_error=errors, error_quantiles={"median": float(q[0]), "p95": float(q[1]), "max": float(q[2])},
                contraction=contraction, seconds=seconds,
            ))
    return CountStudyResults(
        config=config, regions=tuple(names), periods=table.periods, truth=truth, truth_subcounts=truth_d,
        truth_rates=None if per100k is None else truth * per100k, cells=tuple(cells), synthetic=table.synthetic,
        notes=table.notes,
    )


def run_count_study(
    table: CountTable,
    config: CountStudyConfig,
    *,
    rng: np.random.Generator,
    on_progress: ProgressCallback | None = None,
    on_cell: Callable[[CountStudyResults], None] | None = None,
    cancel: CancelToken | None = None,
) -> CountStudyResults:
    """:func:`build_count_study` one (method, ε) cell at a time with the ONE generator ``rng``, so the numbers are
    those of a single ``build_count_study(table, config, rng=rng)`` call; ``on_progress`` counts periods over the
    whole study and ``on_cell`` receives the results of the cells finished so far after each cell (what a page keeps
    when the run is cancelled: :class:`~engine.errors.CancelledError` propagates)."""
    check_rng(rng)
    names = config.highlight or default_highlights(table)
    cells: list[StudyCell] = []
    units = len(config.methods) * len(config.epsilons) * len(table.periods)
    first: CountStudyResults | None = None
    for key in config.methods:
        for eps in config.epsilons:
            offset = len(cells) * len(table.periods)

            def relay(p: Progress, offset=offset) -> None:
                if on_progress is not None:
                    on_progress(Progress(offset + p.done, units, p.message))

            one = dataclasses.replace(config, methods=(key,), epsilons=(eps,), highlight=names)
            part = build_count_study(table, one, rng=rng, progress=relay, cancel=cancel)
            first = first or part
            cells.extend(part.cells)
            if on_cell is not None:
                on_cell(dataclasses.replace(first, config=config, cells=tuple(cells)))
    assert first is not None  # config.methods and config.epsilons are never empty (validated)
    return dataclasses.replace(first, config=config, cells=tuple(cells))


@dataclass(frozen=True)
class DependenceSummary:
    """What the page shows about Δ_z, the noise and the guarantee of a study at its first ε."""

    correlated_delta: int | None  # Δ_z of one count under the (n, z0, z1) family, or None for the fixed model
    release_delta: SensitivityDerivation  # Δ_z the releases use, and how it was derived
    noise: tuple[tuple[str, float, float, float], ...]  # (method label, DL rate a, sd, E|noise|) per method
    guarantee: TPGuarantee  # of the first method's release of ``periods`` periods
    conditioned: TPGuarantee  # an ε-DP release resampled until it agrees with Z (Lemma 8: 2ε)
    band: tuple[float, float]  # Lemma 4's posterior band for the adversary's prior


def dependence_summary(config: CountStudyConfig, periods: int, subcounts: bool, prior: float) -> DependenceSummary:
    """Δ_z, each method's discrete-Laplace noise (rate a, sd, E|noise|), the guarantee, its conditioned version and
    the posterior band of a study at its first ε (``subcounts``: the table has a sub-count).

    With the total public, count + sub-count: Δ_z = 4, so DL(ε/4) noise (digest G15).

    >>> s = dependence_summary(CountStudyConfig(methods=("postprocess",), epsilons=(1.0,)), 12, True, 0.5)
    >>> s.correlated_delta, s.release_delta.value, s.guarantee.epsilon, s.conditioned.epsilon
    (None, 4.0, 1.0, 2.0)
    >>> label, a, sd, mae = s.noise[0]
    >>> round(a, 4), round(sd, 4), round(mae, 4), tuple(round(x, 5) for x in s.band)
    (0.25, 5.6421, 3.9586, (0.26894, 0.73106))
    """
    model = config.dependence
    eps = config.epsilons[0]
    noise = []
    for key in config.methods:
        cfg = config.release_config(key, eps)
        a = cfg.noise_rate(subcounts=subcounts)
        noise.append((cfg.label, a, float(np.sqrt(dl_variance(a))), dl_mean_abs(a)))
    guarantee = release_guarantee(config.release_config(config.methods[0], eps), periods, subcounts)
    lo, hi = posterior_band(eps, prior)
    return DependenceSummary(
        correlated_delta=model.count_sensitivity if model.kind == "correlated" else None,
        release_delta=config.release_config(config.methods[0], eps).delta_z(subcounts=subcounts), noise=tuple(noise), guarantee=guarantee,
        conditioned=condition_on_public(guarantee), band=(float(lo), float(hi)),
    )
