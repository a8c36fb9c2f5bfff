"""The distinguishing audit's statistics (engine.audit.distinguishing): Clopper–Pearson intervals and the
lower confidence bound on ε from a threshold test. The audits of the mechanism families that use them are in
``test_privacy_audit.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.audit import clopper_pearson, empirical_privacy
from engine.errors import InvalidParameterError


def test_clopper_pearson_matches_closed_forms_and_covers():
    low, high = clopper_pearson(0, 10, 0.95)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-12)
    low, high = clopper_pearson(10, 10, 0.95)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 10), rel=1e-12)
    # Coverage: over 2,000 seeded binomial draws (p = 0.3, n = 50) the 95 % interval misses p at most ~5 %
    # (exact intervals are conservative); 5 standard errors of a 5 % rate on 2,000 draws is 2.4 %.
    rng = np.random.default_rng(5)
    misses = sum(not (lo <= 0.3 <= hi) for lo, hi in (clopper_pearson(int(k), 50, 0.95)
                                                      for k in rng.binomial(50, 0.3, 2_000)))
    assert misses / 2_000 <= 0.05 + 5 * math.sqrt(0.05 * 0.95 / 2_000)
    with pytest.raises(InvalidParameterError, match="successes"):
        clopper_pearson(11, 10)


def test_empirical_privacy_is_zero_for_identical_distributions_and_validates_input():
    rng = np.random.default_rng(9)
    res = empirical_privacy(rng.normal(size=20_000), rng.normal(size=20_000), delta=1e-5)
    assert res.epsilon_lower < 0.15, res.describe()
    assert res.delta_lower(0.0) < 0.05
    with pytest.raises(InvalidParameterError, match="at least 100"):
        empirical_privacy([0.0] * 10, [1.0] * 10)
    with pytest.raises(InvalidParameterError, match="finite"):
        empirical_privacy([math.nan] * 200, [1.0] * 200)
