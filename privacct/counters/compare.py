"""Strategies side by side at the same claim: calibrated noise and derived prefix error of each
(docs/counters.md#comparing-strategies-at-the-same-claim).

:func:`compare` calibrates one counter group per strategy to the same (epsilon, delta) with the
toolkit's calibration (:func:`privacct.calibrate.calibrate_noise`, the tightest accountant that
applies) and reports the derived worst prefix variance of each; :func:`least_noise` picks the
strategy with the least worst prefix variance (ties: the earlier name in
:data:`privacct.counters.strategies.STRATEGIES`, the registry's order). :func:`candidates_for` is derived from
the registry too: each strategy says whether ``tight`` chooses among it
(:meth:`privacct.counters.base.CounterStrategy.tight_candidate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..calibrate import calibrate_log, calibrate_noise
from ..errors import PrivacctError, check_count, check_delta, check_positive
from ..log import MECHANISM_NORMS, MECHANISMS, MechanismLog, Structure
from .registry import strategies as registered_strategies
from .strategies import STRATEGIES, Strategy, column_norm, noise_unit_variance, norm_for, worst_prefix_variance


@dataclass(frozen=True)
class StrategyFigures:
    """One strategy calibrated to a claim: its structure, noise scale (and the accountant that set
    it), the derived column norm and the worst prefix variance / standard deviation per coordinate."""

    strategy: str
    structure: Structure
    noise_scale: float
    accountant: str
    column_norm: float
    worst_prefix_variance: float

    @property
    def worst_prefix_std(self) -> float:
        return math.sqrt(self.worst_prefix_variance)

    def to_dict(self) -> dict:
        return {"strategy": self.strategy, "structure": self.structure.to_dict(), "noise_scale": self.noise_scale,
                "accountant": self.accountant, "column_norm": self.column_norm,
                "worst_prefix_variance": self.worst_prefix_variance, "worst_prefix_std": self.worst_prefix_std}


def compare(*, mechanism: str, sensitivity: float, leaves: int, epsilon: float, delta: float,
            strategies=STRATEGIES) -> list[StrategyFigures]:
    """Every strategy in ``strategies`` calibrated to (epsilon, delta) for one counter group."""
    if mechanism not in MECHANISMS:
        raise PrivacctError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    sensitivity = check_positive("sensitivity", sensitivity)
    leaves = check_count("leaves", leaves)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta, allow_zero=True)
    out = []
    for s in strategies:
        structure = Strategy.of(s).structure(leaves, norm=norm_for(mechanism))
        scale, acc = calibrate_noise(mechanism=mechanism, sensitivity=sensitivity, structure=structure,
                                     epsilon=epsilon, delta=delta)
        var = noise_unit_variance(mechanism, scale) * worst_prefix_variance(structure)
        out.append(StrategyFigures(structure.strategy, structure, scale, acc,  # type: ignore[arg-type]
                                   column_norm(structure, norm_for(mechanism)), var))
    return out


@dataclass(frozen=True)
class GroupAlternatives:
    """For one counter group of a log (kind ``tree`` or ``factorized``): every strategy swapped in
    for its structure, the whole log recalibrated to the same (epsilon, delta) (one common noise
    factor, as ``tight`` calibration does), with the group's noise scale and worst prefix variance;
    ``errors`` holds the strategies that could not be calibrated, with the reason."""

    group: str
    current: str
    figures: tuple[StrategyFigures, ...]
    errors: tuple[tuple[str, str], ...] = ()

    @property
    def best(self) -> StrategyFigures:
        return least_noise(list(self.figures))

    def to_dict(self) -> dict:
        return {"group": self.group, "current": self.current, "least_noise": self.best.strategy if self.figures else None,
                "strategies": [f.to_dict() for f in self.figures], "not_calibrated": dict(self.errors)}


def log_alternatives(log, *, epsilon: float, delta: float, strategies=STRATEGIES) -> list[GroupAlternatives]:
    """:class:`GroupAlternatives` for every ``tree`` or ``factorized`` group of ``log``."""
    if not isinstance(log, MechanismLog):
        raise PrivacctError(f"log must be a privacct.log.MechanismLog, got {type(log).__name__}")
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta, allow_zero=True)
    out = []
    for i, g in enumerate(log.release_groups):
        if g.structure.kind not in ("tree", "factorized"):
            continue
        leaves = int(g.structure.leaves)  # type: ignore[arg-type]
        current = Strategy.of(g.structure).name
        figs, errs = [], []
        for s in strategies:
            try:
                st = Strategy.of(s).structure(leaves, norm=norm_for(g.mechanism))
                groups = list(log.release_groups)
                groups[i] = g.with_structure(st)
                cal, acc = calibrate_log(log.replace_groups(groups), epsilon=epsilon, delta=delta, return_accountant=True)
            except PrivacctError as e:
                errs.append((Strategy.of(s).name, str(e)))
                continue
            scale = cal.release_groups[i].noise_scale
            figs.append(StrategyFigures(st.strategy, st, scale, acc, column_norm(st, norm_for(g.mechanism)),  # type: ignore[arg-type]
                                        noise_unit_variance(g.mechanism, scale) * worst_prefix_variance(st)))
        out.append(GroupAlternatives(g.name, current, tuple(figs), tuple(errs)))
    return out


def candidates_for(mechanism: str) -> tuple[str, ...]:
    """Strategies a ``tight`` learner chooses among: the streaming ones (memory independent of K, O(1)
    amortised work per step; ``sqrt-toeplitz`` keeps every z and costs O(t) per step, so a learner
    runs it only when named): ``tree``, ``tree-honaker``, ``blt`` for Gaussian noise; for Laplace
    noise ``tree`` and ``tree-honaker`` (the l1-optimal BLT buffers are near the identity, prefix
    variance about K node variances; docs/counters.md#learners). Each registered strategy says whether it is a
    candidate (:meth:`~privacct.counters.base.CounterStrategy.tight_candidate`), in the registry's order."""
    return tuple(s.name for s in registered_strategies() if s.tight_candidate(mechanism))


def with_least_noise(log, group: str, *, epsilon: float, delta: float):
    """``(log, strategy)``: ``log`` with the counter group ``group`` switched to the strategy of least
    worst prefix variance at (epsilon, delta) among :func:`candidates_for` its mechanism, the whole log
    recalibrated to the claim (the ``tight`` choice of a learner, docs/counters.md)."""
    g = log.group(group)
    alts = [a for a in log_alternatives(log, epsilon=epsilon, delta=delta, strategies=candidates_for(g.mechanism))
            if a.group == group]
    if not alts or not alts[0].figures:
        raise PrivacctError(f"group {group!r}: no counting strategy could be calibrated to the claim"
                            + ("" if not alts else "; " + "; ".join(f"{n}: {w}" for n, w in alts[0].errors)))
    best = alts[0].best
    i = [x.name for x in log.release_groups].index(group)
    groups = list(log.release_groups)
    groups[i] = g.with_structure(best.structure)
    return calibrate_log(log.replace_groups(groups), epsilon=epsilon, delta=delta), best.strategy


def least_noise(figures: list[StrategyFigures]) -> StrategyFigures:
    """The strategy with the least worst prefix variance."""
    if not figures:
        raise PrivacctError("figures must hold at least one strategy")
    return min(figures, key=lambda f: f.worst_prefix_variance)


def sensitivity_norm(mechanism: str) -> str:
    """The sensitivity norm a counter group of ``mechanism`` declares (its first allowed norm)."""
    return MECHANISM_NORMS[mechanism][0]


__all__ = ["GroupAlternatives", "StrategyFigures", "candidates_for", "compare", "least_noise", "log_alternatives",
           "sensitivity_norm", "with_least_noise"]
