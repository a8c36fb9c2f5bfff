"""The Mechanisms page's form: the mechanism to run, prefilled from the candidate (B, ε, δ), and its seed.

Every registered mechanism (``engine.mechanisms.MECHANISMS``) is offered, in registration order, and its form is
drawn from what the mechanism declares: its ``FORM`` fields (label, help, format), each drawn as its declared
constraint says (a choice → radio buttons, a small whole-number range → a slider, a number otherwise; an optional
field shown as a number where 0 means "not set"). Nothing here names a mechanism.

:func:`draw_form` draws the inputs of one mechanism; :func:`on_run` (the submit callback) builds the engine's
mechanism object from them (:func:`build_from_widgets`: the mechanism's own ``from_form``, validated by its dataclass)
and asks the page for a run of exactly that configuration (:class:`ui.state.RunConfig`, ``StudioState.run_request``);
:func:`form_config` is the configuration the form holds now, which the page compares with the shown run's. Widget keys
are ``mechanisms.<kind>.<field>``.
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from engine.constraints import Choice, Integer, Real, declared_constraints
from engine.data.preparation import PreparedData
from engine.errors import EngineError
from engine.guarantee import Guarantee
from engine.mechanisms import MECHANISMS, RecordMechanism
from engine.mechanisms.base import FormField
from engine.progress import format_seconds
from engine.release_analysis import RunEstimate
from engine.rng import fresh_seed
from ui.common import HELP, b_in_data_units
from ui.state import (
    STUDIO_B,
    RunConfig,
    RunContext,
    StudioState,
    get_state,
    parse_seed,
    seed_widget,
    set_widget,
    widget,
)


class _Labels(dict):
    """KIND → LABEL of the registered mechanisms, read when asked (a dict's bound ``get`` pickles, as AppTest and
    enforceSerializableSessionState need of a ``format_func``)."""

    def __getitem__(self, kind):
        return self.get(kind)

    def get(self, kind, default=None):
        cls = MECHANISMS.get(kind)
        return cls.LABEL if cls is not None else default


KIND_LABELS = _Labels()


def kinds() -> tuple[str, ...]:
    """Every registered mechanism, in registration order (the first is the page's default)."""
    return tuple(MECHANISMS)


def help_kind() -> str:
    """The mechanism picker's help: each mechanism's label and what its tags say about it."""
    lines = []
    for cls in MECHANISMS.values():
        tags = cls.TAGS
        traits = [
            "configured from the candidate (B, ε, δ)" if tags.budgeted else "not configured from a budget",
            "no (ε, δ) guarantee — a non-DP baseline" if not tags.differentially_private else "",
            "releases projected columns, not your features" if tags.projects else "",
            "adds no noise" if tags.noiseless else "",
        ]
        lines.append(f"{cls.LABEL}: " + "; ".join(t for t in traits if t) + ".")
    return " ".join(lines)


def candidate_mechanisms(candidate: Guarantee, d: int) -> dict[str, dict]:
    """Each mechanism configured from the candidate by its own ``from_budget`` (its first example when it is not
    configured from a budget, or refuses this one): the defaults the form starts from."""
    out = {}
    for kind, cls in MECHANISMS.items():
        start: RecordMechanism | None = None
        if cls.TAGS.budgeted:
            try:
                start = cls.from_budget(candidate.b, candidate.epsilon, candidate.delta, d=d)
            except EngineError:
                start = None
        if start is None:
            start = next(iter(cls.examples(d).values()))
        out[kind] = start.to_dict()
    return out


def _close(a: float, b: float) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-15)


def matches_candidate(mechanism: RecordMechanism, candidate: Guarantee) -> bool:
    """True when a stored mechanism gives exactly the candidate's (B, ε, δ) (or gives no (ε, δ) guarantee at all)."""
    try:
        g = mechanism.guarantee()
    except EngineError:
        return False
    if not mechanism.tags().differentially_private:
        return True
    return _close(g.b, candidate.b) and _close(g.epsilon, candidate.epsilon) and _close(g.delta, candidate.delta)


def starting_config(state: StudioState, kind: str, candidate: Guarantee, d: int) -> dict:
    """What the form shows: the stored mechanism when it belongs to this candidate, else the candidate's preset."""
    stored = state.mechanism
    origin = state.mechanism_origin
    here = (candidate.b, candidate.epsilon, candidate.delta)
    if stored is not None and stored.KIND == kind:
        if origin == here or (origin is None and matches_candidate(stored, candidate)):
            return {**candidate_mechanisms(candidate, d)[kind], **stored.to_dict()}
    return candidate_mechanisms(candidate, d)[kind]


def widget_key(kind: str, name: str) -> str:
    """The session-state key of a mechanism field's widget."""
    return f"mechanisms.{kind}.{name}"


def form_values(kind: str) -> dict[str, Any]:
    """The form's values of mechanism ``kind`` as configuration fields (0 → None for an optional field)."""
    cls = MECHANISMS[kind]
    constraints = declared_constraints(cls)
    out: dict[str, Any] = {}
    for f in cls.form_fields():
        value = widget(widget_key(kind, f.name))
        constraint = constraints.get(f.name)
        if f.zero_is_none and (value is None or float(value) == 0.0):
            value = None
        elif isinstance(constraint, Integer) and value is not None:
            value = int(value)
        out[f.name] = value
    return out


def build_from_widgets(kind: str, d: int) -> RecordMechanism:
    """The mechanism configuration typed into the form (the mechanism's ``from_form``, validated by its dataclass)."""
    return MECHANISMS[kind].from_form(form_values(kind), d=d)


def form_config(kind: str, d: int, context: RunContext) -> RunConfig | None:
    """The run the form describes now (its mechanism and seed on the session's data, program and candidate), or
    None while a value in it is not valid."""
    try:
        mechanism = build_from_widgets(kind, d)
        seed = parse_seed(widget("mechanisms.seed", ""))
    except (EngineError, KeyError, TypeError, ValueError):
        return None
    return context.config(mechanism, seed if seed is not None else 0, user_seed=seed is not None)


def on_run(d: int, context: RunContext) -> None:
    """Form submit: validate the configuration and the seed, and ask the page for a run of exactly them."""
    state = get_state()
    kind = widget("mechanisms.kind")
    try:
        mechanism = build_from_widgets(kind, d)
        seed = parse_seed(widget("mechanisms.seed", ""))
    except EngineError as exc:
        state.form_errors["mechanisms"] = str(exc)
        return
    state.configure_mechanism(mechanism)
    state.seed = seed
    state.request_run(context.config(mechanism, seed if seed is not None else fresh_seed(), user_seed=seed is not None),
                      shareable=seed is None)


def confirm_run(key: str) -> None:
    """``on_click`` of "Run it" under a long run's estimate: runs with these inputs go ahead (any seed)."""
    get_state().run_confirmed = key


def cancel_run() -> None:
    """``on_click`` of "Cancel" under a long run's estimate: nothing is computed; the last run is shown again."""
    state = get_state()
    state.run_request = None
    state.run_confirmed = None


def draw_run_estimate(estimate: RunEstimate, key: str) -> None:
    """Say how long a run will take before it starts (a wide table's attack takes minutes: issue 35), and let the
    user go on (:func:`confirm_run` with ``key``, the run's inputs without its seed) or cancel (:func:`cancel_run`)."""
    st.warning(estimate.describe(), icon=":material/schedule:")
    go, back = st.columns(2)
    go.button(f"Run it (about {format_seconds(estimate.seconds)})", key="mechanisms.confirm", type="primary",
              icon=":material/play_arrow:", on_click=confirm_run, args=(key,),
              help="You can stop the run at any time with its Stop button.")
    back.button("Cancel", key="mechanisms.cancel_run", icon=":material/close:", on_click=cancel_run,
                help="Nothing is computed; the previous run (if any) is shown again.")


def on_draw_again(config: RunConfig) -> None:
    """The run ``config`` again with new noise: the next seed if the user fixed one, else fresh OS randomness (never
    a run shared in a workshop room: the user asked for new noise)."""
    state = get_state()
    if config.user_seed:
        new = int(config.seed) + 1
        state.seed = new
        set_widget("mechanisms.seed", str(new))
    else:
        new = fresh_seed()
    state.request_run(config.with_seed(new))


def _help(f: FormField, prepared: PreparedData, start: dict) -> str:
    text = f.help or HELP.get(f.name, "")
    if f.name == "b":  # the paper's B, whichever mechanism: say what it means for these data
        text += " " + b_in_data_units(prepared, float(start.get("b") or 2.0))
    return text


def _draw_field(column: Any, kind: str, f: FormField, constraint: Any, start: dict, prepared: PreparedData) -> None:
    key = widget_key(kind, f.name)
    value = start.get(f.name)
    help_text = _help(f, prepared, start)
    if isinstance(constraint, Choice):
        options = tuple(constraint.options)
        labels = dict(f.options)
        seed_widget(key, value if value in options else options[0])
        column.radio(f.label, options, key=key, horizontal=True, format_func=labels.get if labels else str,
                     help=help_text)
        return
    if isinstance(constraint, Integer):
        low = 0 if f.zero_is_none else int(f.low if f.low is not None else (constraint.low or 0))
        high = int(prepared.d) if f.high_is_d else (int(f.high) if f.high is not None else constraint.high)
        seed_widget(key, int(value or 0) if f.zero_is_none else int(value if value is not None else low))
        if high is not None and high - low <= 20 and not f.zero_is_none:
            column.slider(f.label, min_value=low, max_value=high, key=key, help=help_text)
        else:
            column.number_input(f.label, key=key, min_value=low, max_value=high, step=int(f.step or 1),
                                help=help_text)
        return
    low_f: float | None = f.low
    high_f: float | None = f.high
    if isinstance(constraint, Real):
        low_f = low_f if low_f is not None else (0.0 if constraint.low is None else float(constraint.low))
        if high_f is None and constraint.high is not None:
            high_f = float(constraint.high)
    if f.name == "b":
        low_f, high_f = STUDIO_B
    if high_f is not None and math.isinf(high_f):
        high_f = None
    seed_widget(key, float(value or 0.0) if f.zero_is_none else float(value if value is not None else (low_f or 0.0)))
    column.number_input(f.label, key=key, min_value=0.0 if f.zero_is_none else low_f, max_value=high_f,
                        step=f.step, format=f.format or "%.4f", help=help_text)


def draw_inputs(kind: str, start: dict, prepared: PreparedData) -> None:
    """The inputs of mechanism ``kind``, four to a row, in the order of its ``FORM``."""
    cls = MECHANISMS[kind]
    constraints = declared_constraints(cls)
    fields = cls.form_fields()
    for row in range(0, len(fields), 4):
        chunk = fields[row:row + 4]
        columns = st.columns(4)
        for column, f in zip(columns, chunk, strict=False):
            _draw_field(column, kind, f, constraints.get(f.name), start, prepared)


def draw_form(kind: str, start: dict, prepared: PreparedData, candidate: Guarantee, context: RunContext) -> None:
    """The form of mechanism ``kind`` (starting from ``start``, see :func:`starting_config`), the seed and the run
    button (which asks for a run in ``context``: the session's data, program and candidate)."""
    with st.form("mechanisms.form", border=True):
        draw_inputs(kind, start, prepared)
        st.text_input("Seed (leave empty for a real release)", key="mechanisms.seed", help=HELP["seed"],
                      placeholder="empty = fresh randomness from the operating system")
        st.form_submit_button("Run the mechanism", type="primary", key="mechanisms.run", on_click=on_run,
                              args=(int(prepared.d), context),
                              help="Release the data once with these settings, then score the program and run the "
                              "attacks on the release (a few seconds).",
                              icon=":material/play_arrow:")
