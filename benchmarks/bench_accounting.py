"""Benchmark: account and calibrate a JDP log with K = 10^6 tree leaves and 100 release groups.

Targets (issue 2): account under 1 s with zCDP/RDP and under 10 s with PLD; calibrate under 2 s
(RDP) and 30 s (PLD). Two logs: 100 Gaussian tree groups with distinct sensitivities (merged
exactly into one Gaussian), and 100 Laplace tree groups with distinct sensitivities (each a
separate PLD self-composition: the hard case).

    python benchmarks/bench_accounting.py [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

from privacct.accounting import get_accountant
from privacct.calibrate import calibrate_log
from privacct.log import Claim, MechanismLog, ReleaseGroup, Sensitivity, Structure

K = 10**6


def make_log(mechanism: str) -> MechanismLog:
    norm = "l1" if mechanism == "laplace" else "l2"
    scale = 400.0 if mechanism == "laplace" else 60.0
    groups = tuple(ReleaseGroup(f"g{i}", mechanism, scale, Sensitivity(norm, 1.0 + i / 100.0), Structure.tree(K))
                   for i in range(100))
    return MechanismLog(f"bench-{mechanism}", "joint", groups, claim=Claim(1.0, 1e-6))


def timed(fn):
    t = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    get_accountant("pld").epsilon(make_log("gaussian"), delta=1e-6)  # imports (scipy, dp_accounting) out of the timings
    rows = []
    for mech in ("gaussian", "laplace"):
        log = make_log(mech)
        for name in ("zcdp", "rdp", "pld"):
            eps, sec = timed(lambda name=name, log=log: get_accountant(name).epsilon(log, delta=1e-6))
            rows.append({"log": log.name, "task": "account", "accountant": name, "epsilon": eps, "seconds": sec})
        for name in ("rdp", "pld"):
            out, sec = timed(lambda name=name, log=log: calibrate_log(log, epsilon=1.0, delta=1e-6, accountant=name))
            eps = get_accountant(name).epsilon(out, delta=1e-6)
            rows.append({"log": log.name, "task": "calibrate", "accountant": name, "epsilon": eps,
                         "noise_factor": out.release_groups[0].noise_scale / log.release_groups[0].noise_scale, "seconds": sec})
    if args.json:
        print(json.dumps({"machine": platform.platform(), "rows": rows}, indent=2))
    else:
        print(f"machine: {platform.platform()}, python {platform.python_version()}")
        for r in rows:
            print(f"{r['log']:<15} {r['task']:<9} {r['accountant']:<5} eps={r['epsilon']:<10.5g} {r['seconds']:8.3f} s")


if __name__ == "__main__":
    main()
