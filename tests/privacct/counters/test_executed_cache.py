"""The executed encoder is computed once per recursion that runs (privacct/counters/executed_cache.py, issue 23 item 1).

Identical counters share one probe and record the same ledger weights bit for bit as an uncached counter; a counter
whose recursion differs (coefficients changed on the instance, a strategy subclass, a subclass of the mixing step,
a recursion reading state outside its coefficients) never reads a faithful counter's cached response."""

import numpy as np
import pytest

from privacct.counters import executed_cache
from privacct.counters.blt import Blt
from privacct.counters.counter import FactorizedCounter
from privacct.counters.strategies import Strategy, column_norm, executed_encoder
from privacct.ledger import Ledger
from privacct.rng import spawn_generators

K = 60
LIGHT = Strategy("blt", ((0.9, 0.2),))   # omega < theta: Q halved makes R_exec heavier (counter-noise-path)


@pytest.fixture(autouse=True)
def _fresh_cache():
    executed_cache.clear()
    yield
    executed_cache.clear()


def _run(strategy=LIGHT, *, cls=FactorizedCounter, edit=None, K=K):
    """(user 1's l2 weight norm in the ledger, the counter) of a K-step counter run with a ledger."""
    ledger = Ledger()
    c = cls(1, strategy=strategy, leaves=K, mechanism="gaussian", scale=1.0, rngs=spawn_generators(3, 1),
            ledger=ledger, group="g")
    if edit is not None:
        edit(c)
    for _ in range(K):
        c.add(np.ones((1, 1)))
    return float(ledger.per_user_norms("g", "gaussian", 1.0)[0]), c


def _uncached(c):
    """R_exec of ``c`` from its full impulse response, without the cache."""
    return executed_encoder(c.impulse_response())


@pytest.mark.parametrize("strategy", ["blt", "sqrt-toeplitz", LIGHT])
def test_identical_counters_probe_once_and_record_the_same_bytes(strategy, monkeypatch):
    calls = []
    real = FactorizedCounter.impulse_response
    monkeypatch.setattr(FactorizedCounter, "impulse_response", lambda self: calls.append(1) or real(self))
    runs = [_run(strategy) for _ in range(3)]
    assert len(calls) == 1                                   # one full probe for three counters
    assert executed_cache.stats["hits"] >= 2
    r = runs[0][1].executed_coefficients()
    assert all(c.executed_coefficients() is r for _, c in runs)
    assert not r.flags.writeable
    np.testing.assert_array_equal(r, _uncached(runs[0][1]))   # the cached response is the uncached one, bit for bit
    assert len({norm for norm, _ in runs}) == 1


def _halve_q(c):
    c._Q = [0.5 * q for q in c._Q]


class _HalvedQ(Blt):
    """The counter-noise-path mutant as a strategy object (tests/privacct/counters/test_contract.py)."""

    def init_parameters(self, counter):
        super().init_parameters(counter)
        _halve_q(counter)


class _QuarterNoise(FactorizedCounter):
    def _mix_noise(self, st, t, z):
        super()._mix_noise(st, t, 0.25 * z)


def _with_strategy_object(obj):
    def edit(c):
        c.implementation = obj
        obj.start(c)       # the recursion's coefficients as that strategy object sets them, fresh state
    return edit


@pytest.mark.parametrize("mutant", ["q-halved-on-the-instance", "strategy-subclass", "mixing-step-subclass"])
def test_a_differing_recursion_never_reads_the_faithful_response(mutant):
    faithful, fc = _run()                                    # cached first
    declared = column_norm(fc.structure, "l2")
    assert declared * (1 - 1e-5) <= faithful <= declared      # the declared norm holds a 2^-20 margin
    if mutant == "q-halved-on-the-instance":
        got, c = _run(edit=_halve_q)
    elif mutant == "strategy-subclass":
        got, c = _run(edit=_with_strategy_object(_HalvedQ()))
    else:
        got, c = _run(cls=_QuarterNoise)
    # the ledger holds the mutant's own executed weights, heavier than the declared column
    assert got == pytest.approx(float(np.linalg.norm(_uncached(c))), rel=1e-12)
    assert got > 1.3 * declared
    assert c.executed_coefficients() is not fc.executed_coefficients()


#: read by _Hidden's mixing step: state the key cannot see (neither a coefficient nor a function of the noise path)
_HIDDEN = {"scale": 1.0}


class _Hidden(FactorizedCounter):
    def _mix_noise(self, st, t, z):
        super()._mix_noise(st, t, _HIDDEN["scale"] * z)


def test_the_short_probe_catches_a_recursion_the_key_cannot_see(monkeypatch):
    first, c1 = _run(cls=_Hidden)
    monkeypatch.setitem(_HIDDEN, "scale", 0.25)
    second, c2 = _run(cls=_Hidden)                           # same key, another recursion: probed again
    assert executed_cache.stats["probe_mismatches"] == 1
    assert second == pytest.approx(4.0 * first, rel=1e-9)
    np.testing.assert_array_equal(c2.executed_coefficients(), _uncached(c2))


def test_an_instance_override_is_not_cached():
    c = FactorizedCounter(1, strategy=LIGHT, leaves=K, mechanism="gaussian", scale=1.0, rngs=spawn_generators(3, 1))
    assert executed_cache.recursion_key(c) is not None
    c._mix_noise = lambda st, t, z: FactorizedCounter._mix_noise(c, st, t, z)
    assert executed_cache.recursion_key(c) is None


def test_keys_differ_by_leaves_and_buffers():
    def key(strategy, leaves):
        return executed_cache.recursion_key(FactorizedCounter(1, strategy=strategy, leaves=leaves, mechanism="gaussian",
                                                              scale=1.0, rngs=spawn_generators(3, 1)))
    assert key(LIGHT, 10) == key(LIGHT, 10)
    assert key(LIGHT, 10) != key(LIGHT, 11)
    assert key(LIGHT, 10) != key(Strategy("blt", ((0.9, 0.3),)), 10)
    assert key("sqrt-toeplitz", 10) != key(LIGHT, 10)
