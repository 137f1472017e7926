"""The executed encoder of a Toeplitz counter, computed once per recursion per process (issue 23, item 1).

A Toeplitz :class:`~privacct.counters.counter.FactorizedCounter` with a ledger records row t of R_exec = L_exec^{-1} A
with every draw (docs/counters.md#ledger); R_exec comes from the impulse response of the noise path the counter runs
(K mixing steps) and a forward substitution (O(K^2)): about 0.2 s at K = 10^4, paid by every counter. A learner builds
H identical counters per run (private-lsvi-ucb's Gram counters), a test suite hundreds; this module computes it once.

What is cached is the EXECUTED path's response, never the declared one: the key is what the recursion runs,

* the counter's class and the functions of its noise path (``_mix_noise``, ``_init_mixing_state``,
  ``impulse_response``, ``executed_coefficients``) and the strategy object's class, identity and functions
  (``mix_noise``, ``init_mixing_state``, ``init_parameters``, ``mixing_parameters``); an instance that overrides any
  of them in its own ``__dict__`` is never cached;
* the structure (strategy, K, buffers) and the counter's K;
* the exact bytes of the coefficients the recursion reads (``_mixing_parameters``: blt's P and Q, sqrt-toeplitz's c),

so a counter whose recursion differs (the counter-noise-path mutant: Q halved on the instance, or a strategy subclass
that halves it; a subclass whose mixing step scales the draw) has another key and its own probe. Behind the key, a
cheap probe guards what a key cannot see (a recursion reading state outside its coefficients): the first
:data:`PROBE_STEPS` steps of the impulse response, run through the counter's own mixing step, must equal the cached
response bit for bit, else the full probe runs again (and replaces the entry). A refused noise path (l_0 = 0, a
singular solve) raises every time and is never cached. The cached arrays are read-only; a hit returns the very
array the miss computed (same bytes, so the same ledger weights and the same regret pins).
"""

from __future__ import annotations

from collections import OrderedDict
from types import SimpleNamespace
from typing import Any

import numpy as np

from .strategies import executed_encoder

#: Steps of the impulse response re-run on a cache hit and compared bit for bit with the cached response.
PROBE_STEPS = 64
#: Entries kept (least recently used dropped): one per distinct recursion a process runs.
MAX_ENTRIES = 32

_COUNTER_PATH = ("_mix_noise", "_init_mixing_state", "impulse_response", "executed_coefficients")
_STRATEGY_PATH = ("mix_noise", "init_mixing_state", "init_parameters", "mixing_parameters")
_CACHE: "OrderedDict[tuple, tuple[np.ndarray, np.ndarray]]" = OrderedDict()
#: cache hits, full probes (misses) and hits refused by the short probe, since the process started (tests, benchmarks)
stats = {"hits": 0, "misses": 0, "probe_mismatches": 0}


def recursion_key(counter: Any) -> tuple | None:
    """The key of what ``counter``'s noise recursion runs (module docstring), or None when it cannot be keyed (an
    instance-level override of the noise path, or unhashable parts): such a counter is probed in full."""
    impl = counter.implementation
    if any(name in vars(counter) for name in _COUNTER_PATH):
        return None
    if any(name in getattr(impl, "__dict__", {}) for name in _STRATEGY_PATH):
        return None
    cls = type(counter)
    funcs = tuple(getattr(cls, n) for n in _COUNTER_PATH) + tuple(getattr(type(impl), n) for n in _STRATEGY_PATH)
    params = tuple((a.dtype.str, a.shape, a.tobytes())
                   for a in (np.asarray(p) for p in counter._mixing_parameters()))
    key = (cls, type(impl), id(impl), impl, funcs, counter.structure, int(counter.leaves), params)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _short_probe(counter: Any, n: int) -> np.ndarray:
    """l_0..l_(n-1) of ``counter``'s own mixing step (as :meth:`FactorizedCounter.impulse_response` runs it, over
    the first n steps only): no draw, no record, the counter's state untouched."""
    st = SimpleNamespace()
    counter._init_mixing_state(st, 1, ())
    out = np.empty(n)
    for t in range(1, n + 1):
        counter._mix_noise(st, t, np.array([1.0 if t == 1 else 0.0]))
        out[t - 1] = st._noise[0]
    return out


def executed_coefficients(counter: Any) -> np.ndarray:
    """r_0..r_(K-1) of ``counter``'s executed encoder (:func:`privacct.counters.strategies.executed_encoder` of its
    impulse response), from the cache when the same recursion was probed before in this process (module docstring).
    Read-only. Raises what :func:`executed_encoder` raises for a refused noise path."""
    key = recursion_key(counter)
    if key is not None:
        entry = _CACHE.get(key)
        if entry is not None:
            impulse, r = entry
            n = min(PROBE_STEPS, impulse.size)
            if _short_probe(counter, n).tobytes() == impulse[:n].tobytes():
                _CACHE.move_to_end(key)
                stats["hits"] += 1
                return r
            stats["probe_mismatches"] += 1
            del _CACHE[key]
    stats["misses"] += 1
    impulse = np.array(counter.impulse_response(), dtype=float)
    r = executed_encoder(impulse)
    r.setflags(write=False)
    if key is not None:
        impulse.setflags(write=False)
        _CACHE[key] = (impulse, r)
        while len(_CACHE) > MAX_ENTRIES:
            _CACHE.popitem(last=False)
    return r


def clear() -> None:
    """Forget every cached encoder (tests)."""
    _CACHE.clear()


__all__ = ["MAX_ENTRIES", "PROBE_STEPS", "clear", "executed_coefficients", "recursion_key", "stats"]
