"""The programs' logistic regression (engine.evaluation.logistic): Newton's method on scikit-learn's objective.

Oracle: scikit-learn's ``LogisticRegression`` converged far past its default tolerance (tol = 1e-12) minimises the
same objective, so both must give the same coefficients and probabilities to well within the default fit's own
error (which is up to ~3e-3 in probability on nigeria-demo's folds)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from engine.evaluation.logistic import fit_logistic


@pytest.mark.parametrize(("n", "p", "c", "seed"), [(500, 3, 1.0, 0), (2000, 15, 0.1, 1), (300, 6, 50.0, 2)])
def test_newton_fit_is_scikit_learns_minimiser(n, p, c, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, p)) * rng.uniform(0.2, 3.0, size=p)
    y = rng.random(n) < 1.0 / (1.0 + np.exp(-(x @ rng.normal(size=p) + 0.3)))
    fit = fit_logistic(x, y, c)
    tight = LogisticRegression(C=c, tol=1e-12, max_iter=100_000).fit(x, y)
    assert fit.converged
    np.testing.assert_allclose(fit.coef, tight.coef_[0], rtol=1e-5, atol=1e-6)
    assert fit.intercept == pytest.approx(tight.intercept_[0], rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(fit.proba(x), tight.predict_proba(x)[:, 1], atol=1e-6)


def test_separable_data_converge_because_of_the_penalty():
    x = np.r_[np.linspace(-3, -1, 50), np.linspace(1, 3, 50)][:, None]
    y = x[:, 0] > 0
    fit = fit_logistic(x, y, c=1.0)
    tight = LogisticRegression(C=1.0, tol=1e-12, max_iter=100_000).fit(x, y)
    assert fit.converged and fit.coef[0] > 0
    assert fit.coef[0] == pytest.approx(tight.coef_[0, 0], rel=1e-5)


@pytest.mark.parametrize("seed", range(3))
def test_a_fit_started_from_another_folds_fit_reaches_the_same_minimiser_in_fewer_steps(seed):
    """The programs start each cross-validation fold's fit from the previous fold's (engine.evaluation.programs): the
    same minimiser to the fit's tolerance (probabilities within 1e-6 of a fit from zero, as of the tightly converged
    scikit-learn fit above; they differ by about 1e-7), fewer Newton steps; a start of the wrong shape is ignored."""
    rng = np.random.default_rng(seed)
    n, p = 3000, 12
    x = rng.normal(size=(n, p)) * rng.uniform(0.2, 3.0, size=p)
    y = rng.random(n) < 1.0 / (1.0 + np.exp(-(x @ rng.normal(size=p) + 0.3)))
    fold = rng.permutation(n)
    first, second = fold[600:], np.r_[fold[:600], fold[1200:]]
    previous = fit_logistic(x[first], y[first])
    cold = fit_logistic(x[second], y[second])
    warm = fit_logistic(x[second], y[second], start=previous)
    assert cold.converged and warm.converged and warm.steps < cold.steps
    np.testing.assert_allclose(warm.proba(x), cold.proba(x), atol=1e-6)
    odd = fit_logistic(x[second][:, :3], y[second], start=previous)  # 12 coefficients for 3 columns: ignored
    assert odd.steps == fit_logistic(x[second][:, :3], y[second]).steps
