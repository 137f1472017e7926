"""Seed chunks on any executor give the bytes of one batch (privacct.algorithms.scaleout)."""

import distributed
import numpy as np
import pytest

from privacct.algorithms.base import RunConfig
from privacct.algorithms.registry import get_learner
from privacct.algorithms.scaleout import join, run_seeds, seed_chunks
from privacct.errors import PrivacctError

SEEDS = np.random.SeedSequence(3).spawn(5)
CASES = [("ucb-vi", "jdp"), ("ldp-ucrl-vtr", "ldp"), ("private-lsvi-ucb", "jdp")]


def _cfg(name, privacy, K=10):
    return RunConfig(name, privacy=privacy, epsilon=1.0, delta=1e-5, episodes=K)


def test_seed_chunks_cover_the_seeds_in_order():
    assert [list(r) for r in seed_chunks(5, 2)] == [[0, 1], [2, 3], [4]]
    assert [list(r) for r in seed_chunks(3, 8)] == [[0, 1, 2]]


@pytest.mark.parametrize("name,privacy", CASES)
def test_chunks_inline_equal_one_batch(name, privacy):
    spec, cfg = get_learner(name), _cfg(name, privacy)
    batch = spec.run(cfg, SEEDS)
    done = []
    chunked = run_seeds(spec, cfg, SEEDS, chunk_size=2, executor="inline", progress=done.append)
    assert chunked.regret.tobytes() == batch.regret.tobytes()
    assert chunked.log == batch.log and chunked.info["seed_chunks"] == 3
    assert done[-1] == cfg.episodes and done == sorted(done)


def test_chunks_on_a_loopback_dask_cluster_equal_one_batch():
    spec, cfg = get_learner("ucb-vi"), _cfg("ucb-vi", "jdp")
    batch = spec.run(cfg, SEEDS)
    with distributed.LocalCluster(n_workers=2, processes=False, protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        remote = run_seeds(spec, cfg, SEEDS, scheduler=cluster.scheduler_address, chunk_size=2)
    assert remote.regret.tobytes() == batch.regret.tobytes()


def test_join_refuses_chunks_that_ran_different_mechanisms():
    a = get_learner("ucb-vi").run(_cfg("ucb-vi", "jdp"), SEEDS[:1])
    b = get_learner("ucb-vi").run(_cfg("ucb-vi", "jdp", K=12), SEEDS[1:2])
    with pytest.raises(PrivacctError, match="different mechanism log"):
        join(a.config, [a, b])


def test_bad_chunk_size_and_scheduler_are_one_line_errors():
    spec, cfg = get_learner("ucb-vi"), _cfg("ucb-vi", "jdp")
    with pytest.raises(PrivacctError, match="chunk_size must be an integer >= 1"):
        run_seeds(spec, cfg, SEEDS, chunk_size=0, executor="inline")
    with pytest.raises(PrivacctError, match="scheduler"):
        run_seeds(spec, cfg, SEEDS, scheduler=42)
