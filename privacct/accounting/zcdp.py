"""zCDP (Bun & Steinke 2016, arXiv 1605.02065): a Gaussian release with ratio mu is
(mu^2 / 2)-zCDP (Prop. 1.6), a pure eps0-DP release (eps0^2 / 2)-zCDP (Prop. 1.4); rho adds up
over adaptive composition (Lemma 2.3); to (eps, delta) by the smaller of BS16 Prop. 1.3 and
Canonne, Kamath, Steinke (2020, arXiv 2004.00010) Prop. 12. Monotone: rho grows with every count
and ratio, and both conversions grow with rho and 1/delta.
"""

from __future__ import annotations

import math

from ..errors import check_positive
from . import formulas as F
from .base import Accountant, Release, releases


def rho_of(rel: list[Release]) -> float:
    """sum count * ratio^2 / 2 over the releases, rounded up (non-negative terms)."""
    return F.up_rel(F.safe_sum(F.float_up(r.count) * r.ratio * r.ratio / 2.0 for r in rel), 8)


class ZCDP(Accountant):
    """zCDP with the BS16 / CKS20 conversions."""

    name = "zcdp"
    citation = "Bun & Steinke (2016) Props 1.3, 1.4, 1.6; Canonne, Kamath, Steinke (2020) Prop. 12"

    def why_not_for_any_noise(self, log, *, delta):
        if delta <= 0.0:
            return "zCDP converts to (eps, delta) only for delta > 0"
        return None

    @staticmethod
    def rho(log) -> float:
        return rho_of(releases(log))

    def _epsilon(self, rel, delta):
        return F.zcdp_epsilon(rho_of(rel), delta)

    def _closed_form_factor(self, rel, epsilon, delta):
        """rho = sum count mu_i^2 / 2 shrinks as 1/c^2, so c = sqrt(rho(1) / rho*), rho* the largest rho whose
        conversion meets (epsilon, delta) (docs/accounting.md#calibration, docs/accounting.md#zcdp)."""
        return math.sqrt(rho_of(rel) / F.zcdp_rho_for(epsilon, delta))

    def delta(self, log, *, epsilon):
        epsilon = check_positive("epsilon", epsilon)
        if self.why_not(log, delta=0.5) is not None:
            return 1.0
        return F.zcdp_delta(self.rho(log), epsilon)
