"""Seed 004's update cap (issue 20 item 4, issue 21 item 4; docs/seed-004-private-lsvi-ucb.md#the-update-cap): the
paper's cap ceil(N_max) - 1 (0 allowed: no update, no y group), option ``update_cap`` for configurations the paper
would not run (the audit setting's, said in its ``departures``), and the tight calibration's cap, which is the
paper's cap of the lam~ that runs (``N_cap = ceil(N_max_thm11) - 1``)."""

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.linear_mdp import LEARNERS, PRIVATE_LSVI_AUDIT, neighbours
from privacct.algorithms.linear_mdp import private_lsvi_ucb as P
from privacct.algorithms.neighbours import check_log_against
from privacct.errors import PrivacctError
from privacct.ledger import check_ledger
from privacct.log import tree_depth
from privacct.privacy_report import privacy_report
from privacct.rng import spawn_sequences

SPEC = LEARNERS["private-lsvi-ucb"]
#: the audit setting's configuration without its update_cap: K = 5, H = 2, C = 1 + 1e-6 (the noisy switch test fires
#: at once), the printed N_max 0.056 at eps = 1
FAITHFUL = (("beta", 1e6), ("C", 1.000001))


def cfg(*, episodes=5, horizon=2, epsilon=1.0, calibration="paper", options=FAITHFUL, **kw):
    return RunConfig("private-lsvi-ucb", "jdp", epsilon=epsilon, delta=1e-5, calibration=calibration,
                     episodes=episodes, horizon=horizon, options=options, **kw)


def alg1_updates(n_max: float, triggers: int = 10 ** 4) -> int:
    """Alg. 1 as printed, with the switch test firing at every episode: N_count <- 1 (line 6); update iff
    N_count < N_max (line 8), then N_count <- N_count + 1 (line 22)."""
    n_count, updates = 1, 0
    for _ in range(triggers):
        if n_count < n_max:
            updates += 1
            n_count += 1
    return updates


@pytest.mark.parametrize("n_max, cap", [(1e-9, 0), (0.0559, 0), (0.5, 0), (1.0, 0),          # (0, 1]
                                        (1.0000001, 1), (1.5, 1), (2.0, 1),                    # (1, 2]
                                        (3.0, 2), (26.0, 25), (26.58, 26), (2.0000001, 2)])    # integers and beyond
def test_paper_cap_is_ceil_n_max_minus_one_as_alg1_counts(n_max, cap):
    assert P.paper_cap(n_max) == cap == alg1_updates(n_max)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-12, max_value=500.0, allow_nan=False))
def test_paper_cap_equals_alg1_for_any_n_max(n_max):
    assert P.paper_cap(n_max) == alg1_updates(n_max)


def test_paper_cap_refuses_a_non_positive_n_max():
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(PrivacctError, match="N_max must be > 0"):
            P.paper_cap(bad)


@pytest.mark.parametrize("calibration", ["paper", "tight"])
@pytest.mark.parametrize("episodes, epsilon", [(5, 1.0), (100, 5.0), (800, 1.0), (50, 20.0)])
def test_the_plan_cap_is_the_paper_cap_of_its_n_max(calibration, episodes, epsilon):
    # paper: printed N_max 0.056, 1.50, 1.60, 2.95 at these settings (H = 2, d = 10), so caps 0, 1, 1, 2
    log = SPEC.build_log(cfg(episodes=episodes, epsilon=epsilon, calibration=calibration,
                             options=(("beta", 5.0), ("counter", "tree"))))
    n_max, cap = log.params["N_max_thm11"], log.params["N_cap"]
    assert log.params["N_cap_paper"] == math.ceil(n_max) - 1 == alg1_updates(n_max)
    if (episodes, epsilon, calibration) == (50, 20.0, "tight"):
        # no fixed point: at cap 0 the Gram part gets the whole claim, less noise, N_max 1.35 (paper cap 1); at cap 1
        # N_max is 0.96 (paper cap 0). Cap 0 is kept: never more updates than Alg. 1 makes with the noise that runs
        assert cap == 0 and round(n_max, 2) == 1.35 and log.params["N_cap_rule"].startswith("no fixed point")
        one = SPEC.build_log(cfg(episodes=50, epsilon=20.0, calibration="tight",
                                 options=(("beta", 5.0), ("counter", "tree"), ("update_cap", 1))))
        assert round(one.params["N_max_thm11"], 2) == 0.96
    else:
        assert cap == log.params["N_cap_paper"] and log.params["N_cap_rule"].startswith("paper:")
    if calibration == "paper":
        assert cap == {5: 0, 100: 1, 800: 1, 50: 2}[episodes]
        assert n_max == pytest.approx(P.printed_constants(episodes, 2, 10, log.params["rho"], 0.05)["N_max"], rel=1e-12)
    names = [g.name for g in log.release_groups]
    assert ("y" in names) == (cap > 0)
    if cap:
        assert log.group("y").structure.max_count == 2 * cap


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_cap_zero_declares_no_y_group_and_the_run_never_updates(calibration):
    c = cfg(calibration=calibration)
    log = SPEC.build_log(c)
    p = log.params
    assert p["N_cap"] == 0 and p["N_max_thm11"] <= 1
    assert [g.name for g in log.release_groups] == ["gram_h1", "gram_h2"]
    assert p["sigma_y"] is None and p["rho_y_accounted"] == 0.0 and "rho_y_printed_constants" not in p
    # neighbours: a distance for every group of the log and none for a group it does not declare
    nb = neighbours(c)
    assert check_log_against(nb, log) == [] and [g.group for g in nb.groups] == ["gram_h1", "gram_h2"]
    res = SPEC.run(c, spawn_sequences(3, 4))
    assert np.all(res.info["n_updates"] == 0) and all(len(u) == 0 for u in res.info["update_episodes"])
    assert res.info["cap"] == 0 and res.info["sigma_y"] is None
    assert np.all(res.info["cap_reached_episode"] > 0)        # the switch test fired: the cap (0) blocked it
    # the data-free policy all along: its regret in every episode
    assert np.all(res.regret == res.regret[:, :1])
    for led in res.info["ledgers"]:
        chk = check_ledger(log, led)
        assert chk.ok and "y" not in chk.executed_counts and chk.executed_counts == chk.declared_counts
        if calibration == "paper":   # the tree (tight may pick another counter)
            assert all(chk.executed_counts[f"gram_h{h}"] == tree_depth(4) for h in (1, 2))
    rep = privacy_report(log)
    assert {g["name"] for g in rep.groups} == {"gram_h1", "gram_h2"}


def test_update_cap_raises_the_cap_and_the_log_accounts_the_releases():
    faithful = SPEC.build_log(cfg())
    eps0 = privacy_report(faithful).tightest_epsilon
    previous = eps0
    for n in (1, 2):
        c = cfg(options=FAITHFUL + (("update_cap", n),))
        log = SPEC.build_log(c)
        assert log.params["N_cap"] == n and log.params["N_cap_paper"] == 0
        assert log.params["N_cap_rule"] == f"option update_cap = {n}"
        y = log.group("y")
        assert y.structure.max_count == 2 * n
        # the printed y variance of line 11 is kept: 6 H^2 N_max / rho
        assert y.noise_scale == pytest.approx(math.sqrt(6 * 4 * log.params["N_max_thm11"] / log.params["rho"]), rel=1e-12)
        eps = privacy_report(log).tightest_epsilon
        assert eps > previous        # every extra release is accounted
        previous = eps
        res = SPEC.run(c, spawn_sequences(4, 3))
        upd = res.info["n_updates"]
        assert upd.max() == n and upd.min() >= 1      # the noisy switch test fires at once (C = 1 + 1e-6); the cap stops it
        for b, led in enumerate(res.info["ledgers"]):
            chk = check_ledger(log, led)
            assert chk.ok and chk.declared_counts["y"] == 2 * n
            assert chk.executed_counts["y"] == 2 * upd[b] and len(res.info["update_episodes"][b]) == upd[b]
    # update_cap below the paper's cap: fewer releases declared, fewer made
    big = cfg(episodes=64, epsilon=50.0, options=(("beta", 5.0), ("C", 1.5)))
    assert SPEC.build_log(big).params["N_cap"] > 2
    low = SPEC.build_log(replace(big, options=big.options + (("update_cap", 0),)))
    assert [g.name for g in low.release_groups] == ["gram_h1", "gram_h2"]
    assert SPEC.run(replace(big, options=big.options + (("update_cap", 0),)), spawn_sequences(1, 2)).info["n_updates"].max() == 0


@pytest.mark.parametrize("bad", [-1, 1.5, True, "two"])
def test_update_cap_must_be_an_integer_at_least_zero(bad):
    with pytest.raises(PrivacctError, match="update_cap"):
        SPEC.build_log(cfg(options=FAITHFUL + (("update_cap", bad),)))


def _gdp_delta(eps: float, mu: float) -> float:
    """delta(eps) of mu-GDP (Dong, Roth, Su 2019, Cor. 2.13)."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def test_tight_at_cap_zero_calibrates_the_gram_part_alone_to_the_claim():
    log = SPEC.build_log(cfg(calibration="tight", options=FAITHFUL + (("counter", "tree"),)))
    p = log.params
    assert p["N_cap"] == 0 and [g.name for g in log.release_groups] == ["gram_h1", "gram_h2"]
    assert privacy_report(log).tightest_epsilon == pytest.approx(1.0, rel=1e-6)
    # the Gram part is all of it: H trees, each user in L nodes of sensitivity sqrt(2), a mu-GDP with
    # mu^2 = H L 2 / sigma_node^2 = 2 rho_gram whose delta at eps = 1 is the claim's 1e-5
    L = tree_depth(4)
    mu = math.sqrt(2 * L * 2.0 / p["sigma_node"] ** 2)
    assert mu ** 2 == pytest.approx(2 * p["rho_gram_accounted"], rel=1e-12)
    assert _gdp_delta(1.0, mu) == pytest.approx(1e-5, rel=1e-4)
    # with one update (update_cap = 1) the Gram part gets less of the claim: smaller mu, more node noise
    one = SPEC.build_log(cfg(calibration="tight", options=FAITHFUL + (("counter", "tree"), ("update_cap", 1))))
    assert one.params["sigma_node"] > p["sigma_node"] * 1.2
    assert privacy_report(one).tightest_epsilon == pytest.approx(1.0, rel=1e-6)


def test_tight_cap_is_the_paper_cap_of_the_calibrated_lam_at_the_benchmark_setting():
    # d = 10, H = 10, K = 10^4, (5, 1e-5), the tree counter: the cap before calibration (sound constants, rho / 2 per
    # part) was 31 while Thm 11's N_max of the calibrated lam~ is 36.6; the cap is now ceil(36.6) - 1 = 36
    c = RunConfig("private-lsvi-ucb", "jdp", epsilon=5.0, delta=1e-5, calibration="tight", episodes=10_000,
                  env="linear-d10-h10", options=(("beta", 10.0), ("counter", "tree")))
    log = SPEC.build_log(c)
    p = log.params
    lam = P.lam_from_node(p["sigma_node"], 10_000, 10, 10, 0.05)
    assert p["lam_tilde"] == pytest.approx(lam, rel=1e-12)
    assert p["N_max_thm11"] == pytest.approx(P.switching_bound(10_000, 10, 10, lam), rel=1e-12)
    assert round(p["N_max_thm11"], 1) == 36.6 and p["N_cap"] == 36 == math.ceil(p["N_max_thm11"]) - 1
    assert P.sound_constants(10_000, 10, 10, p["rho"], 0.05)["N_cap"] == 31     # the cap the old rule declared
    assert log.group("y").structure.max_count == 10 * 36
    assert privacy_report(log).tightest_epsilon == pytest.approx(5.0, rel=1e-6)


def test_cap_fixed_point():
    assert P.cap_fixed_point(31, lambda c: 36) == (36, True)
    assert P.cap_fixed_point(36, lambda c: 36) == (36, True)
    assert P.cap_fixed_point(0, lambda c: 0) == (0, True)
    # a cycle 4 -> 6 -> 4: 4 <= its paper cap 6, 6 > 4: keep 4 (never more updates than Alg. 1 with that noise)
    assert P.cap_fixed_point(4, lambda c: {4: 6, 6: 4}[c]) == (4, False)
    # no fixed point within CAP_ROUNDS: the largest cap tried at most its own paper cap
    assert P.cap_fixed_point(1, lambda c: c + 1) == (P.CAP_ROUNDS, False)
    assert P.cap_fixed_point(9, lambda c: c - 1 if c > 1 else 5) == (0, False)


def test_the_audit_setting_declares_its_departure_and_audits_what_it_declares():
    opts = dict(PRIVATE_LSVI_AUDIT.options)
    assert opts["update_cap"] == 1
    d = PRIVATE_LSVI_AUDIT.departures
    assert "update_cap = 1" in d and "no policy update" in d and "accounts" in d
    audit_cfg = cfg(options=PRIVATE_LSVI_AUDIT.options)
    log = SPEC.build_log(audit_cfg)
    n_max = log.params["N_max_thm11"]
    assert f"N_max = {n_max:.2g}" in d and log.params["N_cap_paper"] == 0 and log.params["N_cap"] == 1
    tight = SPEC.build_log(replace(audit_cfg, calibration="tight"))
    assert f"({tight.params['N_max_thm11']:.2g} tight)" in d
    # the y releases the audit tests are declared, and the faithful configuration has none
    assert log.group("y").structure.max_count == 2
    assert "y" not in [g.name for g in SPEC.build_log(cfg()).release_groups]
    # every other learner's audit setting is one the paper runs as it is
    from privacct.algorithms.registry import learners

    assert [n for n, s in learners().items() if s.audit_configuration().departures] == ["private-lsvi-ucb"]


def test_audit_setting_departures_must_be_text():
    from privacct.algorithms.contract import AuditSetting

    assert AuditSetting().departures == ""
    with pytest.raises(PrivacctError, match="departures"):
        AuditSetting(departures=None)
