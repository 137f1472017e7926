"""The stacked counter: H Toeplitz counters of one configuration stepped as one (docs/performance.md#design-one-stacked-counter-item-3).

A learner with H per-step statistics (private-lsvi-ucb's H Gram counters) keeps H
:class:`~privacct.counters.counter.FactorizedCounter`; each addition of each counter makes its own generator call per
seed, its own ledger record and its own noise-mixing step on (B, *shape) arrays. :class:`StackedCounters` steps them
together: per addition, per seed ONE generator call of H x m values, the H ledger records (group order, each with its
counter's own executed weights), and ONE mixing step on (H, B, *shape) arrays.

Same bytes: per seed the H counters' draws are consecutive calls on the seed's generator (nothing else draws from it
between them), and numpy's ``standard_normal`` / ``standard_exponential`` fill an ``out`` array value after value, so
one call of H x m values consumes the stream in the same order and gives the same values (laid out (counter, values),
(counter, 2, values) for Laplace); the mixing steps and the release are elementwise, so each element sees the same
floating-point operations in the same order whatever the stack (tests/privacct/counters/test_stacked.py checks both
against H separate counters, draws, releases and ledgers). BLT counters of symmetric Gaussian matrices (private-lsvi-ucb's
Gram counters) take that step compiled on the d(d+1)/2 upper entries (:mod:`.blt_jit`: the same operations per
element; :data:`COMPILED`), and ``add(x, out=, plus=)`` writes the releases plus a shift into the caller's array.
With ``defer_records`` such a step's ledger rows (the next rows of the counters' one read-only executed encoder) are
kept pending and recorded together by :meth:`StackedCounters.flush_records` (the same ledger:
:meth:`privacct.ledger.Ledger.record_prefix_steps`); the owner flushes before its ledger is read.

The counters stay the state's owners: their arrays become views into the stacked ones, so ``noisy_sum()``, the
ledger's executed weights (each counter's own :meth:`FactorizedCounter._row_weights`: the probe, the refusal of a
recursion changed after the first draw) and a fall-back addition through ``counter.add`` read and write the same
state. Stacked only what is known to be elementwise and faithful to one recursion: counters of exactly
:class:`FactorizedCounter` running the registry's ``blt`` or ``sqrt-toeplitz`` object with their own (unpatched)
noise-path functions, one batch of generators, one ledger, one shape, mechanism, scale and K, no batched leaves, and
the same recursion (:func:`privacct.counters.executed_cache.recursion_key`: a counter whose coefficients differ, the
counter-noise-path mutant on some counters only, is not stacked); checked at the first addition, when any noise
recursion a mutant alters is already in place. Every other case, and every addition made while an audit's tap or an
action pin is active (:mod:`privacct.tap`: they observe each draw), goes through the H counters one by one.
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter, contains, ge, is_
from types import SimpleNamespace

import numpy as np

from ..errors import PrivacctError
from ..mechanisms import _triangle
from ..tap import current as current_tap
from ..tap import current_pin
from .as_loaded import AsLoaded
from .base import ToeplitzStrategy
from .blt import BLT, Blt
from .counter import FactorizedCounter
from .executed_cache import recursion_key
from .sqrt_toeplitz import SQRT_TOEPLITZ, SqrtToeplitz

#: the noise-path functions a stacked step runs, as imported: a patched class is not stacked
_FUNCS = AsLoaded((FactorizedCounter, ("_mix_noise", "_init_mixing_state", "add", "_draw")))
_ROW_WEIGHTS = FactorizedCounter._row_weights
_EXECUTED, _PROBED = attrgetter("_executed"), attrgetter("_probed_objects")
_STEPS, _LEAVES, _GROUP = attrgetter("steps"), attrgetter("leaves"), attrgetter("group")
#: whether BLT counters of symmetric matrices step through the compiled kernel (:mod:`.blt_jit`, same bytes); False:
#: numpy's stacked step (no numba in the process: about 115 MB less peak RSS, docs/performance.md)
COMPILED = True
_ELEMENTWISE = {BLT: (Blt, Blt.mix_noise, Blt.init_mixing_state), SQRT_TOEPLITZ:
                (SqrtToeplitz, SqrtToeplitz.mix_noise, SqrtToeplitz.init_mixing_state)}


def stacked_noise(mechanism: str, rngs, count: int, shape: tuple[int, ...], scale: float) -> np.ndarray:
    """``count`` consecutive draws of :func:`privacct.mechanisms.draw` (``mechanism``, ``shape``, ``scale``) per seed,
    as one generator call per seed: shape (count, B, *shape), the same values as ``count`` separate draws made one
    after the other (module docstring). Records nothing and calls no audit hook: the caller records."""
    B = len(rngs)
    if mechanism == "symmetric-gaussian-matrix":
        d = shape[0]
        rows, cols = _triangle(d)
        upper = np.empty((B, count, rows.size))
        for b, r in enumerate(rngs):
            r.standard_normal(out=upper[b])
        upper *= scale
        upper = upper.swapaxes(0, 1)
        out = np.empty((count, B, d, d))      # laid out (counter, seed) at once: no copy after
        out[..., rows, cols] = upper
        out[..., cols, rows] = upper
        return out
    elif mechanism == "gaussian":
        out = np.empty((B, count) + shape)
        for b, r in enumerate(rngs):
            r.standard_normal(out=out[b])
        out *= scale
    elif mechanism == "laplace":
        buf = np.empty((B, count, 2) + shape)
        for b, r in enumerate(rngs):
            r.standard_exponential(out=buf[b])
        out = np.subtract(buf[:, :, 0], buf[:, :, 1])
        out *= scale
    else:
        raise PrivacctError(f"mechanism {mechanism!r} cannot be stacked")
    return np.ascontiguousarray(out.swapaxes(0, 1))


class StackedCounters:
    """H :class:`FactorizedCounter` (``counters``, in their ledger order) added to together: :meth:`add` takes
    ``x`` of shape (B, H, *shape) and returns the H releases as (B, H, *shape), the same bytes, draws and ledger
    records as ``counters[h].add(x[:, h])`` for h = 0..H-1 (module docstring)."""

    def __init__(self, counters, *, defer_records: bool = False) -> None:
        self.counters = list(counters)
        #: ``defer_records``: a compiled step whose ledger rows are the next rows of the counters' one executed encoder
        #: (:meth:`_unchanged_row`) keeps only (first user, last user, count) and the rows are recorded together
        #: (:meth:`privacct.ledger.Ledger.record_prefix_steps`, the same ledger) by :meth:`flush_records`, which the
        #: owner calls before the ledger is read; any other step records what is pending first
        self.defer_records = bool(defer_records)
        self._deferred: list | None = None       # [executed row array, lo, first hi, count]
        if not self.counters:
            raise PrivacctError("StackedCounters needs at least one counter")
        self._stacked: bool | None = None        # decided at the first addition
        self._views: list[dict[str, np.ndarray]] = []
        self._state = SimpleNamespace()
        #: BLT counters of symmetric Gaussian matrices step through the compiled kernel (:mod:`.blt_jit`, same bytes):
        #: their recursion's state is kept for the upper triangle here (``_upper``), the counters' full ring buffers
        #: are then refreshed only before a step made one by one (:meth:`_expand_upper`)
        self._compiled = False
        self._upper: SimpleNamespace | None = None
        self._kept: tuple | None = None          # _unchanged_row's record of the counters' probed objects

    @property
    def stacked(self) -> bool:
        """Whether the additions run stacked (False before the first addition)."""
        return bool(self._stacked)

    def _stackable(self) -> bool:
        cs = self.counters
        c0 = cs[0]
        if len(cs) < 2 or any(type(c) is not FactorizedCounter for c in cs):
            return False
        if not _FUNCS.unchanged():
            return False
        impl = c0.implementation
        want = _ELEMENTWISE.get(impl)
        if want is None or type(impl) is not want[0] or (type(impl).mix_noise, type(impl).init_mixing_state) != want[1:]:
            return False
        first = (c0.shape, c0.mechanism, c0.scale, c0.leaves, c0.first_user, c0.steps, c0.structure)
        for c in cs:
            if c.implementation is not impl or c.leaf_users is not None or c._observer is not None:
                return False
            if (c.shape, c.mechanism, c.scale, c.leaves, c.first_user, c.steps, c.structure) != first:
                return False
            if c.ledger is not c0.ledger or len(c.rngs) != len(c0.rngs) or \
                    any(a is not b for a, b in zip(c.rngs, c0.rngs, strict=True)):
                return False
        key = recursion_key(c0)
        return key is not None and all(recursion_key(c) == key for c in cs[1:])

    def _stack_state(self) -> None:
        """Move the counters' state into stacked arrays (H next to the batch axis) and make theirs views of them."""
        c0 = self.counters[0]
        probe = SimpleNamespace()
        c0._init_mixing_state(probe, c0.batch, c0.shape)
        names = sorted(vars(probe)) + ["_exact"]
        self._views = [{} for _ in self.counters]
        for name in names:
            arrs = [getattr(c, name) for c in self.counters]
            pos = arrs[0].ndim - 1 - len(c0.shape)        # the batch axis
            if all(a.dtype == np.float64 and not a.view(np.int64).any() for a in arrs):
                # a fresh state (+0.0 bits): zeros the operating system maps lazily; the compiled step never writes
                # the full ring buffers, so their pages stay untouched (docs/performance.md: the memory slice)
                full = np.zeros(arrs[0].shape[:pos] + (len(arrs),) + arrs[0].shape[pos:])
            else:
                full = np.stack(arrs, axis=pos)
            setattr(self._state, name, full)
            for h, c in enumerate(self.counters):
                view = full[(slice(None),) * pos + (h,)]
                setattr(c, name, view)
                self._views[h][name] = view

    def _compile(self) -> None:
        """After :meth:`_stack_state`: BLT counters of symmetric Gaussian matrices step compiled (:mod:`.blt_jit`);
        their ring buffers move to upper-triangle arrays (nb, H, B, d(d+1)/2)."""
        c0 = self.counters[0]
        if not COMPILED or c0.implementation is not BLT or c0.mechanism != "symmetric-gaussian-matrix":
            return
        from .blt_jit import blt_symmetric_step

        rows, cols = _triangle(c0.shape[0])
        up = SimpleNamespace(rows=rows.astype(np.int64), cols=cols.astype(np.int64), step=blt_symmetric_step,
                             raw=np.empty((c0.batch, len(self.counters) * rows.size)), coef=None)
        up.zh = np.ascontiguousarray(self._state._zhist[..., rows, cols])
        up.uh = np.ascontiguousarray(self._state._uhist[..., rows, cols])
        self._upper, self._compiled = up, True

    def _expand_upper(self) -> None:
        """The counters' full ring buffers from the upper-triangle ones (before steps made one by one)."""
        up = self._upper
        for full, half in ((self._state._zhist, up.zh), (self._state._uhist, up.uh)):
            full[..., up.rows, up.cols] = half
            full[..., up.cols, up.rows] = half

    def _gather_upper(self) -> None:
        """The upper-triangle ring buffers from the counters' full ones (after steps made one by one)."""
        up = self._upper
        up.zh[...] = self._state._zhist[..., up.rows, up.cols]
        up.uh[...] = self._state._uhist[..., up.rows, up.cols]

    def _coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        """P_1..P_nb, Q_1..Q_nb as arrays, read from the first counter now (as :meth:`Blt.mix_noise` reads them at
        every step); converted again only when they are not the same immutable objects as at the last step."""
        c0, up = self.counters[0], self._upper
        P, Q = c0._P, c0._Q
        got = up.coef
        if got is None or got[0] is not P or got[1] is not Q or type(P) is not tuple or type(Q) is not tuple:
            got = up.coef = (P, Q, np.array(P, dtype=float), np.array(Q, dtype=float))
        return got[2], got[3]

    def _sync_stack(self) -> None:
        """After a stacked step that rebound a state array (sqrt-toeplitz's release noise), copy it into the stacked
        array (the counters' views read it)."""
        st = self._st
        for name, full in vars(self._state).items():
            cur = getattr(st, name)
            if cur is not full:
                full[...] = cur
                setattr(st, name, full)

    def _sync(self) -> None:
        """After the counters stepped one by one: a counter's rebound state array copied into its view."""
        for h, c in enumerate(self.counters):
            for name, view in self._views[h].items():
                cur = getattr(c, name)
                if cur is not view:
                    view[...] = cur
                    setattr(c, name, view)

    def add(self, x, *, out: np.ndarray | None = None, plus: np.ndarray | None = None) -> np.ndarray:
        """The H releases (B, H, *shape) after adding ``x`` (B, H, *shape). ``out`` (optional, (B, H, *shape) float64,
        C-contiguous): written with the releases and returned; ``plus`` (optional, ``shape``): added to every release
        (``release + plus``, as the caller's own sum would: a learner's regularizer shift)."""
        cs = self.counters
        x = np.asarray(x, dtype=float)
        H, c0 = len(cs), cs[0]
        if x.shape != (c0.batch, H) + c0.shape:
            raise PrivacctError(f"x must have shape {(c0.batch, H) + c0.shape}, got {x.shape}")
        if out is not None and (out.shape != x.shape or out.dtype != np.float64 or not out.flags.c_contiguous):
            raise PrivacctError(f"out must be a C-contiguous float64 array of shape {x.shape}")
        if self._stacked is None:
            self._stacked = self._stackable()
            if self._stacked:
                self._stack_state()
                self._st = SimpleNamespace(**vars(self._state))
                self._compile()
        if not self._stacked or current_tap() is not None or current_pin() is not None:
            self.flush_records()
            if self._compiled:
                self._expand_upper()
            rel = np.stack([c.add(x[:, h]) for h, c in enumerate(cs)], axis=1)
            if self._stacked:
                self._sync()
            if self._compiled:
                self._gather_upper()
            return self._finish(rel, out, plus)
        if any(map(ge, map(_STEPS, cs), map(_LEAVES, cs))):
            raise PrivacctError(f"counter is full: it was built for leaves={c0.leaves} additions")
        t = c0.steps + 1
        row = self._unchanged_row(t)
        defer = (row is not None and self.defer_records and self._compiled and c0.ledger is not None
                 and not c0._executed.flags.writeable)
        if not defer:
            self.flush_records()
        if row is not None:    # what every counter's _row_weights returns, without its H calls
            weights = [row] * H
        else:
            weights = [c.implementation.ledger_weights(c, t) for c in cs]   # may refuse: before any state moves
            if all(c._executed is c0._executed for c in cs):   # one cached R_exec (executed_cache): one row object
                weights = [weights[0]] * H
        for c in cs:
            c.steps = t
        u0 = c0.first_user - 1
        users = (u0 + 1, u0 + t)
        if self._compiled:
            up = self._upper
            P, Q = self._coefficients()
            for b, r in enumerate(c0.rngs):      # stacked_noise's draws: one call per seed, the same values
                r.standard_normal(out=up.raw[b])
            if defer:              # this step's rows: ex[:t][::-1] of the one executed encoder ex (_unchanged_row)
                self._defer(c0._executed, users)
            elif c0.ledger is not None:
                c0.ledger.record_groups(list(map(_GROUP, cs)), users=users, mechanism=c0.mechanism, scale=c0.scale,
                                        shape=c0.shape, batch=c0.batch, weights=weights)
            res = np.empty(x.shape) if out is None else out
            xc = x if x.flags.c_contiguous else np.ascontiguousarray(x)
            up.step(t, P, Q, up.raw, float(c0.scale), up.rows, up.cols, up.zh, up.uh, self._state._noise,
                    self._state._exact, xc, res, xc[0, 0] if plus is None else np.asarray(plus, dtype=float),
                    plus is not None)
            return res
        self._state._exact += x.swapaxes(0, 1)
        z = stacked_noise(c0.mechanism, c0.rngs, H, c0.shape, c0.scale)
        if c0.ledger is not None:   # H weighted records in counter order, the shared row squared once
            c0.ledger.record_groups([c.group for c in cs], users=users, mechanism=c0.mechanism, scale=c0.scale,
                                    shape=c0.shape, batch=c0.batch, weights=weights)
        c0._mix_noise(self._st, t, z)
        self._sync_stack()
        return self._finish((self._state._exact + self._state._noise).swapaxes(0, 1), out, plus)

    def _defer(self, ex: np.ndarray, users: tuple[int, int]) -> None:
        """Keep this step's ledger rows (users ``users``, weights ``ex[:t][::-1]``) for :meth:`flush_records`: the
        pending run grows when it is the next step of the same read-only encoder, else it is recorded first."""
        got = self._deferred
        if got is not None and got[0] is ex and got[1] == users[0] and got[2] + got[3] == users[1]:
            got[3] += 1
            return
        self.flush_records()
        self._deferred = [ex, users[0], users[1], 1]

    def flush_records(self) -> None:
        """Record the deferred steps' ledger rows (``defer_records``), in step order: the same ledger as recording
        each at its step (:meth:`privacct.ledger.Ledger.record_prefix_steps`). A no-op when nothing is pending."""
        got = self._deferred
        if got is None:
            return
        self._deferred = None
        c0 = self.counters[0]
        c0.ledger.record_prefix_steps(list(map(_GROUP, self.counters)), lo=got[1], hi=got[2], count=got[3], row=got[0],
                                      mechanism=c0.mechanism, scale=c0.scale, shape=c0.shape, batch=c0.batch)

    def _unchanged_row(self, t: int) -> np.ndarray | None:
        """Row t of the counters' one executed encoder, when every counter's
        :meth:`~privacct.counters.counter.FactorizedCounter._row_weights` would return it at its cheapest: probed
        already (the same cached R_exec for all), each counter's recursion reading the very immutable coefficient
        objects it read at its probe (:meth:`privacct.counters.base.ToeplitzStrategy.parameter_attributes`), and
        neither ``ledger_weights`` nor ``_row_weights`` replaced; None otherwise (the caller asks each counter).
        The per-counter tests are C-level maps of identity comparisons against what :meth:`_kept_objects` saw."""
        cs = self.counters
        c0 = cs[0]
        ex = c0._executed
        impl = c0.implementation
        if ex is None or c0.ledger is None or type(impl).ledger_weights is not ToeplitzStrategy.ledger_weights \
                or "ledger_weights" in vars(impl) or FactorizedCounter._row_weights is not _ROW_WEIGHTS:
            return None
        names = impl.parameter_attributes()
        kept = self._kept
        if kept is None or kept[0] != names or kept[1] is not ex:
            kept = self._kept = self._kept_objects(names, ex)
            if kept is None:
                return None
        if not (all(map(is_, map(_EXECUTED, cs), repeat(ex)))
                and all(map(is_, map(_PROBED, cs), kept[2]))
                and all(all(map(is_, map(get, cs), objs)) for get, objs in kept[3])
                and not any(map(contains, map(vars, cs), repeat("_row_weights")))):
            return None
        return ex[:t][::-1]

    def _kept_objects(self, names, ex) -> tuple | None:
        """(names, ex, each counter's ``_probed_objects`` tuple, per name the objects they hold), when every counter
        was probed into ``ex`` with immutable coefficient objects under ``names``; None otherwise."""
        cs = self.counters
        probed = [c._probed_objects for c in cs]
        if names is None or any(c._executed is not ex for c in cs) or any(p is None or len(p) != len(names)
                                                                          for p in probed):
            return None
        return names, ex, probed, [(attrgetter(n), [p[i] for p in probed]) for i, n in enumerate(names)]

    @staticmethod
    def _finish(rel: np.ndarray, out: np.ndarray | None, plus: np.ndarray | None) -> np.ndarray:
        """``rel`` (+ ``plus``), into ``out`` when given."""
        if plus is not None:
            rel = rel + plus
        if out is None:
            return rel
        out[...] = rel
        return out


__all__ = ["StackedCounters", "stacked_noise"]
