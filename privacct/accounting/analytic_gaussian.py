"""Exact for Gaussian-only logs: k Gaussian releases with ratios mu_i compose to one Gaussian
with mu = sqrt(sum count_i mu_i^2) (Dong, Roth, Su 2019, Corollary 3.3: composition of GDP), then
Balle & Wang (2018) Theorem 8 (the least float epsilon whose delta, evaluated as an upper bound,
meets the budget). Monotone: mu grows with every count and ratio, epsilon with mu and 1/delta.
"""

from __future__ import annotations

import math

from ..errors import check_positive
from . import formulas as F
from .base import Accountant, Release, is_gaussian, releases


def mu_of(rel: list[Release]) -> float:
    """sqrt(sum count * mu_i^2), rounded up."""
    s = F.safe_sum(F.float_up(r.count) * r.ratio * r.ratio for r in rel)
    return F.up_rel(math.sqrt(F.up_rel(s, 8)), 4)


class AnalyticGaussian(Accountant):
    """Exact Gaussian accounting (Balle & Wang 2018; Dong, Roth, Su 2019)."""

    name = "analytic-gaussian"
    citation = "Balle & Wang (2018) Thm 8; Dong, Roth, Su (2019) Cor. 3.3"

    def why_not_for_any_noise(self, log, *, delta):
        if not is_gaussian(log):
            return "applies only to logs whose releases are all Gaussian"
        if delta <= 0.0:
            return "a Gaussian log has a finite epsilon only for delta > 0"
        return None

    @staticmethod
    def mu(log) -> float:
        return mu_of(releases(log))

    def _epsilon(self, rel, delta):
        return F.gaussian_epsilon(delta, mu_of(rel))

    def _closed_form_factor(self, rel, epsilon, delta):
        """mu = sqrt(sum count mu_i^2) shrinks as 1/c, so c = mu(1) / mu*, mu* the largest mu meeting (epsilon,
        delta) by Balle & Wang Thm 8 (docs/accounting.md#calibration, docs/accounting.md#analytic-gaussian)."""
        return mu_of(rel) / F.gaussian_mu_for(epsilon, delta)

    def delta(self, log, *, epsilon):
        epsilon = check_positive("epsilon", epsilon)
        if self.why_not(log, delta=0.5) is not None:
            return super().delta(log, epsilon=epsilon) if not is_gaussian(log) else 1.0
        return F.gaussian_delta(epsilon, self.mu(log))
