"""Benchmark: Private LSVI-UCB (seed 004) on the d = 10, H = 10 linear MDP, 10^4 episodes per seed.

Target (issue 7): under 2 minutes per seed on the 2-core machine. Not a timed test: run

    python benchmarks/bench_linear_mdp.py [--episodes 10000] [--seeds 1] [--calibration tight] [--epsilon 5]

It prints wall time, episodes per second, the number of policy updates against the cap and the
Thm 11 bound, and the ledger check, as JSON. Figures are recorded in benchmarks/linear_mdp.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.linear_mdp import LEARNERS
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algorithm", default="private-lsvi-ucb", choices=sorted(LEARNERS))
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--calibration", default="tight", choices=("paper", "tight"))
    ap.add_argument("--epsilon", type=float, default=5.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--beta", type=float, default=10.0)
    ap.add_argument("--env", default="linear-d10-h10")
    a = ap.parse_args(argv)
    privacy = "none" if a.algorithm == "lsvi-ucb" else "jdp"
    cfg = RunConfig(a.algorithm, privacy=privacy, epsilon=a.epsilon, delta=a.delta, calibration=a.calibration,
                    episodes=a.episodes, env=a.env, options=(("beta", a.beta),))
    spec = LEARNERS[a.algorithm]
    t0 = time.perf_counter()
    log = spec.build_log(cfg)
    t1 = time.perf_counter()
    res = spec.run(cfg, spawn_sequences(0, a.seeds))
    t2 = time.perf_counter()
    out = {
        "algorithm": a.algorithm, "env": a.env, "episodes": a.episodes, "seeds": a.seeds, "calibration": a.calibration,
        "epsilon": a.epsilon, "delta": a.delta, "beta": a.beta,
        "build_log_s": round(t1 - t0, 3), "run_s": round(t2 - t1, 2),
        "run_s_per_seed": round((t2 - t1) / a.seeds, 2), "episodes_per_s_per_seed": round(a.episodes * a.seeds / (t2 - t1), 1),
        "mean_regret_per_episode": float(res.regret.mean()),
        "python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
    }
    if log is not None:
        ledgers = res.info.get("ledgers", [res.ledger])
        t3 = time.perf_counter()
        out["ledger_ok"] = all(check_ledger(log, led).ok for led in ledgers)
        out["ledger_check_s"] = round(time.perf_counter() - t3, 2)
        out["n_updates"] = [int(x) for x in res.info["n_updates"]]
        if "cap" in res.info:
            out["cap"] = int(res.info["cap"])
            out["switching_bound_thm11"] = float(res.info["switching_bound_thm11"])
            out["floor_events"] = [int(x) for x in res.info["floor_events"]]
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
