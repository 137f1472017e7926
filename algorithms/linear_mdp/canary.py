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

ONE-RUN audits (docs/auditing.md#one-run-audits-of-learners; ``AuditHook.plan``): each canary user plays the
response function of her bit (A or B above) under the CURRENT policy, and before her episode enters a Gram
tree the learner reports her Gram terms phi_h phi_h^T under both bits given that same policy
(:func:`report_gram`, :func:`privacct.tap.canary_contribution`); every other user is the environment's. The
response releases (y, u) aggregate many users and are noised without a canary's share: the primitives list
them as unobserved.
"""

from __future__ import annotations

import numpy as np

from privacct.errors import PrivacctError
from privacct.mechanisms import upper_triangle
from privacct.tap import canary_contribution

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


def gram_terms(env, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """phi_h phi_h^T (B, H, d, d) of trajectories, as a user's episode enters the Gram trees (the same arithmetic as
    :meth:`.common.History.add`)."""
    phi = env.phi[states[:, :env.horizon], actions]
    return phi[..., :, None] * phi[..., None, :]


def report_gram(user: int, env, both: dict, *, upper: bool = False) -> None:
    """One-run audits: canary ``user``'s Gram terms under bit A and bit B (``both``: bit -> (states, actions), her
    two responses to the same policy) reported for every group ``gram_h{h}`` (:func:`privacct.tap.canary_contribution`);
    ``upper``: the trees hold upper triangles (the Laplace variant of seed 003)."""
    terms = {w: gram_terms(env, *both[w]) for w in CANARIES}
    for h in range(env.horizon):
        a, b = terms["A"][:, h], terms["B"][:, h]
        if upper:
            a, b = upper_triangle(a), upper_triangle(b)
        canary_contribution(user, f"gram_h{h + 1}", a=a, b=b)
