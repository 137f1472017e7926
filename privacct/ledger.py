"""The Ledger: what noise really ran.

Every privacy noise draw made through :mod:`privacct.mechanisms` is recorded as one
:class:`Draw`: the release group, the interval of users ``[first_user, last_user]`` (1-based,
inclusive) whose data the noised value contains, the mechanism, the noise scale and the shape of
one draw (without the seed batch axis). Re-reading a stored noisy value records nothing; drawing
fresh noise over the same users records again and so costs again.

Per-user accounting: for each group, the number of draws that contain user u is computed for all
users at once with a difference array over the intervals (linear in draws + users); the worst
user's count becomes the group's executed ``repeated(count)`` structure. If a group ran with more
than one noise scale, each scale is a separate sub-group and its worst user is taken separately
(an upper bound: conservative). For a correct implementation, the executed log accounts to the
same epsilon as the declared log; a learner that redraws tree noise at every release is caught.

Weighted draws (factorized counters, docs/counters.md#ledger): a draw may record the weight with
which each user of its interval enters the noised value (row t of R for a counter releasing
R x + z: user s enters z_t's value with weight R[t, s]; a counter records the R it EXECUTES,
R_exec = L_exec^{-1} A from a probe of its own noise path, not the declared R). Per user the ledger sums w^2 (Gaussian
noise) and |w| (Laplace) over the draws that contain her (an unweighted draw counts w = 1); a
(group, scale) with weighted draws becomes one ``single`` release whose sensitivity is the
declared one times the worst user's norm (sqrt of the sum of w^2, or the sum of |w|): exactly
the privacy of R x + z with that column of R.

Storage (compact, docs/performance.md#design-a-compact-ledger-item-2). A *key* is (group,
mechanism, scale, shape, batch, weighted), interned once. Per draw the ledger keeps one small
integer, the key's index, in an ``order`` column (a numpy uint8 array grown by doubling, widened to
uint16 and beyond if a ledger ever has more than 256 keys; the latest entries are staged in a short
Python list, at most 2^14, so that a record costs no numpy call). Per key it keeps *runs*: a run
(lo, hi, n) is the n draws (lo + i, hi + i), i = 0..n-1, consecutive among that key's draws. A draw
that continues its key's last run (the local-model pattern: users (k, k), then (k + 1, k + 1))
costs only its order byte; any other draw closes the run into the key's int64 columns (24 bytes a
run, ``array('q')``, read as numpy arrays). Weighted draws keep no per-draw weights: their w^2 and
|w| are added, when recorded, into one pair of per-user float arrays per (group, mechanism, scale),
as before: O(users) memory whatever the number of draws (a counter's K rows of R, reversed prefixes
of one coefficient array, cost 16 bytes per user, not K^2 / 2 weights), and a copy of the values at
record time, so an array changed after it was recorded cannot change the accounting. One exception, same bits:
rows that :meth:`Ledger.record_groups` receives as the successive rows r_(t-1), ..., r_0 (t = 1, 2, ...) of one
coefficient array over users lo..lo + t - 1, shared by the same groups (a stacked Toeplitz counter's executed rows),
are kept lazily (:class:`_Prefix`): a copy of r grown by one value a step, each row's bits compared with it (O(t), one
pass, instead of O(t) sums of two arrays), the per-user sums made at the first read as sequential cumulative sums (the
additions the eager records make, in their order, docs/performance.md#part-2-the-ledgers-rows-summed-when-read-and-a-one-seed-rollout).
Tree runs (same bits, docs/performance.md#one-seed-x-k--106-every-learner-issue-23): a binary tree's node draws
(Chan, Shi, Song 2011, Alg. 2: the node completing at step t covers leaves t - 2^i + 1 .. t, 2^i the lowest set bit
of t) never continue a run, so each would cost a closed run, 24 bytes; a learner with 22 tree draws an episode holds
2.2 x 10^7 of them at K = 10^6 (0.6 GB). A key whose draws so far are exactly one tree's nodes over users c + 1,
c + 2, ... (the node of step t over users c + t - 2^i + 1 .. c + t, t = 1..count) is kept as the pair (c, count):
its order bytes only, whoever records it (:class:`privacct.mechanisms.TreeCounter`, a compiled loop's
:meth:`Ledger.record_many`, or a user's own tree). The first draw that breaks the pattern turns the key back into
ordinary runs. Readers see the same ledger: a tree key's runs are built when read and its per-user counts are counted
from (c, count) directly (O(users log K)); :class:`_RunLedger`, the runs alone, is the reference the tests compare with
(tests/privacct/test_ledger_tree_runs.py).
The per-user count of a key is a second-order difference array over its runs (+1 at lo, -1 at
lo + n, -1 at hi + 1, +1 at hi + 1 + n, summed twice: for n = 1 the usual +1 on [lo, hi]), exact in
int64. :meth:`Ledger.draws` rebuilds the draws in insertion order from the columns (lazily).

Bulk records (for compiled loops): :meth:`Ledger.key` interns a key once and returns its index;
:meth:`Ledger.record_many` records a chunk of draws (one key, or one key per draw, in the given
order); :meth:`Ledger.record_run` records "one draw for each single user first..last" (users (u, u),
u = first..last) as one run. Both give the same ledger, draw for draw and in the same order, as the
equivalent sequence of :meth:`Ledger.record` calls (tests/privacct/test_ledger.py), so a learner
can switch to them without moving its pinned ledger digests, provided it keeps the order: e.g. the
local-model loop of ``algorithms/linear_mixture/noise_ahead.py`` (one message per group per episode,
groups in order) would take ``keys = [ledger.key(group=g.name, ...) for g in groups]`` once and, per
chunk of episodes ``eps`` (an int64 array of the episodes whose noise the chunk draws, never past K),
``ledger.record_many(np.tile(keys, eps.size), np.repeat(eps, len(keys)), np.repeat(eps, len(keys)))``.
``record_run(key, first, last)`` is for a loop that records one key's users first..last together
(key-major order: a different draw order from per-episode records, so only for a learner whose
draws are recorded that way already, or whose pins are regenerated on purpose).
"""

from __future__ import annotations

import math
from array import array
from functools import lru_cache
from dataclasses import dataclass, field
from itertools import repeat
from typing import Iterable, Iterator, Sequence

import numpy as np

from .errors import MAX_COUNT, PrivacctError, check_positive
from .log import MECHANISMS, MechanismLog, ReleaseGroup, Sensitivity, Structure


@dataclass(frozen=True)
class Draw:
    """One noise draw: users ``first_user..last_user`` (1-based, inclusive) are inside it."""

    group: str
    first_user: int
    last_user: int
    mechanism: str
    scale: float
    shape: tuple[int, ...]
    batch: int = 1


@dataclass(frozen=True)
class GroupUsage:
    """Executed usage of one (group, mechanism, scale): the worst user and how often it was noised."""

    group: str
    mechanism: str
    scale: float
    worst_user: int
    count: int
    draws: int


_ORDER_TYPES = (np.uint8, np.uint16, np.uint32, np.int64)


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` with capacity at least ``need`` (doubling), contents kept."""
    if need <= a.size:
        return a
    out = np.empty(max(need, 2 * a.size, 8), dtype=a.dtype)
    out[:a.size] = a
    return out


def _user_array(name: str, values, size: int | None = None) -> np.ndarray:
    """A 1-D int64 array of user numbers in [1, MAX_COUNT] (booleans, fractions and non-finite values refused)."""
    a = np.asarray(values)
    if a.ndim != 1 or (size is not None and a.size != size):
        raise PrivacctError(f"{name} must be a 1-D array" + ("" if size is None else f" of {size} user numbers")
                            + f", got shape {a.shape}")
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if a.dtype.kind not in "iu":
        raise PrivacctError(f"{name} must hold integers (user numbers), got dtype {a.dtype}")
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and int(a.max()) > MAX_COUNT:
        raise PrivacctError(f"{name}: user numbers must be at most {MAX_COUNT}, got {int(a.max())}")
    a = a.astype(np.int64)
    if int(a.min()) < 1 or int(a.max()) > MAX_COUNT:
        raise PrivacctError(f"{name}: user numbers must be in [1, {MAX_COUNT}], got {int(a.min())}..{int(a.max())}")
    return a


def _counts_of_runs(parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], size: int) -> np.ndarray:
    """Draws containing each user 1..size (index 0 is user 1) over the runs (lo, hi, n) of ``parts`` (int64 arrays,
    views allowed): run (lo, hi, n) is the n intervals [lo + i, hi + i]; second-order difference array, exact in
    int64, accumulated in place part by part (no concatenated copy: a K = 10^6 tree ledger's check held its runs
    twice and 4 bincounts at once)."""
    m = size + 3
    d2 = np.zeros(m, dtype=np.int64)
    for lo, hi, n in parts:
        d2 += np.bincount(lo, minlength=m)
        d2 -= np.bincount(lo + n, minlength=m)
        d2 -= np.bincount(hi + 1, minlength=m)
        d2 += np.bincount(hi + 1 + n, minlength=m)
    np.cumsum(d2, out=d2)
    np.cumsum(d2, out=d2)
    return d2[1:size + 1]


def _runs_of(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Consecutive draws (lo_j, hi_j) of one key joined into runs (lo, hi, n) of draws shifted by one user."""
    brk = np.ones(lo.size, dtype=bool)
    brk[1:] = (lo[1:] != lo[:-1] + 1) | (hi[1:] != hi[:-1] + 1)
    starts = np.flatnonzero(brk)
    n = np.diff(np.append(starts, lo.size))
    return lo[starts], hi[starts], n.astype(np.int64)


def _int64s(a: array) -> np.ndarray:
    """A fresh int64 numpy copy of an array('q') column (no buffer view is kept: the column can still grow)."""
    return np.frombuffer(a, dtype=np.int64).copy() if len(a) else np.zeros(0, dtype=np.int64)


class _Prefix:
    """Weighted draws kept lazily: row t = 1..n of one coefficient array r over users lo..lo + t - 1, user s entering
    draw t with weight r_(lo + t - 1 - s) (a Toeplitz counter's executed rows r_(t-1), ..., r_0; the same row for each
    group of ``keys``, privacct/counters/stacked.py). Recording a row is O(1) besides comparing its bits with the
    copy of r kept here (so a row that is not the next prefix, or an array changed after it was recorded, is
    recorded eagerly from its values at that time: the same guard as the eager copy); the per-user sums are made
    when read (:meth:`sums`): user s's sum of w^2 is the sequential cumulative sum r_0^2 + r_1^2 + ... +
    r_(hi - s)^2, the additions in the order the eager records make them, from 0.0: the same bits."""

    __slots__ = ("lo", "n", "keys", "coef", "size")

    def __init__(self, lo: int, keys: tuple, r0: float, hi: int) -> None:
        self.lo, self.n, self.keys = lo, 1, keys
        self.coef = np.empty(64)
        self.coef[0] = r0
        self.size = hi          # the eager sums' length: Ledger._grown_weights's doubling, followed record by record

    def append(self, r: float, hi: int) -> None:
        """Row n + 1 (its newest coefficient ``r``), over users lo..hi."""
        if self.n == self.coef.size:
            grown = np.empty(2 * self.n)
            grown[:self.n] = self.coef
            self.coef = grown
        self.coef[self.n] = r
        self.n += 1
        if self.size < hi:
            self.size = max(hi, 2 * self.size)

    def extend(self, r: np.ndarray, hi: int) -> None:
        """Rows n + 1 .. n + len(r) (newest coefficients ``r``), over users lo..hi, lo..hi + 1, ...: the
        :meth:`append` calls in order."""
        m = len(r)
        need = self.n + m
        if need > self.coef.size:
            size = self.coef.size
            while size < need:
                size *= 2
            grown = np.empty(size)
            grown[:self.n] = self.coef[:self.n]
            self.coef = grown
        self.coef[self.n:need] = r
        self.n = need
        size = self.size
        for h in range(hi, hi + m):
            if size < h:
                size = max(h, 2 * size)
        self.size = size

    def sums(self) -> list[np.ndarray]:
        """[sum of w^2, sum of |w|] per user (index 0 is user 1), as the eager records leave them."""
        r = self.coef[:self.n]
        sq, ab = np.zeros(self.size), np.zeros(self.size)
        hi = self.lo + self.n - 1
        sq[self.lo - 1:hi] = np.cumsum(r * r)[::-1]       # add.accumulate: sequential, as the records' += are
        ab[self.lo - 1:hi] = np.cumsum(np.abs(r))[::-1]
        return [sq, ab]


_FLUSH = 1 << 14   # order entries staged in a Python list before they go to the numpy column


class _RunLedger:
    """The ledger's runs encoding without tree runs: :class:`Ledger` is what learners use; this is the reference its
    tree runs are tested against (module docstring: Tree runs).

    An append-only record of noise draws, kept in compact columns (module docstring: Storage).

    Record one draw with :meth:`record`; a chunk of draws with :meth:`key` then :meth:`record_many`
    or :meth:`record_run`. ``len(ledger)`` is the number of draws; :meth:`draws` (or iterating the
    ledger) yields them as :class:`Draw` objects in the order they were recorded."""

    def __init__(self) -> None:
        self._keys: list[tuple[str, str, float, tuple[int, ...], int, bool]] = []
        self._index: dict[tuple, int] = {}
        self._order = np.empty(0, dtype=np.uint8)   # key index of every draw, in record order (first _n filled)
        self._n = 0
        self._pending: list[int] = []               # the next order entries, staged (len < _FLUSH)
        # per key: its closed runs (lo, hi, n) in int64 columns, and its open (last) run as plain ints (on = 0: no draw)
        self._rlo: list[array] = []
        self._rhi: list[array] = []
        self._rn: list[array] = []
        self._olo: list[int] = []
        self._ohi: list[int] = []
        self._on: list[int] = []
        # (group, mechanism, scale) -> [sum of w^2, sum of |w|] per user (index 0 is user 1), over weighted draws;
        # read through the ``_weighted`` property, which first turns the prefix rows kept lazily into such sums
        self._wsums: dict[tuple[str, str, float], list[np.ndarray]] = {}
        self._lazy: dict[tuple[str, str, float], _Prefix] = {}
        #: record_groups' last (groups, mechanism, scale, shape, batch), their interned keys, their (group,
        #: mechanism, scale) keys and whether those are distinct: its fast path (None: none yet)
        self._groups_memo: tuple | None = None

    @property
    def _weighted(self) -> dict[tuple[str, str, float], list[np.ndarray]]:
        """The per-user weighted sums, every lazily kept prefix row turned into them first (:class:`_Prefix`)."""
        if self._lazy:
            self._materialize()
        return self._wsums

    @_weighted.setter
    def _weighted(self, value: dict) -> None:
        self._wsums, self._lazy = value, {}

    def __setstate__(self, state: dict) -> None:
        if "_weighted" in state:   # a ledger pickled before the sums were kept lazily
            state["_wsums"] = state.pop("_weighted")
        state.setdefault("_lazy", {})
        state.setdefault("_groups_memo", None)
        self.__dict__.update(state)

    def _materialize(self) -> None:
        """Each lazily kept prefix row into the per-user sums the eager records would hold, bit for bit (:class:`_Prefix`);
        its groups share one pair, as record_groups' shared records do."""
        done: set[int] = set()
        for p in self._lazy.values():
            if id(p) not in done:
                done.add(id(p))
                acc = p.sums()
                for wk in p.keys:
                    self._wsums[wk] = acc
        self._lazy = {}

    def _prefix_step(self, wkeys: list, lo: int, hi: int, a: np.ndarray) -> bool:
        """Keep one shared row ``a`` of ``wkeys`` (distinct) over users lo..hi lazily, if it is the next row of their
        prefix rows (or the first, over one user); False (nothing changed) otherwise: the caller records eagerly."""
        n = hi - lo + 1
        v = float(a[0])
        if not math.isfinite(v):
            return False
        p = self._lazy.get(wkeys[0])
        if p is None:
            if n != 1 or any(wk in self._wsums or wk in self._lazy for wk in wkeys):
                return False
            p = _Prefix(lo, tuple(wkeys), v, hi)
            for wk in wkeys:
                self._lazy[wk] = p
            return True
        if lo != p.lo or n != p.n + 1 or len(wkeys) != len(p.keys):
            return False
        # p's keys all map to p (they are set together, and _lazy is only ever emptied whole): the same keys in the
        # same order need no lookup
        if tuple(wkeys) != p.keys and any(self._lazy.get(wk) is not p for wk in wkeys):
            return False
        if a.shape != (n,) or not (a[:0:-1].view(np.int64) == p.coef[:p.n].view(np.int64)).all():   # the bits,
            return False                                                                      # -0.0 and NaN too
        p.append(v, hi)
        return True

    # ------------------------------------------------------------------ recording
    def __len__(self) -> int:
        return self._n + len(self._pending)

    def _intern(self, group: str, mechanism: str, scale, shape, batch, weighted: bool) -> int:
        key = (group, mechanism, float(scale), tuple(int(s) for s in shape), int(batch), bool(weighted))
        k = self._index.get(key)
        if k is not None:
            return k
        if mechanism not in MECHANISMS:
            raise PrivacctError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
        check_positive("the recorded noise scale", key[2])
        k = len(self._keys)
        for dt in _ORDER_TYPES:   # widen the order column before a key index it cannot hold
            if k <= np.iinfo(dt).max:
                if np.dtype(dt).itemsize > self._order.dtype.itemsize:
                    self._order = self._order.astype(dt)
                break
        self._keys.append(key)
        self._index[key] = k
        self._rlo.append(array("q"))
        self._rhi.append(array("q"))
        self._rn.append(array("q"))
        self._olo.append(0)
        self._ohi.append(0)
        self._on.append(0)
        return k

    def key(self, *, group: str, mechanism: str, scale: float, shape: tuple[int, ...], batch: int = 1) -> int:
        """The index of the (unweighted) key (group, mechanism, scale, shape, batch), interned and checked
        once (mechanism known, scale finite > 0): pass it to :meth:`record_many` / :meth:`record_run`.
        The index is an int valid for this ledger only."""
        return self._intern(group, mechanism, scale, shape, batch, False)

    def record(self, *, group: str, users: tuple[int, int], mechanism: str, scale: float,
               shape: tuple[int, ...], batch: int = 1, weights=None) -> None:
        """Record one draw over the user interval ``users = (first, last)`` (1-based, inclusive).

        ``weights`` (optional): one finite weight per user of the interval, the coefficient with
        which she enters the noised value (a factorized counter's row of R); absent means 1 each."""
        lo, hi = int(users[0]), int(users[1])
        if lo < 1 or hi < lo or hi > MAX_COUNT:
            raise PrivacctError(f"users must be an interval (first, last) with 1 <= first <= last <= {MAX_COUNT}, "
                                f"got {users!r}")
        weighted = weights is not None
        try:   # the arguments as given: equal to their interned key whenever they normalise to it (fast path)
            k = self._index.get((group, mechanism, scale, shape, batch, weighted))
        except TypeError:   # an unhashable shape (a list): normalise
            k = None
        if k is None:
            k = self._intern(group, mechanism, scale, shape, batch, weighted)
        if weighted:
            w = np.asarray(weights, dtype=float)
            if w.shape != (hi - lo + 1,) or not np.all(np.isfinite(w)):
                raise PrivacctError(f"weights must be {hi - lo + 1} finite numbers (one per user of {users!r}), "
                                    f"got shape {w.shape}")
            self._add_weights((group, mechanism, float(scale)), lo, w * w, np.abs(w))
        self._append_draw(k, lo, hi)

    def record_groups(self, groups, *, users: tuple[int, int], mechanism: str, scale: float,
                      shape: tuple[int, ...], batch: int = 1, weights) -> None:
        """One weighted draw per group of ``groups``, in that order, each over ``users`` with its weights
        (``weights[i]`` for ``groups[i]``): the same ledger as the ``len(groups)`` calls of :meth:`record` it stands
        for (a stacked counter's H draws of one step, privacct/counters/stacked.py). Weight arrays that are the same
        memory (one counter's executed row shared by H counters) are checked, squared and made absolute once; the
        per-user sums get the same values in the same order. Everything is checked before anything is recorded."""
        groups = list(groups)
        if len(weights) != len(groups):
            raise PrivacctError(f"weights must be one array per group ({len(groups)}), got {len(weights)}")
        lo, hi = int(users[0]), int(users[1])
        if lo < 1 or hi < lo or hi > MAX_COUNT:
            raise PrivacctError(f"users must be an interval (first, last) with 1 <= first <= last <= {MAX_COUNT}, "
                                f"got {users!r}")
        # fast path (a stacked counter's step after its first): the same groups and key fields as the last call, whose
        # keys were interned then, and one weight object for all: the next lazily kept prefix row, or the general path
        memo = self._groups_memo
        if memo is not None and groups and memo[0] == (groups, mechanism, scale, shape, batch):
            w0 = weights[0]
            if all(w is w0 for w in weights):
                a = np.asarray(w0, dtype=float)
                if memo[3] and a.shape == (hi - lo + 1,) and self._prefix_step(memo[2], lo, hi, a):
                    self._append_draws(memo[1], lo, hi)
                    return
        done: dict[tuple, list] = {}
        by_id: dict[int, list] = {}
        parts = []
        for w in weights:
            got = by_id.get(id(w))       # the same object (``weights`` holds it alive: ids are not reused)
            if got is None:
                a = np.asarray(w, dtype=float)
                where = (a.__array_interface__["data"][0], a.shape, a.strides)   # the same memory
                got = done.get(where)
                if got is None:
                    if a.shape != (hi - lo + 1,):
                        raise PrivacctError(f"weights must be {hi - lo + 1} finite numbers (one per user of "
                                            f"{users!r}), got shape {a.shape}")
                    got = done[where] = [a]
                by_id[id(w)] = got
            parts.append(got)
        keys = []
        for g in groups:
            try:   # the arguments as given (record's fast path), else normalised
                k = self._index.get((g, mechanism, scale, shape, batch, True))
            except TypeError:
                k = None
            keys.append(self._intern(g, mechanism, scale, shape, batch, True) if k is None else k)
        fscale = float(scale)
        wkeys = [(g, mechanism, fscale) for g in groups]
        try:   # the fast path's memo: these groups' keys, interned (hashable arguments only)
            hash((tuple(groups), mechanism, scale, shape, batch))
            self._groups_memo = ((groups, mechanism, scale, shape, batch), tuple(keys), tuple(wkeys),
                                 len(set(wkeys)) == len(wkeys))
        except TypeError:
            self._groups_memo = None
        # one row shared by distinct groups, the next of their prefix rows: kept lazily (:class:`_Prefix`), else
        # checked, squared and made absolute once per distinct row
        lazy = len(done) == 1 and len(set(wkeys)) == len(wkeys) and self._prefix_step(wkeys, lo, hi, parts[0][0])
        if not lazy:
            for got in done.values():
                a = got[0]
                if not np.all(np.isfinite(a)):
                    raise PrivacctError(f"weights must be {hi - lo + 1} finite numbers (one per user of "
                                        f"{users!r}), got shape {a.shape}")
                got[:] = [a * a, np.abs(a)]
        if lazy:
            self._append_draws(keys, lo, hi)
            return
        shared = len(done) == 1 and len(set(wkeys)) == len(wkeys) > 1
        if shared:   # one row for distinct groups whose sums are one array (or none yet): add once, keep them one
            accs = [self._weighted.get(wk) for wk in wkeys]
            shared = all(a is accs[0] for a in accs)
        if shared:
            sq, ab = parts[0]
            acc = self._grown_weights(accs[0], hi)
            if acc is accs[0] and self._shared_with_others(acc, wkeys):
                acc = [acc[0].copy(), acc[1].copy()]   # also another group's sums: copy on write
            for wk in wkeys:
                self._weighted[wk] = acc
            acc[0][lo - 1:hi] += sq
            acc[1][lo - 1:hi] += ab
        for wk, k, (sq, ab) in zip(wkeys, keys, parts, strict=True):
            if not shared:
                self._add_weights(wk, lo, sq, ab)
            self._append_draw(k, lo, hi)

    def record_prefix_steps(self, groups, *, lo: int, hi: int, count: int, row: np.ndarray, mechanism: str,
                            scale: float, shape: tuple[int, ...], batch: int = 1) -> None:
        """``count`` (>= 0) calls of :meth:`record_groups`, for i = 0..count - 1: ``groups`` over users
        (``lo``, ``hi`` + i), every group's weights ``row[:hi + i - lo + 1][::-1]`` (a Toeplitz counter's executed
        rows r_(t-1), ..., r_0 of one coefficient array ``row``, read now): the same ledger, bit for bit, as those
        calls made one after the other (privacct/counters/stacked.py records a stacked counter's steps so, deferred).
        When the first call leaves the groups' rows kept lazily (:class:`_Prefix`; it compared the row's bits with
        those kept) and the rest would each take record_groups' fast path (the same groups and key fields, ``row``'s
        next values finite), the rest are recorded at once: their coefficients appended, their order entries and runs extended as the
        calls would; otherwise each is a call of :meth:`record_groups` (which checks and refuses as it does)."""
        count = int(count)
        if count <= 0:
            return
        groups = list(groups)
        lo, hi = int(lo), int(hi)
        row = np.asarray(row, dtype=float)

        def weights(i: int) -> list:
            return [row[:hi + i - lo + 1][::-1]] * len(groups)

        self.record_groups(groups, users=(lo, hi), mechanism=mechanism, scale=scale, shape=shape, batch=batch,
                           weights=weights(0))
        if count == 1:
            return
        memo = self._groups_memo
        p = None if memo is None or not memo[3] else self._lazy.get(memo[2][0])
        last = hi + count - 1
        fast = (p is not None and memo[0] == (groups, mechanism, scale, shape, batch) and p.lo == lo
                and p.n == hi - lo + 1 and row.ndim == 1 and row.shape[0] >= last - lo + 1 and last <= MAX_COUNT
                and len(p.keys) == len(memo[2]) and all(self._lazy.get(wk) is p for wk in memo[2]))
        if fast:   # the first call kept its row lazily (p.n is its length): p.coef holds row[:p.n]'s bits
            new = row[p.n:p.n + count - 1]
            fast = bool(np.isfinite(new).all())
        if not fast:
            for i in range(1, count):
                self.record_groups(groups, users=(lo, hi + i), mechanism=mechanism, scale=scale, shape=shape,
                                   batch=batch, weights=weights(i))
            return
        p.extend(new, hi + 1)
        self._append_draws_steps(memo[1], lo, hi + 1, count - 1)

    def _append_draws_steps(self, keys, lo: int, hi: int, count: int) -> None:
        """:meth:`_append_draws` of ``keys`` (distinct) over users (lo, hi + i) for i = 0..count - 1, in order. After
        the first, no step continues a key's open run (lo is fixed and the open run starts at lo, or continues from
        below it), so each closes it and opens its own: appended as columns."""
        self._append_draws(keys, lo, hi)
        if count == 1:
            return
        rest = count - 1
        self._pending.extend(list(keys) * rest)
        on_, olo, ohi = self._on, self._olo, self._ohi
        mid = range(hi + 1, hi + rest)          # the closed runs (lo, h, 1) of the steps between
        for k in keys:
            rlo, rhi, rn = self._rlo[k], self._rhi[k], self._rn[k]
            rlo.append(olo[k])
            rhi.append(ohi[k])
            rn.append(on_[k])
            rlo.extend(repeat(lo, rest - 1))
            rhi.extend(mid)
            rn.extend(repeat(1, rest - 1))
            olo[k], ohi[k], on_[k] = lo, hi + rest, 1
        if len(self._pending) >= _FLUSH:
            self._flush()

    def _append_draw(self, k: int, lo: int, hi: int) -> None:
        """One draw of key ``k`` over users lo..hi: its order entry and its run (the tail of :meth:`record` and
        :meth:`record_groups`)."""
        pending = self._pending
        pending.append(k)
        if len(pending) >= _FLUSH:
            self._flush()
        on = self._on[k]
        if on and lo == self._olo[k] + on and hi == self._ohi[k] + on:
            self._on[k] = on + 1
        else:
            if on:
                self._rlo[k].append(self._olo[k])
                self._rhi[k].append(self._ohi[k])
                self._rn[k].append(on)
            self._olo[k], self._ohi[k], self._on[k] = lo, hi, 1

    def _append_draws(self, keys, lo: int, hi: int) -> None:
        """:meth:`_append_draw` of each key of ``keys`` in order, over the same users lo..hi."""
        pending = self._pending
        pending.extend(keys)
        on_, olo, ohi = self._on, self._olo, self._ohi
        for k in keys:
            on = on_[k]
            if on and lo == olo[k] + on and hi == ohi[k] + on:
                on_[k] = on + 1
            else:
                if on:
                    self._rlo[k].append(olo[k])
                    self._rhi[k].append(ohi[k])
                    self._rn[k].append(on)
                olo[k], ohi[k], on_[k] = lo, hi, 1
        if len(pending) >= _FLUSH:
            self._flush()

    def _flush(self) -> None:
        """Move the staged order entries into the numpy column."""
        p = self._pending
        if p:
            need = self._n + len(p)
            self._order = _grown(self._order, need)
            self._order[self._n:need] = p
            self._n = need
            p.clear()

    def _orders(self) -> np.ndarray:
        """The order column (a view: read it before recording more)."""
        self._flush()
        return self._order[:self._n]

    def _append_order(self, k, count: int) -> None:
        self._flush()
        need = self._n + count
        self._order = _grown(self._order, need)
        self._order[self._n:need] = k
        self._n = need

    def _add_runs(self, k: int, lo: np.ndarray, hi: np.ndarray, n: np.ndarray) -> None:
        """Append runs (int64 arrays, in order) to key ``k``, joining the first to the open run when it continues
        it; the last becomes the open run."""
        if lo.size == 0:
            return
        start = 0
        on = self._on[k]
        if on and int(lo[0]) == self._olo[k] + on and int(hi[0]) == self._ohi[k] + on:
            on += int(n[0])
            self._on[k] = on
            start = 1
            if lo.size == 1:
                return
        if on:   # the open run is closed: the last of the new runs becomes the open one
            self._rlo[k].append(self._olo[k])
            self._rhi[k].append(self._ohi[k])
            self._rn[k].append(on)
        for col, x in ((self._rlo[k], lo), (self._rhi[k], hi), (self._rn[k], n)):
            col.frombytes(np.ascontiguousarray(x[start:-1], dtype=np.int64).tobytes())
        self._olo[k], self._ohi[k], self._on[k] = int(lo[-1]), int(hi[-1]), int(n[-1])

    def _check_key(self, key) -> int:
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)) \
                or not 0 <= int(key) < len(self._keys):
            raise PrivacctError(f"key must be an index returned by this ledger's key(), got {key!r}")
        k = int(key)
        if self._keys[k][5]:
            raise PrivacctError("a weighted key cannot be recorded in bulk: record weighted draws with record(weights=)")
        return k

    def record_many(self, key, lo, hi) -> None:
        """Record a chunk of unweighted draws in one call: draw j covers users ``lo[j]..hi[j]``.

        ``key``: one index from :meth:`key` for every draw, or an array of such indices, one per draw
        (a chunk whose draws alternate between keys, e.g. the local-model messages of several groups
        per episode, in the order the per-draw :meth:`record` calls would have made them). The ledger is
        the same, draw for draw and in order, as that sequence of :meth:`record` calls. Everything is
        checked before anything is recorded."""
        lo = _user_array("lo", lo)
        hi = _user_array("hi", hi, lo.size)
        if np.any(hi < lo):
            j = int(np.flatnonzero(hi < lo)[0])
            raise PrivacctError(f"draw {j}: users must be an interval lo <= hi, got ({int(lo[j])}, {int(hi[j])})")
        keys = np.asarray(key)
        if keys.ndim == 0:
            k = self._check_key(key if keys.dtype == object else keys.item())
            if lo.size:
                self._add_runs(k, *_runs_of(lo, hi))
                self._append_order(k, lo.size)
            return
        if keys.shape != lo.shape:
            raise PrivacctError(f"key must be one index or one index per draw ({lo.size}), got shape {keys.shape}")
        if keys.size == 0:
            return
        uniq = [self._check_key(k) for k in np.unique(keys).tolist()]
        keys = keys.astype(np.int64)
        for k in uniq:
            sel = keys == k
            self._add_runs(k, *_runs_of(lo[sel], hi[sel]))
        self._flush()
        need = self._n + lo.size
        self._order = _grown(self._order, need)
        self._order[self._n:need] = keys
        self._n = need

    def record_run(self, key, first: int, last: int) -> None:
        """Record one draw for each single user ``first..last``: users (u, u) for u = first, ..., last, in
        that order (the local-model pattern), as one run: the same ledger as ``last - first + 1`` calls of
        :meth:`record` with ``users=(u, u)``."""
        k = self._check_key(key)
        first, last = int(first), int(last)
        if first < 1 or last < first or last > MAX_COUNT:
            raise PrivacctError(f"record_run needs 1 <= first <= last <= {MAX_COUNT}, got ({first}, {last})")
        n = last - first + 1
        self._add_runs(k, np.array([first], dtype=np.int64), np.array([first], dtype=np.int64),
                       np.array([n], dtype=np.int64))
        self._append_order(k, n)

    @staticmethod
    def _grown_weights(acc: list[np.ndarray] | None, hi: int) -> list[np.ndarray]:
        """``acc`` (the per-user [sum w^2, sum |w|] of a key, or None) holding at least ``hi`` users: itself, or a
        new pair (doubled, the values copied)."""
        if acc is not None and acc[0].size >= hi:
            return acc
        n = max(hi, 2 * (acc[0].size if acc is not None else 0))
        grown = [np.zeros(n), np.zeros(n)]
        if acc is not None:
            grown[0][:acc[0].size] = acc[0]
            grown[1][:acc[1].size] = acc[1]
        return grown

    def _shared_with_others(self, acc, keys) -> bool:
        """Whether a key other than ``keys`` holds the very sums ``acc`` (record_groups shares them)."""
        for k, v in self._weighted.items():
            if v is acc and k not in keys:
                return True
        return False

    def _add_weights(self, key: tuple[str, str, float], lo: int, sq: np.ndarray, ab: np.ndarray) -> None:
        acc = self._weighted.get(key)
        hi = lo + sq.size - 1
        grown = self._grown_weights(acc, hi)
        if grown is acc and len(self._weighted) > 1 and self._shared_with_others(acc, (key,)):
            grown = [acc[0].copy(), acc[1].copy()]   # sums shared with other groups (record_groups): copy on write
        if grown is not acc:
            acc = self._weighted[key] = grown
        acc[0][lo - 1:hi] += sq
        acc[1][lo - 1:hi] += ab

    def extend(self, other: "Ledger") -> None:
        """Append every draw of ``other`` (in its order) and its weighted sums."""
        if other is self:
            other = self._copy()
        mapping = np.array([self._intern(*key) for key in other._keys], dtype=np.int64)
        for k_other in range(len(other._keys)):
            if other._on[k_other]:
                self._add_runs(int(mapping[k_other]), *other._runs(k_other))
        order = other._orders()
        if order.size:
            self._flush()
            need = self._n + order.size
            self._order = _grown(self._order, need)
            self._order[self._n:need] = mapping[order]
            self._n = need
        for key, (sq, ab) in other._weighted.items():
            self._add_weights(key, 1, sq, ab)

    @staticmethod
    def chain(*parts: "Ledger") -> "LedgerChain":
        """A read-only view of ``parts`` one after the other, reading as a ledger that extended them in order,
        without copying their draws (:class:`LedgerChain`)."""
        return LedgerChain(*parts)

    def _copy(self) -> "Ledger":
        """An independent copy (same draws, same order, same weighted sums)."""
        out = type(self)()
        out._keys, out._index = list(self._keys), dict(self._index)
        out._order, out._n = self._orders().copy(), self._n
        out._rlo, out._rhi, out._rn = ([array("q", a) for a in col] for col in (self._rlo, self._rhi, self._rn))
        out._olo, out._ohi, out._on = list(self._olo), list(self._ohi), list(self._on)
        out._weighted = {k: [v[0].copy(), v[1].copy()] for k, v in self._weighted.items()}
        return out

    # ------------------------------------------------------------------ reading
    def _run_parts(self, k: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The runs of key ``k`` as (lo, hi, n) pieces in order: read-only views of the closed-run columns, then the
        open run. Views: use them before the ledger records again (an exported column cannot grow)."""
        if not self._on[k]:
            return []
        parts = []
        if len(self._rn[k]):
            parts.append(tuple(np.frombuffer(c, dtype=np.int64) for c in (self._rlo[k], self._rhi[k], self._rn[k])))
        parts.append((np.array([self._olo[k]], dtype=np.int64), np.array([self._ohi[k]], dtype=np.int64),
                      np.array([self._on[k]], dtype=np.int64)))
        return parts

    def _runs(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lo, hi, n) of every run of key ``k``, the open one last (fresh int64 arrays)."""
        parts = self._run_parts(k)
        if not parts:
            return _int64s(self._rlo[k]), _int64s(self._rhi[k]), _int64s(self._rn[k])
        lo, hi, n = (np.concatenate(c) for c in zip(*parts, strict=True))
        return lo, hi, n

    def _draws_of(self, k: int) -> int:
        return int(np.frombuffer(self._rn[k], dtype=np.int64).sum()) + self._on[k] if len(self._rn[k]) else self._on[k]

    def _active(self) -> list[int]:
        """Indices of the keys with at least one draw (a key's open run exists from its first draw on)."""
        return [k for k, on in enumerate(self._on) if on]

    def _counts(self, ks: Sequence[int]) -> np.ndarray:
        """Per-user draw counts over the keys ``ks`` (index 0 is user 1; length: the last user drawn)."""
        parts = [p for k in ks for p in self._run_parts(k)]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return _counts_of_runs(parts, max(int((hi + n - 1).max()) for _, hi, n in parts))

    def draws(self) -> Iterator[Draw]:
        """Every draw as a :class:`Draw`, in the order recorded (built lazily from the columns)."""
        order = self._orders().tolist()
        cur: dict[int, list] = {}
        for k in set(order):
            lo, hi, n = self._runs(k)
            g, m, s, shape, batch, _ = self._keys[k]
            cur[k] = [lo.tolist(), hi.tolist(), n.tolist(), 0, 0, g, m, s, shape, batch]
        for k in order:
            c = cur[k]
            r, j = c[3], c[4]
            yield Draw(c[5], c[0][r] + j, c[1][r] + j, c[6], c[7], c[8], c[9])
            j += 1
            if j == c[2][r]:
                c[3], c[4] = r + 1, 0
            else:
                c[4] = j

    def __iter__(self) -> Iterator[Draw]:
        return self.draws()

    def groups(self) -> list[str]:
        return sorted({self._keys[k][0] for k in self._active()})

    def per_user_counts(self, group: str, *, scale: float | None = None) -> np.ndarray:
        """Draw counts per user for ``group`` (index 0 is user 1), optionally for one scale only.

        Difference array over the intervals: O(draws + users) (O(runs + users) on the columns).
        """
        return self._counts([k for k in self._active()
                             if self._keys[k][0] == group and (scale is None or self._keys[k][2] == scale)])

    def per_user_norms(self, group: str, mechanism: str, scale: float) -> np.ndarray:
        """Per-user weight norm of (group, mechanism, scale): sqrt(sum w^2) for Gaussian noise,
        sum |w| for Laplace, an unweighted draw counting w = 1 (index 0 is user 1)."""
        ks = [k for k in self._active() if self._keys[k][0] == group and self._keys[k][1] == mechanism
              and self._keys[k][2] == scale and not self._keys[k][5]]
        counts = self._counts(ks)
        acc = self._weighted.get((group, mechanism, float(scale)))
        n = max(counts.size, 0 if acc is None else acc[0].size)
        total = np.zeros(n)
        total[:counts.size] += counts    # exact: counts are integers below 2^53
        laplace = mechanism == "laplace"
        if acc is not None:
            total[:acc[0].size] += acc[1] if laplace else acc[0]
        return total if laplace else np.sqrt(total)

    def usage(self) -> list[GroupUsage]:
        """The worst user of every (group, mechanism, scale) that ran."""
        active = self._active()
        draws: dict[tuple[str, str, float], int] = {}
        for k in active:
            g, m, s = self._keys[k][:3]
            draws[(g, m, s)] = draws.get((g, m, s), 0) + self._draws_of(k)
        out = []
        for g, m, s in sorted(draws):
            counts = self.per_user_counts(g, scale=s)
            u = int(np.argmax(counts))
            out.append(GroupUsage(g, m, s, u + 1, int(counts[u]), draws[(g, m, s)]))
        return out

    def executed_log(self, declared: MechanismLog) -> MechanismLog:
        """The log of what ran: declared sensitivities, executed scales and worst-user counts.

        Each (group, scale) that ran becomes a ``repeated(count)`` group with the worst user's
        count. Draws whose group the declared log does not name are an error (nothing can be
        assumed about their sensitivity). Declared groups that never ran are dropped.
        """
        usage = self.usage()
        if not usage:
            raise PrivacctError("the ledger is empty: no noise was drawn through privacct primitives")
        groups: list[ReleaseGroup] = []
        declared_names = {g.name for g in declared.release_groups}
        for u in usage:
            if u.group not in declared_names:
                raise PrivacctError(f"ledger group {u.group!r} is not declared in log {declared.name!r}")
            dg = declared.group(u.group)
            if u.mechanism != dg.mechanism:
                raise PrivacctError(
                    f"ledger group {u.group!r} ran mechanism {u.mechanism!r} but the log declares {dg.mechanism!r}"
                )
            name = u.group if sum(1 for v in usage if v.group == u.group) == 1 else f"{u.group}@scale={u.scale:g}"
            if (u.group, u.mechanism, float(u.scale)) in self._weighted:
                groups.append(self._weighted_group(name, dg, u))
                continue
            groups.append(ReleaseGroup(name, dg.mechanism, u.scale, dg.sensitivity, Structure.repeated(u.count),
                                       dg.dimension, f"executed: worst user {u.worst_user}, {u.draws} draws", dg.paper))
        return declared.replace_groups(groups)

    def _weighted_group(self, name: str, dg: ReleaseGroup, u: GroupUsage) -> ReleaseGroup:
        """One release whose sensitivity is the declared step sensitivity times the worst user's
        weight norm (raised by 2^-40 for the rounding of the float sums; docs/counters.md#ledger)."""
        from .accounting.base import _product_up

        norms = self.per_user_norms(u.group, u.mechanism, u.scale)
        worst = int(np.argmax(norms))
        mult = float(norms[worst]) * (1.0 + 2.0**-40)
        sens = Sensitivity(dg.sensitivity.norm, _product_up(dg.sensitivity.value, mult),
                           f"executed: declared {dg.sensitivity.value!r} x weight norm {mult!r} of user {worst + 1}")
        return ReleaseGroup(name, dg.mechanism, u.scale, sens, Structure.single(), dg.dimension,
                            f"executed: worst user {worst + 1}, {u.draws} weighted draws", dg.paper)

    def _shapes(self) -> Iterable[tuple[str, str, tuple[int, ...]]]:
        """(group, mechanism, shape) of every key that ran."""
        return ((self._keys[k][0], self._keys[k][1], self._keys[k][3]) for k in self._active())


def _tree_draws(c: int, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of the nodes of steps first .. first + count - 1 of a tree over users c + 1, c + 2, ..."""
    t = np.arange(first, first + count, dtype=np.int64)
    hi = t + c
    return hi - (t & -t) + 1, hi


@lru_cache(maxsize=2)
def _tree_counts(count: int) -> np.ndarray:
    """Per leaf 1..count, the nodes of steps 1..count holding it (:meth:`Ledger._counts`; read-only, cached:
    a run's trees of one length share it)."""
    leaf = np.arange(count, dtype=np.int64)   # u - 1
    out = np.zeros(count, dtype=np.int64)
    for i in range(count.bit_length()):
        j = leaf >> i
        out += ((j & 1) == 0) & (((j + 1) << i) <= count)
    out.setflags(write=False)
    return out


class Ledger(_RunLedger):
    """An append-only record of noise draws, kept in compact columns (module docstring: Storage), a binary tree's
    node draws kept as (offset, count) per key (module docstring: Tree runs).

    Record one draw with :meth:`record`; a chunk of draws with :meth:`key` then :meth:`record_many`
    or :meth:`record_run`. ``len(ledger)`` is the number of draws; :meth:`draws` (or iterating the
    ledger) yields them as :class:`Draw` objects in the order they were recorded."""

    def __init__(self) -> None:
        super().__init__()
        #: key -> [c, count]: the key's draws are the nodes of steps 1..count of a tree over users c + 1, ...
        self._tree: dict[int, list[int]] = {}

    def __setstate__(self, state: dict) -> None:
        state.setdefault("_tree", {})
        super().__setstate__(state)

    # ------------------------------------------------------------------ recording
    def _untree(self, k: int) -> None:
        """Key ``k`` back to ordinary runs: its tree draws written out as the base ledger would hold them."""
        c, count = self._tree.pop(k)
        self._on[k] = 0
        super()._add_runs(k, *_runs_of(*_tree_draws(c, 1, count)))

    def _continues(self, k: int, lo: np.ndarray, hi: np.ndarray) -> bool:
        """Whether draws (lo, hi) of key ``k`` continue its tree (or start one on a key without draws); updates it."""
        got = self._tree.get(k)
        if got is None:
            if self._on[k] or lo.size == 0 or lo[0] != hi[0]:
                return False
            got = [int(hi[0]) - 1, 0]       # step 1 is the one-user node (c + 1, c + 1)
        c, count = got
        want_lo, want_hi = _tree_draws(c, count + 1, lo.size)
        if not (np.array_equal(lo, want_lo) and np.array_equal(hi, want_hi)):
            return False
        got[1] = count + lo.size
        self._tree[k] = got
        self._on[k] = got[1]   # nonzero: the key has draws (the base ledger's readers ask _on for that)
        return True

    def _append_draw(self, k: int, lo: int, hi: int) -> None:
        got = self._tree.get(k)
        if got is None and not self._on[k] and lo == hi:    # a key's first draw, a one-user node: a tree's step 1
            got = self._tree[k] = [hi - 1, 0]
        if got is not None:
            t = got[1] + 1
            if hi == got[0] + t and lo == hi - (t & -t) + 1:
                got[1] = self._on[k] = t
                self._pending.append(k)
                if len(self._pending) >= _FLUSH:
                    self._flush()
                return
            if got[1] == 0:
                del self._tree[k]
            else:
                self._untree(k)
        super()._append_draw(k, lo, hi)

    def _append_draws(self, keys, lo: int, hi: int) -> None:
        for k in keys:
            if k in self._tree:
                self._untree(k)
        super()._append_draws(keys, lo, hi)

    def _add_runs(self, k: int, lo: np.ndarray, hi: np.ndarray, n: np.ndarray) -> None:
        if lo.size and bool((n == 1).all()) and self._continues(k, lo, hi):
            return
        if k in self._tree:
            self._untree(k)
        super()._add_runs(k, lo, hi, n)

    def _copy(self) -> "Ledger":
        out = super()._copy()
        out._tree = {k: list(v) for k, v in self._tree.items()}
        return out

    # ------------------------------------------------------------------ reading
    def _run_parts(self, k: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        got = self._tree.get(k)
        if got is None:
            return super()._run_parts(k)
        lo, hi = _tree_draws(got[0], 1, got[1])
        return [(lo, hi, np.ones(lo.size, dtype=np.int64))]

    def _runs(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if k in self._tree:
            return self._run_parts(k)[0]
        return super()._runs(k)

    def _counts(self, ks) -> np.ndarray:
        """Per-user draw counts over the keys ``ks`` (the base ledger's), a tree key's counted without its runs: leaf u
        lies in the level-i node of its aligned block [j 2^i + 1, (j + 1) 2^i] (j = (u - 1) >> i) iff that block is a
        node, i.e. (j + 1) 2^i has lowest set bit 2^i (j even), completed by step count ((j + 1) 2^i <= count)."""
        trees = [self._tree[k] for k in ks if k in self._tree]
        if not trees:
            return super()._counts(ks)
        rest = super()._counts([k for k in ks if k not in self._tree])
        out = np.zeros(max([rest.size] + [c + count for c, count in trees]), dtype=np.int64)
        out[:rest.size] += rest
        for c, count in trees:
            out[c:c + count] += _tree_counts(count)
        return out

    def _draws_of(self, k: int) -> int:
        got = self._tree.get(k)
        return got[1] if got is not None else super()._draws_of(k)



class LedgerChain(Ledger):
    """A read-only view of finished ledgers one after the other: every reading (draws, counts, norms, usage,
    executed log, ``check_ledger``) equals that of a fresh :class:`Ledger` that ``extend``-ed the parts in order,
    without copying their draws (docs/performance.md#design-a-compact-ledger-item-2, item 3: private-lsvi-ucb's
    seeds share one tree ledger and own a small y ledger each).

    It holds references to its parts, so a part must not record after the view is made: a view whose parts
    have grown refuses to be read. Per key the view keeps the total draw count and, for weighted keys, the per-user
    sums: the part's own arrays when one part holds the key (referenced, never written), else their sums (O(users),
    as a copy would); the runs and the order column are read from the parts when asked.
    Recording into the view is refused. Build it with :meth:`Ledger.chain`."""

    def __init__(self, *parts: Ledger) -> None:   # noqa: D107  (the parts, in order)
        super().__init__()
        for p in parts:
            if not isinstance(p, _RunLedger):
                raise PrivacctError(f"a ledger chain joins ledgers, got {type(p).__name__}")
        self._parts = tuple(parts)
        self._sizes = tuple(len(p) for p in parts)
        self._maps: list[np.ndarray] = []
        for p in parts:
            self._maps.append(np.array([self._intern(*key) for key in p._keys], dtype=np.int64))
        self._on = [0] * len(self._keys)
        for p, mapping in zip(parts, self._maps, strict=True):
            for k_part in range(len(p._keys)):
                if p._on[k_part]:
                    self._on[int(mapping[k_part])] += p._draws_of(k_part)
        # the weighted sums: a key held by one part is that part's arrays, referenced (a fresh ledger extending the
        # parts would hold 0 + x = x, of the same size; a chain records nothing and is refused once a part records
        # again, so nothing writes them); a key in several parts is summed into a copy, the additions in the order
        # Ledger.extend makes them (B chains over one shared tree ledger: no copy of its sums per chain)
        borrowed: set = set()
        for p in parts:
            for key, (sq, ab) in p._weighted.items():
                acc = self._weighted.get(key)
                if acc is None:
                    self._weighted[key] = p._weighted[key]
                    borrowed.add(key)
                    continue
                if key in borrowed:
                    self._weighted[key] = [acc[0].copy(), acc[1].copy()]
                    borrowed.discard(key)
                self._add_weights(key, 1, sq, ab)

    def _fresh(self) -> None:
        if tuple(len(p) for p in self._parts) != self._sizes:
            raise PrivacctError("a part of this ledger chain recorded after the chain was made: build the chain again")

    def __len__(self) -> int:
        return sum(self._sizes)

    def _refuse(self, *args, **kwargs) -> None:
        raise PrivacctError("a ledger chain is a read-only view: record into one of its parts before chaining")

    key = record = record_groups = record_many = record_run = extend = _refuse   # type: ignore[assignment]

    def _copy(self) -> "Ledger":
        out = Ledger()
        for p in self._parts:
            out.extend(p)
        return out

    def _run_parts(self, k: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        self._fresh()
        return [piece for p, mapping in zip(self._parts, self._maps, strict=True)
                for k_part in np.flatnonzero(mapping == k).tolist() for piece in p._run_parts(k_part)]

    def _draws_of(self, k: int) -> int:
        return self._on[k]

    def _active(self) -> list[int]:
        self._fresh()
        return super()._active()

    def _orders(self) -> np.ndarray:
        self._fresh()
        cols = [mapping[p._orders()] for p, mapping in zip(self._parts, self._maps, strict=True)]
        return np.concatenate(cols).astype(self._order.dtype) if cols else self._order[:0]

    def draws(self) -> Iterator[Draw]:
        self._fresh()
        for p in self._parts:
            yield from p.draws()


def independent_values(mechanism: str, shape: tuple[int, ...]) -> int:
    """Independent noise values in one draw: the product of the shape, except a symmetric
    Gaussian matrix draw of shape (..., d, d), which noises d(d+1)/2 values per matrix."""
    if mechanism == "symmetric-gaussian-matrix":
        d = shape[-1]
        return int(np.prod(shape[:-2], dtype=np.int64)) * d * (d + 1) // 2
    return int(np.prod(shape, dtype=np.int64))


def shape_problems(declared: MechanismLog, ledger: Ledger) -> list[str]:
    """Draws that noise fewer (or more) independent values than their group's declared
    ``dimension``: e.g. one noise value shared by all (s, a) pairs, or a Gram matrix noised
    without symmetrising. Groups that declare no dimension are not checked."""
    dims = {g.name: g.dimension for g in declared.release_groups}
    out = []
    for group, mech, shape in dict.fromkeys(ledger._shapes()):
        want = dims.get(group)
        got = independent_values(mech, shape)
        if want is not None and got != want:
            out.append(f"group {group!r}: a draw noised {got} independent values, the log declares dimension {want}")
    return sorted(set(out))


def check_ledger(declared: MechanismLog, ledger: Ledger, *, delta: float | None = None,
                 accountant: str | None = None, rtol: float = 1e-9) -> "LedgerCheck":
    """Account the declared log and the ledger's executed log with the same accountant.

    ``delta`` defaults to :func:`privacct.accounting.default_delta` of the declared log (the
    claim's delta; without a claim 0 for a pure log, 1e-6 otherwise; a Gaussian log claiming
    delta = 0 has no finite epsilon there, so pass ``delta`` explicitly for it); ``accountant``
    defaults to the tightest that applies to both logs. The check passes when the executed
    epsilon does not exceed the declared one by more than a relative ``rtol`` (default 1e-9).

    Why a tolerance, and why relative: both epsilons are float figures of upper bounds derived by
    different routes (the declared multiplier from closed forms raised by their own margins, the
    executed one from the recorded weights raised by 2^-40 and, for a factorized counter, by an
    a-posteriori bound on the solve of R_exec, about 2.7e-10 relative at K = 10^4;
    docs/counters.md#ledger), then through the same accountant's root finding. For a correct
    counter the executed figure is at most the declared one except where the declared margin is
    smaller than the ledger's 2^-40 (sqrt-toeplitz below K = 23), where it exceeds it by up to
    1.04e-12 relative (measured, K = 1..39, Gaussian and Laplace), so exact comparison would flag
    correct code; the bugs the check is for (a count, a scale, a noise path) move epsilon by far
    more than 1e-9. The tolerance only decides ``ok``: ``executed_epsilon`` is reported as
    computed, never lowered to the declared figure.
    """
    from .accounting import default_delta, tightest_epsilon  # local import: accounting imports log, not ledger

    executed = ledger.executed_log(declared)
    if delta is None:
        delta = default_delta(declared)
    name_d, eps_d = tightest_epsilon(declared, delta=delta, accountant=accountant)
    name_e, eps_e = tightest_epsilon(executed, delta=delta, accountant=accountant or name_d)
    counts = {g.name: g.per_user_count for g in declared.release_groups}
    ran = {g.name: g.per_user_count for g in executed.release_groups}
    problems = shape_problems(declared, ledger)
    return LedgerCheck(declared_epsilon=eps_d, executed_epsilon=eps_e, accountant=name_e, delta=delta,
                       declared_counts=counts, executed_counts=ran,
                       ok=bool(eps_e <= eps_d * (1 + rtol)) and not problems, executed_log=executed,
                       shape_problems=problems)


@dataclass(frozen=True)
class LedgerCheck:
    """Declared vs executed: the per-user epsilon of the log and of what really ran."""

    declared_epsilon: float
    executed_epsilon: float
    accountant: str
    delta: float
    declared_counts: dict
    executed_counts: dict
    ok: bool
    executed_log: MechanismLog
    shape_problems: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "shape_problems": self.shape_problems,
            "accountant": self.accountant,
            "delta": self.delta,
            "declared_epsilon": self.declared_epsilon,
            "executed_epsilon": self.executed_epsilon,
            "declared_counts": self.declared_counts,
            "executed_counts": self.executed_counts,
        }


__all__ = ["Draw", "GroupUsage", "Ledger", "LedgerCheck", "check_ledger", "independent_values", "shape_problems"]
