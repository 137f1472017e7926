"""The end of one tree-honaker addition, compiled with numba: the part the compiled episode loops share
(algorithms/tabular/episode_jit.py and algorithms/linear_mixture/episode_jit.py ``_honaker_add``; each draws its nodes
its own way, Laplace as two exponentials or a node draw, and builds the new top estimate ``cur``).

Operation for operation as :meth:`privacct.counters.tree_honaker.TreeHonaker.step` does it in numpy
(docs/performance.md#same-bytes-the-rule-every-speed-up-follows): ``_exact += x``; ``_noise -= _est[i]`` for
i = 0..nu - 1 in order; ``_est[nu] = cur``; ``_noise += cur``. No fused multiply-add (no ``fastmath``). Imported only by
the compiled loops (numba stays out of ``import privacct``)."""

from __future__ import annotations

import numba


@numba.njit(cache=True)
def honaker_finish(nu, cur, est, b, noise, exact, x):
    """Seed ``b``'s counter state after the step whose top estimate (level ``nu``) is ``cur`` (m,): ``est`` (levels, B,
    m) the levels' estimates ``_est``, ``noise`` (m,) and ``exact`` (m,) seed b's release noise and exact sum, ``x``
    (m,) the addition; all written in place."""
    m = x.size
    for e in range(m):
        exact[e] += x[e]
    for i in range(nu):
        li = est[i, b]
        for e in range(m):
            noise[e] -= li[e]
    ln = est[nu, b]
    for e in range(m):
        ln[e] = cur[e]
        noise[e] += cur[e]


__all__ = ["honaker_finish"]
