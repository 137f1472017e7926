"""Issue 22: a report row passes its setting's RunConfig whole (paper_configs binds every setting to its learner; the
audit and the billboard check take the row's claim as a record)."""

from __future__ import annotations

import dataclasses

from privacct.algorithms.contract import RunConfig
from privacct.audits.report.rows import _default_settings, paper_configs
from privacct.audits.suite import audit_setting


def test_every_row_setting_holds_its_learners_record():
    configs = paper_configs()
    assert configs
    for spec, setting in configs:
        cfg = setting.run_config(spec.name)
        assert cfg is setting.config and cfg.algorithm == spec.name and cfg.calibration == "paper"


def test_the_rows_audit_is_the_audit_setting_of_its_claim():
    """What _audit runs: the row's claim (privacy, eps, delta, printed constants) at the learner's audit setting, the
    same configuration as the claim given field by field (before issue 22)."""
    for _spec, setting in paper_configs(["ucb-vi", "pp-ucrl-vtr", "private-lsvi-ucb"]):
        cfg = setting.config
        a = audit_setting(cfg)
        assert a == audit_setting(cfg.algorithm, cfg.privacy, calibration="paper", epsilon=cfg.epsilon, delta=cfg.delta)
        assert (a.calibration, a.epsilon, a.delta) == ("paper", cfg.epsilon, cfg.delta)


def test_a_learner_without_settings_gets_records_of_its_own():
    from privacct.algorithms.registry import get_learner

    spec = dataclasses.replace(get_learner("pp-ucrl-vtr"), paper_settings=())
    settings = _default_settings(spec)
    assert [s.privacy for s in settings] == ["jdp", "ldp"]
    for s in settings:
        assert s.config == RunConfig("pp-ucrl-vtr", s.privacy, epsilon=1.0, delta=s.delta) and s.delta > 0
