"""Strategies at the same claim (privacct.counters.compare) and the CLI that prints them."""

import json
from pathlib import Path

import pytest

from privacct.accounting import tightest_epsilon
from privacct.calibrate import single_group_log
from privacct.counters.compare import compare, least_noise, log_alternatives
from privacct.counters.strategies import column_norm, worst_prefix_variance
from privacct.errors import PrivacctError
from privacct.log import MechanismLog

EXAMPLES = Path(__file__).parents[3] / "privacct" / "examples"


def test_every_strategy_meets_the_claim_and_the_least_noise_is_least():
    figs = compare(mechanism="gaussian", sensitivity=2.0, leaves=500, epsilon=1.0, delta=1e-5)
    assert [f.strategy for f in figs] == ["tree", "tree-honaker", "sqrt-toeplitz", "blt"]
    for f in figs:
        log = single_group_log(mechanism="gaussian", sensitivity=2.0, structure=f.structure, noise_scale=f.noise_scale)
        assert tightest_epsilon(log, delta=1e-5)[1] <= 1.0 * (1 + 1e-9)
        assert tightest_epsilon(log.scaled_noise(0.99), delta=1e-5)[1] > 1.0     # and not over-noised
        assert f.worst_prefix_variance == pytest.approx(f.noise_scale ** 2 * worst_prefix_variance(f.structure))
        assert f.column_norm == column_norm(f.structure, "l2")
    best = least_noise(figs)
    assert best.worst_prefix_variance == min(f.worst_prefix_variance for f in figs)
    assert best.strategy in ("sqrt-toeplitz", "blt")
    tree = figs[0].worst_prefix_variance
    assert tree / best.worst_prefix_variance > 4.0


def test_laplace_prefers_the_honaker_tree():
    figs = compare(mechanism="laplace", sensitivity=1.0, leaves=1000, epsilon=1.0, delta=0.0)
    assert least_noise(figs).strategy == "tree-honaker"


def test_log_alternatives_recalibrate_the_whole_log():
    log = MechanismLog.load(EXAMPLES / "gaussian-tree.json")
    alts = log_alternatives(log, epsilon=log.claim.epsilon, delta=log.claim.delta)
    assert len(alts) == 1 and alts[0].current == "tree"
    for f in alts[0].figures:
        g = log.release_groups[0]
        swapped = log.replace_groups([g.with_structure(f.structure).with_noise_scale(f.noise_scale)])
        assert tightest_epsilon(swapped, delta=log.claim.delta)[1] <= log.claim.epsilon * (1 + 1e-9)
    assert alts[0].best.worst_prefix_variance < alts[0].figures[0].worst_prefix_variance / 4
    assert log_alternatives(MechanismLog.load(EXAMPLES / "laplace-repeated.json"), epsilon=1.0, delta=0.0) == []


def test_bad_arguments_are_named():
    with pytest.raises(PrivacctError, match="leaves"):
        compare(mechanism="gaussian", sensitivity=1.0, leaves=0, epsilon=1.0, delta=1e-5)
    with pytest.raises(PrivacctError, match="mechanism"):
        compare(mechanism="cauchy", sensitivity=1.0, leaves=3, epsilon=1.0, delta=1e-5)


def test_cli_calibrate_counter_lists_every_strategy(cli, cli_contract):
    r = cli(["calibrate", "--mechanism", "gaussian", "--sensitivity", "1", "--counter-leaves", "300",
             "--epsilon", "1", "--delta", "1e-5", "--json"])
    cli_contract(r, codes=(0,))
    d = json.loads(r.out)
    assert {s["strategy"] for s in d["strategies"]} == {"tree", "tree-honaker", "sqrt-toeplitz", "blt"}
    best = min(d["strategies"], key=lambda s: s["worst_prefix_variance"])
    assert d["strategy"] == d["least_noise"] == best["strategy"] and d["noise_scale"] == best["noise_scale"]
    r = cli(["calibrate", "--mechanism", "gaussian", "--sensitivity", "1", "--counter-leaves", "300", "--strategy", "tree",
             "--epsilon", "1", "--delta", "1e-5"])
    cli_contract(r, codes=(0,))
    assert "with strategy tree" in r.out and "<- least worst-prefix error" in r.out


@pytest.mark.parametrize("argv,match", [
    (["--tree-leaves", "8", "--strategy", "blt"], "--counter-leaves"),
    (["--counter-leaves", "0"], "--counter-leaves"),
    (["--counter-leaves", "8", "--accountant", "rdp"], "--accountant"),
])
def test_cli_calibrate_counter_bad_input(cli, cli_contract, argv, match):
    r = cli(["calibrate", "--mechanism", "gaussian", "--sensitivity", "1", "--epsilon", "1", "--delta", "1e-5"] + argv)
    cli_contract(r, codes=(2,))
    assert match in r.err


def test_cli_account_a_factorized_counter(cli, cli_contract):
    r = cli(["account", "--mechanism", "gaussian", "--sensitivity", "1", "--counter-leaves", "64", "--strategy",
             "sqrt-toeplitz", "--noise-scale", "3", "--delta", "1e-6", "--json"])
    cli_contract(r, codes=(0,))
    d = json.loads(r.out)
    assert d["per_user_count"] == 1                       # one release R x + z at the derived multiplier
    assert d["epsilon"]["analytic-gaussian"] == pytest.approx(min(d["epsilon"].values()), rel=1e-12)


def test_cli_verify_counters(cli, cli_contract):
    r = cli(["verify", "--counters", "--json", str(EXAMPLES / "gaussian-tree.json")])
    cli_contract(r, codes=(0, 1))
    d = json.loads(r.out)
    assert d["counters"][0]["current"] == "tree" and len(d["counters"][0]["strategies"]) == 4
    r = cli(["verify", "--counters", str(EXAMPLES / "gaussian-factorized.json")])
    cli_contract(r, codes=(0, 1))
    assert "now sqrt-toeplitz" in r.out and "now blt" in r.out and "<- least worst-prefix error" in r.out
