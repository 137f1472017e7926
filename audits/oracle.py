"""Exact privacy-loss distributions of observed releases, the oracle figure, and the learner power criterion.

An audited learner run reports, for every release that contains user 1, its noise model and its
noiseless value under each canary (:class:`privacct.algorithms.contract.Observation`). With those:

* **Privacy-loss distribution (PLD).** The log-likelihood ratio L = log p_D(x) / p_D'(x) of the
  observed releases is a sum of independent terms:

  - a Laplace(b) coordinate whose means differ by a b (a = |m_A - m_B| / b) contributes
    l = |z - a| - |z| for a standard Laplace z under D: an atom +a of mass 1/2, an atom -a of mass
    e^{-a}/2 and the density e^{-(a - l)/2} / 4 on (-a, a) (Dwork & Roth 2014, Def. 3.3, worked out);
  - Gaussian coordinates with independent N(0, sigma^2) noise contribute N(mu^2/2, mu^2) with
    mu^2 = sum_j (m_A,j - m_B,j)^2 / sigma_j^2: the pair is exactly mu-GDP (Dong, Roth, Su 2019,
    arXiv 1905.02383, Def. 2.6 and Cor. 2.13).

  Under D' the loss has the mirrored law (L_D' =d -L_D) for both kinds. The sum is computed on a
  fine grid by FFT convolution (the Laplace atoms fall on grid points; the continuous parts are
  integrated per cell); with Gaussian coordinates only, in closed form.

* **Oracle figure.** The auditor's own procedure (:mod:`privacct.audits.mechanism_audit`): half of the trials
  select a threshold test, the other half (n_eval per side) certify it with one-sided
  Clopper-Pearson bounds at the per-test failure probability alpha (alpha / 2 each),
  eps_lb = ln((TPR_lo - delta) / FPR_hi). With the Neyman-Pearson statistic L and the counts at their
  medians (TP = median Bin(n_eval, P_D[L > t]), FP = median Bin(n_eval, P_D'[L > t])), the best
  threshold t gives the ORACLE FIGURE: what the procedure certifies in a median run if the selection
  half found the best threshold. An audit reaching 0.8 of it has lost little to threshold selection.

* **Power criterion** (:func:`learner_power_criterion`): the same observation structure with every
  noise scale multiplied by the common factor that makes it leak 2 x claim: the larger of the factor that
  makes the learner's log ACCOUNT to 2 x claim and the one that makes the observation's own exact
  eps(delta) equal 2 x claim (the weaker of the two references);
  the audit has power iff that mechanism's oracle figure at n_eval exceeds the claim;
  ``trials_needed`` (per side) by bisection. The signature is the pluggable criterion of the
  auditor-core branch: ``criterion(n_eval, alpha, delta, claim) -> PowerCheck``.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from . import bounds
from .power import PowerCheck, reference_factor
from .privacy_loss import GRID_CELLS_PER_MIN_ATOM, MAX_GRID  # noqa: F401  (re-exported from their old home)
from .privacy_loss import LossStructure, loss_distribution, tail_curves

MAX_TRIALS = 10**9


def oracle_epsilon(s: LossStructure, n_eval: int, alpha: float, delta: float) -> float:
    """The oracle figure (module docstring): the best threshold's certified eps at median counts.

    Median counts are n p rounded (the binomial median is within 1 of n p); only thresholds with
    FPR <= 1/2 are scored (the best test lies in the upper tail), each distinct (TP, FP) pair once."""
    if n_eval < 1:
        return 0.0
    tpr, fpr = tail_curves(s)
    keep = (tpr > 0) & (fpr <= 0.5)
    if not keep.any():
        return 0.0
    tp = np.round(n_eval * tpr[keep])
    fp = np.round(n_eval * fpr[keep])
    # each distinct (TP, FP) pair once: both curves are monotone in the threshold, so equal pairs are consecutive and
    # dropping repeats keeps the same set (O(n), where a sort of the pairs took seconds on a 4M-point grid: a weighted
    # counter's tiny Laplace ratios, docs/auditing.md#factorized-counters)
    new = np.ones(tp.size, dtype=bool)
    new[1:] = (tp[1:] != tp[:-1]) | (fp[1:] != fp[:-1])
    pairs = np.stack([tp[new], fp[new]], axis=1)
    eps, _, _ = bounds.epsilon_lower_bound(pairs[:, 0], n_eval, pairs[:, 1], n_eval, delta=delta, alpha=alpha)
    return float(np.max(eps))


def trials_for(s: LossStructure, target: float, alpha: float, delta: float, *, lo: int = 10,
               hi: int = MAX_TRIALS) -> int | None:
    """Smallest n_eval (bisection, to 2%) whose oracle figure exceeds ``target``; None if beyond ``hi``."""
    if oracle_epsilon(s, hi, alpha, delta) <= target:
        return None
    if oracle_epsilon(s, lo, alpha, delta) > target:
        return lo
    while hi > lo * 1.02 + 1:
        mid = int(math.sqrt(lo * hi))
        if oracle_epsilon(s, mid, alpha, delta) > target:
            hi = mid
        else:
            lo = mid
    return hi


def gdp_epsilon(mu: float, delta: float) -> float:
    """eps(delta) of mu-GDP (0 when mu = 0); the exact eps of an all-Gaussian observation."""
    return float(bounds.epsilon_from_mu(mu, delta)) if delta > 0 else (0.0 if mu == 0 else float("inf"))


def learner_power_criterion(structure: LossStructure, noise_factor: Callable[[float], float], *,
                            label: str) -> Callable[[int, float, float, float], PowerCheck]:
    """The pluggable power criterion of a learner audit.

    ``structure``: the observation's loss structure at the audited noise; ``noise_factor(eps)``: the
    common factor by which every noise scale of the learner's log must be multiplied for it to
    account to ``eps`` (e.g. from :func:`privacct.calibrate.calibrate_log`). The reference mechanism is the
    same observation structure with its noise scaled until it leaks 2 x claim: by the larger of two factors
    (the weaker reference), the one that makes the learner's LOG account to 2 x claim and the one that makes
    the OBSERVATION'S OWN exact eps(delta) equal 2 x claim (:func:`privacct.audits.power.reference_factor`). The second
    matters when the code leaks more than its log (a counter that redraws its nodes): scaling the log alone
    would then give a reference leaking far more than twice the claim, and an audit could "pass" a mechanism
    leaking 3 x its claim with too few trials to see it. The criterion asks: would that reference be
    certified above the claim at ``n_eval`` (median, oracle figure)? ``trials_needed`` is per side (2 x n_eval).
    """

    def criterion(n_eval: int, alpha: float, delta: float, claim: float) -> PowerCheck:
        if not math.isfinite(2.0 * claim):   # no mechanism leaks "twice" a claim this large: no reference
            return PowerCheck("learner-oracle", f"{label}: 2 x the claim {claim:g} is not a finite eps, so there is no "
                              "reference mechanism: no power criterion", None, 0.0, False, None)
        f_log = noise_factor(2.0 * claim)
        f_obs = reference_factor(structure, 2.0 * claim, delta)   # the observation's own exact eps(delta) = 2 x claim
        f = f_log if f_obs is None else max(f_log, f_obs)
        ref = structure.scaled(f)
        achievable = oracle_epsilon(ref, n_eval, alpha, delta)
        has_power = bool(achievable > claim)
        needed = None if has_power else trials_for(ref, claim, alpha, delta)
        return PowerCheck(
            criterion="learner-oracle",
            description=(f"{label}: the same observation ({structure.describe()}) with every noise scale x {f:.4g}, "
                         + ("so that its log accounts to " if f_obs is None or f_log >= f_obs
                            else "so that its own exact eps (which exceeds what its log accounts) is ")
                         + f"2 x claim = {2 * claim:g}; exact privacy-loss distribution, "
                         f"best Neyman-Pearson threshold, median counts at {n_eval} certifying trials per side"),
            reference_epsilon=2.0 * claim, achievable_lower_bound=achievable, has_power=has_power,
            trials_needed=None if needed is None else 2 * needed)

    return criterion


__all__ = ["LossStructure", "PowerCheck", "gdp_epsilon", "learner_power_criterion", "loss_distribution",
           "oracle_epsilon", "tail_curves", "trials_for"]
