"""Throughput of the batched tabular learners (seed 002) on RiverSwim, H = 20.

    /tmp/venv/bin/python benchmarks/bench_tabular.py                 # JDP VI, 20 seeds, K = 2000
    /tmp/venv/bin/python benchmarks/bench_tabular.py --all           # every learner x privacy setting
    /tmp/venv/bin/python benchmarks/bench_tabular.py --vi-panel      # the full VI panel of Fig. 2 (5 x 20 x 2e4)

Reports aggregate episodes per second = seeds x K / wall-clock seconds of ``LearnerSpec.run``
(one batched call), and the same per CPU-second of this process (less sensitive to other jobs on a
shared machine); the load average is printed next to it. Target (issue 3): >= 10,000 episodes/s for Private-UCB-VI JDP over a 20-seed batch.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.tabular import LEARNERS
from privacct.algorithms.tabular.reproduce import TUNED
from privacct.rng import spawn_sequences


def bench(alg: str, privacy: str, eps: float, K: int, seeds: int, repeat: int = 1,
          regrets: list | None = None) -> tuple[float, float]:
    """Best-of-``repeat`` (wall-clock, CPU-time) aggregate episodes per second.

    If ``regrets`` is a list, the final cumulative regret per seed of each run is appended to it.
    """
    t = TUNED[alg]
    cfg = RunConfig(alg, privacy, epsilon=eps, episodes=K, horizon=20, bonus_scale=t["bonus_scale"],
                    options=tuple(sorted(t["options"].items())))
    best_wall = best_cpu = 0.0
    for r in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = LEARNERS[alg].run(cfg, spawn_sequences(r, seeds))
        if regrets is not None:
            regrets.append(res.regret.sum(axis=1))
        best_wall = max(best_wall, seeds * K / (time.perf_counter() - t0))
        best_cpu = max(best_cpu, seeds * K / (time.process_time() - c0))
    return best_wall, best_cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--vi-panel", action="store_true")
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}, load average before: {os.getloadavg()[0]:.2f}")
    if args.vi_panel:
        t0 = time.perf_counter()
        for privacy, eps in (("none", 1.0), ("jdp", 1.0), ("jdp", 0.5), ("ldp", 1.0), ("ldp", 0.5)):
            t1 = time.perf_counter()
            fin: list = []
            wall, cpu = bench("ucb-vi", privacy, eps, 20000, 20, regrets=fin)
            print(f"VI panel {privacy:4} eps={eps:g}: {wall:,.0f} episodes/s wall ({cpu:,.0f} per CPU-second), "
                  f"{time.perf_counter() - t1:.0f} s; regret at K: {fin[0].mean():,.0f} +- {fin[0].std():,.0f}")
        print(f"full VI panel (5 settings x 20 seeds x 2e4 episodes): {time.perf_counter() - t0:.0f} s")
        return
    cases = [("ucb-vi", "jdp")]
    if args.all:
        cases = [(a, p) for a in ("ucb-vi", "ucb-po") for p in ("none", "jdp", "ldp")]
    for alg, privacy in cases:
        wall, cpu = bench(alg, privacy, 1.0, args.episodes, args.seeds, args.repeat)
        print(f"{alg} {privacy:4}: {wall:,.0f} episodes/s wall, {cpu:,.0f} per CPU-second ({args.seeds} seeds, "
              f"K = {args.episodes}, H = 20; best of {args.repeat}; load average now {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
