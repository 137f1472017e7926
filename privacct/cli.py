"""The ``privacct`` command line.

Core subcommands: ``account``, ``calibrate``, ``verify``, ``schema``. Other packages add theirs
(``run``, ``reproduce``, ``audit``, ``mutants``, ``report``) through the ``privacct.commands``
entry-point group, so privacct never imports them (docs/README.md#package-layout: dependencies point one way).

Exit codes: 0 success; 1 a check did not pass (``verify``: the claim fails; ``audit``: fails; ``mutants``: a
planted bug was not caught; ``account``, ``calibrate``, ``schema``, ``run``, ``reproduce`` and ``report``
never exit 1), 2 bad input (one line on stderr naming the argument or field and its allowed range; no
traceback; nothing written), 3 inconclusive (``audit`` only: too few trials to see a violation), 4 an
internal error (one line on stderr; a bug to report; ``PRIVACCT_DEBUG=1`` re-raises it with its
traceback). Each command's --help ends with its own (:data:`EXIT_STATUS`).

Interruption: SIGINT or SIGTERM stops a command with one line on stderr and exit 130 (143 for
SIGTERM); a command writing into ``--out`` leaves the previous complete files or none
(:mod:`privacct.outputs`).

Output safety: everything is written through :func:`write`, which encodes for the stream's
encoding with backslash escapes (no UnicodeEncodeError on an ASCII terminal); text reports escape
every string a log carries (:func:`privacct.errors.printable`), and ``--json`` prints strict JSON
(ASCII, no NaN/Infinity). This module imports neither numpy, scipy nor dp_accounting at load
time: ``privacct --help`` and argument errors answer without them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import TextIO

from .accounting import ACCOUNTANT_NAMES
from .console import write  # re-exported: privacct.cli.write is what commands import
from .errors import PrivacctError, check_count, check_delta, check_positive, printable, shown
from .log import FACTORIZED_STRATEGIES, Structure

#: Exit status of an unexpected exception (a bug): distinct from 0/1 (verdict), 2 (bad input) and
#: 3 (an inconclusive audit).
EXIT_INTERNAL = 4

EXAMPLES = Path(__file__).parent / "examples"
#: ``privacct verify --example NAME``: the shipped logs, by file name without ``.json``.
EXAMPLE_NAMES = tuple(sorted(p.stem for p in EXAMPLES.glob("*.json")))
#: ``--example`` given without NAME: list the shipped examples.
_LIST = object()
#: ``privacct verify`` without LOG: exit 2 with this line (there is no default log).
VERIFY_NEEDS_LOG = ("LOG is required: a path, or - for standard input; the shipped examples are listed by --example "
                    "(privacct verify --example NAME verifies one)")

JSON_HELP = "print one strict JSON object (ASCII, no NaN or Infinity) instead of text"
QUIET_HELP = ("no progress on stderr (default: a bar on a terminal, otherwise a line every few seconds); "
              "results and the closing 'wrote ...' line still go to stdout")
#: What exit statuses 0 and 1 (and 3) mean, per command, for the end of its --help: the one place they are
#: written (:func:`exit_help` adds the statuses every command shares; :func:`build_parser` sets every listed
#: command's epilog from here, over any a plugin set). A plugin command not listed keeps its own epilog, or
#: gets ``"*"``.
EXIT_STATUS = {
    "privacct": ("0 success, 1 a check did not pass (verify: the claim FAILS; audit: fails; mutants: a planted bug "
                 "was not caught), 3 inconclusive (audit)"),
    "account": "0 the epsilons were computed (an accountant that does not apply is listed as n/a, not an error)",
    "calibrate": "0 a noise scale meeting the budget was found",
    "verify": ("0 the claim holds, 1 the claim FAILS (the tightest accountant's epsilon at the claimed delta is above "
               "the claimed epsilon, or no accountant can certify it)"),
    "schema": "0 the schema was printed",
    "run": ("0 the run completed and wrote its files, whatever the claim's verdict (the verdict is printed, and "
            "written to privacy_report.json; `privacct verify DIR/mechanism_log.json` is the check that exits 1 "
            "when the claim FAILS)"),
    "audit": ("0 passes (eps lower bound <= claim and the audit had the power to see a violation: it would certify "
              "more than the claim for a mechanism leaking twice the claim), 1 fails (eps lower bound > claim, or "
              "above the accounted eps of the same configuration: the code leaks more than its own log declares), "
              "3 inconclusive (eps lower bound <= claim but too few trials to see a violation; the output gives the "
              "trials needed)"),
    "reproduce": "0 the figures were written",
    "mutants": ("0 every planted bug was caught (and, with --controls, no correct control was), 1 a planted bug was "
                "not caught or a control was flagged"),
    "report": ("0 the report was written, whatever its verdicts (a row that FAILS is a finding, not an error: "
               "`privacct verify` of that row's log exits 1)"),
    "*": "0 success",
}
#: The statuses every command shares.
EXIT_SHARED = ("2 bad input (one line naming the argument and its allowed range; nothing written), 4 internal error "
               "(a bug: PRIVACCT_DEBUG=1 shows its traceback), 130 interrupted (SIGINT; 143 SIGTERM)")


def exit_help(command: str) -> str:
    """The ``exit status: ...`` paragraph at the end of ``command``'s --help (``privacct``: the top level)."""
    return f"exit status: {EXIT_STATUS.get(command, EXIT_STATUS['*'])}, {EXIT_SHARED}"


def add_quiet(p: argparse.ArgumentParser) -> None:
    """``--quiet`` (and its older spelling ``--no-progress``): the one progress switch of long commands."""
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true", help=QUIET_HELP)


def emit(text: str) -> None:
    """Print one block of output on stdout (safe encoding)."""
    write(sys.stdout, text + "\n")


def emit_json(obj) -> None:
    """Print strict JSON on stdout: ASCII, and a ValueError rather than NaN or Infinity."""
    emit(json.dumps(obj, indent=2, allow_nan=False))


#: What a number flag accepts: plain ASCII decimal notation (``0.5``, ``-2``, ``1e-5``, ``.5``), surrounding
#: whitespace ignored. Python's float() would also take ``1_000``, ``nan``, ``inf`` and non-ASCII digits;
#: the command line refuses them, each with one line naming the flag.
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)
#: Longest integer text an integer flag converts (every range a flag checks is far below 10^4000);
#: Python itself refuses to convert more than 4300 digits.
MAX_INTEGER_DIGITS = 4000
_NON_FINITE = ("nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")


def parse_number(name: str, text: str) -> float:
    """The float a number flag's ``text`` stands for, or :class:`argparse.ArgumentTypeError` (one line
    naming ``name``): plain decimal notation only (``1_000``, ``0x10``, ``nan`` and ``inf`` are refused),
    finite, not rounded to 0 from a non-zero text (``1e-400``) nor to infinity (``1e999``, ``10**400``);
    ``-0`` is 0. Subnormal numbers (``5e-324``) are accepted: the flag's own range check decides."""
    s = text.strip() if isinstance(text, str) else ""
    if s.lower() in _NON_FINITE:
        raise argparse.ArgumentTypeError(f"{name} must be a finite number, got {shown(text)}")
    if not _DECIMAL.fullmatch(s):
        raise argparse.ArgumentTypeError(f"{name} must be a decimal number such as 0.5 or 1e-5, got {shown(text)}")
    value = float(s)
    if math.isinf(value):
        raise argparse.ArgumentTypeError(f"{name} is beyond the floating-point range (magnitude at most "
                                         f"{sys.float_info.max:.4g}), got {shown(text)}")
    if value == 0.0 and re.search(r"[1-9]", s.split("e")[0].split("E")[0]):
        raise argparse.ArgumentTypeError(f"{name} is too close to 0 for a floating-point number (the smallest positive "
                                         f"one is 5e-324), got {shown(text)}")
    return value + 0.0   # -0.0 -> 0.0


def parse_integer(name: str, text: str) -> int:
    """The int an integer flag's ``text`` stands for, or :class:`argparse.ArgumentTypeError` (one line
    naming ``name``): ASCII digits with an optional sign only (``1_000``, ``0x10``, ``1e3``, ``3.0`` are
    refused), at most :data:`MAX_INTEGER_DIGITS` digits; the flag's own range check decides the rest."""
    s = text.strip() if isinstance(text, str) else ""
    if not _INTEGER.fullmatch(s):
        raise argparse.ArgumentTypeError(f"{name} must be an integer written in digits such as 1000, got {shown(text)}")
    digits = len(s.lstrip("+-").lstrip("0"))
    if digits > MAX_INTEGER_DIGITS:
        raise argparse.ArgumentTypeError(f"{name} is out of range: an integer of {digits} digits")
    return int(s)


def number_arg(name: str):
    """argparse ``type=`` for a float option: a one-line error naming the option (exit 2); see
    :func:`parse_number` for what is accepted."""
    def parse(text: str) -> float:
        return parse_number(name, text)
    return parse


def integer_arg(name: str):
    """argparse ``type=`` for an int option: a one-line error naming the option (exit 2); see
    :func:`parse_integer` for what is accepted."""
    def parse(text: str) -> int:
        return parse_integer(name, text)
    return parse


STRATEGY_CHOICES = FACTORIZED_STRATEGIES  # the counting strategies, named once (privacct.log)


def _structure(args) -> Structure:
    if getattr(args, "strategy", None) is not None and getattr(args, "counter_leaves", None) is None:
        raise PrivacctError("--strategy applies to a continual counter: give --counter-leaves K as well")
    if args.count is not None:
        return Structure.repeated(check_count("--count", args.count))
    if getattr(args, "counter_leaves", None) is not None:
        from .counters.strategies import Strategy

        leaves = check_count("--counter-leaves", args.counter_leaves)
        return Strategy(args.strategy or "tree").structure(leaves, norm="l1" if args.mechanism == "laplace" else "l2")
    return Structure.tree(check_count("--tree-leaves", args.tree_leaves))


def _add_structure_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mechanism", required=True, choices=["gaussian", "laplace"], help="noise distribution")
    p.add_argument("--sensitivity", required=True, type=number_arg("--sensitivity"),
                   help="sensitivity of one release, a finite number > 0 (l1 for Laplace, l2 for Gaussian)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--count", type=integer_arg("--count"),
                   help="releases per user (repeated composition), an integer in [1, 2^53]")
    g.add_argument("--tree-leaves", type=integer_arg("--tree-leaves"),
                   help="K leaves of a binary tree counter (floor(log2 K)+1 releases per user), an integer in [1, 2^53]")
    g.add_argument("--counter-leaves", type=integer_arg("--counter-leaves"),
                   help="K steps of a continual counter released through --strategy (docs/counters.md), an integer in [1, 2^53]")
    p.add_argument("--strategy", choices=list(STRATEGY_CHOICES),
                   help="counting strategy of --counter-leaves (account: default tree; calibrate: default the one of least "
                        "worst-prefix error, i.e. the least noise in the released prefix sums, not the smallest noise scale)")


def _delta_for(args, *, required_for_gaussian: bool = True) -> float:
    """--delta: default 0 for Laplace (pure), required for Gaussian; range checked."""
    if args.delta is None:
        if args.mechanism == "gaussian" and required_for_gaussian:
            raise PrivacctError("--delta is required for the Gaussian mechanism (a number in (0, 1))")
        return 0.0
    return check_delta("--delta", args.delta, allow_zero=args.mechanism == "laplace")


def cmd_account(args) -> int:
    from .accounting import figures
    from .calibrate import single_group_log

    sens = check_positive("--sensitivity", args.sensitivity)
    scale = check_positive("--noise-scale", args.noise_scale)
    structure = _structure(args)
    delta = _delta_for(args)
    log = single_group_log(mechanism=args.mechanism, sensitivity=sens, structure=structure, noise_scale=scale)
    f = figures(log, delta=delta)
    eps, errs, tight = dict(f.epsilons), dict(f.not_applicable), f.tightest
    count = log.release_groups[0].per_user_count
    if args.json:
        emit_json({"epsilon": eps, "tightest": tight, "delta": delta, "per_user_count": count, "not_applicable": errs})
    else:
        lines = [f"{args.mechanism}: noise scale {scale:g}, sensitivity {sens:g}, {count} releases per user, delta={delta:g}"]
        for k, v in eps.items():
            lines.append(f"  {k:<20} eps = {v:.6g}{'   <- tightest' if k == tight else ''}")
        for k, v in errs.items():
            lines.append(f"  {k:<20} n/a ({printable(v)})")
        emit("\n".join(lines))
    return 0


def _directed(x: float, up: bool) -> str:
    """``x`` to 3 significant digits, rounded up or down (a range printed this way lies inside the true one)."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal

    d = Context(prec=3, rounding=ROUND_CEILING if up else ROUND_FLOOR).create_decimal(Decimal(x))
    return f"{float(d):.3g}"


def _calibration_failed(error: PrivacctError, sens: float, eps: float, delta: float, ranges, what: str) -> PrivacctError:
    """The one line for a failed calibration. ``ranges()`` gives, per structure calibrated, (low, high, unit):
    the sensitivities that can be answered for and the noise scale at sensitivity 1
    (:func:`privacct.calibrate.sensitivity_range`). Out of their common range: a line naming --sensitivity
    and the range; when even sensitivity 1 fails: a line naming --epsilon and --delta; else ``error``."""
    try:
        found = ranges()
    except PrivacctError:
        return PrivacctError(f"at --epsilon {eps:g} and --delta {delta:g} no noise scale can be calibrated for this "
                             f"mechanism and structure (not at sensitivity 1 either): {printable(error)}")
    low, high = max(r[0] for r in found), min(r[1] for r in found)
    if low <= sens <= high:
        return error
    units = sorted(r[2] for r in found)
    unit = f"{units[0]:.6g}" if units[0] == units[-1] else f"{units[0]:.6g} to {units[-1]:.6g}"
    return PrivacctError(f"--sensitivity must be in [{_directed(low, True)}, {_directed(high, False)}] for this "
                         f"--epsilon, --delta and structure (the calibrated noise scale, {unit} x the sensitivity, "
                         f"{what}), got {sens:g}")


def _noise_range_text() -> str:
    from .calibrate import MAX_NOISE_SCALE, MIN_NOISE_SCALE

    return f"must lie in [{MIN_NOISE_SCALE:g}, {_directed(MAX_NOISE_SCALE, False)}]"


def cmd_calibrate(args) -> int:
    from .calibrate import calibrate_noise, sensitivity_range

    sens = check_positive("--sensitivity", args.sensitivity)
    eps = check_positive("--epsilon", args.epsilon)
    if args.counter_leaves is not None:
        return _calibrate_counter(args, sens, eps)
    structure = _structure(args)
    delta = _delta_for(args)
    try:
        scale, name = calibrate_noise(mechanism=args.mechanism, sensitivity=sens, structure=structure,
                                      epsilon=eps, delta=delta, accountant=args.accountant)
    except PrivacctError as e:
        def ranges():
            return [sensitivity_range(mechanism=args.mechanism, structure=structure, epsilon=eps, delta=delta,
                                      accountant=args.accountant)]
        raise _calibration_failed(e, sens, eps, delta, ranges, _noise_range_text()) from None
    if args.json:
        emit_json({"noise_scale": scale, "accountant": name, "epsilon": eps, "delta": delta})
    else:
        emit(f"noise scale {scale:.6g} ({name}) meets eps={eps:g}, delta={delta:g}")
    return 0


def _calibrate_counter(args, sens: float, eps: float) -> int:
    """calibrate --counter-leaves K: every strategy at the same (eps, delta), with its worst prefix
    error; the answer is --strategy's, or that of the strategy with the least worst-prefix error (docs/counters.md;
    the noise in the released prefix sums, which is what a learner's regret sees: not the smallest noise scale, BLT's
    scale is below sqrt-Toeplitz's while its worst prefix error is above)."""
    from .calibrate import MAX_NOISE_SCALE, MIN_NOISE_SCALE
    from .counters.compare import compare, least_noise

    leaves = check_count("--counter-leaves", args.counter_leaves)
    delta = _delta_for(args)
    if args.accountant is not None:
        raise PrivacctError("--accountant cannot be combined with --counter-leaves (each strategy uses the tightest accountant)")

    def ranges():
        # noise in [MIN, MAX] and the worst prefix variance (noise^2 x a constant) a normal float
        margin = 1.0 + 2.0**-16
        return [(max(MIN_NOISE_SCALE / f.noise_scale, math.sqrt(sys.float_info.min / f.worst_prefix_variance)) * margin,
                 min(MAX_NOISE_SCALE / f.noise_scale, math.sqrt(sys.float_info.max / f.worst_prefix_variance)) / margin,
                 f.noise_scale)
                for f in compare(mechanism=args.mechanism, sensitivity=1.0, leaves=leaves, epsilon=eps, delta=delta)]

    what = _noise_range_text() + " and its worst prefix variance must be a normal float"
    try:
        figs = compare(mechanism=args.mechanism, sensitivity=sens, leaves=leaves, epsilon=eps, delta=delta)
    except PrivacctError as e:
        raise _calibration_failed(e, sens, eps, delta, ranges, what) from None
    if not all(sys.float_info.min <= f.worst_prefix_variance <= sys.float_info.max for f in figs):
        raise _calibration_failed(PrivacctError(f"--sensitivity {sens:g}: a worst prefix variance is beyond the "
                                                "floating-point range"), sens, eps, delta, ranges, what)
    best = least_noise(figs)
    chosen = best if args.strategy is None else next(f for f in figs if f.strategy == args.strategy)
    if args.json:
        emit_json({"noise_scale": chosen.noise_scale, "accountant": chosen.accountant, "epsilon": eps, "delta": delta,
                   "strategy": chosen.strategy, "structure": chosen.structure.to_dict(), "least_noise": best.strategy,
                   "least_worst_prefix_error": best.strategy,
                   "strategies": [f.to_dict() for f in figs]})
        return 0
    lines = [f"noise scale {chosen.noise_scale:.6g} ({chosen.accountant}) meets eps={eps:g}, delta={delta:g} "
             f"with strategy {chosen.strategy} over K={leaves} steps"]
    lines.append(f"  {'strategy':<14} {'noise scale':>12} {'column norm':>12} {'worst prefix std':>17}")
    for f in figs:
        mark = "   <- least worst-prefix error" if f is best else ""
        lines.append(f"  {f.strategy:<14} {f.noise_scale:12.6g} {f.column_norm:12.6g} {f.worst_prefix_std:17.6g}{mark}")
    emit("\n".join(lines))
    return 0


def _verify_log(args):
    """(log, where) for verify: LOG (a path, or - for standard input) or --example NAME, read and
    parsed by the one strict parser (privacct.log: the same size, depth and field rules for all three)."""
    from .log import MechanismLog, read_stream_text

    if args.example is not None and args.log is not None:
        raise PrivacctError("give LOG or --example NAME, not both")
    if args.example is not None:
        if args.example not in EXAMPLE_NAMES:
            raise PrivacctError(f"--example must be one of {', '.join(EXAMPLE_NAMES)}, got {shown(args.example)}")
        path = EXAMPLES / f"{args.example}.json"
        return MechanismLog.load(path), f"example {args.example}"
    if args.log is None:
        raise PrivacctError(VERIFY_NEEDS_LOG)
    if args.log == "-":
        stdin = sys.stdin
        if stdin is None or getattr(stdin, "closed", False):
            raise PrivacctError("LOG is - but standard input is closed: pipe a log into it (privacct verify - < LOG.json)")
        try:
            interactive = stdin.isatty()
        except (OSError, ValueError, AttributeError):
            interactive = False
        if interactive:  # never wait on a terminal: verify answers or refuses, it does not hang
            raise PrivacctError("LOG is - but standard input is a terminal: pipe a log into it (privacct verify - < LOG.json)")
        text = read_stream_text(getattr(stdin, "buffer", stdin), name="standard input", what="log")
        try:
            return MechanismLog.from_json(text), "standard input"
        except PrivacctError as e:
            raise PrivacctError(f"standard input: {e}") from None
    return MechanismLog.load(args.log), shown(str(args.log))


def _list_examples(as_json: bool) -> int:
    """``privacct verify --example`` without NAME: the shipped examples, one per line, with their claims."""
    from .log import MechanismLog

    logs = {name: MechanismLog.load(EXAMPLES / f"{name}.json") for name in EXAMPLE_NAMES}
    if as_json:
        emit_json({"examples": [{"name": name, "privacy_model": log.privacy_model, "release_groups": len(log.release_groups),
                                 "claim": None if log.claim is None else log.claim.to_dict()} for name, log in logs.items()]})
        return 0
    lines = ["shipped examples (privacct verify --example NAME):"]
    for name, log in logs.items():
        claim = "no claim" if log.claim is None else f"claim eps={log.claim.epsilon:g}, delta={log.claim.delta:g}"
        lines.append(f"  {name:<28} {log.privacy_model}, {len(log.release_groups)} release group(s), {claim}")
    emit("\n".join(lines))
    return 0


def cmd_verify(args) -> int:
    if args.example is _LIST and args.log is None:
        return _list_examples(args.json)
    if args.example is _LIST:
        raise PrivacctError("--example needs a NAME when LOG is given (give LOG or --example NAME, not both)")
    log, where = _verify_log(args)
    if log.claim is None:
        raise PrivacctError(f"{where}: claim is missing (verify needs a claim with epsilon and delta)")
    rep, lead, decided = _lead_report(log)
    alternatives = None
    if args.counters:
        from .accounting import default_delta
        from .counters.compare import log_alternatives

        alternatives = log_alternatives(log, epsilon=log.claim.epsilon, delta=default_delta(log))
    if args.json:
        d = json.loads(rep.to_json())
        if lead is not None:
            d.update({k: v for k, v in lead.items() if k != "lead_text"})
        if alternatives is not None:
            d["counters"] = [a.to_dict() for a in alternatives]
        emit_json(d)
    else:
        text = rep.to_text()
        if lead is not None:   # after the "log:" and "claim:" lines
            head, rest = text.split("\n", 2)[:2], text.split("\n", 2)[2]
            text = "\n".join(head + [lead["lead_text"], rest])
        emit(text)
        if alternatives is not None:
            emit(_counters_text(alternatives))
    # conservative: the claim holds only if it holds under the reading the proof supports AND for the log as declared
    # (the noise the learner runs); either failing exits 1 (privacct.accounting.verdict.ClaimVerdict)
    return 0 if decided.holds else 1


def _lead_report(log):
    """(report, lead, verdict): the report ``privacct verify`` shows, led like the report's rows by the reading
    the paper's own proof supports (:func:`privacct.accounting.verdict.lead_reading`): every figure, the verdict,
    the causes and the exit status under that reading, the readings table listing every reading. ``lead``
    is None when the log has no readings or leads with the log as declared; else the JSON fields that
    name the lead reading and the declared log beside it, and ``lead_text``, the line saying so. ``verdict``:
    the :class:`privacct.accounting.verdict.ClaimVerdict` verify exits with, from the verdicts the report's
    explanations are on (each log is accounted once: the lead reading's explanation is the readings table's)."""
    from .accounting.verdict import ClaimVerdict, lead_reading
    from .privacy_report import privacy_report, report_of

    rep = privacy_report(log)
    summary = rep.readings
    name = None if summary is None else lead_reading(log)
    if name is None:
        return rep, None, ClaimVerdict(None, rep.decision, rep.decision)
    lead = next(r for r in summary.results if r.name == name)
    declared = summary.declared
    shown_rep = report_of(log.under_reading(name), lead.explanation, readings=summary)
    decided = ClaimVerdict(name, lead.explanation.decision, declared.explanation.decision)
    dx = declared.explanation
    what = "the log as declared: the noise the learner runs"
    text = (f"reading: {printable(lead.name)}, the one the paper's own proof supports; every figure below is under it "
            f"(reading {printable(declared.name)}, {what}: accounted eps {_eps_text(dx.accounted_epsilon)}, "
            f"{dx.verdict})")
    return shown_rep, {
        "lead_reading": {"name": lead.name, "supported_by": lead.supported_by},
        "declared": {"reading": declared.name, "accounted_epsilon": _finite_or_none(dx.accounted_epsilon),
                     "accountant": dx.tightest, "verdict": dx.verdict, "holds": dx.holds},
        "lead_text": text,
    }, decided


def _eps_text(x) -> str:
    return "n/a" if _finite_or_none(x) is None else f"{x:.4g}"


def _finite_or_none(x):
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def _counters_text(alternatives) -> str:
    if not alternatives:
        return "counters: the log has no tree or factorized group"
    lines = ["counters (each strategy swapped in, the whole log recalibrated to the claim):"]
    for a in alternatives:
        lines.append(f"  group {printable(repr(a.group))} (now {a.current}):")
        best = a.best if a.figures else None
        for f in a.figures:
            mark = "   <- least worst-prefix error" if f is best else ""
            lines.append(f"    {f.strategy:<14} noise scale {f.noise_scale:<12.6g} worst prefix std {f.worst_prefix_std:.6g}{mark}")
        for name, why in a.errors:
            lines.append(f"    {name:<14} n/a ({printable(why)})")
    return "\n".join(lines)


def cmd_schema(args) -> int:
    from .schema import log_schema

    emit_json(log_schema())
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2), escaped messages and encoding-safe output."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {printable(message)}\n")

    def _print_message(self, message, file=None):
        if message:
            write(file if file is not None else sys.stderr, message)


def build_parser(*, plugins: bool = True) -> argparse.ArgumentParser:
    """The parser of every command; ``plugins=False`` leaves out the entry-point commands."""
    parser = _Parser(prog="privacct", description="Privacy accounting, calibration and audits for private RL.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("account", help="epsilon of one release group under every accountant")
    _add_structure_args(p)
    p.add_argument("--noise-scale", required=True, type=number_arg("--noise-scale"),
                   help="Laplace b or Gaussian sigma, a finite number > 0")
    p.add_argument("--delta", type=number_arg("--delta"),
                   help="delta in (0, 1); default 0 for Laplace (pure), required for Gaussian")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_account)

    p = sub.add_parser("calibrate", help="smallest noise scale meeting (epsilon, delta)")
    _add_structure_args(p)
    p.add_argument("--epsilon", required=True, type=number_arg("--epsilon"), help="the budget's epsilon, a finite number > 0")
    p.add_argument("--delta", type=number_arg("--delta"),
                   help="the budget's delta in (0, 1); default 0 for Laplace (pure), required for Gaussian")
    p.add_argument("--accountant", choices=list(ACCOUNTANT_NAMES), help="default: the one allowing the least noise")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("verify", help="verify a mechanism log's claim; exit 0 holds, 1 fails, 2 bad input")
    p.add_argument("log", nargs="?", default=None, metavar="LOG",
                   help="mechanism log JSON: a path, or - to read it from standard input (at most 4 MiB, parsed as "
                        "strictly as a file); required unless --example is given")
    p.add_argument("--example", nargs="?", const=_LIST, default=None, metavar="NAME",
                   help=f"verify a shipped example instead of LOG, one of {', '.join(EXAMPLE_NAMES)}; "
                        "without NAME, list them")
    p.add_argument("--counters", action="store_true",
                   help="also list, for every tree or factorized group, each counting strategy at the same claim with its "
                        "worst prefix error (docs/counters.md)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("schema", help="print the JSON Schema of mechanism logs")
    p.set_defaults(func=cmd_schema)

    if plugins:
        for ep in _command_entry_points():
            try:
                register = ep.load()
            except ModuleNotFoundError as e:
                # A package that is not installed contributes no command; any other error is real.
                if e.name and ep.value.split(":")[0].startswith(e.name):
                    continue
                raise
            register(sub)
    parser.epilog = exit_help("privacct") + "; each command's --help ends with what its own statuses mean"
    for name, p in sub.choices.items():
        if name in EXIT_STATUS or not p.epilog:
            p.epilog = exit_help(name)
    return parser


def _command_entry_points():
    try:
        return sorted(metadata.entry_points(group="privacct.commands"), key=lambda e: e.name)
    except Exception:  # pragma: no cover - broken metadata
        return []


def _dispatch(args) -> int:
    from . import progress, signals

    command = f"privacct {args.command}"
    progress.reset()
    try:
        with signals.handled():
            return int(args.func(args) or 0)
    except PrivacctError as e:
        write(sys.stderr, f"{command}: error: {printable(e)}\n")
        return 2
    except KeyboardInterrupt as e:   # signals.Interrupted (SIGINT/SIGTERM), or a bare Ctrl-C outside the handler
        return _interrupted(command, args, e.signum if isinstance(e, signals.Interrupted) else 2)
    except BrokenPipeError:  # pragma: no cover
        return 0
    except Exception as e:  # noqa: BLE001 - a bug: one line, never a traceback on a user's terminal
        if signals.received() is not None:
            # the signal surfaced as another exception: a KeyboardInterrupt raised inside a C extension's
            # initialisation (numpy turns it into "ImportError: initialization failed"), or a worker's death
            return _interrupted(command, args, signals.received())
        if os.environ.get("PRIVACCT_DEBUG"):
            raise
        write(sys.stderr, f"{command}: internal error (please report it): {e.__class__.__name__}: {printable(e)[:300]}\n")
        return EXIT_INTERNAL


def _interrupted(command: str, args, signum: int) -> int:
    import signal

    out = getattr(args, "out", None)
    kept = "" if out is None else f"; --out {shown(str(out))} holds its previous complete files or none"
    write(sys.stderr, f"{command}: interrupted ({signal.Signals(signum).name}){kept}\n")
    return 128 + signum


def main(argv: list[str] | None = None) -> int:
    """The console script: parse (argparse exits 0 for --help, 2 for a usage error) and run."""
    try:
        args = build_parser().parse_args(argv)
    except KeyboardInterrupt:   # Ctrl-C while the commands load: one line, not a traceback
        write(sys.stderr, "privacct: interrupted (SIGINT); nothing was written\n")
        return 130
    except PrivacctError as e:   # the learners could not be loaded (e.g. stale installation metadata)
        write(sys.stderr, f"privacct: error: {printable(e)}\n")
        return 2
    return _dispatch(args)


def run(argv: list[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run one command in-process and return its exit code, never raising SystemExit; output goes
    to ``stdout`` / ``stderr`` (default: the process's). The test harness and notebooks use it."""
    old_out, old_err = sys.stdout, sys.stderr
    if stdout is not None:
        sys.stdout = stdout
    if stderr is not None:
        sys.stderr = stderr
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:  # --help (0) or a usage error (2), already printed
            return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        except PrivacctError as e:   # the learners could not be loaded (e.g. stale installation metadata)
            write(sys.stderr, f"privacct: error: {printable(e)}\n")
            return 2
        return _dispatch(args)
    finally:
        sys.stdout, sys.stderr = old_out, old_err


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
