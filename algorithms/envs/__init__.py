"""Environments: finite-horizon tabular MDPs with exact values, RiverSwim, a Gymnasium-style adapter.

``ENVS`` maps a name to a factory ``f(horizon: int | None) -> TabularMDP``; :func:`make_env`
builds one by name with a clear error for unknown names.
"""

from __future__ import annotations

from typing import Callable


from .gym import GymAdapter
from .registry import unknown_environment
from .riverswim import riverswim
from .tabular import TabularMDP, stationary

ENVS: dict[str, Callable[..., TabularMDP]] = {
    "riverswim": lambda horizon=None: riverswim(20 if horizon is None else horizon),
}


def make_env(name: str, horizon: int | None = None) -> TabularMDP:
    """Build the environment ``name`` (one of :data:`ENVS`) with horizon H (None: its default)."""
    if name not in ENVS:
        raise unknown_environment(name, "tabular")
    return ENVS[name](horizon)


__all__ = ["ENVS", "GymAdapter", "TabularMDP", "make_env", "riverswim", "stationary"]
