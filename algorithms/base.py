"""The contract every learner family implements, so that ``privacct run``, ``reproduce``,
``audit`` and ``report`` treat tabular, linear-mixture and linear-MDP learners alike.

A family package (``privacct.algorithms.tabular``, ``privacct.algorithms.linear_mixture``, ``privacct.algorithms.linear_mdp``)
exports ``LEARNERS: dict[str, LearnerSpec]``; :mod:`privacct.algorithms.registry` merges them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from privacct.ledger import Ledger
from privacct.log import MechanismLog

PRIVACY_CHOICES = ("none", "jdp", "ldp")
CALIBRATIONS = ("paper", "tight")


@dataclass(frozen=True)
class RunConfig:
    """One learner configuration.

    ``privacy``: none | jdp | ldp; ``epsilon`` > 0 and ``delta`` in [0, 1) (the claim);
    ``calibration``: ``paper`` (printed constants) or ``tight`` (corrected sensitivities, noise
    from :func:`privacct.calibrate.calibrate_log` for the same claim); ``episodes`` K >= 1;
    ``horizon`` H (None: the environment's default); ``bonus_scale``: multiplier on the
    confidence/bonus width (a tunable, not a privacy parameter); ``options``: family-specific.
    """

    algorithm: str
    privacy: str = "none"
    epsilon: float = 1.0
    delta: float = 0.0
    calibration: str = "paper"
    episodes: int = 1000
    env: str | None = None
    horizon: int | None = None
    bonus_scale: float = 1.0
    options: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    def option(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)


@dataclass
class RunResult:
    """What one batched run returns. ``regret`` is per-episode exact regret, shape (n_seeds, K)."""

    config: RunConfig
    regret: np.ndarray
    log: MechanismLog | None
    ledger: Ledger | None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def cumulative_regret(self) -> np.ndarray:
        return np.cumsum(self.regret, axis=1)


class RunFn(Protocol):
    def __call__(self, config: RunConfig, seeds: list[np.random.SeedSequence], *,
                 progress: Callable[[int], None] | None = None) -> RunResult: ...


@dataclass(frozen=True)
class LearnerSpec:
    """A named learner: how to build its declared log and how to run a batch of seeds."""

    name: str
    family: str
    paper: str
    privacy_models: tuple[str, ...]
    default_env: str
    description: str
    build_log: Callable[[RunConfig], MechanismLog | None]
    run: RunFn
    #: The settings at which the paper states its privacy claim: RunConfig keyword dicts
    #: (privacy, epsilon, delta, episodes, horizon, env, ...), used by ``privacct report``.
    paper_settings: tuple[dict[str, Any], ...] = ()
