"""The runner's cost growth and the linear-MDP memory model for the sqrt-toeplitz counter (issue 23 item 3): it keeps
every z, so its memory is O(steps d^2) per Gram counter and its run costs O(steps^2), where the steps are the
episodes (private-lsvi-ucb) or the batches (the batched learners), not always K."""

from __future__ import annotations

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.memory import run_estimate
from privacct.algorithms.registry import get_learner
from privacct.algorithms.runner import cost_growth

TOEPLITZ = (("counter", "sqrt-toeplitz"),)


def _cfg(name, K, options=()):
    return RunConfig(name, "jdp", epsilon=5.0, delta=1e-5, episodes=K, options=options)


def test_batched_sqrt_toeplitz_grows_with_its_batches_not_k():
    """private-lsvi-ucb's counter steps every episode (K - 1 leaves): k^1. The batched learner's steps once per batch
    (B - 1 leaves, B = 6 at K = 1000): its O(B^2) does not grow the episode cost; with as many batches as episodes
    (option batches) it does again."""
    lsvi = get_learner("private-lsvi-ucb")
    batched = get_learner("batched-jdp-lsvi-ucb")
    assert cost_growth(lsvi.build_log(_cfg("private-lsvi-ucb", 1000, TOEPLITZ))) == 1
    assert cost_growth(batched.build_log(_cfg("batched-jdp-lsvi-ucb", 1000, TOEPLITZ))) == 0
    assert cost_growth(batched.build_log(_cfg("batched-jdp-lsvi-ucb", 1000, TOEPLITZ + (("batches", 500),)))) == 1
    assert cost_growth(batched.build_log(_cfg("batched-jdp-lsvi-ucb", 1000))) == 0          # the tree
    assert cost_growth(None) == 0


def _term(name, K, options, seeds=4):
    e = run_estimate(get_learner(name), _cfg(name, K, options), seeds)
    return dict(e.terms).get("sqrt-toeplitz draws", 0), e.total


def test_memory_counts_every_z_of_sqrt_toeplitz():
    """8 B x seeds x H x d^2 per step: K - 1 steps for private-lsvi-ucb (H = 5, d = 10 on the default environment), the
    B - 1 <= B batches of the batched learner; no term for another counter."""
    got, total = _term("private-lsvi-ucb", 1000, TOEPLITZ)
    assert got == 8 * 4 * 5 * 10 * 10 * 999
    assert total - got == run_estimate(get_learner("private-lsvi-ucb"), _cfg("private-lsvi-ucb", 1000), 4).total
    assert _term("private-lsvi-ucb", 1000, (("counter", "blt"),))[0] == 0
    got_b, _ = _term("batched-jdp-lsvi-ucb", 1000, TOEPLITZ)
    assert got_b == 8 * 4 * 5 * 10 * 10 * 6
    got_b, _ = _term("batched-jdp-lsvi-ucb", 1000, TOEPLITZ + (("batches", 500),))
    assert got_b == 8 * 4 * 5 * 10 * 10 * 500
    got_l, _ = _term("batched-jdp-lsvi-ucb-laplace", 1000, TOEPLITZ)
    assert 0 < got_l < 8 * 4 * 5 * 10 * 10 * 999
