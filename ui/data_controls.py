"""The Data page's column controls: widgets in, a :class:`~engine.data.preparation.DataSpec` and a
:class:`~engine.evaluation.programs.ProgramConfig` out. Nothing here reads the data beyond the engine's column
profile (``engine.data.profile.column_profile``); every transformation is declared in the spec, which the engine
validates and applies.

Widget keys are ``data.*``; :data:`COLUMN_KEYS` lists those that describe one table (cleared when the table
changes so they reseed from the session's spec).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from engine.data.preparation import Categorical, DataSpec, MissingRule, Normalization
from engine.errors import InvalidParameterError
from engine.evaluation.lending import PROFIT_CONVENTIONS
from engine.evaluation.programs import LENDING_ROLES, PROGRAM_KINDS, ProgramConfig
from ui.common import plain
from ui.state import (
    editor_table,
    forget_widget,
    forget_widgets_with_prefix,
    get_state,
    seed_widget,
    set_widget,
    widget,
)

NO_COLUMN = "(none)"
DROP, FILL, LEVEL = "drop the rows", "fill with a public constant", "encode as its own level"
PROGRAM_LABELS = {
    "targeting": "targeting — rank people by predicted outcome, select the poorest share",
    "lending": "lending — approve applicants predicted to repay; score profit",
    "classification": "classification — predict a yes/no label",
    "regression": "regression — predict a number",
}
#: How the model's predicted probabilities become decisions, in each program's words: a lender approves applicants
#: predicted to repay; a classification program predicts the positive class (a new-user run on the penguins read
#: "probability of repaying" for a target that has nothing to do with loans).
APPROVAL_LABELS = {
    "lending": ("Approve when", {"threshold": "probability of repaying ≥ a threshold",
                                 "top_share": "the top share of applicants"}),
    "classification": ("Predict the positive class when", {"threshold": "its predicted probability ≥ a threshold",
                                                           "top_share": "for the top share of records"}),
}
UNIT_LABELS = {"amount": "money per applicant", "rate": "a rate (0.12 = 12 % of the loan)",
               "percent": "a percentage (12 = 12 % of the loan)"}
PROFIT_LABELS = {"paper": "the paper's: a rejected good applicant costs its revenue",
                 "ordinary": "ordinary P&L: only the loans made count"}
#: Widget keys that describe the columns of ONE table.
COLUMN_KEYS = (
    "data.features", "data.target", "data.program", "data.norm_method", "data.standardize", "data.bounds",
    "data.missing", "data.positive",
    "data.share", "data.population", "data.approval_rule", "data.approval_value", "data.interest_unit",
    "data.revenue_unit", "data.loan_amount", "data.interest_rate", "data.revenue_rate", "data.profit_convention",
    *(f"data.role.{role}" for role in LENDING_ROLES),
)


#: Prefixes of the per-column widget keys (one set per text feature: ``data.cat.<column>.<part>``).
COLUMN_KEY_PREFIXES = ("data.cat.",)


def reset_column_widgets() -> None:
    forget_widget(*COLUMN_KEYS)
    forget_widgets_with_prefix(*COLUMN_KEY_PREFIXES)
    get_state().forget_editors()


def _kinds(profile: pd.DataFrame) -> dict[str, str]:
    return dict(zip(profile["column"], profile["kind"], strict=True))


def _set_features(columns: list[str]) -> None:
    set_widget("data.features", columns)


def feature_picker(profile: pd.DataFrame, spec: DataSpec, container: Any) -> tuple[list[str], str | None]:
    """Target first (it is never offered as a feature), then the features with quick selections."""
    columns = list(profile["column"])
    kinds = _kinds(profile)
    seed_widget("data.target", spec.target if spec.target in columns else NO_COLUMN)
    target = container.selectbox(
        "Target (the outcome the program predicts)", [NO_COLUMN, *columns], key="data.target",
        help="The outcome the program predicts (consumption, repaid or not, …). It is never privatized and never a "
        "feature: choosing it here removes it from the features. A text outcome (yes/no, 'Fully Paid'/'Charged "
        "Off') is turned into 1/0 by the positive class chosen below.",
    )
    target = None if target == NO_COLUMN else target
    options = [c for c in columns if c != target]
    seed_widget("data.features", [f for f in spec.features if f in options])
    if target is not None and target in widget("data.features", []):
        set_widget("data.features", [f for f in widget("data.features", []) if f != target])
    numeric = [c for c in options if kinds[c] in ("numeric", "boolean")]
    usable = [c for c in options if not profile.set_index("column").loc[c, "identifier"]]
    b1, b2, b3, b4 = container.columns(4)
    b1.button("All", key="data.pick_all", on_click=_set_features, args=(usable,),
              help="Every column except the target and identifier-like columns (ids, row numbers).")
    b2.button("None", key="data.pick_none", on_click=_set_features, args=([],))
    b3.button("Numeric", key="data.pick_numeric", on_click=_set_features,
              args=([c for c in numeric if c in usable],), help="Only columns that hold numbers (or 0/1).")
    b4.button("Suggested", key="data.pick_suggested", on_click=_set_features,
              args=([f for f in spec.features if f in options],),
              help="The Studio's suggestion: numeric columns and text columns with few levels, no identifiers.")
    features = container.multiselect(
        f"Feature columns (privatized) — {len(options)} available; type to search", options, key="data.features",
        help="The columns the privatized release will contain; the program is trained on them. Text columns are "
        "one-hot encoded (levels below), dates become days since 1970-01-01.",
    )
    return list(features), target


def _split_levels(text: Any) -> tuple[str, ...]:
    parts = [p.strip() for p in str(text or "").split("|")]
    return tuple(p for p in parts if p)


#: How a text feature's levels are chosen (issue 34 §2: every level available, whatever their number).
ALL, RARE, PICK, TYPED = "every level in the data", "group rare levels into '(other)'", "choose the levels", \
    "public levels (typed)"
LEVEL_MODES = (ALL, RARE, PICK, TYPED)
#: Above this many levels the levels are not offered one by one (group the rare ones instead).
MAX_LISTED_LEVELS = 1000
#: Rows a level needs by default when rare levels are grouped: 1 % of the rows, at least this many.
MIN_GROUP_ROWS = 10


def _with_count(counts: dict[str, int], level: str) -> str:
    """A level with its count, for a picker (a partial of it is picklable, as session state requires)."""
    return f"{level} ({counts.get(level, 0):,})"


def _cat_key(column: str, part: str) -> str:
    return f"data.cat.{column}.{part}"


def _select_levels(key: str, levels: list[str]) -> None:
    set_widget(key, list(levels))


def _mode_of(cat: Categorical | None, levels: dict[str, int]) -> str:
    if cat is None:
        return ALL
    if cat.min_count:
        return RARE
    if not cat.levels_from_data:
        return TYPED
    if cat.levels and set(cat.levels) != set(levels):
        return PICK
    return ALL


def categorical_controls(profile: pd.DataFrame, spec: DataSpec, features: list[str], container: Any,
                         levels_of: Callable[[str], dict[str, int]], n_rows: int) -> dict[str, Categorical]:
    """One panel per text feature: every level read from the data, the rare ones grouped into '(other)' at a chosen
    count, a chosen subset (search and select all; the rest go to '(other)'), or public levels typed from a code
    list. Nothing fails for a level the user did not see: every choice but typed levels without '(other)' has a
    place for any value. ``levels_of(column)`` gives every level with its count (``ui.cached.column_levels``)."""
    kinds = _kinds(profile)
    text = [f for f in features if kinds.get(f) == "text"]
    if not text:
        return {}
    known = spec.categorical or {}
    container.markdown("**Text features — one-hot encoded**")
    container.caption(
        "Each level becomes a 0/1 column. Levels read from the data (every choice below but typed public levels) are "
        "a statistic of the data and are flagged as not private; type the levels from a code list or questionnaire "
        "to avoid that."
    )
    out: dict[str, Categorical] = {}
    for column in text:
        levels = levels_of(column)
        cat = known.get(column)
        seed_widget(_cat_key(column, "mode"), _mode_of(cat, levels))
        default_min = max(MIN_GROUP_ROWS, int(0.01 * n_rows))
        seed_widget(_cat_key(column, "min"), int(cat.min_count) if cat is not None and cat.min_count else default_min)
        seed_widget(_cat_key(column, "pick"), [v for v in (cat.levels if cat is not None else ()) if v in levels]
                    or list(levels))
        seed_widget(_cat_key(column, "typed"), "|".join(cat.levels) if cat is not None and not cat.levels_from_data
                    else "")
        seed_widget(_cat_key(column, "other"), bool(cat.other) if cat is not None and not cat.levels_from_data
                    else True)
        mode = widget(_cat_key(column, "mode"))
        with container.expander(f"{plain(column)} — {len(levels):,} levels", icon=":material/label:"):
            options = list(LEVEL_MODES) if len(levels) <= MAX_LISTED_LEVELS else [ALL, RARE, TYPED]
            if mode not in options:
                mode = RARE
                set_widget(_cat_key(column, "mode"), mode)
            mode = st.radio(f"Levels of {plain(repr(column))}", options, key=_cat_key(column, "mode"),
                            horizontal=True, help="Every level read from the data; the levels held by at least a "
                            "number of rows (the rest in '(other)'); the levels you choose (the rest in '(other)'); or "
                            "public levels typed from a code list." + (
                                f" With {len(levels):,} levels they are not listed one by one."
                                if len(levels) > MAX_LISTED_LEVELS else ""))
            if mode == ALL:
                out[column] = Categorical(levels_from_data=True)
                st.caption(f"{len(levels):,} one-hot columns: " + plain(_shown(levels)) + ".")
            elif mode == RARE:
                k = int(st.number_input("Rows a level needs to keep its own column", min_value=1, step=1,
                                        key=_cat_key(column, "min"),
                                        help="Levels held by fewer rows (of the rows kept) go to '(other)'. Which "
                                        "levels are rare is read from the data: flagged as not private."))
                kept = {v: c for v, c in levels.items() if c >= k}
                rest = sum(c for v, c in levels.items() if c < k)
                out[column] = Categorical(min_count=k)
                st.caption(f"{len(kept):,} levels keep their own column ({plain(_shown(kept))}); "
                           f"{len(levels) - len(kept):,} rarer levels ({rest:,} rows) go to '(other)'. Counts over the "
                           "whole table (internal, not private); the rows kept decide.")
            elif mode == PICK:
                b1, b2 = st.columns(2)
                b1.button("Select all", key=_cat_key(column, "all"), on_click=_select_levels,
                          args=(_cat_key(column, "pick"), list(levels)))
                b2.button("Clear", key=_cat_key(column, "none"), on_click=_select_levels,
                          args=(_cat_key(column, "pick"), []))
                chosen = st.multiselect(f"Levels of {plain(repr(column))} with a column of their own (type to search)",
                                        list(levels), key=_cat_key(column, "pick"),
                                        format_func=functools.partial(_with_count, levels),
                                        help="Every other value, also one not in these data, goes to '(other)'.")
                out[column] = Categorical(tuple(chosen), levels_from_data=True, other=True)
            else:
                typed = st.text_input("Public levels, separated by |", key=_cat_key(column, "typed"),
                                      help="From a code list or questionnaire, not from these data.")
                other = st.checkbox("Add an '(other)' level for any other value", key=_cat_key(column, "other"),
                                    help="Without it, a value not among the typed levels is a problem to fix.")
                parsed = _split_levels(typed)
                out[column] = (Categorical(parsed, other=other) if parsed else Categorical(levels_from_data=True))
                if not parsed:
                    st.caption("Type the levels; until then every level in the data is used.")
    return out


def _shown(levels: dict[str, int], limit: int = 8) -> str:
    names = list(levels)
    return ", ".join(names[:limit]) + (f", … ({len(names) - limit:,} more)" if len(names) > limit else "")


def bounds_controls(spec: DataSpec, numeric_features: list[str], container: Any) -> tuple[tuple[float, ...],
                                                                                         tuple[float, ...]]:
    """The editable table of public bounds per numeric feature (started from the spec's; the edit outlives the page,
    :func:`ui.state.editor_table`): the lower and upper bounds typed, NaN where a cell is empty."""
    base = editor_table("bounds", "data.bounds")
    if base is None or list(base["feature"]) != numeric_features:
        known = dict(zip(spec.numeric_features, zip(spec.normalization.lower, spec.normalization.upper, strict=False),
                         strict=False))
        base = pd.DataFrame({"feature": numeric_features,
                             "lower": [known.get(f, (math.nan, math.nan))[0] for f in numeric_features],
                             "upper": [known.get(f, (math.nan, math.nan))[1] for f in numeric_features]})
        get_state().set_editor_base("bounds", base)
        forget_widget("data.bounds")
    edited = container.data_editor(base, key="data.bounds", hide_index=True, disabled=["feature"], num_rows="fixed",
                                   width="stretch")
    get_state().keep_editor("bounds", edited)  # the edit outlives the page (Streamlit forgets the editor's)
    return tuple(float(v) for v in edited["lower"]), tuple(float(v) for v in edited["upper"])


def missing_controls(profile: pd.DataFrame, spec: DataSpec, used: list[str], categorical: dict[str, Categorical],
                     target: str | None, container: Any) -> tuple[dict[str, MissingRule], dict[str, Categorical]]:
    """One row per used column with missing cells: drop the rows, fill with a public constant (optionally with a
    0/1 indicator feature) or, for a text feature, encode missing as its own level."""
    missing = dict(zip(profile["column"], profile["missing"], strict=True))
    gaps = [c for c in used if missing.get(c, 0) > 0 and c != target]
    if target is not None and missing.get(target, 0) > 0:
        container.caption(f"The target {plain(repr(target))} is missing in {missing[target]:,} rows: those rows are always "
                          "dropped (an outcome cannot be filled in).")
    if not gaps:
        return {}, categorical
    known = spec.missing or {}
    base = editor_table("missing", "data.missing")
    if base is None or list(base["column"]) != gaps:
        rows = []
        for c in gaps:
            rule = known.get(c)
            cat = (spec.categorical or {}).get(c)
            action = LEVEL if cat is not None and cat.missing_level else (
                FILL if rule is not None and rule.action == "fill" else DROP)
            rows.append({"column": c, "missing cells": int(missing[c]), "what to do": action,
                         "fill value (public)": "" if rule is None or rule.value is None else str(rule.value),
                         "add a missing-indicator feature": bool(rule.indicator) if rule is not None else False})
        base = pd.DataFrame(rows)
        get_state().set_editor_base("missing", base)
        forget_widget("data.missing")
    container.markdown("**Missing values**")
    container.caption(
        "Per column: drop the rows with a gap, fill gaps with a constant fixed in advance (never the data's own "
        "mean), optionally adding a 0/1 feature that says where a value was filled, or — for a text feature — "
        "treat 'missing' as a level of its own. Every choice is recorded in the decision record."
    )
    edited = container.data_editor(
        base, key="data.missing", hide_index=True, disabled=["column", "missing cells"], num_rows="fixed",
        width="stretch",
        column_config={"what to do": st.column_config.SelectboxColumn(options=[DROP, FILL, LEVEL], required=True)},
    )
    get_state().keep_editor("missing", edited)  # the edit outlives the page (Streamlit forgets the editor's)
    rules: dict[str, MissingRule] = {}
    cats = dict(categorical)
    for row in edited.to_dict("records"):
        c, action = row["column"], row["what to do"]
        if action == LEVEL:
            if c not in cats:
                raise InvalidParameterError(
                    f"{c!r}: 'encode as its own level' is for text features only — drop the rows or fill the gaps")
            cats[c] = dataclasses.replace(cats[c], missing_level=True)
        elif action == FILL:
            value = str(row["fill value (public)"] or "").strip()
            if not value:
                raise InvalidParameterError(f"{c!r}: type the public constant to fill its missing cells with")
            try:
                number: float | str = float(value)
            except ValueError:
                number = value
            indicator = bool(row["add a missing-indicator feature"]) and c in widget("data.features", [])
            rules[c] = MissingRule("fill", number, indicator=indicator)
        else:
            rules[c] = MissingRule("drop")
    return rules, cats


def positive_class_control(profile: pd.DataFrame, spec: DataSpec, target: str | None, container: Any,
                           levels_of: Callable[[str], dict[str, int]]) -> tuple[str, ...]:
    """For a text (or yes/no) target: which label(s) count as 1 (repaid, eligible, …), chosen from EVERY label of
    the column with its count (type to search; select all, then remove a few). Every label not chosen — also one not
    in these data — is 0."""
    if target is None:
        return ()
    row = profile.set_index("column").loc[target]
    if row["kind"] not in ("text",):
        return ()
    counts = levels_of(target)
    levels = list(counts)
    current = [v for v in (spec.positive_class if spec.target == target else ()) if v in counts]
    seed_widget("data.positive", current)
    if not set(widget("data.positive")) <= set(levels):
        set_widget("data.positive", current)
    if len(levels) > 2:
        b1, b2, _ = container.columns([1, 1, 2])
        b1.button("Select all", key="data.positive_all", on_click=_select_levels, args=("data.positive", levels),
                  help="Every label, to remove the few that count as 0.")
        b2.button("Clear", key="data.positive_none", on_click=_select_levels, args=("data.positive", []))
    chosen = container.multiselect(
        f"Which value(s) of {plain(repr(target))} count as 1? — {len(levels):,} labels; type to search", levels,
        key="data.positive", format_func=functools.partial(_with_count, counts),
        help="A text outcome becomes a 1/0 label: the values chosen here are 1 (e.g. 'Fully Paid' = repaid, 'no' "
        "for 'denied?' = approved), every other value is 0. For lending, 1 must mean 'repays' (low risk). The counts "
        "are over the whole table (internal, not private).",
    )
    return tuple(chosen)


def program_controls(base: ProgramConfig | None, demo_kind: str | None, n: int, container: Any) -> ProgramConfig:
    """The program and the settings a designer recognises (share targeted, population, approval rule, units)."""
    kind0 = base.kind if base is not None else (demo_kind if demo_kind in PROGRAM_KINDS else "targeting")
    seed_widget("data.program", kind0)
    kind = container.selectbox("Program", PROGRAM_KINDS, key="data.program", format_func=PROGRAM_LABELS.get,
                               help="What the program official does with the released features; the Mechanisms "
                               "and Tradeoffs pages score it.")
    start = base if base is not None and base.kind == kind else ProgramConfig(kind=kind)
    settings: dict[str, Any] = {}
    if kind == "targeting":
        c1, c2 = container.columns(2)
        seed_widget("data.share", float(start.quantile))
        settings["quantile"] = c1.number_input(
            "Share of people targeted", key="data.share", min_value=0.01, max_value=0.99, step=0.01,
            format="%.2f", help="The program selects this share of people with the lowest predicted outcome; the "
            "same share with the lowest true outcome counts as eligible (the paper's Togo program: 0.29).")
        seed_widget("data.population", float(start.population or 0.0))
        population = c2.number_input(
            "Population the sample stands for (0 = the sample itself)", key="data.population", min_value=0.0,
            step=1000.0, format="%.0f",
            help=f"Scales exclusion and inclusion errors from the sample ({n:,} people) to the population the "
            "program serves (the paper's Togo program: 4.95 million adults). 0 counts people in the sample.")
        settings["population"] = None if population <= 0 else float(population)
    elif kind in ("lending", "classification"):
        c1, c2 = container.columns(2)
        seed_widget("data.approval_rule", start.approval_rule)
        title, labels = APPROVAL_LABELS[kind]
        rule = c1.radio(title, tuple(labels), key="data.approval_rule", format_func=labels.get,
                        help="How the model's predicted probabilities become decisions.")
        seed_widget("data.approval_value", float(start.approval_threshold if rule == "threshold" else
                                                 start.approve_share))
        value = c2.number_input("Threshold" if rule == "threshold" else "Share approved", key="data.approval_value",
                                min_value=0.01, max_value=0.99 if rule == "threshold" else 1.0, step=0.05,
                                format="%.2f")
        settings.update({"approval_rule": rule, "approval_threshold" if rule == "threshold" else "approve_share":
                         float(value)})
        if kind == "lending":
            c1, c2 = container.columns(2)
            seed_widget("data.interest_unit", start.interest_unit)
            settings["interest_unit"] = c1.radio("The interest column holds", tuple(UNIT_LABELS),
                                                 key="data.interest_unit", format_func=UNIT_LABELS.get)
            seed_widget("data.revenue_unit", start.revenue_unit)
            settings["revenue_unit"] = c2.radio("The revenue column holds", tuple(UNIT_LABELS),
                                                key="data.revenue_unit", format_func=UNIT_LABELS.get)
            container.markdown("**Assumed values** (used where the table has no such column; stated with every "
                               "result and in the decision record)")
            c1, c2, c3 = container.columns(3)
            seed_widget("data.loan_amount", float(start.loan_amount))
            settings["loan_amount"] = float(c1.number_input(
                "Loan amount (no loan amount column)", key="data.loan_amount", min_value=0.01, step=10.0,
                format="%g", help="The amount of every loan when no column holds each applicant's amount."))
            seed_widget("data.interest_rate", float(start.interest_rate))
            settings["interest_rate"] = float(c2.number_input(
                "Interest, share of the loan (no interest column)", key="data.interest_rate", min_value=0.0,
                step=0.01, format="%g", help="Owed on top of a loan that is not repaid: a default costs loan + "
                "interest. 0.15 = 15 %."))
            seed_widget("data.revenue_rate", float(start.revenue_rate))
            settings["revenue_rate"] = float(c3.number_input(
                "Revenue, share of the loan (no revenue or interest column)", key="data.revenue_rate",
                min_value=0.0, step=0.01, format="%g", help="What a repaid loan earns. 0.15 = 15 %."))
            seed_widget("data.profit_convention", start.profit_convention)
            settings["profit_convention"] = container.radio(
                "Profit convention", tuple(PROFIT_CONVENTIONS), key="data.profit_convention", horizontal=True,
                format_func=PROFIT_LABELS.get,
                help="How rejecting an applicant who would have repaid is scored. The paper counts the revenue "
                "forgone as a loss; ordinary profit and loss counts only the loans made. Both totals are reported "
                "with every result.")
    keep = {k: v for k, v in start.to_dict().items() if k not in settings and k != "kind"}
    return ProgramConfig(kind=kind, **{**keep, **settings})


def role_controls(columns: list[str], spec: DataSpec, features: list[str], container: Any) -> dict[str, str]:
    """The lending program's money columns (never privatized); a warning when one is also a feature."""
    roles = {}
    for role in LENDING_ROLES:
        current = (spec.roles or {}).get(role)
        seed_widget(f"data.role.{role}", current if current in columns else NO_COLUMN)
        chosen = container.selectbox(
            role.replace("_", " ").capitalize() + " column", [NO_COLUMN, *columns], key=f"data.role.{role}",
            help=f"The column holding each applicant's {role.replace('_', ' ')} (numbers ≥ 0), read by the lending "
            "program to score profit; never privatized.")
        if chosen != NO_COLUMN:
            roles[role] = chosen
            if chosen in features:
                container.warning(
                    f"{plain(repr(chosen))} is also a privatized feature: the program's profit uses its exact values while the "
                    "model sees the noisy ones. Remove it from the features if it should stay out of the release.",
                    icon=":material/warning:")
    return roles


def build_spec(features: list[str], target: str | None, roles: dict[str, str], normalization: Normalization,
               categorical: dict[str, Categorical], missing: dict[str, MissingRule], positive: tuple[str, ...],
               profile: pd.DataFrame) -> DataSpec:
    """The spec the controls describe (validated by the engine); dates are declared for date-kind features."""
    kinds = _kinds(profile)
    gaps = dict(zip(profile["column"], profile["missing"], strict=True))
    used = [*features, *([target] if target else []), *roles.values()]
    used_cat = {c: v for c, v in categorical.items() if c in features}
    return DataSpec(
        tuple(features), target=target, roles=roles or None, normalization=normalization,
        missing={c: r for c, r in missing.items()} or None,
        # rows with a gap in a used column without a rule of its own (e.g. a program column) are dropped
        drop_missing=any(gaps.get(c, 0) > 0 for c in used),
        categorical=used_cat or None,
        dates=tuple(f for f in features if kinds.get(f) == "date"),
        positive_class=positive,
    )


def nan_free(values: tuple[float, ...]) -> bool:
    return not any(math.isnan(v) for v in values)


__all__ = [
    "COLUMN_KEYS",
    "NO_COLUMN",
    "build_spec",
    "categorical_controls",
    "feature_picker",
    "missing_controls",
    "positive_class_control",
    "program_controls",
    "reset_column_widgets",
    "role_controls",
]
