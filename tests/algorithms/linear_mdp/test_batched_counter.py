"""Batched JDP LSVI-UCB with a factorized Gram counter (option counter; issue 21 item 2; docs/counters.md#batched-leaves,
docs/seed-003-linear-representation.md#tight-calibration): every registered strategy runs over the B - 1 batch leaves,
its ledger accounts it (executed epsilon <= declared, every user of a batch with her batch's column of R), the shift
is the counter's prefix error, the tree path is untouched, and audited runs refuse a non-tree counter in one line."""

import math

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, CanaryPlan, RunConfig
from privacct.algorithms.linear_mdp import LEARNERS
from privacct.algorithms.linear_mdp import batched_jdp as BJ
from privacct.counters.registry import strategy_names
from privacct.counters.strategies import Strategy, column_coefficients, worst_prefix_l1, worst_prefix_variance
from privacct.errors import PrivacctError
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences

K, BATCHES = 60, 8
GAUSS, LAP = BJ.NAME, BJ.NAME_LAPLACE


def cfg(name=GAUSS, counter=None, calibration="tight", batches=BATCHES, episodes=K):
    opts = (("batches", batches), ("beta", 5.0)) + (() if counter is None else (("counter", counter),))
    return RunConfig(name, "jdp", epsilon=1.0, delta=0.0 if name == LAP else 1e-5, calibration=calibration,
                     episodes=episodes, horizon=2, options=opts)


@pytest.mark.parametrize("name", [GAUSS, LAP])
@pytest.mark.parametrize("calibration", ["tight", "paper"])
@pytest.mark.parametrize("counter", [s for s in strategy_names() if s != "tree"])
def test_every_strategy_runs_over_the_batch_leaves_and_its_ledger_accounts_it(name, calibration, counter):
    r = LEARNERS[name].run(cfg(name, counter, calibration), spawn_sequences(3, 2))
    p, delta = r.log.params, (0.0 if name == LAP else 1e-5)
    grams = [g for g in r.log.release_groups if g.name.startswith("gram_h")]
    assert p["counter"] == counter and all(g.structure.kind == "factorized" and g.structure.strategy == counter
                                           and g.structure.leaves == p["n_releases"] for g in grams)
    chk = check_ledger(r.log, r.ledger, delta=delta)
    assert chk.ok and chk.executed_epsilon <= chk.declared_epsilon * (1 + 1e-9), chk.to_dict()
    if calibration == "tight":
        assert chk.declared_epsilon <= 1.0 * (1 + 1e-9)
    # every user of batch t (leaf t) is recorded with column t of the counter's R, not as user t of a one-user leaf
    ends, st = p["release_episodes"], grams[0].structure
    starts = [1] + [e + 1 for e in ends[:-1]]
    if Strategy(counter).implementation.toeplitz:
        r_col = column_coefficients(st)
        mech = grams[0].mechanism
        norms = r.ledger.per_user_norms("gram_h1", mech, grams[0].noise_scale)
        for t, (a, b) in enumerate(zip(starts, ends, strict=True)):
            col = r_col[:len(ends) - t]
            want = np.abs(col).sum() if mech == "laplace" else np.sqrt((col * col).sum())
            np.testing.assert_allclose(norms[a - 1:b], want, rtol=1e-6)
        assert not np.any(norms[ends[-1]:])            # the last batch is in no leaf (no release after it)
    else:
        counts = r.ledger.per_user_counts("gram_h1")
        assert not np.any(counts[ends[-1]:]) and counts[0] == counts[ends[0] - 1] == counts.max() > 1


@pytest.mark.parametrize("counter", ["tree-honaker", "sqrt-toeplitz", "blt"])
def test_the_shift_is_the_counters_prefix_error(counter):
    """Gaussian: Upsilon = sigma sqrt(V) (4 sqrt(d) + 2 log(6KH/p)); Laplace: b l1 (2d + 2 sqrt(d L) + L), L = log(6KHd
    draws / p) (docs/seed-003-linear-representation.md#tight-calibration); the tree keeps sigma sqrt(depth) (...)."""
    for name in (GAUSS, LAP):
        log = BJ.build_log(cfg(name, counter))
        p, st = log.params, log.release_groups[0].structure
        K_, H, d, pp, sig = p["K"], p["H"], p["d"], p["p"], p["sigma_lam"]
        if name == GAUSS:
            want = sig * math.sqrt(worst_prefix_variance(st)) * (4 * math.sqrt(d) + 2 * math.log(6 * K_ * H / pp))
        else:
            L = math.log(6 * K_ * H * d * Strategy(counter).implementation.draws_per_step / pp)
            want = sig * worst_prefix_l1(st) * (2 * d + 2 * math.sqrt(d * L) + L)
        assert p["upsilon"] == pytest.approx(want, rel=1e-12) and p["c_K"] == pytest.approx(d * want, rel=1e-12)
        tree = BJ.build_log(cfg(name)).params
        assert p["upsilon"] != pytest.approx(tree["upsilon"] * p["sigma_lam"] / tree["sigma_lam"], rel=1e-6)


@pytest.mark.parametrize("name", [GAUSS, LAP])
def test_the_tree_path_is_unchanged_and_counter_tree_is_the_tree(name):
    seeds = spawn_sequences(5, 2)
    base = LEARNERS[name].run(cfg(name), seeds)
    tree = LEARNERS[name].run(cfg(name, "tree"), seeds)
    assert "counter" not in base.log.params and "counter_prefix_factor" not in base.log.params
    assert all(g.structure.kind == "tree" for g in base.log.release_groups if g.name.startswith("gram_h"))
    assert base.log.release_groups == tree.log.release_groups and tree.log.params["counter"] == "tree"
    assert np.array_equal(base.regret, tree.regret)
    assert np.array_equal(base.info["final_release"], tree.info["final_release"])
    assert base.log.params["upsilon"] == tree.log.params["upsilon"]


def test_a_bad_counter_is_named():
    with pytest.raises(PrivacctError, match="options.counter must be one of"):
        BJ.build_log(cfg(counter="dyadic"))


@pytest.mark.parametrize("hook", [AuditHook("A"),
                                  AuditHook("A", fixed_users=False, plan=CanaryPlan((1, 3), ("A", "B")))],
                         ids=["classic", "one-run"])
def test_audited_runs_observe_a_non_tree_counter(hook):
    """An audited run observes a factorized Gram counter (docs/auditing.md#factorized-counters): its releases over
    user 1, whitened (classic), or the canaries' differences of releases (one-run); a one-run audit of a LAPLACE
    Toeplitz counter records them in Gaussian form (a canary's difference of releases is not Laplace noise)."""
    r = LEARNERS[GAUSS].run(cfg(counter="blt", calibration="paper", batches=20, episodes=20), spawn_sequences(1, 1),
                            audit=hook)
    if hook.plan is None:
        assert any("blt release 1 whitened" in x.name for x in r.tap.records)
    else:
        assert {x.user for x in r.tap.canary_records} == {1, 3}
        assert not [u for u in r.tap.unobserved if u.group.startswith("gram")]   # (the u releases stay unobserved)
    lap = RunConfig(LAP, "jdp", epsilon=1.0, delta=0.0, calibration="paper", episodes=20, horizon=2,
                    env="linear-two-state", options=(("batches", 20), ("counter", "blt")))
    if hook.plan is not None:   # Laplace through a Toeplitz counter: recorded in Gaussian form (output-only scores)
        from privacct.counters.observed import GAUSSIAN_FORM

        got = LEARNERS[LAP].run(lap, spawn_sequences(1, 1), audit=hook).tap.canary_records
        assert {x.user for x in got if x.mechanism == GAUSSIAN_FORM} == {1, 3}
    # without the option the audited run runs what the unaudited one runs (the tree: batched LSVI-UCB's tight keeps it)
    for counter in (None, "tree"):
        r = LEARNERS[GAUSS].run(cfg(counter=counter, calibration="paper", batches=20, episodes=20),
                                spawn_sequences(1, 1), audit=hook)
        assert all(g.structure.kind == "tree" for g in r.log.release_groups if g.name.startswith("gram_h"))
