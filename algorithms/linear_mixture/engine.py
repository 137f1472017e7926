"""The value-targeted regression loop shared by every linear-mixture learner, batched over seeds.

One episode k (= one user), for all B seeds at once:

1. server side: Sigma_{k,h} = lambda I + G_{k,h} + shift_k I (G: exact, locally-noised or tree-noised
   sum of the Gram statistics), theta_{k,h} = Sigma^{-1} u_{k,h}; positive definiteness is checked
   by a Cholesky factorisation (:func:`privacct.algorithms.linear_mixture.aggregators.safe_inverse`);
2. user side (:func:`.planning.plan`), backward h = H..1: phi_V(s,a) for all (s,a) at once,
   Q_h = clip(r_h + <phi_V, theta_h> + beta_{k,h} ||phi_V||_{Sigma^{-1}}, 0, r_max (H-h+1)) -- the lower
   clip at 0 is the user-side clip of V that the sensitivity derivations need (design.py);
   seed 000 replaces r_h by <varphi, theta_r> + beta_r ||varphi||_{Sigma_r^{-1}};
3. policy: greedy with uniformly random tie-breaking among maximisers (tol 1e-12 relative), or the
   mirror-descent softmax of seed 000 Alg. 2 (pi^{k}_h ∝ exp(eta sum_{j<k} Q^j_h)), V_h = <Q_h, pi_h>;
4. exact regret V*_1(s_1) - V^{pi_k}_1(s_1) by backward induction on the true kernel;
5. roll out; x_h = phi_{V_{h+1}}(s_h,a_h) (episode k's own V, notes seed 000 §7.1), y_h = V_{h+1}(s_{h+1});
6. privatise and aggregate through :mod:`.aggregators`: ``none`` (Sherman-Morrison), ``local``
   (each user adds fresh privacct noise, users=(k,k)), ``tree`` (one privacct TreeCounter per
   release group, K-1 leaves).

Seed 003 Alg. 3 (``Design.variance_aware``): a second family ``q`` (x = phi_{V^2}(s_h, a_h), y = V_{h+1}^2)
with its own shift, and the ``p`` family weighted by 1/sigma_bar_{k,h} (Alg. 3 user side; :func:`_weights`)
computed from the broadcast (w-hat, Lambda-hat, w-tilde, Lambda-tilde) and the user's own trajectory.

Randomness per seed: three streams derived from the seed's SeedSequence without mutating it
(entropy, spawn_key + (i,)): 0 = environment transitions, 1 = policy (ties, action sampling),
2 = privacy noise. Uniforms are pre-drawn in chunks of episodes, per seed, so a batched run equals
one-by-one runs byte for byte. Audited runs (:class:`privacct.algorithms.base.AuditHook`): streams 0
(fixed users) and 1 come from the hook's coins seed, the same in every trial; user 1 is the canary
of :mod:`.canary` (JDP: a response function fed the prescribed actions; LDP: a fixed trajectory),
users 2..K canary A's response function; the observation holds every release that contains user 1
(tree: the nodes [1, 2^j] of every group's counter; local: user 1's messages), each minus the
exact contribution of users 2..t, with both canaries' statistics as its means.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.log import MechanismLog

from ..base import OBSERVED_AS, AuditHook, Observation, ObservedBlock, noise_generators, stream_generators
from . import canary as CAN
from .aggregators import ExactRidge, LocalNoise, TreeNoise, upper
from .design import Design
from .planning import plan

CHUNK = 128


def child(seed: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """The i-th child of ``seed`` without advancing its spawn counter (reusable seeds)."""
    return np.random.SeedSequence(entropy=seed.entropy, spawn_key=tuple(seed.spawn_key) + (i,),
                                  pool_size=seed.pool_size)


def run_design(des: Design, log: MechanismLog | None, seeds: list[np.random.SeedSequence], *,
               bonus_scale: float, on_non_pd: str, audit: AuditHook | None = None, shared_start: bool = True,
               progress: Callable[[int], None] | None = None) -> dict:
    """Run K episodes for every seed; returns regret (B, K), ledger, info entries and the observation."""
    env, K, H = des.env, des.K, des.H
    S, A, d = env.n_states, env.n_actions, env.dim
    B = len(seeds)
    rng_env = stream_generators(seeds, 0, audit, fixed=audit is not None and audit.fixed_users)
    rng_pol = stream_generators(seeds, 1, audit, fixed=audit is not None)
    rng_noise = noise_generators(seeds, 2, audit)
    private = des.mechanism in ("local", "tree")
    ledger = Ledger() if private else None
    scales = {g.name: g.noise_scale for g in log.release_groups} if (private and log is not None) else {}
    mechs = {g.name: g.mechanism for g in log.release_groups} if (private and log is not None) else {}
    groups = [g for g in des.groups if g.name in scales]
    if private and len(groups) != len(des.groups):
        raise PrivacctError("the mechanism log does not declare every release group of this learner")

    R = env.rewards.reshape(H, S * A)
    caps = np.array([env.value_cap(h) for h in range(H + 1)])
    bidx = np.arange(B)
    rr = des.reward_regression
    vr = des.variance_aware
    d2 = env.reward_dim
    vphi = env.reward_features.reshape(S * A, d2)
    qcaps = des.qcaps()

    def make(family: str, dim: int, shift):
        fam_groups = [g for g in groups if g.family == family]
        if des.mechanism == "none":
            return ExactRidge(B, H, dim, des.lam)
        if des.mechanism == "local":
            return LocalNoise(B, H, dim, des.lam, shift, fam_groups, scales, rng_noise, ledger, audit is not None, mechs)
        return TreeNoise(B, H, dim, des.lam, shift, fam_groups, scales, rng_noise, ledger, K, mechs)

    agg_p = make("p", d, des.shift_p)
    agg_r = make("r", d2, des.shift_r) if rr else None
    agg_q = make("q", d, des.shift_q) if vr else None
    rec = _Recorder(audit, des, groups, scales, mechs, B, K, H) if audit is not None else None

    regret = np.zeros((B, K))
    non_pd = np.zeros(B, dtype=np.int64)
    cumQ = np.zeros((B, H, S, A)) if des.policy == "mirror-descent" else None
    beta_first = None
    vstar = env.optimal_value()
    for k in range(1, K + 1):
        c = (k - 1) % CHUNK
        if c == 0:
            n = min(CHUNK, K - k + 1)
            env_u = np.stack([r.random((n, H)) for r in rng_env])           # (B, n, H)
            pol_u = np.stack([r.random((n, H, S, A)) for r in rng_pol])     # (B, n, H, S, A)
            act_u = np.stack([r.random((n, H)) for r in rng_pol]) if cumQ is not None else None
        # ---- server: Sigma^{-1}, theta ------------------------------------------------------
        Sinv, bad = agg_p.inverse(k)
        if rr:
            Srinv, badr = agg_r.inverse(k)  # type: ignore[union-attr]
            bad = bad | badr
        if vr:
            Sqinv, badq = agg_q.inverse(k)  # type: ignore[union-attr]
            bad = bad | badq
        if bad.any():
            if on_non_pd == "error":
                b, h = np.argwhere(bad)[0]
                raise PrivacctError(f"Sigma_(k={k},h={h + 1}) of seed {b} is not positive definite "
                                    f"(option on_non_pd='error'; use 'floor' for the eigenvalue floor)")
            non_pd += bad.sum(axis=1)
        theta = np.einsum("bhij,bhj->bhi", Sinv, agg_p.u)
        beta = bonus_scale * np.broadcast_to(des.radius_p(k, agg_p.logdet()), (B, H))
        if rr:
            theta_r = np.einsum("bhij,bhj->bhi", Srinv, agg_r.u)  # type: ignore[union-attr]
            beta_r = bonus_scale * des.radius_r(k)  # type: ignore[misc]
        if vr:
            theta_q = np.einsum("bhij,bhj->bhi", Sqinv, agg_q.u)  # type: ignore[union-attr]
            weigh = _Weights(des, theta, Sinv, theta_q, Sqinv, bonus_scale * des.radius_check(k),  # type: ignore[misc]
                             bonus_scale * des.radius_q(k))  # type: ignore[misc]
        if beta_first is None:
            beta_first = beta[0].copy()
        # ---- user: backward planning (planning.plan clips V to [0, cap]) ------------------------
        mean = None
        if rr:
            mean = np.einsum("xe,bhe->bhx", vphi, theta_r)
            tr = np.einsum("xe,bhef->bhxf", vphi, Srinv)                            # (B, H, SA, d2)
            mean = mean + beta_r[None, :, None] * np.sqrt(np.maximum((tr * vphi).sum(-1), 0.0))
        probs = None
        if cumQ is not None:
            z = des.eta * cumQ
            z = np.exp(z - z.max(axis=-1, keepdims=True))
            probs = z / z.sum(axis=-1, keepdims=True)
        Qall, Vs, phis = plan(env, theta, Sinv, beta, mean=mean, probs=probs, caps=qcaps)
        if cumQ is not None:
            cumQ += Qall
            regret[:, k - 1] = vstar - env.policy_values(probs)

            def prescribe(h, s, probs=probs, c=c, act_u=act_u):
                cdf = np.cumsum(probs[bidx, h, s], axis=-1)
                return np.minimum((act_u[:, c, h, None] >= cdf).sum(-1), A - 1)
        else:
            Qmax = Qall.max(axis=-1, keepdims=True)
            tie = np.where(Qall >= Qmax - 1e-12 * max(1.0, caps[0]), pol_u[:, c], -1.0)
            pol = tie.argmax(axis=-1)                                             # (B, H, S)
            regret[:, k - 1] = vstar - env.policy_values(pol)

            def prescribe(h, s, pol=pol):
                return pol[bidx, h, s]

        def statistics(traj, phis=phis, Vs=Vs, weigh=weigh if vr else None):
            """{family: (X (B, H, dim), Y (B, H))} of trajectories (states, actions, next states, rewards)."""
            st, ac, nx, rw = traj
            X = np.stack([phis[h][bidx, st[:, h] * A + ac[:, h]] for h in range(H)], axis=1)
            Y = np.stack([Vs[h + 1][bidx, nx[:, h]] for h in range(H)], axis=1)
            out = {"p": (X, Y)}
            if rr:
                out["r"] = (vphi[st * A + ac], np.clip(rw, 0.0, env.reward_max))
            if vr:
                X2 = np.stack([np.einsum("bsd,bs->bd", env.features.reshape(S * A, S, d)[st[:, h] * A + ac[:, h]],
                                         Vs[h + 1] ** 2) for h in range(H)], axis=1)
                sbar = weigh(X, X2)
                out["p"] = (X / sbar[..., None], Y / sbar)
                out["q"] = (X2, Y * Y)
            return out
        # ---- roll out -------------------------------------------------------------------------
        if rec is not None and k == 1:
            traj = rec.canary_episode(env, des.mechanism == "tree", shared_start, prescribe, statistics)
        elif audit is not None and audit.fixed_users:
            traj = _respond_rollout(env, "A", env.initial_state, prescribe, B)
        else:
            st = np.zeros((B, H), dtype=np.int64)
            ac = np.zeros((B, H), dtype=np.int64)
            nx = np.zeros((B, H), dtype=np.int64)
            rw = np.zeros((B, H))
            s = np.full(B, env.initial_state)
            for h in range(H):
                a = prescribe(h, s)
                st[:, h], ac[:, h] = s, a
                nx[:, h] = env.sample_next(h, s, a, env_u[:, c, h])
                rw[:, h] = R[h][s * A + a]
                s = nx[:, h]
            traj = (st, ac, nx, rw)
        stats = statistics(traj)
        if rec is not None and k >= 2:
            rec.actions[:, k - 2] = traj[1]
        # ---- aggregate (privatised by the aggregator) ----------------------------------------------
        agg_p.update(k, *stats["p"])
        if rr:
            agg_r.update(k, *stats["r"])  # type: ignore[union-attr]
        if vr:
            agg_q.update(k, *stats["q"])  # type: ignore[union-attr]
        if rec is not None:
            rec.after_update(k, {"p": agg_p, "r": agg_r, "q": agg_q})
        if progress is not None and (k % 100 == 0 or k == K):
            progress(k)
    info: dict = {"non_pd_events": non_pd, "beta_first_episode": beta_first.tolist()}
    by_family = {"p": agg_p, "r": agg_r, "q": agg_q}
    parts = [by_family[g.family].released([g])[0] for g in groups]  # type: ignore[union-attr]
    if not parts:  # non-private: the exact statistics (nothing is released privately)
        parts = [upper(agg_p.G).reshape(B, -1), agg_p.u.reshape(B, -1)]
    info["final_release"] = np.concatenate([p.reshape(B, -1) for p in parts], axis=1).astype(float)
    info["released_groups"] = [g.name for g in groups]
    observation = rec.observation() if rec is not None else None
    return {"regret": regret, "ledger": ledger, "info": info, "observation": observation}


def _respond_rollout(env, which: str, start: int, prescribe, B: int):
    """(states, actions, next states, rewards), each (B, H), of JDP response function ``which``."""
    H = env.horizon
    st = np.zeros((B, H), dtype=np.int64)
    ac = np.zeros((B, H), dtype=np.int64)
    nx = np.zeros((B, H), dtype=np.int64)
    rw = np.zeros((B, H))
    s = np.full(B, start, dtype=np.int64)
    for h in range(H):
        a = prescribe(h, s)
        st[:, h], ac[:, h] = s, a
        nx[:, h], rw[:, h] = CAN.respond(env, which, h, s, a)
        s = nx[:, h]
    return st, ac, nx, rw


class _Weights:
    """sigma_bar_{k,h} of seed 003 Alg. 3 (user side) for the realised (s_h, a_h), from the broadcast.

    With x = phi_V(s_h, a_h), x2 = phi_{V^2}(s_h, a_h) and vs = r_max H (the paper's H as a value bound):
    Vbar = clip(<x2, w-tilde_h>, 0, vs^2) - clip(<x, w-hat_h>, 0, vs)^2,
    E = min{vs^2, 2 vs beta-check ||x||_{Lambda-hat^{-1}}} + min{vs^2, beta-tilde ||x2||_{Lambda-tilde^{-1}}},
    sigma_bar^2 = max{vs^2 / d, Vbar + E} (Alg. 3; the E term's second feature read as phi_{V^2}, design.py).
    The floor vs^2/d holds whatever the broadcast, which is what bounds the weighted statistics' sensitivity.
    """

    def __init__(self, des: Design, w_hat, Sinv_hat, w_til, Sinv_til, beta_check: float, beta_tilde: float) -> None:
        self.vs, self.d = des.vs, des.env.dim
        self.w_hat, self.S_hat, self.w_til, self.S_til = w_hat, Sinv_hat, w_til, Sinv_til
        self.bc, self.bt = beta_check, beta_tilde

    def __call__(self, X: np.ndarray, X2: np.ndarray) -> np.ndarray:
        vs = self.vs
        m1 = np.clip(np.einsum("bhd,bhd->bh", X, self.w_hat), 0.0, vs)
        m2 = np.clip(np.einsum("bhd,bhd->bh", X2, self.w_til), 0.0, vs * vs)
        n1 = np.sqrt(np.maximum(np.einsum("bhi,bhij,bhj->bh", X, self.S_hat, X), 0.0))
        n2 = np.sqrt(np.maximum(np.einsum("bhi,bhij,bhj->bh", X2, self.S_til, X2), 0.0))
        E = np.minimum(vs * vs, 2 * vs * self.bc * n1) + np.minimum(vs * vs, self.bt * n2)
        s2 = np.maximum(vs * vs / self.d, m2 - m1 * m1 + E)
        if not np.all(np.isfinite(s2)):
            raise PrivacctError("non-finite variance weight sigma_bar (broadcast not finite)")
        return np.sqrt(s2)


def _group_stat(g, stats: dict) -> np.ndarray:
    """One user's statistic of release group ``g`` (gram: upper triangle of x x^T; target: x y), (B, m)."""
    X, Y = stats[g.family]
    x, y = X[:, g.h], Y[:, g.h]
    if g.kind == "gram":
        return upper(np.einsum("bi,bj->bij", x, x))
    return x * y[:, None]


def _collapse(a: np.ndarray) -> np.ndarray:
    return a[0].copy() if np.all(a == a[0]) else a


class _Recorder:
    """Builds the :class:`Observation` of an audited run (module docstring)."""

    def __init__(self, audit: AuditHook, des: Design, groups, scales: dict, mechs: dict, B: int, K: int, H: int) -> None:
        self.audit, self.des, self.groups, self.scales, self.mechs = audit, des, groups, scales, mechs
        self.actions = np.zeros((B, max(K - 1, 0), H), dtype=np.int64)
        self.user1: dict[str, np.ndarray] = {}
        self.means: dict[str, dict[str, np.ndarray]] = {}
        self.blocks: list[ObservedBlock] = []

    def canary_episode(self, env, central: bool, shared_start: bool, prescribe, statistics):
        B = self.actions.shape[0]
        trajs = {}
        for which in CAN.CANARIES:
            if central:
                trajs[which] = _respond_rollout(env, which, CAN.start_state(env, which, shared_start), prescribe, B)
            else:
                st, ac, nx = CAN.ldp_trajectory(env, which)
                rw = env.rewards[np.arange(env.horizon), st, ac]
                trajs[which] = tuple(np.broadcast_to(v, (B, v.size)).copy() for v in (st, ac, nx, rw))
            stats = statistics(trajs[which])
            self.means[which] = {g.name: _collapse(_group_stat(g, stats)) for g in self.groups}
            if which == self.audit.canary:
                self.user1 = {g.name: _group_stat(g, stats) for g in self.groups}
        return trajs[self.audit.canary]

    def after_update(self, k: int, aggs: dict) -> None:
        for g in self.groups:
            agg = aggs[g.family]
            if isinstance(agg, TreeNoise):
                if k & (k - 1) or k > agg.K - 1:
                    continue
                ctr = agg.counters[g.name]
                v = ctr.noisy_sum() - ctr.exact_sum()
                v = (upper(v) if (g.kind == "gram" and g.name not in agg.upper_counter) else v) + self.user1[g.name]
                name = f"{g.name} node [1, {k}]"
            else:
                if k != 1:
                    continue
                v, name = agg.user1[g.name], f"{g.name} report of user 1"
            self.blocks.append(ObservedBlock(name, g.name, OBSERVED_AS[self.mechs[g.name]], self.scales[g.name], v,
                                             self.means["A"][g.name], self.means["B"][g.name]))

    def observation(self) -> Observation:
        return Observation(self.audit.canary, tuple(self.blocks), self.actions)
