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
def test_a_laplace_toeplitz_counter_is_audited_output_only_and_never_passes(counter):
    """ucb-vi's counts are Laplace: through a Toeplitz counter a canary's difference of releases has no exact
    likelihood. Once refused; now the audit runs its output-only and window scores beside the exact one (their
    guesses a function of the output: sound), splits the confidence three ways, and never says passes."""
    r = one_run_audit_learner("ucb-vi", privacy="jdp", episodes=129, horizon=2, canaries=16,
                              options=(("counter", counter),))
    assert [x.name for x in r.scores] == ["difference", "window", "output-only"]
    assert [x.exact for x in r.scores] == [True, False, False]
    assert all(x.bound.confidence == pytest.approx(1 - 0.05 / 3) for x in r.scores)
    assert r.scores[2].releases_per_canary > 0 and r.scores[1].releases_per_canary > 0
    assert r.verdict in ("fails", "inconclusive") and r.sandwich_ok
    assert r.best_score in {x.name for x in r.scores} and r.bound.confidence == 0.95
    assert any("never passes" in n for n in r.notes)
    d = r.to_dict()
    assert [x["name"] for x in d["scores"]] == ["difference", "window", "output-only"] and d["best_score"] == r.best_score


# ---- several scores on one run (docs/auditing.md#one-run-scores) ----
LSVI_BLT = dict(privacy="jdp", epsilon=1.0, delta=1e-5, episodes=129, horizon=2, canaries=64,
                options=(("beta", 5.0), ("counter", "blt")))


def test_a_gaussian_toeplitz_counter_runs_the_difference_and_window_scores_at_half_the_failure_budget_each():
    r = one_run_audit_learner("private-lsvi-ucb", seed=0, **LSVI_BLT)
    assert [x.name for x in r.scores] == ["difference", "window"] and all(x.exact for x in r.scores)
    assert all(x.bound.confidence == pytest.approx(0.975) for x in r.scores) and r.bound.confidence == 0.95
    best = max(r.scores, key=lambda x: x.bound.epsilon_lower_bound)
    assert r.best_score == best.name and r.epsilon_lower_bound == best.bound.epsilon_lower_bound
    assert r.releases_per_canary == r.scores[0].releases_per_canary == 2.0    # the difference score's, as before
    assert r.scores[1].releases_per_canary == 2.0                             # one window per Gram counter
    d = json.loads(json.dumps(r.to_dict()))
    assert [(x["name"], x["guesses"], x["correct"]) for x in d["scores"]] == [
        (x.name, x.bound.guesses, x.bound.correct) for x in r.scores]
    only = one_run_audit_learner("private-lsvi-ucb", seed=0, scores=("difference",), **LSVI_BLT)
    assert [x.name for x in only.scores] == ["difference"] and only.bound.confidence == 0.95
    with pytest.raises(PrivacctError, match="scores must be distinct names among difference, window, output-only"):
        one_run_audit_learner("private-lsvi-ucb", seed=0, scores=("windows",), **LSVI_BLT)


def test_the_combined_verdict_fails_on_any_score_and_passes_only_on_an_exact_score_with_power():
    import dataclasses

    from privacct.audits.one_run import one_run_audit_scores
    from privacct.audits.one_run_learner import ScoreBound, combine_scores
    from privacct.audits.power import PowerCheck

    bits = np.where(np.arange(200) % 3 == 0, -1, 1)
    seen = one_run_audit_scores(bits * 5.0, bits, epsilon=1.0, confidence=0.975)              # every guess right
    blind = one_run_audit_scores(np.zeros(200), bits, epsilon=1.0, confidence=0.975)
    blind = dataclasses.replace(blind, verdict="passes", power=PowerCheck("test", "had power", 2.0, 3.0, True, None))
    assert seen.epsilon_lower_bound > 1 and blind.epsilon_lower_bound <= 1
    b, name = combine_scores([ScoreBound("difference", True, 1.0, blind), ScoreBound("window", False, 1.0, seen)],
                             confidence=0.95, passes_allowed=True)
    assert (b.verdict, name, b.confidence) == ("fails", "window", 0.95)
    b, name = combine_scores([ScoreBound("difference", True, 1.0, blind), ScoreBound("window", False, 1.0, blind)],
                             confidence=0.95, passes_allowed=True)
    assert b.verdict == "passes" and name == "difference"
    b, _ = combine_scores([ScoreBound("difference", True, 1.0, blind)] * 2, confidence=0.95, passes_allowed=False)
    assert b.verdict == "inconclusive"        # a Laplace Toeplitz counter runs: never passes
    b, _ = combine_scores([ScoreBound("output-only", False, 1.0, blind)] * 2, confidence=0.95, passes_allowed=True)
    assert b.verdict == "inconclusive"        # power only from an exact score


def test_sound_over_repeated_output_only_audits_of_a_correct_laplace_toeplitz_learner():
    """The same for three scores on a Laplace BLT counter (ucb-vi JDP, K = 129, claim 1): 50 audits, the bound above
    the accounted eps at most at the confidence's rate; never passes."""
    over, verdicts = 0, set()
    for seed in range(50):
        r = one_run_audit_learner("ucb-vi", privacy="jdp", episodes=129, horizon=2, canaries=64,
                                  options=(("counter", "blt"),), seed=seed)
        over += r.epsilon_lower_bound > r.accounted_epsilon * (1 + 1e-9)
        verdicts.add(r.verdict)
    assert over <= 6 and "passes" not in verdicts


def test_sound_over_repeated_one_run_audits_with_two_scores_of_a_correct_learner():
    """Issue 20's soundness target with the window score: 50 one-run audits of the faithful private-lsvi-ucb (BLT
    Gram counters, K = 129, claim (1, 1e-5), accounted 1) exceed the accounted eps at most at the confidence's rate
    (binomial(50, 0.05) > 6: probability < 0.04). A score that reads a canary's bit (her addition without noise in
    place of the window mean) guesses all 64 right and certifies 2.8 > 1 in every run."""
    over, bounds = 0, []
    for seed in range(50):
        r = one_run_audit_learner("private-lsvi-ucb", seed=seed, **LSVI_BLT)
        assert [x.name for x in r.scores] == ["difference", "window"]
        bounds.append(r.epsilon_lower_bound)
        over += r.epsilon_lower_bound > r.accounted_epsilon
    assert over <= 6, bounds


@pytest.mark.parametrize("algorithm, kw", [("ucb-vi", dict(episodes=129, horizon=2)), ("pp-ucrl-vtr-laplace", dict(episodes=129))])
def test_the_output_only_scores_of_a_laplace_toeplitz_counter_catch_a_planted_noise_bug(algorithm, kw):
    """Not vacuous: privacy noise x 1/100 (the log at the declared scale) through a Laplace BLT counter is caught in one
    run by the window and output-only scores (32 of 32 guessed, 1.82 > 1 at confidence 1 - 0.05 / 3); the faithful
    learner at the same configuration is not, and the verdict never passes."""
    opts = (("counter", "blt"),)
    bug = one_run_audit_learner(algorithm, privacy="jdp", canaries=32, options=opts, noise_multiplier=0.01, **kw)
    assert bug.verdict == "fails" and bug.best_score in ("window", "output-only"), bug.summary()
    assert {x.name: x.bound.correct for x in bug.scores}["output-only"] == 32
    ok = one_run_audit_learner(algorithm, privacy="jdp", canaries=32, options=opts, **kw)
    assert ok.verdict == "inconclusive" and ok.sandwich_ok, ok.summary()
