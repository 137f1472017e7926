"""The ledger records of the compiled loop's JDP counters (:func:`.engine._run_compiled`), per chunk of episodes: the
records the numpy loop's counters make, in the same order, with the same fields.

Per episode k <= K - 1 the numpy loop adds to one counter per release group, in the update order, and each addition
records its draws (privacct/counters/counter.py ``FactorizedCounter._draw``, :meth:`privacct.mechanisms.TreeCounter.node_noise`):

* the printed tree: the node completing at step k, users (k - 2^i + 1, k), i the lowest set bit of k;
* ``tree-honaker``: the leaf (k, k), then the nodes (k - 2^i + 1, k), i = 1..nu(k) (unweighted);
* ``blt``: z_k over users (1, k), weighted by row k of the executed encoder, r_(k-1), ..., r_0 (the counter's own
  ``_row_weights``, the probe of its noise path at its first draw; docs/counters.md#ledger). One compiled recursion
  runs for every counter, checked against the first counter's noise path (engine ``_blt_step_ok``), so the first
  counter's probe is every counter's (``FactorizedCounter.share_probe``: same recursion key, refused otherwise).

The unweighted draws go in one :meth:`privacct.ledger.Ledger.record_many` per chunk. The weighted rows are the rows
``record_groups`` keeps lazily for a stacked counter (one shared coefficient array: the per-user sums made at the
first read, the same bits as the eager records, privacct/ledger.py ``_Prefix``): one step of every group at once, the
draws appended in group order; a row that cannot be kept so (not the next prefix) is recorded by
:meth:`privacct.ledger.Ledger.record` per group, as the numpy loop records it. The groups' rows are one array when
every counter runs the same recursion (checked: their executed coefficients' bytes), as a run's counters do; otherwise
every row is recorded per group. The lazy rows go through the ledger's own steps of ``record_groups``' lazy path
(``Ledger._intern``, ``_prefix_step``, ``_append_draws``): ``record_groups`` takes one mechanism, scale and shape for
all its groups, and a step's groups here mix Gram and target groups of several scales.
"""

from __future__ import annotations

import numpy as np

from privacct.errors import PrivacctError
from privacct.ledger import Ledger


def tree_records(ledger: Ledger, keys: np.ndarray, first: int, stop: int) -> None:
    """The binary trees' nodes of episodes first .. stop - 1, one per group (``keys``, in order) per episode."""
    if stop <= first or not keys.size:
        return
    ks = np.arange(first, stop, dtype=np.int64)
    lo = ks - (ks & -ks) + 1
    ledger.record_many(np.tile(keys, ks.size), np.repeat(lo, keys.size), np.repeat(ks, keys.size))


def honaker_records(ledger: Ledger, keys: np.ndarray, first: int, stop: int) -> None:
    """tree-honaker's draws of episodes first .. stop - 1: per episode k, per group (``keys``, in order), the leaf
    (k, k) then the nodes (k - 2^i + 1, k), i = 1..nu(k)."""
    if stop <= first or not keys.size:
        return
    ks = np.arange(first, stop, dtype=np.int64)
    c = np.array([(k & -k).bit_length() for k in ks.tolist()], dtype=np.int64)   # nu(k) + 1 draws per group
    per = c * keys.size
    ep = np.repeat(np.arange(ks.size), per)
    j = np.arange(ep.size) - np.repeat(np.cumsum(per) - per, per)   # index within the episode's draws
    level = j % c[ep]
    k_of = ks[ep]
    ledger.record_many(keys[j // c[ep]], k_of - (np.int64(1) << level) + 1, k_of)


class BltRows:
    """The weighted draws of a run's BLT counters (``counters``: one per group, in the update order), recorded step by
    step (module docstring). Built before the first draw; :meth:`record` after each compiled call."""

    def __init__(self, ledger: Ledger, counters: list) -> None:
        self.ledger, self.counters = ledger, counters
        self.keys = [ledger._intern(c.group, c.mechanism, c.scale, c.shape, c.batch, True) for c in counters]
        self.wkeys = [(c.group, c.mechanism, float(c.scale)) for c in counters]
        self.shared: bool | None = None   # whether every counter's executed row is the first's (known at the probe)

    def record(self, first: int, stop: int) -> None:
        """The draws of steps first .. stop - 1 (stop - 1 <= K - 1), every group's per step."""
        if stop <= first or not self.counters:
            return
        # each counter's own ledger weights at the first step, as its add would take them (FactorizedCounter._row_weights:
        # the refusal of coefficients changed since the probe); the probe of the noise path at the first draw is the
        # first counter's, shared by the others (FactorizedCounter.share_probe: one compiled recursion runs for all, the
        # first counter's path checked against it, engine._blt_step_ok)
        c0 = self.counters[0]
        rows = [c0.implementation.ledger_weights(c0, first)]
        for c in self.counters[1:]:
            if c._executed is None:
                c.share_probe(c0)
            rows.append(c.implementation.ledger_weights(c, first))
        if any(r is None for r in rows):
            raise PrivacctError("a BLT counter of the compiled loop has no ledger weights (no ledger)")
        if self.shared is None:
            r0 = self.counters[0]._executed
            self.shared = all(c._executed.dtype == r0.dtype and c._executed.shape == r0.shape
                              and c._executed.tobytes() == r0.tobytes() for c in self.counters)
        ledger, keys, wkeys = self.ledger, self.keys, self.wkeys
        lazy = self.shared and len(set(wkeys)) == len(wkeys)
        for t in range(first, stop):
            if lazy:
                row = self.counters[0]._executed[:t][::-1]
                if ledger._prefix_step(wkeys, 1, t, row):
                    ledger._append_draws(keys, 1, t)
                    continue
            for c in self.counters:
                ledger.record(group=c.group, users=(1, t), mechanism=c.mechanism, scale=c.scale, shape=c.shape,
                              batch=c.batch, weights=c._executed[:t][::-1])
