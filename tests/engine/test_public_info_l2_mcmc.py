"""The L2-loss mechanism by MCMC: labelled approximate, keeps the invariants, and approaches the exact law."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln

from engine.errors import InvalidParameterError
from engine.public_info.l2_mcmc import l2_wasserstein_mcmc


def _exact(xc, xd, s, a, conc):
    outs, lw = [], []
    for c in itertools.product(range(s + 1), repeat=len(xc)):
        if sum(c) != s:
            continue
        for d in itertools.product(*[range(ci + 1) for ci in c]):
            v = -a * math.sqrt(np.sum((np.subtract(c, xc)) ** 2) + np.sum(np.subtract(d, xd) ** 2))
            if conc is not None:
                v += float(np.sum(gammaln(np.add(c, conc)) - gammaln(np.add(c, 1.0))))
            outs.append(c + d)
            lw.append(v)
    lw = np.array(lw)
    return outs, np.exp(lw - np.logaddexp.reduce(lw))


@pytest.mark.parametrize("conc", [None, (1.5, 3.0)])
def test_chain_approaches_the_exact_law_and_is_labelled_approximate(conc):
    xc, xd, s, eps = [3, 1], [1, 0], 4, 2.0
    conc_arr = None if conc is None else np.array(conc)
    outs, p = _exact(xc, xd, s, eps / 4, conc_arr)
    m = 5000
    c, d, g = l2_wasserstein_mcmc(xc, xd, eps, base="congenial" if conc is None else "prior", total=s,
                                  concentration=conc_arr, iterations=200, replicates=m, rng=np.random.default_rng(3))
    assert g.headline().startswith("approximate ε-TP") and not g.exact
    assert np.all(c.sum(axis=1) == s) and np.all((d >= 0) & (d <= c))
    index = {o: i for i, o in enumerate(outs)}
    freq = np.bincount([index[tuple(r)] for r in np.hstack([c, d]).tolist()], minlength=len(outs)) / m
    # 5 sampling standard errors per outcome plus 0.01 for the finite chain's bias
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / m) + 0.01)


def test_naive_base_noise_scale():
    c, d, _ = l2_wasserstein_mcmc([5, 0], None, 2.0, base="naive", iterations=600, replicates=4000,
                                  rng=np.random.default_rng(4))
    sd = math.sqrt(3) / 0.5  # √(dim + 1)/a
    assert d is None and c.std(axis=0) == pytest.approx([sd, sd], rel=0.08)


def test_bad_input():
    with pytest.raises(InvalidParameterError, match="total"):
        l2_wasserstein_mcmc([1, 2], None, 1.0, rng=np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="concentration"):
        l2_wasserstein_mcmc([1, 2], None, 1.0, base="prior", total=3, rng=np.random.default_rng(0))
