"""The stacked tree counter: H binary-tree counters of one configuration stepped as one (issue 23 item 3).

A learner with H per-step statistics released through H :class:`privacct.mechanisms.TreeCounter` (the batched
linear-MDP learners' H Gram trees over their batch leaves, algorithms/linear_mdp/batched_jdp.py) makes, at every
addition, H node draws (one generator call per seed each), H ledger records and H rounds of the tree's arithmetic
on (B, *shape) arrays. :class:`StackedTreeCounters` steps them together: per addition, per seed ONE generator call
of H x m values (:func:`privacct.counters.stacked.stacked_noise`), the H ledger records in counter order, and ONE
round of Chan, Shi, Song's (2011, Alg. 2) arithmetic on (levels, H, B, *shape) arrays
(docs/performance.md#built-for-the-binary-trees-the-batched-learners-h-gram-trees-issue-23-item-3).

Same bytes: the H trees complete the node of the same level at every step (they add together), and per seed their
draws are consecutive calls on the seed's generator (nothing else draws from it between them); numpy's
``standard_normal`` / ``standard_exponential`` fill an ``out`` array value after value, so one call of H x m values
consumes the stream in the same order and gives the same values (laid out (counter, values), (counter, 2, values) for
Laplace: the layout of H separate :func:`privacct.mechanisms.symmetric_gaussian` / :func:`~privacct.mechanisms.laplace`
draws). The tree's arithmetic is elementwise, and its sums over levels (``alpha[:i].sum(axis=0)``) reduce the outer
axis, one level after another from level 0, whatever the trailing axes: each element sees the same floating-point
operations in the same order (tests/privacct/counters/test_stacked_tree.py checks releases, ledgers and generator
states against H separate counters; tests/algorithms/linear_mdp/test_batched_stacked_tree.py the learners' runs).

The counters stay the state's owners: their arrays become views into the stacked ones (every update of
:meth:`TreeCounter.add` is in place), so ``noisy_sum()``, ``exact_sum()`` and an addition made one by one through
``counter.add`` read and write the same state. Stacked only exact :class:`TreeCounter` objects with the class's own
(unpatched) methods and :mod:`privacct.mechanisms`' own draws (a test or audit that replaces ``draw`` sees every draw),
one batch of generators, one ledger, and one shape, mechanism, scale, leaf count and leaf-user map, at the same step
(the configuration checked at the first addition; the methods, the draws and the common step at every addition).
Every other case, and every addition made while an audit's tap or an action pin is active (:mod:`privacct.tap`: they
observe each draw and each leaf), goes through the H counters one by one.
"""

from __future__ import annotations


import numpy as np

from .. import mechanisms as M
from ..errors import PrivacctError
from ..mechanisms import TreeCounter
from ..tap import current as current_tap
from ..tap import current_pin
from .as_loaded import AsLoaded
from .stacked import stacked_noise

#: TreeCounter's methods and the mechanisms' draws a stacked step stands for, as imported: a patched one is not stacked
_METHOD_NAMES = ("add", "begin_addition", "note_addition", "node_noise", "node_users", "noisy_sum")
_LOADED = AsLoaded((TreeCounter, _METHOD_NAMES), (M, ("draw", "symmetric_gaussian", "laplace", "gaussian", "_record")))

_STATE = ("_alpha", "_noise", "_exact", "_release")


class StackedTreeCounters:
    """H :class:`TreeCounter` (``counters``, in their ledger order) added to together: :meth:`add` takes ``x`` of shape
    (B, H, *shape) and returns the H releases as (B, H, *shape), the same bytes, draws and ledger records as
    ``counters[h].add(x[:, h])`` for h = 0..H-1 (module docstring)."""

    def __init__(self, counters) -> None:
        self.counters = list(counters)
        if not self.counters:
            raise PrivacctError("StackedTreeCounters needs at least one counter")
        self._full: dict[str, np.ndarray] | None = None   # the stacked state, once moved (first stacked addition)
        self._config_ok: bool | None = None                # the counters' configuration, checked at the first addition
        self.stacked_steps = 0                             # additions made stacked (for tests)

    def _stackable(self) -> bool:
        """Whether this addition runs stacked: the counters' configuration checked once (at the first addition), the
        class's methods and the mechanisms' draws (unpatched) and the counters' common step at every addition."""
        cs = self.counters
        if self._config_ok is None:
            self._config_ok = self._same_configuration()
        if not self._config_ok or not _LOADED.unchanged():
            return False
        t = cs[0].steps
        return all(c.steps == t for c in cs)

    def _same_configuration(self) -> bool:
        cs = self.counters
        c0 = cs[0]
        if len(cs) < 2 or any(type(c) is not TreeCounter for c in cs):
            return False
        if c0.mechanism not in ("symmetric-gaussian-matrix", "laplace", "gaussian"):
            return False
        first = (c0.shape, c0.mechanism, c0.scale, c0.leaves, c0.first_user, c0.leaf_users, c0.steps, c0.levels)
        for c in cs:
            if any(n in vars(c) for n in _METHOD_NAMES):        # an instance's own method
                return False
            if (c.shape, c.mechanism, c.scale, c.leaves, c.first_user, c.leaf_users, c.steps, c.levels) != first:
                return False
            if c.ledger is not c0.ledger or len(c.rngs) != len(c0.rngs) or \
                    any(a is not b for a, b in zip(c.rngs, c0.rngs, strict=True)):
                return False
            if c.ledger is not None and c.group is None:
                return False
        return True

    def _stack_state(self) -> None:
        """Move the counters' state into stacked arrays (H next to the batch axis) and make theirs views of them."""
        self._full, self._views = {}, [{} for _ in self.counters]
        for name in _STATE:
            arrs = [getattr(c, name) for c in self.counters]
            pos = arrs[0].ndim - 1 - len(self.counters[0].shape)   # the batch axis
            full = np.stack(arrs, axis=pos)
            self._full[name] = full
            for h, c in enumerate(self.counters):
                view = full[(slice(None),) * pos + (h,)]
                setattr(c, name, view)
                self._views[h][name] = view

    def add(self, x) -> np.ndarray:
        """The H releases (B, H, *shape) after adding ``x`` (B, H, *shape) (class docstring)."""
        cs = self.counters
        c0 = cs[0]
        x = np.asarray(x, dtype=float)
        H = len(cs)
        if x.shape != (c0.batch, H) + c0.shape:
            raise PrivacctError(f"x must have shape {(c0.batch, H) + c0.shape}, got {x.shape}")
        if current_tap() is not None or current_pin() is not None or not self._stackable():
            return np.stack([c.add(x[:, h]) for h, c in enumerate(cs)], axis=1)
        if c0.steps >= c0.leaves:
            raise PrivacctError(f"tree counter is full: it was built for leaves={c0.leaves} additions")
        if self._full is None:
            self._stack_state()
        f = self._full
        alpha, noise, release = f["_alpha"], f["_noise"], f["_release"]
        t = c0.steps + 1
        for c in cs:
            c.steps = t
        xs = x.swapaxes(0, 1)   # (H, B, *shape)
        i = (t & -t).bit_length() - 1   # TreeCounter.add, on all H trees at once
        if i:
            release -= alpha[:i].sum(axis=0) + noise[:i].sum(axis=0)
        alpha[i] = alpha[:i].sum(axis=0) + xs
        alpha[:i] = 0.0
        noise[:i] = 0.0
        users = c0.node_users(t - (1 << i) + 1, t)
        noise[i] = stacked_noise(c0.mechanism, c0.rngs, H, c0.shape, c0.scale)
        if c0.ledger is not None:   # TreeCounter.node_noise's record, per counter in order
            for c in cs:
                c0.ledger.record(group=c.group, users=users, mechanism=c0.mechanism, scale=c0.scale, shape=c0.shape,
                                 batch=c0.batch)
        f["_exact"] += xs
        release += alpha[i] + noise[i]
        self.stacked_steps += 1
        return release.swapaxes(0, 1).copy()


__all__ = ["StackedTreeCounters"]
