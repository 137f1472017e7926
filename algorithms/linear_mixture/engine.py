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
one-by-one runs byte for byte. Audited runs (:class:`privacct.algorithms.contract.AuditHook`): streams 0
(fixed users) and 1 come from the hook's coins seed, the same in every trial; user 1 is the canary
of :mod:`.canary` (JDP: a response function fed the prescribed actions; LDP: a fixed trajectory),
users 2..K canary A's response function. The engine writes no observation code: an audit derives it
from what the noise primitives record (:mod:`privacct.tap`; tree: the nodes [1, 2^j] of every group's
counter; local: user 1's messages), each user 1's statistic plus its noise, with both canaries'
statistics paired from a canary-A and a canary-B run (:func:`privacct.algorithms.contract.pair_taps`); the
actions sent to users 2..K are reported with :func:`privacct.tap.prescribed`.

Compiled (issue 23 item 1): outside one-run audits, billboard checks and action pins, the whole episode loop of
every seed runs in :mod:`.episode_jit` (:func:`_run_compiled`, one call per chunk of episodes) for every learner:
LDP messages and JDP counters (binary trees, or named ``tree-honaker`` / ``blt`` counters:
:func:`_counter_strategy`, :mod:`.counter_records`), Gaussian or Laplace, with reward regression (seed 000) or
variance weights (seed 003 Alg. 3), and the non-private instances of seeds 000, 001 (UCRL-VTR: its log det kept with
numpy's own ``log1p`` loop, :mod:`.numpy_loops`) and 003; under mirror descent (private-linopt-po) the policy's
exponential by numpy's own ``exp`` loop called from the compiled loop (its SIMD ``exp`` is not the C library's;
without that loop here, one call per episode and numpy's ``exp`` between the calls). The same draws from the same
generators in the same order (noise drawn ahead per chunk, :class:`.noise_ahead.NoiseAhead`), the same ledger
records in the same order, the same arithmetic operation for operation
(docs/performance.md#same-bytes-the-rule-every-speed-up-follows): the numpy loop below is the reference
(``COMPILED = False``; tests/algorithms/linear_mixture/test_episode_jit.py compares both byte for byte) and the path
of the audits :func:`.audit_records.audit_compiles` keeps there (and of any run whose self-checks fail: numpy's LAPACK, its
log1p / exp loops). A many-trial audit runs compiled (issue 23 item 4): the canary's and the fixed users' roll-outs
in the compiled loop, the tap's records emitted in bulk by :mod:`.audit_records`, the same records, actions, ledger
and regret as the numpy loop's (tests/algorithms/linear_mixture/test_audited_compiled.py).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from privacct.counters.as_loaded import AsLoaded
from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.log import MechanismLog
from privacct.mechanisms import TreeCounter

from privacct.tap import canary_contribution, prescribed
from privacct.tap import current as current_tap

from ..contract import AuditHook, noise_generators, stream_generators
from . import canary as CAN
from .aggregators import ExactRidge, LocalNoise, TreeNoise, upper
from .audit_records import audit_compiles
from .design import Design
from .noise_ahead import GAUSSIAN_KINDS, NoiseAhead, StepsAhead, gaussian_only, honaker_draws
from .planning import plan

CHUNK = 128
#: Unaudited runs and many-trial audits run their episodes in the compiled loop (:mod:`.episode_jit`, the same bytes
#: as the numpy loop below, which stays the reference and the path of the audits :func:`.audit_records.audit_compiles`
#: keeps there; :func:`_compiled_mode` says which runs). Tests and benchmarks switch it off to compare.
COMPILED = True
#: Tie-breaking uniforms the compiled loop holds at once, all seeds together (at most; at least one episode's): the
#: numpy loop holds a 128-episode chunk, 78 MB at 100 seeds on HardToLearn, the compiled loop a few episodes' worth.
_POL_BYTES = 2 << 20


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
    ledger = Ledger() if private else None   # tree node draws as (offset, count): privacct.ledger, Tree runs
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
    aggs = {f: a for f, a in (("p", agg_p), ("r", agg_r), ("q", agg_q)) if a is not None}   # the update order
    mode = _compiled_mode(des, audit, aggs, mechs, cumQ)
    if mode is not None:
        beta_first = _run_compiled(mode, des, aggs, ahead, ledger, groups, scales, mechs, rng_env, rng_pol, rng_noise,
                                   regret, non_pd, bonus_scale=bonus_scale, on_non_pd=on_non_pd,
                                   tie_tol=1e-12 * max(1.0, caps[0]), vstar=vstar, progress=progress, cumQ=cumQ,
                                   audit=audit, shared_start=shared_start)
    for k in (() if beta_first is not None else range(1, K + 1)):
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


def _compiled_mode(des: Design, audit: AuditHook | None, aggs: dict, mechs: dict, cumQ) -> int | None:
    """The aggregation of the compiled episode loop (:mod:`.episode_jit`: ``LOCAL``, ``TREE`` or ``EXACT``) this run
    takes, or None for the numpy loop. Compiled: :data:`COMPILED`, unaudited runs and the many-trial audits
    (:func:`.audit_records.audit_compiles`, the one predicate of which audits stay on the numpy loop; the tap's records
    then emitted by :class:`.audit_records.AuditRecords`), a greedy or mirror-descent policy, every release group
    Gaussian or every one Laplace (one kind of draw in the noise stream), LDP messages or JDP counters of one strategy
    the compiled loop runs (:func:`_counter_strategy`: binary trees, ``tree-honaker`` or ``blt``; not sqrt-toeplitz)
    for every family (``aggs``: p, r under reward regression, q under variance weights), or no privacy with
    a radius that reads no log det (:func:`_radius_ignores_logdet`) or reads it in UCRL-VTR's closed form with numpy's
    ``log1p`` loop at hand (:func:`_logdet_radius`), d within the compiled planning's bound, and
    numpy's LAPACK found and the loop's arithmetic giving numpy's bits here (:func:`.episode_jit.self_check`; under
    mirror descent, ``cumQ`` given, also :func:`..tabular.po_jit.self_check`: the policy's exp stays numpy's)."""
    if not (COMPILED and audit_compiles(audit)):   # the audits that stay on the numpy loop, and why
        return None
    kinds = {mechs.get(g.name) == "laplace" for a in aggs.values() for g in getattr(a, "groups", ())}
    if len(kinds) > 1 or (des.mechanism != "none" and not kinds):
        return None
    if des.mechanism == "none" and all(isinstance(a, ExactRidge) for a in aggs.values()):
        if not _radius_ignores_logdet(des) and _logdet_radius(des) is None:
            return None   # a radius that reads log det(Sigma / lambda I) in a form the compiled loop does not know
        mode = 2
    elif des.mechanism == "local" and all(isinstance(a, LocalNoise) for a in aggs.values()):
        mode = 0
    elif des.mechanism == "tree" and all(isinstance(a, TreeNoise) for a in aggs.values()) \
            and _counter_strategy(aggs) is not None:
        mode = 1
    else:
        return None
    from .planning_jit import MAX_DIM

    env = des.env
    if env.dim > MAX_DIM:
        return None
    from .episode_jit import EXACT, LOCAL, TREE, self_check   # numba loads here, not on import (CLI start-up)

    rr, vr = "r" in aggs, "q" in aggs
    ok = self_check(env.dim, env.reward_dim if rr else 0, env.n_states * env.n_actions if rr else 0,
                    env.n_states if vr else 0)
    if ok and cumQ is not None:   # mirror descent: the stochastic policy's value and row sums (tabular.po_jit)
        from ..tabular.po_jit import self_check as po_self_check

        B, H, S, A = cumQ.shape
        ok = po_self_check(B, H, S, A)
    return (LOCAL, TREE, EXACT)[mode] if ok else None


def _readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a``: the compiled loop's read-only inputs are passed read-only on every path, so that
    numba compiles :func:`.episode_jit.run_chunk` once (a writable and a read-only array are two signatures, and the
    loop's first compilation costs about 20 s of CPU on a fresh machine)."""
    v = a.view()
    v.setflags(write=False)
    return v


def _loaded_functions() -> AsLoaded:
    """The functions a compiled counter stands for, as this module loaded them: FactorizedCounter's ``add``, ``_draw``,
    ``_mix_noise``, ``_init_mixing_state`` and the strategies' steps (a class-level change after that, e.g. a planted
    bug, keeps the numpy loop, which runs the changed code; :class:`privacct.counters.as_loaded.AsLoaded`, the guard
    the stacked counters keep too)."""
    from privacct.counters.blt import Blt
    from privacct.counters.counter import FactorizedCounter
    from privacct.counters.tree_honaker import TreeHonaker

    return AsLoaded((FactorizedCounter, ("add", "_draw", "_mix_noise", "_init_mixing_state")),
                    (TreeHonaker, ("start", "step", "noisy_sum")),
                    (Blt, ("start", "step", "noisy_sum", "mix_noise", "init_mixing_state", "init_parameters")))


_PLAIN = _loaded_functions()


def _counter_strategy(aggs: dict, probe: bool = True) -> int | None:
    """The strategy code (:data:`.episode_jit.BINARY`, ``HONAKER``, ``BLT``) of the JDP counters of every family when
    the compiled loop runs them, else None (the numpy loop). Admitted: every counter fresh (no step yet), Gaussian or
    Laplace, of one strategy for the whole run: the printed tree (a :class:`privacct.mechanisms.TreeCounter`
    itself), or a plain :class:`privacct.counters.counter.FactorizedCounter` of ``tree-honaker`` or ``blt`` (that
    class and that strategy class exactly, nothing of their step overridden on the instance or changed on the class
    since this module loaded (:data:`_PLAIN`), no batched leaves, users from 1, no audit observer but a many-trial
    audit's (:func:`_observer_ok`), no action audit's pin active); for BLT the same recursion coefficients in every
    counter, whose impulse response the compiled step reproduces bit for bit (:func:`_blt_step_ok`: the ledger's
    executed weights are probed from the counter's own noise path, so the path that runs must be that one; ``probe``
    False: not again, :func:`_run_compiled` reading the strategy :func:`_compiled_mode` admitted)."""
    from privacct.counters.blt import Blt
    from privacct.counters.counter import FactorizedCounter
    from privacct.counters.executed_cache import recursion_key
    from privacct.counters.tree_honaker import TreeHonaker
    from privacct.tap import current_pin

    counters = [c for a in aggs.values() for c in a.counters.values()]
    if any(c.steps != 0 or c.mechanism not in GAUSSIAN_KINDS + ("laplace",) for c in counters):
        return None
    if all(type(c) is TreeCounter for c in counters):   # (no counter at all: as the binary trees, nothing to add)
        return 0
    if current_pin() is not None or not all(type(c) is FactorizedCounter and c.leaf_users is None and c.first_user == 1
                                            and _observer_ok(c._observer) for c in counters):
        return None
    impl = {type(c.implementation) for c in counters}
    if not _PLAIN.unchanged():
        return None
    if impl == {TreeHonaker}:
        if any("step" in vars(c.implementation) for c in counters):
            return None
        return 1
    if impl == {Blt}:
        params = {tuple(np.asarray(p, dtype=float).tobytes() for p in c._mixing_parameters()) for c in counters}
        if len(params) != 1 or any(recursion_key(c) is None for c in counters):
            return None
        if probe and not _blt_step_ok(counters[0]):
            return None
        return 2
    return None


def _observer_ok(obs) -> bool:
    """Whether a factorized counter's audit observer lets the compiled loop run it: none (unaudited), or the
    :class:`privacct.counters.observed.CounterObserver` of a many-trial audit of the active tap (no plan), which
    :class:`.audit_records.AuditRecords` feeds as the counter's own ``add`` would."""
    if obs is None:
        return True
    from privacct.counters.observed import CounterObserver

    tap = current_tap()
    return type(obs) is CounterObserver and not obs.plan and tap is not None and obs.tap is tap


def _blt_step_ok(counter) -> bool:
    """Whether the compiled BLT step (:func:`.episode_jit._blt_add`) on the counter's coefficients gives, fed a unit
    impulse on a scalar state, the counter's own :meth:`~privacct.counters.counter.FactorizedCounter.impulse_response`
    bit for bit over the first min(K, 64) steps (the noise path the ledger's weights are probed from; as
    :func:`privacct.counters.executed_cache._short_probe` runs it)."""
    from privacct.counters.executed_cache import _short_probe

    from .episode_jit import blt_impulse

    n = min(int(counter.leaves), 64)
    P, Q = (np.ascontiguousarray(np.asarray(p, dtype=float)) for p in counter._mixing_parameters())
    if P.ndim != 1 or Q.shape != P.shape or P.size == 0:
        return False
    got = np.empty(n)
    blt_impulse(P, Q, got)
    return got.tobytes() == _short_probe(counter, n).tobytes()


def _logdet_radius(des: Design) -> tuple[int, np.ndarray] | None:
    """(numpy's float64 ``log1p`` loop, radf) for a radius that reads log det(Sigma / lambda I) in the closed form
    :attr:`.design.Design.logdet_radius` (UCRL-VTR), when the compiled loop can keep that log det with numpy's bits
    and evaluate the radius with them: numpy's own ``log1p`` loop found and checked (:func:`.numpy_loops.address`), and
    :func:`.episode_jit.logdet_beta` equal bit for bit to ``radius_p(k, logdet)`` at k = 1 and K on log dets 0, -0,
    negative, tiny, large, inf and NaN. ``radf`` = (c_theta, c, 1, caps...) (bonus_scale set by the caller). None: the
    numpy loop runs."""
    if des.logdet_radius is None or des.policy != "greedy" or des.reward_regression or des.variance_aware:
        return None
    from .numpy_loops import address

    log1p = address("log1p")
    if log1p is None:
        return None
    from .episode_jit import logdet_beta

    ct, caps, c = des.logdet_radius
    H = des.H
    radf = np.concatenate([[ct, c, 1.0], np.asarray(caps, dtype=float)])
    if radf.size != H + 3:
        return None
    rng = np.random.default_rng(20261127)
    samples = [np.zeros((2, H)), np.full((2, H), -0.0), -rng.random((2, H)) * 10, rng.random((2, H)) * 1e-12,
               rng.random((2, H)) * 10.0 ** rng.uniform(-3, 3, (2, H)), np.full((2, H), np.inf), np.full((2, H), np.nan)]
    for k in (1, max(2, des.K)):
        for ld in samples:
            want = np.asarray(des.radius_p(k, ld), dtype=float)
            got = np.empty((2, H))
            logdet_beta(ld, radf, got)
            if want.shape not in ((H,), (2, H)) or got.tobytes() != np.broadcast_to(want, (2, H)).tobytes():
                return None
    return log1p, radf


def _radius_ignores_logdet(des: Design) -> bool:
    """Whether the design's radius beta_k is the same whatever log det(Sigma / lambda I) the aggregator reports (so
    that the compiled loop need not keep it: :func:`.episode_jit.ridge_update`): the same at log det 0, 50 and NaN,
    at two episodes. UCRL-VTR's (seed 001 Sec. 6.2) reads it; the non-private instances of seeds 000 and 003 do not."""
    H = des.H
    for k in (1, max(2, des.K)):
        ref = np.asarray(des.radius_p(k, np.zeros((1, H))), dtype=float)
        for ld in (np.full((1, H), 50.0), np.full((1, H), np.nan)):
            got = np.asarray(des.radius_p(k, ld), dtype=float)
            if got.shape != ref.shape or got.tobytes() != ref.tobytes():
                return False
    return True


class _ExponentialsAhead(NoiseAhead):
    """:class:`.noise_ahead.NoiseAhead` for Laplace noise: standard exponentials, two blocks of m per draw (E1 then E2,
    as :func:`privacct.mechanisms.laplace` draws them), one generator call per seed per chunk: the same stream."""

    def ensure(self, k: int) -> None:
        if self.pos >= self.buf.shape[1]:
            n = min(self.chunk, self.K - k + 1)
            self.buf = np.empty((len(self.rngs), n * self.per_episode))
            for b, r in enumerate(self.rngs):
                r.standard_exponential(out=self.buf[b])
            self.pos = 0


#: the counter attributes :func:`_stacked_trees` stacks, per strategy code (:data:`.episode_jit.BINARY`, ``HONAKER``,
#: ``BLT``): the (levels, B, *shape) pair (None: not kept), then the (B, *shape) pair (exact sum, release / release noise)
_STACKED = {0: ("_alpha", "_noise", "_exact", "_release"), 1: ("_est", None, "_exact", "_noise"),
            2: ("_zhist", "_uhist", "_exact", "_noise")}


def _stacked_trees(agg: TreeNoise, groups, B: int, sizes: dict, strategy: int = 0):
    """The family's counters' state as four stacks per kind (Gram: (n, levels, B, m) and (n, B, m), m =
    ``sizes["gram"]`` the counter's values (d*d, or d(d+1)/2 for an upper-triangle Laplace counter); target: the same
    with m = d), each counter's attributes of :data:`_STACKED` (the tree: ``_alpha``, ``_noise``, ``_exact``,
    ``_release``; tree-honaker: ``_est``, -, ``_exact``, ``_noise``; blt: ``_zhist``, ``_uhist``, ``_exact``,
    ``_noise``; levels: the first's leading axis) rebound to views of them (the counters are fresh: all zero), so that
    the compiled loop adds into the counters themselves; and each group's slot in its kind's stacks."""
    gram = [g for g in groups if g.kind == "gram"]
    target = [g for g in groups if g.kind != "gram"]
    names = _STACKED[strategy]
    levels = getattr(next(iter(agg.counters.values())), names[0]).shape[0] if agg.counters else 1
    out = []
    for gs, m in ((gram, sizes["gram"]), (target, sizes["target"])):
        A_ = np.zeros((len(gs), levels, B, m))
        N_ = np.zeros((len(gs), levels, B, m) if names[1] else (len(gs), 1, B, 1))
        X_, R_ = np.zeros((len(gs), B, m)), np.zeros((len(gs), B, m))
        for j, g in enumerate(gs):
            c = agg.counters[g.name]
            if int(np.prod(c.shape)) != m or getattr(c, names[0]).shape[0] != levels:
                raise PrivacctError(f"counter {g.name}: {c.shape} values, the compiled loop expects {m}")
            setattr(c, names[0], A_[j].reshape((levels, B) + c.shape))
            if names[1]:
                setattr(c, names[1], N_[j].reshape((levels, B) + c.shape))
            setattr(c, names[2], X_[j].reshape((B,) + c.shape))
            setattr(c, names[3], R_[j].reshape((B,) + c.shape))
        out += [A_, N_, X_, R_]
    slot = np.array([gram.index(g) if g.kind == "gram" else target.index(g) for g in groups], dtype=np.int64)
    return slot, out


def _draw_of(g, laplace: bool) -> tuple[str, tuple[int, ...], int]:
    """(mechanism, ledger shape, values drawn) of one message or tree node of group ``g``, as the aggregators draw
    it: a Gaussian Gram matrix d(d+1)/2 normals (shape (d, d)), a Laplace Gram matrix its upper triangle (shape
    (d(d+1)/2,), two exponentials per value), a target d values."""
    mu = g.dim * (g.dim + 1) // 2
    if laplace:
        return ("laplace", (mu,), 2 * mu) if g.kind == "gram" else ("laplace", (g.dim,), 2 * g.dim)
    return ("symmetric-gaussian-matrix", (g.dim, g.dim), mu) if g.kind == "gram" else ("gaussian", (g.dim,), g.dim)


def _family(fam_groups, agg, scales: dict, laplace: bool, d: int, B: int, H: int, n: int, tree: bool,
            logdet: bool = False, strategy: int = 0):
    """The :data:`.episode_jit.Family` of one regression family (its chunk arrays ``lamshift``, ``beta`` sized n and
    filled per chunk by the caller); with ``tree`` its counters' state stacked (:func:`_stacked_trees`; ``strategy``
    their :func:`_counter_strategy`, with tree-honaker's level weights ``_honaker_weight(i)`` or the BLT coefficients
    ``_P``, ``_Q`` of its first counter, the same in all: :func:`_counter_strategy`); with ``logdet`` (an exact family
    whose log det the radius reads) the aggregator's own log det array, updated in place."""
    from privacct.mechanisms import _triangle

    from .episode_jit import GRAM_GAUSS, GRAM_LAPLACE, TARGET_GAUSS, TARGET_LAPLACE, Family

    rows, cols = (x.astype(np.int64) for x in _triangle(d))
    slot, stacks = np.zeros(0, dtype=np.int64), [np.zeros((0, 1, B, 1)), np.zeros((0, 1, B, 1)), np.zeros((0, B, 1)),
                                                 np.zeros((0, B, 1))] * 2
    hw, cp, cq = np.zeros(0), np.zeros(0), np.zeros(0)
    if tree:
        slot, stacks = _stacked_trees(agg, fam_groups, B, {"gram": rows.size if laplace else d * d, "target": d},
                                      strategy)
        first = next(iter(agg.counters.values()), None)
        if strategy == 1 and first is not None:
            from privacct.counters.tree_honaker import _honaker_weight

            hw = np.array([_honaker_weight(i) for i in range(first._est.shape[0])])
        elif strategy == 2 and first is not None:
            cp, cq = (np.ascontiguousarray(np.asarray(v, dtype=float)) for v in first._mixing_parameters())
    codes = (GRAM_LAPLACE, TARGET_LAPLACE) if laplace else (GRAM_GAUSS, TARGET_GAUSS)
    Sinv = agg.Minv if isinstance(agg, ExactRidge) else np.empty((B, H, d, d))   # EXACT: updated in place
    return Family(agg.G, agg.u, Sinv, np.empty(n), np.empty((n, H)),
                  np.array([codes[0] if g.kind == "gram" else codes[1] for g in fam_groups], dtype=np.int64),
                  np.array([g.h for g in fam_groups], dtype=np.int64),
                  np.array([float(scales[g.name]) for g in fam_groups]), rows, cols, slot, *stacks,
                  agg.logdet() if (logdet and isinstance(agg, ExactRidge)) else np.zeros((0, 0)), int(strategy), hw, cp,
                  cq)


def _run_compiled(mode: int, des: Design, aggs: dict, ahead: NoiseAhead | None, ledger: Ledger, groups, scales: dict,
                  mechs: dict, rng_env, rng_pol, rng_noise, regret: np.ndarray, non_pd: np.ndarray, *, bonus_scale: float,
                  on_non_pd: str, tie_tol: float, vstar: float, progress, cumQ: np.ndarray | None = None,
                  audit: AuditHook | None = None, shared_start: bool = True) -> np.ndarray:
    """The episode loop of :func:`run_design` for the runs :func:`_compiled_mode` admits, compiled
    (:func:`.episode_jit.run_chunk`, one call per chunk of episodes): the same draws in the same order (per seed, the
    128-episode chunk's roll-out uniforms, its tie-breaking uniforms -- a few episodes at a time, the policy stream
    serving nothing else under a greedy policy -- and its noise, :class:`.noise_ahead.NoiseAhead` (normals) or
    :class:`_ExponentialsAhead` (Laplace): LDP messages, or JDP tree nodes, one per group per episode k <= K - 1,
    in the update order p, r, q), the same arithmetic, the same ledger (one record per message or node, in the same
    order, written by :meth:`Ledger.record_many`). ``aggs``: the aggregator of each family, in the update order.
    Fills ``regret``, ``non_pd`` and the aggregators' G and u (and, JDP, their counters' state); returns beta of
    episode 1 (seed 0's row).

    A Sigma that is not positive definite stops the compiled loop at its episode: that episode's inverses come from
    :meth:`.aggregators.Aggregator.inverse` (numpy, the eigenvalue floor) and the loop resumes with them; a
    non-finite Q or variance weight stops it and raises as :func:`.planning.plan` and the weights do.

    Mirror descent (private-linopt-po, ``cumQ`` (B, H, S, A) given): the policy ``probs = exp(z) / exp(z).sum(-1)``
    from ``z`` of the compiled loop (:func:`.episode_jit.md_exponent`) is made with numpy's own ``exp`` loop on the whole
    batch (numpy's SIMD loop, which no libm call reproduces): inside the compiled call (:func:`.episode_jit.md_policy`,
    one call per chunk) when :func:`.numpy_loops.address` finds and checks that loop, else here between one-episode
    calls; the chunk's tie-breaking uniforms are drawn (unread, as the numpy loop draws them) before its action
    uniforms. UCRL-VTR (a radius reading the log det, :func:`_logdet_radius`): the log det kept by the compiled loop
    with numpy's ``log1p`` loop, the radius per seed from it (:func:`.episode_jit.logdet_beta`).

    A many-trial audit (``audit``, admitted by :func:`.audit_records.audit_compiles`): the compiled roll-out plays user
    1's canary and users 2..K's responses (:func:`.audit_records.roles`), keeps every episode's actions and user 1's
    statistics, and after each compiled call :class:`.audit_records.AuditRecords` emits the actions prescribed and the
    tap's records of the episodes done (under BLT one episode per call: its observer reads the counters' state)."""
    from ..tabular.po_jit import row_sums
    from .episode_jit import DONE, EXACT, NOT_FINITE, NOT_PD, TREE, distinct_rows, run_chunk
    from .lapack import routines
    from .planning import _features

    env, K, H = des.env, des.K, des.H
    S, A, d, d2 = env.n_states, env.n_actions, env.dim, env.reward_dim
    B = aggs["p"].G.shape[0]
    rr, vr = "r" in aggs, "q" in aggs
    tree = mode == TREE
    potrf, gesv = routines()
    F = _features(env)
    R = np.ascontiguousarray(env.rewards.reshape(H, S * A))
    vphi = np.ascontiguousarray(env.reward_features.reshape(S * A, d2))
    vrows, xmap = distinct_rows(vphi)
    qcaps = np.ascontiguousarray(des.qcaps(), dtype=float)
    P, cdf = env.mdp.P, env.mdp._cdf
    laplace = any(mechs.get(g.name) == "laplace" for g in groups)   # then every group (_compiled_mode)
    fams = {f: [g for g in groups if g.family == f] for f in aggs}
    dims = {"p": d, "r": d2, "q": d}
    ldr = _logdet_radius(des) if (mode == EXACT and not _radius_ignores_logdet(des)) else None   # UCRL-VTR
    strategy = _counter_strategy(aggs, probe=False) if tree else 0   # JDP: binary trees, tree-honaker or BLT
    if strategy is None:
        raise PrivacctError("the compiled loop was given counters it does not run (engine._counter_strategy)")
    fam = {f: _family(fams[f], aggs[f], scales, laplace, dims[f], B, H, CHUNK, tree, ldr is not None and f == "p",
                      strategy) for f in aggs}
    log1p, radf = (0, np.zeros(0)) if ldr is None else ldr
    if ldr is not None:
        radf = radf.copy()
        radf[2] = bonus_scale
        fam["p"].beta[...] = 0.0   # not read: the compiled loop makes beta per seed from the log det
    none = _family([], aggs["p"], scales, False, 1, B, H, 0, False)._replace(G=np.zeros((B, H, 1, 1)),
                                                                              u=np.zeros((B, H, 1)), LD=np.zeros((0, 0)))
    order = [g for f in aggs for g in fams[f]]   # the update order: p's groups, then r's, then q's
    draws = [_draw_of(g, laplace) for g in order]
    # one ledger key per draw of an episode, in the update order (the messages' / the counters' records; BLT: its
    # weighted draws' keys, counter_records.BltRows)
    keys = np.array([ledger.key(group=g.name, mechanism=mech, scale=scales[g.name], shape=shape, batch=B)
                     for g, (mech, shape, _) in zip(order, draws, strict=True)] if strategy != 2 else [],
                    dtype=np.int64)   # none: no groups
    rows = None
    if strategy == 2:
        from .counter_records import BltRows

        rows = BltRows(ledger, [aggs[g.family].counters[g.name] for g in order])
    last = K - 1 if tree else K   # TreeNoise.update: user K's data would enter no prefix anyone receives
    if strategy == 1:   # tree-honaker: nu(k) + 1 draws per group at step k
        ahead = StepsAhead(rng_noise, [n for _, _, n in draws], CHUNK, last, honaker_draws, exponential=laplace)
    elif tree or laplace:   # LDP Gaussian: the engine's own NoiseAhead, shared with LocalNoise
        ahead = (_ExponentialsAhead if laplace else NoiseAhead)(rng_noise, [n for _, _, n in draws], CHUNK, last)
    vs, F3 = float(des.vs), env._flat   # type: ignore[attr-defined]
    wfloor = vs * vs / d               # _Weights: vs * vs / self.d
    bcs, bts = np.empty(CHUNK), np.empty(CHUNK)
    sub = max(1, min(CHUNK, _POL_BYTES // (8 * B * H * S * A)))
    pol_u = np.empty((B, sub, H, S, A))
    buf = np.empty((B, 0))
    md = cumQ is not None
    if md:   # the first policy's exponent as the numpy loop makes it; the compiled loop makes the next ones
        z = des.eta * cumQ
        z = z - z.max(axis=-1, keepdims=True)
        probs, ez, zsum = np.empty_like(z), np.empty_like(z), np.empty(z.shape[:-1] + (1,))
        R3, P2 = _readonly(env.mdp.R), _readonly(np.ascontiguousarray(env.mdp.P.reshape(H, S * A, S)))
        eta = float(des.eta)
        from .numpy_loops import address

        expf = address("exp") or 0   # numpy's own exp loop: whole chunks per call (else one episode per call)
    else:
        z = probs = ez = zsum = cumQ = np.empty((0, 0, 0, 0))
        expf = 0
        R3, P2, eta = _readonly(np.empty((0, 0, 0))), _readonly(np.empty((0, 0, 0))), 0.0
    act_u = np.empty((0, 0, 0))
    emit, aud, ctraj = None, np.zeros(0, dtype=np.int64), np.zeros((0, H), dtype=np.int64)
    acts = np.zeros((0, 0, 0), dtype=np.int64)
    keep = (np.zeros((0, 0, 0)), np.zeros((0, 0))) * 3
    if audit is not None:   # a many-trial audit (audit_records.audit_compiles): roles, actions, user 1's statistics
        from .audit_records import AuditRecords, roles

        aud, ctraj = roles(des, audit, shared_start)
        acts = np.zeros((B, min(CHUNK, K), H), dtype=np.int64)   # the chunk's actions (row: episode - its first)
        emit = AuditRecords(order, draws, aggs, scales, mode, strategy, last, B, H, dims)
        keep = emit.keep
    cap = 1 if (emit is not None and emit.one_by_one) else CHUNK
    beta_first = None
    k = 1
    while k <= K:
        n = min(CHUNK, K - k + 1)
        env_u = np.stack([r.random((n, H)) for r in rng_env])           # (B, n, H), as the numpy loop draws them
        if k <= last and ahead is not None:   # no privacy: no noise
            ahead.ensure(k)
            buf = ahead.buf
        for f, agg in aggs.items():
            for i in range(n):
                fam[f].lamshift[i] = agg.lam + agg.shift(k + i)   # (lam + shift_k), as Aggregator.inverse adds them
        for i in range(n if ldr is None else 0):
            # the local and tree aggregators keep no log det (None); an exact one's the radius ignores (_compiled_mode),
            # or reads in the compiled loop (UCRL-VTR: episode_jit.logdet_beta from the log det it keeps)
            fam["p"].beta[i] = des.radius_p(k + i, aggs["p"].logdet())
            if rr:
                fam["r"].beta[i] = des.radius_r(k + i)   # type: ignore[misc]
            if vr:
                bcs[i], bts[i] = bonus_scale * des.radius_check(k + i), bonus_scale * des.radius_q(k + i)  # type: ignore[misc]
        fam["p"].beta[:n] *= bonus_scale   # bonus_scale x radius_k, elementwise as in the numpy loop
        if rr:
            fam["r"].beta[:n] *= bonus_scale
        if beta_first is None:   # episode 1's beta, seed 0's row
            beta_first = (fam["p"].beta[0].copy() if ldr is None else
                          (bonus_scale * np.broadcast_to(des.radius_p(k, aggs["p"].logdet()), (B, H)))[0].copy())
        if md:   # per seed: the chunk's tie-breaking uniforms (unread), then its action uniforms (the numpy loop's order)
            for b, r in enumerate(rng_pol):
                for c in range(0, n, sub):
                    r.random(out=pol_u[b, :min(sub, n - c)])
            act_u = np.stack([r.random((n, H)) for r in rng_pol])
        c = 0
        while c < n:
            m = (n - c if expf else 1) if md else min(sub, n - c)
            if md:   # without numpy's exp loop in the compiled call (expf 0): the policy of episode k + c made here,
                if not expf:   # numpy's exp and the row sums in numpy's order (the chunk's uniforms are drawn above)
                    np.exp(z, out=ez)
                    row_sums(ez, zsum)
                    np.divide(ez, zsum, out=probs)
            else:
                for b, r in enumerate(rng_pol):
                    r.random(out=pol_u[b, :m])
            j, given = 0, False    # episodes k + c + j .. of the sub-chunk
            while j < m:
                e = c + j
                fp, fr, fq = (fam[f]._replace(lamshift=fam[f].lamshift[e:], beta=fam[f].beta[e:]) if f in fam else none
                              for f in ("p", "r", "q"))
                status, done, pos = run_chunk(mode, rr, vr, k + e, min(m - j, cap), e, j, given, fp, fr, fq, F, R, qcaps,
                                              tie_tol, P, cdf, env.initial_state, vstar, env_u, pol_u, vphi, vrows,
                                              xmap, float(env.reward_max), F3, vs, wfloor, bcs[e:], bts[e:], buf,
                                              0 if ahead is None else ahead.pos, regret, potrf, gesv, last,
                                              md, probs, act_u, cumQ, z, eta, R3, P2, log1p, radf, expf, ez, zsum,
                                              aud, ctraj, acts, keep)
                if ahead is not None:
                    ahead.pos = pos
                if not md:   # mirror descent: once per chunk, below (one bulk record, not one per episode)
                    _record_chunk(ledger, keys, tree, k + e, min(k + e + done, last + 1), strategy, rows)
                if emit is not None:   # the audit tap's records and the prescribed actions of the episodes done
                    emit.after(k, k + e, k + e + done, buf, acts)
                j += done
                given = False
                if status == DONE:
                    continue   # the sub-chunk's next call (one episode a call under an audited BLT), or its end
                kk = k + c + j
                if status == NOT_FINITE:
                    raise PrivacctError("non-finite optimistic Q (broadcast theta / Sigma^{-1} not finite): "
                                        "refusing to release statistics built from it")
                if status != NOT_PD:
                    raise PrivacctError("non-finite variance weight sigma_bar (broadcast not finite)")
                bad = None
                for f, agg in aggs.items():   # numpy: the eigenvalue floor (or numpy's own error), in the loop's order
                    inv, bad_f = agg.inverse(kk)
                    fam[f].Sinv[...] = inv
                    bad = bad_f if bad is None else bad | bad_f
                if bad.any():
                    if on_non_pd == "error":
                        b, h = np.argwhere(bad)[0]
                        raise PrivacctError(f"Sigma_(k={kk},h={h + 1}) of seed {b} is not positive definite "
                                            f"(option on_non_pd='error'; use 'floor' for the eigenvalue floor)")
                    non_pd += bad.sum(axis=1)
                given = True
            c += m
        if md:
            _record_chunk(ledger, keys, tree, k, min(k + n, last + 1), strategy, rows)
        if progress is not None:
            for kk in range(k, k + n):
                if kk % 100 == 0 or kk == K:
                    progress(kk)
        k += n
    if tree:
        for agg in aggs.values():
            for counter in agg.counters.values():
                counter.steps = K - 1
    return beta_first


def _record_chunk(ledger: Ledger | None, keys: np.ndarray, tree: bool, first: int, stop: int, strategy: int = 0,
                  rows=None) -> None:
    """The ledger records of episodes first .. stop - 1, one per group in order: LDP messages over users (k, k), or
    the JDP counters' draws at step k (:mod:`.counter_records`): the tree node completing at step k over users
    (k - 2^i + 1, k), i its level (TreeCounter.node_noise); tree-honaker's leaf and nodes; BLT's weighted z_k (``rows``)."""
    if stop <= first or ledger is None:
        return
    from .counter_records import honaker_records, tree_records

    if tree and strategy == 2:
        rows.record(first, stop)
    elif tree and strategy == 1:
        honaker_records(ledger, keys, first, stop)
    elif tree:
        tree_records(ledger, keys, first, stop)
    elif keys.size:
        ks = np.arange(first, stop, dtype=np.int64)
        ledger.record_many(np.tile(keys, ks.size), np.repeat(ks, keys.size), np.repeat(ks, keys.size))


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
