"""Advanced composition: the least of four valid theorems at the same total delta.

* basic composition (Dwork & Roth 2014, Thm 3.16), with all of delta shared by the Gaussians;
* Dwork, Rothblum, Vadhan (2010), Thm III.3 (Dwork & Roth 2014, Thm 3.20), heterogeneous form;
* Kairouz, Oh, Viswanath (2015, arXiv 1311.0776), Thm 3.5 (closed form, heterogeneous);
* for a log whose releases are all identical pure-DP releases (one Laplace ratio), at most
  :data:`AdvancedComposition.KOV_MAX_COUNT` of them, KOV Thm 3.3 (optimal), evaluated exactly
  between its grid points (:func:`privacct.accounting.formulas.kov_optimal_epsilon`).

Laplace releases enter as (eps0, 0); Gaussian releases as (eps_i, delta_i) with half of delta
shared equally among them (exact Balle-Wang eps_i), the other half is the composition slack
delta'. A pure log gives all of delta to the slack.

Monotone by construction (docs/accounting.md#advanced): each of the first three bounds grows
with every count, every eps_i and 1/delta' (and eps_i grows as the Gaussian share of delta
shrinks), so their minimum does. The optimal bound is exact, so it equals the least epsilon any
valid bound can give; a larger log (more releases, a second ratio, or a count above the cap)
that drops it is bounded by valid theorems, each at least the optimal epsilon of the larger log,
which is at least the optimal epsilon of the smaller one. (The grid-point version of Thm 3.3
is not monotone: for k even it reaches eps = 0 where k - 1 gives eps0.)
"""

from __future__ import annotations

from . import formulas as F
from .base import Accountant
from .basic import div_down, exact_sum_up, pure_and_gaussian_levels


def _float_up(q) -> float:
    return exact_sum_up([(1, q)])


class AdvancedComposition(Accountant):
    """Advanced composition: min of basic, DRV (2010), KOV (2015) closed form and, for identical
    pure releases, KOV's optimal composition."""

    name = "advanced"
    citation = "Dwork, Rothblum, Vadhan (2010) Thm III.3; Kairouz, Oh, Viswanath (2015) Thms 3.3, 3.5"
    # Above this many identical pure releases the optimal bound is skipped (its cost is linear
    # in the count; benchmarks/README.md). The closed forms take over: the figure can only rise.
    KOV_MAX_COUNT = 10**6

    def why_not_for_any_noise(self, log, *, delta):
        if delta <= 0.0:
            return "advanced composition needs delta > 0"
        return None

    def _epsilon(self, rel, delta):
        pure = all(r.kind == "laplace" for r in rel)
        if pure:
            d_prime = delta
            levels = [(r.ratio, r.count) for r in rel]
            basic = exact_sum_up([(r.count, r.exact) for r in rel])
        else:
            d_prime = div_down(delta, 2)
            levels = pure_and_gaussian_levels(rel, div_down(delta, 2))
            # basic composition at the whole delta is valid at the same total delta as well
            basic = exact_sum_up([(c, e) for e, c in pure_and_gaussian_levels(rel, delta)])
        eps = [e if isinstance(e, float) else _float_up(e) for e, _ in levels]
        counts = [F.float_up(c) for _, c in levels]
        best = min(basic, F.drv_epsilon(eps, counts, d_prime), F.kov_closed_form_epsilon(eps, counts, d_prime))
        if pure and len(rel) == 1 and rel[0].count <= self.KOV_MAX_COUNT:
            best = min(best, F.kov_optimal_epsilon(rel[0].count, rel[0].ratio, delta))
        return best
