"""Linear mixture learners: UCRL-VTR, LDP-UCRL-VTR (seed 001), Private-LinOpt-VI/PO (seed 000),
Privacy-Preserving UCRL-VTR JDP/LDP (seed 003), on the environments of
:mod:`privacct.algorithms.envs.linear_mixture` (RiverSwim linear mixture, HardToLearn).

``LEARNERS`` (merged by :mod:`privacct.algorithms.registry`):

==================== =========== ==========================================================
name                 privacy     mechanism
==================== =========== ==========================================================
ucrl-vtr             none        exact ridge statistics, Sherman-Morrison updates
ldp-ucrl-vtr         ldp         user k adds symmetric Gaussian noise to phi phi^T and Gaussian
                                 noise to phi y at every stage (seed 001 Alg. 1); shift 2 Gamma_k
private-linopt-vi/po jdp | none  4 Gaussian tree counters per stage (transition and reward Gram
                                 matrices and vectors; seed 000 Sec. 6.1); shift 2 Upsilon
pp-ucrl-vtr          jdp | ldp   seed 003 Alg. 1: 2 tree counters per stage (Cor. 5) or local
                                 messages (Cor. 6); shift 2 Upsilon
==================== =========== ==========================================================

Calibration ``paper`` runs the printed sigmas; the log's ``sensitivity.value`` is the replace-one
sensitivity derived from the real features and the user-side clip (``design.py``) and the printed
one sits in ``paper``. ``tight`` calibrates the same groups with :func:`privacct.calibrate.calibrate_log`
for the claimed (epsilon, delta). The bonus is ``bonus_scale`` x the theoretical radius of each
paper (recorded in ``RunResult.info``), with the shift x option ``shift_scale``.

Modules: ``design`` (constants, sensitivities, release groups, logs per paper), ``learners``
(RunConfig -> Design -> log -> run; options), ``engine`` (the batched episode loop), ``planning``
(user-side optimistic planning with the value clip), ``aggregators`` (exact / local-noise /
tree-noise ridge statistics, PD-checked inverses), ``reproduce`` (``privacct reproduce
linear-mixture``). Environments: :mod:`privacct.algorithms.envs.linear_mixture`.

AUDIT HOOK
----------
``("canary", "A" | "B")``: user 1 (episode 1) reports a fixed trajectory instead of interacting:

* RiverSwim -- A: at state 0 taking *left* every step, staying at 0 (next states 0);
  B: taking *right* every step, moving 0 -> 1 -> ... -> S-1 and staying at S-1. Different (s, a) at
  every step, so phi_V lies in disjoint one-hot blocks (orthogonal Gram statistics).
* HardToLearn -- A: stays on the chain x_1 -> x_2 -> ... -> x_{H+1} with action a = (-1, ..., -1);
  B: jumps from x_1 to the rewarding absorbing x_{H+2} and stays there, with a = (+1, ..., +1)
  (features at opposite extremes in the action coordinates).

Both are valid trajectories (positive probability). Regret of episode 1 is that of the policy
sent to user 1. ``("observe", True)``: ``info["released"]`` (n_seeds, m) holds the final noisy
statistics of every release group (upper triangle of each Gram matrix, then each vector, in the
order of ``info["released_groups"]``): the last tree prefix (JDP) or the server's sum of all users'
messages (LDP); for LDP learners ``info["released_user1"]`` also holds user 1's own message (the
LDP adversary's view of the canary). ``info["actions"]`` (n_seeds, K, H) holds the actions sent to
the users (for the canary: the actions its policy would have sent at the canary's states).
"""

from .learners import LEARNERS, OPTIONS, canary_trajectory, design_for, make_env

__all__ = ["LEARNERS", "OPTIONS", "canary_trajectory", "design_for", "make_env"]
