"""Audit every catalogue mechanism (privacct.audits.catalog) and count false alarms and catches.

    python benchmarks/bench_audit_catalogue.py --trials 1000000 [--only NAME ...] [--seed S] [--json]
        [--markdown] [--executor inline|processes] [--workers N] [--baseline]

``--baseline`` audits with the statistics the auditor had before the vector statistics
(privacct.audits.vector_statistics) were added: the linear projections only.

For each entry: its true eps, the claim, the certified eps lower bound (95%), the verdict, the
winning statistic and the seconds. Counts at the end: false alarms (private entries whose verdict
is ``fails``, or whose lower bound exceeds the true eps: an unsound audit) and catches
(non-private entries whose verdict is ``fails``). Recorded in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time

import numpy as np

from privacct.audits.catalog import catalogue


def run(names, trials: int, seed: int, executor: str, workers: int | None) -> list[dict]:
    rows = []
    for name in names:
        e = catalogue()[name]
        t0 = time.perf_counter()
        r = e.audit(trials=trials, seed=seed, executor=executor, workers=workers)
        rows.append({
            "name": name, "private": e.private, "mixed": e.mixed, "true_epsilon": e.true_epsilon,
            "claim": e.claim_epsilon, "delta": e.delta, "epsilon_lower_bound": r.epsilon_lower_bound,
            "verdict": r.verdict, "test": r.test, "seconds": time.perf_counter() - t0,
            "unsound": bool(r.epsilon_lower_bound > e.true_epsilon),
        })
        print(f"{name:<32} true={e.true_epsilon:<6.3g} claim={e.claim_epsilon:<6.3g} lb={r.epsilon_lower_bound:<7.4f} "
              f"{r.verdict:<12} {time.perf_counter() - t0:6.1f}s  {r.test}", flush=True)
    return rows


def counts(rows: list[dict]) -> dict:
    priv = [r for r in rows if r["private"]]
    bad = [r for r in rows if not r["private"]]
    return {"private": len(priv), "false_alarms": sum(r["verdict"] == "fails" for r in priv),
            "unsound": sum(r["unsound"] for r in priv),
            "non_private": len(bad), "caught": sum(r["verdict"] == "fails" for r in bad),
            "missed": [r["name"] for r in bad if r["verdict"] != "fails"]}


def markdown(rows: list[dict]) -> str:
    fmt = lambda v: "∞" if math.isinf(v) else f"{v:.3g}"  # noqa: E731
    out = ["| mechanism | private | true eps | claim | eps_lb | verdict | statistic | seconds |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['name']}{' (mixed)' if r['mixed'] else ''} | {'yes' if r['private'] else 'no'} | "
                   f"{fmt(r['true_epsilon'])} | {fmt(r['claim'])} | {r['epsilon_lower_bound']:.3f} | {r['verdict']} | "
                   f"{r['test'].split(' (')[0].rsplit(' ', 2)[0]} | {r['seconds']:.1f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1_000_000, help="trials per side (default 1e6)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME")
    ap.add_argument("--executor", default="inline", choices=["inline", "processes", "auto"])
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--baseline", action="store_true", help="without the vector statistics (the auditor before them)")
    args = ap.parse_args()
    if args.baseline:
        from privacct.audits import statistics
        statistics._vector = lambda x_sel, y_sel: []
    names = args.only or list(catalogue())
    t0 = time.perf_counter()
    rows = run(names, args.trials, args.seed, args.executor, args.workers)
    summary = {"trials_per_side": args.trials, "seed": args.seed, "baseline": args.baseline, "total_seconds": time.perf_counter() - t0,
               **counts(rows), "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                                           "numpy": np.__version__, "load_average": os.getloadavg()}}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=2, default=float))
    if args.markdown:
        print(markdown(rows))
    print(json.dumps(summary, default=float))


if __name__ == "__main__":
    main()
