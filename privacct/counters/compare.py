"""Strategies side by side at the same claim: calibrated noise and derived prefix error of each
(docs/counters.md#comparing-strategies-at-the-same-claim).

:func:`compare` calibrates one counter group per strategy to the same (epsilon, delta) with the
toolkit's calibration (:func:`privacct.calibrate.calibrate_noise`, the tightest accountant that
applies) and reports the derived worst prefix variance of each; :func:`least_noise` picks the
strategy with the least worst prefix variance (ties: the earlier name in
:data:`privacct.counters.strategies.STRATEGIES`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..calibrate import calibrate_noise
from ..errors import PrivacctError, check_count, check_delta, check_positive
from ..log import MECHANISM_NORMS, MECHANISMS, Structure
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


def least_noise(figures: list[StrategyFigures]) -> StrategyFigures:
    """The strategy with the least worst prefix variance."""
    if not figures:
        raise PrivacctError("figures must hold at least one strategy")
    return min(figures, key=lambda f: f.worst_prefix_variance)


def sensitivity_norm(mechanism: str) -> str:
    """The sensitivity norm a counter group of ``mechanism`` declares (its first allowed norm)."""
    return MECHANISM_NORMS[mechanism][0]


__all__ = ["StrategyFigures", "compare", "least_noise", "sensitivity_norm"]
