"""Tabular MDPs, RiverSwim (docs/seed-002-tabular.md#riverswim) and the Gymnasium-style adapter."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from privacct.algorithms.envs import ENVS, GymAdapter, TabularMDP, make_env, riverswim, stationary
from privacct.errors import PrivacctError


@pytest.mark.parametrize("H, expected", [(20, 3.3973), (40, 11.7881)])
def test_riverswim_optimal_value_pinned(H, expected):
    assert round(riverswim(H).optimal_value(), 4) == expected


def test_riverswim_parameters():
    m = riverswim()
    assert (m.horizon, m.n_states, m.n_actions, m.initial_state) == (20, 6, 2, 0)
    P = m.P[0]
    assert P[3, 0, 2] == 1.0 and P[0, 0, 0] == 1.0
    assert (P[0, 1, 0], P[0, 1, 1]) == (0.4, 0.6)
    assert (P[2, 1, 3], P[2, 1, 2], P[2, 1, 1]) == (0.35, 0.6, 0.05)
    assert (P[5, 1, 5], P[5, 1, 4]) == (0.6, 0.4)
    assert m.R[0, 0, 0] == 0.005 and m.R[0, 5, 1] == 1.0 and m.R[0].sum() == 1.005
    assert np.array_equal(m.P[0], m.P[19])  # stationary


def test_riverswim_optimal_policy_matches_docs():
    # docs/seed-002-tabular.md#riverswim: left in state 0 for h >= 15, state 1 for h >= 17, 2 for h >= 18, 3 for h >= 19, 4 at h = 20
    greedy = riverswim().optimal_q().argmax(axis=2)  # (H, S), 0-based h
    first_left = {0: 15, 1: 17, 2: 18, 3: 19, 4: 20}
    for s, h1 in first_left.items():
        assert np.all(greedy[: h1 - 1, s] == 1), s
        assert np.all(greedy[h1 - 1:, s] == 0), s
    assert np.all(greedy[:, 5] == 1)


def test_reference_regrets():
    m = riverswim()
    right = np.ones((1, 20, 6), dtype=int)
    left = np.zeros((1, 20, 6), dtype=int)
    uniform = np.full((1, 20, 6, 2), 0.5)
    assert m.regret(right)[0] == pytest.approx(0.00063, abs=5e-6)
    assert m.regret(left)[0] == pytest.approx(3.297, abs=5e-4)
    assert m.regret(uniform)[0] == pytest.approx(3.353, abs=5e-4)
    # the optimal (greedy) policy has zero regret
    opt = m.optimal_q().argmax(axis=2)[None]
    assert abs(m.regret(opt)[0]) < 1e-12


def test_deterministic_and_one_hot_stochastic_agree():
    m = riverswim(7)
    rng = np.random.default_rng(3)
    pol = rng.integers(0, 2, size=(5, 7, 6))
    onehot = np.eye(2)[pol]
    np.testing.assert_allclose(m.policy_values(pol), m.policy_values(onehot), atol=1e-12)


def test_step_dependent_model_backward_induction():
    # a 2-step, 2-state MDP whose best action changes with h: exact value by hand
    P = np.zeros((2, 2, 2, 2))
    P[:, :, 0, 0] = 1.0    # action 0 -> state 0
    P[:, :, 1, 1] = 1.0    # action 1 -> state 1
    R = np.zeros((2, 2, 2))
    R[0, 0, 0] = 0.3       # h=1: take 0 in state 0 for 0.3 ...
    R[1, 1, 1] = 1.0       # ... or move to 1 and collect 1 at h=2 (better)
    m = TabularMDP(P, R, 0)
    assert m.optimal_value() == pytest.approx(1.0)
    assert m.policy_values(np.zeros((1, 2, 2), dtype=int))[0] == pytest.approx(0.3)


def test_value_matches_monte_carlo_through_gym_adapter():
    m = riverswim(10)
    pol = np.ones((10, 6), dtype=int)
    pol[:, 5] = 1
    pol[:, 0] = 0  # "left at 0": never reaches the big reward, gets 0.005 per step
    pol[5:, :] = 1
    exact = m.policy_values(pol[None])[0]
    env = GymAdapter(m)
    returns = []
    for ep in range(400):
        s, info = env.reset(seed=ep)
        total, done = 0.0, False
        while not done:
            s, r, term, trunc, info = env.step(pol[info["h"], s])
            total += r
            done = term or trunc
        returns.append(total)
    se = np.std(returns) / np.sqrt(len(returns))
    assert abs(np.mean(returns) - exact) < 4 * se + 1e-9


def test_gym_adapter_reproducible_and_checks():
    env = GymAdapter(riverswim(5))
    traj = []
    for _ in range(2):
        env.reset(seed=11)
        traj.append([env.step(1)[0] for _ in range(5)])
    assert traj[0] == traj[1]
    with pytest.raises(PrivacctError):
        env.step(1)  # episode over
    with pytest.raises(PrivacctError, match="action"):
        env.reset(seed=0)
        env.step(2)
    with pytest.raises(PrivacctError, match="seed"):
        env.reset(seed=-1)


def test_sample_next_follows_kernel():
    m = riverswim()
    u = np.random.default_rng(0).random(200_000)
    nxt = m.sample_next(0, np.full(u.size, 2), np.ones(u.size, dtype=int), u)
    freq = np.bincount(nxt, minlength=6) / u.size
    np.testing.assert_allclose(freq, m.P[0, 2, 1], atol=0.005)


def test_bad_models_raise():
    with pytest.raises(PrivacctError, match="P must"):
        TabularMDP(np.full((1, 2, 1, 2), 0.7), np.zeros((1, 2, 1)))
    with pytest.raises(PrivacctError, match="R"):
        stationary(np.eye(2)[:, None, :], np.full((2, 1), 1.5), 3)
    with pytest.raises(PrivacctError, match="horizon"):
        riverswim(0)
    with pytest.raises(PrivacctError, match="env must be one of"):
        make_env("cartpole")
    with pytest.raises(PrivacctError, match="policy"):
        riverswim().policy_values(np.zeros((1, 3, 6), dtype=int))
    assert "riverswim" in ENVS and make_env("riverswim", 40).horizon == 40


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_random_mdp_optimal_dominates_every_policy(S, A, H, seed):
    rng = np.random.default_rng(seed)
    m = TabularMDP(rng.dirichlet(np.ones(S), size=(H, S, A)), rng.random((H, S, A)), int(rng.integers(S)))
    v_star = m.optimal_value()
    det = rng.integers(0, A, size=(8, H, S))
    sto = rng.dirichlet(np.ones(A), size=(8, H, S))
    assert np.all(m.policy_values(det) <= v_star + 1e-12)
    assert np.all(m.policy_values(sto) <= v_star + 1e-12)
    greedy = m.optimal_q().argmax(axis=2)[None]
    assert m.policy_values(greedy)[0] == pytest.approx(v_star, abs=1e-12)
    assert 0.0 <= v_star <= H


def test_optimal_value_is_computed_once_and_is_the_backward_induction_figure():
    """optimal_value caches V*_1(s_1) (P and R are read-only): the same float as backward induction, read once
    however many batches' regret are taken; a cache keyed wrongly (shared between MDPs) gives another MDP's V*."""
    import numpy as np

    from privacct.algorithms.envs.tabular import stationary

    rng = np.random.default_rng(0)
    mdps = []
    for _ in range(2):
        P = rng.random((3, 2, 3)); P /= P.sum(axis=-1, keepdims=True)
        mdps.append(stationary(P, rng.random((3, 2)), 4))
    for m in mdps:
        v = float(m.optimal_values()[0, m.initial_state])
        assert m.optimal_value() == v and m.optimal_value() == v
    assert mdps[0].optimal_value() != mdps[1].optimal_value()
    calls = []
    m = mdps[0]
    orig = type(m).optimal_values
    try:
        type(m).optimal_values = lambda self: calls.append(1) or orig(self)
        fresh = stationary(m.P[0], m.R[0], 4)
        for _ in range(3):
            fresh.regret(np.zeros((2, 4, 3), dtype=np.int64))
        assert len(calls) == 1
    finally:
        type(m).optimal_values = orig
