"""``Ledger.record_groups`` (a stacked counter's H weighted draws of one step, privacct/counters/stacked.py) is the
sequence of ``record`` calls it stands for: draws, per-user sums bit for bit, usage, the ledger check, and every later
record, extension, copy, chain and pickle of it; groups that share one row share one pair of sums until one of them
is written alone (copy on write)."""

import pickle

import numpy as np
import pytest

from privacct.errors import PrivacctError
from privacct.ledger import Ledger, check_ledger
from privacct.log import MechanismLog, ReleaseGroup, Sensitivity, Structure

GROUPS = ("a", "b", "c")
KW = dict(mechanism="gaussian", scale=0.5, shape=(2,), batch=3)


def _rows(T, seed=0):
    r = np.random.default_rng(seed).uniform(0.1, 1.0, size=T)
    return [r[:t][::-1] for t in range(1, T + 1)]


def _both(steps):
    """(record_groups ledger, record ledger) of ``steps``: a list of (groups, users, weights per group)."""
    a, b = Ledger(), Ledger()
    for groups, users, ws in steps:
        a.record_groups(groups, users=users, weights=ws, **KW)
        for g, w in zip(groups, ws, strict=True):
            b.record(group=g, users=users, weights=w, **KW)
    return a, b


def _assert_same(a, b, groups=GROUPS):
    assert [repr(d) for d in a.draws()] == [repr(d) for d in b.draws()]
    assert len(a) == len(b)
    for g in groups:
        for mech in ("gaussian", "laplace"):
            assert a.per_user_norms(g, mech, 0.5).tobytes() == b.per_user_norms(g, mech, 0.5).tobytes()
    assert [repr(u) for u in a.usage()] == [repr(u) for u in b.usage()]


def _log(T):
    return MechanismLog("t", "joint", tuple(ReleaseGroup(g, "gaussian", 0.5, Sensitivity("l2", 1.0),
                                                         Structure.factorized("blt", T, {"buffers": [[0.9, 0.2]]}))
                                            for g in GROUPS))


@pytest.mark.parametrize("alias", ["one object", "views of one memory"])
def test_one_shared_row_is_the_records_it_stands_for(alias):
    T = 40
    rows = _rows(T)
    same = (lambda w: [w] * 3) if alias == "one object" else (lambda w: [w, w[:], w.view()])
    a, b = _both([(GROUPS, (1, t), same(w)) for t, w in enumerate(rows, start=1)])
    _assert_same(a, b)
    acc = [a._weighted[(g, "gaussian", 0.5)] for g in GROUPS]
    assert acc[0] is acc[1] is acc[2]                    # one pair of sums for the three groups
    ca, cb = check_ledger(_log(T), a, delta=1e-6), check_ledger(_log(T), b, delta=1e-6)
    assert (ca.ok, ca.executed_epsilon) == (cb.ok, cb.executed_epsilon)


def test_different_rows_and_a_later_single_record_copy_on_write():
    T = 30
    rows, other = _rows(T), _rows(T, seed=1)
    steps = [(GROUPS, (1, t), [rows[t - 1]] * 3) for t in range(1, 7)]
    steps += [(("a", "c"), (1, t), [rows[t - 1]] * 2) for t in range(7, 11)]     # two of a shared three (in place)
    steps += [(GROUPS, (1, t), [rows[t - 1], other[t - 1], rows[t - 1]]) for t in range(11, 16)]   # not one row
    steps += [(GROUPS, (1, t), [rows[t - 1]] * 3) for t in range(16, 21)]
    steps += [(("a", "c"), (1, t), [rows[t - 1]] * 2) for t in range(21, 24)]    # two of a shared three
    steps += [(("b",), (1, t), [other[t - 1]]) for t in range(24, 27)]          # one group alone
    steps += [(("a", "c"), (1, t), [rows[t - 1]] * 2) for t in range(27, 31)]
    a, b = _both(steps)
    _assert_same(a, b)
    # and the same after an extension, a copy, a chain and a pickle, and a record on top of each
    for x, y in ((pickle.loads(pickle.dumps(a)), pickle.loads(pickle.dumps(b))), (a._copy(), b._copy())):
        x.record(group="c", users=(2, 4), weights=[1.0, 2.0, 3.0], **KW)
        y.record(group="c", users=(2, 4), weights=[1.0, 2.0, 3.0], **KW)
        _assert_same(x, y)
    for x, y in ((Ledger.chain(a, a), Ledger.chain(b, b)),):
        _assert_same(x, y)
    ea, eb = Ledger(), Ledger()
    ea.extend(a)
    eb.extend(b)
    ea.extend(a)
    eb.extend(b)
    _assert_same(ea, eb)
    a.extend(a)
    b.extend(b)
    _assert_same(a, b)


@pytest.mark.parametrize("change", ["a row of another array", "the array changed in place after a record"])
def test_a_row_that_is_not_the_next_prefix_row_is_recorded_as_it_is(change):
    """Rows kept lazily are compared with the kept coefficients bit for bit at every record (the fast path of a
    repeated record_groups call too): a shared row that does not extend them -- another array's row, or the same
    array's row after its older entries were changed in place -- gets the sums of the records it stands for."""
    T = 12
    r = np.random.default_rng(3).uniform(0.1, 1.0, size=T)
    other = np.random.default_rng(4).uniform(0.1, 1.0, size=T)
    a, b = Ledger(), Ledger()
    for t in range(1, T + 1):
        if t == 7:
            if change == "a row of another array":
                r = other
            else:
                r[0] *= 2.0                                   # r_0, in every later row's oldest user
        w = r[:t][::-1]
        a.record_groups(GROUPS, users=(1, t), weights=[w] * 3, **KW)
        for g in GROUPS:
            b.record(group=g, users=(1, t), weights=w.copy(), **KW)
    _assert_same(a, b)


def test_a_group_named_twice_counts_twice():
    rows = _rows(5)
    a, b = _both([(("a", "a", "b"), (1, t), [rows[t - 1]] * 3) for t in range(1, 6)])
    _assert_same(a, b)


@pytest.mark.parametrize("bad", ["short", "nan", "users", "count"])
def test_refusals_record_nothing(bad):
    led = Ledger()
    w = np.ones(3)
    users = (1, 3)
    ws = [w, w, w]
    if bad == "short":
        ws = [w, w, np.ones(2)]
    elif bad == "nan":
        ws = [w, w, np.array([1.0, np.nan, 1.0])]
    elif bad == "users":
        users = (0, 2)
    else:
        ws = [w, w]
    with pytest.raises(PrivacctError):
        led.record_groups(GROUPS, users=users, weights=ws, **KW)
    assert len(led) == 0 and not led._weighted


def test_a_chain_borrows_a_single_parts_sums_and_never_writes_them():
    rows = _rows(12)
    shared, _ = _both([(GROUPS, (1, t), [rows[t - 1]] * 3) for t in range(1, 13)])
    own = Ledger()
    for t in range(1, 6):
        own.record(group="a", users=(1, t), weights=rows[t - 1] * 2.0, **KW)
    before = {k: (v[0].tobytes(), v[1].tobytes()) for k, v in shared._weighted.items()}
    chain = Ledger.chain(shared, own, shared)
    merged = Ledger()
    for p in (shared, own, shared):
        merged.extend(p)
    _assert_same(chain, merged)
    assert {k: (v[0].tobytes(), v[1].tobytes()) for k, v in shared._weighted.items()} == before
    one = Ledger.chain(shared, Ledger())
    assert all(one._weighted[k] is shared._weighted[k] for k in shared._weighted)   # referenced, not copied
    _assert_same(one, shared)
