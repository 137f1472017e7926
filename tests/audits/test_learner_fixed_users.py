"""Learner audits with fixed other users and the strongest observations (audits/learner.py).

The printed constants of seed 002 (calibration ``paper``) account above the claim eps = 1; with
fixed users and every release about user 1 the audit alone certifies it at small H and K, and
the ``tight`` calibration still passes. Settings (privacct.audits.suite.small_paper_constants): ucb-vi,
K = 4, H = 1, claim eps = 1 (accounted: JDP 4.33, LDP 2).
"""

import json

import numpy as np
import pytest

from privacct.audits.learner import (LearnerMechanism, StatisticTester, audit_learner, exact_laplace_statistic,
                            learner_config, strongest_observation)
from privacct.audits.suite import LearnerAudit, small_paper_constants, suite
from privacct.cli import main
from privacct.errors import PrivacctError

SMALL = {a.privacy: (a, trials) for a, trials in small_paper_constants()}


@pytest.mark.parametrize("privacy", ["jdp", "ldp"])
@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_printed_constants_fail_the_audit_and_tight_passes(privacy, calibration):
    a, trials = SMALL[privacy]
    assert (a.observe, a.fixed_users) == strongest_observation("ucb-vi", privacy)
    r = audit_learner(a.algorithm, privacy=privacy, epsilon=1.0, calibration=calibration, episodes=a.episodes,
                      horizon=a.horizon, observe=a.observe, fixed_users=True, trials=trials, seed=0,
                      executor="inline")
    assert r.statistics == ["exact laplace likelihood-ratio"]
    if calibration == "paper":
        assert r.verdict == "fails" and r.epsilon_lower_bound > 1.1
    else:
        assert r.verdict == "passes" and r.epsilon_lower_bound <= 1.0


def test_without_fixed_users_the_same_audit_finds_nothing():
    a, _ = SMALL["jdp"]
    r = audit_learner("ucb-vi", privacy="jdp", calibration="paper", episodes=a.episodes, horizon=a.horizon,
                      observe="released", trials=1000, seed=0, executor="inline")
    assert r.verdict != "fails" and "exact" not in r.test


def test_exact_statistic_uses_only_the_coordinates_that_differ():
    cfg = learner_config("ucb-vi", privacy="ldp", calibration="paper", episodes=3, horizon=2)
    mech = LearnerMechanism(cfg, "released_user1", True)
    st = exact_laplace_statistic(mech)
    xa, xb = mech("A", np.random.default_rng(0), 3000), mech("B", np.random.default_rng(1), 3000)
    la, lb = st(xa), st(xb)
    bound = 6 * 2 / (3 * 2)  # 6H coordinates moved by 1, scale 3H / eps: pure eps 2
    assert np.all(np.abs(la) <= bound + 1e-9) and np.all(np.abs(lb) <= bound + 1e-9)
    assert la.mean() > 0 > lb.mean()
    assert exact_laplace_statistic(LearnerMechanism(cfg, "released_user1", False)) is None
    assert exact_laplace_statistic(LearnerMechanism(cfg, "actions", True)) is None


def test_strongest_observation():
    assert strongest_observation("ucb-vi", "jdp") == ("released_path", True)
    assert strongest_observation("ucb-po", "ldp") == ("released_user1", True)
    from privacct.algorithms.registry import learners
    others = [(n, p) for n, s in learners().items() if s.family != "tabular" for p in s.privacy_models if p != "none"]
    assert others
    for name, priv in others:
        assert strongest_observation(name, priv) == ("released", False)
    with pytest.raises(PrivacctError, match="privacy"):
        strongest_observation("ucb-vi", "none")


def test_suite_strongest_entries():
    tab = [a for a in suite(strongest=True) if a.algorithm in ("ucb-vi", "ucb-po")]
    assert tab and all(a.fixed_users and a.name.endswith("-fixed") for a in tab)
    assert {a.observe for a in tab} == {"released_path", "released_user1"}


def test_observation_missing_for_privacy_model_is_a_clear_error():
    with pytest.raises(PrivacctError, match="released_user1"):
        audit_learner("ucb-vi", privacy="jdp", episodes=4, horizon=1, observe="released_user1", fixed_users=True,
                      trials=20, executor="inline")
    with pytest.raises(PrivacctError, match="fixed_users"):
        audit_learner("ucb-vi", privacy="jdp", episodes=4, horizon=1, fixed_users="yes", trials=20)


def test_cli_released_path_fixed_users(capsys):
    rc = main(["audit", "ucb-vi", "--privacy", "jdp", "--calibration", "paper", "--episodes", "4", "--horizon", "1",
               "--trials", "4000", "--observe", "released_path", "--fixed-users", "--json", "--seed", "0"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 1 and d["verdict"] == "fails" and d["fixed_users"] is True and d["observe"] == "released_path"
    assert d["epsilon_lower_bound"] > 1.0 and d["statistics"] == ["exact laplace likelihood-ratio"]


def test_statistic_tester_is_a_threshold_tester():
    assert issubclass(StatisticTester, __import__("privacct.audits.testers", fromlist=["x"]).ThresholdTester)
    assert LearnerAudit("ucb-vi", "jdp").fixed_users is False


def test_fixed_users_on_a_learner_without_the_option_is_refused():
    from privacct.algorithms.registry import learners
    name, spec = next((n, s) for n, s in sorted(learners().items())
                      if s.family != "tabular" and any(p != "none" for p in s.privacy_models))
    priv = next(p for p in spec.privacy_models if p != "none")
    with pytest.raises(PrivacctError, match="fixed_users"):
        audit_learner(name, privacy=priv, delta=1e-5, episodes=4, horizon=2, fixed_users=True, trials=10,
                      executor="inline")
