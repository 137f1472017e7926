"""Private LSVI-UCB's ``tight`` choice of counter, shift and budget split for regret (issue 21 item 1;
docs/counters.md#choosing-for-regret): the strategy of least ||col||^2 max Var at the tree's shift, the rest of the
budget on the y releases, certified at the claim, and the typed record of what was chosen and why."""

import math

import pytest

from privacct.accounting import tightest_epsilon
from privacct.algorithms.contract import RunConfig
from privacct.algorithms.linear_mdp import private_lsvi_ucb as M
from privacct.algorithms.linear_mdp.common import TightChoice
from privacct.algorithms.registry import learners
from privacct.counters.compare import candidates_for
from privacct.counters.strategies import Strategy, column_norm, worst_prefix_variance
from privacct.errors import PrivacctError
from privacct.ledger import check_ledger
from privacct.log import Claim, MechanismLog, tree_depth
from privacct.rng import spawn_sequences

EPS, DELTA = 5.0, 1e-5


def _cfg(K, counter=None, cap=None, eps=EPS):
    opts = tuple(o for o in (("counter", counter), ("update_cap", cap)) if o[1] is not None)
    return RunConfig("private-lsvi-ucb", "jdp", epsilon=eps, delta=DELTA, calibration="tight", episodes=K, options=opts)


def _cv(name, K):
    """||col||_2^2 * worst prefix variance of a Gram counter over K - 1 leaves, derived here (not by the learner)."""
    if name == "tree":
        return float(tree_depth(K - 1)) ** 2
    st = Strategy(name).structure(K - 1, norm="l2")
    return column_norm(st, "l2") ** 2 * worst_prefix_variance(st)


@pytest.mark.parametrize("K,cap", [(120, 2), (600, None)])
def test_tight_takes_the_least_prefix_error_counter_at_the_trees_shift(K, cap):
    log, tree = M.build_log(_cfg(K, cap=cap)), M.build_log(_cfg(K, "tree", cap))
    p, t = log.params, tree.params
    cvs = {c: _cv(c, K) for c in candidates_for("symmetric-gaussian-matrix")}
    assert p["counter"] == min(cvs, key=cvs.get) != "tree"
    # the tree's shift and cap, so the Gram width, the bonus sum and N_cap of the regret bound are the tree's ...
    assert t["N_cap"] >= 1 and p["N_cap"] == t["N_cap"]
    assert p["lam_tilde"] == pytest.approx(t["lam_tilde"], rel=1e-9)
    # ... and the Gram counters take only the budget that shift needs: the share (1/2) cV / L^2, the rest to y
    share = p["rho_gram_accounted"] / (p["rho_gram_accounted"] + p["rho_y_accounted"])
    assert share == pytest.approx(0.5 * cvs[p["counter"]] / cvs["tree"], rel=1e-6)
    assert p["sigma_y"] < t["sigma_y"]
    # certified at the claim by privacct's own accountant, and the whole claim used
    eps = tightest_epsilon(log, delta=DELTA)[1]
    assert EPS * (1 - 1e-6) <= eps <= EPS * (1 + 1e-9)
    # the proxy: every term of the paper's bound at most the tree's, the y width below it
    mine = M.RegretProxy.of(K, p["H"], p["d"], p["p"], p["lam_tilde"], p["N_cap"], p["sigma_y"])
    ref = M.RegretProxy.of(K, t["H"], t["d"], t["p"], t["lam_tilde"], t["N_cap"], t["sigma_y"])
    assert mine.dominates(ref) and not ref.dominates(mine)
    choice = TightChoice.from_params(p["tight_choice"])
    assert choice.ranked and choice.strategy == p["counter"] and choice.reference == "tree"
    assert choice.figure("lam_tilde") == p["lam_tilde"] and choice.figure("reference_lam_tilde") == t["lam_tilde"]
    assert choice.figure("width_y") == pytest.approx(mine.width_y, rel=1e-12)
    assert choice.reason.startswith(f"{p['counter']} at the tree's shift")


def test_named_counter_keeps_the_printed_split():
    # option counter=blt is today's choice: rho/2 + rho/2, the shift from its own prefix error (smaller than the tree's)
    p, t = M.build_log(_cfg(600, "blt")).params, M.build_log(_cfg(600, "tree")).params
    assert p["rho_gram_accounted"] == pytest.approx(p["rho_y_accounted"], rel=1e-9)
    assert p["lam_tilde"] < t["lam_tilde"] and "tight_choice" not in p


def test_the_chosen_run_meets_its_claim_and_its_ledger():
    r = learners()["private-lsvi-ucb"].run(_cfg(120, cap=2), spawn_sequences(3, 2))
    assert r.log.params["counter"] != "tree"
    assert tightest_epsilon(r.log, delta=DELTA)[1] <= EPS * (1 + 1e-9)
    assert check_ledger(r.log, r.ledger, delta=DELTA).ok
    assert r.info["lam_tilde"] == r.log.params["lam_tilde"] and r.info["sigma_y"] == r.log.params["sigma_y"]


def test_regret_proxy_terms_and_dominance():
    K, H, d, p = 1000, 5, 10, 0.05
    a = M.RegretProxy.of(K, H, d, p, 1000.0, 5, 100.0)
    assert a.width_gram == pytest.approx(4 * H * math.sqrt(d * 1000.0), rel=1e-15)
    assert a.width_y == pytest.approx(100.0 * (math.sqrt(d) + 2 * math.sqrt(math.log(3 * K * H / p))) / math.sqrt(1000.0))
    assert a.bonus_sum == pytest.approx(2 * d * math.log(2.0), rel=1e-15)
    lc = M.log_chi(K, H, d, 1000.0, a.width_y * math.sqrt(1000.0), p)
    assert a.width_stat == pytest.approx(6 * d * H * math.sqrt(lc), rel=1e-15)
    assert a.bound == pytest.approx(math.sqrt(2 * K * H ** 3 * lc)
                                    + 6 * (a.width_gram + a.width_stat + a.width_y) * H * math.sqrt(K * a.bonus_sum))
    less_y = M.RegretProxy.of(K, H, d, p, 1000.0, 5, 80.0)
    assert less_y.dominates(a) and not a.dominates(less_y) and less_y.bound < a.bound
    assert not a.dominates(a)                                   # strict: equal terms do not dominate
    # another shift trades the Gram width against the bonus sum: no dominance either way, whatever sigma_y
    wider = M.RegretProxy.of(K, H, d, p, 1500.0, 5, 10.0)
    narrower = M.RegretProxy.of(K, H, d, p, 700.0, 5, 10.0)
    for o in (wider, narrower):
        assert not o.dominates(a) and not a.dominates(o)
    # no y release: the y width is 0 for both, nothing to rank
    none = M.RegretProxy.of(K, H, d, p, 1000.0, 0, None)
    assert none.width_y == 0.0 and not none.dominates(none)


def test_tight_choice_record_survives_the_log_file(tmp_path):
    log = M.build_log(_cfg(120, cap=2))
    log.save(tmp_path / "log.json")
    back = TightChoice.from_params(MechanismLog.load(tmp_path / "log.json").params["tight_choice"])
    assert back == TightChoice.from_params(log.params["tight_choice"])
    assert back.line() == f"{back.strategy}: {back.reason}" and "\n" not in back.line()


def test_gram_share_is_checked_and_the_printed_share_is_the_default():
    assert M.sound_constants(10 ** 4, 5, 10, 1.0, 0.05) == M.sound_constants(10 ** 4, 5, 10, 1.0, 0.05, gram_share=0.5)
    for bad in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(PrivacctError, match="gram_share must be in"):
            M.sound_constants(10 ** 4, 5, 10, 1.0, 0.05, gram_share=bad)


def test_first_update_episode_is_where_the_data_can_first_double_the_determinant():
    lam, d, rate = 1234.5, 10, 2.0
    k = M.first_update_episode(lam, d, rate)
    grow = lambda k: d * math.log(1 + (k - 1) / (2 * lam * d))   # the most the data can add to log det (AM-GM)
    assert grow(k) == pytest.approx(math.log(rate), rel=1e-12)
    assert grow(math.floor(k)) < math.log(rate) <= grow(math.ceil(k))
    assert M.first_update_episode(2 * lam, d, rate) > k and M.first_update_episode(lam, d, 1.5) < k


def test_the_reason_says_when_the_shift_allows_no_update_within_K():
    # K = 300 at (5, 1e-5) with a forced cap of 2: the tree's shift allows no data-triggered update before K
    p = M.build_log(_cfg(300, cap=2)).params
    choice = TightChoice.from_params(p["tight_choice"])
    first = choice.figure("first_update_episode")
    assert first == pytest.approx(M.first_update_episode(p["lam_tilde"], p["d"], p["C"]), rel=1e-9) and first > 300
    assert "data-free policy" in choice.reason
    q = M.build_log(_cfg(600, eps=50.0)).params    # less noise, a smaller shift: within K, no such note
    assert TightChoice.from_params(q["tight_choice"]).figure("first_update_episode") < 600
    assert "data-free" not in q["tight_choice"]["reason"]


# The report's --full setting of seed 004 (linear-two-state, H = 5, K = 10^4, (1, 1e-5)) and the benchmark's
# (linear-d10-h10, K = 10^4, (5, 1e-5)): the tree's shift allows no update within K at the first, one at the second.
TWO_STATE, BENCH = ("linear-two-state", 1.0), ("linear-d10-h10", 5.0)


def _env_cfg(env, eps, counter=None):
    opts = (("counter", counter),) if counter else ()
    return RunConfig("private-lsvi-ucb", "jdp", epsilon=eps, delta=DELTA, calibration="tight", episodes=10 ** 4,
                     env=env, options=opts)


def test_when_the_trees_shift_allows_no_update_tight_takes_the_updating_candidate():
    log = M.build_log(_env_cfg(*TWO_STATE))
    p, K = log.params, 10 ** 4
    choice = TightChoice.from_params(p["tight_choice"])
    tree_first = choice.figure("first_update_episode")
    assert tree_first == pytest.approx(M.first_update_episode(choice.figure("reference_lam_tilde"), p["d"], p["C"]))
    assert tree_first > K                                     # the tree's shift: no data-triggered update within K
    # the choice: a candidate whose shift allows one (BLT at the printed split, the shift of its own prefix error) ...
    assert p["lam_tilde"] < choice.figure("reference_lam_tilde") and p["N_cap"] >= 1
    assert M.first_update_episode(p["lam_tilde"], p["d"], p["C"]) <= K
    assert choice.figure("chosen_first_update_episode") <= K and choice.ranked
    blt = M.build_log(_env_cfg(*TWO_STATE, counter="blt")).params
    assert p["counter"] == "blt" and p["lam_tilde"] == blt["lam_tilde"] and p["sigma_y"] == blt["sigma_y"]
    assert "allows no update within K" in choice.reason and "data-free policy" in choice.reason
    # ... certified at the same claim, the whole claim used
    assert TWO_STATE[1] * (1 - 1e-6) <= tightest_epsilon(log, delta=DELTA)[1] <= TWO_STATE[1] * (1 + 1e-9)


@pytest.mark.parametrize("env,eps", [TWO_STATE, BENCH])
def test_the_updating_step_changes_the_choice_exactly_when_the_trees_shift_allows_no_update(env, eps):
    p = M.build_log(_env_cfg(env, eps)).params
    K, claim = 10 ** 4, Claim(eps, DELTA)
    off, _ = M.choose_tight(K, p["H"], p["d"], p["rho"], p["p"], claim, None, p["C"], updating=False)
    on = TightChoice.from_params(p["tight_choice"])
    no_update = off.figure("first_update_episode") > K
    assert no_update == (env == TWO_STATE[0])
    same = (on.strategy, on.reason, dict(on.figures)) == (off.strategy, off.reason, dict(off.figures))
    assert same != no_update
    if not no_update:       # the benchmark's setting: its default unchanged (BLT at the tree's shift)
        assert on.strategy == "blt" and on.figure("lam_tilde") == pytest.approx(on.figure("reference_lam_tilde"))
