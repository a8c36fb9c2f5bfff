"""Issue 31 in the engine: a decision record releases the Workshop's chosen candidate (or is refused), evidence says
what it was measured with and how, sweeps of other data stay out, and ``python -m engine evaluate`` on the record
replays the chosen candidate's evidence to the last digit — on a real public table (Palmer penguins)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.analysis import AnalysisConfig
from engine.cli import main
from engine.data.preparation import Categorical, DataSpec, prepare
from engine.decision_record import build_decision_record, load_decision_record
from engine.errors import InvalidParameterError
from engine.evaluation.programs import ProgramConfig
from engine.guarantee import Guarantee
from engine.mechanisms.gaussian import GaussianMechanism
from engine.release import ReleaseConfig
from engine.release_analysis import analyse_release
from engine.sweeps import SweepResult, preset
from engine.workshop import Candidate, Workshop, candidate_from_run, comparison_cells, comparison_rows
from tests.real_data import penguins

SPEC = DataSpec(("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "species"), target="sex",
                positive_class=("male",), drop_missing=True,
                categorical={"species": Categorical(("Adelie", "Chinstrap", "Gentoo"))})
PROGRAM = ProgramConfig(kind="classification")
CHOSEN = GaussianMechanism(b=0.5, epsilon=2.0, delta=1e-3)


@pytest.fixture(scope="module")
def measured():
    """The Mechanisms page's run of the chosen mechanism on the penguins (seed 7, five releases, every attack)."""
    frame = penguins()
    prepared = prepare(frame, SPEC)
    run = analyse_release(frame, ReleaseConfig.of(SPEC, CHOSEN, seed=7), AnalysisConfig(program=PROGRAM),
                          CHOSEN.guarantee(), seed=7, repetitions=5)
    return frame, prepared, run


def record_for(prepared, workshop, mechanism, **overrides):
    kwargs = dict(prepared=prepared, source="upload", dataset=None, title="penguins.csv", synthetic=False,
                  columns=tuple(penguins().columns), candidate=CHOSEN.guarantee(), gammas=(0.9,),
                  delta_is_default=False, mechanism=mechanism, program=PROGRAM, rationale="the group's reasons",
                  file_sha256="0" * 64, workshop=workshop, created="2026-01-01T00:00:00+00:00")
    kwargs.update(overrides)
    return build_decision_record(**kwargs)


def three_pins(run):
    budget = Candidate(label="budget", source="feasibility", guarantee=Guarantee(epsilon=1.0, delta=1e-3, b=0.4))
    wider = Candidate.of("wider", "tradeoffs", GaussianMechanism(b=2.0, epsilon=4.0, delta=1e-3))
    chosen = candidate_from_run(run, "the run", program=PROGRAM)
    return Workshop(pinned=(budget, chosen, wider), chosen=1, rationale="the group's reasons")


def test_evidence_states_its_program_and_how_it_was_measured(measured):
    _, prepared, run = measured
    ev = candidate_from_run(run, "the run", program=PROGRAM).evidence
    assert ev.program == PROGRAM.to_dict() and ev.method == "release" and ev.seed == 7 and ev.replayable
    assert ev.measured_with(PROGRAM) and not ev.measured_with(ProgramConfig(kind="classification", approve_share=0.5,
                                                                           approval_rule="top_share"))
    assert ev.data == prepared.fingerprint


def test_a_record_releases_the_chosen_candidate_or_is_refused(measured):
    _, prepared, run = measured
    workshop = three_pins(run)
    with pytest.raises(InvalidParameterError, match="a record releases the chosen candidate"):
        record_for(prepared, workshop, {"kind": "gaussian", "b": 0.4, "epsilon": 1.0, "delta": 1e-3})
    record = record_for(prepared, workshop, CHOSEN.to_dict())
    assert record.chosen_is_released and record.release.mechanism == CHOSEN.to_dict()
    # a choice cleared: another configuration may be released, and the record says no candidate is released
    other = record_for(prepared, workshop.choose(None), {"kind": "gaussian", "b": 0.4, "epsilon": 1.0, "delta": 1e-3})
    assert not other.chosen_is_released and other.evaluate_command() is None


def test_a_sweep_of_other_data_never_goes_into_a_record(measured):
    _, prepared, _ = measured
    config = preset("quick", n=100, mechanism="gaussian")
    foreign = SweepResult(config=config, table=SweepResult.from_rows(config, [{"cell": 0, "point": 0, "rep": 0}]).table,
                          fingerprint="f" * 64)
    with pytest.raises(InvalidParameterError, match="computed on other data"):
        record_for(prepared, None, CHOSEN.to_dict(), sweeps=(foreign,))


def test_evaluate_on_the_record_replays_the_chosen_candidates_evidence_to_the_digit(measured, tmp_path, capsys):
    frame, prepared, run = measured
    record = record_for(prepared, three_pins(run), CHOSEN.to_dict())
    path = tmp_path / "decision-record.json"
    path.write_text(record.to_json())
    data = tmp_path / "penguins.csv"
    frame.to_csv(data, index=False)
    again = load_decision_record(path.read_bytes())
    command = again.evaluate_command(str(path))
    assert command == f"python -m engine evaluate --config {path} --input YOUR_DATA.csv --seed 7 --repetitions 5"
    assert main(["evaluate", "--config", str(path), "--input", str(data), "--seed", "7", "--repetitions", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    ev = again.workshop.choice.evidence
    assert out["mechanism"] == CHOSEN.to_dict() and out["repetitions"] == ev.repetitions
    private = out["program"]["private"]
    assert (private["mean"], private["ci_low"], private["ci_high"]) == (ev.value.mean, ev.value.low, ev.value.high)
    gamma = out["program"]["decision_agreement"]
    assert (gamma["mean"], gamma["ci_low"], gamma["ci_high"]) == (
        ev.measured_gamma.mean, ev.measured_gamma.low, ev.measured_gamma.high)
    for name, score in ev.protections.items():
        assert out["protection"][f"protection_{name}"]["mean"] == score
    assert np.isfinite(ev.value.mean)


def test_no_replay_is_promised_for_evidence_that_cannot_be_replayed(measured):
    _, prepared, run = measured
    workshop = three_pins(run)
    fresh = workshop.replace_candidate(1, workshop.pinned[1].with_evidence(
        changed(workshop.pinned[1].evidence, seed=None)))
    assert record_for(prepared, fresh, CHOSEN.to_dict()).evaluate_command() is None  # fresh randomness
    swept = workshop.replace_candidate(1, workshop.pinned[1].with_evidence(
        changed(workshop.pinned[1].evidence, method="sweep")))
    assert record_for(prepared, swept, CHOSEN.to_dict()).evaluate_command() is None  # a sweep's own seeds
    other_program = record_for(prepared, workshop, CHOSEN.to_dict(), program=ProgramConfig(kind="classification",
                                                                                          approval_threshold=0.6))
    assert other_program.evaluate_command() is None  # measured with another program


def changed(evidence, **changes):
    from dataclasses import replace

    return replace(evidence, **changes)


def test_records_written_before_evidence_stated_its_program_still_load(measured):
    _, prepared, run = measured
    data = json.loads(record_for(prepared, three_pins(run), CHOSEN.to_dict()).to_json())
    for pinned in data["workshop"]["pinned"]:
        if pinned["evidence"] is not None:
            pinned["evidence"].pop("program")
            pinned["evidence"].pop("method")
    old = load_decision_record(json.dumps(data))
    assert old.workshop.choice.evidence.program is None and old.workshop.choice.evidence.method is None
    assert old.evaluate_command() is None  # not known to be replayable


def test_a_vacuous_candidate_is_no_bound_in_the_comparison_never_a_number():
    tight = Candidate.of("tight", "tradeoffs", GaussianMechanism(b=0.05, epsilon=4.0, delta=1e-3))
    row = comparison_rows((tight,))[0]
    assert row.implied_vacuous and row.implied_delta >= 1
    cells = comparison_cells(row)
    assert cells["Implied classic DP (ε', δ') — conversion"].startswith("no bound for any two records")
    assert cells["Per-record loss at t = 2 (ε, δ)"].startswith("no bound")
    classic = comparison_rows((Candidate.of("classic", "tradeoffs", GaussianMechanism(b=2.0, epsilon=4.0,
                                                                                     delta=1e-3)),))[0]
    assert not classic.implied_vacuous and comparison_cells(classic)["Implied classic DP (ε', δ') — conversion"] == \
        f"ε' = {classic.implied_epsilon:.4g}, δ' = {classic.implied_delta:.3g}"
