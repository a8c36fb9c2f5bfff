"""AppTest: the Workshop — pin candidates (Feasibility's button and a measured run put in the state), compare them
with the engine's numbers, choose one with a rationale, export the record and import it back; presenter mode; the
seventh pin is refused on the page."""

from __future__ import annotations

from engine.decision_record import load_decision_record
from engine.guarantee import Guarantee
from engine.mechanisms.gaussian import GaussianMechanism
from engine.workshop import Candidate, Evidence, Interval, Workshop, comparison_frame, comparison_rows
from tests.app.conftest import assert_clean, open_page, shown, start_app, start_on, studio
from tests.app.test_export_page import record_text

SEEDED_RUN = Candidate.of(
    "**run** [x](http://127.0.0.1:9/)", "mechanisms", GaussianMechanism(b=0.5, epsilon=2.0, delta=1e-5),
    Evidence(metric="accuracy", value=Interval(0.74, 0.72, 0.76), repetitions=5, protections={"distinguishing": 0.4},
             distinguishing_exact=True, noise_sd=0.3, seed=7, baselines={"target nobody": 0.77}),
)


def pinned_session():
    at = start_app()
    open_page(at, "feasibility")
    at.text_input(key="feasibility.pin.label").set_value("Example 1").run()
    at.button(key="feasibility.pin.button").click().run()
    assert_clean(at)
    assert [c.label for c in studio(at).workshop.pinned] == ["Example 1"]
    assert any("Pinned" in s.value for s in at.success)
    # as the Tradeoffs and Mechanisms pages' buttons pin a sweep point and a run
    wider = Candidate.of("wider", "tradeoffs", GaussianMechanism(b=0.4, epsilon=2.0, delta=1e-4))
    studio(at).workshop = studio(at).workshop.pin(wider).pin(SEEDED_RUN)
    return at


def test_pin_compare_choose_export_and_import():
    at = open_page(pinned_session(), "workshop")
    state = studio(at)
    assert len(state.workshop.pinned) == 3 and state.workshop.pinned[1].guarantee.epsilon == 2.0
    # The table is the engine's comparison on the session's data, every cell shown as typed.
    from ui.cached import current_data

    loaded = current_data(state)
    expected = comparison_frame(comparison_rows(state.workshop.pinned, x=loaded.prepared.x, d=loaded.prepared.d))
    table = at.table[0].value
    assert [shown(c) for c in table.columns] == list(expected.columns)
    assert [[shown(v) for v in table[c]] for c in table.columns] == [list(expected[c]) for c in expected.columns]
    assert "2.72:1" in expected.iloc[:, 0]["Attacker's odds from 50:50 — bound"]
    # The protections are explained under the table, and the seeded run's score comes with its words.
    from ui.sections.workshop_view import PROTECTIONS_NOTE

    assert PROTECTIONS_NOTE in [c.value for c in at.caption]
    assert expected.iloc[:, 2]["Distinguishing protection"] == "0.400 (exact): partial — telling two records apart " \
        "errs often"
    assert any("simulation — not private" in w.value for w in at.warning)  # the seeded run's evidence
    # 0.74 [0.72, 0.76] never reaches target nobody's 0.77: flagged in its cell and in a message under the table
    assert "NO BETTER than 'target nobody' (0.77)" in expected.iloc[:, 2]["Program metric [95 % interval]"]
    assert any(shown(e.value).startswith("3. **run** [x](http://127.0.0.1:9/): no better than 'target nobody' "
                                         "(0.77), a rule that uses no data") for e in at.error)

    at.radio(key="workshop.choice").set_value(2).run()
    at.text_area(key="workshop.rationale").set_value("*Fewest* exclusion errors.").run()
    assert_clean(at)
    assert studio(at).workshop.chosen == 2 and studio(at).workshop.rationale == "*Fewest* exclusion errors."

    open_page(at, "export")
    record = load_decision_record(record_text(at))
    assert record.workshop == studio(at).workshop

    fresh = start_on("export")
    fresh.file_uploader(key="export.import").set_value(
        ("decision-record.json", record_text(at).encode(), "application/json")).run()
    assert_clean(fresh)
    assert studio(fresh).workshop == record.workshop
    open_page(fresh, "workshop")
    assert fresh.radio(key="workshop.choice").value == 2
    assert fresh.text_area(key="workshop.rationale").value == "*Fewest* exclusion errors."


def test_presenter_mode_and_the_seventh_pin():
    at = start_app()
    studio(at).workshop = Workshop(pinned=(
        Candidate(label="# big", source="feasibility", guarantee=Guarantee(epsilon=1.0, delta=1e-6, b=0.4)),
        SEEDED_RUN), chosen=1)
    open_page(at, "workshop")
    at.toggle(key="workshop.presenter").set_value(True).run()
    assert_clean(at)
    assert shown(at.header[0].value) == "1. # big" and at.header[0].value.startswith("1\\.")  # plain text
    assert not at.table  # one candidate per screen
    at.button(key="workshop.next").click().run()
    assert shown(at.header[0].value) == "2. **run** [x](http://127.0.0.1:9/) ✓ chosen"
    at.button(key="workshop.next").click().run()
    assert at.header[0].value == "The comparison" and len(at.table) == 1
    assert at.button(key="workshop.next").disabled
    at.toggle(key="workshop.presenter").set_value(False).run()
    at.button(key="workshop.unpin_0").click().run()
    assert [c.label for c in studio(at).workshop.pinned] == [SEEDED_RUN.label] and studio(at).workshop.chosen == 0
    assert at.radio(key="workshop.choice").value == 0  # the choice follows its candidate

    pinned = tuple(Candidate(label=f"c{i}", source="feasibility", guarantee=Guarantee(epsilon=1.0 + i, delta=1e-6,
                                                                                     b=0.4)) for i in range(6))
    studio(at).workshop = Workshop(pinned=pinned)
    # Budgets only: no program metric to plot, so a note stands where the chart would draw markers on an empty axis.
    open_page(at, "workshop")
    assert_clean(at)
    assert any(i.value.startswith("No program metric to compare yet") for i in at.info)
    assert not at.get("plotly_chart") and len(at.table) == 1
    open_page(at, "feasibility")
    at.button(key="feasibility.pin.button").click().run()
    assert any("6 candidates are already pinned" in e.value for e in at.error)
    assert len(studio(at).workshop.pinned) == 6


def test_html_report_shows_the_comparison_the_choice_and_the_rationale_escaped():
    import html

    from engine.data.demos import load_demo
    from engine.data.preparation import prepare
    from engine.decision_record import build_decision_record
    from ui.report import html_report

    demo = load_demo("togo-demo")
    prepared = prepare(demo.frame.head(200), demo.spec)
    candidate = Guarantee(epsilon=1.0, delta=1e-4, b=0.4)
    workshop = Workshop(pinned=(Candidate(label="<b>budget</b>", source="feasibility", guarantee=candidate),
                                SEEDED_RUN), chosen=1, rationale="<script>alert('x')</script> fewest errors")
    record = build_decision_record(
        prepared=prepared, source="demo", dataset="togo-demo", title=demo.title, synthetic=True,
        columns=tuple(demo.frame.columns), candidate=candidate, gammas=(0.99,), delta_is_default=False,
        mechanism=SEEDED_RUN.mechanism, workshop=workshop,  # the record releases the chosen candidate
    )
    page = html_report(record)
    expected = comparison_frame(comparison_rows(workshop.pinned, chosen=1))
    assert "Workshop: the candidates compared" in page and "<b>budget</b>" not in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; fewest errors" in page
    for line in expected.index:  # every line of the engine's comparison, with both candidates' cells
        assert html.escape(line, quote=False) in page
        for cell in expected.loc[line]:
            assert html.escape(cell, quote=False) in page, (line, cell)
    assert "simulation — not private" in page


def test_measuring_several_pins_measures_each_and_never_takes_a_rooms_shared_run(monkeypatch):
    """Two unmeasured pins are measured one after the other in one click (each run draws its own Stop button: the
    page used to fail with a duplicate element key after the first), and on a workshop server a measurement is
    never a run someone in the room shared — even after a Run with fresh randomness of the same setup."""
    from ui import room as rooms

    monkeypatch.setattr(rooms, "session_role", lambda: "facilitator")
    rooms.activate(rooms.Room(slots=1))
    try:
        other = start_on("mechanisms")  # someone in the room runs the candidate's projection with fresh randomness
        other.button(key="mechanisms.run").click().run()
        assert_clean(other)
        shared = studio(other).last_run
        at = start_app()
        open_page(at, "mechanisms")
        at.button(key="mechanisms.run").click().run()  # this session's last action: a shareable Run
        assert studio(at).last_run.result is shared.result
        open_page(at, "feasibility")
        at.button(key="feasibility.pin.button").click().run()
        budget = Candidate.of("projection budget", "feasibility", shared.config.mechanism)
        studio(at).workshop = studio(at).workshop.pin(budget)
        open_page(at, "workshop")
        at.button(key="workshop.measure").click().run()
        assert_clean(at)
        pinned = studio(at).workshop.pinned
        assert len(pinned) == 2 and all(c.evidence is not None for c in pinned)
        assert not any("already made in this room" in t.value for t in at.toast)
        assert all(r.result is not shared.result for r in studio(at).runs[-2:])
    finally:
        rooms.activate(None)
