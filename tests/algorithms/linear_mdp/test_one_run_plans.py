"""One-run canary plans of the linear-MDP learners (issue 20; docs/auditing.md#one-run-audits-of-learners): each user
plays ``audit.role(k)``, a canary reports her Gram terms under both bits given the same policy, the Gram trees record
the nodes that hold exactly one canary, the response releases stay unobserved, and the batched learner says what a
batched leaf hides."""

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, CanaryPlan, RunConfig
from privacct.algorithms.envs.linear_mdp import make_linear_env
from privacct.algorithms.linear_mdp import LEARNERS
from privacct.algorithms.linear_mdp import canary as CAN
from privacct.algorithms.linear_mdp import common as C
from privacct.audits.one_run_learner import canary_scores, plan_users
from privacct.errors import PrivacctError
from privacct.mechanisms import upper_triangle
from privacct.rng import spawn_sequences
from privacct.tap import AuditTap, tapping


def cfg(name, episodes, **kw):
    kw.setdefault("options", (("beta", 5.0), ("C", 1.000001)) if name == "private-lsvi-ucb" else (("beta", 5.0),))
    return RunConfig(name, "jdp", epsilon=kw.pop("epsilon", 1.0), delta=kw.pop("delta", 1e-5), episodes=episodes,
                     horizon=kw.pop("horizon", 2), calibration=kw.pop("calibration", "paper"), **kw)


def gram(env, states, actions, h):
    phi = env.phi[states[:, h], actions[:, h]]
    return phi[:, :, None] * phi[:, None, :]


@pytest.mark.parametrize("upper", [False, True])
def test_user_episode_plays_each_users_role_and_reports_a_canarys_gram_terms_under_both_bits(upper):
    env = make_linear_env("linear-two-state", 3)
    B = 3
    pol = np.random.default_rng(7).integers(0, env.n_actions, size=(B, env.horizon, env.n_states))
    hook = AuditHook("A", fixed_users=False, plan=CanaryPlan((2, 5), ("B", "A")))
    with tapping(AuditTap(plan=frozenset((2, 5)))) as tap:
        for k in range(1, 7):
            rngs = [np.random.default_rng([k, b]) for b in range(B)]
            got = C.user_episode(k, hook, env, pol, rngs, gram_upper=upper)
            role = hook.role(k)
            want = (C.play_episode(env, pol, [np.random.default_rng([k, b]) for b in range(B)]) if role is None
                    else CAN.rollout(env, role, pol))
            for g, w in zip(got, want, strict=True):
                assert np.array_equal(g, w)
            if role is None:   # the environment's user: she consumed the environment stream
                assert rngs[0].random() != np.random.default_rng([k, 0]).random()
                assert not any(u == k for u, _ in tap.counterfactual)
                continue
            for h in range(env.horizon):   # her Gram terms under A and B, given the same policy
                a, b = tap.counterfactual[(k, f"gram_h{h + 1}")]
                want_a, want_b = (gram(env, *CAN.rollout(env, w, pol), h) for w in "AB")
                if upper:
                    want_a, want_b = upper_triangle(want_a), upper_triangle(want_b)
                assert np.array_equal(a, want_a) and np.array_equal(b, want_b)
    assert sorted({u for u, _ in tap.counterfactual}) == [2, 5]


def test_classic_audits_keep_their_roles_and_report_nothing_one_run():
    env = make_linear_env("linear-two-state", 2)
    pol = np.zeros((1, env.horizon, env.n_states), dtype=np.int64)
    with tapping(AuditTap()) as tap:
        for fixed in (True, False):
            hook = AuditHook("B", fixed_users=fixed)
            assert np.array_equal(C.user_episode(1, hook, env, pol, [np.random.default_rng(0)])[0],
                                  CAN.rollout(env, "B", pol)[0])
            s3 = C.user_episode(3, hook, env, pol, [np.random.default_rng(0)])[0]
            if fixed:
                assert np.array_equal(s3, CAN.rollout(env, "A", pol)[0])
            else:
                assert np.array_equal(s3, C.play_episode(env, pol, [np.random.default_rng(0)])[0])
    assert not tap.counterfactual


def test_private_lsvi_records_the_gram_nodes_holding_exactly_one_canary_and_leaves_y_unobserved():
    users, bits = (1, 9, 17), ("A", "B", "A")
    # at K = 33, eps = 1 the paper's cap ceil(N_max) - 1 is 0 (no update, no y release): update_cap = 1 makes the y
    # releases this test looks for
    opts = (("beta", 5.0), ("C", 1.000001), ("update_cap", 1))
    res = LEARNERS["private-lsvi-ucb"].run(cfg("private-lsvi-ucb", 33, options=opts), spawn_sequences(3, 1),
                                           audit=AuditHook("A", fixed_users=False, plan=CanaryPlan(users, bits)))
    tap = res.tap
    # leaves 1..32, one user each; binary-mechanism nodes are drawn when they complete: user 9 sits in [9, 9],
    # [9, 10], [9, 12] and [1, 16] (with canary 1: unused); user 17 in [17, 17], [17, 18], [17, 20], [17, 24]
    spans = {1: (1, 2, 4, 8), 9: (9, 10, 12), 17: (17, 18, 20, 24)}
    for u in users:
        names = sorted(r.name for r in tap.canary_records if r.user == u)
        assert names == sorted(f"gram_h{h} node [{u}, {t}] of user {u}" for h in (1, 2) for t in spans[u])
    sigma = res.log.release_groups[0].noise_scale
    for r in tap.canary_records:
        own, other = (r.mean_a, r.mean_b) if dict(zip(users, bits, strict=True))[r.user] == "A" else (r.mean_b, r.mean_a)
        assert r.mechanism == "gaussian" and r.scale == sigma and r.values.shape == (1, 55)
        assert np.all(np.abs(r.values - own) < 7 * sigma)         # her Gram term + the node's noise
        if r.user == 1:   # the data-free first policy: e_0 against e_1 (later policies may prescribe one feature
            assert np.abs(own - other).max() > 0   # at both states, e.g. e_2: then the bits give the same Gram term)
    assert not any(r.group == "y" for r in tap.canary_records)
    ys = [u for u in tap.unobserved if u.group == "y"]
    assert ys and all("canary" in u.reason for u in ys)           # y releases over users 1..k-1: named, not observed
    assert int(res.info["n_updates"][0]) >= 1


def test_without_noise_every_canary_is_guessed_right():
    users = plan_users(129, 32)
    bits = tuple("A" if i % 3 else "B" for i in range(len(users)))
    res = LEARNERS["private-lsvi-ucb"].run(cfg("private-lsvi-ucb", 129), spawn_sequences(5, 1),
                                           audit=AuditHook("A", fixed_users=False, noise_multiplier=1e-9,
                                                           plan=CanaryPlan(users, bits)))
    score, count = canary_scores(res.tap.canary_records, users)
    assert np.all(count >= 4)                                      # H = 2 trees x (2 or 3 nodes below the spacing 4)
    assert np.array_equal(np.sign(score), np.where(np.asarray(bits) == "A", 1.0, -1.0))


def test_one_run_plays_the_planted_policy_mutant_too():
    users = plan_users(65, 8)
    hook = AuditHook("A", fixed_users=False, mutant="switch-on-exact-gram",
                     plan=CanaryPlan(users, ("A", "B") * 4))
    res = LEARNERS["private-lsvi-ucb"].run(cfg("private-lsvi-ucb", 65), spawn_sequences(1, 1), audit=hook)
    assert {r.user for r in res.tap.canary_records} == set(users)


def test_same_seed_same_bytes_and_unaudited_runs_untouched():
    c = cfg("private-lsvi-ucb", 65)
    hook = AuditHook("A", fixed_users=False, plan=CanaryPlan(plan_users(65, 8), ("A", "B") * 4))
    r1 = LEARNERS["private-lsvi-ucb"].run(c, spawn_sequences(2, 1), audit=hook)
    r2 = LEARNERS["private-lsvi-ucb"].run(c, spawn_sequences(2, 1), audit=hook)
    assert np.array_equal(r1.regret, r2.regret)
    assert [r.values.tobytes() for r in r1.tap.canary_records] == [r.values.tobytes() for r in r2.tap.canary_records]
    plain = LEARNERS["private-lsvi-ucb"].run(c, spawn_sequences(2, 1))
    assert plain.tap is None


@pytest.mark.parametrize("name", ["batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace"])
def test_batched_leaves_hide_a_canary_and_the_run_says_so(name):
    delta = 0.0 if name.endswith("laplace") else 1e-5
    hook = AuditHook("A", fixed_users=False, plan=CanaryPlan(plan_users(64, 8), ("A", "B") * 4))
    with pytest.raises(PrivacctError, match=r"no canary at K = 64 with 3 batches: every Gram tree leaf holds a "
                                            r"whole batch \(22 users\).*options batches = K") as e:
        LEARNERS[name].run(cfg(name, 64, delta=delta, options=(("beta", 5.0), ("batches", 3))), spawn_sequences(0, 1),
                           audit=hook)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", ["batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace"])
def test_batched_with_one_user_per_batch_records_single_canary_nodes_and_guesses_right_without_noise(name):
    lap = name.endswith("laplace")
    users = plan_users(65, 16)
    bits = tuple("A" if i % 3 else "B" for i in range(len(users)))
    c = cfg(name, 65, delta=0.0 if lap else 1e-5, options=(("beta", 5.0), ("batches", 65)))
    res = LEARNERS[name].run(c, spawn_sequences(4, 1), audit=AuditHook("A", fixed_users=False, noise_multiplier=1e-9,
                                                                      plan=CanaryPlan(users, bits)))
    recs = res.tap.canary_records
    assert {r.group for r in recs} == {"gram_h1", "gram_h2"}
    assert all(r.mechanism == ("laplace" if lap else "gaussian") for r in recs)
    assert sorted(r.name for r in recs if r.user == 5 and r.group == "gram_h1") == [
        "gram_h1 node [5, 5] of user 5", "gram_h1 node [5, 6] of user 5"]
    score, count = canary_scores(recs, users)
    assert np.all(count >= 4)
    assert np.array_equal(np.sign(score), np.where(np.asarray(bits) == "A", 1.0, -1.0))
    assert any(u.group == "u" for u in res.tap.unobserved)       # every u release sums all users: not observed
