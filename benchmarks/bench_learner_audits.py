"""Learner-audit targets: power per private learner (tight, claim eps = 1), the printed constants certified
failing with valid neighbours (paper), and the planted learner-level bugs.

    python benchmarks/bench_learner_audits.py [--quick] [--only NAME ...] [--privacy jdp|ldp ...]
        [--counter NAME] [--part tight|paper|bugs ...] [--json]

* ``tight``: every private learner x privacy model at its audit configuration
  (each spec's ``audit_configuration()``, claim eps = 1, delta of the learner's paper setting),
  with the trials per side that fit the 2-minute budget. Target: eps_lb >= 0.5 x the accounted eps of
  the same configuration; where the exact privacy-loss distribution of the observed releases shows that
  no run with that many trials reaches 0.5 x (oracle figure < 0.5 x accounted), eps_lb >= 0.8 x oracle.
  Each row audits the counter the learner runs at that configuration (``tight``'s own choice; the row's
  ``counter`` says which); ``--counter NAME`` adds option counter=NAME to the JDP rows (e.g. ``tree``: the figures of
  the code before audited runs kept tight's counter, which forced the tree).
* ``paper``: :func:`privacct.audits.suite.paper_failures` (seed 002 JDP / LDP, seed 004): verdict must be
  ``fails``.
* ``bugs``: :func:`privacct.audits.suite.planted_noise_bugs`: caught by the audit alone.

Figures recorded in benchmarks/learner_audits.md and the table of benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from privacct.audits.suite import check_learner, paper_failures, planted_noise_bugs, suite


def audited_counter(a) -> str | None:
    """The counter the audit of ``a`` runs and observes: its declared log's (the report's rule,
    :func:`privacct.audits.report.rows.counter_of`; None: no continual counter, e.g. LDP)."""
    from privacct.algorithms.registry import get_learner
    from privacct.audits.report.rows import counter_of

    return counter_of(get_learner(a.algorithm).declared_log(a.config))


def tight_rows(quick: bool, only, privacy=None, counter: str | None = None) -> list[dict]:
    rows = []
    for a in suite():
        if (only and a.algorithm not in only) or (privacy and a.privacy not in privacy):
            continue
        if counter is not None and a.privacy == "jdp":
            a = a.with_config(options=tuple(sorted({**dict(a.config.options), "counter": counter}.items())))
        trials = a.trials // 20 if quick else a.trials
        t0 = time.perf_counter()
        r = a.run(trials=trials, seed=0)
        sec = time.perf_counter() - t0
        acc, lb, orc = r.accounted_epsilon, r.epsilon_lower_bound, r.oracle.epsilon
        half = 0.5 * acc
        target = "eps_lb >= 0.5 acc" if orc >= half else "eps_lb >= 0.8 oracle"
        met = lb >= half if orc >= half else (orc > 0 and lb >= 0.8 * orc)  # an oracle of 0: no power, never "met"
        rows.append({"learner": a.algorithm, "privacy": a.privacy, "delta": a.delta, "counter": audited_counter(a),
                     "configuration": {"K": a.episodes, "H": a.horizon, "env": a.env, "bonus_scale": a.bonus_scale,
                                       "options": [list(o) for o in a.options]},
                     "trials_per_side": trials, "seconds": round(sec, 1), "eps_lb": round(lb, 4),
                     "accounted": round(acc, 4), "ratio": round(lb / acc, 3), "oracle": round(orc, 4),
                     "oracle_exact": r.oracle.exact, "mu_observed": round(r.oracle.mu, 4),
                     "ratio_to_oracle": round(lb / orc, 3) if orc > 0 else None, "target": target,
                     "met": bool(met and sec <= 120), "verdict": r.verdict, "has_power": r.power.has_power,
                     "trials_needed_for_power": r.power.trials_needed})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def paper_rows(quick: bool) -> list[dict]:
    rows = []
    for a in paper_failures():
        trials = a.trials // 5 if quick else a.trials
        t0 = time.perf_counter()
        r = a.run(trials=trials, seed=0)
        rows.append({"learner": a.algorithm, "privacy": a.privacy, "claim": a.epsilon,
                     "configuration": {"K": a.episodes, "H": a.horizon, "options": [list(o) for o in a.options]},
                     "trials_per_side": trials, "seconds": round(time.perf_counter() - t0, 1),
                     "eps_lb": round(r.epsilon_lower_bound, 4), "accounted": round(r.accounted_epsilon, 4),
                     "oracle": round(r.oracle.epsilon, 4), "verdict": r.verdict})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def bug_rows() -> list[dict]:
    rows = []
    for a in planted_noise_bugs():
        t0 = time.perf_counter()
        rep = check_learner(a, checks=("audit",))
        rows.append({"mutant": a.name, "trials_per_side": a.trials, "caught_by": rep.caught_by,
                     "eps_lb": round(rep.audit_epsilon_lower_bound, 4), "seconds": round(time.perf_counter() - t0, 1)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="1/20 of the tight trials, 1/5 of the paper trials")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME", help="only these learners (tight part)")
    p.add_argument("--privacy", nargs="+", default=None, choices=["jdp", "ldp"], help="only these models (tight part)")
    p.add_argument("--counter", default=None, metavar="NAME",
                   help="add option counter=NAME to the JDP rows (tight part; default: the learner's own choice)")
    p.add_argument("--part", nargs="+", default=["tight", "paper", "bugs"], choices=["tight", "paper", "bugs"])
    p.add_argument("--json", action="store_true", help="print one JSON document at the end")
    a = p.parse_args()
    out = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}}
    if "tight" in a.part:
        out["tight"] = tight_rows(a.quick, a.only, a.privacy, a.counter)
    if "paper" in a.part:
        out["paper"] = paper_rows(a.quick)
    if "bugs" in a.part:
        out["bugs"] = bug_rows()
    if a.json:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
