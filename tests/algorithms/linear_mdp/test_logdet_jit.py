"""The switching test's log-determinants compiled (algorithms/linear_mdp/logdet_jit.py): the bits of
``common.released_logdet``'s fast path where numpy's factorisations all succeed, and False (numpy's path then runs,
floors included) exactly where one fails; Private LSVI-UCB's unaudited run gives the same bytes with it or without it."""

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.linear_mdp import logdet_jit as LJ
from privacct.algorithms.linear_mdp.common import released_logdet
from privacct.algorithms.registry import learners
from privacct.rng import spawn_sequences


@pytest.mark.parametrize("d", [3, 8, 10, 17])
def test_compiled_logdet_gives_the_numpy_fast_path_and_verdict(d):
    from privacct.algorithms.linear_mixture.lapack import routines
    from privacct.algorithms.linear_mixture.numpy_loops import loop_address

    lib, logfn = routines(), loop_address(np.log)
    if lib is None or logfn is None:
        pytest.skip("numpy's LAPACK or log loop not found here: the learner keeps numpy")
    assert LJ.checked(d) == (lib[0], logfn)     # the self-check passes here (the kernel is the learner's)
    rng = np.random.default_rng(d)
    verdicts = set()
    for trial in range(30):
        B, H = 1 + trial % 3, 1 + trial % 5
        X = rng.standard_normal((B, H, d, d)) * 10.0 ** rng.uniform(-2, 2)
        M = X @ np.swapaxes(X, -1, -2) + 10.0 ** rng.uniform(-2, 2) * np.eye(d)
        floor = float(np.linalg.eigvalsh(M)[..., 0].min()) * (0.5 if trial % 2 else 1.5)   # half need the floor
        floor_eye = floor * np.eye(d)
        fn = LJ.CompiledLogdet(B, H, d, floor, lib[0], logfn)   # the kernel itself, not behind its self-check
        got = np.full((B, H), -1.0)
        ok = fn(M, got)
        _, want, low = released_logdet(M, floor, floor_eye, allow_floor=True, what=lambda: "test",
                                       buf=np.empty((2,) + M.shape))
        verdicts.add(ok)
        assert ok == (low is None)
        if ok:
            assert got.tobytes() == want.tobytes()
        else:
            assert (got == -1.0).all()       # nothing written: the caller's numpy path decides
    assert verdicts == {True, False}


def _cfg():
    return RunConfig("private-lsvi-ucb", "jdp", epsilon=200.0, delta=1e-5, calibration="tight", episodes=60,
                     options=(("counter", "blt"), ("update_cap", 3), ("beta", 0.5), ("C", 1.05)))


def test_the_run_with_the_compiled_logdet_is_the_numpy_run(monkeypatch):
    """With the kernel, without it, and with it refusing every third episode (as a matrix needing the floor makes it
    refuse: that episode through numpy): the same regret, updates, releases and ledgers."""
    import privacct.algorithms.linear_mdp.private_lsvi_ucb as P

    real = P._compiled_logdet
    used = []

    def spy(*a):
        used.append(real(*a))
        return used[-1]

    def every_third(*a):
        fn = real(*a)
        n = [0]

        def call(M, out):
            n[0] += 1
            return n[0] % 3 != 0 and fn(M, out)
        return call

    runs = []
    for patch in (spy, lambda *a: None, every_third):
        monkeypatch.setattr(P, "_compiled_logdet", patch)
        runs.append(learners()["private-lsvi-ucb"].run(_cfg(), spawn_sequences(5, 2)))
    assert used and used[0] is not None
    a = runs[0]
    assert a.info["n_updates"].max() > 0
    for b in runs[1:]:
        assert a.regret.tobytes() == b.regret.tobytes()
        for key in ("final_release", "n_updates", "floor_events", "cap_reached_episode"):
            assert np.asarray(a.info[key]).tobytes() == np.asarray(b.info[key]).tobytes()
        assert [u.tobytes() for u in a.info["update_episodes"]] == [u.tobytes() for u in b.info["update_episodes"]]
        for la, lb in zip(a.info["ledgers"], b.info["ledgers"], strict=True):
            assert [repr(d) for d in la.draws()] == [repr(d) for d in lb.draws()]
