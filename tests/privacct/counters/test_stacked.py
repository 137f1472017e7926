"""The stacked counter (privacct/counters/stacked.py): H Toeplitz counters stepped as one give the bytes, draws and
ledger of the H counters stepped one by one; what it cannot stack it steps one by one."""

import pickle

import numpy as np
import pytest

import privacct.counters.stacked as S
from privacct.counters.counter import FactorizedCounter
from privacct.counters.stacked import StackedCounters, stacked_noise
from privacct.errors import PrivacctError
from privacct.ledger import Ledger, check_ledger
from privacct.log import MechanismLog, ReleaseGroup, Sensitivity
from privacct.mechanisms import draw
from privacct.rng import spawn_generators

H, B, K = 4, 3, 17


@pytest.mark.parametrize("mechanism,shape", [("gaussian", (3,)), ("laplace", (2, 2)),
                                             ("symmetric-gaussian-matrix", (3, 3))])
def test_one_call_per_seed_gives_the_consecutive_draws(mechanism, shape):
    a, b = spawn_generators(5, B), spawn_generators(5, B)
    want = np.stack([draw(mechanism, a, shape, 0.7) for _ in range(H)])
    got = stacked_noise(mechanism, b, H, shape, 0.7)
    assert got.shape == (H, B) + shape
    assert got.tobytes() == want.tobytes()
    assert all(x.bit_generator.state == y.bit_generator.state for x, y in zip(a, b, strict=True))


def _counters(strategy, *, ledger=True, mechanism="symmetric-gaussian-matrix", shape=(2, 2), edit=None, seed=11):
    rngs = spawn_generators(seed, B)
    led = Ledger() if ledger else None
    cs = [FactorizedCounter(shape, strategy=strategy, leaves=K, mechanism=mechanism, scale=0.6, rngs=rngs, ledger=led,
                            group=f"g{h}" if ledger else None) for h in range(H)]
    if edit is not None:
        edit(cs)
    return cs, led, rngs


def _xs(shape=(2, 2)):
    x = np.random.default_rng(4).normal(size=(K, B, H) + shape)
    return x + np.swapaxes(x, -1, -2) if len(shape) == 2 else x


def _one_by_one(cs, xs, steps=K):
    return [np.stack([c.add(x[:, h]) for h, c in enumerate(cs)], axis=1) for x in xs[:steps]]


def _same_ledgers(a, b):
    assert [repr(d) for d in a.draws()] == [repr(d) for d in b.draws()]
    for h in range(H):
        for mech in {k[1] for k in a._keys}:
            assert a.per_user_norms(f"g{h}", mech, 0.6).tobytes() == b.per_user_norms(f"g{h}", mech, 0.6).tobytes()


@pytest.mark.parametrize("ledger", [True, False])
@pytest.mark.parametrize("mechanism,shape", [("symmetric-gaussian-matrix", (2, 2)), ("gaussian", (3,)),
                                             ("laplace", (3,))])
@pytest.mark.parametrize("strategy", ["blt", "sqrt-toeplitz"])
def test_stacked_equals_one_by_one(strategy, mechanism, shape, ledger):
    ref, led_ref, rng_ref = _counters(strategy, ledger=ledger, mechanism=mechanism, shape=shape)
    cs, led, rngs = _counters(strategy, ledger=ledger, mechanism=mechanism, shape=shape)
    st = StackedCounters(cs)
    xs = _xs(shape)
    want = _one_by_one(ref, xs)
    for t in range(K):
        assert st.add(xs[t]).tobytes() == want[t].tobytes()
    assert st.stacked
    for c, r in zip(cs, ref, strict=True):
        assert c.noisy_sum().tobytes() == r.noisy_sum().tobytes() and c.steps == r.steps == K
    assert all(x.bit_generator.state == y.bit_generator.state for x, y in zip(rngs, rng_ref, strict=True))
    if ledger:
        _same_ledgers(led, led_ref)
        with pytest.raises(PrivacctError, match="full"):
            st.add(xs[0])


@pytest.mark.parametrize("strategy", ["blt", "sqrt-toeplitz"])
def test_steps_under_a_tap_go_one_by_one_on_the_same_state(strategy, monkeypatch):
    ref, led_ref, _ = _counters(strategy)
    cs, led, _ = _counters(strategy)
    st = StackedCounters(cs)
    xs = _xs()
    want = _one_by_one(ref, xs)
    for t in range(K):
        with monkeypatch.context() as m:
            if t % 3 == 1:     # an audit's tap active at this step: the counters one by one, then stacked again
                m.setattr(S, "current_tap", lambda: object())
            assert st.add(xs[t]).tobytes() == want[t].tobytes()
    _same_ledgers(led, led_ref)


def test_a_step_under_a_real_tap_reaches_the_tap():
    """The tap sees every draw of a step made while it is active (here: noted unobserved, the counters having been
    built outside it), as it sees the one-by-one counters' draws."""
    from privacct.tap import tapping

    seen = []
    for stack in (False, True):
        cs, _, _ = _counters("blt")
        st = StackedCounters(cs)
        xs = _xs()
        st.add(xs[0]) if stack else _one_by_one(cs, xs, steps=1)
        with tapping() as tap:
            st.add(xs[1]) if stack else _one_by_one(cs, xs[1:], steps=1)
        seen.append(sorted(u.group for u in tap.unobserved))
    assert seen[0] == seen[1] == [f"g{h}" for h in range(H)]


def _halve_q(cs):
    for c in cs:
        c._Q = [0.5 * q for q in c._Q]


def _norm(led, h):
    return float(led.per_user_norms(f"g{h}", "symmetric-gaussian-matrix", 0.6).max())


def test_a_mutant_on_every_counter_is_stacked_and_recorded_as_it_runs():
    faithful, led0, _ = _counters("blt")
    StackedCounters(faithful).add(_xs()[0])
    cs, led, _ = _counters("blt", edit=_halve_q)
    ref, led_ref, _ = _counters("blt", edit=_halve_q)
    st = StackedCounters(cs)
    xs = _xs()
    want = _one_by_one(ref, xs)
    for t in range(K):
        assert st.add(xs[t]).tobytes() == want[t].tobytes()
    assert st.stacked
    _same_ledgers(led, led_ref)
    log = MechanismLog("t", "joint", tuple(ReleaseGroup(f"g{h}", "symmetric-gaussian-matrix", 0.6,
                                                        Sensitivity("l2", 1.0), cs[0].structure) for h in range(H)))
    assert not check_ledger(log, led, delta=1e-6).ok


def _runs_one_by_one(cs, led, ref, led_ref):
    """StackedCounters over ``cs`` does not stack them and gives, step by step, the releases and the ledger of the
    same counters ``ref`` added one by one."""
    st = StackedCounters(cs)
    xs = _xs()
    want = _one_by_one(ref, xs)
    for t in range(K):
        assert st.add(xs[t]).tobytes() == want[t].tobytes()
    assert not st.stacked
    _same_ledgers(led, led_ref)


def test_a_mutant_on_one_counter_is_not_stacked():
    cs, led, _ = _counters("blt", edit=lambda cs: _halve_q(cs[2:3]))
    ref, led_ref, _ = _counters("blt", edit=lambda cs: _halve_q(cs[2:3]))
    _runs_one_by_one(cs, led, ref, led_ref)
    assert _norm(led, 2) > 1.3 * _norm(led, 0)


def test_a_recursion_changed_after_the_first_draw_is_refused_before_anything_moves():
    cs, led, rngs = _counters("blt")
    st = StackedCounters(cs)
    xs = _xs()
    for t in range(3):
        st.add(xs[t])
    before = ([c.noisy_sum().copy() for c in cs], len(led), [r.bit_generator.state for r in rngs])
    cs[3]._Q = [0.5 * q for q in cs[3]._Q]
    with pytest.raises(PrivacctError, match="changed after its first draw"):
        st.add(xs[3])
    assert all(np.array_equal(c.noisy_sum(), v) for c, v in zip(cs, before[0], strict=True))
    assert len(led) == before[1] and [r.bit_generator.state for r in rngs] == before[2]
    assert all(c.steps == 3 for c in cs)


class _Sub(FactorizedCounter):
    pass


@pytest.mark.parametrize("why", ["subclass", "tree-honaker", "other-rngs", "patched-mixing"])
def test_what_cannot_be_stacked_runs_one_by_one(why, monkeypatch):
    strategy = "tree-honaker" if why == "tree-honaker" else "blt"
    ref, led_ref, _ = _counters(strategy)
    cs, led, _ = _counters(strategy)
    if why == "subclass":
        cs[1].__class__ = _Sub
    if why == "other-rngs":
        cs[0].rngs = spawn_generators(11, B)       # the same seeds, other generator objects
        ref[0].rngs = spawn_generators(11, B)
    if why == "patched-mixing":
        monkeypatch.setattr(FactorizedCounter, "_mix_noise", lambda self, st, t, z, f=FactorizedCounter._mix_noise:
                            f(self, st, t, z))
    _runs_one_by_one(cs, led, ref, led_ref)


def test_the_stacked_ledger_pickles_and_chains_as_the_one_by_one_ledger():
    cs, led, _ = _counters("blt")
    ref, led_ref, _ = _counters("blt")
    xs = _xs()
    st = StackedCounters(cs)
    for t in range(K):
        st.add(xs[t])
    _one_by_one(ref, xs)
    for a, b in ((pickle.loads(pickle.dumps(led)), led_ref), (Ledger.chain(led, Ledger()), Ledger.chain(led_ref))):
        for h in range(H):
            assert a.per_user_norms(f"g{h}", "symmetric-gaussian-matrix", 0.6).tobytes() == \
                b.per_user_norms(f"g{h}", "symmetric-gaussian-matrix", 0.6).tobytes()


@pytest.mark.parametrize("strategy,mechanism,shape,compiled", [
    ("blt", "symmetric-gaussian-matrix", (3, 3), True), ("blt", "gaussian", (3,), False),
    ("sqrt-toeplitz", "symmetric-gaussian-matrix", (2, 2), False)])
def test_out_and_plus_give_the_releases_plus_the_shift(strategy, mechanism, shape, compiled):
    """``add(x, out=, plus=)`` writes ``release + plus`` into ``out`` (a learner's shifted Gram matrices), the bytes of
    the one-by-one counters' releases plus the same array; BLT counters of symmetric matrices step compiled
    (privacct/counters/blt_jit.py), the others through numpy."""
    ref, _, _ = _counters(strategy, mechanism=mechanism, shape=shape)
    cs, _, _ = _counters(strategy, mechanism=mechanism, shape=shape)
    st = StackedCounters(cs)
    xs = _xs(shape)
    plus = np.random.default_rng(9).normal(size=shape)
    out = np.empty((B, H) + shape)
    for t, want in enumerate(_one_by_one(ref, xs)):
        got = st.add(xs[t], out=out, plus=plus if t % 2 else None)
        assert got is out and out.tobytes() == (want + plus if t % 2 else want).tobytes()
    assert st._compiled is compiled
    with pytest.raises(PrivacctError, match="C-contiguous float64"):
        StackedCounters(_counters(strategy, mechanism=mechanism, shape=shape)[0]).add(xs[0], out=out[:, ::-1])


def test_a_counter_rebound_to_another_tuple_after_the_first_draw_is_refused_by_the_stack():
    """The stack's identity shortcut (StackedCounters._unchanged_row) takes only the very objects each counter probed:
    a tuple of other values bound on one counter is refused before anything moves, as a list is."""
    cs, led, rngs = _counters("blt")
    st = StackedCounters(cs)
    xs = _xs()
    for t in range(3):
        st.add(xs[t])
    assert st._compiled and st._unchanged_row(4) is not None
    cs[2]._Q = tuple(0.5 * q for q in cs[2]._Q)
    assert st._unchanged_row(4) is None
    before = (len(led), [r.bit_generator.state for r in rngs])
    with pytest.raises(PrivacctError, match="changed after its first draw"):
        st.add(xs[3])
    assert (len(led), [r.bit_generator.state for r in rngs]) == before and all(c.steps == 3 for c in cs)


def test_without_the_compiled_step_blt_matrices_stack_through_numpy(monkeypatch):
    """``COMPILED = False`` (no numba in the process): the same counters stack through numpy's step, the same bytes."""
    monkeypatch.setattr(S, "COMPILED", False)
    ref, led_ref, _ = _counters("blt")
    cs, led, _ = _counters("blt")
    st = StackedCounters(cs)
    xs = _xs()
    for t, want in enumerate(_one_by_one(ref, xs)):
        assert st.add(xs[t]).tobytes() == want.tobytes()
    assert st.stacked and not st._compiled
    _same_ledgers(led, led_ref)
