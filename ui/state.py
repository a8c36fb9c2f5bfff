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
  - export: ``rationale`` (the designer's text).
* Scenario links: :func:`scenario_params` encodes the scenario (dataset name or fingerprint, every parameter,
  the chosen point — never uploaded data) as query parameters; :func:`apply_scenario_params` restores it.
  ``app.py`` restores once per session and rewrites ``st.query_params`` after every run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import streamlit as st

from engine.errors import EngineError
from engine.guarantee import Guarantee

if TYPE_CHECKING:  # imported lazily at run time: the data engine is optional for the early pages
    from engine.data.preparation import DataSpec
    from engine.evaluation.programs import ProgramConfig
    from engine.mechanisms import RecordMechanism
    from engine.sweeps import SweepResult

STATE_KEY = "studio"
DEFAULT_DEMO = "togo-demo"
DEFAULT_GAMMAS: tuple[float, ...] = (0.99,)
#: Candidate shown before the user picks one: the paper's Example 1 point (γ = 0.99, ε = 1 → B ≤ 0.4).
DEFAULT_CANDIDATE = (0.4, 1.0)


@dataclass
class StudioState:
    """Everything one session has chosen, in one picklable object (see the module docstring)."""

    # --- dataset -----------------------------------------------------------------------------------------
    source: Literal["demo", "upload"] = "demo"
    demo_name: str = DEFAULT_DEMO
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
    # --- export ---------------------------------------------------------------------------------------------
    rationale: str = ""
    #: True while the public bounds of the spec are the data's own min and max (the Data page's "fill" button):
    #: they reveal the most extreme records, so links leave them out.
    bounds_from_data: bool = False
    # --- bookkeeping ----------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------------------------
# Scenario links (workshops): everything but the data itself, as query parameters.
# ---------------------------------------------------------------------------------------------------------------

UPLOAD_PREFIX = "upload:"
#: What the Studio's inputs accept (the Feasibility page's widgets). A link or record outside these ranges is
#: refused with a message — never clamped to the nearest allowed value by a widget.
STUDIO_EPSILON = (0.001, 50.0)
STUDIO_B = (0.001, 2.0)
STUDIO_DELTA_MAX = 0.5
#: The link key saying the data settings were left out because their bounds were read from the data.
BOUNDS_OMITTED = "bounds"


def check_studio_range(name: str, value: Any, low: float, high: float, where: str) -> float:
    """``value`` as a float when ``low ≤ value ≤ high``; otherwise an :class:`EngineError` naming both."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise EngineError(f"{where} states {name} = {value!r}, which is not a finite number")
    value = float(value)
    if not low <= value <= high:
        raise EngineError(
            f"{where} states {name} = {value:g}, outside the range this Studio accepts, [{low:g}, {high:g}] — it "
            f"was not applied (nothing is clamped); use the command line for other values, or correct the {where.split()[-1]}"
        )
    return value


def check_studio_candidate(b: Any, epsilon: Any, delta: Any, where: str) -> None:
    """Refuse a candidate (B, ε, δ) the Feasibility page's inputs cannot show unchanged."""
    check_studio_range("B", b, *STUDIO_B, where)
    check_studio_range("ε", epsilon, *STUDIO_EPSILON, where)
    check_studio_range("δ", delta, 0.0, STUDIO_DELTA_MAX, where)


_PER_RECORD_CHOICES = {"source": {"establishments", "table1", "loaded"}, "unit": {"rho", "epsilon"},
                       "accuracy": {"relative_sd", "sd", "half_width"}}


def check_per_record_settings(settings: Any, where: str) -> dict[str, Any]:
    """The Per-record page's saved settings, checked key by key (types, choices, finite numbers ≥ 0)."""
    from engine.per_record import SUM_MECHANISMS

    if not isinstance(settings, dict):
        raise EngineError(f"{where}: the per-record settings must be an object; got {type(settings).__name__}")

    def fail(key: str, expected: str) -> EngineError:
        return EngineError(f"{where}: per_record.{key} must be {expected}; got {settings[key]!r:.80}")

    for key, allowed in _PER_RECORD_CHOICES.items():
        if key in settings and settings[key] not in allowed:
            raise fail(key, "one of " + ", ".join(sorted(allowed)))
    if "value" in settings and not isinstance(settings["value"], str):
        raise fail("value", "a column name")
    for key in ("by", "mechanisms"):
        if key in settings and (not isinstance(settings[key], list)
                                or not all(isinstance(v, str) for v in settings[key])):
            raise fail(key, "a list of names")
    if "mechanisms" in settings and not set(settings["mechanisms"]) <= set(SUM_MECHANISMS):
        raise fail("mechanisms", "a list of " + ", ".join(sorted(SUM_MECHANISMS)))
    for key in ("target", "q_ref", "threshold"):
        if key in settings:
            value = settings[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e300:
                raise fail(key, "a finite number ≥ 0")
    if "shapes" in settings:
        shapes = settings["shapes"]
        if not isinstance(shapes, dict) or not all(
            isinstance(params, dict) and all(
                not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) and abs(v) < 1e12
                for v in params.values())
            for params in shapes.values()
        ):
            raise fail("shapes", "an object of mechanisms, each with finite shape parameters below 1e12")
    if "levels" in settings and (not isinstance(settings["levels"], dict)
                                 or not all(isinstance(v, str) for v in settings["levels"].values())):
        raise fail("levels", "an object of column names to text")
    if "calibrated" in settings and not isinstance(settings["calibrated"], list):
        raise fail("calibrated", "a list")
    return dict(settings)


def _num(value: float) -> str:
    return repr(float(value))


def scenario_params(state: StudioState, page: str | None = None) -> dict[str, str]:
    """Encode the current scenario as query parameters (strings). Never includes uploaded data.

    Keys: ``page`` (the page shown, by its URL path; ``app.py`` opens it), ``data`` (demo name or
    ``upload:<sha256 of the file>``), ``spec`` (DataSpec JSON, when the user changed the demo's default or
    uploaded), ``gamma`` (comma list), ``delta`` (when not the default 1/(n+1)), ``B``, ``eps``, ``cdelta`` (the
    chosen point), ``mech`` (mechanism JSON), ``program`` (program JSON), ``seed``.
    """
    params: dict[str, str] = {}
    if page:
        params["page"] = page
    if state.source == "upload" and state.upload_fingerprint:
        params["data"] = UPLOAD_PREFIX + state.upload_fingerprint
    else:
        params["data"] = state.demo_name
    if state.spec is not None and state.bounds_from_data and state.spec.normalization.method == "bounds":
        params[BOUNDS_OMITTED] = "data"  # the data's own extremes never go into a link
    elif state.spec is not None:
        params["spec"] = state.spec.to_json(separators=(",", ":"))
    params["gamma"] = ",".join(_num(g) for g in state.gammas)
    if state.delta is not None:
        params["delta"] = _num(state.delta)
    if state.candidate is not None:
        params["B"] = _num(state.candidate.b)
        params["eps"] = _num(state.candidate.epsilon)
        params["cdelta"] = _num(state.candidate.delta)
    if state.mechanism is not None:
        params["mech"] = json.dumps(state.mechanism.to_dict(), separators=(",", ":"), allow_nan=False)
    if state.program is not None:
        params["program"] = json.dumps(state.program.to_dict(), separators=(",", ":"), allow_nan=False)
    if state.seed is not None:
        params["seed"] = str(int(state.seed))
    return params


def _float(params: Mapping[str, Any], key: str) -> float:
    text = _one(params, key)
    try:
        value = float(text)
    except ValueError:
        raise EngineError(f"the link's {key!r} must be a number; got {text!r}") from None
    if not math.isfinite(value):
        raise EngineError(f"the link's {key!r} must be a finite number; got {text!r}")
    return value


def _json(params: Mapping[str, Any], key: str) -> Any:
    """The link's JSON value under ``key``, parsed defensively (size, depth, huge numbers: one clear message)."""
    from engine.decision_record import parse_json_document

    return parse_json_document(_one(params, key), f"the link's {key!r}")


def _one(params: Mapping[str, Any], key: str) -> str:
    value = params[key]
    if isinstance(value, list):  # AppTest keeps repeated keys as lists; the browser gives the last one
        value = value[-1]
    return str(value)


def apply_scenario_params(state: StudioState, params: Mapping[str, Any]) -> list[str]:
    """Restore a scenario from query parameters into ``state``; return one message per part that failed.

    Each part is applied independently, so a bad value in one parameter never loses the others. A link made on
    uploaded data restores every parameter; the data itself must be uploaded again (its fingerprint is checked
    by the data page).
    """
    from engine.data.preparation import DataSpec  # lazily: see the TYPE_CHECKING import

    messages: list[str] = []

    def attempt(label: str, action: Callable[[], None]) -> None:
        try:
            action()
        except (EngineError, ValueError, TypeError, RecursionError) as exc:  # never a traceback for a typed link
            messages.append(f"The shared link's {label} could not be restored: {exc}")

    if "data" in params:
        data = _one(params, "data")

        def set_data() -> None:
            if data.startswith(UPLOAD_PREFIX):
                fingerprint = data[len(UPLOAD_PREFIX):]
                if state.upload_fingerprint != fingerprint:
                    state.source = "upload"
                    state.upload_fingerprint = fingerprint
                    state.upload_bytes = None
                    state.upload_name = None
                    messages.append(
                        "This link was made on an uploaded file, which links never contain. Upload the same file "
                        f"on the Data page (fingerprint {fingerprint[:12]}…) to continue with it."
                    )
            else:
                from engine.data.demos import demo_names

                if data not in demo_names():
                    raise EngineError(f"unknown demo dataset {data!r}; available: {', '.join(demo_names())}")
                state.source = "demo"
                state.demo_name = data

        attempt("dataset", set_data)
    if "spec" in params:
        attempt("data settings", lambda: setattr(state, "spec", DataSpec.from_dict(_json(params, "spec"))))
    if "gamma" in params:

        def set_gammas() -> None:
            from engine.validation import check_interval

            values = tuple(
                check_interval("gamma", float(g), 0.5, 1, closed="left")
                for g in _one(params, "gamma").split(",")
                if g.strip()
            )
            if not values:
                raise EngineError("no γ given")
            state.gammas = values

        attempt("accuracy targets γ", set_gammas)
    if "delta" in params:

        def set_delta() -> None:
            from engine.validation import check_interval

            check_studio_range("δ", _float(params, "delta"), 0.0, STUDIO_DELTA_MAX, "the link")
            state.delta = check_interval("delta", _float(params, "delta"), 0, 1, closed="left")

        attempt("δ", set_delta)
    if "B" in params and "eps" in params:

        def set_candidate() -> None:
            cdelta = _float(params, "cdelta") if "cdelta" in params else state.effective_delta()
            check_studio_candidate(_float(params, "B"), _float(params, "eps"), cdelta, "the link")
            state.set_candidate(b=_float(params, "B"), epsilon=_float(params, "eps"), delta=cdelta)

        attempt("chosen point (B, ε, δ)", set_candidate)
    if "mech" in params:

        def set_mechanism() -> None:
            from engine.mechanisms import mechanism_from_dict

            state.mechanism = mechanism_from_dict(_json(params, "mech"))

        attempt("mechanism", set_mechanism)
    if "program" in params:

        def set_program() -> None:
            from engine.evaluation.programs import ProgramConfig

            state.program = ProgramConfig.from_dict(_json(params, "program"))

        attempt("program", set_program)
    if BOUNDS_OMITTED in params:
        messages.append(
            "The link leaves out the data settings: their normalisation bounds were the data's own minimum and "
            "maximum, which reveal the most extreme records. Enter public bounds on the Data page."
        )
    if "seed" in params:

        def set_seed() -> None:
            from engine.validation import check_integer

            state.seed = check_integer("seed", int(_one(params, "seed")), 0, None)

        attempt("seed", set_seed)
    return messages


# ---------------------------------------------------------------------------------------------------------------
# Decision records: session → record (export) and record → session (import).
# ---------------------------------------------------------------------------------------------------------------

#: Session-state key prefixes of the pages' own (non-durable) values, dropped when a record is imported so no page
#: shows results of the replaced session.
PAGE_PREFIXES = ("data.", "feasibility.", "mechanisms.", "tradeoffs.", "per_record.", "public_info.")


def default_mechanism(candidate: Guarantee) -> dict[str, Any]:
    """The mechanism a record states when none was configured: the Gaussian TDP mechanism at the candidate."""
    return {"kind": "gaussian", "b": candidate.b, "epsilon": candidate.epsilon, "delta": candidate.delta}


def record_from_state(state: StudioState, loaded: Any, *, created: str | None = None):
    """Build the :class:`~engine.decision_record.DecisionRecord` of this session (``loaded``: ui.cached.LoadedData),
    with every sweep result of the session (``state.sweeps``)."""
    from engine.decision_record import build_decision_record, public_information_block
    from engine.evaluation.programs import ProgramConfig
    from engine.public_info.results import CountStudyConfig

    candidate = state.candidate_or_default()
    pi = state.public_info or {}
    public_information = None
    if pi.get("study"):
        public_information = public_information_block(
            CountStudyConfig.from_dict(pi["study"]), periods=int(pi.get("periods", 1)), data=str(pi.get("data", "")),
            model=pi.get("model"), seed=pi.get("seed"), source=str(pi.get("source", "demo")),
        )
    if state.program is not None:
        program = state.program
    elif getattr(loaded, "default_program", None) is not None:
        program = loaded.default_program
    else:
        program = ProgramConfig()
    return build_decision_record(
        prepared=loaded.prepared,
        source=state.source,
        dataset=state.demo_name if state.source == "demo" else None,
        title=loaded.title,
        synthetic=loaded.synthetic,
        columns=tuple(str(c) for c in loaded.frame.columns),
        candidate=candidate,
        gammas=state.gammas,
        delta_is_default=state.delta is None,
        mechanism=state.mechanism.to_dict() if state.mechanism is not None else default_mechanism(candidate),
        seed=state.seed,
        program=program,
        rationale=state.rationale,
        sweeps=state.sweeps,
        selected=state.selected_point,
        file_sha256=state.upload_fingerprint if state.source == "upload" else None,
        studio={"eps_max": state.eps_max, "per_record": dict(state.per_record),
                # flags the spec's bounds as the data's own extremes (not public bounds; links leave them out)
                **({"bounds_from_data": True} if state.bounds_from_data else {})},
        created=created,
        public_information=public_information,
    )


def state_from_record(record: Any, current: StudioState) -> tuple[StudioState, list[str]]:
    """A new :class:`StudioState` holding everything ``record`` states; ``current`` is only read (uploaded bytes).

    Returns the state and messages for the user (e.g. "upload the same file"). Nothing is changed here: the caller
    swaps the state in (:func:`install_state`) only when this succeeded, so a failed import loses nothing.
    """
    messages: list[str] = []
    new = StudioState(link_restored=True)
    data = record.data
    if data.source == "demo":
        from engine.data.demos import demo_names, load_demo

        if data.dataset not in demo_names():
            raise EngineError(
                f"the record was made on the demo dataset {data.dataset!r}, which is not available here; "
                f"available: {', '.join(demo_names())}"
            )
        new.source, new.demo_name = "demo", data.dataset
        new.spec = None if load_demo(data.dataset).spec == record.release.data else record.release.data
    else:
        new.source = "upload"
        new.upload_fingerprint = data.file_sha256
        new.spec = record.release.data
        if current.upload_bytes is not None and current.upload_fingerprint == data.file_sha256:
            new.upload_bytes, new.upload_name = current.upload_bytes, current.upload_name
        else:
            messages.append(
                f"The record was made on an uploaded file ({data.title}, fingerprint "
                f"{(data.file_sha256 or '')[:12]}…), which records never contain. Upload the same file on the Data "
                "page to continue with it; every setting is already restored."
            )
    check_studio_candidate(record.candidate.b, record.candidate.epsilon, record.candidate.delta, "the record")
    if record.targets.delta_rule != "1/(n+1)":
        check_studio_range("targets.delta", record.targets.delta, 0.0, STUDIO_DELTA_MAX, "the record")
    new.gammas = tuple(record.targets.gammas)
    new.delta = None if record.targets.delta_rule == "1/(n+1)" else record.targets.delta
    new.candidate = record.candidate
    new.mechanism = record.release.build_mechanism()
    new.seed = record.release.seed
    new.program = record.program
    new.rationale = record.rationale
    if record.tradeoffs:
        new.sweeps = tuple(t.to_result() for t in record.tradeoffs)
        new.selected_point = record.tradeoffs[0].selected
    studio = record.studio or {}
    if not isinstance(studio, dict):
        raise EngineError(f"the record's 'studio' part must be an object; got {type(studio).__name__}")
    if "eps_max" in studio:
        new.eps_max = check_studio_range("studio.eps_max", studio["eps_max"], 1.0, 50.0, "the record")
    if "per_record" in studio:
        new.per_record = check_per_record_settings(studio["per_record"], "the record")
    if "bounds_from_data" in studio:
        if not isinstance(studio["bounds_from_data"], bool):
            raise EngineError(f"the record's studio.bounds_from_data must be true or false; got {studio['bounds_from_data']!r:.40}")
        new.bounds_from_data = studio["bounds_from_data"]
    block = record.public_information
    if block:
        new.public_info = {"source": block.get("source", "demo"), "data": block.get("data", ""),
                           "model": dict(block.get("dependence_model") or {"kind": "fixed"}),
                           "seed": block.get("seed"), "study": dict(block["study"]), "periods": block["periods"]}
        if block.get("source") == "upload":
            messages.append("The public-information study was made on an uploaded count table, which records never "
                            "contain: upload it again on the Public information page; its settings are restored.")
    return new, messages


def install_state(new: StudioState) -> None:
    """Make ``new`` this session's state and drop the pages' transient values (call outside widget callbacks of
    those pages; the importing page's own widget keys are kept)."""
    for key in list(st.session_state.keys()):
        if isinstance(key, str) and key.startswith(PAGE_PREFIXES):
            del st.session_state[key]
    st.session_state[STATE_KEY] = new
