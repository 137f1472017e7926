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

AUDIT HOOK: the contract's :class:`privacct.algorithms.contract.AuditHook`; canaries in :mod:`.canary`
(JDP response functions, LDP trajectories), the valid pair and every release group's worst-case
change in :func:`.design.mixture_neighbours`, the observation (every tree node [1, 2^j] of every
group, or user 1's messages) in :mod:`.engine`.
"""

from .canary import ldp_trajectory
from .learners import LEARNERS, OPTIONS, design_for, make_env

__all__ = ["LEARNERS", "OPTIONS", "design_for", "ldp_trajectory", "make_env"]
