"""The known-record adversary against the secret projection (engine.attacks.known_records)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.attacks.known_records import known_record_reconstruction, known_record_view
from engine.errors import InvalidParameterError
from engine.mechanisms.jl_laplace import JLLaplace


def test_known_record_adversary_undoes_the_secret_projection():
    rng = np.random.default_rng(3)
    x = rng.uniform(-0.3, 0.3, size=(300, 4))
    mech = JLLaplace(k=6, epsilon=1e6, d=4, relation="row")  # negligible noise
    z = mech.release(x, rng=rng).value
    known = np.arange(20)
    x_hat = known_record_reconstruction(z, known, x[known])
    np.testing.assert_allclose(x_hat, x, atol=1e-3)


def test_fewer_known_records_than_columns_cannot_reconstruct():
    """With fewer known records than the release has columns the least-squares map is underdetermined: the
    reconstruction of the unknown rows is far from the truth (the 2k default of the Studio is not arbitrary)."""
    rng = np.random.default_rng(4)
    x = rng.uniform(-0.3, 0.3, size=(300, 6))
    z = JLLaplace(k=6, epsilon=1e6, d=6, relation="row").release(x, rng=rng).value
    x_hat = known_record_reconstruction(z, np.arange(3), x[:3])
    assert np.abs(x_hat[3:] - x[3:]).mean() > 0.05


def test_view_draws_the_known_records_from_the_generator():
    rng = np.random.default_rng(5)
    x = rng.uniform(-0.3, 0.3, size=(200, 4))
    z = JLLaplace(k=6, epsilon=1e6, d=4, relation="row").release(x, rng=rng).value
    a = known_record_view(z, x, 12, rng=np.random.default_rng(9))
    b = known_record_view(z, x, 12, rng=np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, x, atol=1e-3)


@pytest.mark.parametrize("n_known", [0, 201, 2.5])
def test_view_refuses_impossible_numbers_of_known_records(n_known):
    x = np.zeros((200, 4))
    with pytest.raises(InvalidParameterError, match="n_known"):
        known_record_view(x, x, n_known, rng=np.random.default_rng(0))
