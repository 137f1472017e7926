"""Linear-MDP learners: LSVI-UCB (Jin et al. 2020), the seed-003 batched JDP LSVI-UCB (Luyo et al.
2021, Alg. 2) and Private LSVI-UCB with adaptive switching (seed 004, Ngo et al. 2022, Alg. 1).

``LEARNERS`` maps a name to a :class:`privacct.algorithms.base.LearnerSpec`; :mod:`privacct.algorithms.registry`
merges it with the other families. Environments: :mod:`privacct.algorithms.envs.linear_mdp`
(``linear-two-state`` default, ``linear-d10-h10``).

AUDIT HOOK (every learner here honours both options):

* ``("canary", "A" | "B" | None)``: user 1 (episode 1) does not interact with the environment; it
  reports the fixed trajectory of :meth:`privacct.algorithms.envs.linear_mdp.LinearMDP.canary`:
  ``A`` = start in state 0 and play the pure action with phi = e_0 at every step (reward 1, stays
  in state 0, the state of highest value); ``B`` = start in state 1 and play the pure action with
  phi = e_1 at every step (reward 0, stays in state 1). Orthogonal unit features at every step
  (the largest Gram difference ||phi||<=1 allows: sqrt(2) in the upper-triangle l2 norm) and
  responses phi (r + V) as different as non-negative features allow. Both are valid trajectories
  of the environment, so D (canary A) and D' (canary B) differ in exactly user 1. The regret of
  episode 1 is still the regret of the (data-free) policy the learner offered.
* ``("observe", True)``: ``info["actions"]`` (n_seeds, K, H) int actions sent to the users and
  ``info["released"]`` (n_seeds, m) float: the final released statistics (layout in
  ``info["released_layout"]``): the upper triangles of the final noisy Gram prefix sums of the H
  tree counters, then the last released noisy responses y~_h (u~_h for seed 003).
  Private LSVI-UCB also gives ``info["released_path"]`` (layout in ``info["released_path_layout"]``):
  every release that contains user 1 -- the noisy Gram prefixes at episodes 1, 2, 4, ... (each is
  exactly one tree node holding user 1) and every y~ release -- for white-box audits whose power
  should reach the accounted loss (the final release alone shows user 1 through one node only).

``paper_settings`` (for ``privacct report``): eps = 1 (seed 004) and eps = 0.5 (seed 003, whose
theorems need eps < 1), delta = 1e-5, K = 10^4 (the papers print no K), and the data-independent
bonus beta = 5 = H of ``linear-two-state`` (the printed betas, 1e4 to 1e8, keep Q at H so both
calibrations would show the same linear regret; beta does not enter any privacy figure).

Private learners also report ``info["n_updates"]`` (policy updates per seed), and Private LSVI-UCB
``info["ledgers"]`` (one ledger per seed: its update times differ by seed; ``RunResult.ledger`` is
the ledger of the seed with the most updates), ``info["cap"]``, ``info["switching_bound_thm11"]``,
``info["update_episodes"]`` and ``info["floor_events"]``.
"""

from __future__ import annotations

from ..base import LearnerSpec
from . import batched_jdp, lsvi_ucb, private_lsvi_ucb

LEARNERS: dict[str, LearnerSpec] = {
    lsvi_ucb.NAME: LearnerSpec(
        name=lsvi_ucb.NAME, family="linear-mdp",
        paper="Jin, Yang, Wang, Jordan (2020), Provably Efficient RL with Linear Function Approximation (non-private baseline)",
        privacy_models=("none",), default_env="linear-two-state",
        description="LSVI-UCB: least-squares value iteration with a UCB bonus, policy recomputed every episode",
        build_log=lsvi_ucb.build_log, run=lsvi_ucb.run,
    ),
    batched_jdp.NAME: LearnerSpec(
        name=batched_jdp.NAME, family="linear-mdp", paper=batched_jdp.SOURCE,
        privacy_models=("jdp",), default_env="linear-two-state",
        description="JDP LSVI-UCB with a fixed batch schedule: Gram matrices through trees over batches, fresh noise on the response at each batch end",
        build_log=batched_jdp.build_log, run=batched_jdp.run,
        # Seed 003's theorems assume eps, delta in (0, 1) (notes seed-003 §9 item 10); no K is printed.
        paper_settings=({"privacy": "jdp", "epsilon": 0.5, "delta": 1e-5, "episodes": 10_000, "options": (("beta", 5.0),)},),
    ),
    private_lsvi_ucb.NAME: LearnerSpec(
        name=private_lsvi_ucb.NAME, family="linear-mdp", paper=private_lsvi_ucb.SOURCE,
        privacy_models=("jdp",), default_env="linear-two-state",
        description="Private LSVI-UCB: H tree counters on the Gram matrices, updates when a noisy log-determinant doubles (hard cap), fresh noise on y at each update",
        build_log=private_lsvi_ucb.build_log, run=private_lsvi_ucb.run,
        # Seed 004 claims rho-zCDP for any rho, stated as (eps, delta) through Lemma 6; its regret
        # theorem assumes eps < 1. K = 10^4 as in the notes' worked example (none is printed).
        paper_settings=({"privacy": "jdp", "epsilon": 1.0, "delta": 1e-5, "episodes": 10_000, "options": (("beta", 5.0),)},),
    ),
}

__all__ = ["LEARNERS"]
