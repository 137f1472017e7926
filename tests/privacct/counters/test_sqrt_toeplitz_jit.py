"""The compiled sqrt-toeplitz mixing step (privacct/counters/sqrt_toeplitz_jit.py): the same bytes as the cumsum it
replaces (docs/performance.md#same-bytes-the-rule-every-speed-up-follows), on values where a different order, a fused
multiply-add or a 0.0 start would show."""

import numpy as np
import pytest

from privacct.counters import sqrt_toeplitz
from privacct.counters.counter import FactorizedCounter
from privacct.counters.sqrt_toeplitz import _combine, _mix, toeplitz_coefficients
from privacct.rng import spawn_generators


def _nasty(rng, shape):
    """Normals over 600 decades with -0.0, inf, nan and a subnormal among them."""
    x = rng.normal(size=shape) * 10.0 ** rng.integers(-300, 300, size=shape)
    x.flat[::7] = -0.0
    if x.size > 5:
        x.flat[3], x.flat[4], x.flat[5] = np.inf, 5e-324, np.nan
    return x


@pytest.mark.parametrize("shape", [(1, 1), (3, 4), (2, 3, 3), (1, 2, 6, 2, 6)])
def test_compiled_mix_is_the_cumsum_byte_for_byte(shape):
    rng = np.random.default_rng(7)
    K = 70
    coef = toeplitz_coefficients(K)
    zs = _nasty(rng, (K,) + shape)
    for t in (1, 2, 3, 17, K):
        got = _mix(coef, t, zs)
        want = _combine(coef[:t][::-1], zs[:t])
        assert got.shape == want.shape and got.tobytes() == want.tobytes()


def _fma(a: float, b: float, c: float) -> float:
    """a * b + c rounded once (exact rational arithmetic)."""
    from fractions import Fraction

    return float(Fraction(a) * Fraction(b) + Fraction(c))


def test_compiled_mix_rounds_each_product_before_the_sum():
    """Values where a fused multiply-add differs from the rounded product then the sum (c * r inexact)."""
    rng = np.random.default_rng(1)
    coef = 1.0 + rng.random(200) * 2.0 ** -20
    zs = (1.0 + rng.random((200, 1, 16))) * (1.0 + 2.0 ** -30)
    zs[1::2] *= -1.0
    fused = 0
    for t in (2, 3, 200):
        got, want = _mix(coef, t, zs), _combine(coef[:t][::-1], zs[:t])
        assert got.tobytes() == want.tobytes()
        for e in range(16):
            acc = float(coef[t - 1] * zs[0, 0, e])
            for i in range(1, t):
                acc = _fma(float(coef[t - 1 - i]), float(zs[i, 0, e]), acc)
            fused += acc != want[0, e]
    assert fused   # the data tell a fused multiply-add apart


def test_a_negative_zero_sum_stays_negative_zero():
    zs = np.full((5, 1, 3), -0.0)
    got = _mix(toeplitz_coefficients(5), 5, zs)
    assert np.all(np.signbit(got)) and got.tobytes() == _combine(toeplitz_coefficients(5)[::-1], zs).tobytes()


def test_counters_run_the_compiled_step_and_a_patched_recursion_the_cumsum(monkeypatch):
    calls = []
    real = sqrt_toeplitz._combine
    monkeypatch.setattr(sqrt_toeplitz, "_combine", lambda c, r: calls.append(1) or real(c, r))
    c = FactorizedCounter(3, strategy="sqrt-toeplitz", leaves=6, mechanism="gaussian", scale=1.0,
                          rngs=spawn_generators(0, 2))
    for _ in range(6):
        c.add(np.ones((2, 3)))
    assert not calls                                  # float64 coefficients and history: compiled
    c2 = FactorizedCounter(3, strategy="sqrt-toeplitz", leaves=6, mechanism="gaussian", scale=1.0,
                           rngs=spawn_generators(0, 2))
    c2._coef = c2._coef.astype(np.float32)            # not float64: the numpy step, unchanged
    c2.add(np.ones((2, 3)))
    assert calls
