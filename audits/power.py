"""Power criteria: could an audit with this many trials have seen a violation of the claim?

An audit whose eps lower bound does not exceed the claim has two readings: the mechanism meets the
claim, or the audit was too small to tell. A *power criterion* decides which one the audit may
report. It is a callable ``criterion(n_eval, alpha, delta, claim) -> PowerCheck`` (``n_eval``:
evaluation-half trials per side; ``alpha``: the failure probability of ONE certified test, after
the runner's union bound; ``delta``, ``claim``: the audited (eps, delta) claim); the runner calls it
once per audit (:func:`privacct.audits.runner.run_audit`, keyword ``power=``).

Default, :func:`canonical_power` (mechanism-agnostic, analytic, no Monte Carlo): the MEDIAN eps
lower bound that the runner's own pipeline (threshold test on the output, Clopper-Pearson bounds
with ``alpha / 2`` each, ``n_eval`` trials per side) would certify for a *canonical* mechanism
whose true eps is ``FACTOR`` (= 2) times the claim:

* delta = 0: the scalar Laplace mechanism f(D) + Lap(b) with Delta / b = 2 claim (Dwork & Roth
  2014, Thm 3.6); a threshold test S = {x > t} has FPR = 1/2 e^{-t/b} and TPR = 1/2 e^{-(t - Delta)/b}
  (t >= Delta) or 1 - 1/2 e^{-(Delta - t)/b} (0 <= t < Delta).
* delta > 0: the scalar Gaussian mechanism whose exact eps(delta) is 2 claim (Balle & Wang 2018,
  Thm 8; mu = Delta / sigma solved from delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2));
  S = {x > t}: FPR = Phi(-t), TPR = Phi(mu - t).

The audit *has power* when that median exceeds the claim: had the mechanism leaked twice its
claim (the size of a printed sensitivity or tree-depth slip), this audit would have reported
``fails`` at least half of the time. Otherwise it is inconclusive, and ``trials_needed`` (trials
per side, both halves) is the smallest trial count whose median exceeds the claim (doubling, then
bisection on n).

Why the scalar canonical mechanism: it is where this auditor is at the statistical limit (a scalar
threshold test on the Neyman-Pearson statistic; measured: Laplace eps = 1 certifies 0.97 at 1e5
trials per side), so the criterion asks the least the audit must be able to do. A mechanism that
spreads its privacy loss over many coordinates (a learner's noisy statistics, each moved by a
little) is harder to audit, and a canonical criterion is then optimistic: white-box audits should
pass their own criterion (``power=``) computed from the exact privacy-loss distribution of what
they observe.

Exact median, conservatively discretised: TP ~ Bin(n, TPR) and FP ~ Bin(n, FPR) are independent.
Write TP = F^-1(U), FP = G^-1(V) with U, V uniform; TP' = F^-1(floor(B U) / B) <= TP and
FP' = G^-1(ceil(B V) / B) >= FP. The eps lower bound is non-decreasing in TP and non-increasing
in FP, so eps(TP', FP') <= eps(TP, FP) pointwise, and (TP', FP') is uniform on a B x B grid of
binomial quantiles: any c with #{grid cells with eps >= c} >= B^2 / 2 satisfies
P[eps_lb >= c] >= 1/2, i.e. c is at most the median. The criterion reports the largest such c,
maximised over a grid of thresholds t (the selection half's job in the real pipeline, which picks
it from data: the real test is the oracle's or worse, while the real runner keeps the better of two
directions; ``tests/audits/test_power.py`` checks the criterion against simulated audits).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from scipy import optimize, special, stats

from privacct.errors import PrivacctError

from . import bounds

FACTOR = 2.0  # the canonical mechanism's true eps, as a multiple of the claim
GRID = 64  # B: binomial quantile levels per count
N_MAX = 10 ** 12  # trials per side beyond which trials_needed is reported as None


@dataclass(frozen=True)
class PowerCheck:
    """Whether an audit could have seen a violation of its claim.

    ``criterion``: short name; ``description``: one sentence stating it; ``reference_epsilon``: the
    true eps of the reference (violating) mechanism; ``achievable_lower_bound``: the (median) eps lower
    bound this audit would certify for it; ``has_power``: ``achievable_lower_bound > claim``;
    ``trials_needed``: trials per side (selection + evaluation) that would give power, when it has
    none (None when it has, or when no finite count up to ``N_MAX`` would).
    """

    criterion: str
    description: str
    reference_epsilon: float
    achievable_lower_bound: float
    has_power: bool
    trials_needed: int | None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["reference_epsilon"] = float(d["reference_epsilon"])
        d["achievable_lower_bound"] = float(d["achievable_lower_bound"])
        return d


PowerCriterion = Callable[[int, float, float, float], PowerCheck]


def _grid_median(tpr: np.ndarray, fpr: np.ndarray, n: int, alpha: float, delta: float, grid: int = GRID) -> np.ndarray:
    """Lower bound on the median CP eps lower bound of threshold tests with rates (tpr, fpr), n per side.

    Vectorised over the tests (module docstring: conservative B x B quantile grid).
    """
    tpr = np.asarray(tpr, dtype=float)[:, None]
    fpr = np.asarray(fpr, dtype=float)[:, None]
    lo_levels = np.arange(grid)[None, :] / grid  # floor(B U) / B
    hi_levels = (np.arange(grid)[None, :] + 1.0) / grid  # ceil(B V) / B
    tp = np.maximum(stats.binom.ppf(lo_levels, n, tpr), 0.0)
    fp = np.minimum(stats.binom.ppf(hi_levels, n, fpr), n)
    fp = np.where(np.isnan(fp), n, fp)
    tp = np.where(np.isnan(tp), 0.0, tp)
    tpr_lo = bounds.cp_lower(tp, n, alpha / 2.0)
    fpr_hi = bounds.cp_upper(fp, n, alpha / 2.0)
    eps = bounds.epsilon_from_bounds(tpr_lo[:, :, None], fpr_hi[:, None, :], delta)  # (tests, B, B)
    flat = np.sort(eps.reshape(eps.shape[0], -1), axis=1)[:, ::-1]
    return flat[:, (grid * grid) // 2 - 1]


def _laplace_rates(t: np.ndarray, eps_ref: float) -> tuple[np.ndarray, np.ndarray]:
    """(TPR, FPR) of S = {x > t} for Lap(1, b) (positives) vs Lap(0, b), b = 1 / eps_ref, t >= 0."""
    b = 1.0 / eps_ref
    fpr = 0.5 * np.exp(-t / b)
    tpr = np.where(t >= 1.0, 0.5 * np.exp(-(t - 1.0) / b), 1.0 - 0.5 * np.exp(-(1.0 - np.minimum(t, 1.0)) / b))
    return tpr, fpr


def gaussian_mu_for_epsilon(epsilon: float, delta: float) -> float:
    """mu = Delta / sigma of the Gaussian mechanism whose exact eps(delta) is ``epsilon`` (Balle & Wang 2018, Thm 8)."""
    f = lambda mu: bounds.gdp_delta(epsilon, mu) - delta  # noqa: E731 - increasing in mu
    hi = 1.0
    while f(hi) < 0:
        hi *= 2.0
        if hi > 1e6:
            raise PrivacctError(f"no Gaussian mechanism has eps({delta:g}) = {epsilon:g}")
    return float(optimize.brentq(f, 1e-12, hi, xtol=1e-12))


def _rates(t_or_q: np.ndarray, eps_ref: float, delta: float, mu: float | None):
    if delta == 0:
        return _laplace_rates(t_or_q, eps_ref)
    t = t_or_q
    return special.ndtr(mu - t), special.ndtr(-t)


def _thresholds(n: int, eps_ref: float, delta: float, mu: float | None) -> np.ndarray:
    """Thresholds whose FPR spans [~1/(10 n), 1/2] (log-spaced), for the canonical test."""
    q = np.exp(np.linspace(math.log(0.5), math.log(0.1 / n), 48))
    if delta == 0:
        return -np.log(2.0 * q) / eps_ref  # FPR = q
    return -special.ndtri(q)


@lru_cache(maxsize=4096)
def canonical_median(n_eval: int, alpha: float, delta: float, eps_ref: float) -> float:
    """Median eps lower bound (a lower bound on it, see module docstring) of the best threshold test on the
    canonical mechanism of true eps ``eps_ref`` with ``n_eval`` trials per side at per-test failure ``alpha``."""
    mu = gaussian_mu_for_epsilon(eps_ref, delta) if delta > 0 else None
    t = _thresholds(n_eval, eps_ref, delta, mu)
    tpr, fpr = _rates(t, eps_ref, delta, mu)
    med = _grid_median(tpr, fpr, n_eval, alpha, delta)
    i = int(np.argmax(med))
    lo, hi = t[max(i - 1, 0)], t[min(i + 1, len(t) - 1)]
    t2 = np.linspace(lo, hi, 17)
    tpr2, fpr2 = _rates(t2, eps_ref, delta, mu)
    return float(max(med[i], _grid_median(tpr2, fpr2, n_eval, alpha, delta).max()))


def _n_eval_needed(alpha: float, delta: float, eps_ref: float, claim: float, start: int) -> int | None:
    """Smallest n (evaluation trials per side) with canonical_median > claim: doubling, then bisection."""
    lo, hi = max(start, 1), max(start, 1) * 2
    while canonical_median(hi, alpha, delta, eps_ref) <= claim:
        lo, hi = hi, hi * 2
        if hi > N_MAX:
            return None
    while hi - lo > max(1, lo // 64):  # ~1.5% resolution
        mid = (lo + hi) // 2
        if canonical_median(mid, alpha, delta, eps_ref) > claim:
            hi = mid
        else:
            lo = mid
    return hi


def canonical_power(n_eval: int, alpha: float, delta: float, claim: float, *, factor: float = FACTOR) -> PowerCheck:
    """The default criterion (module docstring): scalar Laplace (delta = 0) or Gaussian (delta > 0) at
    ``factor`` x the claim, median eps lower bound of the runner's pipeline with ``n_eval`` trials."""
    if not (isinstance(n_eval, (int, np.integer)) and n_eval >= 1):
        raise PrivacctError(f"n_eval must be an integer >= 1, got {n_eval!r}")
    if not (0 < alpha < 1):
        raise PrivacctError(f"alpha must be in (0, 1), got {alpha!r}")
    if not (factor > 1):
        raise PrivacctError(f"factor must be a number > 1, got {factor!r}")
    kind = "Laplace" if delta == 0 else "Gaussian"
    name = f"canonical-{kind.lower()}-{factor:g}x"
    if math.isinf(claim):
        return PowerCheck(name, "an infinite claim cannot be refuted by any audit", math.inf, 0.0, False, None)
    eps_ref = factor * claim
    ach = canonical_median(int(n_eval), float(alpha), float(delta), float(eps_ref))
    has = ach > claim
    needed = None
    if not has:
        n = _n_eval_needed(float(alpha), float(delta), float(eps_ref), float(claim), int(n_eval))
        needed = None if n is None else 2 * n
    desc = (f"median eps lower bound this audit ({n_eval} evaluation trials per side, per-test alpha {alpha:.3g}) "
            f"would certify for the scalar {kind} mechanism of true eps {eps_ref:g} = {factor:g} x the claim"
            + (f" (delta {delta:g})" if delta > 0 else "") + f": {ach:.3f} "
            + ("> " if has else "<= ") + f"claim {claim:g}")
    return PowerCheck(name, desc, float(eps_ref), float(ach), bool(has), needed)
