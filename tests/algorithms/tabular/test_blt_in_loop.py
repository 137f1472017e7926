"""The tabular learners' compiled loops run the BLT counter with its draws (issue 21: counter throughput), as they run
tree-honaker (tests/algorithms/tabular/test_noise_in_loop.py): BltAhead + episode_jit's release mode 5 give the numpy
loop's bytes.

BltAhead is checked addition by addition against privacct's FactorizedCounter (releases, exact sums, release noise,
ring buffers, ledger draws and the per-user weighted sums of its executed-encoder rows, bit for bit), then UCB-VI and
UCB-PO with ``counter=blt`` compiled against their numpy loop across the 256-episode chunk (regret, final release, the
ledger), the compiled path taken (mode 5); a BLT noise path that is not the compiled recursion keeps mode 3.
"""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.tabular import LEARNERS
from privacct.algorithms.tabular import learner as tabular_learner
from privacct.counters.counter import FactorizedCounter
from privacct.errors import PrivacctError
from privacct.ledger import Ledger, check_ledger
from privacct.rng import spawn_sequences


def _draws(ledger):
    return [tuple(d.__dict__.values()) for d in ledger.draws()]


def _sums(ledger):
    return {k: (v[0].tobytes(), v[1].tobytes()) for k, v in ledger._weighted.items()}


@pytest.mark.parametrize("B, dim, leaves, chunk", [(1, 6, 40, 8), (3, 5, 70, 3), (2, 4, 33, 64)])
def test_blt_ahead_equals_factorized_counter(B, dim, leaves, chunk):
    from privacct.algorithms.tabular.ahead import BltAhead
    from privacct.algorithms.tabular.episode_jit import draw_exponentials, release, step_draws

    rng = np.random.default_rng(B * leaves)
    xs = rng.random((leaves, B, dim)) * (rng.random((leaves, B, dim)) < 0.4)
    ref_ledger, new_ledger = Ledger(), Ledger()
    ref = FactorizedCounter((dim,), strategy="blt", leaves=leaves, mechanism="laplace", scale=2.5,
                            rngs=[np.random.default_rng(s) for s in range(B)], ledger=ref_ledger, group="g")
    fresh = FactorizedCounter((dim,), strategy="blt", leaves=leaves, mechanism="laplace", scale=2.5,
                              rngs=[np.random.default_rng(s) for s in range(B)], ledger=new_ledger, group="g")
    assert BltAhead.runs(fresh)
    new = BltAhead.like(fresh)
    ex = np.empty((1, 2, dim))
    work, none = np.empty(dim), np.empty((0, dim))
    t = 0
    while t < leaves:
        n = min(chunk, leaves - t)
        new.reserve(n)
        for _ in range(n):
            t += 1
            want = ref.add(xs[t - 1])
            for b in range(B):
                assert step_draws(5, t, leaves + 1) == 1
                draw_exponentials(new.rngs[b], ex)
                release(5, t, leaves + 1, b, xs[t - 1, b], new._release, none, ex, 0, new.scale, new.hist,
                        np.empty((0, B, dim)), new._exact, new.coefs, none, work, work)
            new.advance(1)
            assert new._release.tobytes() == want.tobytes()
            assert new.noisy_sum().tobytes() == want.tobytes()
            for a in ("_exact", "_noise", "_zhist", "_uhist"):
                assert getattr(new, a).tobytes() == getattr(ref, a).tobytes(), a
    assert _draws(new_ledger) == _draws(ref_ledger)
    assert _sums(new_ledger) == _sums(ref_ledger) and _sums(new_ledger)
    with pytest.raises(PrivacctError):
        new.reserve(1)   # full
    with pytest.raises(PrivacctError):
        new.add(xs[0])


def test_blt_ahead_refuses_another_noise_path(monkeypatch):
    """A BLT noise path that is not the compiled recursion (P and Q swapped in the mixing step), a used counter or a
    Gaussian one: not run by the compiled loop."""
    from privacct.algorithms.tabular.ahead import BltAhead
    from privacct.counters.blt import Blt

    def make(mech="laplace"):
        return FactorizedCounter((3,), strategy="blt", leaves=20, mechanism=mech, scale=1.0,
                                 rngs=[np.random.default_rng(0)])

    assert BltAhead.runs(make()) and not BltAhead.runs(make("gaussian"))
    used = make()
    used.add(np.ones((1, 3)))
    assert not BltAhead.runs(used)
    original = Blt.mix_noise

    def swapped(self, counter, st, t, z):
        counter._P, counter._Q = counter._Q, counter._P
        try:
            original(self, counter, st, t, z)
        finally:
            counter._P, counter._Q = counter._Q, counter._P

    monkeypatch.setattr(Blt, "mix_noise", swapped)
    assert not BltAhead.runs(make())


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
@pytest.mark.parametrize("B", [1, 2])
def test_compiled_blt_equals_numpy_loop_across_chunks(alg, B, monkeypatch):
    import privacct.algorithms.tabular.learner as L
    from privacct.algorithms.tabular import ahead

    made = []
    real = ahead.BltAhead.like.__func__

    def spy(cls, counter):
        made.append(counter)
        return real(cls, counter)

    monkeypatch.setattr(ahead.BltAhead, "like", classmethod(spy))
    cfg = RunConfig(alg, "jdp", epsilon=1.0, delta=0.0, calibration="tight", episodes=300, horizon=3,
                    bonus_scale=0.01, options=(("counter", "blt"), ("e_scale", 0.05)))
    seeds = spawn_sequences(21, B)
    out = {}
    for compiled in (False, True):
        monkeypatch.setattr(tabular_learner, "COMPILED", compiled)
        monkeypatch.setattr(L, "_po_compiles", lambda *a, c=compiled: c)
        out[compiled] = LEARNERS[alg].run(cfg, seeds)
    got, want = out[True], out[False]
    assert len(made) == 1   # the compiled loop ran the BLT counter (mode 5)
    assert got.regret.tobytes() == want.regret.tobytes()
    assert got.info["final_release"].tobytes() == want.info["final_release"].tobytes()
    assert _draws(got.ledger) == _draws(want.ledger)
    assert _sums(got.ledger) == _sums(want.ledger) and _sums(got.ledger)
    assert check_ledger(got.log, got.ledger).ok
