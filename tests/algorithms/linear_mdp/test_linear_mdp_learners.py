"""Linear-MDP learners: LSVI-UCB learns; the private learners' logs, ledgers, switching caps,
positive definiteness, seeds, audit hooks and argument checks."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.envs.linear_mdp import make_linear_env
from privacct.algorithms.linear_mdp import LEARNERS
from privacct.algorithms.linear_mdp import common as C
from privacct.algorithms.linear_mdp import batched_jdp, private_lsvi_ucb as P
from privacct.errors import NumericalError, PrivacctError
from privacct.ledger import check_ledger
from privacct.log import tree_depth
from privacct.privacy_report import privacy_report
from privacct.rng import spawn_sequences

PRIVATE = ("batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace", "private-lsvi-ucb")


def cfg(name, **kw):
    opts = kw.pop("options", (("beta", 5.0),))
    if name in PRIVATE:
        kw.setdefault("privacy", "jdp")
        kw.setdefault("epsilon", 50.0)
        kw.setdefault("delta", 1e-5)
    return RunConfig(name, options=opts, **kw)


def test_registry_contents():
    assert set(LEARNERS) == {"lsvi-ucb", "batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace", "private-lsvi-ucb"}
    for name, spec in LEARNERS.items():
        assert spec.name == name and spec.family == "linear-mdp" and spec.default_env == "linear-two-state"


def test_lsvi_ucb_learns():
    res = LEARNERS["lsvi-ucb"].run(cfg("lsvi-ucb", episodes=1000), spawn_sequences(0, 2))
    r = res.regret.mean(0)
    assert res.regret.shape == (2, 1000)
    assert r[-200:].mean() < 0.25 * r[:200].mean()  # V*_1 = 4.2; random play loses about 2.9
    assert r[-200:].mean() < 0.6


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_batched_equals_one_by_one_across_policy_updates(name):
    # the contract test covers a short run; here 120 episodes, so that policy updates are compared too
    c = cfg(name, episodes=120, options=(("beta", 5.0),))
    seeds = spawn_sequences(11, 3)
    batched = LEARNERS[name].run(c, seeds)
    for i, s in enumerate(seeds):
        one = LEARNERS[name].run(c, [s])
        assert np.array_equal(batched.regret[i], one.regret[0])
        if name != "lsvi-ucb":
            assert np.array_equal(batched.info["final_release"][i], one.info["final_release"][0])
    if name != "lsvi-ucb":
        assert batched.info["n_updates"].min() >= 1          # the comparison covered policy updates


def test_private_lsvi_ucb_ledger_matches_log_and_cap_holds():
    c = cfg("private-lsvi-ucb", episodes=64, calibration="paper", epsilon=50.0, options=(("beta", 5.0), ("C", 1.5)))
    log = LEARNERS["private-lsvi-ucb"].build_log(c)
    res = LEARNERS["private-lsvi-ucb"].run(c, spawn_sequences(5, 3))
    cap, H, K = res.info["cap"], 5, 64
    assert log.group("y").structure.kind == "adaptive" and log.group("y").structure.max_count == H * cap
    for b, led in enumerate(res.info["ledgers"]):
        chk = check_ledger(log, led)
        assert chk.ok
        for h in range(1, H + 1):
            assert chk.executed_counts[f"gram_h{h}"] == tree_depth(K - 1) == chk.declared_counts[f"gram_h{h}"]
        n = int(res.info["n_updates"][b])
        assert 1 <= n <= cap
        assert chk.executed_counts.get("y", 0) == H * n
        assert len(res.info["update_episodes"][b]) == n


def test_switching_never_exceeds_cap_when_noise_triggers_every_episode():
    # C barely above 1: the noisy log-det test fires almost every episode, so only the hard cap stops it.
    c = cfg("private-lsvi-ucb", episodes=200, calibration="paper", epsilon=2.0, options=(("beta", 5.0), ("C", 1.0000001)))
    res = LEARNERS["private-lsvi-ucb"].run(c, spawn_sequences(1, 4))
    cap = res.info["cap"]
    assert np.all(res.info["n_updates"] == cap)
    assert np.all(res.info["cap_reached_episode"] > 0)
    log = LEARNERS["private-lsvi-ucb"].build_log(c)
    for led in res.info["ledgers"]:
        assert check_ledger(log, led).executed_counts["y"] == 5 * cap


def test_batched_jdp_ledger_equals_log():
    c = cfg("batched-jdp-lsvi-ucb", episodes=300, calibration="paper")
    log = LEARNERS["batched-jdp-lsvi-ucb"].build_log(c)
    res = LEARNERS["batched-jdp-lsvi-ucb"].run(c, spawn_sequences(2, 2))
    n_rel = log.params["n_releases"]
    assert np.all(res.info["n_updates"] == n_rel) and n_rel == log.params["B"] - 1
    chk = check_ledger(log, res.ledger)
    assert chk.ok and chk.executed_counts == chk.declared_counts
    assert chk.declared_counts["u"] == 5 * n_rel and chk.declared_counts["gram_h1"] == tree_depth(n_rel)
    assert list(res.info["release_episodes"]) == log.params["release_episodes"]


def test_paper_mode_verify_shows_what_printed_constants_deliver():
    c = cfg("private-lsvi-ucb", episodes=1000, calibration="paper", epsilon=1.0, delta=1e-5)
    log = LEARNERS["private-lsvi-ucb"].build_log(c)
    H, rho = 5, log.params["rho"]
    assert math.isclose(rho + 2 * math.sqrt(rho * math.log(1e5)), 1.0, rel_tol=1e-12)
    rep = privacy_report(log)
    assert not rep.holds and rep.tightest_epsilon > 1.0
    y = next(g for g in rep.groups if g["name"] == "y")
    # docs/seed-004-private-lsvi-ucb.md#lemma-15-sums-sensitivities: the paper's own argument gives the y part rho/2; the printed variance
    # 6 H^2 N_max / rho with Lemma 14's sensitivity 2H+2 delivers (H+1)^2 rho / (3H) (times N_cap / N_max
    # with the hard cap N_cap = ceil(N_max) - 1 < N_max).
    n_max, cap = log.params["N_max_thm11"], log.params["N_cap"]
    assert math.isclose(y["paper_rho"], rho / 2, rel_tol=1e-9) and log.params["rho_claimed_y"] == rho / 2
    assert math.isclose(y["derived_rho"], (H + 1) ** 2 * rho / (3 * H) * cap / n_max, rel_tol=1e-9)
    assert y["derived_rho"] > 3 * y["paper_rho"]
    assert math.isclose(log.params["rho_y_printed_constants"], (H + 1) ** 2 * rho / (3 * H))
    assert any("'y'" in c and "Lemma 15" in c for c in rep.causes)   # the paper's own step that is wrong
    tight = LEARNERS["private-lsvi-ucb"].build_log(cfg("private-lsvi-ucb", episodes=1000, calibration="tight", epsilon=1.0))
    rep_t = privacy_report(tight)
    assert rep_t.holds and rep_t.tightest_epsilon <= 1.0 * (1 + 1e-9) and rep_t.tightest_epsilon > 0.99


def test_printed_constants_match_the_docs_worked_numbers():
    pc = P.printed_constants(10 ** 4, 5, 4, 1.0, 0.05)
    assert round(pc["lam_tilde"], 1) == 281.6 and round(pc["N_max"], 2) == 66.08 and round(pc["sigma_y"], 2) == 99.56
    assert abs(P.theory_beta(10 ** 4, 5, 4, pc["lam_tilde"], pc["lam_y"], 0.05) - 3.50e4) < 100
    sc = P.sound_constants(10 ** 4, 5, 4, 1.0, 0.05)
    assert round(sc["sigma_node"], 2) == 11.83 and round(sc["lam_tilde"], 1) == 1674.7 and round(sc["sigma_y"], 1) == 136.8
    assert abs(C.zcdp_rho(1.0, 1e-5) - 0.02082) < 1e-5 and abs(C.zcdp_rho(5.0, 1e-5) - 0.4496) < 1e-4


def test_floor_or_report_non_positive_definite():
    M = np.stack([np.diag([2.0, 3.0]), np.array([[1.0, 2.0], [2.0, 1.0]])])       # second has eigenvalue -1
    with pytest.raises(NumericalError, match="not positive definite"):
        C.floored_logdet(M, 0.5, allow_floor=False, what="test")
    out, logdet, low = C.floored_logdet(M, 0.5, allow_floor=True, what="test")
    assert list(low) == [False, True] and np.all(np.isfinite(logdet))
    assert np.linalg.eigvalsh(out[1]).min() >= 0.5 - 1e-12 and np.array_equal(out[0], M[0])
    assert math.isclose(logdet[0], math.log(6.0)) and math.isclose(logdet[1], math.log(0.5 * 3.0))


def test_eig_floor_false_runs_clean_when_matrices_stay_pd():
    c = cfg("private-lsvi-ucb", episodes=60, options=(("beta", 5.0), ("eig_floor", False)))
    res = LEARNERS["private-lsvi-ucb"].run(c, spawn_sequences(0, 2))
    assert np.all(np.isfinite(res.regret)) and np.all(res.info["floor_events"] == 0)


@pytest.mark.parametrize("name", PRIVATE)
def test_canaries_get_the_pure_actions_and_user_one_is_not_in_the_actions(name):
    from privacct.algorithms.contract import AuditHook
    from privacct.algorithms.linear_mdp.canary import rollout
    env = make_linear_env("linear-two-state")
    c = cfg(name, episodes=8)
    res = LEARNERS[name].run_observed(c, spawn_sequences(4, 5), audit=AuditHook("B"))
    assert res.observation.actions.shape == (5, 7, 5)            # users 2..K only
    pol0 = C.data_free_policy(env, 1, 1.0, 5.0)
    for kind, s in (("A", 0), ("B", 1)):
        states, actions = rollout(env, kind, pol0)
        assert np.all(states == s)
        assert np.all(env.phi[s, actions[0]] == np.eye(env.dim)[s])  # the pure action e_s at every step


def test_bad_arguments():
    run = LEARNERS["private-lsvi-ucb"].run
    seeds = spawn_sequences(0, 1)
    with pytest.raises(PrivacctError, match="privacy"):
        run(cfg("private-lsvi-ucb", privacy="none", episodes=10), seeds)
    with pytest.raises(PrivacctError, match="unknown option"):
        run(cfg("private-lsvi-ucb", episodes=10, options=(("bogus", 1),)), seeds)
    with pytest.raises(PrivacctError, match="unknown option"):
        run(cfg("private-lsvi-ucb", episodes=10, options=(("canary", "A"),)), seeds)
    with pytest.raises(PrivacctError, match="episodes"):
        run(cfg("private-lsvi-ucb", episodes=1), seeds)
    with pytest.raises(PrivacctError, match="delta"):
        run(cfg("private-lsvi-ucb", episodes=10, delta=0.0), seeds)
    with pytest.raises(PrivacctError, match="epsilon"):
        run(cfg("private-lsvi-ucb", episodes=10, epsilon=-1.0), seeds)
    with pytest.raises(PrivacctError, match="options.C"):
        run(cfg("private-lsvi-ucb", episodes=10, options=(("C", 1.0),)), seeds)
    with pytest.raises(PrivacctError, match="env"):
        run(cfg("private-lsvi-ucb", episodes=10, env="riverswim"), seeds)
    with pytest.raises(PrivacctError, match="seeds"):
        run(cfg("private-lsvi-ucb", episodes=10), [0])
    with pytest.raises(PrivacctError, match="batches"):
        LEARNERS["batched-jdp-lsvi-ucb"].run(cfg("batched-jdp-lsvi-ucb", episodes=10, options=(("batches", 1),)), seeds)
    with pytest.raises(PrivacctError, match="privacy"):
        LEARNERS["lsvi-ucb"].run(RunConfig("lsvi-ucb", privacy="jdp", episodes=10), seeds)
    with pytest.raises(PrivacctError, match="lambda"):
        LEARNERS["lsvi-ucb"].run(RunConfig("lsvi-ucb", episodes=10, options=(("lambda", 0.0),)), seeds)


def test_seed003_printed_constants_match_the_docs_table():
    # docs/seed-003-linear-representation.md#worked-numbers: H = 5, d = 5, delta = 0.1, p = 0.1, K = 1e4
    pc = batched_jdp.printed_constants(10 ** 4, 5, 5, 1.0, 0.1, 0.1)
    assert (pc["B"], pc["B0"]) == (11, 5)
    assert round(pc["sigma_lam"], -4) == 2.8e5 and round(pc["sigma_u"], -4) == 6.2e5
    assert round(5 * pc["upsilon"], -7) == 2.7e8
    beta = batched_jdp.theory_beta(10 ** 4, 5, 5, pc["lambda"], 5 * pc["upsilon"], pc["sigma_u"], 0.1)
    assert round(beta, -7) == 1.5e8
    pc = batched_jdp.printed_constants(10 ** 4, 5, 5, 0.1, 0.1, 0.1)
    assert (pc["B"], pc["B0"]) == (5, 4) and round(pc["sigma_lam"], -5) == 1.4e6 and round(pc["sigma_u"], -5) == 3.4e6
    # static schedule k_i = i ceil(K/B) + 1: releases after episodes i ceil(K/B), none after the last episode
    assert list(batched_jdp.schedule(100, 7)) == [15, 30, 45, 60, 75, 90]
    assert list(batched_jdp.schedule(10, 5)) == [2, 4, 6, 8]


def test_non_pd_noisy_matrices_are_floored_and_counted_or_raise(monkeypatch):
    # Shrink the printed shift lam~ to 1e-3 of its value while keeping the node noise: the shifted
    # noisy Gram matrices are then indefinite, which must be floored (and counted) or reported.
    real = P.printed_constants

    def small_shift(*a, **k):
        out = dict(real(*a, **k))
        out["lam_tilde"] *= 1e-3
        return out

    monkeypatch.setattr(P, "printed_constants", small_shift)
    P.plan.cache_clear()
    try:
        c = cfg("private-lsvi-ucb", episodes=40, calibration="paper", epsilon=1.0)
        res = LEARNERS["private-lsvi-ucb"].run(c, spawn_sequences(0, 2))
        assert np.all(res.info["floor_events"] > 0) and np.all(np.isfinite(res.regret))
        bad = cfg("private-lsvi-ucb", episodes=40, calibration="paper", epsilon=1.0, options=(("beta", 5.0), ("eig_floor", False)))
        with pytest.raises(NumericalError, match="not positive definite"):
            LEARNERS["private-lsvi-ucb"].run(bad, spawn_sequences(0, 2))
    finally:
        P.plan.cache_clear()


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=2 ** 32 - 1), st.floats(min_value=0.01, max_value=5.0),
       st.floats(min_value=0.0, max_value=3.0))
def test_floored_logdet_property(seed, floor, spread):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(6, 4, 4)) * spread
    M = (Z + np.swapaxes(Z, 1, 2)) / 2 + floor * np.eye(4) * rng.uniform(0.2, 3.0, size=(6, 1, 1))
    out, logdet, low = C.floored_logdet(M, floor, allow_floor=True, what="property")
    w = np.linalg.eigvalsh(out)
    assert np.all(w >= floor * (1 - 1e-9))
    sign, ref = np.linalg.slogdet(out)
    assert np.all(sign > 0) and np.allclose(logdet, ref, rtol=1e-9, atol=1e-9)
    untouched = np.linalg.eigvalsh(M)[:, 0] >= floor * (1 + 1e-9)
    assert np.all(~low[untouched]) and np.array_equal(out[~low], M[~low])


def test_observation_holds_every_release_of_user_one_in_update_order():
    from privacct.algorithms.contract import AuditHook
    K, H = 32, 5
    c = cfg("private-lsvi-ucb", episodes=K, options=(("beta", 5.0), ("C", 1.5)))
    res = LEARNERS["private-lsvi-ucb"].run_observed(c, spawn_sequences(9, 3), audit=AuditHook("A"))
    obs, cap = res.observation, res.info["cap"]
    grams = [b for b in obs.blocks if b.group.startswith("gram")]
    ys = [b for b in obs.blocks if b.group == "y"]
    most = int(np.max(res.info["n_updates"]))   # the update slots some seed reached (at most the cap)
    assert len(grams) == H * tree_depth(K - 1) and len(ys) == H * most and most <= cap
    for b in range(3):
        n = int(res.info["n_updates"][b])
        present = [True if blk.present is None else blk.present[b] for blk in ys]
        assert n >= 1 and present == [i < n for i in range(most) for _ in range(H)]


def test_batched_laplace_variant_app_e3():
    # App. E.3 read with Thm 8's chain and simple composition: B = ceil((K eps)^{1/3} / (d^{2/3} H^{1/3})),
    # b_Lam = 4 H B B0 / eps, b_u = 8 H^2 B / eps (docs/seed-003-linear-representation.md#pure-dp-variants)
    spec = LEARNERS["batched-jdp-lsvi-ucb-laplace"]
    paper = RunConfig("batched-jdp-lsvi-ucb-laplace", "jdp", epsilon=0.5, delta=0.0, episodes=10_000, calibration="paper",
                      options=(("beta", 5.0),))
    log = spec.build_log(paper)
    assert log.params["B"] == 3 and log.params["B0"] == 3 and log.params["n_releases"] == 2
    assert log.group("gram_h1").noise_scale == pytest.approx(4 * 5 * 3 * 3 / 0.5)
    assert log.group("u").noise_scale == pytest.approx(8 * 25 * 3 / 0.5)
    assert all(g.mechanism == "laplace" and g.sensitivity.norm == "l1" for g in log.release_groups)
    assert log.group("gram_h1").sensitivity.value == pytest.approx(2.0)      # simplex features: attained by e_0, e_1
    assert log.group("u").sensitivity.value == pytest.approx(2 * 6)          # 2 max||phi||_1 (H + 1)
    by_hand = 5 * tree_depth(2) * 2.0 / 360 + 5 * 2 * 12.0 / 1200           # H trees x depth + H x 2 responses
    assert privacy_report(log).tightest_epsilon == pytest.approx(by_hand, rel=1e-9)
    tight = spec.build_log(RunConfig("batched-jdp-lsvi-ucb-laplace", "jdp", epsilon=0.5, delta=0.0, episodes=10_000,
                                     calibration="tight", options=(("beta", 5.0),)))
    assert privacy_report(tight).tightest_epsilon == pytest.approx(0.5, rel=1e-9)
    # the Gaussian learner is unchanged by the variant
    assert LEARNERS["batched-jdp-lsvi-ucb"].build_log(RunConfig("batched-jdp-lsvi-ucb", "jdp", epsilon=0.5, delta=1e-5,
                                                                episodes=10_000)).group("u").mechanism == "gaussian"
    with pytest.raises(PrivacctError, match="delta must be in \\(0, 1\\)"):
        LEARNERS["batched-jdp-lsvi-ucb"].build_log(RunConfig("batched-jdp-lsvi-ucb", "jdp", delta=0.0))
