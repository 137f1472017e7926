"""Finite-horizon tabular MDPs with known, step-dependent kernels and mean rewards.

A :class:`TabularMDP` holds ``P[h, s, a, s']`` (shape ``(H, S, A, S)``, each row a probability
vector) and mean rewards ``R[h, s, a]`` in [0, 1] (shape ``(H, S, A)``), with a fixed initial
state. Steps are 0-based in code (h = 0..H-1 is the paper's h = 1..H).

Exact values by backward induction (Bellman equations, Chowdhury & Zhou 2022 [seed 002] §2.1,
written for rewards; the paper's costs are ``c = 1 - r``, which leaves regret unchanged because
every episode has exactly H steps, docs/seed-002-tabular.md#departures):

    Q_h(s, a) = R_h(s, a) + sum_{s'} P_h(s'|s, a) V_{h+1}(s'),   V_{H+1} = 0
    V*_h(s) = max_a Q*_h(s, a);   V^pi_h(s) = sum_a pi_h(a|s) Q^pi_h(s, a).

Regret of a policy = V*_1(s_1) - V^pi_1(s_1) (exact, not a sampled return). Policy evaluation is
vectorised over a leading batch axis of policies (one per seed).

Realised rewards are the means (deterministic rewards, as in the RiverSwim of the authors' code);
transitions are sampled from uniforms supplied by the caller, so that the learner controls which
Generator each seed's randomness comes from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from privacct.errors import PrivacctError, check_count


@dataclass(frozen=True, eq=False)
class TabularMDP:
    """Finite-horizon MDP. ``P``: (H, S, A, S) row-stochastic; ``R``: (H, S, A) in [0, 1]."""

    P: np.ndarray
    R: np.ndarray
    initial_state: int = 0
    name: str = "tabular"
    _cdf: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        P = np.array(self.P, dtype=float)
        R = np.array(self.R, dtype=float)
        if P.ndim != 4 or P.shape[1] != P.shape[3]:
            raise PrivacctError(f"P must have shape (H, S, A, S), got {P.shape}")
        if R.shape != P.shape[:3]:
            raise PrivacctError(f"R must have shape {P.shape[:3]} (H, S, A), got {R.shape}")
        if np.any(P < 0) or not np.allclose(P.sum(axis=-1), 1.0, atol=1e-9):
            raise PrivacctError("P must hold probability vectors over s' (non-negative, rows sum to 1)")
        if np.any(R < 0) or np.any(R > 1):
            raise PrivacctError("R (mean rewards) must lie in [0, 1]")
        s1 = int(self.initial_state)
        if not 0 <= s1 < P.shape[1]:
            raise PrivacctError(f"initial_state must be in [0, {P.shape[1] - 1}], got {self.initial_state!r}")
        P.setflags(write=False)
        R.setflags(write=False)
        cdf = np.cumsum(P, axis=-1)
        cdf[..., -1] = 1.0  # guard against rounding: a uniform in [0, 1) always lands in a state
        cdf.setflags(write=False)
        object.__setattr__(self, "P", P)
        object.__setattr__(self, "R", R)
        object.__setattr__(self, "initial_state", s1)
        object.__setattr__(self, "_cdf", cdf)

    @property
    def horizon(self) -> int:
        return int(self.P.shape[0])

    @property
    def n_states(self) -> int:
        return int(self.P.shape[1])

    @property
    def n_actions(self) -> int:
        return int(self.P.shape[2])

    # ---- exact values -----------------------------------------------------------------------
    def optimal_q(self) -> np.ndarray:
        """Q*_h(s, a) for h = 0..H-1, shape (H, S, A), by backward induction."""
        H, S, A = self.R.shape
        Q = np.zeros((H, S, A))
        V = np.zeros(S)
        for h in range(H - 1, -1, -1):
            Q[h] = self.R[h] + self.P[h] @ V
            V = Q[h].max(axis=1)
        return Q

    def optimal_values(self) -> np.ndarray:
        """V*_h(s), shape (H + 1, S); row H is the terminal zero."""
        Q = self.optimal_q()
        return np.concatenate([Q.max(axis=2), np.zeros((1, self.n_states))])

    def optimal_value(self) -> float:
        """V*_1(s_1): the optimal expected return from the initial state (computed once: P and R are read-only, so
        every call returns the same float; :meth:`regret` reads it per batch)."""
        v = self.__dict__.get("_v_star")
        if v is None:
            v = float(self.optimal_values()[0, self.initial_state])
            object.__setattr__(self, "_v_star", v)
        return v

    def policy_values(self, policy: np.ndarray) -> np.ndarray:
        """V^pi_1(s_1) for a batch of policies.

        ``policy``: deterministic, int array (B, H, S) of actions; or stochastic, float array
        (B, H, S, A) of action probabilities. Returns shape (B,).
        """
        pol = np.asarray(policy)
        H, S, A = self.R.shape
        if pol.ndim == 3 and pol.shape[1:] == (H, S) and np.issubdtype(pol.dtype, np.integer):
            if np.any(pol < 0) or np.any(pol >= A):
                raise PrivacctError(f"policy actions must be in [0, {A - 1}]")
            return self.evaluate_kernel(*self.policy_kernel(pol))
        if pol.ndim == 4 and pol.shape[1:] == (H, S, A):
            B = pol.shape[0]
            V = np.zeros((B, S))
            P2 = self.P.reshape(H, S * A, S)
            for h in range(H - 1, -1, -1):
                Q = self.R[h][None] + (V @ P2[h].T).reshape(B, S, A)
                V = (pol[:, h] * Q).sum(axis=2)
            return V[:, self.initial_state].copy()
        raise PrivacctError(
            f"policy must be an int array (B, {H}, {S}) of actions or a float array (B, {H}, {S}, {A}) of probabilities, got {pol.dtype} {pol.shape}"
        )

    def policy_kernel(self, pol: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(r_pi (B, H, S), P_pi (B, H, S, S')) of deterministic policies ``pol`` int (B, H, S)."""
        H, S = self.horizon, self.n_states
        h_idx = np.arange(H)[None, :, None]
        s_idx = np.arange(S)[None, None, :]
        return self.R[h_idx, s_idx, pol], self.P[h_idx, s_idx, pol]

    def evaluate_kernel(self, r_pi: np.ndarray, P_pi: np.ndarray) -> np.ndarray:
        """V^pi_1(s_1), shape (B,), from a policy's rewards r_pi (B, H, S) and kernel P_pi (B, H, S, S')."""
        B, H, S = r_pi.shape
        V = np.zeros((B, S, 1))
        for h in range(H - 1, -1, -1):
            V = r_pi[:, h, :, None] + np.matmul(P_pi[:, h], V)
        return V[:, self.initial_state, 0].copy()

    def regret(self, policy: np.ndarray) -> np.ndarray:
        """Exact per-episode regret V*_1(s_1) - V^pi_1(s_1) for a batch of policies, shape (B,)."""
        return self.optimal_value() - self.policy_values(policy)

    def uniform_policy_regret(self) -> float:
        """Exact per-episode regret of the uniform random policy (every action w.p. 1/A at every (h, s)):
        V*_1(s_1) - V^unif_1(s_1), both by backward induction. K episodes of a learner that never learns
        (e.g. ties broken at random while every Q sits at its cap) cost about K times this."""
        H, S, A = self.R.shape
        return float(self.regret(np.full((1, H, S, A), 1.0 / A))[0])

    # ---- sampling -----------------------------------------------------------------------------
    def sample_next(self, h: int, s: np.ndarray, a: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Next states for a batch: inverse-CDF of P_h(.|s, a) at uniforms ``u`` in [0, 1)."""
        cdf = self._cdf[h, s, a]                                   # (B, S), last column exactly 1
        return (u[:, None] < cdf).argmax(axis=1)                   # first s' with u < F(s')

    def reward(self, h: int, s: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Realised (= mean) rewards for a batch, in [0, 1]."""
        return self.R[h, s, a]


def stationary(P: np.ndarray, R: np.ndarray, horizon: int, *, initial_state: int = 0,
               name: str = "tabular") -> TabularMDP:
    """A :class:`TabularMDP` with the same (S, A, S) kernel and (S, A) rewards at every step."""
    H = check_count("horizon", horizon)
    P = np.asarray(P, dtype=float)
    R = np.asarray(R, dtype=float)
    return TabularMDP(np.broadcast_to(P, (H,) + P.shape).copy(), np.broadcast_to(R, (H,) + R.shape).copy(),
                      initial_state, name)
