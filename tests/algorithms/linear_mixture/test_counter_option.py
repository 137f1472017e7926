"""Option ``counter`` of the linear-mixture JDP learners (issue 21 item 2; docs/counters.md#learners).

Every tree release group of private-linopt-vi/-po (seed 000), pp-ucrl-vtr, pp-ucrl-vtr-plus and pp-ucrl-vtr-laplace
(seed 003) can run a factorized counter: the log declares ``Structure.factorized`` (the accountant charges the
strategy's column norm), the aggregator runs a ``FactorizedCounter`` of exactly that structure, and the shifts take
the counter's prefix error in place of the tree's (design.CounterChoice). The default is the printed tree, byte for
byte (tests/algorithms/test_regret_pins.py; here: ``counter=tree`` equals the default).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from privacct.accounting import tightest_epsilon
from privacct.algorithms.contract import AuditHook, CanaryPlan, RunConfig
from privacct.algorithms.linear_mixture import LEARNERS
from privacct.algorithms.linear_mixture import design as D
from privacct.counters.strategies import (Strategy, blt_polynomials, column_norm, toeplitz_coefficients,
                                          worst_prefix_variance)
from privacct.errors import PrivacctError
from privacct.ledger import check_ledger
from privacct.log import MechanismLog, Sensitivity, Structure
from privacct.rng import spawn_sequences

K = 9                      # 8 leaves: popcount 3 at t = 7, tree depth 4
GAUSSIAN = ("private-linopt-vi", "private-linopt-po", "pp-ucrl-vtr", "pp-ucrl-vtr-plus")
LEARNERS_WITH_TREES = GAUSSIAN + ("pp-ucrl-vtr-laplace",)
FACTORIZED = ("tree-honaker", "sqrt-toeplitz", "blt")
STRATEGIES = ("tree",) + FACTORIZED


def _delta(name):
    return 0.0 if name == "pp-ucrl-vtr-laplace" else 1e-5


def _cfg(name, counter=None, calibration="tight", episodes=K, epsilon=0.7, **kw):
    opts = () if counter is None else (("counter", counter),)
    base = dict(epsilon=epsilon, delta=_delta(name), calibration=calibration, episodes=episodes, horizon=3,
                env="riverswim-lm", bonus_scale=1e6, options=opts)
    base.update(kw)
    return RunConfig(name, "jdp", **base)


def _noise(name):
    return "laplace" if name == "pp-ucrl-vtr-laplace" else "gaussian"


def _structure(name, counter, leaves=K - 1):
    return Strategy(counter).structure(leaves, norm="l1" if _noise(name) == "laplace" else "l2")


# ---------------------------------------------------------------------------------------------- accounting
@pytest.mark.parametrize("name", LEARNERS_WITH_TREES)
@pytest.mark.parametrize("counter", STRATEGIES)
def test_tight_log_declares_the_strategy_and_meets_the_claim(name, counter):
    log = LEARNERS[name].build_log(_cfg(name, counter))
    assert log.params["counter"] == counter
    for g in log.release_groups:
        if counter == "tree":
            assert g.structure == Structure.tree(K - 1)           # the printed tree itself
        else:
            assert g.structure == _structure(name, counter)
    _, eps = tightest_epsilon(log, delta=_delta(name))
    assert 0.7 * (1 - 1e-6) <= eps <= 0.7 * (1 + 1e-9)


def _equivalent(log: MechanismLog, name: str, counter: str) -> MechanismLog:
    """The same privacy written without a factorized structure (docs/counters.md#accounting): the trees are D
    releases at multiplier 1, i.e. tree(K - 1); a Toeplitz strategy is one release of sensitivity Delta ||col||."""
    norm = "l1" if _noise(name) == "laplace" else "l2"
    groups = []
    for g in log.release_groups:
        if counter in ("tree", "tree-honaker"):
            groups.append(dataclasses.replace(g, structure=Structure.tree(K - 1)))
        else:
            mult = column_norm(g.structure, norm)
            groups.append(dataclasses.replace(g, structure=Structure.single(), sensitivity=Sensitivity(
                g.sensitivity.norm, g.sensitivity.value * mult, "declared x column norm")))
    return dataclasses.replace(log, release_groups=tuple(groups), readings=())


@pytest.mark.parametrize("name", LEARNERS_WITH_TREES)
@pytest.mark.parametrize("counter", FACTORIZED)
def test_paper_keeps_the_printed_noise_and_accounts_the_counter(name, counter):
    """``paper``: the printed noise scales, unchanged; the accounted eps is what the accountant says of the strategy's
    column norm (checked against the same privacy written as tree(K - 1) / a single release of Delta ||col||)."""
    default = LEARNERS[name].build_log(_cfg(name, calibration="paper"))
    log = LEARNERS[name].build_log(_cfg(name, counter, calibration="paper"))
    assert [g.noise_scale for g in log.release_groups] == [g.noise_scale for g in default.release_groups]
    acc, eps = tightest_epsilon(log, delta=_delta(name))
    _, want = tightest_epsilon(_equivalent(log, name, counter), delta=_delta(name), accountant=acc)
    assert eps == pytest.approx(want, rel=1e-9)
    _, tree_eps = tightest_epsilon(default, delta=_delta(name), accountant=acc)
    if counter == "tree-honaker":
        assert eps == pytest.approx(tree_eps, rel=1e-12)          # the same column as the tree
    elif _noise(name) == "gaussian" or counter == "blt":
        assert eps < tree_eps                                     # ||col||_2^2 < D (Gaussian); l1 BLT ~ identity


def test_default_log_has_no_counter_and_keeps_the_tree():
    for name in LEARNERS_WITH_TREES:
        for cal in ("paper", "tight"):
            log = LEARNERS[name].build_log(_cfg(name, calibration=cal))
            assert "counter" not in log.params
            assert all(g.structure == Structure.tree(K - 1) for g in log.release_groups)


# ---------------------------------------------------------------------------------------------- runs
@pytest.mark.parametrize("name", LEARNERS_WITH_TREES)
@pytest.mark.parametrize("counter", FACTORIZED)
def test_run_passes_its_ledger_check_and_runs_the_declared_counter(name, counter):
    r = LEARNERS[name].run(_cfg(name, counter), spawn_sequences(3, 2))
    chk = check_ledger(r.log, r.ledger, delta=_delta(name))
    assert chk.ok, chk.to_dict()
    assert chk.executed_epsilon == pytest.approx(chk.declared_epsilon, rel=1e-6)
    assert r.info["counter"] == counter
    g = r.log.release_groups[0]
    draws = [d for d in r.ledger.draws() if d.group == g.name]
    if counter == "tree-honaker":        # every dyadic node ending by K - 1 = 8: 2 * 8 - popcount(8)
        assert len(draws) == 2 * (K - 1) - 1
    else:                                # one z_t per step, over users 1..t (weights: row t of R_exec)
        assert [(d.first_user, d.last_user) for d in draws] == [(1, t) for t in range(1, K)]


@pytest.mark.parametrize("name", LEARNERS_WITH_TREES)
def test_counter_tree_is_the_default_byte_for_byte(name):
    seeds = spawn_sequences(5, 2)
    for cal in ("paper", "tight"):
        a = LEARNERS[name].run(_cfg(name, calibration=cal, bonus_scale=0.01, epsilon=50.0), seeds)
        b = LEARNERS[name].run(_cfg(name, "tree", calibration=cal, bonus_scale=0.01, epsilon=50.0), seeds)
        assert a.regret.tobytes() == b.regret.tobytes()
        assert a.info["final_release"].tobytes() == b.info["final_release"].tobytes()
        assert list(a.ledger.draws()) == list(b.ledger.draws())
        assert a.info["design"] == b.info["design"]


def test_a_factorized_counter_changes_the_noise_that_runs():
    """Not a silent no-op: the released statistics differ from the tree's at the same seeds."""
    seeds = spawn_sequences(5, 2)
    a = LEARNERS["pp-ucrl-vtr"].run(_cfg("pp-ucrl-vtr", "tree"), seeds)
    b = LEARNERS["pp-ucrl-vtr"].run(_cfg("pp-ucrl-vtr", "sqrt-toeplitz"), seeds)
    assert not np.array_equal(a.info["final_release"], b.info["final_release"])


# ---------------------------------------------------------------------------------------------- shifts
def _explicit_honaker_l1(T: int) -> float:
    """max_t of the l1 norm of the least-squares (BLUE) weights of S_t on every dyadic node complete by t, from the
    explicit design matrix (Honaker 2015): w = M (M^T M)^(-1) 1_t."""
    best = 0.0
    for t in range(1, T + 1):
        nodes = [(e - (1 << i) + 1, e) for e in range(1, t + 1) for i in range(e.bit_length())
                 if e % (1 << i) == 0]
        M = np.array([[1.0 if a <= j <= b else 0.0 for j in range(1, t + 1)] for a, b in nodes])
        w = M @ np.linalg.solve(M.T @ M, np.ones(t))
        best = max(best, float(np.abs(w).sum()))
    return best


def _explicit_l1(structure) -> float:
    T = int(structure.leaves)
    if structure.kind == "tree" or structure.strategy == "tree":
        return float(max(bin(t).count("1") for t in range(1, T + 1)))
    if structure.strategy == "tree-honaker":
        return _explicit_honaker_l1(T)
    if structure.strategy == "sqrt-toeplitz":       # L = C: row t is c_0..c_(t-1), all positive
        return float(np.sum(toeplitz_coefficients(T)))
    from scipy.signal import lfilter                 # L = A C^(-1): row t is G_0..G_(t-1), G = cumsum of P/Q's response

    P, Q = blt_polynomials(structure.buffers)
    imp = np.zeros(T)
    imp[0] = 1.0
    return float(np.abs(np.cumsum(lfilter(P, Q, imp))).sum())


@pytest.mark.parametrize("counter", STRATEGIES)
@pytest.mark.parametrize("leaves", [1, 8, 13, 40])
def test_prefix_l1_against_the_explicit_release_matrix(counter, leaves):
    st = Strategy(counter).structure(leaves, norm="l1")
    assert D.prefix_l1(st) == pytest.approx(_explicit_l1(st), rel=1e-9)


@pytest.mark.parametrize("name", LEARNERS_WITH_TREES)
@pytest.mark.parametrize("counter", FACTORIZED)
def test_shift_is_derived_from_the_counters_prefix_error(name, counter):
    """The Upsilons (hence the shifts 2 Upsilon, lambda_min/max and the radii) follow the sigma that runs and the
    counter's worst prefix variance V (Gaussian: sqrt(V) for the tree's sqrt(m) / sqrt(K0)) or worst row l1 norm
    (Laplace: for K0), recomputed here from the papers' formulas (docs/seed-000-linear-mixture-jdp.md#constants-as-printed,
    docs/seed-003-linear-representation.md#tight-calibration)."""
    r = LEARNERS[name].run(_cfg(name, counter), spawn_sequences(0, 1))
    rec, H, d, alpha = r.info["design"], 3, r.log.params["d"], 0.01
    st = _structure(name, counter)
    V = worst_prefix_variance(st)
    sig = {g.name: g.noise_scale for g in r.log.release_groups}
    if name.startswith("private-linopt"):
        d2 = r.log.params["d2"]
        want_p = sig["p-gram[h=1]"] * math.sqrt(V) * (4 * math.sqrt(d) + math.sqrt(8 * math.log(8 * K * H / alpha)))
        want_r = sig["r-gram[h=1]"] * math.sqrt(V) * (4 * math.sqrt(d2) + math.sqrt(8 * math.log(8 * K * H / alpha)))
        assert rec["upsilon_p"] == pytest.approx(want_p, rel=1e-12)
        assert rec["upsilon_r"] == pytest.approx(want_r, rel=1e-12)
        nu_p = sig["p-target[h=1]"] * math.sqrt(V / want_p) * (math.sqrt(d) + math.sqrt(2 * math.log(4 * K * H / alpha)))
        vs = r.log.params["r_max"] * H
        beta_p = ((vs / 2) * math.sqrt(2 * math.log(H / alpha) + d * math.log(1 + K * vs**2 / want_p))
                  + math.sqrt(d * 3 * want_p) + nu_p)                 # lambda_min = Upsilon, lambda_max = 3 Upsilon
        assert rec["beta_p"] == pytest.approx(beta_p, rel=1e-12)
        return
    if name == "pp-ucrl-vtr-plus":
        width = 4 * math.sqrt(d) + 2 * math.log(24 * K * H / alpha)
        assert rec["upsilon_1"] == pytest.approx(sig["gram[h=1]"] * math.sqrt(V) * width, rel=1e-12)
        assert rec["upsilon_2"] == pytest.approx(sig["gram2[h=1]"] * math.sqrt(V) * width, rel=1e-12)
        return
    b = sig["gram[h=1]"]
    if name == "pp-ucrl-vtr":
        want = b * math.sqrt(V) * (4 * math.sqrt(d) + 2 * math.log(6 * K * H / alpha))
    else:
        draws = 2.0 if counter == "tree-honaker" else 1.0        # Claim 29's union bound over the counter's draws
        want = b * _explicit_l1(st) * D.laplace_matrix_width(d, math.log(6 * K * H * d * draws / alpha))
    assert rec["upsilon"] == pytest.approx(want, rel=1e-9)


def test_gaussian_counters_shrink_the_tight_shift():
    """At the same claim, the strategies with less prefix error at the claim give a smaller shift 2 Upsilon (the
    column norm sets sigma, the prefix variance the shift): sqrt-toeplitz and blt well below the tree."""
    ups = {}
    for c in STRATEGIES:
        r = LEARNERS["pp-ucrl-vtr"].run(_cfg("pp-ucrl-vtr", c, episodes=300, env="hard-to-learn"), spawn_sequences(0, 1))
        ups[c] = r.info["design"]["upsilon"]
    assert ups["sqrt-toeplitz"] < 0.5 * ups["tree"] and ups["blt"] < 0.5 * ups["tree"]
    assert ups["tree-honaker"] < ups["tree"]


# ---------------------------------------------------------------------------------------------- audits
@pytest.mark.parametrize("counter", FACTORIZED)
def test_an_audited_run_with_a_factorized_counter_observes_it(counter):
    r = LEARNERS["pp-ucrl-vtr"].run_observed(_h1_cfg("pp-ucrl-vtr", counter),
                                             spawn_sequences(0, 2), audit=AuditHook("A"))
    names = [b.name for b in r.observation.blocks]
    assert names and all(counter in n for n in names)
    one_run = AuditHook("A", fixed_users=False, plan=CanaryPlan((1,), ("A",)))
    lap = RunConfig("pp-ucrl-vtr-laplace", "jdp", epsilon=1.0, delta=0.0, episodes=4, horizon=3, env="riverswim-lm",
                    options=(("counter", counter),))
    if counter == "tree-honaker":   # one-run: its nodes holding one canary are observed
        LEARNERS["pp-ucrl-vtr-laplace"].run(lap, spawn_sequences(0, 1), audit=one_run)
        return
    # a Toeplitz counter with Laplace noise: recorded in Gaussian form for output-only scores (no longer refused)
    from privacct.counters.observed import GAUSSIAN_FORM

    r = LEARNERS["pp-ucrl-vtr-laplace"].run(lap, spawn_sequences(0, 1), audit=one_run)
    assert r.tap.canary_records and {x.mechanism for x in r.tap.canary_records} == {GAUSSIAN_FORM}


@pytest.mark.parametrize("counter", FACTORIZED)
def test_the_tap_records_a_factorized_counter_over_user_1(counter):
    from privacct.counters.counter import FactorizedCounter
    from privacct.tap import tapping

    with tapping() as tap:
        c = FactorizedCounter((2,), strategy=counter, leaves=8, mechanism="gaussian", scale=1.0,
                              rngs=[np.random.default_rng(0)], group="g")
        for _ in range(8):
            c.add(np.ones((1, 2)))
    assert tap.records and not tap.unobserved and all(r.group == "g" for r in tap.records)


def _h1_cfg(name, counter):
    return RunConfig(name, "jdp", epsilon=1.0, delta=1e-5, calibration="paper", episodes=4, horizon=3,
                     env="riverswim-lm", options=(("counter", counter),))


def test_an_audited_run_with_counter_tree_observes_the_tree_nodes():
    r = LEARNERS["pp-ucrl-vtr"].run_observed(_cfg("pp-ucrl-vtr", "tree", episodes=4, calibration="paper"),
                                             spawn_sequences(0, 2), audit=AuditHook("A"))
    assert r.log.release_groups[0].structure.kind == "tree"
    names = {b.name for b in r.observation.blocks}
    assert any("node [1, 2]" in n for n in names) and any("node [1, 1]" in n for n in names)


# ---------------------------------------------------------------------------------------------- validation, CLI
@pytest.mark.parametrize("name, privacy, counter, match", [
    ("pp-ucrl-vtr", "jdp", "dyadic", "option counter must be one of tree, tree-honaker, sqrt-toeplitz, blt"),
    ("pp-ucrl-vtr", "jdp", 3, "option counter must be one of"),
    ("pp-ucrl-vtr", "ldp", "blt", "option counter applies to JDP"),
    ("pp-ucrl-vtr", "none", "blt", "option counter applies to JDP"),
    ("ldp-ucrl-vtr", "ldp", "blt", "option counter applies to JDP"),
    ("ucrl-vtr", "none", "tree", "option counter applies to JDP"),
])
def test_bad_counter_is_refused_in_one_line(name, privacy, counter, match):
    cfg = RunConfig(name, privacy, epsilon=1.0, delta=1e-5, episodes=K, horizon=3, env="riverswim-lm",
                    options=(("counter", counter),))
    with pytest.raises(PrivacctError, match=match) as e:
        LEARNERS[name].build_log(cfg) if privacy != "none" else LEARNERS[name].run(cfg, spawn_sequences(0, 1))
    assert len(str(e.value).splitlines()) == 1


def test_cli_runs_pp_ucrl_vtr_with_a_blt_counter(tmp_path, capsys):
    from privacct.cli import main

    rc = main(["run", "pp-ucrl-vtr", "--privacy", "jdp", "--option", "counter=blt", "--calibration", "tight",
               "--episodes", "6", "--horizon", "3", "--seeds", "2", "--out", str(tmp_path), "--json", "--no-progress"])
    assert rc == 0
    capsys.readouterr()
    log = json.loads((tmp_path / "mechanism_log.json").read_text())
    assert log["parameters"]["counter"] == "blt"
    st = log["release_groups"][0]["structure"]
    assert st["kind"] == "factorized" and st["strategy"] == "blt" and st["leaves"] == 5


@pytest.mark.parametrize("argv, needle", [
    (["run", "pp-ucrl-vtr", "--privacy", "jdp", "--option", "counter=dyadic"], "option counter must be one of"),
    (["run", "pp-ucrl-vtr", "--privacy", "ldp", "--option", "counter=blt"], "option counter applies to JDP"),
])
def test_cli_refuses_in_one_line_with_exit_2(tmp_path, capsys, argv, needle):
    from privacct.cli import main

    extra = ["--out", str(tmp_path / "x"), "--episodes", "4"] if argv[0] == "run" else ["--quiet"]
    assert main(argv + extra) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1
