"""Declared logs, ledgers and privatizer noise of the tabular learners (seed 002 §5; docs/seed-002-tabular.md#privatizers)."""

import math

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.tabular import LEARNERS
from privacct.algorithms.tabular.privatizers import GROUP, Privatizer, build_tabular_log, e_terms
from privacct.accounting import tightest_epsilon
from privacct.ledger import Ledger, check_ledger
from privacct.log import MechanismLog, tree_depth
from privacct.privacy_report import privacy_report
from privacct.rng import spawn_generators, spawn_sequences

PRIVATE = [(a, p, c) for a in ("ucb-vi", "ucb-po") for p in ("jdp", "ldp") for c in ("paper", "tight")]


@pytest.mark.parametrize("counter", [None, "tree-honaker", "sqrt-toeplitz", "blt"])
def test_tight_counter_choice_and_ledger(counter):
    """tight without a counter picks the least worst-prefix variance at the claim; any counter's ledger
    equals its declared log (docs/counters.md)."""
    from privacct.counters.compare import log_alternatives

    K = 37
    opts = () if counter is None else (("counter", counter),)
    cfg = RunConfig("ucb-vi", "jdp", epsilon=0.5, calibration="tight", episodes=K, options=opts)
    r = LEARNERS["ucb-vi"].run(cfg, spawn_sequences(2, 2))
    chk = check_ledger(r.log, r.ledger)
    assert chk.ok and chk.executed_epsilon <= chk.declared_epsilon * (1 + 1e-9)
    assert tightest_epsilon(r.log, delta=0.0)[1] <= 0.5 * (1 + 1e-9)
    chosen = r.log.params["counter"]
    assert r.log.release_groups[0].structure.strategy == chosen
    if counter is None:
        from privacct.counters.compare import candidates_for

        alts = log_alternatives(r.log, epsilon=0.5, delta=0.0, strategies=candidates_for("laplace"))[0]
        assert chosen == alts.best.strategy == "tree-honaker"
    else:
        assert chosen == counter


@pytest.mark.parametrize("alg, priv, cal", PRIVATE)
def test_ledger_equals_log(alg, priv, cal):
    K = 37
    opts = (("counter", "tree"),) if priv == "jdp" else ()   # the tree's node counts (tight's own choice: below)
    cfg = RunConfig(alg, priv, epsilon=0.5, calibration=cal, episodes=K, options=opts)
    r = LEARNERS[alg].run(cfg, spawn_sequences(2, 2))
    chk = check_ledger(r.log, r.ledger)
    assert chk.ok
    assert chk.executed_epsilon == pytest.approx(chk.declared_epsilon, rel=1e-12)
    expected = tree_depth(K - 1) if priv == "jdp" else 1
    assert chk.executed_counts == {GROUP: expected} == chk.declared_counts
    draws = list(r.ledger.draws())
    assert len(draws) == (K - 1 if priv == "jdp" else K)  # central: one node per add (K - 1 leaves); local: one report per user
    assert all(d.last_user < K for d in draws) or priv == "ldp"  # user K's data is never released under JDP
    if priv == "ldp":
        assert [(d.first_user, d.last_user) for d in draws] == [(k, k) for k in range(1, K + 1)]
    assert all(d.shape == (2 * 20 * 12 + 20 * 12 * 6,) for d in draws)
    # the declared log round-trips through JSON
    assert MechanismLog.from_json(r.log.to_json()) == r.log


@pytest.mark.parametrize("priv", ["jdp", "ldp"])
def test_paper_mode_records_printed_constants_and_what_they_deliver(priv):
    K, H, eps = 20000, 20, 1.0
    log = build_tabular_log(algorithm="ucb-vi", privacy=priv, calibration="paper", epsilon=eps, delta=0.0,
                            H=H, S=6, A=2, K=K, parameters={})
    g = log.group(GROUP)
    assert g.sensitivity.value == (6 * H - 3 if priv == "jdp" else 6 * H) and g.paper.sensitivity == 3 * H
    if priv == "jdp":
        assert log.params["sensitivity_any_two_trajectories"] == 6 * H
        assert g.noise_scale == pytest.approx(3 * H * math.log(K) / eps)
        assert g.paper.per_user_count == pytest.approx(math.log(K))
        # (6H - 3) / 3H from the valid pair (Def. 2.2), L / ln K from the tree depth over K - 1 leaves
        expected = (6 * H - 3) / (3 * H) * eps * tree_depth(K - 1) / math.log(K)
    else:
        assert g.noise_scale == pytest.approx(3 * H / eps)
        expected = 2 * eps
    name, acc = tightest_epsilon(log, delta=0.0)
    assert acc == pytest.approx(expected, rel=1e-9)
    rep = privacy_report(log)
    assert rep.holds is False and rep.causes  # the report names why the printed setting misses
    tight = build_tabular_log(algorithm="ucb-vi", privacy=priv, calibration="tight", epsilon=eps, delta=0.0,
                              H=H, S=6, A=2, K=K, parameters={})
    assert tightest_epsilon(tight, delta=0.0)[1] <= eps * (1 + 1e-9)
    assert tight.group(GROUP).noise_scale == pytest.approx(g.noise_scale * expected / eps, rel=1e-6)
    assert privacy_report(tight).holds is True


def test_tree_counter_error_matches_theoretical_scale():
    H, S, A, K, B = 2, 2, 2, 14, 400  # 13 = 0b1101: the release after 13 adds (K - 1 leaves) sums 3 noisy nodes
    dim = 2 * H * S * A + H * S * A * S
    log = build_tabular_log(algorithm="ucb-vi", privacy="jdp", calibration="paper", epsilon=1.0, delta=0.0,
                            H=H, S=S, A=A, K=K, parameters={})
    b = log.group(GROUP).noise_scale
    priv = Privatizer(log, dim, K, spawn_generators(0, B), Ledger())
    rng = np.random.default_rng(1)
    exact = np.zeros((B, dim))
    for k in range(1, K):
        x = (rng.random((B, dim)) < 0.3).astype(float)
        exact += x
        out = priv.release(k, x)
    assert np.array_equal(priv.release(K, x), out)  # user K: no release (no policy reads it)
    err = out - exact
    assert np.all(err != 0)  # every coordinate is noised, visited or not (docs/seed-002-tabular.md#departures)
    theory = b * math.sqrt(2 * 3)  # Laplace(b) std = b sqrt 2, three nodes
    assert err.std() == pytest.approx(theory, rel=0.03)
    assert abs(err.mean()) < 4 * theory / math.sqrt(err.size)
    assert priv.tree.noise_std() == pytest.approx(theory)


def test_local_report_error_matches_theoretical_scale():
    H, S, A, K, B = 2, 2, 2, 9, 300
    dim = 2 * H * S * A + H * S * A * S
    log = build_tabular_log(algorithm="ucb-vi", privacy="ldp", calibration="paper", epsilon=2.0, delta=0.0,
                            H=H, S=S, A=A, K=K, parameters={})
    b = log.group(GROUP).noise_scale
    priv = Privatizer(log, dim, K, spawn_generators(3, B), Ledger())
    for k in range(1, K + 1):
        out = priv.release(k, np.zeros((B, dim)))
    assert np.all(out != 0)  # every coordinate of every report is noised
    assert out.std() == pytest.approx(b * math.sqrt(2 * K), rel=0.03)


def test_e_terms_follow_lemmas_5_1_and_5_4():
    K, H, S, A, eps, d = 20000, 20, 6, 2, 1.0, 0.1
    T = K * H
    for priv, m in (("jdp", tree_depth(K)), ("ldp", K)):
        log = build_tabular_log(algorithm="ucb-vi", privacy=priv, calibration="paper", epsilon=eps, delta=0.0,
                                H=H, S=S, A=A, K=K, parameters={})
        b = log.group(GROUP).noise_scale
        e1, e2 = e_terms(log, S=S, A=A, H=H, K=K, confidence_delta=d, e_scale=1.0)
        assert e1 == pytest.approx(b * math.sqrt(8 * m * math.log(6 * S * A * T / d)))
        assert e2 == pytest.approx(b * math.sqrt(8 * m * math.log(6 * S * S * A * T / d)))
        assert e_terms(log, S=S, A=A, H=H, K=K, confidence_delta=d, e_scale=0.1)[0] == pytest.approx(0.1 * e1)
    # local E_1 is (3H/eps) sqrt(8 K log(6SAT/delta)) exactly as printed in Lemma 5.4
    assert e_terms(build_tabular_log(algorithm="ucb-vi", privacy="ldp", calibration="paper", epsilon=eps, delta=0.0,
                                     H=H, S=S, A=A, K=K, parameters={}),
                   S=S, A=A, H=H, K=K, confidence_delta=d, e_scale=1.0)[0] == pytest.approx(
        3 * H / eps * math.sqrt(8 * K * math.log(6 * S * A * T / d)))
    assert e_terms(None, S=S, A=A, H=H, K=K, confidence_delta=d, e_scale=1.0) == (0.0, 0.0)


def test_non_private_has_no_log_and_no_ledger():
    r = LEARNERS["ucb-po"].run(RunConfig("ucb-po", "none", episodes=5), spawn_sequences(0, 2))
    assert r.log is None and r.ledger is None
    assert LEARNERS["ucb-po"].build_log(RunConfig("ucb-po", "none", episodes=5)) is None


def test_log_records_tunables():
    cfg = RunConfig("ucb-po", "jdp", episodes=100, bonus_scale=0.3,
                    options=(("e_scale", 0.2), ("eta", 0.5), ("confidence_delta", 0.05)))
    p = LEARNERS["ucb-po"].build_log(cfg).params
    assert (p["bonus_scale"], p["e_scale"], p["eta"], p["confidence_delta"]) == (0.3, 0.2, 0.5, 0.05)
    assert (p["K"], p["H"], p["S"], p["A"], p["env"]) == (100, 20, 6, 2, "riverswim")
