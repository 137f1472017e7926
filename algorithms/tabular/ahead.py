"""Laplace noise drawn ahead for the compiled episode loop (:mod:`.episode_jit`): same stream, same ledger.

:func:`privacct.mechanisms.laplace` draws one node (or one local report) as ``standard_exponential`` of shape
(2, *shape) per seed -- the E1 block, then the E2 block -- and records one ledger draw. A Generator's
standard exponentials are a sequential stream, and the privatizer's noise generators serve nothing else, so one
call per seed of shape (n, 2, *shape) gives the n draws' values in order, byte for byte (tested). The ledger gets the
same records, in the same order, with the same fields, as the n separate draws would have written.

Only for runs outside an audit: with a tap active (:mod:`privacct.tap`) the learner keeps the numpy path, whose
primitives record what the audit observes (as the LDP engine of the linear-mixture learners does).
"""

from __future__ import annotations

import numpy as np

from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.mechanisms import TreeCounter
from privacct.tap import current as current_tap


def _no_tap(what: str) -> None:
    if current_tap() is not None:
        raise PrivacctError(f"{what}: noise drawn ahead cannot serve an audited run (privacct.tap); use the numpy path")


def exponentials(rngs, n: int, dim: int, buffer: np.ndarray | None = None) -> np.ndarray:
    """(B, n, 2, dim) standard exponentials, one generator call per seed: draw j's (2, dim) block is what the j-th of
    n calls of :func:`privacct.mechanisms.laplace` would have drawn. ``buffer`` (flat, at least B n 2 dim floats):
    reused storage (a fresh multi-megabyte array costs its page faults at every call); the result is a view of it."""
    size = len(rngs) * n * 2 * dim
    out = (np.empty(size) if buffer is None else buffer[:size]).reshape(len(rngs), n, 2, dim)
    for b, r in enumerate(rngs):
        r.standard_exponential(out=out[b])
    return out


class TreeAhead(TreeCounter):
    """A Laplace :class:`~privacct.mechanisms.TreeCounter` whose node noise is drawn ahead, n nodes at a time.

    :meth:`draw_ahead` draws the exponentials of the nodes completing at the next n steps and records their
    ledger draws (one per node, users of the node, in step order, the fields :meth:`TreeCounter.node_noise`
    records); the compiled loop (:func:`.episode_jit.run_episodes`, mode 1) then does :meth:`TreeCounter.add`'s
    arithmetic on this counter's own state (``_alpha``, ``_noise``, ``_release``, ``_exact``) and
    :meth:`advance` moves ``steps``. :meth:`noisy_sum`, :meth:`node_sum` and :meth:`exact_sum` read that state as
    usual. Not for audited runs, and not to be mixed with :meth:`add` (which draws its own node noise).
    """

    def __init__(self, shape, *, leaves: int, scale: float, rngs, ledger: Ledger | None = None,
                 group: str | None = None) -> None:
        super().__init__(shape, leaves=leaves, mechanism="laplace", scale=scale, rngs=rngs, ledger=ledger, group=group)
        self.drawn = 0   # nodes drawn ahead so far (steps 1..drawn)

    def draw_ahead(self, n: int, buffer: np.ndarray | None = None) -> np.ndarray:
        """(B, n, 2, *shape) exponentials of the nodes completing at steps ``drawn + 1 .. drawn + n`` (in ``buffer``,
        see :func:`exponentials`)."""
        _no_tap("TreeAhead.draw_ahead")
        if self.drawn != self.steps:
            raise PrivacctError(f"draw_ahead: {self.drawn} nodes drawn but {self.steps} added (advance first)")
        if self.steps + n > self.leaves:
            raise PrivacctError(f"tree counter is full: it was built for leaves={self.leaves} additions")
        out = exponentials(self.rngs, n, int(np.prod(self.shape)), buffer).reshape((self.batch, n, 2) + self.shape)
        if self.ledger is not None:
            for t in range(self.steps + 1, self.steps + n + 1):
                i = (t & -t).bit_length() - 1
                self.ledger.record(group=self.group, users=self.node_users(t - (1 << i) + 1, t), mechanism="laplace",
                                   scale=self.scale, shape=self.shape, batch=self.batch)
        self.drawn += n
        return out

    def advance(self, n: int) -> None:
        """``n`` additions made by the compiled loop with the nodes drawn ahead."""
        if self.steps + n > self.drawn:
            raise PrivacctError(f"advance: {self.steps + n} additions but only {self.drawn} nodes drawn")
        self.steps += n

    def add(self, x) -> np.ndarray:
        raise PrivacctError("TreeAhead adds in the compiled loop (advance); use TreeCounter for add")


def local_ahead(rngs, n: int, dim: int, *, scale: float, first_user: int, ledger: Ledger | None,
                group: str, buffer: np.ndarray | None = None) -> np.ndarray:
    """(B, n, 2, dim) exponentials of the local reports of users ``first_user .. first_user + n - 1`` (each
    :func:`privacct.mechanisms.add_noise` with ``users = (k, k)``), their ledger draws recorded in order."""
    _no_tap("local_ahead")
    out = exponentials(rngs, n, dim, buffer)
    if ledger is not None:
        for k in range(first_user, first_user + n):
            ledger.record(group=group, users=(k, k), mechanism="laplace", scale=float(scale), shape=(dim,),
                          batch=len(rngs))
    return out
