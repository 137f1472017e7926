"""``privacct run`` and ``privacct reproduce``: subcommands contributed through the
``privacct.commands`` entry points (pyproject). Each ``register_*`` adds its subparser to the
argparse subparsers object and sets ``func(args) -> exit code``. Bad input raises
:class:`privacct.errors.PrivacctError`, which ``privacct.cli.main`` prints as one line and turns
into exit status 2 (argparse's own errors also exit 2).

Order of work: every argument is validated, then ``--out`` (:func:`privacct.outputs.check_out`), then
the memory the run needs (:mod:`privacct.algorithms.memory`), and only then is anything created; the
files appear as one complete set (:class:`privacct.outputs.OutputSet`) and the command ends with a
``wrote DIR (files: ...)`` line. Defaults shared with ``privacct audit``: :mod:`privacct.algorithms.defaults`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from typing import Any, Callable

from privacct.log import FACTORIZED_STRATEGIES
from privacct.cli import add_quiet, emit, emit_json, exit_help, integer_arg, number_arg, write
from privacct.errors import PrivacctError, check_count, check_delta, check_positive, shown
from privacct.outputs import Outputs

from .contract import CALIBRATIONS, CONSTANT_SETS, PRIVACY_CHOICES, RunConfig
from .defaults import DEFAULT_CALIBRATION, DEFAULT_EPSILON, check_privacy, default_delta, refuse_inapplicable
from .registry import family_reproduce_function, get_learner, learners, reproducible_families


#: The end of ``--option``'s help (``privacct run`` and ``privacct audit``): each learner validates its own keys.
OPTION_HELP = ("VALUE is read as JSON (numbers, true/false, null), else as a string; an unknown KEY is refused with the "
               "learner's allowed keys (each learner's own: see its family's documentation)")


#: Largest ``--bonus-scale``: the shipped constant sets use 0.005 to 5; far beyond 1e6 the bonus of every
#: learner dwarfs any cost (costs lie in [0, 1] per step) and the products overflow (1e308: RuntimeWarning).
MAX_BONUS_SCALE = 1e6


def _option(text: str) -> tuple[str, Any]:
    """--option KEY=VALUE; VALUE is parsed as JSON (numbers, true/false, null) else kept as a string."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--option must look like KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    except ValueError:   # an integer beyond Python's 4300-digit conversion limit
        raise argparse.ArgumentTypeError(f"--option {shown(key)}: the value is out of range "
                                         f"({len(value.strip())} characters)") from None
    if isinstance(parsed, float) and not math.isfinite(parsed):
        raise argparse.ArgumentTypeError(f"--option {shown(key)}: values must be finite numbers "
                                         f"(1e999, NaN and Infinity are refused), got {shown(value)}")
    return key, parsed


def register_run(subparsers) -> argparse.ArgumentParser:
    table = learners()
    names = sorted(table)
    lines = "\n".join(f"  {n:<28} {table[n].description} [default constants: {table[n].default_constants}]"
                      for n in names)
    p = subparsers.add_parser(
        "run", help="run a learner over N seeds; write curves, mechanism log, privacy report, PNG",
        description="Run one learner configuration over N seeds in one batch. A private run prints the claim's "
                    "verdict (a line 'claim eps=E delta=D: holds (...)' or ': FAILS (accounted ... > E, ...; cause)'; "
                    "--json: the fields verdict and verdict_cause), the same verdict as privacy_report.json. A run "
                    "estimated to take more than a minute says its estimated time on stderr after a few seconds "
                    "(--quiet hides it).\n\nalgorithms:\n" + lines,
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=exit_help("run"))
    p.add_argument("algorithm", choices=names, metavar="ALGORITHM", help="one of: " + ", ".join(names))
    p.add_argument("--privacy", choices=PRIVACY_CHOICES, default="none", help="none | jdp | ldp (default none)")
    p.add_argument("--epsilon", type=number_arg("--epsilon"), default=None,
                   help=f"claimed epsilon, a finite number > 0 (private runs only; default {DEFAULT_EPSILON:g})")
    p.add_argument("--delta", type=number_arg("--delta"), default=None,
                   help="claimed delta in [0, 1) (private runs only; default: the delta of the learner's paper setting "
                        "for this privacy model, the same default as `privacct audit`)")
    p.add_argument("--calibration", choices=CALIBRATIONS, default=None,
                   help="paper: printed noise constants; tight: corrected sensitivities + calibrator (private runs only; "
                        f"default {DEFAULT_CALIBRATION}, as `privacct audit`)")
    p.add_argument("--episodes", type=integer_arg("--episodes"), default=1000, help="K >= 1 episodes (default 1000)")
    p.add_argument("--seeds", type=integer_arg("--seeds"), default=1, help="N >= 1 seeds run as one batch (default 1)")
    p.add_argument("--seed", type=integer_arg("--seed"), default=0,
                   help="root seed >= 0; run i uses SeedSequence(seed).spawn(N)[i] (default 0)")
    p.add_argument("--env", default=None, help="environment (default: the learner's default environment)")
    p.add_argument("--horizon", type=integer_arg("--horizon"), default=None, help="H >= 1 (default: the environment's)")
    p.add_argument("--constants", choices=CONSTANT_SETS, default=None,
                   help="non-privacy constant set: theory (the paper's) or tuned (the figures'); default: the set under "
                        "which the learner's non-private instance learns its default environment (listed above)")
    p.add_argument("--bonus-scale", type=number_arg("--bonus-scale"), default=None,
                   help=f"multiplier on the bonus width, a number in [0, {MAX_BONUS_SCALE:g}] (tunable; default: the "
                        "constant set's)")
    p.add_argument("--option", type=_option, action="append", default=[], metavar="KEY=VALUE",
                   help="learner option, repeatable, on top of the constant set's; " + OPTION_HELP)
    p.add_argument("--counter", choices=list(FACTORIZED_STRATEGIES), default=None,
                   help="continual counter of a JDP learner's running sums (docs/counters.md; the same as --option "
                        "counter=STRATEGY); default: the tree for paper; for tight each family's choice (docs/counters.md): the "
                        "least worst-prefix error at the claim for ucb-vi, ucb-po and private-lsvi-ucb, the tree for the "
                        "linear-mixture learners")
    p.add_argument("--out", required=True,
                   help="output directory: new, empty, or one `privacct run` wrote before (its files are replaced as a "
                        "complete set)")
    p.add_argument("--json", action="store_true", help="print one strict JSON summary object on stdout instead of text")
    add_quiet(p)
    p.set_defaults(func=cmd_run)
    return p


def run_config(args) -> RunConfig:
    """The RunConfig of ``privacct run``'s arguments, made (and so validated) once, every default resolved first (one
    PrivacctError line naming the flag for any bad one)."""
    check_privacy(args.algorithm, args.privacy)
    refuse_inapplicable(args.privacy, {"--epsilon": args.epsilon, "--delta": args.delta,
                                       "--calibration": args.calibration, "--counter": args.counter})
    epsilon = DEFAULT_EPSILON if args.epsilon is None else check_positive("--epsilon", args.epsilon)
    check_count("--episodes", args.episodes)
    check_count("--seeds", args.seeds)
    check_count("--seed", args.seed, minimum=0)
    if args.horizon is not None:
        check_count("--horizon", args.horizon)
    if args.bonus_scale is not None and not 0 <= args.bonus_scale <= MAX_BONUS_SCALE:
        raise PrivacctError(f"--bonus-scale must be a number in [0, {MAX_BONUS_SCALE:g}], got {shown(args.bonus_scale)}")
    if args.counter is not None:
        if any(k == "counter" for k, _ in args.option):
            raise PrivacctError("--counter and --option counter=... cannot both be given")
        args.option = list(args.option) + [("counter", args.counter)]
    cset = learners()[args.algorithm].constant_set(args.constants)
    fields = dict(algorithm=args.algorithm, privacy=args.privacy, epsilon=epsilon,
                  calibration=args.calibration or DEFAULT_CALIBRATION, episodes=args.episodes, env=args.env,
                  horizon=args.horizon, **cset.config_fields(bonus_scale=args.bonus_scale, options=args.option))
    delta = claim_delta(args.algorithm, args.privacy, args.delta, probe=lambda: RunConfig(**fields, delta=0.0))
    return RunConfig(**fields, delta=delta)


def claim_delta(algorithm: str, privacy: str, given: float | None, *, probe: Callable[[], RunConfig]) -> float:
    """The claim's delta of ``privacct run`` / ``privacct audit`` (the same default, :mod:`privacct.algorithms.defaults`):
    ``--delta`` checked, else the learner's paper setting's for ``privacy``, else (a learner without one) the default its
    log gives at the configuration ``probe()`` makes (the command's, at delta 0; made only then)."""
    if given is not None:
        return check_delta("--delta", given, allow_zero=True)
    if privacy == "none":
        return 0.0
    from .settings import paper_delta

    delta = paper_delta(get_learner(algorithm), privacy)
    if delta is not None:
        return float(delta)
    return float(default_delta(algorithm, privacy, probe()))


def _overridden(args) -> tuple[str, ...]:
    """The constant-set entries the command line overrides (said in the summary)."""
    cset = learners()[args.algorithm].constant_set(args.constants)
    user_opts = tuple(k for k, _ in args.option)
    return (("bonus_scale",) if args.bonus_scale is not None else ()) + tuple(k for k in user_opts if k in dict(cset.options))


def cmd_run(args) -> int:
    from privacct.outputs import check_out, wrote_line

    from .runner import RUN_OUTPUTS, check_run_memory, run_experiment, verdict_line

    config = run_config(args)
    check_out(args.out, RUN_OUTPUTS)
    check_run_memory(config, args.seeds)
    try:
        get_learner(args.algorithm).declared_log(config)  # the family validates env, options and the claim (built once)
    except PrivacctError as e:
        if config.privacy != "none" and "noise_scale" in str(e) and "inf" in str(e):
            # a claim so small that the noise it calls for overflows (--epsilon 5e-324): say which flag
            raise PrivacctError(f"--epsilon {config.epsilon:g} is too small for {args.algorithm}: the noise scale it "
                                f"calls for is beyond the floating-point range ({e})") from None
        raise
    cset = learners()[args.algorithm].constant_set(args.constants)
    overridden = _overridden(args)
    summary = run_experiment(config, n_seeds=args.seeds, seed=args.seed, out_dir=args.out,
                             progress=False if args.quiet else None, constants=cset, overridden=overridden)
    if args.json:
        emit_json({k: v for k, v in summary.items() if k != "written"})
        write(sys.stderr, wrote_line(summary["out"], summary["written"]) + "\n")   # stdout holds only the JSON
    else:
        acc = summary["accounted_epsilon"]
        uni = summary["uniform_policy_regret"]
        over = "" if not overridden else f" (overridden: {', '.join(overridden)})"
        verdict = verdict_line(summary)
        emit(f"{args.algorithm} privacy={args.privacy} K={args.episodes} seeds={args.seeds} constants={cset.name}{over}: "
             f"final regret {summary['final_regret_mean']:.4g} +- {summary['final_regret_std']:.3g}"
             + ("" if uni is None else f" (uniform random policy: {uni:.4g}, ratio {summary['regret_over_uniform']:.3g})")
             + f", {summary['episodes_per_second']:,.0f} episodes/s"
             + ("" if acc is None else f", claimed eps {summary['claimed_epsilon']:g}, accounted eps {acc:.4g} "
                                       f"({summary['accountant']})"))
        if verdict is not None:
            emit(verdict)
        emit(wrote_line(summary["out"], summary["written"]))
    return 0   # a completed run, whatever the verdict (privacct.cli.EXIT_STATUS["run"])


#: What ``privacct reproduce`` writes: only files its own manifest lists count as its own (the families
#: write different sets), so an existing --out must be empty or a previous reproduction.
REPRODUCE_OUTPUTS = Outputs("privacct reproduce", ())


def register_reproduce(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "reproduce", help="reproduce a paper's regret figure (reduced scale unless --full)",
        description="Reproduce a family's paper figure. Without --full: reduced K and seeds (labelled as such). "
                    "The files appear in --out as one complete set (manifest.json last) or not at all.")
    fams = sorted(reproducible_families())
    p.add_argument("family", choices=fams, help="a family whose learners declare a figure: " + ", ".join(fams))
    p.add_argument("--out", required=True,
                   help="output directory: new, empty, or one `privacct reproduce` wrote before")
    p.add_argument("--full", action="store_true", help="the paper's full scale (slow)")
    p.add_argument("--seeds", type=integer_arg("--seeds"), default=None, help="override the number of seeds (>= 1)")
    p.add_argument("--episodes", type=integer_arg("--episodes"), default=None, help="override K (>= 1)")
    p.add_argument("--track", action="append", default=None, metavar="NAME",
                   help="draw only this figure track, for a reproduction that draws several (tabular: paper, tight, "
                        "tuned-noise); repeat for several, each at most once; without --track every track is drawn")
    p.add_argument("--workers", type=integer_arg("--workers"), default=None, metavar="N",
                   help="processes for the independent runs, for a reproduction that runs them in parallel (tabular), "
                        "an integer in [1, 64]; without --workers the machine's CPUs, at most 8 (each run is whole in "
                        "one process: the same files whatever N)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask scheduler address (e.g. tcp://10.0.0.5:8786): run each setting's seed chunks on that "
                        "cluster, with the same bytes as locally (needs pip install 'privacct[dask]')")
    add_quiet(p)
    p.set_defaults(func=cmd_reproduce)
    return p


def check_reproduce_memory(family: str, seeds: int | None, episodes: int | None) -> None:
    """Refuse overrides whose largest run would not fit (the shipped scales do)."""
    if seeds is None and episodes is None:
        return
    from privacct.resources import check_memory

    from .memory import run_estimate

    K = episodes if episodes is not None else 10_000
    N = seeds if seeds is not None else 10
    worst = 0
    for spec in learners().values():
        if spec.family == family:
            for privacy in spec.privacy_models:
                cfg = RunConfig(spec.name, privacy=privacy, episodes=K)
                worst = max(worst, run_estimate(spec, cfg, N).total)
    named = " x ".join(f"{flag} {v}" for flag, v in (("--episodes", episodes), ("--seeds", seeds)) if v is not None)
    check_memory(worst, args=named, what="the largest run of the reproduction", lower=" or ".join(flag for flag, v in (("--episodes", episodes), ("--seeds", seeds)) if v is not None))


def reproduce_options(reproduce: Callable, args) -> dict[str, Any]:
    """``--track`` / ``--workers`` as the keywords ``tracks`` / ``workers`` of a family reproduction whose function takes
    them (the tabular one), checked before anything is written: a track among the function's default ``tracks``, each
    at most once; workers in [1, ``reproduce.max_workers``], not with ``--scheduler`` (the cluster runs the seeds).
    Either flag given to a reproduction that does not take it is refused (one line)."""
    import inspect

    params = inspect.signature(reproduce).parameters
    kw: dict[str, Any] = {}
    track = getattr(args, "track", None)
    if track is not None:
        if "tracks" not in params:
            raise PrivacctError(f"--track applies to a reproduction that draws several figure tracks (tabular), "
                                f"not to {args.family}")
        names = tuple(params["tracks"].default)
        if any(t not in names for t in track) or len(set(track)) != len(track):
            raise PrivacctError(f"--track must be one of {', '.join(names)}, each at most once, got {', '.join(track)}")
        kw["tracks"] = tuple(track)
    workers = getattr(args, "workers", None)
    if workers is not None:
        if "workers" not in params:
            raise PrivacctError(f"--workers applies to a reproduction that runs in parallel (tabular), not to {args.family}")
        if args.scheduler is not None:
            raise PrivacctError("--workers does not apply with --scheduler (the cluster runs each run's seed chunks): "
                                "give one of them")
        kw["workers"] = check_count("--workers", workers, maximum=getattr(reproduce, "max_workers", 1))
    return kw


def cmd_reproduce(args) -> int:
    from privacct.outputs import OutputSet, check_out, wrote_line
    from privacct.progress import heartbeat

    from .scaleout import check_scheduler, connect

    if args.seeds is not None:
        check_count("--seeds", args.seeds)
    if args.episodes is not None:
        check_count("--episodes", args.episodes)
    reproduce = family_reproduce_function(args.family)
    own_options = reproduce_options(reproduce, args)
    if args.scheduler is not None:
        check_scheduler(args.scheduler)
    check_out(args.out, REPRODUCE_OUTPUTS)
    check_reproduce_memory(args.family, args.seeds, args.episodes)
    # One progress convention (privacct.progress): a reproduction that draws its own progress (its function's
    # ``draws_progress`` attribute is true, e.g. a bar per run) runs as it is; the others say what they finished
    # (notes) under a heartbeat that shows the time elapsed.
    own = bool(getattr(reproduce, "draws_progress", False))
    beat = contextlib.nullcontext() if own else heartbeat(f"reproduce {args.family}", quiet=args.quiet)
    with connect(args.scheduler), OutputSet(args.out, REPRODUCE_OUTPUTS) as o:
        with beat:
            reproduce(o.staging, full=args.full, seeds=args.seeds, episodes=args.episodes, progress=not args.quiet,
                      **own_options)
        files = o.commit()
    emit(wrote_line(o.final, files))
    return 0
