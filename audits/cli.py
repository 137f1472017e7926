"""``privacct audit`` and ``privacct mutants`` (registered through the ``privacct.commands`` entry points).

``privacct audit ALGORITHM --privacy jdp|ldp --epsilon E [--delta D] --calibration paper|tight
--episodes K [--horizon H] --trials N --observe released|actions [--fresh-users] [--json] [--seed S]
[--confidence C] [--scheduler ADDRESS]``: audit a learner's claim on canary A vs B
(:func:`privacct.audits.learner.audit_learner`). ``released`` (the default) observes every release
that contains user 1 (white-box, with its exact likelihood ratio); other users are fixed (users
2..K report a fixed response function, so D and D' are two fixed neighbouring datasets) unless
``--fresh-users`` draws them from the environment in every trial. Exit codes
(:data:`EXIT_CODES`): 0 ``passes`` (eps lower bound <= claim and the audit had the power to see a
violation), 1 ``fails`` (eps lower bound > claim), 3 ``inconclusive`` (eps lower bound <= claim but
the audit could not have seen a violation; the output says how many trials it would need), 2 bad
input (``privacct.cli.main`` prints the PrivacctError as one line).

``privacct mutants [--json] [--trials N] [--seed S] [--only NAME ...] [--controls]``: run every
planted bug (:mod:`privacct.audits.mutants`) through the accountant, ledger and audit checks; ``--json``
prints a list of objects with name, caught_by and the eps each check found. The audit catches a
mutant only when its verdict is ``fails``. Exit 0 when every
mutant is caught by at least one check (and, with ``--controls``, no correct control is), 1 otherwise.
``--learners`` adds the tabular learners run with the papers' printed constants
(:func:`privacct.audits.suite.paper_constants`), reported beside the mutants.
"""

from __future__ import annotations

import argparse
import json

from privacct.cli import integer_arg, number_arg
from privacct.errors import check_count

EXIT_CODES = {"passes": 0, "fails": 1, "inconclusive": 3}
AUDIT_EXIT_HELP = ("exit status: 0 passes (eps lower bound <= claim and the audit had the power to see a violation: "
                   "it would certify more than the claim for a mechanism leaking twice the claim), 1 fails (eps lower "
                   "bound > claim), 3 inconclusive (eps lower bound <= claim but too few trials to see a violation; "
                   "the output gives the trials needed), 2 bad input")


def register_audit(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("audit", help="empirical eps lower bound of a learner (canary A vs B); "
                                            "exit 0 passes, 1 fails, 3 inconclusive, 2 bad input",
                              description="Audit a private learner: run it on D (user 1 = canary A) and D' (canary B) "
                                          "TRIALS times each, certify an eps lower bound (Clopper-Pearson) and give a "
                                          "verdict: passes, fails or inconclusive.",
                              epilog=AUDIT_EXIT_HELP)
    p.add_argument("algorithm", metavar="ALGORITHM", help="a learner name (see `privacct run --help`)")
    p.add_argument("--privacy", choices=["jdp", "ldp"], required=True, help="privacy model of the claim")
    p.add_argument("--epsilon", type=number_arg("--epsilon"), default=1.0, help="claimed epsilon > 0 (default 1)")
    p.add_argument("--delta", type=number_arg("--delta"), default=0.0, help="claimed delta in [0, 1) (default 0)")
    p.add_argument("--calibration", choices=["paper", "tight"], default="tight", help="noise calibration (default tight)")
    p.add_argument("--episodes", type=integer_arg("--episodes"), default=32, help="K >= 1 episodes (default 32)")
    p.add_argument("--horizon", type=integer_arg("--horizon"), default=None, help="H >= 1 (default: the environment's)")
    p.add_argument("--env", default=None, help="environment (default: the learner's)")
    p.add_argument("--trials", type=integer_arg("--trials"), default=2000, help="runs per side >= 10 (default 2000)")
    p.add_argument("--observe", choices=["released", "actions"], default="released",
                   help="released (default): every noisy release that contains user 1, white-box, tested with its exact "
                        "likelihood ratio; actions: the actions sent to the other users (black-box: can fail, never pass)")
    p.add_argument("--fresh-users", action="store_true",
                   help="draw users 2..K from the environment in every trial (default: a fixed response function, so "
                        "D and D' are two fixed neighbouring datasets; far more power)")
    p.add_argument("--confidence", type=number_arg("--confidence"), default=0.95, help="in (0, 1) (default 0.95)")
    p.add_argument("--seed", type=integer_arg("--seed"), default=0, help="root seed >= 0 (default 0)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS", help="Dask scheduler address (default: local processes)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_audit)
    return p


def cmd_audit(args) -> int:
    from .learner import audit_learner

    r = audit_learner(args.algorithm, privacy=args.privacy, epsilon=args.epsilon, delta=args.delta,
                      calibration=args.calibration, episodes=args.episodes, horizon=args.horizon, env=args.env,
                      observe=args.observe, fixed_users=not args.fresh_users, trials=args.trials,
                      confidence=args.confidence, seed=args.seed,
                      scheduler=args.scheduler)
    if args.json:
        d = r.to_dict()
        d.update({"algorithm": args.algorithm, "privacy": args.privacy, "calibration": args.calibration,
                  "episodes": args.episodes, "observe": args.observe, "fixed_users": not args.fresh_users})
        print(json.dumps(d, indent=2))
    else:
        print(r.summary())
    return EXIT_CODES[r.verdict]


def register_mutants(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("mutants", help="run every planted bug through the accountant, ledger and audit checks",
                              description="Planted bugs (privacct.audits.mutants): which check catches each one. The "
                                          "audit catches a mutant only when its verdict is 'fails' (an inconclusive "
                                          "audit catches nothing).")
    p.add_argument("--json", action="store_true", help="print a JSON list of {name, caught_by, epsilons, ...}")
    p.add_argument("--trials", type=integer_arg("--trials"), default=None,
                   help="audit trials per side (default: each mutant's own, 1e5 for most)")
    p.add_argument("--seed", type=integer_arg("--seed"), default=0, help="root seed >= 0 (default 0)")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME", help="run only these mutants")
    p.add_argument("--controls", action="store_true", help="also run the correct controls (must not be caught)")
    p.add_argument("--learners", action="store_true",
                   help="also check the tabular learners with the papers' printed constants (calibration paper; "
                        "reported, not counted in the exit status)")
    p.set_defaults(func=cmd_mutants)
    return p


def cmd_mutants(args) -> int:
    from .mutants import CONTROLS, check_all

    if args.trials is not None:
        check_count("--trials", args.trials, minimum=10)
    reports = check_all(args.only, trials=args.trials, seed=args.seed)
    controls = check_all(None, controls=True, trials=args.trials, seed=args.seed) if args.controls else []
    ok = all(r.caught_by for r in reports) and not any(r.caught_by for r in controls)
    printed = []
    if args.learners:
        from .suite import check_learner, paper_constants
        printed = [check_learner(a, trials=args.trials or 1000, seed=args.seed) for a in paper_constants()]
    if args.json:
        out = [r.to_dict() for r in reports] + [dict(r.to_dict(), control=True) for r in controls] + \
              [dict(r.to_dict(), learner=True) for r in printed]
        for d in out:
            d.pop("audit", None)
        print(json.dumps(out, indent=2))
    else:
        print(f"{'mutant':<30} {'caught_by':<26} {'accountant':>10} {'ledger':>8} {'audit':>8}  (claimed eps)")
        for r in reports + controls + printed:
            tag = " (control)" if r.name in CONTROLS else ""
            fmt = lambda v: "refused" if v is None else f"{v:.3f}"  # noqa: E731
            print(f"{r.name + tag:<30} {','.join(r.caught_by) or '-':<26} {fmt(r.accountant_epsilon):>10} "
                  f"{fmt(r.ledger_epsilon):>8} {fmt(r.audit_epsilon_lower_bound):>8}  ({r.claimed_epsilon:g})")
        print("every mutant caught" if ok else "SOME MUTANT WAS NOT CAUGHT (or a control was flagged)")
    return 0 if ok else 1
