"""What an audit observes of a FactorizedCounter over user 1 (privacct.counters.observed,
docs/auditing.md#factorized-counters): the whitened releases of the Toeplitz strategies are the draws plus user 1's
addition weighted by column 1 of the declared R (computed here by a dense inversion of the declared L), tree-honaker's
nodes over user 1 are her addition plus the node draws, a batched leaf uses the learner's reported share, and a tapped
counter draws and releases exactly what an untapped one does."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privacct.counters.counter import FactorizedCounter
from privacct.counters.observed import whiten
from privacct.counters.registry import get_strategy
from privacct.mechanisms import draw, upper_triangle
from privacct.tap import tapping, user_contribution

K, B = 6, 3
SHAPES = {"gaussian": (2,), "laplace": (3,), "symmetric-gaussian-matrix": (2, 2)}


def _rngs(seed=7):
    return [np.random.default_rng([seed, b]) for b in range(B)]


def _additions(mechanism, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(K, B) + SHAPES[mechanism])
    if mechanism == "symmetric-gaussian-matrix":
        x = x + np.swapaxes(x, -1, -2)
    return x


def _declared_column(structure) -> np.ndarray:
    """Column 1 of R = L^{-1} A by a dense solve, L the declared release-noise matrix of the strategy's explicit
    factorization (built from its noise path, not from the R coefficients the observer reads)."""
    L, _ = get_strategy(structure.strategy).factorization(structure)
    A = np.tril(np.ones((K, K)))
    return np.linalg.solve(L, A)[:, 0]


def _run(strategy, mechanism, x, *, tapped=True, leaf_users=None, share=None):
    c_kwargs = dict(strategy=strategy, leaves=K, mechanism=mechanism, scale=0.7, rngs=_rngs(), group="g",
                    leaf_users=leaf_users)
    out = []
    if not tapped:
        c = FactorizedCounter(SHAPES[mechanism], **c_kwargs)
        return [c.add(v) for v in x], None, c
    with tapping() as tap:
        c = FactorizedCounter(SHAPES[mechanism], **c_kwargs)
        for t, v in enumerate(x, 1):
            if t == 1 and share is not None:
                user_contribution("g", a=share[0], b=share[1])
            out.append(c.add(v))
    return out, tap, c


@pytest.mark.parametrize("mechanism", list(SHAPES))
@pytest.mark.parametrize("strategy", ["sqrt-toeplitz", "blt"])
def test_whitened_releases_are_the_draws_plus_column_1_of_r_times_user_1(strategy, mechanism):
    x = _additions(mechanism)
    _, tap, c = _run(strategy, mechanism, x)
    r = _declared_column(c.structure)
    if strategy == "sqrt-toeplitz":   # C^2 = A: column 1 is binom(2j, j) / 4^j
        assert np.allclose(r, [math.comb(2 * j, j) / 4**j for j in range(K)], rtol=1e-12)
    rngs = _rngs()
    z = [draw(mechanism, rngs, SHAPES[mechanism], 0.7) for _ in range(K)]
    flat = (lambda v: upper_triangle(v).reshape(B, -1)) if mechanism == "symmetric-gaussian-matrix" \
        else (lambda v: np.asarray(v).reshape(B, -1))
    assert [rec.name for rec in tap.records] == [f"g {strategy} release {t} whitened" for t in range(1, K + 1)]
    assert not tap.unobserved
    for t, rec in enumerate(tap.records, 1):
        assert rec.scale == 0.7 and rec.mechanism == ("laplace" if mechanism == "laplace" else "gaussian")
        assert np.allclose(rec.contribution, r[t - 1] * flat(x[0]), rtol=1e-12, atol=1e-14)
        assert np.allclose(rec.values - rec.contribution, flat(z[t - 1]), rtol=0, atol=1e-9)


def test_whiten_is_the_inverse_of_the_declared_release_noise_matrix():
    from privacct.counters.strategies import Strategy, column_coefficients

    s = Strategy("blt").structure(K)
    L, _ = get_strategy("blt").factorization(s)
    e = np.random.default_rng(3).normal(size=(K, 4))
    assert np.allclose(whiten(e, column_coefficients(s, K)), np.linalg.solve(L, e), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_tree_honaker_records_its_nodes_over_user_1(mechanism):
    x = _additions(mechanism)
    _, tap, _ = _run("tree-honaker", mechanism, x)
    nodes = [(t - (1 << i) + 1, t) for t in range(1, K + 1) for i in range(((t & -t).bit_length() - 1) + 1)]
    rngs = _rngs()
    z = [draw(mechanism, rngs, SHAPES[mechanism], 0.7) for _ in nodes]
    over_1 = [(n, zz) for n, zz in zip(nodes, z, strict=True) if n[0] == 1]
    assert [rec.name for rec in tap.records] == [f"g tree-honaker node over users 1..{n[1]}" for n, _ in over_1]
    assert [n for n, _ in over_1] == [(1, 1), (1, 2), (1, 4)]
    for rec, (_, zz) in zip(tap.records, over_1, strict=True):
        assert np.array_equal(rec.contribution, x[0].reshape(B, -1))
        assert np.allclose(rec.values, (x[0] + zz).reshape(B, -1), rtol=0, atol=1e-12)


@pytest.mark.parametrize("strategy", ["tree-honaker", "blt"])
def test_a_batched_leaf_is_observed_through_the_reported_share(strategy):
    leaves = [(1, 3)] + [(2 * t, 2 * t + 1) for t in range(2, K + 1)]
    x = _additions("gaussian")
    a, b = np.full((B, 2), 0.25), np.full((B, 2), -0.5)
    _, tap, c = _run(strategy, "gaussian", x, leaf_users=leaves, share=(a, b))
    assert tap.records and not tap.unobserved
    w = _declared_column(c.structure) if strategy == "blt" else np.ones(K)
    for rec in tap.records:
        t = int(rec.name.split()[-2]) if strategy == "blt" else 1
        assert np.allclose(rec.mean_a, w[t - 1] * a) and np.allclose(rec.mean_b, w[t - 1] * b)
        assert np.allclose(rec.contribution, w[t - 1] * a)   # canary A's run: her share under A
    _, tap, _ = _run(strategy, "gaussian", x, leaf_users=leaves)      # no share reported: named, nothing recorded
    assert not tap.records and len(tap.unobserved) == 1 and "share of the leaf is unknown" in tap.unobserved[0].reason


@pytest.mark.parametrize("strategy", ["tree", "tree-honaker", "sqrt-toeplitz", "blt"])
def test_a_tapped_counter_releases_what_an_untapped_one_does(strategy):
    x = _additions("symmetric-gaussian-matrix")
    plain, _, _ = _run(strategy, "symmetric-gaussian-matrix", x, tapped=False)
    tapped, tap, _ = _run(strategy, "symmetric-gaussian-matrix", x)
    assert all(np.array_equal(p, q) for p, q in zip(plain, tapped, strict=True))
    assert tap.records and not tap.unobserved


# ---------------------------------------------------------------------------------------------- one-run audits
def _one_run(strategy, mechanism, canaries=(1, 5), leaves=8):
    from privacct.tap import AuditTap, canary_contribution

    shape = SHAPES[mechanism]
    x = np.random.default_rng(2).normal(size=(leaves, 1) + shape)
    with tapping(AuditTap(plan=frozenset(canaries))) as tap:
        c = FactorizedCounter(shape, strategy=strategy, leaves=leaves, mechanism=mechanism, scale=0.7,
                              rngs=[np.random.default_rng(11)], group="g")
        out = []
        for t in range(1, leaves + 1):
            if t in canaries:
                canary_contribution(t, "g", a=x[t - 1], b=-x[t - 1])
            out.append(c.add(x[t - 1]))
    return tap, c, x, out


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_one_run_records_the_tree_honaker_nodes_holding_one_canary(mechanism):
    tap, _, x, _ = _one_run("tree-honaker", mechanism)
    nodes = [(t - (1 << i) + 1, t) for t in range(1, 9) for i in range(((t & -t).bit_length() - 1) + 1)]
    rng = [np.random.default_rng(11)]
    z = {n: draw(mechanism, rng, SHAPES[mechanism], 0.7) for n in nodes}
    one = [n for n in nodes if sum(n[0] <= u <= n[1] for u in (1, 5)) == 1]
    assert [(r.user, r.name) for r in tap.canary_records] == \
        [(1 if n[0] <= 1 else 5, f"g tree-honaker node over users {n[0]}..{n[1]} of user {1 if n[0] <= 1 else 5}")
         for n in one]
    assert (1, 8) not in one and (5, 8) in one
    for r, n in zip(tap.canary_records, one, strict=True):
        assert np.allclose(r.values, x[r.user - 1] + z[n], rtol=0, atol=1e-12)
        assert np.array_equal(r.mean_a, x[r.user - 1].reshape(1, -1)) and np.array_equal(r.mean_b, -r.mean_a)


@pytest.mark.parametrize("strategy", ["sqrt-toeplitz", "blt"])
def test_one_run_records_a_gaussian_toeplitz_counter_by_differences_at_the_canaries_leaves(strategy):
    tap, c, x, out = _one_run(strategy, "symmetric-gaussian-matrix")
    L, _ = get_strategy(strategy).factorization(c.structure)
    l = L[:, 0]
    rng = [np.random.default_rng(11)]
    z = np.stack([draw("symmetric-gaussian-matrix", rng, (2, 2), 0.7)[0] for _ in range(8)])
    noise = np.einsum("ts,sij->tij", L, z)          # (L z)_t, the declared release noise
    assert [r.user for r in tap.canary_records] == [1, 5] and not tap.unobserved
    for r in tap.canary_records:
        t = r.user
        diff = noise[t - 1] - (noise[t - 2] if t > 1 else 0.0)
        assert np.allclose(r.values, upper_triangle(x[t - 1] + diff).reshape(1, -1), rtol=0, atol=1e-9)
        assert r.scale == pytest.approx(0.7 * np.sqrt(np.sum(np.diff(l[:t], prepend=0.0) ** 2)), rel=1e-12)
    assert np.allclose(out[4] - out[3], x[4] + noise[4] - noise[3], atol=1e-9)


@pytest.mark.parametrize("strategy", ["sqrt-toeplitz", "blt"])
def test_one_run_records_a_laplace_toeplitz_difference_in_gaussian_form_at_its_declared_std(strategy):
    """No exact likelihood (the difference of two releases is not Laplace noise): recorded with the label
    GAUSSIAN_FORM and scale sqrt(2) b ||dl|| (the declared per-coordinate std), read only by output-only scores."""
    from privacct.counters.observed import GAUSSIAN_FORM

    tap, c, x, out = _one_run(strategy, "laplace")
    L, _ = get_strategy(strategy).factorization(c.structure)
    l = L[:, 0]
    assert [r.user for r in tap.canary_records] == [1, 5] and not tap.unobserved
    for r in tap.canary_records:
        t = r.user
        assert r.mechanism == GAUSSIAN_FORM
        assert r.scale == pytest.approx(0.7 * np.sqrt(2.0) * np.sqrt(np.sum(np.diff(l[:t], prepend=0.0) ** 2)), rel=1e-12)
        want = out[t - 1] - (out[t - 2] if t > 1 else 0.0)
        assert np.allclose(r.values, want.reshape(1, -1), rtol=0, atol=1e-12)


def _window_reference(l, t, S):
    """Per-coordinate std of mean(n[t..t+S-1]) - mean(n[t-S..t-1]) for n_s = sum_(j <= s) l_(s-j) z_j (the loop of
    benchmarks/bench_counter_noise_path.py before this module computed it)."""
    coef = np.zeros(t + S - 1)
    for s in range(max(1, t - S), t + S):
        w = (1.0 if s >= t else -1.0) / (S if s >= t else min(S, t - 1))
        coef[:s] += w * l[:s][::-1]
    return float(np.linalg.norm(coef))


def test_window_noise_std_is_the_norm_of_the_window_weights_through_l():
    from privacct.counters.observed import window_noise_std

    l = np.random.default_rng(0).uniform(0.1, 1.0, size=64)
    for t, S in ((9, 8), (17, 8), (33, 16), (5, 4)):
        assert window_noise_std(l, (t - S, t), (t, t + S)) == pytest.approx(_window_reference(l, t, S), rel=1e-12)
    assert window_noise_std(l, (1, 1), (1, 9)) == pytest.approx(np.linalg.norm(
        [np.sum(l[:9 - j]) / 8 for j in range(1, 9)]), rel=1e-12)      # the first canary at leaf 1: no before-window


@pytest.mark.parametrize("mechanism", ["gaussian", "symmetric-gaussian-matrix", "laplace"])
def test_one_run_window_means_are_read_from_the_releases_and_carry_the_declared_std(mechanism):
    """Canaries at leaves 1, 5, 9, 13 of a BLT counter (K = 20): canary t's W is the mean of the releases minus the
    non-canary users' exact prefix sums over [t, t + 4) minus that over [t - 4, t) (empty for t = 1), which equals
    her addition plus the matching weighted sum of the declared release noise; the last window closes at 16."""
    from privacct.counters.observed import GAUSSIAN_FORM, window_noise_std, window_records

    canaries, K = (1, 5, 9, 13), 20
    tap, c, x, out = _one_run("blt", mechanism, canaries=canaries, leaves=K)
    L, _ = get_strategy("blt").factorization(c.structure)
    recs = window_records(tap)
    assert [r.user for r in recs] == list(canaries) and not tap.unobserved
    y = np.stack(out)[:, 0]                            # (K, *shape)
    xs = x[:, 0]
    non = np.cumsum(np.where(np.isin(np.arange(1, K + 1), canaries).reshape((-1,) + (1,) * (xs.ndim - 1)), 0.0, xs),
                    axis=0)
    e = y - non                                        # what the other users compute from the releases
    for r in recs:
        t = r.user
        before = e[max(t - 5, 0):t - 1].mean(axis=0) if t > 1 else 0.0
        w = e[t - 1:t + 3].mean(axis=0) - before
        flat = (lambda v: v[np.triu_indices(2)]) if mechanism == "symmetric-gaussian-matrix" else np.ravel
        assert np.allclose(r.values[0], flat(w), rtol=0, atol=1e-9)
        sd = 0.7 * window_noise_std(L[:, 0], (max(t - 4, 1), t), (t, t + 4))
        assert r.scale == pytest.approx(sd * (np.sqrt(2.0) if mechanism == "laplace" else 1.0), rel=1e-12)
        assert r.mechanism == (GAUSSIAN_FORM if mechanism == "laplace" else "gaussian")
        assert np.allclose(r.mean_a[0], flat(xs[t - 1])) and np.allclose(r.mean_b[0], -flat(xs[t - 1]))
        # W = her addition + the declared noise's window sum: noise within 8 declared std of it
        assert np.all(np.abs(r.values[0] - r.mean_a[0]) < 8 * r.scale)
    assert not tap.canary_records or all("window" not in r.name for r in tap.canary_records)


def test_no_window_means_when_a_canary_shares_her_leaf():
    from privacct.counters.observed import window_records
    from privacct.tap import AuditTap, canary_contribution

    x = np.random.default_rng(2).normal(size=(8, 1, 2))
    with tapping(AuditTap(plan=frozenset((1, 5)))) as tap:
        c = FactorizedCounter((2,), strategy="blt", leaves=4, mechanism="gaussian", scale=0.7,
                              rngs=[np.random.default_rng(11)], group="g", leaf_users=[(1, 1), (2, 3), (4, 5), (6, 8)])
        for t in range(1, 5):
            canary_contribution(5, "g", a=x[4], b=-x[4])
            c.add(x[t - 1])
    assert not window_records(tap) and tap.unobserved
