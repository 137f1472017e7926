"""Closed-form privacy formulas (pure functions, no state). Every function cites its source.

Conventions: ``eps0`` is the per-release pure-DP level of a Laplace release (Delta_1 / b);
``mu`` the Gaussian ratio Delta_2 / sigma; ``rho`` a zCDP parameter. Where a formula is only an
upper bound over a free parameter (an order alpha), any numerical imprecision of the optimiser
makes the bound looser, never invalid; where a root is found by bisection, the private side of
the bracket is returned (conservative).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from ..errors import NumericalError

_BISECT_ITERS = 200


# --------------------------------------------------------------------------- Laplace
def laplace_delta(eps: float, eps0: float) -> float:
    """Tight hockey-stick profile of one Laplace release with eps0 = Delta_1 / b.

    delta(eps) = 1 - exp((eps - eps0) / 2) for 0 <= eps < eps0, and 0 for eps >= eps0
    (privacy profile of the Laplace mechanism; Balle, Barthe, Gaboardi 2018, re-derived in the
    team notes, accounting-and-auditing-references.md section 4 (iv)).
    """
    if eps >= eps0:
        return 0.0
    return float(-math.expm1((eps - eps0) / 2.0))


# --------------------------------------------------------------------------- Gaussian
def gaussian_delta(eps: float, mu: float) -> float:
    """Exact delta(eps) of a Gaussian mechanism with Delta / sigma = mu.

    Balle & Wang (2018, ICML, arXiv 1805.06530), Theorem 8:
    delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu); the same curve as mu-GDP
    (Dong, Roth, Su 2019, Cor. 2.13). Evaluated with log-CDFs for stability.
    """
    if mu <= 0:
        return 0.0
    a = mu / 2.0 - eps / mu
    b = -mu / 2.0 - eps / mu
    la = special.log_ndtr(a)
    lb = eps + special.log_ndtr(b)
    if lb >= la:
        return 0.0
    return float(math.exp(la) * -math.expm1(lb - la))


def gaussian_epsilon(delta: float, mu: float) -> float:
    """Smallest eps >= 0 with gaussian_delta(eps, mu) <= delta (Balle & Wang 2018, Thm 8).

    Bisection on eps; the returned value is the upper (private) end of the final bracket.
    """
    if delta >= 1.0:
        return 0.0
    if delta <= 0.0:
        return math.inf
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    lo, hi = 0.0, max(1.0, mu * mu)
    while gaussian_delta(hi, mu) > delta:
        lo, hi = hi, hi * 2.0
        if hi > 1e8:
            raise NumericalError(f"gaussian_epsilon: no finite epsilon for delta={delta!r}, mu={mu!r}")
    for _ in range(_BISECT_ITERS):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if gaussian_delta(mid, mu) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def gaussian_mu_for(epsilon: float, delta: float) -> float:
    """Largest mu (= Delta / sigma) whose exact curve has delta(epsilon) <= delta (Balle & Wang 2018).

    Bisection on mu; returns the lower (private) end of the bracket.
    """
    lo, hi = 0.0, 1.0
    while gaussian_delta(epsilon, hi) <= delta:
        lo, hi = hi, hi * 2.0
        if hi > 1e8:
            raise NumericalError("gaussian_mu_for: bracket search failed")
    for _ in range(_BISECT_ITERS):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if gaussian_delta(epsilon, mid) <= delta:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------- zCDP
def zcdp_epsilon_bs16(rho: float, delta: float) -> float:
    """Bun & Steinke (2016, arXiv 1605.02065), Prop. 1.3: eps = rho + 2 sqrt(rho ln(1/delta))."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def _cks_objective(log_am1: float, rho: float, log1d: float) -> float:
    a = 1.0 + math.exp(log_am1)
    am1 = a - 1.0
    return a * rho + (log1d + am1 * math.log1p(-1.0 / a) - math.log(a)) / am1


def zcdp_epsilon_cks20(rho: float, delta: float) -> float:
    """Canonne, Kamath, Steinke (2020, arXiv 2004.00010), Prop. 12 / Cor. 13:

    eps = inf_{alpha > 1} [ alpha rho + (ln(1/delta) + (alpha - 1) ln(1 - 1/alpha) - ln alpha) / (alpha - 1) ].

    Every alpha gives a valid bound, so the optimiser's imprecision can only loosen it. The
    search runs over log(alpha - 1) on a grid, then a bounded scalar refinement.
    """
    if rho == 0.0:
        return 0.0
    log1d = math.log(1.0 / delta)
    grid = np.linspace(-12.0, 14.0, 261)
    vals = [_cks_objective(g, rho, log1d) for g in grid]
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    best = vals[i]
    if hi > lo:
        res = optimize.minimize_scalar(_cks_objective, bounds=(lo, hi), args=(rho, log1d), method="bounded",
                                       options={"xatol": 1e-10})
        if res.success and math.isfinite(res.fun):
            best = min(best, float(res.fun))
    return max(best, 0.0)


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smaller of the Bun-Steinke and Canonne-Kamath-Steinke conversions (both valid)."""
    return min(zcdp_epsilon_bs16(rho, delta), zcdp_epsilon_cks20(rho, delta))


def zcdp_delta(rho: float, eps: float) -> float:
    """Canonne, Kamath, Steinke (2020), Prop. 12:
    delta = inf_{alpha > 1} exp((alpha - 1)(alpha rho - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha.

    Any alpha gives a valid bound; the result is clamped to [0, 1].
    """
    if rho == 0.0:
        return 0.0

    def logd(log_am1: float) -> float:
        a = 1.0 + math.exp(log_am1)
        am1 = a - 1.0
        return am1 * (a * rho - eps) - math.log(am1) + a * math.log1p(-1.0 / a)

    grid = np.linspace(-12.0, 14.0, 261)
    vals = [logd(g) for g in grid]
    i = int(np.argmin(vals))
    best = vals[i]
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(logd, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    if res.success and math.isfinite(res.fun):
        best = min(best, float(res.fun))
    return float(min(1.0, math.exp(best)))


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """Largest rho with zcdp_epsilon(rho, delta) <= epsilon (bisection; the private end)."""
    lo, hi = 0.0, max(epsilon, 1e-12)
    while zcdp_epsilon(hi, delta) <= epsilon:
        lo, hi = hi, hi * 2.0
    for _ in range(_BISECT_ITERS):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if zcdp_epsilon(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------- advanced composition
def drv_epsilon(eps_list: np.ndarray, delta_prime: float) -> float:
    """Dwork, Rothblum, Vadhan (2010), Thm III.3 / Dwork & Roth (2014) Thm 3.20, heterogeneous form:

    eps' = sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^{eps_i} - 1), with delta' added to the
    sum of the releases' deltas.
    """
    e = np.asarray(eps_list, dtype=float)
    with np.errstate(over="ignore"):
        drift = float(np.sum(e * np.expm1(e)))  # inf for huge eps_i: a valid (useless) bound
    return float(math.sqrt(2.0 * math.log(1.0 / delta_prime) * float(np.sum(e * e))) + drift)


def kov_closed_form_epsilon(eps_list: np.ndarray, delta_tilde: float) -> float:
    """Kairouz, Oh, Viswanath (2015, arXiv 1311.0776), Theorem 3.5 (heterogeneous, closed form):

    eps' = min{ sum eps_i,
                sum (e^{eps_i}-1) eps_i/(e^{eps_i}+1) + sqrt(2 sum eps_i^2 ln(e + sqrt(sum eps_i^2)/delta~)),
                sum (e^{eps_i}-1) eps_i/(e^{eps_i}+1) + sqrt(2 sum eps_i^2 ln(1/delta~)) },
    valid with total delta 1 - (1 - delta~) prod(1 - delta_i).
    """
    e = np.asarray(eps_list, dtype=float)
    s1 = math.fsum(e)
    s2 = float(np.sum(e * e))
    drift = float(np.sum(np.tanh(e / 2.0) * e))  # (e^x - 1)/(e^x + 1) = tanh(x/2)
    if delta_tilde <= 0:
        return s1
    b2 = drift + math.sqrt(2.0 * s2 * math.log(math.e + math.sqrt(s2) / delta_tilde))
    b3 = drift + math.sqrt(2.0 * s2 * math.log(1.0 / delta_tilde))
    return min(s1, b2, b3)


def kov_optimal_log_delta_star(k: int, eps0: float, i: int) -> float:
    """log of delta*_i of Kairouz, Oh, Viswanath (2015), Theorem 3.3 (homogeneous, optimal):

    delta*_i = sum_{l=0}^{i-1} C(k, l) (e^{(k-l) eps0} - e^{(k-2i+l) eps0}) / (1 + e^{eps0})^k,
    so that k eps0-DP releases compose to ((k - 2i) eps0, 1 - (1-delta0)^k (1 - delta*_i)).
    """
    if i <= 0:
        return -math.inf
    l = np.arange(i, dtype=float)
    log_binom = special.gammaln(k + 1.0) - special.gammaln(l + 1.0) - special.gammaln(k - l + 1.0)
    log_terms = log_binom + (k - l) * eps0 + np.log(-np.expm1((2.0 * l - 2.0 * i) * eps0))
    return float(special.logsumexp(log_terms) - k * np.logaddexp(0.0, eps0))


def kov_optimal_epsilon(k: int, eps0: float, delta: float) -> float:
    """Smallest (k - 2i) eps0 whose optimal delta (KOV 2015 Thm 3.3, delta0 = 0) is <= delta.

    delta*_i increases with i, so i is found by bisection over 0..floor(k/2). Only the grid
    points (k - 2i) eps0 are used, which is conservative between them.
    """
    if delta <= 0:
        return k * eps0
    log_delta = math.log(delta)
    lo, hi = 0, k // 2  # invariant: i = lo is feasible (delta*_0 = 0)
    if kov_optimal_log_delta_star(k, eps0, hi) <= log_delta:
        return max((k - 2 * hi) * eps0, 0.0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if kov_optimal_log_delta_star(k, eps0, mid) <= log_delta:
            lo = mid
        else:
            hi = mid
    return (k - 2 * lo) * eps0
