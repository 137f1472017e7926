"""Shared machinery of the linear-MDP learners: config checks, seeds, the batched episode loop
state, least-squares value iteration (LSVI) and positive-definiteness handling.

Batch axis: every array has a leading axis of size B = number of seeds. Seed ``i`` of a batch
owns two Generators derived from ``seeds[i]`` without mutating it (children 0 and 1 of its spawn
tree, as ``SeedSequence.spawn`` would give them): child 0 drives the environment (transitions),
child 1 drives privacy noise. A batched run therefore equals one-by-one runs with the same seeds.

LSVI backward pass (Jin et al. 2020, Alg. 1 lines 4-7; seed 004 Eqs. (1)-(5) and Alg. 1 lines 9-14;
seed 003 Alg. 2 server side), for h = H..1:

    y_h = sum_i phi(x_h^i, a_h^i) (r_h^i + V_{h+1}(x_{h+1}^i))        (recomputed with the current V)
    w_h = A_h^{-1} y~_h                                               (y~ = y (+ privacy noise))
    Q_h(s, a) = clip(<phi(s,a), w_h> + beta ||phi(s,a)||_{A_h^{-1}}, 0, H),   V_h(s) = max_a Q_h(s, a)

Finite states let y_h be computed exactly from sufficient statistics of the history: with
N_h(s, a, s') the visit counts and R_h = sum_i phi_h^i r_h^i,
y_h = R_h + sum_{s,a,s'} N_h(s,a,s') phi(s,a) V_{h+1}(s') -- the same vector as the per-episode sum,
at O(S^2 A + S A d) instead of O(k d) per step. Q is clipped to [0, H] (not only from above as
printed in seed 004 Alg. 1 line 14): the lower clip bounds the response's sensitivity
(docs/seed-004-private-lsvi-ucb.md#sensitivity); Q* >= 0 so optimism is kept. Ties in argmax go to the lowest action index
(deterministic; docs/seed-004-private-lsvi-ucb.md#departures).
"""

from __future__ import annotations

import bisect
import functools
import math
import weakref
from typing import Any, Callable, Iterable

import numpy as np

from privacct.counters.choice import TightChoice  # noqa: F401  (re-exported: the learners' tight record)
from privacct.errors import NumericalError, PrivacctError, check_delta, check_positive
from privacct.mechanisms import symmetric_from_upper, upper_triangle

from ..contract import RunConfig, child_sequence
from ..envs.linear_mdp import LINEAR_ENVS, LinearMDP, make_linear_env
from ..envs.tabular import TabularMDP

COMMON_OPTIONS = ("p", "beta", "eig_floor")


# ---- configuration ----------------------------------------------------------------------------
def check_options(config: RunConfig, allowed: Iterable[str]) -> dict[str, Any]:
    """The options as a dict; unknown names or bad values raise :class:`PrivacctError`."""
    allowed = tuple(allowed)
    opts = dict(config.options)
    extra = sorted(set(opts) - set(allowed))
    if extra:
        raise PrivacctError(f"options: unknown option(s) {', '.join(map(repr, extra))} for {config.algorithm}; "
                            f"allowed: {', '.join(allowed)}")
    if "p" in opts:
        check_delta("options.p (failure probability)", opts["p"])
    if "beta" in opts and opts["beta"] is not None:
        check_positive("options.beta", opts["beta"])
    if "eig_floor" in opts and not isinstance(opts["eig_floor"], (bool, np.bool_)):
        raise PrivacctError(f"options.eig_floor must be True or False, got {opts['eig_floor']!r}")
    return opts


def check_config(config: RunConfig, *, privacy_models: tuple[str, ...], default_env: str,
                 allow_zero_delta: bool = False) -> tuple[LinearMDP, int]:
    """Validate the common fields; return (env, K). ``allow_zero_delta``: a pure-DP (Laplace) learner."""
    if not isinstance(config, RunConfig):
        raise PrivacctError(f"config must be a RunConfig, got {type(config).__name__}")
    if config.privacy not in privacy_models:
        raise PrivacctError(f"privacy must be one of {', '.join(privacy_models)} for {config.algorithm}, got {config.privacy!r}")
    # calibration, episodes, bonus_scale (finite >= 0), epsilon: RunConfig validated them (algorithms/contract.py)
    K = int(config.episodes)
    name = config.env or default_env
    if name not in LINEAR_ENVS:
        from ..envs.registry import unknown_environment

        raise unknown_environment(name, "linear-mdp", config.algorithm)
    if config.privacy != "none":
        check_delta("delta", config.delta, allow_zero=allow_zero_delta)
    return make_linear_env(name, config.horizon), K


def check_seeds(seeds) -> list[np.random.SeedSequence]:
    seeds = list(seeds)
    if not seeds or not all(isinstance(s, np.random.SeedSequence) for s in seeds):
        raise PrivacctError("seeds must be a non-empty list of numpy SeedSequence (privacct.rng.spawn_sequences)")
    return seeds


def child_generators(seeds: list[np.random.SeedSequence], j: int) -> list[np.random.Generator]:
    """Generator of child ``j`` of every seed, without mutating the seeds (same as spawn()[j])."""
    return [np.random.default_rng(child_sequence(s, j)) for s in seeds]


def zcdp_rho(epsilon: float, delta: float) -> float:
    """rho with rho + 2 sqrt(rho log(1/delta)) = epsilon (Bun & Steinke 2016 Prop. 1.3; seed 004
    Lemma 6), i.e. rho = (sqrt(log(1/delta) + epsilon) - sqrt(log(1/delta)))^2 (docs/seed-004-private-lsvi-ucb.md#other-slips).
    Seed 004 Sec. 4.2 prints the conversion without the factor 2; Lemma 6 and Thm 16 have it,
    and it is the correct one, so it is used here."""
    L = math.log(1.0 / delta)
    return (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2


def zcdp_epsilon(rho: float, delta: float) -> float:
    """eps = rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016 Prop. 1.3)."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


# ---- what ``tight`` chose: privacct.counters.choice.TightChoice (re-exported) -----------------------


# ---- positive definiteness --------------------------------------------------------------------
def floored_logdet(M: np.ndarray, floor: float, *, allow_floor: bool, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(matrices, logdets, floored) for a stack ``M`` (..., d, d) of symmetric matrices.

    Every matrix whose smallest eigenvalue is below ``floor`` (> 0) has its eigenvalues raised to
    ``floor`` (post-processing of released matrices: no privacy cost; docs/seed-004-private-lsvi-ucb.md#departures),
    and ``floored`` marks it. Fast path: a Cholesky of M - floor I succeeding proves no floor is
    needed, and the log-determinant comes from a Cholesky of M. With ``allow_floor`` False a
    matrix that is not positive definite raises :class:`NumericalError` (never a silent NaN).
    """
    d = M.shape[-1]
    eye = np.eye(d)
    try:
        np.linalg.cholesky(M - floor * eye)
        L = np.linalg.cholesky(M)
        logdet = 2.0 * np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1)
        return M, logdet, np.zeros(M.shape[:-2], dtype=bool)
    except np.linalg.LinAlgError:
        pass
    if not np.all(np.isfinite(M)):
        raise NumericalError(f"{what}: non-finite entries in a noisy matrix")
    w, U = np.linalg.eigh(M)
    low = w[..., 0] < floor
    if not allow_floor and np.any(w[..., 0] <= 0):
        bad = np.argwhere(w[..., 0] <= 0)[0].tolist()
        raise NumericalError(f"{what}: matrix at index {bad} is not positive definite (smallest eigenvalue "
                             f"{w[tuple(bad)][0]:.4g}); set options eig_floor=True to floor eigenvalues at {floor:.4g}")
    wf = np.maximum(w, floor)
    out = np.where(low[..., None, None], (U * wf[..., None, :]) @ np.swapaxes(U, -1, -2), M)
    logdet = np.log(wf).sum(-1)
    # Matrices that needed no floor get the same Cholesky log-det as on the fast path, so a
    # seed's result never depends on the other seeds of its batch.
    ok = ~low
    if np.any(ok):
        L = np.linalg.cholesky(M[ok])
        logdet[ok] = 2.0 * np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1)
    return out, logdet, low


def released_logdet(M: np.ndarray, floor: float, floor_eye: np.ndarray, *, allow_floor: bool,
                    what: Callable[[], str], buf: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`floored_logdet` for a learner that calls it every episode: ``floor_eye`` is ``floor * np.eye(d)`` made
    once (the same bits as its ``floor * eye``), ``what`` a callable giving the error message's subject (built only
    when needed), and ``floored`` is None when no matrix needed the floor (its fast path: the same matrices and
    log-determinants); otherwise :func:`floored_logdet`'s result. ``buf`` (optional, float64 of shape (2,) + M.shape,
    reused): the fast path's two factorisations, of M - floor I and of M, made as ONE ``np.linalg.cholesky`` call of
    the pair written into it (the gufunc factors each matrix on its own: the same LAPACK call and bits per matrix;
    it raises when either would, and floored_logdet then decides as it does)."""
    try:
        if buf is None:
            np.linalg.cholesky(M - floor_eye)
            L = np.linalg.cholesky(M)
        else:
            np.subtract(M, floor_eye, out=buf[0])
            buf[1] = M
            L = np.linalg.cholesky(buf)[1]
    except np.linalg.LinAlgError:
        return floored_logdet(M, floor, allow_floor=allow_floor, what=what())
    return M, 2.0 * np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1), None


# ---- batch state --------------------------------------------------------------------------------
class History:
    """Sufficient statistics of all episodes played so far, per seed (exact; never released).

    ``N``: (B, H, S, A, S) visit counts; ``Rphi``: (B, H, d) = sum_i phi_h^i r_h^i;
    ``gram``: (B, H, d, d) = sum_i phi_h^i phi_h^i^T; ``outer``: the last episode's phi_h phi_h^T (after :meth:`add`).
    """

    def __init__(self, env: LinearMDP, B: int) -> None:
        H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
        self.env = env
        self.N = np.zeros((B, H, S, A, S))
        self.Rphi = np.zeros((B, H, d))
        self.gram = np.zeros((B, H, d, d))

    def add(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Add one episode per seed: states (B, H+1), actions (B, H). Returns phi (B, H, d)."""
        env = self.env
        B, H = actions.shape
        b = np.arange(B)
        phi = env.phi[states[:, :H], actions]                          # (B, H, d)
        r = env.tabular.R[np.arange(H)[None, :], states[:, :H], actions]  # (B, H)
        # every (seed, step) visit at once: the index tuples are distinct (one per (seed, step)), so a buffered += is
        # np.add.at's result (each count + 1.0 once; whole numbers, exact)
        self.N[b[:, None], np.arange(H)[None, :], states[:, :H], actions, states[:, 1:H + 1]] += 1.0
        self.Rphi += phi * r[..., None]
        outer = phi[..., :, None] * phi[..., None, :]
        self.gram += outer
        #: this episode's phi phi^T (B, H, d, d): what the Gram counters add (computed once; read nowhere else)
        self.outer = outer
        return phi


#: per TabularMDP (frozen, its cdf read-only): its (H, S, A, S) cdf as nested Python lists, for the one-seed rollout
_CDF_LISTS: "weakref.WeakKeyDictionary[TabularMDP, list]" = weakref.WeakKeyDictionary()


def _cdf_lists(tab: TabularMDP) -> list:
    got = _CDF_LISTS.get(tab)
    if got is None:
        got = _CDF_LISTS[tab] = tab._cdf.tolist()
    return got


def _play_one(tab: TabularMDP, policy: list, u: list, s: int) -> tuple[list[int], list[int]]:
    """One seed's rollout in plain Python (a 1-seed episode was ~40 numpy calls on (1, .) arrays): the same states
    as :meth:`TabularMDP.sample_next`'s first s' with u < F(s'). ``bisect_right`` finds it: over a cdf row the test
    F(s') > u is False then True (the row is non-decreasing, a cumulative sum of non-negative probabilities rounded
    monotonically, up to its last entry, set to 1.0 > u for u in [0, 1)); comparisons of the same doubles."""
    cdf = _cdf_lists(tab)
    states, actions = [s], []
    for h in range(len(u)):
        a = policy[h][s]
        row = cdf[h][s][a]
        s = bisect.bisect_right(row, u[h])
        if s == len(row):   # no F(s') > u (u >= 1: not a Generator.random value): argmax of all False is 0
            s = 0
        actions.append(a)
        states.append(s)
    return states, actions


def play_episode(env: LinearMDP, policy: np.ndarray, env_rngs: list[np.random.Generator]) -> tuple[np.ndarray, np.ndarray]:
    """Roll out deterministic policies (B, H, S) from the initial state. Returns states (B, H+1), actions (B, H).
    One seed: in plain Python (:func:`_play_one`, the same states and draws)."""
    B, H = policy.shape[0], env.horizon
    if B == 1 and type(env.tabular).sample_next is TabularMDP.sample_next:
        st, ac = _play_one(env.tabular, policy[0].tolist(), env_rngs[0].random(H).tolist(), int(env.initial_state))
        return np.array([st], dtype=np.int64), np.array([ac], dtype=np.int64)
    return batched_rollout(env, policy, np.stack([r.random(H) for r in env_rngs]))


def batched_rollout(env: LinearMDP, policy: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`play_episode`'s path for B seeds given their uniforms ``u`` (B, H) in [0, 1): states (B, H+1), actions
    (B, H), one vectorised ``sample_next`` per step."""
    B, H = policy.shape[0], env.horizon
    states = np.empty((B, H + 1), dtype=np.int64)
    actions = np.empty((B, H), dtype=np.int64)
    states[:, 0] = env.initial_state
    b = np.arange(B)
    for h in range(H):
        a = policy[b, h, states[:, h]]
        actions[:, h] = a
        states[:, h + 1] = env.tabular.sample_next(h, states[:, h], a, u[:, h])
    return states, actions


def lsvi(env: LinearMDP, Ainv: np.ndarray, N: np.ndarray, Rphi: np.ndarray, beta: float,
         y_noise=None) -> tuple[np.ndarray, np.ndarray]:
    """Backward LSVI pass for n seeds. ``Ainv``: (n, H, d, d); ``N``: (n, H, S, A, S); ``Rphi``: (n, H, d).

    ``y_noise(h, y, V)`` (optional) returns the privatised response y~_h from the exact y_h (n, d)
    built with V = V_{h+1} (n, S); it is called for h = H..1 in that order (0-based h = H-1..0), each
    y_h built from the released y~_{h+1} only (docs/seed-004-private-lsvi-ucb.md#algorithm-and-releases, order within an update). Returns
    (policy (n, H, S) int, released y~ (n, H, d)).
    """
    n = Ainv.shape[0]
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    X = env.phi.reshape(S * A, d)
    V = np.zeros((n, S))
    pol = np.zeros((n, H, S), dtype=np.int64)
    ys = np.zeros((n, H, d))
    for h in range(H - 1, -1, -1):
        M = (N[:, h] * V[:, None, None, :]).sum(-1).reshape(n, S * A)          # sum_s' N(s,a,s') V(s')
        y = Rphi[:, h] + M @ X
        if y_noise is not None:
            y = y_noise(h, y, V)
        ys[:, h] = y
        Ai = Ainv[:, h]
        w = (Ai @ y[:, :, None])[:, :, 0]                                         # (n, d)
        mean = w @ X.T                                                            # (n, SA)
        quad = ((X[None] @ Ai) * X[None]).sum(-1)                                 # (n, SA)
        Q = np.clip(mean + beta * np.sqrt(np.maximum(quad, 0.0)), 0.0, float(H)).reshape(n, S, A)
        if not np.all(np.isfinite(Q)):
            raise NumericalError("LSVI produced non-finite Q values")
        pol[:, h] = np.argmax(Q, axis=2)
        V = Q.max(axis=2)
    return pol, ys


def data_free_policy(env: LinearMDP, B: int, reg: float, beta: float) -> np.ndarray:
    """The policy of LSVI with no data and design matrix reg * I (w = 0, Q = clip(beta ||phi|| / sqrt(reg), 0, H))."""
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    Ainv = np.broadcast_to(np.eye(d) / reg, (B, H, d, d))
    pol, _ = lsvi(env, Ainv, np.zeros((B, H, S, A, S)), np.zeros((B, H, d)), beta)
    return pol


upper = upper_triangle            # privacct.mechanisms: one copy of the symmetric-matrix layout
sym = symmetric_from_upper


def cached_plan(plan_fn: Callable[[RunConfig], Any]) -> Callable[[RunConfig], Any]:
    """``plan_fn`` cached per (hashable) config, since calibration can take seconds under PLD;
    a config with an unhashable option value is planned without the cache. The key holds the option values' types:
    equal values of other types (True == 1 == 1.0) are checked apart (``update_cap=True`` is refused, not served the
    plan of ``update_cap=1``). The wrapper keeps ``cache_clear``."""
    cached = functools.lru_cache(maxsize=32)(lambda config, _types: plan_fn(config))

    @functools.wraps(plan_fn)
    def plan(config: RunConfig):
        try:
            hash(config)
        except TypeError:
            return plan_fn(config)
        return cached(config, tuple(type(v) for _, v in config.options))

    plan.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return plan


def user_episode(k: int, audit, env, pol, env_rngs, *, gram_upper: bool = False):
    """(states, actions) of user k for every seed. User k gives the response of ``audit.role(k)``: in a classic
    audited run (the contract's AuditHook) user 1 is the canary's response function and, with fixed users, users
    2..K canary A's (:mod:`.canary`); in a ONE-RUN audit (``audit.plan``) canary k answers by her bit, after her
    Gram terms under both bits given the same policy are reported (:func:`.canary.report_gram`; ``gram_upper``:
    the trees hold upper triangles); a user without a role plays one episode of ``pol`` in ``env``."""
    from . import canary as CAN

    role = None if audit is None else audit.role(k)
    if role is None:
        return play_episode(env, pol, env_rngs)
    if audit.plan is None:
        return CAN.rollout(env, role, pol)
    both = {w: CAN.rollout(env, w, pol) for w in CAN.CANARIES}
    CAN.report_gram(k, env, both, upper=gram_upper)
    return both[role]
