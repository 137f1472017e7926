"""``scipy.signal.lfilter(b, a, x)`` bit for bit without importing :mod:`scipy.signal` (issue 23's memory slice).

BLT's prefix coefficients (:func:`.blt._blt_prefix_coefficients`) are the cumulative sums of the impulse response of
P/Q (docs/counters.md#blt). ``scipy.signal`` computes it in C (``_sigtools._linear_filter``: direct form II transposed,
b and a divided by a[0] first, then per sample ``y = Z_0 + b_0 x``, ``Z_n = (Z_(n+1) + x b_(n+1)) - y a_(n+1)``,
``Z_last = x b_last - y a_last``), but importing the package also imports scipy.stats, interpolate, spatial, ndimage,
integrate, ... (about 27 MB of resident memory). :func:`linear_filter` calls the same C function from the same
extension file, loaded by path without the package's ``__init__``; the bytes are scipy's by construction
(tests/privacct/counters/test_blt_filter.py compares them with ``scipy.signal.lfilter`` and with a Python loop of the
operations above). When that file cannot be loaded (another scipy layout) it calls ``scipy.signal.lfilter`` itself.
A Python loop of the same operations (exact too) is about 100x slower: the BLT optimiser filters about 700 sequences of
K samples per plan; a numpy-vectorised form over the samples cannot keep the order of the sums (an IIR recursion).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=1)
def _sigtools_linear_filter():
    """scipy's ``_sigtools._linear_filter`` (the C loop behind ``lfilter`` for len(a) > 1), or None when it cannot be
    loaded without ``scipy.signal``'s package. The module already imported (scipy.signal imported elsewhere) is used
    as it is."""
    import sys

    mod = sys.modules.get("scipy.signal._sigtools")
    if mod is None:
        try:
            import scipy

            spec = importlib.machinery.PathFinder.find_spec("_sigtools", [os.path.join(os.path.dirname(scipy.__file__),
                                                                                      "signal")])
            if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
                return None
            spec.name = "scipy.signal._sigtools"     # the extension's own init function name (PyInit__sigtools)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            if sys.modules.get(spec.name) is mod:    # registered by the loader: a later scipy.signal import loads its own
                del sys.modules[spec.name]
        except Exception:   # noqa: BLE001 -- any failure: lfilter itself (the same bytes, more memory)
            return None
    return getattr(mod, "_linear_filter", None)


def linear_filter(b: np.ndarray, a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``scipy.signal.lfilter(b, a, x)`` for 1-D float64 ``b``, ``a`` (len(a) > 1, a[0] != 0) and ``x``, zero initial
    state: the same C loop, a new float64 array of x's length (b and a are copied, never changed)."""
    b = np.array(b, dtype=np.float64)
    a = np.array(a, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    if b.ndim != 1 or a.ndim != 1 or x.ndim != 1 or a.size < 2 or b.size < 1:
        raise ValueError("linear_filter: b, a, x must be 1-D with len(a) >= 2")
    f = _sigtools_linear_filter() if _c_loop_agrees() else None
    if f is None:
        from scipy.signal import lfilter

        return np.asarray(lfilter(b, a, x))
    return np.asarray(f(b, a, x, -1))


def _python_filter(b: np.ndarray, a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The operations of the module docstring in Python (the reference of :func:`_c_loop_agrees`)."""
    b, a = b / a[0], a / a[0]
    n = max(a.size, b.size)
    b = np.concatenate([b, np.zeros(n - b.size)])
    a = np.concatenate([a, np.zeros(n - a.size)])
    z = [0.0] * (n - 1)
    y = np.empty(x.size)
    for i, xi in enumerate(x.tolist()):
        yi = z[0] + b[0] * xi
        for j in range(n - 2):
            z[j] = (z[j + 1] + xi * b[j + 1]) - yi * a[j + 1]
        z[n - 2] = xi * b[n - 1] - yi * a[n - 1]
        y[i] = yi
    return y


@lru_cache(maxsize=1)
def _c_loop_agrees() -> bool:
    """Once per process: the loaded C loop gives the Python loop's bits on a small filter (a scipy whose private loop
    changed its arguments or its order of operations falls back to ``lfilter`` itself)."""
    f = _sigtools_linear_filter()
    if f is None:
        return False
    b = np.array([0.7, -0.3, 0.05])
    a = np.array([1.3, -0.9, 0.2, -0.01])
    x = np.sin(np.arange(64.0)) + 0.25
    try:
        got = np.asarray(f(np.array(b), np.array(a), x.copy(), -1))
    except Exception:   # noqa: BLE001 -- another signature: lfilter itself
        return False
    return got.shape == x.shape and got.tobytes() == _python_filter(b, a, x).tobytes()


def impulse_response(b: np.ndarray, a: np.ndarray, n: int) -> np.ndarray:
    """The first ``n`` coefficients of b(x) / a(x) as ``lfilter(b, a, e_0)`` gives them (float64, length n >= 1)."""
    x = np.zeros(n)
    x[0] = 1.0
    return linear_filter(b, a, x)
