"""Benchmark: episodes per CPU-second of a learner against its floor (issues 14 and 23; not a timed test).

    python benchmarks/bench_floor.py --learner ldp-ucrl-vtr --privacy ldp --episodes 2000 --repeat 3 --floor --numpy
    python benchmarks/bench_floor.py --learner ucb-vi --privacy jdp --horizon 20 --episodes 2000 --floor
    python benchmarks/bench_floor.py --learner ucb-po --privacy jdp --horizon 20 --episodes 3000 --floor --numpy

CPU time is ``time.process_time`` (this process only, all threads; OMP_NUM_THREADS=1 is set before numpy
loads), runs of the different seed counts interleaved ``--repeat`` times; the best repeat is reported
(the machine is shared, the minimum is the least disturbed). One untimed warm-up run first (imports,
calibration cache, numba compilation). ``--numpy`` times the family's numpy episode loop alongside (its compiled
loop switched off: the code that ran before it), interleaved at the same load. The learner runs the environment its
floor is measured on: ``--env``, by default HardToLearn (d = 5, H = 6, S = 8, A = 16) for the linear-mixture
learners (before issue 23 the learner ran its own default, the linear-mixture RiverSwim, d = 18, while the floor
was HardToLearn's) and RiverSwim for ucb-vi.

The floor (``--floor``) is the cost of what the learner's bytes cannot do without, measured alone, per episode, at
the same seed count: its random draws (the same generator calls, in the same chunks) and the floating-point
products and factorisations whose bits the regret pins fix (the same BLAS / LAPACK calls on arrays of the same
shapes, from a compiled loop as the learner makes them); not the elementwise arithmetic around them, the ledger,
nor any Python.

* Linear-mixture learners (ldp-ucrl-vtr; pp-ucrl-vtr, pp-ucrl-vtr-laplace, pp-ucrl-vtr-plus, private-linopt-vi), on
  the env's H, d, d2, S, A, per episode and seed: H uniforms (transitions) and H*S*A uniforms (tie-breaking), drawn
  in 128-episode chunks; the normals of one Gaussian message (LDP) or one tree node (JDP) per release group, d(d+1)/2
  for a Gram group and d for a target (with 2(H - 1) groups of dimension d: (H - 1)(d(d+1)/2 + d); private-linopt-vi
  adds 2H reward groups of dimension d2), 128-episode chunks; H Cholesky tests and H inverses of d x d matrices
  (and of d2 x d2 under reward regression), numpy's own ``dpotrf`` / ``dgesv`` as the compiled learner calls them
  (:mod:`privacct.algorithms.linear_mixture.lapack`); the planning's products: per stage h < H - 1 one gemm
  V (B, S) x F (S, S*A*d) for the whole batch, then per seed one gemm phi (S*A, d) x Sigma^{-1} (d, d) and one
  gemv phi theta; and the H gemv P_pi V of the policy's exact value. Until issue 23 the floor (then ldp-ucrl-vtr's
  only) was the draws and the Cholesky + inverse as two batched ``np.linalg`` calls from Python, without the
  planning's products; it is still measured and printed as ``floor_numpy_calls_us_per_episode`` (the normals now
  counted per group, (H - 1) messages of each kind, where it drew H). The Laplace learners (pp-ucrl-vtr-laplace) draw
  two standard exponentials per noised value instead of one normal (the upper triangle of a Gram matrix);
  pp-ucrl-vtr-plus adds the variance family's 2(H - 1) groups and H inverses of d x d; a non-private learner
  (privacy none: Sherman-Morrison updates, elementwise) draws no noise and inverts nothing, and has no floor of
  the old definition.
* ucb-vi JDP on RiverSwim: H uniforms per seed (128-episode chunks), one tree node of Laplace noise per step
  (2 x H*S*A*(2+S) standard exponentials per seed: the counter adds about one node per step, amortised) and H
  matrix-vector products P~_h V per seed, made as the learner's compiled episode loop makes them (issue 23): since
  the learner draws its noise in that loop, the exponentials by numba's Generator (numpy's ziggurat on the same bit
  generator, about 1.5x faster per value than numpy's call, the same values) per 128-episode chunk, seed after
  seed, into a small reused buffer, and the products without the BLAS call where its bytes allow
  (``privacct.algorithms.small_gemv``: one gemv each before). Until issue 23 the products were H ``np.matmul`` calls batched over
  seeds from Python, whose call overhead (about 28 us at one seed) was most of that floor; it is still measured
  and printed as ``floor_numpy_products_us_per_episode``.
* ucb-po JDP on RiverSwim (issue 23): ucb-vi's floor above, plus H uniforms per seed for the agent's actions (the
  same 128-episode chunks), the H products of the policy's exact value (one gemv per stage at one seed, one gemm
  (B, S) x (S, S*A) over the seeds otherwise, as numpy's matmul and the compiled loop make them) and the numpy calls
  its bytes need on the (B, H, S, A) policy: two ``np.exp`` and one ``np.log`` (of the (B, H, S, 1) sums) per
  episode, numpy's SIMD loops, which no compiled call reproduces. The optimistic evaluation's H gemv are counted
  once (ucb-vi's products), as ucb-vi's value iteration's.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from privacct.algorithms.contract import RunConfig  # noqa: E402
from privacct.algorithms.registry import get_learner  # noqa: E402
from privacct.rng import spawn_sequences  # noqa: E402


#: the environment of the linear-mixture learners and of their floor (README row: HardToLearn d = 5, H = 6, S = 8, A = 16)
MIXTURE_ENV = "hard-to-learn"


def _compiled_switch(family: str):
    """The module whose ``COMPILED`` flag selects the compiled episode loop of a family (None: the family has none)."""
    if family == "linear-mixture":
        from privacct.algorithms.linear_mixture import engine

        return engine
    if family == "tabular":
        from privacct.algorithms.tabular import learner

        return learner
    return None


def run_once(name: str, privacy: str, seeds: int, episodes: int, env: str | None, horizon: int | None = None,
             numpy_loop: bool = False) -> float:
    """CPU seconds of one run; ``numpy_loop``: with the family's compiled episode loop switched off (the numpy loop,
    the code that ran before it, timed alongside at the same load)."""
    delta = 0.0 if privacy == "none" or name.startswith("ucb-") else 1e-5
    spec = get_learner(name)
    if env is None and spec.family == "linear-mixture":
        env = MIXTURE_ENV
    cfg = RunConfig(name, privacy, epsilon=1.0, delta=delta, episodes=episodes, env=env, horizon=horizon)
    spec.build_log(cfg)
    switch = _compiled_switch(spec.family)
    before = getattr(switch, "COMPILED", None)
    if switch is not None and numpy_loop:
        switch.COMPILED = False
    try:
        t = time.process_time()
        spec.run(cfg, spawn_sequences(0, seeds))
        return time.process_time() - t
    finally:
        if switch is not None:
            switch.COMPILED = before


def _mixture_setting(name: str, privacy: str, env_name: str | None, episodes: int):
    """(environment, standard normals per episode and seed, {family: size of the matrices it inverts, 0 if none}) of
    a linear-mixture learner: one Gaussian message or tree node per release group per episode (d(d+1)/2 normals for
    a Gram group, d for a target); Sigma_p (d x d) at every stage, Sigma_r (d2 x d2) under reward regression and
    Sigma_q (d x d) under variance weights; a non-private learner draws no noise and inverts nothing."""
    from privacct.algorithms.linear_mixture.learners import design_for

    cfg = RunConfig(name, privacy, epsilon=1.0, delta=1e-5, episodes=episodes, env=env_name or MIXTURE_ENV)
    des = design_for(name, cfg, MIXTURE_ENV)
    per_ep = sum(g.dim * (g.dim + 1) // 2 if g.kind == "gram" else g.dim for g in des.groups)
    if des.noise == "laplace":   # two standard exponentials per value (privacct.mechanisms.laplace)
        per_ep = -2 * per_ep
    inv = des.mechanism != "none"   # no privacy: Sherman-Morrison updates, no inversion (elementwise, not counted)
    dims = {"p": des.env.dim if inv else 0, "r": des.env.reward_dim if des.reward_regression and inv else 0,
            "q": des.env.dim if des.variance_aware and inv else 0}
    return des.env, per_ep, dims


def _mixture_draws(gens_env, gens_pol, gens_noise, k: int, episodes: int, H: int, S: int, A: int, per_ep: int,
                   bufs: dict) -> None:
    """The chunk's draws of a linear-mixture learner at episode k (every 128 episodes), as the learner makes them:
    ``per_ep`` standard normals per episode and seed, or (negative) ``-per_ep`` standard exponentials."""
    if k % 128:
        return
    n = min(128, episodes - k)
    [g.random((n, H)) for g in gens_env]
    [g.random((n, H, S, A)) for g in gens_pol]
    buf = bufs.setdefault(n, np.empty((len(gens_noise), n * abs(per_ep))))
    for b, g in enumerate(gens_noise):
        if per_ep > 0:
            g.standard_normal(out=buf[b])
        else:
            g.standard_exponential(out=buf[b])


def _spd(rng, seeds: int, H: int, d: int) -> np.ndarray:
    X = rng.standard_normal((seeds, H, d, d)) * 30.0
    return X @ np.swapaxes(X, -1, -2) + 10.0 * np.eye(d)  # SPD, of the noisy Sigma's magnitude


def mixture_floor_numpy(name: str, privacy: str, seeds: int, episodes: int, env_name: str | None) -> float:
    """CPU seconds of the floor as defined before issue 23 (module docstring): the draws, and per inverted size the H
    Cholesky + H inverses per seed as two batched ``np.linalg`` calls from Python."""
    env, per_ep, dims = _mixture_setting(name, privacy, env_name, episodes)
    H, S, A = env.horizon, env.n_states, env.n_actions
    gens = [[np.random.default_rng(s) for s in spawn_sequences(j, seeds)] for j in (1, 2, 3)]
    Ms = [_spd(np.random.default_rng(0), seeds, H, n) for n in dims.values() if n]
    bufs: dict = {}
    t = time.process_time()
    for k in range(episodes):
        _mixture_draws(*gens, k, episodes, H, S, A, per_ep, bufs)
        for M in Ms:
            np.linalg.cholesky(M)
            np.linalg.inv(M)
    return time.process_time() - t


@functools.lru_cache(maxsize=1)
def _compiled_mixture():
    import numba

    from privacct.algorithms.linear_mixture.episode_jit import inverse_pd

    @numba.njit(cache=False)
    def invert(M, Minv, work, ipiv, iv, uplo, potrf, gesv):
        B, H = M.shape[0], M.shape[1]
        for b in range(B):
            for h in range(H):
                inverse_pd(M[b, h], Minv[b, h], work, ipiv, iv, uplo, potrf, gesv)

    @numba.njit(cache=False)
    def episode(M, Minv, work, M2, M2inv, work2, M3, M3inv, ipiv, iv, uplo, potrf, gesv, V, F, phis, theta, t, lin,
                Ppi, Vv, pe):
        """One episode's products and factorisations for every seed (module docstring); ``M2``, ``M3``: the reward
        family's and the variance family's matrices (none: zero seeds; ``M`` too for a learner that inverts
        nothing)."""
        B, H, d, _ = Minv.shape
        SA = t.shape[0]
        invert(M, Minv, work, ipiv, iv, uplo, potrf, gesv)
        invert(M2, M2inv, work2, ipiv, iv, uplo, potrf, gesv)
        invert(M3, M3inv, work, ipiv, iv, uplo, potrf, gesv)
        for h in range(H - 2, -1, -1):
            np.dot(V, F, phis)
            for b in range(B):
                phi = phis[b].reshape(SA, d)
                np.dot(phi, Minv[b, h], t)
                np.dot(phi, theta[b, h], lin)
        for _ in range(B * H):   # the policy's exact value: H gemv per seed
            np.dot(Ppi, Vv, pe)

    return episode


def mixture_floor(name: str, privacy: str, seeds: int, episodes: int, env_name: str | None) -> float:
    """CPU seconds of a linear-mixture learner's floor (module docstring): the draws, then per episode the
    factorisations and products from one compiled call."""
    from privacct.algorithms.linear_mixture.lapack import routines
    from privacct.algorithms.linear_mixture.planning_jit import features_by_next_state

    env, per_ep, dims = _mixture_setting(name, privacy, env_name, episodes)
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    gens = [[np.random.default_rng(s) for s in spawn_sequences(j, seeds)] for j in (1, 2, 3)]
    rng = np.random.default_rng(0)
    M = _spd(rng, seeds, H, d)
    Minv = np.linalg.inv(M)   # the planning's Sigma^{-1} (inverted below unless the learner inverts nothing)
    M = M if dims["p"] else M[:0]
    d2 = dims["r"] or 1
    M2 = _spd(rng, seeds if dims["r"] else 0, H, d2)   # Sigma_r (none: zero seeds)
    M3 = _spd(rng, seeds if dims["q"] else 0, H, d)    # Sigma_q
    F = features_by_next_state(env._flat)
    args = (M, Minv, np.empty((3, d, d)), M2, np.empty_like(M2), np.empty((3, d2, d2)), M3,
            np.empty_like(M3), np.empty(max(d, d2), dtype=np.int64), np.empty(4, dtype=np.int64), np.array([76], dtype=np.uint8),
            *routines(), rng.random((seeds, S)), F, np.empty((seeds, S * A * d)), rng.standard_normal((seeds, H, d)),
            np.empty((S * A, d)), np.empty(S * A), rng.random((S, S)), rng.random(S), np.empty(S))
    episode = _compiled_mixture()
    episode(*args)   # compile before timing
    bufs: dict = {}
    t = time.process_time()
    for k in range(episodes):
        _mixture_draws(*gens, k, episodes, H, S, A, per_ep, bufs)
        episode(*args)
    return time.process_time() - t


@functools.lru_cache(maxsize=1)
def _compiled_products():
    import numba

    from privacct.algorithms.small_gemv import gemv_small

    @numba.njit(cache=False)
    def products(P, V, out, fast):
        """H products P~_h V per seed as the learner makes them: numba's np.dot with an ``out`` (the BLAS gemv), or
        with ``fast`` the same bytes without the call (``small_gemv.gemv_small``, where its start-up check holds)."""
        B, H = P.shape[0], P.shape[1]
        S = V.shape[1]
        for b in range(B):
            for h in range(H - 1, -1, -1):
                if fast:
                    gemv_small(P[b, h], V[b], out[b])
                else:
                    np.dot(P[b, h], V[b], out[b])
                for s in range(S):
                    V[b, s] = out[b, s]

    return products


@functools.lru_cache(maxsize=1)
def _compiled_draws():
    import numba

    @numba.njit(cache=False)
    def draws(gens, noise, n):
        """n episodes' tree nodes per seed, drawn as the learner draws them since its noise moved into the compiled
        loop: numba's Generator (numpy's ziggurat, the same values), from a typed List of the Generators."""
        f = noise.reshape(noise.shape[0], -1)
        for b in range(f.shape[0]):
            g = gens[b]
            for _ in range(n):
                for i in range(f.shape[1]):
                    f[b, i] = g.standard_exponential()

    return draws


@functools.lru_cache(maxsize=1)
def _compiled_po_products():
    import numba

    @numba.njit(cache=False)
    def po_products(P2, Vall, t):
        """The policy's exact value: per stage one gemv at one seed, one gemm over the seeds otherwise."""
        B = Vall.shape[0]
        H = P2.shape[0]
        for h in range(H - 1, -1, -1):
            if B == 1:
                np.dot(P2[h], Vall[0], t[0])
            else:
                np.dot(Vall, P2[h].T, t)

    return po_products


def tabular_floor(seeds: int, episodes: int, horizon: int | None, numpy_products: bool = False,
                  po: bool = False) -> float:
    """CPU seconds of ucb-vi JDP's draws and small linear algebra alone (module docstring); ``numpy_products``: the
    products as H batched ``np.matmul`` calls from Python (the floor's definition before issue 23)."""
    from privacct.algorithms.envs.riverswim import riverswim

    mdp = riverswim(horizon=horizon or 20)
    H, S, A = mdp.horizon, mdp.n_states, mdp.n_actions
    dim = H * S * A * (2 + S)  # released counts N, costs C, transitions N(s, a, s'): one tree node per step
    gens = [np.random.default_rng(s) for s in spawn_sequences(1, seeds)]
    P = np.random.default_rng(0).random((seeds, H, S * A, S))
    V = np.zeros((seeds, S, 1))
    noise = np.empty((seeds, 2, dim))
    products = _compiled_products()
    V2, out = np.zeros((seeds, S)), np.empty((seeds, S * A))
    from numba.typed import List

    from privacct.algorithms.small_gemv import gemv_small_exact

    fast = gemv_small_exact(S * A, S) and not numpy_products
    products(P, V2, out, fast)   # compile before timing
    draws, glist = _compiled_draws(), List(gens)
    draws(glist, noise, 0)
    agents = [np.random.default_rng(s) for s in spawn_sequences(2, seeds)] if po else []
    po_products = _compiled_po_products()
    P2 = np.ascontiguousarray(mdp.P.reshape(H, S * A, S))
    Vall, tpo = np.random.default_rng(1).random((seeds, S)), np.empty((seeds, S * A))
    logits, pi, lse, lse_out = (np.full((seeds, H, S, A), -0.5), np.empty((seeds, H, S, A)), np.ones((seeds, H, S, 1)),
                                np.empty((seeds, H, S, 1)))
    po_products(P2, Vall, tpo)
    t = time.process_time()
    for k in range(episodes):
        if k % 128 == 0:
            n = min(128, episodes - k)
            [g.random((n, H)) for g in gens]
            [g.random((n, H)) for g in agents]
        if po:
            np.exp(logits, out=pi)
            po_products(P2, Vall, tpo)
            np.exp(logits, out=pi)
            np.log(lse, out=lse_out)
        if k % 128 == 0:
            draws(glist, noise, n)   # the chunk's nodes, seed after seed (the learner's order)
        if numpy_products:
            for h in range(H - 1, -1, -1):
                V = np.matmul(P[:, h], V)[:, :S]
        else:
            products(P, V2, out, fast)
    return time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--learner", default="ldp-ucrl-vtr")
    ap.add_argument("--privacy", default="ldp")
    ap.add_argument("--env", default=None)
    ap.add_argument("--horizon", type=int, default=None)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 100])
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--floor", action="store_true",
                    help="also the floor (linear-mixture learners; ucb-vi and ucb-po JDP on RiverSwim)")
    ap.add_argument("--numpy", action="store_true", help="also the numpy episode loop (compiled loop switched off)")
    a = ap.parse_args()
    mixture = get_learner(a.learner).family == "linear-mixture"
    run_once(a.learner, a.privacy, 2, 10, a.env, a.horizon)  # warm-up: imports, numba compilation
    best: dict[int, float] = {}
    best_np: dict[int, float] = {}
    floor: dict[int, float] = {}
    floor_old: dict[int, float] = {}
    for _ in range(a.repeat):
        for b in a.seeds:
            eps = a.episodes if b == 1 else max(a.episodes // 10, 50)
            best[b] = min(best.get(b, np.inf), run_once(a.learner, a.privacy, b, eps, a.env, a.horizon) / eps)
            if a.numpy:
                f = run_once(a.learner, a.privacy, b, eps, a.env, a.horizon, numpy_loop=True)
                best_np[b] = min(best_np.get(b, np.inf), f / eps)
            if a.floor:
                po = a.learner == "ucb-po"
                f = (mixture_floor(a.learner, a.privacy, b, eps, a.env) if mixture
                     else tabular_floor(b, eps, a.horizon, po=po))
                floor[b] = min(floor.get(b, np.inf), f / eps)
                if mixture and a.privacy == "none":
                    continue   # the floor before issue 23 was the inversions' numpy calls: a non-private learner has none
                f = (mixture_floor_numpy(a.learner, a.privacy, b, eps, a.env) if mixture
                     else tabular_floor(b, eps, a.horizon, numpy_products=True, po=po))
                floor_old[b] = min(floor_old.get(b, np.inf), f / eps)
    for b in a.seeds:
        row = {"learner": a.learner, "privacy": a.privacy, "env": a.env or (MIXTURE_ENV if mixture else "riverswim"),
               "seeds": b, "us_per_episode": round(1e6 * best[b], 1), "episodes_per_cpu_second": round(1.0 / best[b], 1)}
        if b in best_np:
            row["numpy_loop_us_per_episode"] = round(1e6 * best_np[b], 1)
        if a.floor:
            row["floor_us_per_episode"] = round(1e6 * floor[b], 1)
            row["x_floor"] = round(best[b] / floor[b], 2)
            key = "floor_numpy_calls_us_per_episode" if mixture else "floor_numpy_products_us_per_episode"
            if b in floor_old:
                row[key] = round(1e6 * floor_old[b], 1)
                row["x_" + key.replace("_us_per_episode", "")] = round(best[b] / floor_old[b], 2)
        print(json.dumps(row))


if __name__ == "__main__":
    main()
