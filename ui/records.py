"""Decision records: this session → a record (export) and a record → a new session (import).

The record's format is the engine's (:mod:`engine.decision_record`); this module maps it to and from a
:class:`ui.state.StudioState`. Export is the decision: with a Workshop choice the record releases the chosen
candidate (:func:`record_from_state`), or refuses with the reason when it cannot be released as it was measured
(:func:`check_exportable`). Import checks every value the Studio's widgets could not show unchanged
(:func:`check_studio_range`, :func:`check_studio_candidate`, :func:`check_per_record_settings`): a record outside
those ranges is refused with a message, never clamped.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from engine.errors import EngineError
from engine.guarantee import Guarantee
from ui.state import STUDIO_B, STUDIO_DELTA_MAX, STUDIO_EPSILON, SelectedPoint, StudioState

if TYPE_CHECKING:
    from engine.workshop import Candidate


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


#: Ranges of the Public information page's inputs: a link or record outside them is refused, never clamped.
PUBLIC_INFO_RANGES = {"replicates": (1, 1000), "alpha": (0.01, 100.0), "sensitivity": (0.5, 1000.0), "n": (2, 500)}
PUBLIC_INFO_KEYS = {"source", "data", "model", "seed", "study", "periods", "subcounts"}


def check_public_info_settings(settings: Any, where: str) -> dict[str, Any]:
    """The Public information page's settings (source, seed, the study and the dependence model), checked by the
    engine's configurations and against the page's input ranges; returns the settings the page reads."""
    from engine.public_info.dependence import DependenceModel
    from engine.public_info.results import CountStudyConfig

    if not isinstance(settings, dict):
        raise EngineError(f"{where}: the public-information settings must be an object; got {type(settings).__name__}")
    unknown = sorted(set(settings) - PUBLIC_INFO_KEYS)
    if unknown:
        raise EngineError(f"{where}: unknown public-information setting(s) {', '.join(map(str, unknown))[:80]}")
    source = settings.get("source", "demo")
    if source not in ("demo", "upload"):
        raise EngineError(f"{where}: the public-information source must be demo or upload; got {source!r:.40}")
    seed = settings.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
        raise EngineError(f"{where}: the public-information seed must be a whole number ≥ 0 or null; got {seed!r:.40}")
    if "study" not in settings:
        raise EngineError(f"{where}: the public-information settings have no study")
    study = CountStudyConfig.from_dict(settings["study"])
    model = DependenceModel.from_dict(settings["model"]) if "model" in settings else study.dependence
    for eps in study.epsilons:
        check_studio_range("ε per period", eps, *STUDIO_EPSILON, where)
    check_studio_range("replicates", study.replicates, *PUBLIC_INFO_RANGES["replicates"], where)
    check_studio_range("α", study.alpha, *PUBLIC_INFO_RANGES["alpha"], where)
    if study.sensitivity is not None:
        check_studio_range("Δ_z", study.sensitivity, *PUBLIC_INFO_RANGES["sensitivity"], where)
    if model.kind == "correlated":
        check_studio_range("people per group n", model.n, *PUBLIC_INFO_RANGES["n"], where)
    out = {"source": source, "model": model.to_dict(), "seed": seed, "study": study.to_dict()}
    if isinstance(settings.get("data"), str):
        out["data"] = settings["data"][:80]
    if "periods" in settings:
        from engine.validation import check_integer

        out["periods"] = check_integer("public_info.periods", settings["periods"], 1, 10_000)
    if "subcounts" in settings:
        if not isinstance(settings["subcounts"], bool):
            raise EngineError(f"{where}: the public-information 'subcounts' must be true or false")
        out["subcounts"] = settings["subcounts"]
        study.release_config(study.methods[0], study.epsilons[0]).delta_z(subcounts=out["subcounts"])
    return out


def default_mechanism(candidate: Guarantee) -> dict[str, Any]:
    """The mechanism a record states when none was configured: the simplest one spending the candidate exactly
    (``engine.mechanisms.base.reference_mechanism``: the Gaussian TDP mechanism)."""
    from engine.mechanisms.base import reference_mechanism

    return reference_mechanism(candidate.b, candidate.epsilon, candidate.delta).to_dict()


#: Which configuration a record releases: the Workshop's chosen candidate, or what the pages show (the Mechanisms
#: page's configuration at the candidate) — the latter clears the choice in the record.
Release = Literal["workshop", "pages"]


def pages_mechanism(state: StudioState) -> dict[str, Any]:
    """What the pages show: the configured mechanism, or the Gaussian mechanism at the candidate."""
    from engine.mechanisms import mechanism_from_dict

    if state.mechanism is not None:
        return state.mechanism.to_dict()
    return mechanism_from_dict(default_mechanism(state.candidate_or_default())).to_dict()


def chosen_mechanism(state: StudioState, d: int) -> dict[str, Any] | None:
    """The Workshop's chosen candidate's mechanism (as a record states it), None without a choice."""
    choice = state.workshop.choice
    if choice is None:
        return None
    return choice.build_mechanism(d).to_dict()


def pages_differ(state: StudioState, d: int) -> bool:
    """True when the Workshop has a choice and the pages show another configuration: the Export page asks."""
    try:
        chosen = chosen_mechanism(state, d)
    except EngineError:
        return True
    return chosen is not None and chosen != pages_mechanism(state)


def check_exportable(choice: Candidate, loaded: Any, program: Any) -> None:
    """Refuse (``EngineError``, naming the fix) a chosen candidate a record on ``loaded`` cannot release as it was
    measured: evidence of other data or of another program setting, or a mechanism made for other data."""
    fingerprint = loaded.prepared.fingerprint
    ev = choice.evidence
    if ev is not None and ev.data not in (None, fingerprint):
        raise EngineError(
            f"the Workshop's choice “{choice.label}” was measured on other data (fingerprint {ev.data[:12]}…) than "
            f"the loaded ({fingerprint[:12]}…), so a record on these data would attribute that evidence to data it "
            "was not measured on — load the data it was measured on, or measure it on these data on the Workshop "
            "page (unpin the old evidence first), before exporting it; or export what the pages show"
        )
    if ev is not None and ev.metric is not None and not ev.measured_with(program):
        raise EngineError(
            f"the Workshop's choice “{choice.label}” was measured with another program setting than the session's "
            "(Data page), so the record would attribute its numbers to a program they were not measured with — set "
            "the program back, or pin and measure the candidate again with this program"
        )
    mechanism = choice.build_mechanism(int(loaded.prepared.d))
    d = getattr(mechanism, "d", None)
    if d is not None and int(d) != int(loaded.prepared.d):
        raise EngineError(
            f"the Workshop's choice “{choice.label}” projects {d} features, but the loaded data have "
            f"{loaded.prepared.d}: it was made for other data — load those, or choose another candidate"
        )


def record_from_state(state: StudioState, loaded: Any, *, release: Release = "workshop", created: str | None = None):
    """Build the :class:`~engine.decision_record.DecisionRecord` of this session (``loaded``: ui.cached.LoadedData).

    With a Workshop choice and ``release="workshop"`` (the default) the record releases that candidate — its
    mechanism, its guarantee as the candidate (B, ε, δ), fresh randomness — with its evidence (in the workshop) and
    the group's rationale; a choice it cannot release as measured is refused (:func:`check_exportable`). With
    ``release="pages"`` it releases what the pages show and the record's workshop has no choice. Only the sweeps
    computed on the loaded data go in (:meth:`ui.state.StudioState.sweeps_for`).

    Raises
    ------
    EngineError
        The chosen candidate cannot be released on these data as it was measured (the message says why and what to
        do), or a value fails the engine's validation.
    """
    from engine.decision_record import build_decision_record, public_information_block
    from engine.evaluation.programs import ProgramConfig
    from engine.public_info.results import CountStudyConfig

    pi = state.public_info or {}
    public_information = None
    if pi.get("study"):
        public_information = public_information_block(
            CountStudyConfig.from_dict(pi["study"]), periods=int(pi.get("periods", 1)), data=str(pi.get("data", "")),
            model=pi.get("model"), seed=pi.get("seed"), source=str(pi.get("source", "demo")),
            subcounts=bool(pi.get("subcounts", True)),
        )
    if state.program is not None:
        program = state.program
    elif getattr(loaded, "default_program", None) is not None:
        program = loaded.default_program
    else:
        program = ProgramConfig()
    fingerprint = loaded.prepared.fingerprint
    sweeps = state.sweeps_for(fingerprint)
    selected = state.selected_point
    selected_dict = selected.to_dict() if selected is not None and sweeps and selected.data == fingerprint \
        and selected.mechanism == sweeps[0].config.mechanism else None
    choice = state.workshop.choice
    workshop = state.workshop
    if choice is not None and release == "workshop":
        check_exportable(choice, loaded, program)
        mechanism = choice.build_mechanism(int(loaded.prepared.d)).to_dict()
        candidate = state.candidate_or_default()
        g = choice.guarantee
        if g.relation == "row":
            try:
                check_studio_candidate(g.b, g.epsilon, g.delta, "the chosen candidate")
                candidate = g
            except EngineError:
                pass  # outside the Studio's inputs: the record keeps the candidate the pages show
        seed = None  # a release is made with fresh randomness; the evidence's seed replays the evidence
    else:
        if choice is not None:
            workshop = workshop.choose(None)  # the record releases another configuration: it states no choice
        mechanism = pages_mechanism(state)
        candidate = state.candidate_or_default()
        seed = state.seed
    return build_decision_record(
        prepared=loaded.prepared,
        source=state.source,
        dataset=state.demo_name if state.source == "demo" else None,
        title=loaded.title,
        synthetic=loaded.synthetic,
        columns=tuple(str(c) for c in loaded.frame.columns),
        candidate=candidate,
        gammas=state.gammas,
        delta_is_default=state.delta is None and math.isclose(candidate.delta, state.effective_delta(),
                                                              rel_tol=1e-12),
        mechanism=mechanism,
        seed=seed,
        program=program,
        rationale=state.rationale,
        sweeps=sweeps,
        selected=selected_dict,
        file_sha256=state.upload_fingerprint if state.source == "upload" else None,
        studio={"eps_max": state.eps_max, "per_record": dict(state.per_record),
                # flags the spec's bounds as the data's own extremes (not public bounds; links leave them out)
                **({"bounds_from_data": True} if state.bounds_from_data else {})},
        created=created,
        public_information=public_information,
        workshop=workshop,
    )


def merged_rationale(record: Any) -> str:
    """The record's one rationale: the top-level text and the workshop's (records of older Studios may hold two)."""
    top = str(record.rationale or "").strip()
    group = str(record.workshop.rationale or "").strip() if record.workshop is not None else ""
    if top and group and top != group:
        return f"{top}\n\n{group}"
    return top or group


def state_from_record(record: Any, current: StudioState) -> tuple[StudioState, list[str]]:
    """A new :class:`StudioState` holding everything ``record`` states; ``current`` is only read (uploaded bytes).

    Returns the state and messages for the user (e.g. "upload the same file"). Nothing is changed here: the caller
    swaps the state in (:func:`ui.state.install_state`) only when this succeeded, so a failed import loses nothing.
    The record's sweeps are kept with their data fingerprint: when the record was made on an upload, they are shown
    again once the same file is uploaded.
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
            kept = " Its sweeps and the workshop's evidence come back with it." if record.tradeoffs else ""
            messages.append(
                f"The record was made on an uploaded file ({data.title}, fingerprint "
                f"{(data.file_sha256 or '')[:12]}…), which records never contain. Upload the same file on the Data "
                f"page to continue with it; every setting is already restored.{kept}"
            )
    check_studio_candidate(record.candidate.b, record.candidate.epsilon, record.candidate.delta, "the record")
    if record.targets.delta_rule != "1/(n+1)":
        check_studio_range("targets.delta", record.targets.delta, 0.0, STUDIO_DELTA_MAX, "the record")
    new.gammas = tuple(record.targets.gammas)
    new.delta = None if record.targets.delta_rule == "1/(n+1)" else record.targets.delta
    new.candidate = record.candidate
    new.configure_mechanism(record.release.build_mechanism())
    new.seed = record.release.seed
    new.program = record.program
    if record.workshop is not None:  # records written before the workshop have none
        new.workshop = record.workshop
        choice = record.workshop.choice
        if choice is not None and not record.chosen_is_released:
            messages.append(
                f"This record's release ({record.release.build_mechanism().LABEL}) is not the Workshop's choice "
                f"“{choice.label}” (an older Studio exported what the pages showed): the session keeps the choice, "
                "and exporting again releases it."
            )
    new.rationale = merged_rationale(record)
    if record.tradeoffs:
        new.sweeps = tuple(t.to_result() for t in record.tradeoffs)
        selected = record.tradeoffs[0].selected
        if selected:
            new.selected_point = SelectedPoint.from_dict(selected, record.tradeoffs[0].fingerprint)
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
        new.public_info = check_public_info_settings(
            {"source": block.get("source", "demo"), "data": block.get("data", ""),
             "model": dict(block.get("dependence_model") or {"kind": "fixed"}),
             "seed": block.get("seed"), "study": dict(block["study"]), "periods": block["periods"]}, "the record")
        if block.get("source") == "upload":
            messages.append("The public-information study was made on an uploaded count table, which records never "
                            "contain: upload it again on the Public information page; its settings are restored.")
    return new, messages
