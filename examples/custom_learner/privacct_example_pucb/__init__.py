"""privacct-example-pucb: a researcher's own learner, registered with privacct in one entry-point line.

``LEARNERS`` is what the entry point ``privacct.learners: example`` names (pyproject.toml). Everything
privacct needs to know about the learner is on its spec; see docs/extending.md in the privacct
repository for the walk from this algorithm to its log, verdict, calibration, audit and a CI test.
"""

from __future__ import annotations

from privacct.algorithms.contract import AuditSetting, LearnerSpec, RunConfig
from privacct.algorithms.neighbours import GroupDistance, NeighbourSpec, jdp

from . import bandit


def neighbours(config: RunConfig) -> NeighbourSpec:
    """The JDP pair: user 1 replaced by another reward-response function; her prescribed arm is the same (the
    first arm is prescribed from no data, with the coins), so only her reward moves, by at most 1."""
    return NeighbourSpec(
        relation=jdp("JDP with users as reward-response functions (docs/extending.md#the-neighbouring-pair)",
                     shared_start=True),
        canaries="A: reward 0 for every arm; B: reward 1 for every arm",
        groups=(GroupDistance(bandit.GROUP, "l1", bandit.SENSITIVITY, attained=True,
                              derivation="one reward in [0, 1] of the prescribed arm"),))


LEARNERS: dict[str, LearnerSpec] = {
    bandit.NAME: LearnerSpec(
        name=bandit.NAME,
        family="example-bandit",
        paper="privacct example (docs/extending.md): UCB1 (Auer et al. 2002) with tree-counter reward sums",
        privacy_models=("none", "jdp"),
        default_env="bernoulli",
        description="JDP UCB bandit on privacct's TreeCounter (example; option bug=none|redraw|no-depth, arms=N)",
        build_log=bandit.build_log,
        run_batch=bandit.run,
        neighbours=neighbours,
        test_settings=(("episodes", 16), ("delta", 0.0)),
        audit_setting=AuditSetting(
            episodes=16, trials=20_000,
            why="K = 16: a user sits in 5 tree nodes and a release redrawn at every step puts her in 16 draws "
                "(3.2 x), the smallest K where both planted bugs leak at least twice the claim"),
        uniform_regret=bandit.uniform_regret,
    ),
}

__all__ = ["LEARNERS", "bandit", "neighbours"]
