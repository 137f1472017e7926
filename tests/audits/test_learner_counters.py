"""Learner audits of every counter strategy (issues 20/21; docs/auditing.md#factorized-counters): at a learner's
audit configuration with ``--option counter=...`` the released-statistics audit observes the counter (tree-honaker's
nodes, a Toeplitz counter's whitened releases), its layout weighs user 1's shift by column 1 of the declared R, it
stays within the accounted eps, and the planted noise-quarter bug fails it for a non-tree strategy."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from privacct.audits.learner_audit import LearnerMechanism
from privacct.audits.suite import audit_setting

STRATEGIES = ("tree", "tree-honaker", "sqrt-toeplitz", "blt")
TRIALS = 1_000


def _with_counter(algorithm: str, counter: str, **changes):
    a = audit_setting(algorithm, "jdp")
    opts = dict(a.config.options)
    opts["counter"] = counter
    return a.with_config(options=tuple(sorted(opts.items())), **changes)


def _declared_column(config) -> np.ndarray:
    """Column 1 of R = L^{-1} A of the log's counter, by a dense solve of its declared L."""
    from privacct.algorithms.registry import get_learner
    from privacct.counters.registry import get_strategy

    st = get_learner(config.algorithm).build_log(config).release_groups[0].structure
    L, _ = get_strategy(st.strategy).factorization(st)
    K = int(st.leaves)
    return np.linalg.solve(L, np.tril(np.ones((K, K))))[:, 0]


@pytest.mark.parametrize("counter", STRATEGIES)
def test_every_strategy_is_audited_within_its_accounting(counter):
    """ucb-vi JDP at its audit configuration (K = 4: a counter of 3 leaves, where the strategies differ)."""
    audit = _with_counter("ucb-vi", counter)
    r = audit.run(trials=TRIALS, executor="inline")
    assert r.sandwich_ok and r.epsilon_lower_bound <= r.accounted_epsilon
    assert r.verdict in ("passes", "inconclusive")
    assert r.accounted_epsilon == pytest.approx(1.0, rel=1e-6)
    assert r.oracle is not None and r.oracle.epsilon <= r.accounted_epsilon
    observed = {"tree": 2, "tree-honaker": 2, "sqrt-toeplitz": 3, "blt": 3}[counter]   # nodes [1, 1], [1, 2]; 3 releases
    assert f"{observed} release(s) of user 1" in " ".join(r.notes)
    assert not any(n.startswith("not observed") for n in r.notes)


@pytest.mark.parametrize("counter", ["sqrt-toeplitz", "blt"])
def test_the_layout_weighs_user_1_by_column_1_of_the_declared_r(counter):
    audit = _with_counter("ucb-vi", counter)
    layout = LearnerMechanism(audit.config).layout()
    r = _declared_column(audit.config)
    assert [b.name for b in layout.blocks] == [f"counts {counter} release {t} whitened" for t in (1, 2, 3)]
    first = np.subtract(*layout.blocks[0].means())
    for t, b in enumerate(layout.blocks):
        assert np.allclose(np.subtract(*b.means()), r[t] * first, rtol=1e-9, atol=0)
    assert r[1] != 1.0   # not the tree's 0/1 column


def test_tree_honaker_is_observed_at_the_trees_nodes():
    tree = LearnerMechanism(_with_counter("ucb-vi", "tree").config).layout()
    hon = LearnerMechanism(_with_counter("ucb-vi", "tree-honaker").config).layout()
    assert [b.name for b in hon.blocks] == ["counts tree-honaker node over users 1..1",
                                            "counts tree-honaker node over users 1..2"]
    for a, b in zip(tree.blocks, hon.blocks, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(a.means(), b.means(), strict=True))


@pytest.mark.parametrize("counter", ["blt", "sqrt-toeplitz"])
def test_a_planted_noise_quarter_fails_a_non_tree_strategy(counter):
    bug = replace(_with_counter("ucb-vi", counter), noise_multiplier=0.25)
    r = bug.run(trials=TRIALS, executor="inline")
    assert r.verdict == "fails" and not r.sandwich_ok
    assert r.epsilon_lower_bound > r.accounted_epsilon


@pytest.mark.parametrize("algorithm, counter", [("pp-ucrl-vtr", "blt"), ("private-lsvi-ucb", "sqrt-toeplitz"),
                                                ("batched-jdp-lsvi-ucb", "tree-honaker")])
def test_audited_runs_with_an_explicit_counter_run_and_observe_it(algorithm, counter):
    mech = LearnerMechanism(_with_counter(algorithm, counter).config)
    names = [b.name for b in mech.layout().blocks]
    assert any(counter in n for n in names), names
    assert not mech.derived().left_out


@pytest.mark.parametrize("algorithm", ["pp-ucrl-vtr-laplace", "batched-jdp-lsvi-ucb-laplace"])
def test_a_one_run_audit_records_a_laplace_toeplitz_counter_in_gaussian_form(algorithm):
    """Once refused (no exact likelihood of a difference of releases); now recorded for output-only scores
    (docs/auditing.md#one-run-scores)."""
    from privacct.algorithms.contract import AuditHook, CanaryPlan
    from privacct.algorithms.registry import get_learner
    from privacct.counters.observed import GAUSSIAN_FORM
    from privacct.rng import spawn_sequences

    cfg = _with_counter(algorithm, "blt").config
    hook = AuditHook("A", fixed_users=False, plan=CanaryPlan((1,), ("A",)))
    r = get_learner(algorithm).run(cfg, spawn_sequences(0, 1), audit=hook)
    assert r.tap.canary_records and all(x.mechanism == GAUSSIAN_FORM for x in r.tap.canary_records if "blt" in x.name)


@pytest.mark.parametrize("algorithm, counter", [("pp-ucrl-vtr", "blt"), ("ucb-vi", "tree-honaker"),
                                                ("private-lsvi-ucb", "sqrt-toeplitz")])
def test_a_one_run_audit_observes_a_factorized_counter(algorithm, counter):
    from privacct.audits.one_run_learner import one_run_audit_learner

    base = _with_counter(algorithm, counter).config
    r = one_run_audit_learner(replace(base, episodes=33, epsilon=5.0), canaries=8)
    assert r.releases_per_canary >= 1
    assert not any("gram" in n or counter in n for n in r.notes), r.notes   # (private-lsvi-ucb's y releases stay unobserved)
    assert r.sandwich_ok


def test_the_gaussian_loss_structure_is_the_column_norm_times_the_shift():
    """mu of the observation = ||R[:, 1]|| ||x_A - x_B|| / sigma per counter (docs/auditing.md#factorized-counters):
    pp-ucrl-vtr JDP at K = 5 (4 leaves) with sqrt-toeplitz, from release 1 of each counter and R computed apart."""
    from privacct.audits.learner_audit import loss_structure

    audit = _with_counter("pp-ucrl-vtr", "sqrt-toeplitz", episodes=5)
    layout = LearnerMechanism(audit.config).layout()
    r = _declared_column(audit.config)
    firsts = [b for b in layout.blocks if b.name.endswith("release 1 whitened")]
    assert len(layout.blocks) == 4 * len(firsts)
    mu2 = sum(float(np.sum(np.subtract(*b.means()) ** 2)) / b.scale ** 2 for b in firsts) * float(np.sum(r * r))
    assert loss_structure(layout).mu == pytest.approx(np.sqrt(mu2), rel=1e-9)
