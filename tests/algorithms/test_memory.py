"""privacct.algorithms.memory: estimates from the configuration alone, growing with every size."""

from privacct.algorithms.base import RunConfig
from privacct.algorithms.memory import audit_estimate, run_estimate, samples_lower_bound


def test_run_estimate_covers_the_regret_arrays_and_grows_with_sizes():
    small = run_estimate("tabular", RunConfig("ucb-vi", "jdp", episodes=100), 2)
    assert small.total >= 8 * 2 * 100
    assert run_estimate("tabular", RunConfig("ucb-vi", "jdp", episodes=10**11), 1).total > 8 * 10**11
    for family, alg, priv in [("tabular", "ucb-vi", "jdp"), ("linear-mixture", "pp-ucrl-vtr", "jdp"),
                              ("linear-mdp", "private-lsvi-ucb", "jdp")]:
        base = run_estimate(family, RunConfig(alg, priv, episodes=100), 2).total
        assert run_estimate(family, RunConfig(alg, priv, episodes=1000), 2).total > base
        assert run_estimate(family, RunConfig(alg, priv, episodes=100), 20).total > base
        assert run_estimate(family, RunConfig(alg, priv, episodes=100, horizon=500), 2).total > base


def test_audit_estimate_grows_with_trials_and_is_at_least_the_samples():
    cfg = RunConfig("ucb-vi", "jdp", episodes=32)
    small = audit_estimate("tabular", cfg, 100, "released", 2)
    big = audit_estimate("tabular", cfg, 10**13, "released", 2)
    assert big.total > small.total and big.total >= samples_lower_bound(10**13)
    assert "samples" in big.main_terms(1)
