"""Canaries of the tabular audit hook and the neighbouring pair they form (seed 002, Defs. 2.2, 2.3).

JDP (Def. 2.2: "Each user u_k is identified by the cost and state responses (c_h^k, s_{h+1}^k) she
gives to the actions (a_h^k) chosen by the agent"; Sec. 2.1: s_1 is fixed). A JDP canary is a
RESPONSE FUNCTION (cost, next state) = f(h, s, a); the agent prescribes the actions (episode 1:
the data-free policy pi^1 with the agent's coins, the same on both sides):

* **A**: cost 1, next state = the current state ("always cost 1 and stay"): s_h = s_1 for all h.
* **B**: cost 0 at step 1 and 1 afterwards, next state = s_1 + 1 (mod S) ("move once and stay").

Distance (per release, concatenated visits | costs | transitions, l1): at h = 1 both are at s_1 and
receive the same a_1, so the visit coordinate coincides (0), the cost coordinate differs by
|1 - 0| = 1 and the transition coordinates (1, s_1, a_1, s_1) vs (1, s_1, a_1, s_1 + 1) differ by 2;
at h >= 2 they sit in different states, so each family changes 2 coordinates by 1 (costs: 1 + 1).
Total (2H - 2) + (2H - 1) + 2H = 6H - 3, the worst case under Def. 2.2 (no pair can do better: at
h = 1 the visit coordinate is shared and the shared cost coordinate moves by at most 1).

LDP (Def. 2.3: any two trajectories X, X'): user 1 reports a fixed trajectory whatever the agent
prescribes:

* **A**: action 0 at every step, staying in s_1, cost 1;
* **B**: action A - 1 at every step, at s_1 then s_1 + 1 (mod S), cost 1.

They differ in (s_h, a_h) at every step including h = 1: l1 = 2H per family, 6H in all (costs
c + c' = 2 per step), the worst case under Def. 2.3.

Other users in an audited run with fixed users: canary A's response function, with the actions the
agent prescribes (valid users under Def. 2.2).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from privacct.errors import PrivacctError

from ..envs.tabular import TabularMDP

CANARIES = ("A", "B")


def respond(mdp: TabularMDP, which: str, h: int, s: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(costs, next states) of JDP canary ``which`` at 0-based step h for states ``s`` and actions ``a`` (B,)."""
    if which not in CANARIES:
        raise PrivacctError(f"canary must be one of A, B, got {which!r}")
    B = s.shape[0]
    if which == "A":
        return np.ones(B), s.copy()
    cost = np.full(B, 0.0 if h == 0 else 1.0)
    return cost, np.full(B, (mdp.initial_state + 1) % mdp.n_states, dtype=np.int64)


def jdp_rollout(mdp: TabularMDP, which: str, prescribe: Callable[[int, np.ndarray], np.ndarray],
                B: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Trajectories (states (B, H+1), actions (B, H), costs (B, H)) of response function ``which``
    under the agent's prescriptions ``prescribe(h, states) -> actions`` (B,)."""
    H = mdp.horizon
    states = np.empty((B, H + 1), dtype=np.int64)
    actions = np.empty((B, H), dtype=np.int64)
    costs = np.empty((B, H))
    states[:, 0] = mdp.initial_state
    for h in range(H):
        actions[:, h] = prescribe(h, states[:, h])
        costs[:, h], states[:, h + 1] = respond(mdp, which, h, states[:, h], actions[:, h])
    return states, actions, costs


def ldp_trajectory(mdp: TabularMDP, which: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states (H + 1,), actions (H,), costs (H,)) of the LDP canary ``which`` (module docstring)."""
    if which not in CANARIES:
        raise PrivacctError(f"canary must be one of A, B, got {which!r}")
    H, S = mdp.horizon, mdp.n_states
    s1 = mdp.initial_state
    if which == "A":
        return np.full(H + 1, s1, dtype=np.int64), np.zeros(H, dtype=np.int64), np.ones(H)
    states = np.full(H + 1, (s1 + 1) % S, dtype=np.int64)
    states[0] = s1
    return states, np.full(H, mdp.n_actions - 1, dtype=np.int64), np.ones(H)
