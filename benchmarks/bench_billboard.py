"""The billboard check at the audit settings and at the papers' K (benchmarks/learner_audits.md#billboard-checks).

    python benchmarks/bench_billboard.py [--trials 32] [--only NAME ...] [--json out.json]

Each row: a learner configuration, faithful or with a planted policy leak, its verdict, the trials whose coupled runs
prescribed users 2..K different actions, the Clopper-Pearson upper bound on that probability (95%) and the wall
time. Runs in one process (the machine's cores shared with whatever else runs: wall time, not CPU time).
"""

from __future__ import annotations

import argparse
import json
import time

from privacct.audits.billboard import billboard_check

PAPER_UCB = dict(episodes=20000, horizon=20, env="riverswim", options=(("confidence_delta", 0.1),), bonus_scale=1.0,
                 calibration="paper")
TUNED_UCB = dict(episodes=20000, horizon=20, env="riverswim", options=(("e_scale", 0.05), ("confidence_delta", 0.1)),
                 bonus_scale=0.002)
LEAKY_UCB = dict(episodes=4, horizon=2, bonus_scale=1e6, options=(("e_scale", 1e-9),))
LSVI_SWITCHING = dict(epsilon=50.0, delta=1e-5, episodes=1000, options=(("beta", 5.0),))
LSVI_PAPER = dict(epsilon=5.0, delta=1e-5, episodes=10000, options=(("beta", 5.0),))
LSVI_PAPER_EPS1 = dict(epsilon=1.0, delta=1e-5, episodes=10000, options=(("beta", 5.0),))

ROWS = {
    "ucb-vi-audit-setting": ("ucb-vi", LEAKY_UCB, None),
    "ucb-vi-audit-setting-leak": ("ucb-vi", LEAKY_UCB, "bonus-on-exact-counts"),
    "ucb-vi-paper-K-printed": ("ucb-vi", PAPER_UCB, None),
    "ucb-vi-paper-K-printed-leak": ("ucb-vi", PAPER_UCB, "bonus-on-exact-counts"),
    "ucb-vi-paper-K-tuned-leak": ("ucb-vi", TUNED_UCB, "bonus-on-exact-counts"),
    "lsvi-switching": ("private-lsvi-ucb", LSVI_SWITCHING, None),
    "lsvi-switching-leak": ("private-lsvi-ucb", LSVI_SWITCHING, "switch-on-exact-gram"),
    "lsvi-paper-K-eps5": ("private-lsvi-ucb", LSVI_PAPER, None),
    "lsvi-paper-K-eps5-leak": ("private-lsvi-ucb", LSVI_PAPER, "switch-on-exact-gram"),
    "lsvi-paper-K-eps1-leak": ("private-lsvi-ucb", LSVI_PAPER_EPS1, "switch-on-exact-gram"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=32)
    ap.add_argument("--only", nargs="+", choices=sorted(ROWS), default=None)
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = ap.parse_args()
    out = []
    print(f"{'row':<30} {'verdict':<12} {'differing':>9} {'p_upper':>8} {'wall s':>7}")
    for name in args.only or ROWS:
        algorithm, kw, mutant = ROWS[name]
        t0 = time.perf_counter()
        r = billboard_check(algorithm, trials=args.trials, mutant=mutant, **kw)
        wall = time.perf_counter() - t0
        print(f"{name:<30} {r.verdict:<12} {r.differing:>4}/{r.trials:<4} {r.p_upper:>8.3f} {wall:>7.1f}", flush=True)
        out.append(dict(r.to_dict(), row=name, wall_seconds=wall))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
