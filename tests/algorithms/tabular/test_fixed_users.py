"""Audit-only run options of the tabular learners: ``fixed_users`` and the ``released_path`` /
``released_user1`` observations (algorithms/tabular/learner.py docstring)."""

import math

import numpy as np
import pytest

from privacct.algorithms.base import RunConfig
from privacct.algorithms.tabular import LEARNERS
from privacct.algorithms.tabular.canary import canary_trajectory
from privacct.algorithms.tabular.learner import make_mdp
from privacct.algorithms.tabular.stats import episode_stats
from privacct.errors import PrivacctError
from privacct.log import tree_depth
from privacct.rng import spawn_sequences


def _run(alg, priv, *, K, H=3, n=4, seed=0, canary="A", fixed=True, cal="paper"):
    opts = (("canary", canary), ("fixed_users", fixed), ("observe", True))
    cfg = RunConfig(alg, priv, epsilon=1.0, calibration=cal, episodes=K, horizon=H, options=opts)
    return cfg, LEARNERS[alg].run(cfg, spawn_sequences(seed, n))


def _stats(cfg, which):
    mdp = make_mdp(cfg)
    s, a, c = canary_trajectory(mdp, which)
    return episode_stats(s[None], a[None], c[None], mdp.n_states, mdp.n_actions)[0]


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
@pytest.mark.parametrize("K", [1, 6, 8])
def test_released_path_is_every_node_containing_user_one(alg, K):
    cfg, r = _run(alg, "jdp", K=K, canary="B")
    m = tree_depth(K)
    path, exact = r.info["released_path"], r.info["released_path_exact"]
    d = r.info["released"].shape[1]
    assert path.shape == exact.shape == (4, m * d)
    # noiseless node [1, t] = canary B + (t - 1) copies of canary A, for t = 1, 2, 4, ...
    a, b = _stats(cfg, "A"), _stats(cfg, "B")
    want = np.concatenate([b + (2 ** j - 1) * a for j in range(m)])
    assert np.array_equal(exact, np.broadcast_to(want, exact.shape))
    if K & (K - 1) == 0:  # K a power of two: the final release is the last node of the path
        assert np.array_equal(r.info["released"], path[:, -d:])
    noise = path - exact
    assert np.all(noise != 0)  # every coordinate of every node is noised
    # independent Laplace(b) nodes: mean |noise| = b (4 seeds x m x d draws)
    assert np.abs(noise).mean() == pytest.approx(r.info["noise_scale"], rel=0.15)


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
def test_released_user1_is_the_canary_report(alg):
    cfg, r = _run(alg, "ldp", K=5, canary="B")
    rep, exact = r.info["released_user1"], r.info["released_user1_exact"]
    assert rep.shape == exact.shape == r.info["released"].shape
    assert np.array_equal(exact, np.broadcast_to(_stats(cfg, "B"), exact.shape))
    assert r.info["noise_scale"] == pytest.approx(3 * 3 / 1.0)  # printed 3H / eps
    assert "released_path" not in r.info
    assert np.all(rep != exact) and np.abs(rep - exact).mean() == pytest.approx(9.0, rel=0.15)


@pytest.mark.parametrize("priv", ["jdp", "ldp"])
def test_fixed_users_make_the_dataset_fixed(priv):
    cfg, r = _run("ucb-vi", priv, K=7, n=6)
    key = "released_path_exact" if priv == "jdp" else "released_user1_exact"
    assert np.all(r.info[key] == r.info[key][0])
    assert np.all(r.info["released_exact"] == 7 * _stats(cfg, "A"))  # canary A + 6 fixed users = A
    # without fixed users the other users' data vary across seeds
    _, r2 = _run("ucb-vi", priv, K=7, n=6, fixed=False)
    assert not np.all(r2.info["released_exact"] == r2.info["released_exact"][0])


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
def test_fixed_users_batched_equals_one_by_one(alg):
    _, r = _run(alg, "jdp", K=6, n=3, seed=5)
    seqs = spawn_sequences(5, 3)
    opts = (("canary", "A"), ("fixed_users", True), ("observe", True))
    cfg = RunConfig(alg, "jdp", epsilon=1.0, calibration="paper", episodes=6, horizon=3, options=opts)
    for i, s in enumerate(seqs):
        one = LEARNERS[alg].run(cfg, [s])
        for key in ("released_path", "actions", "released"):
            assert np.array_equal(one.info[key][0], r.info[key][i])


def test_fixed_users_rejects_non_bool():
    with pytest.raises(PrivacctError, match="fixed_users"):
        _run("ucb-vi", "jdp", K=3, fixed="yes")


def test_accounted_epsilon_of_the_small_paper_settings():
    # the numbers tests/audits/test_learner_fixed_users.py certifies against: 2 * 3 / ln 4 and 2
    from privacct.accounting import tightest_epsilon
    for priv, want in (("jdp", 2 * 3 / math.log(4)), ("ldp", 2.0)):
        cfg = RunConfig("ucb-vi", priv, epsilon=1.0, calibration="paper", episodes=4, horizon=1)
        assert tightest_epsilon(LEARNERS["ucb-vi"].build_log(cfg), delta=0.0)[1] == pytest.approx(want, rel=1e-9)
