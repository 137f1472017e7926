"""Laplace noise for the compiled episode loops (:mod:`.episode_jit`, :mod:`.po_jit`): same stream, same ledger.

Since the loops draw each episode's exponentials themselves (per seed, from the privatizer's Generators), the
counters here keep the state the loops add to and record the ledger draws per chunk (:meth:`TreeAhead.reserve`,
:meth:`HonakerAhead.reserve`, :meth:`BltAhead.reserve`, :func:`local_records`); :meth:`TreeAhead.draw_ahead` and :func:`local_ahead` still
draw ahead (tests compare them with :func:`privacct.mechanisms.laplace`).

:func:`privacct.mechanisms.laplace` draws one node (or one local report) as ``standard_exponential`` of shape
(2, *shape) per seed -- the E1 block, then the E2 block -- and records one ledger draw. A Generator's
standard exponentials are a sequential stream, and the privatizer's noise generators serve nothing else, so one
call per seed of shape (n, 2, *shape) gives the n draws' values in order, byte for byte (tested). The ledger gets the
same records, in the same order, with the same fields, as the n separate draws would have written.

With a tap active (:mod:`privacct.tap`) these counters refuse to draw, unless the learner's many-trial audit runs
the compiled loop (:func:`bulk_observed`, :mod:`.audited`): it then records what the audit observes itself, in bulk
(the primitives' records, bit for bit); every other audited run keeps the numpy path, whose primitives record it.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator

import numpy as np

from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.counters.blt import Blt
from privacct.counters.counter import FactorizedCounter
from privacct.mechanisms import TreeCounter
from privacct.tap import current as current_tap


#: Set while an audited run's compiled loop records the tap itself (:mod:`.audited`): the counters here may draw.
_BULK: contextvars.ContextVar[bool] = contextvars.ContextVar("tabular_bulk_observed", default=False)


@contextlib.contextmanager
def bulk_observed() -> Iterator[None]:
    """Inside the block an active tap does not stop these counters: the caller (:mod:`.audited`) records what the
    audit observes of their draws itself."""
    token = _BULK.set(True)
    try:
        yield
    finally:
        _BULK.reset(token)


def _tap_free() -> bool:
    """No tap, or one whose records the compiled loop's caller makes (:func:`bulk_observed`)."""
    return current_tap() is None or _BULK.get()


def _no_tap(what: str) -> None:
    if not _tap_free():
        raise PrivacctError(f"{what}: noise drawn ahead cannot serve an audited run (privacct.tap); use the numpy path")


def exponentials(rngs, n: int, dim: int, buffer: np.ndarray | None = None) -> np.ndarray:
    """(B, n, 2, dim) standard exponentials, one generator call per seed: draw j's (2, dim) block is what the j-th of
    n calls of :func:`privacct.mechanisms.laplace` would have drawn. ``buffer`` (flat, at least B n 2 dim floats):
    reused storage (a fresh multi-megabyte array costs its page faults at every call); the result is a view of it.
    Drawn by numba's Generator (:func:`.episode_jit.draw_exponentials`: numpy's ziggurat on the same bit generator,
    the same values, about 1.5x faster per value than numpy's call; tested)."""
    from .episode_jit import draw_exponentials   # numba loads here, not on import

    size = len(rngs) * n * 2 * dim
    out = (np.empty(size) if buffer is None else buffer[:size]).reshape(len(rngs), n, 2, dim)
    for b, r in enumerate(rngs):
        draw_exponentials(r, out[b])
    return out


class _AddedInTheLoop:
    """What :class:`TreeAhead` and :class:`HonakerAhead` share: the compiled loop makes the additions on the counter's
    own state with the draws this side recorded ahead (``drawn`` steps); :meth:`advance` counts them, :meth:`add` is
    refused. ``_unit``: what one recorded step is called in messages; ``_plain``: the counter class that adds itself."""

    _unit = "steps"
    _plain = "a counter"
    drawn: int
    steps: int
    leaves: int

    def _check_reserve(self, n: int, caller: str) -> None:
        """Refuse recording ``n`` more steps before the recorded ones were added, or past ``leaves``."""
        _no_tap(caller)
        if self.drawn != self.steps:
            raise PrivacctError(f"{caller}: {self.drawn} {self._unit} drawn but {self.steps} added (advance first)")
        if self.steps + n > self.leaves:
            raise PrivacctError(f"counter is full: it was built for leaves={self.leaves} additions")

    def advance(self, n: int) -> None:
        """``n`` additions made by the compiled loop with the draws recorded ahead."""
        if self.steps + n > self.drawn:
            raise PrivacctError(f"advance: {self.steps + n} additions but only {self.drawn} {self._unit} drawn")
        self.steps += n

    def add(self, x) -> np.ndarray:
        raise PrivacctError(f"{type(self).__name__} adds in the compiled loop (advance); use {self._plain} for add")


def node_count(t: int) -> int:
    """Draws of tree-honaker's step ``t``: the leaf and the nodes [t - 2^i + 1, t], i = 1..nu(t) (nu: trailing zeros)."""
    return (t & -t).bit_length()


class TreeAhead(_AddedInTheLoop, TreeCounter):
    """A Laplace :class:`~privacct.mechanisms.TreeCounter` whose node noise is drawn ahead, n nodes at a time.

    :meth:`draw_ahead` draws the exponentials of the nodes completing at the next n steps and records their
    ledger draws (one per node, users of the node, in step order, the fields :meth:`TreeCounter.node_noise`
    records); the compiled loop (:func:`.episode_jit.run_episodes`, mode 1) then does :meth:`TreeCounter.add`'s
    arithmetic on this counter's own state (``_alpha``, ``_noise``, ``_release``, ``_exact``) and
    :meth:`advance` moves ``steps``. :meth:`noisy_sum`, :meth:`node_sum` and :meth:`exact_sum` read that state as
    usual. Not for audited runs (but the many-trial audits recorded in bulk, :func:`bulk_observed`), and not to be
    mixed with :meth:`add` (which draws its own node noise).
    """

    _unit = "nodes"
    _plain = "TreeCounter"

    def __init__(self, shape, *, leaves: int, scale: float, rngs, ledger: Ledger | None = None,
                 group: str | None = None) -> None:
        super().__init__(shape, leaves=leaves, mechanism="laplace", scale=scale, rngs=rngs, ledger=ledger, group=group)
        self.drawn = 0   # nodes drawn ahead so far (steps 1..drawn)

    def draw_ahead(self, n: int, buffer: np.ndarray | None = None) -> np.ndarray:
        """(B, n, 2, *shape) exponentials of the nodes completing at steps ``drawn + 1 .. drawn + n`` (in ``buffer``,
        see :func:`exponentials`)."""
        self.reserve(n)
        return exponentials(self.rngs, n, int(np.prod(self.shape)), buffer).reshape((self.batch, n, 2) + self.shape)

    def reserve(self, n: int) -> None:
        """Record the ledger draws of the nodes completing at steps ``drawn + 1 .. drawn + n`` without drawing them:
        the compiled loop draws them from :attr:`rngs` itself, in step order (:func:`.episode_jit.run_seed_episodes`)."""
        self._check_reserve(n, "TreeAhead.draw_ahead")
        if self.ledger is not None:
            for t in range(self.steps + 1, self.steps + n + 1):
                i = (t & -t).bit_length() - 1
                self.ledger.record(group=self.group, users=self.node_users(t - (1 << i) + 1, t), mechanism="laplace",
                                   scale=self.scale, shape=self.shape, batch=self.batch)
        self.drawn += n


def local_ahead(rngs, n: int, dim: int, *, scale: float, first_user: int, ledger: Ledger | None,
                group: str, buffer: np.ndarray | None = None) -> np.ndarray:
    """(B, n, 2, dim) exponentials of the local reports of users ``first_user .. first_user + n - 1`` (each
    :func:`privacct.mechanisms.add_noise` with ``users = (k, k)``), their ledger draws recorded in order."""
    local_records(len(rngs), n, dim, scale=scale, first_user=first_user, ledger=ledger, group=group)
    return exponentials(rngs, n, dim, buffer)


def local_records(batch: int, n: int, dim: int, *, scale: float, first_user: int, ledger: Ledger | None,
                  group: str) -> None:
    """The ledger draws of :func:`local_ahead` alone, for a compiled loop that draws the reports from the privatizer's
    Generators itself (:func:`.episode_jit.run_seed_episodes`)."""
    _no_tap("local_ahead")
    if ledger is not None:
        for k in range(first_user, first_user + n):
            ledger.record(group=group, users=(k, k), mechanism="laplace", scale=float(scale), shape=(dim,),
                          batch=batch)


class HonakerAhead(_AddedInTheLoop, FactorizedCounter):
    """A Laplace ``tree-honaker`` :class:`~privacct.counters.counter.FactorizedCounter` whose draws the compiled loop
    makes (mode 4 of :func:`.episode_jit.release`): the same draws from the same Generators in the same order (step
    t: the leaf [t, t], then the nodes [t - 2^i + 1, t], i = 1..nu(t)), the same arithmetic on this counter's own
    state (``_est``, ``_noise``, ``_exact``; ``_release`` the running ``_exact + _noise``) and the same ledger records
    (:meth:`reserve`, in step order). Not for audited runs (but those recorded in bulk, :func:`bulk_observed`), and not
    to be mixed with :meth:`add`."""

    _plain = "FactorizedCounter"

    def __init__(self, shape, *, leaves: int, scale: float, rngs, ledger: Ledger | None = None,
                 group: str | None = None) -> None:
        _no_tap("HonakerAhead")
        super().__init__(shape, strategy="tree-honaker", leaves=leaves, mechanism="laplace", scale=scale, rngs=rngs,
                         ledger=ledger, group=group)
        self._release = np.zeros((self.batch,) + self.shape)
        self.drawn = 0   # steps whose draws are recorded (steps 1..drawn)
        from privacct.counters.tree_honaker import _honaker_weight

        #: v_i of each level, the weight of a node on its subtree's estimate (as the strategy's step computes it)
        self.weights = np.array([_honaker_weight(i) for i in range(self._est.shape[0])])

    def draws(self, n: int) -> int:
        """Draws of the next ``n`` steps."""
        return sum(node_count(t) for t in range(self.steps + 1, self.steps + n + 1))

    def reserve(self, n: int) -> None:
        """Record the ledger draws of steps ``drawn + 1 .. drawn + n`` (the fields ``FactorizedCounter._draw``
        records) without drawing them."""
        self._check_reserve(n, "HonakerAhead.reserve")
        if self.ledger is not None:
            for t in range(self.steps + 1, self.steps + n + 1):
                for i in range(node_count(t)):
                    self.ledger.record(group=self.group, users=(t - (1 << i) + 1, t), mechanism=self.mechanism,
                                       scale=self.scale, shape=self.shape, batch=self.batch, weights=None)
        self.drawn += n

    def draw_ahead(self, n: int, buffer: np.ndarray | None = None) -> np.ndarray:
        """(B, draws, 2, *shape) exponentials of the next ``n`` steps' draws, in order (:meth:`draws` of them)."""
        d = self.draws(n)
        self.reserve(n)
        return exponentials(self.rngs, d, int(np.prod(self.shape)), buffer).reshape((self.batch, d, 2) + self.shape)


#: the functions a BltAhead stands for, as this process loaded them (a class-level change after that, e.g. a planted bug,
#: keeps the plain counter, which runs the changed code)
_BLT_PLAIN = {(cls, n): getattr(cls, n) for cls, names in (
    (FactorizedCounter, ("add", "_draw", "_mix_noise", "_init_mixing_state")),
    (Blt, ("start", "step", "noisy_sum", "mix_noise", "init_mixing_state", "init_parameters"))) for n in names}


class BltAhead(_AddedInTheLoop, FactorizedCounter):
    """A Laplace ``blt`` :class:`~privacct.counters.counter.FactorizedCounter` whose draws the compiled loop makes (mode
    5 of :func:`.episode_jit.release`): the same draws from the same Generators in the same order (z_t at step t), the
    recursion of :meth:`privacct.counters.blt.Blt.mix_noise` on this counter's own state (``_zhist``, ``_uhist``,
    ``_noise``: views of one array ``hist``, (2 nb + 1, B, *shape); ``_exact``; ``_release`` the running ``_exact +
    _noise``) and the same ledger records (:meth:`reserve`, in step order: users (1, t), weighted by the counter's own
    row of its executed encoder). Built by :meth:`like` from a fresh counter that :meth:`runs` admits. Not for audited
    runs, and not to be mixed with :meth:`add`."""

    _plain = "FactorizedCounter"

    def __init__(self, shape, *, structure, leaves: int, scale: float, rngs, ledger: Ledger | None = None,
                 group: str | None = None) -> None:
        _no_tap("BltAhead")
        super().__init__(shape, strategy=structure, leaves=leaves, mechanism="laplace", scale=scale, rngs=rngs,
                         ledger=ledger, group=group)
        nb = len(self._P)
        self.hist = np.zeros((2 * nb + 1, self.batch) + self.shape)
        self._zhist, self._uhist, self._noise = self.hist[:nb], self.hist[nb:2 * nb], self.hist[2 * nb]
        self._release = np.zeros((self.batch,) + self.shape)
        #: P_1..P_nb then Q_1..Q_nb, the coefficients the recursion reads (the compiled loop's ``hw``)
        self.coefs = np.concatenate([np.asarray(self._P, dtype=float), np.asarray(self._Q, dtype=float)])
        self.drawn = 0

    @classmethod
    def like(cls, counter: FactorizedCounter) -> "BltAhead":
        """A BltAhead of ``counter``'s structure, leaves, scale, Generators, ledger and group (``counter`` fresh)."""
        return cls(counter.shape, structure=counter.structure, leaves=counter.leaves, scale=counter.scale,
                   rngs=counter.rngs, ledger=counter.ledger, group=counter.group)

    @staticmethod
    def runs(counter) -> bool:
        """Whether the compiled loop runs ``counter`` with its bytes: a fresh Laplace ``blt`` FactorizedCounter (that
        class and strategy class exactly, its noise path not overridden: a recursion key; their functions the ones
        loaded with this module, :data:`_BLT_PLAIN`), one leaf per user from 1, no
        audit (no tap, or one the caller records in bulk: :func:`bulk_observed`; no pin), and the compiled recursion's impulse response (:func:`.episode_jit.blt_impulse`) equal bit
        for bit to the counter's own noise path's over min(K, 64) steps (the path its ledger weights are probed from)."""
        from privacct.counters.executed_cache import _short_probe, recursion_key
        from privacct.tap import current_pin

        if (type(counter) is not FactorizedCounter or type(counter.implementation) is not Blt or counter.steps
                or counter.mechanism != "laplace" or counter.leaf_users is not None or counter.first_user != 1
                or not _tap_free() or current_pin() is not None
                or recursion_key(counter) is None
                or any(getattr(cls, n) is not f for (cls, n), f in _BLT_PLAIN.items())):
            return False
        from .episode_jit import blt_impulse   # numba loads here

        P, Q = (np.ascontiguousarray(np.asarray(p, dtype=float)) for p in counter._mixing_parameters())
        if P.ndim != 1 or P.size == 0 or Q.shape != P.shape:
            return False
        n = min(int(counter.leaves), 64)
        got = np.empty(n)
        blt_impulse(P, Q, got)
        return got.tobytes() == _short_probe(counter, n).tobytes()

    def reserve(self, n: int) -> None:
        """Record the ledger draws of steps ``drawn + 1 .. drawn + n`` (the fields ``FactorizedCounter._draw`` records,
        with the weights its ``_row_weights`` gives) without drawing them: one weighted draw per step through
        :meth:`privacct.ledger.Ledger.record_groups` (the same ledger as :meth:`~privacct.ledger.Ledger.record`)."""
        self._check_reserve(n, "BltAhead.reserve")
        if self.ledger is not None:
            for t in range(self.steps + 1, self.steps + n + 1):
                w = self.implementation.ledger_weights(self, t)
                self.ledger.record_groups([self.group], users=(1, t), mechanism=self.mechanism, scale=self.scale,
                                          shape=self.shape, batch=self.batch, weights=[w])
        self.drawn += n
