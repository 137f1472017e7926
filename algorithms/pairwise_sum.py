"""numpy's pairwise summation of a short contiguous row, compiled: the same bytes as ``a[:n].sum()``.

numpy sums a contiguous float64 row of n terms sequentially from 0 below 8 terms, and with eight interleaved partial
sums, combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the remainder added in order, up to its
block of 128 (beyond it the order is recursive: callers keep n <= 128). The compiled loops that must reproduce numpy's
row sums bit for bit (the linear-mixture planning and episode loops, UCB-PO's policy values) share this one copy.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True, inline="always")
def pairwise_sum(a, n):
    """``a[:n].sum()`` of a contiguous row ``a`` (float64), n <= 128, as numpy computes it (module docstring)."""
    if n < 8:
        r = 0.0
        for i in range(n):
            r += a[i]
        return r
    r0, r1, r2, r3 = a[0], a[1], a[2], a[3]
    r4, r5, r6, r7 = a[4], a[5], a[6], a[7]
    i = 8
    while i < n - (n % 8):
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[i]
        i += 1
    return res


__all__ = ["pairwise_sum"]
