"""The worked example's audits at their defaults over many seeds (issue 19, items 3-4; docs/extending.md).

For each variant of examples/custom_learner (bug = none | redraw | no-depth), runs the audit that
`privacct audit example-pucb --privacy jdp [--option bug=...]` runs (the learner's audit setting: K = 16,
20,000 trials per side, printed calibration, claim eps = 1) at audit seeds 0..N-1 and counts the verdicts,
with the seconds per audit. Target: every planted bug `fails` at every seed (never `passes`), each audit
under two minutes; the faithful learner `fails` at most at the confidence's rate.

    python benchmarks/bench_example_audit.py [--seeds 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "examples" / "custom_learner"))
    import privacct_example_pucb

    from privacct.algorithms import registry

    table = dict(registry.learners())
    if "example-pucb" not in table:   # not pip-installed here: register it for this process only
        extra = privacct_example_pucb.LEARNERS
        registry._load.cache_clear()
        merged = tuple(table.items()) + tuple(extra.items())
        registry._load = lambda: merged   # noqa: E731 - a process-local registration for the benchmark
    from privacct.audits.learner_audit import audit_learner

    rows = []
    with threadpool_limits(1):
        for bug in ("none", "redraw", "no-depth"):
            verdicts, secs, lbs = Counter(), [], []
            for seed in range(args.seeds):
                t = time.perf_counter()
                r = audit_learner("example-pucb", privacy="jdp", calibration="paper", seed=seed,
                                  options=(("bug", bug),), on_violation="report", executor="inline")
                secs.append(time.perf_counter() - t)
                verdicts[r.verdict] += 1
                lbs.append(r.epsilon_lower_bound)
            rows.append({"bug": bug, "seeds": args.seeds, "passes": verdicts["passes"], "fails": verdicts["fails"],
                         "inconclusive": verdicts["inconclusive"], "eps_lb_min": min(lbs), "eps_lb_max": max(lbs),
                         "seconds_mean": sum(secs) / len(secs), "seconds_max": max(secs)})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print("| bug | seeds | passes | fails | inconclusive | eps_lb range | s per audit (mean / max) |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['bug']} | {r['seeds']} | {r['passes']} | {r['fails']} | {r['inconclusive']} | "
                  f"{r['eps_lb_min']:.3f} - {r['eps_lb_max']:.3f} | {r['seconds_mean']:.1f} / {r['seconds_max']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
