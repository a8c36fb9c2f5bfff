"""R9 for the public-information engine: every public entry point rejects values outside its constraints with an
InvalidParameterError whose message names the parameter (a separate table from test_public_api_validation.py so
the two packages can evolve independently)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from engine.errors import InvalidParameterError
from engine.public_info import (
    conditioning,
    discrete_laplace,
    inference,
    knorm,
    l2_mcmc,
    semantics,
    sensitivity,
    wasserstein,
)
from engine.public_info.count_release import CountReleaseConfig
from engine.public_info.guarantee import TPGuarantee
from engine.public_info.results import CountStudyConfig

RNG = np.random.default_rng(0)
POS = (0.0, -1.0, math.nan, math.inf, "x", True, None)
PROB = (-0.1, 1.5, math.nan, "x", None)
INT1 = (0, -3, 2.5, "3", True, None)

CALLS = [
    (sensitivity.correlated_counts_sensitivity, dict(n=10, z0=0.1, z1=0.5), {"n": INT1, "z0": PROB, "z1": PROB}),
    (sensitivity.gaussian_sensitivity, dict(delta=1.0, n=10), {"delta": POS, "n": (1, 2.5, "x", None)}),
    (sensitivity.gaussian_beta1, dict(n=10, sigma2=1.0, construction="mean-plus-noise", tau2=1.0),
     {"tau2": POS, "construction": ("nope", None)}),
    (sensitivity.binary_sdl_sensitivity, dict(n=20, k=3), {"n": INT1, "k": (-1, 11, 2.5)}),
    (sensitivity.correlated_counts_grid, dict(n=10, z0_values=[0.1], z1_values=[0.5]), {"n": INT1}),
    (discrete_laplace.dl_variance, dict(a=1.0), {"a": POS}),
    (discrete_laplace.sample_discrete_laplace, dict(a=1.0, size=3, rng=RNG), {"a": POS, "rng": (None, 3)}),
    (discrete_laplace.discrete_laplace_mechanism, dict(x=np.array([1, 2]), epsilon=1.0, rng=RNG),
     {"epsilon": (0.0, -1.0, math.nan, "x"), "sensitivity": POS, "rng": (None, 3)}),
    (knorm.knorm_sd_per_coordinate, dict(d=3, epsilon=1.0), {"d": INT1, "epsilon": POS, "sigma": POS}),
    (knorm.sample_l2_knorm, dict(d=3, a=1.0, size=2, rng=RNG), {"d": INT1, "a": POS, "rng": (None,)}),
    (wasserstein.sample_congenial, dict(xc=[3, 1], xd=None, total=4, a=0.5, size=2, rng=RNG),
     {"a": POS, "size": INT1, "total": (-1, 2.5, "x"), "tail": (0.0, -5.0, "x"), "rng": (None,)}),
    (wasserstein.wasserstein_count_mechanism, dict(xc=[3, 1], xd=None, epsilon=1.0, total=4, rng=RNG),
     {"epsilon": POS, "sensitivity": POS, "replicates": INT1, "base": ("nope",)}),
    (l2_mcmc.l2_wasserstein_mcmc, dict(xc=[3, 1], xd=None, epsilon=1.0, total=4, iterations=5, rng=RNG),
     {"epsilon": POS, "iterations": INT1, "replicates": INT1, "sensitivity": POS, "base": ("nope",)}),
    (semantics.odds_band, dict(epsilon=1.0, prior_odds=2.0), {"epsilon": (-1.0, math.nan), "prior_odds": POS}),
    (semantics.exponential_mechanism_audit, dict(n=10, z0=0.2, z1=0.5, epsilon=1.0, sensitivity=2.0),
     {"n": INT1, "epsilon": POS, "sensitivity": POS, "base": ("nope",)}),
    (semantics.manifold_errors, dict(d1=5, d2=2), {"d1": INT1, "d2": (0, 6, 2.5)}),
    (conditioning.conditioning_privacy_loss, dict(epsilon=1.0, n_max=10, allowed=(2, 8)),
     {"epsilon": POS, "n_max": INT1}),
    (inference.two_cell_bayes_risk, dict(n=5, p=0.2, epsilon=1.0), {"n": INT1, "p": (0.0, 1.0, -1.0), "epsilon": POS}),
    (inference.power_comparison, dict(n=5, theta0=0.3, theta1=0.6), {"n": INT1, "theta0": (0.0, 1.0),
                                                                       "alpha": (0.0, 1.0), "noise": ("nope",)}),
]


def _cases():
    for fn, valid, params in CALLS:
        for param, values in params.items():
            for v in values:
                yield pytest.param(fn, valid, param, v, id=f"{fn.__name__}-{param}={v!r}")


@pytest.mark.parametrize(("fn", "valid", "param", "value"), list(_cases()))
def test_invalid_argument_names_the_parameter(fn, valid, param, value):
    with pytest.raises(InvalidParameterError) as info:
        fn(**{**valid, param: value})
    assert re.search(rf"\b{re.escape(param)}\b", str(info.value)), str(info.value)


@pytest.mark.parametrize(("fn", "valid", "params"), CALLS, ids=[c[0].__name__ for c in CALLS])
def test_valid_call_succeeds(fn, valid, params):
    assert fn(**valid) is not None


CONFIGS = [
    (TPGuarantee, dict(epsilon=1.0, sensitivity=2.0), {"epsilon": (0.0, -1.0, math.nan), "sensitivity": POS,
                                                       "periods": INT1, "composition": ("nope",)}),
    (CountReleaseConfig, {}, {"epsilon": POS, "alpha": POS, "replicates": INT1, "sensitivity": POS[:-1] + (0.5,),
                              "method": ("nope",), "base": ("nope",), "public": (("nope",), ("total", "total"))}),
    (CountStudyConfig, dict(methods=("postprocess",)), {"epsilons": ((), (0.0,), (-1.0,)), "replicates": INT1,
                                                        "methods": ((), ("nope",)), "alpha": POS}),
]


@pytest.mark.parametrize(("cls", "valid", "field", "value"),
                         [pytest.param(c, v, f, x, id=f"{c.__name__}-{f}={x!r}")
                          for c, v, fields in CONFIGS for f, xs in fields.items() for x in xs])
def test_config_rejects_invalid_field(cls, valid, field, value):
    with pytest.raises(InvalidParameterError) as info:
        cls(**{**valid, field: value})
    assert re.search(rf"\b{re.escape(field)}\b", str(info.value)), str(info.value)
