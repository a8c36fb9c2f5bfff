"""The Studio's project state: one typed object per session (:class:`StudioState`), and the only module that keeps
anything in ``st.session_state`` besides the widgets' own values.

What the group decides is only defensible if what was chosen, shown, pinned and exported are the same thing. So the
decision lives here, once: the data (spec and fingerprint), the program, the candidate (B, ε, δ), the configured
mechanism, every result with the exact configuration it was computed from (:class:`RunConfig` for a Mechanisms
run, ``SweepResult.config`` for a sweep, :class:`RecommendRequest` for a recommendation), the workshop's pins, the
chosen candidate and the one rationale. Pages read and write it through the typed fields and methods below; a
result is shown as current only when its configuration is the one the page's form and the session hold now
(:meth:`StudioState.current_run`, :meth:`StudioState.sweeps_status`), otherwise it is shown greyed with "settings
changed — run again".

API note for page authors
-------------------------
* ``state = get_state()`` returns this session's :class:`StudioState` (``st.session_state["studio"]``). It is a
  plain, picklable dataclass (``runner.enforceSerializableSessionState`` is on, and a reload restores a deep copy
  of it, :mod:`ui.session_store`): store engine configuration objects (frozen ``Serializable`` dataclasses), plain
  values and engine result dataclasses, never figures, generators, file handles or lambdas.
* Widget keys are namespaced ``"<page>.<name>"`` (``"feasibility.epsilon"``, ``"mechanisms.kind"``). Streamlit
  forgets a widget's value when its page is not shown, so the durable value lives in a ``StudioState`` field:

  .. code-block:: python

      seed_widget("feasibility.epsilon", state.candidate.epsilon)       # before drawing the widget
      st.number_input("ε", key="feasibility.epsilon",
                      on_change=persist, args=("feasibility.epsilon", "epsilon_choice"))

  :func:`seed_widget` puts the durable value into the widget key only when the widget is not live, so do not pass
  ``value=``/``index=`` as well. :func:`persist` copies the widget's value into the named ``StudioState``
  field (a callable instead of a field name receives ``(state, value)``).
* Everything that is not a widget's own value — runs, sweeps, requests, progress, errors of a form, the data
  editors' last tables — is a typed field of :class:`StudioState`; pages never invent ``st.session_state`` keys.
* Long work (a Mechanisms run, a sweep, a recommendation, a public-information study) is announced with
  :meth:`StudioState.begin_work` and :func:`checkpoint` before it starts and ended with
  :meth:`StudioState.finish_work`: a reload in between restores the session with :attr:`StudioState.interrupted`
  set, and every page says what was interrupted and offers to run it again (:func:`ui.common.show_interrupted`).
* Scenario links live in :mod:`ui.links`, decision records (export and import) in :mod:`ui.records`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import streamlit as st

from engine.errors import EngineError, InvalidParameterError
from engine.guarantee import Guarantee
from engine.workshop import MAX_LABEL, Candidate, Workshop

if TYPE_CHECKING:  # imported lazily at run time: the data engine is optional for the early pages
    import pandas as pd

    from engine.data.preparation import DataSpec
    from engine.evaluation.programs import ProgramConfig
    from engine.mechanisms import RecordMechanism
    from engine.public_info.results import CountStudyResults
    from engine.recommend import Recommendation
    from engine.release_analysis import ReleaseAnalysis
    from engine.sweeps import SweepConfig, SweepResult

STATE_KEY = "studio"
#: Where this session's key for the in-memory store lives (:mod:`ui.session_store`); the address holds it as ``sid``.
SESSION_KEY = "studio.session_key"
DEFAULT_DEMO = "togo-demo"
#: Environment variable naming the demo a new session opens on (``studio app --demo NAME`` sets it for its server).
DEMO_ENV = "STUDIO_DEMO"
DEFAULT_GAMMAS: tuple[float, ...] = (0.99,)
#: Candidate shown before the user picks one: the paper's Example 1 point (γ = 0.99, ε = 1 → B ≤ 0.4).
DEFAULT_CANDIDATE = (0.4, 1.0)
#: What the Studio's inputs accept (the Feasibility page's widgets). A link or record outside these ranges is
#: refused with a message — never clamped to the nearest allowed value by a widget (:mod:`ui.links`,
#: :mod:`ui.records`).
STUDIO_EPSILON = (0.001, 50.0)
STUDIO_B = (0.001, 2.0)
STUDIO_DELTA_MAX = 0.5
#: Mechanisms runs one session keeps (the current one and the previous one), newest last.
KEPT_RUNS = 2
#: Widget-key prefixes of the pages: their transient values are dropped when a record replaces the session.
PAGE_PREFIXES = ("data.", "feasibility.", "mechanisms.", "tradeoffs.", "per_record.", "public_info.", "workshop.")

WorkKind = Literal["run", "sweep", "recommendation", "public_info"]
#: The page each kind of work runs on (its "run it again" button opens it).
WORK_PAGES: dict[str, str] = {
    "run": "pages/studio/mechanisms.py", "sweep": "pages/studio/tradeoffs.py",
    "recommendation": "pages/studio/feasibility.py", "public_info": "pages/studio/public_info.py",
}


# ------------------------------------------------------------------------------------------------- results
def _json(value: Any) -> str:
    return "null" if value is None else str(value.to_json())


def short_number(value: float) -> str:
    """A parameter as a label shows it: four significant digits ("0.6087", "7.43", "4.17e-04")."""
    return f"{float(value):.4g}"


def mechanism_label(mechanism: RecordMechanism, *, short: bool = False) -> str:
    """"Gaussian mechanism (targeted DP), B = 0.1, ε = 0.6087, δ = 2.4e-04" — the mechanism's own parameters
    (its guarantee), never the form's or the candidate's; ``short``: "Gaussian B = 0.1, ε = 0.6087, δ = 2.4e-04"."""
    cls = type(mechanism)
    name = (cls.SHORT_LABEL or cls.LABEL) if short else cls.LABEL + ","  # a pin's label heads a column: short
    try:
        g = mechanism.guarantee()
    except EngineError:
        return name.rstrip(",")
    if not isinstance(g, Guarantee):  # k-anonymity
        return f"{name} k = {getattr(mechanism, 'k', '?')}"
    where = f"B = {short_number(g.b)}, " if g.relation == "row" else "element-wise, "
    return f"{name} {where}ε = {short_number(g.epsilon)}, δ = {g.delta:.2g}"


@dataclass(frozen=True)
class RunConfig:
    """Everything a Mechanisms run is computed from: the result of a run is attributed to nothing else.

    ``data`` is the prepared data's fingerprint (``PreparedData.fingerprint``: the used columns and the spec),
    ``candidate`` the (B, ε, δ) the alternatives of the honest comparison are configured at, ``seed`` the one seed
    of the release and its analysis (drawn from the operating system unless ``user_seed``: then it is never shown
    or exported), ``dataset`` the demo's name (None for an upload).
    """

    data: str
    mechanism: RecordMechanism
    program: ProgramConfig | None
    candidate: Guarantee
    seed: int
    user_seed: bool
    dataset: str | None = None

    @property
    def recorded_seed(self) -> int | None:
        """The seed a record or a pin may state: the user's (a simulation), None for a real release."""
        return self.seed if self.user_seed else None

    def setup(self) -> tuple[str, ...]:
        """What the user chose: everything but a seed drawn from the operating system."""
        return (self.data, self.mechanism.to_json(), _json(self.program), self.candidate.to_json(),
                str(self.seed) if self.user_seed else "fresh", str(self.dataset))

    def key(self) -> str:
        """One string naming the run's inputs, the seed included."""
        return json.dumps([*self.setup()[:4], str(self.seed), str(self.user_seed), str(self.dataset)])

    def confirm_key(self) -> str:
        """One string naming the run's inputs without its seed: what a user agrees to run after its estimate, and
        what a workshop room shares runs with fresh randomness under."""
        return json.dumps([*self.setup()[:4], str(self.dataset)])

    def label(self) -> str:
        return mechanism_label(self.mechanism)

    def with_seed(self, seed: int) -> RunConfig:
        return replace(self, seed=int(seed))

    def differences(self, other: RunConfig) -> list[str]:
        """What differs between this run's configuration and ``other`` (the form's), in words."""
        out = []
        if self.data != other.data:
            out.append("the data or their preparation")
        if self.mechanism != other.mechanism:
            out.append(f"the mechanism (this run: {self.label()}; the form: {other.label()})")
        if _json(self.program) != _json(other.program):
            out.append("the program")
        if self.candidate != other.candidate:
            out.append("the candidate (B, ε, δ) of the comparison")
        if self.user_seed != other.user_seed or (self.user_seed and self.seed != other.seed):
            out.append("the seed")
        return out


@dataclass(frozen=True)
class RunContext:
    """The part of a run's configuration the Mechanisms form does not hold: the data, program and candidate."""

    data: str
    program: ProgramConfig | None
    candidate: Guarantee
    dataset: str | None = None

    def config(self, mechanism: RecordMechanism, seed: int, *, user_seed: bool) -> RunConfig:
        return RunConfig(data=self.data, mechanism=mechanism, program=self.program, candidate=self.candidate,
                         seed=int(seed), user_seed=bool(user_seed), dataset=self.dataset)


@dataclass(frozen=True)
class MechanismRun:
    """A finished Mechanisms run and the configuration it was computed from."""

    config: RunConfig
    result: ReleaseAnalysis


@dataclass(frozen=True)
class SweepProgress:
    """A sweep under way or stopped: its configurations, the data's fingerprint and the rows finished per mechanism
    (index → rows)."""

    configs: tuple[SweepConfig, ...]
    rows: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    stopped: bool = False
    data: str = ""

    @property
    def cells(self) -> int:
        return sum(len(v) for v in self.rows.values())

    def results(self) -> list[SweepResult]:
        """The finished rows as (incomplete) sweep results, one per mechanism that has some."""
        from engine.sweeps import SweepResult

        return [SweepResult.from_rows(self.configs[i], rows, fingerprint=self.data)
                for i, rows in sorted(self.rows.items()) if rows and i < len(self.configs)]


@dataclass(frozen=True)
class RecommendRequest:
    """What a recommendation is computed from: the data's fingerprint, the program and the search (JSON)."""

    data: str
    program: str
    config: str


@dataclass(frozen=True)
class RecommendationRun:
    request: RecommendRequest
    result: Recommendation


@dataclass(frozen=True)
class SelectedPoint:
    """The sweep grid point the user chose on the Tradeoffs page (the record stores it with its sweep)."""

    mechanism: str
    point: int
    b: float
    epsilon1: float
    delta1: float
    epsilon2: float
    delta2: float
    epsilon: float
    delta: float
    reference: str
    data: str = ""

    @property
    def point_id(self) -> str:
        return f"{self.mechanism}:{self.point}"

    def to_dict(self) -> dict[str, Any]:
        """The record's (and the older session's) dictionary of the point."""
        return {"point_id": self.point_id, "mechanism": self.mechanism, "point": self.point, "b": self.b,
                "epsilon1": self.epsilon1, "delta1": self.delta1, "epsilon2": self.epsilon2, "delta2": self.delta2,
                "epsilon": self.epsilon, "delta": self.delta, "reference": self.reference}

    @classmethod
    def from_dict(cls, data: dict[str, Any], fingerprint: str = "") -> SelectedPoint:
        try:
            return cls(mechanism=str(data["mechanism"]), point=int(data["point"]), b=float(data["b"]),
                       epsilon1=float(data["epsilon1"]), delta1=float(data["delta1"]),
                       epsilon2=float(data["epsilon2"]), delta2=float(data["delta2"]),
                       epsilon=float(data["epsilon"]), delta=float(data["delta"]),
                       reference=str(data.get("reference", "tdp")), data=fingerprint)
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidParameterError(f"the selected sweep point is incomplete ({exc})") from None


@dataclass(frozen=True)
class Work:
    """Long work in progress, announced before it starts so that a reload can say what it interrupted."""

    kind: WorkKind
    description: str
    run: RunConfig | None = None
    sweeps: tuple[SweepConfig, ...] = ()
    recommend: RecommendRequest | None = None
    study: str | None = None

    @property
    def page(self) -> str:
        return WORK_PAGES[self.kind]


@dataclass
class PublicInfoWork:
    """The Public information page's count table, its study's pending run, results and whether it was stopped."""

    upload: tuple[str, bytes] | None = None
    invalid: bool = False
    pending: str | None = None
    run_id: str | None = None
    stopped: bool = False
    results: tuple[CountStudyResults, int | None] | None = None


def starting_demo() -> str:
    """The demo a new session opens on: ``$STUDIO_DEMO`` when the server was started with ``--demo``, else
    :data:`DEFAULT_DEMO`."""
    return os.environ.get(DEMO_ENV) or DEFAULT_DEMO


@dataclass
class StudioState:
    """Everything one session has chosen and computed, in one picklable object (see the module docstring)."""

    # --- dataset -----------------------------------------------------------------------------------------
    source: Literal["demo", "upload"] = "demo"
    demo_name: str = field(default_factory=starting_demo)
    upload_name: str | None = None
    upload_bytes: bytes | None = None
    upload_fingerprint: str | None = None
    spec: DataSpec | None = None
    # summary of the prepared data, refreshed by ui.cached.current_data
    data_fingerprint: str | None = None
    n: int | None = None
    d: int | None = None
    feature_names: tuple[str, ...] = ()
    dataset_title: str = ""
    synthetic: bool = True
    #: The Data page's upload: the file id taken in last, and why the last file could not be used.
    upload_seen: str | None = None
    upload_error: str | None = None
    #: The Data page's editable tables (bounds, text levels, missing values): the table each editor is drawn from
    #: (``editor_bases``) and the table as the user last left it (``editor_edits``). Streamlit forgets a data
    #: editor's edits when its page is not shown, so the page draws the editor from the last edited table then
    #: (:func:`editor_table`).
    editor_bases: dict[str, pd.DataFrame] = field(default_factory=dict)
    editor_edits: dict[str, pd.DataFrame] = field(default_factory=dict)
    # --- accuracy targets and the candidate ---------------------------------------------------------------
    gammas: tuple[float, ...] = DEFAULT_GAMMAS
    delta: float | None = None
    candidate: Guarantee | None = None
    eps_max: float = 8.0
    # --- mechanisms page -------------------------------------------------------------------------------------
    #: The configured mechanism (the Mechanisms form's, a chosen sweep point's or the recommended one).
    mechanism: RecordMechanism | None = None
    #: The candidate (B, ε, δ) the configured mechanism was set up at (the form shows it while that is the candidate).
    mechanism_origin: tuple[float, float, float] | None = None
    seed: int | None = None
    program: ProgramConfig | None = None
    #: The run the Mechanisms page is asked to compute (Run, Draw again, Run again), None once it is done.
    run_request: RunConfig | None = None
    #: True when the requested run may be one a workshop room already made (fresh randomness, not "Draw again").
    run_request_shareable: bool = False
    #: The setup (:meth:`RunConfig.confirm_key`) whose long run the user agreed to after its estimate.
    run_confirmed: str | None = None
    #: Finished runs, newest last, each with the configuration it was computed from (at most :data:`KEPT_RUNS`).
    runs: tuple[MechanismRun, ...] = ()
    #: Messages of the forms (Mechanisms, Tradeoffs) that could not be submitted, by form.
    form_errors: dict[str, str] = field(default_factory=dict)
    # --- tradeoffs page ------------------------------------------------------------------------------------
    #: The last sweep's results, one per swept mechanism, each with its configuration and data fingerprint.
    sweeps: tuple[SweepResult, ...] = ()
    sweep_pending: tuple[SweepConfig, ...] = ()
    sweep_partial: SweepProgress | None = None
    selected_point: SelectedPoint | None = None
    # --- feasibility page: the recommendation ----------------------------------------------------------------
    recommend_request: RecommendRequest | None = None
    recommendation: RecommendationRun | None = None
    # --- per-record and public-information pages ---------------------------------------------------------------
    per_record: dict[str, Any] = field(default_factory=dict)
    #: The seed of the per-record cell release when the user gives none (OS entropy; never shown or exported).
    per_record_fresh_seed: int | None = None
    #: Public-information page: data key, dependence model, seed and the CountStudyConfig (``study``) as a dict.
    public_info: dict[str, Any] = field(default_factory=dict)
    public_info_work: PublicInfoWork = field(default_factory=PublicInfoWork)
    # --- workshop (issue 12): the pinned candidates, the chosen one and the group's rationale -----------------
    workshop: Workshop = field(default_factory=Workshop)
    workshop_slide: int = 0
    workshop_measure: bool = False
    # --- export ---------------------------------------------------------------------------------------------
    #: True while the public bounds of the spec are the data's own min and max (the Data page's "fill" button):
    #: they reveal the most extreme records, so links leave them out.
    bounds_from_data: bool = False
    #: The decision record taken in last (its file id), why the last one could not be, and "just imported".
    import_seen: str | None = None
    import_error: str | None = None
    just_imported: bool = False
    # --- long work and bookkeeping ------------------------------------------------------------------------------
    #: Long work running now (announced before it starts; a reload restores it as ``interrupted``).
    working: Work | None = None
    #: Work a reload interrupted: every page says so and offers to run it again.
    interrupted: Work | None = None
    #: Version of the workshop room's shared data this session opened (ui.room.SharedData.version; 0: none).
    room_data: int = 0
    link_restored: bool = False
    #: The page this session's last run drew, and whether this run entered it from another page (or a reload).
    page: str | None = None
    entered_page: bool = True
    #: Messages to show once at the top of the next page (e.g. what a shared link could not restore).
    notices: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------------------------------------- data
    def dataset_label(self) -> str:
        """Short name of the loaded dataset for the sidebar, reports and pin labels."""
        if self.source == "upload":
            return self.upload_name or "uploaded file"
        return self.dataset_title or self.demo_name

    def default_delta(self) -> float | None:
        """δ = 1/(n+1): smaller than one over the number of people, so δ cannot cover "release one record"."""
        return None if self.n is None else 1.0 / (self.n + 1)

    def effective_delta(self) -> float:
        """The δ in use: the user's choice, else 1/(n+1), else 1e-4 before any data is loaded."""
        if self.delta is not None:
            return self.delta
        default = self.default_delta()
        return default if default is not None else 1e-4

    def candidate_or_default(self) -> Guarantee:
        """The chosen (B, ε, δ), or Example 1's point (B = 0.4, ε = 1) at the current δ if none was chosen."""
        if self.candidate is not None:
            return self.candidate
        b, eps = DEFAULT_CANDIDATE
        return Guarantee(epsilon=eps, delta=self.effective_delta(), b=b)

    def program_or(self, default: ProgramConfig | None) -> ProgramConfig | None:
        """The session's program: the Data page's settings, else ``default`` (the demo's own program with its
        population, ``LoadedData.default_program``; None for an upload without chosen settings)."""
        return self.program if self.program is not None else default

    def set_candidate(self, *, b: float, epsilon: float, delta: float) -> Guarantee:
        """Validate and store the candidate (raises ``InvalidParameterError`` on bad values)."""
        self.candidate = Guarantee(epsilon=float(epsilon), delta=float(delta), b=float(b))
        return self.candidate

    def configure_mechanism(self, mechanism: RecordMechanism) -> None:
        """Make ``mechanism`` the Mechanisms page's configuration, set up at the current candidate."""
        c = self.candidate_or_default()
        self.mechanism = mechanism
        self.mechanism_origin = (c.b, c.epsilon, c.delta)

    def switch_data(self) -> None:
        """The dataset changes: mark the summary stale (``data_fingerprint`` None) until the new data load. Results
        are kept with the fingerprint of the data they were computed on: pages show them only on those data (a
        record imported before its upload gets its sweeps back when the file arrives). ``n`` keeps the last loaded
        size, so that ``ui.cached.current_data`` can move a candidate on the default δ = 1/(n+1) to the new
        default."""
        self.data_fingerprint = None
        self.forget_editors()

    def forget_data_results(self) -> None:
        """The data's preparation changed: drop the Tradeoffs page's choice of a point (its sweep is of other
        data now; the sweep itself stays, filed under its own fingerprint)."""
        self.selected_point = None

    def enter_page(self, page: str) -> None:
        """Note the page this run draws (``app.py``): :attr:`entered_page` is True when it differs from the last."""
        self.entered_page = page != self.page
        self.page = page

    # --------------------------------------------------------------------------------------- data editors
    def set_editor_base(self, name: str, frame: pd.DataFrame) -> None:
        """Draw the editable table ``name`` from ``frame`` (built from the spec): no edit of it is kept yet."""
        self.editor_bases[name] = frame.reset_index(drop=True)
        self.editor_edits.pop(name, None)

    def keep_editor(self, name: str, frame: pd.DataFrame) -> None:
        """Keep the table ``name`` as the user left it (the editor's value after this run's edits)."""
        self.editor_edits[name] = frame.reset_index(drop=True)

    def forget_editors(self) -> None:
        self.editor_bases.clear()
        self.editor_edits.clear()

    # ------------------------------------------------------------------------------------- Mechanisms runs
    def remembered_run(self, config: RunConfig) -> MechanismRun | None:
        """This session's finished run for exactly ``config`` (its seed included), or None."""
        key = config.key()
        return next((r for r in reversed(self.runs) if r.config.key() == key), None)

    def run_for_setup(self, config: RunConfig) -> MechanismRun | None:
        """The newest finished run with ``config``'s setup (any seed when the seed is drawn from the OS): a run of
        the form's configuration the page can show as current without computing it again."""
        wanted = config.setup()
        return next((r for r in reversed(self.runs) if r.config.setup() == wanted), None)

    def remember_run(self, run: MechanismRun) -> None:
        """Keep ``run`` (at most :data:`KEPT_RUNS`, newest last)."""
        key = run.config.key()
        kept = [r for r in self.runs if r.config.key() != key]
        self.runs = tuple([*kept, run][-KEPT_RUNS:])

    @property
    def last_run(self) -> MechanismRun | None:
        return self.runs[-1] if self.runs else None

    def current_run(self, form: RunConfig | None) -> tuple[MechanismRun | None, bool]:
        """The run the Mechanisms page shows for the configuration its form holds (``form``; None when the form
        is not valid), and whether it is stale: a finished run with the form's setup is current; otherwise the
        last run is returned as stale (shown greyed, "settings changed — run again")."""
        if form is not None:
            found = self.run_for_setup(form)
            if found is not None:
                return found, False
        last = self.last_run
        return last, last is not None

    def request_run(self, config: RunConfig, *, shareable: bool = False) -> None:
        """Ask the Mechanisms page to compute ``config`` (``shareable``: a run a workshop room already made with the
        same setup and fresh randomness may be shown instead)."""
        self.run_request = config
        self.run_request_shareable = bool(shareable and not config.user_seed)
        self.form_errors.pop("mechanisms", None)

    # ----------------------------------------------------------------------------------------------- sweeps
    def sweeps_for(self, fingerprint: str) -> tuple[SweepResult, ...]:
        """The session's sweep results computed on the data with ``fingerprint`` (others are kept, not shown)."""
        return tuple(r for r in self.sweeps if r.fingerprint == fingerprint)

    def shown_sweeps(self, fingerprint: str) -> tuple[SweepResult, ...]:
        """The sweeps the Tradeoffs page shows on the data with ``fingerprint``: a stopped sweep's finished points when
        there is one on these data, else the last complete sweep's results."""
        partial = self.sweep_partial
        if partial is not None and partial.stopped and partial.data == fingerprint:
            stopped = tuple(partial.results())
            if stopped:
                return stopped
        return self.sweeps_for(fingerprint)

    def sweeps_status(self, fingerprint: str, form: list[SweepConfig] | None) -> Literal["none", "current",
                                                                                        "stale", "other-data"]:
        """How the session's sweeps relate to the loaded data and the form's configurations: none yet, current,
        stale (the form or the session's program/δ changed since — "run again"), or computed on other data."""
        if not self.sweeps:
            return "none"
        if not self.sweeps_for(fingerprint):
            return "other-data"
        if form is None or [r.config for r in self.sweeps] != list(form):
            return "stale"
        return "current"

    def set_sweeps(self, results: tuple[SweepResult, ...]) -> None:
        self.sweeps = tuple(results)
        self.sweep_partial = None
        if self.selected_point is not None and not any(
                r.config.mechanism == self.selected_point.mechanism for r in results):
            self.selected_point = None

    # ---------------------------------------------------------------------------------------------- workshop
    @property
    def rationale(self) -> str:
        """The group's rationale: one text, written on the Workshop or the Export page, stored in the workshop."""
        return self.workshop.rationale

    @rationale.setter
    def rationale(self, text: str) -> None:
        self.workshop = self.workshop.with_rationale(str(text or ""))

    def pin_label(self, what: str, mechanism: RecordMechanism | None = None,
                  guarantee: Guarantee | None = None) -> str:
        """The default label of a pin: the dataset, where it comes from and the configuration's own parameters —
        "hmda.csv · Sweep · Gaussian B = 0.05, ε = 4, δ = 0.00042"."""
        if mechanism is not None:
            text = mechanism_label(mechanism, short=True)
        elif guarantee is not None:
            text = f"budget B = {short_number(guarantee.b)}, ε = {short_number(guarantee.epsilon)}, " \
                   f"δ = {guarantee.delta:.2g}"
        else:
            text = ""
        dataset = self.dataset_label()
        dataset = dataset if len(dataset) <= 24 else dataset[:23] + "…"
        label = " · ".join(p for p in (dataset, what, text) if p)
        return label if len(label) <= MAX_LABEL else label[:MAX_LABEL - 1] + "…"

    def unique_label(self, label: str) -> str:
        """``label``, or with " (2)", " (3)" … when a pinned candidate already has it: labels name columns and slides."""
        taken = {c.label for c in self.workshop.pinned}
        if label not in taken:
            return label
        for i in range(2, 100):
            suffix = f" ({i})"
            text = label[:MAX_LABEL - len(suffix)] + suffix
            if text not in taken:
                return text
        raise InvalidParameterError("too many candidates share this label — type another one")

    def pin(self, candidate: Candidate) -> Candidate:
        """Pin ``candidate`` under a label no other pin has; returns what was pinned."""
        candidate = replace(candidate, label=self.unique_label(candidate.label))
        self.workshop = self.workshop.pin(candidate)
        return candidate

    def choose(self, index: int | None) -> None:
        self.workshop = self.workshop.choose(index)

    def unpin(self, index: int) -> None:
        self.workshop = self.workshop.unpin(index)
        self.workshop_slide = 0

    # ------------------------------------------------------------------------------------------------ work
    def begin_work(self, work: Work) -> None:
        """Announce long work (call :func:`checkpoint` right after, so a reload during it knows)."""
        self.working = work
        if self.interrupted is not None and self.interrupted.kind == work.kind:
            self.interrupted = None

    def finish_work(self) -> None:
        self.working = None

    def restored_after_reload(self) -> None:
        """A reload brought this state back: work that was running then was interrupted. Its request is dropped, so
        that no page starts it again by itself under the notice that says it was interrupted: "Run it again"
        (:meth:`run_again`) asks for it anew."""
        if self.working is not None:
            self.interrupted = self.working
            self.working = None
        self.run_request = None
        self.sweep_pending = ()
        self.recommend_request = None
        self.public_info_work.pending = None

    def run_again(self) -> str:
        """Ask the interrupted work's page to run it again; returns that page."""
        work = self.interrupted
        if work is None:
            raise InvalidParameterError("nothing was interrupted")
        if work.kind == "run" and work.run is not None:
            self.request_run(work.run)
        elif work.kind == "sweep":
            self.sweep_pending = work.sweeps
            self.sweep_partial = SweepProgress(work.sweeps, data=self.data_fingerprint or "")
        elif work.kind == "recommendation":
            self.recommend_request = work.recommend
        elif work.kind == "public_info":
            self.public_info_work.pending = work.study
            self.public_info_work.stopped = False
        self.interrupted = None
        return work.page


def describe_run(config: RunConfig) -> str:
    return f"the Mechanisms run of {config.label()}" + (f" (seed {config.seed})" if config.user_seed else "")


def describe_sweeps(configs: tuple[SweepConfig, ...] | list[SweepConfig]) -> str:
    cells = sum(int(c.n_cells) for c in configs)
    kinds = ", ".join(str(c.mechanism) for c in configs)
    return f"the sweep of {kinds} ({cells:,} cells, seed {configs[0].seed if configs else '?'})"


# ------------------------------------------------------------------------------------ the session's objects
def get_state() -> StudioState:
    """This session's :class:`StudioState`, created on first use."""
    state = st.session_state.setdefault(STATE_KEY, StudioState())
    if not isinstance(state, StudioState):  # e.g. a stale object after a code reload during development
        state = StudioState()
        st.session_state[STATE_KEY] = state
    return state


def install_state(new: StudioState) -> None:
    """Make ``new`` this session's state and drop the pages' widget values, so that every widget starts from the
    new state (call outside the widget callbacks of those pages)."""
    for key in list(st.session_state.keys()):
        if isinstance(key, str) and key.startswith(PAGE_PREFIXES):
            del st.session_state[key]
    st.session_state[STATE_KEY] = new


def has_session() -> bool:
    """True when this browser session already has its state (False on the first run after a load or reload)."""
    return STATE_KEY in st.session_state


def restore_session(state: StudioState, widgets: dict[str, Any]) -> None:
    """Install a state and widget values a reload brought back (:mod:`ui.session_store`)."""
    state.restored_after_reload()
    st.session_state[STATE_KEY] = state
    st.session_state.update(widgets)


def session_key() -> str | None:
    """This session's key in the in-memory store (None before ``app.py`` set it)."""
    key = st.session_state.get(SESSION_KEY)
    return key if isinstance(key, str) else None


def set_session_key(key: str) -> None:
    st.session_state.setdefault(SESSION_KEY, key)


def checkpoint() -> None:
    """Save this session to the in-memory store now (before long work: a reload during it then finds the work
    announced, :meth:`StudioState.begin_work`); ``app.py`` saves after every run as well."""
    from ui import session_store

    key = session_key()
    if key is not None:
        session_store.save(key, get_state(), st.session_state)


def execution_check() -> None:
    """A Streamlit call that sends nothing to the browser: reading session state is one of the points where
    Streamlit acts on a pending Stop click (a rerun) or a closed tab, as it does at every element a script draws."""
    _ = STATE_KEY in st.session_state


# ---------------------------------------------------------------------------------------------- widgets
def widget(key: str, default: Any = None) -> Any:
    """The value of widget ``key`` (``default`` before it is drawn)."""
    return st.session_state.get(key, default)


def set_widget(key: str, value: Any) -> None:
    """Give widget ``key`` a value (before it is drawn in this run, or in a callback)."""
    st.session_state[key] = value


def editor_table(name: str, key: str) -> pd.DataFrame | None:
    """The table the Data page's editor ``name`` (widget ``key``) is drawn from: while the editor is live, the table
    it was first drawn from (Streamlit holds the edits, relative to it); when the page is drawn again after a visit
    to another page (Streamlit forgot the edits), the table as the user last left it. None: build it from the spec
    (:meth:`StudioState.set_editor_base`)."""
    state = get_state()
    edited = state.editor_edits.get(name)
    if key not in st.session_state and edited is not None:
        state.editor_bases[name] = edited
    return state.editor_bases.get(name)


def forget_widget(*keys: str) -> None:
    """Drop widgets' values, so that they start again from the durable state when next drawn."""
    for key in keys:
        st.session_state.pop(key, None)


def forget_widgets_with_prefix(*prefixes: str) -> None:
    """Drop the values of every widget whose key starts with one of ``prefixes`` (per-column widgets)."""
    forget_widget(*[str(k) for k in st.session_state if str(k).startswith(prefixes)])


#: Widget keys whose values outlive their page. Streamlit drops a widget's value at the end of any run that does not
#: draw it, so settings typed into the Tradeoffs form (one repetition per point, a custom grid) were gone after a
#: visit to another page; app.py re-assigns these on every run (:func:`keep_widget_values`) and a reload restores
#: them (ui.session_store). Importing a record still resets them (:func:`install_state` drops the pages' keys).
def durable_widgets() -> tuple[str, ...]:
    """The Tradeoffs form's durable keys: its own and every sweepable mechanism's options
    (``tradeoffs.<kind>.<option>``, derived from the registry and the mechanisms' tags)."""
    from engine.mechanisms import MECHANISMS

    options = [f"tradeoffs.{kind}.{name}" for kind, cls in MECHANISMS.items() if cls.TAGS.budgeted
               for name in (*cls.TAGS.sweep_options, *(("known_records",) if cls.TAGS.projects else ()))]
    return tuple(f"tradeoffs.{k}" for k in (
        "mechanisms", "preset", "reps", "b_values", "epsilon1", "epsilon2", "delta", "attacks", "adversary",
        "seed")) + tuple(options)


DURABLE_WIDGETS: tuple[str, ...] = durable_widgets()


def keep_widget_values(keys: tuple[str, ...] | None = None) -> None:
    """Keep the values of widgets ``keys`` (default :func:`durable_widgets`) through runs that do not draw them (call
    once per run, before the page)."""
    for key in durable_widgets() if keys is None else keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def seed_widget(key: str, value: Any) -> None:
    """Give widget ``key`` the durable ``value`` unless the widget is live (call before drawing it)."""
    if key not in st.session_state:
        st.session_state[key] = value


def parse_seed(text: str) -> int | None:
    """"" → None (fresh randomness from the OS); otherwise a whole number ≥ 0 (a simulation seed)."""
    from engine.validation import check_integer

    text = str(text or "").strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        raise InvalidParameterError(f"seed must be a whole number ≥ 0, or empty for fresh randomness; got {text!r}") from None
    return check_integer("seed", value, 0, None)


def persist(key: str, target: str | Callable[[StudioState, Any], None]) -> None:
    """``on_change`` callback: copy the widget value under ``key`` into ``StudioState``.

    ``target`` is a field name, or a callable ``(state, value)`` for values that need converting. An
    :class:`EngineError` raised by the callable (an invalid value) is kept in ``state.notices`` rather than lost.
    """
    state = get_state()
    value = st.session_state.get(key)
    if callable(target):
        try:
            target(state, value)
        except EngineError as exc:
            state.notices.append(str(exc))
    else:
        setattr(state, target, value)


def finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
