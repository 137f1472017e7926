"""PrivacyReport verdicts and causes; the privacct command line (exit codes, JSON keys, errors)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from privacct.accounting import all_epsilons
from privacct.cli import main
from privacct.log import MechanismLog
from privacct.report import privacy_report

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
    code = main(args)
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
    assert code == 2 and "cannot read" in err


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


def test_cli_schema_is_json_schema(capsys):
    import jsonschema

    code, out, _ = run(["schema"], capsys)
    schema = json.loads(out)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(json.loads((EX / "gaussian-tree.json").read_text()), schema)


def test_console_script_default_verify():
    """The README's main job: `privacct verify` with no argument verifies the shipped example."""
    r = subprocess.run([sys.executable, "-m", "privacct.cli", "verify"], capture_output=True, text=True)
    assert r.returncode == 1 and "verdict: FAILS" in r.stdout and "tree depth" in r.stdout
