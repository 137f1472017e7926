"""Learner audits through the AUDIT HOOK of the learner contract (algorithms/base.py).

D and D' are the learner's user sequences with user 1 (episode 1, who sits in the most tree
nodes) replaced by the family's canary A or B (run option ``("canary", "A" | "B")``); all
other users come from the environment. Every trial is one seed of a batched run
(``spec.run(config, seeds)``, a leading batch axis, no Python loop per trial); option
``("observe", True)`` makes the run return what the adversary sees:

* ``released`` (white-box): ``info["released"]`` (n_seeds, m), the noisy statistics the
  privatizer released at the end of the run (JDP billboard / what the LDP server holds).
* ``released_path`` (white-box, JDP tree learners): ``info["released_path"]`` (n_seeds, m * d),
  the releases after episodes 1, 2, 4, ..., 2^floor(log2 K): each is the single tree node
  [1, t], and together they are every node that contains user 1 (``released`` holds one).
* ``released_user1`` (white-box, LDP learners): ``info["released_user1"]``, user 1's own noisy
  report, i.e. what the LDP server receives from the canary.
* ``actions`` (black-box): ``info["actions"]`` (n_seeds, K, H) without episode 1 (user 1's own
  actions are never part of the JDP output M_{-1}; seed-002 notes Sec. 7.1); one-hot encoded
  by the tester.

Other users: by default drawn afresh in every trial. The output on D is then a mixture over the
other users' data of outputs on fixed neighbouring datasets; the hockey-stick divergence is
jointly convex, so a mixture of (eps, delta)-indistinguishable pairs is (eps, delta)-
indistinguishable and the audit's lower bound stays sound, but the other users' random data
drown the canary's +-1 changes (in practice eps_lb = 0). With ``fixed_users=True`` (run option
``("fixed_users", True)``, tabular learners) users 2..K report a fixed trajectory, so D and D'
are two FIXED neighbouring datasets and the only randomness is the privacy noise: the same
soundness argument with no mixture, and much more power.

Exact likelihood ratio: with fixed users, a pure-Laplace log and an observation whose noiseless
value the learner reports (``info[observe + "_exact"]`` and ``info["noise_scale"]``), the audit
tests with the product-Laplace log-likelihood ratio sum_j (|x_j - m'_j| - |x_j - m_j|) / b over
the coordinates where the noiseless means m (D) and m' (D') differ (:func:`exact_laplace_statistic`,
:class:`StatisticTester`), and with it only. It is the Neyman-Pearson statistic when every
released coordinate is one Laplace(b) draw (``released_path``, ``released_user1``), and a valid
(fixed before sampling) statistic in any case: the means come from one extra run per side,
never from the audit's samples, so a wrong mean could only cost power, not soundness.

Power limit: one user changes 6H coordinates by 1 each (tabular, seed 002), so at Laplace scale b
each coordinate's log-ratio is at most 1/b, and the pure eps is only reached when all of them
saturate at once. With many small terms the pair behaves like mu-GDP with mu ~ eps_true /
sqrt(#coordinates). At K = 16, H = 4, claim eps = 1, calibration ``paper`` (JDP eps_true =
2 * 5 / ln 16 = 3.6 over 6H * 5 = 120 coordinates, mu ~ 0.33; LDP eps_true = 2 over 24, mu ~
0.39) the exact likelihood-ratio test certified eps_lb = 0.30 (JDP) and 0.41 (LDP) with 4000
trials per side, 0.44 and 0.63 with 20000 (seed 0): real excess, below what these trial counts
can certify. At H = 1, K = 4 (:func:`privacct.audits.suite.small_paper_constants`) it is certified:
eps_lb 1.31 (JDP, 4000 trials) and 1.21 (LDP, 10000), with ``tight`` at 0.10 and 0.48.

Trial seeds: chunk j of a side gets ``default_rng(chunk seed)``; its trials use
``chunk_seed.spawn(size)`` (via the Generator's seed sequence), so the same seed gives the same
result on every executor (:mod:`privacct.audits.sampling`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from privacct.errors import PrivacctError, check_count, check_positive

from .protocols import FixedPair
from .runner import AuditResult, audit_mechanism, run_audit
from .statistics import LR_DECIMALS, Statistic
from .testers import ThresholdTester

OBSERVATIONS = ("released", "released_path", "released_user1", "actions")
LEARNER_CHUNK = 1000


@dataclass(frozen=True)
class LearnerMechanism:
    """``mechanism(canary, rng, size)``: ``size`` batched runs of a learner with user 1 = ``canary``."""

    config: Any  # privacct.algorithms.base.RunConfig
    observe: str = "released"
    fixed_users: bool = False

    def run(self, dataset: str, seeds: list):
        """The learner's RunResult on ``seeds`` with user 1 = canary ``dataset``."""
        from privacct.algorithms.registry import get_learner

        spec = get_learner(self.config.algorithm)
        drop = ("canary", "observe", "fixed_users")
        opts = tuple((k, v) for k, v in self.config.options if k not in drop)
        opts += (("canary", dataset), ("observe", True))
        if self.fixed_users:
            opts += (("fixed_users", True),)
        result = spec.run(replace(self.config, options=opts), seeds)
        if self.observe not in result.info:
            raise PrivacctError(f"learner {self.config.algorithm!r} ({self.config.privacy}) does not return "
                                f"info[{self.observe!r}] with option observe=True (the AUDIT HOOK); see "
                                "privacct.audits.learner.strongest_observation for the observation each learner supports")
        return result

    def __call__(self, dataset: str, rng: np.random.Generator, size: int) -> np.ndarray:
        result = self.run(dataset, rng.bit_generator.seed_seq.spawn(size))
        out = np.asarray(result.info[self.observe])
        if self.observe == "actions":
            out = out[:, 1:]  # never user 1's own actions
        return out.reshape(size, -1)


def exact_laplace_statistic(mech: LearnerMechanism) -> Statistic | None:
    """The exact product-Laplace log-likelihood ratio of canary A vs B, or None when it does not apply.

    Applies when ``mech.fixed_users`` is set (the dataset is fixed, so the noiseless observation
    is the same in every trial), the learner reports ``info[observe + "_exact"]`` and
    ``info["noise_scale"]`` b, and its log is all Laplace. The noiseless means m (canary A) and
    m' (canary B) come from one extra single-seed run per side, never from the audit's samples.
    Statistic: sum_{j in J} (|x_j - m'_j| - |x_j - m_j|) / b over the coordinates J where m and m'
    differ (each term clipped to +-|m_j - m'_j| / b by the triangle inequality; the other
    coordinates have the same law on both sides and cancel). Large values favour D (canary A).
    """
    if not mech.fixed_users or mech.observe == "actions":
        return None
    seeds = np.random.SeedSequence(0).spawn(1)
    ra, rb = mech.run("A", seeds), mech.run("B", seeds)
    key = mech.observe + "_exact"
    if key not in ra.info or "noise_scale" not in ra.info or ra.log is None:
        return None
    if not all(g.mechanism == "laplace" for g in ra.log.release_groups):
        return None
    ma = np.asarray(ra.info[key], dtype=float).reshape(1, -1)[0]
    mb = np.asarray(rb.info[key], dtype=float).reshape(1, -1)[0]
    idx = np.flatnonzero(ma != mb)
    if idx.size == 0:
        return None
    b = float(ra.info["noise_scale"])
    ma, mb = ma[idx], mb[idx]

    def llr(raw, idx=idx, ma=ma, mb=mb, b=b):
        x = np.asarray(raw, dtype=float).reshape(len(raw), -1)[:, idx]
        return ((np.abs(x - mb) - np.abs(x - ma)) / b).sum(axis=1)
    return Statistic("exact laplace likelihood-ratio", llr, decimals=LR_DECIMALS)


@dataclass
class StatisticTester(ThresholdTester):
    """:class:`privacct.audits.testers.ThresholdTester` with ONE statistic fixed before any sample is seen.

    Used with :func:`exact_laplace_statistic`: for two fixed datasets under product Laplace noise
    the likelihood ratio is the Neyman-Pearson statistic, and the default candidates only add
    risk: the (pooled-covariance) LDA projection is fitted and scored on the same selection half,
    so it overfits and wins the selection with a test that certifies less (measured: at K = 4,
    H = 1, paper JDP, LDA won with eps_lb 0.49 where the exact ratio certifies about 1.5).
    Thresholds, directions, scores, selection and evaluation are the parent's.
    """

    statistic: Statistic | None = None

    def candidate_statistics(self, x_sel, y_sel) -> list:
        return [self.statistic]


def strongest_observation(algorithm: str, privacy: str) -> tuple[str, bool]:
    """(observe, fixed_users) a report should audit ``algorithm`` under ``privacy`` with.

    Tabular learners (family ``tabular``): every node containing user 1 (``released_path``) for
    JDP, user 1's own report (``released_user1``) for LDP, both with fixed other users. Other
    families: the final ``released`` statistics with users from the environment (unchanged).
    """
    from privacct.algorithms.registry import get_learner

    if privacy not in ("jdp", "ldp"):
        raise PrivacctError(f"privacy must be jdp or ldp for an audit, got {privacy!r}")
    spec = get_learner(algorithm)
    if spec.family == "tabular":
        return ("released_path", True) if privacy == "jdp" else ("released_user1", True)
    return "released", False


def learner_config(algorithm: str, *, privacy: str = "jdp", epsilon: float = 1.0, delta: float = 0.0,
                   calibration: str = "tight", episodes: int = 32, horizon: int | None = None,
                   env: str | None = None, options: tuple = ()):
    from privacct.algorithms.base import CALIBRATIONS, RunConfig
    from privacct.algorithms.registry import get_learner

    spec = get_learner(algorithm)
    if privacy not in ("jdp", "ldp"):
        raise PrivacctError(f"privacy must be jdp or ldp for an audit (a claim is needed), got {privacy!r}")
    if privacy not in spec.privacy_models:
        raise PrivacctError(f"privacy must be one of {', '.join(p for p in spec.privacy_models if p != 'none')} "
                            f"for {algorithm!r}, got {privacy!r}")
    if calibration not in CALIBRATIONS:
        raise PrivacctError(f"calibration must be one of {', '.join(CALIBRATIONS)}, got {calibration!r}")
    check_positive("epsilon", epsilon)
    check_count("episodes", episodes)
    if horizon is not None:
        check_count("horizon", horizon)
    return RunConfig(algorithm, privacy=privacy, epsilon=float(epsilon), delta=float(delta), calibration=calibration,
                     episodes=int(episodes), env=env, horizon=horizon, options=tuple(options))


def audit_learner(algorithm: str, *, privacy: str = "jdp", epsilon: float = 1.0, delta: float = 0.0,
                  calibration: str = "tight", episodes: int = 32, horizon: int | None = None, env: str | None = None,
                  observe: str = "released", fixed_users: bool = False, trials: int = 2000,
                  confidence: float = 0.95, seed: int = 0,
                  options: tuple = (), chunk_size: int | None = None, executor: str = "auto", scheduler: Any = None,
                  workers: int | None = None, name: str = "") -> AuditResult:
    """Audit a learner's claim (epsilon, delta) on canary A vs canary B (see module docstring).

    ``trials`` runs per side (each one seed of a batch); the claim audited is the config's
    (epsilon, delta), whatever the calibration (``paper`` audits the printed constants).
    ``fixed_users``: users 2..K report a fixed trajectory (run option ``("fixed_users", True)``),
    so D and D' are fixed neighbouring datasets; with it the audit tests with the exact Laplace
    likelihood ratio alone when it applies (:func:`exact_laplace_statistic`), else with the
    default candidate statistics.
    """
    if observe not in OBSERVATIONS:
        raise PrivacctError(f"observe must be one of {', '.join(OBSERVATIONS)}, got {observe!r}")
    if not isinstance(fixed_users, (bool, np.bool_)):
        raise PrivacctError(f"fixed_users must be True or False, got {fixed_users!r}")
    cfg = learner_config(algorithm, privacy=privacy, epsilon=epsilon, delta=delta, calibration=calibration,
                         episodes=episodes, horizon=horizon, env=env, options=options)
    mech = LearnerMechanism(cfg, observe, bool(fixed_users))
    label = name or (f"{algorithm} {privacy} {calibration} K={episodes} observe={observe}"
                     + (" fixed-users" if fixed_users else ""))
    common = dict(epsilon=epsilon, delta=delta, trials=trials, confidence=confidence, seed=seed,
                  chunk_size=chunk_size or LEARNER_CHUNK, executor=executor, scheduler=scheduler, workers=workers,
                  name=label)
    lr = exact_laplace_statistic(mech)
    if lr is not None:
        return run_audit(mech, FixedPair("A", "B"), tester=StatisticTester(statistic=lr), **common)
    return audit_mechanism(mech, "A", "B", **common)
