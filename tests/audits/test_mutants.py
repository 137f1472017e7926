"""Planted bugs: every mutant is caught by at least one check, every correct control by none."""

import numpy as np
import pytest

from privacct.audits.mutants import CHECKS, CONTROLS, MUTANTS, LearnerMutant, check_mutant, ledger_shape_problems
from privacct.audits.mutants.privatizers import TreeCounterPrivatizer
from privacct.ledger import Ledger

# which check must catch which mutant (documented in the registry); the audit may catch more
MUST = {
    "tree-noise-redrawn": {"ledger"},
    "noise-scale-halved": {"ledger", "audit"},
    "sensitivity-h-not-2h": {"accountant", "audit"},
    "tree-depth-ln-k": {"accountant"},
    "ldp-not-clipped-below": {"audit"},
    "noise-shared-across-pairs": {"ledger", "audit"},
    "gram-noise-not-symmetrised": {"ledger"},
    "adaptive-switching-no-cap": {"ledger"},
    "factorization-norm-too-small": {"ledger"},
    "counter-noise-reused": {"audit"},
    "counter-noise-path": {"ledger"},
    # learner-level planted bugs (noise at 1/4 of the declared scale): only the audit can see them;
    # run in tests/audits/test_learner_audits.py::test_planted_learner_bug_is_caught_by_the_audit_alone
    "learner-noise-quarter-ucb-vi-jdp": {"audit"},
    "learner-noise-quarter-pp-ucrl-vtr-jdp": {"audit"},
    "learner-noise-quarter-ldp-ucrl-vtr-ldp": {"audit"},
    "learner-noise-quarter-private-lsvi-ucb-jdp": {"audit"},
    # policy leaks (issue 20): the log, the ledger and the released statistics are the faithful learner's; only an
    # audit of the actions and the billboard check see them (test_policy_leak_is_caught_... below)
    "bonus-on-exact-counts": {"audit", "billboard check"},
    "switch-on-exact-gram": {"billboard check"},
}
PRIVATIZER_MUTANTS = sorted(n for n, m in MUTANTS.items() if not isinstance(m, LearnerMutant))


def test_registry_names_every_planted_bug_of_the_issue():
    assert set(MUTANTS) == set(MUST)
    for m in MUTANTS.values():
        if isinstance(m, LearnerMutant) and m.audit.mutant is not None:
            assert m.description and m.audit.noise_multiplier == 1 and m.audit.observe == "actions"
        elif isinstance(m, LearnerMutant):
            assert m.description and m.audit.noise_multiplier == 0.25 and m.audit.calibration == "tight"
        else:
            assert m.description and m.privatizer.bug is not None
    families = {m.audit.algorithm for m in MUTANTS.values() if isinstance(m, LearnerMutant)}
    from privacct.algorithms.registry import learners
    assert {learners()[a].family for a in families} == {"tabular", "linear-mixture", "linear-mdp"}


@pytest.mark.parametrize("name", PRIVATIZER_MUTANTS)
def test_mutant_is_caught(name):
    r = check_mutant(MUTANTS[name], seed=0)
    assert r.caught_by, r.notes
    assert set(r.caught_by) <= set(CHECKS)
    assert MUST[name] <= set(r.caught_by), (r.caught_by, r.notes)
    d = r.to_dict()
    assert d["name"] == name and d["caught_by"] == r.caught_by
    if "audit" in r.caught_by:
        assert r.audit_epsilon_lower_bound > r.claimed_epsilon


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_correct_control_is_not_caught(name):
    r = check_mutant(CONTROLS[name], seed=0)
    assert r.caught_by == [], r.notes
    assert r.accountant_epsilon <= r.claimed_epsilon * (1 + 1e-9)
    assert r.ledger_epsilon <= r.claimed_epsilon * (1 + 1e-9)
    assert 0.0 < r.audit_epsilon_lower_bound <= r.claimed_epsilon


def test_tree_privatizer_release_is_exact_plus_node_noise():
    p = TreeCounterPrivatizer()
    out = p.run("A", np.random.default_rng(0), 20_000)  # (size, K, m)
    x = p.contributions("A")
    K = p.users
    t = np.arange(1, K + 1)
    lo = t - (t & -t)
    exact = np.stack([x[l:h].sum(axis=0) for l, h in zip(lo, t, strict=True)])
    np.testing.assert_allclose(out.mean(axis=0), exact, atol=0.1)
    # node noise is Laplace(b): variance 2 b^2
    np.testing.assert_allclose(out.var(axis=0), 2 * p.code_scale() ** 2, rtol=0.1)


def test_shape_check_flags_shared_noise_only():
    for bug, flagged in ((None, False), ("shared-noise", True)):
        p = TreeCounterPrivatizer(bug=bug)
        ledger = Ledger()
        p.run("A", np.random.default_rng(0), 1, ledger=ledger)
        assert bool(ledger_shape_problems(p.build_log(), ledger)) is flagged


def test_policy_leak_is_caught_by_the_actions_audit_and_the_billboard_check_alone():
    from dataclasses import replace

    from privacct.audits.suite import check_learner

    m = MUTANTS["bonus-on-exact-counts"]
    r = check_learner(m.audit, seed=0)
    assert r.caught_by == ["audit", "billboard check"], r.notes   # not the accountant, not the ledger
    # the same configuration without the planted bug: nothing to see in the actions, nor in the coupled runs
    faithful = check_learner(replace(m.audit, mutant=None), seed=0, checks=("audit", "billboard"))
    assert faithful.caught_by == [], faithful.notes
    # and the released statistics of the planted learner are the faithful ones: their audit does not catch it
    released = check_learner(replace(m.audit, observe="released"), seed=0, checks=("audit",))
    assert released.caught_by == [], released.notes


def test_counter_noise_path_declares_the_correct_counter_and_runs_a_heavier_encoder():
    from privacct.counters.strategies import column_norm

    bugged, control = MUTANTS["counter-noise-path"].privatizer, CONTROLS["correct-blt-counter"].privatizer
    assert bugged.build_log().release_groups == control.build_log().release_groups     # the same declared log
    runs = {}
    for p in (bugged, control):
        ledger = Ledger()
        p.run("A", np.random.default_rng(3), 1, ledger=ledger)
        runs[p.bug] = float(ledger.per_user_norms("prefix-sums", "gaussian", p.code_scale()).max())
    declared = column_norm(control.declared_structure(), "l2")
    # R_exec(x) = Q_h(x) / P(x) = (1 - 0.35 x) / (1 - 0.9 x): r_k = 0.55 * 0.9^(k-1), against 0.2 * 0.9^(k-1) declared
    r = np.concatenate(([1.0], 0.55 * 0.9 ** np.arange(7)))
    assert runs["noise-path"] == pytest.approx(np.linalg.norm(r), rel=1e-9) and runs["noise-path"] > 1.38 * declared
    assert runs[None] == pytest.approx(declared, rel=1e-6) and runs[None] <= declared * (1 + 1e-9)
    r = check_mutant(MUTANTS["counter-noise-path"], seed=0, checks=("accountant", "ledger"))
    assert r.caught_by == ["ledger"] and r.ledger_epsilon > 1.3 * r.claimed_epsilon, r.notes


def test_switch_on_exact_gram_is_caught_by_the_billboard_check_alone():
    from dataclasses import replace

    from privacct.audits.suite import check_learner

    m = MUTANTS["switch-on-exact-gram"]
    r = check_learner(m.audit, seed=0, checks=("accountant", "ledger", "billboard"))
    assert r.caught_by == ["billboard check"], r.notes
    faithful = check_learner(replace(m.audit, mutant=None), seed=0, checks=("billboard",))
    assert faithful.caught_by == [], faithful.notes
