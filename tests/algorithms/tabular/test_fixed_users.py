"""The tabular audit hook (algorithms/tabular/learner.py): the nodes [1, 2^j] over K - 1 leaves, LDP
reports, other users as canary A's response function, and the accounted eps of the report's settings."""

import math

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, RunConfig
from privacct.algorithms.tabular import LEARNERS
from privacct.algorithms.tabular.stats import split
from privacct.log import tree_depth
from privacct.rng import spawn_sequences


def _run(alg, priv, *, K, H=3, n=4, seed=0, canary="A", mult=1.0, cal="paper"):
    cfg = RunConfig(alg, priv, epsilon=1.0, calibration=cal, episodes=K, horizon=H)
    return LEARNERS[alg].run_observed(cfg, spawn_sequences(seed, n), audit=AuditHook(canary, noise_multiplier=mult))


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
@pytest.mark.parametrize("K, nodes", [(2, [1]), (6, [1, 2, 4]), (8, [1, 2, 4]), (9, [1, 2, 4, 8])])
def test_jdp_observation_is_every_node_of_user_one_over_k_minus_1_leaves(alg, K, nodes):
    r = _run(alg, "jdp", K=K, canary="B")
    assert [b.name for b in r.observation.blocks] == [f"counts node [1, {t}]" for t in nodes]
    assert len(nodes) == tree_depth(K - 1)
    for b in r.observation.blocks:
        assert b.scale == r.log.group("counts").noise_scale and b.mechanism == "laplace"
        assert np.all(b.values != b.mean_b)                     # every coordinate of every node is noised
        assert np.abs(b.values - b.mean_b).mean() == pytest.approx(b.scale, rel=0.2)  # Laplace(b): E|noise| = b


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
def test_ldp_observation_is_user_ones_report(alg):
    r = _run(alg, "ldp", K=5, canary="B")
    (b,) = r.observation.blocks
    assert b.name == "counts report of user 1" and b.scale == pytest.approx(3 * 3 / 1.0)  # printed 3H / eps
    assert np.abs(b.mean_a - b.mean_b).sum() == 6 * 3                                      # 6H: any two trajectories
    assert np.abs(b.values - b.mean_b).mean() == pytest.approx(9.0, rel=0.15)


@pytest.mark.parametrize("priv", ["jdp", "ldp"])
def test_fixed_users_follow_canary_a_responses_with_prescribed_actions(priv):
    K, H = 7, 3
    r = _run("ucb-po", priv, K=K, H=H, n=6, mult=1e-9)   # noise 1e-9 of its scale: the sums are the data
    N, C, _ = split(r.info["final_release"], H, 6, 2)
    users = K - 1 if priv == "jdp" else K
    N = N.reshape(6, H, 6, 2)
    assert np.allclose(N.sum(axis=(2, 3)), users)             # one visit per user and step
    assert np.allclose(N[:, :, 1:, :].sum(), 0, atol=1e-6)     # canary A's response: everyone stays in s_1 = 0
    assert np.allclose(C.sum(axis=1), users * H)                # cost 1 at every step
    acts = r.observation.actions
    assert acts.shape == (6, K - 1, H) and np.all(acts == acts[0])   # fixed coins: the same prescriptions per trial


def test_accounted_epsilon_of_the_report_settings():
    # what the audits certify against at K = 4, H = 1: JDP (6H - 3) L / (3H ln K) = 3 x 2 / (3 ln 4), LDP 6H / 3H = 2
    from privacct.accounting import tightest_epsilon
    for priv, want in (("jdp", 2 / math.log(4)), ("ldp", 2.0)):
        cfg = RunConfig("ucb-vi", priv, epsilon=1.0, calibration="paper", episodes=4, horizon=1)
        assert tightest_epsilon(LEARNERS["ucb-vi"].build_log(cfg), delta=0.0)[1] == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
@pytest.mark.parametrize("priv", ["jdp", "ldp"])
@pytest.mark.parametrize("fixed", [True, False])
def test_audited_runs_draw_what_base_generators_draw(alg, priv, fixed, monkeypatch):
    # the learner makes its Generators cheaply (one fixed-coins Generator broadcast over the trials, the noise and
    # roll-out children hashed at once, privacct.rng.child_generators, in privacct.algorithms.contract): the same bytes as
    # one numpy SeedSequence and Generator per trial and stream
    from privacct.algorithms import contract as base
    from privacct.algorithms.tabular import learner as L

    cfg = RunConfig(alg, priv, epsilon=1.0, calibration="paper", episodes=5, horizon=2)

    def run():
        hook = AuditHook("B", fixed_users=fixed)
        return LEARNERS[alg].run_observed(cfg, spawn_sequences(3, 5), audit=hook)

    now = run()
    monkeypatch.setattr(base, "child_generators",   # numpy's own path: one SeedSequence and Generator per trial
                        lambda seeds, j: [np.random.default_rng(base.child_sequence(s, j)) for s in seeds])
    monkeypatch.setattr(L, "_stream_rngs", lambda seeds, j, audit, *, fixed: base.stream_generators(seeds, j, audit,
                                                                                                    fixed=fixed))
    old = run()
    assert np.array_equal(now.regret, old.regret)
    assert np.array_equal(now.info["final_release"], old.info["final_release"])
    for a, b in zip(now.observation.blocks, old.observation.blocks, strict=True):
        assert a.name == b.name and np.array_equal(a.values, b.values)
    assert np.array_equal(now.observation.actions, old.observation.actions)
