"""The compiled optimistic value iteration (planning_jit) gives numpy's bytes: policy and truncated Q, on
noisy models (negative "probabilities"), saturated bonuses (ties at the truncation bounds), exact ties,
and a NaN entry (propagated the way numpy propagates it)."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.tabular.planning import plan_vi, plan_vi_numpy


def _model(rng, B, H, S, A, bonus):
    base = rng.standard_normal((B, H, S, A)) - bonus
    P = rng.standard_normal((B, H, S * A, S)) * 0.3 + 1.0 / S
    return base, P


@pytest.mark.parametrize("B, H, S, A", [(1, 20, 6, 2), (3, 5, 4, 3), (2, 7, 9, 5)])
@pytest.mark.parametrize("bonus", [0.0, 3.0, 50.0])
def test_compiled_equals_numpy_bytes(B, H, S, A, bonus):
    rng = np.random.default_rng(11)
    for _ in range(5):
        base, P = _model(rng, B, H, S, A, bonus)
        base[..., 1 % A] = base[..., 0]  # exact ties between actions
        for rq in (False, True):
            got, want = plan_vi(base, P, return_q=rq), plan_vi_numpy(base, P, return_q=rq)
            got, want = (got, want) if rq else ((got,), (want,))
            for g, w in zip(got, want, strict=True):
                assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()


def test_nan_propagates_as_in_numpy():
    rng = np.random.default_rng(2)
    base, P = _model(rng, 2, 4, 3, 3, 1.0)
    base[1, 3, 2, 1] = np.nan
    got, want = plan_vi(base, P, return_q=True), plan_vi_numpy(base, P, return_q=True)
    assert got[0].tobytes() == want[0].tobytes()
    assert np.array_equal(got[1], want[1], equal_nan=True)
