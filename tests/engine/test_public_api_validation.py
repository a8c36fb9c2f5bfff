"""Meta-test of the engine's public boundary, in the style of scikit-learn's ``test_public_functions.py`` (R9).

For every public engine entry point we feed values outside each declared constraint — zero or negative where a
positive number is required, NaN, ±inf, text, booleans, out-of-range probabilities, non-integers where a whole
number is required, unknown choices for ``Literal`` fields — and assert that an
:class:`~engine.errors.InvalidParameterError` (:class:`~engine.errors.DataValidationError` for data) is raised
whose message NAMES the offending parameter (as a whole word; a few parameters are named by their user-facing
label, listed in ``ALIASES``).

How the invalid values are made
-------------------------------
* Configuration dataclasses: starting from a VALID instance per class (``CONFIG_EXAMPLES``), every field is
  replaced one at a time (``dataclasses.replace``) by values generated from its type hint (``float`` → NaN, ±inf,
  "x", True, None; ``int`` → 2.5, "3", True, NaN, None; ``bool`` → "yes", 1, None; ``Literal`` → "nope", None, 3;
  ``Optional[T]`` and ``tuple[T, ...]`` recurse) plus values just outside each range the class declares in
  ``PARAMETER_CONSTRAINTS`` (engine/constraints.py; the declaration its own validation reads) and the cross-field
  rules in ``CROSS_FIELD``. The same type-level values are also fed through
  ``from_dict`` (the path a hand-edited JSON file takes).
* Functions: ``CALLS`` lists each public function with a valid call and, per parameter, the kind of its
  constraint (``POS`` = (0, ∞), ``PROB_OPEN`` = (0, 1), ...); the kinds expand into invalid values. A valid call
  must succeed (and give a finite answer where it returns numbers), so the invalid cases cannot pass vacuously.
* Theory (``engine.theory.feasibility``): every name in ``__all__`` is discovered and called by argument name.

Known defects
-------------
Cases the engine gets wrong today are listed in ``KNOWN`` (group → value → reason, grouped by root cause) and run
as one ``pytest.param(..., marks=xfail(strict=True, reason=...))`` per group, id ``<group>=KNOWN-DEFECT[values]``,
so the suite stays green and every defect shows in the ``-ra`` summary with its reason. Fixing one value makes
that param FAIL with "remove it from KNOWN"; fixing all of them makes it XPASS, which strict mode fails too. Do
not "fix" a case here by loosening the expectation: fix the engine, then delete the entry.

The whole module runs in a few seconds (no sweeps, no large data).
"""

from __future__ import annotations

import dataclasses
import inspect
import io
import math
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pytest

import engine.theory.feasibility as feasibility
from engine.accounting import composition, tdp
from engine.attacks import attribute_inference as ai
from engine.attacks import distinguishing as dist
from engine.attacks import singling_out as so
from engine.attacks import threat_model
from engine.attacks.attribute_inference import AttributeInferenceConfig
from engine.attacks.singling_out import SinglingOutConfig
from engine.constraints import declared_constraints
from engine.data.demos import load_demo
from engine.data.preparation import (
    DataSpec,
    Normalization,
    bounds_from_frame,
    load_table,
    prepare,
    validate_table,
)
from engine.decision_record import (
    DataFingerprint,
    PrivacySpecification,
    Seeds,
    Software,
    TableData,
    Targets,
    load_decision_record,
)
from engine.errors import DataValidationError, EngineError, InvalidParameterError
from engine.evaluation import clustering, programs
from engine.evaluation.programs import ProgramConfig
from engine.guarantee import Guarantee, GuaranteeStatement
from engine.mechanisms import MECHANISMS, mechanism_from_dict, mondrian
from engine.mechanisms import gaussian as gauss
from engine.mechanisms import jl_laplace as jl
from engine.mechanisms import private_projection as pp
from engine.mechanisms.gaussian import GaussianMechanism
from engine.mechanisms.jl_laplace import JLLaplace
from engine.mechanisms.mondrian import KAnonymityGuarantee, MondrianKAnonymity
from engine.mechanisms.private_projection import PrivateProjection
from engine.per_record import SUM_MECHANISMS, make_sum_mechanism, sum_mechanism_from_dict
from engine.per_record import accuracy as pr_accuracy
from engine.per_record import calibration as pr_calibration
from engine.per_record import cells as pr_cells
from engine.per_record import losses as pr_losses
from engine.per_record import tdp_losses as pr_tdp
from engine.per_record import units as pr_units
from engine.release import ReleaseConfig
from engine.rng import make_rng, spawn_seeds
from engine.sweeps import Budget, SweepConfig, paper_budgets, preset, released_rows, run_sweep

NAN, INF = math.nan, math.inf

# ---------------------------------------------------------------------------------------------------------------
# message check


#: (owner, parameter) → other words that count as naming the parameter (user-facing labels in messages).
ALIASES: dict[tuple[str, str], tuple[str, ...]] = {
    ("SweepConfig", "b_values"): ("B",),
    ("SweepConfig", "attacks"): ("attack",),
    ("feasibility_grid", "b_values"): ("b",),
    ("feasibility_grid", "epsilon_values"): ("epsilon",),
    ("evaluate_program", "x"): ("feature matrix",),
    ("evaluate_program", "y"): ("outcome", "target"),
    ("Targets", "gammas"): ("gamma", "γ"),
    ("inference_success", "rule"): ("success_rule",),  # the AttributeInferenceConfig field's name
    ("preset", "name"): ("preset",),
    ("sequential_composition", "guarantees"): ("guarantee", "Guarantee"),
    ("parallel_composition", "guarantees"): ("guarantee", "Guarantee"),
    ("accuracy_curves", "mechanisms"): ("mechanism",),
    ("load_demo", "name"): ("demo dataset",),
    ("tdp_record_losses", "data"): ("x",),  # the matrix is called x in the message
}


def names_parameter(message: str, owner: str, name: str) -> bool:
    """True if ``message`` contains ``name`` (or an alias, or ``name`` with spaces for underscores) as a word."""
    candidates = (name, name.replace("_", " "), *ALIASES.get((owner, name), ()))
    return any(re.search(rf"(?<![\w]){re.escape(c)}(?![\w])", message) for c in candidates)


def assert_rejected(call: Callable[[], Any], owner: str, name: str, error: type[EngineError] = InvalidParameterError):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert names_parameter(message, owner, name), f"{owner}: message does not name {name!r}: {message!r}"


def _vid(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array{value.shape}" + ("-nan" if np.isnan(value).any() else "") + (
            "-inf" if np.isinf(value).any() else ""
        )
    if callable(value):
        return getattr(value, "__name__", "fn")
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


# ---------------------------------------------------------------------------------------------------------------
# known defects: group id → {value id → reason} (strict xfail). Grouped by root cause; see the module docstring.


KNOWN: dict[str, dict[str, str]] = {}


def _known(reason: str, values: tuple[str, ...], *groups: str) -> None:
    for group in groups:
        for value in values:
            KNOWN.setdefault(group, {})[value] = reason




def problem(call: Callable[[], Any], owner: str, name: str, error: type[EngineError] = InvalidParameterError) -> str:
    """'' if ``call()`` raises ``error`` naming ``name``; otherwise what went wrong (for the failure report)."""
    try:
        result = call()
    except error as exc:
        if names_parameter(str(exc), owner, name):
            return ""
        return f"message does not name {name!r}: {str(exc)!r}"
    except Exception as exc:  # noqa: BLE001 - reporting what the engine raised instead is the point
        return f"raised {type(exc).__name__} instead of {error.__name__}: {str(exc)[:160]!r}"
    return f"did not raise; returned {_vid(result) if not isinstance(result, (float, int)) else result!r}"


def grouped(cases: list[tuple[str, str, tuple[Any, ...], Any]]) -> list[Any]:
    """pytest params: per group (owner + parameter) one param with all its invalid values that must be rejected,
    and one strict-xfail param with the values listed in KNOWN (the defects, reported with their reasons).

    The xfail param only counts as xfailed if EVERY listed value still misbehaves (``raises=pytest.fail.Exception``);
    a value that is rejected correctly now fails the test (AssertionError) with a request to remove it from KNOWN,
    and a param whose values are all fixed XPASSes, which strict mode turns into a failure.
    """
    groups: dict[str, tuple[tuple[Any, ...], list[Any], list[Any]]] = {}
    for _case_id, group_id, args, value in cases:
        good, bad = groups.setdefault(group_id, (args, [], []))[1:]
        (bad if _vid(value) in KNOWN.get(group_id, {}) else good).append(value)
    params = []
    for group_id, (args, good, bad) in groups.items():
        if good:
            params.append(pytest.param(*args, tuple(good), False, id=group_id))
        if bad:
            reasons = dict.fromkeys(KNOWN[group_id][_vid(v)] for v in bad)
            mark = pytest.mark.xfail(strict=True, raises=pytest.fail.Exception, reason=" | ".join(reasons))
            vids = ",".join(_vid(v) for v in bad)
            params.append(pytest.param(*args, tuple(bad), True, id=f"{group_id}=KNOWN-DEFECT[{vids}]", marks=mark))
    return params


ALL_CASES: set[tuple[str, str]] = set()  # (group id, value id) of every generated case


def _register(cases: list[tuple[str, str, tuple[Any, ...], Any]]) -> list[tuple[str, str, tuple[Any, ...], Any]]:
    ALL_CASES.update((c[1], _vid(c[3])) for c in cases)
    return cases


def assert_all_rejected(make_call: Callable[[Any], Callable[[], Any]], values, owner: str, name: str,
                        error: type[EngineError] = InvalidParameterError, known: bool = False) -> None:
    """Every value must be rejected; for a KNOWN-defect param, every value must still misbehave (else: fixed)."""
    __tracebackhide__ = True
    found = {_vid(v): problem(make_call(v), owner, name, error) for v in values}
    failures = [f"{v}: {msg}" for v, msg in found.items() if msg]
    if known:
        fixed = [v for v, msg in found.items() if not msg]
        if fixed:  # not pytest.fail: the xfail mark only accepts pytest.fail.Exception, so this FAILS the test
            raise AssertionError(f"{owner}({name}=...): {fixed} are rejected correctly now — remove them from KNOWN")
    if failures:  # pytrace=False: a one-line report (formatting 170 tracebacks of this long module costs seconds)
        pytest.fail(f"{owner}({name}=...):\n  " + "\n  ".join(failures), pytrace=False)


# ---------------------------------------------------------------------------------------------------------------
# 1. configuration dataclasses


def _config_examples() -> dict[str, Any]:
    budget = Budget(1.0, 1e-5, 0.5, 1e-5)
    spec = DataSpec(features=("a", "b"), target="y", roles={"loan_amount": "a"})
    out: dict[str, Any] = {
        "Guarantee": Guarantee(1.0, 1e-5, b=0.5, mechanism="test"),
        "Guarantee[element]": Guarantee(2.0, 0.0, relation="element"),
        "GaussianMechanism": GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5),
        "GaussianMechanism[classical]": GaussianMechanism(b=2.0, epsilon=0.5, delta=1e-5, calibration="classical"),
        "JLLaplace": JLLaplace(k=5, epsilon=1.0, d=3),
        "JLLaplace[t]": JLLaplace(k=5, epsilon=1.0, d=3, t=2.0),
        "JLLaplace[target_delta]": JLLaplace(k=5, epsilon=1.0, d=3, target_delta=1e-3),
        "KAnonymityGuarantee": KAnonymityGuarantee(k=2, quasi_identifiers=("a",)),
        "MondrianKAnonymity": MondrianKAnonymity(k=3),
        "PrivateProjection": PrivateProjection(
            b=0.5, epsilon1=1.0, delta1=1e-5, epsilon2=0.5, delta2=1e-5, k=50, rank=2
        ),
        "AttributeInferenceConfig": AttributeInferenceConfig(),
        "SinglingOutConfig": SinglingOutConfig(),
        "Normalization": Normalization(),
        "Normalization[bounds]": Normalization("bounds", lower=(0.0, 0.0), upper=(1.0, 2.0)),
        "DataSpec": spec,
        "ProgramConfig": ProgramConfig(),
        "ProgramConfig[lending]": ProgramConfig(kind="lending"),
        "ReleaseConfig": ReleaseConfig(
            data=DataSpec(features=("a", "b")), mechanism=GaussianMechanism(b=2.0, epsilon=1.0, delta=1e-5).to_dict(),
            seed=3, dataset="togo-demo",
        ),
        "Budget": budget,
        "SweepConfig": SweepConfig(budgets=(budget,), holdout=10),
        "PrivacySpecification": PrivacySpecification(
            protection_domain="the survey", scope="one release", invariants=(), protection_unit="one household",
            neighbouring_relation="substitution", b=0.5, b_in_data_units="about 1 sd", standard="TDP",
            epsilon=1.0, delta=1e-5,
        ),
        "Targets": Targets(gammas=(0.99, 0.9), delta=1e-4, delta_rule="chosen"),
        "DataFingerprint": DataFingerprint(
            source="demo", dataset="togo-demo", title="Togo", synthetic=True, n=100, d=2, columns=("a", "b", "y"),
            features=("a", "b"), target="y", roles={}, sha256="0" * 64,
        ),
        "TableData": TableData(columns=("a", "b"), dtypes=("int64", "object"), rows=((1, "x"), (2, None))),
        "Software": Software(engine="1.0", python="3.12", packages={"numpy": "2.4"}),
        "Seeds": Seeds(release=1, sweep=2, program_folds=0),
        "FeasibilityReport": feasibility.feasibility_report(0.99, 1.0, 1e-4),
    }
    for cls in SUM_MECHANISMS.values():
        out[cls.__name__] = cls()
    return out


CONFIG_EXAMPLES = _config_examples()

#: Output records (not user input): round-trip only, no validation expected.
NOT_VALIDATED = {"FeasibilityReport", "TableData", "Software"}

def _declared_violations(cls: type) -> dict[str, tuple[Any, ...]]:
    """Values just outside each range the class declares (``PARAMETER_CONSTRAINTS``, engine/constraints.py): the
    same declaration the class's validation reads, so a range is typed once."""
    return {name: c.violations() for name, c in declared_constraints(cls).items()}


#: Constraints that relate fields (or hold only in one mode), which a per-field declaration cannot state: checked in
#: ``__post_init__`` after the declared ones, listed here per example variant.
CROSS_FIELD: dict[str, dict[str, tuple[Any, ...]]] = {
    "GaussianMechanism[classical]": {"epsilon": (1.0, 1.5)},  # the classical calibration needs ε < 1
    "JLLaplace[t]": {"t": (0.0, -1.0, 0.01)},  # t ≥ t_min(k, b) (Theorem 5)
    "JLLaplace[target_delta]": {"target_delta": (0.0, 1.0, 1.5)},
    "Normalization[bounds]": {"lower": ((0.0,), (3.0, 3.0)), "upper": ((1.0,), (-1.0, -1.0))},  # one per feature, lo < hi
    "DataFingerprint": {"d": (3,)},  # d = the number of features listed
    "EPL2": {"a": (1.0,)},  # a ≥ e^(p−1) = e
}


def _out_of_range(example_id: str, cls: type) -> dict[str, tuple[Any, ...]]:
    if example_id != cls.__name__:
        return CROSS_FIELD.get(example_id, {})
    out = _declared_violations(cls)
    for name, values in CROSS_FIELD.get(example_id, {}).items():
        out[name] = tuple(out.get(name, ())) + values
    return out


def test_every_validated_configuration_declares_its_constraints():
    """A configuration that validates its fields declares them (no range typed only inside __post_init__)."""
    missing = [eid for eid, inst in CONFIG_EXAMPLES.items()
               if type(inst).__name__ not in NOT_VALIDATED and eid == type(inst).__name__
               and not declared_constraints(type(inst)) and eid not in UNDECLARED]
    assert missing == []
    for eid, inst in CONFIG_EXAMPLES.items():
        names = {f.name for f in dataclasses.fields(type(inst))}
        assert set(declared_constraints(type(inst))) <= names, eid


#: Validated configurations whose fields are all free text, nested objects or cross-field rules (nothing to declare).
UNDECLARED = {"DataSpec"}


def test_declared_bounds_are_accepted_where_closed():
    """The closed end of each declared interval is a valid value (the declaration is not stricter than stated)."""
    from engine.constraints import Integer, Real

    checked = 0
    for eid, inst in CONFIG_EXAMPLES.items():
        if eid != type(inst).__name__:
            continue
        for name, c in declared_constraints(type(inst)).items():
            if isinstance(c, Real):
                ends = [(c.low, c.closed in ("both", "left")), (c.high, c.closed in ("both", "right"))]
            elif isinstance(c, Integer):
                ends = [(c.low, True), (c.high, True)]
            else:
                continue
            for end, closed in ends:
                if end is None or not closed:
                    continue
                assert c.check(name, end) == end
                checked += 1
    assert checked >= 20


def _type_invalid(tp: Any) -> list[Any]:
    """Values of the wrong type (or non-finite) for a field annotated ``tp``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is float:
        return [NAN, INF, -INF, "x", True, None]
    if tp is int:
        return [2.5, "3", True, NAN, None]
    if tp is bool:
        return ["yes", 1, None]
    if origin is typing.Literal:
        return ["nope", None, 3]
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and type(None) in args:
            return [v for v in _type_invalid(inner[0]) if v is not None]
        return []
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return [(v,) for v in _type_invalid(args[0]) if v is not None]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return ["x"]
    return []  # free text, dicts, Any: no declared constraint to violate


def _base_name(example_id: str) -> str:
    return example_id.split("[")[0]


def _config_cases() -> list[Any]:
    cases = []
    for example_id, inst in CONFIG_EXAMPLES.items():
        cls = type(inst)
        if cls.__name__ in NOT_VALIDATED:
            continue
        hints = typing.get_type_hints(cls)
        ranges = _out_of_range(example_id, cls)
        variant = example_id != cls.__name__  # a variant tests only the fields it lists in CROSS_FIELD
        for f in dataclasses.fields(cls):
            if not f.init or (variant and f.name not in ranges):
                continue
            values = list(ranges.get(f.name, ()))
            values += [v for v in _type_invalid(hints[f.name]) if not any(_same(v, w) for w in values)]
            for v in values:
                cases.append((f"{example_id}.{f.name}={_vid(v)}", f"{example_id}.{f.name}", (example_id, f.name), v))
    return _register(cases)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)


@pytest.mark.parametrize(("example_id", "field_name", "values", "known"), grouped(_config_cases()))
def test_config_rejects_invalid_field(example_id, field_name, values, known):
    inst = CONFIG_EXAMPLES[example_id]
    assert_all_rejected(
        lambda v: lambda: dataclasses.replace(inst, **{field_name: v}), values, _base_name(example_id), field_name,
        known=known,
    )


def _json_safe(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, tuple):
        return all(_json_safe(v) for v in value)
    return True


def _from_dict_cases() -> list[Any]:
    cases = []
    for example_id, inst in CONFIG_EXAMPLES.items():
        cls = type(inst)
        if cls.__name__ in NOT_VALIDATED or example_id != cls.__name__:
            continue
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            for v in _type_invalid(hints[f.name]):
                if _json_safe(v):
                    v = list(v) if isinstance(v, tuple) else v
                    cases.append((f"from_dict:{example_id}.{f.name}={_vid(v)}", f"from_dict:{example_id}.{f.name}",
                                  (example_id, f.name), v))
    return _register(cases)


@pytest.mark.parametrize(("example_id", "field_name", "values", "known"), grouped(_from_dict_cases()))
def test_from_dict_rejects_invalid_field(example_id, field_name, values, known):
    """A hand-edited JSON file with a wrong value is refused with a message naming the field."""
    inst = CONFIG_EXAMPLES[example_id]
    assert_all_rejected(
        lambda v: lambda: type(inst).from_dict({**inst.to_dict(), field_name: v}), values, example_id, field_name,
        known=known,
    )


@pytest.mark.parametrize("example_id", list(CONFIG_EXAMPLES))
def test_config_round_trips_losslessly(example_id):
    inst = CONFIG_EXAMPLES[example_id]
    text = inst.to_json()
    again = type(inst).from_json(text)
    assert type(again) is type(inst)
    assert again == inst
    assert again.to_json() == text
    assert type(inst).from_dict(inst.to_dict()) == inst


def test_every_registered_mechanism_and_sum_mechanism_has_an_example():
    classes = {type(v) for v in CONFIG_EXAMPLES.values()}
    assert set(MECHANISMS.values()) <= classes, set(MECHANISMS.values()) - classes
    assert set(SUM_MECHANISMS.values()) <= classes, set(SUM_MECHANISMS.values()) - classes


def _registered_examples() -> list[Any]:
    out = []
    for example_id, inst in CONFIG_EXAMPLES.items():
        if type(inst) in MECHANISMS.values():
            out.append(pytest.param(inst, id=example_id))
    return out


@pytest.mark.parametrize("mechanism", _registered_examples())
def test_registered_mechanism_round_trips_through_the_registry_and_states_its_guarantee(mechanism):
    assert mechanism_from_dict(mechanism.to_dict()) == mechanism
    assert mechanism_from_dict(mechanism.from_json(mechanism.to_json()).to_dict()) == mechanism
    g = mechanism.guarantee()
    assert isinstance(g, GuaranteeStatement)
    headline = g.headline()
    assert isinstance(headline, str) and headline.strip()
    lines = g.describe()
    assert isinstance(lines, list) and lines and all(isinstance(s, str) and s.strip() for s in lines)
    assert not any("nan" in s.lower().split() for s in [headline, *lines])
    assert type(g).from_json(g.to_json()) == g


@pytest.mark.parametrize("kind", sorted(SUM_MECHANISMS))
def test_sum_mechanism_round_trips_through_the_registry_and_describes_itself(kind):
    mech = SUM_MECHANISMS[kind]()
    assert sum_mechanism_from_dict(mech.to_dict()) == mech
    assert make_sum_mechanism(kind, **mech.params()) == mech
    assert isinstance(mech.describe(), str) and mech.describe().strip()


@pytest.mark.parametrize(
    ("data", "name"),
    [
        ({"kind": "nope"}, "mechanism"),
        ({"b": 1.0}, "kind"),
        ({"kind": "gaussian", "b": 1.0, "epsilon": 1.0, "delta": 1e-5, "sigma": 3}, "sigma"),
        ({"kind": "gaussian", "b": 1.0, "epsilon": 1.0}, "delta"),
        ({"kind": "gaussian", "b": "1.0", "epsilon": 1.0, "delta": 1e-5}, "b"),
        ({"kind": "projection", "b": 1.0, "epsilon1": 1.0, "delta1": 1e-5, "epsilon2": 0.5, "delta2": 1e-5,
          "k": 10.5}, "k"),
    ],
)
def test_mechanism_from_dict_names_the_problem(data, name):
    assert_rejected(lambda: mechanism_from_dict(data), "mechanism_from_dict", name)


@pytest.mark.parametrize(("data", "name"), [({"kind": "nope"}, "mechanism"), ({"kind": "gaussian", "sigma": -1.0}, "sigma")])
def test_sum_mechanism_from_dict_names_the_problem(data, name):
    assert_rejected(lambda: sum_mechanism_from_dict(data), "sum_mechanism_from_dict", name)


def test_from_json_rejects_malformed_text():
    with pytest.raises(InvalidParameterError, match="not valid JSON"):
        Guarantee.from_json("{epsilon: 1")
    with pytest.raises(InvalidParameterError, match="unknown field"):
        Guarantee.from_json('{"epsilon": 1.0, "delta": 0.0, "colour": "red"}')


# ---------------------------------------------------------------------------------------------------------------
# 2. functions

POS = (0.0, -1.0, NAN, INF, "x", True, None)  # (0, ∞)
NONNEG = (-1.0, NAN, INF, "x", True, None)  # [0, ∞)
LOSS = (-1.0, NAN, "x", True, None)  # [0, ∞]: a privacy loss may be +inf ("no protection"), so inf is valid
PROB_OPEN = (0.0, 1.0, -0.1, 1.5, NAN, "x", True, None)  # (0, 1)
PROB_CLOSED = (-0.1, 1.5, NAN, "x", True, None)  # [0, 1]
PROB_LEFT = (1.0, -0.1, NAN, INF, "x", True, None)  # [0, 1)
B_RANGE = (0.0, -0.5, 2.5, NAN, INF, "x", True, None)  # (0, 2]
GAMMA = (0.49, 1.0, NAN, INF, "x", True, None)  # [1/2, 1)
CHOICE = ("nope", None, 3)
NOT_RNG = (None, 3, "x")


def INT(low: int, high: int | None = None) -> tuple[Any, ...]:  # noqa: N802 - a constraint kind, like POS
    out: tuple[Any, ...] = (low - 1, 2.5, "3", True, NAN, None)
    return out + ((high + 1,) if high is not None else ())


def _with(value: float) -> Callable[[np.ndarray], np.ndarray]:
    def put(valid: np.ndarray) -> np.ndarray:
        arr = np.array(valid, dtype=float, copy=True)
        arr.flat[0] = value
        return arr

    put.__name__ = f"with_{value}"
    return put


def _flat(valid: np.ndarray) -> np.ndarray:
    return np.asarray(valid, dtype=float).ravel()


_flat.__name__ = "one_dimensional"
MATRIX = (_with(NAN), _with(INF), _flat, "x")


@dataclass(frozen=True)
class Call:
    """A public function, a valid call (kwargs factory) and the constraint kind of each parameter."""

    id: str
    fn: Callable[..., Any]
    valid: Callable[[], dict[str, Any]]
    bad: dict[str, tuple[Any, ...]]
    error: type[EngineError] = InvalidParameterError
    run_valid: bool = True  # False when the valid call is too slow for a unit test (validation comes first)
    errors: dict[str, type[EngineError]] = field(default_factory=dict)  # per-parameter error type


def _unit_rows(n: int = 30, d: int = 3, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, d))
    return x / np.maximum(1.0, np.linalg.norm(x, axis=1))[:, None] * 0.9


X = _unit_rows()
X_PRIV = X + np.random.default_rng(1).normal(scale=0.05, size=X.shape)
X_HOLD = _unit_rows(10, 3, seed=2)
Y = (X[:, 0] > 0).astype(float)
GAUSS = GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)
PROJ = PrivateProjection(b=0.5, epsilon1=1.0, delta1=1e-5, epsilon2=0.5, delta2=1e-5, k=50)
SUM = SUM_MECHANISMS["gaussian"]()
PREPARED = prepare(
    pd.DataFrame({"a": np.linspace(-1, 1, 40), "b": np.cos(np.arange(40.0)), "y": np.arange(40) % 2}),
    DataSpec(features=("a", "b"), target="y"),
)

CALLS: list[Call] = [
    # accounting/tdp.py
    Call("steps", tdp.steps, lambda: dict(distance=2.0, b=0.4), {"distance": (-1.0, NAN, "x", True, None), "b": POS}),
    Call(
        "switch_loss", tdp.switch_loss, lambda: dict(epsilon=1.0, delta=1e-5, b=0.5, distance=2.0),
        {"epsilon": POS, "delta": PROB_CLOSED, "b": (0.0, -0.5, NAN, "x", True, None),
         "distance": (-1.0, NAN, "x", True, None)},
    ),
    Call("tdp_to_dp", tdp.tdp_to_dp, lambda: dict(epsilon=1.0, delta=1e-5, b=0.5),
         {"epsilon": POS, "delta": PROB_CLOSED, "b": (0.0, -0.5, NAN, "x", True, None)}),
    Call("sequential_composition", composition.sequential_composition, lambda: dict(guarantees=[Guarantee(1.0, 0.0)]),
         {"guarantees": ([], [1.0], [Guarantee(1.0, 0.0), Guarantee(1.0, 0.0, relation="element")])}),
    Call("parallel_composition", composition.parallel_composition, lambda: dict(guarantees=[Guarantee(1.0, 0.0)]),
         {"guarantees": ([], ["x"])}),
    # mechanisms
    Call("gaussian_sigma", gauss.gaussian_sigma,
         lambda: dict(sensitivity=0.5, epsilon=1.0, delta=1e-5, calibration="analytic"),
         {"sensitivity": POS, "epsilon": POS, "delta": PROB_OPEN, "calibration": CHOICE}),
    # Extreme but accepted ε (issue 15: the old root finder raised ValueError/RuntimeError here). The valid call
    # must give a finite σ; a sensitivity that pushes σ out of the floating-point range is refused by name.
    Call("gaussian_sigma[epsilon=1e200]", gauss.gaussian_sigma,
         lambda: dict(sensitivity=0.4, epsilon=1e200, delta=1e-5, calibration="analytic"), {"sensitivity": (1e-300,)}),
    Call("gaussian_sigma[epsilon=1e-100]", gauss.gaussian_sigma,
         lambda: dict(sensitivity=0.4, epsilon=1e-100, delta=1e-5, calibration="analytic"), {"sensitivity": (1e305,)}),
    Call("gaussian_sigma[classical]", gauss.gaussian_sigma,
         lambda: dict(sensitivity=0.5, epsilon=0.5, delta=1e-5, calibration="classical"), {"epsilon": (1.0, 2.0)}),
    Call("gaussian_delta", gauss.gaussian_delta, lambda: dict(sensitivity=0.5, sigma=1.0, epsilon=1.0),
         {"sensitivity": POS, "sigma": POS, "epsilon": (-1.0, NAN, INF, "x", True, None)}),
    Call("projection_sigma1", pp.projection_sigma1, lambda: dict(b=0.5, epsilon1=1.0, delta1=1e-5, k=50, d=3),
         {"b": B_RANGE, "epsilon1": POS, "delta1": PROB_OPEN, "k": INT(1), "d": INT(1)}),
    Call("projection_sigma2", pp.projection_sigma2, lambda: dict(b=0.5, epsilon2=0.5, delta2=1e-5),
         {"b": B_RANGE, "epsilon2": (0.0, 1.0, NAN, "x", True, None), "delta2": PROB_OPEN}),
    Call("projection_noise_sd", pp.projection_noise_sd, lambda: dict(b=0.5, epsilon1=1.0, delta1=1e-5, k=50, d=3),
         {"b": B_RANGE, "epsilon1": POS, "delta1": PROB_OPEN, "k": INT(1), "d": INT(1)}),
    Call("paper_partition_delta", pp.paper_partition_delta, lambda: dict(n=1000, partitions=6),
         {"n": INT(1), "partitions": INT(1)}),
    Call("reference_memory_bytes", pp.reference_memory_bytes, lambda: dict(n=100, k=50, partitions=1),
         {"n": INT(1), "k": INT(1), "partitions": INT(1)}),
    Call("row_t_min", jl.row_t_min, lambda: dict(k=10, b=0.5), {"k": INT(1), "b": POS}),
    Call("row_t_for_delta", jl.row_t_for_delta, lambda: dict(k=10, b=0.5, target_delta=1e-3),
         {"k": INT(1), "b": POS, "target_delta": PROB_OPEN}),
    Call("per_pair_delta", jl.per_pair_delta, lambda: dict(c=20.0, k=10, relation="row", b=0.5),
         {"c": POS, "k": INT(1), "relation": CHOICE, "b": POS}),
    Call("per_pair_delta[element]", jl.per_pair_delta,
         lambda: dict(c=20.0, k=10, relation="element", element_bound=1.0), {"element_bound": POS}),
    Call("element_failure_bound", jl.element_failure_bound, lambda: dict(c=20.0, k=10, d=3, element_bound=1.0),
         {"c": POS, "k": INT(1), "d": INT(1), "element_bound": POS}),
    Call("element_steps_for_record", jl.element_steps_for_record, lambda: dict(d=3, element_bound=0.1, distance=2.0),
         {"d": INT(1), "element_bound": POS, "distance": (0.0, 2.5, NAN, "x", True, None)}),
    Call("element_record_loss", jl.element_record_loss,
         lambda: dict(epsilon=1.0, delta=1e-6, d=3, element_bound=0.5, distance=2.0),
         {"epsilon": POS, "delta": PROB_CLOSED, "d": INT(1), "element_bound": POS}),
    Call("row_failure_bound", jl.row_failure_bound, lambda: dict(c=20.0, k=10, b=0.5),
         {"c": POS, "k": INT(1), "b": POS}),
    Call("l1_tail_bound", jl.l1_tail_bound, lambda: dict(threshold=5.0, k=10, scale=1.0),
         {"threshold": NONNEG, "k": INT(1), "scale": POS}),
    Call("squared_distance_variance", jl.squared_distance_variance,
         lambda: dict(squared_distance=1.0, k=10, noise_variance=2.0, variant="corrected"),
         {"squared_distance": NONNEG, "k": INT(1), "noise_variance": NONNEG, "variant": CHOICE}),
    Call("mondrian_partition", mondrian.mondrian_partition, lambda: dict(x=X, k=3), {"x": MATRIX, "k": INT(1)}),
    # attacks
    Call("singling_out", so.singling_out, lambda: dict(x=X, x_priv=X_PRIV, config=None, release_scale=1.0),
         {"x": MATRIX, "x_priv": MATRIX, "config": ("x", AttributeInferenceConfig()), "release_scale": POS}),
    Call("singling_out_baseline", so.singling_out_baseline, lambda: dict(x=X, config=None),
         {"x": MATRIX, "config": ("x",)}),
    Call("non_unique_share", so.non_unique_share, lambda: dict(x=X), {"x": MATRIX}),
    Call("singled_out_rows", so.singled_out_rows, lambda: dict(x=X, centres=X_PRIV[:5], half_widths=np.full(3, 0.1)),
         {"x": MATRIX, "centres": MATRIX, "half_widths": (_with(-1.0), _with(NAN), "x")}),
    Call(
        "attribute_inference", ai.attribute_inference,
        lambda: dict(x_released=X, x_priv=X_PRIV, x_holdout=X_HOLD, config=AttributeInferenceConfig(n_attacks=20),
                     release_scale=1.0, rng=np.random.default_rng(0)),
        {"x_released": MATRIX, "x_priv": MATRIX, "x_holdout": MATRIX, "config": ("x", SinglingOutConfig()),
         "release_scale": POS, "rng": NOT_RNG},
    ),
    Call("attribute_inference_baseline", ai.attribute_inference_baseline,
         lambda: dict(x_released=X, x_holdout=X_HOLD, config=AttributeInferenceConfig(n_attacks=20),
                      rng=np.random.default_rng(0)),
         {"x_released": MATRIX, "x_holdout": MATRIX, "config": ("x",), "rng": NOT_RNG}),
    Call("default_holdout_size", ai.default_holdout_size, lambda: dict(n=100), {"n": INT(2)}),
    Call("holdout_split", ai.holdout_split, lambda: dict(n=100, n_holdout=10, rng=np.random.default_rng(0)),
         {"n": INT(2), "n_holdout": (0, 100, 2.5, "3", True), "rng": NOT_RNG}),
    Call("inference_success", ai.inference_success,
         lambda: dict(guesses=np.array([0.1, 0.5]), secrets=np.array([0.1, 0.4]), tolerance=0.05, rule="relative"),
         {"tolerance": NONNEG, "rule": CHOICE}),
    Call("known_column_count", ai.known_column_count, lambda: dict(knowledge="half", d=4),
         {"knowledge": CHOICE, "d": INT(2)}),
    Call("relative_protection", ai.relative_protection, lambda: dict(main_success=0.2, control_success=0.3),
         {"main_success": PROB_CLOSED, "control_success": PROB_CLOSED}),
    Call("wilson_rate", ai.wilson_rate, lambda: dict(n_success=3, n_total=10, confidence_level=0.95),
         {"n_success": INT(0, 10), "n_total": INT(1), "confidence_level": PROB_OPEN}),
    Call("residual_risk", ai.residual_risk,
         lambda: dict(n_success=3, n_attacks=10, n_control_success=2, n_control=10, confidence_level=0.95),
         {"n_success": INT(0, 10), "n_attacks": INT(1), "n_control_success": INT(0, 10), "n_control": INT(1),
          "confidence_level": PROB_OPEN}),
    Call("check_release_scale", threat_model.check_release_scale, lambda: dict(release_scale=1.0),
         {"release_scale": POS}),
    Call("adversary_view", threat_model.adversary_view,
         lambda: dict(x_priv=X_PRIV, release_scale=0.5, adversary="knows-scale"),
         {"release_scale": POS, "adversary": CHOICE}),
    Call("distinguishing", dist.distinguishing, lambda: dict(mechanism=GAUSS, distance=1.0, alphas=None),
         {"mechanism": ("x", 3), "distance": (-1.0, 2.5, NAN, "x", True), "alphas": ([-0.1], [1.5], [NAN], "x")}),
    Call("tradeoff_curve", dist.tradeoff_curve, lambda: dict(mechanism=PROJ, alphas=[0.1, 0.5], distance=2.0),
         {"mechanism": ("x",), "distance": (-1.0, 2.5, NAN, "x", True), "alphas": ([-0.1], [NAN], "x")}),
    Call("tradeoff_curve_from_eps_delta", dist.tradeoff_curve_from_eps_delta,
         lambda: dict(epsilon=1.0, delta=1e-5, alphas=None),
         {"epsilon": LOSS, "delta": PROB_CLOSED, "alphas": ([2.0], "x")}),
    Call("gaussian_tradeoff_curve", dist.gaussian_tradeoff_curve, lambda: dict(sensitivity=1.0, sigma=2.0),
         {"sensitivity": NONNEG, "sigma": POS}),
    Call("gaussian_min_total_error", dist.gaussian_min_total_error, lambda: dict(sensitivity=1.0, sigma=2.0),
         {"sensitivity": NONNEG, "sigma": POS}),
    Call("eps_delta_min_total_error", dist.eps_delta_min_total_error, lambda: dict(epsilon=1.0, delta=1e-5),
         {"epsilon": LOSS, "delta": PROB_CLOSED}),
    Call("gaussian_expected_loss", dist.gaussian_expected_loss, lambda: dict(distance=1.0, sigma=2.0),
         {"distance": NONNEG, "sigma": POS}),
    Call("guarantee_expected_loss", dist.guarantee_expected_loss, lambda: dict(epsilon=1.0, delta=1e-5),
         {"epsilon": LOSS, "delta": PROB_CLOSED}),
    Call("projection_expected_loss", dist.projection_expected_loss,
         lambda: dict(b=0.5, epsilon1=1.0, delta1=1e-5, epsilon2=0.5, delta2=1e-5, distance=2.0),
         {"b": B_RANGE, "epsilon1": POS, "delta1": PROB_OPEN, "epsilon2": POS, "delta2": PROB_OPEN,
          "distance": (-1.0, 2.5, NAN, "x", True)}),
    Call("projection_distinguishing", dist.projection_distinguishing,
         lambda: dict(b=0.5, epsilon1=1.0, delta1=1e-5, epsilon2=0.5, delta2=1e-5, distance=2.0),
         {"b": B_RANGE, "epsilon1": POS, "delta1": PROB_OPEN, "epsilon2": POS, "delta2": PROB_OPEN,
          "distance": (-1.0, 2.5, NAN, "x", True)}),
    # evaluation
    Call("evaluate_program", programs.evaluate_program,
         lambda: dict(x=X, y=Y, config=ProgramConfig(kind="classification", folds=2)),
         {"x": MATRIX, "config": ("x", SinglingOutConfig())}),
    Call("fold_indices", programs.fold_indices, lambda: dict(n=20, config=ProgramConfig()),
         {"n": INT(2), "config": ("x",)}),
    Call("at_or_below_quantile", programs.at_or_below_quantile, lambda: dict(values=np.arange(10.0), q=0.3),
         {"q": (-0.1, 1.5, NAN, "x", True, None), "values": (_with(NAN), "x")}),
    Call("make_two_blobs", clustering.make_two_blobs, lambda: dict(n=20, d=2, rng=np.random.default_rng(0), distance=4.0),
         {"n": INT(4), "d": INT(1), "rng": NOT_RNG, "distance": (NAN, INF, "x", True, None)}),
    Call("blob_experiment", clustering.blob_experiment,
         lambda: dict(d=2, k=2, n=20, epsilon=4.0, repetitions=1, rng=np.random.default_rng(0)),
         # no inf for epsilon: it is accepted today (see _INF_FUNC) and would run the whole experiment
         {"d": INT(1), "k": INT(1), "n": INT(4), "epsilon": (0.0, -1.0, NAN, "x", True, None), "repetitions": INT(1),
          "rng": NOT_RNG},
         run_valid=False),
    # per-record
    Call("epsilon_to_rho", pr_units.epsilon_to_rho, lambda: dict(epsilon=1.0), {"epsilon": LOSS}),
    Call("rho_to_epsilon", pr_units.rho_to_epsilon, lambda: dict(rho=0.5), {"rho": LOSS}),
    Call("zcdp_to_dp", pr_units.zcdp_to_dp, lambda: dict(rho=0.5, delta=1e-6, method="cks"),
         {"rho": LOSS, "delta": PROB_OPEN, "method": CHOICE}),
    Call("tdp_policy", pr_tdp.tdp_policy, lambda: dict(distance=np.array([0.1, 1.0]), epsilon=1.0, delta=1e-5, b=0.5),
         {"distance": (_with(-1.0), _with(3.0), _with(NAN), "x"), "epsilon": POS, "delta": PROB_CLOSED, "b": B_RANGE}),
    Call("calibrate_sd", pr_calibration.calibrate_sd, lambda: dict(mechanism=SUM, target_sd=10.0, q_ref=100.0),
         {"mechanism": ("x",), "target_sd": POS, "q_ref": NONNEG}),
    Call("calibrate_half_width", pr_calibration.calibrate_half_width,
         lambda: dict(mechanism=SUM, half_width=10.0, q_ref=100.0, beta=0.05),
         {"half_width": POS, "q_ref": NONNEG, "beta": PROB_OPEN}),
    Call("calibrate_loss", pr_calibration.calibrate_loss, lambda: dict(mechanism=SUM, x_ref=10.0, loss=1.0, unit="rho"),
         {"x_ref": POS, "loss": POS, "unit": CHOICE}),
    Call("calibrate_accuracy", pr_calibration.calibrate_accuracy,
         lambda: dict(mechanism=SUM, target=0.1, q_ref=100.0, by="relative_sd", beta=0.05),
         {"target": POS, "by": CHOICE}),
    Call("simulate_total", pr_accuracy.simulate_total,
         lambda: dict(mechanism=SUM, q=100.0, n_draws=200, rng=np.random.default_rng(0), beta=0.05),
         {"q": NONNEG, "n_draws": INT(2), "rng": NOT_RNG, "beta": PROB_OPEN}),
    Call("accuracy_curves", pr_accuracy.accuracy_curves, lambda: dict(mechanisms=[SUM], q=[1.0, 10.0], beta=0.05),
         {"beta": PROB_OPEN, "mechanisms": ([],)}),
    Call("share_protected", pr_losses.share_protected, lambda: dict(mechanism=SUM, values=[1.0, 5.0], rho_max=0.5),
         {"values": ([-1.0], [NAN], "x"), "rho_max": NONNEG}),
    Call("losses_for", pr_losses.losses_for, lambda: dict(mechanism=SUM, values=[1.0, 5.0], unit="rho"),
         {"values": ([-1.0], [NAN], "x"), "unit": CHOICE}),
    Call("composed_rho", pr_losses.composed_rho, lambda: dict(mechanisms=[SUM], values=[[1.0, 2.0]], constant_rho=0.0),
         {"constant_rho": NONNEG, "values": ([[-1.0]], [[NAN]])}),
    Call("policy_curves", pr_losses.policy_curves, lambda: dict(mechanisms=[SUM], x=[1.0, 2.0], unit="rho"),
         {"x": ([-1.0], [NAN], "x"), "unit": CHOICE}),
    Call("calibrate_all", pr_calibration.calibrate_all, lambda: dict(mechanisms=[SUM], target=1.0, q_ref=0.0, by="sd"),
         {"target": POS, "by": CHOICE}),
    Call("privacy_accuracy_frontier", pr_accuracy.privacy_accuracy_frontier,
         lambda: dict(mechanisms=[SUM], targets=[0.1], q_ref=100.0, record_values=[1.0, 2.0], by="relative_sd"),
         {"by": CHOICE, "q_ref": (-1.0, NAN, "x", None), "beta": PROB_OPEN}),
    Call("tdp_record_losses", pr_tdp.tdp_record_losses, lambda: dict(data=X, epsilon=1.0, delta=1e-5, b=0.5),
         {"data": MATRIX, "epsilon": POS, "delta": PROB_CLOSED, "b": B_RANGE},
         errors={"data": DataValidationError}),
    Call("nearest_neighbour_distances", pr_tdp.nearest_neighbour_distances, lambda: dict(x=X), {"x": MATRIX}),
    Call("delta_fail_curve", jl.delta_fail_curve,
         lambda: dict(epsilons=[1.0, 2.0], laplace_scale=1.0, k=10, relation="row"),
         {"epsilons": ([0.0], [NAN], "x"), "laplace_scale": POS, "k": INT(1), "relation": CHOICE}),
    Call("recover_squared_distance", jl.recover_squared_distance,
         lambda: dict(z_i=X[:5], z_j=X_PRIV[:5], noise_variance=0.01),
         # one row (1-D) is a valid input: the distance of one pair
         {"z_i": MATRIX[:2] + ("x",), "z_j": MATRIX[:2] + ("x",), "noise_variance": NONNEG}),
    Call("load_demo", load_demo, lambda: dict(name="togo-demo"), {"name": CHOICE}, run_valid=False),
    Call("run_sweep", run_sweep, lambda: dict(data=PREPARED, config=preset("quick", 40), workers=1),
         {"workers": INT(1, 64), "config": ("x", Budget(1.0, 1e-5)), "data": ("x", X)}, run_valid=False),
    # sweeps and randomness
    Call("paper_budgets", paper_budgets, lambda: dict(n=1000, epsilon1=(2.0,), epsilon2=(0.5,), partitions=1),
         {"n": INT(1), "partitions": INT(1, 1000), "epsilon1": ((0.0,), (NAN,), ("x",)),
          "epsilon2": ((NAN,), (-1.0,))}),
    Call("released_rows", released_rows, lambda: dict(n=100, holdout=10),
         {"n": INT(2), "holdout": (0, 100, 2.5, "3", True), "attacks": (("nope",),)}),
    Call("preset", preset, lambda: dict(name="quick", n=200, mechanism="projection", seed=0, partitions=1),
         {"name": CHOICE, "n": INT(1), "mechanism": ("nope", 3), "seed": (-1, 2.5, "3", True),
          "partitions": (0, 2.5, True)}),
    Call("make_rng", make_rng, lambda: dict(seed=3), {"seed": (-1, 2.5, "3", True)}),
    Call("spawn_seeds", spawn_seeds, lambda: dict(seed=3, n=2), {"seed": (-1, 2.5, "3", True), "n": INT(0)}),
]

def _call_cases() -> list[Any]:
    cases = []
    for call in CALLS:
        for param, values in call.bad.items():
            for v in values:
                cases.append((f"{call.id}({param}={_vid(v)})", f"{call.id}({param})", (call, param), v))
    return _register(cases)


def _resolve(value: Any, valid: Any) -> Any:
    return value(valid) if callable(value) and not isinstance(value, type) else value


@pytest.mark.parametrize(("call", "param", "values", "known"), grouped(_call_cases()))
def test_function_rejects_invalid_argument(call, param, values, known):
    def make(value):
        kwargs = call.valid()
        kwargs[param] = _resolve(value, kwargs.get(param))
        return lambda: call.fn(**kwargs)

    assert_all_rejected(make, values, call.id.split("[")[0], param, call.errors.get(param, call.error), known=known)


def _finite(result: Any) -> bool:
    if isinstance(result, (bool, np.bool_, str)) or result is None:
        return True
    if isinstance(result, (int, float, np.number, np.ndarray)):
        arr = np.asarray(result)
        return arr.dtype.kind not in "fc" or bool(np.isfinite(arr).all())
    if isinstance(result, (tuple, list)):
        return all(_finite(r) for r in result)
    return True


@pytest.mark.parametrize("call", [pytest.param(c, id=c.id) for c in CALLS if c.run_valid])
def test_valid_call_succeeds(call):
    """The reference call of every case is valid, so each invalid case fails for the reason it names."""
    result = call.fn(**call.valid())
    assert _finite(result), f"{call.id} returned a non-finite value for valid input: {result!r}"


def test_every_listed_parameter_exists():
    for call in CALLS:
        params = inspect.signature(call.fn).parameters
        assert set(call.bad) <= set(params), (call.id, set(call.bad) - set(params))
        assert set(call.valid()) <= set(params), call.id


# --- methods of every sum mechanism (per-record DP) --------------------------------------------------------

_SUM_METHODS = {
    "policy": ("x", (-1.0, NAN, "x", True, None)),
    "policy_rho": ("x", (-1.0, NAN, "x", True, None)),
    "policy_inverse": ("loss", (-1.0, NAN, "x", True, None)),
    "max_protected_value": ("rho", (-1.0, NAN, "x", True, None)),
    "variance": ("q", (-1.0, NAN, "x", True, None)),
    "sd": ("q", (-1.0, NAN, "x", True, None)),
    "half_width": ("beta", PROB_OPEN),
    "interval": ("beta", PROB_OPEN),
    "estimate": ("output", (NAN, "x", None)),
}


def _sum_method_cases() -> list[Any]:
    cases = []
    for kind in sorted(SUM_MECHANISMS):
        for method, (param, values) in _SUM_METHODS.items():
            for v in values:
                cases.append((f"{kind}.{method}({param}={_vid(v)})", f"{kind}.{method}({param})",
                              (kind, method, param), v))
    return _register(cases)


@pytest.mark.parametrize(("kind", "method", "param", "values", "known"), grouped(_sum_method_cases()))
def test_sum_mechanism_methods_reject_invalid_input(kind, method, param, values, known):
    fn = getattr(SUM_MECHANISMS[kind](), method)
    base = {"output": 10.0} if method == "interval" else {}
    assert_all_rejected(lambda v: lambda: fn(**{**base, param: v}), values, f"{kind}.{method}", param, known=known)


@pytest.mark.parametrize("kind", sorted(SUM_MECHANISMS))
def test_sum_mechanism_sample_rejects_bad_rng_and_totals(kind):
    mech = SUM_MECHANISMS[kind]()
    assert_rejected(lambda: mech.sample(10.0, rng="x"), kind, "rng")
    assert_rejected(lambda: mech.sample(-1.0, rng=np.random.default_rng(0)), kind, "q")
    assert_rejected(lambda: mech.sample(NAN, rng=np.random.default_rng(0)), kind, "q")


# --- release() of every registered record mechanism -------------------------------------------------------


def _rng_cases() -> list[Any]:
    out = []
    for param in _registered_examples():
        (mechanism,) = param.values
        if type(mechanism) is MondrianKAnonymity:  # deterministic: it never touches rng
            continue
        marks = []
        out.append(pytest.param(mechanism, id=param.id, marks=marks))
    return out


@pytest.mark.parametrize("mechanism", _rng_cases())
def test_release_rejects_a_non_generator_rng(mechanism):
    x = _unit_rows(20, 3)
    assert_rejected(lambda: mechanism.release(x, rng="not a generator"), type(mechanism).__name__, "rng")


@pytest.mark.parametrize("mechanism", _registered_examples())
def test_release_rejects_bad_data(mechanism):
    x = _unit_rows(20, 3)
    bad = x.copy()
    bad[2, 1] = NAN
    with pytest.raises(EngineError) as info:
        mechanism.release(bad, rng=np.random.default_rng(0))
    assert "row 2" in str(info.value) or "missing" in str(info.value), str(info.value)
    if type(mechanism) is not MondrianKAnonymity:  # k-anonymity makes no unit-ball assumption
        outside = x.copy()
        outside[4] = [3.0, 0.0, 0.0]
        with pytest.raises(DataValidationError) as info:
            mechanism.release(outside, rng=np.random.default_rng(0))
        assert info.value.row == 4 and "row 4" in str(info.value)
    with pytest.raises(EngineError):
        mechanism.release(x[0], rng=np.random.default_rng(0))  # 1-D


# ---------------------------------------------------------------------------------------------------------------
# 3. Theorem 1 (engine/theory/feasibility.py): every public function, discovered from __all__

_THEORY_VALID = {
    "b": 0.5, "gamma": 0.9, "epsilon": 1.0, "delta": 1e-4, "b_values": [0.4, 1.0], "epsilon_values": [1.0, 2.0],
}
_THEORY_BAD = {
    "b": (0.0, -0.5, 2.5, NAN, INF, -INF, "x", True, None, [0.5, NAN], [0.5, 3.0]),
    "gamma": (0.49, 1.0, 1.5, NAN, INF, "x", True, None, [0.9, NAN], [0.9, 0.2]),
    "epsilon": (0.0, -1.0, NAN, INF, -INF, "x", True, None, [1.0, NAN], [1.0, INF], [1.0, 0.0]),
    "delta": (1.0, -0.1, NAN, INF, "x", True, None, [1e-4, NAN], [1e-4, 1.0]),
    "b_values": ([0.0], [NAN], [INF], [2.5], ["x"], [True], [], [[0.5]]),
    "epsilon_values": ([0.0], [NAN], [INF], ["x"], [True], [], [[1.0]]),
}
THEORY_FUNCTIONS = [
    name for name in feasibility.__all__ if inspect.isfunction(getattr(feasibility, name))
]


def test_known_defects_are_current():
    """Every KNOWN entry is a generated case (a renamed case must not silently drop its xfail)."""
    listed = {(group, value) for group, values in KNOWN.items() for value in values}
    assert listed <= ALL_CASES, sorted(listed - ALL_CASES)


def test_theory_functions_are_all_listed():
    assert set(THEORY_FUNCTIONS) >= {
        "q_value", "min_steps", "is_feasible", "b_supremum", "max_feasible_b_integer", "dp_feasible",
        "min_epsilon", "gamma_max", "feasibility_grid", "feasibility_report",
    }
    for name in THEORY_FUNCTIONS:
        assert set(inspect.signature(getattr(feasibility, name)).parameters) <= set(_THEORY_VALID), name


def _theory_cases() -> list[Any]:
    cases = []
    for name in THEORY_FUNCTIONS:
        for param in inspect.signature(getattr(feasibility, name)).parameters:
            for v in _THEORY_BAD[param]:
                cases.append((f"{name}({param}={_vid(v)})", f"{name}({param})", (name, param), v))
    return _register(cases)


@pytest.mark.parametrize(("name", "param", "values", "known"), grouped(_theory_cases()))
def test_theory_function_rejects_nan_and_out_of_range(name, param, values, known):
    fn = getattr(feasibility, name)
    valid = {p: _THEORY_VALID[p] for p in inspect.signature(fn).parameters}
    assert_all_rejected(lambda v: lambda: fn(**{**valid, param: v}), values, name, param, known=known)


@pytest.mark.parametrize("name", THEORY_FUNCTIONS)
def test_theory_function_valid_call_is_finite(name):
    fn = getattr(feasibility, name)
    result = fn(**{p: _THEORY_VALID[p] for p in inspect.signature(fn).parameters})
    assert _finite(result)


def test_scalar_only_theory_functions_refuse_arrays():
    with pytest.raises(InvalidParameterError, match="single numbers"):
        feasibility.feasibility_report([0.9, 0.99], 1.0, 1e-4)
    with pytest.raises(InvalidParameterError, match="single numbers"):
        feasibility.feasibility_grid([0.5], [1.0], [0.9, 0.95], 1e-4)


# ---------------------------------------------------------------------------------------------------------------
# 4. data (engine/data/preparation.py): DataValidationError naming the column, row or file


def _frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n), "y": rng.integers(0, 2, size=n)})


SPEC = DataSpec(features=("a", "b"), target="y")


def test_prepare_accepts_the_reference_table():
    prepared = prepare(_frame(), SPEC)
    assert prepared.x.shape == (40, 2)
    assert np.all(np.linalg.norm(prepared.x, axis=1) <= 1 + 1e-9)


@pytest.mark.parametrize(
    ("mutate", "column"),
    [
        pytest.param(lambda f: f.assign(a=f["a"].where(f.index != 7)), "a", id="nan-in-feature"),
        pytest.param(lambda f: f.assign(b=f["b"].where(f.index != 3, np.inf)), "b", id="inf-in-feature"),
        pytest.param(lambda f: f.assign(a=f["a"].astype(object).where(f.index != 5, "abc")), "a", id="text-in-feature"),
        pytest.param(lambda f: f.drop(columns=["b"]), "b", id="missing-feature"),
        pytest.param(lambda f: f.drop(columns=["y"]), "y", id="missing-target"),
        # A missing target drops its row (issue 9; tests/engine/test_preparation_rules.py); infinity is refused.
        pytest.param(lambda f: f.assign(y=f["y"].astype(float).where(f.index != 9, np.inf)), "y", id="inf-in-target"),
    ],
)
def test_prepare_and_validate_table_name_the_bad_column(mutate, column):
    frame = mutate(_frame())
    for fn in (prepare, validate_table):
        with pytest.raises(DataValidationError) as info:
            fn(frame, SPEC)
        assert info.value.column == column or names_parameter(str(info.value), "prepare", column), str(info.value)
        assert names_parameter(str(info.value), "prepare", column), str(info.value)


def test_prepare_refuses_too_few_rows():
    with pytest.raises(DataValidationError, match="row"):
        prepare(_frame(5), SPEC)


def test_prepare_refuses_a_spec_of_the_wrong_type():
    with pytest.raises(EngineError):
        prepare(_frame(), {"features": ["a", "b"]})
    with pytest.raises(EngineError):
        prepare("not a frame", SPEC)


def test_bounds_spec_with_the_wrong_number_of_bounds_is_refused():
    spec = DataSpec(features=("a", "b"), normalization=Normalization("bounds", lower=(0.0,), upper=(1.0,)))
    with pytest.raises(EngineError) as info:
        prepare(_frame(), spec)
    assert "bound" in str(info.value)


def test_bounds_from_frame_names_the_missing_feature_and_columns():
    table = pd.DataFrame({"feature": ["a"], "lower": [0.0], "upper": [1.0]})
    assert bounds_from_frame(table, ["a"]) == ((0.0,), (1.0,))
    with pytest.raises(DataValidationError) as info:
        bounds_from_frame(table, ["a", "nope"])
    assert "nope" in str(info.value)
    with pytest.raises(DataValidationError) as info:
        bounds_from_frame(table.drop(columns=["upper"]), ["a"])
    assert "upper" in str(info.value)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"\x1f\x8b\x08\x00garbage", id="gzip"),
        pytest.param(b"\x00\x01\x02\xff\xfe binary", id="binary"),
        pytest.param(io.BytesIO(b""), id="empty-stream"),
    ],
)
def test_load_table_refuses_unreadable_files(source):
    with pytest.raises(DataValidationError):
        load_table(source, filename="upload.csv")


def test_load_table_enforces_the_size_limit():
    text = _frame().to_csv(index=False).encode()
    with pytest.raises(EngineError) as info:
        load_table(text, filename="upload.csv", max_bytes=100)
    assert "MB" in str(info.value) or "bytes" in str(info.value) or "size" in str(info.value) or "large" in str(
        info.value
    )


def test_dataspec_and_normalization_name_bad_columns_and_methods():
    # an empty feature list is a valid (incomplete) spec while the user picks columns; preparing with it is not
    with pytest.raises(DataValidationError, match="feature"):
        prepare(_frame(), DataSpec(features=()))
    assert_rejected(lambda: DataSpec(features=("a", "a")), "DataSpec", "a")
    assert_rejected(lambda: Normalization("nope"), "Normalization", "method")
    assert_rejected(lambda: Normalization("clip", lower=(0.0,), upper=(1.0,)), "Normalization", "bounds")


# ---------------------------------------------------------------------------------------------------------------
# 5. release and decision record


def test_run_release_rejects_wrong_config_and_rng():
    from engine.release import run_release

    config = ReleaseConfig(data=SPEC, mechanism=GAUSS.to_dict())
    assert_rejected(lambda: run_release(_frame(), config, rng="x"), "run_release", "rng")
    assert_rejected(lambda: run_release(_frame(), {"data": {}}, rng=np.random.default_rng(0)), "run_release", "config")


def test_release_config_names_the_bad_mechanism():
    assert_rejected(lambda: ReleaseConfig(data=SPEC, mechanism={"kind": "nope"}), "ReleaseConfig", "mechanism")
    assert_rejected(lambda: ReleaseConfig(data="x", mechanism=GAUSS.to_dict()), "ReleaseConfig", "data")
    assert_rejected(
        lambda: ReleaseConfig(data=SPEC, mechanism={**GAUSS.to_dict(), "epsilon": -1.0}), "ReleaseConfig", "epsilon"
    )


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("not json", id="not-json"),
        pytest.param("{}", id="empty-object"),
        pytest.param("[1, 2]", id="list"),
        pytest.param('{"schema": "something-else"}', id="foreign-schema"),
        pytest.param(b"\xff\xfe", id="bad-bytes"),
    ],
)
def test_load_decision_record_refuses_foreign_files(text):
    with pytest.raises(EngineError):
        load_decision_record(text)


# ---------------------------------------------------------------------------------------------------------------
# 6. per-record tables: DataValidationError naming the column and the row


def _sums_frame() -> pd.DataFrame:
    return pd.DataFrame({"v": [1.0, 2.0, 3.0, 4.0] * 5, "g": ["a", "b"] * 10, "id": range(20)})


@pytest.mark.parametrize(
    ("mutate", "value", "row"),
    [
        pytest.param(lambda f: f, "nope", None, id="missing-column"),
        pytest.param(lambda f: f.assign(v=-f["v"]), "v", 0, id="negative"),
        pytest.param(lambda f: f.assign(v=f["v"].where(f.index != 3)), "v", 3, id="nan"),
        pytest.param(lambda f: f.assign(v=f["v"].where(f.index != 5, np.inf)), "v", 5, id="inf"),
    ],
)
def test_per_record_tables_name_the_bad_column_and_row(mutate, value, row):
    frame = mutate(_sums_frame())
    calls = [
        lambda: pr_cells.release_cells(frame, value, ["g"], SUM, rng=np.random.default_rng(0)),
        lambda: pr_losses.record_losses(frame, value, SUM),
    ]
    for call in calls:
        with pytest.raises(DataValidationError) as info:
            call()
        assert f"'{value}'" in str(info.value), str(info.value)
        if row is not None:
            assert f"row {row}" in str(info.value), str(info.value)


def test_release_cells_names_a_missing_grouping_column_and_bad_options():
    frame = _sums_frame()
    rng = np.random.default_rng(0)
    with pytest.raises(EngineError, match="'nope'"):
        pr_cells.release_cells(frame, "v", ["nope"], SUM, rng=rng)
    assert_rejected(lambda: pr_cells.release_cells(frame, "v", ["g"], SUM, rng=rng, beta=2.0), "release_cells", "beta")
    assert_rejected(lambda: pr_cells.release_cells(frame, "v", ["g"], SUM, rng="x"), "release_cells", "rng")
    assert_rejected(lambda: pr_losses.record_losses(frame, "v", SUM, unit="nope"), "record_losses", "unit")
    assert_rejected(lambda: pr_losses.record_losses(frame, "v", SUM, top_n=-1), "record_losses", "top_n")
