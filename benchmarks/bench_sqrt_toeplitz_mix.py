"""The sqrt-toeplitz mixing step (C z)_t at step t: the cumsum (privacct.counters.sqrt_toeplitz._combine) vs the
compiled step (privacct/counters/sqrt_toeplitz_jit.py), same bytes (checked here too), per step and per history
element (benchmarks/learner_audits.md#one-run-action-audits-of-every-counter-strategy-issue-21).

    OMP_NUM_THREADS=1 python benchmarks/bench_sqrt_toeplitz_mix.py [--size N] [--steps T ...] [--repeat R]

``--size``: floats per z_t (B x the counter's shape; default 1920, ucb-vi's counts counter at its paper setting,
read off its run); ``--steps``: the t measured. A run of K steps costs about sum_t t x size x (ns per element).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privacct.counters.sqrt_toeplitz import _combine, _mix, toeplitz_coefficients


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1920, help="floats per z_t, >= 1")
    ap.add_argument("--steps", type=int, nargs="+", default=[1000, 5000, 20000], help="steps t measured, >= 1")
    ap.add_argument("--repeat", type=int, default=3, help="compiled steps timed per t (best of), >= 1")
    args = ap.parse_args()
    if args.size < 1 or args.repeat < 1 or min(args.steps) < 1:
        ap.error("--size, --repeat and every --steps must be >= 1")
    K = max(args.steps)
    coef = toeplitz_coefficients(K)
    zs = np.random.default_rng(0).normal(size=(K, args.size))
    _mix(coef, 1, zs)   # compile (or load the cache) outside the timing
    print(f"{'t':>7} {'cumsum ms':>10} {'compiled ms':>12} {'ns/element cumsum':>18} {'compiled':>9} {'same bytes':>11}")
    for t in args.steps:
        t0 = time.perf_counter()
        want = _combine(coef[:t][::-1], zs[:t])
        a = time.perf_counter() - t0
        b = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            got = _mix(coef, t, zs)
            b = min(b, time.perf_counter() - t0)
        n = t * args.size
        print(f"{t:>7} {a * 1e3:>10.1f} {b * 1e3:>12.2f} {a / n * 1e9:>18.2f} {b / n * 1e9:>9.2f} "
              f"{str(got.tobytes() == want.tobytes()):>11}", flush=True)


if __name__ == "__main__":
    main()
