"""The contract every registered record mechanism (``engine.mechanisms.MECHANISMS``) keeps.

For each mechanism, on small data (n = 40, d = 3):

* its guarantee is known before any data is seen (``guarantee()`` takes none) and is the one its release carries;
* seeded releases are reproducible: the same seed gives the identical output, a different seed a different output
  (Mondrian adds no noise, so there the output is the same whatever the seed);
* rows outside the unit L2 ball are refused with :class:`~engine.errors.DataValidationError` when the mechanism's
  unit assumes the ball (row-level TDP); the others accept any finite matrix;
* the configuration survives a JSON round trip, directly and through the registry;
* ``from_budget(B, ε, δ)``, where defined, gives a mechanism whose guarantee states that (B, ε, δ) — exactly for
  B and ε, up to the rounding of adding the budget's parts for δ (JL–Laplace: its calibrated δ_fail, at most δ).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import DataValidationError
from engine.mechanisms import MECHANISMS, mechanism_from_dict
from engine.mechanisms.gaussian import GaussianMechanism
from engine.mechanisms.jl_laplace import JLLaplace
from engine.mechanisms.mondrian import MondrianKAnonymity
from engine.mechanisms.private_projection import PrivateProjection

N, D = 40, 3

#: Example configurations, several per kind (the defaults and the options that change the release's path).
EXAMPLES = {
    "projection": PrivateProjection(b=0.5, epsilon1=3.0, delta1=2e-4, epsilon2=0.5, delta2=1e-4, k=50),
    "projection-parts-rank": PrivateProjection(b=0.25, epsilon1=2.0, delta1=2e-4, epsilon2=0.9, delta2=1e-4, k=20,
                                               partitions=2, rank=2, output_scale="paper"),
    "gaussian": GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5),
    "gaussian-classical": GaussianMechanism(b=2.0, epsilon=0.5, delta=1e-5, calibration="classical"),
    "jl-laplace": JLLaplace.from_budget(0.5, 1.0, 1e-3, d=D),
    "jl-laplace-element": JLLaplace(k=5, epsilon=1.0, d=D, relation="element"),
    "mondrian": MondrianKAnonymity(k=2),
}
#: Examples whose neighbouring relation does not assume rows in the unit ball.
NO_BALL = {"jl-laplace-element", "mondrian"}
#: Examples that add no noise.
NOISELESS = {"mondrian"}


def _data(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, D))
    return x / np.linalg.norm(x, axis=1, keepdims=True) * rng.uniform(0.1, 1.0, size=(N, 1))


def _release(mech, seed: int, x: np.ndarray | None = None):
    return mech.release(_data() if x is None else x, rng=np.random.default_rng(seed))


def test_every_registered_mechanism_has_an_example():
    assert {m.KIND for m in EXAMPLES.values()} == set(MECHANISMS)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_guarantee_is_data_free_and_is_the_release_guarantee(name):
    mech = EXAMPLES[name]
    stated = mech.guarantee()  # no data needed
    assert _release(mech, 1).guarantee == stated
    assert _release(mech, 1, _data(5)).guarantee == stated  # other data, same statement


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_seeded_releases_are_reproducible_and_seeds_differ(name):
    mech = EXAMPLES[name]
    first, again, other = _release(mech, 7).value, _release(mech, 7).value, _release(mech, 8).value
    assert np.array_equal(first, again)
    assert np.all(np.isfinite(first))
    if name in NOISELESS:
        assert np.array_equal(first, other)
    else:
        assert not np.array_equal(first, other)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_rows_outside_the_unit_ball_are_refused_where_the_unit_assumes_it(name):
    mech = EXAMPLES[name]
    x = _data()
    x[3] = np.array([1.2, 0.0, 0.0])  # norm 1.2 > 1
    if name in NO_BALL:
        assert _release(mech, 1, x).value.shape[0] == N
    else:
        with pytest.raises(DataValidationError):
            _release(mech, 1, x)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_configuration_round_trips_through_json(name):
    mech = EXAMPLES[name]
    assert type(mech).from_json(mech.to_json()) == mech
    assert mechanism_from_dict(mech.to_dict()) == mech
    assert type(mech).from_json(mech.to_json()).to_json() == mech.to_json()


#: Mechanisms with a (B, ε, δ) guarantee; every other one refuses a budget (RecordMechanism.from_budget).
BUDGET_KINDS = ("gaussian", "jl-laplace", "projection")


@pytest.mark.parametrize("kind", BUDGET_KINDS)
@pytest.mark.parametrize(("b", "epsilon", "delta"), [(0.25, 1.0, 1e-5), (2.0, 4.0, 3e-4), (0.1, 8.0, 1e-6)])
def test_from_budget_states_the_budget(kind, b, epsilon, delta):
    cls = MECHANISMS[kind]
    mech = cls.from_budget(b, epsilon, delta, d=D) if kind == "jl-laplace" else cls.from_budget(b, epsilon, delta)
    g = mech.guarantee()
    assert (g.b, g.relation) == (b, "row")
    assert g.epsilon == pytest.approx(epsilon, rel=1e-12)
    if kind == "jl-laplace":
        assert 0 < g.delta <= delta  # the calibration reaches a δ_fail at most the target
    else:
        assert g.delta == pytest.approx(delta, rel=1e-12)
    assert _release(mech, 3).guarantee == g


def test_from_budget_is_defined_for_every_tdp_mechanism_and_refused_by_the_others():
    from engine.errors import InvalidParameterError

    for kind, cls in MECHANISMS.items():
        if kind in BUDGET_KINDS:
            assert "from_budget" in vars(cls), kind
        else:
            with pytest.raises(InvalidParameterError, match="not configured from a privacy budget"):
                cls.from_budget(0.5, 1.0, 1e-5)


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
