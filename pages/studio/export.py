"""Export: the decision record (JSON), the HTML report, the sweep table, the release command — and import."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from engine.decision_record import load_decision_record
from engine.errors import EngineError
from engine.export_csv import safe_csv_bytes
from engine.mechanisms import mechanism_from_dict
from engine.notebook import notebook_json, script_text
from engine.public_info.count_release import CountReleaseConfig
from engine.release import cli_command
from ui.cached import CEILING_BS, current_data, feasibility_surface, gamma_ceiling
from ui.common import HELP, field_error, plain, user_errors
from ui.figures.feasibility import b_max_figure, gamma_max_figure, region_figure
from ui.figures.theme import fmt, fmt_param
from ui.figures.tradeoffs import sweep_report_figures
from ui.records import Release, pages_differ, pages_mechanism, record_from_state, state_from_record
from ui.report import html_report
from ui.state import forget_widget, get_state, install_state, mechanism_label, seed_widget, widget

state = get_state()
if state.just_imported:
    state.just_imported = False
    forget_widget("export.rationale", "export.release")  # reseeded from the imported record

st.title("Export")
st.markdown(
    "Write the decision down so others can check it and a data holder can carry it out: a **decision record** "
    "(JSON, versioned) stating every building block of the guarantee, a self-contained **HTML report** with the "
    "charts, the **sweep table** and the exact **command** that makes the release. Loading a record brings the "
    "whole session back."
)


loaded = None
record = None
with user_errors():
    loaded = current_data(state)
if loaded is None:
    st.info("No data loaded: open the Data page (or import a decision record below).")
else:
    # ------------------------------------------------------------------------------------------------------------
    # The decision: the Workshop's choice, unless the user says otherwise
    # ------------------------------------------------------------------------------------------------------------
    seed_widget("export.rationale", state.rationale)
    st.text_area("Rationale", key="export.rationale", height=140, help=HELP["rationale"],
                 placeholder="e.g. The program must keep 99 % of eligibility decisions; we protect people from being "
                 "told apart from anyone within B of them …")
    state.rationale = widget("export.rationale")
    release: Release = "workshop"
    choice = state.workshop.choice
    d = int(loaded.prepared.d)
    if choice is not None:
        if pages_differ(state, d):
            shown = mechanism_from_dict(pages_mechanism(state))
            st.warning(
                f"**The Workshop's choice and the pages differ.** The group chose “{plain(choice.label)}”; the "
                f"Mechanisms page and the candidate show {plain(mechanism_label(shown))}. Which one does the record "
                "release?", icon=":material/rule:")
            seed_widget("export.release", "workshop")
            release = st.radio(
                "The record releases", ("workshop", "pages"), key="export.release",
                format_func={"workshop": f"the Workshop's choice: {choice.label}",
                             "pages": f"what the pages show: {mechanism_label(shown)} (the record then states no "
                             "choice)"}.get)
        else:
            st.success(f"The record releases the Workshop's choice: {plain(choice.label)}.",
                       icon=":material/check_circle:")
    elif state.mechanism is None:
        st.info("No mechanism was configured on the Mechanisms page, so the record states the Gaussian TDP mechanism "
                "at the candidate (B, ε, δ).", icon=":material/info:")
    sweeps = state.sweeps_for(loaded.prepared.fingerprint)
    with user_errors(prefix="No record: "):
        record = record_from_state(state, loaded, release=release)

if record is not None:
    spec = record.specification
    st.subheader("What the release guarantees")
    for line in record.guarantee:
        st.markdown("- " + plain(line))
    if record.seeds.release is not None:
        st.warning(f"Seed {record.seeds.release}: this configuration is reproducible and therefore NOT private. "
                   "Clear the seed on the Mechanisms page before a real release.", icon=":material/warning:")
    st.markdown("**The building blocks of the privacy specification** (what a reviewer checks)")
    blocks = [
        ("Protection domain — what can be protected", spec.protection_domain),
        ("Scope of protection — invariants", spec.scope + " Invariants: " + "; ".join(spec.invariants) + "."),
        ("Protection unit — who", spec.protection_unit),
        ("Neighbouring relation", spec.neighbouring_relation),
        ("B in the data's units", spec.b_in_data_units or "—"),
        ("Standard of protection — how it is measured", spec.standard),
        ("Intensity of protection — how much",
         f"ε = {fmt_param(spec.epsilon)}, δ = {fmt(spec.delta)}" if spec.epsilon is not None else "no (ε, δ) statement"),
        ("Derived conversions", " ".join(spec.conversions) or "—"),
        ("Out of scope", " ".join(spec.out_of_scope)),
    ]
    with st.container(border=True):
        for name, text in blocks:
            st.markdown(f"**{name}.** {plain(text)}")
    if record.public_information:
        pi = record.public_information
        st.markdown("**Public information (count-table study)**")
        if state.public_info_work.invalid:
            st.warning("The Public information page's current settings cannot run (see its message); this record "
                       "holds the last declaration that could.", icon=":material/history:")
        with st.container(border=True):
            st.markdown(f"**Scope.** {pi['scope']}. **Declared public:** "
                        + ("; ".join(pi["public"].values()) or "nothing") + ".")
            for total in pi["epsilon_total"]:
                st.markdown(f"- ε = {fmt(total['per_period'], 4)} per period over {pi['periods']} periods: whole "
                            f"study ε = {fmt(total['parallel'], 4)} (parallel) up to "
                            f"{fmt(total['sequential'], 4)} (sequential).")
            st.caption(pi["composition_caveat"])
            upload = pi.get("source") == "upload"
            st.markdown("**Make the chosen count release.** Each command below is ONE release of the whole table "
                        "with the guarantee stated for it; run only the one you chose — every further release of "
                        "the same table spends its ε again. (The study's replicates were simulations of the release, "
                        "not releases to publish.)")
            for c in pi["releases"]:
                config = CountReleaseConfig.from_dict(c)
                st.caption(f"{config.label.capitalize()}, ε = {fmt(config.epsilon, 4)} per period:")
                st.code(config.cli_command(input_file="YOUR_COUNTS.csv" if upload else None, dataset=pi["data"]),
                        language="bash", wrap_lines=True)
            st.caption("Without --seed the noise comes from the operating system."
                       + (" Name your table's columns with --region, --period, --count and --subcount when they "
                          "differ from those names." if upload else ""))
            if pi.get("seed") is not None:
                st.warning(f"Public-information study seed {pi['seed']}: simulation — not private.",
                           icon=":material/warning:")
    workshop = record.workshop
    if workshop is not None:
        chosen = workshop.choice
        st.markdown(f"**Workshop.** {len(workshop.pinned)} pinned candidate(s): "
                    + "; ".join(plain(c.label) for c in workshop.pinned) + ". Chosen: "
                    + (f"**{plain(chosen.label)}**, which the record releases" if chosen is not None else "none")
                    + ". The record and the report carry the comparison and the group's rationale.")
        if chosen is not None:
            replay = record.evaluate_command()
            if replay is not None:
                st.markdown("Re-measure the chosen candidate's evidence from the record (a seeded simulation, the "
                            "same numbers to the last digit):")
                st.code(replay, language="bash")
            elif chosen.evidence is None:
                st.caption("The chosen candidate has no measured evidence yet: measure it on the Workshop page.")
            else:
                st.caption("Its evidence cannot be replayed to the digit from the record ("
                           + ("measured with fresh randomness" if chosen.evidence.seed is None else
                              "measured by a sweep or a search, with their own seeds") + "): `python -m engine "
                           "evaluate --config decision-record.json --seed 0` measures it again.")
        st.page_link("pages/studio/workshop.py", label="Open the Workshop", icon=":material/groups:")

    # ------------------------------------------------------------------------------------------------------------
    # Downloads
    # ------------------------------------------------------------------------------------------------------------
    st.subheader("Downloads")
    record_json = record.to_json()
    release_json = record.release_config_json()
    cand = record.candidate
    delta = cand.delta
    surface = feasibility_surface(state.gammas, delta, state.eps_max)
    ceiling = gamma_ceiling(delta, state.eps_max, tuple(sorted(set(CEILING_BS) | {round(float(cand.b), 6)})))
    gammas = state.gammas

    def report_html() -> str:
        assert record is not None and loaded is not None  # drawn only with both
        figures = [
            ("Feasible (B, ε) region (Theorem 1)", region_figure(surface, candidate=(cand.epsilon, cand.b))),
            ("Largest feasible B against ε", b_max_figure(surface, candidate=(cand.epsilon, cand.b))),
            ("Accuracy ceiling γ_max", gamma_max_figure(ceiling[0], ceiling[1], gammas,
                                                        candidate_b=round(float(cand.b), 6))),
        ]
        tables = []
        for result in sweeps:
            figures += sweep_report_figures(result)
            tables.append((f"Measured tradeoffs, {result.config.mechanism} (mean per grid point; no_better_than: "
                           "the rule that uses no data the point does not beat)", result.flagged_summary()))
        comparison = None
        if record.workshop is not None:
            from engine.workshop import comparison_frame
            from ui.cached import workshop_comparison

            comparison = comparison_frame(workshop_comparison(loaded.prepared.fingerprint, record.workshop,
                                                              int(loaded.prepared.d), loaded.prepared.x))
        return html_report(record, figures, tables, workshop=comparison)

    def sweep_csv() -> bytes:
        return safe_csv_bytes(pd.concat([r.table for r in sweeps], ignore_index=True))

    d1, d2, d3, d4 = st.columns(4)
    d1.download_button("Decision record (JSON)", record_json, file_name="decision-record.json",
                       mime="application/json", key="export.download_record", on_click="ignore",
                       icon=":material/description:", type="primary",
                       help="Everything above in one versioned JSON file: for reviewers, for the data holder's "
                       "command, and to load this session again.")
    d2.download_button("Release configuration (JSON)", release_json, file_name="release-config.json",
                       mime="application/json", key="export.download_config", on_click="ignore",
                       icon=":material/settings:",
                       help="Only the release configuration (data spec, mechanism, seed), for "
                       "'python -m engine privatize --config'.")
    d3.download_button("HTML report", report_html, file_name="privacy-decision-report.html", mime="text/html",
                       key="export.download_report", on_click="ignore", icon=":material/article:",
                       help="One self-contained HTML file with the charts (opens offline in any browser).")
    if sweeps:
        d4.download_button("Sweep table (CSV)", sweep_csv, file_name="sweep.csv",
                           mime="text/csv", key="export.download_sweep", on_click="ignore", icon=":material/table:",
                           help="Every cell of the last sweep (all mechanisms), one row per release.")
    else:
        d4.caption("Run a sweep on the Tradeoffs page to export its table.")
    n1, n2, _, _ = st.columns(4)
    n1.download_button("Notebook (.ipynb)", lambda: notebook_json(record), file_name="reproduce-decision.ipynb",
                       mime="application/x-ipynb+json", key="export.download_notebook", on_click="ignore",
                       icon=":material/code_blocks:",
                       help="A Jupyter notebook that prints the guarantee first, then reproduces the data check, "
                       "Theorem 1's verdicts and the release with the engine's Python API, checking each number "
                       "against this record.")
    n2.download_button("Script (.py)", lambda: script_text(record), file_name="reproduce_decision.py",
                       mime="text/x-python", key="export.download_script", on_click="ignore", icon=":material/code:",
                       help="The notebook's code as one Python script: python reproduce_decision.py")

    st.subheader("Make the release")
    st.markdown("The data holder saves the decision record next to the data and runs:")
    st.code(record.command, language="bash")
    alt_input = None if state.source == "demo" else "YOUR_DATA.csv"
    st.caption(
        "The command reads the release configuration embedded in the record (data spec, mechanism, seed). With "
        "the separate configuration file: `" + cli_command("release-config.json", input_file=alt_input) + "`. "
        "Released values are on the prepared scale (rows in the unit ball), not in the data's original units."
    )
    # The record is drawn only while the expander is open (opening it reruns the page): highlighted, it is thousands
    # of elements for the browser to lay out at every visit of the page (docs/performance.md, "The browser").
    record_box = st.expander("Show the decision record (JSON)", key="export.record_open", on_change="rerun")
    if record_box.open:
        with record_box:
            if len(record_json) <= 200_000:
                st.code(record_json, language="json")
            else:  # long sweep tables: show the record without their rows (the download has everything)
                shown = record.to_dict()
                for item in shown["tradeoffs"]:
                    item["table"]["rows"] = f"… {len(item['table']['rows'])} rows, in the downloaded file"
                st.code(json.dumps(shown, indent=2, ensure_ascii=False), language="json")

# ----------------------------------------------------------------------------------------------------------------
# Import
# ----------------------------------------------------------------------------------------------------------------
st.subheader("Import a decision record")
st.caption("Restores the dataset choice, every parameter, the chosen point, the mechanism, the sweep results, the "
           "rationale and the workshop's pinned candidates. Uploaded data are never in a record: you will be asked for the same file.")
st.file_uploader("Decision record (.json)", type=["json"], key="export.import",
                 help="A decision-record.json exported from this page (any session, any machine). Your current "
                 "session is replaced only if the whole record is valid.")
incoming = widget("export.import")
if incoming is not None and state.import_seen != incoming.file_id:
    state.import_seen = incoming.file_id
    try:
        imported = load_decision_record(incoming.getvalue())
        new_state, messages = state_from_record(imported, state)
    except EngineError as exc:
        state.import_error = f"{exc}. Nothing in your session was changed."
    else:
        state.import_error = None
        with user_errors():
            check = current_data(new_state)
            if check is not None and check.prepared.fingerprint != imported.data.sha256:
                messages.append(
                    "The data in this session differ from the data the record was made on (fingerprint "
                    f"{check.prepared.fingerprint[:12]}… instead of {imported.data.sha256[:12]}…): the numbers you "
                    "see now may differ from the record's."
                )
        new_state.notices = [f"Decision record from {imported.created} loaded: {imported.title}.", *messages]
        new_state.import_seen = incoming.file_id
        new_state.just_imported = True
        install_state(new_state)
        st.rerun()
field_error(state.import_error)
