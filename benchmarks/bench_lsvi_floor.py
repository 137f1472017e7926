"""Benchmark: Private LSVI-UCB episodes per CPU-second against its floor (issue 23; not a timed test).

    python benchmarks/bench_lsvi_floor.py --seeds 1 100 --episodes 10000 --repeat 2 --floor
    python benchmarks/bench_lsvi_floor.py --seeds 100 --episodes 10000 --memory

``--memory``: one run at the largest seed count, nothing else in the process (after a one-seed warm-up of K = 20):
its CPU seconds, the peak RSS of the process (``resource.getrusage``, the interpreter and imports included) and the
RSS before the run. ``--numpy``: the learner's numpy paths instead of its compiled ones (the same bytes; no numba in
the process, whose import and first compiled kernel cost about 115 MB of RSS).

Setting: bench_linear_mdp.py's (``linear-d10-h10``: d = 10, H = 10, S = 10, A = 20; tight at (5, 1e-5), option
beta = 10; tight chooses BLT at the tree's shift). CPU time is ``time.process_time`` of one ``LearnerSpec.run``
(this process only; OMP_NUM_THREADS=1 set before numpy loads), after an untimed warm-up run and the (cached)
calibration; seed counts interleaved ``--repeat`` times, the best repeat reported (the machine is shared).

The floor (``--floor``, per episode at the same seed count) is what the learner's bytes cannot do without, measured
alone as numpy calls from a Python loop over the episodes: its random draws, per seed H uniforms of the episode
(drawn ahead as the learner draws them since issue 23's last slice: one ``Generator.random(out=)`` per seed per 256
episodes; the older floor, ``floor_two_calls_us_per_episode``, called ``random(H)`` per seed and episode) and the H Gram counters' node noise, H d(d+1)/2 normals in one ``standard_normal`` call per
seed (as the stacked counter draws them, privacct/counters/stacked.py), and the LAPACK factorisations whose bits the
switching rule reads: the Cholesky factorisations of M - lam I and of M for the (B, H, d, d) released matrices M per
episode (``common.floored_logdet``'s fast path), made as the learner makes them since issue 23's last slice: the pair
written into a reused (2, B, H, d, d) buffer (one ``np.subtract(..., out=)``, one copy) and factored by ONE
``np.linalg.cholesky`` call (``common.released_logdet``). ``floor_two_calls_us_per_episode`` is the floor as defined
before that slice (two ``np.linalg.cholesky`` calls, ``M - lam * eye`` allocated each episode), for comparison with
the older rows. ``floor_compiled_lapack_us_per_episode`` (not with ``--numpy``): the same floor with the factorisations
made as the learner makes them since part 4 (numpy's ``dpotrf`` called from its compiled kernel,
algorithms/linear_mdp/logdet_jit.py, which also takes the log-determinants), i.e. without ``np.linalg.cholesky``'s
wrapper: the floor the learner's own calls allow, printed beside the issue's (``x_floor_compiled_lapack``). Not counted: the noise mixing and every elementwise operation, the policy's rollout and the history's
sums, the ledger (a stacked step's rows kept lazily since part 2, and recorded together once per run since part 4:
privacct/ledger.py _Prefix, Ledger.record_prefix_steps), the rare policy updates, any Python.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from privacct.algorithms.contract import RunConfig  # noqa: E402
from privacct.algorithms.registry import get_learner  # noqa: E402
from privacct.rng import spawn_generators, spawn_sequences  # noqa: E402

NAME = "private-lsvi-ucb"


def config(episodes: int) -> RunConfig:
    return RunConfig(NAME, "jdp", epsilon=5.0, delta=1e-5, calibration="tight", episodes=episodes,
                     env="linear-d10-h10", options=(("beta", 10.0),))


def run_once(seeds: int, episodes: int) -> float:
    """CPU seconds of one run (the plan built and cached first, untimed)."""
    spec = get_learner(NAME)
    cfg = config(episodes)
    spec.build_log(cfg)
    t = time.process_time()
    spec.run(cfg, spawn_sequences(0, seeds))
    return time.process_time() - t


def floor(seeds: int, episodes: int, H: int = 10, d: int = 10, lam: float = 1.0, two_calls: bool = False,
          compiled: bool = False) -> float:
    """CPU seconds of the floor's calls over ``episodes`` episodes at ``seeds`` seeds (module docstring; ``two_calls``:
    the uniforms drawn per episode and the factorisations as two ``np.linalg.cholesky`` calls: the floor of the rows
    before issue 23's last slice; ``compiled``: the factorisations by the learner's kernel since part 4, numpy's
    ``dpotrf`` called from compiled code with the log-determinants, :mod:`.logdet_jit`, no numpy wrapper)."""
    env_rngs, noise_rngs = spawn_generators(1, seeds), spawn_generators(2, seeds)
    A = np.random.default_rng(3).normal(size=(seeds, H, d, d))
    M = A @ np.swapaxes(A, -1, -2) + 4.0 * lam * np.eye(d)
    eye = np.eye(d)
    lam_eye = lam * eye
    pair = np.empty((2,) + M.shape)
    upper = np.empty((seeds, H * d * (d + 1) // 2))
    u = np.empty((seeds, 256, H))
    fast = logdet = None
    if compiled:
        from privacct.algorithms.linear_mdp.logdet_jit import compiled_logdet

        fast, logdet = compiled_logdet(seeds, H, d, lam_eye), np.empty((seeds, H))
        fast(M, logdet)
    t = time.process_time()
    for k in range(episodes):
        if two_calls:
            np.stack([r.random(H) for r in env_rngs])
        elif k % 256 == 0:
            for b, r in enumerate(env_rngs):
                r.random(out=u[b])
        for b, r in enumerate(noise_rngs):
            r.standard_normal(out=upper[b])
        if two_calls:
            np.linalg.cholesky(M - lam * eye)
            np.linalg.cholesky(M)
        elif fast is not None:
            fast(M, logdet)
        else:
            np.subtract(M, lam_eye, out=pair[0])
            pair[1] = M
            np.linalg.cholesky(pair)
    return time.process_time() - t


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 100])
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--floor", action="store_true")
    ap.add_argument("--memory", action="store_true", help="one run at the largest seed count: CPU and peak RSS")
    ap.add_argument("--numpy", action="store_true", help="the learner's numpy paths (no numba: the stacked counter's "
                    "numpy step and the numpy episode; the same bytes)")
    a = ap.parse_args(argv)
    if a.numpy:
        import privacct.algorithms.linear_mdp.private_lsvi_ucb as learner
        import privacct.counters.blt as blt
        import privacct.counters.stacked as stacked

        learner.COMPILED_EPISODE = stacked.COMPILED = blt.COMPILED_STEP = False
    run_once(1, 20)   # warm-up: imports, compilation
    if a.memory:
        import resource

        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        cpu = run_once(max(a.seeds), a.episodes)
        row = {"learner": NAME, "env": "linear-d10-h10", "episodes": a.episodes, "seeds": max(a.seeds), "numpy_paths": a.numpy,
               "cpu_s": round(cpu, 1), "peak_rss_MB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
               "rss_before_run_MB": round(before, 1), "numba_imported": "numba" in sys.modules}
        print(json.dumps(row))
        return [row]
    best: dict[int, float] = {}
    fl: dict[int, float] = {}
    fl2: dict[int, float] = {}
    fl3: dict[int, float] = {}
    try:   # an older tree (bench_lsvi_floor_ab.py's BEFORE arm) has no such kernel
        import privacct.algorithms.linear_mdp.logdet_jit  # noqa: F401
        has_kernel = True
    except ImportError:
        has_kernel = False
    for _ in range(a.repeat):
        for b in a.seeds:
            best[b] = min(best.get(b, np.inf), run_once(b, a.episodes) / a.episodes)
            if a.floor:
                fl[b] = min(fl.get(b, np.inf), floor(b, a.episodes) / a.episodes)
                fl2[b] = min(fl2.get(b, np.inf), floor(b, a.episodes, two_calls=True) / a.episodes)
                if not a.numpy and has_kernel:
                    fl3[b] = min(fl3.get(b, np.inf), floor(b, a.episodes, compiled=True) / a.episodes)
    rows = []
    for b in a.seeds:
        row = {"learner": NAME, "env": "linear-d10-h10", "episodes": a.episodes, "seeds": b,
               "us_per_episode": round(1e6 * best[b], 1), "seed_episodes_per_cpu_second": round(b / best[b], 1),
               "python": platform.python_version(), "numpy": np.__version__}
        if a.floor:
            row["floor_us_per_episode"] = round(1e6 * fl[b], 1)
            row["x_floor"] = round(best[b] / fl[b], 2)
            row["floor_two_calls_us_per_episode"] = round(1e6 * fl2[b], 1)
            if b in fl3:
                row["floor_compiled_lapack_us_per_episode"] = round(1e6 * fl3[b], 1)
                row["x_floor_compiled_lapack"] = round(best[b] / fl3[b], 2)
        rows.append(row)
        print(json.dumps(row))
    return rows


if __name__ == "__main__":
    main()
