"""One-run audits of learners (audits/one_run_learner.py, docs/auditing.md#one-run-audits)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, CanaryPlan, RunConfig
from privacct.algorithms.registry import get_learner
from privacct.audits.one_run_learner import canary_scores, one_run_audit_learner, plan_users
from privacct.cli import main
from privacct.errors import PrivacctError
from privacct.rng import spawn_sequences


def test_plan_spaces_canaries_by_a_power_of_two_within_the_tree_leaves():
    assert plan_users(20_000, 1000) == tuple(1 + 16 * j for j in range(1000))
    assert plan_users(1001, 1000) == tuple(range(1, 1001))
    with pytest.raises(PrivacctError, match="canaries must be at most K - 1"):
        plan_users(10, 10)


@pytest.mark.parametrize("counter", ["tree", None])
def test_a_tree_release_is_used_only_when_it_holds_exactly_one_canary(counter):
    """The printed tree (named), and tight's own choice tree-honaker (no option: the audited run runs it, as the
    unaudited run does; docs/auditing.md#factorized-counters), which also noises the dyadic nodes the tree skips."""
    users = (1, 9, 17)
    cfg = RunConfig("ucb-vi", "jdp", epsilon=1.0, episodes=32, horizon=2, calibration="tight",
                    options=() if counter is None else (("counter", counter),))
    r = get_learner("ucb-vi").run(cfg, spawn_sequences(0, 1), audit=AuditHook("A", plan=CanaryPlan(users, ("A", "B", "A"))))
    by_user = {u: [rec.name for rec in r.tap.canary_records if rec.user == u] for u in users}
    if counter == "tree":
        # user 9 sits in [9, 9], [9, 10], [9, 12], [1, 16] (with canary 1: unused), [1, 32] (three canaries: unused)
        assert by_user[9] == ["counts node [9, 9] of user 9", "counts node [9, 10] of user 9", "counts node [9, 12] of user 9"]
        assert by_user[1] == [f"counts node [1, {t}] of user 1" for t in (1, 2, 4, 8)]
    else:
        # tree-honaker noises every dyadic node: [9, 16] too (holds canary 9 alone); [1, 16], [1, 32] hold two or three
        assert by_user[9] == [f"counts tree-honaker node over users 9..{t} of user 9" for t in (9, 10, 12, 16)]
        assert by_user[1] == [f"counts tree-honaker node over users 1..{t} of user 1" for t in (1, 2, 4, 8)]
    for rec in r.tap.canary_records:   # the release minus the non-canary users = her contribution + noise
        bit = {1: "A", 9: "B", 17: "A"}[rec.user]
        own = rec.mean_a if bit == "A" else rec.mean_b
        assert np.all(np.abs(rec.values - own) < 60 * rec.scale)


def test_without_noise_every_guess_is_right():
    users = plan_users(64, 16)
    bits = tuple("A" if i % 3 else "B" for i in range(16))
    cfg = RunConfig("ucb-vi", "ldp", epsilon=1.0, episodes=64, horizon=1, calibration="tight")
    r = get_learner("ucb-vi").run(cfg, spawn_sequences(1, 1),
                                  audit=AuditHook("A", noise_multiplier=1e-9, plan=CanaryPlan(users, bits)))
    score, count = canary_scores(r.tap.canary_records, users)
    assert np.all(count == 1)
    assert np.array_equal(np.sign(score), np.where(np.asarray(bits) == "A", 1.0, -1.0))


def test_sound_over_repeated_one_run_audits_of_a_correct_learner():
    # ucb-vi LDP (tight): every canary's whole loss is observed (her own report), so the bound can approach the
    # accounted eps; over 50 audits it may exceed it at most at the confidence's rate (binomial(50, 0.05) > 6:
    # probability < 0.04)
    over, bounds = 0, []
    for seed in range(50):
        r = one_run_audit_learner("ucb-vi", privacy="ldp", canaries=256, episodes=257, horizon=1, calibration="tight",
                                  seed=seed)
        bounds.append(r.epsilon_lower_bound)
        over += r.epsilon_lower_bound > r.accounted_epsilon
    assert over <= 6, bounds
    assert max(bounds) > 0.2   # not vacuous: the audit sees the canaries


def test_the_printed_ldp_constants_fail_in_one_run():
    # seed 002 LDP, printed noise: accounted 2 for the claim eps = 1 (docs/seed-002-tabular.md#h-versus-2h)
    r = one_run_audit_learner("ucb-vi", privacy="ldp", canaries=1000, episodes=1001, horizon=1, calibration="paper")
    assert r.verdict == "fails" and 1.0 < r.epsilon_lower_bound <= r.accounted_epsilon


def test_a_record_passed_whole_is_the_configuration_audited():
    # one resolution path: the keyword form reads into the same RunConfig a caller may pass whole, and the result
    # holds that record (its fields read as the result's own), never copies of its fields
    cfg = RunConfig("ucb-vi", "ldp", epsilon=1.0, episodes=65, horizon=1, calibration="tight")
    whole = one_run_audit_learner(cfg, canaries=64, seed=3)
    loose = one_run_audit_learner("ucb-vi", privacy="ldp", episodes=65, horizon=1, canaries=64, seed=3)
    assert whole.config is cfg and loose.config == cfg
    assert (whole.algorithm, whole.privacy, whole.episodes, whole.horizon) == ("ucb-vi", "ldp", 65, 1)
    a, b = whole.to_dict(), loose.to_dict()
    a.pop("seconds"), b.pop("seconds")
    assert a == b and {k: a[k] for k in ("algorithm", "privacy", "calibration", "episodes", "horizon")} == {
        k: v for k, v in cfg.to_dict().items() if k in ("algorithm", "privacy", "calibration", "episodes", "horizon")}
    with pytest.raises(PrivacctError, match="not both"):
        one_run_audit_learner(cfg, canaries=64, episodes=65)
    with pytest.raises(PrivacctError, match="unknown keyword"):
        one_run_audit_learner("ucb-vi", canaries=64, episode=65)


def test_the_keyword_form_runs_the_paper_setting_with_the_claim_given():
    from privacct.algorithms.settings import paper_setting
    from privacct.audits.one_run_learner import one_run_config

    setting = paper_setting(get_learner("ucb-vi"), "jdp")
    cfg = one_run_config("ucb-vi", privacy="jdp", epsilon=0.3, horizon=2, options=(("eta", 2.0),))
    assert (cfg.episodes, cfg.env, cfg.bonus_scale, cfg.horizon) == (setting.episodes, setting.env, setting.bonus_scale, 2)
    assert (cfg.epsilon, cfg.delta, cfg.calibration) == (0.3, 0.0, "tight")     # the claim given, not the setting's
    assert dict(cfg.options) == {**dict(setting.options), "eta": 2.0}
    assert one_run_config("ucb-vi", privacy="ldp", episodes=9).horizon is None   # K given: the environment's H


def test_cli_one_run_json_and_refusals(capsys):
    rc = main(["audit", "ucb-vi", "--privacy", "ldp", "--one-run", "--canaries", "100", "--episodes", "101",
               "--horizon", "1", "--json", "--quiet"])
    d = json.loads(capsys.readouterr().out)
    assert rc in (0, 1, 3) and d["kind"] == "one-run audit" and d["canaries"] == 100
    for key in ("guesses", "correct", "epsilon_lower_bound", "accounted_epsilon", "verdict"):
        assert key in d
    for extra in (["--trials", "100"], ["--fresh-users"], ["--observe", "actions"], ["--canaries", "101"]):
        rc = main(["audit", "ucb-vi", "--privacy", "ldp", "--one-run", "--episodes", "101"] + extra)
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1, err
    assert main(["audit", "ucb-vi", "--privacy", "ldp", "--canaries", "10"]) == 2


def test_cli_one_run_refuses_what_would_not_fit(capsys, monkeypatch):
    monkeypatch.setenv("PRIVACCT_MEMORY_LIMIT", "50M")
    rc = main(["audit", "ucb-vi", "--privacy", "ldp", "--one-run", "--canaries", "19999"])
    err = capsys.readouterr().err
    assert rc == 2 and "--canaries 19999" in err and err.count("\n") == 1, err


# ---- the linear-MDP learners (issue 20): Private LSVI-UCB's canaries are seen through their Gram tree nodes ----
LSVI = dict(episodes=1025, horizon=2, options=(("beta", 5.0),), epsilon=1.0, delta=1e-5)


def test_private_lsvi_one_run_certifies_below_its_accounted_eps_and_sees_the_planted_noise_bug():
    faithful = one_run_audit_learner("private-lsvi-ucb", canaries=512, calibration="paper", **LSVI)
    bug = one_run_audit_learner("private-lsvi-ucb", canaries=512, calibration="paper", noise_multiplier=0.25, **LSVI)
    for r in (faithful, bug):
        # spacing 2: a canary at leaf 4j + 1 sits alone in nodes [u, u] and [u, u + 1], one at 4j + 3 in [u, u] only
        # (the binary mechanism draws [u, u + 1] of an odd u = 4j + 3 inside [4j + 1, 4j + 4]), in each of the H = 2
        # Gram trees; the y releases are not observed
        assert r.canaries == 512 and r.spacing == 2 and r.releases_per_canary == 3.0
        assert r.accountant == "analytic-gaussian" and r.accounted_epsilon > 2.0    # the printed Gram noise
    assert faithful.sandwich_ok and faithful.epsilon_lower_bound <= faithful.accounted_epsilon
    # noise at a quarter of the declared scale (the ledger unchanged): every canary's Gaussian mu x 4
    assert bug.epsilon_lower_bound > faithful.epsilon_lower_bound + 0.5, (faithful.summary(), bug.summary())
    assert bug.bound.correct / bug.bound.guesses > faithful.bound.correct / faithful.bound.guesses


def test_private_lsvi_one_run_is_sound_over_seeds():
    # tight calibration: accounted eps = the claim 1; a leak in the observation (means that follow the bit, a node of
    # two canaries read as one's) gives near-perfect guesses, a bound of 3 to 4.5 at 512 canaries
    bounds = [one_run_audit_learner("private-lsvi-ucb", canaries=512, calibration="tight", seed=seed, **LSVI)
              for seed in range(4)]
    assert all(r.sandwich_ok for r in bounds), [r.summary() for r in bounds]
    assert all(r.releases_per_canary == 3.0 for r in bounds)


def test_cli_one_run_of_the_linear_mdp_learners(capsys):
    rc = main(["audit", "private-lsvi-ucb", "--privacy", "jdp", "--one-run", "--canaries", "64", "--episodes", "129",
               "--horizon", "2", "--calibration", "paper", "--json", "--quiet"])
    d = json.loads(capsys.readouterr().out)
    assert rc in (0, 3) and d["kind"] == "one-run audit" and d["canaries"] == 64 and d["releases_per_canary"] == 3.0
    assert d["sandwich_ok"]
    for name in ("batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace"):   # a batch leaf hides its canaries: one line
        rc = main(["audit", name, "--privacy", "jdp", "--one-run", "--canaries", "64", "--episodes", "129",
                   "--horizon", "2"])
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and "would observe no canary" in err, err
        rc = main(["audit", name, "--privacy", "jdp", "--one-run", "--canaries", "64", "--episodes", "129",
                   "--horizon", "2", "--option", "batches=129", "--json", "--quiet"])
        d = json.loads(capsys.readouterr().out)
        assert rc in (0, 3) and d["sandwich_ok"] and d["releases_per_canary"] == 3.0


@pytest.mark.parametrize("counter", ["blt", "sqrt-toeplitz"])
def test_a_laplace_toeplitz_counter_is_refused_before_anything_runs(counter, monkeypatch):
    """ucb-vi's counts are Laplace: a one-run release audit of its Toeplitz counter has no exact likelihood ratio (a
    canary is seen through a difference of releases), so it is refused in one line, read from the declared log,
    before the learner runs (it used to run the whole learner, then fail with "observed no release of a canary")."""
    spec = get_learner("ucb-vi")

    def never(*a, **k):
        raise AssertionError("the learner ran")
    monkeypatch.setattr(type(spec), "run", never)
    with pytest.raises(PrivacctError, match=f"cannot observe a {counter} counter with Laplace noise") as e:
        one_run_audit_learner("ucb-vi", privacy="jdp", episodes=129, horizon=2, canaries=16,
                              options=(("counter", counter),))
    assert "\n" not in str(e.value)
