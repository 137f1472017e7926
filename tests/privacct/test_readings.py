"""Named readings of an ambiguous paper setting: carried by a log (strict JSON, schema), applied as
overrides, each accounted with its verdict and dominant family, the proof-supported one named, and
the verdict that holds in every reading."""

import json

import pytest

from privacct.errors import PrivacctError
from privacct.log import Claim, MechanismLog, ReleaseGroup, Sensitivity, Structure
from privacct.log_readings import GroupOverride, Reading
from privacct.readings import AS_DECLARED, account_readings


def _log(readings=(), sigma=2.0):
    g = ReleaseGroup("g", "gaussian", sigma, Sensitivity("l2", 1.0, "t"), Structure("repeated", count=4))
    return MechanismLog("r", "joint", (g,), claim=Claim(1.0, 1e-5), readings=readings)


def test_readings_round_trip_and_validate_against_the_schema():
    import jsonschema

    from privacct.schema import log_schema

    log = _log((Reading("small noise", "sigma read as 1", overrides=(GroupOverride("g", noise_scale=1.0),)),
                Reading("as printed", "the declared log", supported_by="Eq. (3)")))
    d = json.loads(log.to_json())
    jsonschema.Draft202012Validator(log_schema()).validate(d)
    back = MechanismLog.from_json(log.to_json())
    assert back == log and back.under_reading("small noise").group("g").noise_scale == 1.0


@pytest.mark.parametrize("bad, field", [
    ((Reading("x", overrides=(GroupOverride("nope", noise_scale=1.0),)),), "group"),
    ((Reading("x"), Reading("x")), "unique"),
])
def test_bad_readings_are_refused_with_the_field_named(bad, field):
    with pytest.raises(PrivacctError, match=field):
        _log(bad)


def test_an_override_that_changes_nothing_is_refused():
    with pytest.raises(PrivacctError, match="changes nothing"):
        GroupOverride("g")


def test_each_reading_accounted_and_the_verdict_in_every_reading():
    log = _log((Reading("quiet", overrides=(GroupOverride("g", noise_scale=50.0),)),
                Reading("loud", supported_by="Lemma 2", overrides=(GroupOverride("g", noise_scale=0.5),))))
    s = account_readings(log)
    names = [r.name for r in s.results]
    assert names == [AS_DECLARED, "quiet", "loud"]           # the declared log is shown when no reading is it
    v = {r.name: r.verdict for r in s.results}
    assert v["quiet"] == "holds" and v["loud"] == "FAILS"
    assert s.verdict_in_every_reading == "depends on the reading"
    assert [r.name for r in s.supported] == ["loud"]
    assert account_readings(_log()) is None


def test_seed002_four_readings_fail_in_every_reading():
    from privacct.algorithms.registry import get_learner
    from privacct.algorithms.settings import as_paper_setting

    spec = get_learner("ucb-vi")
    s = next(as_paper_setting(x) for x in spec.paper_settings if as_paper_setting(x).privacy == "jdp"
             and as_paper_setting(x).epsilon == 1.0)
    summary = account_readings(spec.build_log(s.run_config("ucb-vi")))
    eps = {r.name: r.explanation.accounted_epsilon for r in summary.results}
    assert len(eps) == 4 and summary.verdict_in_every_reading == "FAILS"
    assert eps["ln K, any two (6H)"] == pytest.approx(3.03, abs=0.01)          # issue 11's independent figures
    assert eps["log2 K, any two (6H)"] == pytest.approx(2.10, abs=0.01)
    assert [r.name for r in summary.supported] == ["log2 K, valid pair (6H-3)"]
    assert eps["log2 K, valid pair (6H-3)"] < eps["ln K, valid pair (6H-3)"]


def test_verify_refuses_a_bad_reading_with_one_line_and_exit_2(tmp_path, cli, cli_contract):
    d = json.loads(_log().to_json())
    d["readings"] = [{"name": "x", "overrides": [{"group": "nope", "noise_scale": 1.0}]}]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    res = cli(["verify", str(path)])
    cli_contract(res)
    assert res.code == 2 and "readings[0].overrides[0].group" in res.err


def test_verify_shows_every_reading_and_leads_with_the_one_the_proof_supports(tmp_path, cli):
    """Like the report's rows, verify leads with the reading the paper's proof supports: its figures, verdict,
    causes and exit status; the declared log beside it (here the declared log holds and the proof's reading
    fails)."""
    log = _log((Reading("loud", supported_by="Lemma 2", overrides=(GroupOverride("g", noise_scale=0.5),)),), sigma=50.0)
    path = tmp_path / "r.json"
    log.save(path)
    res = cli(["verify", str(path)])
    assert res.code == 1                                       # the proof's reading fails
    lines = res.out.splitlines()
    assert lines[2].startswith("reading: loud, the one the paper's own proof supports") and "holds" in lines[2]
    assert "verdict in every reading: depends on the reading" in res.out
    assert "the paper's own proof supports reading loud: Lemma 2" in res.out
    assert "verdict: FAILS" in lines and any(line.startswith("cause:") for line in lines)
    scale = next(line for line in lines if line.startswith("  g "))
    assert " 0.5 " in scale                                     # the groups under the lead reading
    d = json.loads(cli(["verify", str(path), "--json"]).out)
    assert d["lead_reading"]["name"] == "loud" and d["verdict"] == "FAILS" and d["holds"] is False
    assert d["declared"]["verdict"] == "holds" and d["declared"]["reading"] == AS_DECLARED


def test_verify_without_a_supported_reading_leads_with_the_declared_log(tmp_path, cli):
    log = _log((Reading("loud", overrides=(GroupOverride("g", noise_scale=0.5),)),), sigma=50.0)
    path = tmp_path / "r.json"
    log.save(path)
    res = cli(["verify", str(path)])
    assert res.code == 0 and not res.out.splitlines()[2].startswith("reading:")
    assert "the paper's own proof supports none of these readings" in res.out
    assert not any(line.startswith("cause:") for line in res.out.splitlines())
    assert "lead_reading" not in json.loads(cli(["verify", str(path), "--json"]).out)


def test_verify_of_the_seed004_log_leads_with_reading_b_as_the_report_does(tmp_path, cli):
    """Seed 004's paper log: the report leads with reading B (1.287), reading A (3.654, the log as declared)
    beside it; verify the same, from the same choice (ReadingsSummary.lead)."""
    from privacct.algorithms.registry import get_learner
    from privacct.algorithms.settings import as_paper_setting

    spec = get_learner("private-lsvi-ucb")
    setting = as_paper_setting(spec.paper_settings[0])
    log = spec.build_log(setting.run_config("private-lsvi-ucb"))
    summary = account_readings(log)
    assert summary.lead.name == "B" and summary.declared.name == "A"
    path = tmp_path / "seed004.json"
    log.save(path)
    res = cli(["verify", str(path)])
    assert res.code == 1
    lines = res.out.splitlines()
    assert lines[2].startswith("reading: B, the one the paper's own proof supports")
    assert "reading A, the log as declared: the noise the learner runs: accounted eps 3.654, FAILS" in lines[2]
    tightest = next(line for line in lines if "<- tightest" in line)
    assert float(tightest.split()[1]) == pytest.approx(1.287, abs=5e-4)
    assert "dominant: y," in res.out
    d = json.loads(cli(["verify", str(path), "--json"]).out)
    assert d["accounted_epsilon"] == pytest.approx(1.287, abs=5e-4) and d["lead_reading"]["name"] == "B"
    assert d["declared"]["accounted_epsilon"] == pytest.approx(3.654, abs=5e-4)


def test_a_reading_may_state_the_papers_composition_rule(tmp_path, cli):
    import jsonschema

    from privacct.log import PaperStatement
    from privacct.schema import log_schema

    # g: 4 releases of sensitivity 1 at sigma 2. Read as zCDP composition the paper's own argument is
    # 4 / 8 = 0.5 rho; read literally as "the sensitivities added, the variance that sum / rho", 4 / 4 = 1
    plain = PaperStatement(sensitivity=1.0, per_user_count=4.0, equation="Sec. 3")
    rule = PaperStatement(sensitivity=1.0, per_user_count=4.0, equation="Sec. 3", composition="sensitivities-added",
                          composition_equation="Lemma 9")
    g = ReleaseGroup("g", "gaussian", 2.0, Sensitivity("l2", 3.0, "t"), Structure("repeated", count=4), paper=plain)
    log = MechanismLog("r", "joint", (g,), claim=Claim(1.0, 1e-5),
                       readings=(Reading("Lemma 9 literally", supported_by="Lemma 9", overrides=(GroupOverride("g", paper=rule),)),))
    jsonschema.Draft202012Validator(log_schema()).validate(json.loads(log.to_json()))
    assert MechanismLog.from_json(log.to_json()) == log
    s = account_readings(log)
    by = {r.name: r.explanation for r in s.results}
    assert by[AS_DECLARED].breakdown.groups[0].paper_cost == pytest.approx(0.5)
    assert by["Lemma 9 literally"].breakdown.groups[0].paper_cost == pytest.approx(1.0)
    assert [c.kind for c in by[AS_DECLARED].causes if c.kind in ("sensitivity", "composition")] == ["sensitivity"]
    assert "composition" in [c.kind for c in by["Lemma 9 literally"].causes]
    path = tmp_path / "c.json"
    log.save(path)
    res = cli(["verify", str(path)])
    assert res.code == 1 and "composition rule: Lemma 9 composes group 'g'" in res.out
