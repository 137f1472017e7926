"""Benchmark: linear-mixture learners, wall time for a batch of seeds (not a timed test).

Target (issue 4): LDP-UCRL-VTR on HardToLearn (d = 5, H = 6, S = 8, A = 16), 10 seeds x 10^4
episodes in under 3 minutes on the 2-core machine. The seed-001 authors' code runs ~9 episodes/s.

    /tmp/venv/bin/python benchmarks/bench_linear_mixture.py                 # the target run
    /tmp/venv/bin/python benchmarks/bench_linear_mixture.py --episodes 2000 --all   # every learner, shorter

Prints one JSON line per configuration: wall seconds (run only, then ledger check), batched
episodes/s (one episode of all seeds) and seed-episodes/s, final cumulative regret mean +- std.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

from privacct.algorithms.base import RunConfig
from privacct.algorithms.linear_mixture import LEARNERS
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences

CONFIGS = {
    "target": [("ldp-ucrl-vtr", "ldp", "hard-to-learn")],
    "all": [("ucrl-vtr", "none", "hard-to-learn"), ("ldp-ucrl-vtr", "ldp", "hard-to-learn"),
            ("ldp-ucrl-vtr", "ldp", "riverswim"), ("pp-ucrl-vtr", "jdp", "hard-to-learn"),
            ("pp-ucrl-vtr", "ldp", "hard-to-learn"), ("private-linopt-vi", "jdp", "hard-to-learn"),
            ("private-linopt-po", "jdp", "hard-to-learn")],
}


def bench(name: str, privacy: str, env: str, episodes: int, seeds: int, calibration: str) -> dict:
    cfg = RunConfig(name, privacy=privacy, epsilon=1.0, delta=0.1, calibration=calibration, episodes=episodes,
                    env=env, bonus_scale=1.0)
    spec = LEARNERS[name]
    spec.build_log(cfg)  # calibration (tight) is not part of the timed loop
    t = time.perf_counter()
    res = spec.run(cfg, spawn_sequences(0, seeds))
    run_s = time.perf_counter() - t
    t = time.perf_counter()
    ok = None if res.ledger is None else bool(check_ledger(res.log, res.ledger, accountant="analytic-gaussian").ok)
    check_s = time.perf_counter() - t
    cum = res.cumulative_regret[:, -1]
    return {"learner": name, "privacy": privacy, "env": env, "calibration": calibration, "episodes": episodes,
            "seeds": seeds, "run_seconds": round(run_s, 2), "ledger_check_seconds": round(check_s, 2),
            "batched_episodes_per_s": round(episodes / run_s, 1), "seed_episodes_per_s": round(episodes * seeds / run_s, 1),
            "final_cum_regret_mean": float(np.mean(cum)), "final_cum_regret_std": float(np.std(cum)),
            "ledger_ok": ok, "non_pd_events": int(np.sum(res.info["non_pd_events"]))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--calibration", default="paper", choices=("paper", "tight"))
    ap.add_argument("--all", action="store_true", help="every learner instead of the target only")
    args = ap.parse_args()
    print(json.dumps({"machine": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                      "numpy": np.__version__, "loadavg_before": os.getloadavg()}))
    for name, privacy, env in CONFIGS["all" if args.all else "target"]:
        print(json.dumps(bench(name, privacy, env, args.episodes, args.seeds, args.calibration)), flush=True)
    print(json.dumps({"loadavg_after": os.getloadavg()}))


if __name__ == "__main__":
    main()
