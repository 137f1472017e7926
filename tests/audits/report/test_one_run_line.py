"""The one-run line of a row of ``privacct report --full``: the one-run audit runs on the row's own record (the paper
setting, printed constants), passed whole, never rebuilt from copies of its fields (issue 22)."""

from privacct.audits import one_run_learner
from privacct.audits.learner_audit import accounted_epsilon, learner_config
from privacct.audits.report.rows import ReportScale, _one_run


def _quiet(_line: str) -> None:
    pass


def test_a_row_runs_its_one_run_audit_on_its_own_record(monkeypatch):
    cfg = learner_config("ucb-vi", privacy="ldp", calibration="paper", episodes=65, horizon=1)
    seen: list = []
    original = one_run_learner.one_run_audit_learner

    def recording(config, **kw):
        seen.append(config)
        return original(config, **kw)
    monkeypatch.setattr(one_run_learner, "one_run_audit_learner", recording)
    d = _one_run(cfg, ReportScale(None, seeds=1, audit_trials=10, one_run_canaries=16), 0, _quiet)
    assert len(seen) == 1 and seen[0] is cfg
    assert d["canaries"] == 16 and d["verdict"] in ("passes", "fails", "inconclusive")
    assert d["accounted_epsilon"] == accounted_epsilon(cfg)[1]
    assert _one_run(cfg, ReportScale(None, seeds=1, audit_trials=10), 0, _quiet) is None   # --full only
