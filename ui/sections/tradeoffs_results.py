"""The Tradeoffs page's result sections, drawn from the engine's sweep results (one per mechanism).

Figure 3 (program effectiveness against each protection score), privacy against privacy, Figure 2's bars, the JL
release's ε–δ_fail curve, choosing a configuration (it becomes the candidate and the Mechanisms page's setup), the
distinguishing attacker's view and the results table. Numbers come from the engine (``SweepResult.summary``,
:func:`engine.sweeps.combined_summary`, :func:`engine.comparison.distinguishing_references`,
:func:`engine.analysis.gamma_check`, the k-anonymity reference of :func:`engine.sweeps.analyse_reference`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from engine.analysis import gamma_check
from engine.comparison import distinguishing_references
from engine.evaluation.programs import METRICS
from engine.export_csv import safe_csv_bytes
from engine.mechanisms import RecordMechanism
from engine.mechanisms.base import baseline_mechanism
from engine.sweeps import (
    ATTACKS,
    PROTECTION_COLUMNS,
    AttackName,
    SweepConfig,
    SweepResult,
    TrivialRule,
    combined_summary,
    default_workers,
    pareto_mask,
)
from engine.workshop import candidate_from_sweep
from ui.cached import noise_profile, sweep_reference_point, tradeoff_curves
from ui.common import Labels, plain, readable_table, user_errors
from ui.figures.theme import fmt
from ui.figures.tradeoffs import (
    Marker,
    comparison_bars_figure,
    delta_fail_figure,
    flag_text,
    hypothesis_testing_figure,
    points_frame,
    privacy_privacy_figure,
    tradeoff_figure,
)
from ui.sections.tradeoffs_form import ATTACK_LABELS, MECH_LABELS
from ui.sections.workshop_pin import draw_pin
from ui.state import SelectedPoint, StudioState, get_state, seed_widget, set_widget, widget

PROTECTION_LABELS = {a: f"{ATTACK_LABELS[a]} protection" for a in ATTACKS}
METRIC_LABELS = {m: info.label for m, info in METRICS.items()}
DISTANCE_LABELS = {"any": "any two records (t = 2)", "b": "B apart (t = B)"}


def distinguishing_label(role: str, mechanism: RecordMechanism, configured: RecordMechanism | None) -> str:
    """Legend of one curve of the distinguishing attacker's view (a role of ``distinguishing_references``)."""
    label = type(mechanism).LABEL
    if role == "classic-dp":
        return f"{label}, classic DP (B = 2), same (ε, δ)"
    if mechanism is configured:
        return f"{label}, as configured"
    return f"{label}, candidate (B, ε, δ)"
#: Shown next to the flags when a grid point has a single release (no interval of the mean).
SINGLE_RUN_WARNING = (
    "One release per point: no interval, so a point that looks better than a rule that uses no data may not be — "
    "use at least 2 repetitions (10 recommended)."
)


# ------------------------------------------------------------------------------------------- choosing a point
def select_point(point_id: str, d: int) -> None:
    """Make the sweep point ``point_id`` ("<mechanism>:<point>") of the loaded data's sweep the candidate and the
    configured mechanism."""
    state = get_state()
    kind, _, index = str(point_id).partition(":")
    for result in state.shown_sweeps(state.data_fingerprint or ""):  # the results the page draws
        if result.config.mechanism != kind:
            continue
        found = result.mechanism_at(int(index), d=d)
        if found is None:
            return
        mechanism, budget = found
        guarantee = mechanism.guarantee()
        # an element-wise JL point protects one entry, not a record: it does not become the (B, ε, δ) candidate
        if guarantee.relation == "row":
            before = state.candidate_or_default()
            state.set_candidate(b=guarantee.b, epsilon=guarantee.epsilon, delta=guarantee.delta)
            if not math.isclose(before.delta, guarantee.delta, rel_tol=1e-9):
                state.notices.append(
                    f"The chosen point's δ = {guarantee.delta:.4g} replaces the candidate's δ = {before.delta:.4g} "
                    "(the grid was run with another δ)."
                )
        # the Mechanisms page opens on this configuration (it belongs to the current candidate)
        state.configure_mechanism(mechanism)
        row = result.table[result.table["point"] == int(index)].iloc[0]
        state.selected_point = SelectedPoint(
            mechanism=kind, point=int(index), b=float(row["b"]), epsilon1=budget.epsilon1, delta1=budget.delta1,
            epsilon2=budget.epsilon2, delta2=budget.delta2, epsilon=guarantee.epsilon, delta=guarantee.delta,
            reference=str(row["reference"]), data=result.fingerprint,
        )
        set_widget("tradeoffs.point", str(point_id))
        return


def on_chart_select(key: str, d: int) -> None:
    event = widget(key) or {}
    points = (event.get("selection") or {}).get("points") or []
    for point in reversed(points):
        custom = point.get("customdata")
        if custom and isinstance(custom, list | tuple) and ":" in str(custom[0]):
            select_point(str(custom[0]), d)
            return


def on_use_point(d: int) -> None:
    point_id = widget("tradeoffs.point")
    if point_id:
        select_point(point_id, d)


# ------------------------------------------------------------------------------------------------ the results
def reference_value(frame: pd.DataFrame, column: str) -> float | None:
    """The first row's finite value of ``column`` (None when missing)."""
    if frame.empty or column not in frame:
        return None
    value = float(frame[column].iloc[0])
    return value if np.isfinite(value) else None


def reference_flag(frame: pd.DataFrame) -> str:
    """The first row's ``no_better_than`` rule ("" when none or missing)."""
    if frame.empty or "no_better_than" not in frame:
        return ""
    return str(frame["no_better_than"].iloc[0] or "")


@dataclass
class SweepView:
    """The sweep results as the page shows them: per-mechanism summaries (with ``no_better_than`` on the chosen
    utility metric), that metric, the selected point, the k-anonymity reference (``engine.analysis.PointAnalysis``
    or None) and the best rule that uses no data on the metric (None when the program records none)."""

    results: list[SweepResult]
    summaries: list[pd.DataFrame]
    utility: str
    selected: str | None
    k_anon: Any
    d: int
    trivial: TrivialRule | None = None

    @property
    def trivial_line(self) -> tuple[str, float] | None:
        """(rule, value) of the best rule that uses no data, for the figures' dashed line."""
        return None if self.trivial is None else (self.trivial.rule, self.trivial.value)

    @property
    def single_run(self) -> bool:
        """Some grid point has fewer than 2 releases: its flag compares one run, with no interval."""
        return any((s["runs"] < 2).any() for s in self.summaries if "runs" in s and not s.empty)

    @property
    def configs(self) -> list[SweepConfig]:
        return [r.config for r in self.results]

    @property
    def utility_label(self) -> str:
        return METRICS[self.utility].label

    @property
    def nonprivate(self) -> pd.DataFrame:
        return self.summaries[0][self.summaries[0]["reference"] == "non-private"]

    @property
    def classic(self) -> pd.DataFrame:
        return self.summaries[0][self.summaries[0]["reference"] == "classic-dp"]

    @property
    def attacks_run(self) -> list[AttackName]:
        return [a for a in ATTACKS if f"{PROTECTION_COLUMNS[a]}_mean" in self.summaries[0]]

    @property
    def k_anon_label(self) -> str:
        """The non-DP baseline's label (e.g. "k-anonymity (Mondrian)")."""
        return type(self.k_anon.mechanism).LABEL if self.k_anon is not None else ""

    def k_anon_value(self, column: str) -> float | None:
        """Mean of a metric of the k-anonymity reference over its releases (None when it was not measured)."""
        if self.k_anon is None:
            return None
        value = self.k_anon.interval(column)[0]
        return value if np.isfinite(value) else None

    def markers_for(self, attack: AttackName) -> list[Marker]:
        col = f"{PROTECTION_COLUMNS[attack]}_mean"
        out = []
        x, y = reference_value(self.nonprivate, col), reference_value(self.nonprivate, f"{self.utility}_mean")
        if x is not None and y is not None:
            out.append(Marker(_flagged("non-private", reference_flag(self.nonprivate)), x, y, "nonprivate"))
        x, y = reference_value(self.classic, col), reference_value(self.classic, f"{self.utility}_mean")
        if x is not None and y is not None:
            out.append(Marker(_flagged("classic DP (B = 2)", reference_flag(self.classic)), x, y, "classic_dp"))
        kx, ky = self.k_anon_value(PROTECTION_COLUMNS[attack]), self.k_anon_value(self.utility)
        if kx is not None and ky is not None:
            out.append(Marker(self.k_anon_label, kx, ky, "kanon"))
        return out

    def all_points(self, x_metric: str, y_metric: str, *, pareto: bool = True) -> pd.DataFrame:
        frames = [
            points_frame(s, x_metric=x_metric, y_metric=y_metric, series=MECH_LABELS[c.mechanism], kind=c.mechanism)
            for s, c in zip(self.summaries, self.configs, strict=True)
            if f"{x_metric}_mean" in s and f"{y_metric}_mean" in s
        ]
        frame = pd.concat([f for f in frames if not f.empty], ignore_index=True) if any(
            not f.empty for f in frames) else pd.DataFrame(columns=["point_id", "series", "kind", "b", "x", "y"])
        if pareto and not frame.empty:
            sign = 1.0 if METRICS[self.utility].higher_is_better else -1.0
            frame["pareto"] = pareto_mask(sign * frame["y"].to_numpy(float), frame["x"].to_numpy(float))
        return frame


def _flagged(label: str, rule: str) -> str:
    return f"{label} ({flag_text(rule)})" if rule else label


def sweep_view(results: list[SweepResult], state: StudioState, prepared: Any) -> SweepView:
    """The utility measure chosen on the page (a select box) and the k-anonymity reference on the sweep's rows."""
    program_metric = results[0].config.program.headline_metric
    metric_options = [m for m in results[0].metric_columns if m in METRICS]
    seed_widget("tradeoffs.utility", program_metric if program_metric in metric_options else metric_options[0])
    if widget("tradeoffs.utility") not in metric_options:
        set_widget("tradeoffs.utility", metric_options[0])
    utility: str = st.selectbox("Program effectiveness measure", metric_options, key="tradeoffs.utility",
                           format_func=Labels(METRIC_LABELS),
                           help="The y axis of the tradeoff plots. " + "; ".join(
                               f"{METRICS[m].label}: {METRICS[m].description}" for m in metric_options[:6]))
    k_anon = None
    baseline = baseline_mechanism(int(prepared.d))
    if baseline is not None:
        with st.spinner(f"Evaluating the {type(baseline).LABEL} reference on the sweep's rows…"), user_errors(
                prefix=f"{type(baseline).LABEL} reference: "):
            k_anon = sweep_reference_point(prepared.fingerprint, results[0].config, baseline, prepared,
                                           int(widget("tradeoffs.workers", default_workers())))
    return SweepView(results=results, summaries=[r.flagged_summary(utility) for r in results], utility=utility,
                     selected=state.selected_point.point_id if state.selected_point is not None else None,
                     k_anon=k_anon, d=int(prepared.d),
                     trivial=results[0].best_trivial(utility))


def draw_program_basis(view: SweepView, roles: dict[str, str] | None) -> None:
    """Where the results' program scores come from: the rows scored and every assumed value (issue 34 §3)."""
    first = view.results[0]
    program = first.config.program
    held = int(first.n_holdout or 0)
    released = int(first.n_released or 0)
    if released:  # a sweep from an older record may not say
        st.caption(
            f"Every point's program score is on the {released:,} released rows — the {released + held:,} prepared "
            f"rows minus the {held:,} held out of each release as the attribute-inference attack's control group."
            if held else f"Every point's program score is on all {released:,} prepared rows.")
    with st.expander("What the program scores assume", icon=":material/rule:"):
        st.markdown("\n".join(f"- {plain(line)}" for line in program.assumptions(roles, n=released or None,
                                                                                   holdout=held)))
        st.caption("Change the assumed values and the profit convention on the Data page, then run the sweep again.")


def warn_single_run(view: SweepView) -> None:
    """The flags of a sweep with one release per point compare single runs: say so next to them."""
    if view.single_run:
        st.warning(SINGLE_RUN_WARNING, icon=":material/warning:")


def draw_figure3(view: SweepView) -> None:
    """Program effectiveness against each protection score, one tab per attack run."""
    st.subheader("Program effectiveness against protection (Figure 3)")
    st.caption(
        "One curve per mechanism through the B grid (mean over repetitions; bars: 95 % interval of the mean). Stars: "
        "non-private (black), classic DP at B = 2 (vermillion), k-anonymity k = 2 (green; the sweep's rows and "
        "repetitions). Thick "
        "grey: the Pareto frontier over all mechanisms — no other configuration is better on both axes. Click a point "
        "to make it your candidate (ringed)."
        + (f" Dashed: {view.trivial.rule}, the best rule that uses no data on these data. Hollow with ✕: no better "
           "than a rule that uses no data — even the favourable end of the point's 95 % interval does not beat it."
           if view.trivial is not None else "")
    )
    warn_single_run(view)
    attacks_run = view.attacks_run
    if not attacks_run:
        st.info("No attack was run, so there is no protection axis.", icon=":material/info:")
        return
    tabs = st.tabs([PROTECTION_LABELS[a].capitalize() for a in attacks_run])
    for tab, attack in zip(tabs, attacks_run, strict=True):
        key = f"tradeoffs.fig3.{attack}"
        with tab:
            st.plotly_chart(
                tradeoff_figure(view.all_points(PROTECTION_COLUMNS[attack], view.utility),
                                x_label=PROTECTION_LABELS[attack], y_label=view.utility_label,
                                title=f"{view.utility_label} against {PROTECTION_LABELS[attack]}",
                                markers=view.markers_for(attack), selected=view.selected,
                                trivial=view.trivial_line),
                key=key, on_select=functools.partial(on_chart_select, key, view.d), selection_mode="points",
            )


def draw_privacy_privacy(view: SweepView) -> None:
    """Singling-out protection against attribute-inference protection."""
    so, ai = PROTECTION_COLUMNS["singling_out"], PROTECTION_COLUMNS["attribute_inference"]
    if not ("singling_out" in view.attacks_run and "attribute_inference" in view.attacks_run):
        st.info("Run both singling out and attribute inference to compare them.", icon=":material/info:")
        return
    pp_markers = []
    x, y = reference_value(view.nonprivate, f"{so}_mean"), reference_value(view.nonprivate, f"{ai}_mean")
    if x is not None and y is not None:
        pp_markers.append(Marker("non-private", x, y, "nonprivate"))
    st.plotly_chart(privacy_privacy_figure(view.all_points(so, ai, pareto=False), markers=pp_markers),
                    key="tradeoffs.privacy_privacy",
                    on_select=functools.partial(on_chart_select, "tradeoffs.privacy_privacy", view.d),
                    selection_mode="points")


def draw_figure2(view: SweepView, target_b: float) -> None:
    """Figure 2: one bar per approach at the chosen (or the nearest) B."""
    utility = view.utility
    bars_labels, bars_values, bars_err, bars_roles, bars_flags = [], [], [], [], []

    def add_bar(label: str, frame: pd.DataFrame, role: str) -> None:
        value = reference_value(frame, f"{utility}_mean")
        if value is None:
            return
        lo, hi = reference_value(frame, f"{utility}_lo"), reference_value(frame, f"{utility}_hi")
        bars_labels.append(label)
        bars_values.append(value)
        bars_err.append(None if lo is None or hi is None else (hi - lo) / 2)
        bars_roles.append(role)
        bars_flags.append(reference_flag(frame))

    add_bar("non-private", view.nonprivate, "nonprivate")
    add_bar("classic DP (B = 2)", view.classic, "classic_dp")
    k_value = view.k_anon_value(utility)
    if k_value is not None:
        _, _, k_lo, k_hi = view.k_anon.interval(utility)
        bars_labels.append(view.k_anon_label)
        bars_values.append(k_value)
        bars_err.append((k_hi - k_lo) / 2 if np.isfinite(k_lo) else None)
        bars_roles.append("kanon")
        bars_flags.append(next(iter(view.k_anon.beaten_by(utility)), ""))
    configs = view.configs
    for summary, config in zip(view.summaries, configs, strict=True):
        tdp = summary[summary["reference"] == "tdp"]
        if tdp.empty:
            continue
        nearest = tdp.iloc[[int(np.argmin(np.abs(tdp["b"].to_numpy(float) - float(target_b))))]]
        role = "chosen" if config.mechanism == configs[0].mechanism else config.mechanism
        add_bar(f"{MECH_LABELS[config.mechanism]}, B = {fmt(float(nearest['b'].iloc[0]))}", nearest, role)
    if bars_values:
        st.plotly_chart(
            comparison_bars_figure(bars_labels, bars_values, roles=bars_roles, errors=bars_err,
                                   y_label=view.utility_label, title=f"{view.utility_label} by approach (Figure 2)",
                                   flags=bars_flags, trivial=view.trivial_line),
            key="tradeoffs.fig2",
        )
        if any(bars_flags):
            st.caption("Hatched bars marked ✕ are no better than a rule that uses no data (the dashed line is the "
                       "best such rule) even at the favourable end of their 95 % interval.")


def draw_noise_profiles(view: SweepView) -> None:
    """ε against δ at the fixed noise of one grid point, for every swept mechanism that offers it
    (``RecordMechanism.noise_profile``: the JL release's ε against δ_fail)."""
    for result in view.results:
        config = result.config
        first = config.mechanism_for(float(config.b_values[0]), config.budgets[0], d=view.d)
        if first.noise_profile(view.d) is None:
            continue
        kind = config.mechanism
        bs = [float(b) for b in config.b_values]
        key = f"tradeoffs.{kind}.profile_b"
        seed_widget(key, bs[0])
        if widget(key) not in bs:
            set_widget(key, bs[0])
        with user_errors(prefix=f"{MECH_LABELS[kind]}: "):
            j1, j2 = st.columns(2)
            curve_b = j1.selectbox("Noise of the grid point with B =", bs, key=key, format_func=fmt,
                                   help="The noise is that of this grid point (first budget); every curve is drawn "
                                   "at that same noise.")
            profile = noise_profile(config.mechanism_for(curve_b, config.budgets[0], d=view.d), view.d)
            if profile is None:
                continue
            st.subheader(profile.title)
            st.markdown(profile.text)
            st.plotly_chart(
                delta_fail_figure([(label, group, {k: list(v) for k, v in series.items()})
                                   for label, group, series in profile.curves]),
                key=f"tradeoffs.{kind}.noise_profile",
            )
            value = profile.metric.value
            j2.metric(profile.metric.label, value if isinstance(value, str) else fmt(value), help=profile.metric.help)
            for warning in profile.warnings:
                st.warning(warning, icon=":material/warning:")


def draw_choice(view: SweepView, state: StudioState) -> None:
    """Choose a configuration (as a click on a chart does) and hold the chosen point's measured γ against the
    targets."""
    st.subheader("Choose a configuration")
    utility = view.utility
    choices = {}
    for summary, config in zip(view.summaries, view.configs, strict=True):
        for _, row in summary[summary["reference"].isin(["tdp", "classic-dp"])].iterrows():
            pid = f"{config.mechanism}:{int(row['point'])}"
            choices[pid] = (
                f"{MECH_LABELS[config.mechanism]} · B = {row['b']:g} · ε = {row['epsilon']:.4g} · "
                f"δ = {row['delta']:.3g} · {view.utility_label} {fmt(row.get(f'{utility}_mean'))}"
            )
    if choices:
        current = view.selected if view.selected in choices else next(iter(choices))
        seed_widget("tradeoffs.point", current)
        if widget("tradeoffs.point") not in choices:
            set_widget("tradeoffs.point", current)
        c1, c2 = st.columns([0.75, 0.25])
        c1.selectbox("Configuration", list(choices), key="tradeoffs.point", format_func=Labels(choices),
                     help="The same as clicking a point in the charts: it becomes the candidate (B, ε, δ) and the "
                     "Mechanisms page's configuration (including the budget split).")
        c2.button("Use this configuration", key="tradeoffs.use_point", on_click=on_use_point, args=(view.d,),
                  type="primary", icon=":material/check:",
                  help="Make the selected configuration the candidate (B, ε, δ) and the Mechanisms page's setup.")
        kind, _, point = str(widget("tradeoffs.point")).partition(":")
        result = next((r for r in view.results if r.config.mechanism == kind), None)
        found = result.mechanism_at(int(point), d=view.d) if result is not None else None
        if result is not None and found is not None:
            draw_pin("tradeoffs.pin", state.pin_label("Sweep", found[0]),
                     lambda label: candidate_from_sweep(result, int(point), label, d=view.d),
                     help="Pin the selected configuration — its mechanism and the sweep's measured evidence (a "
                     "seeded simulation) — for the Workshop's comparison.")
    sp = state.selected_point
    if sp is None or not any(r.config.mechanism == sp.mechanism and r.fingerprint == sp.data for r in view.results):
        return
    st.success(
        f"Chosen: {MECH_LABELS.get(sp.mechanism, sp.mechanism)}, B = {sp.b:g}, ε = {sp.epsilon:.4g}, "
        f"δ = {sp.delta:.3g} — now the candidate on every page.", icon=":material/check_circle:",
    )
    for summary, config in zip(view.summaries, view.configs, strict=True):
        rows = summary[summary["point"] == sp.point] if config.mechanism == sp.mechanism else summary.iloc[:0]
        if rows.empty or "decision_agreement_mean" not in rows:
            continue
        row = rows.iloc[0]
        measured = (row["decision_agreement_mean"], row["decision_agreement_lo"], row["decision_agreement_hi"])
        suffix = ":decision_agreement_mean"  # baseline:<rule>:decision_agreement, averaged over the point's runs
        no_data = {str(k)[len("baseline:"):-len(suffix)]: float(v) for k, v in row.items()
                   if str(k).startswith("baseline:") and str(k).endswith(suffix)}
        for target in state.gammas:
            check = gamma_check(float(target), measured, b=sp.b, epsilon=sp.epsilon, delta=sp.delta,
                                no_data=no_data)
            ok = check.status == "met" and check.allowed_by_theorem
            (st.success if ok else st.warning)(check.text, icon=":material/target:")


def draw_distinguishing(state: StudioState) -> None:
    """The distinguishing attacker's trade-off curves at the candidate (B, ε, δ)."""
    st.subheader("What a distinguishing attacker can do")
    c = state.candidate_or_default()
    seed_widget("tradeoffs.distance", "any")
    distance_choice = st.radio(
        "Two records that are…", ("any", "b"), key="tradeoffs.distance", horizontal=True,
        format_func=DISTANCE_LABELS.get,
        help="The attacker sees the release and must decide which of two records is in the data. Any two records of "
        "the unit ball are at most 2 apart; records within B get the full (ε, δ) protection.",
    )
    distance = 2.0 if distance_choice == "any" else float(c.b)
    references = distinguishing_references(c, state.mechanism)
    labels = [distinguishing_label(role, m, state.mechanism) for role, m in references]
    with user_errors():
        curves = tradeoff_curves(tuple(m for _, m in references), distance)
        st.plotly_chart(
            hypothesis_testing_figure(
                [(label, role, cv.alphas, cv.betas)
                 for label, (role, _), cv in zip(labels, references, curves, strict=True)],
                distance=distance,
            ),
            key="tradeoffs.hypothesis",
        )
        st.caption(" ".join(f"{label}: smallest total error {fmt(cv.min_total_error)} ({cv.description})."
                            for label, cv in zip(labels, curves, strict=True)))


def draw_table(view: SweepView) -> None:
    """The per-point results of every mechanism, the no-better-than-trivial warning and the tidy download."""
    st.subheader("Results table")
    utility = view.utility
    shown_cols = ["mechanism", "reference", "b", "epsilon", "delta", "implied_epsilon", "runs", f"{utility}_mean",
                  f"{utility}_lo", f"{utility}_hi", "no_better_than", "decision_agreement_mean",
                  "decision_agreement_lo", "decision_agreement_hi"] + [
                      f"{PROTECTION_COLUMNS[a]}_mean" for a in view.attacks_run]
    table = combined_summary(view.results, utility)
    weak = table[(table["no_better_than"] != "") & (table["reference"] != "non-private")]
    if not weak.empty:
        st.warning(
            f"{len(weak)} of {int((table['reference'] != 'non-private').sum())} configurations are no better than a "
            f"rule that uses no data ({', '.join(sorted(set(weak['no_better_than'])))}) on {view.utility_label}, even "
            "at the favourable end of their 95 % interval: they are marked in the table's 'No better than' column.",
            icon=":material/report:",
        )
    warn_single_run(view)
    if "decision_agreement_mean" in table:
        st.caption("Decision agreement is the share of people whose decision on the release equals the non-private "
                   "program's decision on these data, with its 95 % interval over the repetitions — an average over "
                   "people, not Theorem 1's worst-case γ (which the region above shows).")
    shown, headers = readable_table(table[[c for c in shown_cols if c in table]], metric=utility,
                                    metric_label=view.utility_label,
                                    protection_labels={PROTECTION_COLUMNS[a]: PROTECTION_LABELS[a].capitalize()
                                                       for a in view.attacks_run})
    st.dataframe(shown, hide_index=True, width="stretch", key="tradeoffs.table", column_config=headers)
    tidy = pd.concat([r.table for r in view.results], ignore_index=True)
    st.download_button("Download the tidy table (CSV)", lambda: safe_csv_bytes(tidy),
                       file_name="sweep-results.csv", mime="text/csv", key="tradeoffs.download", on_click="ignore",
                       icon=":material/download:",
                       help="One row per cell (grid point × repetition) with every metric; seeds and configuration are "
                       "on the Export page's decision record.")
    st.caption(" · ".join(r.config.describe() for r in view.results))
