"""algorithms/small_gemv.gemv: the one P~_h V product of UCB-VI's and UCB-PO's compiled backward
passes, by gemv_small (``fast``) or by numba's BLAS call. Both branches give the same bytes: a run with ``fast``
switched off (every product through BLAS, the branch RiverSwim's small S never takes) equals the run with it, and
both equal the pinned run (tests/algorithms/test_regret_pins.py pins the fast one)."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.tabular import LEARNERS
from privacct.rng import spawn_sequences


def test_both_branches_compute_the_product():
    from privacct.algorithms.small_gemv import gemv as stage_product

    rng = np.random.default_rng(3)
    A, x = rng.random((12, 6)), rng.random(6) - 0.4
    fast, blas = np.empty(12), np.empty(12)
    stage_product(A, x, fast, True)
    stage_product(A, x, blas, False)
    assert fast.tobytes() == blas.tobytes() == np.dot(A, x).tobytes()


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
@pytest.mark.parametrize("privacy", ["none", "jdp", "ldp"])
def test_fast_off_gives_the_same_bytes(alg, privacy, monkeypatch):
    """A configuration whose policy the product decides (small bonus and noise: a product scaled by 1.5 in the BLAS
    branch changes every row's regret here; at eps 1 the clipped Q hides it)."""
    import privacct.algorithms.tabular.learner as L
    from privacct.algorithms.small_gemv import gemv_small_exact

    claim = {} if privacy == "none" else dict(epsilon=1e4, delta=0.0)
    cfg = RunConfig(alg, privacy, episodes=200, horizon=5, env="riverswim", bonus_scale=1e-3,
                    options=(("e_scale", 1e-3),), **claim)
    seeds = spawn_sequences(7, 3)
    assert gemv_small_exact(6 * 2, 6) and gemv_small_exact(6, 6)   # RiverSwim (S 6, A 2): the pinned run is fast
    with_fast = LEARNERS[alg].run(cfg, seeds).regret
    monkeypatch.setattr(L, "_gemv_fast", lambda mdp: False)
    without = LEARNERS[alg].run(cfg, seeds).regret
    assert with_fast.tobytes() == without.tobytes()
