"""An audit tests the learner that runs (issues 20 item 4, 21 item 2; docs/auditing.md#factorized-counters): an
audited run without option ``counter`` runs, and its audit observes, the counter the unaudited run of the same
RunConfig runs -- ``tight``'s own choice (tree-honaker for the tabular learners, BLT at the tree's shift for
private-lsvi-ucb), never the tree swapped in for the audit -- in the released-statistics audit, the one-run audit and
the billboard check; the report's audit line names the counter audited."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from privacct.algorithms.contract import AuditHook, CanaryPlan
from privacct.algorithms.registry import get_learner
from privacct.audits.learner_audit import LearnerMechanism
from privacct.audits.report.rows import counter_of
from privacct.audits.suite import audit_setting
from privacct.rng import spawn_sequences

#: tight's own choice at each learner's audit configuration (privacct.counters.choice; docs/counters.md#choosing-for-regret)
CHOSEN = {"ucb-vi": "tree-honaker", "ucb-po": "tree-honaker", "private-lsvi-ucb": "blt"}


def _tight(algorithm: str):
    cfg = audit_setting(algorithm, "jdp").config
    assert cfg.calibration == "tight" and "counter" not in dict(cfg.options)
    return cfg


def _structures(log) -> list:
    return [(g.name, g.structure) for g in log.release_groups]


@pytest.mark.parametrize("algorithm", sorted(CHOSEN))
def test_an_audited_run_runs_the_counter_the_unaudited_run_runs(algorithm):
    cfg = _tight(algorithm)
    spec = get_learner(algorithm)
    declared = spec.declared_log(cfg)
    assert counter_of(declared) == CHOSEN[algorithm]   # tight chose a counter other than the tree here
    plain = spec.run(cfg, spawn_sequences(0, 1))
    audited = spec.run(cfg, spawn_sequences(0, 1), audit=AuditHook("A"))
    assert _structures(audited.log) == _structures(plain.log) == _structures(declared)
    assert audited.log.params == plain.log.params       # the whole calibration (lsvi: lam~, y noise) is tight's


@pytest.mark.parametrize("algorithm", sorted(CHOSEN))
def test_the_released_statistics_audit_observes_tights_counter(algorithm):
    mech = LearnerMechanism(_tight(algorithm))
    names = [b.name for b in mech.layout().blocks]
    assert any(CHOSEN[algorithm] in n for n in names), names
    assert not any("tree node" in n for n in names), names
    assert not mech.derived().left_out


@pytest.mark.parametrize("algorithm", sorted(CHOSEN))
def test_a_one_run_audit_observes_tights_counter(algorithm):
    cfg = replace(_tight(algorithm), episodes=33, epsilon=5.0)
    assert counter_of(get_learner(algorithm).declared_log(cfg)) == CHOSEN[algorithm]
    hook = AuditHook("A", fixed_users=False, plan=CanaryPlan((1, 3), ("A", "B")))
    r = get_learner(algorithm).run(cfg, spawn_sequences(0, 1), audit=hook)
    names = {x.name for x in r.tap.canary_records}
    assert {x.user for x in r.tap.canary_records} == {1, 3}
    assert names and all(CHOSEN[algorithm] in n for n in names), names
    assert not [u for u in r.tap.unobserved if u.group != "y"]   # (private-lsvi-ucb's y releases stay unobserved)


def test_the_one_run_audit_of_tights_counter_keeps_its_sandwich():
    from privacct.audits.one_run_learner import one_run_audit_learner

    r = one_run_audit_learner(replace(_tight("private-lsvi-ucb"), episodes=33, epsilon=5.0), canaries=8)
    assert r.sandwich_ok
    assert r.releases_per_canary == 2.0   # BLT: one difference of releases per Gram counter (H = 2); the tree's nodes: 5
    assert not any("gram" in n for n in r.notes), r.notes


def test_the_billboard_check_runs_tights_counter():
    """The billboard check's coupled runs go through the spec's run with an audit hook: every one runs tight's counter
    (a spy on the registered spec, restored after)."""
    from privacct.audits.billboard import billboard_check

    spec = get_learner("ucb-vi")
    run, seen = spec.run, []

    def spy(config, seeds, **kw):
        out = run(config, seeds, **kw)
        seen.append(counter_of(out.log))
        return out

    object.__setattr__(spec, "run", spy)   # LearnerSpec is a frozen dataclass
    try:
        r = billboard_check(_tight("ucb-vi"), trials=4, seed=0)
    finally:
        object.__setattr__(spec, "run", run)
    assert seen and set(seen) == {CHOSEN["ucb-vi"]}
    assert r.verdict in ("passes", "inconclusive")


def test_the_report_audit_line_names_the_counter_audited():
    from privacct.audits.report.build import counter_audited

    row = SimpleNamespace(audit={"counter": "tree"}, paper_counter="tree")
    assert counter_audited(row) == ", counter audited: tree"
    row = SimpleNamespace(audit={"counter": "blt"}, paper_counter="tree")
    assert counter_audited(row) == ", counter audited: blt (the printed run's: tree)"
    assert counter_audited(SimpleNamespace(audit={"counter": None}, paper_counter=None)) == ""
    assert counter_audited(SimpleNamespace(audit={})) == ""
