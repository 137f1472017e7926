"""A stacked counter with ``defer_records`` (privacct/counters/stacked.py; Private LSVI-UCB's H Gram counters) keeps its
compiled steps' ledger rows pending and records them together at ``flush_records``: the releases, draws and ledger
are those of the H counters stepped one by one; a step that is not deferred (an audit's tap active, a row the counters
must be asked for) records what is pending first, so the order of the records is kept."""

import numpy as np
import pytest

import privacct.counters.stacked as S
from privacct.counters.counter import FactorizedCounter
from privacct.counters.stacked import StackedCounters
from privacct.ledger import Ledger
from privacct.rng import spawn_generators

H, B, K, SHAPE = 4, 3, 40, (3, 3)


def _counters():
    rngs = spawn_generators(11, B)
    led = Ledger()
    cs = [FactorizedCounter(SHAPE, strategy="blt", leaves=K, mechanism="symmetric-gaussian-matrix", scale=0.6,
                            rngs=rngs, ledger=led, group=f"g{h}") for h in range(H)]
    return cs, led


def _xs():
    x = np.random.default_rng(4).normal(size=(K, B, H) + SHAPE)
    return x + np.swapaxes(x, -1, -2)


def _same(a, b):
    assert len(a) == len(b)
    assert [repr(d) for d in a.draws()] == [repr(d) for d in b.draws()]
    for h in range(H):
        assert a.per_user_norms(f"g{h}", "symmetric-gaussian-matrix", 0.6).tobytes() == \
            b.per_user_norms(f"g{h}", "symmetric-gaussian-matrix", 0.6).tobytes()


def _reference():
    ref, led_ref = _counters()
    xs = _xs()
    want = [np.stack([c.add(x[:, h]) for h, c in enumerate(ref)], axis=1) for x in xs]
    return xs, want, led_ref


def test_deferred_records_give_the_one_by_one_ledger():
    if not S.COMPILED:
        pytest.skip("the compiled stacked step is switched off")
    xs, want, led_ref = _reference()
    cs, led = _counters()
    st = StackedCounters(cs, defer_records=True)
    for t in range(K):
        assert st.add(xs[t]).tobytes() == want[t].tobytes()
    assert st._compiled and len(led) < len(led_ref)      # deferred: pending until flushed
    st.flush_records()
    st.flush_records()                                  # nothing pending: a no-op
    _same(led, led_ref)


def test_a_step_that_is_not_deferred_records_what_is_pending_first(monkeypatch):
    if not S.COMPILED:
        pytest.skip("the compiled stacked step is switched off")
    xs, want, led_ref = _reference()
    cs, led = _counters()
    st = StackedCounters(cs, defer_records=True)
    real = StackedCounters._unchanged_row
    for t in range(K):
        with monkeypatch.context() as m:
            if t % 7 == 3:     # the counters asked for their rows (recorded at once)
                m.setattr(StackedCounters, "_unchanged_row", lambda self, t: None)
            elif t % 7 == 5:   # an audit's tap active: one by one
                m.setattr(S, "current_tap", lambda: object())
            else:
                m.setattr(StackedCounters, "_unchanged_row", real)
            assert st.add(xs[t]).tobytes() == want[t].tobytes()
    st.flush_records()
    _same(led, led_ref)
