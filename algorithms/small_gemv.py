"""A matrix-vector product with a short dot length (at most 7), compiled: the same bytes as the BLAS call it replaces.

The compiled episode loops multiply small C-ordered matrices by a vector, ``np.dot(A, x, out)`` with A (n, m) -- the
tabular P~_h V (n = S A, m = S) and P_pi V (n = m = S). numba makes that one ``dgemv`` call of the BLAS numpy and scipy
ship (OpenBLAS), A seen as its column-major transpose (``dgemv_t``); at these sizes the call's fixed cost (about
0.24 us) is most of an episode's arithmetic. OpenBLAS's x86-64 ``dgemv_t`` (kernel/x86_64/dgemv_t_4.c) computes each
output, for m < 2048, as: over the first m4 = m - m mod 4 terms (m4 is 0 or 4 here) the sum ((a0 x0 + a2 x2) + (a1 x1 +
a3 x3)) of the exact products (its 4x4, 4x2 and 4x1 kernels: one multiply per lane, lanes 0 + 2 and 1 + 3, then the
horizontal add), then the m mod 4 remaining terms as its C tail compiled with contraction: one term ``fma(a, x, y)``,
two ``y + fma(a0, x0, a1 x1)``, three ``y + fma(a2, x2, fma(a0, x0, a1 x1))``. :func:`gemv_small` is that arithmetic.
It holds for the kernel this build picks on this CPU; :func:`gemv_small_exact` checks it against the BLAS call at
the sizes a run uses (random inputs, every output row) and the loops call BLAS (``np.dot``) when it fails or m > 7.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

MAX_DOT = 7   # dot lengths up to this one have one 4-term block at most (beyond, OpenBLAS chains blocks with FMA)


@intrinsic
def fma(typingctx, a, b, c):
    """``a b + c`` rounded once (LLVM's ``llvm.fma.f64``: the hardware FMA the BLAS tail compiles to)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        d = ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.fma", [d], ir.FunctionType(d, [d, d, d]))
        return builder.call(fn, args)

    return sig, codegen


@numba.njit(cache=True)
def gemv_small(A, x, out):
    """``out = A x`` for A (n, m) C-contiguous, m <= :data:`MAX_DOT`, as OpenBLAS's ``dgemv_t`` rounds it (module
    docstring)."""
    n, m = A.shape
    m3 = m & 3
    o = m - m3
    for r in range(n):   # elements indexed directly: a row view would cost its reference counting
        t = 0.0
        if o == 4:
            t = (A[r, 0] * x[0] + A[r, 2] * x[2]) + (A[r, 1] * x[1] + A[r, 3] * x[3])
        if m3 == 1:
            t = fma(A[r, o], x[o], t)
        elif m3 == 2:
            t = t + fma(A[r, o], x[o], A[r, o + 1] * x[o + 1])
        elif m3 == 3:
            t = t + fma(A[r, o + 2], x[o + 2], fma(A[r, o], x[o], A[r, o + 1] * x[o + 1]))
        out[r] = t


@numba.njit(cache=True, inline="always")
def gemv(A, x, out, fast):
    """``out = A x`` for a compiled loop's small products (the tabular backward passes' P~_h V, a greedy policy's value):
    ``fast``, by :func:`gemv_small` (the BLAS call's bytes without the call, where :func:`gemv_small_exact` holds);
    else numba's ``np.dot(A, x, out)``, the BLAS call (dgemv). The one place the two branches meet."""
    if fast:
        gemv_small(A, x, out)
    else:
        np.dot(A, x, out)   # numba's np.dot(a, b) is this BLAS call with a fresh ``out``


@numba.njit(cache=True)
def _both(A, x, want, got):
    np.dot(A, x, want)
    gemv_small(A, x, got)


_CHECKED: dict = {}


def gemv_small_exact(n: int, m: int) -> bool:
    """Whether :func:`gemv_small` gives the BLAS call's bytes for (n, m) matrices on this build (m <= MAX_DOT; random
    matrices and vectors over several magnitudes, signs and exact zeros; cached per process)."""
    key = (int(n), int(m))
    if key not in _CHECKED:
        ok = 1 <= m <= MAX_DOT and n >= 1
        rng = np.random.default_rng(n * 131 + m)
        for _ in range(200 if ok else 0):
            A = rng.random((n, m)) * 10.0 ** rng.integers(-3, 4)
            A[rng.random((n, m)) < 0.2] = 0.0
            x = (rng.random(m) - 0.3) * 10.0 ** rng.integers(-3, 4)
            want, got = np.empty(n), np.empty(n)
            _both(A, x, want, got)
            if want.tobytes() != got.tobytes():
                ok = False
                break
        _CHECKED[key] = ok
    return _CHECKED[key]


__all__ = ["MAX_DOT", "fma", "gemv_small", "gemv_small_exact"]
