"""The contract every registered record mechanism (``engine.mechanisms.MECHANISMS``) keeps — derived from the registry.

Nothing here names a mechanism: the examples are each class's own (``examples(d)``), and what is checked follows its
tags (``MechanismTags``). For every example, on small data (n = 40, d = 3):

* its guarantee is known before any data is seen (``guarantee()`` takes none) and is the one its release carries;
* seeded releases are reproducible: the same seed gives the identical output, a different seed a different output
  (a ``noiseless`` mechanism's output is the same whatever the seed);
* rows outside the unit L2 ball are refused with :class:`~engine.errors.DataValidationError` when its tags say the
  release assumes the ball (``unit_ball``); the others accept any finite matrix;
* the release has ``output_dimension(d)`` columns, and the one release function (:func:`engine.release.privatize`)
  accepts exactly the samplers its tags list and names the one that ran;
* the configuration survives a JSON round trip, directly and through the registry;
* ``from_budget(B, ε, δ, d=)``, for a ``budgeted`` mechanism, gives a mechanism whose guarantee states that
  (B, ε, δ) — exactly for B and ε, up to the rounding of adding the budget's parts for δ, or at most δ (a
  calibrated δ) — and every other mechanism refuses a budget;
* ``exact_tradeoff`` exists exactly when tagged; the distance statements are valid (ε ≥ 0, δ in [0, 1]);
* its partition plan (``partition_modes``) releases a partition as the mechanism states, and an unsupported mode is
  refused in one line;
* its dashboard form names declared fields, and ``from_form`` of a configuration's own values rebuilds it.

:func:`check_contract` runs all of it for one class: a test that registers a new mechanism calls it.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.errors import DataValidationError, InvalidParameterError
from engine.mechanisms import MECHANISMS, RecordMechanism, mechanism_from_dict
from engine.mechanisms.base import MechanismReport
from engine.mechanisms.samplers import SAMPLERS
from engine.release import privatize

N, D = 40, 3
BUDGETS = [(0.25, 1.0, 1e-5), (2.0, 4.0, 3e-4), (0.1, 8.0, 1e-6)]


def _examples() -> dict[str, RecordMechanism]:
    out: dict[str, RecordMechanism] = {}
    for cls in MECHANISMS.values():
        out.update(cls.examples(D))
    return out


EXAMPLES = _examples()


def _data(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, D))
    return x / np.linalg.norm(x, axis=1, keepdims=True) * rng.uniform(0.1, 1.0, size=(N, 1))


def _release(mech, seed: int, x: np.ndarray | None = None):
    return mech.release(_data() if x is None else x, rng=np.random.default_rng(seed))


# ------------------------------------------------------------------------------------------------ the checks
def check_guarantee_is_data_free(mech: RecordMechanism) -> None:
    stated = mech.guarantee()  # no data needed
    assert _release(mech, 1).guarantee == stated
    assert _release(mech, 1, _data(5)).guarantee == stated  # other data, same statement


def check_seeded_releases(mech: RecordMechanism) -> None:
    first, again, other = _release(mech, 7).value, _release(mech, 7).value, _release(mech, 8).value
    assert np.array_equal(first, again)
    assert np.all(np.isfinite(first))
    assert first.shape == (N, mech.output_dimension(D))
    if mech.tags().noiseless:
        assert np.array_equal(first, other)
    else:
        assert not np.array_equal(first, other)


def check_unit_ball(mech: RecordMechanism) -> None:
    x = _data()
    x[3] = np.array([1.2, 0.0, 0.0])  # norm 1.2 > 1
    if mech.tags().unit_ball:
        with pytest.raises(DataValidationError):
            _release(mech, 1, x)
    else:
        assert _release(mech, 1, x).value.shape[0] == N


def check_samplers(mech: RecordMechanism) -> None:
    tags = mech.tags()
    assert set(tags.samplers) <= set(SAMPLERS) and "numpy" in tags.samplers
    seeded = privatize(mech, _data(), sampler="numpy", rng=np.random.default_rng(7), seeded=True)
    np.testing.assert_array_equal(seeded.value, _release(mech, 7).value)  # the same draws as the mechanism's own
    assert seeded.details["sampler"] == "numpy"
    assert any("simulation — not private" in n or "no noise" in n for n in seeded.guarantee.notes)
    for name in SAMPLERS:
        if name not in tags.samplers:
            with pytest.raises(InvalidParameterError, match=f"cannot express the {mech.KIND} mechanism"):
                privatize(mech, _data(), sampler=name, rng=np.random.default_rng(0))


def check_round_trip(mech: RecordMechanism) -> None:
    assert type(mech).from_json(mech.to_json()) == mech
    assert mechanism_from_dict(mech.to_dict()) == mech
    assert type(mech).from_json(mech.to_json()).to_json() == mech.to_json()


def check_budget(cls: type[RecordMechanism]) -> None:
    if not cls.TAGS.budgeted:
        with pytest.raises(InvalidParameterError, match="not configured from a privacy budget"):
            cls.from_budget(0.5, 1.0, 1e-5, d=D)
        return
    for b, epsilon, delta in BUDGETS:
        mech = cls.from_budget(b, epsilon, delta, d=D)
        g = mech.guarantee()
        assert (g.b, g.relation) == (b, "row")
        assert g.epsilon == pytest.approx(epsilon, rel=1e-12)
        assert 0 < g.delta <= delta * (1 + 1e-12)  # exactly δ, or a calibrated δ at most the target
        assert _release(mech, 3).guarantee == g


def check_attack_contract(mech: RecordMechanism) -> None:
    exact = mech.exact_tradeoff(2.0)
    assert (exact is not None) == mech.tags().exact_tradeoff
    statements, text = mech.distance_statements(2.0)
    assert statements and text
    for eps, dlt in statements:
        assert eps >= 0 and 0 <= dlt <= 1
    assert isinstance(mech.report(_release(mech, 1).details), MechanismReport)


def check_partition_plan(mech: RecordMechanism) -> None:
    modes = mech.tags().partition_modes
    for mode in ("global", "partitioned"):
        try:
            ran, _ = mech.partition_mode(mode)
        except InvalidParameterError as exc:
            assert mode not in modes and "\n" not in str(exc)
            continue
        plan, details = mech.partition_plan(ran, D, np.random.default_rng(0), lambda kind: _data().T @ _data())
        part = privatize(plan, _data()[:10], sampler="numpy", rng=np.random.default_rng(1), seeded=True)
        assert part.value.shape == (10, mech.output_dimension(D))
        assert part.guarantee.headline() == mech.guarantee().headline()
        assert isinstance(plan.finish(details, [(10, dict(part.details))], D), dict)


def check_form(cls: type[RecordMechanism], mech: RecordMechanism) -> None:
    fields = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    form = cls.form_fields()
    assert form and {f.name for f in form} <= fields
    values = {f.name: getattr(mech, f.name) for f in form}
    assert cls.from_form(values, d=D).guarantee().headline() == mech.guarantee().headline()


def check_contract(cls: type[RecordMechanism]) -> None:
    """Every check of this module for one registered mechanism class and each of its examples."""
    assert MECHANISMS.get(cls.KIND) is cls
    examples = cls.examples(D)
    assert examples, f"{cls.__name__} has no examples"
    check_budget(cls)
    for mech in examples.values():
        check_guarantee_is_data_free(mech)
        check_seeded_releases(mech)
        check_unit_ball(mech)
        check_samplers(mech)
        check_round_trip(mech)
        check_attack_contract(mech)
        check_partition_plan(mech)
    check_form(cls, next(iter(examples.values())))


# ------------------------------------------------------------------------------------------------ the suite
def test_every_registered_mechanism_has_an_example():
    assert {m.KIND for m in EXAMPLES.values()} == set(MECHANISMS)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_guarantee_is_data_free_and_is_the_release_guarantee(name):
    check_guarantee_is_data_free(EXAMPLES[name])


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_seeded_releases_are_reproducible_and_seeds_differ(name):
    check_seeded_releases(EXAMPLES[name])


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_rows_outside_the_unit_ball_are_refused_where_the_tags_say_the_unit_assumes_it(name):
    check_unit_ball(EXAMPLES[name])


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_one_release_function_uses_exactly_the_tagged_samplers(name):
    check_samplers(EXAMPLES[name])


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_configuration_round_trips_through_json(name):
    check_round_trip(EXAMPLES[name])


@pytest.mark.parametrize("kind", sorted(MECHANISMS))
def test_from_budget_states_the_budget_exactly_where_tagged_budgeted(kind):
    check_budget(MECHANISMS[kind])


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_attack_contract_exact_tradeoff_where_tagged_and_valid_statements(name):
    check_attack_contract(EXAMPLES[name])


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_partition_plan_releases_a_partition_or_refuses_in_one_line(name):
    check_partition_plan(EXAMPLES[name])


@pytest.mark.parametrize("kind", sorted(MECHANISMS))
def test_the_dashboard_form_reads_back_a_configuration(kind):
    cls = MECHANISMS[kind]
    check_form(cls, next(iter(cls.examples(D).values())))


def test_opendp_noises_blocks_of_whole_rows_and_certifies_each(monkeypatch):
    """The OpenDP sampler noises a matrix in blocks of whole rows (bounded memory); each block's privacy map is
    checked, and the noise is on every entry."""
    from engine.mechanisms import samplers

    vetted = [cls for cls in MECHANISMS.values() if "opendp" in cls.TAGS.samplers]
    assert vetted, "no mechanism draws with OpenDP"
    mech = vetted[0].from_budget(0.5, 1.0, 1e-5, d=D)
    monkeypatch.setattr(samplers, "OPENDP_CHUNK_VALUES", 7)  # 2 rows of 3 per chunk, the last chunk 1 row
    x = np.full((5, D), 0.1)
    rel = privatize(mech, x, sampler="opendp")
    assert rel.value.shape == x.shape and not np.any(rel.value == x)
    assert rel.details["sampler"] == "opendp" and rel.details["implementation"] == "opendp"
    assert rel.details["opendp_rho"] > 0 and any("vetted" in n for n in rel.guarantee.notes)


def test_k_anonymity_computes_a_partition_once_per_data_and_k(monkeypatch):
    """The Mechanisms page releases the same rows five times: the deterministic Mondrian partition is computed once
    per (data, k) — and again for other data or another k (the key is a digest of the rows' bytes)."""
    from engine.mechanisms import mondrian

    calls = []
    original = mondrian.mondrian_partition
    monkeypatch.setattr(mondrian, "mondrian_partition", lambda x, k: calls.append(k) or original(x, k))
    monkeypatch.setattr(mondrian, "_PARTITIONS", type(mondrian._PARTITIONS)())
    x = np.random.default_rng(0).normal(size=(200, 3))
    first = mondrian.MondrianKAnonymity(k=5).release(x, rng=np.random.default_rng(1)).value
    again = mondrian.MondrianKAnonymity(k=5).release(x.copy(), rng=np.random.default_rng(2)).value
    np.testing.assert_array_equal(first, again)
    assert calls == [5]
    changed = x.copy()
    changed[0, 0] += 1e-9
    mondrian.MondrianKAnonymity(k=5).release(changed, rng=np.random.default_rng(1))
    mondrian.MondrianKAnonymity(k=6).release(x, rng=np.random.default_rng(1))
    assert calls == [5, 5, 6]
