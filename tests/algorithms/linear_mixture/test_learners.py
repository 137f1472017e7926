"""Linear-mixture learners: learning, ledger == log, PD handling, seeds, audit hook, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.envs.linear_mixture import hard_to_learn, riverswim_lm
from privacct.algorithms.contract import AuditHook
from privacct.algorithms.linear_mixture import LEARNERS, ldp_trajectory
from privacct.algorithms.linear_mixture.aggregators import safe_inverse
from privacct.accounting import epsilon as account
from privacct.errors import PrivacctError
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences

PRIVATE = [("ldp-ucrl-vtr", "ldp"), ("pp-ucrl-vtr", "jdp"), ("pp-ucrl-vtr", "ldp"),
           ("private-linopt-vi", "jdp"), ("private-linopt-po", "jdp")]


def cfg(name, privacy="none", **kw):
    base = dict(epsilon=1.0, delta=0.1, episodes=20, env="hard-to-learn")
    base.update(kw)
    return RunConfig(name, privacy=privacy, **base)


def test_registry_names_and_contract():
    assert {"ucrl-vtr", "ldp-ucrl-vtr", "private-linopt-vi", "private-linopt-po", "pp-ucrl-vtr"} <= set(LEARNERS)
    for name, spec in LEARNERS.items():
        assert spec.name == name and spec.family == "linear-mixture" and spec.paper


def test_ucrl_vtr_learns_riverswim():
    K = 1000
    r = LEARNERS["ucrl-vtr"].run(cfg("ucrl-vtr", env="riverswim-lm", episodes=K, bonus_scale=0.1), spawn_sequences(0, 3))
    vstar = riverswim_lm(3).optimal_value()
    first, last = r.regret[:, : K // 4].mean(), r.regret[:, -K // 4:].mean()
    assert last < 0.25 * vstar and last < 0.5 * first
    assert r.regret.shape == (3, K) and np.all(r.regret >= -1e-12)


def test_ucrl_vtr_learns_hard_to_learn():
    K = 600
    r = LEARNERS["ucrl-vtr"].run(cfg("ucrl-vtr", episodes=K, bonus_scale=0.1, options=(("instance_episodes", 10),)),
                                 spawn_sequences(1, 4))
    env = hard_to_learn(episodes=10)
    H, S, A = env.horizon, env.n_states, env.n_actions
    uniform = env.regret(np.full((1, H, S, A), 1.0 / A))[0]
    assert r.regret[:, K // 2:].mean() < 0.6 * uniform


@pytest.mark.parametrize("name, privacy", PRIVATE)
@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_ledger_agrees_with_log(name, privacy, calibration):
    c = cfg(name, privacy, episodes=17, calibration=calibration)
    r = LEARNERS[name].run(c, spawn_sequences(3, 2))
    assert r.log is not None and r.ledger is not None
    assert r.log.privacy_model == ("local" if privacy == "ldp" else "joint")
    chk = check_ledger(r.log, r.ledger)
    assert chk.ok, chk.to_dict()
    assert chk.executed_counts == {g.name: g.per_user_count for g in r.log.release_groups}
    if calibration == "tight":
        assert account(r.log, delta=0.1) <= 1.0 * (1 + 1e-6)


@pytest.mark.parametrize("name, privacy", PRIVATE)
def test_paper_log_records_printed_sensitivity(name, privacy):
    log = LEARNERS[name].build_log(cfg(name, privacy, episodes=64))
    for g in log.release_groups:
        assert g.paper is not None and g.paper.sensitivity > 0 and g.paper.equation
        assert g.sensitivity.derivation
    # stage-H transition statistics carry no data and are not released
    assert not any(g.name in ("gram[h=6]", "target[h=6]", "p-gram[h=6]") for g in log.release_groups)


def test_ldp_sensitivity_derivation_uses_real_features():
    env = riverswim_lm(3)
    log = LEARNERS["ldp-ucrl-vtr"].build_log(cfg("ldp-ucrl-vtr", "ldp", env="riverswim-lm", episodes=10))
    g = log.group("target[h=1]")
    vbar = env.reward_max * (env.horizon - 1)
    assert g.sensitivity.value == pytest.approx(2 * math.sqrt(3) * vbar * vbar)
    assert log.group("gram[h=1]").sensitivity.value == pytest.approx(math.sqrt(2) * 3 * vbar**2)
    # printed: sigma = 4H sqrt(2 log(2.5H/delta))/eps with rewards / H (seed 001 §6)
    H = env.horizon
    assert g.noise_scale == pytest.approx(4 * H * math.sqrt(2 * math.log(2.5 * H / 0.1)))


def test_safe_inverse_reports_non_pd():
    S = np.stack([np.eye(3) * 2.0, np.diag([1.0, -1.0, 2.0])])
    inv, bad = safe_inverse(S, floor=0.5)
    assert bad.tolist() == [False, True]
    np.testing.assert_allclose(inv[0], np.eye(3) / 2)
    np.testing.assert_allclose(inv[1], np.diag([1.0, 2.0, 0.5]))
    assert np.all(np.isfinite(inv))


def test_tiny_shift_non_pd_is_reported_or_raises():
    c = cfg("ldp-ucrl-vtr", "ldp", episodes=30, options=(("shift_scale", 1e-6),))
    r = LEARNERS["ldp-ucrl-vtr"].run(c, spawn_sequences(0, 2))
    assert np.all(r.info["non_pd_events"] > 0) and np.all(np.isfinite(r.regret))
    c2 = cfg("ldp-ucrl-vtr", "ldp", episodes=30, options=(("shift_scale", 1e-6), ("on_non_pd", "error")))
    with pytest.raises(PrivacctError, match="not positive definite"):
        LEARNERS["ldp-ucrl-vtr"].run(c2, spawn_sequences(0, 2))
    # with the theoretical shift nothing is floored
    r3 = LEARNERS["ldp-ucrl-vtr"].run(cfg("ldp-ucrl-vtr", "ldp", episodes=30), spawn_sequences(0, 2))
    assert np.all(r3.info["non_pd_events"] == 0)


@pytest.mark.parametrize("name, privacy, env", [("ldp-ucrl-vtr", "ldp", "hard-to-learn"),
                                                ("private-linopt-po", "jdp", "hard-to-learn")])
def test_batched_equals_one_by_one_on_hard_to_learn(name, privacy, env):
    # the contract test runs RiverSwim; here the other environment, mirror descent, a smaller shift
    c = cfg(name, privacy, env=env, episodes=25, bonus_scale=0.1, options=(("shift_scale", 1e-2),))
    seeds = spawn_sequences(11, 3)
    r = LEARNERS[name].run(c, seeds)
    ones = [LEARNERS[name].run(c, [s]) for s in seeds]
    np.testing.assert_allclose(r.regret, np.concatenate([o.regret for o in ones]), rtol=0, atol=1e-12)
    assert np.array_equal(r.info["final_release"], np.concatenate([o.info["final_release"] for o in ones]))


def test_ldp_canary_trajectories_are_valid():
    for env in (riverswim_lm(4), hard_to_learn(episodes=100)):
        for which in ("A", "B"):
            s, a, s2 = ldp_trajectory(env, which)
            assert s[0] == env.initial_state
            assert np.all(s[1:] == s2[:-1])
            assert np.all(env.P[np.arange(env.horizon), s, a, s2] > 0)
        sa, aa, _ = ldp_trajectory(env, "A")
        sb, ab, _ = ldp_trajectory(env, "B")
        assert np.all((sa != sb) | (aa != ab))


def test_jdp_canaries_share_stage_one_under_seed_000_not_under_seed_003():
    # seed 000 fixes s_1 (Sec. 2): same x_1, so the stage-1 Gram means coincide; seed 003's user owns s_1
    for name, shared in (("private-linopt-vi", True), ("pp-ucrl-vtr", False)):
        c = cfg(name, "jdp", env="riverswim-lm", episodes=2, horizon=3, bonus_scale=1e6, delta=1e-5)
        obs = LEARNERS[name].run_observed(c, spawn_sequences(0, 2), audit=AuditHook("A")).observation
        b = next(x for x in obs.blocks if x.group.endswith("gram[h=1]") and x.group.startswith(("p-", "gram")))
        assert np.array_equal(b.mean_a, b.mean_b) is shared
        d = LEARNERS[name].neighbours(c).group(b.group)
        assert (d.worst_case == 0) is shared


def test_many_seeds_audit_batch_is_cheap():
    import time
    t = time.perf_counter()
    c = cfg("ldp-ucrl-vtr", "ldp", episodes=32)
    r = LEARNERS["ldp-ucrl-vtr"].run_observed(c, spawn_sequences(0, 300), audit=AuditHook("A"))
    assert r.observation.batch == 300
    assert time.perf_counter() - t < 30


@pytest.mark.parametrize("make, match", [
    (lambda: cfg("ucrl-vtr", "ldp"), "privacy must be one of"),
    (lambda: cfg("ldp-ucrl-vtr", "ldp", delta=0.0), "delta"),
    (lambda: cfg("ldp-ucrl-vtr", "ldp", epsilon=-1.0), "epsilon"),
    (lambda: cfg("ldp-ucrl-vtr", "ldp", calibration="loose"), "calibration"),
    (lambda: cfg("ldp-ucrl-vtr", "ldp", env="cartpole"), "env must be one of"),
    (lambda: cfg("ldp-ucrl-vtr", "ldp", options=(("frobnicate", 1),)), "unknown option"),
    (lambda: cfg("ldp-ucrl-vtr", "ldp", options=(("canary", "A"),)), "unknown option"),
    (lambda: cfg("ldp-ucrl-vtr", "ldp", options=(("shift_scale", 0),)), "shift_scale"),
    (lambda: cfg("ldp-ucrl-vtr", "ldp", bonus_scale=-1.0), "bonus_scale"),
    (lambda: cfg("pp-ucrl-vtr", "jdp", options=(("radius", "paper-experiment"),)), "radius"),
    (lambda: cfg("private-linopt-vi", "jdp", episodes=1), "episodes"),
])
def test_bad_arguments_give_clear_errors(make, match):
    """Each bad argument is refused in one line naming it: by RunConfig (the fields it holds) or by the family
    (its options, environments and what a learner needs of K)."""
    with pytest.raises(PrivacctError, match=match):
        config = make()
        LEARNERS[config.algorithm].run(config, spawn_sequences(0, 1))


@pytest.mark.parametrize("env_name", ["riverswim-lm", "hard-to-learn"])
def test_declared_sensitivity_bounds_canary_statistics(env_name):
    """Canary A vs B statistics at clipped values (worst case V = cap) stay within the declared sensitivity."""
    c = cfg("ldp-ucrl-vtr", "ldp", env=env_name, episodes=50)
    log = LEARNERS["ldp-ucrl-vtr"].build_log(c)
    from privacct.algorithms.linear_mixture import make_env
    env = make_env(c, "riverswim-lm")
    rng = np.random.default_rng(0)
    (sa, aa, na), (sb, ab, nb) = ldp_trajectory(env, "A"), ldp_trajectory(env, "B")
    iu = np.triu_indices(env.dim)
    for h in range(env.horizon - 1):
        vbar = env.value_cap(h + 1)
        for V in [np.full((1, env.n_states), vbar), rng.uniform(0, vbar, size=(1, env.n_states))]:
            phi = env.phi_v(V)[0]
            xa, xb = phi[sa[h] * env.n_actions + aa[h]], phi[sb[h] * env.n_actions + ab[h]]
            ya, yb = V[0, na[h]], V[0, nb[h]]
            dgram = (np.outer(xa, xa) - np.outer(xb, xb))[iu]
            assert np.linalg.norm(dgram) <= log.group(f"gram[h={h + 1}]").sensitivity.value + 1e-12
            assert np.linalg.norm(xa * ya - xb * yb) <= log.group(f"target[h={h + 1}]").sensitivity.value + 1e-12


@pytest.mark.parametrize("env", [riverswim_lm(3), hard_to_learn(episodes=100)])
def test_user_side_clip_holds_for_a_malicious_broadcast(env):
    """LDP: the server chooses (Sigma^{-1}, theta). Whatever it sends, V stays in [0, cap] and the
    statistics the user would release stay within the declared sensitivity (docs/seed-001-linear-mixture-ldp.md#sensitivity)."""
    from privacct.algorithms.linear_mixture.planning import plan
    H, d = env.horizon, env.dim
    rng = np.random.default_rng(5)
    B = 6
    theta = rng.normal(0, 1e6, size=(B, H, d))                    # huge, sign-mixed
    Sinv = rng.normal(0, 1e3, size=(B, H, d, d))                  # not even symmetric / PD
    beta = rng.uniform(-1e3, 1e3, size=(B, H))
    Q, Vs, phis = plan(env, theta, Sinv, beta)
    for h in range(H + 1):
        assert np.all(Vs[h] >= 0) and np.all(Vs[h] <= env.value_cap(h) + 1e-12)
    for h in range(H - 1):
        vbar = env.value_cap(h + 1)
        assert np.linalg.norm(phis[h], axis=-1).max() <= env.phi_norm_bound * vbar + 1e-9
    bad = theta.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(PrivacctError, match="non-finite"):
        plan(env, bad, Sinv, beta)


@pytest.mark.parametrize("name, privacy", PRIVATE)
def test_tight_shift_and_radius_follow_the_calibrated_sigma(name, privacy):
    """tight mode recomputes the shift / radius from the sigma that runs, not the printed one."""
    seeds = spawn_sequences(0, 1)
    paper = LEARNERS[name].run(cfg(name, privacy, episodes=12), seeds)
    tight = LEARNERS[name].run(cfg(name, privacy, episodes=12, calibration="tight"), seeds)
    factor = tight.log.release_groups[0].noise_scale / paper.log.release_groups[0].noise_scale
    assert factor < 1  # the printed sigmas over-noise (docs/accounting.md#over-noising-factor; seeds 000, 001, 003)
    for g in tight.log.release_groups:
        assert g.noise_scale == pytest.approx(factor * paper.log.group(g.name).noise_scale, rel=1e-9)
    rec_p, rec_t = paper.info["design"], tight.info["design"]
    if "sigma_run" in rec_t:
        assert rec_t["sigma_run"] == pytest.approx(tight.log.release_groups[0].noise_scale)
    key = "upsilon" if "upsilon" in rec_t else ("upsilon_p" if "upsilon_p" in rec_t else None)
    if key:
        assert rec_t[key] == pytest.approx(factor * rec_p[key])
