"""numpy's own LAPACK routines, for compiled loops that must round exactly as ``np.linalg`` does.

``np.linalg.cholesky`` and ``np.linalg.inv`` call ``dpotrf`` ('L') and ``dgesv`` (right-hand side the identity)
of the LAPACK numpy is linked against, on a column-major copy of each matrix. A compiled loop that calls the
*same* two functions of the *same* library, on the same column-major copies, gets the same bits, whatever the
platform (docs/performance.md#same-bytes-the-rule-every-speed-up-follows). numba's own ``np.linalg.inv`` would not:
it calls ``dgetrf`` + ``dgetri`` of scipy's LAPACK, another algorithm (|diff| about 1e-16) in another library.

:func:`routines` finds the library numpy loaded (threadpoolctl names its file) and its ILP64 symbols
(numpy's wheels bundle scipy-openblas64: ``scipy_dpotrf_64_``, ``scipy_dgesv_64_``, 64-bit integers), and the
compiled loop checks them once per process and matrix size against ``np.linalg``
(:func:`.episode_jit.self_check`). Anything else (another LAPACK, other symbol names, a single differing bit)
sends the caller back to its numpy path: a compiled loop is an optimisation, never a second arithmetic.
The routines are handed out as addresses (ints), which the compiled loop calls (:func:`.numpy_loops.ccall`): an
argument, not a compiled-in constant, so ``cache=True`` stays valid, and a cheap one to pass.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

#: (potrf, gesv) symbol names tried in numpy's BLAS/LAPACK library, all with 64-bit integers
_SYMBOLS = (("scipy_dpotrf_64_", "scipy_dgesv_64_"), ("dpotrf_64_", "dgesv_64_"))
_LOADED: list = []


@functools.lru_cache(maxsize=1)
def _library():
    """(potrf, gesv) addresses (ints) of the LAPACK numpy itself calls, or None."""
    try:
        from threadpoolctl import threadpool_info

        np.dot(np.ones(2), np.ones(2))   # numpy's BLAS is loaded
        paths = [i.get("filepath") for i in threadpool_info()
                 if i.get("user_api") == "blas" and "numpy" in str(i.get("filepath", ""))]
        if len(paths) != 1:
            return None
        lib = ctypes.CDLL(paths[0])
        for potrf_name, gesv_name in _SYMBOLS:
            try:
                potrf, gesv = getattr(lib, potrf_name), getattr(lib, gesv_name)
            except AttributeError:
                continue
            # potrf(uplo, n, a, lda, info), gesv(n, nrhs, a, lda, ipiv, b, ldb, info): every argument a pointer
            _LOADED.append(lib)   # kept referenced for the life of the process
            return ctypes.cast(potrf, ctypes.c_void_p).value, ctypes.cast(gesv, ctypes.c_void_p).value
    except Exception:   # noqa: BLE001 -- no usable library: the numpy path runs
        return None
    return None


def routines():
    """(potrf, gesv) addresses of the LAPACK numpy calls, or None (module docstring); whether they give numpy's bits
    here is checked by the compiled loop's self-check (:func:`.episode_jit.self_check`)."""
    return _library()
