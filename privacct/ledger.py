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
R x + z: user s enters z_t's value with weight R[t, s]). Per user the ledger sums w^2 (Gaussian
noise) and |w| (Laplace) over the draws that contain her (an unweighted draw counts w = 1); a
(group, scale) with weighted draws becomes one ``single`` release whose sensitivity is the
declared one times the worst user's norm (sqrt of the sum of w^2, or the sum of |w|): exactly
the privacy of R x + z with that column of R.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from .errors import PrivacctError
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


class Ledger:
    """An append-only record of noise draws. Cheap to append (columnar Python lists)."""

    def __init__(self) -> None:
        self._group: list[str] = []
        self._lo: list[int] = []
        self._hi: list[int] = []
        self._mech: list[str] = []
        self._scale: list[float] = []
        self._shape: list[tuple[int, ...]] = []
        self._batch: list[int] = []
        # (group, mechanism, scale) -> [sum of w^2, sum of |w|] per user (index 0 is user 1), over weighted draws
        self._weighted: dict[tuple[str, str, float], list[np.ndarray]] = {}
        self._is_weighted: list[bool] = []

    def __len__(self) -> int:
        return len(self._group)

    def record(self, *, group: str, users: tuple[int, int], mechanism: str, scale: float,
               shape: tuple[int, ...], batch: int = 1, weights=None) -> None:
        """Record one draw over the user interval ``users = (first, last)`` (1-based, inclusive).

        ``weights`` (optional): one finite weight per user of the interval, the coefficient with
        which she enters the noised value (a factorized counter's row of R); absent means 1 each."""
        lo, hi = int(users[0]), int(users[1])
        if lo < 1 or hi < lo:
            raise PrivacctError(f"users must be an interval (first, last) with 1 <= first <= last, got {users!r}")
        if mechanism not in MECHANISMS:
            raise PrivacctError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
        if weights is not None:
            w = np.asarray(weights, dtype=float)
            if w.shape != (hi - lo + 1,) or not np.all(np.isfinite(w)):
                raise PrivacctError(f"weights must be {hi - lo + 1} finite numbers (one per user of {users!r}), "
                                    f"got shape {w.shape}")
            self._add_weights((group, mechanism, float(scale)), lo, w * w, np.abs(w))
        self._is_weighted.append(weights is not None)
        self._group.append(group)
        self._lo.append(lo)
        self._hi.append(hi)
        self._mech.append(mechanism)
        self._scale.append(float(scale))
        self._shape.append(tuple(int(s) for s in shape))
        self._batch.append(int(batch))

    def _add_weights(self, key: tuple[str, str, float], lo: int, sq: np.ndarray, ab: np.ndarray) -> None:
        acc = self._weighted.get(key)
        hi = lo + sq.size - 1
        if acc is None or acc[0].size < hi:
            n = max(hi, 2 * (acc[0].size if acc is not None else 0))
            grown = [np.zeros(n), np.zeros(n)]
            if acc is not None:
                grown[0][:acc[0].size] = acc[0]
                grown[1][:acc[1].size] = acc[1]
            acc = self._weighted[key] = grown
        acc[0][lo - 1:hi] += sq
        acc[1][lo - 1:hi] += ab

    def per_user_norms(self, group: str, mechanism: str, scale: float) -> np.ndarray:
        """Per-user weight norm of (group, mechanism, scale): sqrt(sum w^2) for Gaussian noise,
        sum |w| for Laplace, an unweighted draw counting w = 1 (index 0 is user 1)."""
        idx = [i for i, g in enumerate(self._group)
               if g == group and self._mech[i] == mechanism and self._scale[i] == scale and not self._is_weighted[i]]
        acc = self._weighted.get((group, mechanism, float(scale)))
        n = max([self._hi[i] for i in idx] + [0 if acc is None else acc[0].size])
        total = np.zeros(n)
        if idx:
            diff = np.zeros(n + 2)
            np.add.at(diff, np.array([self._lo[i] for i in idx]), 1.0)
            np.add.at(diff, np.array([self._hi[i] for i in idx]) + 1, -1.0)
            total += np.cumsum(diff)[1:n + 1]
        laplace = mechanism == "laplace"
        if acc is not None:
            total[:acc[0].size] += acc[1] if laplace else acc[0]
        return total if laplace else np.sqrt(total)

    def draws(self) -> Iterable[Draw]:
        for i in range(len(self)):
            yield Draw(self._group[i], self._lo[i], self._hi[i], self._mech[i], self._scale[i], self._shape[i], self._batch[i])

    def groups(self) -> list[str]:
        return sorted(set(self._group))

    def extend(self, other: "Ledger") -> None:
        for i, d in enumerate(other.draws()):
            self.record(group=d.group, users=(d.first_user, d.last_user), mechanism=d.mechanism,
                        scale=d.scale, shape=d.shape, batch=d.batch)
            self._is_weighted[-1] = other._is_weighted[i]
        for key, (sq, ab) in other._weighted.items():
            self._add_weights(key, 1, sq, ab)

    def per_user_counts(self, group: str, *, scale: float | None = None) -> np.ndarray:
        """Draw counts per user for ``group`` (index 0 is user 1), optionally for one scale only.

        Difference array over the intervals: O(draws + users).
        """
        idx = [i for i, g in enumerate(self._group) if g == group and (scale is None or self._scale[i] == scale)]
        if not idx:
            return np.zeros(0, dtype=np.int64)
        lo = np.fromiter((self._lo[i] for i in idx), dtype=np.int64, count=len(idx))
        hi = np.fromiter((self._hi[i] for i in idx), dtype=np.int64, count=len(idx))
        n = int(hi.max())
        diff = np.zeros(n + 2, dtype=np.int64)
        np.add.at(diff, lo, 1)
        np.add.at(diff, hi + 1, -1)
        return np.cumsum(diff)[1 : n + 1]

    def usage(self) -> list[GroupUsage]:
        """The worst user of every (group, mechanism, scale) that ran."""
        keys = sorted({(g, m, s) for g, m, s in zip(self._group, self._mech, self._scale, strict=True)})
        out = []
        for g, m, s in keys:
            counts = self.per_user_counts(g, scale=s)
            u = int(np.argmax(counts))
            n_draws = sum(1 for gg, mm, ss in zip(self._group, self._mech, self._scale, strict=True) if (gg, mm, ss) == (g, m, s))
            out.append(GroupUsage(g, m, s, u + 1, int(counts[u]), n_draws))
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
    seen: dict[tuple[str, str, tuple[int, ...]], None] = {}
    for i in range(len(ledger)):
        seen.setdefault((ledger._group[i], ledger._mech[i], ledger._shape[i]), None)
    out = []
    for group, mech, shape in seen:
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
    epsilon does not exceed the declared one (relative tolerance ``rtol``).
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
