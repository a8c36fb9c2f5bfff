"""One release of a data set and its analysis beside the alternatives at the same guarantee: the Mechanisms page's run.

:func:`analyse_release` releases ALL rows with :func:`engine.release.run_release` (what the command line's
``privatize --config`` writes for a seeded configuration), then analyses the mechanism and the alternatives at the
same guarantee (:func:`engine.comparison.alternatives`) with :func:`engine.analysis.analyse_mechanisms` on the
released rows (all rows minus the attribute-inference holdout) — the numbers a one-point sweep gives for the same
seed. Both go through the one release function (:func:`engine.release.privatize`) and draw from one seed: the
download from ``make_rng(seed)``, the analysis from ``seed`` through :func:`engine.analysis.analysis_seeds`.

The download is therefore NOT one of the scored releases, and the run says so (:attr:`ReleaseAnalysis.download_note`):
it covers every row (the scored releases leave out the attacks' control group, which must never be released) and has
its own noise, from the same mechanism, sampler and distribution. Its sampler is numpy's floating-point one (the
dashboard is a what-if tool: OpenDP's exact sampler takes about 15 µs a value per core), named in the summary and the note,
which points to the command that makes the release with vetted noise.

Nothing here is new science: it orders engine calls and bundles their results, so that the dashboard holds no
formula (issue 10).

Example
-------
>>> from engine.data.demos import load_demo
>>> from engine.mechanisms.gaussian import GaussianMechanism
>>> from engine.release import ReleaseConfig
>>> from engine.analysis import AnalysisConfig
>>> demo = load_demo("togo-demo")
>>> frame = demo.frame.head(300)
>>> config = ReleaseConfig.of(demo.spec, GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-4), seed=3)
>>> run = analyse_release(frame, config, AnalysisConfig(attacks=("distinguishing",)),
...                       GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-4).guarantee(), seed=3, repetitions=2)
>>> run.kind, run.value.shape == (300, run.d), run.n_holdout, run.summary["seed"]
('gaussian', True, 0, 3)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from engine.analysis import AnalysisConfig, PointAnalysis, analyse_mechanisms
from engine.comparison import Finding, alternatives, comparison_verdict
from engine.guarantee import Guarantee
from engine.mechanisms import RecordMechanism
from engine.progress import CancelToken, Progress
from engine.release import ReleaseConfig, cli_command, release_summary, run_release
from engine.rng import make_rng
from engine.validation import check_integer

#: Releases per mechanism on the Mechanisms page: the program metrics and the decision agreement get a 95 % interval.
PAGE_REPETITIONS = 5
#: Threads of the Mechanisms page's run (releases analysed at once; the numbers do not depend on it): one per core,
#: at most 4 (the chosen mechanism and its three alternatives).
PAGE_THREADS = max(1, min(4, os.cpu_count() or 1))


#: Seconds above which the Mechanisms page says how long a run will take, and asks, before starting it.
CONFIRM_SECONDS = 10.0
#: CPU seconds of a run's work besides attribute inference, per release analysed (the release, the program's
#: cross-validated fit, singling out on the first; the non-private references spread over them): a + b·n·d + c·n·d²
#: for n released rows × d columns. Fitted to ``benchmarks/bench_wide.py`` (2,000 rows, the CPU seconds of the whole
#: run less attribute inference: 1.2 / 0.7 / 1.4 / 2.9 / 5.9 / 10.4 / 11.8 s at 10 / 50 / 100 / 200 / 300 / 450 / 500
#: columns, fitted 0.9 / 1.1 / 1.6 / 3.1 / 5.4 / 10.2 / 12.1), 2026-11-28 at a load of 7-8 on the 2 cores.
_OTHER_CPU = (0.04, 1.4e-7, 1.14e-9)


@dataclass(frozen=True)
class RunEstimate:
    """How long a Mechanisms run (:func:`analyse_release`) will take on this machine, before it starts.

    ``seconds`` is the wall time with the run's threads, ``cpu_seconds`` the work in all of them, ``attack_seconds``
    the attribute-inference attack's share (its search grows as d², :func:`engine.attacks.attribute_inference.
    attribute_inference_seconds`). Estimates from cost models, not bounds: a loaded machine takes longer.
    """

    seconds: float
    cpu_seconds: float
    attack_seconds: float
    n: int
    d: int
    mechanisms: int
    repetitions: int

    @property
    def needs_confirmation(self) -> bool:
        """More than :data:`CONFIRM_SECONDS`: the page says so and lets the user go on or cancel."""
        return self.seconds > CONFIRM_SECONDS

    def describe(self) -> str:
        """One sentence for the page.

        >>> RunEstimate(42.0, 80.0, 60.0, 2000, 450, 4, 5).describe()[:62]
        'This run will take about 42 s on this server (2,000 rows × 450'
        """
        from engine.progress import format_seconds

        return (f"This run will take about {format_seconds(self.seconds)} on this server ({self.n:,} rows × "
                f"{self.d:,} columns, {self.mechanisms} mechanisms × {self.repetitions} releases). Most of it is the "
                f"attribute-inference attack (about {format_seconds(self.attack_seconds)} of computing): for each "
                f"mechanism it compares every target with every released row on about {self.d:,} sets of known "
                "columns, so its cost grows with the square of the number of columns. Leaving columns out (on the "
                "Data page) shortens it.")


def estimate_release_analysis(config: ReleaseConfig, analysis: AnalysisConfig, candidate: Guarantee, *, n: int, d: int,
                              repetitions: int = PAGE_REPETITIONS, workers: int = PAGE_THREADS) -> RunEstimate:
    """What :func:`analyse_release` of ``config`` on n rows × d features will take, without the data.

    The attribute-inference attack's cost model (:func:`engine.attacks.attribute_inference.
    attribute_inference_seconds`) for every release (the chosen mechanism and each alternative at ``candidate``'s
    guarantee, ``repetitions`` releases each: every release is attacked), plus the releases and programs
    (:data:`_OTHER_CPU` per release); the wall time divides the work between ``workers`` threads on this machine's
    cores.

    Parameters
    ----------
    config, analysis, candidate
        As for :func:`analyse_release`.
    n, d : int
        Rows and features of the prepared data.
    repetitions, workers : int
        As for :func:`analyse_release`.
    """
    from engine.attacks.attribute_inference import attribute_inference_seconds, default_holdout_size

    nn = check_integer("n", n, 1, None)
    dd = check_integer("d", d, 1, None)
    reps = check_integer("repetitions", repetitions, 1, None)
    threads = check_integer("workers", workers, 1, None)
    mechanism = config.build_mechanism()
    mechanisms = 1 + len(alternatives(mechanism, d=dd, candidate=candidate))
    attack = 0.0
    n_released = nn
    if "attribute_inference" in analysis.attacks and dd >= 2 and nn >= 2:
        holdout = default_holdout_size(nn) if analysis.holdout is None else min(analysis.holdout, nn - 1)
        n_released = nn - holdout
        # every release is attacked (the aggregation rule of engine.analysis): repetitions × mechanisms attacks
        attack = mechanisms * reps * attribute_inference_seconds(n_released, holdout, dd, analysis.attack_configs()[1])
    a, b, c = _OTHER_CPU
    other = mechanisms * reps * (a + b * n_released * dd + c * n_released * dd * dd)
    cpu = attack + other
    parallel = max(1, min(threads, os.cpu_count() or 1, mechanisms * reps))
    return RunEstimate(cpu / parallel, cpu, attack, nn, dd, mechanisms, reps)


@dataclass(frozen=True)
class ReleaseAnalysis:
    """One release of the data with one mechanism, and its analysis beside the alternatives.

    ``value`` is the downloadable release of ALL rows on its output scale (``details["output_scale"]``), ``d`` the
    number of features of the prepared data;
    ``measured_sd`` is the sample sd over rows of (value / output_scale − x) per feature (NaN for a projected
    release, whose columns are not the features). ``points[0]`` is this mechanism's analysis, the rest the
    alternatives at the same guarantee; ``findings`` the honest comparison's verdicts (:mod:`engine.comparison`);
    ``summary`` the JSON-ready account (:func:`engine.release.release_summary` plus the program, the protection
    scores and the command that redoes the release). ``sampler`` names the sampler of the downloadable release and
    ``download_note`` says how it relates to the scored releases.
    """

    mechanism: RecordMechanism
    value: np.ndarray
    d: int
    details: dict[str, Any]
    headline: str
    describe: tuple[str, ...]
    implied_headline: str | None
    is_dp: bool
    measured_sd: np.ndarray
    points: tuple[PointAnalysis, ...]
    findings: tuple[Finding, ...]
    n_holdout: int
    n_released: int
    summary: dict[str, Any]
    seconds: float
    sampler: str = "numpy"
    download_note: str = ""

    @property
    def kind(self) -> str:
        return type(self.mechanism).KIND

    @property
    def label(self) -> str:
        return type(self.mechanism).LABEL

    @property
    def projected(self) -> bool:
        """True when the release's columns are not the features (the JL release Z has k columns)."""
        return self.value.shape[1] != self.d

    @property
    def output_scale(self) -> float:
        """E[release] = output_scale × X (1 = unbiased; 1/k = the private projection's as-printed output)."""
        return float(self.details.get("output_scale", 1.0) or 1.0)

    @property
    def analysis(self):
        """The chosen mechanism's full analysis (first release): program, decision agreement, attacks."""
        return self.points[0].first

    @property
    def program(self):
        return self.analysis.program

    @property
    def baseline(self):
        return self.analysis.baseline

    @property
    def singling_out(self):
        return self.analysis.singling_out

    @property
    def attribute_inference(self):
        return self.analysis.attribute_inference

    def protection(self, attack: str) -> tuple[float, float, float, float]:
        """(mean, sd, lo, hi) of the chosen mechanism's protection against ``attack`` over its releases (the
        aggregation rule: :meth:`engine.analysis.PointAnalysis.protection`)."""
        return self.points[0].protection(attack)

    @property
    def distinguishing(self):
        return self.analysis.distinguishing

    @property
    def n_known(self) -> int:
        return self.analysis.n_known


def analyse_release(
    frame: pd.DataFrame,
    config: ReleaseConfig,
    analysis: AnalysisConfig,
    candidate: Guarantee,
    *,
    seed: int,
    repetitions: int = PAGE_REPETITIONS,
    progress: Callable[[Progress], None] | None = None,
    workers: int = 1,
    cancel: CancelToken | None = None,
) -> ReleaseAnalysis:
    """Release ``frame`` with ``config`` and analyse it beside the alternatives at ``candidate``'s guarantee.

    Parameters
    ----------
    frame : pandas.DataFrame
        The raw table (prepared here with ``config.data``, as the command line does).
    config : ReleaseConfig
        Data spec, mechanism and the seed to RECORD: ``config.seed`` is None for a real release, whose
        ``seed`` (below) was drawn from the operating system and is then never shown (``summary["seed"]`` None).
    analysis : AnalysisConfig
        Program, attacks and adversary of the analysis.
    candidate : Guarantee
        The (B, ε, δ) the alternatives are configured at (:func:`engine.comparison.alternatives`).
    seed : int
        The one seed of the release and its analysis (≥ 0).
    repetitions : int
        Releases per mechanism (≥ 1): every release is scored and attacked, and every number gets an interval
        over them (:func:`engine.analysis.analyse_mechanisms`).
    progress : callable, optional
        Receives :class:`engine.progress.Progress` after every release of the analysis.
    workers : int
        Threads analysing releases at once (:func:`engine.analysis.analyse_mechanisms`; the numbers do not
        depend on it).
    cancel : CancelToken, optional
        Checked after the release and throughout the analysis (:func:`engine.analysis.analyse_mechanisms`); a
        cancel raises :class:`~engine.errors.CancelledError`.

    Returns
    -------
    ReleaseAnalysis
    """
    check_integer("seed", seed, 0, None)
    check_integer("repetitions", repetitions, 1, None)
    started = time.perf_counter()
    mechanism = config.build_mechanism()
    # The download: all rows, through the one release function, numpy's sampler (named: see the module docstring).
    prepared, release = run_release(frame, config, rng=make_rng(seed), sampler="numpy")
    value = np.asarray(release.value, dtype=float)
    scale = float(release.details.get("output_scale", 1.0) or 1.0)
    projected = value.shape[1] != prepared.d
    measured_sd = np.full(prepared.d, np.nan) if projected else np.std(value / scale - prepared.x, axis=0, ddof=1)

    others = alternatives(mechanism, d=prepared.d, candidate=candidate)
    data, points = analyse_mechanisms(prepared, [mechanism, *others], analysis, seed=seed, repetitions=repetitions,
                                      progress=progress, workers=workers, cancel=cancel)
    first = points[0].first

    guarantee = release.guarantee
    implied = guarantee.implied_dp()
    summary = release_summary(prepared, release, config, seconds=time.perf_counter() - started)
    summary["seed"] = config.seed
    program = first.program
    gamma = points[0].decision_agreement
    summary["program"] = None if program is None else {
        "kind": program.kind, "headline_metric": program.headline_metric, "metrics": dict(program.metrics),
        "decision_agreement": {"mean": gamma[0], "ci_low": gamma[2], "ci_high": gamma[3],
                               "repetitions": points[0].repetitions, "no_data_rules": points[0].no_data_agreement},
        "no_better_than": program.beaten_by(),
        "evaluated_on": f"{data.n_released} released rows ({data.n_holdout} held out as the attack's control group)",
    }
    dist = first.distinguishing
    protection: dict[str, Any] = {}
    for attack, result in (("singling_out", first.singling_out), ("attribute_inference", first.attribute_inference),
                           ("distinguishing", dist)):
        mean, _, lo, hi = points[0].protection(attack)
        protection[attack] = None if result is None else mean
        protection[f"{attack}_interval"] = None if result is None else [lo, hi]
    protection["distinguishing_paper_D"] = None if dist is None else float(dist.expected_loss_score)
    protection["aggregation"] = (
        f"mean over the {points[0].repetitions} releases, every release attacked (attribute inference: each "
        "(adversary, secret column) cell averaged over the releases, then the worst cell), with 95 % intervals"
    )
    summary["protection"] = protection
    if projected:
        summary["protection"]["adversary"] = (
            f"knows {first.n_known} original records, not the secret projection P (known-record reconstruction)"
        )
    summary["cli_command"] = cli_command("release-config.json",
                                         input_file=None if config.dataset else "your-data.csv")
    sampler = str(release.details.get("sampler", "numpy"))
    download_note = (
        f"The download is a release of all {prepared.n:,} rows drawn for it (same mechanism, sampler and "
        f"distribution as the scored releases, its own noise): the scores come from {points[0].repetitions} "
        f"releases of the {data.n_released:,} rows outside the attacks' control group"
        + (f" ({data.n_holdout:,} rows, never released in the analysis)" if data.n_holdout else "")
        + f". {summary['sampler']['note']}"
    )
    summary["download"] = download_note
    return ReleaseAnalysis(
        mechanism=mechanism,
        value=value,
        d=int(prepared.d),
        details=dict(release.details),
        headline=guarantee.headline(),
        describe=tuple(guarantee.describe()),
        implied_headline=None if implied is guarantee else implied.headline(),
        is_dp=mechanism.tags().differentially_private,
        measured_sd=measured_sd,
        points=tuple(points),
        findings=tuple(comparison_verdict(points)),
        n_holdout=data.n_holdout,
        n_released=data.n_released,
        summary=summary,
        seconds=time.perf_counter() - started,
        sampler=sampler,
        download_note=download_note,
    )


__all__ = ["CONFIRM_SECONDS", "PAGE_REPETITIONS", "ReleaseAnalysis", "RunEstimate", "analyse_release",
           "estimate_release_analysis"]
