"""Constant sets (theory | tuned), the default set of ``privacct run``, and the uniform-policy regret.

The done-criterion of the issue at reduced scale: the non-private UCB-VI (RiverSwim, H = 20) and UCRL-VTR
(RiverSwim linear mixture) learn their default environment under their default constant set -- at most a
third of the uniform random policy's exact regret at K = 1000 with 2 seeds (measured at K = 5000, 5 seeds
in benchmarks/constants.md) -- while the theory constants do not.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from privacct.algorithms.contract import ConstantSet, RunConfig
from privacct.algorithms.envs.tabular import TabularMDP
from privacct.algorithms.registry import learners
from privacct.algorithms.runner import uniform_policy_regret
from privacct.errors import PrivacctError
from privacct.rng import spawn_sequences

LEARNERS = learners()


def _final(name: str, constants: str, K: int = 1000, seeds: int = 2) -> tuple[float, float]:
    spec = LEARNERS[name]
    cfg = spec.constant_set(constants).apply(RunConfig(name, "none", episodes=K))
    reg = spec.run(cfg, spawn_sequences(0, seeds)).regret.sum(axis=1).mean()
    return float(reg), uniform_policy_regret(cfg)


@pytest.mark.parametrize("name", ["ucb-vi", "ucrl-vtr"])
def test_default_constants_learn_the_default_environment_and_theory_does_not(name):
    spec = LEARNERS[name]
    assert spec.default_constants == "tuned"
    tuned, uniform = _final(name, "tuned")
    assert tuned <= uniform / 3, (tuned, uniform)
    theory, _ = _final(name, "theory")
    assert theory > uniform / 3, (theory, uniform)   # the defaults matter: the paper's constants do not learn here


def test_every_learner_has_both_sets_and_tuned_sets_hold_no_privacy_option():
    for name, spec in LEARNERS.items():
        assert spec.constant_set("theory").name == "theory"
        tuned = spec.constant_set("tuned")
        assert tuned.how and "grid" in tuned.how, name
        assert spec.constant_set().name == spec.default_constants
        assert spec.uniform_regret is not None, name
    with pytest.raises(PrivacctError, match="shift_scale"):
        ConstantSet("tuned", 0.1, (("shift_scale", 0.5),))
    with pytest.raises(PrivacctError, match="constants must be one of theory, tuned"):
        LEARNERS["ucb-vi"].constant_set("best")
    with pytest.raises(PrivacctError, match="bonus_scale"):
        ConstantSet("tuned", 0.0)


@pytest.mark.parametrize("name, privacy", [(n, p) for n, s in sorted(LEARNERS.items()) for p in s.privacy_models
                                           if p != "none"])
def test_privacy_noise_never_changes_with_the_set(name, privacy):
    spec = LEARNERS[name]
    base = RunConfig(name, privacy, epsilon=0.5, delta=dict(spec.test_settings).get("delta", 1e-5), episodes=64,
                     calibration="paper")
    logs = [spec.build_log(spec.constant_set(c).apply(base)) for c in ("theory", "tuned")]
    scales = [[(g.name, g.noise_scale, g.sensitivity.value) for g in log.release_groups] for log in logs]
    assert scales[0] == scales[1]


def test_apply_keeps_what_the_user_set():
    spec = LEARNERS["ucb-po"]
    cfg = RunConfig("ucb-po", options=(("eta", 7.0), ("pool_over_h", True)), bonus_scale=0.3)
    out = spec.constant_set("tuned").apply(cfg, keep_bonus=True, keep_options=("eta",))
    opts = dict(out.options)
    assert out.bonus_scale == 0.3 and opts["eta"] == 7.0 and opts["pool_over_h"] is True
    assert opts["e_scale"] == 0.05   # from the set
    assert spec.constant_set("tuned").apply(cfg).bonus_scale == spec.constant_set("tuned").bonus_scale


def test_uniform_policy_regret_is_exact_on_a_small_mdp():
    # one step, two states, rewards (1, 0.25 | 0, 0): V* = 1, uniform = 0.625 from s_1 = 0
    P = np.zeros((1, 2, 2, 2))
    P[..., 0] = 1.0
    R = np.array([[[1.0, 0.25], [0.0, 0.0]]])
    assert TabularMDP(P, R).uniform_policy_regret() == pytest.approx(0.375)
    # two steps: the second step pays max 1 under the optimal policy, 0.625 under the uniform one
    P2 = np.concatenate([P, P])
    R2 = np.concatenate([R, R])
    assert TabularMDP(P2, R2).uniform_policy_regret() == pytest.approx(0.75)


def test_run_summary_and_json_record_the_set_and_the_uniform_regret(tmp_path, capsys):
    from privacct.cli import main

    assert main(["run", "ucb-vi", "--episodes", "30", "--seeds", "2", "--out", str(tmp_path / "a"), "--json",
                 "--no-progress"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["constants"] == "tuned" and s["bonus_scale"] == LEARNERS["ucb-vi"].constant_set("tuned").bonus_scale
    assert s["uniform_policy_regret"] == pytest.approx(30 * 3.35347494, rel=1e-6)  # RiverSwim H = 20: 3.3535 / episode
    assert s["regret_over_uniform"] == pytest.approx(s["final_regret_mean"] / s["uniform_policy_regret"])
    assert main(["run", "ucb-vi", "--episodes", "30", "--seeds", "1", "--out", str(tmp_path / "b"), "--constants",
                 "theory", "--bonus-scale", "0.5", "--json", "--no-progress"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["constants"] == "theory" and s["bonus_scale"] == 0.5 and s["constants_overridden"] == ["bonus_scale"]
    assert main(["run", "ucrl-vtr", "--episodes", "20", "--seeds", "1", "--out", str(tmp_path / "c"),
                 "--no-progress"]) == 0
    line = capsys.readouterr().out
    assert "constants=tuned" in line and "uniform random policy" in line


def test_run_help_lists_the_seed_003_variants(capsys):
    from privacct.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    for name in ("pp-ucrl-vtr-plus", "pp-ucrl-vtr-laplace", "batched-jdp-lsvi-ucb-laplace", "--constants"):
        assert name in out


def test_report_has_rows_for_the_seed_003_variants():
    # issue 12 "Done when": privacct report lists the new learners through their paper_settings
    from privacct.audits.report import paper_configs

    rows = {(spec.name, cfg.privacy, cfg.delta) for spec, cfg in paper_configs()}
    for name, privacy in (("pp-ucrl-vtr-plus", "jdp"), ("pp-ucrl-vtr-plus", "ldp")):
        assert (name, privacy, 1e-5) in rows
    for name, privacy in (("pp-ucrl-vtr-laplace", "jdp"), ("pp-ucrl-vtr-laplace", "ldp"),
                          ("batched-jdp-lsvi-ucb-laplace", "jdp")):
        assert (name, privacy, 0.0) in rows   # pure DP: accounted at delta = 0
