"""One-run ACTION audits (audits/one_run_actions.py, docs/auditing.md#one-run-action-audits): per-canary guesses from
replays whose releases are pinned to the run's; the planted policy leak is caught in one run where it changes actions,
a faithful learner never gets a guess, and the bound for predictable guesses is sound."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import special, stats

import privacct.tap as T
from privacct.audits import one_run_actions as OA
from privacct.audits.one_run import predictable_epsilon_lower_bound, predictable_p_value
from privacct.errors import PrivacctError

#: ucb-vi where the bonus decides the policy (the planted leak's audit configuration), long enough for 32 canaries
LEAKY_UCB = dict(episodes=257, horizon=2, bonus_scale=1e6, options=(("e_scale", 1e-9),))
#: ucb-vi at a claim so loose (eps = 1000) that its released counts are nearly exact and decide its actions: without
#: the pin a replay of the other bit would change them (test_the_pin_is_what_keeps_a_faithful_learner_silent)
RELEASE_DRIVEN_UCB = dict(episodes=257, horizon=2, bonus_scale=1e6, options=(("e_scale", 1e-9),), epsilon=1000.0)


# ---- the bound for predictable guesses ------------------------------------------------------------------------------

def test_predictable_bound_closed_form_and_delta_term():
    beta = 0.05
    for r in (5, 10, 32, 200):
        b = predictable_epsilon_lower_bound(canaries=1000, prefix=r, delta=0.0, confidence=1 - beta)
        assert b == pytest.approx(float(special.logit(beta ** (1 / r))), abs=1e-8)
        assert predictable_p_value(canaries=1000, prefix=r, epsilon=b, delta=0.0) <= beta
        assert predictable_p_value(canaries=1000, prefix=r, epsilon=b + 1e-6, delta=0.0) > beta
        # delta > 0 costs M delta / (1 + e^eps): a smaller bound, still rejected at its own value
        bd = predictable_epsilon_lower_bound(canaries=1000, prefix=r, delta=1e-5, confidence=1 - beta)
        assert 0 < bd < b and predictable_p_value(canaries=1000, prefix=r, epsilon=bd, delta=1e-5) <= beta
    assert predictable_epsilon_lower_bound(canaries=10, prefix=0, delta=0.0, confidence=0.95) == 0.0
    # ten perfect guesses certify just above 1 at 95%; the delta term alone can forbid any rejection
    assert 1.0 < predictable_epsilon_lower_bound(canaries=100, prefix=10, delta=0.0, confidence=0.95) < 1.1
    assert predictable_epsilon_lower_bound(canaries=10**4, prefix=10, delta=1e-4, confidence=0.95) == 0.0
    assert predictable_p_value(canaries=4, prefix=2, epsilon=0.0, delta=0.0) == pytest.approx(0.25)
    with pytest.raises(PrivacctError, match="prefix"):
        predictable_p_value(canaries=4, prefix=5, epsilon=1.0, delta=0.0)


def test_predictable_bound_is_sound_for_a_guesser_that_reads_the_earlier_bits():
    """Randomized response (exactly eps-DP in each bit, the worst case) and a guesser whose choices read the earlier
    canaries' bits: guess canary i only while every earlier guess was right (the most favourable predictable rule for
    a long prefix). The prefix is then Geometric: P[prefix >= r] = q^r exactly, so the bound exceeds eps exactly when
    r >= r0, with probability q^r0 <= 1 - confidence (computed, not simulated)."""
    for eps in (0.5, 1.0, 2.0):
        q = math.exp(eps) / (1 + math.exp(eps))
        r0 = next(r for r in range(1, 10**4)
                  if predictable_epsilon_lower_bound(canaries=10**4, prefix=r, delta=0.0, confidence=0.95) > eps)
        assert q ** r0 <= 0.05 and q ** (r0 - 1) > 0.05 * 0.999   # tight: one fewer guess is not enough
    # and by simulation, with the earlier bits steering which canaries are guessed
    rng = np.random.default_rng(0)
    eps, m, over = 1.0, 200, 0
    q = math.exp(eps) / (1 + math.exp(eps))
    for _ in range(4000):
        s = rng.choice([-1, 1], size=m)
        y = np.where(rng.random(m) < q, s, -s)                        # randomized response: Y alone is eps-DP per bit
        guess_set = [i for i in range(m) if i % 2 == 0 or s[i - 1] > 0]   # reads S_{i-1}: predictable
        prefix = 0
        for i in guess_set:
            if y[i] != s[i]:
                break
            prefix += 1
        over += predictable_epsilon_lower_bound(canaries=m, prefix=prefix, delta=0.0, confidence=0.95) > eps
    assert over / 4000 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 4000), over


def test_guesses_that_read_a_later_bit_would_break_the_binomial_bound():
    """Why the windows stop before the next canary (docs/auditing.md#soundness-of-the-action-audit): with an output
    independent of the bits (perfectly private), guessing S_1 := S_2 and S_2 := S_1 makes both guesses right with
    probability 1/2, where the bound allows q^2 = 1/4 at eps = 0."""
    rng = np.random.default_rng(1)
    s = rng.choice([-1, 1], size=(20000, 2))
    both = np.mean((s[:, 1] == s[:, 0]))            # T_1 = S_2 right and T_2 = S_1 right
    assert both == pytest.approx(0.5, abs=0.02) and both > 0.25 + 0.2


# ---- the audit of learners ------------------------------------------------------------------------------------------

def _no_pin(monkeypatch):
    """Replays whose releases are NOT moved back to the run's (the pin's shift lands on a copy of the noise)."""
    orig = T.ActionPin.note_draw
    monkeypatch.setattr(T.ActionPin, "note_draw",
                        lambda self, group, users, mechanism, noise: orig(self, group, users, mechanism, noise.copy()))


def test_the_pin_is_what_keeps_a_faithful_learner_silent(monkeypatch):
    r = OA.one_run_action_audit("ucb-vi", canaries=32, **RELEASE_DRIVEN_UCB)
    assert r.guesses == 0 and r.epsilon_lower_bound == 0.0 and r.verdict == "inconclusive" and r.sandwich_ok
    assert r.errors == 0 and r.cut == 0
    _no_pin(monkeypatch)   # the releases of the other bit: the check of the canary's own releases refuses the replays
    refused = OA.one_run_action_audit("ucb-vi", canaries=32, **RELEASE_DRIVEN_UCB)
    assert refused.guesses == 0 and refused.errors >= 31 and "is not the run's" in " ".join(refused.notes)
    # and without that check a replay reads the canary THROUGH its releases: every canary guessed, right every time
    # (the replay knows the noise), a large bound for a faithful learner
    monkeypatch.setattr(OA, "_verify_pin", lambda *args: None)
    bad = OA.one_run_action_audit("ucb-vi", canaries=32, **RELEASE_DRIVEN_UCB)
    assert bad.guesses >= 16 and bad.correct == bad.guesses and bad.epsilon_lower_bound > 1.0


def test_a_replay_whose_canary_did_not_switch_bits_is_refused_not_counted(monkeypatch):
    """A learner that read its canaries' bits once (not per episode) would keep playing the recorded bit in a forked
    replay while the pin moves her releases: they would then differ from the run's and a faithful learner would look
    leaky. The audit checks every recorded release of the replayed canary against the run's and abstains instead."""
    monkeypatch.setattr(OA, "_set_bits", lambda plan, bits: None)   # the forked replay keeps the recorded bits
    r = OA.one_run_action_audit("ucb-vi", canaries=32, engine="fork", **RELEASE_DRIVEN_UCB)
    assert r.guesses == 0 and r.errors >= 31 and "the pin does not hold" in " ".join(r.notes)
    monkeypatch.setattr(OA, "_verify_pin", lambda *args: None)   # without the check: false guesses
    bad = OA.one_run_action_audit("ucb-vi", canaries=32, engine="fork", **RELEASE_DRIVEN_UCB)
    assert bad.guesses >= 16


def test_the_planted_leak_fails_in_one_run_and_both_engines_agree():
    fork = OA.one_run_action_audit("ucb-vi", canaries=32, mutant="bonus-on-exact-counts", engine="fork", **LEAKY_UCB)
    rerun = OA.one_run_action_audit("ucb-vi", canaries=32, mutant="bonus-on-exact-counts", engine="rerun", **LEAKY_UCB)
    assert fork.verdict == "fails" and fork.guesses >= 20 and fork.correct == fork.guesses == fork.prefix
    assert fork.epsilon_lower_bound > 1.0 and not fork.sandwich_ok
    assert [r.to_dict() | {"episodes": 0} for r in fork.replays] == [r.to_dict() | {"episodes": 0} for r in rerun.replays]
    assert fork.epsilon_lower_bound == rerun.epsilon_lower_bound
    assert fork.replay_episodes <= 257 and rerun.replay_episodes > 4 * fork.replay_episodes  # fork: windows only
    for rep in fork.replays:   # every difference inside its canary's window, never at or before the canary
        assert not rep.decisive or rep.user < rep.difference <= rep.window_end
    faithful = OA.one_run_action_audit("ucb-vi", canaries=32, **LEAKY_UCB)
    assert faithful.guesses == 0 and faithful.verdict == "inconclusive"
    assert "cannot" not in faithful.summary() and "JDP as its proofs" in faithful.summary()
    d = json.loads(json.dumps(fork.to_dict(), allow_nan=False))
    assert d["check"] == "one-run-actions" and d["verdict"] == "fails" and len(d["decisive"]) == fork.guesses
    # the f-DP bound of the same predictable guesses (docs/auditing.md#the-f-dp-bound-for-predictable-guesses)
    from privacct.audits.one_run import predictable_fdp_lower_bound
    fdp = predictable_fdp_lower_bound(canaries=32, prefix=fork.prefix, delta=fork.delta, confidence=fork.confidence)
    assert d["mu_lower_bound"] == fdp.parameter > 0 and faithful.to_dict()["mu_lower_bound"] == 0.0


def test_replays_in_flight_change_the_wall_time_only():
    """jobs 1 waits for each replay; jobs 3 keeps two in flight beside the run: the same replays, guesses and bound
    (a replay is a copy of the run at its fork, whenever the parent reads it). A forker that read a later replay's
    payload for an earlier canary, or lost one, fails here."""
    kw = dict(LEAKY_UCB, episodes=129)
    one = OA.one_run_action_audit("ucb-vi", canaries=16, seed=2, mutant="bonus-on-exact-counts", jobs=1, **kw)
    three = OA.one_run_action_audit("ucb-vi", canaries=16, seed=2, mutant="bonus-on-exact-counts", jobs=3, **kw)
    assert one.guesses > 0
    assert [r.to_dict() for r in one.replays] == [r.to_dict() for r in three.replays]
    assert (one.guesses, one.prefix, one.epsilon_lower_bound) == (three.guesses, three.prefix, three.epsilon_lower_bound)
    assert OA.replay_jobs(5) == 5 and 1 <= OA.replay_jobs() <= 8
    for bad in (0, 65, 1.5, True):
        with pytest.raises(PrivacctError, match=r"jobs must be an integer in \[1, 64\]"):
            OA.replay_jobs(bad)


def test_a_replay_of_the_bit_the_canary_played_is_the_run():
    """The premise of every guess: replaying the played bit (nothing flipped) reproduces the run's draws and the
    actions of the users after the canary, bit for bit."""
    from privacct.algorithms.contract import AuditHook, CanaryPlan
    from privacct.algorithms.registry import get_learner
    from privacct.audits.one_run import draw_bits
    from privacct.audits.one_run_learner import one_run_config, plan_users

    spec = get_learner("ucb-vi")
    cfg = one_run_config("ucb-vi", privacy="jdp", episodes=129, horizon=2)
    users = plan_users(129, 16)
    bits = tuple("A" if v > 0 else "B" for v in draw_bits(0, 16))
    seeds = [np.random.SeedSequence([0, 1])]
    pin = T.ActionPin("record")
    with T.pinning(pin):
        res = spec.run(cfg, seeds, audit=AuditHook("A", fixed_users=False, mutant="bonus-on-exact-counts",
                                                   plan=CanaryPlan(users, bits)))
    same = T.ActionPin("replay", flipped={users[3]: (bits[3], bits[3])}, stop_after=users[4] - 1, keep_from=users[3])
    with pytest.raises(T.ReplayWindowDone), T.pinning(same):
        spec.run(cfg, seeds, audit=AuditHook("A", fixed_users=False, mutant="bonus-on-exact-counts",
                                             plan=CanaryPlan(users, bits)))
    assert same.draws == pin.draws[:len(same.draws)] and not same.unpinned
    for k, a in same.actions.items():
        assert np.array_equal(a, res.tap.actions[k])
    assert sorted(same.actions) == list(range(users[3] + 1, users[4]))


def test_sound_over_repeated_runs_of_a_correct_learner():
    """50 one-run action audits of faithful ucb-vi where its releases decide its actions (eps = 1000): the bound may
    exceed the accounted eps at most at the confidence's rate; in fact no replay ever differs (every bound 0)."""
    bounds = [OA.one_run_action_audit("ucb-vi", canaries=16, seed=s, **dict(RELEASE_DRIVEN_UCB, episodes=129))
              for s in range(50)]
    over = sum(not r.sandwich_ok for r in bounds)
    assert over <= int(stats.binom.ppf(0.99, 50, 0.05)), [r.summary() for r in bounds if not r.sandwich_ok]
    assert all(r.guesses == 0 and r.errors == 0 for r in bounds)


def test_ucb_po_with_its_coins_is_silent_when_faithful():
    r = OA.one_run_action_audit("ucb-po", canaries=16, **dict(RELEASE_DRIVEN_UCB, episodes=129))
    assert r.guesses == 0 and r.errors == 0


def test_private_lsvi_ucb_replays_stop_at_the_responses_they_cannot_pin():
    """Private LSVI-UCB at eps = 50 (its switching test fires within K): the faithful learner gets no guess; a window
    holding a policy update stops comparing at the update's responses (aggregates noised without the canary's share);
    the planted switch-on-exact-gram leak moves an update time, seen as a different release schedule or actions. The
    tree is named (tight's own BLT: below)."""
    kw = dict(epsilon=50.0, delta=1e-5, episodes=1000, options=(("beta", 5.0), ("counter", "tree")))
    ok = OA.one_run_action_audit("private-lsvi-ucb", canaries=64, **kw)
    assert ok.guesses == 0 and ok.errors == 0 and ok.cut >= 1
    leak = OA.one_run_action_audit("private-lsvi-ucb", canaries=64, mutant="switch-on-exact-gram", **kw)
    assert leak.guesses >= 1 and leak.correct == leak.guesses
    assert leak.epsilon_lower_bound < 1.0   # a handful of update times: too few decisive canaries (the finding)


def test_a_run_config_gives_the_whole_configuration():
    from privacct.algorithms.contract import RunConfig

    cfg = RunConfig("ucb-vi", "jdp", epsilon=1.0, delta=0.0, calibration="tight", episodes=129, horizon=2,
                    bonus_scale=1e6, options=(("e_scale", 1e-9),))
    r = OA.one_run_action_audit(cfg, canaries=16, mutant="bonus-on-exact-counts")
    s = OA.one_run_action_audit("ucb-vi", canaries=16, mutant="bonus-on-exact-counts", **dict(LEAKY_UCB, episodes=129))
    assert [x.to_dict() for x in r.replays] == [x.to_dict() for x in s.replays] and r.guesses == s.guesses > 0
    with pytest.raises(PrivacctError, match="not both"):
        OA.one_run_action_audit(cfg, canaries=16, episodes=65)


def test_refusals():
    with pytest.raises(PrivacctError, match="privacy must be jdp"):
        OA.one_run_action_audit("ucb-vi", privacy="ldp", episodes=33, canaries=8)
    with pytest.raises(PrivacctError, match="engine must be one of"):
        OA.one_run_action_audit("ucb-vi", episodes=33, canaries=8, engine="threads")
    with pytest.raises(PrivacctError, match="window"):
        OA.one_run_action_audit("ucb-vi", episodes=33, canaries=8, window=0)
    with pytest.raises(PrivacctError, match="mutant"):
        OA.one_run_action_audit("ucb-vi", episodes=33, canaries=8, mutant="no-such-bug")
    with pytest.raises(PrivacctError, match="canaries must be at most"):
        OA.one_run_action_audit("ucb-vi", episodes=9, canaries=9)


def test_same_seed_same_result_and_a_window_bounds_the_replays():
    a = OA.one_run_action_audit("ucb-vi", canaries=16, seed=3, mutant="bonus-on-exact-counts",
                                **dict(LEAKY_UCB, episodes=129))
    b = OA.one_run_action_audit("ucb-vi", canaries=16, seed=3, mutant="bonus-on-exact-counts",
                                **dict(LEAKY_UCB, episodes=129))
    assert [r.to_dict() for r in a.replays] == [r.to_dict() for r in b.replays]
    w = OA.one_run_action_audit("ucb-vi", canaries=16, seed=3, mutant="bonus-on-exact-counts", window=2,
                                **dict(LEAKY_UCB, episodes=129))
    assert all(r.window_end <= r.user + 2 for r in w.replays) and w.replay_episodes <= (2 + 1) * 16   # + her own
    assert w.guesses <= a.guesses


def test_cli_one_run_action_audit_json_and_refusals(capsys):
    """privacct audit ALG --one-run --observe actions: one JSON object; a faithful learner is inconclusive (exit 3: the
    audit has no power criterion, it fails or says nothing); flags that do not belong are refused in one line."""
    from privacct.cli import main

    rc = main(["audit", "ucb-vi", "--privacy", "jdp", "--one-run", "--observe", "actions", "--canaries", "16",
               "--episodes", "129", "--horizon", "2", "--window", "4", "--json", "--quiet"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 3 and d["verdict"] == "inconclusive" and d["canaries"] == 16
    for key in ("guesses", "correct", "epsilon_lower_bound", "accounted_epsilon", "sandwich_ok"):
        assert key in d
    for argv in (["--privacy", "ldp", "--one-run", "--observe", "actions"],          # JDP only
                 ["--privacy", "jdp", "--one-run", "--window", "4"],                    # --window needs actions
                 ["--privacy", "jdp", "--window", "4"],                                 # ... and --one-run
                 ["--privacy", "jdp", "--one-run", "--observe", "actions", "--window", "0"]):
        rc = main(["audit", "ucb-vi", "--episodes", "33", "--horizon", "2"] + argv)
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and ("--window" in err or "--privacy" in err or "--observe" in err), err


#: private-lsvi-ucb JDP tight at eps 50 (its switching test fires within K): tight's own counter here is BLT
LSVI_TIGHT_BLT = dict(epsilon=50.0, delta=1e-5, calibration="tight", episodes=129, horizon=2, options=(("beta", 5.0),))
def _tree_rule(monkeypatch):
    """The pin of a tree node applied to a Toeplitz path: every draw over the canary moved by her difference D, not by
    D r_(s - t0) (docs/auditing.md#pinning-a-toeplitz-noise-path)."""
    import contextlib

    import privacct.counters.counter as CC

    monkeypatch.setattr(CC, "toeplitz_draw", lambda info: contextlib.nullcontext())


def test_private_lsvi_ucb_tight_blt_is_pinned_through_its_noise_path(monkeypatch):
    """tight's own BLT counter is audited, not refused (issue 20): a faithful learner gets no guess and no replay is
    refused; with the tree's rule the later Gram releases are not the run's and every replay is refused."""
    from privacct.algorithms.contract import RunConfig
    from privacct.algorithms.registry import get_learner

    cfg = RunConfig("private-lsvi-ucb", "jdp", **LSVI_TIGHT_BLT)
    assert get_learner(cfg.algorithm).declared_log(cfg).release_groups[0].structure.strategy == "blt"
    ok = OA.one_run_action_audit(cfg, canaries=16)
    assert ok.guesses == 0 and ok.errors == 0 and ok.verdict == "inconclusive" and ok.sandwich_ok
    _tree_rule(monkeypatch)
    refused = OA.one_run_action_audit(cfg, canaries=16)
    assert refused.guesses == 0 and refused.errors == 16 and "is not the run's" in " ".join(refused.notes)


def test_cli_one_run_action_audit_of_tights_blt(capsys):
    """privacct audit private-lsvi-ucb --calibration tight --one-run --observe actions runs on its BLT (no refusal
    line): inconclusive (exit 3), no guess, no refused replay, the counter named in the JSON."""
    from privacct.cli import main

    rc = main(["audit", "private-lsvi-ucb", "--privacy", "jdp", "--calibration", "tight", "--epsilon", "50",
               "--delta", "1e-5", "--episodes", "129", "--horizon", "2", "--option", "beta=5", "--one-run", "--observe",
               "actions", "--canaries", "16", "--json", "--quiet"])
    out = capsys.readouterr()
    d = json.loads(out.out)
    assert rc == 3 and out.err == "" and d["counter"] == "blt" and d["guesses"] == 0 and d["errors"] == 0


@pytest.mark.parametrize("counter", ["blt", "sqrt-toeplitz"])
def test_ucb_vi_on_a_toeplitz_counter_is_silent_when_faithful(counter, monkeypatch):
    """ucb-vi whose released counts decide its actions (eps = 1000) on a named Toeplitz counter (Laplace noise): no
    guess, no refused replay; with the tree's rule every replay is refused (its later counts are not the run's)."""
    kw = dict(RELEASE_DRIVEN_UCB, options=RELEASE_DRIVEN_UCB["options"] + (("counter", counter),))
    r = OA.one_run_action_audit("ucb-vi", canaries=32, **kw)
    assert r.guesses == 0 and r.errors == 0 and r.cut == 0
    _tree_rule(monkeypatch)
    refused = OA.one_run_action_audit("ucb-vi", canaries=32, **kw)
    assert refused.guesses == 0 and refused.errors == 32


def test_the_planted_leak_fails_on_a_blt_counter():
    kw = dict(LEAKY_UCB, options=LEAKY_UCB["options"] + (("counter", "blt"),))
    r = OA.one_run_action_audit("ucb-vi", canaries=32, mutant="bonus-on-exact-counts", **kw)
    assert r.verdict == "fails" and r.guesses >= 20 and r.correct == r.guesses and r.errors == 0
    assert r.epsilon_lower_bound > 1.0


# ---- seed 003's batched LSVI-UCB (docs/auditing.md#batched-learners-in-the-action-audit) ---------------------------

#: 8 batches of 8 users at eps = 1000: the releases nearly exact, so they decide the actions after each batch end
BATCHED_DRIVEN = dict(epsilon=1000.0, delta=1e-5, episodes=64, options=(("batches", 8), ("beta", 1.0)))


@pytest.mark.parametrize("algorithm", ["batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace"])
def test_batched_learners_get_a_canary_before_each_release_and_stay_silent_when_faithful(algorithm, monkeypatch):
    kw = dict(BATCHED_DRIVEN, delta=0.0) if algorithm.endswith("laplace") else BATCHED_DRIVEN
    r = OA.one_run_action_audit(algorithm, canaries=16, **kw)
    assert [x.user for x in r.replays] == [8, 16, 24, 32, 40, 48, 56]   # the last user of each released batch
    assert all(x.window_end == x.user + 8 - 1 or x.window_end == 64 for x in r.replays)   # up to the next canary
    assert r.canaries == 7 and r.guesses == 0 and r.errors == 0 and r.cut == 0 and r.verdict == "inconclusive"
    assert "placement releases" in " ".join(r.notes) and r.to_dict()["placement"] == "releases"
    assert "7 canaries (one before each fixed release, spacing 8" in r.summary()
    # the whole batch release, Gram and u, is pinned: with the pin's shift lost every replay is refused ...
    _no_pin(monkeypatch)
    refused = OA.one_run_action_audit(algorithm, canaries=16, **kw)
    assert refused.guesses == 0 and refused.errors == 7
    # ... and without the check of her releases the replays read her THROUGH the releases (false guesses)
    monkeypatch.setattr(OA, "_verify_pin", lambda *args: None)
    bad = OA.one_run_action_audit("batched-jdp-lsvi-ucb", canaries=16, **BATCHED_DRIVEN)
    assert bad.guesses >= 1 and bad.correct == bad.guesses


def test_batched_u_releases_are_pinned_by_each_canarys_share(monkeypatch):
    """Without each canary's reported share of the u releases (privacct.tap.canary_contribution for group u), a u
    release over her cannot be pinned: every window is cut at her batch's release, as before this audit was built."""
    import privacct.algorithms.linear_mdp.batched_jdp as BJ

    orig = BJ.canary_contribution
    monkeypatch.setattr(BJ, "canary_contribution",
                        lambda user, group, **kw: None if group == "u" else orig(user, group, **kw))
    r = OA.one_run_action_audit("batched-jdp-lsvi-ucb", canaries=16, **BATCHED_DRIVEN)
    assert r.guesses == 0 and r.cut == 7


def test_placement_of_the_canaries():
    spread = OA.one_run_action_audit("batched-jdp-lsvi-ucb", canaries=16, placement="spread", **BATCHED_DRIVEN)
    assert [x.user for x in spread.replays] == list(range(1, 32, 2))   # plan_users: no window but the last holds a release
    assert spread.guesses == 0 and spread.errors == 0   # a window without a release over her is silent, not refused
    few = OA.one_run_action_audit("batched-jdp-lsvi-ucb", canaries=3, **BATCHED_DRIVEN)
    assert [x.user for x in few.replays] == [8, 32, 56]
    with pytest.raises(PrivacctError, match="placement must be one of"):
        OA.one_run_action_audit("ucb-vi", episodes=33, canaries=8, placement="random")
    with pytest.raises(PrivacctError, match="placement releases needs"):
        OA.one_run_action_audit("ucb-vi", episodes=33, canaries=8, placement="releases")
    # one user per batch: a release after every user, so the canaries spread as for any learner
    one = OA.one_run_action_audit("batched-jdp-lsvi-ucb", canaries=8, epsilon=1000.0, delta=1e-5, episodes=33,
                                  options=(("batches", 33), ("beta", 1.0)))
    assert [x.user for x in one.replays] == [1 + 4 * j for j in range(8)] and one.guesses == 0


def test_cli_one_run_action_audit_of_a_batched_learner(capsys):
    from privacct.cli import main

    rc = main(["audit", "batched-jdp-lsvi-ucb", "--privacy", "jdp", "--delta", "1e-5", "--one-run", "--observe", "actions",
               "--canaries", "16", "--episodes", "64", "--option", "batches=8", "--option", "beta=1", "--json", "--quiet"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 3 and d["canaries"] == 7 and d["placement"] == "releases" and d["guesses"] == 0 and d["errors"] == 0
