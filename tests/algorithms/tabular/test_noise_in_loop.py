"""The compiled tabular loops draw their own noise and skip the small BLAS calls, with the same bytes (issue 23):
numba's Generator gives numpy's exponentials; tree-honaker's compiled step (HonakerAhead + episode_jit's mode 4) is
FactorizedCounter's, addition by addition and ledger draw by ledger draw; the short-dot product is OpenBLAS's gemv;
the learners' compiled loops equal the numpy loop for tree-honaker across a 256-episode chunk and for a counter the
loop does not compile (sqrt-toeplitz: each statistic through Privatizer.release)."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.tabular import LEARNERS
from privacct.algorithms.tabular import learner as tabular_learner
from privacct.counters.counter import FactorizedCounter
from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.rng import spawn_sequences


def test_draw_exponentials_is_numpys_stream():
    from privacct.algorithms.tabular.episode_jit import draw_exponentials

    got_rng, want_rng = np.random.default_rng(7), np.random.default_rng(7)
    for shape in ((3, 2, 5), (1, 2, 1), (4, 2, 9)):
        got = np.empty(shape)
        draw_exponentials(got_rng, got)
        want = want_rng.standard_exponential(shape)
        assert got.tobytes() == want.tobytes()
    assert got_rng.random() == want_rng.random()   # the Python Generator moved on with numba's draws


@pytest.mark.parametrize("B, dim, leaves, chunk", [(1, 6, 40, 8), (3, 5, 70, 3), (2, 4, 33, 64)])
def test_honaker_ahead_equals_factorized_counter(B, dim, leaves, chunk):
    from privacct.algorithms.tabular.ahead import HonakerAhead
    from privacct.algorithms.tabular.episode_jit import draw_exponentials, release, step_draws

    rng = np.random.default_rng(B * leaves)
    xs = rng.random((leaves, B, dim)) * (rng.random((leaves, B, dim)) < 0.4)
    ref_ledger, new_ledger = Ledger(), Ledger()
    ref = FactorizedCounter((dim,), strategy="tree-honaker", leaves=leaves, mechanism="laplace", scale=2.5,
                            rngs=[np.random.default_rng(s) for s in range(B)], ledger=ref_ledger, group="g")
    new = HonakerAhead((dim,), leaves=leaves, scale=2.5, rngs=[np.random.default_rng(s) for s in range(B)],
                       ledger=new_ledger, group="g")
    ex = np.empty((new._est.shape[0], 2, dim))
    work, none = np.empty(dim), np.empty((0, dim))
    t = 0
    while t < leaves:
        n = min(chunk, leaves - t)
        new.reserve(n)
        for _ in range(n):
            t += 1
            want = ref.add(xs[t - 1])
            for b in range(B):
                d = step_draws(4, t, leaves + 1)
                draw_exponentials(new.rngs[b], ex[:d])
                release(4, t, leaves + 1, b, xs[t - 1, b], new._release, none, ex, 0, new.scale, new._est,
                        new._noise[None], new._exact, new.weights, none, work, work)
            new.advance(1)
            assert new._release.tobytes() == want.tobytes()
            assert new.exact_sum().tobytes() == ref.exact_sum().tobytes()
    assert [tuple(d.__dict__.values()) for d in new_ledger.draws()] == \
        [tuple(d.__dict__.values()) for d in ref_ledger.draws()]
    with pytest.raises(PrivacctError):
        new.reserve(1)   # full
    with pytest.raises(PrivacctError):
        new.add(xs[0])


@pytest.mark.parametrize("n", [1, 2, 5, 12, 35])
@pytest.mark.parametrize("m", range(1, 8))
def test_gemv_small_is_the_blas_call(n, m):
    from privacct.algorithms.small_gemv import _both

    rng = np.random.default_rng(n * 10 + m)
    for _ in range(300):
        A = rng.random((n, m)) * 10.0 ** rng.integers(-3, 4)
        x = (rng.random(m) - 0.4) * 10.0 ** rng.integers(-3, 4)
        want, got = np.empty(n), np.empty(n)
        _both(A, x, want, got)
        assert got.tobytes() == want.tobytes()


def test_gemv_small_exact_only_for_short_dots():
    from privacct.algorithms.small_gemv import gemv_small_exact

    assert gemv_small_exact(12, 6) and gemv_small_exact(6, 6)
    assert not gemv_small_exact(12, 8)   # two 4-term blocks: OpenBLAS chains them, not this formula


def _figures(res):
    return res.regret, res.info["final_release"], [tuple(d.__dict__.values()) for d in res.ledger.draws()]


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
@pytest.mark.parametrize("counter", ["tree-honaker", "sqrt-toeplitz"])
def test_compiled_counter_equals_numpy_loop_across_chunks(alg, counter, monkeypatch):
    import privacct.algorithms.tabular.learner as L

    cfg = RunConfig(alg, "jdp", epsilon=1.0, delta=0.0, calibration="tight", episodes=300, horizon=3,
                    bonus_scale=0.01, options=(("counter", counter), ("e_scale", 0.05)))
    seeds = spawn_sequences(21, 2)
    out = {}
    for compiled in (False, True):
        monkeypatch.setattr(tabular_learner, "COMPILED", compiled)
        monkeypatch.setattr(L, "_po_compiles", lambda *a, c=compiled: c)
        out[compiled] = _figures(LEARNERS[alg].run(cfg, seeds))
    got, want = out[True], out[False]
    assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes() and got[2] == want[2]
