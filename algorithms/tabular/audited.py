"""Many-trial learner audits of UCB-VI / UCB-PO through the compiled episode loop (issue 23 item 4).

An audited run (:class:`privacct.algorithms.contract.AuditHook`, a :mod:`privacct.tap` tap opened by
``LearnerSpec.run``) used to take the numpy loop of :func:`.learner.run`, whose primitives record what the audit
observes. :func:`compiles` decides, in one place, which audited runs take the compiled loop instead
(:func:`.learner._drive`); for them the compiled loop plays the canaries (:mod:`.canary`: user 1 canary A or B, users
2..K canary A's response with fixed users or the environment's) and keeps, per chunk, the actions prescribed and
what the records need (:func:`.episode_jit.capture`); :class:`BulkRecords` then makes the records the primitives would
have made, with the same names, groups, mechanisms, scales, values and contributions, in the same order:

* tree (:class:`privacct.mechanisms.TreeCounter`): ``counts node [1, 2^j]`` = user 1's statistic + the node's noise,
  at step 2^j (:meth:`~privacct.mechanisms.TreeCounter.node_noise`'s record);
* tree-honaker and blt (:class:`privacct.counters.counter.FactorizedCounter`): through the counter's own
  :class:`privacct.counters.observed.CounterObserver` -- its ``addition`` at step 1, ``draw`` of the node [1, 2^j]'s
  noise (tree-honaker), ``release`` of each step's whitened release from the counter's exact sums and release noise
  after that step (blt);
* the local randomizer (:func:`privacct.mechanisms.add_noise`, users (1, 1)): ``counts report of user 1`` = user 1's
  statistic + her report's noise;
* :func:`privacct.tap.prescribed` for every user, in order.

The ledger is the compiled loop's (:mod:`.ahead`, the same draws); nothing is listed unobserved (every draw over
user 1 is one of the records above, as in the numpy loop). Tests: tests/algorithms/tabular/test_audited_compiled.py
(the compiled audited run against the numpy loop, record for record and byte for byte).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privacct.tap import AuditTap, current_pin, prescribed
from privacct.tap import current as current_tap

from ..contract import AuditHook
from .privatizers import GROUP

#: Audited runs may take the compiled loop (:func:`compiles`); False keeps every audited run on the numpy loop
#: (benchmarks/bench_report_audits.py compares the two).
AUDITS_COMPILED = True
#: the counters whose audited runs the compiled loop records (:func:`compiles`)
COUNTERS = ("tree", "tree-honaker", "blt")
#: roles of the compiled loop's users (:func:`.episode_jit._episode`)
ENVIRONMENT, JDP_A, JDP_B, LDP_A, LDP_B = -1, 0, 1, 2, 3


def compiles(audit: AuditHook | None, log) -> bool:
    """Whether an audited run with ``audit`` and the declared ``log`` takes the compiled loop (the one predicate).

    Yes for a many-trial audit of user 1 (canary A or B, fixed or environment users 2..K) with the tap
    ``LearnerSpec.run`` opened, faithful or with the planted noise multiplier (each draw scaled in the loop as
    :class:`privacct.algorithms.contract.ScaledNoiseGenerator` scales it), whose counter is the tree, tree-honaker or a
    blt (or the local randomizer). The numpy loop stays for:

    * ``audit.plan`` (one-run audits): many canary users, each reporting her statistic under both bits before the
      release (:func:`privacct.tap.canary_contribution`) -- records the primitives make from those reports;
    * ``audit.coupling`` (the billboard check): the primitives replace user 1's values in the release itself;
    * an active :class:`privacct.tap.ActionPin` (one-run action audits): it sees and moves every draw as it is made;
    * ``audit.mutant`` (a policy mutant such as ``bonus-on-exact-counts``): the planning reads the exact counts;
    * another counter (``sqrt-toeplitz``) or no log: the compiled loop does not release it (its records stay the
      counter's own);
    * a tap without an audit hook (the roles of the users are unknown), or an audit hook without its tap;
    * :data:`AUDITS_COMPILED` False.
    """
    if not AUDITS_COMPILED or audit is None or log is None:
        return False
    tap = current_tap()
    if (tap is None or tap.plan is not None or tap.coupling is not None or audit.plan is not None
            or audit.coupling is not None or audit.mutant is not None or current_pin() is not None
            or tap.canary != audit.canary):
        return False
    if log.privacy_model == "local":
        return True
    g = log.group(GROUP)
    if g.mechanism != "laplace":
        return False
    if g.structure.kind == "tree":
        return True
    return g.structure.strategy in COUNTERS


def roles(audit: AuditHook, central: bool, k: int, m: int) -> np.ndarray:
    """(m,) the roles of users k .. k + m - 1 (:func:`.episode_jit._episode`): user 1 canary ``audit.canary``'s
    response (JDP) or trajectory (LDP), users 2..K canary A's response with fixed users, else the environment's."""
    out = np.full(m, ENVIRONMENT if not audit.fixed_users else JDP_A, dtype=np.int64)
    if k == 1:
        out[0] = (JDP_A if audit.canary == "A" else JDP_B) if central else (LDP_A if audit.canary == "A" else LDP_B)
    return out


@dataclass
class BulkRecords:
    """The tap records of one audited compiled run (module docstring), made after each chunk call: ``mode`` the
    compiled loop's release (1 tree, 2 local, 4 tree-honaker, 5 blt, 3 a counter released by the privatizer, which
    records itself), ``counter`` the privatizer's counter (tree, tree-honaker) or the blt counter the compiled loop
    replaced (its observer and state make the whitened releases), ``scale`` the Laplace b, ``B``, ``dim``, ``H``,
    ``K``."""

    tap: AuditTap
    audit: AuditHook
    central: bool
    mode: int
    counter: object
    scale: float
    B: int
    dim: int
    H: int
    K: int

    def __post_init__(self) -> None:
        self.x1 = np.zeros((self.B, self.dim))

    def buffers(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """(acts_out (B, m, H), cap) for a call of m episodes: ``cap`` (B, levels, dim) for the tree and
        tree-honaker (node [1, 2^j] at slot j), (B, 1, dim) for the local report, (B, 2 m, dim) for blt (exact sums
        and release noise per step), empty otherwise."""
        levels = max(1, (max(1, self.K - 1)).bit_length())
        n = {1: levels, 4: levels, 2: 1, 5: 2 * m}.get(self.mode, 0)
        return np.empty((self.B, m, self.H), dtype=np.int64), np.zeros((self.B, n, self.dim))

    def emit(self, k: int, m: int, acts_out: np.ndarray, cap: np.ndarray) -> None:
        """The records of users k .. k + m - 1, in order, then each one's prescribed actions."""
        for i in range(m):
            t = k + i
            self._record(t, i, cap)
            prescribed(t, acts_out[:, i])

    def _record(self, t: int, i: int, cap: np.ndarray) -> None:
        x1 = self.x1
        if self.mode == 2:
            if t == 1:   # privacct.mechanisms.add_noise, users (1, 1)
                self.tap.record(group=GROUP, name=f"{GROUP} report of user 1", mechanism="laplace", scale=self.scale,
                                values=x1 + cap[:, 0], contribution=x1)
            return
        if self.mode == 3 or t > self.K - 1:
            return
        c = self.counter
        if self.mode == 5:   # the observer's whitened release t from the counter's state after step t
            obs = c._observer
            if t == 1:
                obs.addition(1, x1)
            c._exact, c._noise = cap[:, 2 * i].copy(), cap[:, 2 * i + 1].copy()
            obs.release(t)
            return
        if t & (t - 1):
            return
        j = t.bit_length() - 1
        noise = cap[:, j].copy()
        if self.mode == 1:   # privacct.mechanisms.TreeCounter.node_noise
            g = c.group or "tree"
            self.tap.record(group=g, name=f"{g} node [1, {t}]", mechanism=c.mechanism, scale=c.scale,
                            values=x1 + noise, contribution=x1, means=None)
        else:                # tree-honaker: privacct.counters.observed.CounterObserver.draw
            obs = c._observer
            if t == 1:
                obs.addition(1, x1)
            obs.draw((1, t), None, noise)
