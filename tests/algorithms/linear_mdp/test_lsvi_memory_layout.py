"""Private LSVI-UCB's memory layout (issue 23's memory slice) keeps every byte: the visit counts in float32 (whole
numbers up to 2^24) give the float64 counts' run, compiled and numpy episodes alike, and one seed's data-free policy
repeated is every seed's."""

import numpy as np
import pytest

import privacct.algorithms.linear_mdp.common as C
import privacct.algorithms.linear_mdp.private_lsvi_ucb as L
from privacct.algorithms.contract import RunConfig
from privacct.algorithms.envs.linear_mdp import LINEAR_ENVS
from privacct.algorithms.registry import learners
from privacct.rng import spawn_sequences

#: enough episodes that a visited (h, s, a, s') cell counts past 2048 (float16 would round it; float32 does not)
K = 5000


def _run(monkeypatch, f32_max: int, compiled: bool):
    cfg = RunConfig("private-lsvi-ucb", "jdp", epsilon=200.0, delta=1e-5, calibration="tight", episodes=K,
                    env="linear-two-state", options=(("beta", 0.5), ("C", 1.05)))
    seen, hists = [], []
    real = C.lsvi

    def spy(env, Ainv, N, *a, **k):
        seen.append(N.dtype)
        return real(env, Ainv, N, *a, **k)

    class History(C.History):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            hists.append(self)

    with monkeypatch.context() as m:
        m.setattr(L, "COUNTS_F32_MAX", f32_max)
        m.setattr(L, "COMPILED_EPISODE", compiled)
        m.setattr(C, "lsvi", spy)
        m.setattr(C, "History", History)
        r = learners()["private-lsvi-ucb"].run(cfg, spawn_sequences(11, 2))
    [h] = hists
    return r, seen, h.N


@pytest.mark.parametrize("compiled", [True, False])
def test_float32_counts_give_the_float64_run(monkeypatch, compiled):
    a, seen_a, N_a = _run(monkeypatch, L.COUNTS_F32_MAX, compiled)
    b, seen_b, N_b = _run(monkeypatch, 0, compiled)
    # the data-free policy's lsvi (float64 zeros) first, then the updates' on the run's counts
    assert set(seen_a[1:]) == {np.dtype(np.float32)} and set(seen_b) == {np.dtype(np.float64)}
    assert N_a.dtype == np.float32 and N_b.dtype == np.float64
    assert N_a.max() > 2048                          # counts past float16's exact range, still whole
    assert N_a.astype(np.float64).tobytes() == N_b.tobytes()
    assert a.info["n_updates"].min() > 1
    assert a.regret.tobytes() == b.regret.tobytes()
    assert a.info["final_release"].tobytes() == b.info["final_release"].tobytes()
    assert [repr(d) for d in a.ledger.draws()] == [repr(d) for d in b.ledger.draws()]


@pytest.mark.parametrize("env_name", sorted(LINEAR_ENVS))
@pytest.mark.parametrize("beta", [0.5, 10.0])
def test_one_seeds_data_free_policy_is_every_seeds(env_name, beta):
    env = LINEAR_ENVS[env_name]()
    for lam in (0.5, 1.0, 7.0):
        many = C.data_free_policy(env, 5, 2.0 * lam, beta)
        assert np.repeat(C.data_free_policy(env, 1, 2.0 * lam, beta), 5, axis=0).tobytes() == many.tobytes()
