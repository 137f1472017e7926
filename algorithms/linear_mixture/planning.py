"""User-side optimistic planning (backward induction), batched over seeds.

This runs on the user's side in the local model, where the server is the adversary and chooses
(Sigma^{-1}, theta). The clip below is therefore what keeps the released statistics within the
sensitivities of design.py, whatever the broadcast:

    Q_h(s,a) = clip(mean_h(s,a) + <phi_{V_{h+1}}(s,a), theta_h> + beta_h ||phi_{V_{h+1}}(s,a)||_{Sigma_h^{-1}},
                    0, r_max (H-h+1))

(seed 001 Alg. 1 lines 4-6, seed 003 Alg. 1, seed 000 Alg. 1 line 10) with the default ``caps``; the
upper truncation is each paper's own and the caller passes it (``Design.qcaps``): r_max (H - h + 1)
(1-based h) for seed 001 Alg. 1 line 5, and r_max H at every stage for seed 003 Alg. 1 and Alg. 3
(Q~ = min{H, ...}). The lower clip at 0 is privacct's repair, required by the privacy proofs
(docs/learners.md#common-repairs); seed 000 prints it. V_h = max_a Q_h (greedy), or <Q_h, pi_h> for
a given stochastic policy (seed 000 Alg. 2 line 12). A non-finite Q raises instead of being released.
"""

from __future__ import annotations

import numpy as np

from privacct.errors import PrivacctError

from ..envs.linear_mixture import LinearMixtureMDP


def plan(env: LinearMixtureMDP, theta: np.ndarray, Sinv: np.ndarray, beta: np.ndarray, *,
         mean: np.ndarray | None = None, probs: np.ndarray | None = None, caps: np.ndarray | None = None
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Backward planning for B seeds.

    ``theta`` (B, H, d), ``Sinv`` (B, H, d, d), ``beta`` (B, H): the broadcast. ``mean`` (B, H, S*A):
    the reward part (default: the known rewards r_h). ``probs`` (B, H, S, A): evaluate this policy
    instead of the greedy one. ``caps`` (H,): the upper truncation of Q_h (default r_max (H - h), 0-based
    h). Returns Q (B, H, S, A), V (H+1, B, S) with V_H = 0, and the features
    phi_{V_{h+1}} of every (s, a), shape (H, B, S*A, d) (zero at the last stage).
    """
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    B = theta.shape[0]
    R = env.rewards.reshape(H, S * A)
    from .planning_jit import MAX_DIM, plan_greedy   # numba loads on first planning, not on import

    if mean is None and probs is None and d <= MAX_DIM:  # the compiled loop, the same bytes (planning_jit)
        Qall, Vs, phis = plan_greedy(_features(env), np.ascontiguousarray(R), np.ascontiguousarray(theta, dtype=float),
                                     np.ascontiguousarray(Sinv, dtype=float),
                                     np.ascontiguousarray(np.broadcast_to(beta, (B, H)), dtype=float),
                                     np.array([env.value_cap(h) for h in range(H)], dtype=float) if caps is None
                                     else np.ascontiguousarray(caps, dtype=float), S, A)
        _check_finite(Qall)
        return Qall, Vs, phis
    return plan_numpy(env, theta, Sinv, beta, mean=mean, probs=probs, caps=caps)


def plan_numpy(env: LinearMixtureMDP, theta: np.ndarray, Sinv: np.ndarray, beta: np.ndarray, *,
               mean: np.ndarray | None = None, probs: np.ndarray | None = None, caps: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`plan` in numpy (every case; the reference the compiled greedy path is tested against)."""
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    B = theta.shape[0]
    R = env.rewards.reshape(H, S * A)
    V = np.zeros((B, S))
    Vs = np.zeros((H + 1, B, S))
    phis = np.zeros((H, B, S * A, d))
    Qall = np.zeros((B, H, S, A))
    for h in range(H - 1, -1, -1):
        m = np.broadcast_to(R[h], (B, S * A)) if mean is None else mean[:, h]
        if h < H - 1:
            phi = env.phi_v(V)                                                    # (B, SA, d)
            phis[h] = phi
            t = phi @ Sinv[:, h]
            quad = np.maximum((t * phi).sum(-1), 0.0)
            m = m + (phi @ theta[:, h, :, None])[..., 0] + beta[:, h, None] * np.sqrt(quad)
        Q = np.clip(m, 0.0, env.value_cap(h) if caps is None else caps[h]).reshape(B, S, A)
        Qall[:, h] = Q
        V = Q.max(axis=-1) if probs is None else (probs[:, h] * Q).sum(-1)
        Vs[h] = V
    _check_finite(Qall)
    return Qall, Vs, phis


def _check_finite(Qall: np.ndarray) -> None:
    if not np.all(np.isfinite(Qall)):
        raise PrivacctError("non-finite optimistic Q (broadcast theta / Sigma^{-1} not finite): "
                            "refusing to release statistics built from it")


_FEATURES: list = []  # [(the environment's feature array, its plan_greedy layout)]: the last one used


def _features(env: LinearMixtureMDP) -> np.ndarray:
    """The environment's features as plan_greedy multiplies them (the last environment's are kept; the cache
    holds the array itself, so an identity match can never be a recycled id)."""
    from .planning_jit import features_by_next_state

    flat = env._flat  # type: ignore[attr-defined]
    if not _FEATURES or _FEATURES[0][0] is not flat:
        _FEATURES[:] = [(flat, features_by_next_state(flat))]
    return _FEATURES[0][1]
