"""Regret and throughput of Private LSVI-UCB with the tree against the least-noise counter at the same
certified (epsilon, delta) (issue 15 targets: regret lower with the best strategy, mean over >= 10 seeds with
a 95% interval that excludes equality; throughput within 1.5x of the tree's).

    python benchmarks/bench_counter_regret.py                       # d = 10, H = 10, K = 3000, 10 seeds
    python benchmarks/bench_counter_regret.py --episodes 10000 --seeds 10 --figure benchmarks/counter_regret_linear_mdp.png

Both runs use the same seeds (same environment and agent randomness streams), ``tight`` calibration to
the same claim (the accounted eps of each log is printed), option beta as in bench_linear_mdp.py. The
interval is a paired t interval on the per-seed difference of final cumulative regrets (tree - other).
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numpy as np
from scipy import stats

from privacct.accounting import tightest_epsilon
from privacct.algorithms.base import RunConfig
from privacct.algorithms.registry import learners
from privacct.rng import spawn_sequences


def run(counter, a):
    opts = (("beta", a.beta),) + ((("counter", counter),) if counter else ())
    cfg = RunConfig("private-lsvi-ucb", "jdp", epsilon=a.epsilon, delta=a.delta, calibration="tight",
                    episodes=a.episodes, env=a.env, options=opts)
    spec = learners()["private-lsvi-ucb"]
    log = spec.build_log(cfg)
    t0 = time.perf_counter()
    res = spec.run(cfg, spawn_sequences(a.seed, a.seeds))
    sec = time.perf_counter() - t0
    return log, res, sec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=3000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epsilon", type=float, default=5.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--beta", type=float, default=10.0)
    ap.add_argument("--env", default="linear-d10-h10")
    ap.add_argument("--figure", default=None)
    a = ap.parse_args()
    print(f"private-lsvi-ucb {a.env} K={a.episodes} seeds={a.seeds} claim ({a.epsilon}, {a.delta}) beta={a.beta}; "
          f"{platform.machine()} python {platform.python_version()}")
    out = {}
    for counter in ("tree", None):
        log, res, sec = run(counter, a)
        name = log.params["counter"]
        final = res.regret.sum(axis=1)
        out[name] = (final, res.regret.cumsum(axis=1).mean(axis=0), sec)
        print(f"  {name:<13} sigma_node {log.params['sigma_node']:.4g}  lam~ {log.params['lam_tilde']:.4g}  "
              f"N_cap {log.params['N_cap']}  updates {np.mean(res.info['n_updates']):.2f}  accounted eps "
              f"{tightest_epsilon(log, delta=a.delta)[1]:.4g}  regret {final.mean():.2f} +- {final.std(ddof=1):.2f}  "
              f"{sec:.1f} s ({a.episodes * a.seeds / sec:,.0f} seed-episodes/s)")
    (best, (fb, cb, sb)), = [(k, v) for k, v in out.items() if k != "tree"]
    ft, ct, st = out["tree"]
    diff = ft - fb
    half = stats.t.ppf(0.975, diff.size - 1) * diff.std(ddof=1) / math.sqrt(diff.size) if diff.size > 1 else math.inf
    print(f"  tree - {best}: {diff.mean():.2f}, 95% interval [{diff.mean() - half:.2f}, {diff.mean() + half:.2f}]; "
          f"time {best} / tree = {sb / st:.2f}")
    if a.figure:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.2))
        ax.plot(ct, label="tree")
        ax.plot(cb, label=best, linestyle="--")
        ax.set_xlabel("episode")
        ax.set_ylabel(f"cumulative regret (mean of {a.seeds} seeds)")
        ax.set_title(f"Private LSVI-UCB, tight, ({a.epsilon:g}, {a.delta:g})", fontsize=9)
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.figure, dpi=120)
        print(f"  figure: {a.figure}")


if __name__ == "__main__":
    main()
