"""Audit benchmarks: mechanism-audit throughput, power, learner-audit throughput, mutants.

    /tmp/venv/bin/python benchmarks/bench_audit.py [--quick] [--json]

Figures (recorded in benchmarks/audit.md):

* white-box mechanism audits (Laplace b = 1 and Gaussian sigma = 1, scalar, shift 1): trials per
  side per second of wall clock, for the whole audit (sampling + test selection + certification),
  inline and on local processes; target >= 1e6 trials/s.
* power: eps lower bound of Laplace eps = 1 at 1e3 .. 1e6 trials per side (95%), and of the
  half-noise Laplace (true eps 2) against a claim of 1 (must fail).
* learner audit: Private-UCB-VI (``ucb-vi``) JDP, K = 32, H = 5, tight calibration, released
  statistics; trials per side per second (target >= 1000), inline and on 2 processes.
* mutants: which check catches each planted bug (``privacct mutants``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform

import numpy as np

from privacct.audits import audit_mechanism
from privacct.audits.reference_mechanisms import GaussianMechanism, LaplaceMechanism


def mechanism_throughput(trials: int) -> list[dict]:
    rows = []
    for name, mech, kw in [("laplace b=1", LaplaceMechanism(1.0), {}),
                           ("gaussian sigma=1", GaussianMechanism(1.0), {"delta": 1e-5})]:
        for executor in ("inline", "processes"):
            audit_mechanism(mech, 0.0, 1.0, trials=20_000, executor="inline", **kw)  # warm-up
            r = audit_mechanism(mech, 0.0, 1.0, trials=trials, executor=executor, seed=1, **kw)
            rows.append({"mechanism": name, "executor": r.executor, "trials_per_side": trials,
                         "seconds": round(r.seconds, 3), "trials_per_second": round(trials / r.seconds),
                         "epsilon_lower_bound": round(r.epsilon_lower_bound, 4)})
    return rows


def power(max_trials: int) -> list[dict]:
    rows = []
    n = 1000
    while n <= max_trials:
        r = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials=n, seed=0)
        h = audit_mechanism(LaplaceMechanism(0.5), 0.0, 1.0, epsilon=1.0, trials=n, seed=0)
        rows.append({"trials_per_side": n, "laplace_eps1_lower_bound": round(r.epsilon_lower_bound, 4),
                     "half_noise_lower_bound": round(h.epsilon_lower_bound, 4),
                     "half_noise_verdict": h.verdict, "laplace_eps1_verdict": r.verdict})
        n *= 10
    return rows


def learner_throughput(trials: int) -> list[dict]:
    from privacct.audits.learner_audit import audit_learner

    rows = []
    audit_learner("ucb-vi", privacy="jdp", episodes=32, horizon=5, trials=100, executor="inline")  # warm-up
    for executor, workers in (("inline", None), ("processes", 2)):
        r = audit_learner("ucb-vi", privacy="jdp", epsilon=1.0, calibration="tight", episodes=32, horizon=5,
                          observe="released", trials=trials, seed=0, executor=executor, workers=workers)
        rows.append({"learner": "ucb-vi jdp tight K=32 H=5 released", "executor": r.executor,
                     "trials_per_side": trials, "seconds": round(r.seconds, 2),
                     "trials_per_second": round(trials / r.seconds), "runs_per_second": round(2 * trials / r.seconds),
                     "epsilon_lower_bound": round(r.epsilon_lower_bound, 4), "verdict": r.verdict})
    return rows


def auditor_only(trials: int, dim: int = 480) -> dict:
    """The auditor's own cost on learner-shaped outputs: a null Gaussian mechanism of ``dim`` coordinates."""
    from privacct.audits.reference_mechanisms import NullMechanism

    r = audit_mechanism(NullMechanism((dim,)), 0, 1, trials=trials, executor="inline")
    return {"outputs": f"{dim} floats", "trials_per_side": trials, "seconds": round(r.seconds, 3),
            "sampling_seconds": round(r.sampling_seconds, 3), "trials_per_second": round(trials / r.seconds)}


def mutants(trials: int | None) -> list[dict]:
    from privacct.audits.mutants import check_all
    out = []
    for r in check_all(trials=trials) + check_all(controls=True, trials=trials):
        d = r.to_dict()
        out.append({"name": d["name"], "caught_by": d["caught_by"], "claimed": d["claimed_epsilon"],
                    **{k: None if v is None else round(v, 3) for k, v in d["epsilons"].items()},
                    "seconds": round(d["seconds"], 2)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    big = 200_000 if args.quick else 2_000_000
    out = {
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
                    "numpy": np.__version__, "load_average": os.getloadavg()},
        "mechanism_throughput": mechanism_throughput(big),
        "power": power(100_000 if args.quick else 1_000_000),
        "learner_throughput": learner_throughput(1000 if args.quick else 4000),
        "auditor_only_learner_shaped": auditor_only(1000 if args.quick else 4000),
        "mutants": mutants(None),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for key, rows in out.items():
        print(f"== {key}")
        if isinstance(rows, dict):
            print("  ", rows)
            continue
        for row in rows:
            print("  ", row)


if __name__ == "__main__":
    main()
