"""privacct.tap.ActionPin through a Toeplitz noise path (docs/auditing.md#pinning-a-toeplitz-noise-path): a replay whose
canary plays the other bit, with draw z_s moved by D r_(s - t0), releases what the run released at every step; the
tree's rule (every draw over her moved by D) does not; an ordinary run is untouched."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import privacct.counters.counter as CC
import privacct.tap as T
from privacct.counters.counter import FactorizedCounter

K, T0, B = 24, 7, 2
#: batched leaves: leaf t holds users 3t - 2 .. 3t (canary user 20 sits in leaf 7 with users 19 and 21)
BATCHED = tuple((3 * t - 2, 3 * t) for t in range(1, K + 1))


def _run(strategy: str, bit: str, pin, *, mechanism="gaussian", shape=(3,), leaf_users=None, user=T0):
    """Releases (K, B, *shape) of a counter whose leaf T0 holds the canary ``user`` playing ``bit`` (her contribution
    a or b added to the other users' data), every seed's rng fixed, inside a one-run tap and ``pin``."""
    rng = np.random.default_rng(5)
    xs = rng.normal(size=(K, B) + shape)
    a, b = rng.normal(size=(B,) + shape), rng.normal(size=(B,) + shape)
    if mechanism == "symmetric-gaussian-matrix":
        xs, a, b = xs + np.swapaxes(xs, -1, -2), a + np.swapaxes(a, -1, -2), b + np.swapaxes(b, -1, -2)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(11).spawn(B)]
    c = FactorizedCounter(shape, strategy=strategy, leaves=K, mechanism=mechanism, scale=0.7, rngs=rngs, group="g",
                          leaf_users=leaf_users)
    out = []
    with T.tapping(T.AuditTap(plan=frozenset({user}))), (contextlib.nullcontext() if pin is None else T.pinning(pin)):
        for t in range(1, K + 1):
            x = xs[t - 1].copy()
            if t == T0:
                T.canary_contribution(user, "g", a=a, b=b)
                x = x + (a if bit == "A" else b)
            out.append(c.add(x))
    return np.array(out), float(np.max(np.abs(a - b)))


CASES = [("sqrt-toeplitz", "gaussian", (3,), None, T0), ("blt", "gaussian", (3,), None, T0),
         ("blt", "laplace", (3,), None, T0), ("blt", "symmetric-gaussian-matrix", (2, 2), None, T0),
         ("sqrt-toeplitz", "gaussian", (3,), BATCHED, 20), ("blt", "gaussian", (3,), BATCHED, 20)]
IDS = ["sqrt-toeplitz", "blt", "blt-laplace", "blt-matrix", "sqrt-toeplitz-batched-leaf", "blt-batched-leaf"]


@pytest.mark.parametrize("strategy, mechanism, shape, leaf_users, user", CASES, ids=IDS)
def test_the_pinned_replay_keeps_every_release_of_the_run(strategy, mechanism, shape, leaf_users, user, monkeypatch):
    kw = dict(mechanism=mechanism, shape=shape, leaf_users=leaf_users, user=user)
    record = T.ActionPin("record")
    run, D = _run(strategy, "A", record, **kw)
    replay = T.ActionPin("replay", flipped={user: ("A", "B")})
    rep, _ = _run(strategy, "B", replay, **kw)
    scale = float(np.max(np.abs(run)))
    assert not replay.unpinned
    np.testing.assert_allclose(rep, run, rtol=0, atol=1e-12 * scale)   # every release, before and after her leaf
    assert sorted(replay.releases) == sorted(record.releases) and len(record.releases) == K
    assert all(T.same_release(replay.releases[j], record.releases[j]) for j in record.releases)
    # the tree's rule (every draw over her moved by D, no step or coefficients): release T0 is kept (l_0 = 1), every
    # later one moves by D (l_0 + ... + l_(t - T0) - 1), so the audit's release check refuses the replay
    monkeypatch.setattr(CC, "toeplitz_draw", lambda info: contextlib.nullcontext())
    tree_rule = T.ActionPin("replay", flipped={user: ("A", "B")})
    old, _ = _run(strategy, "B", tree_rule, **kw)
    np.testing.assert_allclose(old[:T0], run[:T0], rtol=0, atol=1e-12 * scale)
    off = np.max(np.abs(old - run).reshape(K, -1), axis=1)
    assert np.all(off[T0:] > 0.05 * D), off
    assert not any(T.same_release(tree_rule.releases[j], record.releases[j]) for j in sorted(record.releases)[T0:])


def test_an_ordinary_run_is_untouched():
    """No pin: the Toeplitz draw context is never entered and the bytes are those of a run under a recording pin (which
    moves nothing) and of a run with no tap at all."""
    plain, _ = _run("blt", "A", None)
    recorded, _ = _run("blt", "A", T.ActionPin("record"))
    assert np.array_equal(plain, recorded)
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(11).spawn(B)]
    c = FactorizedCounter((3,), strategy="sqrt-toeplitz", leaves=K, mechanism="gaussian", scale=0.7, rngs=rngs)
    orig = CC.toeplitz_draw
    try:
        CC.toeplitz_draw = None   # entering it would raise
        untapped = np.array([c.add(np.random.default_rng(5).normal(size=(B, 3))) for _ in range(3)])
    finally:
        CC.toeplitz_draw = orig
    assert untapped.shape == (3, B, 3) and np.all(np.isfinite(untapped))


def test_pin_coefficients_are_the_executed_encoder_and_leaves_map_users():
    from privacct.counters.strategies import executed_encoder

    for s in ("sqrt-toeplitz", "blt"):
        c = FactorizedCounter((1,), strategy=s, leaves=40, mechanism="gaussian", scale=1.0, rngs=[np.random.default_rng(0)])
        r, l = c.pin_coefficients(), c.impulse_response()
        assert r[0] == 1.0 and np.allclose(np.convolve(l, r)[:40], 1.0, rtol=0, atol=1e-12)   # L R e_1 = A e_1
        assert np.allclose(r, executed_encoder(l), rtol=1e-9, atol=0)   # the ledger's, without its rounding margin
    b = FactorizedCounter((1,), strategy="blt", leaves=3, mechanism="gaussian", scale=1.0,
                          rngs=[np.random.default_rng(0)], leaf_users=((2, 3), (5, 5), (6, 9)))
    assert [b.leaf_of(u) for u in range(1, 11)] == [None, 1, 1, None, 2, 3, 3, 3, 3, None]
    f = FactorizedCounter((1,), strategy="blt", leaves=3, mechanism="gaussian", scale=1.0,
                          rngs=[np.random.default_rng(0)], first_user=4)
    assert [f.leaf_of(u) for u in range(2, 8)] == [None, None, 1, 2, 3, None]


def test_release_fingerprints_agree_to_rounding_only():
    v = np.random.default_rng(0).normal(size=(2, 5, 5)) * 1e3
    fp = T.release_fingerprint(v)
    assert fp.shape == (2, 3) and T.same_release(fp, T.release_fingerprint(v * (1 + 1e-14)))
    w = v.copy()
    w[1, 3, 2] += 1e-3
    assert not T.same_release(fp, T.release_fingerprint(w))


def test_pin_coefficients_are_those_of_the_recursion_that_runs_not_a_cached_faithful_ones():
    """A counter whose noise path is overridden (the same strategy, leaves and coefficients, a different recursion)
    pins with its own r, never a faithful counter's cached one: the cache is keyed on what the recursion runs
    (privacct.counters.executed_cache.recursion_key)."""
    def make():
        return FactorizedCounter((1,), strategy="blt", leaves=K, mechanism="gaussian", scale=1.0,
                                 rngs=[np.random.default_rng(0)], group="g")

    faithful = make().pin_coefficients()
    doubled = make()
    inner = doubled._mix_noise

    def twice(st, t, z):   # every draw enters the noise path doubled: L_exec = 2 L, so r_exec = r / 2
        inner(st, t, 2.0 * z)
    doubled._mix_noise = twice
    np.testing.assert_allclose(doubled.pin_coefficients(), faithful / 2.0, rtol=1e-12)
    np.testing.assert_array_equal(make().pin_coefficients(), faithful)


def test_start_replay_keeps_the_recorded_logs_referenced():
    pin = T.ActionPin("record")
    pin.draws.append((("g", (1, 1), "gaussian", (2,)), 1))
    draws, releases = pin.draws, pin.releases
    pin.start_replay({1: ("A", "B")}, stop_after=3, keep_from=1)
    assert pin.draws == [] and pin.draws is not draws
    assert pin._recorded[0] is draws and pin._recorded[4] is releases


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="the fork engine's replays need os.fork (POSIX)")
def test_a_forked_replay_writes_no_page_of_the_recorded_run():
    """start_replay in a forked child must not free the recorded run's logs: freeing writes to every page holding
    them (copy-on-write faults growing with the run; benchmarks/learner_audits.md#the-forked-replays-page-faults)."""
    import os
    import resource

    pin = T.ActionPin("record")
    pin.draws.extend(((("group", (k, k), "gaussian", (3,)), k)) for k in range(300_000))   # about 40 MB of tuples
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # pragma: no cover - the child reports through the pipe
        try:
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            pin.start_replay({5: ("A", "B")}, stop_after=10, keep_from=5)
            os.write(w, str(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before).encode())
        finally:
            os._exit(0)
    os.close(w)
    faults = int(os.read(r, 64).decode() or -1)
    os.close(r)
    os.waitpid(pid, 0)
    assert 0 <= faults < 500, f"{faults} page faults in the child: the recorded run's pages were written"


def test_tap_differences_names_what_differs_and_nothing_else():
    def tap(value, action):
        t = T.AuditTap()
        t.record(group="g", name="g node [1, 1]", mechanism="gaussian", scale=1.0, values=np.array([[value]]),
                 contribution=np.array([[1.0]]))
        t.actions[2] = np.array([action])
        return t

    assert T.tap_differences(tap(1.5, 0), tap(1.5, 0)) == []
    assert T.tap_differences(tap(1.5, 0), tap(1.5 + 2**-50, 0)) == ["record 0 (g node [1, 1]): values"]
    assert T.tap_differences(tap(1.5, 0), tap(1.5, 1)) == ["actions of user 2"]
    short = tap(1.5, 0)
    short.records.clear()
    assert T.tap_differences(short, tap(1.5, 0)) == ["records: 0 vs 1"]
