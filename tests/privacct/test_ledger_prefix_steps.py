"""``Ledger.record_prefix_steps`` (a stacked counter's deferred steps, privacct/counters/stacked.py) gives the ledger
of the ``record_groups`` calls it stands for, made one after the other: the same draws, runs, order column, lazily
kept rows and per-user sums, bit for bit; where those calls would not take their fast path (rows not kept lazily, a
non-finite weight, bits that are not the kept ones) it makes the calls themselves, refusals included."""

import pickle

import numpy as np
import pytest

from privacct.errors import PrivacctError
from privacct.ledger import Ledger

GROUPS = ("a", "b", "c")
KW = dict(mechanism="gaussian", scale=0.5, shape=(2,), batch=3)


def _row(T, seed=5):
    rng = np.random.default_rng(seed)
    r = rng.standard_normal(T) * np.exp(rng.uniform(-8, 8, T))
    r.setflags(write=False)
    return r


def _steps(led, r, lo, hi, count, groups=GROUPS):
    for i in range(count):
        led.record_groups(groups, users=(lo, hi + i), weights=[r[:hi + i - lo + 1][::-1]] * len(groups), **KW)


def _state(led):
    """Everything a reader sees, and the columns it is read from."""
    led._flush()
    lazy = sorted((k, p.lo, p.n, p.size, p.coef[:p.n].tobytes(), p.keys) for k, p in led._lazy.items())
    cols = ([a.tobytes() for a in led._rlo], [a.tobytes() for a in led._rhi], [a.tobytes() for a in led._rn],
            list(led._olo), list(led._ohi), list(led._on), led._order[:led._n].tobytes(), led._keys)
    draws = [repr(d) for d in led.draws()]
    sums = [led.per_user_norms(g, "gaussian", 0.5).tobytes() for g in GROUPS]
    return lazy, cols, draws, sums, len(led)


@pytest.mark.parametrize("lo,splits", [(1, [1, 299]), (1, [5, 60, 1, 234]), (7, [300]), (3, [2, 2, 2, 1 << 13])])
def test_steps_recorded_together_give_the_one_by_one_ledger(lo, splits):
    T = sum(splits)                # past the coefficient copy's growth (64), the sums' doublings, and a flush (1 << 14)
    r = _row(T)
    ref, led = Ledger(), Ledger()
    _steps(ref, r, lo, lo, T)
    hi = lo
    for n in splits:
        led.record_prefix_steps(GROUPS, lo=lo, hi=hi, count=n, row=r, **KW)
        hi += n
    assert led._lazy                                   # the fast path ran: rows kept lazily
    assert _state(led) == _state(ref)
    assert pickle.loads(pickle.dumps(led)).per_user_norms("b", "gaussian", 0.5).tobytes() == \
        ref.per_user_norms("b", "gaussian", 0.5).tobytes()


def test_steps_after_other_records_and_not_kept_lazily_are_the_calls():
    r = _row(50)
    ref, led = Ledger(), Ledger()
    for x in (ref, led):   # eager sums already there: record_groups records every row eagerly
        x.record(group="a", users=(1, 4), weights=np.ones(4), **KW)
    _steps(ref, r, 2, 2, 40)
    led.record_prefix_steps(GROUPS, lo=2, hi=2, count=40, row=r, **KW)
    assert not led._lazy
    assert _state(led) == _state(ref)


def test_a_non_finite_weight_is_refused_where_the_calls_refuse_it():
    r = np.array(_row(30))
    r[17] = np.nan
    ref, led = Ledger(), Ledger()
    with pytest.raises(PrivacctError) as want:
        _steps(ref, r, 1, 1, 25)
    with pytest.raises(PrivacctError) as got:
        led.record_prefix_steps(GROUPS, lo=1, hi=1, count=25, row=r, **KW)
    assert str(got.value) == str(want.value)
    assert _state(led) == _state(ref)                  # the steps before it recorded, as the calls record them


def test_a_row_whose_kept_bits_changed_is_recorded_eagerly():
    r = np.array(_row(40))
    ref, led = Ledger(), Ledger()
    _steps(ref, r, 1, 1, 10)
    led.record_prefix_steps(GROUPS, lo=1, hi=1, count=10, row=r, **KW)
    r[3] = -r[3]                                       # an earlier coefficient changed before the next steps
    _steps(ref, r, 1, 11, 20)
    led.record_prefix_steps(GROUPS, lo=1, hi=11, count=20, row=r, **KW)
    assert _state(led) == _state(ref)
