"""Option pool_over_h (a departure: the seed-002 public code's stationary counts; docs/seed-002-tabular.md#counts-pooled-over-h)."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.accounting import tightest_epsilon
from privacct.algorithms.contract import AuditHook, RunConfig
from privacct.algorithms.tabular import LEARNERS
from privacct.algorithms.tabular.privatizers import tabular_neighbours
from privacct.algorithms.tabular.stats import episode_stats, split
from privacct.errors import PrivacctError
from privacct.rng import spawn_sequences

POOL = (("pool_over_h", True),)


def test_pooled_statistics_are_the_per_step_counts_summed_over_h():
    rng = np.random.default_rng(0)
    B, H, S, A = 4, 5, 3, 2
    states = rng.integers(0, S, (B, H + 1))
    acts = rng.integers(0, A, (B, H))
    costs = rng.random((B, H))
    full = episode_stats(states, acts, costs, S, A)
    pooled = episode_stats(states, acts, costs, S, A, pooled=True)
    n, c, t = split(full, H, S, A)
    assert pooled.shape == (B, 2 * S * A + S * A * S)
    np.testing.assert_allclose(pooled[:, :S * A], n.reshape(B, H, S * A).sum(1))
    np.testing.assert_allclose(pooled[:, S * A:2 * S * A], c.reshape(B, H, S * A).sum(1))
    np.testing.assert_allclose(pooled[:, 2 * S * A:], t.reshape(B, H, S * A * S).sum(1))
    # the planner sees the pooled counts at every step (a stationary model)
    for part in split(pooled, H, S, A, pooled=True):
        per_h = part.reshape(B, H, -1)
        assert np.all(per_h == per_h[:, :1])


@pytest.mark.parametrize("privacy", ["jdp", "ldp"])
def test_pooled_log_has_the_same_sensitivity_and_eps_and_a_shorter_release(privacy):
    spec = LEARNERS["ucb-vi"]
    base = RunConfig("ucb-vi", privacy, epsilon=1.0, episodes=64, horizon=4)
    a, b = spec.build_log(base), spec.build_log(RunConfig("ucb-vi", privacy, epsilon=1.0, episodes=64, horizon=4,
                                                           options=POOL))
    ga, gb = a.group("counts"), b.group("counts")
    S, A = 6, 2
    assert gb.dimension == 2 * S * A + S * A * S and ga.dimension == 4 * gb.dimension
    assert gb.sensitivity.value == ga.sensitivity.value and gb.noise_scale == ga.noise_scale
    assert tightest_epsilon(a, delta=0.0) == tightest_epsilon(b, delta=0.0)
    assert b.params["pool_over_h"] is True and "pooled" in gb.description


@pytest.mark.parametrize("privacy", ["jdp", "ldp"])
def test_pooled_canaries_attain_the_declared_l1_worst_case(privacy):
    # one user still adds H per family: the valid pair moves the pooled release by 6H - 3 (JDP) / 6H (LDP)
    H = 3
    cfg = RunConfig("ucb-vi", privacy, epsilon=1.0, episodes=4, horizon=H, options=POOL)
    obs = LEARNERS["ucb-vi"].run_observed(cfg, spawn_sequences(1, 2), audit=AuditHook("A")).observation
    want = tabular_neighbours(privacy, H).group("counts").worst_case
    for blk in obs.blocks:
        assert np.abs(np.broadcast_to(blk.mean_a - blk.mean_b, blk.values.shape)).sum(axis=1) == pytest.approx(want)


def test_pooled_is_a_different_learner_and_checks_its_option():
    spec = LEARNERS["ucb-vi"]
    tuned = spec.constant_set("tuned")
    a = spec.run(tuned.apply(RunConfig("ucb-vi", episodes=300)), spawn_sequences(2, 2)).regret.sum(1)
    b = spec.run(tuned.apply(RunConfig("ucb-vi", episodes=300, options=POOL)), spawn_sequences(2, 2)).regret.sum(1)
    assert not np.allclose(a, b)
    with pytest.raises(PrivacctError, match="option pool_over_h must be true or false"):
        spec.build_log(RunConfig("ucb-vi", "jdp", options=(("pool_over_h", "yes"),)))
