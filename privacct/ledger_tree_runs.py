"""A ledger that keeps a binary tree's node draws as one run (issue 23: memory at one seed x K = 10^6; a prototype).

:class:`privacct.ledger.Ledger` keeps, per key, runs (lo, hi, n): n draws (lo + i, hi + i). The local model's draws
(users (k, k), then (k + 1, k + 1)) continue one run and cost their order byte; a binary tree's node draws (Chan, Shi,
Song 2011, Alg. 2; :meth:`privacct.mechanisms.TreeCounter.node_noise`: the node completing at step t covers leaves
t - 2^i + 1 .. t, 2^i the lowest set bit of t) never continue a run, so each costs a closed run, 24 bytes, on top of
its order byte. A learner with 22 tree draws an episode (private-linopt-vi: 4 Gaussian trees per stage, H stages)
holds 2.2 x 10^7 of them at K = 10^6: about 0.6 GB of runs
(docs/performance.md#one-seed-x-k--106-every-learner-issue-23).

:class:`TreeRunLedger` keeps a key whose draws so far are exactly one tree's nodes over users c + 1, c + 2, ...
(the node of step t over users c + t - 2^i + 1 .. c + t, for t = 1, 2, ..., count) as the pair (c, count): its order
bytes only. The first draw that breaks the pattern turns the key back into ordinary runs (the tree's draws written out
once, then the ledger's own bookkeeping). Readers see the same ledger: the runs of a tree key are built when read
(:meth:`_run_parts`: its draws as runs of one draw each, what the base ledger would hold) and its per-user counts
are counted from (c, count) directly (:meth:`_counts`: O(users log K), no runs), so draws, per-user counts and norms,
the executed log and ``check_ledger`` are those of a :class:`~privacct.ledger.Ledger` given the same records
(tests/privacct/test_ledger_tree_runs.py). Listing a tree key's draws (``draws()``, ``extend``) builds its runs while
read (24 bytes a draw).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .ledger import _FLUSH, Ledger, _runs_of


def _tree_draws(c: int, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of the nodes of steps first .. first + count - 1 of a tree over users c + 1, c + 2, ..."""
    t = np.arange(first, first + count, dtype=np.int64)
    hi = t + c
    return hi - (t & -t) + 1, hi


@lru_cache(maxsize=2)
def _tree_counts(count: int) -> np.ndarray:
    """Per leaf 1..count, the nodes of steps 1..count holding it (:meth:`TreeRunLedger._counts`; read-only, cached:
    a run's trees of one length share it)."""
    leaf = np.arange(count, dtype=np.int64)   # u - 1
    out = np.zeros(count, dtype=np.int64)
    for i in range(count.bit_length()):
        j = leaf >> i
        out += ((j & 1) == 0) & (((j + 1) << i) <= count)
    out.setflags(write=False)
    return out


class TreeRunLedger(Ledger):
    """:class:`~privacct.ledger.Ledger` with a binary tree's node draws kept as (offset, count) per key (module
    docstring). Recording and reading as the base class."""

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

    def _copy(self) -> Ledger:
        out = Ledger()
        out.extend(self)
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


__all__ = ["TreeRunLedger"]
