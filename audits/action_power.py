"""Power of the many-trial black-box ACTION audit of a JDP learner (docs/auditing.md#power-of-the-action-audit).

``audit_learner(config, observe="actions")`` sees the actions prescribed to users 2..K, one-hot, through the default
candidate statistics: no exact likelihood ratio, so no oracle criterion (:func:`privacct.audits.oracle.
learner_power_criterion` needs the released statistics' loss structure). Its power is SIMULATED against a leakier
version of the same learner, as :func:`privacct.audits.mechanism_audit.run_audit` does for a black-box mechanism with
``leakier=``:

* **the reference**: the SAME code at the SAME configuration (K, H, environment, options, bonus, the fixed users and
  coins, any planted mutant or noise multiplier) with every privacy noise scale further multiplied by the common factor
  f that makes the learner's declared log account to ``FACTOR`` (= 2) x the claim
  (:func:`privacct.audits.noise_factor.noise_factor_for`, under the accountant of the audit's own sandwich;
  :class:`privacct.algorithms.contract.AuditHook` ``noise_multiplier``: the log and the ledger keep the declared
  scales). For a faithful learner its releases are then (2 x claim)-DP by the accountant, and its actions, a
  post-processing of them, at most that (the billboard lemma);
* **the simulation**: ``LEAKIER_REPLICATES`` (3) independent action audits of the reference by the SAME pipeline
  (trials per side, tester, per-test alpha, one pair), seeds ``SeedSequence(seed, spawn_key=(2^32 - 1, r, 0))``
  (:func:`privacct.audits.mechanism_audit.leakier_seeds`: independent of the audit's own streams);
* **power** (:func:`privacct.audits.power.leakier_check`): a majority of the replicates certify more than the claim and
  none is certified above 2 x the claim jointly at the audit's confidence (a reference certified above its own
  accounted eps is not a reference at 2 x the claim: the code leaks more than its log, and the audit gets no power).

What "power" then means: had the learner leaked like THAT reference (every noise scale shrunk until the log accounts
2 x the claim), this audit would have certified a violation in a median run. It is not power against every leak: a
policy that reads an un-noised statistic (``bonus-on-exact-counts``, ``switch-on-exact-gram``) is another mechanism,
which the reference says nothing about (the billboard check and the one-run action audit look for those). And since
the actions read only part of what is released (a greedy action is one comparison of a few noisy statistics, while
the accounted loss is spread over every released coordinate), the reference's actions usually carry far less than
2 x the claim: measured at the learners' audit configurations, its action audit certifies a small fraction of the
claim and the audit stays ``inconclusive`` (benchmarks/learner_audits.md#black-box-action-audits-power).

``trials_needed``: an ESTIMATE (a plug-in, not a guarantee), from the median replicate's certified test: its counts'
rates (TP / positives, (FP + 1/2) / (negatives + 1)) fed to the conservative median of the runner's certification
(:func:`privacct.audits.power.curve_median`) at growing trials; None when even those rates taken as exact certify no
more than the claim at any trial count (more trials cannot help: the reference's actions do not carry the claim), or
when the check failed for the 2 x guard.

Cost: when the audit does not fail, 3 x its runs more (4 x in all); a failing audit simulates nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from privacct.errors import PrivacctError

from . import bounds
from .mechanism_audit import _certify, leakier_seeds
from .power import FACTOR, LEAKIER_REPLICATES, PowerCheck, _trials_needed, curve_median, leakier_check
from .testers import DIRECTIONS, ThresholdTester

CRITERION = "leakier-learner-simulated"


@dataclass(frozen=True)
class ActionReference:
    """The reference of the action audit's power (module docstring): the audited learner's noise multiplier times
    ``factor`` (the common noise factor f that makes the declared log account ``reference_epsilon`` = 2 x the claim,
    under ``accountant``)."""

    factor: float
    noise_multiplier: float
    reference_epsilon: float
    accountant: str


def action_reference(config, accountant: str, noise_multiplier: float = 1.0, *, factor: float = FACTOR) -> ActionReference:
    """The reference learner's noise multiplier (module docstring): ``noise_multiplier`` (the audited run's, > 0) times
    the factor f with which ``config``'s declared log accounts ``factor`` x its claim under ``accountant``."""
    from .noise_factor import noise_factor_for

    if not (factor > 1):
        raise PrivacctError(f"factor must be a number > 1, got {factor!r}")
    target = factor * float(config.epsilon)
    f = float(noise_factor_for(config, accountant)(target))
    if not (math.isfinite(f) and f > 0):
        raise PrivacctError(f"no noise factor makes {config.algorithm!r}'s log account {target:g} (got {f!r})")
    return ActionReference(f, float(noise_multiplier) * f, target, accountant)


def _estimated_trials(outcome, n_eval: int, alpha: float, delta: float, claim: float) -> tuple[int | None, float]:
    """(trials per side, both halves, or None; the plug-in rates' best achievable bound) from one certified test's
    counts (module docstring: a plug-in estimate, not a guarantee)."""
    pos, neg = outcome.tp + outcome.fn, outcome.fp + outcome.tn
    if pos <= 0 or neg <= 0:
        return None, 0.0
    tpr, fpr = outcome.tp / pos, (outcome.fp + 0.5) / (neg + 1.0)
    ceiling = math.log((tpr - delta) / fpr) if tpr > delta else 0.0   # what exact rates would certify at any n
    if ceiling <= claim:
        return None, ceiling
    t, f = np.array([tpr]), np.array([fpr])
    n = _trials_needed(lambda m: curve_median(t, f, m, alpha, delta), claim, int(n_eval))
    return (None if n is None else 2 * n), ceiling


def simulate_action_power(mech, reference: ActionReference, *, claim: float, delta: float, trials: int,
                          confidence: float, seed: int, chunk_size: int, executor: str = "auto", scheduler: Any = None,
                          workers: int | None = None) -> PowerCheck:
    """The power check of an action audit of ``mech`` (a :class:`privacct.audits.learner_audit.LearnerMechanism`
    observing actions) that did not fail: ``LEAKIER_REPLICATES`` simulated audits of ``mech`` with its noise
    multiplier set to ``reference.noise_multiplier`` (module docstring), ``trials`` per side, per-test alpha
    (1 - ``confidence``) / 2 as the audit's (one pair, two directions)."""
    if reference.noise_multiplier > 1.0:
        return not_simulated(
            f"the reference needs noise multiplier {reference.noise_multiplier:.4g} > 1 (more noise than the audited run "
            f"draws, which the audit hook cannot plant): this configuration's log already accounts more than "
            f"{reference.reference_epsilon:g} = {FACTOR:g} x the claim, so no leakier version at about {FACTOR:g} x the "
            "claim exists to simulate; no power")
    ref = replace(mech, noise_multiplier=reference.noise_multiplier)
    ref.hook("A")   # validates the multiplier before anything runs
    alpha = (1.0 - confidence) / len(DIRECTIONS)
    lbs, joint, best = [], [], []
    for r in range(LEAKIER_REPLICATES):
        outcomes = _certify(ref, [("A", "B")], leakier_seeds(seed, r, 1), trials=trials, tester=ThresholdTester(),
                            alpha=alpha, delta=delta, chunk_size=chunk_size, executor=executor, scheduler=scheduler,
                            workers=workers)[0]
        top = max(outcomes, key=lambda o: o.epsilon_lower_bound)
        lbs.append(float(top.epsilon_lower_bound))
        best.append(top)
        joint.append(max(float(bounds.epsilon_lower_bound(o.tp, o.tp + o.fn, o.fp, o.fp + o.tn, delta=delta,
                                                          alpha=alpha / LEAKIER_REPLICATES)[0]) for o in outcomes))
    check = leakier_check(lbs, claim, trials=trials, joint_lower_bounds=joint)
    too_leaky = max(joint) > FACTOR * claim
    needed, ceiling = None, None
    if not check.has_power and not too_leaky:
        median = best[int(np.argsort(lbs, kind="stable")[len(lbs) // 2])]
        needed, ceiling = _estimated_trials(median, trials - trials // 2, alpha, delta, claim)
    ref_text = (f"the same learner with every privacy noise scale x {reference.factor:.4g} (noise multiplier "
                f"{reference.noise_multiplier:.4g}), so that its log accounts {reference.reference_epsilon:g} = "
                f"{FACTOR:g} x the claim ({reference.accountant}); power against THAT leakier version only, not against "
                "every leak (a policy reading un-noised data is another mechanism: the billboard check and the one-run "
                "action audit look for it)")
    desc = ref_text + "; " + check.description.replace("leakier version of the mechanism, simulated: ", "simulated: ")
    if ceiling is not None and not check.has_power:
        desc += ("; estimated from the median replicate's rates (a plug-in, not a guarantee): "
                 + (f"about {needed} trials per side would give power" if needed is not None else
                    f"even exact, its test certifies at most {ceiling:.3f} <= claim {claim:g} at any trial count: the "
                    "reference's actions do not carry the claim, and more trials cannot give this audit power"))
        desc = desc.replace("; rerun with more trials (at least twice as many): the simulation gives no trial count", "")
    return PowerCheck(CRITERION, desc, None, check.achievable_lower_bound, bool(check.has_power), needed)


def not_simulated(reason: str) -> PowerCheck:
    """The power check of an action audit that simulated nothing (it failed: ``fails`` needs no power; or no reference
    at 2 x the claim can be planted): no power."""
    return PowerCheck(CRITERION, f"not simulated: {reason}", None, None, False, None)


__all__ = ["ActionReference", "CRITERION", "action_reference", "not_simulated", "simulate_action_power"]
