"""Worst prefix variance of every counting strategy at the same (epsilon, delta) claim, derived and
measured (issue 15, target: the best strategy >= 4x below the binary tree at (1, 1e-5), K = 10^4,
the empirical figure within 5% of the derived one).

    python benchmarks/bench_counters.py                      # K = 10^4, 10,000 runs per strategy
    python benchmarks/bench_counters.py --leaves 1000 --runs 4000

Each strategy is calibrated to the claim with privacct's calibration (one Gaussian counter group,
step sensitivity 1); the derived figure is sigma^2 x the worst prefix variance in node variances
(docs/counters.md). The empirical figure runs ``FactorizedCounter`` ``runs`` times (the trial axis
of one Generator from SeedSequence(seed)) over all K steps and takes the sample variance of the
release error at the derived worst prefix t*. sqrt-toeplitz costs O(K^2) per run (it keeps every
z), so it is measured on ``--toeplitz-runs`` runs only (its relative standard error is printed).
Also prints the time per step of each counter (batch of ``runs``).
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numpy as np

from privacct.counters.compare import compare, least_noise
from privacct.counters.counter import FactorizedCounter
from privacct.counters.strategies import prefix_variances


def empirical(fig, leaves: int, runs: int, seed: int) -> tuple[float, int, float]:
    """(sample variance of the release error at t*, t*, seconds per step)."""
    pv = prefix_variances(fig.structure)
    t_star = int(np.argmax(pv)) + 1
    c = FactorizedCounter((runs,), strategy=fig.structure, leaves=leaves, mechanism="gaussian",
                          scale=fig.noise_scale, rngs=[np.random.default_rng(np.random.SeedSequence(seed))])
    x = np.ones((1, runs))
    t0 = time.perf_counter()
    for _t in range(1, t_star + 1):
        r = c.add(x)
    sec = (time.perf_counter() - t0) / t_star
    err = (r - c.exact_sum())[0]
    return float(err.var(ddof=1)), t_star, sec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--leaves", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--toeplitz-runs", type=int, default=500)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(f"K = {a.leaves}, claim ({a.epsilon}, {a.delta}), Gaussian, step sensitivity 1; "
          f"{platform.machine()} {platform.python_version()}")
    figs = compare(mechanism="gaussian", sensitivity=1.0, leaves=a.leaves, epsilon=a.epsilon, delta=a.delta)
    tree = next(f for f in figs if f.strategy == "tree")
    best = least_noise(figs)
    print(f"{'strategy':>14} {'sigma':>9} {'col norm':>9} {'derived':>10} {'empirical':>10} {'emp/der':>8} "
          f"{'rel se':>7} {'t*':>6} {'us/step':>8} {'tree/this':>9}")
    for i, f in enumerate(figs):
        runs = a.toeplitz_runs if f.strategy == "sqrt-toeplitz" else a.runs
        v, t_star, sec = empirical(f, a.leaves, runs, a.seed + i)
        print(f"{f.strategy:>14} {f.noise_scale:9.4f} {f.column_norm:9.4f} {f.worst_prefix_variance:10.2f} {v:10.2f} "
              f"{v / f.worst_prefix_variance:8.4f} {math.sqrt(2 / (runs - 1)):7.4f} {t_star:6d} {sec * 1e6:8.1f} "
              f"{tree.worst_prefix_variance / f.worst_prefix_variance:9.2f}")
    print(f"best: {best.strategy}, {tree.worst_prefix_variance / best.worst_prefix_variance:.2f}x below the tree (derived)")


if __name__ == "__main__":
    main()
