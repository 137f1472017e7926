"""The greedy backward planning of :func:`.planning.plan` compiled with numba, the same bytes (issue 14 item 1).

Same formula as :mod:`.planning` (seed 001 Alg. 1 lines 4-6, seed 003 Alg. 1, seed 000 Alg. 1 line 10):
Q_h = clip(r_h + <phi_V, theta_h> + beta_h ||phi_V||_{Sigma_h^{-1}}, 0, cap_h), V_h = max_a Q_h. The
arithmetic is numpy's, operation for operation, so the results are bit-identical
(tests/algorithms/test_regret_pins.py and tests/algorithms/linear_mixture/test_planning_jit.py check it):

* phi_V for the whole batch is one BLAS product V (B, S) . F (S, S*A*d), the product ``np.tensordot``
  makes; phi . Sigma^{-1} is one (S*A, d) x (d, d) product per seed and phi . theta one matrix-vector
  product per seed, the BLAS calls ``np.matmul`` makes for these shapes;
* the row sums of (phi Sigma^{-1}) * phi follow numpy's pairwise summation (sequential below 8 terms,
  eight interleaved partial sums up to 128; the compiled path is used for d <= 128 only);
* np.clip keeps a NaN (then refused by the caller, as in :func:`.planning.plan`) and clips +-inf.

Only the greedy path without a learned reward (``mean`` and ``probs`` None) is compiled; the others stay
in numpy. ``cache=True`` keeps the compilation (about a second) out of later processes.
"""

from __future__ import annotations

import numba
import numpy as np

from ..pairwise_sum import pairwise_sum as _pairwise  # numpy's row-sum order, one shared copy

MAX_DIM = 128  # numpy's pairwise-summation block: beyond it the summation order is recursive


@numba.njit(cache=True, inline="always")
def _clip(x, cap):
    """np.clip(x, 0, cap) as numpy's clip loop computes it (NaN kept, then max, then min)."""
    if x != x:
        return x
    y = x if x > 0.0 else 0.0
    return y if y < cap else cap


@numba.njit(cache=True)
def plan_greedy(F, R, theta, Sinv, beta, caps, S, A):
    """Q (B, H, S, A), V (H+1, B, S), phis (H, B, S*A, d) of :func:`.planning.plan` (greedy, known rewards).

    ``F``: the features as (S, S*A*d) (next state first, then row s*A + a, then the d coordinates);
    ``R``: rewards (H, S*A); ``theta`` (B, H, d), ``Sinv`` (B, H, d, d), ``beta`` (B, H), ``caps`` (H,)."""
    B, H, d = theta.shape
    SA = S * A
    V = np.zeros((B, S))
    Vs = np.zeros((H + 1, B, S))
    phis = np.zeros((H, B, SA, d))
    Qall = np.zeros((B, H, S, A))
    row = np.empty(d)
    for h in range(H - 1, -1, -1):
        cap = caps[h]
        if h < H - 1:
            phi_all = np.dot(V, F)  # (B, SA*d)
            for b in range(B):
                phi = phi_all[b].reshape(SA, d)
                phis[h, b] = phi
                t = np.dot(phi, np.ascontiguousarray(Sinv[b, h]))
                lin = np.dot(phi, np.ascontiguousarray(theta[b, h]))
                for i in range(SA):
                    for j in range(d):
                        row[j] = t[i, j] * phi[i, j]
                    q = _pairwise(row, d)
                    quad = q if (q >= 0.0 or q != q) else 0.0  # np.maximum(q, 0.0)
                    m = (R[h, i] + lin[i]) + beta[b, h] * np.sqrt(quad)
                    Qall[b, h, i // A, i % A] = _clip(m, cap)
        else:
            for b in range(B):
                for i in range(SA):
                    Qall[b, h, i // A, i % A] = _clip(R[h, i], cap)
        for b in range(B):
            for s in range(S):
                v = Qall[b, h, s, 0]
                for a in range(1, A):
                    q = Qall[b, h, s, a]
                    if q > v or q != q:
                        v = q
                V[b, s] = v
                Vs[h, b, s] = v
    return Qall, Vs, phis


def features_by_next_state(flat: np.ndarray) -> np.ndarray:
    """(S*A, S, d) features -> the contiguous (S, S*A*d) matrix ``np.tensordot(V, flat, ([1], [1]))`` multiplies."""
    SA, S, d = flat.shape
    return np.ascontiguousarray(flat.transpose(1, 0, 2).reshape(S, SA * d))
