"""The accountants: basic, advanced, zCDP, analytic Gaussian (ours) and RDP, PLD (dp_accounting).

Each is an upper bound on the worst user's privacy loss. Which apply:

============  ======================  =========================================================
name          applies to              method
============  ======================  =========================================================
basic         any log (Gaussian       sum of per-release epsilons; Gaussian releases get an equal
              groups need delta > 0)  share of delta each (exact Balle-Wang epsilon per release)
advanced      delta > 0               min of Dwork-Rothblum-Vadhan and Kairouz-Oh-Viswanath
                                      (optimal when all releases are identical pure-DP ones)
zcdp          delta > 0               rho = sum count * mu^2 / 2 (Gaussian), eps0^2 / 2 per pure
                                      release (Bun-Steinke 2016 Prop 1.4); BS16 / CKS20 conversion
rdp           delta > 0               dp_accounting RdpAccountant, add-or-remove events with the
                                      log's explicit sensitivity (Mironov 2017)
pld           delta > 0               dp_accounting PLDAccountant, pessimistic discretisation
analytic-     Gaussian-only logs,     exact: k-fold Gaussian composition is one Gaussian with
gaussian      delta > 0               mu = sqrt(sum count mu_i^2) (Dong-Roth-Su 2019, Cor. 3.3),
                                      then Balle-Wang 2018 Thm 8
============  ======================  =========================================================
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from ..log import MechanismLog
from . import formulas as F
from .base import Accountant, is_gaussian, is_pure, releases

_AOR = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE


def _split_gaussian_delta(log: MechanismLog, delta: float) -> tuple[list[float], list[float]]:
    """Per-release (eps_i, delta_i): pure releases (eps0, 0); Gaussian ones share delta equally."""
    rel = releases(log)
    n_gauss = sum(r.count for r in rel if r.kind == "gaussian")
    eps: list[float] = []
    counts: list[int] = []
    for r in rel:
        e = r.ratio if r.kind == "laplace" else F.gaussian_epsilon(delta / n_gauss, r.ratio)
        eps.append(e)
        counts.append(r.count)
    return eps, counts


class BasicComposition(Accountant):
    """Basic (sequential) composition: eps = sum_i eps_i, delta = sum_i delta_i (Dwork & Roth Thm 3.16)."""

    name = "basic"
    citation = "Dwork & Roth (2014), Theorem 3.16"

    def why_not(self, log, *, delta):
        if delta == 0.0 and not is_pure(log):
            return "Gaussian releases need delta > 0"
        return None

    def _epsilon(self, log, delta):
        eps, counts = _split_gaussian_delta(log, delta) if not is_pure(log) else (
            [r.ratio for r in releases(log)], [r.count for r in releases(log)])
        return math.fsum(e * c for e, c in zip(eps, counts, strict=True))

    def delta(self, log, *, epsilon):
        if is_pure(log):
            return 0.0 if self.epsilon(log, delta=0.0) <= epsilon else 1.0
        return super().delta(log, epsilon=epsilon)


class AdvancedComposition(Accountant):
    """Advanced composition: the smallest of Dwork-Rothblum-Vadhan (2010), Kairouz-Oh-Viswanath
    (2015) and basic composition (always valid at the same delta).

    Pure (Laplace) releases enter as (eps0, 0); Gaussian releases as (eps_i, delta_i) with half
    of delta shared equally among them (exact Balle-Wang eps_i), the other half is delta'.
    For a log whose releases are all identical pure-DP releases, KOV's optimal Theorem 3.3
    is used; otherwise KOV's closed-form Theorem 3.5 and DRV's Theorem III.3.
    """

    name = "advanced"
    citation = "Dwork, Rothblum, Vadhan (2010) Thm III.3; Kairouz, Oh, Viswanath (2015) Thms 3.3, 3.5"

    def why_not(self, log, *, delta):
        if delta <= 0.0:
            return "advanced composition needs delta > 0"
        return None

    def _epsilon(self, log, delta):
        import numpy as np

        rel = releases(log)
        if is_pure(log):
            d_prime = delta
            eps, counts = [r.ratio for r in rel], [r.count for r in rel]
        else:
            d_prime = delta / 2.0
            eps, counts = _split_gaussian_delta(log, delta / 2.0)
        total = sum(counts)
        per = np.repeat(np.asarray(eps, dtype=float), counts) if total <= 10_000_000 else None
        if per is None:
            # Identical releases summarised without materialising them.
            s1 = math.fsum(e * c for e, c in zip(eps, counts, strict=True))
            s2 = math.fsum(e * e * c for e, c in zip(eps, counts, strict=True))
            drift = math.fsum(math.tanh(e / 2) * e * c for e, c in zip(eps, counts, strict=True))
            return min(s1, drift + math.sqrt(2 * s2 * math.log(1 / d_prime)))
        best = min(F.drv_epsilon(per, d_prime), F.kov_closed_form_epsilon(per, d_prime))
        if is_pure(log) and len(rel) == 1:
            best = min(best, F.kov_optimal_epsilon(rel[0].count, rel[0].ratio, delta))
        # Basic composition is a valid theorem at the same total delta: never report worse.
        return min(best, BasicComposition().epsilon(log, delta=delta))


class ZCDP(Accountant):
    """zCDP: Gaussian rho = Delta^2 / (2 sigma^2) per release (Bun & Steinke 2016, Prop. 1.6),
    pure eps0 -> eps0^2 / 2 (Prop. 1.4); rho adds up (Lemma 2.3); to (eps, delta) by the smaller
    of BS16 Prop. 1.3 and Canonne-Kamath-Steinke 2020 Prop. 12."""

    name = "zcdp"
    citation = "Bun & Steinke (2016) Props 1.3, 1.4, 1.6; Canonne, Kamath, Steinke (2020) Prop. 12"

    def why_not(self, log, *, delta):
        if delta <= 0.0:
            return "zCDP converts to (eps, delta) only for delta > 0"
        return None

    @staticmethod
    def rho(log: MechanismLog) -> float:
        return math.fsum(r.count * r.ratio * r.ratio / 2.0 for r in releases(log))

    def _epsilon(self, log, delta):
        return F.zcdp_epsilon(self.rho(log), delta)

    def delta(self, log, *, epsilon):
        from ..errors import check_positive

        return F.zcdp_delta(self.rho(log), check_positive("epsilon", epsilon))


def _dp_events(log: MechanismLog, *, merge_gaussians: bool) -> dp_accounting.DpEvent:
    events = []
    rel = releases(log)
    gauss = [r for r in rel if r.kind == "gaussian"]
    if merge_gaussians and gauss:
        # Exact: k Gaussians with ratios mu_i compose to one Gaussian with mu = sqrt(sum k mu_i^2).
        mu = math.sqrt(math.fsum(r.count * r.ratio * r.ratio for r in gauss))
        events.append(dp_accounting.GaussianDpEvent(1.0 / mu))
    else:
        events += [dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1.0 / r.ratio), r.count) for r in gauss]
    events += [dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(1.0 / r.ratio), r.count)
               for r in rel if r.kind == "laplace"]
    return events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events)


class RDP(Accountant):
    """Renyi DP through dp_accounting's RdpAccountant (Mironov 2017; Gaussian RDP_a = a mu^2 / 2,
    Laplace Prop. 6), add-or-remove with explicit sensitivity (see privacct.accounting.base), RDP
    to DP by Canonne-Kamath-Steinke 2020 (dp_accounting's conversion). Orders: dp_accounting's
    defaults plus a fine grid below 1.1 and up to 10^4 for tiny-noise logs."""

    name = "rdp"
    citation = "Mironov (2017); dp_accounting 0.6.0 RdpAccountant"
    orders = tuple(sorted(set([1.01, 1.02, 1.03, 1.05, 1.07] + [1 + x / 10.0 for x in range(1, 100)]
                              + list(range(11, 64)) + [80, 100, 128, 160, 200, 256, 320, 400, 512, 700, 1024, 2048, 4096, 10000])))

    def why_not(self, log, *, delta):
        if delta <= 0.0:
            return "RDP converts to (eps, delta) only for delta > 0"
        return None

    def _accountant(self, log):
        acc = rdp_privacy_accountant.RdpAccountant(orders=list(self.orders), neighboring_relation=_AOR)
        acc.compose(_dp_events(log, merge_gaussians=True))
        return acc

    def _epsilon(self, log, delta):
        return float(self._accountant(log).get_epsilon(delta))

    def delta(self, log, *, epsilon):
        from ..errors import check_positive

        return min(1.0, float(self._accountant(log).get_delta(check_positive("epsilon", epsilon))))


class PLD(Accountant):
    """Privacy loss distributions through dp_accounting's PLDAccountant (Koskela et al. 2020;
    Doroshenko et al. 2022 connect-the-dots), pessimistic estimates. Identical releases are
    merged into one SelfComposedDpEvent and all Gaussian releases into one exact Gaussian, so
    the cost does not grow with the number of groups that share a ratio."""

    name = "pld"
    citation = "dp_accounting 0.6.0 PLDAccountant (pessimistic)"

    def __init__(self, value_discretization_interval: float = 1e-4) -> None:
        self.value_discretization_interval = value_discretization_interval

    MAX_GRID_POINTS = 5e4

    @staticmethod
    def loss_range(log: MechanismLog) -> float:
        """Rough width of the composed privacy-loss support: mu^2/2 + 12 mu (Gaussian part, the
        truncation keeps ~e^-50 of tail mass) plus sum count * eps0 (Laplace part)."""
        rel = releases(log)
        mu2 = math.fsum(r.count * r.ratio ** 2 for r in rel if r.kind == "gaussian")
        lap = math.fsum(r.count * r.ratio for r in rel if r.kind == "laplace")
        return mu2 / 2.0 + 12.0 * math.sqrt(mu2) + lap

    def why_not(self, log, *, delta):
        if delta <= 0.0:
            return "the PLD accountant reports a finite epsilon only for delta > 0"
        if self.loss_range(log) > 1e4:
            return "the privacy loss is too large for a PLD grid (the log is far from private)"
        return None

    def _accountant(self, log):
        # A coarser grid is still pessimistic (an upper bound); it keeps the grid below
        # MAX_GRID_POINTS for logs with a large privacy loss. dp_accounting cannot represent
        # an epsilon above ~709 (e^eps overflows) and returns inf there, which
        # Accountant.epsilon refuses with a NumericalError.
        interval = max(self.value_discretization_interval, self.loss_range(log) / self.MAX_GRID_POINTS)
        acc = pld_privacy_accountant.PLDAccountant(neighboring_relation=_AOR, value_discretization_interval=interval)
        acc.compose(_dp_events(log, merge_gaussians=True))
        return acc

    def _epsilon(self, log, delta):
        with np.errstate(over="ignore"):
            return float(self._accountant(log).get_epsilon(delta))

    def delta(self, log, *, epsilon):
        from ..errors import check_positive

        with np.errstate(over="ignore"):
            return min(1.0, float(self._accountant(log).get_delta(check_positive("epsilon", epsilon))))


class AnalyticGaussian(Accountant):
    """Exact for Gaussian-only logs: mu_total = sqrt(sum count_i mu_i^2) (Dong, Roth, Su 2019,
    Corollary 3.3: composition of GDP), then Balle & Wang (2018) Theorem 8 (bisection, the
    private end of the bracket)."""

    name = "analytic-gaussian"
    citation = "Balle & Wang (2018) Thm 8; Dong, Roth, Su (2019) Cor. 3.3"

    def why_not(self, log, *, delta):
        if not is_gaussian(log):
            return "applies only to logs whose releases are all Gaussian"
        if delta <= 0.0:
            return "a Gaussian log has a finite epsilon only for delta > 0"
        return None

    @staticmethod
    def mu(log: MechanismLog) -> float:
        return math.sqrt(math.fsum(r.count * r.ratio * r.ratio for r in releases(log)))

    def _epsilon(self, log, delta):
        return F.gaussian_epsilon(delta, self.mu(log))

    def delta(self, log, *, epsilon):
        from ..errors import check_positive

        if not is_gaussian(log):
            return super().delta(log, epsilon=epsilon)
        return F.gaussian_delta(check_positive("epsilon", epsilon), self.mu(log))
