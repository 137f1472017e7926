"""The billboard check: are the actions a JDP learner prescribes to users 2..K a function of its releases?

Every JDP proof of the five papers goes through the billboard lemma (Hsu et al. 2016, Lemma 9;
docs/seed-002-tabular.md, seed 004's Lemma 13): the released statistics are DP in user 1, and the
action the learner prescribes to user k is a function of those releases and of user k's own data, so
the actions sent to users 2..K (the JDP output M_{-1}) are a post-processing of the releases. A learner
whose policy reads an un-noised statistic anywhere (a bonus on exact counts, a switching test on the
exact Gram matrix, a clip on raw data) breaks that step while its log, its ledger and its released
statistics all stay right; an audit of the releases cannot see it, and an audit of the actions needs
many trials to see a small leak.

The check is a coupling, not a statistical test of the privacy loss (docs/auditing.md#the-billboard-check).
Each trial runs the learner twice on the same seed (the same coins, the same noise draws, users 2..K
fixed): once with user 1 = canary A, recording every value of hers that enters a privacct primitive,
and once with user 1 = canary B in which every such value is replaced by canary A's
(:class:`privacct.tap.Coupling`), so every release is canary A's while everything the learner computes
outside the primitives still reads canary B's data. A learner that satisfies the billboard step
prescribes users 2..K the same actions in both runs, in every trial; a learner whose actions read user 1
some other way prescribes different actions whenever that reading changes a decision.

Verdicts: ``fails`` when some trial prescribes different actions (or the replay could not follow canary A's
run: its control flow read user 1 outside the releases): one difference is a proof, at any number of trials.
``passes`` when none of the ``trials`` does AND the check had power: the Clopper-Pearson upper bound ``p_upper``
on the probability that a trial would is at most :data:`REFERENCE_LEAK_RATE` (0.1), i.e. a leak that changes an
action in 1 run in 10, the rate measured for the planted ``bonus-on-exact-counts`` at the paper's K
(benchmarks/learner_audits.md#billboard-checks), would have been seen with probability >= the confidence
(0.9^N <= 1 - confidence: 29 trials at 95%, 44 at 99%). Each coupled trial is exact, but whether a leak
changes an action depends on the seed, so "no difference in N trials" is a statement about the runs sampled,
not a proof. ``inconclusive`` when a release over user 1 could not be coupled (noise drawn over her without
her share: privacct cannot make that release equal under both canaries, so a difference would prove
nothing), or when no trial differed but ``p_upper`` > 0.1 (too few trials: ``trials_needed`` says how many
would give the power; docs/auditing.md#the-billboard-check).
A release coupled by moving its noise by her reported share (a release of several users) equals canary A's
up to rounding, not to the bit; the result lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from privacct.algorithms.contract import ConfigFields, RunConfig
from privacct.errors import PrivacctError, check_count

from .bounds import cp_upper
from .learner_audit import resolve_audit_config

BATCH = 16   # trials run together in one batched learner call (each one seed)
#: The reference leak of the power rule: a "passes" needs P[a trial differs] <= this at the confidence, so that a leak
#: changing an action in this fraction of runs would have been seen (bonus-on-exact-counts at the paper's K with the
#: printed bonus: 3 of 32 runs; benchmarks/learner_audits.md#billboard-checks, docs/auditing.md#the-billboard-check)
REFERENCE_LEAK_RATE = 0.1


def trials_for_power(confidence: float, rate: float = REFERENCE_LEAK_RATE) -> int:
    """The fewest coupled trials N >= 1 whose zero differences meet the power rule (module docstring): the
    Clopper-Pearson upper bound 1 - (1 - confidence)^(1/N) <= ``rate``, i.e. (1 - rate)^N <= 1 - confidence (a leak
    that changes an action in a fraction ``rate`` in (0, 1) of the runs goes unseen with probability at most
    1 - confidence). ``confidence`` in (0, 1). 29 at 0.95, 44 at 0.99."""
    alpha = 1.0 - confidence
    n = max(1, int(np.ceil(np.log(alpha) / np.log1p(-rate))))
    while n > 1 and float(cp_upper(0, n - 1, alpha)) <= rate:   # the float formula's rounding, either way
        n -= 1
    while float(cp_upper(0, n, alpha)) > rate:
        n += 1
    return n


@dataclass(frozen=True)
class ActionDifference:
    """The first trial whose coupled runs prescribed different actions: its index, the first user (>= 2) whose
    actions differ, and the actions she got under each canary (flattened)."""

    trial: int
    user: int
    actions_a: tuple
    actions_b: tuple


@dataclass(frozen=True)
class BillboardResult(ConfigFields):
    """The billboard check of one learner configuration (module docstring): ``config``, the RunConfig checked (its
    fields read as the result's own, ``r.episodes``), and what the check found."""

    config: RunConfig
    mutant: str | None
    trials: int
    differing: int
    confidence: float
    p_upper: float
    verdict: str
    diverged: tuple[str, ...] = ()
    uncoupled: tuple[str, ...] = ()
    shifted: tuple[str, ...] = ()
    first_difference: ActionDifference | None = None
    #: the coupled trials the power rule needs at this confidence (:func:`trials_for_power`); "passes" needs as many
    trials_needed: int = 0

    #: what the check tests (the report prints it beside every audit)
    tests: str = "JDP's billboard step: the actions to users 2..K are a function of the releases"
    #: the kind of result (the pytest plugin and the mutants table tell checks apart by it)
    check: str = "billboard"

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in ("algorithm", "privacy", "calibration", "episodes", "horizon", "env", "mutant",
                                           "trials", "differing", "confidence", "p_upper", "verdict", "tests")}
        d.update({"check": self.check, "diverged": list(self.diverged), "uncoupled": list(self.uncoupled),
                  "shifted": list(self.shifted), "trials_needed": self.trials_needed,
                  "reference_leak_rate": REFERENCE_LEAK_RATE,
                  "first_difference": None if self.first_difference is None else {
                      "trial": self.first_difference.trial, "user": self.first_difference.user,
                      "actions_a": list(self.first_difference.actions_a),
                      "actions_b": list(self.first_difference.actions_b)}})
        return d

    def summary(self) -> str:
        head = (f"billboard check {self.verdict.upper()} ({self.algorithm} {self.privacy} {self.calibration}, "
                f"K={self.episodes}, H={self.horizon}" + ("" if self.mutant is None else f", mutant {self.mutant}")
                + f"): {self.trials} coupled trials, every release equal to canary A's, ")
        if self.verdict == "inconclusive" and self.uncoupled:
            return head + ("not checkable: releases over user 1 that privacct cannot couple (" + "; ".join(self.uncoupled)
                           + "); a difference in actions would prove nothing")
        if self.verdict == "inconclusive":
            return head + (f"no trial prescribed users 2..K different actions, but {self.trials} trials have no power: "
                           f"P[a trial would] <= {self.p_upper:.3g} > {REFERENCE_LEAK_RATE:g} (Clopper-Pearson, confidence "
                           f"{self.confidence:g}), so a leak changing an action in a fraction {REFERENCE_LEAK_RATE:g} of the runs "
                           "could go unseen; "
                           f"{self.trials_needed} trials would give the check that power")
        if self.verdict == "fails":
            what = (f"{self.differing} of {self.trials} prescribed users 2..K different actions under canary B"
                    if self.differing else "the replay could not follow canary A's run")
            first = "" if self.first_difference is None else (
                f" (first: trial {self.first_difference.trial}, user {self.first_difference.user})")
            div = "" if not self.diverged else "; control flow differed: " + "; ".join(self.diverged[:3])
            return (head + what + first + div + ": the learner's actions read user 1 outside its releases, so its JDP "
                    "does not follow from the releases' DP (the billboard step of the proof fails for this code)")
        near = "" if not self.shifted else f"; {len(self.shifted)} release(s) coupled to rounding, not to the bit"
        return (head + f"no trial prescribed users 2..K different actions: P[a trial would] <= {self.p_upper:.3g} "
                f"(Clopper-Pearson, confidence {self.confidence:g}){near}. Tests the billboard step only: the releases' "
                "DP is what the released-statistics audit tests")


def _verdict(differing: int, diverged, uncoupled, p_upper: float) -> str:
    if differing or diverged:
        return "fails"
    if uncoupled or p_upper > REFERENCE_LEAK_RATE:   # not checkable, or no power (module docstring)
        return "inconclusive"
    return "passes"


def billboard_check(config: RunConfig | str, *, trials: int = 32, confidence: float = 0.95, seed: int = 0,
                    mutant: str | None = None, coins_seed: int = 0, fixed_users: bool = False, batch: int = BATCH,
                    progress: Callable[[int], None] | None = None, **fields: Any) -> BillboardResult:
    """Run the billboard check (module docstring) on ``trials`` >= 1 coupled pairs of runs of ``config`` (JDP only).

    ``config``: the RunConfig checked, passed whole; or, the keyword form, a learner name with the configuration's
    fields as keywords, read as :func:`privacct.audits.learner_audit.audit_learner` reads them (:func:`privacct.audits.learner_audit.
    audit_config`: ``episodes`` None is the learner's audit setting). ``mutant``: a planted policy bug the learner
    implements (``LearnerSpec.mutants``). ``progress(n)``: called with the trials done so far."""
    from privacct.algorithms.contract import AuditHook
    from privacct.algorithms.registry import get_learner
    from privacct.tap import Coupling

    privacy = config.privacy if isinstance(config, RunConfig) else fields.get("privacy", "jdp")
    if privacy != "jdp":
        raise PrivacctError(f"privacy must be jdp for a billboard check (under LDP the releases are the output), "
                            f"got {privacy!r}")
    cfg = resolve_audit_config(config, fields, caller="billboard_check")
    spec = get_learner(cfg.algorithm)
    check_count("episodes", cfg.episodes, minimum=2)
    check_count("trials", trials)
    check_count("batch", batch)
    if not 0.0 < confidence < 1.0:
        raise PrivacctError(f"confidence must be in (0, 1), got {confidence!r}")
    hook = AuditHook("A", fixed_users, coins_seed, 1.0, mutant)   # validates coins_seed and the mutant before anything runs
    seeds = np.random.SeedSequence(check_count("seed", seed, minimum=0)).spawn(trials)
    differing, first = 0, None
    diverged, uncoupled, shifted = [], [], []
    for start in range(0, trials, batch):
        chunk = seeds[start:start + batch]
        rec = Coupling("record")
        res_a = spec.run(cfg, chunk, audit=replace(hook, coupling=rec))
        rep = rec.replay()
        res_b = spec.run(cfg, chunk, audit=replace(hook, canary="B", coupling=rep))
        acts_a = res_a.tap.actions_to_others(int(cfg.episodes))
        acts_b = res_b.tap.actions_to_others(int(cfg.episodes))
        if acts_a is None or acts_b is None:
            raise PrivacctError(f"learner {cfg.algorithm!r} reports no actions of users 2..K (privacct.tap.prescribed): "
                                "a billboard check compares them")
        if rep.position != len(rep.values):
            rep.note("diverged", f"canary B's run put {rep.position} values of user 1 into primitives, canary A's "
                                 f"{len(rep.values)}")
        for seen, new in ((uncoupled, rec.uncoupled + rep.uncoupled), (diverged, rep.diverged), (shifted, rep.shifted)):
            seen.extend(x for x in dict.fromkeys(new) if x not in seen)
        a = acts_a.reshape(len(chunk), acts_a.shape[1], -1)
        b = acts_b.reshape(len(chunk), acts_b.shape[1], -1)
        differ = np.any(a != b, axis=2)                        # (trials, users 2..K)
        differing += int(differ.any(axis=1).sum())
        if first is None and differ.any():
            t, u = np.argwhere(differ)[0]
            first = ActionDifference(start + int(t), int(u) + 2, tuple(a[t, u].tolist()), tuple(b[t, u].tolist()))
        if progress is not None:
            progress(min(trials, start + batch))
    p_upper = float(cp_upper(differing, trials, 1.0 - confidence))
    verdict = _verdict(differing, diverged, uncoupled, p_upper)
    return BillboardResult(cfg, mutant, int(trials), differing, float(confidence), p_upper, verdict, tuple(diverged),
                           tuple(uncoupled), tuple(shifted), first, trials_for_power(confidence))


__all__ = ["REFERENCE_LEAK_RATE", "ActionDifference", "BillboardResult", "billboard_check", "trials_for_power"]
