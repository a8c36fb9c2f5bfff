"""A property of the project state (issue 31): whatever a group does — page visits, edits, runs, sweeps, pins,
choices, reloads (also in the middle of a run), exports, imports and the upload a record asks for — every result
shown as current was computed from the configuration the pages hold, every pin carries its result's own
configuration, and every exported record releases the Workshop's chosen candidate (or is refused, for a reason it
states), with no sweep or evidence attributed to data or a program it was not computed on.

The machine drives the state module's typed methods the way the pages do (:mod:`ui.state`, :mod:`ui.records`,
:mod:`ui.session_store`, the Data page's :func:`ui.sections.data_upload.handle_upload`) on a real public table (Palmer
penguins). Results are real engine results (:func:`engine.release_analysis.analyse_release`,
:func:`engine.sweeps.run_sweep`), memoised per configuration for the module: one release per Mechanisms run instead
of the page's five (a constant of the page, recorded in each run's evidence) keeps the whole property under about
20 s. Hypothesis runs a fixed number of examples, derandomized, without a database: the same sequences every run.
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from engine.analysis import AnalysisConfig
from engine.data.preparation import Categorical, DataSpec, prepare
from engine.decision_record import load_decision_record
from engine.errors import EngineError
from engine.evaluation.programs import ProgramConfig
from engine.guarantee import Guarantee
from engine.mechanisms.gaussian import GaussianMechanism
from engine.release import ReleaseConfig
from engine.release_analysis import analyse_release
from engine.sweeps import Budget, SweepConfig, run_sweep
from engine.workshop import Candidate, candidate_from_run, candidate_from_sweep
from tests.real_data import penguins
from ui import session_store
from ui.cached import LoadedData, sha256_bytes
from ui.records import merged_rationale, pages_differ, pages_mechanism, record_from_state, state_from_record
from ui.state import MechanismRun, RunConfig, RunContext, StudioState, Work, describe_run

FEATURES = ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "species")
SPECS = {
    "all": DataSpec(FEATURES, target="sex", positive_class=("male",), drop_missing=True,
                    categorical={"species": Categorical(("Adelie", "Chinstrap", "Gentoo"))}),
    "bills": DataSpec(FEATURES[:2], target="sex", positive_class=("male",), drop_missing=True),
}
PROGRAMS = (ProgramConfig(kind="classification"), ProgramConfig(kind="classification", approval_threshold=0.6))
CANDIDATES = (Guarantee(epsilon=2.0, delta=1e-3, b=0.5), Guarantee(epsilon=1.0, delta=1e-3, b=2.0))
MECHANISMS = (GaussianMechanism(b=0.5, epsilon=2.0, delta=1e-3), GaussianMechanism(b=2.0, epsilon=1.0, delta=1e-3),
              GaussianMechanism(b=0.05, epsilon=4.0, delta=1e-3))  # the last: implied classic DP vacuous
#: The seed a run drawn "from the operating system" uses here, so that runs are memoised (never shown or exported).
OS_SEED = 99
_RUNS: dict[str, Any] = {}
_LOADED: dict[str, LoadedData] = {}
_SWEEPS: dict[str, Any] = {}


class Upload:
    """What ``st.file_uploader`` hands the Data page."""

    def __init__(self, content: bytes, name: str) -> None:
        self.content, self.name = content, name

    def getvalue(self) -> bytes:
        return self.content


def file_bytes() -> bytes:
    buffer = io.StringIO()
    penguins().to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def loaded_for(state: StudioState) -> LoadedData | None:
    """The Data page's loaded data for the session (None while the file a link or record names is awaited)."""
    if state.upload_bytes is None:
        return None
    spec = state.spec if state.spec is not None else SPECS["all"]
    key = spec.to_json()
    if key not in _LOADED:  # what ui.cached.current_data caches
        frame = penguins()
        prepared = prepare(frame, spec)
        _LOADED[key] = LoadedData(key="upload", frame=frame, spec=spec, default_spec=None, prepared=prepared,
                                  title="penguins.csv", description="", synthetic=False, program=None, notes=(),
                                  default_program=None)
    loaded = _LOADED[key]
    state.data_fingerprint, state.n, state.d = loaded.prepared.fingerprint, loaded.prepared.n, loaded.prepared.d
    return loaded


def run_result(config: RunConfig, loaded: LoadedData) -> MechanismRun:
    """The Mechanisms page's run of ``config`` (memoised per configuration; one release)."""
    key = config.key()
    if key not in _RUNS:
        _RUNS[key] = analyse_release(
            loaded.frame, ReleaseConfig.of(loaded.spec, config.mechanism, seed=config.recorded_seed),
            AnalysisConfig(program=config.program), config.candidate, seed=config.seed, repetitions=1)
    result = _RUNS[key]
    assert result.summary["data"]["sha256"] == config.data  # the result is of the configuration's data
    return MechanismRun(config, result)


def sweep_config(program: ProgramConfig) -> SweepConfig:
    return SweepConfig(budgets=(Budget(1.5, 6e-4, 0.5, 4e-4),), b_values=(0.5,), mechanism="gaussian",
                       program=program, seed=0, repetitions=1, attacks=("distinguishing",))


def sweep_result(config: SweepConfig, loaded: LoadedData):
    key = loaded.prepared.fingerprint + config.to_json()
    if key not in _SWEEPS:
        _SWEEPS[key] = run_sweep(loaded.prepared, config, workers=1)
    return _SWEEPS[key]


class Studio(RuleBasedStateMachine):
    """One group's session, driven through the state module as the pages drive it."""

    def __init__(self) -> None:
        super().__init__()
        self.state = StudioState()
        self.file = file_bytes()
        self.user_seed: int | None = None
        self.record = None
        self.upload()
        self.state.spec = SPECS["all"]  # the Data page: the outcome and the features chosen

    # ------------------------------------------------------------------------------------------ helpers
    def loaded(self) -> LoadedData | None:
        return loaded_for(self.state)

    def program(self) -> ProgramConfig:
        return self.state.program if self.state.program is not None else PROGRAMS[0]

    def form(self, loaded: LoadedData) -> RunConfig:
        """The configuration the Mechanisms form holds: the configured mechanism (or the candidate's Gaussian) with
        the session's seed, on the loaded data, program and candidate."""
        candidate = self.state.candidate_or_default()
        mechanism = self.state.mechanism or GaussianMechanism.from_budget(candidate.b, candidate.epsilon,
                                                                          candidate.delta)
        context = RunContext(loaded.prepared.fingerprint, self.program(), candidate, None)
        seed = self.user_seed
        return context.config(mechanism, seed if seed is not None else OS_SEED, user_seed=seed is not None)

    # ---------------------------------------------------------------------------------------------- rules
    @rule()
    def upload(self) -> None:
        """The Data page takes the file in (first upload, a re-upload, or the file an imported record asks for)."""
        from ui.sections import data_upload

        before = self.state.sweeps
        error = data_upload.handle_upload(self.state, Upload(self.file, "penguins.csv"))
        assert error is None, error
        assert self.state.sweeps == before  # an upload never drops results: they are filed by data fingerprint

    @rule(name=st.sampled_from(sorted(SPECS)))
    def edit_preparation(self, name: str) -> None:
        if self.state.spec != SPECS[name]:
            self.state.spec = SPECS[name]
            self.state.forget_data_results()

    @rule(i=st.integers(0, len(PROGRAMS) - 1))
    def edit_program(self, i: int) -> None:
        self.state.program = PROGRAMS[i]

    @rule(i=st.integers(0, len(CANDIDATES) - 1))
    def edit_candidate(self, i: int) -> None:
        c = CANDIDATES[i]
        self.state.set_candidate(b=c.b, epsilon=c.epsilon, delta=c.delta)

    @rule(i=st.integers(0, len(MECHANISMS) - 1))
    def configure_mechanism(self, i: int) -> None:
        """The Mechanisms form submitted without running, a sweep point used, or the recommended point used."""
        self.state.configure_mechanism(MECHANISMS[i])

    @rule(seed=st.sampled_from([None, 7]))
    def edit_seed(self, seed: int | None) -> None:
        self.user_seed = seed
        self.state.seed = seed

    @rule()
    def run_mechanism(self) -> None:
        """Run the mechanism (the form's configuration), then visit the Mechanisms page."""
        loaded = self.loaded()
        if loaded is None:
            return
        self.state.request_run(self.form(loaded))
        self.visit_mechanisms()

    @rule()
    def visit_mechanisms(self) -> None:
        loaded = self.loaded()
        if loaded is None:
            return
        request = self.state.run_request
        if request is not None:  # the page computes what was asked for, exactly
            if request.data == loaded.prepared.fingerprint:
                self.state.remember_run(run_result(request, loaded))
            self.state.run_request = None

    @rule()
    def sweep(self) -> None:
        loaded = self.loaded()
        if loaded is None:
            return
        self.state.set_sweeps((sweep_result(sweep_config(self.program()), loaded),))

    @rule()
    def pin_shown_run(self) -> None:
        loaded = self.loaded()
        if loaded is None:
            return
        shown, _ = self.state.current_run(self.form(loaded))
        if shown is None or shown.config.data != loaded.prepared.fingerprint:
            return
        label = self.state.pin_label("Mechanisms run", shown.result.mechanism)
        try:
            pinned = self.state.pin(candidate_from_run(shown.result, label, program=shown.config.program))
        except EngineError:
            return  # six pinned, or this configuration already is
        # the pin carries the run's own configuration and label, never the form's
        assert pinned.mechanism == shown.config.mechanism.to_dict()
        assert pinned.evidence is not None and pinned.evidence.data == shown.config.data
        assert pinned.evidence.measured_with(shown.config.program)
        assert shown.config.label().split(",")[0] in pinned.label or "Gaussian" in pinned.label

    @rule(point=st.sampled_from([0, 1]))
    def pin_sweep_point(self, point: int) -> None:
        loaded = self.loaded()
        if loaded is None:
            return
        results = self.state.sweeps_for(loaded.prepared.fingerprint)
        if not results:
            return
        result = results[0]
        points = sorted(set(result.table.loc[result.table["reference"] != "non-private", "point"]))
        index = int(points[point % len(points)])
        found = result.mechanism_at(index, d=loaded.prepared.d)
        assert found is not None
        try:
            pinned = self.state.pin(candidate_from_sweep(result, index, self.state.pin_label("Sweep", found[0]),
                                                         d=loaded.prepared.d))
        except EngineError:
            return
        assert pinned.evidence is not None and pinned.evidence.data == result.fingerprint
        assert pinned.evidence.measured_with(result.config.program) and pinned.evidence.method == "sweep"

    @rule()
    def pin_budget(self) -> None:
        cand = self.state.candidate_or_default()
        try:
            self.state.pin(Candidate(label=self.state.pin_label("Feasibility", guarantee=cand), source="feasibility",
                                     guarantee=cand))
        except EngineError:
            return

    @rule(i=st.integers(-1, 5))
    def choose(self, i: int) -> None:
        if i < len(self.state.workshop.pinned):
            self.state.choose(None if i < 0 else i)

    @rule(i=st.integers(0, 5))
    def unpin(self, i: int) -> None:
        if i < len(self.state.workshop.pinned):
            chosen = self.state.workshop.choice
            self.state.unpin(i)
            assert self.state.workshop.choice in (None, chosen)  # the choice follows its candidate, or is cleared

    @rule(text=st.sampled_from(["", "fewest exclusion errors", "protect neighbours within B"]))
    def write_rationale(self, text: str) -> None:
        self.state.rationale = text
        assert self.state.workshop.rationale == text  # one rationale

    @rule()
    def reload(self) -> None:
        """A browser reload: the store keeps the state (and its results) and hands the new session a copy."""
        key = session_store.new_key()
        session_store.save(key, self.state, {})
        kept = session_store.restore(key)
        session_store.forget(key)
        if kept is None:  # a session with nothing of its own is not stored: the reload starts afresh
            assert session_store.worth(self.state, {}) == 0
            self.state = StudioState(upload_bytes=self.state.upload_bytes, upload_name=self.state.upload_name,
                                     upload_fingerprint=self.state.upload_fingerprint, source=self.state.source)
            return
        state, _ = kept
        state.restored_after_reload()
        assert state.interrupted is None or state.interrupted == self.state.working
        self.state = state

    @rule()
    def reload_during_a_run(self) -> None:
        """A reload while the Mechanisms run of the form's configuration computes: the new session says what was
        interrupted, and "Run it again" asks for exactly that run."""
        loaded = self.loaded()
        if loaded is None:
            return
        config = self.form(loaded)
        self.state.begin_work(Work("run", describe_run(config), run=config))
        key = session_store.new_key()
        session_store.save(key, self.state, {})
        kept = session_store.restore(key)
        session_store.forget(key)
        assert kept is not None
        state, _ = kept
        state.restored_after_reload()
        assert state.interrupted is not None and state.interrupted.run == config and state.working is None
        assert state.run_again() == "pages/studio/mechanisms.py" and state.run_request == config
        self.state = state
        self.visit_mechanisms()

    @rule()
    def export(self) -> None:
        loaded = self.loaded()
        if loaded is None:
            return
        self.check_export(loaded)

    @precondition(lambda self: self.record is not None)
    @rule(same_file=st.booleans())
    def import_record(self, same_file: bool) -> None:
        """Import the last exported record: into a session holding the same file, or into a fresh browser (the
        record asks for the upload; its sweeps come back with it)."""
        record = load_decision_record(self.record.to_json())
        current = self.state if same_file else StudioState()
        new, _ = state_from_record(record, current)
        assert new.workshop == (record.workshop or new.workshop) and new.rationale == merged_rationale(record)
        assert {r.fingerprint for r in new.sweeps} <= {record.data.sha256}
        if record.chosen_is_released:  # the pages now show the released choice: export does not ask again
            assert new.mechanism is not None and new.mechanism.to_dict() == record.release.mechanism
        self.state = new
        if new.upload_bytes is None:
            self.upload()  # the file the record names
            assert {r.fingerprint for r in self.state.sweeps} == {t.fingerprint for t in record.tradeoffs}
        loaded = self.loaded()
        assert loaded is not None and loaded.prepared.fingerprint == record.data.sha256
        if record.chosen_is_released:
            assert not pages_differ(self.state, loaded.prepared.d)

    # ----------------------------------------------------------------------------------------- the property
    def check_export(self, loaded: LoadedData) -> None:
        state, fp, d = self.state, loaded.prepared.fingerprint, int(loaded.prepared.d)
        choice = state.workshop.choice
        program = self.program()
        for release in ("workshop", "pages"):
            try:
                record = record_from_state(state, loaded, release=release)
            except EngineError as exc:  # an explicit refusal, only of a choice that cannot be released as measured
                assert release == "workshop" and choice is not None and choice.evidence is not None, exc
                ev = choice.evidence
                assert ev.data not in (None, fp) or not ev.measured_with(program), exc
                continue
            if release == "workshop":
                assert load_decision_record(record.to_json()) == record
            assert all(t.fingerprint == record.data.sha256 == fp for t in record.tradeoffs)
            if choice is not None and release == "workshop":
                assert record.chosen_is_released and record.release.seed is None
                assert record.release.mechanism == choice.build_mechanism(d).to_dict()
                assert record.candidate == choice.guarantee
                ev = choice.evidence
                assert ev is None or (ev.data in (None, record.data.sha256) and ev.measured_with(record.program))
            else:
                assert record.workshop is None or record.workshop.chosen is None
                assert record.release.mechanism == pages_mechanism(state)
            assert record.rationale == state.rationale
            if release == "workshop":
                self.record = record

    @invariant()
    def shown_results_are_of_the_pages_configuration(self) -> None:
        loaded = self.loaded()
        for run in self.state.runs:  # every kept run is attributed to its own configuration
            assert run.result.mechanism == run.config.mechanism
            assert run.result.summary["data"]["sha256"] == run.config.data
            assert run.result.summary["seed"] == run.config.recorded_seed
        if loaded is None:
            return
        form = self.form(loaded)
        shown, stale = self.state.current_run(form)
        if shown is not None and not stale:
            assert shown.config.setup() == form.setup()
        status = self.state.sweeps_status(loaded.prepared.fingerprint, [sweep_config(self.program())])
        if status == "current":
            results = self.state.sweeps_for(loaded.prepared.fingerprint)
            assert [r.config for r in results] == [sweep_config(self.program())]
            assert all(r.fingerprint == loaded.prepared.fingerprint for r in results)
        labels = [c.label for c in self.state.workshop.pinned]
        assert len(labels) == len(set(labels))  # unique labels


Studio.TestCase.settings = settings(max_examples=20, stateful_step_count=14, deadline=None, derandomize=True,
                                    database=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _outside_a_page(monkeypatch):
    """The Data page's upload resets its widgets; outside a page run there are none."""
    from ui.sections import data_upload

    monkeypatch.setattr(data_upload, "reset_column_widgets", lambda: None)
    session_store.clear()
    yield
    session_store.clear()


TestTheDecisionIsTheRecord = Studio.TestCase


def test_the_harness_uses_the_file_the_record_names():
    assert sha256_bytes(file_bytes()) == sha256_bytes(file_bytes())
    assert json.loads(json.dumps(SPECS["all"].to_dict())) == SPECS["all"].to_dict()
    assert replace(CANDIDATES[0]) == CANDIDATES[0]
