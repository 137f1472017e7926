"""``privacct audit`` and ``privacct mutants`` (registered through the ``privacct.commands`` entry points).

``privacct audit ALGORITHM --privacy jdp|ldp [--epsilon E] [--delta D] [--calibration paper|tight]
[--episodes K] [--horizon H] [--env ENV] [--option KEY=VALUE ...] [--trials N] [--observe released|actions]
[--fresh-users] [--json] [--seed S] [--confidence C] [--scheduler ADDRESS] [--quiet]``: audit a learner's claim
on canary A vs B; the claim's defaults are ``privacct run``'s (:mod:`privacct.algorithms.defaults`: epsilon 1,
the paper setting's delta, calibration paper); the configuration's (K, H, environment, bonus scale, options)
and the trials per side default to the learner's AUDIT SETTING
(:meth:`privacct.algorithms.contract.LearnerSpec.audit_configuration`), each flag given overriding its field
(``--option`` on top of the setting's options); every argument is checked and the memory estimated before
anything runs (:func:`privacct.audits.learner_audit.audit_learner`). ``released`` (the default) observes every release
that contains user 1 (white-box, with its exact likelihood ratio); other users are fixed (users
2..K report a fixed response function, so D and D' are two fixed neighbouring datasets) unless
``--fresh-users`` draws them from the environment in every trial. Exit codes
(:data:`EXIT_CODES`): 0 ``passes`` (eps lower bound <= claim and the audit had the power to see a
violation), 1 ``fails`` (eps lower bound > claim), 3 ``inconclusive`` (eps lower bound <= claim but
the audit could not have seen a violation; the output says how many trials it would need), 2 bad
input (``privacct.cli.main`` prints the PrivacctError as one line). Every audit's one-line summary ends with
``; counter audited: NAME`` for a learner with a continual counter (``"counter"`` in ``--json``, null without one):
the counter the audited run ran, the unaudited run's (:func:`counter_audited`; docs/auditing.md#factorized-counters).

``privacct mutants [--json] [--trials N] [--seed S] [--only NAME ...] [--controls]``: run every
planted bug (:mod:`privacct.audits.mutants`) through the accountant, ledger and audit checks (a planted policy
leak of a JDP learner also through the black-box action audit, the billboard check and the one-run action audit,
``one-run audit``); ``--json`` prints a list of objects with name, caught_by, the eps each check found, the audit's
verdict, and per check its verdict and the configuration it ran at (``verdicts``, ``configurations``; the table
prints them under each row). The
audit catches a mutant only when its verdict is ``fails``; it passes only with the power criterion the
privatizer declares from its exact privacy-loss distribution (a structural bug declares none: its audit
is ``fails`` or ``inconclusive``). Exit 0 when every
mutant is caught by at least one check (and, with ``--controls``, no correct control is), 1 otherwise.
``--learners`` adds the tabular learners run with the papers' printed constants
(:func:`privacct.audits.suite.paper_constants`), reported beside the mutants.
"""

from __future__ import annotations

import argparse
import os

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.cli import OPTION_HELP, _option, claim_delta
from privacct.cli import add_quiet, emit, emit_json, exit_help, integer_arg, number_arg
from privacct.errors import PrivacctError, check_count, check_positive

EXIT_CODES = {"passes": 0, "fails": 1, "inconclusive": 3}
BILLBOARD_TRIALS = 32   # coupled pairs of runs of ``privacct audit --billboard`` (P[a trial differs] <= 0.089 at 95%:
#                         power by the billboard check's rule, <= 0.1 from 29 trials; docs/auditing.md#the-billboard-check)
#: One-run audits: canary users when --canaries is not given (at most K - 1).
DEFAULT_CANARIES = 1000


def register_audit(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("audit", help="empirical eps lower bound of a learner (canary A vs B); "
                                            "exit 0 passes, 1 fails, 3 inconclusive, 2 bad input",
                              description="Audit a private learner: run it on D (user 1 = canary A) and D' (canary B) "
                                          "TRIALS times each, certify an eps lower bound (Clopper-Pearson) and give a "
                                          "verdict: passes, fails or inconclusive. K, H, the environment, the bonus scale, "
                                          "the options and TRIALS default to the learner's audit setting (the small "
                                          "configuration where its audit has the most power per second); each flag "
                                          "given overrides its field.",
                              epilog=exit_help("audit"))
    p.add_argument("algorithm", metavar="ALGORITHM", help="a learner name (see `privacct run --help`)")
    p.add_argument("--privacy", choices=["jdp", "ldp"], required=True, help="privacy model of the claim")
    p.add_argument("--epsilon", type=number_arg("--epsilon"), default=1.0, help="claimed epsilon > 0 (default 1, as `privacct run`)")
    p.add_argument("--delta", type=number_arg("--delta"), default=None,
                   help="claimed delta in [0, 1) (default: the delta of the learner's paper setting for this privacy "
                        "model, as `privacct run`)")
    p.add_argument("--calibration", choices=["paper", "tight"], default=None,
                   help="paper: printed noise constants; tight: corrected sensitivities + calibrator (default paper, "
                        "as `privacct run`)")
    p.add_argument("--episodes", type=integer_arg("--episodes"), default=None,
                   help="K >= 1 episodes (default: the learner's audit setting's K)")
    p.add_argument("--horizon", type=integer_arg("--horizon"), default=None,
                   help="H >= 1 (default: the learner's audit setting's, else the environment's)")
    p.add_argument("--env", default=None, help="environment (default: the learner's audit setting's, else the learner's)")
    p.add_argument("--option", type=_option, action="append", default=[], metavar="KEY=VALUE",
                   help="learner option, repeatable, on top of the audit setting's options; " + OPTION_HELP)
    p.add_argument("--trials", type=integer_arg("--trials"), default=None,
                   help="runs per side >= 10 (default: the learner's audit setting's, sized for a 2-minute audit)")
    p.add_argument("--observe", choices=["released", "actions"], default="released",
                   help="released (default): every noisy release that contains user 1, white-box, tested with its exact "
                        "likelihood ratio; actions: the actions sent to the other users (black-box: passes only with power simulated "
                        "against the same learner with its noise scaled until its log accounts 2 x the claim, 4 x the runs; "
                        "docs/auditing.md#power-of-the-action-audit)")
    p.add_argument("--fresh-users", action="store_true",
                   help="draw users 2..K from the environment in every trial (default: a fixed response function, so "
                        "D and D' are two fixed neighbouring datasets; far more power)")
    p.add_argument("--one-run", action="store_true",
                   help="a ONE-RUN audit (docs/auditing.md#one-run-audits): one learner run at the configuration asked "
                        "for (default: the learner's paper setting's K, H, environment and constants) with --canaries "
                        "canary users, each A or B by a fair coin; the eps lower bound of Steinke, Nasr and Jagielski "
                        "2023 from the correct guesses (the f-DP bound beside it)")
    p.add_argument("--billboard", action="store_true",
                   help="the BILLBOARD CHECK of a JDP learner (docs/auditing.md#the-billboard-check): TRIALS coupled pairs "
                        "of runs on the same seeds, every release of canary B's run made equal to canary A's; passes when "
                        "the actions prescribed to users 2..K never differ and TRIALS give the power to see a leak changing "
                        "an action in 1 run in 10 (at least 29 at 95%%; fewer: inconclusive, exit 3); a policy that reads "
                        "user 1 outside its releases fails. Default 32 trials")
    p.add_argument("--window", type=integer_arg("--window"), default=None,
                   help="a one-run action audit (--one-run --observe actions) compares at most this many users after each "
                        "canary, an integer >= 1 (default: every user up to the next canary; never further, which the "
                        "bound's soundness needs, docs/auditing.md#soundness-of-the-action-audit)")
    p.add_argument("--canaries", type=integer_arg("--canaries"), default=None,
                   help=f"canary users of a one-run audit, an integer in [1, K - 1] (default {DEFAULT_CANARIES}, at most K - 1)")
    p.add_argument("--confidence", type=number_arg("--confidence"), default=0.95, help="in (0, 1) (default 0.95)")
    p.add_argument("--seed", type=integer_arg("--seed"), default=0, help="root seed >= 0 (default 0)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (default: local processes; the same result "
                        "either way; needs pip install 'privacct[dask]')")
    p.add_argument("--json", action="store_true", help="print one strict JSON object (the result and its settings) "
                                                       "instead of the text summary")
    add_quiet(p)
    p.set_defaults(func=cmd_audit)
    return p


def audit_arguments(args):
    """Validate every argument of ``privacct audit`` (one PrivacctError line naming it) and return the
    learner's configuration, with the claim defaults ``privacct run`` uses (:mod:`privacct.algorithms.defaults`)
    and the configuration defaults of the learner's audit setting (``spec.audit_configuration()``). The
    arguments left out (``--episodes``, ``--horizon``, ``--env``, ``--trials``) are set on ``args`` from the
    setting, so the rest of the command reads one resolved value."""
    from privacct.algorithms.defaults import DEFAULT_CALIBRATION, private_models
    from privacct.algorithms.registry import get_learner, learners

    from .learner_audit import check_audit_config

    spec = get_learner(args.algorithm)
    if not private_models(args.algorithm):
        private = sorted(n for n, s in learners().items() if any(p != "none" for p in s.privacy_models))
        raise PrivacctError(f"ALGORITHM {args.algorithm} is not private (privacy none only): nothing to audit; "
                            f"private learners: {', '.join(private)}")
    if args.privacy not in spec.privacy_models:
        raise PrivacctError(f"--privacy must be one of {', '.join(private_models(args.algorithm))} for "
                            f"{args.algorithm}, got {args.privacy!r}")
    check_positive("--epsilon", args.epsilon)
    if getattr(args, "one_run", False):
        if getattr(args, "billboard", False):
            raise PrivacctError("--billboard does not apply to a one-run audit (--one-run): give one of them")
        return _one_run_arguments(args, spec)
    if getattr(args, "billboard", False):
        if args.privacy != "jdp":
            raise PrivacctError(f"--billboard needs --privacy jdp (under LDP the releases are the output), got {args.privacy}")
        for flag, value in (("--observe actions", args.observe == "actions" or None), ("--scheduler", args.scheduler),
                            ("--fresh-users", args.fresh_users or None)):
            if value is not None:
                raise PrivacctError(f"{flag} does not apply to a billboard check (--billboard): it compares the actions "
                                    "of coupled runs, users 2..K drawn from the environment on each trial's seed")
        if args.trials is None:
            args.trials = BILLBOARD_TRIALS
        check_count("--trials", args.trials)
    if getattr(args, "canaries", None) is not None:
        raise PrivacctError("--canaries applies to a one-run audit (--one-run)")
    if getattr(args, "window", None) is not None:
        raise PrivacctError("--window applies only to a one-run action audit (--one-run --observe actions)")
    setting = spec.audit_configuration()
    if args.episodes is not None:
        check_count("--episodes", args.episodes)
    if args.horizon is not None:
        check_count("--horizon", args.horizon)
    if args.trials is not None:
        check_count("--trials", args.trials, minimum=10)
    if args.episodes is None:
        args.episodes = setting.episodes
    if args.horizon is None:
        args.horizon = setting.horizon
    if args.env is None:
        args.env = setting.env
    if args.trials is None:
        args.trials = setting.trials
    options = dict(setting.options)
    options.update(getattr(args, "option", None) or ())
    check_count("--seed", args.seed, minimum=0)
    if not 0.0 < args.confidence < 1.0:
        raise PrivacctError(f"--confidence must be in (0, 1), got {args.confidence!r}")
    if args.fresh_users and args.episodes < 2:
        raise PrivacctError("--fresh-users needs --episodes >= 2 (with K = 1 there are no users 2..K to draw)")
    if args.scheduler is not None:
        from privacct.algorithms.scaleout import check_scheduler

        check_scheduler(args.scheduler)
    if getattr(args, "billboard", False) and args.episodes < 2:
        raise PrivacctError("--billboard needs --episodes >= 2 (the actions sent to users 2..K)")
    if args.observe == "actions" and args.episodes < 2:
        raise PrivacctError("--observe actions needs --episodes >= 2 (the actions sent to users 2..K)")
    fields = dict(algorithm=args.algorithm, privacy=args.privacy, epsilon=args.epsilon,
                  calibration=args.calibration or DEFAULT_CALIBRATION, episodes=args.episodes, horizon=args.horizon,
                  env=args.env, options=tuple(options.items()), bonus_scale=setting.bonus_scale)
    delta = claim_delta(args.algorithm, args.privacy, args.delta, probe=lambda: RunConfig(**fields, delta=0.0))
    return check_audit_config(RunConfig(**fields, delta=delta))


def _one_run_arguments(args, spec):
    """The configuration of ``privacct audit --one-run`` (the learner's paper setting for the privacy model unless
    flags say otherwise); the flags of the many-trial audit that do not apply are refused."""
    from privacct.algorithms.defaults import DEFAULT_CALIBRATION

    from .learner_audit import check_audit_config

    for flag, value in (("--trials", args.trials), ("--fresh-users", args.fresh_users or None),
                        ("--scheduler", args.scheduler)):
        if value is not None:
            raise PrivacctError(f"{flag} does not apply to a one-run audit (--one-run): one run, canaries chosen by the "
                                "auditor")
    if args.observe == "actions" and args.privacy != "jdp":
        raise PrivacctError(f"--observe actions with --one-run needs --privacy jdp (the actions prescribed to the other "
                            f"users are what JDP protects; under LDP the reports are the output), got {args.privacy!r}")
    if args.window is not None:
        if args.observe != "actions":
            raise PrivacctError("--window applies only to a one-run action audit (--one-run --observe actions)")
        check_count("--window", args.window)
    from privacct.algorithms.settings import paper_setting

    setting = paper_setting(spec, args.privacy)
    for flag, value in (("--episodes", args.episodes), ("--horizon", args.horizon)):
        if value is not None:
            check_count(flag, value)
    episodes = args.episodes or (setting.episodes if setting is not None else dict(spec.test_settings).get("episodes"))
    if episodes is None:
        raise PrivacctError(f"--episodes is required for a one-run audit of {args.algorithm} (it declares no paper setting)")
    args.episodes = int(episodes)
    args.horizon = args.horizon if args.horizon is not None or setting is None else setting.horizon
    args.env = args.env if args.env is not None or setting is None else setting.env
    options = dict(setting.options) if setting is not None else {}
    options.update(getattr(args, "option", None) or ())
    bonus = setting.bonus_scale if setting is not None else 1.0
    room = max(1, args.episodes - 1)
    args.canaries = min(DEFAULT_CANARIES, room) if args.canaries is None else args.canaries
    check_count("--canaries", args.canaries)
    if args.canaries > room:
        raise PrivacctError(f"--canaries must be an integer in [1, {room}] (K - 1 for K = {args.episodes}), "
                            f"got {args.canaries}")
    check_count("--seed", args.seed, minimum=0)
    if not 0.0 < args.confidence < 1.0:
        raise PrivacctError(f"--confidence must be in (0, 1), got {args.confidence!r}")
    fields = dict(algorithm=args.algorithm, privacy=args.privacy, epsilon=args.epsilon,
                  calibration=args.calibration or DEFAULT_CALIBRATION, episodes=args.episodes, horizon=args.horizon,
                  env=args.env, options=tuple(options.items()), bonus_scale=bonus)
    delta = claim_delta(args.algorithm, args.privacy, args.delta, probe=lambda: RunConfig(**fields, delta=0.0))
    return check_audit_config(RunConfig(**fields, delta=delta))


def _cmd_one_run_actions(args, cfg) -> int:
    """``privacct audit ALG --one-run --observe actions``: the one-run action audit (docs/auditing.md#one-run-action-audits).
    Inconclusive (exit 3) is its best outcome: it has no power criterion, so it fails or says nothing."""
    from privacct.algorithms.memory import run_estimate
    from privacct.algorithms.registry import get_learner
    from privacct.progress import Progress
    from privacct.resources import check_memory

    from .one_run_actions import one_run_action_audit

    spec = get_learner(cfg.algorithm)
    est = run_estimate(spec, cfg, 1, audit=True, runner=False)
    check_memory(2 * est.total, args=f"--episodes {cfg.episodes}", what=f"the run and one replay of {est.main_terms()}",
                 lower="--episodes")
    with Progress(args.canaries, f"one-run action audit {args.algorithm}", unit="replays", quiet=args.quiet) as bar:
        r = one_run_action_audit(cfg, canaries=args.canaries, confidence=args.confidence, seed=args.seed,
                                 window=args.window, progress=bar.update)
    counter = counter_audited(cfg)
    if args.json:
        emit_json({**r.to_dict(), "counter": counter})
    else:
        emit(_naming_the_counter(r.summary(), counter))
    return EXIT_CODES[r.verdict] if r.sandwich_ok else EXIT_CODES["fails"]


def _cmd_one_run(args, cfg) -> int:
    from privacct.algorithms.memory import one_run_width, run_estimate
    from privacct.algorithms.registry import get_learner
    from privacct.progress import heartbeat
    from privacct.resources import check_memory

    from .one_run_learner import one_run_audit_learner

    if args.observe == "actions":
        return _cmd_one_run_actions(args, cfg)
    spec = get_learner(cfg.algorithm)
    est = run_estimate(spec, cfg, 1, audit=True, runner=False)
    # every canary's releases are kept with both bits' contributions: 3 floats per observed value
    records = 3 * 8 * args.canaries * one_run_width(spec, cfg)
    check_memory(est.total + records, args=f"--canaries {args.canaries} x --episodes {cfg.episodes}",
                 what=f"{est.main_terms()}, the canaries' releases", lower="--canaries or --episodes")
    with heartbeat(f"one-run audit {args.algorithm}/{args.privacy}", quiet=args.quiet):
        r = one_run_audit_learner(cfg, canaries=args.canaries, confidence=args.confidence, seed=args.seed)
    counter = counter_audited(cfg)
    if args.json:
        emit_json({**r.to_dict(), "counter": counter})
    else:
        emit(_naming_the_counter(r.summary(), counter))
    return EXIT_CODES[r.verdict] if r.sandwich_ok else EXIT_CODES["fails"]


def _cmd_billboard(args, cfg) -> int:
    from privacct.algorithms.memory import run_estimate
    from privacct.algorithms.registry import get_learner
    from privacct.progress import Progress
    from privacct.resources import check_memory

    from .billboard import BATCH, billboard_check

    spec = get_learner(cfg.algorithm)
    est = run_estimate(spec, cfg, min(BATCH, args.trials), audit=True, runner=False)
    check_memory(2 * est.total, args=f"--episodes {cfg.episodes}", what=f"two coupled runs of {est.main_terms()}",
                 lower="--episodes")
    with Progress(args.trials, f"billboard check {args.algorithm}", unit="trials", quiet=args.quiet) as bar:
        r = billboard_check(cfg, trials=args.trials, confidence=args.confidence, seed=args.seed, progress=bar.update)
    counter = counter_audited(cfg)
    if args.json:
        emit_json({**r.to_dict(), "counter": counter})
    else:
        emit(_naming_the_counter(r.summary(), counter))
    return EXIT_CODES[r.verdict]


def counter_audited(cfg: RunConfig) -> str | None:
    """The continual counter an audit of ``cfg`` runs and observes: the one the unaudited run of the same configuration
    runs (docs/auditing.md#factorized-counters), named by the report's rule (:func:`privacct.audits.report.rows.counter_of`
    on the learner's declared log): ``tree``, a factorized strategy's name (``tree-honaker``, ``blt``, ...), or None for
    a learner without one (e.g. under LDP)."""
    from privacct.algorithms.registry import get_learner

    from .report.rows import counter_of

    return counter_of(get_learner(cfg.algorithm).declared_log(cfg))


def _naming_the_counter(summary: str, counter: str | None) -> str:
    """The one-line summary of an audit, with ``; counter audited: NAME`` for a learner with a counter."""
    return summary if counter is None else f"{summary}; counter audited: {counter}"


def check_audit_memory(cfg, args) -> None:
    """Refuse an audit whose samples and learner batches would not fit, before anything is allocated."""
    from privacct.algorithms.memory import audit_estimate
    from privacct.algorithms.registry import get_learner
    from privacct.resources import check_memory

    spec = get_learner(cfg.algorithm)
    workers = 1 if args.scheduler is not None else (os.cpu_count() or 1)
    named = f"--trials {args.trials} x --episodes {args.episodes}" + (
        "" if args.horizon is None else f" x --horizon {args.horizon}")
    lower = "--trials or --episodes" + ("" if args.horizon is None else " or --horizon")
    est = audit_estimate(spec, cfg, args.trials, args.observe, workers)   # the learner's upper bound on the width
    try:
        check_memory(est.total, args=named, what=est.main_terms(), lower=lower)
        return
    except PrivacctError:
        if args.observe != "released":
            raise
    # The upper bound does not fit: measure the audit's own flat sample on its 64-trial pilot (it keeps only the
    # coordinates the canaries move, docs/auditing.md#learner-audits), if the pilot itself fits, and decide on that.
    from privacct.algorithms.memory import run_estimate

    from .learner_audit import PILOT, LearnerMechanism

    check_memory(run_estimate(spec, cfg, PILOT, audit=True, runner=False).total, args=named,
                 what="the audit's pilot run", lower=lower)
    width = LearnerMechanism(cfg, "released", not args.fresh_users).layout().width
    est = audit_estimate(spec, cfg, args.trials, args.observe, workers, width=width)
    check_memory(est.total, args=named, what=est.main_terms(), lower=lower)


def cmd_audit(args) -> int:
    from privacct.progress import heartbeat

    from .learner_audit import audit_learner

    cfg = audit_arguments(args)
    if args.one_run:
        return _cmd_one_run(args, cfg)
    if args.billboard:
        return _cmd_billboard(args, cfg)
    check_audit_memory(cfg, args)
    with heartbeat(f"audit {args.algorithm}/{args.privacy}", quiet=args.quiet):
        r = audit_learner(cfg, observe=args.observe, fixed_users=not args.fresh_users, trials=args.trials,
                          confidence=args.confidence, seed=args.seed, scheduler=args.scheduler, on_violation="report")
    counter = counter_audited(cfg)   # the report names it too (audits/report/build.py counter_audited)
    if args.json:
        # the result, then the record audited (its claim's epsilon is the result's claimed_epsilon; options as pairs)
        record = {k: v for k, v in cfg.to_dict().items() if k != "epsilon"}
        emit_json({**r.to_dict(), **record, "options": [list(o) for o in cfg.options], "observe": args.observe,
                   "fixed_users": not args.fresh_users, "counter": counter})
    else:
        emit(_naming_the_counter(r.summary(), counter))
    # eps_lb above the accounted eps of the same configuration: the code leaks more than its own log declares
    # (a finding about the learner, said in the summary), whatever the claim: exit 1 as for a failing claim.
    return EXIT_CODES[r.verdict] if getattr(r, "sandwich_ok", True) else EXIT_CODES["fails"]


def register_mutants(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("mutants", help="run every planted bug through the accountant, ledger and audit checks",
                              description="Planted bugs (privacct.audits.mutants): which check catches each one, and "
                                          "at which configuration (printed under each row). The audit catches a mutant "
                                          "only when its verdict is 'fails' (an inconclusive audit catches nothing). A "
                                          "planted policy leak of a JDP learner also meets the black-box action audit, "
                                          "the billboard check and the one-run action audit ('one-run audit'), each at "
                                          "its own configuration.")
    p.add_argument("--json", action="store_true",
                   help="print one strict JSON list of {name, caught_by, epsilons, ...} instead of the table")
    p.add_argument("--trials", type=integer_arg("--trials"), default=None,
                   help="audit trials per side (default: each mutant's own, 1e5 for most; the billboard check and the "
                        "one-run audit keep their own sizes)")
    p.add_argument("--seed", type=integer_arg("--seed"), default=0, help="root seed >= 0 (default 0)")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME", help="run only these mutants")
    p.add_argument("--controls", action="store_true", help="also run the correct controls (must not be caught)")
    p.add_argument("--learners", action="store_true",
                   help="also check the tabular learners with the papers' printed constants (calibration paper; "
                        "reported, not counted in the exit status)")
    add_quiet(p)
    p.set_defaults(func=cmd_mutants)
    return p


def configuration_lines(r) -> list[str]:
    """The lines under a mutant's row of ``privacct mutants``: each check that ran, its verdict and the configuration
    it ran at (:attr:`privacct.audits.checks.MutantReport.configurations`); one line when every check ran at one."""
    from .checks import CAUGHT_AS, CHECKS

    confs = r.configurations
    if not confs:
        return []
    if set(confs) <= set(CHECKS):   # the accountant, the ledger (one seed of it) and the audit at one configuration
        return ["at: " + confs.get("audit", next(iter(confs.values())))]
    return [f"{CAUGHT_AS.get(check, check)} ({r.verdicts.get(check, '-')}): {conf}" for check, conf in confs.items()]


def cmd_mutants(args) -> int:
    from privacct.algorithms.memory import samples_lower_bound
    from privacct.progress import heartbeat
    from privacct.resources import check_memory

    from .mutants import CONTROLS, MUTANTS, check_all

    if args.trials is not None:
        check_count("--trials", args.trials, minimum=10)
        check_memory(samples_lower_bound(args.trials), args=f"--trials {args.trials}",
                     what="at least one sample per trial and side", lower="--trials")
    check_count("--seed", args.seed, minimum=0)
    for name in args.only or ():
        if name not in MUTANTS:
            raise PrivacctError(f"--only must name mutants among {', '.join(MUTANTS)}, got {name!r}")
    with heartbeat("mutants", quiet=args.quiet):
        reports = check_all(args.only, trials=args.trials, seed=args.seed)
        controls = check_all(None, controls=True, trials=args.trials, seed=args.seed) if args.controls else []
        printed = []
        if args.learners:
            from .suite import check_learner, paper_constants
            printed = [check_learner(a, trials=args.trials or 1000, seed=args.seed) for a in paper_constants()]
    ok = all(r.caught_by for r in reports) and not any(r.caught_by for r in controls)
    if args.json:
        out = [r.to_dict() for r in reports] + [dict(r.to_dict(), control=True) for r in controls] + \
              [dict(r.to_dict(), learner=True) for r in printed]
        for d in out:
            d.pop("audit", None)
        emit_json(out)
    else:
        emit(f"{'mutant':<42} {'caught_by':<44} {'accountant':>10} {'ledger':>8} {'audit':>8} {'verdict':<12}  "
             "(claimed eps)")
        for r in reports + controls + printed:
            tag = " (control)" if r.name in CONTROLS else ""
            ran = r.verdicts or {}

            def fmt(v, check, ran=ran):   # "-": the check did not run on this mutant; "refused": it ran and refused
                return f"{v:.3f}" if v is not None else ("refused" if check in ran else "-")
            verdict = (r.audit or {}).get("verdict") or "-"
            emit(f"{r.name + tag:<42} {','.join(r.caught_by) or '-':<44} {fmt(r.accountant_epsilon, 'accountant'):>10} "
                  f"{fmt(r.ledger_epsilon, 'ledger'):>8} {fmt(r.audit_epsilon_lower_bound, 'audit'):>8} {verdict:<12}  "
                  f"({r.claimed_epsilon:g})")
            for line in configuration_lines(r):
                emit("    " + line)
        emit("every mutant caught" if ok else "SOME MUTANT WAS NOT CAUGHT (or a control was flagged)")
    return 0 if ok else 1
