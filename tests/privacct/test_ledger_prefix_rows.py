"""A stacked counter's rows r_(t-1), ..., r_0 recorded by ``Ledger.record_groups`` are kept lazily (privacct.ledger
._Prefix: O(1) a row besides comparing its bits with the ledger's copy of r) and summed when read: the per-user sums,
their lengths and their sharing are those of the eager ``record`` calls, bit for bit; a coefficient array changed
before a later row, or after the last, is accounted as the eager records account it (the values at record time)."""

import numpy as np
import pytest

from privacct.ledger import Ledger

GROUPS = ("a", "b", "c")
KW = dict(mechanism="gaussian", scale=0.5, shape=(2,), batch=3)


def _eager(rows, lo=1, groups=GROUPS):
    led = Ledger()
    for t, w in enumerate(rows, start=1):
        for g in groups:
            led.record(group=g, users=(lo, lo + t - 1), weights=w, **KW)
    return led


def _sums(led, groups=GROUPS):
    return [(led._weighted[(g, "gaussian", 0.5)][0].tobytes(), led._weighted[(g, "gaussian", 0.5)][1].tobytes())
            for g in groups]


@pytest.mark.parametrize("lo", [1, 7])
def test_prefix_rows_kept_lazily_sum_to_the_eager_bits(lo):
    T = 300                                   # past the copy's first growth (64) and several doublings of the sums
    r = np.random.default_rng(5).standard_normal(T) * np.exp(np.random.default_rng(6).uniform(-8, 8, T))
    led = Ledger()
    for t in range(1, T + 1):
        led.record_groups(GROUPS, users=(lo, lo + t - 1), weights=[r[:t][::-1]] * 3, **KW)
    assert led._lazy and not led._wsums       # kept lazily until read
    ref = _eager([r[:t][::-1] for t in range(1, T + 1)], lo)
    assert _sums(led) == _sums(ref)            # lengths and bits (sequential sums from 0.0, as the += make them)
    acc = [led._weighted[(g, "gaussian", 0.5)] for g in GROUPS]
    assert acc[0] is acc[1] is acc[2] and not led._lazy
    for g in GROUPS:
        for mech in ("gaussian", "laplace"):
            assert led.per_user_norms(g, mech, 0.5).tobytes() == ref.per_user_norms(g, mech, 0.5).tobytes()
    # recording on after the read: eager from there, still the same bits
    led.record_groups(GROUPS, users=(lo, lo + T), weights=[np.append(r, 0.25)[::-1]] * 3, **KW)
    for g in GROUPS:
        ref.record(group=g, users=(lo, lo + T), weights=np.append(r, 0.25)[::-1], **KW)
    assert _sums(led) == _sums(ref)


@pytest.mark.parametrize("when", ["before a later row", "after the last row", "the newest coefficient only"])
def test_a_coefficient_array_changed_is_accounted_as_recorded(when):
    T = 90
    r = np.random.default_rng(1).uniform(0.1, 1.0, T)
    led, rows = Ledger(), []
    for t in range(1, T + 1):
        if when == "before a later row" and t == 50:
            r[3] *= 4.0                       # rows 50.. carry the new r_3; rows 1..49 were recorded with the old one
        row = r[:t][::-1]
        led.record_groups(GROUPS, users=(1, t), weights=[row] * 3, **KW)
        rows.append(row.copy())               # what each record saw
        if when == "the newest coefficient only" and t == 60:
            r[t - 1] = 9.0                    # changed after its row: later rows carry the new value
    if when == "after the last row":
        r[:] = 5.0                            # nothing recorded may move
    assert _sums(led) == _sums(_eager(rows))


def test_rows_that_are_not_the_next_prefix_are_recorded_eagerly():
    r = np.random.default_rng(2).uniform(0.1, 1.0, 40)
    cases = {
        "a step skipped": [(t, r[:t][::-1]) for t in (1, 2, 3, 5, 6)],
        "not reversed": [(t, r[:t]) for t in range(1, 8)],
        "a first row over two users": [(t, r[:t][::-1]) for t in range(2, 8)],
    }
    for name, steps in cases.items():
        led, ref = Ledger(), Ledger()
        for t, w in steps:
            led.record_groups(GROUPS, users=(1, t), weights=[w] * 3, **KW)
            for g in GROUPS:
                ref.record(group=g, users=(1, t), weights=w, **KW)
        assert _sums(led) == _sums(ref), name
        for g in GROUPS:
            assert led.per_user_norms(g, "gaussian", 0.5).tobytes() == ref.per_user_norms(g, "gaussian", 0.5).tobytes()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_newest_coefficient_is_refused_and_records_nothing(bad):
    from privacct.errors import PrivacctError

    r = np.random.default_rng(3).uniform(0.1, 1.0, 10)
    led = Ledger()
    for t in range(1, 6):
        led.record_groups(GROUPS, users=(1, t), weights=[r[:t][::-1]] * 3, **KW)
    r[5] = bad
    with pytest.raises(PrivacctError, match="finite"):
        led.record_groups(GROUPS, users=(1, 6), weights=[r[:6][::-1]] * 3, **KW)
    assert len(led) == 15
    assert _sums(led) == _sums(_eager([r[:t][::-1] for t in range(1, 6)]))
