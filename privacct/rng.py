"""Seeding: every random stream comes from ``numpy.random.SeedSequence.spawn``.

The same ``seed`` always gives the same Generators, so the same bytes. A batch of ``n`` runs
uses ``spawn_generators(seed, n)``; run ``i`` of the batch equals a single run seeded with
``spawn_generators(seed, n)[i]``, which is how learners make batched and one-by-one runs agree.
"""

from __future__ import annotations

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


def as_generators(rngs: np.random.Generator | Sequence[np.random.Generator]) -> list[np.random.Generator]:
    """Normalise one Generator or a sequence of them to a non-empty list (the batch axis)."""
    if isinstance(rngs, np.random.Generator):
        return [rngs]
    out = list(rngs)
    if not out or not all(isinstance(r, np.random.Generator) for r in out):
        raise PrivacctError("rngs must be a numpy Generator or a non-empty sequence of them")
    return out
