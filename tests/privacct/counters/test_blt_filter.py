"""privacct.counters.blt_filter: scipy.signal.lfilter's bytes without importing scipy.signal (issue 23 memory slice).

scipy.signal.lfilter stays the reference here (tests may import scipy); a Python loop of the direct-form-II-transposed
operations (the module docstring's order) checks that the order is the one documented.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.signal import lfilter

from privacct.counters import blt_filter
from privacct.counters.base import MAX_BLT_BUFFERS
from privacct.counters.blt import _blt_prefix_coefficients, blt_parameters, blt_polynomials


def _bits(x: np.ndarray) -> bytes:
    return np.ascontiguousarray(x, dtype=np.float64).tobytes()


def _random_buffers(rng: np.random.Generator, d: int) -> tuple[tuple[float, float], ...]:
    """d BLT buffers as the optimiser's range produces them: 1 - theta log-uniform in [1e-5, 1), omega log-uniform."""
    one_minus = np.exp(rng.uniform(np.log(1e-5), 0.0, d))
    return tuple((float(1.0 - a), float(np.exp(rng.uniform(np.log(1e-7), np.log(2.0))))) for a in one_minus)


def _df2t(b: np.ndarray, a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Direct form II transposed, scipy's C order: b, a divided by a[0]; y = Z0 + b0 x; Z_n = (Z_(n+1) + x b_(n+1)) -
    y a_(n+1); Z_last = x b_last - y a_last (Python floats: IEEE doubles, no fused operation)."""
    n = max(len(a), len(b))
    b = [float(v) / float(a[0]) for v in b] + [0.0] * (n - len(b))
    a = [float(v) / float(a[0]) for v in a] + [0.0] * (n - len(a))
    Z = [0.0] * (n - 1)
    y = np.empty(len(x))
    for k, xk in enumerate(map(float, x)):
        yk = Z[0] + b[0] * xk
        for i in range(n - 2):
            Z[i] = Z[i + 1] + xk * b[i + 1] - yk * a[i + 1]
        Z[n - 2] = xk * b[n - 1] - yk * a[n - 1]
        y[k] = yk
    return y


@pytest.mark.parametrize("d", range(1, MAX_BLT_BUFFERS + 1))
def test_blt_impulse_responses_match_lfilter_bit_for_bit(d):
    rng = np.random.default_rng(np.random.SeedSequence(23).spawn(MAX_BLT_BUFFERS)[d - 1])
    for _ in range(40):
        P, Q = blt_polynomials(_random_buffers(rng, d))
        T = int(rng.integers(1, 5000))
        imp = np.zeros(T)
        imp[0] = 1.0
        assert _bits(blt_filter.impulse_response(P, Q, T)) == _bits(lfilter(P, Q, imp))


@pytest.mark.parametrize("order", [1, 2, 3, 4, 6])
def test_general_stable_filters_and_inputs_match_lfilter(order):
    """Any stable a (roots of the reversed polynomial inside the unit disc), a[0] != 1, b of another length, random
    input (signed zeros and all): the same bytes as lfilter."""
    rng = np.random.default_rng(np.random.SeedSequence(230).spawn(7)[order])
    for _ in range(25):
        pair = 0.99 * rng.uniform(0.05, 1.0) * np.exp(1j * rng.uniform(0.0, np.pi))    # one complex pole pair
        poles = np.concatenate(([pair, pair.conjugate()], rng.uniform(-0.999, 0.999, order)))[:order] if order > 1 \
            else rng.uniform(-0.999, 0.999, 1)
        a = np.real(np.poly(poles)) * rng.uniform(0.5, 3.0)     # np.roots(a) = the poles: stable
        b = rng.normal(size=int(rng.integers(1, order + 3)))
        x = rng.normal(size=int(rng.integers(1, 3000)))
        x[rng.random(x.size) < 0.2] = -0.0
        assert _bits(blt_filter.linear_filter(b, a, x)) == _bits(lfilter(b, a, x))


def test_the_documented_operation_order():
    rng = np.random.default_rng(np.random.SeedSequence(231))
    for d in range(1, MAX_BLT_BUFFERS + 1):
        P, Q = blt_polynomials(_random_buffers(rng, d))
        x = rng.normal(size=300)
        assert _bits(blt_filter.linear_filter(P, Q, x)) == _bits(_df2t(P, Q, x))
        assert _bits(blt_filter.impulse_response(P, Q, 300)) == _bits(_df2t(P, Q, np.eye(1, 300)[0]))


@pytest.mark.parametrize("leaves", [19, 999, 9999])
def test_the_buffers_tight_produces(leaves):
    """The prefix coefficients of the optimiser's buffers at the learners' K (19: the benchmarks' warm-up; 9999: the
    K = 10^4 Gram counters) are lfilter's."""
    buffers = blt_parameters(leaves)
    P, Q = blt_polynomials(buffers)
    for T in (leaves, leaves + 1, 2 * leaves):
        imp = np.zeros(T)
        imp[0] = 1.0
        assert _bits(_blt_prefix_coefficients(buffers, T)) == _bits(np.cumsum(lfilter(P, Q, imp)))


def test_the_lfilter_fallback_gives_the_same_bytes(monkeypatch):
    rng = np.random.default_rng(np.random.SeedSequence(232))
    P, Q = blt_polynomials(_random_buffers(rng, 3))
    got = blt_filter.impulse_response(P, Q, 1000)
    monkeypatch.setattr(blt_filter, "_sigtools_linear_filter", lambda: None)
    assert _bits(blt_filter.impulse_response(P, Q, 1000)) == _bits(got)


def test_the_inputs_are_not_changed():
    b, a = np.array([2.0, 1.0, 0.5]), np.array([4.0, -1.0, 0.25])
    b0, a0 = b.copy(), a.copy()
    blt_filter.linear_filter(b, a, np.ones(10))
    assert _bits(b) == _bits(b0) and _bits(a) == _bits(a0)


def test_prefix_coefficients_do_not_import_scipy_signal():
    """The point of the module: a fresh process computing BLT's prefix coefficients never imports scipy.signal."""
    code = ("import sys; from privacct.counters.blt import _blt_prefix_coefficients as f; "
            "g = f(((0.9, 0.1), (0.5, 0.2)), 100); assert g.size == 100; "
            "print('scipy.signal' in sys.modules, 'scipy.signal._sigtools' in sys.modules); import scipy.signal; "
            "print(scipy.signal.lfilter([1.0], [1.0, -0.5], [1.0, 0.0, 0.0]).tolist())")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.splitlines()
    assert out == ["False False", "[1.0, 0.5, 0.25]"]    # and scipy.signal still imports and filters afterwards


@pytest.mark.parametrize("wrong", [lambda b, a, x, axis: np.zeros_like(x), lambda b, a, x: x])
def test_a_private_loop_that_changed_falls_back_to_lfilter(monkeypatch, wrong):
    """Another scipy whose private loop gives other bits or takes other arguments: the once-per-process check sees it
    and lfilter itself runs."""
    monkeypatch.setattr(blt_filter, "_sigtools_linear_filter", lambda: wrong)
    blt_filter._c_loop_agrees.cache_clear()
    try:
        b, a = np.array([0.4, 0.1]), np.array([1.0, -0.5, 0.06])
        x = np.linspace(-1.0, 2.0, 50)
        assert not blt_filter._c_loop_agrees()
        assert blt_filter.linear_filter(b, a, x).tobytes() == lfilter(b, a, x).tobytes()
    finally:
        blt_filter._c_loop_agrees.cache_clear()
