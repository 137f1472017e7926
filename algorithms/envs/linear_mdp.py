"""Synthetic linear MDPs with finitely many states, so that V* and V^pi are exact.

Linear MDP (Jin et al. 2020, Assumption A; seed 004 Assumption 1; seed 003 Assumption 1):
a known feature map phi(s, a) in R^d, and for each step h unknown measures mu_h = (mu_h^1..mu_h^d)
over S and theta_h in R^d with

    P_h(s' | s, a) = <phi(s, a), mu_h(s')>,        r_h(s, a) = <phi(s, a), theta_h>.

Norm assumptions checked by :meth:`LinearMDP.check_assumptions` (and by a test):

* ||phi(s, a)||_2 <= 1 for all (s, a);
* ||theta_h||_2 <= sqrt(d);
* ||sum_{s'} mu_h(s') v(s')||_2 <= sqrt(d) ||v||_inf for every v: S -> R (Jin et al.; seed 003
  Assumption 1). Seed 004 prints ``max{||mu_h(S)||, ||theta_h||} <= d``; its Lemma 19 (copied from
  Jin et al.) needs the sqrt(d) version (docs/seed-004-private-lsvi-ucb.md#other-slips), which implies the printed one,
  so the instances here satisfy the sqrt(d) version;
* P_h(.|s, a) a probability vector and r_h(s, a) in [0, 1].

Construction ("simplex features", docs/seed-004-private-lsvi-ucb.md#departures): every phi(s, a) lies in the probability
simplex of R^d (so ||phi||_2 <= ||phi||_1 = 1), every mu_h^i is a probability distribution over S
(so P is one, and |<mu_h^i, v>| <= ||v||_inf gives the sqrt(d) bound), theta_h in [0, 1]^d (so
r in [0, 1] and ||theta_h|| <= sqrt(d)).

Latent factor 0 pays reward 1 and leads to state 0; factor 1 pays 0 and leads to state 1; the
other factors pay up to 0.5 and move at random. Every state owns a few "home" factors (state 0 owns
factor 0, state 1 factor 1) and offers one pure action e_i per home factor plus many mixtures of
them (a mixture is never better than the best pure action in its support, but the learner does not
know it). Users start in state ``S - 1``; the optimal policy has to find its way to state 0 and
stay there. The pure actions e_0 (at state 0) and e_1 (at state 1) are what the data-free policy
prescribes to the audit canaries (:mod:`privacct.algorithms.linear_mdp.canary`): orthogonal unit
features, rewards 1 vs 0, next states 0 vs 1.

Instances (:data:`LINEAR_ENVS`), all toolkit-designed: the papers print no experiments (docs/seed-003-linear-representation.md#experiments,
docs/seed-004-private-lsvi-ucb.md#experiments). The issue asks for "seed-003 Appendix E.1 style"; App. E.1 of seed 003
only initialises the parameters of its Alg. 2, so the small instance follows the shape requested
(2 states, many actions, d = 10) rather than anything printed:

* ``linear-two-state``: S = 2, A = 30, d = 10, H = 5 (default);
* ``linear-d10-h10``: S = 10, A = 20, d = 10, H = 10 (the scaling instance).

All instance randomness comes from a fixed SeedSequence (``instance_seed``), never from a run's
seeds: the environment is the same for every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Callable

import numpy as np

from privacct.errors import PrivacctError, check_count

from .registry import LINEAR_ENV_SIZES, unknown_environment
from .tabular import TabularMDP


@dataclass(frozen=True, eq=False)
class LinearMDP:
    """A linear MDP on finitely many states. Steps are 0-based in code (h = 0..H-1).

    ``phi``: (S, A, d) features; ``theta``: (H, d); ``mu``: (H, d, S) with ``mu[h, i]`` the measure
    mu_h^i. ``tabular`` is the induced :class:`TabularMDP` (P = phi mu, R = phi theta) that gives
    exact V*, V^pi, regret and sampling.
    """

    phi: np.ndarray
    theta: np.ndarray
    mu: np.ndarray
    initial_state: int
    name: str
    tabular: TabularMDP

    @classmethod
    def build(cls, phi, theta, mu, *, initial_state: int = 0, name: str = "linear-mdp") -> "LinearMDP":
        phi = np.array(phi, dtype=float)
        theta = np.array(theta, dtype=float)
        mu = np.array(mu, dtype=float)
        if phi.ndim != 3:
            raise PrivacctError(f"phi must have shape (S, A, d), got {phi.shape}")
        S, A, d = phi.shape
        if theta.ndim != 2 or theta.shape[1] != d:
            raise PrivacctError(f"theta must have shape (H, {d}), got {theta.shape}")
        H = theta.shape[0]
        if mu.shape != (H, d, S):
            raise PrivacctError(f"mu must have shape ({H}, {d}, {S}) (H, d, S), got {mu.shape}")
        P = np.einsum("sad,hdt->hsat", phi, mu)
        R = np.einsum("sad,hd->hsa", phi, theta)
        # Clean rounding so that TabularMDP's validation (rows sum to 1, R in [0, 1]) is exact.
        P = np.clip(P, 0.0, None)
        P = P / P.sum(axis=-1, keepdims=True)
        R = np.clip(R, 0.0, 1.0)
        tab = TabularMDP(P, R, initial_state, name)
        for a in (phi, theta, mu):
            a.setflags(write=False)
        return cls(phi, theta, mu, int(initial_state), name, tab)

    # ---- shapes ---------------------------------------------------------------------------------
    @property
    def horizon(self) -> int:
        return int(self.theta.shape[0])

    @property
    def n_states(self) -> int:
        return int(self.phi.shape[0])

    @property
    def n_actions(self) -> int:
        return int(self.phi.shape[1])

    @property
    def dim(self) -> int:
        return int(self.phi.shape[2])

    # ---- exact values (delegated to the tabular view) -------------------------------------------
    def optimal_values(self) -> np.ndarray:
        """V*_h(s), shape (H + 1, S)."""
        return self.tabular.optimal_values()

    def optimal_value(self) -> float:
        return self.tabular.optimal_value()

    def regret(self, policy: np.ndarray) -> np.ndarray:
        """Exact V*_1(s_1) - V^pi_1(s_1) for deterministic policies (B, H, S) of actions; shape (B,)."""
        return self.tabular.regret(policy)

    def uniform_policy_regret(self) -> float:
        """Exact per-episode regret of the uniform random policy (:meth:`TabularMDP.uniform_policy_regret`)."""
        return self.tabular.uniform_policy_regret()

    def optimal_w(self) -> np.ndarray:
        """w*_h = theta_h + sum_{s'} mu_h(s') V*_{h+1}(s') (Jin et al. 2020, Prop. 2.3), shape (H, d)."""
        V = self.optimal_values()
        return self.theta + np.einsum("hds,hs->hd", self.mu, V[1:])

    # ---- assumptions ------------------------------------------------------------------------------
    def check_assumptions(self, atol: float = 1e-12) -> dict[str, float]:
        """Check the linear-MDP norm assumptions; return the measured quantities.

        Raises :class:`PrivacctError` naming the violated assumption. The mu bound
        max_{||v||_inf <= 1} ||mu_h v||_2 is a convex maximisation, attained at a vertex of the
        cube: enumerated exactly for S <= 12, otherwise bounded above by sum_{s'} ||mu_h(s')||_2.
        """
        d = self.dim
        phi_norm = float(np.linalg.norm(self.phi, axis=-1).max())
        theta_norm = float(np.linalg.norm(self.theta, axis=-1).max())
        S = self.n_states
        if S <= 12:
            verts = np.array(list(product((-1.0, 1.0), repeat=S)))          # (2^S, S)
            mu_norm = float(np.linalg.norm(np.einsum("hds,vs->hvd", self.mu, verts), axis=-1).max())
        else:
            mu_norm = float(np.linalg.norm(self.mu, axis=1).sum(axis=-1).max())
        P, R = self.tabular.P, self.tabular.R
        out = {"phi_norm": phi_norm, "theta_norm": theta_norm, "mu_norm": mu_norm, "sqrt_d": float(np.sqrt(d)),
               "P_min": float(P.min()), "R_min": float(R.min()), "R_max": float(R.max())}
        if phi_norm > 1 + atol:
            raise PrivacctError(f"assumption ||phi(s,a)||_2 <= 1 fails: max is {phi_norm:g}")
        if theta_norm > np.sqrt(d) + atol:
            raise PrivacctError(f"assumption ||theta_h||_2 <= sqrt(d) fails: max is {theta_norm:g}")
        if mu_norm > np.sqrt(d) + atol:
            raise PrivacctError(f"assumption ||mu_h v||_2 <= sqrt(d) ||v||_inf fails: max is {mu_norm:g}")
        Pl = np.einsum("sad,hdt->hsat", self.phi, self.mu)
        if Pl.min() < -atol or not np.allclose(Pl.sum(-1), 1.0, atol=1e-9):
            raise PrivacctError("assumption P_h(.|s,a) = <phi, mu_h(.)> is a probability vector fails")
        Rl = np.einsum("sad,hd->hsa", self.phi, self.theta)
        if Rl.min() < -atol or Rl.max() > 1 + atol:
            raise PrivacctError("assumption r_h(s,a) = <phi, theta_h> in [0, 1] fails")
        return out


def simplex_linear_mdp(*, n_states: int, n_actions: int, dim: int, horizon: int, n_home: int,
                       instance_seed: int = 0, name: str = "linear-simplex", mix_alpha: float = 1.0) -> LinearMDP:
    """A random simplex-feature linear MDP with the pure canary actions described in the module doc.

    Every state s has ``n_home`` "home" factors (state 0 always owns factor 0, state 1 factor 1,
    the others are drawn from factors 2..d-1). Its first ``n_home`` actions are the pure home
    factors e_i (in increasing i), the remaining actions Dirichlet(``mix_alpha``) mixtures of the
    home factors. Factors 2..d-1 pay a reward uniform in [0, 0.5] and lead to a Dirichlet(0.5)
    next-state distribution. ``n_states`` >= 2, ``n_actions`` >= ``n_home`` >= 1, ``dim`` >= 3,
    ``horizon`` >= 1, ``n_home <= dim - 1`` with two states and ``n_home <= dim - 2`` with three or more
    (a state s >= 2 draws all its home factors from the d - 2 factors 2..d-1).
    """
    S = check_count("n_states", n_states, minimum=2)
    A = check_count("n_actions", n_actions, minimum=2)
    d = check_count("dim", dim, minimum=3)
    H = check_count("horizon", horizon)
    m = check_count("n_home", n_home)
    top = min(A, d - 1 if S == 2 else d - 2)
    if m > top:
        raise PrivacctError(f"n_home must be in [1, min(n_actions, {'dim - 1' if S == 2 else 'dim - 2'})] = [1, {top}] "
                            f"with {S} states, got {n_home!r}")
    rng = np.random.default_rng(np.random.SeedSequence(check_count("instance_seed", instance_seed, minimum=0)))
    eye = np.eye(d)
    phi = np.zeros((S, A, d))
    for s in range(S):
        others = rng.choice(np.arange(2, d), size=m - 1, replace=False) if m > 1 else np.zeros(0, dtype=int)
        home = np.sort(np.concatenate([[0 if s == 0 else 1 if s == 1 else int(rng.integers(2, d))], others]))
        home = np.unique(home)
        while home.size < m:                                   # states >= 2 may have drawn a duplicate
            home = np.unique(np.concatenate([home, rng.choice(np.arange(2, d), size=1)]))
        phi[s, :m] = eye[home]
        if A > m:
            phi[s, m:][:, home] = rng.dirichlet(np.full(m, mix_alpha), size=A - m)
    theta = np.zeros((H, d))
    theta[:, 0] = 1.0
    theta[:, 2:] = rng.uniform(0.0, 0.5, size=(H, d - 2))
    mu = np.zeros((H, d, S))
    mu[:, 0, 0] = 1.0
    mu[:, 1, 1] = 1.0
    mu[:, 2:, :] = rng.dirichlet(np.full(S, 0.5), size=(H, d - 2))
    return LinearMDP.build(phi, theta, mu, initial_state=S - 1, name=name)


def _instance(name: str, horizon: int | None, *, n_home: int, instance_seed: int) -> LinearMDP:
    S, A, d, H0 = LINEAR_ENV_SIZES[name]
    return simplex_linear_mdp(n_states=S, n_actions=A, dim=d, horizon=H0 if horizon is None else horizon,
                              n_home=n_home, instance_seed=instance_seed, name=name)


def two_state(horizon: int | None = None) -> LinearMDP:
    """2 states, 30 actions, d = 10, H = 5 by default."""
    return _instance("linear-two-state", horizon, n_home=5, instance_seed=2022)


def d10_h10(horizon: int | None = None) -> LinearMDP:
    """10 states, 20 actions, d = 10, H = 10 by default (the scaling instance)."""
    return _instance("linear-d10-h10", horizon, n_home=4, instance_seed=2021)


LINEAR_ENVS: dict[str, Callable[..., LinearMDP]] = {
    "linear-two-state": two_state,
    "linear-d10-h10": d10_h10,
}


def make_linear_env(name: str, horizon: int | None = None) -> LinearMDP:
    """Build the linear MDP ``name`` (one of :data:`LINEAR_ENVS`) with horizon H (None: default)."""
    if name not in LINEAR_ENVS:
        raise unknown_environment(name, "linear-mdp")
    if horizon is not None:
        check_count("horizon", horizon)
    return LINEAR_ENVS[name](horizon)


__all__ = ["LINEAR_ENVS", "LINEAR_ENV_SIZES", "LinearMDP", "make_linear_env", "simplex_linear_mdp", "two_state", "d10_h10"]
