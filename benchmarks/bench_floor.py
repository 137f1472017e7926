"""Benchmark: episodes per CPU-second of a learner against its floor (issue 14; not a timed test).

    python benchmarks/bench_floor.py --learner ldp-ucrl-vtr --seeds 1 100 --episodes 2000 --repeat 3
    python benchmarks/bench_floor.py --learner ucb-vi --privacy jdp --seeds 1 100 --episodes 2000

CPU time is ``time.process_time`` (this process only, all threads; OMP_NUM_THREADS=1 is set before numpy
loads), runs of the different seed counts interleaved ``--repeat`` times; the best repeat is reported
(the machine is shared, the minimum is the least disturbed). One untimed warm-up run first (imports,
calibration cache, numba compilation).

The floor (``--floor``) is the cost of the learner's own random draws and small linear algebra measured
alone, per episode, at the same seed count: for ldp-ucrl-vtr on HardToLearn (H, d, S, A of the env) one
episode draws H uniforms (transitions) and H*S*A uniforms (tie-breaking) per seed in 128-episode chunks,
H*(d(d+1)/2 + d) standard normals per seed (the local noise), and does H Cholesky factorisations and H
inverses of d x d matrices per seed (batched over seeds, as numpy calls); the floor times exactly these
calls in a loop, nothing else. For ucb-vi JDP on RiverSwim: H uniforms per seed (128-episode chunks), one
tree node of Laplace noise per step (2 x H*S*A*(2+S) standard exponentials per seed into a reused buffer: the
counter adds about one node per step, amortised) and H matrix-vector products P~_h V per seed, one gemv each in
a compiled loop (as the learner's compiled episode loop makes them, issue 23). Until issue 23 the products were
H ``np.matmul`` calls batched over seeds from Python, whose call overhead (about 28 us at one seed) was most of
that floor; it is still measured and printed as ``floor_numpy_products_us_per_episode``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from privacct.algorithms.base import RunConfig  # noqa: E402
from privacct.algorithms.registry import get_learner  # noqa: E402
from privacct.rng import spawn_sequences  # noqa: E402


def run_once(name: str, privacy: str, seeds: int, episodes: int, env: str | None, horizon: int | None = None) -> float:
    delta = 0.0 if privacy == "none" or name.startswith("ucb-") else 1e-5
    cfg = RunConfig(name, privacy, epsilon=1.0, delta=delta, episodes=episodes, env=env, horizon=horizon)
    spec = get_learner(name)
    spec.build_log(cfg)
    t = time.process_time()
    spec.run(cfg, spawn_sequences(0, seeds))
    return time.process_time() - t


def mixture_floor(seeds: int, episodes: int, env_name: str | None) -> float:
    """CPU seconds of ldp-ucrl-vtr's draws and small linear algebra alone (module docstring)."""
    from privacct.algorithms.envs.linear_mixture import make_linear_mixture_env

    env = make_linear_mixture_env(env_name or "hard-to-learn", horizon=None, episodes=episodes, n_states=None, d=None,
                                  instance_seed=0)
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    gens = [np.random.default_rng(s) for s in spawn_sequences(1, seeds)]
    per_ep = H * (d * (d + 1) // 2 + d)
    X = np.random.default_rng(0).standard_normal((seeds, H, d, d)) * 30.0
    M = X @ np.swapaxes(X, -1, -2) + 10.0 * np.eye(d)  # SPD, of the noisy Sigma's magnitude
    t = time.process_time()
    for k in range(episodes):
        if k % 128 == 0:
            n = min(128, episodes - k)
            [g.random((n, H)) for g in gens]
            [g.random((n, H, S, A)) for g in gens]
            buf = np.empty((seeds, n * per_ep))
            for b, g in enumerate(gens):
                g.standard_normal(out=buf[b])
        np.linalg.cholesky(M)
        np.linalg.inv(M)
    return time.process_time() - t


@functools.lru_cache(maxsize=1)
def _compiled_products():
    import numba

    @numba.njit(cache=False)
    def products(P, V, out):
        """H gemv P~_h V per seed (numba's np.dot with an ``out``: the learner's call)."""
        B, H = P.shape[0], P.shape[1]
        S = V.shape[1]
        for b in range(B):
            for h in range(H - 1, -1, -1):
                np.dot(P[b, h], V[b], out[b])
                for s in range(S):
                    V[b, s] = out[b, s]

    return products


def tabular_floor(seeds: int, episodes: int, horizon: int | None, numpy_products: bool = False) -> float:
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
    products(P, V2, out)   # compile before timing
    t = time.process_time()
    for k in range(episodes):
        if k % 128 == 0:
            n = min(128, episodes - k)
            [g.random((n, H)) for g in gens]
        for b, g in enumerate(gens):
            g.standard_exponential(out=noise[b])
        if numpy_products:
            for h in range(H - 1, -1, -1):
                V = np.matmul(P[:, h], V)[:, :S]
        else:
            products(P, V2, out)
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
    ap.add_argument("--floor", action="store_true", help="also the floor (ldp-ucrl-vtr; ucb-vi JDP on RiverSwim)")
    a = ap.parse_args()
    run_once(a.learner, a.privacy, 2, 10, a.env, a.horizon)  # warm-up: imports, numba compilation
    best: dict[int, float] = {}
    floor: dict[int, float] = {}
    floor_np: dict[int, float] = {}
    for _ in range(a.repeat):
        for b in a.seeds:
            eps = a.episodes if b == 1 else max(a.episodes // 10, 50)
            best[b] = min(best.get(b, np.inf), run_once(a.learner, a.privacy, b, eps, a.env, a.horizon) / eps)
            if a.floor:
                f = mixture_floor(b, eps, a.env) if a.learner == "ldp-ucrl-vtr" else tabular_floor(b, eps, a.horizon)
                floor[b] = min(floor.get(b, np.inf), f / eps)
                if a.learner != "ldp-ucrl-vtr":
                    f = tabular_floor(b, eps, a.horizon, numpy_products=True)
                    floor_np[b] = min(floor_np.get(b, np.inf), f / eps)
    for b in a.seeds:
        row = {"learner": a.learner, "privacy": a.privacy, "seeds": b, "us_per_episode": round(1e6 * best[b], 1),
               "episodes_per_cpu_second": round(1.0 / best[b], 1)}
        if a.floor:
            row["floor_us_per_episode"] = round(1e6 * floor[b], 1)
            row["x_floor"] = round(best[b] / floor[b], 2)
            if b in floor_np:
                row["floor_numpy_products_us_per_episode"] = round(1e6 * floor_np[b], 1)
        print(json.dumps(row))


if __name__ == "__main__":
    main()
