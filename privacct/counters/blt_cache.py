"""An on-disk cache of BLT's optimised buffers (:func:`.blt.blt_parameters`), per machine (issue 23's memory slice).

The optimiser needs ``scipy.optimize`` (about 19 MB of resident memory in the learners' processes, issue 23's
benchmark) and reruns L-BFGS-B in every process that plans a BLT counter. A process that finds its entry here returns
the buffers without importing it. An entry returns exactly what the optimiser returned, because it is keyed on every
input the optimisation reads (:func:`fingerprint`): the arguments (leaves, buffers, norm); the source text of the
modules whose code computes the objective and its start (blt.py, blt_filter.py, sqrt_toeplitz.py, base.py); the
versions of Python, numpy and scipy and their BLAS/LAPACK builds; the machine (architecture, CPU model and flags: the
SIMD and BLAS kernels numpy and OpenBLAS dispatch to) and the BLAS thread settings. The full key is stored in the
entry and compared on reading (not only its hash); the floats are stored as ``float.hex`` (exact). Any mismatch or
unreadable entry: the optimiser runs and the entry is (re)written atomically. Privacy never depends on this cache: any
buffers are a valid factorization, the accountant uses the buffers the log records (docs/counters.md#blt).

Where: ``__pycache__/blt_parameters/`` next to this module (as numba's ``cache=True`` keeps compiled code next to its
source); ``PRIVACCT_BLT_CACHE=0`` turns it off, ``PRIVACCT_BLT_CACHE=<directory>`` puts it there. An unwritable
directory only means no cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import tempfile
from functools import lru_cache

#: the modules whose source the optimiser's output depends on (the objective, its start, the bounds' rounding)
SOURCES = ("blt.py", "blt_filter.py", "sqrt_toeplitz.py", "base.py")
#: bump when the entry format changes
FORMAT = 1
_HERE = os.path.dirname(os.path.abspath(__file__))


def cache_dir() -> str | None:
    """The cache's directory, or None when ``PRIVACCT_BLT_CACHE=0``."""
    env = os.environ.get("PRIVACCT_BLT_CACHE")
    if env == "0":
        return None
    return env or os.path.join(_HERE, "__pycache__", "blt_parameters")


def _cpu() -> tuple[str, str]:
    """(CPU model, flags) from /proc/cpuinfo ('' where there is none)."""
    model = flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and not model:
                    model = value.strip()
                elif key in ("flags", "Features") and not flags:
                    flags = value.strip()
                if model and flags:
                    break
    except OSError:
        pass
    return model, flags


@lru_cache(maxsize=1)
def _environment() -> dict:
    """Everything but the arguments: sources, versions, builds, machine, threads (read once per process)."""
    import numpy as np
    import scipy

    sources = {}
    for name in SOURCES:
        with open(os.path.join(_HERE, name), "rb") as f:
            sources[name] = hashlib.sha256(f.read()).hexdigest()
    model, flags = _cpu()
    builds = {}
    for mod in (np, scipy):
        cfg = getattr(getattr(mod, "__config__", None), "CONFIG", None) or {}
        deps = cfg.get("Build Dependencies", {}) if isinstance(cfg, dict) else {}
        builds[mod.__name__] = {k: {f: str(v.get(f)) for f in ("name", "version", "openblas configuration")}
                                for k, v in deps.items() if isinstance(v, dict)}
    threads = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                              "GOTO_NUM_THREADS", "NPY_DISABLE_CPU_FEATURES")}
    return {"format": FORMAT, "sources": sources, "python": sys.version, "numpy": np.__version__,
            "scipy": scipy.__version__, "builds": builds, "machine": platform.machine(), "cpu_model": model,
            "cpu_flags": flags, "cpu_count": os.cpu_count(), "threads": threads}


def fingerprint(leaves: int, buffers: int, norm: str) -> dict:
    """The full key of one optimisation: its arguments and :func:`_environment`."""
    return {"leaves": int(leaves), "buffers": int(buffers), "norm": str(norm), **_environment()}


def _path(key: dict) -> str | None:
    d = cache_dir()
    if d is None:
        return None
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    return os.path.join(d, f"{key['leaves']}-{key['buffers']}-{key['norm']}-{digest}.json")


def lookup(leaves: int, buffers: int, norm: str) -> tuple[tuple[float, float], ...] | None:
    """The buffers the optimiser returned for these arguments in this environment, or None (no entry, another key,
    an unreadable entry, the cache turned off)."""
    key = fingerprint(leaves, buffers, norm)
    path = _path(key)
    if path is None:
        return None
    try:
        with open(path) as f:
            entry = json.load(f)
        if entry.get("key") != key:
            return None
        out = tuple((float.fromhex(t), float.fromhex(w)) for t, w in entry["buffers"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return out if len(out) >= 1 else None


def store(leaves: int, buffers: int, norm: str, value: tuple[tuple[float, float], ...]) -> None:
    """Record the optimiser's ``value`` for these arguments (atomically; silently nothing when it cannot be written)."""
    key = fingerprint(leaves, buffers, norm)
    path = _path(key)
    if path is None:
        return
    entry = {"key": key, "buffers": [[float(t).hex(), float(w).hex()] for t, w in value]}
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(entry, f, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass
