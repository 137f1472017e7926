"""How many episodes of uniforms the compiled linear-MDP loops draw ahead per seed (batched_jdp, lsvi_ucb)."""

from __future__ import annotations

#: the uniforms buffer (seeds x episodes x H doubles) stays under this many values: 8 MB
MAX_VALUES = 1 << 20


def chunk(most: int, seeds: int, horizon: int, episodes: int) -> int:
    """Episodes per chunk: ``most`` (>= 1), fewer when seeds x chunk x horizon would pass :data:`MAX_VALUES`, never
    more than ``episodes``, at least 1. Any chunk gives the same bytes (the Generators' streams are sequential)."""
    return max(1, min(most, episodes, MAX_VALUES // max(1, seeds * horizon)))
