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
5. roll out; x_h = phi_{V_{h+1}}(s_h,a_h) (episode k's own V, docs/seed-000-linear-mixture-jdp.md#departures), y_h = V_{h+1}(s_{h+1});
6. privatise and aggregate through :mod:`.aggregators`: ``none`` (Sherman-Morrison), ``local``
   (each user adds fresh privacct noise, users=(k,k)), ``tree`` (one privacct TreeCounter per
   release group, K-1 leaves; a FactorizedCounter where the log declares a factorized structure,
   option ``counter``).

Seed 003 Alg. 3 (``Design.variance_aware``): a second family ``q`` (x = phi_{V^2}(s_h, a_h), y = V_{h+1}^2)
with its own shift, and the ``p`` family weighted by 1/sigma_bar_{k,h} (Alg. 3 user side; :func:`_weights`)
computed from the broadcast (w-hat, Lambda-hat, w-tilde, Lambda-tilde) and the user's own trajectory.

Randomness per seed: three streams derived from the seed's SeedSequence without mutating it
(entropy, spawn_key + (i,)): 0 = environment transitions, 1 = policy (ties, action sampling),
2 = privacy noise. Uniforms are pre-drawn in chunks of episodes, per seed, so a batched run equals
one-by-one runs byte for byte. Audited runs (:class:`privacct.algorithms.base.AuditHook`): streams 0
(fixed users) and 1 come from the hook's coins seed, the same in every trial; user 1 is the canary
of :mod:`.canary` (JDP: a response function fed the prescribed actions; LDP: a fixed trajectory),
users 2..K canary A's response function. The engine writes no observation code: an audit derives it
from what the noise primitives record (:mod:`privacct.tap`; tree: the nodes [1, 2^j] of every group's
counter; local: user 1's messages), each user 1's statistic plus its noise, with both canaries'
statistics paired from a canary-A and a canary-B run (:func:`privacct.algorithms.base.pair_taps`); the
actions sent to users 2..K are reported with :func:`privacct.tap.prescribed`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.log import MechanismLog

from privacct.tap import canary_contribution, prescribed

from ..base import AuditHook, noise_generators, stream_generators
from . import canary as CAN
from .aggregators import ExactRidge, LocalNoise, TreeNoise, upper
from .design import Design
from .noise_ahead import NoiseAhead, gaussian_only
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
    structures = {g.name: g.structure for g in log.release_groups} if (private and log is not None) else {}
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

    ahead = None
    if des.mechanism == "local" and gaussian_only(groups, mechs):
        # one message per group per episode, in the update order below (p, r, q; each family's groups in order)
        dims = {"p": d, "r": d2, "q": d}
        sizes = [dims[g.family] * (dims[g.family] + 1) // 2 if g.kind == "gram" else dims[g.family]
                 for fam in ("p", "r", "q") for g in groups if g.family == fam]
        ahead = NoiseAhead(rng_noise, sizes, CHUNK, K)

    def make(family: str, dim: int, shift):
        fam_groups = [g for g in groups if g.family == family]
        if des.mechanism == "none":
            return ExactRidge(B, H, dim, des.lam)
        if des.mechanism == "local":
            return LocalNoise(B, H, dim, des.lam, shift, fam_groups, scales, rng_noise, ledger, audit is not None, mechs,
                              ahead)
        return TreeNoise(B, H, dim, des.lam, shift, fam_groups, scales, rng_noise, ledger, K, mechs, structures)

    agg_p = make("p", d, des.shift_p)
    agg_r = make("r", d2, des.shift_r) if rr else None
    agg_q = make("q", d, des.shift_q) if vr else None

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
        role = None if audit is None else audit.role(k)
        if role is not None and audit.plan is not None:
            # a one-run audit's canary: her statistics under both bits given the same history (privacct.tap)
            trajs = {w: _canary_episode(env, w, des.mechanism == "tree", shared_start, prescribe, B) for w in CAN.CANARIES}
            both = {w: statistics(trajs[w]) for w in trajs}
            for g in groups:
                canary_contribution(k, g.name, a=_primitive_value(g, both["A"], mechs),
                                    b=_primitive_value(g, both["B"], mechs))
            traj = trajs[role]
        elif audit is not None and k == 1:
            traj = _canary_episode(env, audit.canary, des.mechanism == "tree", shared_start, prescribe, B)
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
        prescribed(k, traj[1])   # the actions sent to user k (an audit's JDP output M_-1; a no-op otherwise)
        # ---- aggregate (privatised by the aggregator) ----------------------------------------------
        agg_p.update(k, *stats["p"])
        if rr:
            agg_r.update(k, *stats["r"])  # type: ignore[union-attr]
        if vr:
            agg_q.update(k, *stats["q"])  # type: ignore[union-attr]
        if progress is not None and (k % 100 == 0 or k == K):
            progress(k)
    info: dict = {"non_pd_events": non_pd, "beta_first_episode": beta_first.tolist()}
    by_family = {"p": agg_p, "r": agg_r, "q": agg_q}
    parts = [by_family[g.family].released([g])[0] for g in groups]  # type: ignore[union-attr]
    if not parts:  # non-private: the exact statistics (nothing is released privately)
        parts = [upper(agg_p.G).reshape(B, -1), agg_p.u.reshape(B, -1)]
    info["final_release"] = np.concatenate([p.reshape(B, -1) for p in parts], axis=1).astype(float)
    info["released_groups"] = [g.name for g in groups]
    return {"regret": regret, "ledger": ledger, "info": info, "observation": None}


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


def _primitive_value(g, stats: dict, mechs: dict) -> np.ndarray:
    """One user's value of group ``g`` as the aggregators hand it to the noise primitive (:mod:`.aggregators`):
    the upper triangle of x x^T for a Laplace Gram group, the matrix x x^T for a Gaussian one, x y for a target."""
    X, Y = stats[g.family]
    x, y = X[:, g.h], Y[:, g.h]
    if g.kind == "gram":
        xx = np.einsum("bi,bj->bij", x, x)
        return upper(xx) if mechs.get(g.name) == "laplace" else xx
    return x * y[:, None]


def _canary_episode(env, canary: str, central: bool, shared_start: bool, prescribe, B: int):
    """User 1's trajectory (states, actions, next states, rewards), each (B, H), as canary ``canary`` (:mod:`.canary`):
    JDP, her response function fed the actions pi^1 prescribes; LDP, her fixed trajectory."""
    if central:
        return _respond_rollout(env, canary, CAN.start_state(env, canary, shared_start), prescribe, B)
    st, ac, nx = CAN.ldp_trajectory(env, canary)
    rw = env.rewards[np.arange(env.horizon), st, ac]
    return tuple(np.broadcast_to(v, (B, v.size)).copy() for v in (st, ac, nx, rw))
