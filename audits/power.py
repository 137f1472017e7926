"""Power criteria: could an audit with this many trials have seen a violation of the claim?

An audit whose eps lower bound does not exceed the claim has two readings: the mechanism meets the
claim, or the audit was too small to tell. A *power criterion* decides which one the audit may
report. It is a callable ``criterion(n_eval, alpha, delta, claim) -> PowerCheck`` (``n_eval``:
evaluation-half trials per side; ``alpha``: the failure probability of ONE certified test, after
the runner's union bound; ``delta``, ``claim``: the audited (eps, delta) claim); the runner calls it
once per audit (:func:`privacct.audits.mechanism_audit.run_audit`, keyword ``power=``). docs/auditing.md
(verdicts and power) states the rules; in short, power must be shown **against the mechanism
audited** (issue 19):

* :func:`structure_power`: for a mechanism whose observation is Laplace and Gaussian coordinates with
  known shifts (an exact :class:`privacct.audits.oracle.LossStructure`): the SAME structure with every
  noise scale multiplied by the common factor that makes its exact eps(delta) equal to twice the
  claim; the audit has power iff the median eps lower bound of that reference's Neyman-Pearson
  threshold test (same conservative median as below, on the exact privacy-loss distribution)
  exceeds the claim. The mechanisms of :mod:`privacct.audits.reference_mechanisms`, the catalogue and the
  planted-bug privatizers declare theirs (``power_criterion(dataset, neighbour)``).
* :func:`rates_power`: the same, for a reference given by the exact (TPR, FPR) curve of its
  Neyman-Pearson tests (discrete mechanisms: randomized response).
* a *leakier version* of a black-box mechanism (``run_audit(..., leakier=...)``): simulated, in the
  runner (:func:`leakier_check` turns the replicates into a :class:`PowerCheck`).
* :func:`unknown_power`: the default of a black-box audit: no power, so ``inconclusive`` unless it fails.
* :func:`canonical_power`: an explicit OPT-IN only (``power=canonical_power``). It is OPTIMISTIC for any
  mechanism that is not itself a scalar Laplace/Gaussian mechanism, see below.

:func:`canonical_power` (mechanism-agnostic, analytic, no Monte Carlo): the MEDIAN eps
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

Why the canonical criterion is optimistic: the scalar canonical mechanism is where this auditor is
at the statistical limit (a scalar threshold test on the Neyman-Pearson statistic; measured: Laplace
eps = 1 certifies 0.97 at 1e5 trials per side), so it asks the least an audit must be able to do. A
mechanism that spreads its privacy loss over many coordinates (a learner's or a bandit's noisy
statistics, each moved by a little; a tree counter whose noise is redrawn at every release) is far
harder to audit at the same eps: its pure eps is reached only where every coordinate saturates at
once, so the certifiable eps grows like eps / sqrt(#coordinates) (docs/auditing.md, the
Neyman-Pearson statistic). The canonical criterion then says "power: yes" for an audit that could not
have seen a violation of the mechanism audited (issue 19: a bandit leaking 3.2 x its claim reported
``passes``).

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
from .privacy_loss import loss_distribution, tail_curves

FACTOR = 2.0  # the canonical mechanism's true eps, as a multiple of the claim
GRID = 64  # B: binomial quantile levels per count
N_MAX = 10 ** 12  # trials per side beyond which trials_needed is reported as None


@dataclass(frozen=True)
class PowerCheck:
    """Whether an audit could have seen a violation of its claim.

    ``criterion``: short name; ``description``: one sentence stating it; ``reference_epsilon``: the
    true eps of the reference (violating) mechanism, None when it is not known (a simulated leakier
    version of a black box, or no reference at all); ``achievable_lower_bound``: the (median) eps lower
    bound this audit would certify for it, None when nothing was measured; ``has_power``: whether the
    audit may report ``passes``; ``trials_needed``: trials per side (selection + evaluation) that would
    give power, when it has none (None when it has, when no finite count up to ``N_MAX`` would, or
    when the criterion gives no estimate: its description then says so).
    ``to_dict`` is strict JSON: a None or non-finite number is written as null.
    """

    criterion: str
    description: str
    reference_epsilon: float | None
    achievable_lower_bound: float | None
    has_power: bool
    trials_needed: int | None

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("reference_epsilon", "achievable_lower_bound"):
            v = d[k]
            d[k] = float(v) if v is not None and math.isfinite(v) else None
        d["has_power"] = bool(d["has_power"])
        d["trials_needed"] = None if d["trials_needed"] is None else int(d["trials_needed"])
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
    """The canonical criterion (module docstring), an explicit opt-in (``power=canonical_power``): scalar
    Laplace (delta = 0) or Gaussian (delta > 0) at ``factor`` x the claim, median eps lower bound of the
    runner's pipeline with ``n_eval`` trials. Optimistic for any mechanism that is not itself scalar:
    it is not the mechanism audited (issue 19)."""
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
            + ("> " if has else "<= ") + f"claim {claim:g} (a canonical reference, not the mechanism audited: "
            "optimistic for a mechanism that spreads its loss over many coordinates)")
    return PowerCheck(name, desc, float(eps_ref), float(ach), bool(has), needed)


# --------------------------------------------------------------------------------------------------
# Power against the mechanism audited (issue 19)

NO_POWER_REASON = "no violation found; power unknown for this mechanism"
LEAKIER_REPLICATES = 3  # simulated audits of a leakier version (runner); majority of 3 (see leakier_check)
_CURVE_TESTS = 96  # thresholds of a reference's ROC curve scored per pass (then refined around the best)


def unknown_power(n_eval: int, alpha: float, delta: float, claim: float) -> PowerCheck:
    """The default criterion of a black-box audit: no power (``inconclusive`` unless the audit fails).

    Nothing is known about the mechanism's privacy-loss distribution and no leakier version of it was
    simulated, so nothing says what this many trials could have seen (docs/auditing.md#verdicts-and-power)."""
    return PowerCheck(
        "unknown",
        "power unknown for this mechanism: a black-box audit passes only with power against a leakier version of "
        "itself (leakier=, e.g. the same mechanism with its noise scale halved), an explicit criterion (power=), or a "
        "mechanism that declares its exact privacy-loss structure (power_criterion(dataset, neighbour)); "
        "canonical_power is an opt-in and is optimistic for mechanisms that spread their loss over many coordinates",
        None, None, False, None)


def _check_args(n_eval, alpha) -> None:
    if not (isinstance(n_eval, (int, np.integer)) and n_eval >= 1):
        raise PrivacctError(f"n_eval must be an integer >= 1, got {n_eval!r}")
    if not (0 < alpha < 1):
        raise PrivacctError(f"alpha must be in (0, 1), got {alpha!r}")


def curve_median(tpr: np.ndarray, fpr: np.ndarray, n: int, alpha: float, delta: float) -> float:
    """Conservative median eps lower bound (module docstring) of the best threshold test on a reference
    whose Neyman-Pearson tests have rates (``tpr``, ``fpr``), with ``n`` certifying trials per side.

    Tests with FPR <= 1/2 and TPR > 0 are scored (the best test lies in the upper tail, as
    :func:`privacct.audits.oracle.oracle_epsilon`): at most ``_CURVE_TESTS`` spread evenly in log FPR,
    then the thresholds between the best one's neighbours."""
    tpr, fpr = np.asarray(tpr, dtype=float).ravel(), np.asarray(fpr, dtype=float).ravel()
    keep = (tpr > 0) & (fpr <= 0.5)
    if not keep.any():
        return 0.0
    order = np.argsort(fpr[keep], kind="stable")
    tpr, fpr = tpr[keep][order], fpr[keep][order]

    def pick(lo: int, hi: int) -> np.ndarray:
        if hi - lo <= _CURVE_TESTS:
            return np.arange(lo, hi)
        lf = np.log(np.maximum(fpr[lo:hi], 1e-300))
        idx = lo + np.searchsorted(lf, np.linspace(lf[0], lf[-1], _CURVE_TESTS))
        return np.unique(np.clip(idx, lo, hi - 1))

    idx = pick(0, fpr.size)
    med = _grid_median(tpr[idx], fpr[idx], n, alpha, delta)
    i = int(np.argmax(med))
    best = float(med[i])
    lo, hi = int(idx[max(i - 1, 0)]), int(idx[min(i + 1, idx.size - 1)]) + 1
    if hi - lo > 2:
        idx2 = pick(lo, hi)
        best = max(best, float(_grid_median(tpr[idx2], fpr[idx2], n, alpha, delta).max()))
    return best


def _trials_needed(median_at: Callable[[int], float], claim: float, start: int) -> int | None:
    """Smallest n (evaluation trials per side) with median_at(n) > claim: doubling, then bisection to ~1.5%
    (as :func:`_n_eval_needed`); None beyond ``N_MAX``."""
    lo, hi = max(start, 1), max(start, 1) * 2
    while median_at(hi) <= claim:
        lo, hi = hi, hi * 2
        if hi > N_MAX:
            return None
    while hi - lo > max(1, lo // 64):
        mid = (lo + hi) // 2
        if median_at(mid) > claim:
            hi = mid
        else:
            lo = mid
    return hi


def exact_epsilon(structure, delta: float) -> float:
    """The exact eps(delta) of an observation with loss structure ``structure``
    (:class:`privacct.audits.oracle.LossStructure`).

    delta = 0: the pure eps, sum_j a_j (inf with a Gaussian part; Dwork & Roth 2014, Thm 3.6 and 3.16,
    attained where every Laplace coordinate saturates). Gaussian part only: eps(delta) of mu-GDP
    (Dong, Roth, Su 2019, Cor. 2.13; Balle & Wang 2018, Thm 8). Otherwise the hockey-stick divergence
    delta(eps) = E_D[(1 - e^(eps - L))_+] of the privacy-loss distribution (Balle & Wang 2018, Thm 5;
    docs/auditing.md#the-neyman-pearson-statistic), on the oracle's grid, solved for eps.
    """
    if delta == 0:
        return float(structure.pure_epsilon)
    if not structure.laplace:
        e = bounds.epsilon_from_mu(structure.mu, delta)
        return math.inf if e is None else float(e)
    grid, p = loss_distribution(structure)

    def excess(eps: float) -> float:
        m = grid > eps
        return float(np.sum(p[m] * -np.expm1(eps - grid[m]))) - delta

    if excess(0.0) <= 0:
        return 0.0
    return float(optimize.brentq(excess, 0.0, float(grid.max()), xtol=1e-10))


def reference_factor(structure, target: float, delta: float) -> float | None:
    """The common factor on every noise scale of ``structure`` that makes its exact eps(delta)
    (:func:`exact_epsilon`) equal to ``target`` (None when no factor does: no differing coordinate, or a
    Gaussian part under delta = 0)."""
    if not structure.laplace and structure.mu == 0:
        return None
    if delta == 0:
        if structure.mu > 0:
            return None
        return structure.pure_epsilon / target          # pure eps scales as 1 / factor
    if not structure.laplace:
        return structure.mu / gaussian_mu_for_epsilon(target, delta)
    # mixed or Laplace under delta > 0: eps(delta) of structure.scaled(f) decreases in f; bisection in log f
    g = lambda lf: exact_epsilon(structure.scaled(math.exp(lf)), delta) - target  # noqa: E731
    lo, hi = -1.0, 1.0
    while g(lo) < 0:
        lo -= 2.0
    while g(hi) > 0:
        hi += 2.0
    return math.exp(optimize.brentq(g, lo, hi, xtol=1e-9))


def reference_structure(structure, target: float, delta: float):
    """``structure`` with every noise scale multiplied by :func:`reference_factor` (None when there is none)."""
    f = reference_factor(structure, target, delta)
    return None if f is None else structure.scaled(f)


@lru_cache(maxsize=4096)
def _structure_median(ref, n: int, alpha: float, delta: float) -> float:
    tpr, fpr = tail_curves(ref)
    return curve_median(tpr, fpr, n, alpha, delta)


def structure_power(structure, *, label: str = "", factor: float = FACTOR) -> PowerCriterion:
    """A power criterion from the mechanism's own exact privacy-loss structure (module docstring).

    ``structure``: the :class:`privacct.audits.oracle.LossStructure` of the audited observation (one
    entry a_j = |m_D,j - m_D',j| / b_j per differing Laplace coordinate, mu for the Gaussian part). The
    reference is the same structure at ``factor`` x the claim (:func:`reference_structure`); the audit
    has power iff its Neyman-Pearson threshold test's conservative median eps lower bound at ``n_eval``
    exceeds the claim (:func:`curve_median`). ``trials_needed`` per side, by doubling and bisection.
    Valid when the auditor's tester finds (close to) the Neyman-Pearson test of the observation:
    independent coordinates (the plug-in product-Laplace ratio, the LDA projection), or a mechanism
    audited with its densities; ``tests/audits/test_blackbox_power.py`` checks it against simulated
    audits of the reference.
    """
    if not (factor > 1):
        raise PrivacctError(f"factor must be a number > 1, got {factor!r}")

    def criterion(n_eval: int, alpha: float, delta: float, claim: float) -> PowerCheck:
        _check_args(n_eval, alpha)
        name = f"exact-loss-{factor:g}x"
        what = f"{label + ': ' if label else ''}the same observation ({structure.describe()})"
        if math.isinf(claim):
            return PowerCheck(name, "an infinite claim cannot be refuted by any audit", math.inf, 0.0, False, None)
        target = factor * claim
        ref = reference_structure(structure, target, float(delta))
        if ref is None:
            why = ("no coordinate differs" if not structure.laplace and structure.mu == 0
                   else "a Gaussian part has no finite eps at delta = 0")
            return PowerCheck(name, f"{what}: no reference at {factor:g} x the claim ({why})", None, None, False, None)
        f = (structure.laplace[0] / ref.laplace[0]) if structure.laplace else structure.mu / ref.mu
        ach = _structure_median(ref, int(n_eval), float(alpha), float(delta))
        has = ach > claim
        needed = None
        if not has:
            n = _trials_needed(lambda m: _structure_median(ref, m, float(alpha), float(delta)), claim, int(n_eval))
            needed = None if n is None else 2 * n
        desc = (f"{what} with every noise scale x {f:.4g}, so that its exact eps"
                + (f"({delta:g})" if delta > 0 else "") + f" is {target:g} = {factor:g} x the claim: median eps lower "
                f"bound of its Neyman-Pearson threshold test at {n_eval} evaluation trials per side (per-test alpha "
                f"{alpha:.3g}, exact privacy-loss distribution): {ach:.3f} " + ("> " if has else "<= ") + f"claim {claim:g}")
        return PowerCheck(name, desc, float(target), float(ach), bool(has), needed)

    return criterion


def rates_power(reference_rates: Callable[[float, float], tuple], *, label: str, factor: float = FACTOR) -> PowerCriterion:
    """A power criterion from the exact rates of a reference mechanism's Neyman-Pearson tests.

    ``reference_rates(target, delta) -> (tpr, fpr)``: the (TPR, FPR) of the threshold tests on the
    likelihood ratio of the same mechanism re-parametrised so that its exact eps(delta) is ``target``
    (= ``factor`` x the claim), e.g. randomized response: one test, TPR = e^E / (1 + e^E), FPR = 1 - TPR.
    Power iff :func:`curve_median` at ``n_eval`` exceeds the claim (as :func:`structure_power`)."""

    def criterion(n_eval: int, alpha: float, delta: float, claim: float) -> PowerCheck:
        _check_args(n_eval, alpha)
        name = f"exact-rates-{factor:g}x"
        if math.isinf(claim):
            return PowerCheck(name, "an infinite claim cannot be refuted by any audit", math.inf, 0.0, False, None)
        target = factor * claim
        tpr, fpr = (np.atleast_1d(np.asarray(v, dtype=float)) for v in reference_rates(target, float(delta)))
        med = lambda m: curve_median(tpr, fpr, m, float(alpha), float(delta))  # noqa: E731
        ach = med(int(n_eval))
        has = ach > claim
        needed = None
        if not has:
            n = _trials_needed(med, claim, int(n_eval))
            needed = None if n is None else 2 * n
        desc = (f"{label} at exact eps{f'({delta:g})' if delta > 0 else ''} {target:g} = {factor:g} x the claim: median "
                f"eps lower bound of its Neyman-Pearson test at {n_eval} evaluation trials per side (per-test alpha "
                f"{alpha:.3g}): {ach:.3f} " + ("> " if has else "<= ") + f"claim {claim:g}")
        return PowerCheck(name, desc, float(target), float(ach), bool(has), needed)

    return criterion


def leakier_check(lower_bounds, claim: float, *, trials: int, joint_lower_bounds=None,
                  factor: float = FACTOR) -> PowerCheck:
    """The power check of a black-box audit from its leakier version's simulated audits.

    ``lower_bounds``: the eps lower bound each replicate certified for the leakier version (the SAME
    pipeline as the audit: trials, tester, per-test alpha, pairs; independent seeds);
    ``joint_lower_bounds``: the same counts at per-test alpha / #replicates, so that all of them hold
    together at the audit's confidence (union bound; default: ``lower_bounds``). Power iff

    * a MAJORITY of the replicates certify more than the claim: an estimate of "the median eps lower
      bound of the reference exceeds the claim", the rule of every criterion here. With 3 replicates
      the check says yes with probability p^3 + 3 p^2 (1 - p) when one replicate does with probability
      p (0.10 at p = 0.2, 0.50 at 0.5, 0.90 at 0.8): the smallest odd count whose majority is sharper
      than one draw, at 3 x the audit's cost (1 replicate: yes with probability p; 5: 0.06 / 0.94 at
      p = 0.2 / 0.8, at 5 x the cost); and
    * NONE is certified above ``factor`` x the claim (``joint_lower_bounds``): the reference must be a
      violation of about ``factor`` x the claim; one certified to leak more is not such a reference
      (power against it is optimistic), or the mechanism itself breaks its claim when the leakier
      version is it with its noise scale halved (pure eps exactly doubles). For a mechanism that meets
      its claim with such a leakier version (eps <= 2 x claim), this denies power with probability at
      most 1 - confidence.

    ``trials_needed``: None (the simulation does not extrapolate; the description says what to do).
    ``reference_epsilon``: None (the leakier version's eps is not known); ``achievable_lower_bound``:
    the replicates' median eps lower bound.
    """
    lbs = [float(v) for v in lower_bounds]
    if not lbs:
        raise PrivacctError("leakier_check needs at least one replicate")
    joint = lbs if joint_lower_bounds is None else [float(v) for v in joint_lower_bounds]
    above = sum(v > claim for v in lbs)
    med = float(np.median(lbs))
    majority = 2 * above > len(lbs)
    too_leaky = max(joint) > factor * claim
    has = majority and not too_leaky
    shown = ", ".join(f"{v:.3f}" for v in lbs)
    desc = (f"leakier version of the mechanism, simulated: {len(lbs)} independent audits at the same {trials} trials "
            f"per side, tester, per-test alpha and pairs certified [{shown}]; {above} of {len(lbs)} above the claim "
            f"{claim:g}, {len(lbs) - above} failed to (median {med:.3f})")
    if too_leaky:
        desc += (f"; one is certified above {factor:g} x the claim ({max(joint):.3f}, jointly at the audit's "
                 f"confidence), so the leakier version is not a reference at about {factor:g} x the claim (it leaks "
                 f"more, or - with its noise scale halved - the mechanism itself breaks its claim): no power")
    elif not majority:
        desc += "; rerun with more trials (at least twice as many): the simulation gives no trial count"
    return PowerCheck("leakier-simulated", desc, None, med, bool(has), None)


def best_check(checks) -> PowerCheck:
    """One check for an audit of several pairs, from one criterion per pair: the audit's eps lower bound is
    the maximum over its pairs, so it has power when one pair's reference would be certified above the
    claim. The check with power (else the largest achievable bound) is kept; ``trials_needed``: the
    fewest any pair needs."""
    checks = list(checks)
    if len(checks) == 1:
        return checks[0]
    key = lambda c: (bool(c.has_power), -math.inf if c.achievable_lower_bound is None else c.achievable_lower_bound)  # noqa: E731
    best = max(checks, key=key)
    if best.has_power:
        return best
    needs = [c.trials_needed for c in checks if c.trials_needed is not None]
    return PowerCheck(best.criterion, f"best of {len(checks)} pairs: {best.description}", best.reference_epsilon,
                      best.achievable_lower_bound, False, min(needs) if needs else None)
