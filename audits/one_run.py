"""One-run audits: eps lower bounds from ONE run of a mechanism with m randomly included canaries.

docs/auditing.md#one-run-audits states the protocol, the formulas and their limits; in short:

* **Protocol** (Steinke, Nasr, Jagielski 2023, arXiv 2305.08846). Each of ``m`` canaries is included
  or not by an independent fair coin, S_i in {-1, +1}; the mechanism runs ONCE on the resulting
  dataset; the auditor turns the output into a score per canary (positive: "S_i = +1"), guesses the
  sign of its ``k`` most confident scores and abstains on the rest (:func:`best_guesses`). The
  privacy claim is about flipping ONE bit S_i (the other bits fixed).
* **Steinke et al. bound** (their Theorem 3.1, with its delta term): if the mechanism is
  (eps, delta)-DP with respect to each bit, the number W of correct guesses out of ``r`` satisfies,
  for every v,

      P[W >= v] <= f(v) + 2 m delta max_{i = 1..v} (f(v - i) - f(v)) / i,
      f(u) = P[Binomial(r, e^eps / (1 + e^eps)) >= u]  (f(u) = 1 for u <= 0).

  :func:`steinke_p_value` is the right-hand side (capped at 1); :func:`steinke_epsilon_lower_bound` is
  the largest eps whose p-value at the observed count is <= 1 - confidence, found by bisection that
  keeps a REJECTED eps as its lower end (a relative margin of 1e-9 on the comparison), so the returned
  value is never above the exact bound. delta = 0: the same number as the one-sided Clopper-Pearson
  lower bound on the guess precision, eps = logit(BetaInv(1 - confidence; v, r - v + 1)).
* **f-DP bound** (Mahloujifar, Melis, Chaudhuri 2024, arXiv 2410.22235; jax_privacy's
  ``_epsilon_one_run_fdp``): for an f-DP mechanism with blow-up B(x) = 1 - f(x), write
  r_i = E[#correct 1{W >= i}] / m and h_i = E[#wrong 1{W >= i}] / m. Applying the f-DP inequality to
  the post-processed event {guess on canary j is s, at least i other guesses correct} gives
  h_i >= B^-1(r_{i+1}); the mass added at level i has correct:wrong = i : (k - i). Starting from
  (r_c, h_c) = (tau c / m, tau (k - c) / m) (all of the probability tau on exactly c correct guesses, the
  configuration that needs the least mass), the recursion

      h_i = max(h_{i+1}, B^-1(r_{i+1})),  r_i = min(r_{i+1} + i / (k - i) (h_i - h_{i+1}), 1),  i = c-1..0

  gives the least mass any f-DP mechanism needs to reach P[W >= c] >= tau; if r_0 + h_0 > k / m (the
  mass of k guesses) that is impossible, and the claim "f-DP" is rejected at level tau. Families:
  ``gaussian`` (mu-GDP, B^-1(y) = Phi(Phi^-1(y) - mu); the largest rejected mu, and its eps(delta) by
  Dong, Roth, Su 2019 Cor. 2.13, a lower bound on eps(delta) ONLY if the mechanism is GDP-shaped) and
  ``approx-dp`` (f_{eps,delta}(a) = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)): assumption-free).
* **Predictable guesses** (one-run ACTION audits; docs/auditing.md#soundness-of-the-action-audit): canary i's guess
  a function of the output and the EARLIER canaries' bits. The statistic is the number R of leading right guesses:
  (eps, delta)-DP gives P[R >= r] <= q^r + m delta / (1 + e^eps) (:func:`predictable_epsilon_lower_bound`); mu-GDP
  gives the infimum of that over eps at delta_mu(eps) (:func:`predictable_fdp_lower_bound`; not Phi(mu / 2)^r, which
  a guesser that abstains where the output says little beats: docs/auditing.md#the-f-dp-bound-for-predictable-guesses).
* **Guess counts.** The number of guesses is never chosen by looking at the bits: the audit evaluates
  a FIXED grid of guess counts (:func:`guess_grid`: m, m/2, m/4, ... down to 16, a function of m
  alone) and reports the largest bound, with the failure probability 1 - confidence split evenly
  over the grid (union bound). Each f-DP family has its own budget of 1 - confidence (as the runner's
  GDP estimate); the verdict uses the Steinke bound only.
* **Verdict** (:func:`privacct.audits.mechanism_audit.decide`): ``fails`` iff the Steinke bound exceeds the
  claim; ``passes`` iff it does not and :func:`one_run_power` says a canary leaking 2 x the claim
  (per-canary exact loss structure) would have been certified above the claim in a median run;
  ``inconclusive`` otherwise (always without a per-canary structure, unless it fails).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy import optimize, special, stats

from privacct.errors import MAX_COUNT, PrivacctError, check_count, check_delta, check_positive, shown

from . import bounds
from .power import FACTOR, PowerCheck

FAMILIES = ("gaussian", "approx-dp")
MIN_GRID_GUESSES = 16  # the smallest guess count of the default grid
REL_MARGIN = 1e-9  # relative margin on every rejection comparison (floating-point safety: conservative)
EPS_CAP = 64.0  # eps (or mu) searched up to this; at 64 nothing is rejected (P[all r guesses right] ~ 1)
_SEARCH_POINTS = 33  # parameters per multisection sweep of the f-DP search
_SEARCH_SWEEPS = 4  # sweeps: resolution about (first bracket, 8 or more) / 32^4
_WINDOW_SD = 40.0  # the delta term's sum is computed within this many sd of the binomial mean (rest bounded)
MAX_POWER_CANARIES = 10**6  # canaries_needed is searched up to this


# --------------------------------------------------------------------------------------------------
# argument checks (one PrivacctError line naming the argument and its range)

def _check_confidence(confidence: object) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating)) \
            or not (0 < float(confidence) < 1):
        raise PrivacctError(f"confidence must be a number in (0, 1), got {shown(confidence)}")
    return float(confidence)


def _check_counts(canaries: object, guesses: object, correct: object) -> tuple[int, int, int]:
    m = check_count("canaries", canaries, minimum=1)
    r = check_count("guesses", guesses, minimum=0, maximum=m)
    v = check_count("correct", correct, minimum=0, maximum=r)
    return m, r, v


def _check_family(family: object) -> str:
    if family not in FAMILIES:
        raise PrivacctError(f"family must be one of {', '.join(FAMILIES)}, got {shown(family)}")
    return str(family)


# --------------------------------------------------------------------------------------------------
# Steinke, Nasr, Jagielski 2023

def _steinke_p(m: int, r: int, v: int, eps: float, delta: float) -> float:
    """f(v) + 2 m delta max_i (f(v - i) - f(v)) / i, capped at 1 (module docstring); W ~ Bin(r, q),
    q = e^eps / (1 + e^eps). Computed through the WRONG-guess count r - W ~ Bin(r, 1 - q) (accurate
    when q is close to 1). The sums S_i = P[v - i <= W <= v - 1] are added up within ``_WINDOW_SD``
    standard deviations of the mean; the mass below the window (P[W < lo], computed exactly) is
    added to every S_i, so the result is never below the exact p-value."""
    if v <= 0:
        return 1.0
    qf = float(special.expit(-eps))  # probability that one guess is wrong
    beta = float(stats.binom.cdf(r - v, r, qf))  # P[W >= v]
    if delta <= 0 or beta >= 1.0:
        return min(beta, 1.0)
    q = 1.0 - qf
    lo = max(0, int(math.floor(r * q - _WINDOW_SD * math.sqrt(r * q * qf) - _WINDOW_SD)))
    if lo > v - 1:
        lo = v - 1  # v is far below the mean: one term, the rest bounded below
    j = np.arange(v - 1, lo - 1, -1)  # W = v-1, v-2, ..., lo
    s = np.cumsum(stats.binom.pmf(r - j, r, qf))  # S_i for i = 1..v-lo
    tail = float(stats.binom.sf(r - lo, r, qf)) if lo > 0 else 0.0  # P[W < lo] = P[r - W > r - lo]
    i = np.arange(1, s.size + 1)
    alpha = float(np.max((s + tail) / i))
    return min(beta + 2.0 * m * delta * alpha, 1.0)


def steinke_p_value(*, canaries: int, guesses: int, correct: int, epsilon: float, delta: float) -> float:
    """P[#correct >= ``correct``] bound of Steinke, Nasr, Jagielski 2023 (Theorem 3.1) for an
    (``epsilon``, ``delta``)-DP mechanism with ``canaries`` canaries and ``guesses`` guesses: the
    right-hand side of the module docstring's inequality, capped at 1 (docs/auditing.md#one-run-audits)."""
    m, r, v = _check_counts(canaries, guesses, correct)
    eps = _check_epsilon_value(epsilon)
    delta = check_delta("delta", delta, allow_zero=True)
    return _steinke_p(m, r, v, eps, delta)


def _check_epsilon_value(epsilon: object) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating)) \
            or not (0 <= float(epsilon) < math.inf):
        raise PrivacctError(f"epsilon must be a finite number >= 0, got {shown(epsilon)}")
    return float(epsilon)


def _bisect_rejected(rejected: Callable[[float], bool], hi: float, tol: float = 1e-10) -> float:
    """The largest eps in [0, EPS_CAP] found rejected by bisection: the lower end is always rejected
    (``rejected(0)`` must hold), so the result is a rejected eps, never above the supremum of the
    rejected set. ``hi``: a first guess for a non-rejected eps (doubled until it is one)."""
    lo = 0.0
    hi = min(max(hi, 1e-3), EPS_CAP)
    while rejected(hi):
        lo = hi
        if hi >= EPS_CAP:
            return EPS_CAP
        hi = min(2.0 * hi, EPS_CAP)
    return _refine_rejected(rejected, lo, hi, tol)


def _refine_rejected(rejected: Callable[[float], bool], lo: float, hi: float, tol: float = 1e-10) -> float:
    """Bisection of [lo, hi] (``lo`` rejected, ``hi`` not) down to ``tol`` relative width, keeping a rejected lower
    end: the largest eps found rejected, never above the supremum of the rejected set."""
    while hi - lo > tol * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if rejected(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _steinke_bound(m: int, r: int, v: int, delta: float, beta: float) -> float:
    if v <= 0 or r <= 0:
        return 0.0
    target = beta * (1.0 - REL_MARGIN)
    rejected = lambda e: _steinke_p(m, r, v, e, delta) <= target  # noqa: E731
    if not rejected(0.0):
        return 0.0
    # delta = 0 in closed form (Clopper-Pearson lower bound on the precision): a first guess for hi
    q_lo = float(stats.beta.ppf(beta, v, r - v + 1))
    hi = float(special.logit(min(max(q_lo, 0.5), 1.0 - 1e-16))) + 1e-6
    return _bisect_rejected(rejected, hi)


def steinke_epsilon_lower_bound(*, canaries: int, guesses: int, correct: int, delta: float,
                                confidence: float) -> float:
    """The largest eps such that an (eps, ``delta``)-DP mechanism makes at least ``correct`` correct
    guesses out of ``guesses`` (with ``canaries`` canaries) with probability <= 1 - ``confidence``
    (Steinke, Nasr, Jagielski 2023, Theorem 3.1 with its 2 m delta term; :func:`steinke_p_value`).

    It exceeds the true eps with probability at most 1 - confidence for ONE fixed guess count; for
    several, split the confidence (:func:`one_run_audit_scores` does). Conservative: bisection keeps a
    rejected eps as its lower end (relative margin 1e-9 on the comparison), so the result is never
    above the exact bound; 0.0 when even eps = 0 is not rejected; finite (at most ``EPS_CAP``).
    docs/auditing.md#one-run-audits."""
    m, r, v = _check_counts(canaries, guesses, correct)
    delta = check_delta("delta", delta, allow_zero=True)
    confidence = _check_confidence(confidence)
    return _steinke_bound(m, r, v, delta, 1.0 - confidence)


# --------------------------------------------------------------------------------------------------
# predictable guesses (one-run ACTION audits: audits/one_run_actions.py)

def _predictable_p(m: int, r: int, eps: float, delta: float) -> float:
    """q^r + m delta / (1 + e^eps), capped at 1 (:func:`predictable_p_value`); q = e^eps / (1 + e^eps)."""
    if r <= 0:
        return 1.0
    log_q = -float(np.logaddexp(0.0, -eps))   # log(e^eps / (1 + e^eps))
    return min(1.0, math.exp(r * log_q) + m * delta * float(special.expit(-eps)))


def predictable_p_value(*, canaries: int, prefix: int, epsilon: float, delta: float) -> float:
    """P[the first ``prefix`` guesses are all correct] for an (``epsilon``, ``delta``)-DP mechanism (in each of
    ``canaries`` bits) and PREDICTABLE guesses: canary i's guess (or abstention) a function of the output and of the
    bits of the canaries before it, never of its own or a later one's; the guesses taken in canary order. Bound:
    q^prefix + canaries * delta / (1 + e^eps), q = e^eps / (1 + e^eps), capped at 1
    (docs/auditing.md#soundness-of-the-action-audit: given the output and S_1..S_{i-1}, S_i is right with probability at most q plus an excess
    whose mean is at most delta / (1 + e^eps) per canary). With delta = 0 it is q^prefix, the one-sided
    Clopper-Pearson tail of ``prefix`` right out of ``prefix``; the f-DP and Steinke bounds above assume guesses
    that are functions of the output alone."""
    m = check_count("canaries", canaries, minimum=1)
    r = check_count("prefix", prefix, minimum=0, maximum=m)
    eps = _check_epsilon_value(epsilon)
    delta = check_delta("delta", delta, allow_zero=True)
    return _predictable_p(m, r, eps, delta)


def predictable_epsilon_lower_bound(*, canaries: int, prefix: int, delta: float, confidence: float) -> float:
    """The largest eps whose :func:`predictable_p_value` at ``prefix`` leading correct guesses is <= 1 -
    ``confidence`` (relative margin 1e-9); 0.0 when none is. With delta = 0: logit((1 - confidence)^(1 / prefix)).

    Each rejection region {prefix >= r0(eps)} is an upper set in the prefix length, so reporting the largest rejected
    eps is sound (as :func:`steinke_epsilon_lower_bound`). With delta > 0 the p-value need not be monotone in eps
    (q^r grows with eps, the delta term falls), so eps is scanned on a grid over [0, ``EPS_CAP``] and the largest
    rejected grid point refined by bisection that keeps a rejected lower end: the result is always a rejected eps."""
    m = check_count("canaries", canaries, minimum=1)
    r = check_count("prefix", prefix, minimum=0, maximum=m)
    delta = check_delta("delta", delta, allow_zero=True)
    beta = 1.0 - _check_confidence(confidence)
    if r <= 0:
        return 0.0
    target = beta * (1.0 - REL_MARGIN)
    rejected = lambda e: _predictable_p(m, r, e, delta) <= target  # noqa: E731
    grid = np.linspace(0.0, EPS_CAP, 4097)
    log_q = -np.logaddexp(0.0, -grid)
    p = np.minimum(1.0, np.exp(r * log_q) + m * delta * special.expit(-grid))
    lo = next((float(grid[j]) for j in np.flatnonzero(p <= target)[::-1] if rejected(float(grid[j]))), None)
    if lo is None:   # (each candidate re-checked with the scalar p-value, the largest first)
        return 0.0
    if lo >= EPS_CAP:
        return EPS_CAP
    return _refine_rejected(rejected, lo, float(grid[np.searchsorted(grid, lo, side="right")]))


_PREDICTABLE_EPS = np.linspace(0.0, EPS_CAP, 1025)  # the eps at which the GDP p-value below tries the (eps, delta) bound


def _predictable_gdp_p(m: int, r: int, mu: float) -> float:
    """min over eps of :func:`_predictable_p` at (eps, delta_mu(eps)), delta_mu of mu-GDP (``bounds.gdp_delta``, Dong,
    Roth, Su 2019 Cor. 2.13): on ``_PREDICTABLE_EPS``, then a bounded scalar minimisation between the best point's
    neighbours. Every eps tried gives a valid bound, so the minimum found is never below the exact infimum."""
    if r <= 0:
        return 1.0
    p = lambda e: _predictable_p(m, r, float(e), bounds.gdp_delta(float(e), mu))  # noqa: E731
    vals = [p(e) for e in _PREDICTABLE_EPS]
    j = int(np.argmin(vals))
    a, b = _PREDICTABLE_EPS[max(j - 1, 0)], _PREDICTABLE_EPS[min(j + 1, _PREDICTABLE_EPS.size - 1)]
    res = optimize.minimize_scalar(p, bounds=(float(a), float(b)), method="bounded", options={"xatol": 1e-10})
    return min(vals[j], p(res.x))


def predictable_fdp_p_value(*, canaries: int, prefix: int, mu: float) -> float:
    """P[the first ``prefix`` PREDICTABLE guesses are all correct] for a mechanism that is ``mu``-GDP in each of
    ``canaries`` bits (the others fixed): inf over eps >= 0 of q^prefix + canaries * delta_mu(eps) / (1 + e^eps), q =
    e^eps / (1 + e^eps), capped at 1 (docs/auditing.md#the-f-dp-bound-for-predictable-guesses: mu-GDP is (eps,
    delta_mu(eps))-DP at every eps, and :func:`predictable_p_value` holds at each). Not Phi(mu / 2)^prefix: that
    product fails for predictable guesses that abstain where the output says little (the same page)."""
    m = check_count("canaries", canaries, minimum=1)
    r = check_count("prefix", prefix, minimum=0, maximum=m)
    if isinstance(mu, bool) or not isinstance(mu, (int, float, np.integer, np.floating)) or not (0 <= float(mu) < math.inf):
        raise PrivacctError(f"mu must be a finite number >= 0, got {shown(mu)}")
    return _predictable_gdp_p(m, r, float(mu))


def predictable_fdp_lower_bound(*, canaries: int, prefix: int, delta: float, confidence: float) -> FdpBound:
    """The f-DP (Gaussian family) bound for PREDICTABLE guesses (one-run action audits): the largest mu whose
    :func:`predictable_fdp_p_value` at ``prefix`` leading correct guesses is <= 1 - ``confidence`` (relative margin
    1e-9; 0.0 when none is) and its eps(``delta``) (Dong, Roth, Su 2019 Cor. 2.13, rounded down; None at delta = 0).

    "Not mu-GDP" is assumption-free; the eps(delta) is a lower bound on the mechanism's eps(delta) ONLY if it is
    GDP-shaped (as :func:`fdp_epsilon_lower_bound`'s gaussian family). The p-value is nondecreasing in mu (delta_mu(eps)
    is, at every eps), so the rejected mu form an interval from 0 and bisection keeping a rejected lower end is sound.
    docs/auditing.md#the-f-dp-bound-for-predictable-guesses."""
    m = check_count("canaries", canaries, minimum=1)
    r = check_count("prefix", prefix, minimum=0, maximum=m)
    delta = check_delta("delta", delta, allow_zero=True)
    beta = 1.0 - _check_confidence(confidence)
    target = beta * (1.0 - REL_MARGIN)
    rejected = lambda mu: _predictable_gdp_p(m, r, mu) <= target  # noqa: E731
    if r <= 0 or not rejected(0.0):
        return FdpBound("gaussian", 0.0, 0.0)
    mu = _bisect_rejected(rejected, 1.0, tol=1e-9)
    return FdpBound("gaussian", float(mu), _eps_from_mu(mu, delta))


# --------------------------------------------------------------------------------------------------
# Mahloujifar, Melis, Chaudhuri 2024

def _blow_up_inverse(family: str, y: np.ndarray, theta: np.ndarray, delta: float) -> np.ndarray:
    """B^-1(y) = the least wrong-guess mass an f-DP mechanism needs for correct-guess mass y."""
    if family == "gaussian":
        with np.errstate(all="ignore"):
            return special.ndtr(special.ndtri(y) - theta)
    e = np.minimum(theta, 700.0)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.maximum(np.exp(-e) * (y - delta), 1.0 - delta - np.exp(e) * (1.0 - y))
    return np.maximum(np.nan_to_num(out, nan=0.0, neginf=0.0), 0.0)


def _fdp_rejected(m: int, k: np.ndarray, c: np.ndarray, tau: np.ndarray, theta: np.ndarray, family: str,
                  delta: float) -> np.ndarray:
    """Whether each (k, c, tau, theta) rejects the f-DP claim of parameter theta (module docstring's
    recursion, vectorised; every argument an array of one shape). Rejection needs r_0 + h_0 to exceed
    k / m by a relative margin of 1e-9."""
    k = k.astype(float)
    cf = c.astype(float)
    r = tau * cf / m
    h = tau * (k - cf) / m
    total = k / m * (1.0 + REL_MARGIN)
    done = (c <= 0) | (r + h > total)
    cmax = int(c.max(initial=0))
    for i in range(cmax - 1, -1, -1):
        act = (i < c) & ~done
        if not act.any():
            if done.all() or not (c <= i).any():
                break
            continue
        ra, ha = r[act], h[act]
        hn = np.maximum(ha, _blow_up_inverse(family, ra, theta[act], delta))
        rn = np.minimum(ra + (i / (k[act] - i)) * (hn - ha), 1.0)
        r[act], h[act] = rn, hn
        stuck = hn <= ha  # h (hence r) can never change again
        over = rn + hn > total[act]
        d = done[act]
        d |= stuck | over
        done[act] = d
    return r + h > total


def _fdp_search(m: int, ks: Sequence[int], cs: Sequence[int], beta: float, family: str, delta: float) -> np.ndarray:
    """The largest rejected parameter for each (k, c) at level ``beta``: multisection over
    ``_SEARCH_POINTS`` parameters per sweep, ``_SEARCH_SWEEPS`` sweeps; only rejected parameters are
    ever returned (0.0 when none is)."""
    ks = np.asarray(ks, dtype=np.int64)
    cs = np.asarray(cs, dtype=np.int64)
    n = ks.size
    best = np.zeros(n)
    lo = np.zeros(n)
    hi = np.full(n, 8.0)
    live = np.ones(n, dtype=bool)
    # is anything rejected at all? (parameter 0)
    rej0 = _fdp_rejected(m, ks, cs, np.full(n, beta), np.zeros(n), family, delta)
    live &= rej0
    # widen hi until it is not rejected (or the cap)
    while live.any():
        idx = np.nonzero(live)[0]
        rej = _fdp_rejected(m, ks[idx], cs[idx], np.full(idx.size, beta), hi[idx], family, delta)
        if not rej.any():
            break
        grow = idx[rej & (hi[idx] < EPS_CAP)]
        capped = idx[rej & (hi[idx] >= EPS_CAP)]
        best[capped] = EPS_CAP
        live[capped] = False
        lo[grow] = hi[grow]
        best[grow] = hi[grow]
        hi[grow] = np.minimum(2.0 * hi[grow], EPS_CAP)
        if grow.size == 0:
            break
    best = np.where(live, np.maximum(best, lo), best)
    for _ in range(_SEARCH_SWEEPS):
        idx = np.nonzero(live)[0]
        if idx.size == 0:
            break
        t = np.linspace(0.0, 1.0, _SEARCH_POINTS)[None, 1:-1]
        grid = lo[idx, None] + (hi[idx, None] - lo[idx, None]) * t  # (n_live, P-2)
        shape = grid.shape
        rej = _fdp_rejected(m, np.repeat(ks[idx], shape[1]), np.repeat(cs[idx], shape[1]), np.full(grid.size, beta),
                            grid.ravel(), family, delta).reshape(shape)
        for row, j in enumerate(idx):
            hits = np.nonzero(rej[row])[0]
            if hits.size:
                a = int(hits.max())
                lo_new = grid[row, a]
                hi_new = grid[row, a + 1] if a + 1 < shape[1] else hi[j]
            else:
                lo_new, hi_new = lo[j], grid[row, 0]
            best[j] = max(best[j], lo_new)
            lo[j], hi[j] = lo_new, hi_new
    return best


@dataclass(frozen=True)
class FdpBound:
    """A Mahloujifar et al. bound: ``family`` (``gaussian`` or ``approx-dp``), ``parameter`` (the largest
    rejected mu, or eps) and ``epsilon`` (the eps at the claim's delta: for ``approx-dp`` the parameter;
    for ``gaussian`` eps(delta) of mu-GDP (Dong, Roth, Su 2019, Cor. 2.13), a lower bound on the
    mechanism's eps(delta) ONLY if it is GDP-shaped; None when delta = 0 and mu > 0: mu-GDP has no
    finite pure eps)."""

    family: str
    parameter: float
    epsilon: float | None

    def to_dict(self) -> dict:
        return {"family": self.family, "parameter": _json_float(self.parameter),
                "epsilon": _json_float(self.epsilon)}


def _eps_from_mu(mu: float, delta: float) -> float | None:
    """eps(delta) of mu-GDP, rounded down (never above the exact value)."""
    if mu <= 0:
        return 0.0
    if delta <= 0:
        return None
    e = bounds.epsilon_from_mu(mu, delta)
    if e is None or not math.isfinite(e):
        return None
    # brentq's root may sit a hair above the exact one: step down until delta(e) >= delta
    step = 1e-9 * max(1.0, e)
    while e > 0 and bounds.gdp_delta(e, mu) < delta:
        e = max(0.0, e - step)
        step *= 2.0
    return float(e)


def fdp_epsilon_lower_bound(*, canaries: int, guesses: int, correct: int, delta: float, confidence: float,
                            family: str = "gaussian") -> FdpBound:
    """Mahloujifar, Melis, Chaudhuri 2024 (arXiv 2410.22235): the largest parameter of ``family`` whose
    f-DP claim the observed count rejects at level 1 - ``confidence`` (module docstring's recursion).

    ``family="gaussian"``: the largest rejected mu (mu-GDP) and its eps(``delta``), valid as an eps bound
    only for a GDP-shaped mechanism; ``family="approx-dp"``: the trade-off curve of (eps, ``delta``)-DP,
    the largest rejected eps (assumption-free). Implemented: the one-sided guessing game (guesses on
    +1 and -1 alike, no reconstruction game with more than two choices), worst case tau on exactly
    ``correct`` correct guesses, as jax_privacy's ``_epsilon_one_run_fdp``; the family parameter is
    searched by multisection (33 points, 4 sweeps: resolution about 1e-5 for parameters below 8), returning only rejected
    values (never above the exact bound; rejection needs a relative margin of 1e-9); 0.0 when nothing
    is rejected. docs/auditing.md#one-run-audits."""
    m, r, v = _check_counts(canaries, guesses, correct)
    delta = check_delta("delta", delta, allow_zero=True)
    confidence = _check_confidence(confidence)
    family = _check_family(family)
    return _fdp_bounds(m, [r], [v], delta, 1.0 - confidence, family)[0]


def _fdp_bounds(m: int, ks: Sequence[int], cs: Sequence[int], delta: float, beta: float, family: str) -> list[FdpBound]:
    ks, cs = list(ks), list(cs)
    out: list[FdpBound | None] = [None] * len(ks)
    todo = [j for j in range(len(ks)) if ks[j] > 0 and cs[j] > 0]
    for j in range(len(ks)):
        if j not in todo:
            out[j] = FdpBound(family, 0.0, 0.0)
    if todo:
        params = _fdp_search(m, [ks[j] for j in todo], [cs[j] for j in todo], beta, family, delta)
        for j, p in zip(todo, params, strict=True):
            p = float(p)
            eps = _eps_from_mu(p, delta) if family == "gaussian" else p
            out[j] = FdpBound(family, p, eps)
    return out  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------------
# guesses

def guess_grid(canaries: int, *, smallest: int = MIN_GRID_GUESSES) -> tuple[int, ...]:
    """The fixed grid of guess counts of an audit with ``canaries`` canaries: m, ceil(m/2), ceil(m/4), ...
    down to ``smallest`` (or m when m is smaller). A function of m alone, never of the bits."""
    m = check_count("canaries", canaries, minimum=1)
    smallest = check_count("smallest", smallest, minimum=1)
    out = [m]
    k = m
    while True:
        k = (k + 1) // 2
        if k < smallest or k == out[-1]:
            break
        out.append(k)
    return tuple(out)


def _check_grid(guesses_rule: object, m: int) -> tuple[int, ...]:
    if guesses_rule is None:
        return guess_grid(m)
    if isinstance(guesses_rule, (str, bytes)) or not hasattr(guesses_rule, "__iter__"):
        raise PrivacctError(f"guesses_rule must be None or a sequence of guess counts in [1, {m}], got {shown(guesses_rule)}")
    grid = tuple(check_count("guesses_rule entry", g, minimum=1, maximum=m) for g in guesses_rule)
    if not grid or len(set(grid)) != len(grid):
        raise PrivacctError(f"guesses_rule must be a non-empty sequence of distinct guess counts in [1, {m}], "
                            f"got {len(grid)} entries")
    return grid


def _check_scores(scores: object, m: int | None, what: str = "scores") -> np.ndarray:
    s = np.asarray(scores)
    if s.ndim != 1 or (m is not None and s.shape[0] != m) or s.size == 0:
        want = f"({m},)" if m is not None else "(m,) with m >= 1"
        raise PrivacctError(f"{what} must be a 1-D array of shape {want}, got shape {s.shape}")
    if not (np.issubdtype(s.dtype, np.number) or s.dtype == bool) or np.iscomplexobj(s):
        raise PrivacctError(f"{what} must be real numbers, got dtype {s.dtype}")
    s = s.astype(float)
    if np.isnan(s).any():
        raise PrivacctError(f"{what} must not contain NaN (got {int(np.isnan(s).sum())} NaN)")
    return s


def best_guesses(scores: Any, *, max_guesses: int) -> np.ndarray:
    """Guesses T in {-1, 0, +1}^m: the sign of each of the ``max_guesses`` largest |scores| (a score of
    0 guesses +1), 0 (abstain) on the rest. Ties in |score| are broken by the lower index (stable), so
    the guesses are a function of the scores alone: exactly ``max_guesses`` non-zero entries."""
    s = _check_scores(scores, None)
    k = check_count("max_guesses", max_guesses, minimum=1, maximum=s.size)
    order = np.argsort(-np.abs(s), kind="stable")[:k]
    out = np.zeros(s.size, dtype=np.int8)
    out[order] = np.where(s[order] < 0, -1, 1)
    return out


def _correct_counts(scores: np.ndarray, bits: np.ndarray, grid: Sequence[int]) -> list[int]:
    """Correct guesses of the top-k guesses, for every k of the grid (one sort)."""
    order = np.argsort(-np.abs(scores), kind="stable")
    guess = np.where(scores[order] < 0, -1, 1)
    hit = np.cumsum(guess == bits[order])
    return [int(hit[k - 1]) for k in grid]


def _check_bits(bits: object, m: int) -> np.ndarray:
    b = np.asarray(bits)
    if b.shape != (m,) or not np.isin(b, (-1, 1)).all():
        raise PrivacctError(f"bits must be an array of shape ({m},) with entries in {{-1, +1}}, got shape {b.shape}")
    return b.astype(np.int64)


# --------------------------------------------------------------------------------------------------
# power

@functools.lru_cache(maxsize=32)
def _abs_loss_levels(structure) -> tuple[np.ndarray, np.ndarray] | None:
    """(mass, correct mass) of |L| levels in DECREASING order of |L| for one canary whose observation has
    the loss structure ``structure`` (privacy loss L = log p_{S=+1}(o) / p_{S=-1}(o) under S = +1; the guess
    sign(L) is right when L > 0; at L = 0 half of the mass is right). None for a Gaussian-only structure
    (closed form, :func:`_gaussian_precision`). Cached per structure (read-only arrays): the power criterion asks for
    it at every canary count it tries, and a Laplace structure of many coordinates costs one FFT of seconds."""
    if not structure.laplace:
        return None
    from .oracle import loss_distribution

    grid, p = loss_distribution(structure)
    n = grid.size // 2  # symmetric grid, index n is l = 0
    pos, neg = p[n + 1:], p[:n][::-1]  # levels 1..n: P[L = +l], P[L = -l]
    mass = np.concatenate([(pos + neg)[::-1], [p[n]]])
    right = np.concatenate([pos[::-1], [p[n] / 2.0]])
    mass.setflags(write=False)
    right.setflags(write=False)
    return mass, right


def _top_precision(levels, mu: float, frac: float) -> float:
    """Expected precision of the guesses on the top fraction ``frac`` of canaries by |L|."""
    if levels is None:  # Gaussian: L ~ N(mu^2 / 2, mu^2) under S = +1
        if mu <= 0:
            return 0.5
        right = lambda t: special.ndtr((mu * mu / 2.0 - t) / mu)  # noqa: E731
        mass = lambda t: right(t) + special.ndtr((-t - mu * mu / 2.0) / mu)  # noqa: E731
        if frac >= 1.0:
            return float(right(0.0))
        hi = mu * mu / 2.0 + 40.0 * mu + 1.0
        t = optimize.brentq(lambda t: mass(t) - frac, 0.0, hi, xtol=1e-12)
        return float(min(max(right(t) / frac, 0.0), 1.0))
    mass, right = levels
    cm, cr = np.cumsum(mass), np.cumsum(right)
    j = int(np.searchsorted(cm, frac, side="left"))
    j = min(j, cm.size - 1)
    m0 = cm[j - 1] if j > 0 else 0.0
    r0 = cr[j - 1] if j > 0 else 0.0
    part = (frac - m0) / mass[j] if mass[j] > 0 else 0.0
    got = r0 + min(max(part, 0.0), 1.0) * right[j]
    return float(min(max(got / frac, 0.0), 1.0))


@functools.lru_cache(maxsize=256)
def _median_bound(ref, m: int, grid: tuple[int, ...], delta: float, beta: float) -> tuple[float, int, int]:
    """(max over the grid of the Steinke bound at the median correct count, its k, its count) for a
    canary loss structure ``ref``; per guess count the failure budget ``beta / len(grid)``."""
    levels = _abs_loss_levels(ref)
    best = (0.0, grid[0], 0)
    for k in grid:
        p = _top_precision(levels, ref.mu, k / m)
        v = int(stats.binom.ppf(0.5, k, p))  # P[V >= v] > 1/2
        e = _steinke_bound(m, k, v, delta, beta / len(grid))
        if e > best[0]:
            best = (e, k, v)
    return best


def one_run_power(canaries: int, guesses_rule: Sequence[int] | None, claim: float, delta: float, confidence: float,
                  per_canary_structure, *, factor: float = FACTOR) -> PowerCheck:
    """Could a one-run audit with ``canaries`` canaries have seen a violation of the claim?

    ``per_canary_structure``: the exact :class:`privacct.audits.oracle.LossStructure` of ONE canary's
    observation (the same for every canary; a bit flip moves a Laplace mean by ``a * b``, a Gaussian
    part by ``mu`` standard deviations). The reference is that structure with every noise scale
    multiplied by the factor that makes its exact eps(delta) ``factor`` (= 2) x the claim
    (:func:`privacct.audits.power.reference_structure`). Its guesses are the Bayes-optimal ones (sign of
    the privacy loss L, the |L| largest first); for each guess count k of the grid (``guesses_rule``,
    None: :func:`guess_grid`) the precision p_k of the top k/m of the canaries by |L| is exact, and the
    number of correct guesses is taken as Binomial(k, p_k) (approximate: the ordered canaries' own
    randomness is ignored; the guesses' correctness given |L| is Poisson-binomial, less spread than the
    binomial). The audit has power iff the max over k of the Steinke bound at the median count (union
    bound over the grid, as the audit) exceeds the claim: a lower bound on the median of the audit's
    reported bound under that model. ``trials_needed`` holds the CANARIES needed (default grid; doubling
    then bisection to ~2%, None beyond ``MAX_POWER_CANARIES``). docs/auditing.md#one-run-audits."""
    from .oracle import LossStructure
    from .power import reference_structure

    m = check_count("canaries", canaries, minimum=1)
    grid = _check_grid(guesses_rule, m)
    claim = check_positive("claim", claim, allow_inf=True)
    delta = check_delta("delta", delta, allow_zero=True)
    confidence = _check_confidence(confidence)
    if not isinstance(per_canary_structure, LossStructure):
        raise PrivacctError("per_canary_structure must be a privacct.audits.oracle.LossStructure, got "
                            f"{type(per_canary_structure).__name__}")
    if not (factor > 1):
        raise PrivacctError(f"factor must be a number > 1, got {shown(factor)}")
    name = f"one-run-exact-loss-{factor:g}x"
    if math.isinf(claim):
        return PowerCheck(name, "an infinite claim cannot be refuted by any audit", None, 0.0, False, None)
    target = factor * claim
    ref = reference_structure(per_canary_structure, target, delta)
    what = f"one canary's observation ({per_canary_structure.describe()})"
    if ref is None:
        why = ("no coordinate differs" if not per_canary_structure.laplace and per_canary_structure.mu == 0
               else "a Gaussian part has no finite eps at delta = 0")
        return PowerCheck(name, f"{what}: no reference at {factor:g} x the claim ({why})", None, None, False, None)
    beta = 1.0 - confidence
    ach, k_best, v_best = _median_bound(ref, m, grid, delta, beta)
    has = ach > claim
    needed = None
    if not has:
        needed = _canaries_needed(ref, claim, delta, beta, m)
    desc = (f"{what} with every noise scale scaled so that its exact eps" + (f"({delta:g})" if delta > 0 else "")
            + f" is {target:g} = {factor:g} x the claim: Steinke bound at the median correct count of the "
            f"Bayes-optimal guesses with {m} canaries (best of {len(grid)} guess counts: k = {k_best}, "
            f"{v_best} correct): {ach:.3f} " + ("> " if has else "<= ") + f"claim {claim:g}")
    if needed is not None:
        desc += f"; about {needed} canaries would give power"
    elif not has:
        desc += f"; no canary count up to {MAX_POWER_CANARIES} would give power"
    return PowerCheck(name, desc, float(target), float(ach), bool(has), needed)


def _canaries_needed(ref, claim: float, delta: float, beta: float, start: int) -> int | None:
    def ok(n: int) -> bool:
        return _median_bound(ref, n, guess_grid(n), delta, beta)[0] > claim

    lo, hi = max(start, 1), max(start, 1) * 2
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > MAX_POWER_CANARIES:
            return None
    while hi - lo > max(1, lo // 50):
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


# --------------------------------------------------------------------------------------------------
# results and the audits

def _json_float(x: float | None) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


@dataclass(frozen=True)
class GuessCount:
    """The bounds of one guess count of the grid: ``guesses`` k, ``correct`` guesses, the Steinke bound
    and the two f-DP bounds (each at its share of the failure budget: 1 - confidence over the grid)."""

    guesses: int
    correct: int
    epsilon_lower_bound: float
    mu_lower_bound: float
    epsilon_fdp_approx_dp: float

    def to_dict(self) -> dict:
        return {"guesses": int(self.guesses), "correct": int(self.correct),
                "epsilon_lower_bound": _json_float(self.epsilon_lower_bound),
                "mu_lower_bound": _json_float(self.mu_lower_bound),
                "epsilon_fdp_approx_dp": _json_float(self.epsilon_fdp_approx_dp)}


@dataclass(frozen=True)
class OneRunResult:
    """The outcome of a one-run audit (docs/auditing.md#one-run-audits).

    ``epsilon_lower_bound``: the Steinke et al. bound, max over the guess-count grid (union bound), at
    ``guesses`` guesses with ``correct`` right; exceeds the true eps with probability <= 1 - confidence.
    ``mu_lower_bound`` and ``epsilon_fdp``: the Mahloujifar et al. bound with the Gaussian family
    (mu-GDP) and its eps(delta): valid as an eps bound ONLY if the mechanism is GDP-shaped; None when
    delta = 0 (mu-GDP has no finite pure eps). ``epsilon_fdp_approx_dp``: the same with the (eps, delta)
    family (assumption-free). Each f-DP family has its own budget of 1 - confidence. ``verdict``:
    ``fails`` iff epsilon_lower_bound > claimed_epsilon; ``passes`` iff not and ``power.has_power``;
    ``inconclusive`` otherwise. ``to_dict`` is strict JSON (no NaN or inf: null).
    """

    canaries: int
    guesses: int
    correct: int
    epsilon_lower_bound: float
    mu_lower_bound: float
    epsilon_fdp: float | None
    epsilon_fdp_approx_dp: float
    claimed_epsilon: float
    delta: float
    confidence: float
    verdict: str
    power: PowerCheck
    grid: tuple[GuessCount, ...] = ()
    seed: int | None = None
    seconds: float = 0.0
    name: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def reason(self) -> str:
        if self.verdict == "fails":
            return (f"violation certified: eps lower bound {self.epsilon_lower_bound:.4f} > claim "
                    f"{self.claimed_epsilon:g}")
        if self.verdict == "passes":
            return f"no violation found; the audit had power ({self.power.criterion})"
        if self.power.criterion == "unknown":
            return "no violation found; power unknown (give the per-canary loss structure)"
        return f"no violation found; no power to see one ({self.power.criterion})"

    def summary(self) -> str:
        verdict = {"passes": "passes", "fails": "FAILS", "inconclusive": "INCONCLUSIVE"}[self.verdict]
        fdp = "n/a" if self.epsilon_fdp is None else f"{self.epsilon_fdp:.4f}"
        return (f"one-run audit {verdict}{' (' + self.name + ')' if self.name else ''}: claimed eps = "
                f"{self.claimed_epsilon:g} (delta = {self.delta:g}), {self.canaries} canaries, {self.guesses} "
                f"guesses, {self.correct} correct; eps lower bound = {self.epsilon_lower_bound:.4f} at confidence "
                f"{self.confidence:g}; f-DP: mu >= {self.mu_lower_bound:.4f} (eps {fdp}, GDP-shaped only), "
                f"(eps, delta) family eps >= {self.epsilon_fdp_approx_dp:.4f}; {self.reason}; "
                f"power ({self.power.criterion}): {self.power.description}")

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "canaries": int(self.canaries),
            "guesses": int(self.guesses),
            "correct": int(self.correct),
            "epsilon_lower_bound": _json_float(self.epsilon_lower_bound),
            "mu_lower_bound": _json_float(self.mu_lower_bound),
            "epsilon_fdp": _json_float(self.epsilon_fdp),
            "epsilon_fdp_approx_dp": _json_float(self.epsilon_fdp_approx_dp),
            "fdp_note": "mu_lower_bound and epsilon_fdp bound eps(delta) only if the mechanism is Gaussian-DP "
                        "shaped; epsilon_fdp_approx_dp is assumption-free",
            "claimed_epsilon": _json_float(self.claimed_epsilon),
            "delta": float(self.delta),
            "confidence": float(self.confidence),
            "verdict": self.verdict,
            "reason": self.reason,
            "power": self.power.to_dict(),
            "grid": [g.to_dict() for g in self.grid],
            "seed": self.seed,
            "seconds": _json_float(self.seconds),
            "notes": list(self.notes),
        }


def _unknown_power() -> PowerCheck:
    return PowerCheck("unknown", "power unknown: no per-canary loss structure was given (per_canary_structure=), so "
                      "nothing says what this many canaries could have seen", None, None, False, None)


def one_run_audit_scores(scores: Any, bits: Any, *, epsilon: float, delta: float = 0.0, confidence: float = 0.95,
                         per_canary_structure=None, guesses_rule: Sequence[int] | None = None, seed: int | None = None,
                         name: str = "", fdp: bool = True) -> OneRunResult:
    """The one-run audit of per-canary ``scores`` (positive: guess S_i = +1) against the inclusion
    ``bits`` S in {-1, +1}^m (module docstring). For each guess count k of the grid (``guesses_rule``;
    None: :func:`guess_grid`), the top-k guesses (:func:`best_guesses`) are counted and bounded at
    failure (1 - confidence) / len(grid); the Steinke bound decides the verdict against the claim
    (``epsilon``, ``delta``) with :func:`one_run_power` from ``per_canary_structure`` (None: inconclusive
    unless it fails). ``fdp=False`` skips the f-DP bounds (reported as 0)."""
    t0 = time.perf_counter()
    s = _check_scores(scores, None)
    m = s.size
    b = _check_bits(bits, m)
    claim = check_positive("epsilon", epsilon, allow_inf=True)
    delta = check_delta("delta", delta, allow_zero=True)
    confidence = _check_confidence(confidence)
    grid = _check_grid(guesses_rule, m)
    beta_k = (1.0 - confidence) / len(grid)
    cs = _correct_counts(s, b, grid)
    steinke = [_steinke_bound(m, k, c, delta, beta_k) for k, c in zip(grid, cs, strict=True)]
    if fdp:
        gauss = _fdp_bounds(m, grid, cs, delta, beta_k, "gaussian")
        approx = _fdp_bounds(m, grid, cs, delta, beta_k, "approx-dp")
    else:
        gauss = approx = [FdpBound("gaussian", 0.0, 0.0)] * len(grid)
    rows = tuple(GuessCount(k, c, e, g.parameter, a.parameter)
                 for k, c, e, g, a in zip(grid, cs, steinke, gauss, approx, strict=True))
    j = int(np.argmax(steinke))
    eps_lb = float(steinke[j])
    mu = max(g.parameter for g in gauss)
    eps_fdp = _eps_from_mu(mu, delta)
    if per_canary_structure is None:
        check = _unknown_power()
    elif eps_lb > claim:
        check = PowerCheck("one-run-exact-loss-2x", "not computed: the audit certified a violation (fails needs no "
                           "power)", None, None, False, None)
    else:
        check = one_run_power(m, grid, claim, delta, confidence, per_canary_structure)
    from .mechanism_audit import decide

    return OneRunResult(
        canaries=m, guesses=int(grid[j]), correct=int(cs[j]), epsilon_lower_bound=eps_lb, mu_lower_bound=float(mu),
        epsilon_fdp=eps_fdp, epsilon_fdp_approx_dp=float(max(a.parameter for a in approx)), claimed_epsilon=claim,
        delta=delta, confidence=confidence, verdict=decide(eps_lb, claim, check), power=check, grid=rows, seed=seed,
        seconds=time.perf_counter() - t0, name=name)


def one_run_seeds(seed: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """(bits, mechanism) seed sequences of a one-run audit: ``SeedSequence(seed).spawn(2)``."""
    a, b = np.random.SeedSequence(seed).spawn(2)
    return a, b


def draw_bits(seed: int, canaries: int) -> np.ndarray:
    """The inclusion bits of the audit with this seed: int64 entries in {-1, +1}, independent fair coins
    from ``default_rng(SeedSequence(seed).spawn(2)[0])`` (same seed, same bits)."""
    m = check_count("canaries", canaries, minimum=1)
    rng = np.random.default_rng(one_run_seeds(seed)[0])
    return rng.integers(0, 2, size=m, dtype=np.int64) * 2 - 1


def one_run_audit(mechanism: Callable[[np.ndarray, np.random.Generator], Any], *, canaries: int, epsilon: float,
                  delta: float = 0.0, confidence: float = 0.95, seed: int = 0,
                  score: Callable[[Any], Any] | None = None, per_canary_structure=None,
                  guesses_rule: Sequence[int] | None = None, name: str = "", fdp: bool = True) -> OneRunResult:
    """Audit ``mechanism`` in ONE run with ``canaries`` canaries (docs/auditing.md#one-run-audits).

    Protocol:

    1. ``SeedSequence(seed).spawn(2)`` gives two streams: the first draws the inclusion bits
       S in {-1, +1}^m, independent fair coins (:func:`draw_bits`); the second is the mechanism's
       ``numpy.random.Generator``. Same seed, same bits and same bytes.
    2. ``observation = mechanism(bits, rng)``: ONE run of the mechanism on the dataset in which canary i
       is included iff S_i = +1 (``bits`` is a copy: int64 entries in {-1, +1}). The claim
       (``epsilon``, ``delta``) must be about flipping ONE bit with the others fixed.
    3. ``score(observation)`` -> an array of shape (m,): the auditor's score per canary, positive for
       "S_i = +1", larger |score| for more confidence (default: the observation itself, which must then
       be an (m,) array: e.g. each canary's noisy statistic, centred so that its sign is the guess).
       The score must not use the bits (it only sees the observation).
    4. For every guess count k of a FIXED grid (``guesses_rule``; None: :func:`guess_grid`, m, m/2,
       m/4, ... down to 16), guess the sign of the k largest |scores| and count the correct guesses;
       each k's bound gets (1 - confidence) / len(grid) of the failure budget (union bound).
    5. The Steinke bound (max over the grid) decides the verdict: ``fails`` iff it exceeds
       ``epsilon``; ``passes`` iff not and :func:`one_run_power` (from ``per_canary_structure``, the
       exact :class:`privacct.audits.oracle.LossStructure` of one canary's observation) says a canary
       leaking 2 x the claim would have been certified above it in a median run; ``inconclusive``
       otherwise. The f-DP bounds (Gaussian and (eps, delta) families) are reported beside it
       (``fdp=False`` skips them).
    """
    if not callable(mechanism):
        raise PrivacctError(f"mechanism must be callable as mechanism(bits, rng), got {type(mechanism).__name__}")
    if score is not None and not callable(score):
        raise PrivacctError(f"score must be None or callable as score(observation) -> array (m,), got {shown(score)}")
    m = check_count("canaries", canaries, minimum=1, maximum=MAX_COUNT)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise PrivacctError(f"seed must be an integer >= 0, got {shown(seed)}")
    check_positive("epsilon", epsilon, allow_inf=True)
    check_delta("delta", delta, allow_zero=True)
    _check_confidence(confidence)
    _check_grid(guesses_rule, m)
    t0 = time.perf_counter()
    bits = draw_bits(int(seed), m)
    rng = np.random.default_rng(one_run_seeds(int(seed))[1])
    observation = mechanism(bits.copy(), rng)
    scores = observation if score is None else score(observation)
    what = "mechanism output (used as the scores)" if score is None else "score(observation)"
    s = _check_scores(scores, m, what)
    res = one_run_audit_scores(s, bits, epsilon=epsilon, delta=delta, confidence=confidence,
                               per_canary_structure=per_canary_structure, guesses_rule=guesses_rule, seed=int(seed),
                               name=name, fdp=fdp)
    return dataclasses.replace(res, seconds=time.perf_counter() - t0)


__all__ = ["FAMILIES", "FdpBound", "GuessCount", "OneRunResult", "best_guesses", "draw_bits", "fdp_epsilon_lower_bound",
           "guess_grid", "one_run_audit", "one_run_audit_scores", "one_run_power", "one_run_seeds", "predictable_epsilon_lower_bound",
           "predictable_fdp_lower_bound", "predictable_fdp_p_value", "predictable_p_value",
           "steinke_epsilon_lower_bound", "steinke_p_value"]
