"""privacct.algorithms.memory: estimates from the configuration alone, growing with every size; each learner's
own model comes from its spec (``LearnerSpec.memory``), a spec without one gets the generic model."""

import dataclasses

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.memory import (GENERIC_EPISODE_BYTES, GENERIC_SEED_BYTES, audit_estimate, observation_width,
                                        run_estimate, samples_lower_bound)
from privacct.algorithms.registry import get_learner

UCB_VI = get_learner("ucb-vi")


def test_run_estimate_covers_the_regret_arrays_and_grows_with_sizes():
    small = run_estimate(UCB_VI, RunConfig("ucb-vi", "jdp", episodes=100), 2)
    assert small.total >= 8 * 2 * 100
    assert run_estimate(UCB_VI, RunConfig("ucb-vi", "jdp", episodes=10**11), 1).total > 8 * 10**11
    for alg, priv in [("ucb-vi", "jdp"), ("pp-ucrl-vtr", "jdp"), ("private-lsvi-ucb", "jdp")]:
        spec = get_learner(alg)
        base = run_estimate(spec, RunConfig(alg, priv, episodes=100), 2).total
        assert run_estimate(spec, RunConfig(alg, priv, episodes=1000), 2).total > base
        assert run_estimate(spec, RunConfig(alg, priv, episodes=100), 20).total > base
        assert run_estimate(spec, RunConfig(alg, priv, episodes=100, horizon=500), 2).total > base


def test_shipped_models_are_pinned():
    """The shipped families' models, term by term (the figures before they moved into the families' packages)."""
    e = run_estimate(UCB_VI, RunConfig("ucb-vi", "jdp", episodes=100), 2)
    assert e.terms == (("regret arrays", 6400), ("curves table", 4800), ("tree counter", 552960),
                       ("optimistic model", 276480), ("pre-drawn uniforms", 163840))
    assert run_estimate(get_learner("pp-ucrl-vtr"), RunConfig("pp-ucrl-vtr", "jdp", episodes=100), 2,
                        audit=True, runner=False).total == 1581952
    assert run_estimate(get_learner("private-lsvi-ucb"), RunConfig("private-lsvi-ucb", "jdp", episodes=100), 2).total \
        == 430400
    cfg = RunConfig("ucb-vi", "jdp", episodes=32)
    assert observation_width(UCB_VI, cfg, "released") == 6 * 20 * 6 * 2 * 8 == 11520
    assert observation_width(UCB_VI, cfg, "actions") == 31 * 20


def test_a_spec_without_a_model_gets_the_generic_one():
    bare = dataclasses.replace(UCB_VI, memory=None, observation_width=None)
    cfg = RunConfig("ucb-vi", "jdp", episodes=1000)
    e = run_estimate(bare, cfg, 10, runner=False)
    assert e.total == 8 * 10 * 1000 + 10 * (GENERIC_SEED_BYTES + GENERIC_EPISODE_BYTES * 1000)
    assert e.total < 2**30                                                   # a tiny run is never refused
    assert run_estimate(bare, RunConfig("ucb-vi", "jdp", episodes=10**9), 1).total > 2**40   # an absurd one is
    assert run_estimate(bare, cfg, 10, audit=True).total > run_estimate(bare, cfg, 10).total
    assert observation_width(bare, cfg, "released") == 64 * 1000 and observation_width(bare, cfg, "actions") == 64 * 999
    one_arg = dataclasses.replace(UCB_VI, observation_width=lambda config: 7)   # the contract's released width only
    assert observation_width(one_arg, cfg, "released") == 7 and observation_width(one_arg, cfg, "actions") == 64 * 999


def test_audit_estimate_grows_with_trials_and_is_at_least_the_samples():
    cfg = RunConfig("ucb-vi", "jdp", episodes=32)
    small = audit_estimate(UCB_VI, cfg, 100, "released", 2)
    big = audit_estimate(UCB_VI, cfg, 10**13, "released", 2)
    assert big.total > small.total and big.total >= samples_lower_bound(10**13)
    assert "samples" in big.main_terms(1)
