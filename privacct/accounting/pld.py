"""Privacy loss distributions through dp_accounting 0.6.0 (Koskela et al. 2020; Doroshenko et al.
2022, arXiv 2207.04380, connect-the-dots), pessimistic estimates, add-or-remove with the log's
explicit sensitivity.

* All Gaussian releases merge exactly into one Gaussian with mu = sqrt(sum count mu_i^2)
  (Dong, Roth, Su 2019, Cor. 3.3), so their cost does not depend on the counts.
* Each distinct Laplace ratio is self-composed by repeated squaring of its PLD (about
  2 log2(count) compositions, each truncating at most 1e-15 of tail mass into the pessimistic
  infinity mass). dp_accounting's own ``self_compose`` first computes ``size ** count`` as an
  exact integer, which for count = 1e9 runs for most of an hour.
* The discretisation interval is 1e-4 * 2^j, the least such that the log's loss range (below)
  spans at most 1e5 intervals. Grids for different logs are nested (powers of two) and the
  interval only grows with the loss range, so a log with more releases or less noise never
  gets a finer grid than a smaller log: a coarser nested pessimistic grid never lowers epsilon
  (connect-the-dots interpolates the convex privacy profile, and a chord over a sub-grid lies
  above the finer one). In dp_accounting's implementation a coarser nested grid can still give
  up to one fine interval less (tail truncation), so every figure is raised by one interval
  (:data:`PLD.GRID_MARGIN`), which keeps PLD monotone (docs/accounting.md#pld).

Not applicable (with the reason), each condition monotone (a log with more releases or less noise
is refused whenever a smaller one is, so the tightest figure stays monotone): delta = 0; a loss
range above :data:`PLD.MAX_LOSS_RANGE`; more Laplace releases than the grid can carry (each
composed release may shift the pessimistic PLD by up to one interval: the total bound above
MAX_LOSS_RANGE makes the figure useless, and its grids huge); an estimated work (compositions x
grid points, where the grid-point count is min(1e5, range / 1e-4), monotone in the range) above
:data:`PLD.MAX_WORK`, measured in benchmarks/README.md so that one figure stays well under a
second; a figure dp_accounting cannot represent (inf), or one above :data:`PLD.MAX_EPSILON` = 500, where
its answers near exp's overflow are erratic (refused as NumericalError: "overflow", like inf).
"""

from __future__ import annotations

import math

from ..errors import NumericalError, check_positive
from . import formulas as F
from .base import Accountant, Release, releases


def _laplace_kl(eps0: float) -> float:
    """KL divergence of a Laplace pair with ratio eps0: eps0 + e^{-eps0} - 1 (<= eps0^2/2, <= eps0)."""
    return eps0 + math.expm1(-eps0)


def loss_range(rel: list[Release]) -> float:
    """Width of the privacy-loss support that the (truncated) composed PLD occupies, an upper
    estimate that grows with every count and ratio: for the merged Gaussian mu^2/2 + 12 mu
    (mean and ~e^-50 tails); for Laplace the mean sum count * KL plus 10 standard deviations
    sqrt(sum count eps0^2) (Hoeffding: the 1e-15 truncation stays inside) plus the largest eps0."""
    mu2 = F.safe_sum(F.float_up(r.count) * r.ratio * r.ratio for r in rel if r.kind == "gaussian")
    lap = [r for r in rel if r.kind == "laplace"]
    mean = F.safe_sum(F.float_up(r.count) * _laplace_kl(r.ratio) for r in lap)
    var = F.safe_sum(F.float_up(r.count) * r.ratio * r.ratio for r in lap)
    top = max((r.ratio for r in lap), default=0.0)
    return mu2 / 2.0 + 12.0 * math.sqrt(mu2) + mean + 10.0 * math.sqrt(var) + top


def _self_compose(pld, count: int):
    """PLD of ``count``-fold composition by repeated squaring (public ``compose`` only)."""
    result = None
    base = pld
    n = count
    while True:
        if n & 1:
            result = base if result is None else result.compose(base)
        n >>= 1
        if not n:
            return result
        base = base.compose(base)


class PLD(Accountant):
    """Pessimistic PLD accounting through dp_accounting 0.6.0."""

    name = "pld"
    citation = "dp_accounting 0.6.0 privacy_loss_distribution (pessimistic connect-the-dots; Doroshenko et al. 2022)"

    calibration_guide = "rdp"   # RDP's calibrated factor usually already meets PLD's budget (docs/accounting.md#calibration)
    BASE_INTERVAL = 1e-4
    GRID_POINTS = 1e5
    MAX_LOSS_RANGE = 1e4
    # Work bound: compositions x grid points (benchmarks/README.md: one evaluation stays under
    # ~0.6 s on the project machine at this bound).
    MAX_WORK = 5e7

    def __init__(self, value_discretization_interval: float = 1e-4) -> None:
        self.BASE_INTERVAL = check_positive("value_discretization_interval", value_discretization_interval)

    @staticmethod
    def loss_range(log) -> float:
        return loss_range(releases(log))

    def why_not_for_any_noise(self, log, *, delta):
        if delta <= 0.0:
            return "the PLD accountant reports a finite epsilon only for delta > 0"
        return None

    def why_not_at_this_noise(self, rel, *, delta):
        r = loss_range(rel)
        if not r <= self.MAX_LOSS_RANGE:
            return (f"the privacy-loss range {r:.3g} exceeds {self.MAX_LOSS_RANGE:g}, beyond a PLD grid "
                    "(epsilon would be far above any claim)")
        h = self.interval(rel)
        n_lap = sum(r.count for r in rel if r.kind == "laplace")
        if n_lap * h > self.MAX_LOSS_RANGE:
            return (f"{n_lap} Laplace releases on a grid of interval {h:g}: the pessimistic discretisation "
                    f"may add up to {n_lap * h:.3g} to epsilon (use rdp or zcdp)")
        work = self._compositions(rel) * min(self.GRID_POINTS, r / self.BASE_INTERVAL)
        if work > self.MAX_WORK:
            return f"estimated PLD work {work:.3g} (compositions x grid points) exceeds the time budget {self.MAX_WORK:.3g}"
        return None

    @staticmethod
    def _compositions(rel: list[Release]) -> int:
        return sum(1 + 2 * r.count.bit_length() for r in rel if r.kind == "laplace") + 1

    def interval(self, rel: list[Release]) -> float:
        """1e-4 * 2^j, the least with loss_range / interval <= GRID_POINTS (nested grids)."""
        need = loss_range(rel) / (self.GRID_POINTS * self.BASE_INTERVAL)
        j = 0 if need <= 1.0 else math.ceil(math.log2(need))
        h = self.BASE_INTERVAL * 2.0**j
        while loss_range(rel) / h > self.GRID_POINTS:
            h *= 2.0
        return h

    def _pld(self, rel: list[Release]):
        from dp_accounting.pld import privacy_loss_distribution as P

        h = self.interval(rel)
        parts = []
        gauss = [r for r in rel if r.kind == "gaussian"]
        if gauss:
            mu = F.up_rel(math.sqrt(F.up_rel(F.safe_sum(F.float_up(r.count) * r.ratio * r.ratio for r in gauss), 8)), 4)
            sigma = math.nextafter(1.0 / mu, 0.0)  # never more noise than the log has
            parts.append(P.from_gaussian_mechanism(standard_deviation=sigma, sensitivity=1.0, pessimistic_estimate=True,
                                                   value_discretization_interval=h))
        for r in rel:
            if r.kind == "laplace":
                b = math.nextafter(1.0 / r.ratio, 0.0)
                one = P.from_laplace_mechanism(b, sensitivity=1.0, pessimistic_estimate=True, value_discretization_interval=h)
                parts.append(_self_compose(one, r.count))
        pld = parts[0]
        for p in parts[1:]:
            pld = pld.compose(p)
        return pld

    # dp_accounting's PLD arithmetic (FFT convolutions, float sums of probabilities) is rounded
    # outward by this relative margin on epsilon and delta.
    REL_MARGIN = 1e-9
    # Epsilon is raised by this many grid intervals h: a grid twice as coarse can give an epsilon
    # up to one fine interval lower (measured: exactly one interval, at epsilon in the hundreds,
    # where the tail truncation lands on grid points). Over nested grids h_f < h_c = 2^k h_f the
    # drops add up to at most h_c - h_f, and the margins differ by h_c - h_f, so a log whose grid
    # is coarser never reports less (docs/accounting.md#pld).
    GRID_MARGIN = 1

    #: Figures above this are refused (NumericalError), never reported: near exp's overflow (eps ~ 709)
    #: dp_accounting's PLD answers erratically (measured: a log it calls unbounded at delta = 1e-3 gets 781
    #: at delta = 1e-6, and adding releases turned "unbounded" into 1117), and such a log is far from private.
    MAX_EPSILON = 500.0

    def _epsilon(self, rel, delta):
        e = float(self._pld(rel).get_epsilon_for_delta(delta))
        if not math.isfinite(e) or e > self.MAX_EPSILON:
            raise NumericalError(f"accountant {self.name!r}: epsilon above {self.MAX_EPSILON:g} at delta={delta!r}, "
                                 "beyond what the PLD represents reliably (the log is far from private)")
        return F.up(e + self.GRID_MARGIN * self.interval(rel), self.REL_MARGIN * abs(e))

    def delta(self, log, *, epsilon):
        from .base import quiet_numerics

        epsilon = check_positive("epsilon", epsilon)
        if self.why_not(log, delta=0.5) is not None:
            return 1.0
        rel = releases(log)
        with quiet_numerics():  # the same grid margin as epsilon: delta at epsilon - 1 interval
            d = float(self._pld(rel).get_delta_for_epsilon(max(0.0, epsilon - self.GRID_MARGIN * self.interval(rel))))
        if not math.isfinite(d):
            return 1.0
        return min(1.0, F.up(d, self.REL_MARGIN * d + 1e-15))
