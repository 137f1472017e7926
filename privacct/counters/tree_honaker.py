"""``tree-honaker``: every dyadic interval inside [1, K] noised, each prefix released through its least-squares
(best linear unbiased) estimate from the nodes complete so far (Honaker 2015, "Efficient use of differentially
private binary trees"; Kairouz et al. 2021, "Practical and private (deep) learning without sampling or
shuffling", App. D), docs/counters.md#tree-honaker.

Every dyadic interval [j 2^i + 1, (j + 1) 2^i] inside [1, K] (2K - popcount(K) nodes, leaves included) is noised
when it completes: at step t the nu(t) + 1 nodes [t - 2^i + 1, t], i = 0..nu(t). Same column structure as ``tree``
(user 1 is in the D intervals [1, 2^i]), so the same privacy. The estimate is the sum, over the set bits i of t,
of the BLUE of each complete level-i subtree's total from its own nodes, computed bottom-up:

    est_i = w_i y_i + (1 - w_i)(est_left + est_right),  w_i = 2 v_(i-1) / (2 v_(i-1) + 1),
    v_0 = 1,  v_i = 2 v_(i-1) / (2 v_(i-1) + 1) = 2^i / (2^(i+1) - 1),

so Var(release after t) = sum over set bits i of t of v_i node variances, and the weights of est_i over its nodes
(all positive) sum to a_0 = 1, a_i = v_i + 2 (1 - v_i) a_(i-1) = (i + 1) 2^i / (2^(i+1) - 1) (by induction).
The counter keeps one estimate per level (memory O(log K)).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .base import DyadicStrategy, FactorizedSpec


def _honaker_weight(i: int) -> float:
    """Variance of the bottom-up least-squares estimate of a complete level-i subtree's root, in
    node variances: v_0 = 1, v_i = 2 v_{i-1} / (2 v_{i-1} + 1) = 2^i / (2^(i+1) - 1)."""
    return 2.0**i / (2.0 ** (i + 1) - 1.0)


def _honaker_l1(i: int) -> float:
    """Sum of the weights of that estimate over its nodes: a_i = (i + 1) 2^i / (2^(i+1) - 1) (module docstring)."""
    return (i + 1) * 2.0**i / (2.0 ** (i + 1) - 1.0)


class TreeHonaker(DyadicStrategy):
    name: ClassVar[str] = "tree-honaker"
    summary: ClassVar[str] = ("every dyadic interval noised, each prefix its least-squares estimate from the complete "
                              "nodes (Honaker 2015; Kairouz et al. 2021, App. D)")
    draws_per_step: ClassVar[float] = 2.0   # 2K - popcount(K) nodes over K steps

    def level_variance(self, i: int) -> float:
        return _honaker_weight(i)

    def level_l1(self, i: int) -> float:
        return _honaker_l1(i)

    def factorization(self, spec: FactorizedSpec) -> tuple[np.ndarray, np.ndarray]:
        """Draws in the counter's order (at step t the nodes [t - 2^i + 1, t], i = 0..nu(t)); row t of L is the
        least-squares estimate of S_t from every node complete by t, 1^T (M^T M)^(-1) M^T with M their incidence
        over users 1..t (computed directly, not bottom-up)."""
        K = int(spec.leaves)  # type: ignore[arg-type]
        nodes = [(t - (1 << i) + 1, t) for t in range(1, K + 1) for i in range(((t & -t).bit_length() - 1) + 1)]
        R = np.zeros((len(nodes), K))
        for j, (a, b) in enumerate(nodes):
            R[j, a - 1:b] = 1.0
        L = np.zeros((K, len(nodes)))
        n = 0
        for t in range(1, K + 1):
            while n < len(nodes) and nodes[n][1] <= t:
                n += 1
            M = R[:n, :t]
            L[t - 1, :n] = M @ np.linalg.solve(M.T @ M, np.ones(t))
        return L, R

    def tight_candidate(self, mechanism: str) -> bool:
        return True

    # ---------------------------------------------------------------- runtime
    def start(self, counter: Any) -> None:
        # noise part of the estimate of the last complete node of each level
        counter._est = np.zeros((counter.leaves.bit_length(), counter.batch) + counter.shape)

    def step(self, counter: Any, t: int, x: np.ndarray, weights: np.ndarray | None) -> None:
        u0 = counter.first_user - 1
        nu = (t & -t).bit_length() - 1
        est = counter._draw((u0 + t, u0 + t))                        # the leaf [t, t]
        for i in range(1, nu + 1):
            y = counter._draw((u0 + t - (1 << i) + 1, u0 + t))       # node [t - 2^i + 1, t]
            w = _honaker_weight(i)                                   # v_i = 2 v_(i-1) / (2 v_(i-1) + 1) = weight on y
            est = w * y + (1.0 - w) * (counter._est[i - 1] + est)
        # release noise = sum of the estimates of the set bits of t: bits 0..nu-1 of t - 1 leave, bit nu enters
        for i in range(nu):
            counter._noise -= counter._est[i]
        counter._est[nu] = est
        counter._noise += est


TREE_HONAKER = TreeHonaker()
