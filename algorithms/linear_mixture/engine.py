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

Randomness per seed: three streams derived from the seed's SeedSequence without mutating it
(entropy, spawn_key + (i,)): 0 = environment transitions, 1 = policy (ties, action sampling),
2 = privacy noise. Uniforms are pre-drawn in chunks of episodes, per seed, so a batched run equals
one-by-one runs byte for byte.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.log import MechanismLog

from .aggregators import ExactRidge, LocalNoise, TreeNoise, upper
from .design import Design
from .planning import plan

CHUNK = 128


def child(seed: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """The i-th child of ``seed`` without advancing its spawn counter (reusable seeds)."""
    return np.random.SeedSequence(entropy=seed.entropy, spawn_key=tuple(seed.spawn_key) + (i,),
                                  pool_size=seed.pool_size)


def run_design(des: Design, log: MechanismLog | None, seeds: list[np.random.SeedSequence], *,
               bonus_scale: float, canary: str | None, observe: bool, on_non_pd: str,
               canary_traj: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
               progress: Callable[[int], None] | None = None) -> dict:
    """Run K episodes for every seed; returns regret (B, K), ledger and info entries."""
    env, K, H = des.env, des.K, des.H
    S, A, d = env.n_states, env.n_actions, env.dim
    B = len(seeds)
    rng_env = [np.random.default_rng(child(s, 0)) for s in seeds]
    rng_pol = [np.random.default_rng(child(s, 1)) for s in seeds]
    rng_noise = [np.random.default_rng(child(s, 2)) for s in seeds]
    private = des.mechanism in ("local", "tree")
    ledger = Ledger() if private else None
    scales = {g.name: g.noise_scale for g in log.release_groups} if (private and log is not None) else {}
    groups = [g for g in des.groups if g.name in scales]
    if private and len(groups) != len(des.groups):
        raise PrivacctError("the mechanism log does not declare every release group of this learner")

    R = env.rewards.reshape(H, S * A)
    caps = np.array([env.value_cap(h) for h in range(H + 1)])
    bidx = np.arange(B)
    rr = des.reward_regression
    d2 = env.reward_dim
    vphi = env.reward_features.reshape(S * A, d2)

    def make(family: str, dim: int, shift):
        fam_groups = [g for g in groups if g.family == family]
        if des.mechanism == "none":
            return ExactRidge(B, H, dim, des.lam)
        if des.mechanism == "local":
            return LocalNoise(B, H, dim, des.lam, shift, fam_groups, scales, rng_noise, ledger, observe)
        return TreeNoise(B, H, dim, des.lam, shift, fam_groups, scales, rng_noise, ledger, K)

    agg_p = make("p", d, des.shift_p)
    agg_r = make("r", d2, des.shift_r) if rr else None

    regret = np.zeros((B, K))
    actions_log = np.zeros((B, K, H), dtype=np.int64) if observe else None
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
        Qall, Vs, phis = plan(env, theta, Sinv, beta, mean=mean, probs=probs)
        if cumQ is not None:
            cumQ += Qall
            regret[:, k - 1] = vstar - env.policy_values(probs)
        else:
            Qmax = Qall.max(axis=-1, keepdims=True)
            tie = np.where(Qall >= Qmax - 1e-12 * max(1.0, caps[0]), pol_u[:, c], -1.0)
            pol = tie.argmax(axis=-1)                                             # (B, H, S)
            regret[:, k - 1] = vstar - env.policy_values(pol)
        # ---- roll out -------------------------------------------------------------------------
        s = np.full(B, env.initial_state)
        X = np.zeros((B, H, d))
        Y = np.zeros((B, H))
        Xr = np.zeros((B, H, d2))
        Rw = np.zeros((B, H))
        for h in range(H):
            if cumQ is not None:
                cdf = np.cumsum(probs[bidx, h, s], axis=-1)
                a = np.minimum((act_u[:, c, h, None] >= cdf).sum(-1), A - 1)
            else:
                a = pol[bidx, h, s]
            if k == 1 and canary is not None:
                cs, ca, cn = canary_traj  # type: ignore[misc]
                s = np.full(B, cs[h])
                if observe:
                    actions_log[:, 0, h] = (pol[bidx, h, s] if cumQ is None else a)
                a = np.full(B, ca[h])
                s2 = np.full(B, cn[h])
            else:
                if observe:
                    actions_log[:, k - 1, h] = a
                s2 = env.sample_next(h, s, a, env_u[:, c, h])
            X[:, h] = phis[h][bidx, s * A + a]
            Y[:, h] = Vs[h + 1][bidx, s2]
            if rr:
                Xr[:, h] = vphi[s * A + a]
                Rw[:, h] = np.clip(R[h][s * A + a], 0.0, env.reward_max)
            s = s2
        # ---- aggregate (privatised by the aggregator) ----------------------------------------------
        agg_p.update(k, X, Y)
        if rr:
            agg_r.update(k, Xr, Rw)  # type: ignore[union-attr]
        if progress is not None and (k % 100 == 0 or k == K):
            progress(k)
    info: dict = {"non_pd_events": non_pd, "beta_first_episode": beta_first.tolist()}
    if observe:
        by_family = {"p": agg_p, "r": agg_r}
        parts = [by_family[g.family].released([g])[0] for g in groups]  # type: ignore[union-attr]
        if not parts:  # non-private: the exact statistics (nothing is released privately)
            parts = [upper(agg_p.G).reshape(B, -1), agg_p.u.reshape(B, -1)]
        info["released"] = np.concatenate([p.reshape(B, -1) for p in parts], axis=1).astype(float)
        info["released_groups"] = [g.name for g in groups]
        info["actions"] = actions_log
        if des.mechanism == "local":
            user1 = {**agg_p.user1, **(agg_r.user1 if rr else {})}  # type: ignore[union-attr]
            info["released_user1"] = np.concatenate([user1[g.name].reshape(B, -1) for g in groups], axis=1)
    return {"regret": regret, "ledger": ledger, "info": info}
