"""The Tradeoffs page's form: mechanisms, grid, repetitions, attacks, adversary, seed and where to compute.

:func:`draw_form` draws it; :func:`on_run` (the submit callback) turns it into the engine's
:class:`~engine.sweeps.SweepConfig` objects (:func:`build_configs`, one per mechanism, validated by the engine) and
stores them as the pending sweep, which the page runs (:mod:`ui.sections.tradeoffs_run`).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Literal

import streamlit as st

from engine.accounting.budget import default_delta, split_delta
from engine.constraints import Choice, Integer, Real, declared_constraints
from engine.errors import EngineError, InvalidParameterError
from engine.evaluation.programs import ProgramConfig
from engine.mechanisms import MECHANISMS, preselected_kinds
from engine.sweeps import (
    ATTACKS,
    PAPER_B_VALUES,
    Budget,
    SweepConfig,
    default_workers,
    preset,
    released_rows,
    sweep_mechanisms,
)
from engine.validation import check_interval
from ui.common import HELP, Labels
from ui.compute_target import compute_controls
from ui.state import StudioState, SweepProgress, get_state, seed_widget, widget

#: Repetitions of a custom grid when the user leaves the count at 0.
CUSTOM_REPETITIONS = 10


class _Labels(dict):
    """KIND → LABEL of the registered mechanisms, read when asked (a bound ``get`` pickles, as AppTest needs)."""

    def __getitem__(self, kind):
        return self.get(kind)

    def get(self, kind, default=None):
        cls = MECHANISMS.get(kind)
        return cls.LABEL if cls is not None else (default if default is not None else kind)


MECH_LABELS = _Labels()
#: What each sweep option of a mechanism means (``SweepConfig`` fields named by a mechanism's tags).
OPTION_TEXT = {
    "k": ("Projection dimension k", "Columns of the mechanism's projection. A projected release's attacker is given "
          "2k original records, so k must stay well below the number of rows."),
    "relation": ("Protection unit", "Row-wise: the grid's B bounds how far one record moves (B = 2: any "
                 "substitution, classic DP). Element-wise: B bounds the change of ONE entry — never record-level "
                 "protection, so no classic-DP point is added."),
    "target_delta": ("Target δ_fail (0 = the grid's δ)", "The failure probability the noise is calibrated to "
                     "(smallest noise whose per-pair bound is at most it). 0 uses each budget's δ: 1/(n+1) in the "
                     "presets."),
    "known_records": ("Records the attacker knows (0 = 2k)", "The attacker of a projected release never sees its "
                      "secret randomness; it knows this many original records (drawn from the released rows) and "
                      "regresses them on their released rows to estimate every record. With at least k records and "
                      "little noise it undoes the projection; with k < d it cannot recover d columns."),
    "output_scale": ("Output scale", "unbiased: ×k (free post-processing); paper: as printed, X/k plus noise."),
    "covariance": ("Covariance of step 4", "gram: XᵀX (the paper); centred: the authors' code."),
    "partitions": ("Disjoint parts", "Split the rows into this many parts (the paper's Nigeria setup: 6); δ then "
                   "comes from the part size."),
    "calibration": ("Calibration", "analytic (exact, any ε) or classical (needs ε < 1)."),
}


def sweep_options(kind: str) -> tuple[str, ...]:
    """The sweep options the form offers for mechanism ``kind``: its tags' ``sweep_options`` (k, the relation, …),
    plus the known-record adversary's records for a projected release."""
    cls = MECHANISMS[kind]
    extra = ("known_records",) if cls.TAGS.projects else ()
    return (*cls.TAGS.sweep_options, *extra)


def _option_key(kind: str, name: str) -> str:
    return f"tradeoffs.{kind}.{name}"


def _option_default(kind: str, name: str) -> object:
    defaults = {f.name: f.default for f in dataclasses.fields(SweepConfig) if f.default is not dataclasses.MISSING}
    return dict(MECHANISMS[kind].TAGS.sweep_defaults).get(name, defaults.get(name))


def option_values(kind: str) -> dict[str, object]:
    """The form's sweep options of mechanism ``kind`` (0 → None for the optional ones)."""
    constraints = declared_constraints(SweepConfig)
    out: dict[str, object] = {}
    for name in sweep_options(kind):
        value = st.session_state.get(_option_key(kind, name), _option_default(kind, name))
        constraint = constraints.get(name)
        if constraint is not None and constraint.optional and (value is None or value == 0):
            value = None
        elif isinstance(constraint, Integer) or (constraint is None and isinstance(value, float) and name == "k"):
            value = int(value)
        out[name] = value
    return out
PRESET_LABELS = {
    "quick": "quick — 8 B values, ε ≈ 4, 10 repetitions",
    "paper": "paper — 8 B × 4 budgets, 50 repetitions (minutes)",
    "custom": "custom grid (below)",
}
ATTACK_LABELS = {
    "singling_out": "singling out",
    "attribute_inference": "attribute inference",
    "distinguishing": "distinguishing",
}
ADVERSARY_LABELS = {
    "knows-scale": "knows the algorithm (undoes known scaling; the paper's assumption)",
    "paper": "authors' code (attacks the release as printed)",
}


def parse_list(name: str, text: str, low: float, high: float | None,
               closed: Literal["both", "left", "right", "neither"] = "right") -> tuple[float, ...]:
    """"0.1, 0.25, 2" → (0.1, 0.25, 2.0), each checked against (low, high]."""
    parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise InvalidParameterError(f"{name}: enter at least one value, e.g. 0.25, 0.5, 2")
    values = []
    for p in parts:
        try:
            value = float(p)
        except ValueError:
            raise InvalidParameterError(f"{name} must be numbers separated by commas; got {p!r}") from None
        values.append(check_interval(name, value, low, high, closed=closed))
    return tuple(dict.fromkeys(values))


def build_configs(state: StudioState, n: int, default_program: ProgramConfig | None) -> list[SweepConfig]:
    """The sweep configurations typed into the form, one per chosen mechanism (validated by the engine).

    Presets set δ = 1/(n + 1) for the n rows the sweep privatizes (``engine.sweeps.released_rows``).
    """
    s = st.session_state
    mechanisms = list(s["tradeoffs.mechanisms"])
    if not mechanisms:
        raise InvalidParameterError("choose at least one mechanism to sweep")
    attacks = tuple(a for a in ATTACKS if a in s["tradeoffs.attacks"])
    program = state.program_or(default_program)
    if program is None:
        raise InvalidParameterError("choose a program on the Data page first (targeting, lending, …)")
    reps = int(s["tradeoffs.reps"])
    common: dict[str, Any] = {
        "program": program,
        "seed": int(s["tradeoffs.seed"]),
        # 0 = the preset's own count (quick 10, paper 50; custom 10)
        "repetitions": reps if reps > 0 else (None if s["tradeoffs.preset"] != "custom" else CUSTOM_REPETITIONS),
    }
    extra: dict[str, Any] = {"attacks": attacks, "adversary": s["tradeoffs.adversary"]}
    configs = []
    for mech in mechanisms:
        mech_extra = {**extra, **option_values(mech)}
        if s["tradeoffs.preset"] == "custom":
            b_values = parse_list("B values", s["tradeoffs.b_values"], 0, 2)
            eps1 = parse_list("ε1 values", s["tradeoffs.epsilon1"], 0, None, closed="neither")
            eps2 = parse_list("ε2 values", s["tradeoffs.epsilon2"], 0, 1, closed="neither")
            delta = float(s["tradeoffs.delta"])
            # 0 = 1/(n + 1) for the rows this sweep privatizes (depends on whether attribute inference runs)
            delta = default_delta(released_rows(n, attacks)) if delta == 0 else delta
            delta1, delta2 = split_delta(check_interval("δ", delta, 0, 1, closed="neither"))
            budgets = tuple(Budget(e1, delta1, e2, delta2) for e1 in eps1 for e2 in eps2)
            configs.append(SweepConfig(budgets=budgets, b_values=b_values, mechanism=mech, **common, **mech_extra))
        else:
            # the candidate's δ (default 1/(n + 1) for all n rows, as the real release): a chosen point keeps it
            n_private = released_rows(n, attacks)
            configs.append(preset(s["tradeoffs.preset"], n_private, mechanism=mech, delta=state.effective_delta(),
                                  **common, **mech_extra))
    return configs


def form_configs(state: StudioState, n: int, default_program: ProgramConfig | None) -> list[SweepConfig] | None:
    """The sweep configurations the form and the session hold now (None while one is not valid): a sweep result
    is current only while they are its configurations."""
    try:
        return build_configs(state, n, default_program)
    except (EngineError, KeyError):
        return None


def on_run(n: int, default_program: ProgramConfig | None, data: str) -> None:
    """Form submit: the sweep configurations typed into the form become the pending sweep (run by the page) on the
    data with fingerprint ``data``."""
    state = get_state()
    try:
        configs = build_configs(state, n, default_program)
    except EngineError as exc:
        state.form_errors["tradeoffs"] = str(exc)
        return
    state.form_errors.pop("tradeoffs", None)
    state.sweep_pending = tuple(configs)
    state.sweep_partial = SweepProgress(tuple(configs), data=data)


def draw_form(n: int, default_program: ProgramConfig | None, data: str) -> None:
    """The sweep's form for data of ``n`` rows with fingerprint ``data`` (``default_program``: the data's own program
    when none is chosen)."""
    n_released = released_rows(n, chosen_attacks()) if n >= 2 else n
    with st.form("tradeoffs.form"):
        c1, c2, c3 = st.columns([0.4, 0.3, 0.3])
        seed_widget("tradeoffs.mechanisms", list(preselected_kinds()))
        c1.multiselect("Mechanisms (drawn on the same axes)", sweep_mechanisms(), key="tradeoffs.mechanisms",
                       format_func=MECH_LABELS.get,
                       help="Each mechanism is swept over the same grid with the same seed, configured at every point "
                       "by its own rule for a (B, ε, δ) budget. Classic DP (B = 2) and the non-private release are "
                       "always added as reference points. A mechanism whose release has projected columns is attacked "
                       "by an adversary who knows a few original records, not its secret randomness (options below).")
        seed_widget("tradeoffs.preset", "quick")
        c2.radio("Grid", tuple(PRESET_LABELS), key="tradeoffs.preset", format_func=PRESET_LABELS.get,
                 help="quick and paper use the paper's B values with the candidate's δ (default 1/(n+1)) split "
                 "2/3 : 1/3. custom uses the values typed below.")
        seed_widget("tradeoffs.reps", 0)
        c3.number_input("Repetitions per point (0 = the grid's default)", key="tradeoffs.reps", min_value=0,
                        max_value=500, step=1,
                        help="Independent releases per grid point; the curves show the mean and its 95 % interval. "
                        f"0 uses the grid's own count: quick 10, paper 50, custom {CUSTOM_REPETITIONS}. More repetitions: "
                        "narrower intervals, longer runs.")
        with st.expander("Custom grid", expanded=False, icon=":material/grid_on:"):
            g1, g2, g3, g4 = st.columns(4)
            seed_widget("tradeoffs.b_values", ", ".join(f"{b:g}" for b in PAPER_B_VALUES))
            g1.text_input("B values", key="tradeoffs.b_values", help=HELP["b"])
            seed_widget("tradeoffs.epsilon1", "3")
            g2.text_input("ε1 values (projection step)", key="tradeoffs.epsilon1",
                          help="Privacy loss of the projection step; the Gaussian mechanism spends ε1 + ε2 in one go.")
            seed_widget("tradeoffs.epsilon2", "0.9999")
            g3.text_input("ε2 values (covariance step, < 1)", key="tradeoffs.epsilon2",
                          help="Privacy loss of the covariance step (needs ε2 < 1).")
            seed_widget("tradeoffs.delta", 0.0)
            g4.number_input("Total δ (0 = 1/(n+1))", key="tradeoffs.delta", min_value=0.0, max_value=0.5,
                            format="%.3e", step=1e-6,
                            help=HELP["delta"] + " 0 (default) = 1/(n+1) with n the rows the sweep privatizes: "
                            f"{n_released:,} with the attacks chosen now (the holdout is left out only for attribute "
                            "inference). Split δ1 = 2δ/3, δ2 = δ/3.")
        for kind in sweep_mechanisms():
            if sweep_options(kind):
                with st.expander(f"{MECH_LABELS.get(kind)}: options", expanded=False, icon=":material/tune:"):
                    draw_options(kind)
        a1, a2, a3, a4 = st.columns([0.35, 0.35, 0.15, 0.15])
        seed_widget("tradeoffs.attacks", list(ATTACKS))
        a1.multiselect("Attacks", ATTACKS, key="tradeoffs.attacks", format_func=Labels(ATTACK_LABELS),
                       help="Singling out (net attack), attribute inference (nearest neighbour, with a held-out control "
                       "group) and distinguishing (from the guarantee; no data needed).")
        seed_widget("tradeoffs.adversary", "knows-scale")
        a2.radio("Adversary", tuple(ADVERSARY_LABELS), key="tradeoffs.adversary", format_func=ADVERSARY_LABELS.get,
                 help="What the attacker knows. The paper assumes it knows the algorithm and its parameters.")
        seed_widget("tradeoffs.seed", 0)
        a3.number_input("Seed", key="tradeoffs.seed", min_value=0, step=1,
                        help="Sweeps are simulations: the seed makes the table reproducible (same seed → same table). "
                        "Nothing from a sweep is released.")
        seed_widget("tradeoffs.workers", default_workers())
        a4.number_input("Worker processes", key="tradeoffs.workers", min_value=1, max_value=max(os.cpu_count() or 1, 1),
                        step=1, help="Run cells in parallel processes (default: one per core; a sweep estimated to take "
                        "under 5 s runs in the page's own process instead); the table does not depend on it.")
        seed_widget("tradeoffs.compute_on", "local")
        seed_widget("tradeoffs.scheduler", "")
        compute_controls(st.columns([0.5, 0.5])[0])
        st.form_submit_button("Run the sweep", type="primary", key="tradeoffs.run", on_click=on_run, args=(n, default_program, data),
                              help="Privatize, score and attack over the whole grid; the curves fill in as it runs and "
                              "you can stop it at any time.",
                              icon=":material/play_arrow:")
    if get_state().form_errors.get("tradeoffs"):
        st.error(get_state().form_errors["tradeoffs"], icon=":material/error:")


def draw_options(kind: str) -> None:
    """The sweep options of mechanism ``kind`` (its tags name them; each drawn as ``SweepConfig`` declares it)."""
    constraints = declared_constraints(SweepConfig)
    names = sweep_options(kind)
    columns = st.columns(max(len(names), 1))
    for column, name in zip(columns, names, strict=False):
        key = _option_key(kind, name)
        label, help_text = OPTION_TEXT.get(name, (name, ""))
        constraint = constraints.get(name)
        default: Any = _option_default(kind, name)
        if isinstance(constraint, Choice):
            seed_widget(key, default)
            column.radio(label, constraint.options, key=key, help=help_text)
        elif isinstance(constraint, Real):
            seed_widget(key, float(default or 0.0))
            column.number_input(label, key=key, min_value=0.0, max_value=0.5, format="%.3e", step=1e-6,
                                help=help_text)
        else:
            seed_widget(key, int(default or 0))
            column.number_input(label, key=key, min_value=0 if constraint is not None and constraint.optional else 1,
                                step=1, help=help_text)


def chosen_attacks() -> tuple[str, ...]:
    """The attacks chosen in the form (all before it is first drawn)."""
    return tuple(a for a in widget("tradeoffs.attacks", ATTACKS) if a in ATTACKS)
