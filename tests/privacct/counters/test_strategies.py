"""Derived figures of every strategy against independent matrix computations (docs/counters.md)."""

import math

import numpy as np
import pytest
from scipy.linalg import solve_triangular, toeplitz

from privacct.counters.strategies import (Strategy, blt_parameters, blt_polynomials, column_coefficients, column_norm,
                                          prefix_variances, toeplitz_coefficients, worst_prefix_variance)
from privacct.errors import PrivacctError
from privacct.log import Structure


def _lower_toeplitz(col):
    return np.tril(toeplitz(col))


def _dyadic_nodes(K):
    """Every dyadic interval [j 2^i + 1, (j + 1) 2^i] inside [1, K] as (first, last)."""
    out = []
    i = 0
    while (1 << i) <= K:
        out += [(j * (1 << i) + 1, (j + 1) << i) for j in range(K >> i)]
        i += 1
    return out


@pytest.mark.parametrize("K", [1, 2, 7, 16, 33])
def test_sqrt_toeplitz_squares_to_the_prefix_matrix(K):
    C = _lower_toeplitz(toeplitz_coefficients(K))
    assert np.allclose(C @ C, np.tril(np.ones((K, K))), atol=1e-12)
    s = Structure.factorized("sqrt-toeplitz", K)
    assert column_norm(s, "l2") >= np.linalg.norm(C[:, 0]) and column_norm(s, "l2") <= np.linalg.norm(C[:, 0]) * (1 + 1e-9)
    assert column_norm(s, "l1") >= np.abs(C[:, 0]).sum()
    assert np.allclose(prefix_variances(s), (C * C).sum(axis=1))            # row norms of L = C


@pytest.mark.parametrize("K", [1, 5, 16, 100])
def test_blt_factorization_norms_and_variances(K):
    buffers = ((0.9, 0.3), (0.5, 0.1))
    s = Structure.factorized("blt", K, {"buffers": [list(b) for b in buffers]})
    r = np.ones(K)
    k = np.arange(1, K)
    r[1:] = sum(w * t ** (k - 1) for t, w in buffers)
    C = _lower_toeplitz(r)
    assert np.array_equal(column_coefficients(s), r) or np.allclose(column_coefficients(s), r, rtol=1e-14)
    L = solve_triangular(C, np.tril(np.ones((K, K))).T, lower=True, trans="T").T    # L = A C^{-1}
    assert np.allclose(L @ C, np.tril(np.ones((K, K))), atol=1e-10)
    assert np.allclose(prefix_variances(s), (L * L).sum(axis=1), rtol=1e-10)
    assert math.isclose(worst_prefix_variance(s), (L * L).sum(axis=1).max(), rel_tol=1e-10)
    assert np.linalg.norm(r) <= column_norm(s, "l2") <= np.linalg.norm(r) * (1 + 1e-5)
    assert r.sum() <= column_norm(s, "l1") <= r.sum() * (1 + 1e-5)
    P, Q = blt_polynomials(buffers)                      # C(x) = Q(x) / P(x)
    series = np.zeros(K)
    series[0] = 1.0
    from scipy.signal import lfilter
    assert np.allclose(lfilter(Q, P, series), r)


@pytest.mark.parametrize("K", [1, 2, 3, 8, 13, 32])
def test_tree_and_honaker_variances_are_least_squares_over_the_nodes(K):
    nodes = _dyadic_nodes(K)
    tree = Structure.factorized("tree", K)
    hon = Structure.factorized("tree-honaker", K)
    for t in range(1, K + 1):
        avail = [(a, b) for a, b in nodes if b <= t]
        M = np.array([[1.0 if a <= s <= b else 0.0 for s in range(1, t + 1)] for a, b in avail])
        cov = np.linalg.inv(M.T @ M)                      # BLUE of the leaves from every complete node
        assert math.isclose(prefix_variances(hon)[t - 1], cov.sum(), rel_tol=1e-9)
        assert prefix_variances(tree)[t - 1] == bin(t).count("1")
    M = np.array([[1.0 if a <= s <= b else 0.0 for s in range(1, K + 1)] for a, b in nodes])
    assert column_norm(tree, "l2") ** 2 == pytest.approx(M.sum(axis=0).max())   # user 1 is in D nodes
    assert column_norm(tree, "l1") == M.sum(axis=0).max() == K.bit_length()
    assert worst_prefix_variance(hon) == pytest.approx(prefix_variances(hon).max())
    assert worst_prefix_variance(tree) == prefix_variances(tree).max()


def test_column_one_dominates_every_column():
    K = 40
    for s in (Structure.factorized("sqrt-toeplitz", K), Strategy("blt", ((0.8, 0.2),)).structure(K)):
        C = _lower_toeplitz(column_coefficients(s))
        assert np.argmax(np.linalg.norm(C, axis=0)) == 0


def test_toeplitz_bound_beyond_the_exact_range_is_an_upper_bound():
    from privacct.counters import sqrt_toeplitz as S

    n = 2**12
    exact = math.fsum((toeplitz_coefficients(4 * n) ** 2).tolist())
    old = S.TOEPLITZ_EXACT
    try:
        S.TOEPLITZ_EXACT = n
        S._toeplitz_sums.cache_clear()
        s2, s1 = S._toeplitz_sums(4 * n)
    finally:
        S.TOEPLITZ_EXACT = old
        S._toeplitz_sums.cache_clear()
    assert exact <= s2 <= exact * 1.001
    assert math.fsum(toeplitz_coefficients(4 * n).tolist()) <= s1


def test_best_strategy_beats_the_tree_by_the_derived_margin():
    K = 10_000
    loss = {}
    for name in ("tree", "tree-honaker", "sqrt-toeplitz", "blt"):
        s = Strategy(name).structure(K)
        loss[name] = column_norm(s, "l2") ** 2 * worst_prefix_variance(s)
    assert loss["tree"] == pytest.approx(14 * 13, rel=1e-9)
    assert loss["tree"] / min(loss.values()) >= 4.0
    assert loss["tree-honaker"] < loss["tree"]


def test_bad_strategies_are_refused_with_their_name():
    with pytest.raises(PrivacctError, match="strategy must be one of"):
        Strategy("fancy")
    with pytest.raises(PrivacctError, match="takes no buffers"):
        Strategy("tree", ((0.5, 1.0),))
    with pytest.raises(PrivacctError, match=r"theta must be in \(0, 1\)"):
        Strategy("blt", ((1.0, 1.0),))
    with pytest.raises(PrivacctError, match="not Toeplitz"):
        column_coefficients(Structure.factorized("tree", 4))


def test_blt_parameters_are_deterministic_and_stable(monkeypatch):
    monkeypatch.setenv("PRIVACCT_BLT_CACHE", "0")   # the optimiser itself, twice (not its disk cache: blt_cache)
    blt_parameters.cache_clear()
    a = blt_parameters(500)
    blt_parameters.cache_clear()
    assert blt_parameters(500) == a
    assert all(0 < t < 1 and w > 0 for t, w in a)


# --------------------------------------------------------------------------- executed_encoder: R = L^{-1} A
def _exact_encoder(l):
    """Column 1 of L^{-1} A in exact rational arithmetic (l's floats taken exactly)."""
    from fractions import Fraction

    lf = [Fraction(float(v)) for v in l]
    r = []
    for n in range(len(lf)):
        r.append((1 - sum(lf[k] * r[n - k] for k in range(1, n + 1))) / lf[0])
    return r


@pytest.mark.parametrize("seed", range(4))
def test_executed_encoder_is_the_column_of_L_inverse_A_and_never_below_it(seed):
    from fractions import Fraction

    from privacct.counters.strategies import executed_encoder

    K = 24
    rng = np.random.default_rng(seed)
    l = np.cumsum(rng.uniform(-0.3, 1.0, size=K)) / np.arange(1, K + 1) + np.eye(1, K)[0]   # a generic, l_0 != 0
    L = _lower_toeplitz(l)
    R = solve_triangular(L, np.tril(np.ones((K, K))), lower=True)              # L R = A (independent solver)
    r = executed_encoder(l)
    np.testing.assert_allclose(r, R[:, 0], rtol=1e-9, atol=1e-12 * np.linalg.norm(R[:, 0]))
    assert np.allclose(R, _lower_toeplitz(R[:, 0]))                            # R is Toeplitz: column 1 is all of it
    exact = _exact_encoder(l)
    l1 = sum(abs(v) for v in exact)
    l2sq = sum(v * v for v in exact)
    assert Fraction(float(np.abs(r).sum())) >= l1 and Fraction(float(np.sum(r * r))) >= l2sq   # upper bounds
    assert float(np.abs(r).sum()) <= float(l1) * (1 + 1e-9)


def test_executed_encoder_of_the_declared_noise_is_the_declared_encoder():
    from privacct.counters.strategies import executed_encoder

    K = 50
    c = toeplitz_coefficients(K)                            # sqrt-toeplitz: L = C, so L^{-1} A = C again
    np.testing.assert_allclose(executed_encoder(c), c, rtol=1e-12)
    buffers = ((0.9, 0.3), (0.5, 0.1))
    P, Q = blt_polynomials(buffers)
    from scipy.signal import lfilter
    l = np.cumsum(lfilter(P, Q, np.eye(1, K)[0]))           # blt: L = A C^{-1}, so L^{-1} A = C
    s = Structure.factorized("blt", K, {"buffers": [list(b) for b in buffers]})
    np.testing.assert_allclose(executed_encoder(l), column_coefficients(s), rtol=1e-11)


def test_executed_encoder_refuses_what_has_no_finite_privacy():
    from privacct.counters.strategies import executed_encoder

    with pytest.raises(PrivacctError, match="l_0 = 0"):
        executed_encoder([0.0, 1.0, 0.5])
    with pytest.raises(PrivacctError, match="finite numbers"):
        executed_encoder([1.0, float("nan")])
    with pytest.raises(PrivacctError, match="finite numbers"):
        executed_encoder([])
    with pytest.raises(PrivacctError, match="overflows"):
        executed_encoder([1e-310, 1.0, 1.0])
