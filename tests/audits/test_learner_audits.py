"""Learner audits through the AUDIT HOOK, run with the privacy_audit fixture for every private learner."""

import numpy as np
import pytest

from privacct.audits.learner import LearnerMechanism, audit_learner, learner_config
from privacct.audits.suite import suite
from privacct.errors import PrivacctError

AUDITS = suite(episodes=8, horizon=3)


def test_suite_covers_every_private_learner():
    from privacct.algorithms.registry import learners
    expected = {(n, p) for n, s in learners().items() for p in s.privacy_models if p != "none"}
    assert {(a.algorithm, a.privacy) for a in AUDITS} == expected
    tab = [a for a in AUDITS if a.algorithm == "ucb-vi"]
    assert tab and all(a.delta == 0.0 for a in tab)  # tabular logs are pure Laplace


@pytest.mark.parametrize("audit", AUDITS, ids=lambda a: a.name)
def test_private_learner_passes_its_audit(privacy_audit, audit):
    # tabular learners run ~1000 seeds/s; the linear ones are slower, so they get a smaller CI budget
    # (60 trials cannot give the linear learners' audits power: they are allowed to be inconclusive)
    tabular = audit.algorithm in ("ucb-vi", "ucb-po")
    trials = 300 if tabular else 60
    r = privacy_audit.learner(audit.algorithm, privacy=audit.privacy, epsilon=audit.epsilon, delta=audit.delta,
                              calibration="tight", episodes=audit.episodes, horizon=audit.horizon,
                              observe="released", trials=trials, executor="inline", allow_inconclusive=not tabular)
    assert r.verdict != "fails" and r.claimed_epsilon == audit.epsilon
    for c in r.counts.values():
        n_eval = r.trials - r.trials // 2  # the certifying half (--privacy-audit-trials may change r.trials)
        assert c["TP"] + c["FN"] == n_eval and c["FP"] + c["TN"] == n_eval


def test_actions_observation_excludes_user_one_and_is_one_hot():
    cfg = learner_config("ucb-vi", privacy="jdp", episodes=8, horizon=3)
    out = LearnerMechanism(cfg, "actions")("A", np.random.default_rng(0), 20)
    assert out.shape == (20, 7 * 3) and np.issubdtype(out.dtype, np.integer)
    r = audit_learner("ucb-vi", privacy="jdp", episodes=8, horizon=3, observe="actions", trials=200, executor="inline")
    projections = [s for s in r.statistics if "projection" in s]  # (per-coordinate statistics use raw columns)
    assert projections and all(s.startswith("one-hot") for s in projections)


def test_learner_audit_same_seed_same_result_on_processes():
    kw = dict(privacy="jdp", episodes=8, horizon=3, trials=400, seed=3, chunk_size=100)
    a = audit_learner("ucb-vi", executor="inline", **kw)
    b = audit_learner("ucb-vi", executor="processes", workers=2, **kw)
    assert b.executor == "processes"
    assert a.counts == b.counts and a.epsilon_lower_bound == b.epsilon_lower_bound


@pytest.mark.parametrize("kwargs, needle", [
    (dict(privacy="none"), "privacy"),
    (dict(observe="trajectories"), "observe"),
    (dict(calibration="loose"), "calibration"),
    (dict(episodes=0), "episodes"),
    (dict(trials=5), "trials"),
])
def test_learner_audit_bad_input(kwargs, needle):
    args = dict(privacy="jdp", episodes=8, horizon=3, trials=100)
    args.update(kwargs)
    with pytest.raises(PrivacctError, match=needle):
        audit_learner("ucb-vi", **args)


def test_three_checks_on_a_real_learner_tight_vs_printed_constants():
    from privacct.audits.suite import LearnerAudit, check_learner, paper_constants

    tight = check_learner(LearnerAudit("ucb-vi", "jdp", episodes=8, horizon=3), trials=200, executor="inline")
    assert tight.caught_by == [] and tight.accountant_epsilon <= 1.0 + 1e-9
    printed = [a for a in paper_constants() if a.algorithm == "ucb-vi" and a.privacy == "jdp"]
    assert printed
    a = printed[0]
    r = check_learner(LearnerAudit(a.algorithm, a.privacy, calibration="paper", episodes=8, horizon=3),
                      trials=200, executor="inline")
    # the printed constants (sensitivity H, ln K levels) account above the claim of 1
    assert "accountant" in r.caught_by and r.accountant_epsilon > 1.0
