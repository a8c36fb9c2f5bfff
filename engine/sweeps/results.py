r"""Sweep results: the tidy table of a finished sweep, its per-point summary and the Pareto frontier.

Interval convention: :meth:`SweepResult.summary` reports, per grid point, the mean, the sample sd (ddof = 1)
and by default a 95 % confidence interval for the MEAN, mean ± t₀.₉₇₅,r−1 · sd/√r over the r repetitions
(``interval="runs"`` gives the 2.5–97.5 % range of single runs instead: what one release may give).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from engine.analysis import Metrics, mean_interval, worst_cell
from engine.errors import InvalidParameterError
from engine.evaluation.metrics import (
    ROUNDING_NOISE,
    attack_cell_columns,
    attack_cell_name,
    baseline_column,
    baseline_rules,
)
from engine.evaluation.programs import higher_is_better
from engine.mechanisms import RecordMechanism
from engine.sweeps.grid import DESCRIPTOR_COLUMNS, PROTECTION_COLUMNS, Budget, SweepConfig
from engine.validation import check_choice, check_interval

__all__ = ["SweepResult", "TrivialRule", "combined_summary", "pareto_mask"]


@dataclass(frozen=True)
class TrivialRule:
    """A rule that uses no data (target nobody, approve everyone, …) and its mean ``metric`` on a sweep's data."""

    rule: str
    metric: str
    value: float


@dataclass(frozen=True)
class SweepResult:
    """A finished (or, after a cancel, partial) sweep.

    Attributes
    ----------
    config : SweepConfig
    table : pandas.DataFrame
        Tidy table, one row per cell in cell order: descriptor columns (:data:`DESCRIPTOR_COLUMNS`), ``rep``,
        the program's metrics, ``<headline>_change`` and the program-specific relative metrics against the
        non-private model on the same rows, ``noise_sd`` (per-coordinate noise sd on the unbiased scale; 0 for the
        non-private release) and the protection columns (:data:`PROTECTION_COLUMNS`) with attack details:
        ``protection_singling_out`` (1 − worst-case share singled out) with ``singling_out_risk`` and
        ``singling_out_worst_net_size``; ``protection_attribute_inference`` (the paper's relative protection,
        worst cell) with the Anonymeter-style ``attribute_inference_risk`` and its ``_ci_low``/``_ci_high``;
        ``protection_distinguishing`` (smallest total error α + β of the best test telling two records apart —
        the hypothesis-testing view, comparable across mechanisms) and ``distinguishing_paper_d`` (the paper's
        D = 1/(U + 1)). The non-private release has distinguishing protection 0. Attribute inference also has one
        column per (adversary, secret column) cell, ``attribute_inference_cell:<knowledge>:<j>`` (that run's
        relative protection), so that :meth:`summary` can average every cell over the runs before taking the
        worst one. JL sweeps of a classification program add ``clustering_accuracy``.
    fingerprint : str
        Data fingerprint the sweep ran on.
    n_released, n_holdout : int
        Rows privatized and rows held out.
    complete : bool
        False for the partial result attached to a :class:`~engine.errors.CancelledError`.
    seconds : float
        Wall time of the run (not part of the table, which is deterministic).
    cpu_seconds : float
        CPU time spent in the cells, summed over workers (independent of how busy the machine is: divided by the
        number of free cores it predicts the wall time on an idle machine, pool start-up excluded).
    from_cache : bool
    """

    config: SweepConfig
    table: pd.DataFrame
    fingerprint: str = ""
    n_released: int = 0
    n_holdout: int = 0
    complete: bool = True
    seconds: float = math.nan
    cpu_seconds: float = math.nan
    from_cache: bool = False

    @classmethod
    def from_rows(cls, config: SweepConfig, rows: Sequence[Mapping[str, Any]], *, fingerprint: str = "") -> SweepResult:
        """The partial result of the rows finished so far (each an ``on_row`` row of
        :func:`engine.sweeps.run_sweep`; their ``cell`` index is dropped), marked ``complete=False``.

        >>> from engine.sweeps import preset
        >>> partial = SweepResult.from_rows(preset("quick", n=100), [{"cell": 0, "point": 0, "rep": 0}])
        >>> partial.complete, list(partial.table.columns)
        (False, ['point', 'rep'])
        """
        table = pd.DataFrame([dict(r) for r in rows]).drop(columns="cell", errors="ignore")
        return cls(config=config, table=table, fingerprint=fingerprint, complete=False)

    def __getstate__(self) -> dict:
        """Pickled without the summaries computed so far (:meth:`summary` makes them again when asked)."""
        return {k: v for k, v in self.__dict__.items() if k != "_summaries"}

    @property
    def metric_columns(self) -> list[str]:
        """Numeric outcome columns (everything except descriptors and ``rep``)."""
        skip = set(DESCRIPTOR_COLUMNS) | {"rep"}
        return [c for c in self.table.columns if c not in skip and pd.api.types.is_numeric_dtype(self.table[c])]

    @property
    def protection_columns(self) -> list[str]:
        return [c for c in PROTECTION_COLUMNS.values() if c in self.table.columns]

    def summary(self, interval: Literal["mean", "runs"] = "mean", confidence: float = 0.95) -> pd.DataFrame:
        """Per grid point: descriptors, ``runs`` and for every metric ``<m>_mean``, ``<m>_sd``, ``<m>_lo``, ``<m>_hi``.

        ``interval="mean"``: confidence interval of the mean, mean ± t · sd/√r (t the ``(1+confidence)/2``
        quantile of Student's t with r − 1 degrees of freedom; NaN for r = 1). ``interval="runs"``: the
        ``(1−confidence)/2`` and ``(1+confidence)/2`` quantiles of the single runs. sd uses ddof = 1.

        Attribute inference is a worst case over (adversary, secret column) cells. ``protection_attribute_inference_*``
        is the spec's statistic: each cell's relative protection is averaged over the runs FIRST, then the lowest
        cell is taken (its name in ``attribute_inference_worst_cell``, e.g. ``"half:3"``; sd and interval are that
        cell's). The mean of the per-run minima — lower, because a minimum of noisy values is biased low — is kept
        as ``protection_attribute_inference_per_run_min_*``. Tables without the per-cell columns (sweeps recorded
        before they existed) fall back to the per-run minima.
        """
        check_choice("interval", interval, ("mean", "runs"))
        level = check_interval("confidence", confidence, 0, 1, closed="neither")
        # A result is not changed once made (a partial one is a new object), so each summary is computed once per
        # result: a page draws several views of the same sweep at every rerun (flags, table, figures, the combined
        # table), and recomputing it was most of the Tradeoffs page's server time. Callers get a copy.
        cache: dict = self.__dict__.setdefault("_summaries", {})
        if (interval, level) not in cache:
            cache[(interval, level)] = self._summary(interval, level)
        return cache[(interval, level)].copy()

    def _summary(self, interval: str, level: float) -> pd.DataFrame:
        descriptors = [c for c in DESCRIPTOR_COLUMNS if c in self.table.columns]
        if self.table.empty or "point" not in self.table.columns:  # e.g. cancelled before the first cell
            return pd.DataFrame(columns=[*descriptors, "runs"])
        metrics = self.metric_columns
        cells = attack_cell_columns(metrics)
        ai = PROTECTION_COLUMNS["attribute_inference"]
        stats = ("mean", "sd", "lo", "hi")
        rows = []
        for _, group in self.table.groupby("point", sort=True):
            row: dict[str, Any] = {c: group[c].iloc[0] for c in descriptors}
            r = len(group)
            row["runs"] = r
            for m in metrics:
                values = group[m].to_numpy(dtype=float)
                values = values[np.isfinite(values)]
                k = values.size
                mean, sd, lo, hi = mean_interval(values, level)
                if interval == "runs":
                    lo, hi = (
                        (float(np.quantile(values, (1 - level) / 2)), float(np.quantile(values, (1 + level) / 2)))
                        if k
                        else (math.nan, math.nan)
                    )
                row[f"{m}_mean"] = mean
                row[f"{m}_sd"] = sd
                row[f"{m}_lo"] = lo
                row[f"{m}_hi"] = hi
            if cells and ai in metrics:
                for st in stats:
                    row[f"{ai}_per_run_min_{st}"] = row[f"{ai}_{st}"]
                # the aggregation rule (engine.analysis.worst_cell): each cell averaged over the runs first
                worst = worst_cell({c: group[c].to_numpy(dtype=float) for c in cells}, level)
                if worst is not None:
                    for st in stats:
                        row[f"{ai}_{st}"] = row[f"{worst[0]}_{st}"]
                    row["attribute_inference_worst_cell"] = attack_cell_name(worst[0])
            rows.append(row)
        shown = [m for m in metrics if m not in cells]
        columns = descriptors + ["runs"] + [f"{m}_{st}" for m in shown for st in stats]
        if cells and ai in metrics:
            columns += [f"{ai}_per_run_min_{st}" for st in stats] + ["attribute_inference_worst_cell"]
        return pd.DataFrame(rows, columns=columns)

    def no_better_than_trivial(self, metric: str | None = None, confidence: float = 0.95) -> pd.Series:
        """Per grid point of :meth:`summary`: the trivial rule (``baseline:<rule>:<metric>`` columns) that is at
        least as good as the point's mean ``metric`` even at the favourable end of its interval, else "".

        A point whose interval does not clear a rule that uses no data (target nobody, approve everyone, …) is no
        better than that rule on these data.
        """
        name = self.config.program.headline_metric if metric is None else metric
        summary = self.summary(confidence=confidence)
        up = higher_is_better(name)
        rules = self.trivial_rules(name)
        out = []
        for _, row in summary.iterrows():
            best = row.get(f"{name}_hi" if up else f"{name}_lo")
            if best is None or not np.isfinite(best):
                best = row.get(f"{name}_mean")
            found = ""
            for rule in rules:
                b = row.get(f"{baseline_column(rule, name)}_mean")
                # values that differ by floating-point rounding only tie (a mean of 5 equal profits ≠ that profit)
                slack = ROUNDING_NOISE * max(abs(b), abs(best)) if b is not None and best is not None else 0.0
                if b is not None and np.isfinite(b) and best is not None and np.isfinite(best) and (
                        (up and b >= best - slack) or (not up and b <= best + slack)):
                    found = rule
                    break
            out.append(found)
        return pd.Series(out, index=summary.index, name="no_better_than")

    def trivial_rules(self, metric: str) -> list[str]:
        """Names of the rules that use no data whose ``metric`` this sweep recorded (``baseline:<rule>:<metric>``)."""
        return baseline_rules(self.metric_columns, metric)

    def metrics_at(self, point: int) -> list[Metrics]:
        """The typed numbers of every run of grid point ``point`` (:meth:`engine.analysis.Metrics.from_row`)."""
        rows = self.table[self.table["point"] == int(point)].to_dict("records")
        headline = self.config.program.headline_metric
        return [Metrics.from_row(r, headline) for r in rows]

    def best_trivial(self, metric: str | None = None) -> TrivialRule | None:
        """The rule that uses no data scoring best on ``metric`` (default: the headline) on these data: each rule's
        ``baseline:<rule>:<metric>`` averaged over every cell of the sweep, the best mean by the metric's direction
        (:func:`~engine.evaluation.programs.higher_is_better`; the first rule on a tie). None when no rule recorded
        the metric (e.g. a sweep recorded before the rules were) or every value is missing.

        >>> from engine.sweeps import preset
        >>> table = pd.DataFrame({"point": [0, 1], "rep": [0, 0], "accuracy": [0.8, 0.6],
        ...                       "baseline:target everybody:accuracy": [0.3, 0.3],
        ...                       "baseline:target nobody:accuracy": [0.7, 0.7]})
        >>> SweepResult(preset("quick", n=100), table).best_trivial("accuracy")
        TrivialRule(rule='target nobody', metric='accuracy', value=0.7)
        """
        name = self.config.program.headline_metric if metric is None else metric
        sign = 1.0 if higher_is_better(name) else -1.0
        best: TrivialRule | None = None
        for rule in self.trivial_rules(name):
            values = self.table[baseline_column(rule, name)].to_numpy(dtype=float)
            values = values[np.isfinite(values)]
            if values.size and (best is None or sign * float(values.mean()) > sign * best.value):
                best = TrivialRule(rule=rule, metric=name, value=float(values.mean()))
        return best

    def flagged_summary(self, metric: str | None = None) -> pd.DataFrame:
        """:meth:`summary` with ``no_better_than`` (:meth:`no_better_than_trivial` on ``metric``)."""
        return self.summary().assign(no_better_than=self.no_better_than_trivial(metric).to_numpy())

    def mechanism_at(self, point: int, *, d: int | None = None) -> tuple[RecordMechanism, Budget] | None:
        """The configured mechanism of grid point ``point`` (:meth:`SweepConfig.mechanism_for` at the point's B and
        budget) and that budget; None for the non-private reference or a point not in the table. ``d`` is the
        number of features (needed by the JL release)."""
        rows = self.table[self.table["point"] == int(point)]
        if rows.empty or rows["reference"].iloc[0] == "non-private":
            return None
        row = rows.iloc[0]
        budget = Budget(float(row["epsilon1"]), float(row["delta1"]), float(row["epsilon2"]), float(row["delta2"]))
        return self.config.mechanism_for(float(row["b"]), budget, d=d), budget

    def reference_points(self) -> pd.DataFrame:
        """Summary rows of the non-private and classic-DP reference points."""
        summary = self.summary()
        return summary[summary["reference"].isin(["non-private", "classic-dp"])].reset_index(drop=True)

    def pareto(self, utility_metric: str | None = None,
               protection_metric: str = PROTECTION_COLUMNS["singling_out"]) -> pd.DataFrame:
        """Summary with a boolean ``pareto`` column: grid points no other point beats on both axes (means).

        A point is dominated when another point is at least as good on the utility (direction from
        :func:`~engine.evaluation.programs.higher_is_better`: larger is better unless the metric says otherwise,
        e.g. exclusion errors) and at least as protective, and strictly better on one. Points with a missing mean are never on
        the frontier. Reference points take part (they are real options).
        """
        utility = self.config.program.headline_metric if utility_metric is None else utility_metric
        for name in (utility, protection_metric):
            if name not in self.metric_columns:
                raise InvalidParameterError(
                    f"metric {name!r} is not in this sweep; choose one of {self.metric_columns}"
                )
        summary = self.summary()
        sign = 1.0 if higher_is_better(utility) else -1.0
        u = sign * summary[f"{utility}_mean"].to_numpy(dtype=float)
        p = summary[f"{protection_metric}_mean"].to_numpy(dtype=float)
        summary["pareto"] = pareto_mask(u, p)
        return summary


def combined_summary(results: Sequence[SweepResult], metric: str) -> pd.DataFrame:
    """The per-point summaries of sweeps run on the same rows (one per mechanism) as one table: the first sweep's
    non-private reference once, then every sweep's other points, each with ``no_better_than`` — the rule that uses
    no data that the point does not beat on ``metric`` (:meth:`SweepResult.no_better_than_trivial`; "" if none).
    """
    flagged = [r.flagged_summary(metric) for r in results]
    if not flagged:
        return pd.DataFrame()
    return pd.concat([s if i == 0 else s[s["reference"] != "non-private"] for i, s in enumerate(flagged)],
                     ignore_index=True)


def pareto_mask(utility: np.ndarray, protection: np.ndarray) -> np.ndarray:
    """Non-dominated points when both coordinates are to be maximised (NaN never on the frontier).

    >>> pareto_mask(np.array([1.0, 2.0, 2.0, 0.5]), np.array([3.0, 1.0, 0.5, 3.0])).tolist()
    [True, True, False, False]
    """
    u = np.asarray(utility, dtype=float)
    p = np.asarray(protection, dtype=float)
    ok = np.isfinite(u) & np.isfinite(p)
    mask = np.zeros(u.size, dtype=bool)
    for i in np.flatnonzero(ok):
        others = ok.copy()
        others[i] = False
        dominated = others & (u >= u[i]) & (p >= p[i]) & ((u > u[i]) | (p > p[i]))
        mask[i] = not dominated.any()
    return mask
