"""The accountant interface and the per-user view of a log that every accountant reads.

A log becomes a list of :class:`Release` (mechanism kind, ratio, count): the worst user's data is
in ``count`` releases of a group, each with ratio Delta / scale (Laplace: eps0 = Delta_1 / b;
Gaussian and symmetric Gaussian matrix: mu = Delta_2 / sigma). The sensitivity is already stated
under the log's neighbouring relation (see :mod:`privacct.log`), so every accountant below uses
the add-or-remove formulas with that explicit sensitivity. This is also how the toolkit sidesteps
dp_accounting's REPLACE_ONE bug in the RDP accountant (google/differential-privacy issue #378:
the sensitivity is not doubled): it never asks dp_accounting for REPLACE_ONE.
"""

from __future__ import annotations

import abc
import math
from collections import defaultdict
from dataclasses import dataclass

from ..errors import NumericalError, PrivacctError, UnsupportedLogError, check_delta, check_positive
from ..log import MechanismLog


@dataclass(frozen=True)
class Release:
    """``count`` adaptive releases of one kind ("laplace" | "gaussian") with the same ratio."""

    kind: str
    ratio: float
    count: int


def releases(log: MechanismLog) -> list[Release]:
    """Per-user releases of a log, identical (kind, ratio) merged by adding counts.

    Merging is exact: composition is commutative, and identical releases compose the same way
    whatever group they came from (the dp_accounting lesson: never compose one by one).
    """
    merged: dict[tuple[str, float], int] = defaultdict(int)
    for g in log.release_groups:
        kind = "laplace" if g.mechanism == "laplace" else "gaussian"
        ratio = g.ratio
        if not math.isfinite(ratio) or ratio <= 0:
            raise NumericalError(f"release group {g.name!r}: sensitivity/noise_scale = {ratio!r} is not a finite positive number")
        merged[(kind, ratio)] += g.per_user_count
    return [Release(k, r, c) for (k, r), c in sorted(merged.items())]


def is_pure(log: MechanismLog) -> bool:
    return all(g.mechanism == "laplace" for g in log.release_groups)


def is_gaussian(log: MechanismLog) -> bool:
    return all(g.mechanism != "laplace" for g in log.release_groups)


class Accountant(abc.ABC):
    """epsilon(log, delta) and delta(log, epsilon) for a mechanism log: upper bounds only."""

    name: str = ""
    citation: str = ""

    @abc.abstractmethod
    def why_not(self, log: MechanismLog, *, delta: float) -> str | None:
        """None if this accountant can bound ``log`` at ``delta``; otherwise the reason it cannot."""

    def supports(self, log: MechanismLog, *, delta: float) -> bool:
        """Dry run before :meth:`epsilon`: True when :meth:`epsilon` would return a figure."""
        return self.why_not(log, delta=delta) is None

    @abc.abstractmethod
    def _epsilon(self, log: MechanismLog, delta: float) -> float: ...

    def epsilon(self, log: MechanismLog, *, delta: float) -> float:
        """An upper bound on the per-user epsilon of ``log`` at ``delta`` (in [0, 1))."""
        delta = check_delta("delta", delta, allow_zero=True)
        reason = self.why_not(log, delta=delta)
        if reason is not None:
            raise UnsupportedLogError(f"accountant {self.name!r} does not apply: {reason}")
        eps = self._epsilon(log, delta)
        if eps is None or math.isnan(eps) or eps < 0:
            raise NumericalError(f"accountant {self.name!r} produced epsilon={eps!r}; refusing to report it")
        if math.isinf(eps):
            raise NumericalError(f"accountant {self.name!r}: epsilon is unbounded or beyond floating-point range at delta={delta!r}")
        return float(eps)

    def delta(self, log: MechanismLog, *, epsilon: float) -> float:
        """An upper bound on delta at ``epsilon`` (> 0): the smallest delta whose epsilon <= it.

        Default: bisection on log(delta) over :meth:`epsilon`, returning the upper (private) end.
        """
        epsilon = check_positive("epsilon", epsilon)
        return _delta_by_bisection(self, log, epsilon)


def _delta_by_bisection(acc: Accountant, log: MechanismLog, epsilon: float) -> float:
    def eps_at(d: float) -> float:
        if not acc.supports(log, delta=d):
            return math.inf
        try:
            return acc.epsilon(log, delta=d)
        except NumericalError:
            return math.inf

    if acc.supports(log, delta=0.0) and eps_at(0.0) <= epsilon:
        return 0.0
    lo, hi = math.log(1e-300), math.log(1.0 - 1e-12)
    if eps_at(math.exp(hi)) > epsilon:
        return 1.0
    if eps_at(math.exp(lo)) <= epsilon:
        return math.exp(lo)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if eps_at(math.exp(mid)) <= epsilon:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-9:
            break
    return math.exp(hi)


def require_log(log: object) -> MechanismLog:
    if not isinstance(log, MechanismLog):
        raise PrivacctError(f"log must be a privacct.log.MechanismLog, got {type(log).__name__}")
    return log
