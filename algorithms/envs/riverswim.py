"""RiverSwim (Strehl & Littman 2008; Osband et al. 2013) exactly as in seed 002's experiment.

The parameters are those of the authors' public code (``make_riverSwim(epLen=20, nState=6)``),
recorded in docs/seed-002-tabular.md#riverswim (the paper text only shows Fig. 1 as an image): states 0..S-1,
start state 0, action 0 = left, 1 = right, stationary kernel:

* left: s -> max(0, s - 1) with probability 1;
* right at s = 0: stay w.p. 0.4, move to 1 w.p. 0.6;
* right at 1 <= s <= S-2: s + 1 w.p. 0.35, stay w.p. 0.6, s - 1 w.p. 0.05;
* right at s = S-1: stay w.p. 0.6, move to S-2 w.p. 0.4;
* deterministic rewards r(0, left) = 0.005, r(S-1, right) = 1, all others 0.

V*_1(0) = 3.3973 at H = 20 and 11.7881 at H = 40 (reward form; tests pin both).
"""

from __future__ import annotations

import numpy as np

from privacct.errors import PrivacctError, check_count

from .tabular import TabularMDP, stationary

LEFT, RIGHT = 0, 1


def riverswim(horizon: int = 20, n_states: int = 6) -> TabularMDP:
    """The RiverSwim MDP with ``n_states`` >= 3 states and horizon H >= 1 (default S = 6, H = 20)."""
    H = check_count("horizon", horizon)
    S = check_count("n_states", n_states)
    if S < 3:
        raise PrivacctError(f"n_states must be an integer >= 3, got {n_states!r}")
    P = np.zeros((S, 2, S))
    R = np.zeros((S, 2))
    for s in range(S):
        P[s, LEFT, max(0, s - 1)] = 1.0
    P[0, RIGHT, 0] = 0.4
    P[0, RIGHT, 1] = 0.6
    for s in range(1, S - 1):
        P[s, RIGHT, s + 1] = 0.35
        P[s, RIGHT, s] = 0.6
        P[s, RIGHT, s - 1] = 0.05
    P[S - 1, RIGHT, S - 1] = 0.6
    P[S - 1, RIGHT, S - 2] = 0.4
    R[0, LEFT] = 0.005
    R[S - 1, RIGHT] = 1.0
    return stationary(P, R, H, initial_state=0, name="riverswim")
