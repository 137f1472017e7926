"""The learner-level ``counter-noise-path`` (issue 20 item 3; docs/auditing.md#planted-bugs) at the paper's K: what the
one-run released-statistics audit's scores see of it.

    python benchmarks/bench_counter_noise_path.py [--epsilon E] [--canaries M ...] [--seed N ...]
                                                 [--scores NAME ...] [--json]

private-lsvi-ucb JDP tight at its paper setting (K = 10^4, H = 5, linear-two-state, beta 5; tight's BLT Gram counters)
with claim (E, 10^-5), default E = 1, seeds 0, confidence 0.95; each row once with the planted bug (``AuditHook.mutant``
``counter-noise-path``: the BLT recursion runs with Q halved while the log declares the faithful counter) and once
faithful. Every row is the shipped audit, :func:`privacct.audits.one_run_learner.one_run_audit_learner` (what
``privacct audit --one-run`` and ``privacct mutants`` run), with its default scores for a Toeplitz counter
(docs/auditing.md#one-run-scores), on ONE run each:

* ``difference``: a canary at leaf t seen through ONE difference of releases y_t - y_(t-1) (noisier under the bug
  than declared: blind to it);
* ``window``: each canary seen through the mean of the releases from her leaf to the next canary's minus the mean over
  the window before (S, the canary spacing, releases each; the other canaries cancel; the non-canary users' additions
  are the auditor's own data and are subtracted), computed by privacct/counters/observed.py from the RELEASES, scored
  by the Gaussian log-likelihood ratio at the DECLARED noise std of that window, summed over the H Gram counters.

Each score's bound is at confidence 1 - 0.05 / 2 (union bound); the audit's is the larger. ``--scores window`` runs
the window score alone (confidence 0.95, the figure this benchmark measured before the score shipped). The canary
count is the choice: the window score's power grows with the spacing (19 canaries: S = 512), the difference score's
with the count. Figures recorded in benchmarks/learner_audits.md#counter-noise-path-in-a-learner.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time


def paper_config(epsilon: float):
    from privacct.audits.one_run_learner import one_run_config

    return one_run_config("private-lsvi-ucb", epsilon=epsilon, delta=1e-5)


def audit_row(epsilon: float, canaries: int, *, mutant: str | None, seed: int = 0, scores=None) -> dict:
    """One learner run with ``canaries`` canaries and the shipped one-run audit (module docstring): one row."""
    from privacct.audits.one_run_learner import one_run_audit_learner

    t0 = time.perf_counter()
    r = one_run_audit_learner(paper_config(epsilon), canaries=canaries, seed=seed, mutant=mutant,
                              scores=None if scores is None else tuple(scores))
    return {"mutant": mutant, "epsilon": epsilon, "seed": seed, "canaries": r.canaries, "spacing": r.spacing,
            "verdict": r.verdict, "eps_lb": round(r.epsilon_lower_bound, 4), "best_score": r.best_score,
            "accounted": round(r.accounted_epsilon, 4),
            "scores": {x.name: {"guesses": int(x.bound.guesses), "correct": int(x.bound.correct),
                                "eps_lb": round(float(x.bound.epsilon_lower_bound), 4),
                                "confidence": x.bound.confidence} for x in r.scores},
            "seconds": round(time.perf_counter() - t0, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--canaries", type=int, nargs="+", default=[19, 100, 1000])
    ap.add_argument("--seed", type=int, nargs="+", default=[0])
    ap.add_argument("--scores", nargs="+", default=None, help="score names (default: the audit's own choice)")
    ap.add_argument("--faithful", choices=("yes", "no"), default="yes", help="also run the faithful learner")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    for m in args.canaries:
        for seed in args.seed:
            for mutant in ("counter-noise-path",) + ((None,) if args.faithful == "yes" else ()):
                row = audit_row(args.epsilon, m, mutant=mutant, seed=seed, scores=args.scores)
                rows.append(row)
                if not args.json:
                    print(row, flush=True)
    if args.json:
        print(json.dumps({"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
                          "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
