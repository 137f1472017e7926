"""Canary trajectories for the audit hook (option ``("canary", "A" | "B")``).

When the option is set, user 1 (episode 1) does not interact with the environment: her
reported trajectory (what the privatizer receives) is the fixed trajectory below. Both are
valid trajectories of the MDP (every transition has positive probability; costs in [0, 1]):

* **A**: action 0 at every step (RiverSwim: *left*), starting in s_1, each next state the most
  likely one under P_h(.|s, 0) (RiverSwim: stays in state 0); cost 1 at every step.
* **B**: action A - 1 at every step (RiverSwim: *right*), starting in s_1, each next state the
  most likely one under P_h(.|s, A-1) (RiverSwim: 0 -> 1 -> 1 -> ...); cost 1 at every step.

A and B take different actions at every step, so they visit different (h, s, a) at every h,
and different (h, s, a, s') -- each family's per-episode vector differs in exactly 2H
coordinates by 1: l1 distance 2H per family, the replace-one-user worst case the logs declare.
Both costs are 1 (not 0 vs 1) because the two cost entries sit at different (h, s, a) and
the l1 distance of the cost vectors is c_A + c_B, largest at 1 + 1.

Under JDP the canary's actions are part of her fixed report (she does not follow the agent's
prescription in episode 1); the privatizer only sees her statistics, so this realises the
worst case the central analysis must cover. Regret for episode 1 is still the exact regret of
the policy pi^1 the agent computed.
"""

from __future__ import annotations

import numpy as np

from privacct.errors import PrivacctError

from ..envs.tabular import TabularMDP

CANARIES = ("A", "B")


def canary_trajectory(mdp: TabularMDP, which: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states (H + 1,), actions (H,), costs (H,)) of canary ``which`` in {"A", "B"}."""
    if which not in CANARIES:
        raise PrivacctError(f"option canary must be one of A, B or None, got {which!r}")
    H = mdp.horizon
    a = 0 if which == "A" else mdp.n_actions - 1
    states = np.zeros(H + 1, dtype=np.int64)
    states[0] = mdp.initial_state
    for h in range(H):
        states[h + 1] = int(np.argmax(mdp.P[h, states[h], a]))
    return states, np.full(H, a, dtype=np.int64), np.ones(H)
