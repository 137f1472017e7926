"""Sparse-vector variants of Lyu, Su, Li 2017 ("Understanding the Sparse Vector Technique for
Differential Privacy", PVLDB 10(6), Algs 1-6 and Table 1) and the numerical SVT (audit targets).

``dataset``: the vector of m query answers (sensitivity 1 each), threshold T, cutoff c (number of
positive answers before the algorithm stops). Encodings follow DP-Sniper's benchmark (Bichsel et al.
2021): indicator outputs are 1 (above), 0 (below), -1 (aborted after the c-th positive); outputs
that release a value use -1000.0 for 'below' and -2000.0 for 'aborted' in the same column, so one
column mixes two atoms with a continuous part.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BELOW, ABORTED = -1000.0, -2000.0


def _after_cutoff(above: np.ndarray, c: int) -> np.ndarray:
    """Mask of the answers given after the c-th positive (aborted)."""
    before = np.cumsum(above, axis=1) - above  # positives strictly before each query
    return before >= c


@dataclass(frozen=True)
class SparseVector:
    """Lyu et al. 2017 Algs 1, 3-6 (``variant``); eps1 = eps / 2 on the threshold (eps / 4 for Alg 4).

    * 1 (correct, Lyu Alg 1): rho ~ Lap(1/eps1), nu_i ~ Lap(2c/eps2); output above/below; stop after c.
    * 3 (Roth 2011): nu_i ~ Lap(c/eps2) and the noisy answer q_i + nu_i is released when above.
    * 4 (Lee & Clifton 2014): eps1 = eps/4, nu_i ~ Lap(1/eps2): query noise not scaled with c.
    * 5 (Stoddard et al. 2014): no query noise (nu_i = 0), no cutoff.
    * 6 (Chen et al. 2015): nu_i ~ Lap(1/eps2) and no cutoff.
    """

    variant: int = 1
    epsilon: float = 1.0
    c: int = 1
    threshold: float = 1.0

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        q = np.asarray(dataset, dtype=float)
        eps1 = self.epsilon / (4.0 if self.variant == 4 else 2.0)
        eps2 = self.epsilon - eps1
        rho = rng.laplace(0.0, 1.0 / eps1, size=(size, 1))
        nu_scale = {1: 2.0 * self.c / eps2, 3: self.c / eps2, 4: 1.0 / eps2, 5: 0.0, 6: 1.0 / eps2}[self.variant]
        noisy = q[None, :] + (rng.laplace(0.0, nu_scale, size=(size, q.size)) if nu_scale > 0 else 0.0)
        above = noisy >= self.threshold + rho
        if self.variant in (5, 6):  # no cutoff
            return above.astype(np.int64)
        aborted = _after_cutoff(above, self.c)
        if self.variant == 3:
            out = np.where(above, noisy, BELOW)
            return np.where(aborted, ABORTED, out)
        return np.where(aborted, -1, above.astype(np.int64))


@dataclass(frozen=True)
class DworkRothSparseVector:
    """Lyu et al. 2017 Alg 2 (Dwork & Roth 2014, Alg 2 'Sparse'): rho ~ Lap(c/eps1), redrawn after
    every positive answer; nu_i ~ Lap(2c/eps2); eps1 = eps2 = eps/2; stop after c positives."""

    epsilon: float = 1.0
    c: int = 1
    threshold: float = 1.0

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        q = np.asarray(dataset, dtype=float)
        eps1 = eps2 = self.epsilon / 2.0
        rho = rng.laplace(0.0, self.c / eps1, size=size)
        noisy = q[None, :] + rng.laplace(0.0, 2.0 * self.c / eps2, size=(size, q.size))
        out = np.empty((size, q.size), dtype=np.int64)
        count = np.zeros(size, dtype=np.int64)
        for i in range(q.size):
            above = noisy[:, i] >= self.threshold + rho
            out[:, i] = np.where(count >= self.c, -1, above)
            count += above & (count < self.c)
            rho = np.where(above, rng.laplace(0.0, self.c / eps1, size=size), rho)
        return out


@dataclass(frozen=True)
class FirstAboveThreshold:
    """Lyu et al. 2017 Alg 3 with c = 1, released as (index of the first positive answer, its noisy
    answer q_i + nu_i) (StatDP's 'iSVT4' encoding: the number of 'below' answers and the last
    output); (m, BELOW) when no answer is above."""

    epsilon: float = 1.0
    threshold: float = 1.0

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        q = np.asarray(dataset, dtype=float)
        eps1 = eps2 = self.epsilon / 2.0
        rho = rng.laplace(0.0, 1.0 / eps1, size=(size, 1))
        noisy = q[None, :] + rng.laplace(0.0, 1.0 / eps2, size=(size, q.size))
        above = noisy >= self.threshold + rho
        any_above = above.any(axis=1)
        idx = np.where(any_above, np.argmax(above, axis=1), q.size)
        val = np.where(any_above, noisy[np.arange(size), np.minimum(idx, q.size - 1)], BELOW)
        return np.column_stack([idx.astype(float), val])


@dataclass(frozen=True)
class NumericalSparseVector:
    """Numerical SVT (Dwork & Roth 2014, Alg 3 'NumericSparse'; the version of Wang et al. 2019,
    PLDI, used by DP-Sniper): rho1 ~ Lap(3/eps), comparisons with nu_i ~ Lap(6c/eps), and a FRESH
    noisy answer q_i + Lap(3c/eps) released when above; 0 when below, -1000 when aborted.
    ``reuse``: release the comparison's own noisy answer q_i + nu_i instead (a bug: Lyu Alg 3)."""

    epsilon: float = 1.0
    c: int = 1
    threshold: float = 1.0
    reuse: bool = False

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        q = np.asarray(dataset, dtype=float)
        rho = rng.laplace(0.0, 3.0 / self.epsilon, size=(size, 1))
        cmp = q[None, :] + rng.laplace(0.0, 6.0 * self.c / self.epsilon, size=(size, q.size))
        fresh = q[None, :] + rng.laplace(0.0, 3.0 * self.c / self.epsilon, size=(size, q.size))
        above = cmp >= self.threshold + rho
        out = np.where(above, cmp if self.reuse else fresh, 0.0)
        return np.where(_after_cutoff(above, self.c), -1000.0, out)


@dataclass(frozen=True)
class Concatenated:
    """Two mechanisms run independently on the same dataset, outputs side by side (DP-Sniper's
    SVT34Parallel: Lyu Algs 3 and 4 together)."""

    first: object
    second: object

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        a = np.asarray(self.first(dataset, rng, size), dtype=float).reshape(size, -1)
        b = np.asarray(self.second(dataset, rng, size), dtype=float).reshape(size, -1)
        return np.concatenate([a, b], axis=1)
