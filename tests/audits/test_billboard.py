"""The billboard check (audits/billboard.py, docs/auditing.md#the-billboard-check): coupled runs whose releases
are made equal under both canaries must prescribe users 2..K the same actions; the planted policy leaks fail."""

from __future__ import annotations

import json

import pytest

from privacct.audits import billboard as BB
from privacct.audits.bounds import cp_upper
from privacct.errors import PrivacctError

#: ucb-vi where the bonus decides the policy (the planted leak's configuration in privacct.audits.suite.policy_leaks)
UCB_LEAKY = dict(episodes=4, horizon=2, bonus_scale=1e6, options=(("e_scale", 1e-9),))
#: private-lsvi-ucb where the switching test fires within K (a small shift lam~ at eps = 50)
LSVI_SWITCHING = dict(epsilon=50.0, delta=1e-5, episodes=1000, options=(("beta", 5.0),))


def test_faithful_ucb_vi_passes_with_its_bound():
    r = BB.billboard_check("ucb-vi", trials=32, **UCB_LEAKY)
    assert r.verdict == "passes" and r.differing == 0
    assert r.p_upper == pytest.approx(float(cp_upper(0, 32, 0.05))) and r.p_upper <= BB.REFERENCE_LEAK_RATE
    assert not r.uncoupled and not r.diverged
    assert "P[a trial would] <=" in r.summary()


def test_bonus_on_exact_counts_fails():
    r = BB.billboard_check("ucb-vi", trials=24, mutant="bonus-on-exact-counts", **UCB_LEAKY)
    assert r.verdict == "fails" and r.differing > 0
    assert r.first_difference is not None and r.first_difference.user >= 2
    assert r.first_difference.actions_a != r.first_difference.actions_b
    assert "billboard step of the proof fails" in r.summary()


def test_private_lsvi_ucb_faithful_differs_nowhere_and_switch_on_exact_gram_fails():
    """8 trials: the faithful learner differs in none, which is inconclusive (passing needs 29: the power rule; the
    slow control of tests/audits/test_mutants.py passes it at 32); the planted leak fails in 8."""
    ok = BB.billboard_check("private-lsvi-ucb", trials=8, **LSVI_SWITCHING)
    assert ok.verdict == "inconclusive" and ok.differing == 0 and not ok.uncoupled and not ok.diverged
    assert ok.shifted, "the y releases hold user 1 with other users: coupled by a shift of their noise"
    bad = BB.billboard_check("private-lsvi-ucb", trials=8, mutant="switch-on-exact-gram", **LSVI_SWITCHING)
    assert bad.verdict == "fails" and bad.differing > 0


def test_without_the_coupling_a_faithful_learner_would_fail(monkeypatch):
    """The check is not vacuous: replaying nothing (canary B's own values) makes the faithful learner's actions
    differ, so 'passes' above is the coupling's doing. Both counters' coupling is switched off: the tree's
    (privacct.mechanisms) and the factorized counters' (privacct.counters.observed; tight's own tree-honaker here,
    which the audited run runs as the unaudited one does)."""
    import privacct.counters.observed as O
    import privacct.mechanisms as M

    for module in (M, O):
        monkeypatch.setattr(module, "coupled_value", lambda where, own: own)
    r = BB.billboard_check("ucb-vi", trials=24, **UCB_LEAKY)
    assert r.verdict == "fails" and r.differing > 0


def test_a_release_it_cannot_couple_makes_it_inconclusive(monkeypatch):
    """A counter whose draws over user 1 are made without her share (here: a factorized counter with its audit
    bookkeeping switched off) is not coupled, so no verdict either way; with it, the check couples the counter."""
    import privacct.counters.counter as CC

    r = BB.billboard_check("ucb-vi", trials=4, episodes=8, horizon=2, options=(("counter", "blt"),))
    assert r.differing == 0 and not r.uncoupled and not r.diverged
    assert r.verdict == "inconclusive" and "have no power" in r.summary()   # 4 trials: coupled, but no power to pass
    monkeypatch.setattr(CC, "current_tap", lambda: None)
    r = BB.billboard_check("ucb-vi", trials=4, episodes=8, horizon=2, options=(("counter", "blt"),))
    assert r.verdict == "inconclusive"
    assert r.uncoupled and "not checkable" in r.summary()


def test_few_trials_are_inconclusive_even_where_a_leak_hides():
    """Issue 23: 4 trials used to say "passes" (P[a trial differs] <= 0.53). The planted leak at seed 4 differs in none
    of its first 4 trials and in 14 of 32: with 4 trials the check has no power, so it says inconclusive (never passes),
    names the trials the power rule needs, and fails at 32 trials of the same seeds."""
    few = BB.billboard_check("ucb-vi", trials=4, seed=4, mutant="bonus-on-exact-counts", **UCB_LEAKY)
    assert few.differing == 0 and not few.uncoupled and not few.diverged
    assert few.verdict == "inconclusive" and few.trials_needed == 29
    assert "29 trials would give the check that power" in few.summary() and few.to_dict()["trials_needed"] == 29
    many = BB.billboard_check("ucb-vi", trials=32, seed=4, mutant="bonus-on-exact-counts", **UCB_LEAKY)
    assert many.verdict == "fails" and many.first_difference.trial >= 4


def test_the_power_rule_passes_from_29_trials_at_95_percent():
    """A faithful learner: 28 trials give P[a trial would] <= 0.101 > 0.1 (inconclusive), 29 give 0.098 (passes)."""
    assert BB.billboard_check("ucb-vi", trials=28, **UCB_LEAKY).verdict == "inconclusive"
    assert BB.billboard_check("ucb-vi", trials=29, **UCB_LEAKY).verdict == "passes"


@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.99, 0.999])
def test_trials_for_power_is_the_fewest_trials_whose_bound_is_at_most_the_reference(confidence):
    n = BB.trials_for_power(confidence)
    rate, alpha = BB.REFERENCE_LEAK_RATE, 1.0 - confidence
    assert float(cp_upper(0, n, alpha)) <= rate < float(cp_upper(0, n - 1, alpha))
    assert (1.0 - rate) ** n <= alpha < (1.0 - rate) ** (n - 1)      # a 1-in-10 leak unseen with probability <= alpha
    assert (BB.trials_for_power(0.95), BB.trials_for_power(0.99)) == (29, 44)


def test_refusals():
    with pytest.raises(PrivacctError, match="privacy must be jdp"):
        BB.billboard_check("ucb-vi", privacy="ldp")
    with pytest.raises(PrivacctError, match="episodes"):
        BB.billboard_check("ucb-vi", episodes=1)
    with pytest.raises(PrivacctError, match="confidence"):
        BB.billboard_check("ucb-vi", confidence=1.0)


def test_same_seed_same_result():
    a = BB.billboard_check("ucb-vi", trials=8, seed=3, mutant="bonus-on-exact-counts", **UCB_LEAKY).to_dict()
    b = BB.billboard_check("ucb-vi", trials=8, seed=3, mutant="bonus-on-exact-counts", batch=3, **UCB_LEAKY).to_dict()
    assert a == b


def test_cli_billboard_exit_codes_and_json(capsys):
    from privacct.cli import main

    code = main(["audit", "ucb-vi", "--privacy", "jdp", "--billboard", "--episodes", "4", "--horizon", "2",
                 "--trials", "32", "--json", "--quiet"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["check"] == "billboard" and d["verdict"] == "passes" and d["trials"] == 32
    code = main(["audit", "ucb-vi", "--privacy", "jdp", "--billboard", "--episodes", "4", "--horizon", "2",
                 "--trials", "10", "--quiet"])
    assert code == 3 and "INCONCLUSIVE" in capsys.readouterr().out   # no difference in 10 trials: no power
    assert main(["audit", "ucb-vi", "--privacy", "ldp", "--billboard"]) == 2
    assert "--billboard needs --privacy jdp" in capsys.readouterr().err
    assert main(["audit", "ucb-vi", "--privacy", "jdp", "--billboard", "--observe", "actions"]) == 2
    assert "--observe actions does not apply" in capsys.readouterr().err


def test_every_audit_says_which_claim_it_tests():
    from privacct.audits.learner_audit import claim_tested

    assert "released statistics" in claim_tested("jdp", "released") and "lemma" in claim_tested("jdp", "released")
    assert claim_tested("jdp", "actions").startswith("JDP itself")
    assert claim_tested("ldp", "released").startswith("LDP itself")
    assert "billboard step" in BB.BillboardResult.tests


def test_the_check_takes_its_run_config_whole():
    """Issue 22: billboard_check(config) checks the RunConfig it is passed; the keyword form makes the same record, and
    the result holds it (its fields read as the result's own, to_dict unchanged)."""
    import dataclasses

    from privacct.algorithms.contract import RunConfig
    from privacct.audits.learner_audit import audit_config

    config = audit_config("ucb-vi", **UCB_LEAKY)
    assert config == RunConfig("ucb-vi", "jdp", calibration="tight", **UCB_LEAKY)
    whole = BB.billboard_check(config, trials=8, seed=3, mutant="bonus-on-exact-counts")
    words = BB.billboard_check("ucb-vi", trials=8, seed=3, mutant="bonus-on-exact-counts", **UCB_LEAKY)
    assert whole.config is config and whole.to_dict() == words.to_dict()
    assert (whole.episodes, whole.horizon, whole.env, whole.calibration) == (4, 2, None, "tight")
    with pytest.raises(PrivacctError, match="privacy must be jdp"):
        BB.billboard_check(dataclasses.replace(config, privacy="ldp"))
    with pytest.raises(PrivacctError, match="not both"):
        BB.billboard_check(config, episodes=8)
