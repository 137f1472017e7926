"""numpy's own inner loops of float64 unary ufuncs (``np.log1p``, ``np.exp``), callable from compiled code.

numpy computes ``log1p`` and ``exp`` of float64 arrays with its own SIMD routines (on an AVX-512 machine, SVML
kernels selected at import), not with the C library: libm's ``log1p`` -- what numba's ``math.log1p`` and a ctypes
call of ``libm.log1p`` both compute -- differs from ``np.log1p`` in the last bit for 1.4-5% of arguments spread over
[1e-3, 1e3] (up to 9% in [0.1, 1]; measured here, 2026-11-27, numpy 2.4.6 on AVX-512: libm and ``math.log1p`` agree
with each other everywhere). A compiled loop that
must give numpy's bytes (docs/performance.md#same-bytes-the-rule-every-speed-up-follows) therefore calls numpy's
loop itself: the function pointer that numpy's ufunc object holds for the ``d->d`` signature (the legacy
``PyUFuncObject.functions`` table of numpy's public ``ufuncobject.h``, read with ctypes), called as numpy calls it,
``loop(char **args, npy_intp *dimensions, npy_intp *steps, void *data)`` on contiguous float64 buffers
(:func:`unary_into`).

Nothing here is trusted blindly: :func:`loop_address` checks the struct's layout against what Python sees (the
ufunc's name, ``ntypes`` = ``len(ufunc.types)``, the type string) and :func:`self_check` compares the compiled call
with the ufunc on a fixed sample of arguments (the learner's own kind among them: quadratic forms x^T M x >= 0 from
1e-17 to 1e4 for ``log1p``, softmax exponents z <= 0 for ``exp``), at every length 1..40 and at offsets that break
the 64-byte alignment; one differing bit, a layout that does not match, or a platform without the table, and the
caller keeps its numpy path (:func:`address` returns None). Addresses are arguments of the compiled code, never
compiled-in constants (``cache=True`` stays valid, as for :mod:`.lapack`).
"""

from __future__ import annotations

import ctypes
import functools

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: byte offsets in numpy's PyUFuncObject (numpy/_core/include/numpy/ufuncobject.h, 64-bit): PyObject_HEAD (16),
#: int nin, nout, nargs, identity (16), then PyUFuncGenericFunction *functions, void **data, int ntypes,
#: int reserved1, const char *name, const char *types
_FUNCTIONS, _DATA, _NTYPES, _NAME, _TYPES = 32, 40, 48, 56, 64


@intrinsic
def ccall(typingctx, fn, args):
    """``fn(*args)`` for a C function at address ``fn`` (int) taking pointers (ints: ``arr.ctypes.data``) and
    returning nothing. The address is an argument, not a compiled-in constant, so ``cache=True`` stays valid."""
    if not isinstance(fn, types.Integer) or not isinstance(args, types.UniTuple) \
            or not isinstance(args.dtype, types.Integer):
        return None
    n = len(args)

    def codegen(context, builder, signature, llargs):
        i8p = ir.IntType(8).as_pointer()
        f = builder.inttoptr(llargs[0], ir.FunctionType(ir.VoidType(), [i8p] * n).as_pointer())
        builder.call(f, [builder.inttoptr(v, i8p) for v in cgutils.unpack_tuple(builder, llargs[1], n)])
        return context.get_dummy_value()

    return types.void(fn, args), codegen


@numba.njit(cache=True)
def unary_into(fn, x, out, n, iv):
    """``out.flat[:n] = ufunc(x.flat[:n])`` by numpy's inner loop at address ``fn`` (:func:`address`): ``x``, ``out``
    C-contiguous float64 (any shape), ``iv`` (5,) int64 scratch (the loop's args, dimensions, steps; data NULL)."""
    iv[0] = x.ctypes.data
    iv[1] = out.ctypes.data
    iv[2] = n
    iv[3] = 8
    iv[4] = 8
    ccall(fn, (iv[0:].ctypes.data, iv[2:].ctypes.data, iv[3:].ctypes.data, np.uint64(0)))


def loop_address(ufunc: np.ufunc) -> int | None:
    """The address of ``ufunc``'s inner loop for float64 -> float64 (the first ``d->d`` entry of its loop table, the
    one numpy's type resolution takes), or None when the object's layout is not the one this module reads or the loop
    needs its ``data`` pointer."""
    try:
        if not isinstance(ufunc, np.ufunc) or ufunc.nin != 1 or ufunc.nout != 1:
            return None
        base = id(ufunc)
        ntypes = ctypes.c_int.from_address(base + _NTYPES).value
        if ntypes != len(ufunc.types):
            return None
        name = ctypes.c_char_p(ctypes.c_void_p.from_address(base + _NAME).value).value
        if name != ufunc.__name__.encode():
            return None
        sig = ctypes.string_at(ctypes.c_void_p.from_address(base + _TYPES).value, 2 * ntypes)
        dnum = np.dtype(np.float64).num
        pairs = [(sig[2 * i], sig[2 * i + 1]) for i in range(ntypes)]
        char = {np.dtype(c).num: np.dtype(c).char for c in np.typecodes["All"]}
        if [f"{char.get(a)}->{char.get(b)}" for a, b in pairs] != list(ufunc.types):
            return None
        i = pairs.index((dnum, dnum))
        fns = ctypes.c_void_p.from_address(base + _FUNCTIONS).value
        data = ctypes.c_void_p.from_address(base + _DATA).value
        if not fns:
            return None
        if data and ctypes.c_void_p.from_address(data + 8 * i).value:
            return None   # a generic loop that needs its data pointer (not numpy's own SIMD loop)
        return ctypes.c_void_p.from_address(fns + 8 * i).value
    except (ValueError, TypeError, OSError):
        return None


def _sample(kind: str) -> np.ndarray:
    """The fixed arguments of :func:`self_check`: ``log1p``, quadratic forms x^T M x (>= 0, 1e-17 .. 1e4, the
    learner's q of a Sherman-Morrison update) and [0, 1); ``exp``, softmax exponents (<= 0, down to -800, and -0.0)."""
    rng = np.random.default_rng(20261127)
    if kind == "log1p":
        x = np.concatenate([rng.random(4000) * 10.0 ** rng.uniform(-17, 4, 4000), rng.random(2000),
                            [0.0, -0.0, 1e-300, 5e-324, np.inf]])
    else:
        x = np.concatenate([-rng.random(4000) * 10.0 ** rng.uniform(-17, 3, 4000), -rng.random(2000) * 40.0,
                            [0.0, -0.0, -745.2, -800.0, -np.inf]])
    return x


@functools.lru_cache(maxsize=None)
def address(kind: str) -> int | None:
    """The checked address of numpy's float64 loop of ``kind`` (``"log1p"`` or ``"exp"``), or None when it is not
    found or :func:`self_check` finds one bit that differs from the ufunc here (the caller keeps its numpy path)."""
    fn = loop_address(getattr(np, kind))
    if fn is None or not self_check(kind, fn):
        return None
    return fn


def self_check(kind: str, fn: int) -> bool:
    """Whether the compiled call of the loop at ``fn`` gives ``np.<kind>``'s bits on :func:`_sample`, as one buffer,
    at every length 1..40 and at unaligned offsets (module docstring)."""
    ufunc = getattr(np, kind)
    x = _sample(kind)
    with np.errstate(all="ignore"):
        want = ufunc(x)
    iv = np.empty(5, dtype=np.int64)
    out = np.empty_like(x)
    unary_into(fn, x, out, x.size, iv)
    if out.tobytes() != want.tobytes():
        return False
    for n in range(1, 41):
        for off in (0, 1, 3):
            xs = np.ascontiguousarray(x[off * 97: off * 97 + n + off])[off:]
            got = np.full(n + off, np.nan)[off:]
            unary_into(fn, xs, got, n, iv)
            with np.errstate(all="ignore"):
                if got.tobytes() != ufunc(xs).tobytes():
                    return False
    return True
