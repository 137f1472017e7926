"""Basic (sequential) composition: eps = sum_i eps_i, delta = sum_i delta_i (Dwork & Roth 2014,
Theorem 3.16).

Laplace releases enter as pure (eps0, 0) and are summed exactly (rational arithmetic, rounded up
once); Gaussian releases share delta equally, each at its exact Balle-Wang epsilon for its share
(:func:`privacct.accounting.formulas.gaussian_epsilon`, an upper bound). Monotone: each term grows
with its count and ratio, and the share of delta shrinks as Gaussian releases are added.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .base import Accountant, Release, is_pure


def div_down(a: float, n: int) -> float:
    """The greatest float <= a / n (a >= 0, n >= 1): a share that never exceeds its total."""
    q = a / n
    if Fraction(q) * n > Fraction(a):
        q = math.nextafter(q, 0.0)
    return q


def exact_sum_up(terms: list[tuple[int, float | Fraction]]) -> float:
    """The least float >= sum count * x over (count, x), computed exactly in rationals."""
    s = sum((Fraction(c) * Fraction(x) for c, x in terms), Fraction(0))
    try:
        f = float(s)
    except OverflowError:
        return math.inf
    if Fraction(f) < s:
        f = math.nextafter(f, math.inf)
    return f


def pure_and_gaussian_levels(rel: list[Release], gaussian_delta_total: float) -> list[tuple[float | Fraction, int]]:
    """(eps_i, count_i) per release: Laplace (eps0, 0)-DP with eps0 exact (a rational);
    Gaussian releases share ``gaussian_delta_total`` equally, each at its Balle-Wang epsilon
    (an upper bound)."""
    from . import formulas as F

    n_gauss = sum(r.count for r in rel if r.kind == "gaussian")
    share = div_down(gaussian_delta_total, n_gauss) if n_gauss else 0.0
    gauss = [r.ratio for r in rel if r.kind == "gaussian"]
    eps = iter(F.gaussian_epsilons(share, gauss).tolist() if gauss else [])
    out = [(r.exact if r.kind == "laplace" else next(eps), r.count) for r in rel]
    if any(math.isinf(e) for e, _ in out if isinstance(e, float)):
        from ..errors import NumericalError

        raise NumericalError(f"no finite epsilon for a Gaussian release at delta share {share!r}")
    return out


class BasicComposition(Accountant):
    """Basic composition (Dwork & Roth 2014, Theorem 3.16)."""

    name = "basic"
    citation = "Dwork & Roth (2014), Theorem 3.16"

    def why_not_for_any_noise(self, log, *, delta):
        if delta == 0.0 and not is_pure(log):
            return "Gaussian releases need delta > 0"
        return None

    def _epsilon(self, rel, delta):
        levels = pure_and_gaussian_levels(rel, delta)
        return exact_sum_up([(c, e) for e, c in levels])

    def _closed_form_factor(self, rel, epsilon, delta):
        """A pure log: basic eps is sum count_i eps0_i and every eps0_i = Delta_i / (c b_i) shrinks as 1/c, so
        c = eps_basic(1) / epsilon, summed exactly and rounded up once (docs/accounting.md#calibration)."""
        if any(r.kind != "laplace" for r in rel):
            return None
        return exact_sum_up([(r.count, r.exact / Fraction(epsilon)) for r in rel])

    def delta(self, log, *, epsilon):
        if is_pure(log):
            from ..errors import check_positive

            return 0.0 if self.epsilon(log, delta=0.0) <= check_positive("epsilon", epsilon) else 1.0
        return super().delta(log, epsilon=epsilon)
