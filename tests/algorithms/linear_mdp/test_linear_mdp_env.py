"""The synthetic linear MDPs: norm assumptions of Jin et al. 2020 / seeds 003-004, exact values,
the linear structure of Q*, and valid audit canaries."""

from itertools import product

import numpy as np
import pytest

from privacct.algorithms.envs.linear_mdp import LINEAR_ENVS, LinearMDP, make_linear_env, simplex_linear_mdp
from privacct.errors import PrivacctError


@pytest.fixture(params=sorted(LINEAR_ENVS))
def env(request):
    return make_linear_env(request.param)


def test_instances_have_the_requested_shapes():
    two = make_linear_env("linear-two-state")
    assert (two.n_states, two.dim, two.horizon) == (2, 10, 5) and two.n_actions >= 20
    big = make_linear_env("linear-d10-h10")
    assert (big.dim, big.horizon) == (10, 10)


def test_norm_assumptions_hold(env):
    d = env.dim
    # measured independently of check_assumptions
    assert np.linalg.norm(env.phi, axis=-1).max() <= 1 + 1e-12
    assert np.linalg.norm(env.theta, axis=-1).max() <= np.sqrt(d) + 1e-12
    if env.n_states <= 12:
        verts = np.array(list(product((-1.0, 1.0), repeat=env.n_states)))
        worst = max(np.linalg.norm(env.mu[h] @ v) for h in range(env.horizon) for v in verts)
        assert worst <= np.sqrt(d) + 1e-12
    P = np.einsum("sad,hdt->hsat", env.phi, env.mu)
    assert P.min() >= -1e-12 and np.allclose(P.sum(-1), 1.0)
    R = np.einsum("sad,hd->hsa", env.phi, env.theta)
    assert R.min() >= -1e-12 and R.max() <= 1 + 1e-12
    out = env.check_assumptions()
    assert out["phi_norm"] <= 1 + 1e-12 and out["mu_norm"] <= out["sqrt_d"] + 1e-12


def test_check_assumptions_catches_a_violation():
    e = make_linear_env("linear-two-state")
    bad = LinearMDP.build(e.phi, e.theta * 4.0, e.mu, initial_state=e.initial_state)
    with pytest.raises(PrivacctError, match="theta"):
        bad.check_assumptions()


def test_q_star_is_linear_in_phi(env):
    Q = env.tabular.optimal_q()
    w = env.optimal_w()
    assert np.allclose(Q, np.einsum("sad,hd->hsa", env.phi, w), atol=1e-10)
    # Jin et al. Lemma B.1 / seed 003 Lemma 18: ||w_h^*|| <= 2 H sqrt(d)
    assert np.linalg.norm(w, axis=1).max() <= 2 * env.horizon * np.sqrt(env.dim)


def test_regret_is_exact_and_nonnegative(env):
    rng = np.random.default_rng(0)
    pol = rng.integers(0, env.n_actions, size=(50, env.horizon, env.n_states))
    r = env.regret(pol)
    assert np.all(r >= -1e-12) and r.max() > 0.5        # random play is clearly suboptimal
    opt = np.argmax(env.tabular.optimal_q(), axis=2)[None]
    assert abs(env.regret(opt)[0]) < 1e-12


def test_canaries_are_valid_and_extreme(env):
    from privacct.algorithms.linear_mdp.canary import rollout
    from privacct.algorithms.linear_mdp.common import data_free_policy
    pol = data_free_policy(env, 1, 1.0, 5.0)
    (sa, aa), (sb, ab) = rollout(env, "A", pol), rollout(env, "B", pol)
    sa, aa, sb, ab = sa[0], aa[0], sb[0], ab[0]
    H = env.horizon
    for s, a in ((sa, aa), (sb, ab)):
        assert s.shape == (H + 1,) and a.shape == (H,)
        assert all(env.tabular.P[h, s[h], a[h], s[h + 1]] > 0 for h in range(H))  # valid trajectories too
    fa, fb = env.phi[sa[:H], aa], env.phi[sb[:H], ab]
    assert np.allclose(np.linalg.norm(fa, axis=1), 1) and np.allclose((fa * fb).sum(1), 0)
    assert np.all(env.tabular.R[np.arange(H), sa[:H], aa] == 1.0)
    assert np.all(env.tabular.R[np.arange(H), sb[:H], ab] == 0.0)
    with pytest.raises(PrivacctError, match="canary"):
        rollout(env, "C", pol)


def test_bad_arguments():
    with pytest.raises(PrivacctError, match="env must be one of"):
        make_linear_env("nope")
    with pytest.raises(PrivacctError, match="horizon"):
        make_linear_env("linear-two-state", 0)
    with pytest.raises(PrivacctError, match="n_home"):
        simplex_linear_mdp(n_states=2, n_actions=3, dim=5, horizon=2, n_home=4)


def test_n_home_limit_depends_on_the_number_of_states():
    """A state s >= 2 draws its home factors from 2..d-1 only: with 3 states and d = 5, n_home = 4 once
    looped forever; it is refused, n_home = 3 is built, and with 2 states n_home = d - 1 is built."""
    with pytest.raises(PrivacctError, match=r"n_home must be in \[1, min\(n_actions, dim - 2\)\] = \[1, 3\]"):
        simplex_linear_mdp(n_states=3, n_actions=5, dim=5, horizon=2, n_home=4)
    assert simplex_linear_mdp(n_states=3, n_actions=5, dim=5, horizon=2, n_home=3).phi.shape == (3, 5, 5)
    assert simplex_linear_mdp(n_states=2, n_actions=5, dim=5, horizon=2, n_home=4).phi.shape == (2, 5, 5)
    with pytest.raises(PrivacctError, match="phi"):
        LinearMDP.build(np.zeros((2, 3)), np.zeros((1, 3)), np.zeros((1, 3, 2)))


def test_instance_is_fixed():
    a, b = make_linear_env("linear-two-state"), make_linear_env("linear-two-state")
    assert np.array_equal(a.phi, b.phi) and np.array_equal(a.mu, b.mu)
    assert make_linear_env("linear-two-state", 3).horizon == 3
