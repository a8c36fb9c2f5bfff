"""Release a region × period count table subject to public information (the paper's case study, §4 / digest §7).

:class:`CountReleaseConfig` is the frozen, JSON round-trippable configuration (method, base, ε per period, the
declared public statistics, α, replicates, the dependence model and an optional larger Δ_z); :func:`release_counts`
runs it period by period with progress and cancel, and returns a :class:`CountRelease` holding the replicates and
the guarantee. Δ_z is never a free default: it is derived from the declared public statistics, the dependence model
and whether the table has a sub-count (:func:`~engine.public_info.dependence.derive_sensitivity`; with the total
public it is 2 per count, 4 for count + sub-count, for independent people). A requested Δ_z below the derived one is
refused with the reason, under every model.

Replicates: R releases of the same table are R draws of one mechanism on the same data. Published together they
spend R·ε per period (:func:`engine.accounting.composition.compose_replicates`, which the ``counts`` command states);
a seeded run is a simulation and is labelled not private.

Methods (per period t, with Z_t = the declared public statistics):

* ``"postprocess"`` — x + DL(ε/Δ_z) per count and sub-count, then the two-stage projection onto Z_t (§4.4):
  the public total (if declared) and 0 ≤ sub-count ≤ count (if declared; else each ≥ 0);
* ``"wasserstein"`` — the L1 Wasserstein exponential mechanism with base ``naive``, ``congenial`` (needs the
  total) or ``prior`` (needs the total and last period's counts: Dirichlet–multinomial with a_j = α·max(x_{j,t−1}, 1);
  in the first period, with no last period, a_j = α — equal shares).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from engine.errors import InvalidParameterError
from engine.progress import CancelToken, Progress, ProgressCallback
from engine.public_info.count_table import CountTable
from engine.public_info.dependence import DependenceModel, SensitivityDerivation, derive_sensitivity
from engine.public_info.discrete_laplace import sample_discrete_laplace
from engine.public_info.guarantee import PUBLIC_STATISTICS, TPGuarantee
from engine.public_info.projection import two_stage_projection
from engine.public_info.wasserstein import BASES, sample_congenial
from engine.serialization import Serializable
from engine.validation import check_choice, check_integer, check_interval, check_rng

__all__ = ["METHODS", "CountReleaseConfig", "CountRelease", "release_counts", "release_guarantee"]

METHODS = {
    "postprocess": "discrete Laplace noise, then the two-stage projection onto the public information",
    "wasserstein": "Wasserstein exponential mechanism (L1 loss) sampled exactly on a base measure built from Z",
}


@dataclass(frozen=True)
class CountReleaseConfig(Serializable):
    """What to release and how. ``epsilon`` is per period (of one release); the whole-study ε is reported both ways
    (G15). ``sensitivity`` is None to use the derived Δ_z (the default), or a larger Δ_z the user asks for."""

    KIND = "count_release"

    method: Literal["postprocess", "wasserstein"] = "wasserstein"
    base: Literal["naive", "congenial", "prior"] = "congenial"
    epsilon: float = 1.0
    public: tuple[str, ...] = ("last-period", "total", "subcount")
    alpha: float = 1.0
    replicates: int = 1
    sensitivity: float | None = None
    dependence: DependenceModel = DependenceModel()

    def __post_init__(self) -> None:
        check_choice("method", self.method, METHODS)
        check_choice("base", self.base, BASES)
        check_interval("epsilon", self.epsilon, 0, None, closed="neither")
        check_interval("alpha", self.alpha, 0, None, closed="neither")
        check_integer("replicates", self.replicates, 1, 10_000)
        if not isinstance(self.dependence, DependenceModel):
            raise InvalidParameterError(f"dependence must be a DependenceModel; got {type(self.dependence).__name__}")
        for p in self.public:
            check_choice("public", p, PUBLIC_STATISTICS, hint="declare any of last-period, total, subcount")
        if len(set(self.public)) != len(self.public):
            raise InvalidParameterError(f"public lists a statistic twice: {self.public!r}")
        if self.sensitivity is not None:  # at least a count table's Δ_z; the sub-count's is checked with the table
            self.delta_z(subcounts=False)
        if self.method == "wasserstein" and self.base in ("congenial", "prior") and "total" not in self.public:
            raise InvalidParameterError(
                f"the Wasserstein mechanism with the {self.base} base (base={self.base!r}) builds its support from "
                "the public total: declare 'total' public, or use the naive base (base='naive'; 'Wasserstein "
                "(naive)' among the dashboard's methods)"
            )
        if self.method == "wasserstein" and self.base == "prior" and "last-period" not in self.public:
            raise InvalidParameterError(
                "the Wasserstein mechanism with the prior base (base='prior') uses last period's counts: declare "
                "'last-period' public, or use the congenial base (base='congenial'; 'Wasserstein (congenial)' among "
                "the dashboard's methods)"
            )

    def delta_z(self, *, subcounts: bool) -> SensitivityDerivation:
        """The Δ_z a release of a table with (``subcounts=True``) or without a sub-count uses, and why.

        >>> CountReleaseConfig(public=("total",)).delta_z(subcounts=True).value
        4.0
        >>> CountReleaseConfig(public=("total",), sensitivity=3.0).delta_z(subcounts=True)
        Traceback (most recent call last):
        ...
        engine.errors.InvalidParameterError: sensitivity Δ_z = 3 is below the 4 this release needs (2 per count because the \
current total is public: one person's change moves two regions (one up, another down); independent people; \
doubled for the sub-count (each moved case moves at most one sub-count unit)): a release calibrated to 3 would not \
keep its ε. Leave Δ_z to be derived, or choose at least 4
        """
        return derive_sensitivity(self.public, self.dependence, subcounts=subcounts, requested=self.sensitivity)

    def noise_rate(self, *, subcounts: bool) -> float:
        """Rate a of the discrete Laplace noise DL(a) per count: ε/Δ_z for post-processing, ε/(2Δ_z) for the
        Wasserstein mechanism (the factor 2 of the exponential mechanism; the non-naive bases reuse the same a).

        >>> CountReleaseConfig(method="postprocess", public=()).noise_rate(subcounts=True)
        0.5
        >>> CountReleaseConfig(public=("total",)).noise_rate(subcounts=True)
        0.125
        """
        delta = self.delta_z(subcounts=subcounts).value
        if self.method == "postprocess":
            return self.epsilon / delta
        return self.epsilon / (2 * delta)

    @property
    def label(self) -> str:
        return "post-processing" if self.method == "postprocess" else f"Wasserstein ({self.base})"

    def cli_command(self, *, dataset: str | None = "counties-demo", input_file: str | None = None,
                    output: str = "released-counts.csv") -> str:
        """The ``python -m engine counts`` command that makes ONE release with this configuration — the release the
        guarantee describes. A study's ``replicates`` are simulations of the release, not releases to publish, so
        the command leaves them out (one release: publishing R replicates would spend R·ε, and averaging them
        would strip the noise); no seed, so the data holder's run draws its noise from the operating system.
        ``input_file`` instead of ``dataset`` for the data holder's own table (its columns are named with
        ``--count``/``--subcount``/… when they differ from the defaults).

        >>> CountReleaseConfig(epsilon=0.5, public=("total",), replicates=20).cli_command()
        'python -m engine counts --dataset counties-demo --method wasserstein --base congenial --epsilon 0.5 --public total --output released-counts.csv'
        >>> CountReleaseConfig(method="postprocess", epsilon=1.0, public=(), sensitivity=3.0).cli_command()
        "python -m engine counts --dataset counties-demo --method postprocess --epsilon 1 --public '' --sensitivity 3 --output released-counts.csv"
        """
        import shlex

        source = ["--input", input_file] if input_file is not None else ["--dataset", str(dataset)]
        parts = ["python", "-m", "engine", "counts", *source, "--method", self.method]
        if self.method == "wasserstein":  # the base measure is the Wasserstein mechanism's only
            parts += ["--base", self.base]
        parts += ["--epsilon", repr(float(self.epsilon)).removesuffix(".0"), "--public", ",".join(self.public)]
        if self.sensitivity is not None:
            parts += ["--sensitivity", repr(float(self.sensitivity)).removesuffix(".0")]
        if self.method == "wasserstein" and self.base == "prior":
            parts += ["--alpha", repr(float(self.alpha))]
        if self.dependence.kind == "correlated":
            parts += ["--dependence", f"{self.dependence.n},{self.dependence.z0!r},{self.dependence.z1!r}"]
        parts += ["--output", output]
        return shlex.join(parts)


@dataclass(frozen=True)
class CountRelease:
    """Released replicates: ``counts`` (R × J × T), ``subcounts`` (same or None), stage-1 ``regions`` codes of the
    post-processing method (R × J × T, see :data:`engine.public_info.projection.REGION_CODES`; None otherwise).
    ``guarantee`` is that of one replicate (all R published together: ``compose_replicates``)."""

    config: CountReleaseConfig
    counts: np.ndarray
    subcounts: np.ndarray | None
    guarantee: TPGuarantee
    regions: np.ndarray | None = None
    notes: tuple[str, ...] = field(default=())


def release_guarantee(config: CountReleaseConfig, periods: int, subcounts: bool) -> TPGuarantee:
    """The guarantee ONE release of ``periods`` periods under ``config`` is made under (``subcounts``: the table has a
    sub-count), with Δ_z and how it was derived.

    >>> g = release_guarantee(CountReleaseConfig(public=("total", "subcount")), 12, True)
    >>> g.epsilon, g.sensitivity, g.basis[:48]
    (1.0, 4.0, '2 per count because the current total is public:')
    """
    delta = config.delta_z(subcounts=subcounts)
    if config.method == "postprocess":
        mech = f"discrete Laplace DL(ε/{delta.value:g}) + two-stage projection (post-processing, Lemma 5)"
    else:
        mech = f"Wasserstein exponential mechanism (L1 loss, {config.base} base)"
    notes: tuple[str, ...] = (f"How Δ_z was derived: {delta.describe()}.",)
    if not delta.exact:
        notes += (f"Δ_z = {delta.derived:g} is an upper bound on the exact Wasserstein-∞ sensitivity (not computed): "
                  "the guarantee holds; the release may carry more noise than the least it needs.",)
    if config.dependence.kind == "fixed":
        notes += ("Independent people: household or outbreak correlation raises Δ_z (declare a correlated "
                  "dependence model).",)
    exact = True
    if config.method == "wasserstein" and config.base != "naive":
        exact = False
        notes += (
            "Approximate: the convolution sampler works in double precision and cuts each region's (and each partial "
            "sum's) support where its weight falls e^{-40} ≈ 4e-18 below the largest, a cut that depends on the data. "
            "The law it draws from is within a total variation of about 1e-17 per region and period of the "
            "mechanism's (an estimate, not a proven bound): read it as (ε, δ)-TP with δ of that order.",
        )
    return TPGuarantee(epsilon=config.epsilon, sensitivity=delta.value, public=config.public, mechanism=mech,
                       periods=periods, notes=notes, basis=delta.reason, exact=exact)


def release_counts(
    table: CountTable,
    config: CountReleaseConfig,
    *,
    rng: np.random.Generator,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
) -> CountRelease:
    """Release every period of ``table`` ``config.replicates`` times; progress after each period."""
    check_rng(rng)
    if not isinstance(config, CountReleaseConfig):
        raise InvalidParameterError(f"config must be a CountReleaseConfig; got {type(config).__name__}")
    j, t = table.counts.shape
    r = config.replicates
    has_d = table.subcounts is not None
    a = config.noise_rate(subcounts=has_d)  # refuses a requested Δ_z below the derived one, with the reason
    bound = "subcount" in config.public
    total_public = "total" in config.public
    out_c = np.zeros((r, j, t), dtype=np.int64)
    out_d = np.zeros((r, j, t), dtype=np.int64) if has_d else None
    regions = np.zeros((r, j, t), dtype=np.int8) if config.method == "postprocess" else None
    subcounts = table.subcounts
    d: np.ndarray | None
    for k in range(t):
        if cancel is not None:
            cancel.raise_if_cancelled("the count release")
        xc = table.counts[:, k]
        xd = subcounts[:, k] if subcounts is not None else None
        s = int(xc.sum())
        if config.method == "postprocess":
            yc = xc[None, :] + sample_discrete_laplace(a, (r, j), rng=rng)
            yd = xd[None, :] + sample_discrete_laplace(a, (r, j), rng=rng) if xd is not None else None
            if yd is not None and not bound:  # sub-counts projected on their own (≥ 0), counts on theirs
                c, _, reg = two_stage_projection(yc, None, s if total_public else None)
                d, _, _ = two_stage_projection(yd, None, None)
            else:
                c, d, reg = two_stage_projection(yc, yd, s if total_public else None)
            if regions is not None:
                regions[:, :, k] = reg
        else:
            if config.base == "naive":
                c = xc[None, :] + sample_discrete_laplace(a, (r, j), rng=rng)
                d = xd[None, :] + sample_discrete_laplace(a, (r, j), rng=rng) if xd is not None else None
            else:
                conc = None
                if config.base == "prior":
                    prev = table.counts[:, k - 1] if k > 0 else np.ones(j)
                    conc = config.alpha * np.maximum(prev, 1).astype(float)
                c, d = sample_congenial(xc, xd, s, a, r, rng=rng, concentration=conc, subcount_bound=bound)
        out_c[:, :, k] = c
        if out_d is not None and d is not None:
            out_d[:, :, k] = d
        if progress is not None:
            progress(Progress(k + 1, t, f"{config.label}: period {table.periods[k]}"))
    notes = tuple(table.notes)
    return CountRelease(config, out_c, out_d, release_guarantee(config, t, has_d), regions, notes)
