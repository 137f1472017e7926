"""numpy's own float64 loops of log1p and exp called from compiled code (numpy_loops) give numpy's bytes, and
anything else is refused: another loop at the address, a layout that does not match, a binary ufunc."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privacct.algorithms.linear_mixture import numpy_loops as L


@pytest.mark.parametrize("kind", ["log1p", "exp"])
def test_loop_is_numpys(kind):
    fn = L.address(kind)
    assert fn is not None   # this platform (numpy's wheel, x86_64): the table is read and the check passes
    rng = np.random.default_rng(5)
    x = rng.random(50_000) * 10.0 ** rng.uniform(-6, 3, 50_000)
    x = x if kind == "log1p" else -x
    want = getattr(np, kind)(x)
    out = np.empty_like(x)
    L.unary_into(fn, x, out, x.size, np.empty(5, dtype=np.int64))
    assert out.tobytes() == want.tobytes()
    libm = np.array([getattr(math, kind)(v) for v in x[:5000]])
    if kind == "log1p":   # why the loop is needed: the C library's log1p is not numpy's here
        assert libm.tobytes() != want[:5000].tobytes()


def test_wrong_loop_fails_the_check():
    assert not L.self_check("log1p", L.loop_address(np.expm1))
    assert not L.self_check("exp", L.address("log1p"))


def test_layout_checks(monkeypatch):
    assert L.loop_address(np.add) is None          # binary
    assert L.loop_address(math.log1p) is None      # not a ufunc
    assert L.loop_address(np.log1p) == L.address("log1p")
    monkeypatch.setattr(L, "_NAME", L._TYPES)      # the name read from the wrong field: refused
    assert L.loop_address(np.log1p) is None
    monkeypatch.setattr(L, "_NAME", 56)
    monkeypatch.setattr(L, "_NTYPES", 52)          # ntypes read from the wrong field: refused
    assert L.loop_address(np.log1p) is None
