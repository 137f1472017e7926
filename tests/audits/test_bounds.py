"""Clopper-Pearson and eps/mu conversions (privacct.audits.bounds)."""

import math

import numpy as np
import pytest
from scipy import stats

from privacct.audits import bounds


def test_cp_bounds_match_beta_quantiles_and_edges():
    assert bounds.cp_upper(3, 10, 0.05) == pytest.approx(stats.beta.ppf(0.95, 4, 7))
    assert bounds.cp_lower(3, 10, 0.05) == pytest.approx(stats.beta.ppf(0.05, 3, 8))
    assert bounds.cp_upper(10, 10, 0.05) == 1.0
    assert bounds.cp_lower(0, 10, 0.05) == 0.0
    # FPR upper bound is never 0, so the log stays finite
    assert bounds.cp_upper(0, 10, 0.05) == pytest.approx(1 - 0.05 ** (1 / 10))


def test_cp_coverage_by_simulation():
    rng = np.random.default_rng(0)
    p, n, a = 0.3, 50, 0.1
    k = rng.binomial(n, p, size=4000)
    assert (bounds.cp_upper(k, n, a) < p).mean() <= a
    assert (bounds.cp_lower(k, n, a) > p).mean() <= a


def test_epsilon_from_bounds_floors_and_delta():
    assert bounds.epsilon_from_bounds(0.5, 0.25) == pytest.approx(math.log(2))
    assert bounds.epsilon_from_bounds(0.2, 0.5) == 0.0  # floored at 0
    assert bounds.epsilon_from_bounds(0.1, 0.01, delta=0.1) == 0.0  # TPR_lo <= delta
    assert bounds.epsilon_from_bounds(0.3, 0.1, delta=0.1) == pytest.approx(math.log(2))


def test_ceiling_matches_docs_table():
    # docs/auditing.md#the-epsilon-ceiling: perfect attack, 95%, n per side -> about ln(n / ln(2/alpha))
    assert bounds.epsilon_ceiling(1000, 0.05) == pytest.approx(5.60, abs=0.01)
    assert bounds.epsilon_ceiling(100_000, 0.05) == pytest.approx(10.21, abs=0.01)


def test_mu_is_floored_not_absolute():
    # identical rates -> Phi^-1(TPR_lo) - Phi^-1(FPR_hi) < 0 -> 0 (jax_privacy 2.0.0 took abs())
    lo, hi = bounds.cp_lower(500, 1000, 0.05), bounds.cp_upper(500, 1000, 0.05)
    assert bounds.mu_from_bounds(lo, hi) == 0.0
    assert bounds.mu_from_bounds(0.0, 0.5) == 0.0


def test_gdp_conversion_matches_analytic_gaussian():
    # Balle & Wang 2018: delta(1; sigma=1) = 0.1269367375 (docs/accounting.md#regression-anchors)
    assert bounds.gdp_delta(1.0, 1.0) == pytest.approx(0.1269367375, rel=1e-8)
    assert bounds.epsilon_from_mu(1.0, 0.1269367375) == pytest.approx(1.0, abs=1e-6)
    assert bounds.epsilon_from_mu(0.0, 1e-5) == 0.0
    assert bounds.epsilon_from_mu(1.0, 0.0) is None


from hypothesis import given, settings, strategies as st


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 500), tp=st.integers(0, 500), fp=st.integers(0, 500),
       delta=st.sampled_from([0.0, 1e-5, 0.1]), alpha=st.sampled_from([0.5, 0.05, 1e-4]))
def test_epsilon_lower_bound_properties(n, tp, fp, delta, alpha):
    tp, fp = min(tp, n), min(fp, n)
    eps, lo, hi = bounds.epsilon_lower_bound(tp, n, fp, n, delta=delta, alpha=alpha)
    assert np.isfinite(eps) and eps >= 0.0
    assert 0.0 <= lo <= tp / n <= 1.0 and 0.0 < hi <= 1.0 and hi >= fp / n
    assert eps <= bounds.epsilon_ceiling(n, alpha, delta) + 1e-12
    # monotone: more true positives never lower the bound, more false positives never raise it
    if tp < n:
        assert bounds.epsilon_lower_bound(tp + 1, n, fp, n, delta=delta, alpha=alpha)[0] >= eps - 1e-12
    if fp < n:
        assert bounds.epsilon_lower_bound(tp, n, fp + 1, n, delta=delta, alpha=alpha)[0] <= eps + 1e-12
    assert bounds.mu_from_bounds(lo, hi) >= 0.0
