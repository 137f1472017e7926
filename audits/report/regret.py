"""The report's regret column: the private learner with the printed and the tight noise, the
non-private learner at the same K and constants, and the uniform random policy, all exact
(V*_1(s_1) - V^pi_1(s_1) by backward induction on the true model, summed over episodes).

A private learner *does not learn at this K* when its mean cumulative regret is within
:data:`LEARN_MARGIN` (10%) of the uniform policy's, or above it. The uniform policy's regret is the
learner's own ``LearnerSpec.uniform_regret`` (each environment's exact evaluation, the same figure
``privacct run`` prints).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from privacct.errors import PrivacctError
from privacct.rng import spawn_sequences

#: Within this fraction of the uniform policy's regret (or above it), a learner does not learn.
LEARN_MARGIN = 0.10


@dataclass(frozen=True)
class Regret:
    """Final cumulative regret over seeds."""

    mean: float
    std: float

    @classmethod
    def of(cls, cum: np.ndarray) -> "Regret":
        return cls(float(cum[:, -1].mean()), float(cum[:, -1].std()))

    def to_dict(self) -> dict[str, float]:
        return {"regret_mean": self.mean, "regret_std": self.std}


@dataclass(frozen=True)
class RegretColumn:
    """The regret column of one row (module docstring)."""

    episodes: int
    seeds: int
    paper: Regret
    tight: Regret
    nonprivate: Regret
    nonprivate_learner: str
    nonprivate_note: str
    uniform_per_episode: float

    @property
    def uniform(self) -> float:
        return self.uniform_per_episode * self.episodes

    def learns(self, r: Regret) -> bool:
        return r.mean < (1 - LEARN_MARGIN) * self.uniform

    @property
    def statement(self) -> str:
        stuck = [name for name, r in (("printed", self.paper), ("tight", self.tight)) if not self.learns(r)]
        if not stuck:
            return (f"learns at K = {self.episodes} with both noises (regret {self.paper.mean:.4g} printed, "
                    f"{self.tight.mean:.4g} tight, below 90% of the uniform policy's {self.uniform:.4g})")
        which = "with the printed or the tight noise" if len(stuck) == 2 else f"with the {stuck[0]} noise"
        base = (f"the non-private {self.nonprivate_learner} reaches {self.nonprivate.mean:.4g}"
                if self.learns(self.nonprivate) else
                f"nor does the non-private {self.nonprivate_learner} ({self.nonprivate.mean:.4g})")
        return (f"does not learn at K = {self.episodes} {which}: regret {self.paper.mean:.4g} printed, "
                f"{self.tight.mean:.4g} tight, not below 90% of the uniform policy's {self.uniform:.4g}; {base}")

    def to_dict(self) -> dict[str, Any]:
        return {"episodes": self.episodes, "seeds": self.seeds, "paper": self.paper.to_dict(), "tight": self.tight.to_dict(),
                "nonprivate": {**self.nonprivate.to_dict(), "algorithm": self.nonprivate_learner, "note": self.nonprivate_note},
                "uniform": {"regret_mean": self.uniform, "per_episode": self.uniform_per_episode},
                "learns": {"paper": self.learns(self.paper), "tight": self.learns(self.tight),
                           "nonprivate": self.learns(self.nonprivate)},
                "margin": LEARN_MARGIN, "statement": self.statement}


class RegretRuns:
    """Runs the regret curves of the report, each configuration once (the non-private baselines are
    shared by every row with the same learner, K and constants)."""

    def __init__(self, seeds: int, seed: int) -> None:
        self.seeds, self.seed = seeds, seed
        self._cache: dict[Any, np.ndarray] = {}

    def cumulative(self, spec, cfg) -> np.ndarray:
        if cfg not in self._cache:
            from privacct.algorithms.scaleout import run_seeds   # local, or seed chunks on the --scheduler cluster

            res = run_seeds(spec, cfg, spawn_sequences(self.seed, self.seeds))
            self._cache[cfg] = np.cumsum(np.asarray(res.regret, dtype=float), axis=1)
        return self._cache[cfg]

    def column(self, spec, cfg, setting, episodes: int) -> tuple[RegretColumn, dict[str, np.ndarray]]:
        """The column of ``cfg`` (paper calibration) at K = ``episodes``, and the mean curves."""
        from privacct.algorithms.registry import get_learner

        run_cfg = replace(cfg, episodes=episodes, env=cfg.env or spec.default_env)
        paper = self.cumulative(spec, run_cfg)
        tight = self.cumulative(spec, replace(run_cfg, calibration="tight"))
        base_name = setting.baseline or spec.name
        base_spec = get_learner(base_name)
        base_cfg = replace(run_cfg, algorithm=base_name, privacy="none", calibration="paper", epsilon=1.0, delta=0.0)
        base = self.cumulative(base_spec, base_cfg)
        if spec.uniform_regret is None:
            raise PrivacctError(f"learner {spec.name!r} declares no uniform_regret; the report's regret column needs it")
        u = float(spec.uniform_regret(run_cfg))
        col = RegretColumn(episodes, self.seeds, Regret.of(paper), Regret.of(tight), Regret.of(base), base_name,
                           setting.baseline_note or f"{base_name} without privacy", u)
        curves = {"paper": paper.mean(0), "tight": tight.mean(0), "nonprivate": base.mean(0),
                  "uniform": u * np.arange(1, episodes + 1)}
        return col, curves


__all__ = ["LEARN_MARGIN", "Regret", "RegretColumn", "RegretRuns"]
