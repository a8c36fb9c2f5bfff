"""The Mechanisms page's result sections, drawn from one :class:`engine.release_analysis.ReleaseAnalysis`.

What it guarantees, what it does to the data, what it costs the program and buys against the attacks, the honest
comparison at the same guarantee and the download. Every number is the engine's (the run, its mechanism object and
the data-free caches of :mod:`ui.cached`); nothing here computes one.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from engine.attacks.threat_model import protection_in_words
from engine.comparison import same_guarantee
from engine.data.preparation import PreparedData
from engine.evaluation.metrics import resolved_difference
from engine.evaluation.programs import METRICS, ProgramConfig
from engine.export_csv import safe_csv_bytes
from engine.guarantee import Guarantee
from engine.mechanisms.base import ReportTable
from engine.release_analysis import PAGE_REPETITIONS, ReleaseAnalysis
from ui.cached import distance_recovery, noise_advice
from ui.common import (
    SMALL_NUMBER_FORMAT,
    b_in_data_units,
    comparison_table,
    distinguishing_basis,
    distinguishing_note,
    gamma_verdicts,
    plain,
    program_table,
)
from ui.figures.mechanisms import (
    comparison_figure,
    distance_recovery_figure,
    noise_by_coordinate_figure,
    original_vs_private_figure,
    projected_columns_figure,
)
from ui.figures.theme import MECHANISM_COLORS, exact, fmt
from ui.state import seed_widget


def draw_guarantee(run: ReleaseAnalysis, prepared: PreparedData) -> None:
    """What the release guarantees: the headline, the noise and the mechanism's own parameters."""
    st.markdown("#### What it guarantees")
    (st.success if run.is_dp else st.error)(run.headline, icon=":material/shield:")
    for line in run.describe[1:]:
        st.markdown(f"- {line}")
    if run.implied_headline:
        st.markdown(f"**Implied classic DP (switch lemma):** {run.implied_headline}")
    reported_sd = run.details.get("noise_sd_per_coordinate")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Noise sd per coordinate", fmt(reported_sd) if reported_sd is not None else "none",
              help="Standard deviation of the noise added to each value, on the prepared (unbiased) scale, as "
              f"reported by the mechanism for this run. Exact: {exact(reported_sd)}" if reported_sd is not None else
              "k-anonymity adds no noise: it replaces rows by their class means.")
    report = run.mechanism.report(run.details)
    for column, figure in zip((m2, m3, m4), report.metrics, strict=False):
        value = figure.value
        shown = fmt(value) if isinstance(value, (int, float)) else (str(value) if value is not None else "—")
        column.metric(figure.label, shown, help=figure.help + (
            f" Exact: {exact(value)}" if isinstance(value, float) else ""))
    for table in report.tables:
        st.dataframe(_report_frame(table), hide_index=True, width="stretch", key=f"mechanisms.{table.key}_table",
                     column_config={"δ": st.column_config.NumberColumn("δ", format=SMALL_NUMBER_FORMAT)})
    for level, text in report.notes:
        (st.warning if level == "warning" else st.info)(
            text, icon=":material/warning:" if level == "warning" else ":material/lightbulb:")
    guarantee = run.mechanism.guarantee()
    if getattr(guarantee, "relation", None) == "row" and run.mechanism.tags().differentially_private:
        st.caption("What B means for this data: " + b_in_data_units(prepared, float(guarantee.b)))


def _report_frame(table: ReportTable) -> pd.DataFrame:
    """A mechanism's report table: a column of numbers stays numbers; a mixed one is shown as the page shows numbers."""
    columns = {}
    for name, values in table.columns:
        numeric = all(isinstance(v, (int, float)) or v is None for v in values) and any(
            isinstance(v, float) for v in values)
        columns[name] = list(values) if numeric else [
            fmt(v) if isinstance(v, (int, float)) else ("" if v is None else str(v)) for v in values]
    return pd.DataFrame(columns)


def draw_data_effect(run: ReleaseAnalysis, prepared: PreparedData, program: ProgramConfig | None, seed: int) -> None:
    """What the release does to the data: original against private (or, for the JL release, its projected columns and
    how well it keeps distances) and the noise by coordinate."""
    st.markdown("#### What it does to the data")
    names = list(prepared.feature_names)
    if run.projected:
        k_cols = run.value.shape[1]
        st.markdown(
            f"The release has **{k_cols} projected columns** (z1 … z{k_cols}), not your {prepared.d} features: each "
            "mixes all features, so there is no original-vs-private comparison on the same axes."
            + (" What survives is geometry: squared distances between records can be estimated without bias "
               "(Algorithm 2; variance 2‖a‖⁴/k + 14kσ⁴ + 8σ²‖a‖², the corrected formula)."
               if run.mechanism.tags().recovers_distances else "")
        )
        zcols = [f"z{i + 1}" for i in range(k_cols)]
        c1, c2 = st.columns(2)
        seed_widget("mechanisms.z_x", zcols[0])
        seed_widget("mechanisms.z_y", zcols[min(1, k_cols - 1)])
        if st.session_state["mechanisms.z_x"] not in zcols:
            st.session_state["mechanisms.z_x"] = zcols[0]
        if st.session_state["mechanisms.z_y"] not in zcols:
            st.session_state["mechanisms.z_y"] = zcols[min(1, k_cols - 1)]
        zx = c1.selectbox("Horizontal projected column", zcols, key="mechanisms.z_x", help="Column of Z on the x axis.")
        zy = c2.selectbox("Vertical projected column", zcols, key="mechanisms.z_y", help="Column of Z on the y axis.")
        labels = None
        if prepared.y is not None and program is not None and program.kind in ("classification", "lending"):
            labels = prepared.y
        left, right = st.columns(2)
        left.plotly_chart(projected_columns_figure(run.value, zcols.index(zx), zcols.index(zy), labels=labels),
                          key="mechanisms.z_scatter")
        recovery = distance_recovery(prepared.fingerprint, run.mechanism, seed, prepared.x, run.value)
        if recovery is not None:
            right.plotly_chart(distance_recovery_figure(recovery["true"], recovery["estimate"], recovery["sd"],
                                                        color=MECHANISM_COLORS.get(run.kind)),
                               key="mechanisms.distance_recovery")
            err = recovery["estimate"] - recovery["true"]
            st.caption(
                f"{len(recovery)} random pairs of records: mean error {fmt(float(err.mean()))} (unbiased: ≈ 0), "
                f"typical error (rms) {fmt(float((err**2).mean() ** 0.5))} against typical true squared distance "
                f"{fmt(float(recovery['true'].mean()))}. The estimator's sd from the corrected variance is "
                f"{fmt(float(recovery['sd'].mean()))} on average."
            )
        scale = 1.0
    else:
        scale = float(run.details.get("output_scale", 1.0) or 1.0)
        c1, c2 = st.columns(2)
        seed_widget("mechanisms.feature_x", names[0])
        seed_widget("mechanisms.feature_y", names[min(1, len(names) - 1)])
        fx = c1.selectbox("Horizontal feature", names, key="mechanisms.feature_x", help="Feature on the x axis.")
        fy = c2.selectbox("Vertical feature", names, key="mechanisms.feature_y", help="Feature on the y axis.")
        private_label = "private release" if scale == 1.0 else "private release ÷ output scale"
        left, right = st.columns(2)
        left.plotly_chart(
            original_vs_private_figure(prepared.x, run.value / scale, names, names.index(fx), names.index(fy),
                                       private_label=private_label),
            key="mechanisms.scatter",
        )
        # the honest comparison's alternatives at the same guarantee that add noise to the features themselves
        comparison_sd = {
            f"{type(p.mechanism).LABEL} at the same guarantee": p.first.noise_sd
            for p in run.points[1:]
            if p.mechanism is not None and p.mechanism.tags().differentially_private
            and not p.mechanism.tags().projects and math.isfinite(p.first.noise_sd)
        }
        right.plotly_chart(
            noise_by_coordinate_figure(names, run.measured_sd, reported_sd=run.details.get("noise_sd_per_coordinate"),
                                   comparison_sd=comparison_sd),
            key="mechanisms.noise",
        )


def draw_program_and_protection(run: ReleaseAnalysis, gammas: tuple[float, ...], candidate: Guarantee,
                                config: ProgramConfig | None = None, roles: dict[str, str] | None = None) -> None:
    """What the release costs the program (metrics, measured γ against the targets, every assumption it rests on)
    and what it buys (the attacks). ``config`` and ``roles``: the program's settings and columns, for its
    assumptions."""
    st.markdown("#### What it costs the program and what it buys")
    baseline = run.baseline
    if run.program is not None and baseline is not None:
        headline = run.program.headline_metric
        info = METRICS.get(headline)
        label = info.label if info else headline
        mean, _, lo, hi = run.points[0].interval(headline)
        change = resolved_difference(mean, baseline.headline, (hi - lo) / 2)  # only what the interval resolves
        cols = st.columns(3)
        cols[0].metric(
            f"{label} (private, mean of {PAGE_REPETITIONS} releases)", fmt(mean),
            delta=(fmt(change) + " vs non-private") if change != 0 else "no change the interval can resolve",
            delta_color=("off" if change == 0 else "normal" if (info is None or info.higher_is_better) else "inverse"),
            help=(info.description if info else "") + f". 95 % interval of the mean: {fmt(lo)} to {fmt(hi)}; the "
            "change is rounded to what that interval resolves.",
        )
        cols[1].metric(f"{label} (non-private)", fmt(baseline.headline),
                       help="The same program trained on the original data of the same rows.")
        plain_rules = baseline.beaten_by()
        if plain_rules:
            st.warning(f"**The non-private program itself is no better than '{plain_rules[0]}'**, a rule that uses no "
                       f"data ({label} {fmt(baseline.baselines[plain_rules[0]][headline])} vs "
                       f"{fmt(baseline.headline)}): whatever the release, the program adds nothing here — reconsider "
                       "the program (its outcome, threshold or share) before choosing privacy parameters.",
                       icon=":material/report:")
        st.caption(
            f"Scored on the {run.n_released:,} released rows — all {run.n_released + run.n_holdout:,} prepared rows "
            f"minus the {run.n_holdout:,} held out of the release as the attribute-inference attack's control group "
            "— by cross-validation, as every sweep cell is." if run.n_holdout else
            f"Scored on all {run.n_released:,} prepared rows by cross-validation, as every sweep cell is.")
        if "profit_ordinary" in baseline.metrics and "profit_paper" in baseline.metrics:
            ordinary = run.points[0].interval("profit_ordinary")[0]
            paper = run.points[0].interval("profit_paper")[0]
            st.caption(
                f"Profit both ways — the paper's convention (a rejected applicant who would have repaid costs the "
                f"revenue forgone): private {fmt(paper)}, non-private {fmt(baseline.metrics['profit_paper'])}; ordinary "
                f"profit and loss (only the loans made count): private {fmt(ordinary)}, non-private "
                f"{fmt(baseline.metrics['profit_ordinary'])}. The headline uses "
                + ("the paper's convention." if (config is None or config.profit_convention == "paper") else
                   "ordinary profit and loss."))
        if config is not None:
            st.markdown("**What this score assumes** (change the assumed values on the Data page)")
            st.caption("\n".join(f"- {plain(line)}" for line in
                                  config.assumptions(roles, n=run.n_released, holdout=run.n_holdout)))
        g_mean, _, g_lo, g_hi = run.points[0].decision_agreement
        no_data = run.points[0].no_data_agreement
        if math.isfinite(g_mean):
            cols[2].metric(
                "Decision agreement", fmt(g_mean),
                help="Share of people whose decision on the release equals the non-private program's decision, on "
                f"these data (95 % interval over {PAGE_REPETITIONS} releases: {fmt(g_lo)} to {fmt(g_hi)}). Not "
                "Theorem 1's γ, which is a worst case over data sets: an average agreement can exceed what Theorem 1 "
                "allows. Rules that use no data agree: " + ", ".join(f"{r} {fmt(v)}" for r, v in no_data.items()) + ".",
            )
            at = same_guarantee(run.mechanism, candidate)
            verdicts = gamma_verdicts(gammas, g_lo, g_hi, at, mean=g_mean, no_data=no_data)
            for level, text in verdicts:
                (st.success if level == "ok" else st.warning)(text, icon=":material/target:")
        beaters = run.points[0].beaten_by()
        if beaters:
            rule = beaters[0]
            st.error(
                f"**No better than a rule that uses no data.** {label} on these releases is {fmt(mean)} (95 % interval "
                f"{fmt(lo)} to {fmt(hi)}); '{rule}' scores {fmt(run.program.baselines[rule][headline])}. At these "
                f"settings the release does not support the program. {noise_advice(run.mechanism, run.d)}",
                icon=":material/report:",
            )
        table = program_table(run.program, baseline)
        with st.expander("All program metrics, beside the rules that use no data", icon=":material/table_chart:"):
            st.dataframe(table, hide_index=True, width="stretch", key="mechanisms.program_table")
    else:
        st.info("No outcome column and program are chosen, so no program is scored (choose a target and a program on "
                "the Data page).", icon=":material/info:")
    reps = run.points[0].repetitions
    over = (f" Mean over the {reps} releases (every release is attacked), 95 % interval {{lo}} to {{hi}}."
            if reps > 1 else "")
    p1, p2, p3 = st.columns(3)
    so, _, so_lo, so_hi = run.protection("singling_out")
    p1.metric("Singling-out protection", fmt(so),
              help="Share of people NOT isolated by the net attack (boxes around released rows that contain exactly "
              "one original row), worst case over box sizes. 1 = nobody singled out."
              + over.format(lo=fmt(so_lo), hi=fmt(so_hi)) + f" Exact: {exact(so)}")
    if run.attribute_inference is not None:
        ai, _, ai_lo, ai_hi = run.protection("attribute_inference")
        p2.metric("Attribute-inference protection", fmt(ai),
                  help="How much worse the nearest-neighbour attacker guesses a hidden column for released people than "
                  f"for the {run.n_holdout:,} held-out people (1 = no better; paper's relative score, worst case: each "
                  "(adversary, secret column) cell averaged over the releases, then the worst cell)."
                  + over.format(lo=fmt(ai_lo), hi=fmt(ai_hi)) + f" Exact: {exact(ai)}")
    else:
        ai = None
        p2.metric("Attribute-inference protection", "—", help="Needs at least 2 features.")
    p3.metric(f"Distinguishing protection ({distinguishing_basis(run.distinguishing)})", fmt(run.distinguishing.protection),
              help="Smallest total error (false positives + false negatives) of the best test telling two records apart "
              f"(any two records, distance 2): 1 = a coin flip, 0 = certain. {distinguishing_note(run.distinguishing)} "
              f"The paper's D = {fmt(run.distinguishing.expected_loss_score)}. Exact: {exact(run.distinguishing.protection)}")
    for column, value in ((p1, so), (p2, ai)):
        if value is not None and math.isfinite(value):
            column.caption(f"Protection: {protection_in_words(value)}.")
    p3.caption("Protection: " + protection_in_words(
        run.distinguishing.protection, records=True, bound=getattr(run.distinguishing, "basis", "") == "bound") + ".")

    if run.projected:
        st.caption(
            f"The attacker has the release Z and this page's public description, but NOT the mechanism's secret "
            f"randomness. It knows {run.n_known} original records (2 × the release's {run.value.shape[1]} columns) and "
            "regresses them on their released rows to estimate every record (known-record reconstruction); singling "
            "out and attribute inference run on that estimate. Distinguishing follows from the guarantee."
        )


def draw_comparison(run: ReleaseAnalysis) -> None:
    """The honest comparison with the alternatives at the same guarantee."""
    st.markdown("#### Honest comparison at the same guarantee")
    utility_label = "program effectiveness"
    if run.program is not None:
        info = METRICS.get(run.program.headline_metric)
        utility_label = info.label if info else run.program.headline_metric
    compare = comparison_table(run.points, utility_label)
    st.plotly_chart(
        comparison_figure(
            compare["mechanism"].tolist(), [type(p.mechanism).KIND for p in run.points],
            compare["noise sd per coordinate"].tolist(), compare[utility_label].tolist(), utility_label=utility_label,
            nonprivate_utility=run.baseline.headline if run.baseline is not None else None,
        ),
        key="mechanisms.comparison",
    )
    st.dataframe(compare, hide_index=True, width="stretch", key="mechanisms.comparison_table")
    st.caption(f"Every mechanism released the same rows with the same seeds; every column is a mean over "
               f"{PAGE_REPETITIONS} releases, each of them scored and attacked (the same rule as a sweep's points).")
    for finding in run.findings:
        (st.warning if finding.level == "warning" else st.info)(finding.text, icon=":material/balance:")


def draw_download(run: ReleaseAnalysis, prepared: PreparedData) -> None:
    """The release as a CSV file, what it protects, and the command a data holder reproduces it with."""
    st.markdown("#### Download the privatized data")
    st.markdown("**What this file protects:**\n" + "\n".join(f"- {line}" for line in run.describe))
    st.caption(
        "Values are on the prepared scale (each row of the input mapped into the unit ball as set on the Data page), "
        "not in the data's original units. " + plain(prepared.privacy_note())
    )
    if run.projected:
        release_frame = pd.DataFrame(run.value, columns=[f"z{i + 1}" for i in range(run.value.shape[1])])
        st.caption("The file holds the k projected columns z1 … zk (not your features). The mechanism's secret "
                   "randomness is not in it.")
    else:
        release_frame = prepared.as_frame(run.value)
    st.info(plain(run.download_note), icon=":material/info:")
    st.download_button("Download the release (CSV)", lambda: safe_csv_bytes(release_frame),
                       file_name=f"private-{run.kind}.csv", mime="text/csv", on_click="ignore",
                       key="mechanisms.download", icon=":material/download:",
                       help=f"The privatized feature matrix, one row per record, in input order; noise drawn with "
                       f"the {run.sampler} sampler.")
    st.caption("A data holder reproduces this kind of release with (config from the Export page):")
    st.code(run.summary["cli_command"], language="bash")
