"""A fitted test statistic (:class:`Statistic`) and the rounding of likelihood ratios (:data:`LR_DECIMALS`).

Its own module so that the candidate families that build statistics (:mod:`privacct.audits.statistics`,
:mod:`privacct.audits.vector_statistics`) both import it without importing each other in a circle (issue 22).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

# Likelihood ratios are rounded to this many decimals: a log-ratio that is constant on a region
# (e.g. +-Delta/b for Laplace) is otherwise split by floating-point round-off, and round-off
# patterns differ between f(D) + noise and f(D') + noise (the Mironov 2012 effect). A test that
# exploits them measures the floating-point implementation, not the mechanism's analysis; the
# rounding keeps the likelihood-ratio test about the latter.
LR_DECIMALS = 9


@dataclass
class Statistic:
    """A fitted scalar statistic: ``fn(raw_outputs) -> (n,)`` floats.

    ``holdout``: for a statistic fitted on one part of the selection half, its values on the OTHER
    part, (values on D's rows, values on D''s rows): the tester then chooses its threshold and scores
    it there (counts rescaled to the selection half's size), so that a statistic with many fitted
    parameters (a histogram of likelihood ratios) does not win the selection by overfitting.
    """

    name: str
    fn: Callable[[np.ndarray], np.ndarray]
    decimals: int | None = None
    holdout: tuple | None = None

    def __call__(self, raw: np.ndarray) -> np.ndarray:
        s = np.asarray(self.fn(raw), dtype=float).reshape(-1)
        if self.decimals is not None:
            # values beyond ~1e300 / 10^decimals overflow the rounding's scaling; their float spacing is far above
            # 10^-decimals already, so they are kept as they are (rounding would not change them)
            with np.errstate(over="ignore", invalid="ignore"):
                r = np.round(s, self.decimals)
            s = np.where(np.isfinite(r), r, s)
        return np.where(np.isnan(s), 0.0, s)


__all__ = ["LR_DECIMALS", "Statistic"]
