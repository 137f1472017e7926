"""The compiled loop of :func:`privacct.algorithms.linear_mixture.noise_ahead.local_update` (kept apart so
that importing the learners, e.g. for ``privacct --help``, does not load numba)."""

from __future__ import annotations

import numba


@numba.njit(cache=True)
def messages(G, u, X, Y, kinds, hs, sc, buf, pos, rows, cols):
    """G[:, h] += x x^T + scale * sym(z) (Gram groups), u[:, h] += x y + scale * z (target groups), z the next
    normals of ``buf`` from ``pos``: elementwise, so each entry is rounded exactly as numpy rounds it."""
    B = X.shape[0]
    d = X.shape[2]
    m = rows.size
    for gi in range(kinds.size):
        h = hs[gi]
        s = sc[gi]
        if kinds[gi] == 0:
            for b in range(B):
                for t in range(m):
                    i = rows[t]
                    j = cols[t]
                    nz = buf[b, pos + t] * s
                    G[b, h, i, j] += X[b, h, i] * X[b, h, j] + nz
                    if i != j:
                        G[b, h, j, i] += X[b, h, j] * X[b, h, i] + nz
            pos += m
        else:
            for b in range(B):
                y = Y[b, h]
                for i in range(d):
                    u[b, h, i] += X[b, h, i] * y + buf[b, pos + i] * s
            pos += d
    return pos
