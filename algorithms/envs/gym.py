"""A small Gymnasium-style adapter over a :class:`~privacct.algorithms.envs.tabular.TabularMDP`.

``reset(seed=None) -> (state, info)`` and ``step(action) -> (state, reward, terminated,
truncated, info)`` with the Gymnasium return conventions (gymnasium itself is not required).
The episode ends (``truncated=True``) after H steps; ``info["h"]`` is the 0-based step index.
Randomness comes from a ``numpy.random.Generator`` built from ``SeedSequence(seed)``.
Learners in this package use the batched model directly; this adapter is for users' own loops.
"""

from __future__ import annotations

import numpy as np

from privacct.errors import PrivacctError

from .tabular import TabularMDP


class GymAdapter:
    """One episode at a time through reset/step; ``observation_space_n`` / ``action_space_n`` sizes."""

    def __init__(self, mdp: TabularMDP) -> None:
        self.mdp = mdp
        self.observation_space_n = mdp.n_states
        self.action_space_n = mdp.n_actions
        self._rng = np.random.default_rng(np.random.SeedSequence(0))
        self._h: int | None = None
        self._s = mdp.initial_state

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[int, dict]:
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise PrivacctError(f"seed must be an integer >= 0, got {seed!r}")
            self._rng = np.random.default_rng(np.random.SeedSequence(int(seed)))
        self._h = 0
        self._s = self.mdp.initial_state
        return self._s, {"h": 0}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict]:
        if self._h is None:
            raise PrivacctError("call reset() before step()")
        if self._h >= self.mdp.horizon:
            raise PrivacctError("the episode is over (H steps taken); call reset()")
        a = int(action)
        if not 0 <= a < self.mdp.n_actions:
            raise PrivacctError(f"action must be in [0, {self.mdp.n_actions - 1}], got {action!r}")
        h, s = self._h, self._s
        r = float(self.mdp.R[h, s, a])
        nxt = int(self.mdp.sample_next(h, np.array([s]), np.array([a]), self._rng.random(1))[0])
        self._h = h + 1
        self._s = nxt
        return nxt, r, False, self._h >= self.mdp.horizon, {"h": self._h}
