"""The ledger sees the executed noise path (issue 21 item 3; docs/counters.md#ledger).

A Toeplitz counter releases A x + L_exec z; its privacy is that of R_exec x + z with R_exec = L_exec^{-1} A. The
counter probes its own noise-mixing step with a unit impulse and records R_exec's rows as ledger weights. Checked
here: a correct counter records the declared weights (to the solve's rounding) and releases the same bytes as before
the probe existed; a recursion altered after construction, or a subclass of the mixing step, is recorded as it runs
and flagged by check_ledger; a noise path without z_1 in step 1's release is refused.
"""

import hashlib

import numpy as np
import pytest
from scipy.signal import lfilter

from privacct.counters.counter import FactorizedCounter
from privacct.counters.strategies import STRATEGIES, Strategy, blt_polynomials, column_coefficients, column_norm
from privacct.errors import PrivacctError
from privacct.ledger import Ledger, check_ledger
from privacct.log import MechanismLog, ReleaseGroup, Sensitivity
from privacct.rng import spawn_generators

TOEPLITZ = ("sqrt-toeplitz", "blt")
# the a-posteriori bound on the solve's rounding raises the weights by about 2.7e-10 relative at K = 10^4 (less below)
RTOL = 1e-9


def _counter(strategy, K, *, mechanism="gaussian", ledger=None, cls=FactorizedCounter, shape=1, seed=1):
    return cls(shape, strategy=strategy, leaves=K, mechanism=mechanism, scale=1.0, rngs=spawn_generators(seed, 1),
               ledger=ledger, group=None if ledger is None else "g")


def _run(c, steps=None):
    for _ in range(c.leaves if steps is None else steps):
        c.add(np.ones((1,) + c.shape))
    return c


def _check(c, ledger, mechanism="gaussian"):
    norm = "l1" if mechanism == "laplace" else "l2"
    log = MechanismLog("t", "joint", (ReleaseGroup("g", mechanism, 1.0, Sensitivity(norm, 1.0), c.structure),))
    return check_ledger(log, ledger, delta=1e-6)


# --------------------------------------------------------------------------- a correct counter: declared = executed
@pytest.mark.parametrize("K", [1, 2, 7, 100, 1000, 3001, 10_000])
@pytest.mark.parametrize("strategy", TOEPLITZ)
def test_executed_coefficients_equal_the_declared_ones(strategy, K):
    c = _counter(strategy, K)
    declared = column_coefficients(c.structure)
    executed = c.executed_coefficients()
    assert executed.shape == (K,) and np.all(np.isfinite(executed))
    # elementwise to the column's scale (BLT tails underflow: relative error per entry is meaningless there)
    assert np.max(np.abs(executed - declared)) <= RTOL * np.linalg.norm(declared)
    for p in (1, 2):
        got, want = np.linalg.norm(executed, p), np.linalg.norm(declared, p)
        assert want * (1 - 1e-12) <= got <= want * (1 + RTOL)            # raised by the solve's bound, never below
        assert got <= column_norm(c.structure, f"l{p}") * (1 + RTOL)      # within the declared multiplier


@pytest.mark.parametrize("K", [1, 2, 7, 22, 37, 100, 1000])
@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_correct_counter_passes_the_ledger_check_for_every_strategy(strategy, mechanism, K):
    ledger = Ledger()
    c = _run(_counter(strategy, K, mechanism=mechanism, ledger=ledger))
    check = _check(c, ledger, mechanism)
    assert check.ok and not check.shape_problems
    assert check.declared_epsilon * (1 - 1e-6) <= check.executed_epsilon <= check.declared_epsilon * (1 + RTOL)
    if strategy in TOEPLITZ:   # the ledger holds the executed weights: user 1's norm is ||R_exec e_1||
        p = 1 if mechanism == "laplace" else 2
        user1 = ledger.per_user_norms("g", mechanism, 1.0)[0]
        assert user1 == pytest.approx(np.linalg.norm(c.executed_coefficients(), p), rel=1e-12)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_correct_counter_passes_at_ten_thousand_steps(strategy):
    ledger = Ledger()
    c = _run(_counter(strategy, 10_000, ledger=ledger))
    check = _check(c, ledger)
    assert check.ok and check.executed_epsilon <= check.declared_epsilon * (1 + RTOL)
    assert check.executed_epsilon == pytest.approx(check.declared_epsilon, rel=1e-6)


# pre-probe digests: sha256[:16] of the 23 releases of a 3-seed counter (seeds 2024, x ~ N(0, 1) from seed 9),
# written with the code before the probe existed (with and without a ledger: the same bytes)
PINS = {
    ("sqrt-toeplitz", "gaussian"): "c80294dcc67447a7", ("sqrt-toeplitz", "laplace"): "a2e5215ac26b6942",
    ("sqrt-toeplitz", "symmetric-gaussian-matrix"): "b805f26abe8fe9bd",
    ("blt", "gaussian"): "91c1d692d7130ae4", ("blt", "laplace"): "3ab221c3c3f044f2",
    ("blt", "symmetric-gaussian-matrix"): "25e757d38e0ca76e",
    ("tree", "gaussian"): "d349c21b53333eef", ("tree", "laplace"): "a9888fa6f49d16bc",
    ("tree", "symmetric-gaussian-matrix"): "589897136f45d1bf",
    ("tree-honaker", "gaussian"): "6283f63e71ac76db", ("tree-honaker", "laplace"): "69b2be3b72348826",
    ("tree-honaker", "symmetric-gaussian-matrix"): "2b88ef1b711c1c6e",
}


@pytest.mark.parametrize("with_ledger", [False, True])
@pytest.mark.parametrize("strategy,mechanism", sorted(PINS))
def test_releases_are_byte_identical_to_before_the_probe(strategy, mechanism, with_ledger):
    K, B = 23, 3
    shape = (2, 2) if mechanism == "symmetric-gaussian-matrix" else (2,)
    c = FactorizedCounter(shape, strategy=strategy, leaves=K, mechanism=mechanism, scale=0.7,
                          rngs=spawn_generators(2024, B), ledger=Ledger() if with_ledger else None,
                          group="g" if with_ledger else None)
    xs = np.random.default_rng(9).normal(size=(K, B) + shape)
    if mechanism == "symmetric-gaussian-matrix":
        xs = xs + np.swapaxes(xs, -1, -2)
    h = hashlib.sha256()
    for t in range(K):
        h.update(np.ascontiguousarray(c.add(xs[t])).tobytes())
    assert h.hexdigest()[:16] == PINS[(strategy, mechanism)]


@pytest.mark.parametrize("strategy", TOEPLITZ)
def test_the_probe_draws_nothing_records_nothing_and_leaves_the_state_alone(strategy):
    ledger = Ledger()
    c = _run(_counter(strategy, 12, ledger=ledger, shape=3), steps=5)
    before = (len(ledger), c.rngs[0].bit_generator.state, c.noisy_sum().copy())
    l = c.impulse_response()
    assert (len(ledger), c.rngs[0].bit_generator.state) == before[:2]
    assert np.array_equal(c.noisy_sum(), before[2])
    # l is column 1 of L: sqrt-toeplitz L = C; blt L = A C^{-1}, the cumulative sums of P/Q's impulse response
    if strategy == "sqrt-toeplitz":
        assert np.array_equal(l, column_coefficients(c.structure))
    else:
        P, Q = blt_polynomials(c.structure.buffers)
        np.testing.assert_allclose(l, np.cumsum(lfilter(P, Q, np.eye(1, 12)[0])), rtol=1e-12)


# --------------------------------------------------------------------------- a changed noise path is seen
def _blt_multiplier_after(factor, K=100):
    """(declared multiplier, executed multiplier, check) of a K-step default BLT counter whose Q runs x factor."""
    ledger = Ledger()
    c = _counter("blt", K, ledger=ledger)
    c._Q = [factor * q for q in c._Q]             # altered after construction, before the first draw
    _run(c)
    return column_norm(c.structure, "l2"), float(ledger.per_user_norms("g", "gaussian", 1.0).max()), _check(c, ledger), c


@pytest.mark.parametrize("factor,at_least", [(0.5, 10.0), (0.0, 20.0)])
def test_halved_or_zeroed_q_is_recorded_as_it_runs_and_flagged(factor, at_least):
    declared, executed, check, c = _blt_multiplier_after(factor)
    # issue 21: at K = 100 the multiplier goes from 1.59 (declared) to 20.9 (Q halved) and 40.8 (Q zeroed)
    assert declared == pytest.approx(1.59, abs=0.01)
    assert executed > at_least * declared
    assert not check.ok and check.executed_epsilon > 10 * check.declared_epsilon
    # independently of the probe: R_exec(x) = Q_run(x) / P(x) (docs/counters.md#ledger), its first column by lfilter
    P, Q = blt_polynomials(c.structure.buffers)
    Q_run = np.concatenate(([1.0], factor * Q[1:]))
    r = lfilter(Q_run, P, np.eye(1, 100)[0])
    assert executed == pytest.approx(np.linalg.norm(r), rel=1e-9)


class _QuarterNoise(FactorizedCounter):
    """A subclass whose mixing step lets only a quarter of each draw into the release (L_exec = L / 4)."""

    def _mix_noise(self, st, t, z):
        super()._mix_noise(st, t, 0.25 * z)


@pytest.mark.parametrize("strategy", TOEPLITZ)
def test_a_subclass_overriding_the_mixing_step_is_flagged(strategy):
    ledger = Ledger()
    c = _run(_counter(strategy, 40, ledger=ledger, cls=_QuarterNoise))
    user1 = ledger.per_user_norms("g", "gaussian", 1.0)[0]
    assert user1 == pytest.approx(4.0 * np.linalg.norm(column_coefficients(c.structure)), rel=RTOL)
    check = _check(c, ledger)
    assert not check.ok and check.executed_epsilon > 3 * check.declared_epsilon


class _LateNoise(FactorizedCounter):
    """A subclass whose release at step t mixes z_(t-1): step 1's release holds no noise (l_0 = 0)."""

    def _mix_noise(self, st, t, z):
        late = getattr(st, "_late", np.zeros_like(z))
        st._late = z.copy()
        super()._mix_noise(st, t, late)


@pytest.mark.parametrize("strategy", TOEPLITZ)
def test_a_noise_path_without_the_first_draw_is_refused(strategy):
    ledger = Ledger()
    c = _counter(strategy, 8, ledger=ledger, cls=_LateNoise)
    assert c.impulse_response()[0] == 0.0
    for _ in range(2):                          # refused every time, and nothing moves: no exact sum left to release
        with pytest.raises(PrivacctError, match="l_0 = 0"):
            c.add(np.ones((1, 1)))
        assert c.steps == 0 and len(ledger) == 0 and not np.any(c.exact_sum())


def test_a_recursion_changed_after_the_first_draw_is_refused():
    ledger = Ledger()
    c = _run(_counter("blt", 10, ledger=ledger), steps=3)
    released = c.noisy_sum().copy()
    c._Q = [0.5 * q for q in c._Q]
    with pytest.raises(PrivacctError, match="changed after its first draw"):
        c.add(np.ones((1, 1)))
    assert c.steps == 3 and len(ledger) == 3 and np.array_equal(c.noisy_sum(), released)


def test_without_a_ledger_nothing_is_probed():
    c = _run(_counter(Strategy("blt", ((0.9, 0.2),)), 6), steps=2)
    assert c._executed is None
    with pytest.raises(PrivacctError, match="no Toeplitz noise path"):
        _counter("tree", 4).impulse_response()
