"""privacct/rng.py: ``child_generators`` makes numpy's own child Generators (same state, same draws) for every kind
of seed list, by a vectorised hash for sibling families and numpy's path otherwise."""

import copy
import pickle

import numpy as np
import pytest

from privacct.rng import child_generators


def _numpy_child(s: np.random.SeedSequence, j: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(s.entropy, spawn_key=tuple(s.spawn_key) + (j,),
                                                        pool_size=s.pool_size))


FAMILIES = {
    "siblings": lambda: np.random.SeedSequence(5).spawn(40),
    "deep key, big entropy": lambda: np.random.SeedSequence(2**100 + 7).spawn(7)[3].spawn(2)[1].spawn(30),
    "pool 8": lambda: np.random.SeedSequence(0, pool_size=8).spawn(9),
    "os entropy": lambda: np.random.SeedSequence().spawn(5),
    "list entropy (numpy's path)": lambda: np.random.SeedSequence([1, 2, 3]).spawn(4),
    "64-bit key word": lambda: np.random.SeedSequence(9, spawn_key=(2**40,)).spawn(3),
    "huge key (numpy's path)": lambda: np.random.SeedSequence(9, spawn_key=(2**70,)).spawn(3),
    "mixed key lengths (numpy's path)": lambda: [np.random.SeedSequence(3), np.random.SeedSequence(3).spawn(2)[1]],
    "top 32-bit key": lambda: [np.random.SeedSequence(3, spawn_key=(2**32 - 1,))],
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("j", [0, 1, 2, 2**32 - 1, 2**32])
def test_child_generators_are_numpys_children(family, j):
    seeds = FAMILIES[family]()
    got = child_generators(seeds, j)
    want = [_numpy_child(s, j) for s in seeds]
    assert len(got) == len(seeds)
    for g, w in zip(got, want, strict=True):
        assert g.bit_generator.state == w.bit_generator.state
        assert np.array_equal(g.standard_exponential(7), w.standard_exponential(7))


def test_child_generators_leave_the_parents_spawn_counters_and_spawn_like_numpy():
    seeds = np.random.SeedSequence(11).spawn(5)
    (g,) = child_generators(seeds[2:3], 1)
    assert [s.n_children_spawned for s in seeds] == [0] * 5
    w = _numpy_child(seeds[2], 1)
    assert g.bit_generator.seed_seq.spawn_key == w.bit_generator.seed_seq.spawn_key == (2, 1)
    assert np.array_equal(g.spawn(2)[1].random(3), w.spawn(2)[1].random(3))


def test_child_generators_pickle_and_copy_like_numpys():
    (g,) = child_generators(np.random.SeedSequence(11).spawn(3)[1:2], 4)
    g.random(3)
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert h.bit_generator.state == g.bit_generator.state
        assert type(h.bit_generator.seed_seq) is np.random.SeedSequence
        assert h.bit_generator.seed_seq.spawn_key == (1, 4)
        assert h.spawn(1)[0].bit_generator.seed_seq.spawn_key == (1, 4, 0)
