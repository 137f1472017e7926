"""Seeding: every random stream comes from ``numpy.random.SeedSequence.spawn``.

The same ``seed`` always gives the same Generators, so the same bytes. A batch of ``n`` runs
uses ``spawn_generators(seed, n)``; run ``i`` of the batch equals a single run seeded with
``spawn_generators(seed, n)[i]``, which is how learners make batched and one-by-one runs agree.

Made cheaply for the many-trial audits, the same Generators (tests/privacct/test_rng.py,
tests/algorithms/test_trial_seeding.py): :func:`child_generators` (child ``j`` of a batch of seeds, one vectorised
hash), :func:`shared_generators` (``n`` Generators of one seed, one hash) and :class:`LazySeedSequence` (a
SeedSequence hashed on first use: its spawned children cost no hash).
"""

from __future__ import annotations

import operator
from typing import Sequence

import numpy as np

from .errors import PrivacctError, check_count


def spawn_sequences(seed: int | np.random.SeedSequence, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent child seed sequences of ``seed`` (an int >= 0 or a SeedSequence)."""
    n = check_count("n", n)
    if isinstance(seed, np.random.SeedSequence):
        ss = seed
    else:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise PrivacctError(f"seed must be an integer >= 0, got {seed!r}")
        ss = np.random.SeedSequence(int(seed))
    return ss.spawn(n)


def spawn_generators(seed: int | np.random.SeedSequence, n: int) -> list[np.random.Generator]:
    """``n`` independent ``numpy.random.Generator`` (PCG64) spawned from ``seed``."""
    return [np.random.default_rng(s) for s in spawn_sequences(seed, n)]


# numpy's SeedSequence hash (numpy/random/bit_generator.pyx, after M. O'Neill's seed_seq; the constants are numpy's)
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _MASK32 = 0xCA01F9DD, 0x4973F715, 0xFFFFFFFF


def _words(n: int) -> list[int]:
    """``n`` >= 0 as little-endian 32-bit words (0 -> [0]), as numpy's SeedSequence reads an int."""
    out = [n & _MASK32]
    n >>= 32
    while n:
        out.append(n & _MASK32)
        n >>= 32
    return out


def _pcg64_seeds(words: np.ndarray, pool_size: int) -> np.ndarray:
    """(B, 4) uint64: ``generate_state(4, np.uint64)`` of the SeedSequences whose assembled entropy (run entropy
    padded to the pool, then the spawn key, as uint32 words) is each row of ``words`` (B, L): numpy's mix_entropy
    and generate_state, vectorised over rows (uint32 arithmetic wraps like numpy's C code)."""
    u32 = np.uint32
    hc = _INIT_A

    def hashmix(v):   # v: (B,) uint32, a new array; advances the hash constant
        nonlocal hc
        v = v ^ u32(hc)
        hc = (hc * _MULT_A) & _MASK32
        v *= u32(hc)
        v ^= v >> u32(16)
        return v

    def mix(x, y):
        r = u32(_MIX_L) * x - u32(_MIX_R) * y
        r ^= r >> u32(16)
        return r

    B, L = words.shape
    zero = np.zeros(B, dtype=u32)
    pool = [hashmix(words[:, i] if i < L else zero) for i in range(pool_size)]
    for src in range(pool_size):
        for dst in range(pool_size):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    for src in range(pool_size, L):
        for dst in range(pool_size):
            pool[dst] = mix(pool[dst], hashmix(words[:, src]))
    out = np.empty((B, 8), dtype=u32)
    hb = _INIT_B
    for i in range(8):   # generate_state(8 uint32 words), cycling over the pool
        v = pool[i % pool_size] ^ u32(hb)
        hb = (hb * _MULT_B) & _MASK32
        v *= u32(hb)
        v ^= v >> u32(16)
        out[:, i] = v
    return out.astype("<u4").view("<u8").astype(np.uint64)


class _Seeded(np.random.bit_generator.ISpawnableSeedSequence):
    """The SeedSequence(entropy, spawn_key, pool_size) of a generator made by :func:`child_generators` (``spawn_key``
    the parent seed's key + ``(j,)``, built when asked) or :func:`shared_generators`: its PCG64 seed words are
    precomputed (``generate_state(4, uint64)``); anything else (``spawn``, ``entropy``, ``pool``...) is the real
    SeedSequence's, built on first use. ``lend``: the seed words (a row of the batch's array, this object's alone) are
    handed over to the first caller, PCG64, without a copy; later calls get numpy's own."""

    __slots__ = ("_state", "_entropy", "_key", "_j", "_pool", "_real", "_lend")

    def __init__(self, state: np.ndarray, entropy, spawn_key, pool_size: int, j: int | None = None, *,
                 lend: bool = False) -> None:
        self._state, self._entropy, self._key, self._j, self._pool = state, entropy, spawn_key, j, pool_size
        self._real, self._lend = None, lend

    @property
    def _args(self) -> tuple:
        key = self._key if self._j is None else tuple(self._key.spawn_key) + (self._j,)
        return self._entropy, key, self._pool

    def real(self) -> np.random.SeedSequence:
        if self._real is None:
            e, k, p = self._args
            self._real = np.random.SeedSequence(e, spawn_key=k, pool_size=p)
        return self._real

    def generate_state(self, n_words, dtype=np.uint32):
        if (dtype is np.uint64 and n_words == 4) or (int(n_words) == 4 and np.dtype(dtype) == np.uint64):   # PCG64's
            if self._lend:
                self._lend, state, self._state = False, self._state, None
                return state
            if self._state is not None:
                return self._state.copy()
        return self.real().generate_state(n_words, dtype)

    def spawn(self, n_children):
        return self.real().spawn(n_children)

    def __getattr__(self, name):
        if name.startswith("_"):   # unset slots, pickling and copying hooks: this object's own (no recursion)
            raise AttributeError(name)
        return getattr(self.real(), name)

    def __reduce__(self):   # pickled, copied: the real SeedSequence (its spawn counter too, once built)
        return (_seed_sequence, self._args) if self._real is None else self._real.__reduce__()


def _seed_sequence(entropy, spawn_key: tuple, pool_size: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(entropy, spawn_key=spawn_key, pool_size=pool_size)


DEFAULT_POOL_SIZE = 4   # numpy's DEFAULT_POOL_SIZE (numpy.random.bit_generator)
_INT = frozenset((int,))


class LazySeedSequence(np.random.SeedSequence):
    """``numpy.random.SeedSequence(entropy, spawn_key=, pool_size=, n_children_spawned=)`` whose hash (``pool``) is
    computed on first use: every value is numpy's (``entropy``, ``spawn_key``, ``pool_size``, ``pool``, ``state``,
    ``generate_state``, ``spawn``'s children -- lazy too, as numpy's ``spawn`` makes ``type(self)`` -- and the spawn
    counter); reading only ``entropy``, ``spawn_key`` and ``pool_size`` (what :func:`child_generators` reads) costs no
    hash. Entropy must be an int >= 0 (else numpy's hash runs at once). Pickles and copies as itself."""

    __slots__ = ("_args", "_ready")

    def __init__(self, entropy=None, *, spawn_key=(), pool_size=DEFAULT_POOL_SIZE, n_children_spawned=0) -> None:
        key = tuple(spawn_key)
        self._args = (entropy, key, pool_size, n_children_spawned)
        self._ready = False
        if (isinstance(entropy, bool) or not isinstance(entropy, (int, np.integer)) or entropy < 0
                or type(pool_size) is not int or pool_size < DEFAULT_POOL_SIZE
                or (key and (not set(map(type, key)) <= _INT or min(key) < 0))):
            self._real()   # anything but the plain case: numpy's own checks and hash now

    def _real(self) -> "LazySeedSequence":
        if not self._ready:
            e, k, p, n = self._args
            np.random.SeedSequence.__init__(self, e, spawn_key=k, pool_size=p, n_children_spawned=n)
            self._ready = True
        return self

    entropy = property(lambda self: self._args[0])
    spawn_key = property(lambda self: self._args[1])
    pool_size = property(lambda self: self._args[2])
    pool = property(lambda self: _BASE_POOL.__get__(self._real()))
    n_children_spawned = property(lambda self: _BASE_COUNT.__get__(self._real()))

    def generate_state(self, n_words, dtype=np.uint32):
        return np.random.SeedSequence.generate_state(self._real(), n_words, dtype)

    def spawn(self, n_children):
        return np.random.SeedSequence.spawn(self._real(), n_children)

    def __repr__(self) -> str:
        return np.random.SeedSequence.__repr__(self._real())

    def __reduce__(self):
        return _lazy_seed_sequence, (*self._args[:3], self.n_children_spawned if self._ready else self._args[3])


_BASE_POOL, _BASE_COUNT = np.random.SeedSequence.pool, np.random.SeedSequence.n_children_spawned


def _lazy_seed_sequence(entropy, spawn_key: tuple, pool_size: int, n_children_spawned: int) -> LazySeedSequence:
    return LazySeedSequence(entropy, spawn_key=spawn_key, pool_size=pool_size, n_children_spawned=n_children_spawned)


def lazy_copy(seed: np.random.SeedSequence) -> np.random.SeedSequence:
    """``seed`` as a :class:`LazySeedSequence` (same entropy, spawn key, pool size and spawn counter: the same children,
    made without hashing), or ``seed`` itself when its entropy is not an int >= 0."""
    if isinstance(seed, LazySeedSequence):
        return seed
    e = seed.entropy
    if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or e < 0:
        return seed
    return LazySeedSequence(e, spawn_key=tuple(seed.spawn_key), pool_size=seed.pool_size,
                            n_children_spawned=seed.n_children_spawned)


_ENTROPY_POOL, _SPAWN_KEY = operator.attrgetter("entropy", "pool_size"), operator.attrgetter("spawn_key")
_FAMILY_TYPES = frozenset((np.random.SeedSequence, LazySeedSequence))


def _family(seeds: Sequence[np.random.SeedSequence]) -> tuple[list[int], int, np.ndarray] | None:
    """(run entropy words padded to the pool, pool size, spawn keys (B, n) int64) when every seed is a SeedSequence with
    the same integer entropy and pool size and a spawn key of one length with 32-bit entries (a family of siblings);
    else None."""
    first = seeds[0]
    e, p = first.entropy, first.pool_size
    if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or e < 0:
        return None
    if not set(map(type, seeds)) <= _FAMILY_TYPES or set(map(_ENTROPY_POOL, seeds)) != {(e, p)}:
        return None
    try:
        keys = np.array(list(map(_SPAWN_KEY, seeds)), dtype=np.int64)
    except (OverflowError, ValueError):   # a key past 2^63, or keys of different lengths
        return None
    if keys.ndim != 2 or (keys.size and (keys.min() < 0 or keys.max() > _MASK32)):
        return None
    run = _words(int(e))
    return run + [0] * max(0, p - len(run)), p, keys


def child_generators(seeds: Sequence[np.random.SeedSequence], j: int) -> list[np.random.Generator]:
    """``[default_rng(SeedSequence(s.entropy, spawn_key=s.spawn_key + (j,), pool_size=s.pool_size)) for s in seeds]``
    (child ``j`` of each seed, its spawn counter untouched): the same Generators, the same bytes (tested), about three
    times cheaper for a family of sibling seeds (one vectorised hash instead of one SeedSequence per seed); any other
    list takes numpy's own path."""
    seeds = list(seeds)
    j = int(j)
    fam = _family(seeds) if seeds and 0 <= j <= _MASK32 else None
    if fam is None:
        return [np.random.default_rng(np.random.SeedSequence(s.entropy, spawn_key=tuple(s.spawn_key) + (j,),
                                                             pool_size=s.pool_size)) for s in seeds]
    run, pool_size, keys = fam
    words = np.empty((len(seeds), len(run) + keys.shape[1] + 1), dtype=np.uint32)
    words[:, :len(run)] = run
    words[:, len(run):-1] = keys
    words[:, -1] = j
    states = _pcg64_seeds(words, pool_size)
    entropy = seeds[0].entropy
    gen, pcg, seeded = np.random.Generator, np.random.PCG64, _Seeded
    return [gen(pcg(seeded(st, entropy, s, pool_size, j, lend=True))) for st, s in zip(states, seeds, strict=True)]


def shared_generators(seed: np.random.SeedSequence, n: int) -> list[np.random.Generator]:
    """``[default_rng(seed) for _ in range(n)]``: ``n`` >= 0 Generators in one state, all sharing ``seed`` as their
    ``seed_seq`` (a spawn from any of them advances its one counter): the same Generators, the same bytes (tested),
    with one hash (numpy's own ``generate_state``) instead of ``n``."""
    state = np.asarray(seed.generate_state(4, np.uint64))
    shared = _Seeded(state, seed.entropy, tuple(seed.spawn_key), seed.pool_size)
    shared._real = seed
    return [np.random.Generator(np.random.PCG64(shared)) for _ in range(int(n))]


def as_generators(rngs: np.random.Generator | Sequence[np.random.Generator]) -> list[np.random.Generator]:
    """Normalise one Generator or a sequence of them to a non-empty list (the batch axis)."""
    if isinstance(rngs, np.random.Generator):
        return [rngs]
    out = list(rngs)
    if not out or not all(issubclass(t, np.random.Generator) for t in set(map(type, out))):   # isinstance, per type
        raise PrivacctError("rngs must be a numpy Generator or a non-empty sequence of them")
    return out
