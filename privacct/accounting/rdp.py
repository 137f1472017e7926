"""Renyi DP (Mironov 2017, arXiv 1702.07476): Gaussian RDP_alpha = alpha mu^2 / 2, Laplace
Prop. 6 (evaluated without cancellation, :func:`privacct.accounting.formulas.rdp_laplace`); RDP
adds up over composition; to (eps, delta) by Canonne, Kamath, Steinke (2020) Prop. 12, the
conversion of dp_accounting's RdpAccountant (add-or-remove with the log's explicit sensitivity,
see :mod:`privacct.accounting.base`). The curve and the conversion are computed here, rounded
outward, and identity-tested against dp_accounting 0.6.0 (``test_accounting.py``): dp_accounting
evaluates Laplace RDP in a form that cancels for small eps0 (it returns 0, or a negative value it
logs to stderr, for eps0 below ~1e-9 at large counts).

Orders: dp_accounting's defaults plus a fine grid below 1.1 and up to 10^4 for tiny-noise logs.
Monotone: every RDP value grows with count and ratio, and the conversion is a minimum over a
fixed set of orders of functions increasing in RDP and in 1/delta.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import check_positive
from . import formulas as F
from .base import Accountant, Release, releases

ORDERS = tuple(sorted(set([1.01, 1.02, 1.03, 1.05, 1.07] + [1 + x / 10.0 for x in range(1, 100)]
                          + list(range(11, 64)) + [80, 100, 128, 160, 200, 256, 320, 400, 512, 700, 1024, 2048, 4096, 10000])))


def rdp_curve(rel: list[Release], orders: np.ndarray) -> np.ndarray:
    """sum over releases of count * RDP_alpha(release), each rounded up."""
    total = np.zeros_like(orders)
    with np.errstate(over="ignore", invalid="ignore"):
        gauss = [r for r in rel if r.kind == "gaussian"]
        if gauss:  # sum count mu^2, then alpha * that / 2 (all terms non-negative)
            mu2 = F.up_rel(F.safe_sum(F.float_up(r.count) * r.ratio * r.ratio for r in gauss), 8)
            total = total + F.rdp_gaussian(math.sqrt(mu2) * (1.0 + 4 * F.U), orders)
        lap = [r for r in rel if r.kind == "laplace"]
        if lap:
            per = F.rdp_laplace(np.array([r.ratio for r in lap]), orders)        # n x orders
            counts = np.array([F.float_up(r.count) for r in lap])[:, None]
            total = total + np.sum(counts * per, axis=0) * (1.0 + 4 * F.U * len(lap))
        return total * (1.0 + 8 * F.U) + 5e-324


class RDP(Accountant):
    """Renyi DP, CKS20 conversion."""

    name = "rdp"
    citation = "Mironov (2017) Props 6, 7; Canonne, Kamath, Steinke (2020) Prop. 12 (as in dp_accounting 0.6.0)"
    orders = ORDERS

    def why_not_for_any_noise(self, log, *, delta):
        if delta <= 0.0:
            return "RDP converts to (eps, delta) only for delta > 0"
        return None

    def _epsilon(self, rel, delta):
        orders = np.asarray(self.orders, dtype=float)
        return F.rdp_epsilon(orders, rdp_curve(rel, orders), delta)

    def delta(self, log, *, epsilon):
        epsilon = check_positive("epsilon", epsilon)
        if self.why_not(log, delta=0.5) is not None:
            return 1.0
        orders = np.asarray(self.orders, dtype=float)
        return F.rdp_delta(orders, rdp_curve(releases(log), orders), epsilon)
