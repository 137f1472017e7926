"""The action-audit line of a JDP row of ``privacct report --full`` (issue 20): the one-run action audit at a stated
configuration (the paper setting, printed constants), the claim it tests (JDP itself, not the DP of the released
statistics: docs/auditing.md#what-each-audit-tests) and its verdict, said the way the row says it of its other audits."""

import pytest

from privacct.audits.learner_audit import learner_config
from privacct.audits.one_run_actions import TESTS
from privacct.audits.report.build import action_audit_parts, audit_text
from privacct.audits.report.document import plain, text
from privacct.audits.report.rows import ReportScale, _one_run_actions


def _quiet(_line: str) -> None:
    pass


@pytest.fixture(scope="module")
def ucb_paper_small():
    """ucb-vi JDP with its printed constants at a small K (the row's record, calibration paper)."""
    return learner_config("ucb-vi", privacy="jdp", calibration="paper", episodes=65, horizon=2)


def test_a_jdp_row_runs_the_one_run_action_audit_at_the_paper_setting(ucb_paper_small):
    scale = ReportScale(None, seeds=1, audit_trials=10, one_run_canaries=16)
    d = _one_run_actions(ucb_paper_small, scale, 0, _quiet)
    assert d["verdict"] == "inconclusive" and d["guesses"] == 0          # the faithful learner: no guess, no pass
    assert d["tests"] == TESTS and d["tests"].startswith("JDP as its proofs establish it")
    assert (d["episodes"], d["horizon"], d["canaries"], d["calibration"]) == (65, 2, 16, "paper")
    assert d["claimed_epsilon"] == ucb_paper_small.epsilon and d["accounted_epsilon"] > 0


def test_no_action_audit_without_full_nor_under_ldp(ucb_paper_small):
    assert _one_run_actions(ucb_paper_small, ReportScale.default(), 0, _quiet) is None   # --full only
    ldp = learner_config("ucb-vi", privacy="ldp", calibration="paper", episodes=65, horizon=2)
    assert _one_run_actions(ldp, ReportScale(None, seeds=1, audit_trials=10, one_run_canaries=16), 0, _quiet) is None


ACT = {"episodes": 20000, "horizon": 20, "canaries": 1000, "verdict": "inconclusive", "guesses": 0,
       "epsilon_lower_bound": 0.0, "claimed_epsilon": 1.0, "accounted_epsilon": 2.954, "tests": TESTS}


def test_the_action_audit_sentence_states_configuration_claim_tested_and_verdict():
    s = plain(text(*action_audit_parts(ACT)))
    assert s.startswith(" One-run action audit at the paper setting (K = 20000, H = 20, printed constants, 1000 "
                        "canaries; it tests JDP itself, not the DP of the released statistics: JDP as its proofs "
                        "establish it")
    assert "lower bound 0 vs claim 1 (accounted 2.95); verdict inconclusive (an action audit can fail, never pass)." in s
    failing = plain(text(*action_audit_parts(dict(ACT, verdict="fails", guesses=67, epsilon_lower_bound=3.085))))
    assert failing.endswith("67 canaries guessed from the actions to other users, lower bound 3.08 vs claim 1 "
                            "(accounted 2.95); verdict fails.")
    refused = plain(text(*action_audit_parts(dict(ACT, verdict="not run", reason="no canary plans"))))
    assert refused.endswith("not run (no canary plans).")
    assert action_audit_parts(None) == []


def test_the_row_paragraph_carries_it_after_the_release_audits(ucb_paper_small):
    """audit_text: the released-statistics audit says it tests the released statistics, the billboard check the step to
    JDP, the action audit JDP itself; an older report.json without the key prints no action line."""
    from types import SimpleNamespace

    audit = {"episodes": 4, "horizon": 1, "trials": 100, "tests": "the DP of the released statistics (the lemma)",
             "epsilon_lower_bound": 0.5, "accounted_epsilon": 1.0, "accountant": "pure-laplace", "verdict": "passes",
             "has_power": True, "billboard": None, "one_run": None}
    without = plain(audit_text(SimpleNamespace(audit=audit)))
    with_line = plain(audit_text(SimpleNamespace(audit=dict(audit, one_run_actions=ACT))))
    assert "One-run action audit" not in without and with_line.startswith(without)
    assert "it tests the DP of the released statistics" in with_line and "it tests JDP itself" in with_line
