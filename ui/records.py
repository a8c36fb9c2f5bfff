"""Decision records: this session → a record (export) and a record → a new session (import).

The record's format is the engine's (:mod:`engine.decision_record`); this module maps it to and from a
:class:`ui.state.StudioState`, and checks on import every value the Studio's widgets could not show unchanged
(:func:`check_studio_range`, :func:`check_studio_candidate`, :func:`check_per_record_settings`): a record outside
those ranges is refused with a message, never clamped.
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from engine.errors import EngineError
from engine.guarantee import Guarantee
from ui.state import STATE_KEY, STUDIO_B, STUDIO_DELTA_MAX, STUDIO_EPSILON, StudioState


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


#: Session-state key prefixes of the pages' own (non-durable) values, dropped when a record is imported so no page
#: shows results of the replaced session.
PAGE_PREFIXES = ("data.", "feasibility.", "mechanisms.", "tradeoffs.", "per_record.", "public_info.", "workshop.")


def default_mechanism(candidate: Guarantee) -> dict[str, Any]:
    """The mechanism a record states when none was configured: the simplest one spending the candidate exactly
    (``engine.mechanisms.base.reference_mechanism``: the Gaussian TDP mechanism)."""
    from engine.mechanisms.base import reference_mechanism

    return reference_mechanism(candidate.b, candidate.epsilon, candidate.delta).to_dict()


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
            subcounts=bool(pi.get("subcounts", True)),
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
        workshop=state.workshop,
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
    if record.workshop is not None:  # records written before the workshop have none
        new.workshop = record.workshop
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
        new.public_info = check_public_info_settings(
            {"source": block.get("source", "demo"), "data": block.get("data", ""),
             "model": dict(block.get("dependence_model") or {"kind": "fixed"}),
             "seed": block.get("seed"), "study": dict(block["study"]), "periods": block["periods"]}, "the record")
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
