"""Optimistic value iteration (:func:`.planning.plan_vi`, seed 002 Alg. 2 lines 4-10) compiled with numba.

The same formula and the same arithmetic, operation for operation, so the same bytes
(tests/algorithms/test_regret_pins.py and tests/algorithms/tabular/test_planning_jit.py check it): per seed
and stage, P~_h V is the matrix-vector BLAS product ``np.matmul`` makes for an (S*A, S) x (S, 1) product;
raw = base + P~V; the policy is numpy's ``argmin`` over actions (first minimiser, a NaN wins); V~_h is the
running ``np.minimum`` over actions, then ``np.maximum(., 0)`` and ``np.minimum(., H - h)``; Q~ is
``np.clip(raw, 0, H - h)``. The comparisons below are numpy's scalar definitions of these ufuncs, NaN
propagation included. ``cache=True`` keeps the compilation out of later processes.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def greedy_state(base, start, pv, pstart, A):
    """(action, value) of one state of one stage: numpy's ``argmin`` over the A values ``base[start + a] +
    pv[pstart + a]`` (first minimiser, a NaN wins) and their running ``np.minimum``. Shared by
    :func:`plan_vi_compiled` and the compiled episode loop (:mod:`.episode_jit`): one definition of the comparisons."""
    m = 0.0
    best = 0
    bestv = 0.0
    for a in range(A):
        r = base[start + a] + pv[pstart + a]
        if a == 0:
            m, best, bestv = r, 0, r
        else:
            if bestv == bestv and (r < bestv or r != r):  # argmin: first minimiser, first NaN
                best, bestv = a, r
            m = m if (m <= r or m != m) else r  # np.minimum(m, r)
    return best, m


@numba.njit(cache=True)
def stage_value(m, cap):
    """V~_h(s) from the minimum over actions: ``np.minimum(np.maximum(m, 0), cap)``, NaN kept."""
    v = m if (m >= 0.0 or m != m) else 0.0  # np.maximum(m, 0)
    return v if (v <= cap or v != v) else cap  # np.minimum(v, H - h)


@numba.njit(cache=True)
def plan_vi_compiled(base, P, return_q):
    """(policy (B, H, S) int64, Q~ (B, H, S, A) or an empty array) of :func:`.planning.plan_vi`."""
    B, H, S, A = base.shape
    Q = np.empty_like(base) if return_q else np.empty((0, 0, 0, 0))
    pol = np.empty((B, H, S), dtype=np.int64)
    V = np.zeros((B, S))
    for h in range(H - 1, -1, -1):
        cap = float(H - h)
        for b in range(B):
            pv = np.dot(np.ascontiguousarray(P[b, h]), V[b])  # (S*A,)
            for s in range(S):
                row = base[b, h, s]
                best, m = greedy_state(row, 0, pv, s * A, A)
                if return_q:
                    for a in range(A):
                        x = row[a] + pv[s * A + a]   # the same sum greedy_state compared
                        if x == x:  # np.clip: max then min, NaN kept
                            x = x if x > 0.0 else 0.0
                            x = x if x < cap else cap
                        Q[b, h, s, a] = x
                pol[b, h, s] = best
                V[b, s] = stage_value(m, cap)
    return pol, Q
