"""Benchmark: the batched linear-MDP learners' episodes per CPU-second against their floor (issue 23; not a timed test).

    python benchmarks/bench_batched_floor.py --learner batched-jdp-lsvi-ucb --seeds 1 100 --episodes 10000 --repeat 3 --floor --numpy
    python benchmarks/bench_batched_floor.py --learner batched-jdp-lsvi-ucb-laplace --episodes 10000 --floor
    python benchmarks/bench_batched_floor.py --learner lsvi-ucb --episodes 2000 --episodes-many 200 --floor

Setting: each learner's default environment (``linear-two-state``: S = 2, A = 30, d = 10, H = 5) and the default
(paper) calibration at eps = 1, delta = 1e-5 (0 for the Laplace variant; lsvi-ucb is not private), so B (the batch
count, App. E.1 / E.3 of seed 003) follows K: 8 batches (7 releases) at K = 10^4 for the Gaussian learner, 3 for the
Laplace one. CPU time is ``time.process_time`` of one ``LearnerSpec.run`` (this process only; OMP_NUM_THREADS=1
set before numpy loads) after an untimed warm-up run (imports, numba) and the cached plan; seed counts interleaved
``--repeat`` times, the best repeat reported (the machine is shared). ``--numpy`` times the numpy episode loop alongside
(``batched_jdp.COMPILED = False``: the code that ran before). ``--one-by-one`` times the H Gram trees stepped one
by one alongside (``batched_jdp.STACKED = False``: the code before the stacked tree counter,
:mod:`privacct.counters.stacked_tree`). ``--episodes-many``: K at the larger seed counts (default ``--episodes``).

The floor (``--floor``, per episode at the same seed count and K) is what the learner's bytes cannot do without,
measured alone:

* its draws, in the chunks the bytes allow: per seed H uniforms an episode (the roll-out's, one
  ``Generator.random(out=)`` call per seed per 1024 episodes, as the compiled learner draws them; lsvi-ucb per 256); at each release the
  H Gram counters' new nodes (one node per counter and release: d(d+1)/2 normals per seed, or twice as many standard
  exponentials for the Laplace variant) and the H responses' d normals (2d exponentials) per seed;
* the products the released statistics carry, per seed, episode and step: the outer product phi phi^T added to the
  batch Gram (d^2 products and sums) and phi r added to the response statistic (d), in a compiled loop (the
  learner's arithmetic without the roll-out's look-ups: the features of a fixed (s, a) per step);
* at each release the factorisations and products whose bits the regret pins fix, as numpy calls from Python (the
  learner makes them so, a few times a run): ``common.floored_logdet``'s two Cholesky calls and ``np.linalg.inv`` of
  the (B, H, d, d) released matrices, LSVI's four products per step (``M @ X``, ``A^-1 y``, ``w @ X^T``,
  ``X @ A^-1``) and the new policy's exact value (H ``np.matmul`` of (S, S) by (S, 1) per seed).

Not counted: the roll-out's look-ups, the visit counts, the elementwise Q, the ledger, the counters' Python and any
other Python. lsvi-ucb (no releases, a policy update every episode) has the draws and the per-episode products above,
plus every episode what a compiled loop would have to call: the H inverses of Lambda_h (numpy's own ``dgesv``, as
``np.linalg.inv`` calls it, :mod:`privacct.algorithms.linear_mixture.lapack`), LSVI's four products per step and
the policy's exact value (numba's ``np.dot``: the gemm / gemv numpy's matmul calls), one compiled call per episode.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from privacct.algorithms.contract import RunConfig  # noqa: E402
from privacct.algorithms.registry import get_learner  # noqa: E402
from privacct.rng import spawn_generators, spawn_sequences  # noqa: E402

CHUNK = 1024   # batched_jdp._CHUNK: the learner's episodes per chunk of uniforms


def config(name: str, episodes: int) -> RunConfig:
    if name == "lsvi-ucb":
        return RunConfig(name, "none", epsilon=1.0, delta=0.0, episodes=episodes)
    return RunConfig(name, "jdp", epsilon=1.0, delta=0.0 if name.endswith("-laplace") else 1e-5, episodes=episodes)


def run_once(name: str, seeds: int, episodes: int, numpy_loop: bool = False, stacked: bool = True) -> float:
    """CPU seconds of one run (its plan built and cached first, untimed); ``numpy_loop``: the compiled episodes
    switched off (``batched_jdp.COMPILED``); ``stacked=False``: the H Gram trees one by one (``batched_jdp.STACKED``)."""
    from privacct.algorithms.linear_mdp import batched_jdp, lsvi_ucb

    spec = get_learner(name)
    cfg = config(name, episodes)
    spec.build_log(cfg)
    before = (batched_jdp.COMPILED, lsvi_ucb.COMPILED)
    stacked_before, batched_jdp.STACKED = batched_jdp.STACKED, stacked
    if numpy_loop:
        batched_jdp.COMPILED = lsvi_ucb.COMPILED = False
    try:
        t = time.process_time()
        spec.run(cfg, spawn_sequences(0, seeds))
        return time.process_time() - t
    finally:
        batched_jdp.COMPILED, lsvi_ucb.COMPILED = before
        batched_jdp.STACKED = stacked_before


@functools.lru_cache(maxsize=1)
def _kernels():
    import numba

    @numba.njit(cache=False)
    def accumulate(phi, R, n, Rphi, gram):
        """n episodes' statistics per seed: phi r into Rphi and phi phi^T into the Gram, per step (module docstring)."""
        B, H, d = Rphi.shape
        S, A = phi.shape[0], phi.shape[1]
        for b in range(B):
            for j in range(n):
                for h in range(H):
                    s, a = h % S, (j + h) % A
                    r = R[h, s, a]
                    for i in range(d):
                        Rphi[b, h, i] += phi[s, a, i] * r
                    for i in range(d):
                        fi = phi[s, a, i]
                        for m in range(d):
                            gram[b, h, i, m] += fi * phi[s, a, m]

    from privacct.algorithms.linear_mixture.numpy_loops import ccall

    @numba.njit(cache=False)
    def lsvi_step(G, Ainv, work, ipiv, iv, gesv, M, X, y, w, mean, XA, P, V, out):
        """One lsvi-ucb episode's calls per seed: H dgesv (np.linalg.inv's), per step the gemv M X, A^-1 y, X w
        and the gemm X A^-1, and H gemv of the policy's (S, S) kernel."""
        B, H, d = G.shape[0], G.shape[1], G.shape[2]
        for b in range(B):
            for h in range(H):
                a, rhs = work[0], work[1]
                for i in range(d):
                    for j in range(d):
                        a[j, i] = G[b, h, i, j]
                        rhs[j, i] = 1.0 if i == j else 0.0
                iv[0] = d
                iv[1] = d
                iv[2] = d
                iv[3] = 0
                ccall(gesv, (iv[0:].ctypes.data, iv[1:].ctypes.data, a.ctypes.data, iv[2:].ctypes.data,
                             ipiv.ctypes.data, rhs.ctypes.data, iv[2:].ctypes.data, iv[3:].ctypes.data))
                for i in range(d):
                    for j in range(d):
                        Ainv[b, h, j, i] = rhs[i, j]
            for h in range(H - 1, -1, -1):
                np.dot(M[b], X, y)
                np.dot(Ainv[b, h], y, w)
                np.dot(X, w, mean)
                np.dot(X, Ainv[b, h], XA)
                np.dot(P[b, h], V, out)

    return accumulate, lsvi_step


def _env_and_releases(name: str, episodes: int):
    """(environment, release episodes, Laplace?) of the learner at K = ``episodes``."""
    from privacct.algorithms.linear_mdp import batched_jdp

    if name == "lsvi-ucb":
        from privacct.algorithms.envs.linear_mdp import make_linear_env

        return make_linear_env("linear-two-state", None), np.zeros(0, dtype=np.int64), False
    _, c = batched_jdp.plan(config(name, episodes))
    return c["env"], c["ends"], bool(c["laplace"])


def floor(name: str, seeds: int, episodes: int) -> float:
    """CPU seconds of the floor's calls over ``episodes`` episodes at ``seeds`` seeds (module docstring)."""
    env, ends, lap = _env_and_releases(name, episodes)
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    accumulate, lsvi_step = _kernels()
    env_rngs, noise_rngs = spawn_generators(1, seeds), spawn_generators(2, seeds)
    rng = np.random.default_rng(3)
    chunk = 256 if name == "lsvi-ucb" else CHUNK   # lsvi_ucb._CHUNK / batched_jdp._CHUNK
    u_buf = np.empty((seeds, min(chunk, episodes), H))
    Rphi, gram = np.zeros((seeds, H, d)), np.zeros((seeds, H, d, d))
    phi, R = np.ascontiguousarray(env.phi), np.ascontiguousarray(env.tabular.R)
    Z = rng.normal(size=(seeds, H, d, d))
    Mspd = Z @ np.swapaxes(Z, -1, -2) + 4.0 * np.eye(d)
    X = np.ascontiguousarray(env.phi.reshape(S * A, d))
    Mvis = rng.random((seeds, S * A))
    P_pi = np.ascontiguousarray(np.broadcast_to(env.tabular.P[:, :, 0, :], (seeds, H, S, S)))
    gram_draw = d * (d + 1) // 2 * (2 if lap else 1)
    node = np.empty((seeds, H * gram_draw))
    resp = np.empty((seeds, d * (2 if lap else 1)))
    args = None
    if name == "lsvi-ucb":
        from privacct.algorithms.linear_mixture.lapack import routines

        args = (Mspd, np.empty_like(Mspd), np.empty((2, d, d)), np.empty(d, dtype=np.int64), np.empty(4, dtype=np.int64),
                routines()[1], Mvis, X, np.empty(d), np.empty(d), np.empty(S * A), np.empty((S * A, d)), P_pi,
                rng.random(S), np.empty(S))
        lsvi_step(*args)   # compile before timing
    accumulate(phi, R, 0, Rphi, gram)
    release_at = set(int(e) for e in ends)
    t = time.process_time()
    k = 0
    while k < episodes:
        k0 = k + 1
        k = min(k + chunk, episodes) if args is None else k0
        nxt = [e for e in release_at if k0 <= e <= k]
        if nxt:
            k = min(nxt)
        if (k0 - 1) % chunk == 0 or args is None:
            n = min(chunk, episodes - k0 + 1)
            for b, g in enumerate(env_rngs):
                g.random(out=u_buf[b, :n])
        accumulate(phi, R, k - k0 + 1, Rphi, gram)
        if args is not None:
            lsvi_step(*args)
        if k in release_at:
            for b, g in enumerate(noise_rngs):   # H tree nodes, then H responses (as the learner, per seed)
                (g.standard_exponential if lap else g.standard_normal)(out=node[b])
                for _ in range(H):
                    (g.standard_exponential if lap else g.standard_normal)(out=resp[b])
            np.linalg.cholesky(Mspd - 1.0 * np.eye(d))
            np.linalg.cholesky(Mspd)
            Ainv = np.linalg.inv(Mspd)
            for h in range(H - 1, -1, -1):
                y = Mvis @ X
                w = (Ainv[:, h] @ y[:, :, None])[:, :, 0]
                w @ X.T
                X[None] @ Ainv[:, h]
            V = np.zeros((seeds, S, 1))
            for h in range(H - 1, -1, -1):
                V = np.matmul(P_pi[:, h], V)
    return time.process_time() - t


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--learner", default="batched-jdp-lsvi-ucb",
                    choices=("batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace", "lsvi-ucb"))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 100])
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--episodes-many", type=int, default=None, help="K at the larger seed counts (default --episodes)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--floor", action="store_true")
    ap.add_argument("--numpy", action="store_true", help="also the numpy episode loop (compiled loop switched off)")
    ap.add_argument("--one-by-one", action="store_true",
                    help="also the H Gram trees stepped one by one (batched_jdp.STACKED = False: the code before)")
    a = ap.parse_args(argv)
    run_once(a.learner, 2, 20)   # warm-up: imports, numba
    best: dict[int, float] = {}
    best_np: dict[int, float] = {}
    best_obo: dict[int, float] = {}
    fl: dict[int, float] = {}
    K = {b: a.episodes if b == min(a.seeds) or a.episodes_many is None else a.episodes_many for b in a.seeds}
    for _ in range(a.repeat):
        for b in a.seeds:
            best[b] = min(best.get(b, np.inf), run_once(a.learner, b, K[b]) / K[b])
            if a.numpy:
                best_np[b] = min(best_np.get(b, np.inf), run_once(a.learner, b, K[b], numpy_loop=True) / K[b])
            if a.one_by_one:
                best_obo[b] = min(best_obo.get(b, np.inf), run_once(a.learner, b, K[b], stacked=False) / K[b])
            if a.floor:
                fl[b] = min(fl.get(b, np.inf), floor(a.learner, b, K[b]) / K[b])
    rows = []
    for b in a.seeds:
        row = {"learner": a.learner, "env": "linear-two-state", "episodes": K[b], "seeds": b,
               "us_per_episode": round(1e6 * best[b], 2), "seed_episodes_per_cpu_second": round(b / best[b], 1),
               "python": platform.python_version(), "numpy": np.__version__}
        if b in best_np:
            row["numpy_loop_us_per_episode"] = round(1e6 * best_np[b], 2)
        if b in best_obo:
            row["one_by_one_trees_us_per_episode"] = round(1e6 * best_obo[b], 3)
        if a.floor:
            row["floor_us_per_episode"] = round(1e6 * fl[b], 2)
            row["x_floor"] = round(best[b] / fl[b], 2)
        rows.append(row)
        print(json.dumps(row))
    return rows


if __name__ == "__main__":
    main()
