"""Classic implementation bugs that break a privacy claim (audit targets with no finite eps).

The scale, sensitivity and probability slips of the catalogue reuse the correct mechanisms with a
wrong parameter (:mod:`privacct.audits.catalog`); the ones here change the code path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NoiselessBranch:
    """``f(D) + Lap(scale)``, except on a branch taken with probability ``p_exact`` (whatever the
    data: a fallback or cache path) that releases ``f(D)`` EXACTLY: the noise is added on one branch
    only (the SmartSum-style slip of DP-Finder issue #1). The atom at f(D) has probability
    ``p_exact`` under D and 0 under D', so the mechanism is not eps-DP for any finite eps.

    ``flag``: release (branch bit, value) instead of the value alone (a mixed discrete/continuous
    vector whose bit has the same law on both sides)."""

    scale: float = 4.0
    p_exact: float = 0.1
    flag: bool = False

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        v = float(dataset)
        exact = rng.random(size) < self.p_exact
        out = np.where(exact, v, v + rng.laplace(0.0, self.scale, size=size))
        if not self.flag:
            return out
        return np.column_stack([exact.astype(float), out])
