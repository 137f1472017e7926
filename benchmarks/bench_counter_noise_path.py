"""The learner-level ``counter-noise-path`` (issue 20 item 3; docs/auditing.md#planted-bugs) at the paper's K: which
checks catch it, and what a one-run audit of the released statistics sees of it.

    python benchmarks/bench_counter_noise_path.py [--epsilon E] [--canaries M ...] [--seed N] [--json]

private-lsvi-ucb JDP tight at its paper setting (K = 10^4, H = 5, linear-two-state, beta 5; tight's BLT Gram counters)
with claim (E, 10^-5), default E = 1, seed 0, confidence 0.95; each row once with the planted bug (``AuditHook.mutant``
``counter-noise-path``: the BLT recursion runs with Q halved) and once faithful:

* ``one-run``: the one-run released-statistics audit as shipped (:func:`privacct.audits.one_run_learner.one_run_audit_learner`,
  what ``privacct mutants`` runs): a canary at leaf t seen through ONE difference of releases y_t - y_(t-1);
* ``window``: a DEPARTURE, the same single run and canaries, but each canary seen through the mean of the S releases
  from her leaf on minus the mean of the S before (S the canary spacing, so both windows hold the same other canaries,
  which cancel; the non-canary users' additions are the auditor's own data and are subtracted): W = x_t + (mean of the
  release noise over [t, t + S) minus over [t - S, t)). It is computed from the release noise the counters add (a
  wrapper records noisy minus exact prefix sums; W is then the canary's addition under her bit plus that noise
  difference, the same number the auditor forms from the transcript). Score: the Gaussian log-likelihood ratio of W
  with the DECLARED noise std of that window (from the declared L), summed over the H Gram counters; guesses and bound
  as :mod:`privacct.audits.one_run` (Steinke et al. 2023). The guesses are a function of the output, so the bound is
  sound for the faithful learner; this statistic is NOT what privacct's one-run audit observes
  (privacct/counters/observed.py records one difference per canary).

Figures recorded in benchmarks/learner_audits.md#counter-noise-path-in-a-learner.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np


def paper_config(epsilon: float):
    from privacct.audits.one_run_learner import one_run_config

    return one_run_config("private-lsvi-ucb", epsilon=epsilon, delta=1e-5)


def window_std(l: np.ndarray, t: int, S: int) -> float:
    """Per-coordinate noise std (unit node noise) of mean(n[t..t+S-1]) - mean(n[t-S..t-1]) for release noise
    n_s = sum_(j <= s) l_(s-j) z_j (1-based steps; the before-window is empty at t = 1)."""
    coef = np.zeros(t + S - 1)
    for s in range(max(1, t - S), t + S):
        w = (1.0 if s >= t else -1.0) / S
        coef[:s] += w * l[:s][::-1]
    return float(np.linalg.norm(coef))


def window_audit(epsilon: float, canaries: int, *, mutant: str | None, seed: int = 0, confidence: float = 0.95) -> dict:
    """One learner run with ``canaries`` canaries; the window-mean one-run audit (module docstring)."""
    from privacct.algorithms.contract import AuditHook, CanaryPlan
    from privacct.algorithms.registry import get_learner
    from privacct.audits.one_run import draw_bits, one_run_audit_scores
    from privacct.audits.one_run_learner import plan_users
    from privacct.counters.counter import FactorizedCounter
    from privacct.mechanisms import upper_triangle

    cfg = paper_config(epsilon)
    users = plan_users(cfg.episodes, canaries)
    S = users[1] - users[0] if len(users) > 1 else cfg.episodes - 1
    signs = draw_bits(seed, len(users))
    bits = tuple("A" if v > 0 else "B" for v in signs)
    noise: dict[str, list[np.ndarray]] = {}
    counters: dict[str, FactorizedCounter] = {}
    add = FactorizedCounter.add

    def recording_add(self, x):   # the release noise of every step: noisy minus exact prefix sum (seed 0 of the batch)
        out = add(self, x)
        noise.setdefault(self.group, []).append(upper_triangle((out - self._exact)[:1])[0])
        counters[self.group] = self
        return out

    t0 = time.perf_counter()
    FactorizedCounter.add = recording_add
    try:
        hook = AuditHook("A", fixed_users=False, mutant=mutant, plan=CanaryPlan(users, bits))
        res = get_learner(cfg.algorithm).run(cfg, [np.random.SeedSequence([seed, 1])], audit=hook)
    finally:
        FactorizedCounter.add = add
    c = next(iter(counters.values()))
    l = np.asarray(c.implementation.release_noise_column(c.structure, c.leaves), dtype=float)   # the DECLARED L
    n = {g: np.stack(v) for g, v in noise.items()}
    index = {u: i for i, u in enumerate(users)}
    score = np.zeros(len(users))
    for r in res.tap.canary_records:    # one per canary and Gram counter: her addition under each bit
        t, i = r.user, index[r.user]     # one user per leaf: leaf t = user t
        before = n[r.group][t - 1 - S:t - 1].mean(axis=0) if t > 1 else 0.0
        x = (r.mean_a[0] if bits[i] == "A" else r.mean_b[0]) + n[r.group][t - 1:t - 1 + S].mean(axis=0) - before
        sd = c.scale * window_std(l, t, S)
        a, b = r.mean_a[0], r.mean_b[0]
        score[i] += (np.dot(a - b, x) - 0.5 * (np.dot(a, a) - np.dot(b, b))) / sd ** 2
    bound = one_run_audit_scores(score, signs, epsilon=cfg.epsilon, delta=cfg.delta, confidence=confidence, seed=seed,
                                 name="window-mean one-run")
    return {"statistic": "window", "mutant": mutant, "epsilon": epsilon, "canaries": len(users), "window": S,
            "guesses": int(bound.guesses), "correct": int(bound.correct), "eps_lb": float(bound.epsilon_lower_bound),
            "verdict": bound.verdict, "seconds": round(time.perf_counter() - t0, 1)}


def shipped_audit(epsilon: float, canaries: int, *, mutant: str | None, seed: int = 0) -> dict:
    from privacct.audits.one_run_learner import one_run_audit_learner

    r = one_run_audit_learner(paper_config(epsilon), canaries=canaries, seed=seed, mutant=mutant)
    return {"statistic": "one-run", "mutant": mutant, "epsilon": epsilon, "canaries": r.canaries, "window": 1,
            "guesses": int(r.bound.guesses), "correct": int(r.bound.correct), "eps_lb": r.epsilon_lower_bound,
            "verdict": r.verdict, "seconds": round(r.seconds, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--canaries", type=int, nargs="+", default=[1000, 19])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shipped", action="store_true", help="also run the shipped one-run audit (one difference per canary)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    for m in args.canaries:
        for mutant in ("counter-noise-path", None):
            new = [shipped_audit(args.epsilon, m, mutant=mutant, seed=args.seed)] if args.shipped else []
            new.append(window_audit(args.epsilon, m, mutant=mutant, seed=args.seed))
            rows += new
            for r in new if not args.json else ():
                print(r, flush=True)
    if args.json:
        print(json.dumps({"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
                          "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
