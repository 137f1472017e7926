"""Learner audits through the AUDIT HOOK of the learner contract (algorithms/base.py).

D and D' are the learner's user sequences with user 1 (episode 1, who sits in the most tree
nodes) replaced by the family's canary A or B (run option ``("canary", "A" | "B")``); all
other users come from the environment. Every trial is one seed of a batched run
(``spec.run(config, seeds)``, a leading batch axis, no Python loop per trial); option
``("observe", True)`` makes the run return what the adversary sees:

* ``released`` (white-box): ``info["released"]`` (n_seeds, m), the noisy statistics the
  privatizer released at the end of the run (JDP billboard / what the LDP server holds).
* ``actions`` (black-box): ``info["actions"]`` (n_seeds, K, H) without episode 1 (user 1's own
  actions are never part of the JDP output M_{-1}; seed-002 notes Sec. 7.1); one-hot encoded
  by the tester.

Other users are drawn afresh in every trial. The output on D is then a mixture over the other
users' data of outputs on fixed neighbouring datasets; the hockey-stick divergence is jointly
convex, so a mixture of (eps, delta)-indistinguishable pairs is (eps, delta)-indistinguishable
and the audit's lower bound stays sound (it can only lose power).

Trial seeds: chunk j of a side gets ``default_rng(chunk seed)``; its trials use
``chunk_seed.spawn(size)`` (via the Generator's seed sequence), so the same seed gives the same
result on every executor (:mod:`audits.sampling`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from privacct.errors import PrivacctError, check_count, check_positive

from .runner import AuditResult, audit_mechanism

OBSERVATIONS = ("released", "actions")
LEARNER_CHUNK = 1000


@dataclass(frozen=True)
class LearnerMechanism:
    """``mechanism(canary, rng, size)``: ``size`` batched runs of a learner with user 1 = ``canary``."""

    config: Any  # algorithms.base.RunConfig
    observe: str = "released"

    def __call__(self, dataset: str, rng: np.random.Generator, size: int) -> np.ndarray:
        from algorithms.registry import get_learner

        spec = get_learner(self.config.algorithm)
        opts = tuple((k, v) for k, v in self.config.options if k not in ("canary", "observe"))
        cfg = replace(self.config, options=opts + (("canary", dataset), ("observe", True)))
        seeds = rng.bit_generator.seed_seq.spawn(size)
        result = spec.run(cfg, seeds)
        if self.observe not in result.info:
            raise PrivacctError(f"learner {self.config.algorithm!r} does not return info[{self.observe!r}] "
                                "with option observe=True (the AUDIT HOOK)")
        out = np.asarray(result.info[self.observe])
        if self.observe == "actions":
            out = out[:, 1:]  # never user 1's own actions
        return out.reshape(size, -1)


def learner_config(algorithm: str, *, privacy: str = "jdp", epsilon: float = 1.0, delta: float = 0.0,
                   calibration: str = "tight", episodes: int = 32, horizon: int | None = None,
                   env: str | None = None, options: tuple = ()):
    from algorithms.base import CALIBRATIONS, RunConfig
    from algorithms.registry import get_learner

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
                  observe: str = "released", trials: int = 2000, confidence: float = 0.95, seed: int = 0,
                  options: tuple = (), chunk_size: int | None = None, executor: str = "auto", scheduler: Any = None,
                  workers: int | None = None, name: str = "") -> AuditResult:
    """Audit a learner's claim (epsilon, delta) on canary A vs canary B (see module docstring).

    ``trials`` runs per side (each one seed of a batch); the claim audited is the config's
    (epsilon, delta), whatever the calibration (``paper`` audits the printed constants).
    """
    if observe not in OBSERVATIONS:
        raise PrivacctError(f"observe must be one of {', '.join(OBSERVATIONS)}, got {observe!r}")
    cfg = learner_config(algorithm, privacy=privacy, epsilon=epsilon, delta=delta, calibration=calibration,
                         episodes=episodes, horizon=horizon, env=env, options=options)
    mech = LearnerMechanism(cfg, observe)
    return audit_mechanism(mech, "A", "B", epsilon=epsilon, delta=delta, trials=trials, confidence=confidence, seed=seed,
                           chunk_size=chunk_size or LEARNER_CHUNK, executor=executor, scheduler=scheduler,
                           workers=workers, name=name or f"{algorithm} {privacy} {calibration} K={episodes} observe={observe}")
