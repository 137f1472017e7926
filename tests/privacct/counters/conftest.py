"""A strategy of one's own, in one file's worth of code: the toy every registry test registers.

``prefix-noise`` is the simple counting mechanism that noises every prefix sum afresh (Chan, Shi, Song 2011,
Sec. 3.1, "Simple Counting Mechanism I"): R = A (user s is in every release t >= s), L = I (release t holds z_t
alone). A Toeplitz strategy: column 1 of R is (1, ..., 1), so one user costs one release at multiplier
||column 1|| = sqrt(K) (l2) or K (l1); every prefix has one node variance. Registering it is all it takes to
appear in ``privacct.log.FACTORIZED_STRATEGIES``, the CLI's ``--strategy`` and ``--counter`` choices, the log
schema, ``compare`` and the accountants (tests/privacct/counters/test_registry.py)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from privacct.counters.base import ToeplitzStrategy
from privacct.counters.registry import register, unregister


class PrefixNoise(ToeplitzStrategy):
    name: ClassVar[str] = "prefix-noise"
    summary: ClassVar[str] = "every prefix noised afresh: R = A, L = I (Chan, Shi, Song 2011, Sec. 3.1)"

    def column_coefficients(self, spec, n):
        return np.ones(n)

    def column_sums(self, spec):
        K = float(spec.leaves)
        return K, K                                  # sum of r_k^2 and of |r_k| over K ones: exact

    def release_noise_column(self, spec, n):
        return np.eye(1, n)[0]                       # L = I

    def init_parameters(self, counter):
        pass                                         # no coefficients: the release noise is z_t itself

    def init_mixing_state(self, counter, st, batch, shape):
        pass

    def mix_noise(self, counter, st, t, z):
        st._noise = np.array(z, dtype=float)

    def mixing_parameters(self, counter):
        return ()


@pytest.fixture
def registered():
    """register(strategy) for the test's duration: unregistered at teardown, whatever the test did."""
    names = []

    def add(strategy):
        register(strategy)
        names.append(strategy.name)
        return strategy

    yield add
    for n in names:
        unregister(n)


@pytest.fixture
def toy_class():
    """The ``prefix-noise`` strategy's class, not registered."""
    return PrefixNoise


@pytest.fixture
def toy(registered):
    """The ``prefix-noise`` strategy, registered for the test's duration."""
    return registered(PrefixNoise())
