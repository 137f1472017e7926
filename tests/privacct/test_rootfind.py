"""The one conservative root-finder: exact on monotone predicates, never returns an infeasible
point, few evaluations on smooth gaps, robust to noisy ones."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from privacct.accounting.rootfind import (float_index, greatest_float, index_float, lattice_index_at_or_above,
                                          lattice_point, least_feasible, least_float)


@settings(max_examples=300)
@given(lower=st.integers(-10**6, 10**6), width=st.integers(0, 10**6), t=st.integers(-2 * 10**6, 3 * 10**6),
       start=st.integers(-2 * 10**6, 3 * 10**6), step=st.integers(1, 1000), noise=st.floats(0, 1e3),
       slope=st.sampled_from([1.0, 1e-9, 1e9]))
def test_least_feasible_is_exact_on_any_monotone_predicate(lower, width, t, start, step, noise, slope):
    upper = lower + width
    seen = {}

    def gap(m):
        # feasible exactly from t on; the magnitude is a noisy, badly scaled hint
        v = slope * (t - m) + (noise * math.sin(m) if m < t else 0.0)
        v = max(v, 1e-300) if m < t else min(v, 0.0)
        seen[m] = v
        return v

    r = least_feasible(gap, lower=lower, upper=upper, start=start, step=step)
    assert r == (None if t > upper else max(t, lower))
    assert r is None or seen[r] <= 0  # the answer was evaluated feasible


def test_float_helpers_and_lattice():
    for x in (0.0, 5e-324, 1e-300, 1.0, 3.5, 1.7976931348623157e308):
        assert index_float(float_index(x)) == x
    assert float_index(1.0) < float_index(math.nextafter(1.0, 2.0))
    x = least_float(lambda e: math.exp(-e) - 1e-6)
    assert math.exp(-x) <= 1e-6 and x - math.log(1e6) < 1e-12
    y = greatest_float(lambda m: m * m - 2.0)
    assert y * y <= 2.0 and (y * (1 + 1e-13)) ** 2 > 2.0
    assert greatest_float(lambda m: 1.0, lo=1.0, hi=2.0) is None
    for v in (1e-9, 0.3, 1.0, 7.0, 1e200):
        m = lattice_index_at_or_above(v)
        assert lattice_point(m) >= v > lattice_point(m - 1)


def test_few_evaluations_on_a_smooth_gap():
    n = [0]

    def gap(m):
        n[0] += 1
        return 3.3 - math.log2(lattice_point(m))

    assert least_feasible(gap, lower=-2**30, upper=2**30, start=0, step=2**14) == lattice_index_at_or_above(2**3.3)
    assert n[0] <= 20


@settings(max_examples=50)
@given(ts=st.lists(st.integers(1, 10**6), min_size=1, max_size=30), slope=st.sampled_from([1.0, 1e-6, 1e6]))
def test_the_vectorised_search_is_exact_elementwise(ts, slope):
    import numpy as np

    from privacct.accounting.rootfind import least_feasible_many

    t = np.array(ts, dtype=np.int64)
    lo, hi = np.zeros_like(t), np.full_like(t, 2 * 10**6)

    def gap(points, which):
        return slope * (t[which] - points).astype(float) + np.where(points < t[which], 0.5, 0.0)

    got = least_feasible_many(gap, lo, hi, gap(lo, np.arange(t.size)), gap(hi, np.arange(t.size)))
    assert np.array_equal(got, t)
