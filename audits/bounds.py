"""Exact confidence bounds and the conversion of test error rates into privacy lower bounds.

For neighbouring datasets D, D' and any rejection region S, an (eps, delta)-DP mechanism M obeys

    P[M(D) in S] <= e^eps P[M(D') in S] + delta          (Dwork & Roth 2014, Def. 2.4)

so with TPR = P[M(D) in S] and FPR = P[M(D') in S], eps >= ln((TPR - delta) / FPR). The auditor
plugs in a one-sided Clopper-Pearson *lower* bound for TPR and *upper* bound for FPR
(Jagielski, Ullman, Oprea 2020, arXiv 2006.07709, Sec. 4; Nasr et al. 2021, arXiv 2101.04535):

    FPR_hi = BetaInv(1 - a; FP + 1, N - FP)      (= 1 when FP = N)
    TPR_lo = BetaInv(a;     TP,     P - TP + 1)  (= 0 when TP = 0)
    eps_lb = ln((TPR_lo - delta) / FPR_hi), floored at 0; 0 when TPR_lo <= delta.

FPR_hi is always > 0 (the Beta quantile of Beta(1, N) at 1 - a is 1 - a^(1/N) > 0), so the
logarithm is finite. If each bound fails with probability at most a, the pair fails with at most
2a (union bound), and eps_lb exceeds the true eps with probability at most 2a.

Gaussian DP (Dong, Roth, Su 2019, arXiv 1905.02383, Def. 2.6 / Cor. 2.13): mu-GDP means every test
has TPR <= Phi(Phi^-1(FPR) + mu), so mu >= Phi^-1(TPR) - Phi^-1(FPR). With the same CP bounds,
mu_lb = Phi^-1(TPR_lo) - Phi^-1(FPR_hi) floored at 0 (Nasr et al. 2023, arXiv 2302.07956, Sec. 3).
This is *not* an absolute value: jax_privacy 2.0.0 took ``abs(...)`` and reported large eps on
identical distributions (fixed upstream in aab3e1c); a null mechanism here gives mu_lb = 0 (docs/auditing.md#gaussian-dp-estimate).
The mu -> (eps, delta) conversion is valid only if the mechanism is GDP-shaped.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special, stats


def cp_upper(k, n, alpha):
    """One-sided Clopper-Pearson upper bound on p from k successes in n trials.

    P[p > bound] <= alpha. Vectorised over ``k`` (and ``n``); equals 1 where k == n.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(all="ignore"):
        out = stats.beta.ppf(1.0 - alpha, k + 1.0, np.maximum(n - k, 1e-300))
    return np.where(k >= n, 1.0, out)


def cp_lower(k, n, alpha):
    """One-sided Clopper-Pearson lower bound on p from k successes in n trials.

    P[p < bound] <= alpha. Vectorised; equals 0 where k == 0.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(all="ignore"):
        out = stats.beta.ppf(alpha, np.maximum(k, 1e-300), n - k + 1.0)
    return np.where(k <= 0, 0.0, out)


def epsilon_from_bounds(tpr_lo, fpr_hi, delta: float = 0.0):
    """eps_lb = ln((TPR_lo - delta) / FPR_hi) floored at 0 (0 where TPR_lo <= delta). Vectorised."""
    tpr_lo = np.asarray(tpr_lo, dtype=float)
    fpr_hi = np.asarray(fpr_hi, dtype=float)
    num = tpr_lo - delta
    with np.errstate(all="ignore"):
        eps = np.log(np.where(num > 0, num, 1.0) / np.maximum(fpr_hi, 1e-300))
    return np.where(num > 0, np.maximum(eps, 0.0), 0.0)


def epsilon_lower_bound(tp, n_pos, fp, n_neg, *, delta: float = 0.0, alpha: float):
    """The CP eps lower bound of one test; ``alpha`` is the failure probability of the *test*.

    Each of the two one-sided bounds gets ``alpha / 2``. Returns (eps_lb, tpr_lo, fpr_hi).
    """
    tpr_lo = cp_lower(tp, n_pos, alpha / 2.0)
    fpr_hi = cp_upper(fp, n_neg, alpha / 2.0)
    return epsilon_from_bounds(tpr_lo, fpr_hi, delta), tpr_lo, fpr_hi


def mu_from_bounds(tpr_lo, fpr_hi):
    """GDP lower bound mu_lb = Phi^-1(TPR_lo) - Phi^-1(FPR_hi), floored at 0 (never abs). Vectorised."""
    tpr_lo = np.asarray(tpr_lo, dtype=float)
    fpr_hi = np.asarray(fpr_hi, dtype=float)
    with np.errstate(all="ignore"):
        mu = special.ndtri(tpr_lo) - special.ndtri(fpr_hi)
    mu = np.where(np.isnan(mu), 0.0, mu)
    return np.maximum(mu, 0.0)


def gdp_delta(epsilon: float, mu: float) -> float:
    """delta(eps) of mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong-Roth-Su Cor. 2.13)."""
    if mu <= 0:
        return 0.0
    a = -epsilon / mu
    # log-space for the second term to avoid overflow of e^eps at large eps
    t1 = special.ndtr(a + mu / 2.0)
    t2 = math.exp(epsilon + special.log_ndtr(a - mu / 2.0))
    return max(float(t1 - t2), 0.0)


def epsilon_from_mu(mu: float, delta: float) -> float | None:
    """The eps at ``delta`` of mu-GDP (solves :func:`gdp_delta` = delta); None when delta == 0 and mu > 0.

    Valid as a statement about the mechanism only under the GDP assumption.
    """
    if mu <= 0:
        return 0.0
    if delta <= 0:
        return None  # mu-GDP with mu > 0 has no finite pure-DP epsilon
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(hi, mu) > delta:
        hi *= 2.0
        if hi > 1e4:
            return float("inf")
    return float(optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-10))


def epsilon_ceiling(n: int, alpha: float, delta: float = 0.0) -> float:
    """Largest eps_lb a perfect test can certify with n trials per side at test failure ``alpha``.

    TP = n and FP = 0 give TPR_lo = (alpha/2)^(1/n) and FPR_hi = 1 - (alpha/2)^(1/n)
    (docs/auditing.md#the-epsilon-ceiling: about ln(n / ln(2/alpha))).
    """
    e, _, _ = epsilon_lower_bound(n, n, 0, n, delta=delta, alpha=alpha)
    return float(e)
