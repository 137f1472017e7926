"""Output perturbation, local randomizers and prefix sums with known privacy (audit targets).

Every class is ``mechanism(dataset, rng, size) -> (size, ...) array`` (picklable, vectorised; the
dataset is the query answers f(D)). The true eps of each, with its source, is stated where the
catalogue lists it (:mod:`privacct.audits.catalog`). Those whose observation is Laplace coordinates with
known shifts (or randomized response) declare their audit's power criterion from that exact
privacy-loss distribution (``power_criterion(dataset, neighbour)``, docs/auditing.md#verdicts-and-power);
the catalogue gives the others a leakier version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..reference_mechanisms import LaplaceMechanism, RandomizedResponse, laplace_loss, structure_criterion


@dataclass(frozen=True)
class TwoSidedGeometric:
    """f(D) + G1 - G2, G ~ Geometric(1 - e^-eps) on {0, 1, ...}: the discrete Laplace (Ghosh,
    Roughgarden, Sundararajan 2009), eps-DP for integer queries of sensitivity 1."""

    epsilon: float = 1.0

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        p = -math.expm1(-self.epsilon)
        g = rng.geometric(p, size=(2, size)) - 1
        return (int(dataset) + g[0] - g[1]).astype(np.int64)


@dataclass(frozen=True)
class LaplaceVector(LaplaceMechanism):
    """f(D) + Lap(scale) on every coordinate (noisy histogram, Laplace composition): the reference
    :class:`~privacct.audits.reference_mechanisms.LaplaceMechanism` under the catalogue's name."""

    label = "Laplace vector"


@dataclass(frozen=True)
class RepeatedLaplace:
    """``copies`` independent Laplace(scale) releases of the same scalar f(D) (DP-Sniper's LaplaceParallel)."""

    scale: float = 20.0
    copies: int = 20

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        return float(dataset) + rng.laplace(0.0, self.scale, size=(size, self.copies))

    def loss_structure(self, dataset, neighbour):
        return laplace_loss(np.full(self.copies, float(dataset)), np.full(self.copies, float(neighbour)), self.scale)

    def power_criterion(self, dataset, neighbour):
        return structure_criterion(self.loss_structure(dataset, neighbour),
                                   f"{self.copies} Laplace releases (scale {self.scale:g})")


class BinaryRandomizedResponse(RandomizedResponse):
    """Keep the bit ``dataset`` with probability e^eps / (1 + e^eps) (Warner 1965): the reference
    :class:`~privacct.audits.reference_mechanisms.RandomizedResponse` under the catalogue's name (its keep
    probability ``expit(eps)`` equals the catalogue's former ``1 / (1 + exp(-eps))`` bit for bit at the
    catalogue's eps, tests/audits/test_catalogue.py)."""

    label = "binary randomized response"


@dataclass(frozen=True)
class OneTimeRappor:
    """One-time RAPPOR (Erlingsson, Pihur, Korolova 2014, steps 1-2): the value ``dataset`` sets
    ``hashes`` bits of a ``bits``-bit filter (bits v, v + 1, ... mod ``bits``: a fixed, collision-free
    'hash'), then every bit is set to 1 w.p. f/2, to 0 w.p. f/2, kept w.p. 1 - f (permanent
    randomized response). Output: (size, bits) of 0/1."""

    f: float = 0.5
    bits: int = 8
    hashes: int = 1

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        filt = np.zeros(self.bits, dtype=np.int64)
        filt[[(int(dataset) + i) % self.bits for i in range(self.hashes)]] = 1
        u = rng.random((size, self.bits))
        out = np.broadcast_to(filt, (size, self.bits)).copy()
        out[u < self.f / 2] = 1
        out[(u >= self.f / 2) & (u < self.f)] = 0
        return out


def rappor_epsilon(f: float, hashes: int) -> float:
    """eps_inf = 2 h ln((1 - f/2) / (f/2)) of the permanent randomized response (Erlingsson et al. 2014, Thm 1)."""
    return 2.0 * hashes * math.log((1.0 - f / 2.0) / (f / 2.0))


@dataclass(frozen=True)
class PrefixSumLaplace:
    """Every stream element x_t + Lap(scale), released as prefix sums (the 'simple' counter of
    Chan, Shi, Song 2011; PrefixSum of Wang et al. 2019, PLDI). ``shared``: one noise value for
    all t instead (a bug: differences of consecutive outputs are then exact)."""

    scale: float = 1.0
    shared: bool = False

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        x = np.asarray(dataset, dtype=float)
        if self.shared:
            return np.cumsum(x)[None, :] + rng.laplace(0.0, self.scale, size=(size, 1))
        return np.cumsum(x[None, :] + rng.laplace(0.0, self.scale, size=(size, x.size)), axis=1)

    def loss_structure(self, dataset, neighbour):
        """Prefix sums are an invertible map of the noisy elements x_t + Lap(b): the elements' loss structure
        (None with shared noise: differences of consecutive outputs are exact, no finite eps)."""
        return None if self.shared else laplace_loss(dataset, neighbour, self.scale)

    def power_criterion(self, dataset, neighbour):
        return structure_criterion(self.loss_structure(dataset, neighbour), f"prefix sums (scale {self.scale:g})")


@dataclass(frozen=True)
class BinaryTreePrefixSums:
    """The Binary Mechanism of Chan, Shi, Song 2011 (Alg. 2): every dyadic node of a stream of
    T = 2^k elements gets one Lap(scale) draw; the prefix sum at t adds the nodes of t's binary
    decomposition. An element sits in k + 1 nodes, so scale = (k + 1) / eps is eps-DP; the printed
    slip scale = ln(T) / eps (natural log) under-noises by (k + 1) / ln T.

    Declares no power criterion: even where the observation's loss is exactly that of the prefix nodes
    (a change in element 1), the prefix sums are correlated and the auditor's statistics are not their
    Neyman-Pearson test (measured: at the node structure's trials_needed the 2 x claim reference was
    certified above the claim in 28% of 40 audits, not ~50%), so that criterion would be optimistic; the
    catalogue gives it a leakier version instead."""

    scale: float = 4.0

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        x = np.asarray(dataset, dtype=float)
        t_len = x.size
        k = int(round(math.log2(t_len)))
        if 2 ** k != t_len:
            raise ValueError("BinaryTreePrefixSums needs a stream of length 2^k")
        out = np.zeros((size, t_len))
        for level in range(k + 1):
            width = 2 ** level
            n_nodes = t_len // width
            node_sums = x.reshape(n_nodes, width).sum(axis=1)
            noisy = node_sums[None, :] + rng.laplace(0.0, self.scale, size=(size, n_nodes))
            for t in range(1, t_len + 1):  # prefix [1, t] uses node (level, j) when bit `level` of t is set
                if (t >> level) & 1:
                    j = (t >> level) - 1  # the node covering ((j) * width, (j + 1) * width]
                    out[:, t - 1] += noisy[:, j]
        return out
