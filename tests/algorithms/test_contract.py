"""The learner contract, tested once over the whole registry (the dp_accounting ``PrivacyAccountantTest`` /
rlberry ``check_rl_agent`` pattern): a new learner gets these tests by registering.

Each learner runs at its ``LearnerSpec.test_settings``. For every private configuration the tests check
the audit hook end to end: the observation is exactly user 1's contribution plus the release's noise at
the DECLARED scale (so a learner whose noise is off, or whose observation misses user 1, fails), every
release the ledger says contains user 1 is observed (K - 1 leaves and all-node observation), the canary
pair never moves a release by more than the worst case its relation allows and attains it where the
family says so, and that worst case is what the log declares.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, RunConfig
from privacct.algorithms.neighbours import check_log_against
from privacct.algorithms.registry import families, learners
from privacct.errors import PrivacctError
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences



def _example_package():
    path = Path(__file__).resolve().parents[1] / "examples" / "example_package.py"
    spec = importlib.util.spec_from_file_location("example_package", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LEARNERS = learners()
# The worked third-party example (examples/custom_learner, docs/extending.md) runs the contract too, installed or not
if "example-pucb" not in LEARNERS:
    LEARNERS = {**LEARNERS, **_example_package().load().LEARNERS}
ALL = [(name, p) for name, spec in sorted(LEARNERS.items()) for p in spec.privacy_models]
PRIVATE = [(n, p) for n, p in ALL if p != "none"]
N = 64  # seeds per batch in the statistical checks


def config(name: str, privacy: str, **over) -> RunConfig:
    kw = dict(LEARNERS[name].test_settings)
    kw.update(over)
    delta = kw.pop("delta", 0.0)
    if privacy == "none":
        delta = 0.0
    return RunConfig(name, privacy, epsilon=1.0, delta=delta, calibration=kw.pop("calibration", "tight"), **kw)


def _cached(fn):
    cache = {}

    def wrapper(*args):
        if args not in cache:
            cache[args] = fn(*args)
        return cache[args]
    return wrapper


@_cached
def audited(name: str, privacy: str, canary: str, n: int = N, multiplier: float = 1.0):
    return LEARNERS[name].run_observed(config(name, privacy), spawn_sequences(7, n),
                                       audit=AuditHook(canary, noise_multiplier=multiplier))


def _distance(block, mean_a, mean_b) -> np.ndarray:
    d = np.broadcast_to(mean_a, block.values.shape) - np.broadcast_to(mean_b, block.values.shape)
    return np.abs(d).sum(axis=1) if block.mechanism == "laplace" else np.sqrt((d * d).sum(axis=1))


def _check_declarations(spec, cfg: RunConfig) -> None:
    """What the commands read off a spec (audit setting, report scale, memory model, reproduction) is well formed,
    declared or defaulted."""
    from privacct.algorithms.contract import AuditSetting, ReportEpisodes
    from privacct.algorithms.memory import observation_width, run_estimate

    assert isinstance(spec.audit_configuration(), AuditSetting) and isinstance(spec.report_scale(), ReportEpisodes)
    if spec.memory is not None:
        terms = spec.memory(cfg, 2, cfg.privacy != "none")
        assert terms and all(isinstance(k, str) and int(v) >= 0 for k, v in terms.items())
    assert run_estimate(spec, cfg, 2).total > 0 and observation_width(spec, cfg, "released") >= 1
    if spec.reproduce is not None:
        module, _, attr = spec.reproduce.partition(":")
        assert module and attr, spec.reproduce


class TestLearnerContract:
    @pytest.mark.parametrize("name, privacy", ALL)
    def test_spec_and_log(self, name, privacy):
        spec = LEARNERS[name]
        assert spec.name == name and spec.family and spec.test_settings
        assert name not in learners() or spec.family in families()
        _check_declarations(spec, config(name, privacy))
        assert set(spec.privacy_models) <= {"none", "jdp", "ldp"}
        log = spec.build_log(config(name, privacy))
        if privacy == "none":
            assert log is None
        else:
            assert log.claim is not None and log.privacy_model == ("joint" if privacy == "jdp" else "local")
            assert log.neighbouring == "replace-one-user"

    @pytest.mark.parametrize("name, privacy", ALL)
    def test_batched_equals_one_by_one_and_same_seed_same_bytes(self, name, privacy):
        spec, cfg = LEARNERS[name], config(name, privacy)
        seeds = spawn_sequences(11, 3)
        a = spec.run(cfg, seeds)
        assert a.regret.tobytes() == spec.run(cfg, spawn_sequences(11, 3)).regret.tobytes()
        for i in range(3):
            one = spec.run(cfg, [seeds[i]])
            np.testing.assert_array_equal(one.regret[0], a.regret[i])
        if privacy != "none":
            other = spec.run(cfg, spawn_sequences(12, 3))
            assert not np.array_equal(other.info["final_release"], a.info["final_release"])

    @pytest.mark.parametrize("name, privacy", PRIVATE)
    def test_ledger_equals_log(self, name, privacy):
        spec, cfg = LEARNERS[name], config(name, privacy)
        for cal in ("paper", "tight"):
            r = spec.run(RunConfig(**{**cfg.__dict__, "calibration": cal}), spawn_sequences(3, 2))
            chk = check_ledger(r.log, r.ledger)
            assert chk.ok, chk.to_dict()

    @pytest.mark.parametrize("name, privacy", PRIVATE)
    def test_audited_run_batched_equals_one_by_one(self, name, privacy):
        spec, cfg = LEARNERS[name], config(name, privacy)
        seeds = spawn_sequences(5, 3)
        batch = spec.run_observed(cfg, seeds, audit=AuditHook("B")).observation
        by_name = {b.name: b for b in batch.blocks}
        for i in range(3):
            one = spec.run_observed(cfg, [seeds[i]], audit=AuditHook("B")).observation
            for ob in one.blocks:      # a release seed i makes alone is the same release, with the same bytes, in the batch
                if ob.present is None or ob.present[0]:
                    b = by_name[ob.name]
                    assert b.present is None or b.present[i], ob.name
                    np.testing.assert_array_equal(ob.values[0], b.values[i])
            made = {b.name for b in batch.blocks if b.present is None or b.present[i]}
            assert made == {ob.name for ob in one.blocks if ob.present is None or ob.present[0]}

    @pytest.mark.parametrize("name, privacy", PRIVATE)
    @pytest.mark.parametrize("canary", ["A", "B"])
    def test_observation_is_user_one_plus_noise_at_the_declared_scale(self, name, privacy, canary):
        obs = audited(name, privacy, canary).observation
        assert obs.canary == canary
        K = config(name, privacy).episodes
        # the shipped learners report the actions sent to users 2..K (privacct.tap.prescribed); a third-party
        # learner may not (its audits then observe the released statistics only)
        shipped = LEARNERS[name].family in ("tabular", "linear-mixture", "linear-mdp")
        assert (obs.actions is None and not shipped) or (obs.actions.shape[:2] == (N, K - 1))
        noise = []
        for b in obs.blocks:
            mean = b.mean_a if canary == "A" else b.mean_b
            res = b.values - np.broadcast_to(mean, b.values.shape)
            keep = np.ones(len(res), bool) if b.present is None else b.present
            assert np.all(res[~keep] == 0)
            noise.append(res[keep].ravel() / (b.scale * (np.sqrt(2.0) if b.mechanism == "laplace" else 1.0)))
        z = np.concatenate(noise)
        assert z.size > 200
        assert abs(z.mean()) < 5 / np.sqrt(z.size)
        assert z.std() == pytest.approx(1.0, rel=0.15)

    @pytest.mark.parametrize("name, privacy", PRIVATE)
    @pytest.mark.parametrize("canary", ["A", "B"])
    def test_without_noise_the_observation_is_exactly_user_one(self, name, privacy, canary):
        # noise at 1e-9 of its scale: every observed value must be user 1's contribution (this side's mean)
        obs = audited(name, privacy, canary, 4, 1e-9).observation
        for b in obs.blocks:
            mean = np.broadcast_to(b.mean_a if canary == "A" else b.mean_b, b.values.shape)
            keep = slice(None) if b.present is None else b.present
            np.testing.assert_allclose(b.values[keep], mean[keep], rtol=0, atol=1e-6 * b.scale, err_msg=b.name)

    @pytest.mark.parametrize("name, privacy", PRIVATE)
    def test_planted_noise_bug_shrinks_the_noise_but_not_the_ledger(self, name, privacy):
        r = audited(name, privacy, "A", N, 0.25)
        faithful = LEARNERS[name].run_observed(config(name, privacy), spawn_sequences(7, N), audit=AuditHook("A"))
        assert [d.scale for d in r.ledger.draws()] == [d.scale for d in faithful.ledger.draws()]
        z = np.concatenate([(b.values - np.broadcast_to(b.mean_a, b.values.shape))[b.present if b.present is not None
                                                                                     else slice(None)].ravel()
                            / (b.scale * (np.sqrt(2.0) if b.mechanism == "laplace" else 1.0)) for b in r.observation.blocks])
        assert z.std() == pytest.approx(0.25, rel=0.15)

    @pytest.mark.parametrize("name, privacy", PRIVATE)
    def test_every_release_containing_user_one_is_observed(self, name, privacy):
        r = LEARNERS[name].run_observed(config(name, privacy), spawn_sequences(9, 1), audit=AuditHook("A"))
        draws = {}
        for d in r.ledger.draws():
            if d.first_user <= 1 <= d.last_user:
                draws[d.group] = draws.get(d.group, 0) + 1
        seen = {}
        for b in r.observation.blocks:
            if b.present is None or b.present[0]:
                seen[b.group] = seen.get(b.group, 0) + 1
        assert seen == draws

    @pytest.mark.parametrize("name, privacy", PRIVATE)
    def test_declared_sensitivity_is_the_worst_case_of_the_relation(self, name, privacy):
        spec, cfg = LEARNERS[name], config(name, privacy)
        nb = spec.neighbours(cfg)
        assert nb.relation.model == privacy
        log = spec.build_log(cfg)
        assert check_log_against(nb, log) == []
        for g in log.release_groups:
            assert g.sensitivity.value >= nb.group(g.name).worst_case > 0 or nb.group(g.name).worst_case == 0

    @pytest.mark.parametrize("name, privacy", PRIVATE)
    def test_canary_pair_moves_each_release_at_most_the_worst_case(self, name, privacy):
        spec, cfg = LEARNERS[name], config(name, privacy)
        nb = spec.neighbours(cfg)
        largest: dict[str, float] = {}
        for b in audited(name, privacy, "A").observation.blocks:
            d = _distance(b, b.mean_a, b.mean_b)
            if b.present is not None:
                d = d[b.present]
            if d.size:
                largest[b.group] = max(largest.get(b.group, 0.0), float(d.max()))
        for g, dist in largest.items():
            w = nb.group(g)
            assert dist <= w.worst_case * (1 + 1e-9) + 1e-12, (g, dist, w.worst_case)
            if w.attained:
                assert dist == pytest.approx(w.worst_case, rel=1e-9), (g, dist, w.worst_case)
        assert any(v > 0 for v in largest.values())  # the canaries differ somewhere

    @pytest.mark.parametrize("name, privacy", PRIVATE)
    def test_canaries_report_the_same_blocks_and_means(self, name, privacy):
        a, b = audited(name, privacy, "A").observation, audited(name, privacy, "B").observation
        assert [x.name for x in a.blocks] == [x.name for x in b.blocks]
        for x, y in zip(a.blocks, b.blocks, strict=True):
            if not x.varying:
                np.testing.assert_array_equal(x.mean_a, y.mean_a)
                np.testing.assert_array_equal(x.mean_b, y.mean_b)

    @pytest.mark.parametrize("name, privacy", ALL)
    def test_bad_input_is_one_clear_error(self, name, privacy):
        spec, cfg = LEARNERS[name], config(name, privacy)
        with pytest.raises(PrivacctError, match="seeds"):
            spec.run(cfg, [])
        with pytest.raises(PrivacctError, match="audit"):
            spec.run(cfg, spawn_sequences(0, 1), audit="A")
        if privacy == "none":
            with pytest.raises(PrivacctError, match="private"):
                spec.run(cfg, spawn_sequences(0, 1), audit=AuditHook("A"))
        with pytest.raises(PrivacctError, match="config.algorithm"):
            spec.run(RunConfig("not-" + name, privacy), spawn_sequences(0, 1))
