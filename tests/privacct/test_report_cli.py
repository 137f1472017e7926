"""PrivacyReport verdicts and causes; the privacct command line (exit codes, JSON keys, errors)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from privacct.accounting import all_epsilons
from privacct.cli import main
from privacct.log import MechanismLog
from privacct.privacy_report import privacy_report

EX = Path(__file__).parents[2] / "privacct" / "examples"


def test_paper_log_fails_and_names_the_causes():
    log = MechanismLog.load(EX / "seed002-ucbvi-jdp-paper.json")
    rep = privacy_report(log)
    assert rep.holds is False and rep.verdict == "FAILS"
    # 3 families x 15 nodes x 2H / (3H ln K) = 30 / ln(20000) ~ 3.03 eps
    assert rep.tightest_epsilon == pytest.approx(30 / 9.903487552536127, rel=1e-9)
    text = " ".join(rep.causes)
    assert "replace-one sensitivity" in text and "tree depth" in text and "Lemma 5.1" in text
    assert rep.over_noising_factor == pytest.approx(9.903487552536127 / 30, rel=1e-6)


def test_calibrated_log_holds_with_unit_over_noising():
    log = MechanismLog.load(EX / "seed002-ucbvi-jdp-paper.json")
    fixed = log.scaled_noise(30 / 9.903487552536127)
    rep = privacy_report(fixed)
    assert rep.holds is True
    assert rep.over_noising_factor == pytest.approx(1.0, rel=1e-6)


def test_report_matches_accountants_called_directly():
    log = MechanismLog.load(EX / "gram-tree-and-switching.json")
    rep = privacy_report(log)
    assert rep.epsilons == all_epsilons(log, delta=log.claim.delta)
    assert rep.tightest_epsilon == min(rep.epsilons.values())


def run(args, capsys):
    try:
        code = main(args)
    except SystemExit as e:   # a value refused while parsing (argparse exits 2 with one line)
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_account_json_keys(capsys):
    code, out, _ = run(["account", "--mechanism", "gaussian", "--noise-scale", "10", "--sensitivity", "1",
                        "--count", "1000", "--delta", "1e-6", "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and set(d["epsilon"]) >= {"basic", "advanced", "zcdp", "rdp", "pld"}
    assert d["tightest"] in d["epsilon"] and d["epsilon"][d["tightest"]] == min(d["epsilon"].values())
    code, out, _ = run(["account", "--mechanism", "laplace", "--noise-scale", "15", "--sensitivity", "1",
                        "--tree-leaves", "1000", "--delta", "0", "--json"], capsys)
    d = json.loads(out)
    assert d["epsilon"] == {"basic": pytest.approx(10 / 15)} and d["per_user_count"] == 10


def test_cli_calibrate_json(capsys):
    code, out, _ = run(["calibrate", "--mechanism", "laplace", "--sensitivity", "2", "--tree-leaves", "1000",
                        "--epsilon", "1", "--json"], capsys)
    assert code == 0 and json.loads(out) == {"noise_scale": pytest.approx(20.0), "accountant": "basic", "epsilon": 1.0, "delta": 0.0}
    code, out, _ = run(["calibrate", "--mechanism", "gaussian", "--sensitivity", "1", "--count", "1000",
                        "--epsilon", "1", "--delta", "1e-6", "--accountant", "rdp", "--json"], capsys)
    assert json.loads(out)["noise_scale"] == pytest.approx(143.279, abs=0.01)


def test_cli_verify_exit_codes(capsys, tmp_path):
    assert run(["verify", str(EX / "seed002-ucbvi-jdp-paper.json")], capsys)[0] == 1
    code, out, _ = run(["verify", str(EX / "laplace-repeated.json"), "--json"], capsys)
    assert code == 0 and json.loads(out)["verdict"] == "holds"
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out, err = run(["verify", str(bad)], capsys)
    assert code == 2 and "not a JSON document" in err and err.count("\n") == 1 and out == ""
    d = json.loads((EX / "laplace-repeated.json").read_text())
    d["release_groups"][0]["noise_scale"] = -3
    bad.write_text(json.dumps(d))
    code, _, err = run(["verify", str(bad)], capsys)
    assert code == 2 and "noise_scale" in err
    code, _, err = run(["verify", str(tmp_path / "missing.json")], capsys)
    assert code == 2 and "cannot read log file" in err and "missing.json" in err and "no such file" in err


@pytest.mark.parametrize("args,field", [
    (["account", "--mechanism", "gaussian", "--noise-scale", "0", "--sensitivity", "1", "--count", "3", "--delta", "1e-6"], "--noise-scale"),
    (["account", "--mechanism", "gaussian", "--noise-scale", "nan", "--sensitivity", "1", "--count", "3", "--delta", "1e-6"], "--noise-scale"),
    (["account", "--mechanism", "gaussian", "--noise-scale", "1", "--sensitivity", "inf", "--count", "3", "--delta", "1e-6"], "--sensitivity"),
    (["account", "--mechanism", "gaussian", "--noise-scale", "1", "--sensitivity", "1", "--count", "3", "--delta", "1"], "--delta"),
    (["account", "--mechanism", "gaussian", "--noise-scale", "1", "--sensitivity", "1", "--count", "0", "--delta", "0.1"], "--count"),
    (["calibrate", "--mechanism", "laplace", "--sensitivity", "1", "--count", "3", "--epsilon", "-1"], "--epsilon"),
    (["calibrate", "--mechanism", "gaussian", "--sensitivity", "1", "--count", "3", "--epsilon", "1"], "--delta"),
    (["calibrate", "--mechanism", "gaussian", "--sensitivity", "1", "--count", "3", "--epsilon", "1", "--delta", "0"], "--delta"),
])
def test_cli_bad_input_exit_2(args, field, capsys):
    code, out, err = run(args, capsys)
    assert code == 2 and field in err and out == ""


def test_cli_unknown_mechanism_is_argparse_exit_2():
    with pytest.raises(SystemExit) as e:
        main(["account", "--mechanism", "cauchy", "--noise-scale", "1", "--sensitivity", "1", "--count", "1", "--delta", "0.1"])
    assert e.value.code == 2


def test_account_laplace_needs_no_delta_and_gaussian_does(cli, cli_contract):
    r = cli(["account", "--mechanism", "laplace", "--noise-scale", "15", "--sensitivity", "1", "--tree-leaves", "1000", "--json"])
    cli_contract(r, codes=(0,))
    d = json.loads(r.out)
    assert d["delta"] == 0.0 and d["epsilon"]["basic"] == pytest.approx(10 / 15) and "advanced" in d["not_applicable"]
    r = cli(["account", "--mechanism", "gaussian", "--noise-scale", "15", "--sensitivity", "1", "--count", "3"])
    cli_contract(r, codes=(2,))
    assert "--delta is required for the Gaussian mechanism" in r.err


def test_every_option_has_help():
    import argparse

    from privacct.cli import build_parser

    parser = build_parser(plugins=False)
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subs.choices.items():
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"privacct {name} {action.option_strings[0]} has no help text"


def test_privacct_cli_imports_no_numerics_at_load():
    code = ("import sys, privacct.cli as c; c.build_parser(plugins=False); "
            "print(sorted(m for m in ('numpy', 'scipy', 'dp_accounting', 'matplotlib') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


def test_help_with_every_command_loads_no_compiler_and_no_accountant_library():
    """`privacct --help` registers the learners' and auditor's commands (the learner list needs the registry),
    but numba, scipy, dp_accounting and matplotlib load only when a command does work."""
    code = ("import sys, privacct.cli as c; c.build_parser(); "
            "print(sorted(m for m in ('numba', 'scipy', 'dp_accounting', 'matplotlib') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


FORGERIES = [
    "x\nverdict: holds",
    "x\rverdict: holds",
    "verdict: holds",
    "x\u2028verdict: holds",
    "x\u001b[2K\rverdict: holds",
    "x\u0085verdict: holds",
]


@pytest.mark.parametrize("name", FORGERIES)
@pytest.mark.parametrize("where", ["log", "group", "derivation", "equation"])
def test_names_cannot_forge_a_verdict_or_drive_the_terminal(name, where, tmp_path, cli, cli_contract):
    d = json.loads((EX / "seed002-ucbvi-jdp-paper.json").read_text())  # a log whose claim FAILS
    raw = name
    g = d["release_groups"][0]
    if where == "log":
        d["name"] = raw
    elif where == "group":
        g["name"] = raw
    elif where == "derivation":
        g["sensitivity"]["derivation"] = raw
    else:
        g["paper"]["equation"] = raw
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(d))
    r = cli(["verify", str(path)])
    cli_contract(r, codes=(1,))
    assert [ln for ln in r.out.splitlines() if ln.startswith("verdict:")] == ["verdict: FAILS"]
    assert all(ch == "\n" or ch.isprintable() for ch in r.out)
    assert r.out.count("\n") == len(r.out.splitlines())
    r = cli(["verify", str(path), "--json"], encoding="ascii")
    cli_contract(r, codes=(1,))
    assert json.loads(r.out)["verdict"] == "FAILS"


def test_a_gaussian_claim_of_delta_zero_fails_instead_of_erroring(tmp_path, cli, cli_contract):
    d = json.loads((EX / "gaussian-tree.json").read_text())
    d["claim"]["delta"] = 0.0
    path = tmp_path / "g0.json"
    path.write_text(json.dumps(d))
    r = cli(["verify", str(path)])
    cli_contract(r, codes=(1,))
    assert "verdict: FAILS" in r.out and "no accountant certifies the claim at delta=0" in r.out


def test_default_delta_is_one_rule():
    from privacct.accounting import DEFAULT_DELTA, default_delta
    from privacct.log import Claim

    g = MechanismLog.load(EX / "gaussian-tree.json")
    lap = MechanismLog.load(EX / "laplace-repeated.json")
    assert default_delta(g) == g.claim.delta
    assert default_delta(MechanismLog(g.name, g.privacy_model, g.release_groups)) == DEFAULT_DELTA == 1e-6
    assert default_delta(MechanismLog(lap.name, lap.privacy_model, lap.release_groups)) == 0.0
    assert default_delta(MechanismLog(g.name, g.privacy_model, g.release_groups, claim=Claim(1.0, 0.0))) == 0.0
    assert privacy_report(MechanismLog(g.name, g.privacy_model, g.release_groups)).claimed_delta == 1e-6


def test_json_is_strict_even_when_a_figure_is_not_finite():
    import dataclasses
    import math

    rep = privacy_report(MechanismLog.load(EX / "laplace-repeated.json"))
    rep = dataclasses.replace(rep, explanation=dataclasses.replace(rep.explanation, over_noising_factor=math.inf))
    rep.groups[0]["paper_epsilon"] = math.inf
    with pytest.raises(ValueError):
        json.dumps(rep.to_dict(), allow_nan=False)  # a raw inf would be refused ...
    rep.groups[0]["paper_epsilon"] = None
    assert json.loads(rep.to_json())["over_noising_factor"] is None  # ... the report maps it to null


def test_cli_schema_is_json_schema(capsys):
    import jsonschema

    code, out, _ = run(["schema"], capsys)
    schema = json.loads(out)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(json.loads((EX / "gaussian-tree.json").read_text()), schema)


def test_console_script_default_verify():
    """`privacct verify --example NAME` verifies a shipped example (there is no default LOG any more)."""
    r = subprocess.run([sys.executable, "-m", "privacct.cli", "verify", "--example", "seed002-ucbvi-jdp-paper"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "verdict: FAILS" in r.stdout and "tree depth" in r.stdout
