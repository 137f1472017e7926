"""The one-seed rollout in plain Python (algorithms/linear_mdp/common._play_one) gives the states and actions of the
batched numpy rollout (TabularMDP.sample_next: the first s' with u < F(s')), draw for draw: on the benchmark's
environment, and on cdf rows with ties (zero-probability states), a uniform equal to a cdf entry, a row whose sum
rounds above 1 before its last entry, and u = 1 (not a Generator value: numpy's argmax of all False)."""

from types import SimpleNamespace

import numpy as np
import pytest

from privacct.algorithms.envs.linear_mdp import make_linear_env
from privacct.algorithms.envs.tabular import TabularMDP
from privacct.algorithms.linear_mdp import common as C


class _Fixed:
    """A stand-in generator whose ``random(H)`` returns given uniforms."""

    def __init__(self, u):
        self.u = np.asarray(u, dtype=float)

    def random(self, n):
        assert n == self.u.size
        return self.u.copy()


def test_one_seed_rollouts_are_the_batched_ones_on_the_benchmark_env():
    env = make_linear_env("linear-d10-h10")
    H, S, A = env.horizon, env.n_states, env.n_actions
    rng = np.random.default_rng(0)
    for k in range(300):
        pol = rng.integers(0, A, size=(1, H, S))
        r1, r2 = np.random.default_rng([k, 1]), np.random.default_rng([k, 1])
        got = C.play_episode(env, pol, [r1])
        want = C.batched_rollout(env, pol, r2.random(H)[None, :])
        assert all(g.dtype == np.int64 and g.shape == w.shape and np.array_equal(g, w) for g, w in zip(got, want, strict=True))
        assert r1.random() == r2.random()            # the same draws consumed


def _crafted():
    H, S, A = 3, 4, 2
    P = np.zeros((H, S, A, S))
    P[..., :] = [0.5, 0.0, 0.0, 0.5]                  # ties: F = (0.5, 0.5, 0.5, 1)
    P[:, :, 1] = [0.1, 0.2, 0.7, 0.0]                 # F = (0.1, 0.30000000000000004, 1.0, 1.0)
    P[1, :, 1] = [1 / 3, 1 / 3, 1 / 3, 0.0]
    P[2, :, 1] = [0.7, 0.2, 0.1, 0.0]
    tab = TabularMDP(P, np.zeros((H, S, A)))
    return SimpleNamespace(horizon=H, initial_state=0, tabular=tab), tab


def test_crafted_rows_and_uniforms_on_the_cdf_entries():
    env, tab = _crafted()
    H, S = env.horizon, tab.P.shape[1]
    cdf_vals = sorted({float(v) for v in tab._cdf.ravel()} | {0.0, 0.1, 0.3, 1 / 3, 2 / 3})
    us = [v for v in cdf_vals if v < 1.0] + [np.nextafter(v, 0.0) for v in cdf_vals if v > 0.0] + [1.0]
    rng = np.random.default_rng(1)
    for _ in range(400):
        u = rng.choice(us, size=H)
        pol = rng.integers(0, 2, size=(1, H, S))
        got = C.play_episode(env, pol, [_Fixed(u)])
        want = C.batched_rollout(env, pol, u[None, :])
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), (u, pol)


def test_a_row_summing_above_one_before_its_last_entry():
    # find a probability row whose cumulative sum passes 1.0 before the last entry (set to 1.0 by TabularMDP)
    rng = np.random.default_rng(2)
    for _ in range(10_000):
        p = rng.dirichlet(np.ones(5))
        p[-1] = 0.0
        p /= p.sum()
        if np.cumsum(p)[-2] > 1.0:
            break
    else:
        pytest.skip("no row above 1.0 found")
    P = np.broadcast_to(p, (2, 5, 1, 5)).copy()
    tab = TabularMDP(P, np.zeros((2, 5, 1)))
    assert tab._cdf[0, 0, 0, -2] > tab._cdf[0, 0, 0, -1] == 1.0
    env = SimpleNamespace(horizon=2, initial_state=0, tabular=tab)
    pol = np.zeros((1, 2, 5), dtype=np.int64)
    for v in list(tab._cdf[0, 0, 0]) + [0.999999999999, np.nextafter(1.0, 0.0)]:
        u = np.array([v, 0.5]) if v < 1.0 else np.array([0.5, 0.5])
        got = C.play_episode(env, pol, [_Fixed(u)])
        assert np.array_equal(got[0], C.batched_rollout(env, pol, u[None, :])[0])


def test_history_counts_every_seed_step_visit_once():
    """History.add's buffered += (one distinct index tuple per (seed, step)) counts as np.add.at and a loop do."""
    env = make_linear_env("linear-d10-h10")
    B, H, S, A = 4, env.horizon, env.n_states, env.n_actions
    hist = C.History(env, B)
    ref = np.zeros_like(hist.N)
    rng = np.random.default_rng(3)
    for _ in range(50):
        states = rng.integers(0, 2, size=(B, H + 1))      # two states: many repeated (s, a, s') across steps
        actions = rng.integers(0, 2, size=(B, H))
        hist.add(states, actions)
        for b in range(B):
            for h in range(H):
                ref[b, h, states[b, h], actions[b, h], states[b, h + 1]] += 1.0
    assert hist.N.tobytes() == ref.tobytes() and ref.sum() == 50 * B * H
    assert S > 2 and A > 2


@pytest.mark.parametrize("name,privacy,kw", [("private-lsvi-ucb", "jdp", dict(epsilon=5.0, delta=1e-5,
                                                                               calibration="tight")),
                                             ("lsvi-ucb", "none", {})])
def test_a_seed_run_alone_is_its_run_in_a_batch(name, privacy, kw):
    """End to end: one seed alone (the plain-Python rollout) gives the bytes it gives among three (the numpy one)."""
    from privacct.algorithms.contract import RunConfig
    from privacct.algorithms.registry import get_learner
    from privacct.rng import spawn_sequences

    cfg = RunConfig(name, privacy, episodes=200, env="linear-d10-h10", **kw)
    spec = get_learner(name)
    batch = spec.run(cfg, spawn_sequences(2024, 3))
    for i in (0, 2):
        one = spec.run(cfg, [spawn_sequences(2024, 3)[i]])
        assert np.asarray(one.regret)[0].tobytes() == np.asarray(batch.regret)[i].tobytes()
        assert one.info["n_updates"][0] == batch.info["n_updates"][i]
        if "final_release" in batch.info:       # the Gram releases: sums of every episode's visited features
            assert one.info["final_release"][0].tobytes() == batch.info["final_release"][i].tobytes()
