"""Linear mixture MDPs with finitely many states (exact regret by backward induction).

A linear mixture MDP (Ayoub et al. 2020; seed 001 Def. 3.1; seed 000 Assumption 1; seed 003
Assumption 2) has a known feature map phi(s'|s,a) in R^d and unknown theta_h with
P_h(s'|s,a) = <phi(s'|s,a), theta_h>. Here S is finite, so the kernel ``P = einsum(phi, theta)``
is materialised as a :class:`privacct.algorithms.envs.tabular.TabularMDP` (the tabular engineer's class,
imported, not edited) which gives exact V*, V^pi and inverse-CDF sampling.

:class:`LinearMixtureMDP` adds what the learners need:

* ``features`` (S, A, S, d) and ``phi_v(V)``: phi_V(s,a) = sum_{s'} phi(s'|s,a) V(s') for a batch
  of value vectors V (B, S) at once -> (B, S*A, d) (seed 001 eq. for phi_V);
* ``reward_features`` (S, A, d2), ||.||_2 <= 1: the reward feature map varphi(s,a) of seed 000
  (r_h(s,a) = <varphi(s,a), theta_{h,r}>; one-hot, so the known rewards are exactly linear);
* ``reward_max``: the largest one-step reward; value caps are ``reward_max * (H - h)`` for V_h
  (0-based h), the truncation level the learners use (Alg. 1 of seed 001 truncates at H-h+1;
  with rewards normalised by H this is (H-h+1)/H, the reading of docs/seed-001-linear-mixture-ldp.md#departures);
* ``phi_norm_bound``: b with sup_{V in [0,1]^S, s, a} ||phi_V(s,a)||_2 <= b, computed exactly
  (enumerating the vertices {0,1}^supp of the cube, since the norm is convex in V), so the
  sensitivity derivations use the real feature geometry, not assumption (3.1) (docs/seed-001-linear-mixture-ldp.md#sensitivity);
* ``phi_l1_bound``: b1 with sup_{V in [0,1]^S, s, a} ||phi_V(s,a)||_1 <= b1 (same enumeration; the l1
  sensitivities of the pure-DP Laplace learners of seed 003 App. C.4 use it);
* ``theta_norm_bound``: the structural bound on ||theta_h||_2 a learner may use (public).

Environments
------------
``riverswim_lm(S, homogeneous=True)`` -- seed 001 §6 RiverSwim as a linear mixture, one-hot
features e_{(s,a,s')} (d = S^2 A = 2 S^2), rewards normalised by H (r(0,left) = 5/(1000 H),
r(S-1,right) = 1/H), H = 2S. **Our reading of what the paper leaves out** (Figure 1 is an image):

* states 0..S-1, start state 0 (leftmost), actions 0 = left, 1 = right;
* homogeneous kernel (the TabulaRL-style episodic RiverSwim of docs/seed-001-linear-mixture-ldp.md#experiments): left is
  deterministic to max(s-1, 0); right at interior s: s+1 w.p. 0.3, stay 0.6, s-1 0.1; right at
  s = 0: 1 w.p. 0.7, stay 0.3; right at s = S-1: stay 0.9, S-2 w.p. 0.1;
* "r(S,1) = 1/H" is read as the rightmost state S-1 with action right;
* inhomogeneous variant: p_h ~ U(0.8, 1) is read as the probability that the right action does
  *not* slip back: interior right -> s+1 w.p. 0.3, stay p_h - 0.3, s-1 w.p. 1 - p_h; at S-1:
  stay p_h, S-2 w.p. 1 - p_h; s = 0 unchanged. The homogeneous kernel is the case p_h = 0.9
  (the mean of U(0.8, 1)). {p_h} are drawn ONCE per MDP instance from ``instance_seed`` (the
  paper does not say once-per-MDP or once-per-run; we keep one MDP for all runs, as its caption
  "averaged over 10 runs" of one instance suggests).

``hard_to_learn(d=5, H=6, K=10000)`` -- the hard instance of Zhou, Gu, Szepesvari (2021) as
implemented in the seed-001 authors' public code (class ``HardToLearn``): S = H + 2 states
(chain states 0..H-1, state H = x_{H+1} absorbing with reward 0, state H+1 = x_{H+2} absorbing
with reward 1 per step), A = 2^(d-1) actions a in {-1,1}^(d-1) (index i -> binary digits of i,
most significant first, 0 -> -1), delta = 1/H, Delta = sqrt(delta/K)/(4 sqrt 2),
alpha = sqrt(1/(1+Delta(d-1))), beta = sqrt(Delta/(1+Delta(d-1))); features
phi(s+1|s,a) = (alpha(1-delta), -beta a), phi(x_{H+2}|s,a) = (alpha delta, beta a),
phi(s|s,a) = (alpha, 0) for absorbing s; theta_h = (1/alpha, mu_h/beta), mu_h in {-Delta,Delta}^(d-1)
drawn once from ``instance_seed`` (the authors draw it with the unseeded global numpy RNG, once
per environment, shared by their 10 runs). Rewards are not normalised (reward_max = 1, V <= H),
as in the authors' code. Start state 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import numpy as np

from privacct.errors import PrivacctError, check_count, check_positive

from .registry import unknown_environment
from .tabular import TabularMDP


@dataclass(frozen=True, eq=False)
class LinearMixtureMDP:
    """A finite linear mixture MDP: P_h(s'|s,a) = <features[s,a,s'], theta[h]>.

    ``features``: (S, A, S, d); ``theta``: (H, d); ``rewards``: (H, S, A) in [0, reward_max];
    ``reward_features``: (S, A, d2) with rows of norm <= 1; ``assumptions``: our readings of
    what the source leaves out (recorded in every run's info).
    """

    name: str
    features: np.ndarray
    theta: np.ndarray
    rewards: np.ndarray
    reward_features: np.ndarray
    reward_max: float
    theta_norm_bound: float
    initial_state: int = 0
    assumptions: tuple[tuple[str, str], ...] = ()
    mdp: TabularMDP = field(init=False, repr=False)
    phi_norm_bound: float = field(init=False)
    phi_l1_bound: float = field(init=False)

    def __post_init__(self) -> None:
        F = np.array(self.features, dtype=float)
        th = np.array(self.theta, dtype=float)
        if F.ndim != 4 or F.shape[0] != F.shape[2]:
            raise PrivacctError(f"features must have shape (S, A, S, d), got {F.shape}")
        if th.ndim != 2 or th.shape[1] != F.shape[3]:
            raise PrivacctError(f"theta must have shape (H, {F.shape[3]}), got {th.shape}")
        P = np.einsum("satd,hd->hsat", F, th)
        P[np.abs(P) < 1e-15] = 0.0
        R = np.asarray(self.rewards, dtype=float)
        rmax = check_positive("reward_max", self.reward_max)
        if rmax > 1:
            raise PrivacctError(f"reward_max must be in (0, 1], got {rmax}")
        if R.shape != P.shape[:3] or np.any(R < 0) or np.any(R > rmax + 1e-12):
            raise PrivacctError(f"rewards must have shape {P.shape[:3]} with values in [0, reward_max={rmax}]")
        if np.any(P < -1e-12) or not np.allclose(P.sum(axis=-1), 1.0, atol=1e-9):
            raise PrivacctError("features x theta must give probability vectors (a valid linear mixture kernel)")
        P = np.clip(P, 0.0, None)
        P = P / P.sum(axis=-1, keepdims=True)
        phi_r = np.array(self.reward_features, dtype=float)
        if phi_r.ndim != 3 or phi_r.shape[:2] != F.shape[:2]:
            raise PrivacctError(f"reward_features must have shape (S, A, d2), got {phi_r.shape}")
        if np.any(np.linalg.norm(phi_r, axis=-1) > 1 + 1e-12):
            raise PrivacctError("reward_features must have l2 norm <= 1 (seed 000 Assumption 1)")
        for arr in (F, th, R, phi_r):
            arr.setflags(write=False)
        object.__setattr__(self, "features", F)
        object.__setattr__(self, "theta", th)
        object.__setattr__(self, "rewards", R)
        object.__setattr__(self, "reward_features", phi_r)
        object.__setattr__(self, "reward_max", rmax)
        object.__setattr__(self, "mdp", TabularMDP(P, R, self.initial_state, self.name))
        object.__setattr__(self, "phi_norm_bound", _phi_norm_bound(F))
        object.__setattr__(self, "phi_l1_bound", _phi_norm_bound(F, ord=1))
        flat = np.ascontiguousarray(F.reshape(F.shape[0] * F.shape[1], F.shape[2], F.shape[3]))
        flat.setflags(write=False)
        object.__setattr__(self, "_flat", flat)

    # ---- sizes ----------------------------------------------------------------------------
    @property
    def horizon(self) -> int:
        return int(self.theta.shape[0])

    @property
    def n_states(self) -> int:
        return int(self.features.shape[0])

    @property
    def n_actions(self) -> int:
        return int(self.features.shape[1])

    @property
    def dim(self) -> int:
        return int(self.features.shape[3])

    @property
    def reward_dim(self) -> int:
        return int(self.reward_features.shape[2])

    def value_cap(self, h: int) -> float:
        """Upper bound on V_h (0-based h = 0..H): reward_max * (H - h); 0 at h = H."""
        return self.reward_max * (self.horizon - h)

    # ---- features -------------------------------------------------------------------------
    def phi_v(self, V: np.ndarray) -> np.ndarray:
        """phi_V(s,a) for all (s,a) and a batch of values V (B, S) -> (B, S*A, d), row s*A + a."""
        return np.tensordot(V, self._flat, axes=([1], [1]))  # type: ignore[attr-defined]

    # ---- exact values ----------------------------------------
    @property
    def P(self) -> np.ndarray:
        return self.mdp.P

    def optimal_values(self) -> np.ndarray:
        """V*_h(s), shape (H + 1, S) (row H is 0)."""
        return self.mdp.optimal_values()

    def optimal_value(self) -> float:
        return self.mdp.optimal_value()

    def policy_values(self, policy: np.ndarray) -> np.ndarray:
        """V^pi_1(s_1) for a batch of policies: int (B, H, S) actions or float (B, H, S, A) probabilities."""
        return self.mdp.policy_values(policy)

    def regret(self, policy: np.ndarray) -> np.ndarray:
        """Exact regret V*_1(s_1) - V^pi_1(s_1) per policy of the batch, shape (B,)."""
        return self.optimal_value() - self.policy_values(policy)

    def uniform_policy_regret(self) -> float:
        """Exact per-episode regret of the uniform random policy (:meth:`TabularMDP.uniform_policy_regret`)."""
        return self.mdp.uniform_policy_regret()

    def sample_next(self, h: int, s: np.ndarray, a: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Next states (inverse CDF of P_h(.|s,a) at uniforms u in [0,1)), batched."""
        return self.mdp.sample_next(h, s, a, u)

    def describe(self) -> dict:
        return {"name": self.name, "S": self.n_states, "A": self.n_actions, "H": self.horizon, "d": self.dim,
                "d2": self.reward_dim, "reward_max": self.reward_max, "initial_state": self.initial_state,
                "phi_norm_bound": self.phi_norm_bound, "phi_l1_bound": self.phi_l1_bound,
                "theta_norm_bound": self.theta_norm_bound,
                "V_star": self.optimal_value(), "assumptions": dict(self.assumptions)}


def _phi_norm_bound(F: np.ndarray, ord: int = 2) -> float:
    """max_{s,a} max_{V in [0,1]^S} ||sum_{s'} phi(s'|s,a) V(s')||_ord (exact: vertices of the cube).

    Every norm is convex in V, so the maximum over the cube is at a vertex V in {0,1}^S; only s' with
    phi(s'|s,a) != 0 matter. Up to 12 such s' are enumerated; beyond that, non-negative features
    take V = 1 (all coordinates add up), and otherwise the triangle bound sum ||phi(s'|s,a)||.
    """
    S, A, _, _ = F.shape
    best = 0.0
    for s in range(S):
        for a in range(A):
            rows = F[s, a]
            supp = np.flatnonzero(np.any(rows != 0, axis=1))
            if supp.size == 0:
                continue
            if supp.size <= 12:
                for mask in product((0.0, 1.0), repeat=supp.size):
                    best = max(best, float(np.linalg.norm(np.asarray(mask) @ rows[supp], ord=ord)))
            elif np.all(rows >= 0):
                best = max(best, float(np.linalg.norm(rows.sum(axis=0), ord=ord)))
            else:
                best = max(best, float(np.linalg.norm(rows, ord=ord, axis=1).sum()))
    return best


# ---- RiverSwim (seed 001 §6) ------------------------------------------------------------------
LEFT, RIGHT = 0, 1


def riverswim_kernel(S: int, p: float = 0.9) -> np.ndarray:
    """RiverSwim kernel (S, 2, S) with no-slip-back probability p (p = 0.9: homogeneous kernel)."""
    P = np.zeros((S, 2, S))
    for s in range(S):
        P[s, LEFT, max(0, s - 1)] = 1.0
    P[0, RIGHT, 1] = 0.7
    P[0, RIGHT, 0] = 0.3
    for s in range(1, S - 1):
        P[s, RIGHT, s + 1] = 0.3
        P[s, RIGHT, s] = p - 0.3
        P[s, RIGHT, s - 1] = 1.0 - p
    P[S - 1, RIGHT, S - 1] = p
    P[S - 1, RIGHT, S - 2] = 1.0 - p
    return P


def riverswim_lm(n_states: int = 3, *, homogeneous: bool = True, horizon: int | None = None,
                 instance_seed: int = 0) -> LinearMixtureMDP:
    """Seed-001 RiverSwim as a linear mixture MDP (one-hot features, rewards / H, H = 2S by default)."""
    S = check_count("n_states", n_states)
    if S < 3:
        raise PrivacctError(f"n_states must be an integer >= 3, got {n_states!r}")
    H = 2 * S if horizon is None else check_count("horizon", horizon)
    A = 2
    d = S * A * S
    F = np.eye(d).reshape(S, A, S, d)
    if homogeneous:
        ps = np.full(H, 0.9)
    else:
        ps = np.random.default_rng(np.random.SeedSequence(instance_seed)).uniform(0.8, 1.0, size=H)
    theta = np.stack([riverswim_kernel(S, float(p)).reshape(-1) for p in ps])
    R = np.zeros((S, A))
    R[0, LEFT] = 5.0 / (1000.0 * H)
    R[S - 1, RIGHT] = 1.0 / H
    rf = np.eye(S * A).reshape(S, A, S * A)
    assumptions = (
        ("kernel", "TabulaRL-style RiverSwim: right 0.3 / stay p-0.3 / back 1-p (interior), 0.7/0.3 at s=0, "
                   "stay p / back 1-p at S-1; left deterministic"),
        ("p_h", "homogeneous: p=0.9 at every h" if homogeneous else
                f"p_h ~ U(0.8,1) drawn once from instance_seed={instance_seed}: {np.round(ps, 4).tolist()}"),
        ("rewards", "r(0,left)=5/(1000H), r(S-1,right)=1/H ('r(S,1)' read as the rightmost state)"),
        ("initial_state", "0 (leftmost)"),
        ("features", "one-hot e_(s,a,s'), d = S^2 A; reward features one-hot e_(s,a), d2 = S A"),
    )
    return LinearMixtureMDP(
        name=f"riverswim-lm-{'hom' if homogeneous else 'inhom'}-S{S}", features=F, theta=theta,
        rewards=np.broadcast_to(R, (H, S, A)).copy(), reward_features=rf, reward_max=1.0 / H,
        theta_norm_bound=float(np.sqrt(S * A)), initial_state=0, assumptions=assumptions)


# ---- HardToLearn (Zhou, Gu, Szepesvari 2021; seed-001 authors' code) ----------------------------
def hypercube_actions(d: int) -> np.ndarray:
    """Actions {-1,1}^(d-1) indexed as in the authors' code: binary digits of i, MSB first, 0 -> -1."""
    n = d - 1
    idx = np.arange(2 ** n)
    bits = (idx[:, None] >> np.arange(n - 1, -1, -1)[None, :]) & 1
    return 2.0 * bits - 1.0


def hard_to_learn(d: int = 5, horizon: int = 6, episodes: int = 10_000, *, instance_seed: int = 0) -> LinearMixtureMDP:
    """The HardToLearn linear mixture MDP (d >= 2, H >= 2; Delta depends on K = ``episodes``)."""
    d = check_count("d", d, minimum=2)
    H = check_count("horizon", horizon, minimum=2)
    K = check_count("episodes", episodes)
    if d > 11:
        raise PrivacctError(f"d must be an integer in [2, 11] (A = 2^(d-1) actions), got {d}")
    S = H + 2
    acts = hypercube_actions(d)
    A = acts.shape[0]
    small_delta = 1.0 / H
    Delta = np.sqrt(small_delta / K) / (4.0 * np.sqrt(2.0))
    alpha = np.sqrt(1.0 / (1.0 + Delta * (d - 1)))
    beta = np.sqrt(Delta / (1.0 + Delta * (d - 1)))
    if (d - 1) * Delta > small_delta:
        raise PrivacctError("episodes too small: the hard instance needs (d-1) Delta <= 1/H")
    bad, good = H, H + 1
    F = np.zeros((S, A, S, d))
    for s in range(H):
        nxt = s + 1  # chain state s+1; s = H-1 moves to x_{H+1} = state H
        F[s, :, nxt, 0] = alpha * (1 - small_delta)
        F[s, :, nxt, 1:] = -beta * acts
        F[s, :, good, 0] = alpha * small_delta
        F[s, :, good, 1:] = beta * acts
    for s in (bad, good):
        F[s, :, s, 0] = alpha
    rng = np.random.default_rng(np.random.SeedSequence(instance_seed))
    mu = Delta * (2.0 * rng.integers(0, 2, size=(H, d - 1)) - 1.0)
    theta = np.concatenate([np.full((H, 1), 1.0 / alpha), mu / beta], axis=1)
    R = np.zeros((H, S, A))
    R[:, good, :] = 1.0
    rf = np.zeros((S, A, S))
    rf[np.arange(S), :, np.arange(S)] = 1.0
    assumptions = (
        ("source", "seed-001 authors' HardToLearn (Zhou, Gu, Szepesvari 2021): Delta = sqrt(1/(H K))/(4 sqrt 2)"),
        ("mu", f"mu_h in {{-Delta, Delta}}^(d-1) drawn once from instance_seed={instance_seed}"),
        ("rewards", "1 per step in x_{H+2} (state H+1), else 0; not normalised (V <= H)"),
        ("reward_features", "one-hot e_s (d2 = S): rewards depend on the state only"),
    )
    return LinearMixtureMDP(
        name=f"hard-to-learn-d{d}-H{H}", features=F, theta=theta, rewards=R, reward_features=rf,
        reward_max=1.0, theta_norm_bound=float(np.sqrt(1.0 / alpha**2 + (d - 1) * Delta**2 / beta**2)),
        initial_state=0, assumptions=assumptions)


LM_ENVS = ("riverswim-lm", "riverswim-lm-inhomogeneous", "hard-to-learn")


def make_linear_mixture_env(name: str, *, horizon: int | None = None, episodes: int = 10_000,
                            n_states: int | None = None, d: int | None = None,
                            instance_seed: int = 0) -> LinearMixtureMDP:
    """Build a linear mixture environment by name (one of :data:`LM_ENVS`).

    RiverSwim: ``n_states`` S (default 3), H = 2S unless ``horizon`` is given. HardToLearn:
    ``d`` (default 5), ``horizon`` (default 6), Delta from ``episodes``.
    """
    if name in ("riverswim-lm", "riverswim-lm-inhomogeneous"):
        S = 3 if n_states is None else n_states
        return riverswim_lm(S, homogeneous=(name == "riverswim-lm"), horizon=horizon, instance_seed=instance_seed)
    if name == "hard-to-learn":
        if n_states is not None:
            raise PrivacctError("n_states is fixed to H + 2 for hard-to-learn; do not pass it")
        return hard_to_learn(5 if d is None else d, 6 if horizon is None else horizon, episodes,
                             instance_seed=instance_seed)
    raise unknown_environment(name, "linear-mixture")
