"""The power of the black-box action audit (audits/action_power.py, docs/auditing.md#power-of-the-action-audit): simulated
against the same learner with its noise scaled until its log accounts 2 x the claim; passes only with that power."""

from __future__ import annotations

import pytest

from privacct.algorithms.contract import RunConfig
from privacct.audits.action_power import CRITERION, action_reference
from privacct.audits.learner_audit import accounted_epsilon, audit_config, audit_learner
from privacct.errors import PrivacctError

from . import threshold_learner as TL


@pytest.fixture
def threshold(monkeypatch):
    TL.register(monkeypatch)
    return RunConfig(TL.NAME, privacy="jdp", epsilon=1.0, delta=0.0, calibration="tight", episodes=2)


def test_faithful_learner_whose_actions_carry_the_loss_passes_with_power(threshold):
    r = audit_learner(threshold, observe="actions", trials=2000, executor="inline")
    assert r.verdict == "passes" and r.epsilon_lower_bound <= 1.0
    p = r.power
    assert p.criterion == CRITERION and p.has_power and p.achievable_lower_bound > 1.0
    assert "THAT leakier version only" in p.description and "x 0.5" in p.description   # Laplace: noise / 2 doubles eps
    assert "power: yes" in r.summary() and "not against every leak" in r.summary()
    assert r.to_dict()["power"]["criterion"] == CRITERION


def test_too_few_trials_is_inconclusive_with_the_trials_it_would_need(threshold):
    r = audit_learner(threshold, observe="actions", trials=100, executor="inline")
    assert r.verdict == "inconclusive" and not r.power.has_power
    assert r.power.trials_needed is not None and r.power.trials_needed > 100
    assert "trials/side would give power (estimate)" in r.summary()
    # the estimate is a plug-in: at the trials it names the same audit has power
    again = audit_learner(threshold, observe="actions", trials=2 * r.power.trials_needed, executor="inline")
    assert again.verdict == "passes"


def test_a_planted_policy_leak_still_fails_and_simulates_nothing(threshold):
    r = audit_learner(threshold, observe="actions", trials=2000, executor="inline", mutant=TL.MUTANT,
                      on_violation="report")
    assert r.verdict == "fails" and r.epsilon_lower_bound > 2.0
    assert not r.power.has_power and r.power.description.startswith("not simulated")


def test_same_seed_same_power_check(threshold):
    a = audit_learner(threshold, observe="actions", trials=200, executor="inline", seed=4)
    b = audit_learner(threshold, observe="actions", trials=200, executor="inline", seed=4)
    assert a.power == b.power and a.counts == b.counts


def test_without_simulation_there_is_no_power(threshold):
    r = audit_learner(threshold, observe="actions", trials=2000, executor="inline", simulate_power=False)
    assert r.verdict == "inconclusive" and r.power.criterion == "none (black-box actions)"
    assert "power: NO (black-box action observation, no leakier version simulated" in r.summary()
    with pytest.raises(PrivacctError, match="simulate_power must be True or False"):
        audit_learner(threshold, observe="actions", trials=100, executor="inline", simulate_power="yes")


def test_a_greedy_learner_whose_actions_read_a_third_of_the_loss_has_no_power_at_any_trials():
    # ucb-vi at H = 1: the action reads the cost coordinate, 1 of the 3 units of l1 the canaries move (6H - 3); its
    # reference at 2 x the claim certifies about 0.6 for a claim of 2, and no trial count changes that
    cfg = audit_config("ucb-vi", privacy="jdp", epsilon=2.0, episodes=2, horizon=1, bonus_scale=0.0,
                       options=(("e_scale", 1e-9),))
    r = audit_learner(cfg, observe="actions", trials=2000, executor="inline")
    assert r.verdict == "inconclusive" and r.power.trials_needed is None
    assert r.power.achievable_lower_bound < 1.0 and "more trials cannot give this audit power" in r.power.description


def test_a_log_already_above_twice_the_claim_has_no_reference():
    # the printed tabular constants at K = 4, H = 3 account 2.40 > 2 x 1: the reference would need more noise
    cfg = audit_config("ucb-vi", privacy="jdp", calibration="paper", episodes=4, horizon=3)
    ref = action_reference(cfg, accounted_epsilon(cfg)[0])
    assert ref.noise_multiplier > 1
    r = audit_learner(cfg, observe="actions", trials=100, executor="inline", on_violation="report")
    assert r.verdict in ("inconclusive", "fails") and not r.power.has_power
    if r.verdict == "inconclusive":
        assert "no leakier version at about 2 x the claim" in r.power.description


def test_the_one_run_predictable_bounds_are_exported():
    import privacct.audits as A
    from privacct.audits import predictable_epsilon_lower_bound, predictable_fdp_lower_bound
    from privacct.audits.one_run import predictable_epsilon_lower_bound as e, predictable_fdp_lower_bound as f

    assert predictable_epsilon_lower_bound is e and predictable_fdp_lower_bound is f
    assert {"predictable_epsilon_lower_bound", "predictable_fdp_lower_bound"} <= set(A.__all__)
