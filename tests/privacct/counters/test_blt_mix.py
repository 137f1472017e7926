"""Blt.mix_noise's compiled step (privacct/counters/blt_jit.py ``blt_mix``) gives the numpy step's bytes.

The reference below is the numpy recursion Blt.mix_noise ran before it was compiled (and still runs on arrays that are
not C-contiguous float64): u = z, then for k = 1..nb ``u += P_k zh[(t-k) % nb]`` and ``u -= Q_k uh[(t-k) % nb]``, each
product rounded, ``zh[t % nb] = z``, ``uh[t % nb] = u``, ``noise += u``. Both run side by side for 300 steps on random
draws and coefficients (1..8 buffers, scalar, vector and matrix values, batches of 1 and 3); every state array must be
the same bytes after every step. Then the path a non-contiguous state takes (the numpy step itself), and the counters'
releases end to end.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from privacct.counters.blt import BLT
from privacct.counters.counter import FactorizedCounter
from privacct.rng import spawn_generators


def reference_step(P, Q, st, t, z):
    u = z.copy()
    tmp = np.empty_like(u)
    d = len(P)
    for k in range(1, d + 1):
        slot = (t - k) % d
        u += np.multiply(P[k - 1], st._zhist[slot], out=tmp)
        u -= np.multiply(Q[k - 1], st._uhist[slot], out=tmp)
    slot = t % d
    st._zhist[slot], st._uhist[slot] = z, u
    st._noise += u


def _state(nb, shape):
    return SimpleNamespace(_zhist=np.zeros((nb,) + shape), _uhist=np.zeros((nb,) + shape), _noise=np.zeros(shape))


@pytest.mark.parametrize("nb", [1, 2, 4, 8])
@pytest.mark.parametrize("shape", [(1,), (3, 5), (3, 4, 4)])
def test_compiled_step_is_the_numpy_step(nb, shape):
    rng = np.random.default_rng(20261128 + nb + 10 * len(shape))
    P = tuple(float(v) for v in rng.standard_normal(nb) * 0.7)
    Q = tuple(float(v) for v in -rng.random(nb) * 0.9)
    owner = SimpleNamespace(_P=P, _Q=Q)
    got, want = _state(nb, shape), _state(nb, shape)
    for t in range(1, 301):
        z = rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3)
        BLT.mix_noise(owner, got, t, z)
        reference_step(P, Q, want, t, z.copy())
        for a in ("_zhist", "_uhist", "_noise"):
            assert getattr(got, a).tobytes() == getattr(want, a).tobytes(), (t, a)


def test_non_contiguous_state_takes_the_numpy_step():
    """A state whose arrays are strided views (a stacked counter's) is updated in place by the numpy step."""
    rng = np.random.default_rng(3)
    P, Q = (0.5, -0.25), (-0.9, 0.1)
    owner = SimpleNamespace(_P=P, _Q=Q)
    big = np.zeros((2, 4, 6))
    st = SimpleNamespace(_zhist=np.zeros((2, 4, 3)), _uhist=np.zeros((2, 4, 3)), _noise=big[0, :, ::2])
    want = _state(2, (4, 3))
    for t in range(1, 30):
        z = rng.standard_normal((4, 3))
        BLT.mix_noise(owner, st, t, z)
        reference_step(P, Q, want, t, z.copy())
    assert np.ascontiguousarray(st._noise).tobytes() == want._noise.tobytes()
    assert big[0, :, ::2].tobytes() == want._noise.tobytes() and not big[0, :, 1::2].any()


def test_counter_releases_equal_the_reference():
    """A blt FactorizedCounter's releases, step by step, equal exact sums plus the reference recursion on its draws."""
    shape, K = (2, 3), 40
    c = FactorizedCounter(shape, strategy="blt", leaves=K, mechanism="gaussian", scale=2.5, rngs=spawn_generators(1, 3))
    twin = spawn_generators(1, 3)
    st = _state(len(c._P), (3,) + shape)
    exact = np.zeros((3,) + shape)
    rng = np.random.default_rng(0)
    for t in range(1, K + 1):
        x = rng.standard_normal((3,) + shape)
        got = c.add(x)
        z = np.empty((3,) + shape)
        for b, r in enumerate(twin):
            r.standard_normal(out=z[b])
        z *= 2.5
        exact += x
        reference_step(c._P, c._Q, st, t, z)
        assert got.tobytes() == (exact + st._noise).tobytes()


def test_share_probe_takes_the_same_recursions_probe_only():
    """FactorizedCounter.share_probe: a counter of the same recursion takes the probed executed encoder (its ledger
    weights are then the other's rows); another recursion (other K), an unprobed source or a probed target is refused."""
    from privacct.errors import PrivacctError
    from privacct.ledger import Ledger

    def make(leaves=30, group="a"):
        return FactorizedCounter((2,), strategy="blt", leaves=leaves, mechanism="gaussian", scale=1.0,
                                 rngs=spawn_generators(0, 1), ledger=Ledger(), group=group)

    a, b, other = make(), make(group="b"), make(leaves=31)
    with pytest.raises(PrivacctError):
        b.share_probe(a)                      # a has not probed
    a.implementation.ledger_weights(a, 1)
    with pytest.raises(PrivacctError):
        other.share_probe(a)                  # another recursion (K)
    b.share_probe(a)
    assert b._executed is a._executed
    assert b.implementation.ledger_weights(b, 5).tobytes() == a._executed[:5][::-1].tobytes()
    with pytest.raises(PrivacctError):
        b.share_probe(a)                      # probed already


def test_the_numpy_step_switch_gives_the_same_releases_without_the_compiled_step(monkeypatch):
    """blt.COMPILED_STEP False (a process without numba, bench_lsvi_floor.py --numpy): the numpy step, never blt_mix,
    and the same releases, bit for bit."""
    import privacct.counters.blt as blt_module
    import privacct.counters.blt_jit as blt_jit

    def run():
        c = FactorizedCounter((2, 3), strategy="blt", leaves=25, mechanism="gaussian", scale=1.5,
                              rngs=spawn_generators(4, 2))
        rng = np.random.default_rng(9)
        return [c.add(rng.standard_normal((2, 2, 3))).tobytes() for _ in range(25)]

    want = run()
    calls = []
    real = blt_jit.blt_mix
    monkeypatch.setattr(blt_jit, "blt_mix", lambda *a: calls.append(1) or real(*a))
    assert run() == want and calls      # the compiled step ran
    calls.clear()
    monkeypatch.setattr(blt_module, "COMPILED_STEP", False)
    assert run() == want and not calls
