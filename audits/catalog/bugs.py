"""Classic implementation bugs that break a privacy claim (audit targets with no finite eps).

The scale, sensitivity and probability slips of the catalogue reuse the correct mechanisms with a
wrong parameter (:mod:`privacct.audits.catalog`); the ones here change the code path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NoiselessBranch:
    """``f(D)`` released EXACTLY when it exceeds ``threshold``, ``f(D) + Lap(scale)`` otherwise: the
    noise is added on one branch only (the SmartSum-style slip of DP-Finder issue #1). An atom at
    f(D) appears on one side only, so the mechanism is not eps-DP for any finite eps.

    ``flag``: release (branch bit, value) instead of the value alone (a mixed discrete/continuous
    vector)."""

    scale: float = 1.0
    threshold: float = 0.5
    flag: bool = False

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        v = float(dataset)
        exact = v > self.threshold
        out = np.full(size, v) if exact else v + rng.laplace(0.0, self.scale, size=size)
        if not self.flag:
            return out
        return np.column_stack([np.full(size, float(exact)), out])
