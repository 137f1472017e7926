"""Arguments of every command: help for every option, exit codes in --help, flags that do not apply
refused, run and audit sharing their defaults, messages that name the argument (never an empty list
of choices nor an internal name)."""

from __future__ import annotations

import argparse
import json

import pytest

from privacct.cli import build_parser

COMMANDS = ("account", "calibrate", "verify", "schema", "run", "reproduce", "audit", "mutants", "report")


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_option_of_every_command_has_help_and_the_exit_codes():
    table = subparsers()
    assert set(COMMANDS) <= set(table)
    for name, p in table.items():
        assert "exit status: 0" in (p.epilog or ""), name
        for a in p._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            assert a.help and a.help.strip() and a.help != argparse.SUPPRESS, (name, a.option_strings or a.dest)


@pytest.mark.parametrize("name", ["run", "reproduce", "audit", "mutants", "report"])
def test_long_commands_have_quiet(name):
    flags = {f for a in subparsers()[name]._actions for f in a.option_strings}
    assert "--quiet" in flags


@pytest.mark.parametrize("argv, needle", [
    (["run", "ucb-vi", "--privacy", "none", "--epsilon", "0.5", "--out", "o"], "--epsilon applies only to a private run"),
    (["run", "ucb-vi", "--epsilon", "0.5", "--calibration", "tight", "--out", "o"], "--epsilon, --calibration apply only"),
    (["run", "ucb-vi", "--delta", "0.1", "--out", "o"], "--delta applies only"),
    (["run", "ucrl-vtr", "--privacy", "jdp", "--out", "o"], "--privacy must be one of none for ucrl-vtr"),
    (["audit", "ucrl-vtr", "--privacy", "jdp"], "ucrl-vtr is not private"),
    (["audit", "ldp-ucrl-vtr", "--privacy", "jdp"], "--privacy must be one of ldp for ldp-ucrl-vtr"),
    (["audit", "ucb-vi", "--privacy", "jdp", "--episodes", "1", "--fresh-users"], "--fresh-users needs --episodes >= 2"),
    (["audit", "ucb-vi", "--privacy", "jdp", "--trials", "5"], "--trials"),
    (["audit", "ucb-vi", "--privacy", "jdp", "--confidence", "1"], "--confidence"),
    (["audit", "ucb-vi", "--privacy", "jdp", "--seed", "-1"], "--seed"),
    (["audit", "ucb-vi", "--privacy", "jdp", "--delta", "1"], "--delta"),
    (["mutants", "--only", "no-such-mutant"], "--only"),
    (["mutants", "--seed", "-3"], "--seed"),
    (["report", "--seed", "x"], "--seed"),
    (["verify", "no-such-file.json"], "no-such-file.json"),
])
def test_bad_or_inapplicable_arguments_are_refused_with_one_line(argv, needle, cli, cli_contract):
    r = cli(argv)
    cli_contract(r)
    assert r.code == 2 and needle in r.err, r.err
    assert "one of  " not in r.err and "one of for" not in r.err and "HOOK" not in r.err
    assert "FileNotFoundError" not in r.err


def test_account_laplace_needs_no_delta(cli, cli_contract):
    r = cli(["account", "--mechanism", "laplace", "--sensitivity", "1", "--count", "3", "--noise-scale", "2", "--json"])
    cli_contract(r)
    assert r.code == 0 and json.loads(r.out)["delta"] == 0.0 and json.loads(r.out)["epsilon"]["basic"] == 1.5


def test_run_and_audit_share_delta_and_calibration_defaults(cli, cli_contract, tmp_path):
    from privacct.algorithms.defaults import DEFAULT_CALIBRATION, default_delta

    r = cli(["run", "pp-ucrl-vtr", "--privacy", "jdp", "--episodes", "4", "--out", "o", "--json", "--quiet"])
    assert r.code == 0, r.err
    run = json.loads(r.out)
    a = cli(["audit", "pp-ucrl-vtr", "--privacy", "jdp", "--episodes", "4", "--trials", "20", "--json", "--quiet"])
    cli_contract(a, codes=(0, 1, 3))   # `privacct audit pp-ucrl-vtr --privacy jdp` works: no delta error
    audit = json.loads(a.out)
    assert run["delta"] == audit["delta"] == default_delta("pp-ucrl-vtr", "jdp") == 1e-5   # the paper's setting
    assert run["calibration"] == audit["calibration"] == DEFAULT_CALIBRATION


def test_reproduce_ends_with_where_its_files_went(cli, tmp_path):
    r = cli(["reproduce", "tabular", "--seeds", "1", "--episodes", "2", "--out", "rep", "--quiet"])
    assert r.code == 0, r.err
    assert r.out.strip().splitlines()[-1].startswith("wrote ") and "manifest.json" in r.out
    assert r.err == ""   # --quiet: no progress at all


def _returns_1(func) -> bool:
    """Whether a command function's source can return exit status 1 (``return 1``, ``... else 1``, or the audit's
    ``EXIT_CODES`` table, whose "fails" is 1)."""
    import inspect
    import re

    return re.search(r"return 1\b|else 1\b|EXIT_CODES\[", inspect.getsource(func)) is not None


def test_each_command_help_states_its_own_exit_1():
    """The end of each --help says what exit 1 means for THAT command, and only where the command can return 1
    (it used to say '1 the claim does not hold' for every command, account and schema included)."""
    import re

    from privacct.cli import EXIT_STATUS

    table = subparsers()
    assert set(table) <= set(EXIT_STATUS), "a shipped command without its exit statuses"
    can_fail = {name for name, p in table.items() if _returns_1(p.get_default("func"))}
    assert {"verify", "audit", "mutants"} <= can_fail and not can_fail & {"account", "calibrate", "schema"}
    for name, p in table.items():
        says_1 = re.search(r"\), 1 |, 1 |: 1 ", p.epilog.split("2 bad input")[0]) is not None
        assert says_1 == (name in can_fail), (name, p.epilog)
        assert "1 the claim does not hold" not in p.epilog
    assert "the claim FAILS" in table["verify"].epilog and "leaks more than its own log" in table["audit"].epilog
    assert "not caught" in table["mutants"].epilog


def test_verify_exit_1_is_what_its_help_says(cli):
    """A shipped example whose claim fails exits 1, as verify's --help says."""
    from privacct.cli import EXAMPLE_NAMES

    codes = {name: cli(["verify", "--example", name]).code for name in EXAMPLE_NAMES}
    assert set(codes.values()) == {0, 1}, codes
