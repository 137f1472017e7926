"""Planted bugs: every mutant is caught by at least one check, every correct control by none."""

import numpy as np
import pytest

from privacct.audits.checks import COUNTER_PATH_CHECKS, LEARNER_CHECKS, ONE_RUN_RELEASED
from privacct.audits.mutants import CHECKS, CONTROLS, MUTANTS, LearnerMutant, check_mutant, ledger_shape_problems
from privacct.audits.mutants.planted_privatizers import TreeCounterPrivatizer
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
    # policy leaks (issue 20): the log, the ledger and the released statistics are the faithful learner's; only the
    # audits of the actions see them, each at its own configuration (test_policy_leaks_... below)
    "bonus-on-exact-counts": {"action audit", "billboard check", "one-run audit"},
    "switch-on-exact-gram": {"billboard check", "one-run audit"},
    # counter-noise-path in a learner (private-lsvi-ucb's BLT Gram counters, Q halved): the ledger's executed encoder,
    # and at the paper's K the one-run released audit's window score with 19 canaries
    # (test_learner_counter_noise_path_is_caught_by_the_one_run_window_score_at_the_paper_k below)
    "counter-noise-path-private-lsvi-ucb": {"ledger", "one-run released audit"},
}
#: the checks that must NOT catch a policy leak: they see the faithful learner's log, draws and released statistics
BLIND_TO_POLICY_LEAKS = {"accountant", "ledger", "audit"}
PRIVATIZER_MUTANTS = sorted(n for n, m in MUTANTS.items() if not isinstance(m, LearnerMutant))


def test_registry_names_every_planted_bug_of_the_issue():
    assert set(MUTANTS) == set(MUST)
    for m in MUTANTS.values():
        if isinstance(m, LearnerMutant) and m.audit.mutant == "counter-noise-path":
            # the noise-path bug in a learner: its checks run at the paper's K (ledger, one-run released audit)
            assert m.description and m.audit.noise_multiplier == 1 and m.checks == COUNTER_PATH_CHECKS
            assert m.audit.config.episodes == m.one_run_released.config.episodes == 10_000
        elif isinstance(m, LearnerMutant) and m.audit.mutant is not None:
            # its audit is the released-statistics audit; the actions are the action audits' (LEARNER_CHECKS)
            assert m.description and m.audit.noise_multiplier == 1 and m.audit.observe == "released"
            assert m.checks == LEARNER_CHECKS and m.audit.one_run is not None
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


def _small_counter_noise_path(mutant: str | None = "counter-noise-path"):
    """The learner-level counter-noise-path at private-lsvi-ucb's audit configuration (K = 5, H = 2: tight runs BLT
    there too), its one-run released audit with 4 canaries; ``mutant`` None: the faithful learner, same configuration."""
    from dataclasses import replace

    from privacct.audits.mutants.registry import counter_noise_path
    from privacct.audits.suite import audit_setting

    m = counter_noise_path(audit_setting("private-lsvi-ucb", "jdp").config, canaries=4)
    return replace(m, audit=replace(m.audit, mutant=mutant))


def test_learner_counter_noise_path_is_caught_by_the_ledger_and_the_faithful_learner_by_none():
    """Issue 20 item 3, learner level: private-lsvi-ucb whose BLT Gram counters run with Q halved, at the audit
    configuration (K = 5). The ledger (executed encoder) catches it; the accountant (the faithful log) and the one-run
    released audit (4 canaries: too few for any bound) do not; the faithful learner at the same configuration is caught
    by none. The paper's K: the slow test below and benchmarks/learner_audits.md#counter-noise-path-in-a-learner."""
    bugged = check_mutant(_small_counter_noise_path(), seed=0)
    assert bugged.caught_by == ["ledger"], bugged.notes
    assert bugged.ledger_epsilon > 1.2 * bugged.claimed_epsilon
    assert set(bugged.verdicts) == set(bugged.configurations) == set(COUNTER_PATH_CHECKS)
    assert "K=5" in bugged.configurations["ledger"] and "canaries 4" in bugged.configurations[ONE_RUN_RELEASED]
    faithful = check_mutant(_small_counter_noise_path(None), seed=0)
    assert faithful.caught_by == [], faithful.notes
    assert faithful.ledger_epsilon <= faithful.claimed_epsilon * (1 + 1e-9)
    for r in (bugged, faithful):
        # the one-run audit ran and saw the canaries (one release difference per Gram counter each), caught nothing
        assert r.verdicts[ONE_RUN_RELEASED] == "inconclusive" and "2.00 releases each" in r.notes[ONE_RUN_RELEASED]


def test_the_noise_path_row_runs_its_one_run_audit_with_19_canaries_at_the_paper_k():
    from privacct.audits.mutants.registry import COUNTER_NOISE_PATH_LEARNER, NOISE_PATH_CANARIES

    s = MUTANTS[COUNTER_NOISE_PATH_LEARNER].one_run_released
    assert NOISE_PATH_CANARIES == s.canaries == 19 and s.config.episodes == 10_000 and "window" in s.why


@pytest.mark.slow
@pytest.mark.parametrize("mutant", ["counter-noise-path", None])
def test_learner_counter_noise_path_is_caught_by_the_one_run_window_score_at_the_paper_k(mutant):
    """Issue 20's target: counter-noise-path caught at the paper's K (10^4, H = 5, claim (1, 1e-5)) by the one-run
    released audit: with 19 canaries (spacing 512) its window score guesses 19 of 19 (eps_lb 1.54 > 1 at confidence
    0.975, its half of the union bound) while the difference score stays near a coin flip; the faithful learner at the
    same run configuration is not caught (about a minute each)."""
    from privacct.audits.mutants.registry import COUNTER_NOISE_PATH_LEARNER, _one_run_released

    m = MUTANTS[COUNTER_NOISE_PATH_LEARNER]
    if mutant is None:
        from dataclasses import replace

        m = replace(m, audit=replace(m.audit, mutant=None))
    got = _one_run_released(m, seed=0)
    assert "canaries 19" in got["configuration"] and "K=10000" in got["configuration"]
    if mutant is None:
        assert got["verdict"] != "fails", got["note"]
    else:
        assert got["verdict"] == "fails" and "by score window" in got["note"], got["note"]


def test_counter_noise_path_makes_the_one_run_difference_noisier_and_a_window_mean_quieter():
    """Why the one-run released audit's difference score cannot catch counter-noise-path and its window score can
    (docs/auditing.md#planted-bugs, docs/auditing.md#one-run-scores): the difference sees a canary at leaf t through y_t - y_(t-1), whose executed noise (coefficients of P / Q_h) is LARGER than the declared
    (P / Q), while the bug's leak is in long averages (the executed noise does not accumulate): the mean of S = 64
    releases after t minus the mean of the 64 before has far less noise than declared. tight's BLT at K - 1 = 1024."""
    from privacct.counters.blt import blt_parameters
    from privacct.counters.counter import FactorizedCounter
    from privacct.counters.strategies import Strategy

    K, S, t = 1024, 64, 512
    c = FactorizedCounter((), strategy=Strategy("blt", blt_parameters(K)).structure(K), leaves=K, mechanism="gaussian",
                          scale=1.0, rngs=[np.random.default_rng(0)])
    declared = c.impulse_response()
    c._Q = [0.5 * q for q in c._Q]
    executed = c.impulse_response()

    def noise_std(l, weights):   # std of sum_s weights[s] (L z)_(t - S + s), unit z
        coef = np.zeros(t + S)
        for k, w in enumerate(weights):
            s = t - S + k
            coef[:s + 1] += w * l[:s + 1][::-1]
        return float(np.linalg.norm(coef))

    diff = np.zeros(2 * S)
    diff[S - 1:S + 1] = (-1.0, 1.0)
    window = np.concatenate((-np.ones(S), np.ones(S))) / S
    assert noise_std(executed, diff) > 1.3 * noise_std(declared, diff)          # 1.59 vs 1.13: the audit loses power
    assert noise_std(executed, window) < 0.1 * noise_std(declared, window)      # the leak a window mean would see


def test_counter_noise_path_needs_the_blt_counter():
    from privacct.algorithms.contract import AuditHook
    from privacct.algorithms.registry import get_learner
    from privacct.audits.suite import audit_setting
    from privacct.errors import PrivacctError

    cfg = audit_setting("private-lsvi-ucb", "jdp").with_config(options=(("beta", 1e6), ("C", 1.000001), ("update_cap", 1),
                                                                        ("counter", "tree"))).config
    with pytest.raises(PrivacctError, match="counter-noise-path needs the BLT Gram counter .*got tree"):
        get_learner("private-lsvi-ucb").run(cfg, [np.random.SeedSequence(0)], audit=AuditHook("A", mutant="counter-noise-path"))


POLICY_LEAKS = ("bonus-on-exact-counts", "switch-on-exact-gram")


def _mutants_cli(argv):
    """``privacct mutants ARGV --json``: (exit status, the reports by name)."""
    import contextlib
    import io
    import json

    from privacct.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["mutants", "--json", "--quiet", *argv])
    return rc, {d["name"]: d for d in json.loads(buf.getvalue())}


@pytest.fixture(scope="module")
def policy_leak_run():
    """``privacct mutants --only <the two policy leaks> --trials 20`` once (the many-trial audits at 20 trials per
    side: they must not catch the leaks anyway; the billboard check and the one-run audit keep their own sizes)."""
    return _mutants_cli(["--only", *POLICY_LEAKS, "--trials", "20"])


@pytest.mark.slow
def test_policy_leaks_exit_0_caught_by_their_named_checks_alone(policy_leak_run):
    """Issue 20 item 3: `privacct mutants` exits 0 on the policy leaks, each caught by the billboard check and the
    one-run audit, never by the accountant, the ledger or the released-statistics audit, and the JSON says at which
    configuration each check ran (the one-run audit at its own, a departure it names)."""
    rc, reports = policy_leak_run
    assert rc == 0
    for name in POLICY_LEAKS:
        d = reports[name]
        caught = set(d["caught_by"])
        assert {"billboard check", "one-run audit"} <= caught, d["notes"]
        assert not caught & BLIND_TO_POLICY_LEAKS, d["notes"]
        assert set(d["configurations"]) == set(d["verdicts"]) == set(LEARNER_CHECKS)
        assert d["verdicts"]["accountant"] == d["verdicts"]["ledger"] == "not caught"
        assert d["verdicts"]["audit"] != "fails" and d["verdicts"]["billboard"] == d["verdicts"]["one-run audit"] == "fails"
        assert "observe released" in d["configurations"]["audit"]
        assert "departure" in d["configurations"]["one-run audit"] and "canaries" in d["configurations"]["one-run audit"]
    assert "K=1025" in reports["bonus-on-exact-counts"]["configurations"]["one-run audit"]
    assert "K=4" in reports["bonus-on-exact-counts"]["configurations"]["billboard"]
    assert "K=1000" in reports["switch-on-exact-gram"]["configurations"]["billboard"]


def test_policy_leaks_without_the_action_checks_exit_1(monkeypatch):
    """The state issue 20 found on main: a policy leak run through the accountant, the ledger and the audit alone is
    caught by none, and `privacct mutants` says so with exit 1 (the guard the test above relies on)."""
    from dataclasses import replace

    import privacct.audits.mutants.registry as reg

    for name in POLICY_LEAKS:
        monkeypatch.setitem(reg.MUTANTS, name, replace(reg.MUTANTS[name], checks=CHECKS))
    rc, reports = _mutants_cli(["--only", *POLICY_LEAKS, "--trials", "20"])
    assert rc == 1 and all(reports[n]["caught_by"] == [] for n in POLICY_LEAKS)


def test_bonus_on_exact_counts_is_caught_by_the_black_box_action_audit_at_its_trials():
    """The black-box action audit (users 2..K's actions, 2 x 10^4 trials per side) catches bonus-on-exact-counts at
    K = 4; the released-statistics audit of the same runs does not."""
    m = MUTANTS["bonus-on-exact-counts"]
    r = check_mutant(m, seed=0, checks=("audit", "action audit"))
    assert r.caught_by == ["action audit"], r.notes
    assert "observe actions" in r.configurations["action audit"] and "trials 20000" in r.configurations["action audit"]


@pytest.mark.slow
@pytest.mark.parametrize("name", POLICY_LEAKS)
def test_faithful_learner_at_the_policy_leaks_configurations_is_not_caught(name):
    """Controls: the same configurations without the planted bug: no check of the actions catches them."""
    from dataclasses import replace

    from privacct.audits.suite import check_learner

    m = MUTANTS[name]
    checks = ("billboard", "one-run audit") + (("action audit",) if name == "bonus-on-exact-counts" else ())
    faithful = check_learner(replace(m.audit, mutant=None), seed=0, checks=checks, confidence=0.99)
    assert faithful.caught_by == [], faithful.notes
    assert faithful.verdicts["billboard"] == "passes" and faithful.verdicts["one-run audit"] == "inconclusive"
    assert "0 guesses" in faithful.notes["one-run audit"]


def test_check_learner_names_its_checks():
    from privacct.audits.suite import check_learner
    from privacct.errors import PrivacctError

    with pytest.raises(PrivacctError, match="checks must be among .*one-run audit"):
        check_learner(MUTANTS["bonus-on-exact-counts"].audit, checks=("one-run",))
