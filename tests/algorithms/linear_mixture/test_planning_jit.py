"""The compiled greedy planning (planning_jit) gives numpy's bytes, including d >= 8 (pairwise sums),
negative quadratic forms (the max with 0), clipping at both ends, and a NaN broadcast (refused)."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.envs.linear_mixture import make_linear_mixture_env
from privacct.algorithms.linear_mixture.planning import plan, plan_numpy
from privacct.algorithms.linear_mixture.planning_jit import MAX_DIM, _pairwise
from privacct.errors import PrivacctError


def _broadcast(rng, B, H, d, spread):
    theta = rng.standard_normal((B, H, d)) * spread
    M = rng.standard_normal((B, H, d, d))
    Sinv = (M @ np.swapaxes(M, -1, -2)) / d - 0.3 * np.eye(d)  # indefinite: some quadratic forms < 0
    beta = rng.random((B, H)) * spread
    return theta, Sinv, beta


@pytest.mark.parametrize("name, d", [("riverswim-lm", None), ("hard-to-learn", 3), ("hard-to-learn", 9),
                                     ("hard-to-learn", 11)])
@pytest.mark.parametrize("B", [1, 3])
def test_compiled_equals_numpy_bytes(name, d, B):
    env = make_linear_mixture_env(name, horizon=None, episodes=100, n_states=None, d=d, instance_seed=0)
    rng = np.random.default_rng(5)
    for spread in (0.01, 1.0, 100.0):  # nothing clipped .. everything clipped
        theta, Sinv, beta = _broadcast(rng, B, env.horizon, env.dim, spread)
        caps = rng.random(env.horizon) * env.horizon
        for c in (None, caps):
            got = plan(env, theta, Sinv, beta, caps=c)
            want = plan_numpy(env, theta, Sinv, beta, caps=c)
            for g, w in zip(got, want, strict=True):
                assert g.shape == w.shape and g.tobytes() == w.tobytes()


def test_nan_broadcast_refused_by_both():
    env = make_linear_mixture_env("riverswim-lm", horizon=None, episodes=100, n_states=None, d=None, instance_seed=0)
    theta, Sinv, beta = _broadcast(np.random.default_rng(1), 2, env.horizon, env.dim, 1.0)
    theta[1, 0, 0] = np.nan
    for fn in (plan, plan_numpy):
        with pytest.raises(PrivacctError, match="non-finite optimistic Q"):
            fn(env, theta, Sinv, beta)


def test_pairwise_sum_is_numpys_row_sum():
    rng = np.random.default_rng(3)
    for n in range(1, MAX_DIM + 1):
        x = rng.standard_normal((4, n)) * 10.0 ** rng.integers(-8, 9, size=(4, n))
        want = x.sum(-1)
        got = np.array([_pairwise(np.ascontiguousarray(r), n) for r in x])
        assert got.tobytes() == want.tobytes(), n
