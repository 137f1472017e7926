"""A minimal faithful JDP learner whose actions read its one release in the Laplace tail (tests only).

Why it exists: the power of the black-box action audit (privacct.audits.action_power) is simulated against the same
learner with its noise scaled until its log accounts 2 x the claim, and it has power only where the actions carry more
than half of that reference's loss. No registered learner does at its audit configuration (a greedy action reads a
few of the many released coordinates: benchmarks/learner_audits.md#black-box-action-audits-power), so the criterion's
``passes`` branch is exercised here on the smallest learner where it does:

* users 1..K are reward-response functions, horizon 1, two actions; canary A answers 0, canary B answers 1 (user 1's
  reward moves by 1: l1 sensitivity 1);
* after user 1's episode ONE release, y = r_1 + Lap(b) (privacct.mechanisms.laplace over user 1), b = 1 / eps
  (``tight``: the calibrator's), declared in the log as one Laplace group (Dwork & Roth 2014, Thm 3.6);
* users 2..K are prescribed action 1 iff y > t (option ``threshold``, default 1). For t >= 1 the event has
  probability 1/2 e^(-(t - 1)/b) under B and 1/2 e^(-t/b) under A: their ratio is e^(1/b), the whole eps, so the
  action bit carries all of the release's loss (the billboard lemma holds: the action is a function of y).

Planted policy leak (``AuditHook.mutant`` ``threshold-on-exact``): the action reads the exact reward (1 iff r_1 > 1/2),
which the release's DP says nothing about.
"""

from __future__ import annotations

import numpy as np

from privacct.algorithms.contract import AuditSetting, LearnerSpec, RunConfig, RunResult, noise_generators
from privacct.calibrate import calibrate_log
from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.log import Claim, MechanismLog, ReleaseGroup, Sensitivity, Structure
from privacct.mechanisms import laplace
from privacct.tap import prescribed, user_contribution

NAME = "test-threshold-jdp"
GROUP = "reward"
MUTANT = "threshold-on-exact"


def _threshold(config: RunConfig) -> float:
    opts = dict(config.options)
    unknown = sorted(set(opts) - {"threshold"})
    if unknown:
        raise PrivacctError(f"unknown option(s) {', '.join(unknown)}; allowed: threshold")
    return float(opts.get("threshold", 1.0))


def build_log(config: RunConfig) -> MechanismLog | None:
    _threshold(config)
    if config.privacy == "none":
        return None
    log = MechanismLog(
        name=f"{NAME}/{config.calibration}", privacy_model="joint",
        release_groups=(ReleaseGroup(name=GROUP, mechanism="laplace", noise_scale=1.0 / config.epsilon,
                                     sensitivity=Sensitivity("l1", 1.0, "user 1's reward in [0, 1]"),
                                     structure=Structure("single"), dimension=1,
                                     description="user 1's reward, released once after her episode"),),
        claim=Claim(config.epsilon, config.delta), source="tests/audits/threshold_learner.py")
    return calibrate_log(log, epsilon=config.epsilon, delta=config.delta) if config.calibration == "tight" else log


def run(config: RunConfig, seeds, *, audit=None, progress=None) -> RunResult:
    K, B = int(config.episodes), len(seeds)
    t = _threshold(config)
    log = build_log(config)
    ledger = Ledger()
    noise = noise_generators(seeds, 0, audit)
    role = None if audit is None else audit.role(1)
    r1 = np.full(B, 1.0 if role == "B" else 0.0)
    if audit is not None:   # user 1's share of the release under each canary (privacct.tap)
        user_contribution(GROUP, a=np.zeros(B), b=np.ones(B))
    y = r1 + laplace(noise, (), log.group(GROUP).noise_scale, ledger=ledger, group=GROUP, users=(1, 1))
    leak = audit is not None and audit.mutant == MUTANT
    act = (r1 > 0.5) if leak else (y > t)
    prescribed(1, np.zeros((B, 1), dtype=np.int64))
    for k in range(2, K + 1):
        prescribed(k, act.astype(np.int64)[:, None])
    return RunResult(config=config, regret=np.zeros((B, K)), log=log, ledger=ledger, info={})


SPEC = LearnerSpec(
    name=NAME, family="test-threshold", paper="tests/audits/threshold_learner.py", privacy_models=("jdp",),
    default_env="none", description="test learner: one Laplace release read by a threshold policy",
    build_log=build_log, run_batch=run, test_settings=(("episodes", 2), ("delta", 0.0)),
    audit_setting=AuditSetting(episodes=2, trials=2000, why="tests"),
    mutants=((MUTANT, "the action reads user 1's exact reward"),))


def register(monkeypatch) -> None:
    """Make the learner available by name for one test (``privacct.algorithms.registry.learners`` patched)."""
    from privacct.algorithms import registry

    table = dict(registry.learners())
    table[NAME] = SPEC
    monkeypatch.setattr(registry, "learners", lambda: dict(table))
