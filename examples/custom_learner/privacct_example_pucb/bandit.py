"""example-pucb: a JDP UCB bandit written on privacct's primitives (docs/extending.md walks through it).

The algorithm (UCB1 of Auer, Cesa-Bianchi and Fischer 2002, with private reward sums as in the JDP
bandits of Shariff & Sheffet 2018): K users arrive one after another (episodes of horizon 1). User t
is a REWARD-RESPONSE FUNCTION r_t: arms -> [0, 1]; the learner prescribes an arm a_t and user t
answers r_t(a_t). The learner keeps, per arm, the number of pulls N_a (exact) and the sum of the
rewards, released through a binary-tree counter (:class:`privacct.mechanisms.TreeCounter`, Laplace
node noise). The arm prescribed to user t + 1 maximises

    mean_a + bonus_scale * (sqrt(2 ln t / N_a) + b sqrt(2 depth) ln t / N_a),   untried arms first,

with mean_a = noisy reward sum / N_a, b the node noise scale and depth = floor(log2 K) + 1 the
number of tree nodes one user sits in: a release sums at most `depth` nodes, so its noise has standard
deviation at most b sqrt(2 depth), and ln t widens it into a confidence term. Ties go to the agent's
coins.

Privacy (JDP, replace-one-user; the user is a response function): replacing user t changes neither
a_t (prescribed from the releases of users 1..t-1 and the coins) nor any count, and changes her
reward by at most 1 in one coordinate: every node that holds her moves by at most 1 in l1. She sits
in `depth` nodes, each noised once with Laplace(b), so b = depth / eps gives eps-JDP (basic
composition of Laplace mechanisms, Dwork & Roth 2014 Thm 3.6 and 3.14; the billboard lemma, Hsu et
al. 2014, turns the released sums into actions). The exact counts are a function of the prescribed
actions, hence of the coins and earlier releases: releasing them costs nothing under JDP.

Planted bugs (option ``bug``), each something a researcher could write:

* ``redraw``: the counter draws FRESH noise for every node of every release (a node that was already
  released is noised again); the log still declares the tree. User 1 is then in K draws, not depth.
* ``no-depth``: the analysis forgets the tree depth: the log declares one release per user
  (``single``) and the noise is calibrated for it (b = 1 / eps).

Neither bug is visible to the accountant (the log is what the researcher believes); the ledger and
the audit catch both. This file has no observation code: an audit derives it from the primitives.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from privacct.algorithms.contract import (AuditHook, RunConfig, RunResult, noise_generators, stream_generators)
from privacct.calibrate import calibrate_log
from privacct.errors import PrivacctError, check_count, check_delta, check_positive
from privacct.ledger import Ledger
from privacct.log import Claim, MechanismLog, ReleaseGroup, Sensitivity, Structure, tree_depth
from privacct.mechanisms import TreeCounter
from privacct.tap import canary_contribution

NAME = "example-pucb"
GROUP = "rewards"
BUGS = ("none", "redraw", "no-depth")
OPTIONS = ("bug", "arms")
SENSITIVITY = 1.0   # l1: one reward in [0, 1] of one arm (module docstring)


def arm_means(arms: int) -> np.ndarray:
    """The Bernoulli environment: arm means evenly spaced from 0.9 down to 0.1."""
    return np.linspace(0.9, 0.1, arms)


def options(config: RunConfig) -> dict[str, Any]:
    """The validated options (one PrivacctError line naming a bad one)."""
    if config.privacy not in ("none", "jdp"):
        raise PrivacctError(f"privacy must be none or jdp for {NAME}, got {config.privacy!r}")
    if config.env not in (None, "bernoulli"):
        raise PrivacctError(f"env must be bernoulli for {NAME}, got {config.env!r}")
    if config.horizon not in (None, 1):
        raise PrivacctError(f"horizon must be 1 for {NAME} (a bandit), got {config.horizon!r}")
    check_count("episodes", config.episodes)
    check_positive("epsilon", config.epsilon)
    check_delta("delta", config.delta, allow_zero=True)
    opts = dict(config.options)
    unknown = sorted(set(opts) - set(OPTIONS))
    if unknown:
        raise PrivacctError(f"unknown option(s) {', '.join(unknown)}; allowed: {', '.join(OPTIONS)}")
    bug = opts.get("bug", "none")
    if bug not in BUGS:
        raise PrivacctError(f"option bug must be one of {', '.join(BUGS)}, got {bug!r}")
    arms = check_count("option arms", opts.get("arms", 3), minimum=2)
    if arms > 64:
        raise PrivacctError(f"option arms must be an integer in [2, 64], got {arms}")
    return {"bug": bug, "arms": arms}


def _log(config: RunConfig, opts: dict[str, Any], scale: float) -> MechanismLog:
    K = int(config.episodes)
    forgot_depth = opts["bug"] == "no-depth"
    structure = Structure("single") if forgot_depth else Structure("tree", leaves=K)
    return MechanismLog(
        name=f"{NAME}-jdp" + ("" if opts["bug"] == "none" else f"-bug-{opts['bug']}"),
        privacy_model="joint",
        release_groups=(ReleaseGroup(
            name=GROUP, mechanism="laplace", noise_scale=scale,
            sensitivity=Sensitivity("l1", SENSITIVITY, "user t's reward r_t(a_t) in [0, 1]; a_t is prescribed from the "
                                                       "other users' releases and the coins (JDP, response functions)"),
            structure=structure, dimension=opts["arms"],
            description="per-arm reward sums, one tree counter over the K users"
                        + (" (BUG no-depth: the analysis counts one release per user)" if forgot_depth else "")),),
        parameters=(("K", K), ("arms", opts["arms"]), ("bonus_scale", float(config.bonus_scale)), ("bug", opts["bug"])),
        claim=Claim(config.epsilon, config.delta),
        source="privacct example (docs/extending.md): UCB1 with tree-counter reward sums")


def build_log(config: RunConfig) -> MechanismLog | None:
    """The declared log (None without privacy). ``paper``: b = depth / eps (b = 1 / eps under the no-depth bug);
    ``tight``: the calibrator's least noise for the same claim and the same declared structure."""
    opts = options(config)
    if config.privacy == "none":
        return None
    K = int(config.episodes)
    nodes = 1 if opts["bug"] == "no-depth" else tree_depth(K)
    log = _log(config, opts, SENSITIVITY * nodes / config.epsilon)
    if config.calibration == "tight":
        log = calibrate_log(log, epsilon=config.epsilon, delta=config.delta)
    elif config.calibration != "paper":
        raise PrivacctError(f"calibration must be paper or tight, got {config.calibration!r}")
    return log


class RedrawingTreeCounter(TreeCounter):
    """PLANTED BUG ``redraw``: every release is the exact prefix sum plus FRESH noise for each of its nodes
    (the nodes of the set bits of t, left to right), so a node already released is noised again."""

    def add(self, x) -> np.ndarray:
        x, t = self.begin_addition(x)
        self.note_addition(t, x)
        self._exact += x
        out = self._exact.copy()
        first = 1
        for level in reversed(range(t.bit_length())):
            if (t >> level) & 1:
                last = first + (1 << level) - 1
                out += self.node_noise(first, last)   # the bug: a fresh draw at every release
                first = last + 1
        self._release = out
        return out.copy()


def run(config: RunConfig, seeds: list[np.random.SeedSequence], *, audit: AuditHook | None = None,
        progress: Callable[[int], None] | None = None) -> RunResult:
    """Run every seed at once (a leading batch axis B). Audited runs (the contract's hook): user 1 is canary A
    (reward 0 for every arm) or canary B (reward 1 for every arm); with fixed users, users 2..K are canary A;
    the coins are the same in every trial. A one-run audit's canaries (``audit.plan``) answer by their bits and
    their contribution under both answers is reported (``privacct.tap.canary_contribution``)."""
    opts = options(config)
    K, A, B = int(config.episodes), opts["arms"], len(seeds)
    mu = arm_means(A)
    log = build_log(config)
    ledger = Ledger() if log is not None else None
    noise_rngs = noise_generators(seeds, 0, audit)
    env_rngs = stream_generators(seeds, 1, audit, fixed=audit is not None and audit.fixed_users)
    coin_rngs = stream_generators(seeds, 2, audit, fixed=audit is not None)
    # users: reward-response functions r_t(a) in {0, 1}, drawn from the environment (B, K, A)
    users = np.stack([(r.random((K, A)) < mu).astype(float) for r in env_rngs])
    coins = np.stack([r.random((K, A)) for r in coin_rngs])
    canary = {"A": 0.0, "B": 1.0}          # the neighbouring pair: a user answering 0, or 1, to every arm
    roles = [None if audit is None else audit.role(t) for t in range(1, K + 1)]
    for t, role in enumerate(roles, 1):    # user 1 (and, with fixed users, users 2..K) or a one-run audit's canaries
        if role is not None:
            users[:, t - 1] = canary[role]
    counter = None
    if log is not None:
        cls = RedrawingTreeCounter if opts["bug"] == "redraw" else TreeCounter
        counter = cls((A,), leaves=K, mechanism="laplace", scale=log.group(GROUP).noise_scale, rngs=noise_rngs,
                      ledger=ledger, group=GROUP)
    b = 0.0 if log is None else log.group(GROUP).noise_scale
    depth = tree_depth(K)
    counts = np.zeros((B, A))
    sums = np.zeros((B, A))      # the released (noisy) reward sums; exact without privacy
    regret = np.zeros((B, K))
    rows = np.arange(B)
    every = max(1, K // 100)
    for t in range(1, K + 1):
        log_t = math.log(max(t, 2))
        n = np.maximum(counts, 1.0)
        width = np.sqrt(2.0 * log_t / n) + b * math.sqrt(2.0 * depth) * log_t / n
        index = np.where(counts == 0, np.inf, sums / n + config.bonus_scale * width)
        best = index == index.max(axis=1, keepdims=True)
        arm = np.where(best, coins[:, t - 1], -1.0).argmax(axis=1)   # ties go to the coins
        regret[:, t - 1] = mu.max() - mu[arm]
        x = np.zeros((B, A))
        x[rows, arm] = users[rows, t - 1, arm]
        if audit is not None and audit.plan is not None and roles[t - 1] is not None:
            # a one-run audit's canary: her contribution under either answer, given the same prescribed arm
            both = {w: np.where(np.arange(A) == arm[:, None], canary[w], 0.0) for w in canary}
            canary_contribution(t, GROUP, a=both["A"], b=both["B"])
        counts[rows, arm] += 1
        sums = counter.add(x) if counter is not None else sums + x
        if progress is not None and (t % every == 0 or t == K):
            progress(t)
    return RunResult(config=config, regret=regret, log=log, ledger=ledger,
                     info={"arms": A, "means": mu.tolist(), "noise_scale": b, "bug": opts["bug"], "final_release": sums})


def uniform_regret(config: RunConfig) -> float:
    """Per-episode regret of the uniform random policy: the mean gap."""
    mu = arm_means(options(config)["arms"])
    return float(mu.max() - mu.mean())
