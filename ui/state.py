"""The one typed session object of the Studio, and the helpers every page uses to keep values across pages.

API note for page authors
-------------------------
* ``state = get_state()`` returns this session's :class:`StudioState` (``st.session_state["studio"]``). It is a
  plain, picklable dataclass (``runner.enforceSerializableSessionState`` is on): store engine config objects
  (frozen ``Serializable`` dataclasses), plain dicts/tuples/numbers and engine result dataclasses, never
  figures, generators, file handles or lambdas.
* Widget keys are namespaced ``"<page>.<name>"`` (``"feasibility.epsilon"``, ``"mechanisms.kind"``). Streamlit
  forgets a widget's value when its page is not shown, so the durable value lives in a ``StudioState`` field:

  .. code-block:: python

      seed_widget("feasibility.epsilon", state.candidate.epsilon)       # before drawing the widget
      st.number_input("ε", key="feasibility.epsilon",
                      on_change=persist, args=("feasibility.epsilon", "epsilon_choice"))

  :func:`seed_widget` puts the durable value into the widget key only when the widget is not live, so do not pass
  ``value=``/``index=`` as well. :func:`persist` copies the widget's value into the named ``StudioState``
  field (a callable instead of a field name receives ``(state, value)``).
* Fields other pages read:

  - data: ``source`` ("demo"|"upload"), ``demo_name``, ``spec`` (``engine.data.preparation.DataSpec`` or None for
    the demo's default), ``data_fingerprint``, ``n``, ``d``, ``feature_names``, ``dataset_title``,
    ``synthetic`` — the summary fields are refreshed by ``ui.cached.current_data(state)``, which returns the
    prepared data (:class:`ui.cached.LoadedData`). The uploaded bytes (``upload_bytes``) stay in this session's
    memory only and never go into links or decision records.
  - targets: ``gammas`` (tuple of γ), ``delta`` (None = default 1/(n+1): use :meth:`StudioState.effective_delta`),
    ``candidate`` (``engine.guarantee.Guarantee`` with ``b``, ``epsilon``, ``delta``; None until chosen — use
    :meth:`StudioState.candidate_or_default`), ``eps_max`` (the largest ε the feasibility charts show).
  - mechanisms page (dashboard B): ``mechanism`` (the configured ``engine.mechanisms.RecordMechanism``, a frozen
    dataclass; None until one is configured), ``seed`` (None = OS entropy; an integer seed makes output
    reproducible and therefore NOT private), ``program`` (``engine.evaluation.programs.ProgramConfig`` or None for
    the demo's own program).
  - tradeoffs page: ``sweeps`` (the engine's ``SweepResult`` of the last sweep, one per swept mechanism; an
    imported record fills it too), ``selected_point`` (a dict describing the sweep row the user clicked).
  - per-record page: ``per_record`` (a dict of that page's settings).
  - workshop: ``workshop`` (``engine.workshop.Workshop``: up to six pinned ``Candidate`` objects, the chosen one and
    the group's rationale; every page's "Pin this candidate" adds to it, :mod:`ui.sections.workshop_pin`).
  - export: ``rationale`` (the designer's text).
* Scenario links live in :mod:`ui.links`, decision records (export and import) in :mod:`ui.records`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import streamlit as st

from engine.errors import EngineError
from engine.guarantee import Guarantee
from engine.workshop import Workshop

if TYPE_CHECKING:  # imported lazily at run time: the data engine is optional for the early pages
    from engine.data.preparation import DataSpec
    from engine.evaluation.programs import ProgramConfig
    from engine.mechanisms import RecordMechanism
    from engine.sweeps import SweepResult

STATE_KEY = "studio"
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


def starting_demo() -> str:
    """The demo a new session opens on: ``$STUDIO_DEMO`` when the server was started with ``--demo``, else
    :data:`DEFAULT_DEMO`."""
    return os.environ.get(DEMO_ENV) or DEFAULT_DEMO


@dataclass
class StudioState:
    """Everything one session has chosen, in one picklable object (see the module docstring)."""

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
    # --- accuracy targets and the chosen candidate ---------------------------------------------------------
    gammas: tuple[float, ...] = DEFAULT_GAMMAS
    delta: float | None = None
    candidate: Guarantee | None = None
    eps_max: float = 8.0
    # --- mechanisms, runs, sweeps, per-record (dashboard B's pages write these) -----------------------------
    mechanism: RecordMechanism | None = None
    seed: int | None = None
    program: ProgramConfig | None = None
    #: The last sweep's results, one per swept mechanism (the first is the one a decision record's point belongs to).
    sweeps: tuple[SweepResult, ...] = ()
    selected_point: dict[str, Any] | None = None
    per_record: dict[str, Any] = field(default_factory=dict)
    #: Public-information page: data key, dependence model, seed and the CountStudyConfig (``study``) as a dict.
    public_info: dict[str, Any] = field(default_factory=dict)
    # --- workshop (issue 12): the pinned candidates, the chosen one and the group's rationale ----------------------
    workshop: Workshop = field(default_factory=Workshop)
    # --- export ---------------------------------------------------------------------------------------------
    rationale: str = ""
    #: True while the public bounds of the spec are the data's own min and max (the Data page's "fill" button):
    #: they reveal the most extreme records, so links leave them out.
    bounds_from_data: bool = False
    # --- bookkeeping ----------------------------------------------------------------------------------------
    #: Version of the workshop room's shared data this session opened (ui.room.SharedData.version; 0: none).
    room_data: int = 0
    link_restored: bool = False
    #: Messages to show once at the top of the next page (e.g. what a shared link could not restore).
    notices: list[str] = field(default_factory=list)

    # ---------------------------------------------------------------------------------------------------------
    def dataset_label(self) -> str:
        """Short name of the loaded dataset for the sidebar and reports."""
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

    def forget_data_results(self) -> None:
        """Drop results that belong to the previous dataset (runs and sweeps); keep every choice."""
        self.sweeps = ()
        self.selected_point = None

    def switch_data(self) -> None:
        """The dataset changes: drop the previous data's results and mark the summary stale (``data_fingerprint``
        None) until the new data load. ``n`` keeps the last loaded size, so that ``ui.cached.current_data`` can move a
        candidate on the default δ = 1/(n+1) to the new default."""
        self.forget_data_results()
        self.data_fingerprint = None


def get_state() -> StudioState:
    """This session's :class:`StudioState`, created on first use."""
    state = st.session_state.setdefault(STATE_KEY, StudioState())
    if not isinstance(state, StudioState):  # e.g. a stale object after a code reload during development
        state = StudioState()
        st.session_state[STATE_KEY] = state
    return state


#: Widget keys whose values outlive their page. Streamlit drops a widget's value at the end of any run that does not
#: draw it, so settings typed into the Tradeoffs form (one repetition per point, a custom grid) were gone after a
#: visit to another page; app.py re-assigns these on every run (:func:`keep_widget_values`) and a reload restores
#: them (ui.session_store). Importing a record still resets them (ui.records drops the pages' keys).
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
    from engine.errors import InvalidParameterError
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
