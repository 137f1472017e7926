"""Private LSVI-UCB's y releases of a many-trial audited run made for all updating seeds at once (issue 23 item 4).

Where a many-trial audit of private-lsvi-ucb spends its time (cProfile of ``audit_setting("private-lsvi-ucb", "jdp",
calibration="tight", epsilon=1.0).run(trials=10000, seed=0, executor="inline")``, K = 5, H = 2: 11.3 s in the runs):
not in the episodes (0.14 s, ``History.add``) but in the y releases, 6.5 s -- seed by seed, each one's share reported
(:func:`privacct.tap.user_contribution`) then one :func:`privacct.mechanisms.gaussian` call, which records one ledger
draw in the seed's y ledger and one :class:`privacct.tap.TapRecord` (``"y[h=..] update n"``, rows [b]) through
:func:`privacct.tap.after_noise`, about 170 us a seed and step. The Gram counters (2.3 s, the observed BLT step of
:mod:`privacct.counters`) come next; they are privacct's.

:func:`bulk_y` decides, in one place, which audited runs take this path instead (:class:`BulkY`): each updating
seed's noise is drawn by the same call of the same Generator (``standard_normal(out=row)``, then ``*= sigma_y``: the
primitive's arithmetic), the release is y + noise, and the records are the ones :func:`after_noise` makes from the
reported share, in the same order (seed after seed within the step, steps H..1): group ``y``, the exact name, mechanism
``gaussian``, the scale, values = own + noise, contribution = own (this run's canary), mean_a / mean_b, rows [b]. The
per-seed ledger draws, the same for every seed that updated at the same episodes, are written once per such list of
episodes when the run ends (:meth:`BulkY.ledger`: for each update episode k, for h = H..1, a ``gaussian`` draw of
shape (d,) over users (1, k - 1), batch 1, as the primitive records it). The tap's ``unobserved`` list and ``pending``
shares end as the primitives leave them (the draw noted unobserved, then taken off when its record is made; the share
taken). Tests: tests/algorithms/linear_mdp/test_audited_compiled.py (records, ledgers, actions, regret against the
primitives' path, byte for byte).
"""

from __future__ import annotations

import numpy as np

from privacct.errors import check_positive
from privacct.ledger import Ledger
from privacct.tap import OBSERVED_AS, TapRecord, current_pin
from privacct.tap import current as current_tap

#: Many-trial audited runs make their y releases in bulk (:func:`bulk_y`); False: seed by seed through the primitives
#: (the reference; tests and benchmarks/bench_linear_mdp_audits.py compare both)
AUDITS_BULK_Y = True
GROUP = "y"


def bulk_y(audit) -> bool:
    """Whether a run with audit hook ``audit`` makes its y releases in bulk (:class:`BulkY`): the one predicate.

    Yes for a many-trial audit of user 1 (canary A or B, fixed or environment users 2..K) with the tap
    ``LearnerSpec.run`` opened, faithful or with the planted noise multiplier (the Generators are the same objects,
    :class:`privacct.algorithms.contract.ScaledNoiseGenerator` scales the same calls), with or without a planted
    mutant (``switch-on-exact-gram``, ``counter-noise-path``: they change the switching test and the Gram counters, not
    the y releases). The primitives stay for:

    * no audit hook (an unaudited run, or a tap without a hook: the roles of the users are unknown) or no tap (nothing
      records, and the per-seed calls then cost little);
    * ``audit.plan`` / a tap with a plan (one-run audits): the y releases are not observed, the primitives note them;
    * ``audit.coupling`` / a tap with a coupling (the billboard check): :func:`privacct.tap.after_noise` moves the noise
      itself by canary A's share minus B's;
    * an active :class:`privacct.tap.ActionPin` (one-run action audits): it logs and may move every draw as it is made;
    * a tap whose canary is not the hook's (the records' contribution is the tap's canary's);
    * :data:`AUDITS_BULK_Y` False.
    """
    if not AUDITS_BULK_Y or audit is None:
        return False
    tap = current_tap()
    return (tap is not None and audit.plan is None and audit.coupling is None and tap.plan is None
            and tap.coupling is None and current_pin() is None and tap.canary == audit.canary)


class BulkY:
    """The y releases of one audited run (module docstring): ``noise_rngs`` the seeds' noise Generators, ``sigma_y``
    the Gaussian std (> 0), ``d`` the feature dimension, ``H`` the horizon."""

    def __init__(self, noise_rngs, sigma_y: float | None, d: int, H: int) -> None:
        self.tap = current_tap()
        self.rngs, self.d, self.H = noise_rngs, d, H
        # as the primitive takes it; None: no y release (the cap is 0)
        self.scale = None if sigma_y is None else check_positive("scale", sigma_y)
        self._ledgers: dict[tuple[int, ...], Ledger] = {}

    def noise(self, h: int, y: np.ndarray, idx: np.ndarray, k: int, n_upd: np.ndarray, own: dict) -> np.ndarray:
        """The release y + noise (len(idx), d) of step h (0-based) at episode k for seeds ``idx`` (their update
        n_upd[b] + 1), recording each seed's ``"y[h=h+1] update n"`` with user 1's share ``own`` ({"A", "B"}: (n, d))."""
        n = len(idx)
        z = np.empty((n, self.d))
        for j, b in enumerate(idx):
            self.rngs[b].standard_normal(out=z[j])
        z *= self.scale
        tap = self.tap
        a_all, b_all = np.asarray(own["A"], dtype=float), np.asarray(own["B"], dtype=float)
        mine = a_all if tap.canary == "A" else b_all
        values = mine + z
        mech = OBSERVED_AS["gaussian"]
        for j, b in enumerate(idx):
            tap.records.append(TapRecord(GROUP, f"y[h={h + 1}] update {int(n_upd[b]) + 1}", mech, self.scale,
                                         values[j:j + 1].copy(), mine[j:j + 1].copy(), a_all[j:j + 1].copy(),
                                         b_all[j:j + 1].copy(), np.array([b], dtype=np.int64)))
        tap.pending.pop(GROUP, None)   # each seed's share is taken by its draw
        users = (1, k - 1)
        if any(u.group == GROUP and u.users == users for u in tap.unobserved):   # noted, then taken off, per draw
            tap.unobserved[:] = [u for u in tap.unobserved if not (u.group == GROUP and u.users == users)]
        return y + z

    def ledger(self, episodes: tuple[int, ...]) -> Ledger:
        """The y ledger of a seed that updated at ``episodes``: per update episode k, H ``gaussian`` draws of shape
        (d,) over users (1, k - 1), batch 1 (:func:`privacct.mechanisms.gaussian`'s record), one ledger per list."""
        got = self._ledgers.get(episodes)
        if got is None:
            got = self._ledgers[episodes] = Ledger()
            for k in episodes:
                for _ in range(self.H):
                    got.record(group=GROUP, users=(1, k - 1), mechanism="gaussian", scale=self.scale,
                               shape=(self.d,), batch=1)
        return got
