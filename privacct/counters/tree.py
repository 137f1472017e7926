"""``tree``: the online binary tree of Chan, Shi, Song (2011, Alg. 2; :class:`privacct.mechanisms.TreeCounter`),
docs/counters.md#tree.

The node [t - 2^nu(t) + 1, t] (nu(t) = trailing zeros of t) is noised when it completes at step t, one draw per
step; the release after t steps sums the popcount(t) nodes of the set bits of t. R is the incidence matrix of the
K nodes (0/1 columns, D = floor(log2 K) + 1 ones in column 1: l1 = D, l2 = sqrt(D)); a release's variance is
popcount(t) node variances, its worst over t <= K the largest popcount (privacct.counters.base.max_over_prefixes).
A ``tree(leaves=K)`` structure of a log is this strategy.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .base import DyadicStrategy, FactorizedSpec


class Tree(DyadicStrategy):
    name: ClassVar[str] = "tree"
    summary: ClassVar[str] = "online binary tree: node [t - 2^nu(t) + 1, t] noised at step t (Chan, Shi, Song 2011, Alg. 2)"

    def level_variance(self, i: int) -> float:
        return 1.0                      # each set bit of t adds one node

    def level_l1(self, i: int) -> float:
        return 1.0

    def factorization(self, spec: FactorizedSpec) -> tuple[np.ndarray, np.ndarray]:
        """Draw j (step j + 1) is the node [t - 2^nu(t) + 1, t], t = j + 1; release t sums the nodes of t's binary
        expansion [1, 2^i1], [2^i1 + 1, 2^i1 + 2^i2], ... (i1 > i2 > ... its set bits)."""
        K = int(spec.leaves)  # type: ignore[arg-type]
        R = np.zeros((K, K))
        L = np.zeros((K, K))
        for t in range(1, K + 1):
            R[t - 1, t - (t & -t):t] = 1.0
            start = 0
            for i in reversed(range(t.bit_length())):
                if (t >> i) & 1:
                    start += 1 << i
                    L[t - 1, start - 1] = 1.0     # the node [start - 2^i + 1, start], drawn at step start
        return L, R

    def tight_candidate(self, mechanism: str) -> bool:
        return True

    # the runtime is privacct.mechanisms.TreeCounter itself, unchanged
    def start(self, counter: Any) -> None:
        counter._tree = counter._online_tree()

    def step(self, counter: Any, t: int, x: np.ndarray, weights: np.ndarray | None) -> None:
        counter._tree.add(x)

    def noisy_sum(self, counter: Any) -> np.ndarray:
        return counter._tree.noisy_sum()


TREE = Tree()
