"""Canaries of the linear-MDP audit hook and the observation of user 1's releases (seeds 003, 004).

JDP (seed 003 Def. 3: a user "is represented by a tree of depth H" and "their personal information
is encoded in state s_1k", Sec. 2.1; seed 004 Def. 4: "a tree of depth H encoding the state and
reward responses", the initial state chosen by the environment, Sec. 2.1): a canary is a RESPONSE
FUNCTION with its own initial state; the agent prescribes the actions (episode 1: the data-free
policy, the same on both sides); rewards are the environment's known r_h(s, a) (both learners use
the known reward function):

* **A**: starts in state 0 and stays there (next state = current state);
* **B**: starts in state 1 and stays there.

On the simplex-feature environments the data-free policy prescribes the pure action with phi = e_0
at state 0 and phi = e_1 at state 1 (the first actions of those states; ties go to the lowest
index), so A and B have orthogonal unit features at every step: the Gram change is
||upper(e_0 e_0^T - e_1 e_1^T)||_2 = sqrt(2), the declared worst case (attained). The response change
||phi_A (r_A + V(0)) - phi_B (r_B + V(1))||_2 = sqrt((1 + V(0))^2 + V(1)^2) stays below the declared
2(H + 1) (Lemma 14's triangle bound; non-negative features cannot point in opposite directions) and
depends on the value function V of the release (per trial: the blocks' means travel with them).
"""

from __future__ import annotations

import numpy as np

from privacct.errors import PrivacctError

CANARIES = ("A", "B")


def start_state(which: str) -> int:
    if which not in CANARIES:
        raise PrivacctError(f"canary must be one of A, B, got {which!r}")
    return 0 if which == "A" else 1


def rollout(env, which: str, pol: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(states (B, H+1), actions (B, H)) of response function ``which`` under deterministic policies
    ``pol`` (B, H, S): it starts in :func:`start_state` and stays there whatever the action."""
    B, H = pol.shape[0], env.horizon
    s0 = start_state(which)
    states = np.full((B, H + 1), s0, dtype=np.int64)
    actions = pol[np.arange(B)[:, None], np.arange(H)[None, :], states[:, :H]]
    return states, actions


def contribution(env, states: np.ndarray, actions: np.ndarray, h: int, V: np.ndarray) -> np.ndarray:
    """phi_h (r_h + V_{h+1}(s_{h+1})) of trajectories (B rows) at 0-based step h, with V (B, S) the
    release's V_{h+1} (zeros at the last step)."""
    b = np.arange(states.shape[0])
    s, a, s2 = states[:, h], actions[:, h], states[:, h + 1]
    phi = env.phi[s, a]
    return phi * (env.tabular.R[h, s, a] + V[b, s2])[:, None]
