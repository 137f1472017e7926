"""Released-statistics audits of every counter strategy (issues 20/21; docs/auditing.md#factorized-counters).

    python benchmarks/bench_counter_audits.py [--trials N] [--only NAME ...] [--episodes K] [--noise-multiplier F]
                                              [--json]

Every JDP learner that takes ``--option counter=...`` x every strategy (``tree``, ``tree-honaker``, ``sqrt-toeplitz``,
``blt``), at the learner's audit configuration (its spec's ``audit_configuration()``, claim eps = 1, tight, delta of
the paper setting) with the option added, ``--trials`` per side (default 20,000: modest, the audit settings use
10^5 and more), seed 0, executor inline. Per row: eps_lb, the accounted eps of the same configuration, the oracle
figure (the exact privacy-loss distribution of what is observed, at these trials), ``ratio`` = eps_lb / accounted,
and ``matches tree`` = ratio >= 0.8 x the tree's ratio at the same trials, or eps_lb >= 0.8 x the row's own oracle
(a strategy whose observation carries less at these trials than the tree's cannot match the tree's ratio).
``--episodes K`` runs every learner at K episodes instead (K - 1 counter leaves: at the audit settings' K = 2 a
counter has one leaf and every strategy is the same matrix R = [1]). ``--noise-multiplier 0.25`` runs the planted
learner-level bug (privacy noise x 1/4, the log and ledger at the declared scale): verdict ``fails`` expected.

Figures recorded in benchmarks/learner_audits.md#factorized-counters and the table of benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from dataclasses import replace

from privacct.audits.suite import audit_setting

LEARNERS = ("ucb-vi", "ucb-po", "private-linopt-vi", "private-linopt-po", "pp-ucrl-vtr", "pp-ucrl-vtr-plus",
            "pp-ucrl-vtr-laplace", "private-lsvi-ucb", "batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace")
STRATEGIES = ("tree", "tree-honaker", "sqrt-toeplitz", "blt")


def row(algorithm: str, counter: str, trials: int, episodes: int | None, noise_multiplier: float = 1.0) -> dict:
    a = audit_setting(algorithm, "jdp")
    opts = dict(a.config.options)
    opts["counter"] = counter
    a = a.with_config(options=tuple(sorted(opts.items())), **({} if episodes is None else {"episodes": episodes}))
    a = replace(a, noise_multiplier=noise_multiplier)
    t0 = time.perf_counter()
    r = a.run(trials=trials, seed=0, executor="inline")
    sec = time.perf_counter() - t0
    acc, lb, orc = r.accounted_epsilon, r.epsilon_lower_bound, r.oracle.epsilon
    return {"learner": algorithm, "counter": counter, "K": a.episodes, "H": a.horizon, "trials_per_side": trials,
            "seconds": round(sec, 1), "eps_lb": round(lb, 4), "accounted": round(acc, 4), "ratio": round(lb / acc, 3),
            "oracle": round(orc, 4), "oracle_exact": r.oracle.exact, "mu_observed": round(r.oracle.mu, 4),
            "structure": r.oracle.structure, "sandwich_ok": r.sandwich_ok, "verdict": r.verdict,
            "has_power": r.power.has_power, "noise_multiplier": noise_multiplier, "notes": list(r.notes)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=20_000)
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--episodes", type=int, default=None)
    p.add_argument("--noise-multiplier", type=float, default=1.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows = []
    for alg in LEARNERS:
        if args.only and alg not in args.only:
            continue
        tree = None
        for counter in STRATEGIES:
            out = row(alg, counter, args.trials, args.episodes, args.noise_multiplier)
            if counter == "tree":
                tree = out
            out["matches_tree"] = bool(out["ratio"] >= 0.8 * tree["ratio"]
                                       or (out["oracle"] > 0 and out["eps_lb"] >= 0.8 * out["oracle"]))
            rows.append(out)
            print(json.dumps(out) if args.json else
                  f"{alg:30s} {counter:14s} K={out['K']} eps_lb {out['eps_lb']:.3f} accounted {out['accounted']:.3f} "
                  f"oracle {out['oracle']:.3f} ratio {out['ratio']:.2f} matches tree {out['matches_tree']} "
                  f"{out['verdict']} {out['seconds']} s", flush=True)
    if args.json:
        print(json.dumps({"machine": {"cpus": os.cpu_count(), "python": platform.python_version()}, "rows": rows}))


if __name__ == "__main__":
    main()
