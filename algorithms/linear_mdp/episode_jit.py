"""One episode of every seed of Private LSVI-UCB's loop compiled with numba (issue 23 item 1): the roll-out and the
history of :func:`.common.play_episode` + :meth:`.common.History.add`, the same states, actions and bytes.

Per seed and step, operation for operation as numpy does it (docs/performance.md#same-bytes-the-rule-every-speed-up-follows):

1. the roll-out of :func:`.common.batched_rollout` / :meth:`TabularMDP.sample_next` (and :func:`.common._play_one`):
   ``a = policy[h, s]``, the next state the first s' with ``u < cdf[h, s, a, s']`` (0 if none: numpy's ``argmax`` of
   all False), ``u`` the seed's ``random(H)`` of the episode;
2. the history: ``N[h, s, a, s'] += 1.0`` (whole numbers, exact), ``Rphi[h] += phi * r`` (one product then one sum per
   element, each rounded once), the episode's ``outer[h] = phi_i phi_j`` (numpy's ``phi[..., :, None] *
   phi[..., None, :]``) and ``gram[h] += outer[h]``.

No fused multiply-add: numba compiles without ``fastmath`` (LLVM's default contracts nothing). ``cache=True`` keeps
the compilation out of later processes.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True)
def play_and_add(policy, cdf, phi, R, s0, u, states, actions, N, Rphi, gram, outer):
    """One episode of every seed under ``policy`` (B, H, S) int64 (module docstring): ``cdf`` (H, S, A, S) the
    environment's next-state CDFs, ``phi`` (S, A, d) its features, ``R`` (H, S, A) its mean rewards, ``s0`` the initial
    state, ``u`` (B, H) the episode's uniforms in [0, 1). Writes ``states`` (B, H + 1), ``actions`` (B, H) and the
    episode's ``outer`` (B, H, d, d); adds to ``N`` (B, H, S, A, S), ``Rphi`` (B, H, d) and ``gram`` (B, H, d, d)."""
    B, H = policy.shape[0], policy.shape[1]
    S = cdf.shape[3]
    d = phi.shape[2]
    for b in range(B):
        s = s0
        states[b, 0] = s
        for h in range(H):
            a = policy[b, h, s]
            x = u[b, h]
            nxt = 0
            for t in range(S):
                if x < cdf[h, s, a, t]:
                    nxt = t
                    break
            actions[b, h] = a
            states[b, h + 1] = nxt
            r = R[h, s, a]
            N[b, h, s, a, nxt] += 1.0
            for i in range(d):
                Rphi[b, h, i] += phi[s, a, i] * r
            for i in range(d):
                fi = phi[s, a, i]
                for m in range(d):
                    o = fi * phi[s, a, m]
                    outer[b, h, i, m] = o
                    gram[b, h, i, m] += o
            s = nxt
