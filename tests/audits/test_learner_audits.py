"""Learner audits through the contract's audit hook: every private learner at its audit configuration,
the planted learner-level bugs (caught by the audit alone), the printed constants that fail their claim
with valid neighbours, and the sandwich eps_lb <= eps_accounted of the same configuration."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.audits.learner_audit import (LearnerMechanism, SandwichViolation, audit_learner, learner_config, np_statistic)
from privacct.audits.suite import audit_setting, check_learner, paper_failures, planted_noise_bugs, suite
from privacct.errors import PrivacctError

AUDITS = suite()
CI_TRIALS = 2_000


def test_suite_covers_every_private_learner():
    from privacct.algorithms.registry import learners
    expected = {(n, p) for n, s in learners().items() for p in s.privacy_models if p != "none"}
    assert {(a.algorithm, a.privacy) for a in AUDITS} == expected
    specs = learners()
    for a in AUDITS:   # every shipped private learner declares its own audit setting, and the suite runs it
        own = specs[a.algorithm].audit_setting
        assert own is not None and own.why, a.algorithm
        assert (a.episodes, a.horizon, a.env, a.bonus_scale, a.options, a.trials) == \
               (own.episodes, own.horizon, own.env, own.bonus_scale, own.options, own.trials)
    pure = {a.name for a in AUDITS if all(g.mechanism == "laplace" for g in a_log(a).release_groups)}
    assert all(a.delta == 0.0 for a in AUDITS if a.name in pure)  # pure Laplace logs: the paper's pure-DP claim
    assert all(a.delta > 0 for a in AUDITS if a.name not in pure)
    assert {a.algorithm for a in AUDITS if a.name in pure} >= {"ucb-vi", "ucb-po"}


def a_log(audit):
    from privacct.algorithms.registry import get_learner
    return get_learner(audit.algorithm).build_log(audit.config)


@pytest.mark.parametrize("audit", AUDITS, ids=lambda a: a.name)
def test_faithful_learner_is_not_caught_and_stays_in_its_sandwich(audit):
    r = audit.run(trials=CI_TRIALS, executor="inline")
    assert r.verdict in ("passes", "inconclusive") and r.epsilon_lower_bound <= r.claimed_epsilon
    assert r.statistics == ["neyman-pearson likelihood-ratio"]
    assert r.accounted_epsilon == pytest.approx(1.0, rel=1e-6)  # tight: calibrated to the claim at this configuration
    assert r.sandwich_ok and r.epsilon_lower_bound <= r.accounted_epsilon
    assert r.oracle is not None and 0 <= r.oracle.epsilon <= 1.0
    assert r.power.criterion == "learner-oracle" and r.power.reference_epsilon == 2.0
    n_eval = r.trials - r.trials // 2
    for c in r.counts.values():
        assert c["TP"] + c["FN"] == n_eval and c["FP"] + c["TN"] == n_eval


@pytest.mark.parametrize("bug", planted_noise_bugs(), ids=lambda a: a.name)
def test_planted_learner_bug_is_caught_by_the_audit_alone(bug):
    caught = check_learner(bug, checks=("audit",), executor="inline")
    assert caught.caught_by == ["audit"], caught.notes
    assert caught.audit_epsilon_lower_bound > bug.epsilon
    assert caught.audit["sandwich_ok"] is False        # it leaks more than the (faithful) log declares
    blind = check_learner(bug, checks=("accountant", "ledger"))
    assert blind.caught_by == [], blind.notes            # the log and the ledger cannot see it
    faithful = check_learner(audit_setting(bug.algorithm, bug.privacy), trials=bug.trials, checks=("audit",),
                             executor="inline")
    assert faithful.caught_by == []                      # the same audit does not flag the faithful learner


@pytest.mark.parametrize("audit", paper_failures(), ids=lambda a: a.name)
def test_printed_constants_are_certified_failing_with_valid_neighbours(audit):
    trials = {"ucb-vi": {"jdp": 60_000, "ldp": 10_000}, "private-lsvi-ucb": {"jdp": 5_000}}[audit.algorithm][audit.privacy]
    r = audit.run(trials=trials)
    assert r.verdict == "fails" and r.epsilon_lower_bound > 1.0
    assert r.sandwich_ok and r.accounted_epsilon > r.epsilon_lower_bound


def test_tabular_jdp_oracle_matches_the_issue_figure():
    # valid pair, used releases only: 6 Laplace coordinates at 1 / (3 ln 4), 10^5 trials per side -> ~1.22
    from privacct.audits.oracle import LossStructure, oracle_epsilon
    s = LossStructure((1 / (3 * np.log(4)),) * 6, 0.0)
    assert s.pure_epsilon == pytest.approx(2 / np.log(4))
    assert oracle_epsilon(s, 50_000, 0.025, 0.0) == pytest.approx(1.22, abs=0.01)


def test_sandwich_violation_is_loud():
    with pytest.raises(SandwichViolation, match="leaks more than its log"):
        audit_learner("ucb-vi", privacy="jdp", episodes=4, horizon=1, trials=3_000, noise_multiplier=0.25,
                      executor="inline")


def test_np_statistic_is_the_exact_laplace_ratio_and_bounded_by_the_pure_loss():
    cfg = learner_config("ucb-vi", privacy="ldp", calibration="paper", episodes=3, horizon=2)
    mech = LearnerMechanism(cfg)
    st = np_statistic(mech.layout())
    xa, xb = mech("A", np.random.default_rng(0), 3000), mech("B", np.random.default_rng(1), 3000)
    la, lb = st(xa), st(xb)
    bound = 6 * 2 / (3 * 2)  # 6H coordinates moved by 1, scale 3H / eps: pure eps 2
    assert np.all(np.abs(la) <= bound + 1e-9) and np.all(np.abs(lb) <= bound + 1e-9)
    assert la.mean() > 0 > lb.mean()
    assert np.isclose(la.max(), bound)          # the atom where every coordinate saturates


def test_np_statistic_of_gaussian_blocks_has_the_gdp_law():
    a = audit_setting("ldp-ucrl-vtr", "ldp")
    mech = LearnerMechanism(a.config)
    layout = mech.layout()
    st = np_statistic(layout)
    from privacct.audits.learner_audit import loss_structure
    mu = loss_structure(layout).mu
    la = st(mech("A", np.random.default_rng(0), 4000))
    assert la.mean() == pytest.approx(mu * mu / 2, abs=4 * mu / np.sqrt(4000))   # N(mu^2/2, mu^2) under D
    assert la.std() == pytest.approx(mu, rel=0.06)


def test_actions_observation_excludes_user_one_and_is_one_hot():
    r = audit_learner("ucb-vi", privacy="jdp", episodes=8, horizon=3, observe="actions", trials=200,
                      fixed_users=False, executor="inline")
    projections = [s for s in r.statistics if "projection" in s]  # (per-coordinate statistics use raw columns)
    assert projections and all(s.startswith("one-hot") for s in projections)
    assert r.oracle is None and not r.power.has_power and r.verdict in ("inconclusive", "fails")


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
    (dict(fixed_users="yes"), "fixed_users"),
    (dict(noise_multiplier=2.0), "noise_multiplier"),
    (dict(on_violation="ignore"), "on_violation"),
])
def test_learner_audit_bad_input(kwargs, needle):
    args = dict(privacy="jdp", episodes=8, horizon=3, trials=100, executor="inline")
    args.update(kwargs)
    with pytest.raises(PrivacctError, match=needle):
        audit_learner("ucb-vi", **args)


def test_result_dict_carries_the_same_configuration():
    r = audit_learner("ucb-vi", privacy="ldp", episodes=4, horizon=1, trials=500, executor="inline")
    d = r.to_dict()
    assert d["accounted_epsilon"] == pytest.approx(1.0) and d["episodes"] == 4 and d["horizon"] == 1
    assert d["verdict"] == r.verdict and d["oracle"]["exact"] is True and "power" in d
    assert "accounted" in r.summary() and "K=4, H=1" in r.summary()


def test_the_flat_sample_keeps_only_the_coordinates_the_canaries_move():
    """Coordinates whose means are equal under both canaries add exactly 0 to the likelihood ratio and to the privacy
    loss: the layout keeps the others only (a tabular node of 2HSA + HSAS coordinates moves in at most 6H), and the
    statistic and the loss structure are those of the full observation."""
    import numpy as np

    from privacct.audits.learner_audit import LearnerMechanism, learner_config, loss_structure, np_statistic

    cfg = learner_config("ucb-vi", privacy="jdp", calibration="paper", episodes=5, horizon=2)
    mech = LearnerMechanism(cfg)
    layout = mech.layout()
    obs = mech.observation("A", np.random.SeedSequence(3).spawn(8))
    full = sum(b.size for b in obs.blocks)
    moving = sum(int(np.count_nonzero(np.asarray(b.mean_a) != np.asarray(b.mean_b))) for b in obs.blocks)
    assert layout.width == moving < full and moving <= len(obs.blocks) * 6 * 2
    # the statistic on the kept coordinates equals the full Neyman-Pearson sum (Laplace blocks, constant means)
    x = mech("A", np.random.default_rng(5), 16)
    llr = np_statistic(layout)(x)
    obs16 = mech.observation("A", np.random.default_rng(5).bit_generator.seed_seq.spawn(16))
    ref = sum(((np.abs(b.values - b.mean_b) - np.abs(b.values - b.mean_a)) / b.scale).sum(axis=1) for b in obs16.blocks)
    assert np.allclose(llr, np.round(ref, 9), atol=1e-8)
    s = loss_structure(layout)
    assert len(s.laplace) == moving


def test_an_audit_takes_its_run_config_whole_and_the_keyword_form_builds_the_same(monkeypatch):
    """Issue 22: audit_learner(config, ...) audits the RunConfig it is passed; the keyword form is a thin adapter that
    makes the same record (audit_config); the result holds the record, and the audit builds its log once."""
    import collections
    import dataclasses

    from privacct.algorithms import registry
    from privacct.algorithms.contract import RunConfig
    from privacct.audits.learner_audit import audit_config

    config = RunConfig("ucb-vi", "ldp", epsilon=1.0, delta=0.0, calibration="tight", episodes=4, horizon=1)
    assert audit_config("ucb-vi", privacy="ldp", episodes=4, horizon=1) == config
    builds: collections.Counter = collections.Counter()

    def counting(name, build):
        def build_log(cfg):
            builds[name] += 1
            return build(cfg)
        return build_log
    table = tuple((n, dataclasses.replace(s, build_log=counting(n, s.build_log))) for n, s in registry.learners().items())
    monkeypatch.setattr(registry, "_load", lambda: table)
    whole = audit_learner(config, trials=200, seed=4, executor="inline")
    assert builds == {"ucb-vi": 1}, "the accounted eps and the power criterion read one build (before: 2)"
    words = audit_learner("ucb-vi", privacy="ldp", episodes=4, horizon=1, trials=200, seed=4, executor="inline")
    assert whole.config == words.config == config and whole.config is config
    assert (whole.counts, whole.epsilon_lower_bound, whole.accounted_epsilon) == \
           (words.counts, words.epsilon_lower_bound, words.accounted_epsilon)
    assert (whole.episodes, whole.horizon, whole.calibration) == (4, 1, "tight")
    assert {k: whole.to_dict()[k] for k in ("algorithm", "privacy", "calibration", "episodes", "horizon")} == \
           {k: getattr(config, k) for k in ("algorithm", "privacy", "calibration", "episodes", "horizon")}
    with pytest.raises(PrivacctError, match="as a RunConfig or as keywords, not both"):
        audit_learner(config, episodes=8)
    with pytest.raises(PrivacctError, match="privacy must be jdp or ldp"):
        audit_learner(dataclasses.replace(config, privacy="none"))


def test_a_learner_audit_holds_its_run_config():
    """LearnerAudit is a RunConfig plus the audit's own fields: the audit setting of a claim given field by field or
    as a record is the same, and a configuration change is a dataclasses.replace of the record."""
    import dataclasses

    from privacct.algorithms.contract import RunConfig
    from privacct.algorithms.registry import get_learner

    a = audit_setting("pp-ucrl-vtr", "jdp", calibration="paper", epsilon=0.5, delta=1e-5)
    own = get_learner("pp-ucrl-vtr").audit_configuration()
    assert isinstance(a.config, RunConfig) and a.trials == own.trials
    assert (a.episodes, a.horizon, a.env, a.bonus_scale, a.options) == \
           (own.episodes, own.horizon, own.env, own.bonus_scale, own.options)
    claim = RunConfig("pp-ucrl-vtr", "jdp", epsilon=0.5, delta=1e-5, calibration="paper", episodes=10_000)
    assert audit_setting(claim) == a
    b = a.with_config(episodes=7)
    assert b.config == dataclasses.replace(a.config, episodes=7) and (b.trials, b.observe) == (a.trials, a.observe)
    with pytest.raises(PrivacctError, match="must be a RunConfig"):
        type(a)("pp-ucrl-vtr")
