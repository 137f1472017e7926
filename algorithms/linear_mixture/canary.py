"""Canaries of the linear-mixture audit hook (seeds 000, 001, 003).

JDP (seed 000 Def. 2.2, s_1 fixed (Sec. 2.1); seed 003 Def. 3, s_1 the user's (Sec. 2.1)): a canary is
a RESPONSE FUNCTION: next state and reward given (h, s, a); the agent prescribes the actions
(episode 1: the data-free plan, the agent's coins, the same on both sides):

* **A** ("stay"): next state = the current state, reward r_max at every step;
* **B** ("jump"): next state = the last state S - 1 (RiverSwim: the far bank; HardToLearn: the
  rewarding absorbing x_{H+2}), reward 0 at the first step and r_max afterwards.

Start: both at the environment's s_1 when the paper fixes it (seed 000); A at s_1 and B at S - 1
when the initial state is the user's (seed 003). Only seed 000 regresses rewards (its reward
family ``r``); the other learners use the known rewards.

LDP (seed 001 Def. 3.6, seed 003 Def. 4: any two trajectories): user 1 reports a fixed trajectory
whatever the agent prescribes (:func:`ldp_trajectory`): RiverSwim A = (0, left) staying at 0,
B = right every step, 0 -> 1 -> ... -> S-1; HardToLearn A = the chain with a = (-1, ..., -1),
B = jump to x_{H+2} with a = (+1, ..., +1).

Statistics: x_h = phi_{V_{h+1}}(s_h, a_h) with the episode's own V (the user-side plan), y_h =
V_{h+1}(s_{h+1}) (design.py); so the change of a release depends on V as well as on the pair
(:func:`privacct.algorithms.linear_mixture.design.mixture_neighbours` gives the worst cases).
"""

from __future__ import annotations

import numpy as np

from privacct.errors import PrivacctError

from ..envs.linear_mixture import LinearMixtureMDP

CANARIES = ("A", "B")


def start_state(env: LinearMixtureMDP, which: str, shared_start: bool) -> int:
    if which not in CANARIES:
        raise PrivacctError(f"canary must be one of A, B, got {which!r}")
    return env.initial_state if (shared_start or which == "A") else env.n_states - 1


def respond(env: LinearMixtureMDP, which: str, h: int, s: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(next states, rewards) of JDP canary ``which`` at 0-based step h for states ``s`` and actions ``a``."""
    B = s.shape[0]
    if which == "A":
        return s.copy(), np.full(B, env.reward_max)
    return np.full(B, env.n_states - 1, dtype=np.int64), np.full(B, 0.0 if h == 0 else env.reward_max)


def ldp_trajectory(env: LinearMixtureMDP, which: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states, actions, next states), each (H,): the fixed trajectory of LDP canary ``which``."""
    if which not in CANARIES:
        raise PrivacctError(f"canary must be one of A, B, got {which!r}")
    H, S, A = env.horizon, env.n_states, env.n_actions
    h = np.arange(H)
    if env.name.startswith("riverswim"):
        if which == "A":   # stays at 0 swimming left: (0, left) every step
            return np.zeros(H, int), np.zeros(H, int), np.zeros(H, int)
        s = np.minimum(h, S - 1)
        return s, np.ones(H, int), np.minimum(h + 1, S - 1)  # swims right every step
    # hard-to-learn: A = stay on the chain with a = (-1,..,-1); B = jump to x_{H+2} with a = (+1,..,+1)
    if which == "A":
        return h.copy(), np.zeros(H, int), h + 1
    good = S - 1
    s = np.where(h == 0, 0, good)
    return s, np.full(H, A - 1), np.full(H, good)
