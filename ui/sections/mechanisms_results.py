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
from engine.mechanisms.gaussian import GaussianMechanism
from engine.release_analysis import PAGE_REPETITIONS, ReleaseAnalysis
from ui.cached import jl_distance_recovery
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
from ui.figures.theme import exact, fmt
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
    DETAILS[run.kind](run, prepared, m2, m3, m4)
    if hasattr(run.mechanism, "b") and getattr(run.mechanism, "relation", "row") == "row":
        st.caption("What B means for this data: " + b_in_data_units(prepared, run.mechanism.b))


def _projection_details(run: ReleaseAnalysis, prepared: PreparedData, m2, m3, m4) -> None:
    """σ1, σ2, the output scale and the budget split of Algorithm 1."""
    mech, total = run.mechanism, run.mechanism.guarantee()  # the total is Theorem 2's composition
    m2.metric("σ1 (projection noise, paper scale)", fmt(run.details.get("sigma1")),
              help=f"Exact: {exact(run.details.get('sigma1'))}")
    m3.metric("σ2 (covariance noise)", fmt(run.details.get("sigma2")), help=f"Exact: {exact(run.details.get('sigma2'))}")
    m4.metric("Output scale", fmt(run.details.get("output_scale")),
              help="E[release] = scale × X. 1 = unbiased; 1/k = the paper's as-printed output.")
    split = pd.DataFrame(
        {
            "step": ["1–3: noisy projection (k⁻¹XR + G)", "4: noisy covariance (XᵀX + G')", "total (Theorem 2)"],
            "ε": [mech.epsilon1, mech.epsilon2, total.epsilon],
            "δ": [mech.delta1, mech.delta2, total.delta],
            "noise sd": [run.details.get("sigma1"), run.details.get("sigma2"), None],
        }
    )
    st.dataframe(split, hide_index=True, width="stretch", key="mechanisms.split_table",
                 column_config={"δ": st.column_config.NumberColumn("δ", format=SMALL_NUMBER_FORMAT)})
    if mech.rank in (None, prepared.d):
        st.info(
            "At full rank the covariance step (ε2, δ2) does not change the output at all: the release is in fact "
            f"(B = {fmt(mech.b)}, ε1 = {fmt(mech.epsilon1)}, δ1 = {fmt(mech.delta1)})-TDP. Spend ε2 only "
            "when keeping fewer singular vectors (rank < d).", icon=":material/lightbulb:",
        )


def _gaussian_details(run: ReleaseAnalysis, prepared: PreparedData, m2, m3, m4) -> None:
    """σ and its calibration."""
    m2.metric("σ (per coordinate)", fmt(run.mechanism.sigma), help=f"Exact: {exact(run.mechanism.sigma)}")
    m3.metric("Calibration", run.mechanism.calibration)


def _jl_details(run: ReleaseAnalysis, prepared: PreparedData, m2, m3, m4) -> None:
    """δ_fail three ways, the JL parameters and the secret projection."""
    jl = run.mechanism
    for warning in jl.warnings():
        st.warning(warning, icon=":material/warning:")
    d_pair, d_event, d_paper = (run.details.get("delta_fail"), run.details.get("delta_fail_proof_event"),
                                run.details.get("delta_fail_paper_bound"))
    m2.metric("δ_fail (the guarantee's δ)", fmt(d_pair),
              help="Rigorous upper bound, per neighbouring pair, on the probability over the secret projection P "
              f"that the sensitivity bound c fails (ours). Exact: {exact(d_pair)}")
    m3.metric("Exact probability of the proof's event", fmt(d_event),
              help="The event the paper's proof needs, for all pairs at once (exact χ² / normal form). "
              f"Exact: {exact(d_event)}")
    m4.metric("The paper's bound", "vacuous (≥ 1)" if d_paper is None or d_paper >= 1 else fmt(d_paper),
              help="The bound printed in the paper (Lemma 2 element-wise: d·e^{−(c−√k)²/2}; Lemma 4 row-wise: "
              f"2k·e^{{−kt²/(2α)}}). A value ≥ 1 guarantees nothing. Exact: {exact(d_paper)}")
    jl_table = pd.DataFrame(
        {
            "quantity": ["projection dimension k", "sensitivity bound c", "Laplace scale c/ε",
                         "noise variance σ² = 2(c/ε)² (for distance recovery)", "row-wise threshold t = c/k",
                         "rule for c"],
            "value": [fmt(jl.k), fmt(jl.c), fmt(jl.laplace_scale), fmt(jl.noise_variance),
                      fmt(jl.threshold_t) if jl.relation == "row" else "—", str(run.details.get("c_rule"))],
        }
    )
    st.dataframe(jl_table, hide_index=True, width="stretch", key="mechanisms.jl_table")
    st.info(
        "**The projection P stays secret.** It is drawn fresh for this release and never stored, shown or exported "
        "(only a seed you typed is recorded). The paper's claim that the data cannot be reconstructed rests on that "
        "secrecy alone — it is not a quantified guarantee: someone who knows a few original records can estimate "
        "P's effect by regression (the protection scores below use exactly that adversary).",
        icon=":material/lock:",
    )


def _mondrian_details(run: ReleaseAnalysis, prepared: PreparedData, m2, m3, m4) -> None:
    """The classes k-anonymity formed."""
    m2.metric("Classes", fmt(run.details.get("classes")))
    m3.metric("Smallest class", fmt(run.details.get("smallest_class")))
    m4.metric("Distortion (rms)", fmt(run.details.get("distortion_rms_per_coordinate")))


#: Each mechanism kind's own figures beside the noise sd (``run.kind`` → drawer of three metric columns).
DETAILS = {"projection": _projection_details, "gaussian": _gaussian_details, "jl-laplace": _jl_details,
           "mondrian": _mondrian_details}


def draw_data_effect(run: ReleaseAnalysis, prepared: PreparedData, program: ProgramConfig | None, seed: int) -> None:
    """What the release does to the data: original against private (or, for the JL release, its projected columns and
    how well it keeps distances) and the noise by coordinate."""
    st.markdown("#### What it does to the data")
    names = list(prepared.feature_names)
    if run.projected:
        k_cols = run.value.shape[1]
        st.markdown(
            f"The release has **{k_cols} projected columns** (z1 … z{k_cols}), not your {prepared.d} features: each is a "
            "secret random mix of all features plus Laplace noise, so there is no original-vs-private comparison on the "
            "same axes. What survives is geometry: squared distances between records can be estimated without bias "
            "(Algorithm 2; variance 2‖a‖⁴/k + 14kσ⁴ + 8σ²‖a‖², the corrected formula)."
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
        recovery = jl_distance_recovery(prepared.fingerprint, run.mechanism.to_json(), seed, prepared.x,
                                        run.value)
        right.plotly_chart(distance_recovery_figure(recovery["true"], recovery["estimate"], recovery["sd"]),
                           key="mechanisms.distance_recovery")
        err = recovery["estimate"] - recovery["true"]
        st.caption(
            f"{len(recovery)} random pairs of records: mean error {fmt(float(err.mean()))} (unbiased: ≈ 0), typical "
            f"error (rms) {fmt(float((err**2).mean() ** 0.5))} against typical true squared distance "
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
        comparison_sd = {}
        if run.kind == "projection":
            # the honest comparison's Gaussian mechanism at the same guarantee (engine.comparison.alternatives)
            for p in run.points[1:]:
                if isinstance(p.mechanism, GaussianMechanism):
                    comparison_sd["Gaussian at the same guarantee"] = p.mechanism.sigma
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
        g_mean, _, g_lo, g_hi = run.points[0].measured_gamma
        if math.isfinite(g_mean):
            cols[2].metric(
                "Measured γ (decision agreement)", fmt(g_mean),
                help="Share of people whose decision on the release equals the non-private program's decision — the γ "
                f"of Theorem 1, measured on your data. 95 % interval over {PAGE_REPETITIONS} releases: {fmt(g_lo)} to "
                f"{fmt(g_hi)}.",
            )
            at = same_guarantee(run.mechanism, candidate)
            verdicts = gamma_verdicts(gammas, g_lo, g_hi, at, mean=g_mean)
            for level, text in verdicts:
                (st.success if level == "ok" else st.warning)(text, icon=":material/target:")
        beaters = run.points[0].beaten_by()
        if beaters:
            rule = beaters[0]
            st.error(
                f"**No better than a rule that uses no data.** {label} on these releases is {fmt(mean)} (95 % interval "
                f"{fmt(lo)} to {fmt(hi)}); '{rule}' scores {fmt(run.program.baselines[rule][headline])}. At these "
                "settings the release does not support the program: raise ε or B, or reconsider the program.",
                icon=":material/report:",
            )
        table = program_table(run.program, baseline)
        with st.expander("All program metrics, beside the rules that use no data", icon=":material/table_chart:"):
            st.dataframe(table, hide_index=True, width="stretch", key="mechanisms.program_table")
    else:
        st.info("No outcome column and program are chosen, so no program is scored (choose a target and a program on "
                "the Data page).", icon=":material/info:")
    p1, p2, p3 = st.columns(3)
    p1.metric("Singling-out protection", fmt(run.singling_out.protection),
              help="Share of people NOT isolated by the net attack (boxes around released rows that contain exactly "
              f"one original row), worst case over box sizes. 1 = nobody singled out. Exact: {exact(run.singling_out.protection)}")
    if run.attribute_inference is not None:
        p2.metric("Attribute-inference protection", fmt(run.attribute_inference.protection),
                  help="How much worse the nearest-neighbour attacker guesses a hidden column for released people than "
                  f"for the {run.n_holdout:,} held-out people (1 = no better; paper's relative score, worst case). "
                  f"Exact: {exact(run.attribute_inference.protection)}")
    else:
        p2.metric("Attribute-inference protection", "—", help="Needs at least 2 features.")
    p3.metric(f"Distinguishing protection ({distinguishing_basis(run.distinguishing)})", fmt(run.distinguishing.protection),
              help="Smallest total error (false positives + false negatives) of the best test telling two records apart "
              f"(any two records, distance 2): 1 = a coin flip, 0 = certain. {distinguishing_note(run.distinguishing)} "
              f"The paper's D = {fmt(run.distinguishing.expected_loss_score)}. Exact: {exact(run.distinguishing.protection)}")
    for column, result in ((p1, run.singling_out), (p2, run.attribute_inference)):
        if result is not None:
            column.caption(f"Protection: {protection_in_words(result.protection)}.")
    p3.caption("Protection: " + protection_in_words(
        run.distinguishing.protection, records=True, bound=getattr(run.distinguishing, "basis", "") == "bound") + ".")

    if run.projected:
        st.caption(
            f"The attacker has the release Z and this page's public description, but NOT the secret projection P. It "
            f"knows {run.n_known} original records (2k) and regresses them on their released rows to estimate every "
            "record (known-record reconstruction); singling out and attribute inference run on that estimate. "
            "Distinguishing follows from the guarantee (ε, δ_fail)."
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
    st.caption(f"Every mechanism released the same rows with the same seeds; the program columns are means of "
               f"{PAGE_REPETITIONS} releases, the attacks use the first.")
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
        st.caption("The file holds the k projected columns z1 … zk (not your features). The projection P is not in it.")
    else:
        release_frame = prepared.as_frame(run.value)
    st.download_button("Download the release (CSV)", lambda: safe_csv_bytes(release_frame),
                       file_name=f"private-{run.kind}.csv", mime="text/csv", on_click="ignore",
                       key="mechanisms.download", icon=":material/download:",
                       help="The privatized feature matrix of this run, one row per record, in input order.")
    st.caption("A data holder reproduces this kind of release with (config from the Export page):")
    st.code(run.summary["cli_command"], language="bash")
