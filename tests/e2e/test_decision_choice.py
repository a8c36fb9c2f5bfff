"""Issue 31, defects 1 and 2, in real Chromium on a real public table (Palmer penguins, a classification program
predicting the bird's sex):

1. after "Use the recommended point" the Mechanisms page's previous run is greyed with "settings changed — run
   again", and pinning it stores the run's own configuration under the run's own label;
2. the exported record's release is the Workshop's chosen candidate — not the Mechanisms page's last configuration —
   with the group's rationale, and ``python -m engine evaluate --config`` on the record reproduces the chosen
   candidate's numbers to the last digit (a full workshop: three more pins, one of them chosen).

One user's session on one upload of the table: the steps share the module's browser page and run in file order; a
step after a failed one is skipped (``STEPS``, see ``tests/e2e/conftest.py``). Uploading and preparing the table
once instead of once per test saves its browser and server work (the penguins were uploaded six times across the
decision modules)."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from engine.cli import main
from tests.e2e.conftest import ARTIFACTS, click_button, export_record, go, idle, no_exception
from tests.e2e.decision_helpers import load_penguins, pin, run_mechanism, write_table

pytestmark = pytest.mark.e2e
#: Steps share the session: conftest skips the rest of the module after a failed step.
STEPS = True
PROJECTION, GAUSSIAN = "Private projection (Algorithm 1)", "Gaussian mechanism (targeted DP)"


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return write_table(tmp_path_factory.mktemp("penguins"))


def test_after_using_the_recommended_point_the_old_run_is_greyed_and_pinned_as_itself(page, server, table):
    from playwright.sync_api import expect

    url, _, _ = server
    load_penguins(page, url, table)
    run_mechanism(page, PROJECTION, seed="3")
    run_epsilon = page.get_by_role("spinbutton", name="ε1 (projection step)").input_value()
    assert not page.get_by_text("Settings changed — run again").count()
    # Feasibility → Recommend → "Use the recommended point as the candidate"
    go(page, "feasibility")
    target = page.get_by_role("textbox", name="Target", exact=True)
    target.fill("accuracy>=0.6")
    target.press("Tab")
    click_button(page, "Recommend")
    idle(page, timeout=180_000)
    expect(page.get_by_text("Recommended:", exact=False).first).to_be_visible(timeout=180_000)
    click_button(page, "Use the recommended point as the candidate")
    idle(page)
    go(page, "mechanisms")
    # the form shows the recommended Gaussian mechanism …
    expect(page.get_by_role("radio", name=GAUSSIAN)).to_be_checked()
    recommended_epsilon = page.get_by_role("spinbutton", name="Privacy loss ε").input_value()
    # … and the projection run below it is not shown as current
    expect(page.get_by_text("Settings changed — run again.", exact=False)).to_be_visible()
    assert page.locator('[class*="st-key-stale_mechanisms"]').count() == 1
    # pinning it stores the run's own configuration, under the run's own label
    label = pin(page, 1)
    assert "Projection" in label and "Gaussian" not in label, label
    assert f"ε = {float(recommended_epsilon):.4g}" not in label, (label, recommended_epsilon)
    assert float(run_epsilon) > 0
    go(page, "workshop")
    table_text = page.locator('[data-testid="stTable"]').first.inner_text()
    assert "Private projection (Algorithm 1)" in table_text and "Pinned from" in table_text
    no_exception(page)


def test_the_record_releases_the_workshops_choice_and_evaluate_replays_its_numbers(page, table):
    from playwright.sync_api import expect

    # the session goes on (the step above pinned one candidate): three more pins, a seeded projection run, a seeded
    # Gaussian run, the candidate's budget
    run_mechanism(page, PROJECTION, seed="7")
    chosen_label = pin(page, 2)
    run_mechanism(page, GAUSSIAN, seed="7", b="0.5", epsilon="2")
    pin(page, 3)
    go(page, "feasibility")
    pin(page, 4)
    # the group chooses the projection run and writes why; the Mechanisms page still shows the Gaussian mechanism
    go(page, "workshop")
    page.get_by_role("radiogroup", name="The group chooses").get_by_text(re.compile(r"^2\. ")).click()
    idle(page)
    rationale = page.get_by_role("textbox", name="Why the group chose it")
    rationale.fill("The projection keeps accuracy within the interval we need (browser test).")
    rationale.press("Tab")
    idle(page)
    go(page, "export")
    record = export_record(page, ARTIFACTS / "decision-record-workshop-choice.json")
    choice = record.workshop.choice
    assert choice is not None and choice.label == chosen_label
    assert record.release.mechanism == choice.mechanism and record.release.mechanism["kind"] == "projection"
    assert record.release.seed is None  # released with fresh randomness; the evidence's seed replays the evidence
    assert record.rationale == "The projection keeps accuracy within the interval we need (browser test)."
    assert record.candidate == choice.guarantee
    # the page said that the pages show another configuration, and exported the choice (its default answer)
    expect(page.get_by_text("The Workshop's choice and the pages differ.", exact=False)).to_be_visible()
    command = record.evaluate_command()
    assert command is not None and command.endswith("--seed 7 --repetitions 5")
    # the data holder's replay of the evidence, from the record alone (plus the data)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):  # python -m engine evaluate …, in this process (it imports the same)
        assert main(["evaluate", "--config", str(ARTIFACTS / "decision-record-workshop-choice.json"),
                     "--input", str(table), "--seed", "7", "--repetitions", "5"]) == 0
    replay = json.loads(printed.getvalue())
    ev = choice.evidence
    private, gamma = replay["program"]["private"], replay["program"]["decision_agreement"]
    figures = {
        "chosen": choice.label, "metric": ev.metric,
        "evidence": {"mean": ev.value.mean, "low": ev.value.low, "high": ev.value.high,
                     "measured_gamma": [ev.measured_gamma.mean, ev.measured_gamma.low, ev.measured_gamma.high],
                     "protections": ev.protections},
        "evaluate": {"mean": private["mean"], "low": private["ci_low"], "high": private["ci_high"],
                     "measured_gamma": [gamma["mean"], gamma["ci_low"], gamma["ci_high"]],
                     "protections": {k.removeprefix("protection_"): v["mean"] for k, v in replay["protection"].items()
                                     if k.startswith("protection_") and k.removeprefix("protection_") in ev.protections}},
    }
    (ARTIFACTS / "workshop-choice-replay.json").write_text(json.dumps(figures, indent=2, ensure_ascii=False))
    print("\nWorkshop choice replayed by evaluate --config:", json.dumps(figures, ensure_ascii=False))
    assert replay["mechanism"] == choice.mechanism and replay["repetitions"] == ev.repetitions == 5
    assert (private["mean"], private["ci_low"], private["ci_high"]) == (ev.value.mean, ev.value.low, ev.value.high)
    assert (gamma["mean"], gamma["ci_low"], gamma["ci_high"]) == (
        ev.measured_gamma.mean, ev.measured_gamma.low, ev.measured_gamma.high)
    assert figures["evaluate"]["protections"] == ev.protections
    no_exception(page)
