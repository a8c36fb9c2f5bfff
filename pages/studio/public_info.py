"""Public information: release a region × period count table subject to what is already public (issue 13).

Thin page: widgets → CountStudyConfig → ``ui.cached`` (and ``engine.public_info.results.run_count_study`` for the
study, with its Stop token from ``ui.runs``) → ``ui.figures.public_info``. No privacy math here.
"""

from __future__ import annotations

import json
import uuid
from typing import cast

import pandas as pd
import streamlit as st

from engine.errors import CancelledError, EngineError
from engine.progress import Progress
from engine.public_info.count_table import COUNTIES_DEMO
from engine.public_info.dependence import DependenceModel
from engine.public_info.guarantee import PUBLIC_STATISTICS
from engine.public_info.results import STUDY_METHODS, CountStudyConfig, run_count_study
from engine.rng import SEEDED_WARNING, make_rng
from ui import cached, runs
from ui.common import Labels, field_error, plain, seed_badge, stop_page, user_errors
from ui.figures import public_info as figs
from ui.figures.theme import fmt
from ui.records import check_studio_range
from ui.sections.public_info_calculators import draw_calculators
from ui.sections.public_info_dependence import draw_dependence
from ui.state import STUDIO_EPSILON, Work, checkpoint, get_state, parse_seed, seed_widget, widget

state = get_state()
work = state.public_info_work
saved = state.public_info or {}
saved_study = saved.get("study") or {}
NONE = "(none)"
SOURCES = {"demo": "counties-demo (synthetic)", "upload": "Upload a count table"}
MODELS = {"fixed": "independent people", "correlated": "correlated counts (z0, z1)"}
METHOD_LABELS = {k: CountStudyConfig(methods=(k,)).release_config(k, 1.0).label for k in STUDY_METHODS}

st.title("Public information")
st.markdown("Real releases never happen in a vacuum: some totals are published exactly. Here you declare what is "
            "already public, see what it does to the sensitivity Δ_z and the guarantee (ε-TP: DP subject to the "
            "invariants Z), and simulate a count-table release that respects the invariants.")

# ---- 1. data ----------------------------------------------------------------------------------------------------
st.header("1. Count table")
seed_widget("public_info.source", saved.get("source", "demo"))
source = st.radio("Data", ["demo", "upload"], key="public_info.source", horizontal=True,
                  format_func=SOURCES.get)
table = None
if source == "demo":
    table = cached.demo_count_table(COUNTIES_DEMO)
    data_key = COUNTIES_DEMO
    st.warning(table.notes[0], icon=":material/science:")
else:
    upload = st.file_uploader("Count table (CSV or Parquet; one row per region × period)", type=["csv", "parquet"],
                              key="public_info.file")
    if upload is not None:
        work.upload = (upload.name, upload.getvalue())
    kept = work.upload
    if kept is None:
        st.info("Upload a table with columns for region, period and count (optional: a sub-count ≤ count, and the "
                "population).", icon=":material/upload_file:")
        stop_page()
    name, content = kept
    data_key = cached.sha256_bytes(content)
    try:
        cols = [str(c) for c in cached.uploaded_table(data_key, name, content).columns]
    except EngineError as exc:
        field_error(f"{name}: {exc}")
        st.caption("Nothing else changed: upload another file and the page continues.")
        stop_page()
    c1, c2, c3, c4, c5 = st.columns(5)

    def pick(col, label, default, optional=False):
        options = ([NONE] if optional else []) + cols
        index = options.index(default) if default in options else 0
        return col.selectbox(label, options, index=index, key=f"public_info.col_{label}")

    chosen = {"region": pick(c1, "region", "region"), "period": pick(c2, "period", "period"),
              "count": pick(c3, "count", "count"), "subcount": pick(c4, "sub-count", "subcount", True),
              "population": pick(c5, "population", "population", True)}
    columns = {k: (None if v == NONE else v) for k, v in chosen.items()}
    try:
        table = cached.uploaded_count_table(data_key, json.dumps(columns, sort_keys=True), name, content)
    except EngineError as exc:
        field_error(f"{name}: {exc}")
        st.caption("Nothing else changed: fix the file or the column choice and the page continues.")
        stop_page()
    st.success(f"{plain(name)}: {len(table.regions)} regions × {len(table.periods)} periods.", icon=":material/check:")

# ---- 2. what is public ------------------------------------------------------------------------------------------
st.header("2. What is already public (Z)")
public = []
pcols = st.columns(len(PUBLIC_STATISTICS))
for col, (key, text) in zip(pcols, PUBLIC_STATISTICS.items(), strict=True):
    seed_widget(f"public_info.public_{key}", key in saved_study.get("public", list(PUBLIC_STATISTICS)))
    if col.checkbox(text[0].upper() + text[1:], key=f"public_info.public_{key}"):
        public.append(key)

# ---- 3. dependence and Δ_z --------------------------------------------------------------------------------------
st.header("3. Dependence between people and Δ_z")
d1, d2 = st.columns([1, 2])
saved_model = saved.get("model") or {}
seed_widget("public_info.model", saved_model.get("kind", "fixed"))
kind = d1.radio("Dependence model", ["fixed", "correlated"], key="public_info.model", format_func=MODELS.get)
model = DependenceModel()
has_sub = table.subcounts is not None
if kind == "correlated":
    seed_widget("public_info.n", int(saved_model.get("n", 20)))
    n_people = int(d1.number_input("people per group n", 2, 500, key="public_info.n"))
    seed_widget("public_info.z", (float(saved_model.get("z0", 0.2)), float(saved_model.get("z1", 0.6))))
    z0, z1 = cast(tuple[float, float], d1.slider("z0 ≤ z1", 0.0, 1.0, key="public_info.z", step=0.05))
    model = DependenceModel("correlated", n=n_people, z0=float(z0), z1=float(z1))
derived = cached.derive_sensitivity(tuple(public), model.to_json(), has_sub)
d1.metric("Δ_z derived for the release", fmt(derived.value, 6),
          help="Derived from what is public, the dependence model and whether the table has a sub-count; every "
               "method uses it (see Public information in docs/paper-notes.md for the argument).")
d1.caption(derived.reason[0].upper() + derived.reason[1:] + ("." if derived.exact else
           ". The release is calibrated to this bound: its guarantee holds, with possibly more noise than needed."))
seed_widget("public_info.sensitivity", saved_study.get("sensitivity"))
sensitivity = d1.number_input("A larger Δ_z (optional)", min_value=0.5, max_value=1000.0, step=0.5, value=None,
                              key="public_info.sensitivity", placeholder=f"derived: {fmt(derived.value, 6)}",
                              help="Leave empty to use the derived Δ_z. A larger value adds noise and keeps the "
                                   "guarantee true; a smaller one is refused, with the reason.")
seed_widget("public_info.prior", 0.5)
prior = d1.slider("Adversary's prior that a person is in the data", 0.01, 0.99, key="public_info.prior")
draw_calculators()

# ---- 4. the study configuration ---------------------------------------------------------------------------------
st.header("4. Release study")
s1, s2, s3 = st.columns(3)
seed_widget("public_info.methods", list(saved_study.get("methods", ["postprocess", "wasserstein-congenial"])))
methods = s1.multiselect("Methods", list(STUDY_METHODS), key="public_info.methods", format_func=Labels(METHOD_LABELS))
seed_widget("public_info.epsilons", ", ".join(f"{e:g}" for e in saved_study.get("epsilons", (0.1, 1.0))))
eps_text = s2.text_input("ε per period (comma-separated)", key="public_info.epsilons")
seed_widget("public_info.replicates", int(saved_study.get("replicates", 20)))
replicates = s3.number_input("Replicates", 1, 1000, key="public_info.replicates")
seed_widget("public_info.alpha", float(saved_study.get("alpha", 1.0)))
alpha = s1.number_input("α (prior base concentration)", min_value=0.01, max_value=100.0, key="public_info.alpha")
default_hl = list(cached.default_highlighted_regions(data_key, table))
seed_widget("public_info.highlight", [r for r in saved_study.get("highlight", default_hl) if r in table.regions]
            or default_hl)
highlight = s2.multiselect("Highlighted regions", list(table.regions), key="public_info.highlight", max_selections=6)
seed_widget("public_info.seed", str(saved.get("seed") or ""))
seed_text = s3.text_input("Seed (empty = fresh randomness)", key="public_info.seed")
config = None
with user_errors(prefix="The release study cannot run as set: "):  # full width: the cause may be any setting above
    seed = parse_seed(seed_text)
    try:
        epsilons = tuple(float(x) for x in eps_text.replace(";", ",").split(",") if x.strip())
    except ValueError:
        raise EngineError(f"ε per period must be numbers separated by commas; got {eps_text!r}") from None
    for eps in epsilons:  # the Studio's range, as links and records are checked on load
        check_studio_range("ε per period", eps, *STUDIO_EPSILON, "this field")
    config = CountStudyConfig(methods=tuple(methods), epsilons=epsilons, replicates=int(replicates),
                              public=tuple(public), alpha=float(alpha),
                              sensitivity=None if sensitivity is None else float(sensitivity),
                              highlight=tuple(highlight), dependence=model)
work.invalid = config is None  # the Export page says when it shows an older declaration
if config is None:
    stop_page()
summary = None
with user_errors(prefix="The release study cannot run as set: "):  # e.g. a Δ_z below the derived one
    summary = cached.dependence_summary(config.to_json(), len(table.periods), has_sub, prior)
work.invalid = summary is None
if summary is None:
    stop_page()
state.public_info = {"source": source, "data": data_key if source == "demo" else f"upload:{data_key[:16]}",
                     "model": model.to_dict(), "seed": seed, "study": config.to_dict(), "periods": len(table.periods),
                     "subcounts": has_sub}
st.markdown(seed_badge(seed))

with d2:
    draw_dependence(summary, model, prior, len(table.periods))

# ---- 5. run ------------------------------------------------------------------------------------------------------
if widget("public_info.stop") and work.pending:
    work.pending = None
    work.stopped = True
if st.button("Run the release study", type="primary", icon=":material/play_arrow:", key="public_info.run"):
    work.pending = config.to_json()
    # A fresh id per run: the stop registry is shared by every session, so two sessions running the same
    # configuration must not share a token (Stop in one would stop the other).
    work.run_id = uuid.uuid4().hex
    work.stopped = False
if work.pending:
    if work.run_id is None:
        work.run_id = uuid.uuid4().hex
    run_id = work.run_id
    token = runs.cancel_token(run_id)
    stop_slot = st.empty()
    stop_slot.button("Stop", key="public_info.stop", icon=":material/stop_circle:", on_click=runs.stop_run, args=(run_id,),
              help="Stops after the period that is running; finished (method, ε) cells are kept.")
    bar = runs.ProgressBar(st.empty(), "Starting…")

    def on_progress(p: Progress) -> None:
        bar.update(p.fraction, p.describe())

    def on_cell(partial) -> None:
        work.results = (partial, seed)

    run_cfg = CountStudyConfig.from_json(work.pending)
    state.begin_work(Work("public_info", "the public-information release study", study=work.pending))
    checkpoint()
    with user_errors():
        try:
            run_count_study(table, run_cfg, rng=make_rng(seed), on_progress=on_progress, on_cell=on_cell, cancel=token)
        except CancelledError:
            work.stopped = True
    state.finish_work()
    work.pending = None
    runs.forget_run(run_id)
    work.run_id = None
    bar.empty()
    stop_slot.empty()

if work.stopped:
    st.warning("The study was stopped; the finished (method, ε) cells are shown.", icon=":material/stop_circle:")
kept_results = work.results
if not kept_results:
    st.info("Press **Run the release study** to simulate the release.", icon=":material/info:")
else:
    results, run_seed = kept_results
    caption = figs.guarantee_caption(results, seeded=run_seed is not None)
    if run_seed is not None:
        st.warning(SEEDED_WARNING, icon=":material/warning:")
    if results.synthetic:
        st.caption("Data: SYNTHETIC counties-demo.")
    st.subheader("Release against period (Figure 1)")
    eps_shown = st.selectbox("ε shown", sorted({c.epsilon for c in results.cells}), key="public_info.eps_shown")
    rates = results.truth_rates is not None and st.toggle("Rates per 100,000", key="public_info.rates")
    for region in results.regions:
        shown = figs.guarantee_caption(results, seeded=run_seed is not None, epsilon=eps_shown)
        st.plotly_chart(figs.release_boxplots(results, region, eps_shown, shown, rates=rates),
                        key=f"public_info.fig1.{region}")
    st.subheader("Relative error (Figure 2)")
    st.plotly_chart(figs.error_distribution(results, caption), key="public_info.fig2")
    st.dataframe(pd.DataFrame([{"method": c.label, "ε": c.epsilon, **c.error_quantiles, "seconds": c.seconds}
                               for c in results.cells]), hide_index=True, key="public_info.quantiles")
    st.subheader("Contraction effects (Figure 3)")
    st.plotly_chart(figs.contraction_bars(results, caption), key="public_info.fig3")
    st.caption(" · ".join(f"**{figs.EFFECT_LABELS[k]}**: {v}" for k, v in figs.EFFECT_TEXT.items()))
    st.caption(caption)

# ---- 6. inference -----------------------------------------------------------------------------------------------
with st.expander("Inference with public information (one-dimensional demo)", icon=":material/functions:"):
    i1, i2, i3, i4 = st.columns(4)
    n_inf = int(i1.number_input("n", 4, 200, 30, key="public_info.inf_n"))
    k_inf = int(i2.number_input("k (k-anonymity: S ∈ {k..n−k})", 0, n_inf // 2, min(5, n_inf // 2),
                                key="public_info.inf_k"))
    eps_inf = float(i3.number_input("ε", 0.01, 20.0, 0.5, key="public_info.inf_eps"))
    y_inf = int(i4.number_input("released y", k_inf, n_inf - k_inf, k_inf, key="public_info.inf_y"))
    with user_errors():
        demo = json.dumps({"n": n_inf, "k": k_inf, "epsilon": eps_inf})
        inf = cached.inference_demo(demo, y_inf, 2000, seed if seed is not None else 0)
        st.caption("Simulation — not private: the demo's Monte Carlo draws are seeded (the study's seed, or 0).")
        st.plotly_chart(figs.posterior_draws(inf["alg1_draws"], inf["exact"], inf["alg2_mean"],
                                             f"ε-TP with ε = {fmt(eps_inf)} subject to k-anonymity (Δ_z = 1)"),
                        key="public_info.inf_fig")
        st.dataframe(pd.DataFrame([
            {"quantity": "posterior mean E[θ | y, Z]: exact", "value": inf["exact"]},
            {"quantity": "Algorithm 1 (rejection, global bound)", "value": inf["alg1_mean"]},
            {"quantity": "Algorithm 1 acceptance rate", "value": inf["alg1_acceptance"]},
            {"quantity": "Algorithm 2 (importance sampling)", "value": inf["alg2_mean"]},
            {"quantity": "Algorithm 2 effective sample size", "value": inf["alg2_ess"]},
            {"quantity": "Bayes risk E[Var | Y, Z] (two cells, public total)", "value": inf["risk"]["y_and_z"]},
            {"quantity": "Bayes risk E[Var | Y*] (projected)", "value": inf["risk"]["projected"]},
            {"quantity": "power, Laplace noise: raw", "value": inf["power_laplace"]["raw"]},
            {"quantity": "power, Laplace noise: clipped", "value": inf["power_laplace"]["clipped"]},
            {"quantity": "power, Gaussian noise: raw", "value": inf["power_gaussian"]["raw"]},
            {"quantity": "power, Gaussian noise: clipped", "value": inf["power_gaussian"]["clipped"]},
        ]), hide_index=True, key="public_info.inf_table")
