"""The episodes between two releases of the batched linear-MDP learners compiled with numba (issue 23 item 1): same
bytes as the numpy loop of :func:`.batched_jdp.run` (``common.play_episode`` + ``History.add`` + the batch Gram).

Between two releases the policy is fixed, so one call of :func:`play_chunk` plays ``n`` episodes of every seed, seed
after seed (the seeds are independent), given their uniforms ``u`` (B, >= n, H), drawn by the caller per seed and
chunk (``Generator.random(out=...)``: the values of the numpy loop's ``random(H)`` calls, in order, since the
environment's Generators serve nothing else). Per seed, episode and step, operation for operation as numpy does it
(docs/performance.md#same-bytes-the-rule-every-speed-up-follows):

1. the roll-out of :func:`.common.batched_rollout` / :meth:`TabularMDP.sample_next`: ``a = policy[h, s]``, the next
   state the first s' with ``u < cdf[h, s, a, s']`` (0 if none: numpy's ``argmax`` of all False);
2. the history of :meth:`.common.History.add`: ``N[h, s, a, s'] += 1.0`` (whole numbers, exact),
   ``Rphi[h] += phi * r`` (one product then one sum per element, each rounded once, as numpy's elementwise loops);
3. the batch Gram ``gram[h] += phi_i phi_j`` (numpy's ``phi[..., :, None] * phi[..., None, :]`` then ``+=``), every
   entry (phi_i phi_j = phi_j phi_i bit for bit, so the upper triangle alone would do: measured slower, 355 against
   247 ns an episode at one seed on linear-two-state, the variable inner bound defeats the vectorised d-loop).

No fused multiply-add: numba compiles without ``fastmath`` (LLVM's default contracts nothing). ``cache=True`` keeps
the compilation out of later processes.
"""

from __future__ import annotations

import numba
import numpy as np

from ..policy_value_jit import greedy_policy_value


@numba.njit(cache=True)
def play_chunk(policy, cdf, phi, R, s0, u, n, N, Rphi, gram):
    """Play ``n`` episodes of every seed under ``policy`` (B, H, S) int64 and add them to the history (module
    docstring). ``cdf`` (H, S, A, S) the environment's next-state CDFs, ``phi`` (S, A, d) its features, ``R`` (H, S, A)
    its mean rewards in [0, 1], ``s0`` the initial state, ``u`` (B, >= n, H) uniforms in [0, 1); ``N`` (B, H, S, A, S)
    visit counts, ``Rphi`` (B, H, d) and ``gram`` (B, H, d, d) updated in place."""
    B, H = policy.shape[0], policy.shape[1]
    S = cdf.shape[3]
    d = phi.shape[2]
    for b in range(B):
        for j in range(n):
            s = s0
            for h in range(H):
                a = policy[b, h, s]
                x = u[b, j, h]
                nxt = 0
                for t in range(S):
                    if x < cdf[h, s, a, t]:
                        nxt = t
                        break
                r = R[h, s, a]
                N[b, h, s, a, nxt] += 1.0
                for i in range(d):
                    Rphi[b, h, i] += phi[s, a, i] * r
                for i in range(d):
                    fi = phi[s, a, i]
                    for m in range(d):
                        gram[b, h, i, m] += fi * phi[s, a, m]
                s = nxt


@numba.njit(cache=True)
def regrets(pol, Rsa, P, s0, v_star, out):
    """``out`` (B,) = v_star - V^pi_1(s0) of the deterministic policies ``pol`` (B, H, S): the bytes of
    ``TabularMDP.regret`` (``optimal_value() - policy_values(pol)``; the value by :mod:`..policy_value_jit`, the
    bytes of ``evaluate_kernel``). ``Rsa`` (H, S A) the rewards, ``P`` (H, S, A, S) the kernel."""
    S = P.shape[1]
    Ppi, rpi, pe, V = np.empty((S, S)), np.empty(S), np.empty(S), np.empty(S)
    for b in range(pol.shape[0]):
        greedy_policy_value(pol[b], Rsa, P, Ppi, rpi, pe, V)
        out[b] = v_star - V[s0]
