"""Linear mixture environments: valid kernels, phi_V consistent with P, exact values, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.envs.linear_mixture import (LM_ENVS, hard_to_learn, hypercube_actions, make_linear_mixture_env,
                                            riverswim_kernel, riverswim_lm)
from privacct.errors import PrivacctError


@pytest.mark.parametrize("env", [riverswim_lm(3), riverswim_lm(4, homogeneous=False), hard_to_learn(episodes=1000)])
def test_phi_v_reproduces_bellman_expectation(env):
    rng = np.random.default_rng(0)
    V = rng.uniform(0, 1, size=(4, env.n_states))
    phi = env.phi_v(V)                                           # (B, SA, d)
    for h in range(env.horizon):
        lhs = phi @ env.theta[h]                                 # <phi_V(s,a), theta_h>
        rhs = np.einsum("sat,bt->bsa", env.P[h], V).reshape(4, -1)
        np.testing.assert_allclose(lhs, rhs, atol=1e-12)


def test_riverswim_sizes_rewards_and_homogeneous_case():
    env = riverswim_lm(5)
    assert (env.n_states, env.n_actions, env.horizon, env.dim) == (5, 2, 10, 50)
    assert env.rewards[0, 0, 0] == pytest.approx(5 / (1000 * 10)) and env.rewards[0, 4, 1] == pytest.approx(1 / 10)
    np.testing.assert_allclose(env.P[3], riverswim_kernel(5, 0.9))
    inh = riverswim_lm(5, homogeneous=False)
    p_stay = inh.P[:, 4, 1, 4]                                   # = p_h at the right end
    assert np.all((p_stay >= 0.8) & (p_stay <= 1.0)) and np.ptp(p_stay) > 0
    assert inh.optimal_value() != env.optimal_value()
    # one-hot: sup ||phi_V|| over V in [0,1]^S is ||1_S|| = sqrt(S)
    assert env.phi_norm_bound == pytest.approx(np.sqrt(5))


def test_optimal_value_dominates_every_deterministic_policy_and_matches_brute_force():
    env = riverswim_lm(3)
    H, S, A = env.horizon, env.n_states, env.n_actions
    rng = np.random.default_rng(1)
    pols = rng.integers(0, A, size=(200, H, S))
    vals = env.policy_values(pols)
    assert np.all(vals <= env.optimal_value() + 1e-12)
    # the greedy policy of Q* attains V*
    Q = env.mdp.optimal_q()
    assert env.regret(Q.argmax(-1)[None])[0] == pytest.approx(0.0, abs=1e-12)


def test_hard_to_learn_structure():
    env = hard_to_learn(d=5, horizon=6, episodes=10_000)
    assert (env.n_states, env.n_actions, env.dim) == (8, 16, 5)
    acts = hypercube_actions(5)
    assert acts.shape == (16, 4) and np.all(acts[0] == -1) and np.all(acts[-1] == 1)
    # from chain state h the next state is h+1 or the rewarding absorbing state H+1
    for h in range(6):
        support = np.flatnonzero(env.P[h, h].sum(axis=0) > 0)
        assert set(support) == {h + 1, 7}
    assert np.all(env.P[:, 6, :, 6] == 1.0) and np.all(env.P[:, 7, :, 7] == 1.0)
    # P_h(jump | x_h, a) = 1/H + <mu_h, a> with |<mu_h, a>| <= (d-1) Delta
    Delta = np.sqrt(1 / 6 / 10_000) / (4 * np.sqrt(2))
    for h in range(6):
        jump = env.P[h, h, :, 7]
        assert np.all(np.abs(jump - 1 / 6) <= 4 * Delta + 1e-12) and np.ptp(jump) > 0
    # the phi-norm bound is attained by some vertex V and bounds random V
    rng = np.random.default_rng(2)
    V = rng.uniform(0, 1, size=(50, env.n_states))
    assert np.linalg.norm(env.phi_v(V), axis=-1).max() <= env.phi_norm_bound + 1e-12


@pytest.mark.parametrize("kwargs, match", [
    (dict(name="nope"), "env must be one of"),
    (dict(name="riverswim-lm", n_states=2), "n_states"),
    (dict(name="hard-to-learn", n_states=5), "n_states"),
    (dict(name="hard-to-learn", d=20), "d must be"),
    (dict(name="hard-to-learn", episodes=0), "episodes"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(PrivacctError, match=match):
        make_linear_mixture_env(**kwargs)


def test_all_named_envs_build():
    for name in LM_ENVS:
        env = make_linear_mixture_env(name, episodes=100)
        assert env.optimal_value() > 0
