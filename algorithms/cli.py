"""``privacct run`` and ``privacct reproduce``: subcommands contributed through the
``privacct.commands`` entry points (pyproject). Each ``register_*`` adds its subparser to the
argparse subparsers object and sets ``func(args) -> exit code``. Bad input raises
:class:`privacct.errors.PrivacctError`, which ``privacct.cli.main`` prints as one line and turns
into exit status 2 (argparse's own errors also exit 2).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from privacct.errors import PrivacctError, check_count, check_delta, check_positive

from .base import CALIBRATIONS, CONSTANT_SETS, PRIVACY_CHOICES, RunConfig
from .registry import FAMILY_MODULES, family_reproduce_module, learners


def _option(text: str) -> tuple[str, Any]:
    """--option KEY=VALUE; VALUE is parsed as JSON (numbers, true/false, null) else kept as a string."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--option must look like KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    if isinstance(parsed, float) and parsed != parsed:
        raise argparse.ArgumentTypeError("--option values must be finite")
    return key, parsed


def register_run(subparsers) -> argparse.ArgumentParser:
    table = learners()
    names = sorted(table)
    lines = "\n".join(f"  {n:<28} {table[n].description} [default constants: {table[n].default_constants}]"
                      for n in names)
    p = subparsers.add_parser(
        "run", help="run a learner over N seeds; write curves, mechanism log, privacy report, PNG",
        description="Run one learner configuration over N seeds in one batch.\n\nalgorithms:\n" + lines,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("algorithm", choices=names, metavar="ALGORITHM", help="one of: " + ", ".join(names))
    p.add_argument("--privacy", choices=PRIVACY_CHOICES, default="none", help="none | jdp | ldp (default none)")
    p.add_argument("--epsilon", type=float, default=1.0, help="claimed epsilon > 0 (default 1)")
    p.add_argument("--delta", type=float, default=None,
                   help="claimed privacy delta in [0, 1) (default: the delta of the learner's paper setting for "
                        "this privacy model, else 0)")
    p.add_argument("--calibration", choices=CALIBRATIONS, default="paper",
                   help="paper: printed noise constants; tight: corrected sensitivities + calibrator (default paper)")
    p.add_argument("--episodes", type=int, default=1000, help="K >= 1 episodes (default 1000)")
    p.add_argument("--seeds", type=int, default=1, help="N >= 1 seeds run as one batch (default 1)")
    p.add_argument("--seed", type=int, default=0, help="root seed >= 0; run i uses SeedSequence(seed).spawn(N)[i]")
    p.add_argument("--env", default=None, help="environment (default: the learner's, e.g. riverswim)")
    p.add_argument("--horizon", type=int, default=None, help="H >= 1 (default: the environment's)")
    p.add_argument("--constants", choices=CONSTANT_SETS, default=None,
                   help="non-privacy constant set: theory (the paper's) or tuned (the figures'); default: the set under "
                        "which the learner's non-private instance learns its default environment (listed above)")
    p.add_argument("--bonus-scale", type=float, default=None,
                   help="multiplier on the bonus width (tunable; default: the constant set's)")
    p.add_argument("--option", type=_option, action="append", default=[], metavar="KEY=VALUE",
                   help="learner option, repeatable, on top of the constant set's (tabular: e_scale, confidence_delta, "
                        "eta, pool_over_h; linear mixture: radius, shift_scale, alpha, ...; linear MDP: beta, p, batches)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--json", action="store_true", help="print one JSON summary object on stdout")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run)
    return p


def default_delta(algorithm: str, privacy: str) -> float:
    """The delta of the learner's first paper setting with this privacy model (0 if none)."""
    from .registry import learners

    from .settings import paper_delta

    spec = learners().get(algorithm)
    d = None if spec is None else paper_delta(spec, privacy)
    return 0.0 if d is None else d


def cmd_run(args) -> int:
    from .runner import run_experiment

    check_positive("--epsilon", args.epsilon)
    if args.delta is None:
        args.delta = default_delta(args.algorithm, args.privacy)
    check_delta("--delta", args.delta, allow_zero=True)
    check_count("--episodes", args.episodes)
    check_count("--seeds", args.seeds)
    check_count("--seed", args.seed, minimum=0)
    if args.horizon is not None:
        check_count("--horizon", args.horizon)
    if args.bonus_scale is not None and (not args.bonus_scale >= 0 or args.bonus_scale == float("inf")):
        raise PrivacctError(f"--bonus-scale must be a finite number >= 0, got {args.bonus_scale!r}")
    spec = learners()[args.algorithm]
    cset = spec.constant_set(args.constants)
    config = RunConfig(algorithm=args.algorithm, privacy=args.privacy, epsilon=args.epsilon, delta=args.delta,
                       calibration=args.calibration, episodes=args.episodes, env=args.env, horizon=args.horizon,
                       bonus_scale=1.0 if args.bonus_scale is None else args.bonus_scale, options=tuple(args.option))
    user_opts = tuple(k for k, _ in args.option)
    config = cset.apply(config, keep_bonus=args.bonus_scale is not None, keep_options=user_opts)
    overridden = (("bonus_scale",) if args.bonus_scale is not None else ()) + tuple(
        k for k in user_opts if k in dict(cset.options))
    summary = run_experiment(config, n_seeds=args.seeds, seed=args.seed, out_dir=args.out,
                             progress=False if args.no_progress else None, constants=cset, overridden=overridden)
    if args.json:
        print(json.dumps(summary, default=str))
    else:
        acc = summary["accounted_epsilon"]
        uni = summary["uniform_policy_regret"]
        over = "" if not overridden else f" (overridden: {', '.join(overridden)})"
        print(f"{args.algorithm} privacy={args.privacy} K={args.episodes} seeds={args.seeds} constants={cset.name}{over}: "
              f"final regret {summary['final_regret_mean']:.4g} +- {summary['final_regret_std']:.3g}"
              + ("" if uni is None else f" (uniform random policy: {uni:.4g}, ratio {summary['regret_over_uniform']:.3g})")
              + f", {summary['episodes_per_second']:,.0f} episodes/s"
              + ("" if acc is None else f", claimed eps {summary['claimed_epsilon']:g}, accounted eps {acc:.4g} "
                                        f"({summary['accountant']})")
              + f" -> {args.out}")
    return 0


def register_reproduce(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "reproduce", help="reproduce a paper's regret figure (reduced scale unless --full)",
        description="Reproduce a family's paper figure. Without --full: reduced K and seeds (labelled as such).")
    p.add_argument("family", choices=list(FAMILY_MODULES), help=", ".join(FAMILY_MODULES))
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--full", action="store_true", help="the paper's full scale (slow)")
    p.add_argument("--seeds", type=int, default=None, help="override the number of seeds (>= 1)")
    p.add_argument("--episodes", type=int, default=None, help="override K (>= 1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_reproduce)
    return p


def cmd_reproduce(args) -> int:
    if args.seeds is not None:
        check_count("--seeds", args.seeds)
    if args.episodes is not None:
        check_count("--episodes", args.episodes)
    module = family_reproduce_module(args.family)
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and module.startswith(e.name):
            raise PrivacctError(f"family {args.family!r} has no reproduce module yet ({module})") from None
        raise
    mod.reproduce(args.out, full=args.full, seeds=args.seeds, episodes=args.episodes,
                  progress=not args.no_progress and sys.stderr.isatty())
    return 0
