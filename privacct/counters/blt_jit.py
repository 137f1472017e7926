"""One step of H stacked BLT counters of symmetric Gaussian matrices, compiled with numba (issue 23; the same bytes as
:meth:`privacct.counters.blt.Blt.mix_noise` on the stacked (H, B, d, d) arrays, privacct/counters/stacked.py).

Per element, operation for operation as the numpy step does it (docs/performance.md#same-bytes-the-rule-every-speed-up-follows):

1. the draw: ``z = n * scale`` for the standard normal ``n`` of the upper-triangle entry (row-major, diagonal included:
   :func:`privacct.mechanisms._triangle`), as :func:`privacct.counters.stacked.stacked_noise`'s ``upper *= scale``;
   the lower entry is the same value (the mirror);
2. the recursion Q(B) u = P(B) z: ``u = z``, then for k = 1..nb in order ``u = u + P_k zh[(t - k) % nb]`` and
   ``u = u - Q_k uh[(t - k) % nb]``, each product rounded before the sum (numpy's ``np.multiply(..., out=tmp)`` then
   ``+=`` / ``-=``); ``zh[t % nb] = z``, ``uh[t % nb] = u``; ``noise = noise + u``;
3. the exact sum ``exact = exact + x`` and the release ``(exact + noise)``, plus ``shift`` when given (the caller's
   ``release + shift``).

The recursion's state is kept for the upper triangle only (d(d+1)/2 entries of d^2): a symmetric draw makes a
symmetric state (entries (i, j) and (j, i) see the same operations on the same values), so the lower entries are
copies; the release noise is kept whole (the counters' ``noisy_sum`` reads it). No fused multiply-add: numba compiles
without ``fastmath`` (LLVM's default contracts nothing). ``cache=True`` keeps the compilation out of later processes;
this module is imported only when a stack of BLT Gram counters first steps (numba stays out of ``import privacct``).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def blt_symmetric_step(t, P, Q, raw, scale, rows, cols, zh, uh, noise, exact, x, out, shift, use_shift):
    """Step ``t`` (1-based) of H stacked BLT counters (module docstring). ``P``, ``Q`` (nb,) the recursion's
    coefficients P_1..P_nb, Q_1..Q_nb; ``raw`` (B, H * m) the standard normals as drawn (seed b's one call, laid out
    (counter, entry)); ``rows``, ``cols`` (m,) the upper triangle's indices; ``zh``, ``uh`` (nb, H, B, m) the ring
    buffers of z and u (upper entries); ``noise``, ``exact`` (H, B, d, d) the release noise and the exact sums;
    ``x`` (B, H, d, d) the additions; ``out`` (B, H, d, d) receives the releases (+ ``shift`` (d, d) when
    ``use_shift``)."""
    nb = P.shape[0]
    H, B, m = zh.shape[1], zh.shape[2], zh.shape[3]
    d = noise.shape[2]
    cur = t % nb
    slots = np.empty(nb, dtype=np.int64)        # slot of z_(t-k), u_(t-k): (t - k) % nb, k = 1..nb
    for k in range(1, nb + 1):
        slots[k - 1] = (t - k) % nb
    u = np.empty(m)
    z = np.empty(m)
    for h in range(H):
        for b in range(B):
            r = raw[b, h * m:(h + 1) * m]
            for e in range(m):
                z[e] = r[e] * scale
                u[e] = z[e]
            for k in range(nb):                     # slot cur holds z_(t-nb), u_(t-nb): read before it is written
                zk = zh[slots[k], h, b]
                uk = uh[slots[k], h, b]
                pk, qk = P[k], Q[k]
                for e in range(m):
                    u[e] = u[e] + pk * zk[e]
                for e in range(m):
                    u[e] = u[e] - qk * uk[e]
            zh[cur, h, b, :] = z
            uh[cur, h, b, :] = u
            nhb = noise[h, b]
            for e in range(m):
                i, j = rows[e], cols[e]
                v = nhb[i, j] + u[e]
                nhb[i, j] = v
                nhb[j, i] = v
            ehb = exact[h, b]
            xhb = x[b, h]
            ohb = out[b, h]
            for i in range(d):
                for j in range(d):
                    sv = ehb[i, j] + xhb[i, j]
                    ehb[i, j] = sv
                    rv = sv + nhb[i, j]
                    if use_shift:
                        rv = rv + shift[i, j]
                    ohb[i, j] = rv


@numba.njit(cache=True)
def blt_recursion(t, P, Q, zh, zoff, uh, uoff, b, u):
    """BLT's recursion at step ``t`` (1-based) on ``u`` (n,), which holds z_t on entry: for k = 1..nb in order
    ``u = u + P_k zh[zoff + (t - k) % nb, b]`` and ``u = u - Q_k uh[uoff + (t - k) % nb, b]``, each product rounded
    before the sum, element by element (no fused operation). ``P``, ``Q`` (nb,); ``zh``, ``uh`` (rows, B, n) C arrays
    holding seed ``b``'s ring buffers from rows ``zoff`` and ``uoff`` (the tabular loop keeps both in one array). The
    one copy of the arithmetic that :func:`blt_mix` and the tabular and linear-mixture compiled loops run."""
    nb = P.shape[0]
    n = u.shape[0]
    for k in range(1, nb + 1):
        slot = (t - k) % nb
        zk = zh[zoff + slot, b]
        uk = uh[uoff + slot, b]
        pk, qk = P[k - 1], Q[k - 1]
        for e in range(n):
            u[e] = u[e] + pk * zk[e]
        for e in range(n):
            u[e] = u[e] - qk * uk[e]


@numba.njit(cache=True)
def blt_mix(t, P, Q, z, zh, uh, noise):
    """:meth:`privacct.counters.blt.Blt.mix_noise` of one counter's step ``t`` (1-based) on flat C-contiguous arrays,
    element by element as the numpy step does it (module docstring, step 2): ``u = z``, then :func:`blt_recursion`;
    ``zh[t % nb] = z``, ``uh[t % nb] = u``, ``noise = noise + u``. ``P``, ``Q`` (nb,); ``z``, ``noise`` (n,); ``zh``,
    ``uh`` (nb, n) the ring buffers."""
    nb = P.shape[0]
    n = z.shape[0]
    u = z.copy()
    blt_recursion(t, P, Q, zh.reshape(nb, 1, n), 0, uh.reshape(nb, 1, n), 0, 0, u)
    cur = t % nb
    for e in range(n):
        zh[cur, e] = z[e]
        uh[cur, e] = u[e]
        noise[e] = noise[e] + u[e]
