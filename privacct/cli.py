"""The ``privacct`` command line.

Core subcommands: ``account``, ``calibrate``, ``verify``, ``schema``. Other packages add theirs
(``run``, ``reproduce``, ``audit``, ``mutants``, ``report``) through the ``privacct.commands``
entry-point group, so privacct never imports them (DESIGN.md: dependencies point one way).

Exit codes: 0 success (for ``verify``: the claim holds), 1 the claim does not hold, 2 bad input
(one line on stderr naming the field; no traceback; nothing written).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import metadata
from pathlib import Path

from .accounting import ACCOUNTANTS, all_epsilons
from .calibrate import calibrate_noise, single_group_log
from .errors import PrivacctError, check_count, check_delta, check_positive
from .log import MechanismLog, Structure
from .report import privacy_report
from .schema import log_schema

EXAMPLES = Path(__file__).parent / "examples"
DEFAULT_EXAMPLE = EXAMPLES / "seed002-ucbvi-jdp-paper.json"


def number_arg(name: str):
    """argparse ``type=`` for a float option: a one-line error naming the option (exit 2)."""
    def parse(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
    return parse


def integer_arg(name: str):
    """argparse ``type=`` for an int option: a one-line error naming the option (exit 2)."""
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
    return parse


def _structure(args) -> Structure:
    if args.count is not None:
        return Structure.repeated(check_count("--count", args.count))
    return Structure.tree(check_count("--tree-leaves", args.tree_leaves))


def _add_structure_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mechanism", required=True, choices=["gaussian", "laplace"], help="noise distribution")
    p.add_argument("--sensitivity", required=True, type=number_arg("--sensitivity"),
                   help="sensitivity of one release (l1 for Laplace, l2 for Gaussian)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--count", type=integer_arg("--count"), help="releases per user (repeated composition)")
    g.add_argument("--tree-leaves", type=integer_arg("--tree-leaves"), help="K leaves of a binary tree counter (floor(log2 K)+1 releases per user)")


def cmd_account(args) -> int:
    sens = check_positive("--sensitivity", args.sensitivity)
    scale = check_positive("--noise-scale", args.noise_scale)
    delta = check_delta("--delta", args.delta, allow_zero=args.mechanism == "laplace")
    log = single_group_log(mechanism=args.mechanism, sensitivity=sens, structure=_structure(args), noise_scale=scale)
    errs: dict[str, str] = {}
    eps = all_epsilons(log, delta=delta, errors=errs)
    if not eps:
        raise PrivacctError("no accountant applies: " + "; ".join(f"{k}: {v}" for k, v in errs.items()))
    tight = min(eps, key=lambda k: eps[k])
    if args.json:
        print(json.dumps({"epsilon": eps, "tightest": tight, "delta": delta,
                          "per_user_count": log.release_groups[0].per_user_count}))
    else:
        print(f"{args.mechanism}: noise scale {scale:g}, sensitivity {sens:g}, "
              f"{log.release_groups[0].per_user_count} releases per user, delta={delta:g}")
        for k, v in eps.items():
            print(f"  {k:<20} eps = {v:.6g}{'   <- tightest' if k == tight else ''}")
        for k, v in errs.items():
            print(f"  {k:<20} n/a ({v})")
    return 0


def cmd_calibrate(args) -> int:
    sens = check_positive("--sensitivity", args.sensitivity)
    eps = check_positive("--epsilon", args.epsilon)
    if args.delta is None:
        if args.mechanism == "gaussian":
            raise PrivacctError("--delta is required for the Gaussian mechanism (a number in (0, 1))")
        delta = 0.0
    else:
        delta = check_delta("--delta", args.delta, allow_zero=args.mechanism == "laplace")
    scale, name = calibrate_noise(mechanism=args.mechanism, sensitivity=sens, structure=_structure(args),
                                  epsilon=eps, delta=delta, accountant=args.accountant)
    if args.json:
        print(json.dumps({"noise_scale": scale, "accountant": name, "epsilon": eps, "delta": delta}))
    else:
        print(f"noise scale {scale:.6g} ({name}) meets eps={eps:g}, delta={delta:g}")
    return 0


def cmd_verify(args) -> int:
    log = MechanismLog.load(args.log)
    if log.claim is None:
        raise PrivacctError(f"{args.log}: claim is missing (verify needs a claim with epsilon and delta)")
    rep = privacy_report(log)
    if args.json:
        print(json.dumps(rep.to_dict(), indent=2))
    else:
        print(rep.to_text())
    return 0 if rep.holds else 1


def cmd_schema(args) -> int:
    print(json.dumps(log_schema(), indent=2))
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="privacct", description="Privacy accounting, calibration and audits for private RL.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("account", help="epsilon of one release group under every accountant")
    _add_structure_args(p)
    p.add_argument("--noise-scale", required=True, type=number_arg("--noise-scale"), help="Laplace b or Gaussian sigma")
    p.add_argument("--delta", required=True, type=number_arg("--delta"), help="delta in (0, 1) (0 allowed for Laplace)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_account)

    p = sub.add_parser("calibrate", help="smallest noise scale meeting (epsilon, delta)")
    _add_structure_args(p)
    p.add_argument("--epsilon", required=True, type=number_arg("--epsilon"))
    p.add_argument("--delta", type=number_arg("--delta"))
    p.add_argument("--accountant", choices=list(ACCOUNTANTS), help="default: the one allowing the least noise")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("verify", help="verify a mechanism log's claim; exit 0 holds, 1 fails, 2 bad input")
    p.add_argument("log", nargs="?", default=str(DEFAULT_EXAMPLE),
                   help=f"mechanism log JSON (default: the shipped example {DEFAULT_EXAMPLE.name})")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("schema", help="print the JSON Schema of mechanism logs")
    p.set_defaults(func=cmd_schema)

    for ep in _command_entry_points():
        try:
            register = ep.load()
        except ModuleNotFoundError as e:
            # A package that is not installed contributes no command; any other error is real.
            if e.name and ep.value.split(":")[0].startswith(e.name):
                continue
            raise
        register(sub)
    return parser


def _command_entry_points():
    try:
        return sorted(metadata.entry_points(group="privacct.commands"), key=lambda e: e.name)
    except Exception:  # pragma: no cover - broken metadata
        return []


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except PrivacctError as e:
        print(f"privacct {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
