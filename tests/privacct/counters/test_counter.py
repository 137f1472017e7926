"""FactorizedCounter: unbiased prefix estimates whose empirical variance is the derived one, for every
strategy (statistical checks at fixed seeds), batched over seeds, streaming state, ledger records."""

import math

import numpy as np
import pytest

from privacct.counters.counter import FactorizedCounter
from privacct.counters.strategies import STRATEGIES, Strategy, prefix_variances
from privacct.errors import PrivacctError
from privacct.ledger import Ledger, check_ledger
from privacct.log import MechanismLog, ReleaseGroup, Sensitivity
from privacct.rng import spawn_generators

TRIALS = 20_000


def _errors(strategy, mechanism, K, trials, seed):
    """(K, trials) errors release - exact prefix; trials as the noise shape of one generator."""
    c = FactorizedCounter((trials,), strategy=strategy, leaves=K, mechanism=mechanism, scale=1.5,
                          rngs=spawn_generators(seed, 1))
    x = np.random.default_rng(seed + 1).integers(0, 3, size=(K, 1, trials)).astype(float)
    out = np.empty((K, trials))
    for t in range(K):
        out[t] = (c.add(x[t]) - c.exact_sum())[0]
    return c, out


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_unbiased_and_variance_as_derived(strategy, mechanism):
    K = 48
    c, err = _errors(strategy, mechanism, K, TRIALS, seed=11)
    unit = 1.5**2 * (2.0 if mechanism == "laplace" else 1.0)
    derived = unit * prefix_variances(c.structure)
    assert c.noise_variance() == pytest.approx(derived[-1])
    # mean: z-scores of 48 prefixes, each N(0, 1) under unbiasedness; |z| < 4.5 (Bonferroni, p < 1e-4)
    z = err.mean(axis=1) / np.sqrt(derived / TRIALS)
    assert np.max(np.abs(z)) < 4.5
    # variance: the sample variance has relative sd sqrt((2 + kurtosis excess) / n); excess kurtosis of a
    # weighted sum of Laplace variables is at most 3 (one Laplace), 0 for Gaussians
    kurt = 3.0 if mechanism == "laplace" else 0.0
    rel_sd = math.sqrt((2.0 + kurt) / TRIALS)
    assert np.max(np.abs(err.var(axis=1) / derived - 1.0)) < 4.5 * rel_sd


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_symmetric_matrices_stay_symmetric_and_batched_equals_single(strategy):
    K, d, B = 9, 3, 4
    xs = np.random.default_rng(3).normal(size=(K, B, d, d))
    xs = xs + xs.transpose(0, 1, 3, 2)
    batched = FactorizedCounter((d, d), strategy=strategy, leaves=K, mechanism="symmetric-gaussian-matrix", scale=1.0,
                                rngs=spawn_generators(5, B))
    singles = [FactorizedCounter((d, d), strategy=strategy, leaves=K, mechanism="symmetric-gaussian-matrix", scale=1.0,
                                 rngs=[g]) for g in spawn_generators(5, B)]
    for t in range(K):
        r = batched.add(xs[t])
        assert np.array_equal(r, r.transpose(0, 2, 1))
        for b, s in enumerate(singles):
            assert np.array_equal(s.add(xs[t][b:b + 1])[0], r[b])        # same seed, same bytes


@pytest.mark.parametrize("strategy", ["tree", "tree-honaker", "blt"])
def test_streaming_state_does_not_grow_with_K(strategy):
    def state(K):
        c = FactorizedCounter(2, strategy=Strategy(strategy, ((0.9, 0.2),)) if strategy == "blt" else strategy,
                              leaves=K, mechanism="gaussian", scale=1.0, rngs=spawn_generators(0, 1))
        return sum(v.nbytes for v in vars(c).values() if isinstance(v, np.ndarray)) + \
            (sum(v.nbytes for v in vars(c._tree).values() if isinstance(v, np.ndarray)) if strategy == "tree" else 0)
    small, large = state(2**6), state(2**20)
    assert large <= small * 21 / 7   # tree levels grow as log K (7 -> 21); blt state is constant
    if strategy == "blt":
        assert large == small


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_ledger_equals_the_declared_log(strategy, mechanism):
    K = 37
    ledger = Ledger()
    c = FactorizedCounter(2, strategy=strategy, leaves=K, mechanism=mechanism, scale=4.0, rngs=spawn_generators(1, 1),
                          ledger=ledger, group="g")
    for _ in range(K):
        c.add(np.ones((1, 2)))
    norm = "l1" if mechanism == "laplace" else "l2"
    log = MechanismLog("t", "joint", (ReleaseGroup("g", mechanism, 4.0, Sensitivity(norm, 2.0), c.structure, dimension=2),))
    check = check_ledger(log, ledger, delta=1e-6)
    assert check.ok and not check.shape_problems
    assert check.executed_epsilon == pytest.approx(check.declared_epsilon, rel=1e-6)


def test_ledger_catches_a_counter_that_ran_a_heavier_factorization():
    K = 30
    ledger = Ledger()
    ran = Strategy("blt", ((0.9, 0.5),))
    c = FactorizedCounter(1, strategy=ran, leaves=K, mechanism="gaussian", scale=2.0, rngs=spawn_generators(1, 1),
                          ledger=ledger, group="g")
    for _ in range(K):
        c.add(np.ones((1, 1)))
    declared = Strategy("blt", ((0.9, 0.05),)).structure(K)      # a column norm too small for what ran
    log = MechanismLog("t", "joint", (ReleaseGroup("g", "gaussian", 2.0, Sensitivity("l2", 1.0), declared),))
    check = check_ledger(log, ledger, delta=1e-6)
    assert not check.ok and check.executed_epsilon > check.declared_epsilon


def test_bad_arguments_are_named():
    with pytest.raises(PrivacctError, match="strategy must be one of"):
        FactorizedCounter(1, strategy="dyadic", leaves=4, mechanism="gaussian", scale=1.0, rngs=spawn_generators(0, 1))
    c = FactorizedCounter(1, strategy="sqrt-toeplitz", leaves=1, mechanism="gaussian", scale=1.0, rngs=spawn_generators(0, 1))
    c.add(np.zeros((1, 1)))
    with pytest.raises(PrivacctError, match="full"):
        c.add(np.zeros((1, 1)))
    with pytest.raises(PrivacctError, match="x must have shape"):
        FactorizedCounter(2, strategy="tree-honaker", leaves=4, mechanism="laplace", scale=1.0,
                          rngs=spawn_generators(0, 1)).add(np.zeros((1, 3)))
