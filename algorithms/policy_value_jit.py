"""The exact value of a deterministic policy on a finite MDP's arrays, compiled (the same bytes as
``TabularMDP.evaluate_kernel``): shared by the tabular (ucb-vi) and linear-mixture compiled episode loops.

Backwards over h: V_h(s) = r_h(s, pi_h(s)) + P_h(. | s, pi_h(s)) . V_{h+1}, the product one gemv (``np.dot`` into a
preallocated ``out``, the BLAS call numpy's matmul makes for an (S, S) by (S,) product), then the sum elementwise.
"""

from __future__ import annotations

import numba

from .small_gemv import gemv


@numba.njit(cache=True, inline="always")
def greedy_policy_value(pol, Rsa, P, Ppi, rpi, pe, V):
    """Fill ``V`` (S,) with V_1 of the deterministic policy ``pol`` (H, S) (module docstring). ``Rsa`` (H, S A): the
    rewards, row s A + a; ``P`` (H, S, A, S); ``Ppi`` (S, S), ``rpi`` and ``pe`` (S,): work arrays. The products are
    numba's ``np.dot`` (the BLAS call): :func:`greedy_policy_value_gemv` without its fast path."""
    greedy_policy_value_gemv(pol, Rsa, P, Ppi, rpi, pe, V, False)


@numba.njit(cache=True, inline="always")
def greedy_policy_value_gemv(pol, Rsa, P, Ppi, rpi, pe, V, fast):
    """:func:`greedy_policy_value` with its products by :func:`.small_gemv.gemv_small` (``fast``: the BLAS call's bytes
    without the call, where :func:`.small_gemv.gemv_small_exact` holds)."""
    H, S = pol.shape
    A = Rsa.shape[1] // S
    for s in range(S):
        V[s] = 0.0
    for h in range(H - 1, -1, -1):
        for s in range(S):
            a = pol[h, s]
            rpi[s] = Rsa[h, s * A + a]
            for sp in range(S):
                Ppi[s, sp] = P[h, s, a, sp]
        gemv(Ppi, V, pe, fast)
        for s in range(S):
            V[s] = rpi[s] + pe[s]


__all__ = ["greedy_policy_value", "greedy_policy_value_gemv"]
