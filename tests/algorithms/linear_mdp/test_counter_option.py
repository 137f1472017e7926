"""Private LSVI-UCB with a factorized Gram counter (option counter; docs/counters.md)."""

import math

import pytest

from privacct.accounting import tightest_epsilon
from privacct.algorithms.contract import RunConfig
from privacct.algorithms.linear_mdp import private_lsvi_ucb as M
from privacct.algorithms.linear_mdp.common import TightChoice
from privacct.algorithms.registry import learners
from privacct.counters.strategies import Strategy, column_norm, worst_prefix_variance
from privacct.errors import PrivacctError
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences

K = 120


def _cfg(counter=None, calibration="tight"):
    opts = () if counter is None else (("counter", counter),)
    return RunConfig("private-lsvi-ucb", "jdp", epsilon=5.0, delta=1e-5, calibration=calibration, episodes=K, options=opts)


@pytest.mark.parametrize("counter", ["tree-honaker", "sqrt-toeplitz", "blt"])
def test_factorized_gram_counter_meets_the_claim_and_its_ledger(counter):
    r = learners()["private-lsvi-ucb"].run(_cfg(counter), spawn_sequences(1, 2))
    p = r.log.params
    assert p["counter"] == counter and r.log.release_groups[0].structure.strategy == counter
    assert tightest_epsilon(r.log, delta=1e-5)[1] <= 5.0 * (1 + 1e-9)
    chk = check_ledger(r.log, r.ledger, delta=1e-5)
    assert chk.ok
    # the regularizer shift is derived from this counter's prefix error, not the tree's
    st = Strategy(counter).structure(K - 1)
    expected = math.sqrt(worst_prefix_variance(st)) * p["sigma_node"] * (4 * math.sqrt(r.log.params["d"])
                                                                         + 2 * math.log(3 * K * p["H"] / p["p"]))
    assert p["lam_tilde"] == pytest.approx(expected, rel=1e-12)
    assert p["rho_gram_accounted"] == pytest.approx(p["H"] * column_norm(st, "l2") ** 2 / p["sigma_node"] ** 2, rel=1e-12)


def test_tight_keeps_the_tree_when_there_is_no_y_release():
    # K = 120 at (5, 1e-5): the tree's cap is 0 (no update, no y release): every counter at the tree's shift gives the
    # same regret bound, so the proxy cannot rank them and the tree is kept, saying so
    log = M.build_log(_cfg())
    choice = TightChoice.from_params(log.params["tight_choice"])
    assert log.params["N_cap"] == 0 and log.params["counter"] == "tree" == choice.strategy
    assert log.release_groups[0].structure.kind == "tree"
    assert not choice.ranked and "no y release" in choice.reason
    assert log.params["lam_tilde"] == M.build_log(_cfg("tree")).params["lam_tilde"]


def test_tree_option_is_the_legacy_tree_and_bad_counter_is_named():
    log = M.build_log(_cfg("tree"))
    assert log.release_groups[0].structure.kind == "tree"
    assert M.build_log(_cfg("tree", "paper")).release_groups[0].structure.kind == "tree"
    with pytest.raises(PrivacctError, match="options.counter must be one of"):
        M.build_log(_cfg("dyadic"))
