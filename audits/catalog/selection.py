"""Private selection: report-noisy-max variants and the exponential mechanism (audit targets).

``dataset``: the vector of query answers q (sensitivity 1 each). Outputs: the selected index
(int64, shape (size,)), or, for the broken variants, the noisy maximum value (float) or both
(index, value) in a (size, 2) array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ReportNoisyMax:
    """argmax_i q_i + noise_i (Dwork & Roth 2014, Claim 3.9), with Laplace or exponential noise of
    ``scale``; ``release``: ``index`` (correct), ``value`` (the noisy maximum instead: Ding et al.
    2018, 'iReportNoisyMax', Algs 7-8 of DP-Sniper's benchmark) or ``both`` (index and noisy value)."""

    scale: float = 2.0
    noise: str = "laplace"  # or "exponential"
    release: str = "index"

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        q = np.asarray(dataset, dtype=float)
        if self.noise == "laplace":
            z = rng.laplace(0.0, self.scale, size=(size, q.size))
        else:
            z = rng.exponential(self.scale, size=(size, q.size))
        noisy = q[None, :] + z
        idx = np.argmax(noisy, axis=1)
        if self.release == "index":
            return idx.astype(np.int64)
        val = noisy[np.arange(size), idx]
        if self.release == "value":
            return val
        return np.column_stack([idx.astype(float), val])


@dataclass(frozen=True)
class ExponentialMechanism:
    """P[i] proportional to exp(eps q_i / (2 Delta)) (McSherry & Talwar 2007; Dwork & Roth 2014,
    Thm 3.10), sampled exactly as argmax_i eps q_i / (2 Delta) + Gumbel_i (the Gumbel-max trick)."""

    epsilon: float = 1.0
    sensitivity: float = 1.0

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        q = np.asarray(dataset, dtype=float)
        g = rng.gumbel(size=(size, q.size))
        return np.argmax(self.epsilon * q[None, :] / (2.0 * self.sensitivity) + g, axis=1).astype(np.int64)
