"""Scenario links (workshops): everything of a session but the data itself, as query parameters.

:func:`scenario_params` encodes the scenario (dataset name or fingerprint, every parameter, the chosen point — never
uploaded data) as query parameters; :func:`apply_scenario_params` restores it into a :class:`ui.state.StudioState`.
``app.py`` restores once per session and rewrites ``st.query_params`` after every run (so the address bar shows the
same parameters). The link's JSON values (``spec``, ``mech``, ``program``) are the engine configurations'
``to_dict()``; ``pinfo`` is the Public information page's settings (its count-study configuration — public
statistics, methods and bases, ε, α, Δ_z — the dependence model, source and seed), checked on load like a decision
record's (:func:`ui.records.check_public_info_settings`).

No value read from an uploaded file goes into a link (issue 35 item 4). Left out, and said so in the sidebar next to
the link (:func:`link_omissions`) and to whoever opens it:

* normalisation bounds read from the data (its own minimum and maximum): the data settings are left out entirely;
* text levels read from the data (a rare level such as ``Jane_Doe_HIV_positive`` names a person): the link keeps
  "levels read from the data" without listing them, so they are read again from the file once it is uploaded;
* the outcome label(s) counted as 1, picked among the values of an uploaded file's target column.

Column names stay in links: they are the file's schema, which the user chose and needs to restore the scenario
(features, target, program columns), not a value of any record; a user whose column names themselves are sensitive
should not share links. Levels typed by the user as public (a code list) and public fill constants also stay.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from engine.errors import EngineError
from ui.records import check_public_info_settings, check_studio_candidate, check_studio_range
from ui.state import STUDIO_DELTA_MAX, StudioState

if TYPE_CHECKING:
    from engine.data.preparation import DataSpec

UPLOAD_PREFIX = "upload:"
#: The link key saying the data settings were left out because their bounds were read from the data.
BOUNDS_OMITTED = "bounds"
#: The link key listing other values of the uploaded file left out: "levels" and/or "positive".
LEFT_OUT = "left_out"
#: What each entry of :data:`LEFT_OUT` means, for the sidebar and for whoever opens the link.
LEFT_OUT_TEXT = {
    "levels": "the text levels read from the uploaded file (the link says only that they come from the data; they "
              "are read again when the same file is uploaded)",
    "positive": "the outcome value(s) counted as 1, which are values of the uploaded file (choose them again on the "
                "Data page)",
}


def _num(value: float) -> str:
    return repr(float(value))


def link_spec(state: StudioState) -> tuple[DataSpec | None, list[str]]:
    """The data spec a link may carry, and the :data:`LEFT_OUT` keys of what was removed from it.

    For an uploaded file, levels read from the data are replaced by "read them from the data" (an empty level list
    with ``levels_from_data``) and the positive class is dropped: both are values of the file. A demo's values are
    public and stay.
    """
    import dataclasses

    from engine.data.preparation import Categorical

    spec = state.spec
    if spec is None or state.source != "upload":
        return spec, []
    left_out = []
    categorical = dict(spec.categorical or {})
    for column, cat in categorical.items():
        if cat.levels_from_data and cat.levels:
            categorical[column] = Categorical((), levels_from_data=True, other=cat.other,
                                              missing_level=cat.missing_level)
            if "levels" not in left_out:
                left_out.append("levels")
    if spec.positive_class:
        left_out.append("positive")
    return dataclasses.replace(spec, categorical=categorical or None, positive_class=()), left_out


def link_omissions(state: StudioState) -> list[str]:
    """What this session's link leaves out, in words (the sidebar shows them next to the link)."""
    out = []
    if state.spec is not None and state.bounds_from_data and state.spec.normalization.method == "bounds":
        out.append("the data settings, whose normalisation bounds are the data's own minimum and maximum")
    else:
        out.extend(LEFT_OUT_TEXT[key] for key in link_spec(state)[1])
    if state.source == "upload":
        out.append("the uploaded file itself (only its keyed fingerprint is in the link)")
    return out


def scenario_params(state: StudioState, page: str | None = None) -> dict[str, str]:
    """Encode the current scenario as query parameters (strings). Never includes uploaded data.

    Keys: ``page`` (the page shown, by its URL path; ``app.py`` opens it), ``data`` (demo name or
    ``upload:<sha256 of the file>``), ``spec`` (DataSpec JSON without the file's values — :func:`link_spec` — when
    the user changed the demo's default or uploaded), ``left_out`` (what :func:`link_spec` removed), ``bounds``
    (the data settings left out: bounds read from the data), ``gamma`` (comma list), ``delta`` (when not the default
    1/(n+1)), ``B``, ``eps``, ``cdelta`` (the chosen point), ``mech`` (mechanism JSON), ``program`` (program JSON),
    ``seed``, ``pinfo`` (the Public information page's settings, once the page was opened).
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
        spec, left_out = link_spec(state)  # no value of an uploaded file (levels, positive class)
        assert spec is not None
        params["spec"] = spec.to_json(separators=(",", ":"))
        if left_out:
            params[LEFT_OUT] = ",".join(left_out)
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
    pi = state.public_info or {}
    if pi.get("study"):
        settings = {"source": pi.get("source", "demo"), "model": pi.get("model") or {"kind": "fixed"},
                    "seed": pi.get("seed"), "study": pi["study"]}
        params["pinfo"] = json.dumps(settings, separators=(",", ":"), allow_nan=False)
    return params


def _float(params: Mapping[str, Any], key: str) -> float:
    """The link's number under ``key``: finite, and exactly what was typed (``1e-400`` is refused, not read as 0;
    a δ between 0 and 1e-300 is refused as everywhere in the engine, :mod:`engine.limits`)."""
    from engine.limits import check_privacy_parameters, exact_float

    text = _one(params, key)
    try:
        value = exact_float(text, f"the link's {key!r}")
    except ValueError as exc:
        if isinstance(exc, EngineError):
            raise
        raise EngineError(f"the link's {key!r} must be a number; got {text[:40]!r}") from None
    if not math.isfinite(value):
        raise EngineError(f"the link's {key!r} must be a finite number; got {text[:40]!r}")
    if key in ("delta", "cdelta"):
        check_privacy_parameters({"delta": value}, owner=f"the link's {key!r}")
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
    if LEFT_OUT in params:
        parts = [LEFT_OUT_TEXT[k] for k in _one(params, LEFT_OUT).split(",") if k in LEFT_OUT_TEXT]
        if parts:
            messages.append("The link leaves out values of the uploaded file: " + "; ".join(parts) + ".")
    if BOUNDS_OMITTED in params:
        messages.append(
            "The link leaves out the data settings: their normalisation bounds were the data's own minimum and "
            "maximum, which reveal the most extreme records. Enter public bounds on the Data page."
        )
    if "pinfo" in params:

        def set_public_info() -> None:
            state.public_info = check_public_info_settings(_json(params, "pinfo"), "the link")
            if state.public_info["source"] == "upload":
                messages.append("This link's public-information study was made on an uploaded count table, which "
                                "links never contain: upload it again on the Public information page; its settings "
                                "are restored.")

        attempt("public-information settings", set_public_info)
    if "seed" in params:

        def set_seed() -> None:
            from engine.validation import check_integer

            state.seed = check_integer("seed", int(_one(params, "seed")), 0, None)

        attempt("seed", set_seed)
    return messages
