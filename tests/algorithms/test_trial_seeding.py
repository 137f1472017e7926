"""The many-trial audits' per-trial seeding made cheaper with the same bytes (issue 23 item 4): privacct.rng's
LazySeedSequence (numpy's SeedSequence, its hash on first use), shared_generators (the fixed coins' B Generators,
hashed once) and contract.stream_generators' fixed path, each against numpy's own SeedSequence / default_rng (the
reference), then one learner audit end to end."""

import copy
import pickle

import numpy as np
import pytest

from privacct.algorithms import contract
from privacct.algorithms.contract import AuditHook, child_sequence, noise_generators, stream_generators
from privacct.rng import LazySeedSequence, as_generators, child_generators, lazy_copy, shared_generators
from privacct.errors import PrivacctError

ROOTS = {   # (entropy, spawn key, pool size) of a parent; depth 0..3
    "small": (5, (), 4),
    "zero": (0, (), 4),
    "big entropy": (2**100 + 7, (), 4),
    "2^32 entropy": (2**32, (), 4),
    "deep key": (20_240_601, (3, 1, 0), 4),
    "pool 8": (11, (2,), 8),
    "64-bit key word": (9, (2**40,), 4),
}


def _real_and_lazy(name: str, used: int = 0):
    e, k, p = ROOTS[name]
    real = np.random.SeedSequence(e, spawn_key=k, pool_size=p)
    real.spawn(used)
    return real, lazy_copy(real)


def _same(a: np.random.SeedSequence, b: np.random.SeedSequence) -> None:
    assert (b.entropy, b.spawn_key, b.pool_size) == (a.entropy, a.spawn_key, a.pool_size)
    assert b.state == a.state and b.n_children_spawned == a.n_children_spawned
    assert np.array_equal(b.pool, a.pool)
    for n, dt in ((4, np.uint64), (8, np.uint32), (3, np.uint32), (5, np.uint64)):
        assert np.array_equal(b.generate_state(n, dt), a.generate_state(n, dt))
    ga, gb = np.random.default_rng(a), np.random.default_rng(b)
    assert gb.bit_generator.state == ga.bit_generator.state
    assert np.array_equal(gb.random(5), ga.random(5)) and np.array_equal(gb.standard_normal(3), ga.standard_normal(3))


@pytest.mark.parametrize("root", sorted(ROOTS))
@pytest.mark.parametrize("size", [1, 7, 250])
@pytest.mark.parametrize("used", [0, 3])
def test_lazy_children_are_numpys_spawn(root, size, used):
    real, lazy = _real_and_lazy(root, used)
    want, got = real.spawn(size), lazy.spawn(size)
    assert all(type(s) is LazySeedSequence for s in got)
    assert real.n_children_spawned == lazy.n_children_spawned == used + size
    for a, b in zip(want, got, strict=True):
        _same(a, b)
    # a second spawn continues the counter; grandchildren (depth + 2) too
    for a, b in zip(real.spawn(2) + want[-1].spawn(3), lazy.spawn(2) + got[-1].spawn(3), strict=True):
        _same(a, b)


@pytest.mark.parametrize("root", sorted(ROOTS))
@pytest.mark.parametrize("j", [0, 1, 2])
def test_lazy_children_through_child_generators_and_noise_generators(root, j):
    real, lazy = _real_and_lazy(root)
    want, got = real.spawn(40), lazy.spawn(40)
    for fn in (lambda s: child_generators(s, j), lambda s: noise_generators(s, j, AuditHook("A"))):
        for a, b in zip(fn(want), fn(got), strict=True):
            assert b.bit_generator.state == a.bit_generator.state
            assert np.array_equal(b.standard_exponential(6), a.standard_exponential(6))
    assert all(not s._ready for s in got)   # the batch hash read entropy, key and pool size only: no numpy hash


def test_lazy_seed_sequences_pickle_copy_and_print_like_numpys():
    real, lazy = _real_and_lazy("deep key")
    want, got = real.spawn(3), lazy.spawn(3)
    assert got[2].pool is not None   # one hashed, the others not yet
    want[2].spawn(4), got[2].spawn(4)
    for a, b in zip(want, got, strict=True):
        copies = [pickle.loads(pickle.dumps(b)), copy.deepcopy(b), copy.copy(b)]
        _same(a, b)
        for c in copies:
            a2 = pickle.loads(pickle.dumps(a))    # numpy's copy, counter and all
            assert type(c) is LazySeedSequence
            _same(a2, c)
            for x, y in zip(a2.spawn(2), c.spawn(2), strict=True):
                _same(x, y)
    assert repr(got[0]).replace("LazySeedSequence", "SeedSequence") == repr(want[0])


def test_lazy_seed_sequence_takes_numpys_path_for_anything_but_a_plain_int():
    for kw in ({"entropy": [1, 2, 3]}, {"entropy": 4, "spawn_key": (np.int64(2),)}):
        a, b = np.random.SeedSequence(**kw), LazySeedSequence(**kw)
        assert b._ready
        _same(a, b)
    for kw in ({"entropy": 4}, {"entropy": np.int64(4), "spawn_key": (1, 2)}, {"entropy": 9, "pool_size": 5}):
        a, b = np.random.SeedSequence(**kw), LazySeedSequence(**kw)   # numpy's default pool size, lazily
        assert not b._ready
        _same(a, b)
        assert type(b.entropy) is type(a.entropy) and type(lazy_copy(a).entropy) is type(a.entropy)
    for kw in ({"pool_size": 2}, {"spawn_key": (-1,)}, {"spawn_key": (1.5,)}):   # numpy's own checks, at once
        with pytest.raises((ValueError, TypeError)) as want:
            np.random.SeedSequence(3, **kw)
        with pytest.raises(want.type):
            LazySeedSequence(3, **kw)
    _same(np.random.SeedSequence(3, spawn_key=(True,)), LazySeedSequence(3, spawn_key=(True,)))
    os_seed = np.random.SeedSequence()
    assert lazy_copy(os_seed) is not os_seed and lazy_copy(np.random.SeedSequence([1, 2])).entropy == [1, 2]
    assert lazy_copy(lazy_copy(os_seed)).entropy == os_seed.entropy


@pytest.mark.parametrize("n", [0, 1, 5, 250])
@pytest.mark.parametrize("j", [0, 1, 2])
@pytest.mark.parametrize("coins_seed", [0, 7, 2**40])
def test_fixed_stream_generators_are_numpys_default_rng_of_the_one_child(n, j, coins_seed):
    hook = AuditHook("B", coins_seed=coins_seed)
    seeds = np.random.SeedSequence(3).spawn(max(n, 1))[:n]
    child = child_sequence(np.random.SeedSequence(coins_seed), j)
    want = [np.random.default_rng(child) for _ in seeds]
    got = stream_generators(seeds, j, hook, fixed=True)
    assert len(got) == n
    for a, b in zip(want, got, strict=True):
        assert b.bit_generator.state == a.bit_generator.state
        assert np.array_equal(b.random((3, 2)), a.random((3, 2))) and np.array_equal(b.integers(9, size=4),
                                                                                     a.integers(9, size=4))
    # every trial's Generator is its own object (draws of one leave the others), all sharing one seed sequence
    assert len({id(g) for g in got}) == n and len({id(g.bit_generator) for g in got}) == n
    if n >= 2:
        w0, w1 = want[0].spawn(1)[0], want[1].spawn(1)[0]
        g0, g1 = got[0].spawn(1)[0], got[1].spawn(1)[0]
        assert (g0.bit_generator.seed_seq.spawn_key, g1.bit_generator.seed_seq.spawn_key) == \
               (w0.bit_generator.seed_seq.spawn_key, w1.bit_generator.seed_seq.spawn_key) == ((j, 0), (j, 1))
    # not fixed: child j of every seed
    for a, b in zip([np.random.default_rng(child_sequence(s, j)) for s in seeds],
                    stream_generators(seeds, j, hook, fixed=False), strict=True):
        assert b.bit_generator.state == a.bit_generator.state


@pytest.mark.parametrize("spawned", [0, 2])
def test_shared_generators_pickle_and_copy_like_numpys(spawned):
    (g,) = shared_generators(np.random.SeedSequence(4, spawn_key=(1,)), 1)
    w = np.random.default_rng(np.random.SeedSequence(4, spawn_key=(1,)))
    for r in (g, w):
        r.random(2)
        r.spawn(spawned)
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert h.bit_generator.state == w.bit_generator.state
        assert h.bit_generator.seed_seq.state == w.bit_generator.seed_seq.state
        assert h.spawn(1)[0].bit_generator.seed_seq.spawn_key == (1, spawned)


def test_as_generators_still_checks_every_item():
    g = np.random.default_rng(0)
    assert as_generators([g, g]) == [g, g] and as_generators(g) == [g]
    sub = contract.ScaledNoiseGenerator(np.random.SeedSequence(1), 0.5)
    assert as_generators([g, sub])[1] is sub
    for bad in ([], [g, 1], [g, np.random.PCG64(0)]):
        with pytest.raises(PrivacctError):
            as_generators(bad)


def test_one_learner_audit_end_to_end_is_the_same_bytes(monkeypatch):
    """A tabular learner's tight audit sample (both sides, several chunks) and certified bound: with the chunk seeds
    lazy (the audits' sampling), the fixed coins from shared_generators and the lazy trial seeds, against numpy's
    SeedSequence and one default_rng per trial and stream (the old seeding)."""
    from privacct.audits import sampling
    from privacct.audits.learner_audit import LearnerMechanism
    from privacct.audits.suite import audit_setting

    setting = audit_setting("ucb-po", "jdp", calibration="paper", epsilon=1.0)   # its agent draws actions: coins
    mechs = (LearnerMechanism(setting.config), LearnerMechanism(setting.config, "actions"))   # noise; the coins too
    def sample(lazy: bool):   # three chunk seeds of each side, as the audits' sampling makes them
        return [np.asarray(mech(side, np.random.default_rng(lazy_copy(c) if lazy else c), 60))
                for mech in mechs for side in ("A", "B") for c in np.random.SeedSequence(2).spawn(3)]

    def old_seeding():
        monkeypatch.setattr(contract, "shared_generators", lambda s, n: [np.random.default_rng(s) for _ in range(n)])
        monkeypatch.setattr(contract, "child_generators",
                            lambda seeds, j: [np.random.default_rng(child_sequence(s, j)) for s in seeds])

    new = sample(True)
    lb_new = setting.run(trials=400, seed=3, executor="inline").epsilon_lower_bound
    real_side_seeds = sampling.side_seeds
    lazy_seen = []

    def lazy_side_seeds(seq, n):   # the audits' chunk seeds as LazySeedSequence (what side_seeds would hand out)
        d, d2 = seq.spawn(2)
        lazy_seen.append(1)
        return lazy_copy(d).spawn(n), lazy_copy(d2).spawn(n)

    monkeypatch.setattr(sampling, "side_seeds", lazy_side_seeds)
    lb_lazy = setting.run(trials=400, seed=3, executor="inline").epsilon_lower_bound
    monkeypatch.setattr(sampling, "side_seeds", real_side_seeds)
    old_seeding()
    old = sample(False)
    lb_old = setting.run(trials=400, seed=3, executor="inline").epsilon_lower_bound
    assert lazy_seen
    assert len(new) == len(old) == 12
    for a, b in zip(old, new, strict=True):
        assert a.shape == b.shape and np.array_equal(a, b)
    assert lb_new == lb_lazy == lb_old


@pytest.mark.parametrize("lazy", [False, True])
def test_child_generators_seed_sequences_answer_like_numpys_after_the_seed_words_were_lent(lazy):
    """child_generators hands each Generator's precomputed seed words to PCG64 without a copy: later questions to
    its seed sequence get numpy's own answers, whatever the first caller did with the words it got."""
    root = np.random.SeedSequence(21, spawn_key=(4,))
    seeds = (lazy_copy(root) if lazy else root).spawn(6)
    for g, s in zip(child_generators(seeds, 2), seeds, strict=True):
        want = child_sequence(s, 2)
        ss = g.bit_generator.seed_seq
        first = ss.generate_state(4, np.uint64)
        first += np.uint64(1)
        assert np.array_equal(ss.generate_state(4, np.uint64), want.generate_state(4, np.uint64))
        assert np.array_equal(ss.generate_state(4, np.uint32), want.generate_state(4, np.uint32))
        assert ss.spawn_key == want.spawn_key and ss.entropy == want.entropy and ss.pool_size == want.pool_size
        assert g.bit_generator.state == np.random.default_rng(want).bit_generator.state


def test_lent_seed_words_are_the_first_callers_alone():
    from privacct.rng import _Seeded

    parent = np.random.SeedSequence(8, spawn_key=(1,))
    want = child_sequence(parent, 3)
    ss = _Seeded(want.generate_state(4, np.uint64), 8, parent, 4, 3, lend=True)
    first = ss.generate_state(4, np.uint64)          # what PCG64 gets (no copy) ...
    assert np.array_equal(first, want.generate_state(4, np.uint64))
    first[:] = 0                                     # ... is its own: later answers are numpy's
    assert np.array_equal(ss.generate_state(4, np.uint64), want.generate_state(4, np.uint64))
    assert ss.spawn_key == (1, 3) and pickle.loads(pickle.dumps(ss)).spawn_key == (1, 3)
