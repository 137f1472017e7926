"""The sqrt-toeplitz mixing step (C z)_t = sum_j c_j z_(t-j), compiled with numba (issue 21: the one-run action audits
of sqrt-toeplitz at the papers' K; the same bytes as :func:`privacct.counters.sqrt_toeplitz._combine`'s cumsum,
docs/performance.md#same-bytes-the-rule-every-speed-up-follows).

Per element e of the release noise, operation for operation as the cumsum does it: ``acc = coef[0] * rows[0, e]``,
then for j = 1, 2, ... in order ``acc = acc + coef[j] * rows[j, e]``, each product rounded before the sum (numpy's
``np.multiply`` then ``cumsum``). The first term is the product itself, never ``0.0 + product`` (which would turn a
-0.0 into +0.0). No fused multiply-add: numba compiles without ``fastmath`` (LLVM's default contracts nothing). What it
saves: the cumsum's two temporaries of t x B x size floats at step t (O(K^2) bytes allocated and written a run);
the reads stay O(t) a step. ``cache=True`` keeps the compilation out of later processes; this module is imported
only when a sqrt-toeplitz counter first mixes (numba stays out of ``import privacct``)."""

from __future__ import annotations

import numba


@numba.njit(cache=True)
def combine_reversed(coef, t, rows, out):
    """out[e] = sum_(i<t) coef[t - 1 - i] rows[i, e] (= ``_combine(coef[:t][::-1], rows[:t])``, without the reversed
    copy), accumulated in order i = 0, 1, ... (module docstring). ``coef`` (>= t,) float64, ``rows`` (>= t, n) float64,
    t >= 1, ``out`` (n,) float64, written."""
    n = rows.shape[1]
    c0 = coef[t - 1]
    for e in range(n):
        out[e] = c0 * rows[0, e]
    for i in range(1, t):
        c = coef[t - 1 - i]
        for e in range(n):
            out[e] = out[e] + c * rows[i, e]


__all__ = ["combine_reversed"]
