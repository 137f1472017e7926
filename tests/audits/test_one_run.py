"""One-run audits (privacct.audits.one_run; docs/auditing.md#one-run-audits).

Checks: the Steinke et al. p-value and bound against an independent mpmath computation of the same
formula; the f-DP recursion against an mpmath one; jax_privacy's own test values (tests/auditing_test.py,
``test_epsilon_one_run_close``) reproduced through its threshold pipeline re-implemented here; monotonicity;
soundness (exactly, on randomized response, the worst case of eps-DP, and by repeated one-run audits of
Laplace and Gaussian mechanisms); power; the f-DP bound's tightness on Gaussian mechanisms; bad input.
"""

import json
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import special, stats

from privacct.audits import one_run
from privacct.audits.oracle import LossStructure
from privacct.errors import PrivacctError

mp.mp.dps = 30


# ------------------------------------------------------------------------------------------------
# independent mpmath computations of the formulas (written from the papers, not from one_run.py)

def mp_steinke_p(m, r, v, eps, delta):
    """Steinke, Nasr, Jagielski 2023, Thm 3.1: f(v) + 2 m delta max_{1<=i<=m} (f(v-i) - f(v)) / i."""
    q = mp.e ** eps / (1 + mp.e ** eps)
    pmf = [(1 - q) ** r]  # P[W = j], by the ratio pmf(j + 1) / pmf(j) = (r - j) q / ((j + 1) (1 - q))
    for j in range(r):
        pmf.append(pmf[-1] * (r - j) * q / ((j + 1) * (1 - q)))
    suffix = [mp.mpf(0)] * (r + 2)
    for j in range(r, -1, -1):
        suffix[j] = suffix[j + 1] + pmf[j]

    def f(u):
        return mp.mpf(1) if u <= 0 else (suffix[u] if u <= r else mp.mpf(0))

    fv = f(v)
    if v == 0:
        return mp.mpf(1)
    # i > v: f(v - i) = 1, so (1 - f(v)) / i is largest at i = v; the max over i in [1, m] is over [1, v]
    alpha = max((f(v - i) - fv) / i for i in range(1, v + 1))
    return min(fv + 2 * m * delta * alpha, mp.mpf(1))


def mp_steinke_bound(m, r, v, delta, beta):
    """sup{eps : p(eps) <= beta} by bisection in mpmath (p increases in eps)."""
    if mp_steinke_p(m, r, v, 0, delta) > beta:
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(1)
    while mp_steinke_p(m, r, v, hi, delta) <= beta:
        lo, hi = hi, 2 * hi
    for _ in range(48):
        mid = (lo + hi) / 2
        if mp_steinke_p(m, r, v, mid, delta) <= beta:
            lo = mid
        else:
            hi = mid
    return lo


def mp_fdp_rejects(m, k, c, tau, mu):
    """Mahloujifar, Melis, Chaudhuri 2024 with the Gaussian trade-off curve: B^-1(y) = Phi(Phi^-1(y) - mu);
    the recursion from (tau c / m, tau (k - c) / m) down to level 0; rejected iff r_0 + h_0 > k / m."""
    def binv(y):
        if y >= 1:
            return mp.mpf(1)
        return mp.ncdf(mp.sqrt(2) * mp.erfinv(2 * y - 1) - mu)

    r, h = mp.mpf(tau) * c / m, mp.mpf(tau) * (k - c) / m
    for i in range(c - 1, -1, -1):
        hn = max(h, binv(r))
        r = min(r + mp.mpf(i) / (k - i) * (hn - h), mp.mpf(1))
        h = hn
    return r + h > mp.mpf(k) / m


# ------------------------------------------------------------------------------------------------
# (a) the formulas

@pytest.mark.parametrize("m, r, v, eps, delta", [
    (100, 50, 40, 0.7, 0.0), (100, 100, 90, 1.5, 1e-4), (1000, 300, 250, 1.2, 1e-5),
    (1000, 300, 200, 0.3, 1e-6), (50, 20, 20, 2.0, 1e-3), (400, 400, 300, 1.0, 1e-5),
])
def test_steinke_p_value_matches_mpmath(m, r, v, eps, delta):
    got = one_run.steinke_p_value(canaries=m, guesses=r, correct=v, epsilon=eps, delta=delta)
    want = float(mp_steinke_p(m, r, v, eps, delta))
    assert got == pytest.approx(want, rel=1e-9, abs=1e-300)
    assert got >= want * (1 - 1e-12)  # the windowed sum is never below the exact p-value


@pytest.mark.parametrize("m, r, v, delta, confidence", [
    (100, 50, 40, 0.0, 0.95), (100, 100, 90, 1e-4, 0.95), (1000, 300, 250, 1e-5, 0.99),
    (1000, 300, 200, 1e-6, 0.9), (50, 20, 20, 1e-3, 0.95), (400, 400, 300, 1e-5, 0.5), (1000, 600, 600, 1e-5, 0.95),
])
def test_steinke_bound_matches_mpmath_and_never_exceeds_it(m, r, v, delta, confidence):
    got = one_run.steinke_epsilon_lower_bound(canaries=m, guesses=r, correct=v, delta=delta, confidence=confidence)
    want = float(mp_steinke_bound(m, r, v, delta, 1 - confidence))
    assert got <= want + 1e-12
    assert got == pytest.approx(want, abs=1e-7)


def test_steinke_delta_zero_is_the_clopper_pearson_precision_bound():
    # delta = 0: P[Bin(r, q) >= v] <= beta  <=>  q <= BetaInv(beta; v, r - v + 1)
    for r, v in [(100, 80), (1000, 700), (37, 37)]:
        q_lo = stats.beta.ppf(0.05, v, r - v + 1)
        got = one_run.steinke_epsilon_lower_bound(canaries=2000, guesses=r, correct=v, delta=0.0, confidence=0.95)
        assert got == pytest.approx(special.logit(q_lo), abs=1e-7)


@pytest.mark.parametrize("m, k, c, conf", [(200, 60, 50, 0.95), (1000, 125, 110, 0.99), (500, 500, 330, 0.9)])
def test_fdp_gaussian_bound_matches_mpmath_recursion(m, k, c, conf):
    b = one_run.fdp_epsilon_lower_bound(canaries=m, guesses=k, correct=c, delta=1e-5, confidence=conf)
    assert b.family == "gaussian" and b.parameter > 0
    assert mp_fdp_rejects(m, k, c, 1 - conf, b.parameter)  # the returned mu is rejected ...
    assert not mp_fdp_rejects(m, k, c, 1 - conf, b.parameter + 1e-5)  # ... and is the largest, to 1e-5
    # its eps(delta) is the mu-GDP conversion, rounded down
    assert b.epsilon <= float(one_run.bounds.epsilon_from_mu(b.parameter, 1e-5)) + 1e-12


# jax_privacy tests/auditing_test.py::test_epsilon_one_run_close: 10,000 held-in scores N(shift, 1) and
# 10,000 held-out N(0, 1) on a deterministic grid, significance 0.05, delta 1e-6, Bonferroni over the
# thresholds of the ROC's Pareto frontier; expected values from that test (its tolerance: rtol 1e-5).
JAX_EXPECTED = [(1, False, 1.13346), (1, True, 2.164749), (2, False, 2.311945), (2, True, 4.7218075),
                (4, False, 4.395568), (4, True, 9.133752)]


def _jax_pipeline(shift: float, fdp: bool) -> float:
    n = 10_000
    grid = np.linspace(0, 1, n, endpoint=False) + 1 / (2 * n)
    out_s, in_s = stats.norm.ppf(grid), stats.norm.ppf(grid) + shift
    thr = np.concatenate([np.union1d(in_s, out_s), [np.inf]])
    fn = np.searchsorted(np.sort(in_s), thr, side="left")
    tn = np.searchsorted(np.sort(out_s), thr, side="left")
    pts = np.stack([fn, tn], axis=1).astype(float)
    idx = np.arange(len(pts))
    while len(idx) > 2:  # points not dominated by the chord of their neighbours (concave frontier)
        d = np.diff(pts[idx], axis=0)
        dom = d[:-1, 1] * d[1:, 0] - d[1:, 1] * d[:-1, 0] <= 0
        if not dom.any():
            break
        idx = idx[np.r_[True, ~dom, True]]
    tp, fp = n - fn[idx], n - tn[idx]
    sig = 0.05 / len(idx)
    best = 0.0
    order = np.argsort(-(tp / np.maximum(tp + fp, 1)))
    for i in order:
        k = int(tp[i] + fp[i])
        if k == 0 or tp[i] / k <= special.expit(best):
            continue  # its raw precision cannot beat the best bound so far
        if fdp:
            e = one_run.fdp_epsilon_lower_bound(canaries=2 * n, guesses=k, correct=int(tp[i]), delta=1e-6,
                                                confidence=1 - sig).epsilon
        else:
            e = one_run.steinke_epsilon_lower_bound(canaries=2 * n, guesses=k, correct=int(tp[i]), delta=1e-6,
                                                    confidence=1 - sig)
        best = max(best, e)
    return best


@pytest.mark.parametrize("shift, fdp, expected", JAX_EXPECTED)
def test_reproduces_jax_privacy_test_values(shift, fdp, expected):
    got = _jax_pipeline(shift, fdp)
    assert got == pytest.approx(expected, rel=1e-5)


# ------------------------------------------------------------------------------------------------
# (b) monotonicity

def test_bound_monotone_in_correct_guesses_and_decreasing_in_confidence():
    for delta in (0.0, 1e-5):
        lbs = [one_run.steinke_epsilon_lower_bound(canaries=1000, guesses=200, correct=v, delta=delta, confidence=0.95)
               for v in range(90, 201, 5)]
        assert (np.diff(lbs) >= 0).all() and lbs[0] == 0.0 and lbs[-1] > 2
        by_conf = [one_run.steinke_epsilon_lower_bound(canaries=1000, guesses=200, correct=170, delta=delta,
                                                       confidence=c) for c in (0.5, 0.8, 0.95, 0.99, 0.999)]
        assert (np.diff(by_conf) <= 0).all() and by_conf[-1] < by_conf[0]
    by_delta = [one_run.steinke_epsilon_lower_bound(canaries=1000, guesses=200, correct=170, delta=d, confidence=0.95)
                for d in (0.0, 1e-7, 1e-5, 1e-4)]
    assert (np.diff(by_delta) <= 0).all()
    mus = [one_run.fdp_epsilon_lower_bound(canaries=1000, guesses=200, correct=v, delta=1e-5, confidence=0.95).parameter
           for v in (120, 150, 180, 200)]
    assert (np.diff(mus) >= 0).all()


def test_nothing_certified_is_zero_never_nan():
    for v in (0, 50, 100):
        assert one_run.steinke_epsilon_lower_bound(canaries=200, guesses=200, correct=v, delta=0.0, confidence=0.95) == 0.0
        b = one_run.fdp_epsilon_lower_bound(canaries=200, guesses=200, correct=v, delta=0.0, confidence=0.95)
        assert b.parameter == 0.0 and b.epsilon == 0.0
    assert one_run.steinke_epsilon_lower_bound(canaries=5, guesses=0, correct=0, delta=0.0, confidence=0.95) == 0.0
    # all guesses right: large but finite
    e = one_run.steinke_epsilon_lower_bound(canaries=10**5, guesses=10**5, correct=10**5, delta=0.0, confidence=0.95)
    assert math.isfinite(e) and e == pytest.approx(special.logit(0.05 ** (1e-5)), abs=1e-6)
    g = one_run.fdp_epsilon_lower_bound(canaries=1000, guesses=100, correct=100, delta=0.0, confidence=0.95)
    assert g.parameter > 0 and g.epsilon is None  # mu-GDP has no finite pure eps


# ------------------------------------------------------------------------------------------------
# (c) soundness

def test_exact_soundness_on_randomized_response():
    """Randomized response is the worst case of eps-DP: with every canary guessed, #correct ~ Bin(m, q)
    exactly, so the probability that each bound exceeds the true eps is computed exactly (no Monte
    Carlo) and must be at most 1 - confidence. The Steinke bound is nearly exact there."""
    m, eps, beta = 100, 1.0, 0.3
    pmf = stats.binom.pmf(np.arange(m + 1), m, special.expit(eps))
    for fn in (lambda v: one_run.steinke_epsilon_lower_bound(canaries=m, guesses=m, correct=v, delta=0.0,
                                                             confidence=1 - beta),
               lambda v: one_run.fdp_epsilon_lower_bound(canaries=m, guesses=m, correct=v, delta=0.0,
                                                         confidence=1 - beta, family="approx-dp").parameter):
        rate = sum(pmf[v] for v in range(m + 1) if fn(v) > eps)
        assert rate <= beta
    steinke_rate = sum(pmf[v] for v in range(m + 1)
                       if one_run.steinke_epsilon_lower_bound(canaries=m, guesses=m, correct=v, delta=0.0,
                                                              confidence=1 - beta) > eps)
    assert steinke_rate > 0.25  # tight: close to beta = 0.3
    # Gaussian mechanism, every canary guessed: #correct ~ Bin(m, Phi(mu / 2)); the mu bound's rate
    mu = 0.5
    pmf = stats.binom.pmf(np.arange(21), 20, stats.norm.cdf(mu / 2))
    rate = sum(pmf[v] for v in range(21) if one_run.fdp_epsilon_lower_bound(
        canaries=20, guesses=20, correct=v, delta=0.0, confidence=1 - beta).parameter > mu)
    assert rate <= beta


def laplace_mechanism(eps):
    """Canary i observed as S_i + Laplace(2 / eps): a bit flip moves the mean by 2, so eps-DP per bit."""
    return lambda bits, rng: bits + rng.laplace(0.0, 2.0 / eps, size=bits.size)


def gaussian_mechanism(mu):
    """Canary i observed as S_i + N(0, (2 / mu)^2): mu-GDP per bit."""
    return lambda bits, rng: bits + rng.normal(0.0, 2.0 / mu, size=bits.size)


def _max_exceedances(n, beta):
    """A count of exceedances that a sound bound exceeds with probability < 1e-3 over n audits."""
    return int(stats.binom.ppf(0.999, n, beta))


def test_soundness_repeated_one_run_audits_laplace():
    n, conf = 60, 0.8
    lbs = np.array([one_run.one_run_audit(laplace_mechanism(1.0), canaries=1000, epsilon=1.0, confidence=conf,
                                          seed=s, fdp=False).epsilon_lower_bound for s in range(n)])
    assert (lbs > 1.0).sum() <= _max_exceedances(n, 1 - conf)
    assert np.median(lbs) > 0.6  # and not vacuous


def test_soundness_and_tightness_of_fdp_on_gaussian_mechanisms():
    """(e): on mu-GDP mechanisms the Gaussian-family bound exceeds mu at most at the confidence's rate,
    and its eps(delta) is at least the Steinke bound (tighter) in most runs and in the median."""
    n, conf, mu, delta = 40, 0.8, 1.0, 1e-5
    rs = [one_run.one_run_audit(gaussian_mechanism(mu), canaries=1000, epsilon=10.0, delta=delta, confidence=conf,
                                seed=s) for s in range(n)]
    mus = np.array([r.mu_lower_bound for r in rs])
    steinke = np.array([r.epsilon_lower_bound for r in rs])
    fdp = np.array([r.epsilon_fdp for r in rs])
    approx = np.array([r.epsilon_fdp_approx_dp for r in rs])
    true_eps = one_run.bounds.epsilon_from_mu(mu, delta)
    assert (mus > mu).sum() <= _max_exceedances(n, 1 - conf)
    assert (steinke > true_eps).sum() <= _max_exceedances(n, 1 - conf)
    assert (approx > true_eps).sum() <= _max_exceedances(n, 1 - conf)
    assert (fdp >= steinke).mean() >= 0.9 and np.median(fdp) > 1.2 * np.median(steinke)


# ------------------------------------------------------------------------------------------------
# (c') the f-DP (Gaussian) bound for predictable guesses (docs/auditing.md#the-f-dp-bound-for-predictable-guesses)

def mp_gdp_delta(eps, mu):
    """delta(eps) of mu-GDP (Dong, Roth, Su 2019, Cor. 2.13) in mpmath."""
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    return mp.ncdf(-eps / mu + mu / 2) - mp.e ** eps * mp.ncdf(-eps / mu - mu / 2)


def mp_predictable_gdp_p(m, r, mu):
    """inf over eps >= 0 of q^r + m delta_mu(eps) / (1 + e^eps), q = e^eps / (1 + e^eps): a grid of step 1/8 on
    [0, 32], then golden-section search around its best point (mpmath, written from the docs' formula)."""
    def p(e):
        q = mp.e ** e / (1 + mp.e ** e)
        return min(mp.mpf(1), q ** r + m * mp_gdp_delta(e, mu) / (1 + mp.e ** e))
    grid = [mp.mpf(j) / 8 for j in range(32 * 8 + 1)]
    vals = [p(e) for e in grid]
    j = min(range(len(vals)), key=lambda i: vals[i])
    a, b = grid[max(j - 1, 0)], grid[min(j + 1, len(grid) - 1)]
    g = (mp.sqrt(5) - 1) / 2
    for _ in range(80):
        c, d = b - g * (b - a), a + g * (b - a)
        if p(c) < p(d):
            b = d
        else:
            a = c
    return min(vals[j], p((a + b) / 2))


@pytest.mark.parametrize("m, r, delta, conf", [(64, 64, 1e-5, 0.95), (1000, 20, 1e-5, 0.95), (1000, 100, 1e-6, 0.9),
                                               (200, 12, 1e-3, 0.95)])
def test_predictable_fdp_bound_matches_mpmath(m, r, delta, conf):
    """The returned mu is rejected by the exact p-value and mu + 1e-5 is not (the search loses < 1e-5); its
    eps(delta) is at most the exact eps(delta) of mu-GDP and within 1e-6 of it."""
    b = one_run.predictable_fdp_lower_bound(canaries=m, prefix=r, delta=delta, confidence=conf)
    assert b.family == "gaussian" and b.parameter > 0
    assert mp_predictable_gdp_p(m, r, b.parameter) <= 1 - conf
    assert mp_predictable_gdp_p(m, r, b.parameter + 1e-5) > 1 - conf
    assert mp_gdp_delta(b.epsilon, b.parameter) >= delta and mp_gdp_delta(b.epsilon + 1e-6, b.parameter) < delta
    got = one_run.predictable_fdp_p_value(canaries=m, prefix=r, mu=b.parameter)
    assert got == pytest.approx(float(mp_predictable_gdp_p(m, r, b.parameter)), rel=1e-6)


def test_predictable_fdp_one_guess_is_phi_mu_over_two_and_edges():
    """One canary, one guess: the bound is exactly Phi(mu / 2) = 1/2 + 1/2 max_a (1 - a - G_mu(a)), the best any guess
    of a mu-GDP bit does (attained by the Gaussian mechanism), so nothing is lost there."""
    a = np.linspace(0.0, 1.0, 200001)
    for mu in (0.3, 1.0, 2.5):
        g_mu = stats.norm.cdf(stats.norm.ppf(1 - a) - mu)           # the trade-off curve G_mu
        q_f = 0.5 + 0.5 * float(np.max(1 - a - g_mu))
        assert q_f == pytest.approx(stats.norm.cdf(mu / 2), abs=1e-9)
        assert one_run.predictable_fdp_p_value(canaries=1, prefix=1, mu=mu) == pytest.approx(q_f, abs=1e-9)
    assert one_run.predictable_fdp_p_value(canaries=5, prefix=3, mu=0.0) == pytest.approx(0.125)
    assert one_run.predictable_fdp_lower_bound(canaries=10, prefix=0, delta=0.0, confidence=0.95).parameter == 0.0
    assert one_run.predictable_fdp_lower_bound(canaries=10, prefix=4, delta=0.0, confidence=0.95).parameter == 0.0
    lbs = [one_run.predictable_fdp_lower_bound(canaries=1000, prefix=r, delta=1e-5, confidence=0.95) for r in (5, 20, 100)]
    assert 0 < lbs[0].parameter < lbs[1].parameter < lbs[2].parameter       # more leading right guesses, more mu
    assert one_run.predictable_fdp_lower_bound(canaries=64, prefix=64, delta=0.0, confidence=0.95).epsilon is None


def _prefix(right, guessed):
    """Leading right guesses of each row (guesses taken in canary order; ``guessed`` marks the canaries guessed)."""
    out = np.empty(right.shape[0], dtype=np.int64)
    for k in range(right.shape[0]):
        g = right[k][guessed[k]]
        wrong = np.flatnonzero(~g)
        out[k] = g.size if wrong.size == 0 else wrong[0]
    return out


def _first_rejecting_prefix(m, mu, conf, fn):
    """The least prefix r at which ``fn(r)`` (a mu lower bound) exceeds mu (bounds increase with r)."""
    lo, hi = 0, m
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fn(mid) > mu:
            hi = mid
        else:
            lo = mid
    return hi


def test_predictable_fdp_bound_is_sound_where_phi_mu_over_two_to_the_r_is_not():
    """Simulated predictable guessers on mu-GDP mechanisms (mu = 1): the bound exceeds the true mu at most at the
    confidence's rate. The product Phi(mu / 2)^r (one guess's best, r times) would reject the true mu far more often:
    a guesser that abstains where the output says little is right more often than Phi(mu / 2) where it guesses.
    (1) The Gaussian mechanism Y_i = S_i mu / 2 + N(0, 1), exactly mu-GDP in each bit: guess the sign of Y_i where
    |Y_i| > 2.5. (2) A mu-GDP mechanism that is not Gaussian: canary i flagged with probability p and then its bit
    through randomized response at eps0 = 2.5, else nothing (delta(eps) <= delta_mu(eps) at every eps, checked), the
    flagged canaries guessed in order, each reading whether the previous canary's bit was +1 (predictable)."""
    mu, conf, n = 1.0, 0.95, 2000
    rng = np.random.default_rng(5)
    m = 1000
    ours = _first_rejecting_prefix(m, mu, conf, lambda r: one_run.predictable_fdp_lower_bound(
        canaries=m, prefix=r, delta=0.0, confidence=conf).parameter)
    naive = _first_rejecting_prefix(m, mu, conf, lambda r: 2 * stats.norm.ppf((1 - conf) ** (1 / r)))
    assert (ours, naive) == (98, 9)
    allowed = (1 - conf) + 3 * math.sqrt(conf * (1 - conf) / n)
    # (1) Gaussian
    s = rng.choice([-1, 1], size=(n, m))
    y = mu / 2 * s + rng.standard_normal((n, m))
    pre = _prefix(np.sign(y) == s, np.abs(y) > 2.5)
    assert np.mean(pre >= ours) <= allowed
    assert np.mean(pre >= naive) > 0.4          # the product bound: above 0.05 by far
    # (2) flagged randomized response, within mu-GDP
    eps0 = 2.5
    grid = np.linspace(0.0, 20.0, 20001)
    rr = np.maximum(0.0, (math.exp(eps0) - np.exp(grid)) / (1 + math.exp(eps0)))
    dmu = np.array([one_run.bounds.gdp_delta(float(e), mu) for e in grid])
    p = 0.99 * float(np.min(dmu[rr > 0] / rr[rr > 0]))
    assert p > 0.04 and np.all(p * rr <= dmu)
    s = rng.choice([-1, 1], size=(n, m))
    flagged = rng.random((n, m)) < p
    right = rng.random((n, m)) < special.expit(eps0)
    steer = np.concatenate([np.ones((n, 1), dtype=bool), s[:, :-1] > 0], axis=1) | (np.arange(m) % 3 != 0)
    pre = _prefix(right, flagged & steer)
    assert np.mean(pre >= ours) <= allowed
    assert np.mean(pre >= naive) > 0.4


# ------------------------------------------------------------------------------------------------
# (d) power and verdicts

LAPLACE_ONE = LossStructure((1.0,), 0.0)  # one Laplace coordinate whose mean moves by 1 x its scale: eps 1


def test_power_a_mechanism_leaking_4x_fails():
    r = one_run.one_run_audit(laplace_mechanism(4.0), canaries=1000, epsilon=1.0, seed=0,
                              per_canary_structure=LAPLACE_ONE, fdp=False)
    assert r.verdict == "fails" and r.epsilon_lower_bound > 2.0
    assert "violation certified" in r.reason


def test_correct_mechanism_passes_with_its_structure_and_is_inconclusive_without():
    r = one_run.one_run_audit(laplace_mechanism(1.0), canaries=1000, epsilon=1.0, seed=3,
                              per_canary_structure=LAPLACE_ONE, fdp=False)
    assert r.verdict == "passes" and r.power.has_power and r.power.achievable_lower_bound > 1.0
    r2 = one_run.one_run_audit(laplace_mechanism(1.0), canaries=1000, epsilon=1.0, seed=3, fdp=False)
    assert r2.verdict == "inconclusive" and r2.power.criterion == "unknown"
    assert r2.epsilon_lower_bound == r.epsilon_lower_bound


def test_power_criterion_predicts_simulated_median_and_needed_canaries():
    p = one_run.one_run_power(1000, None, 1.0, 0.0, 0.95, LAPLACE_ONE)
    sims = [one_run.one_run_audit(laplace_mechanism(2.0), canaries=1000, epsilon=1.0, seed=s,
                                  fdp=False).epsilon_lower_bound for s in range(21)]
    assert p.has_power and abs(np.median(sims) - p.achievable_lower_bound) < 0.15
    # a canary whose loss is spread over 10 coordinates (pure eps still 1) needs more canaries
    spread = one_run.one_run_power(1000, None, 1.0, 0.0, 0.95, LossStructure((0.1,) * 10, 0.0))
    assert not spread.has_power and spread.trials_needed is not None and spread.trials_needed > 1000
    assert spread.achievable_lower_bound < p.achievable_lower_bound


# ------------------------------------------------------------------------------------------------
# protocol, guesses and results

def test_protocol_seeds_and_determinism():
    bits = one_run.draw_bits(7, 50)
    a, _ = np.random.SeedSequence(7).spawn(2)
    assert np.array_equal(bits, np.random.default_rng(a).integers(0, 2, size=50, dtype=np.int64) * 2 - 1)
    seen = {}

    def mech(b, rng):
        seen["bits"] = b.copy()
        return b + rng.laplace(0, 2.0, size=b.size)

    r1 = one_run.one_run_audit(mech, canaries=50, epsilon=1.0, seed=7)
    assert np.array_equal(seen["bits"], bits)
    r2 = one_run.one_run_audit(mech, canaries=50, epsilon=1.0, seed=7)
    d1, d2 = r1.to_dict(), r2.to_dict()
    d1.pop("seconds"), d2.pop("seconds")
    assert d1 == d2
    json.dumps(r1.to_dict(), allow_nan=False)  # strict JSON
    # a score function: the observation is a dict here
    r3 = one_run.one_run_audit(lambda b, rng: {"x": mech(b, rng)}, canaries=50, epsilon=1.0, seed=7,
                               score=lambda o: o["x"])
    assert r3.epsilon_lower_bound == r1.epsilon_lower_bound


def test_to_dict_is_strict_json_with_none_for_missing_eps():
    r = one_run.one_run_audit(gaussian_mechanism(3.0), canaries=200, epsilon=1.0, delta=0.0, seed=1)
    d = r.to_dict()
    assert r.epsilon_fdp is None and d["epsilon_fdp"] is None and r.mu_lower_bound > 0
    assert r.verdict == "fails"
    json.dumps(d, allow_nan=False)
    assert len(d["grid"]) == len(one_run.guess_grid(200))


def test_guesses_grid_and_best_guesses():
    assert one_run.guess_grid(1000) == (1000, 500, 250, 125, 63, 32, 16)
    assert one_run.guess_grid(10) == (10,)
    g = one_run.best_guesses([0.5, -2.0, 0.0, 2.0, -0.1], max_guesses=3)
    assert g.tolist() == [1, -1, 0, 1, 0]  # ties in |score| broken by index; exactly 3 guesses
    assert one_run.best_guesses([0.0, 0.0], max_guesses=1).tolist() == [1, 0]  # a zero score guesses +1
    r = one_run.one_run_audit_scores(np.array([3.0, -3.0, 1.0, -1.0] * 25), np.array([1, -1, 1, -1] * 25),
                                     epsilon=1.0, guesses_rule=[50, 100], fdp=False)
    assert [(row.guesses, row.correct) for row in r.grid] == [(50, 50), (100, 100)]


@pytest.mark.parametrize("call, name", [
    (lambda: one_run.steinke_epsilon_lower_bound(canaries=0, guesses=0, correct=0, delta=0, confidence=0.9), "canaries"),
    (lambda: one_run.steinke_epsilon_lower_bound(canaries=10, guesses=11, correct=0, delta=0, confidence=0.9), "guesses"),
    (lambda: one_run.steinke_epsilon_lower_bound(canaries=10, guesses=5, correct=6, delta=0, confidence=0.9), "correct"),
    (lambda: one_run.steinke_epsilon_lower_bound(canaries=10, guesses=5, correct=2.5, delta=0, confidence=0.9), "correct"),
    (lambda: one_run.steinke_epsilon_lower_bound(canaries=10, guesses=5, correct=2, delta=1.0, confidence=0.9), "delta"),
    (lambda: one_run.steinke_epsilon_lower_bound(canaries=10, guesses=5, correct=2, delta=0, confidence=1.0), "confidence"),
    (lambda: one_run.steinke_epsilon_lower_bound(canaries=10, guesses=5, correct=2, delta=0, confidence=True),
     "confidence"),
    (lambda: one_run.steinke_p_value(canaries=10, guesses=5, correct=2, epsilon=-1, delta=0), "epsilon"),
    (lambda: one_run.steinke_p_value(canaries=10, guesses=5, correct=2, epsilon=math.nan, delta=0), "epsilon"),
    (lambda: one_run.fdp_epsilon_lower_bound(canaries=10, guesses=5, correct=2, delta=0, confidence=0.9,
                                             family="laplace"), "family"),
    (lambda: one_run.best_guesses([1.0, math.nan], max_guesses=1), "scores"),
    (lambda: one_run.best_guesses([1.0, 2.0], max_guesses=3), "max_guesses"),
    (lambda: one_run.guess_grid(0), "canaries"),
    (lambda: one_run.one_run_audit_scores([1.0, 2.0], [1, 0], epsilon=1.0), "bits"),
    (lambda: one_run.one_run_audit_scores([1.0, 2.0], [1, -1], epsilon=0.0), "epsilon"),
    (lambda: one_run.one_run_audit_scores([1.0, 2.0], [1, -1], epsilon=1.0, guesses_rule=[3]), "guesses_rule"),
    (lambda: one_run.one_run_audit_scores([1.0, 2.0], [1, -1], epsilon=1.0, guesses_rule=[1, 1]), "guesses_rule"),
    (lambda: one_run.one_run_audit(42, canaries=10, epsilon=1.0), "mechanism"),
    (lambda: one_run.one_run_audit(lambda b, rng: b[:5] * 1.0, canaries=10, epsilon=1.0), "mechanism output"),
    (lambda: one_run.one_run_audit(lambda b, rng: b * 1.0, canaries=10, epsilon=1.0, score=lambda o: o[:3]),
     "score(observation)"),
    (lambda: one_run.one_run_audit(lambda b, rng: b * 1.0, canaries=10, epsilon=1.0, seed=-1), "seed"),
    (lambda: one_run.one_run_power(100, None, 1.0, 0.0, 0.95, "laplace"), "per_canary_structure"),
])
def test_bad_input_is_one_privacct_error_line(call, name):
    with pytest.raises(PrivacctError) as err:
        call()
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(name) and "got" in msg


def test_public_names_are_exported():
    import privacct.audits as pa

    for n in ("OneRunResult", "one_run_audit", "one_run_audit_scores", "one_run_power", "steinke_epsilon_lower_bound",
              "steinke_p_value", "fdp_epsilon_lower_bound", "best_guesses", "guess_grid"):
        assert getattr(pa, n) is getattr(one_run, n)
