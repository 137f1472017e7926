"""The power criterion (privacct.audits.power) and the verdict it decides (privacct.audits.mechanism_audit)."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from privacct.audits import audit_mechanism, bounds, power
from privacct.audits.reference_mechanisms import GaussianMechanism, LaplaceMechanism, NullMechanism
from privacct.audits.power import PowerCheck, canonical_power
from privacct.audits.mechanism_audit import decide
from privacct.errors import PrivacctError

ALPHA = 0.025  # one pair, two directions, confidence 0.95


def _exact_median(tpr, fpr, n, alpha, delta):
    """The exact median of the CP eps lower bound of one threshold test, by enumerating (TP, FP)
    (over their central 1 - 2e-9 mass)."""
    tp = np.arange(*(stats.binom.ppf([1e-9, 1 - 1e-9], n, tpr).astype(int) + [0, 1]))
    fp = np.arange(*(stats.binom.ppf([1e-9, 1 - 1e-9], n, fpr).astype(int) + [0, 1]))
    w = np.outer(stats.binom.pmf(tp, n, tpr), stats.binom.pmf(fp, n, fpr)).ravel()
    eps = bounds.epsilon_from_bounds(bounds.cp_lower(tp, n, alpha / 2)[:, None],
                                     bounds.cp_upper(fp, n, alpha / 2)[None, :], delta).ravel()
    order = np.argsort(eps)[::-1]
    cum = np.cumsum(w[order])
    return float(eps[order][np.searchsorted(cum, 0.5)])  # largest c with P[eps >= c] >= 1/2


@pytest.mark.parametrize("n, t", [(30, 1.0), (80, 1.3), (200, 1.0), (3000, 0.8), (3000, 1.5)])
def test_grid_median_never_exceeds_the_exact_median(n, t):
    tpr, fpr = power._laplace_rates(np.array([t]), 2.0)
    grid = power._grid_median(tpr, fpr, n, ALPHA, 0.0)[0]
    exact = _exact_median(float(tpr[0]), float(fpr[0]), n, ALPHA, 0.0)
    assert grid <= exact + 1e-12
    assert grid >= exact - 0.05  # and close (the grid moves quantile levels by at most 1/64)


def test_laplace_criterion_matches_simulated_audits():
    """At the criterion's trials_needed a Laplace eps = 2 audit certifies > 1 about half the time; at a
    quarter of them the criterion says inconclusive and the audits indeed rarely could."""
    needed = canonical_power(10, ALPHA, 0.0, 1.0).trials_needed
    assert 100 <= needed <= 300
    assert canonical_power(needed // 2, ALPHA, 0.0, 1.0).has_power
    assert not canonical_power(needed // 2 - 4, ALPHA, 0.0, 1.0).has_power
    mech = LaplaceMechanism(0.5)  # true eps 2 = 2 x the claim
    hit = np.mean([audit_mechanism(mech, 0.0, 1.0, epsilon=1.0, trials=needed, seed=s, executor="inline")
                   .epsilon_lower_bound > 1.0 for s in range(120)])
    assert 0.35 <= hit <= 0.8, hit
    few = needed // 4
    r = audit_mechanism(mech, 0.0, 1.0, epsilon=1.0, trials=few, seed=0, executor="inline", power=canonical_power)
    assert not r.power.has_power and r.power.trials_needed == needed
    hit_few = np.mean([audit_mechanism(mech, 0.0, 1.0, epsilon=1.0, trials=few, seed=s, executor="inline")
                       .epsilon_lower_bound > 1.0 for s in range(120)])
    assert hit_few <= 0.15, hit_few


def test_gaussian_criterion_matches_simulated_audits():
    delta = 1e-2
    mu = power.gaussian_mu_for_epsilon(2.0, delta)
    assert bounds.gdp_delta(2.0, mu) == pytest.approx(delta, rel=1e-9)  # Balle & Wang 2018, Thm 8
    needed = canonical_power(10, ALPHA, delta, 1.0).trials_needed
    mech = GaussianMechanism(1.0 / mu)
    hit = np.mean([audit_mechanism(mech, 0.0, 1.0, epsilon=1.0, delta=delta, trials=needed, seed=s,
                                   executor="inline").epsilon_lower_bound > 1.0 for s in range(60)])
    assert 0.3 <= hit <= 0.85, hit


def test_issue_case_laplace_eps4_at_50_trials_is_inconclusive_not_passes():
    for seed in range(10):
        r = audit_mechanism(LaplaceMechanism(0.25), 0.0, 1.0, epsilon=1.0, trials=50, seed=seed)
        assert r.verdict == "inconclusive" and r.epsilon_lower_bound <= 1.0
        assert r.power.trials_needed is not None and r.power.trials_needed > 50
        assert "needs about" in r.summary() and "INCONCLUSIVE" in r.summary()


def test_verdicts_and_decide():
    yes = PowerCheck("x", "x", 2.0, 1.5, True, None)
    no = PowerCheck("x", "x", 2.0, 0.5, False, 1000)
    assert decide(1.2, 1.0, yes) == "fails" == decide(1.2, 1.0, no)
    assert decide(1.0, 1.0, yes) == "passes"
    assert decide(0.3, 1.0, no) == "inconclusive"
    assert audit_mechanism(LaplaceMechanism(0.25), 0.0, 1.0, epsilon=1.0, trials=20_000).verdict == "fails"
    assert audit_mechanism(NullMechanism(), 0, 1, epsilon=1.0, trials=20_000).verdict == "passes"


def test_pluggable_criterion_receives_the_pipeline_and_decides():
    from privacct.audits import PairList, run_audit

    seen = []

    def criterion(n_eval, alpha, delta, claim):
        seen.append((n_eval, alpha, delta, claim))
        return PowerCheck("mine", "a criterion of my own", 3.0, 0.1, False, 123)

    r = run_audit(NullMechanism(), PairList(((0, 1), (0, 2))), epsilon=2.0, delta=1e-6, trials=1001,
                  seed=0, power=criterion)
    assert seen == [(501, pytest.approx(0.05 / 4), 1e-6, 2.0)]  # evaluation half; union bound: 2 pairs x 2 directions
    assert r.verdict == "inconclusive" and r.power.criterion == "mine" and r.to_dict()["power"]["trials_needed"] == 123
    r2 = audit_mechanism(NullMechanism(), 0, 1, trials=100,
                         power=lambda *a: PowerCheck("always", "x", 2.0, 9.0, True, None))
    assert r2.verdict == "passes"


@pytest.mark.parametrize("bad, needle", [(42, "power must be a callable"),
                                         (lambda *a: True, "power must return")])
def test_bad_criterion_is_refused(bad, needle):
    with pytest.raises(PrivacctError, match=needle):
        audit_mechanism(NullMechanism(), 0, 1, trials=100, power=bad)


def test_the_default_criterion_of_a_black_box_is_unknown_not_canonical():
    """Issue 19: without power= or leakier= (and without a criterion the mechanism declares), no power."""
    r = audit_mechanism(lambda d, rng, size: d + rng.laplace(size=size), 0.0, 1.0, epsilon=1.0, trials=20_000)
    assert r.verdict == "inconclusive" and r.power.criterion == "unknown"
    assert r.reason == power.NO_POWER_REASON
    assert audit_mechanism(lambda d, rng, size: d + rng.laplace(0.0, 0.25, size=size), 0.0, 1.0, epsilon=1.0,
                           trials=20_000).verdict == "fails"


def test_criterion_is_monotone_and_infinite_claims_are_inconclusive():
    vals = [canonical_power(n, ALPHA, 0.0, 1.0).achievable_lower_bound for n in (20, 50, 100, 1000, 10_000)]
    assert all(b >= a for a, b in itertools.pairwise(vals)) and vals[-1] < 2.0
    big = canonical_power(10, ALPHA, 0.0, 4.0)
    assert big.reference_epsilon == 8.0 and big.trials_needed > canonical_power(10, ALPHA, 0.0, 1.0).trials_needed
    inf = canonical_power(1000, ALPHA, 0.0, math.inf)
    assert not inf.has_power and inf.trials_needed is None
    assert inf.to_dict()["reference_epsilon"] is None  # strict JSON: no Infinity
    with pytest.raises(PrivacctError, match="n_eval"):
        canonical_power(0, ALPHA, 0.0, 1.0)
