"""privacct.accounting.verdict: the verdict rule in one place, from the accountants' figures alone
(docs/accounting.md#verdict): the rule itself (pure), what the verdict path computes (every accountant
once per log decided; no breakdown, no calibration), the reading it leads with, and ``privacct verify``
exiting with it while accounting each log it shows once. The one "tightest" rule
(privacct.accounting.tightest_of) is what every figure-picking place reads."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path

import pytest

import privacct.accounting as A
import privacct.calibrate as C
import privacct.explain as E
from privacct.accounting import Figures, figures, tightest_epsilon, tightest_of
from privacct.accounting.verdict import (VERDICT_RTOL, ClaimVerdict, claim_verdict, decide, lead_reading, verdict,
                                         within)
from privacct.errors import PrivacctError, UnsupportedLogError
from privacct.log import Claim, MechanismLog, ReleaseGroup, Sensitivity, Structure
from privacct.log_readings import GroupOverride, Reading

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "privacct" / "examples").glob("*.json"))


def _gauss_log(sigma=2.0, eps=1.0, delta=1e-5, readings=()):
    g = ReleaseGroup("g", "gaussian", sigma, Sensitivity("l2", 1.0, "t"), Structure("repeated", count=4))
    return MechanismLog("r", "joint", (g,), claim=None if eps is None else Claim(eps, delta), readings=readings)


def _pure_log(eps=1.0):
    g = ReleaseGroup("c", "laplace", 4.0, Sensitivity("l1", 2.0, "t"), Structure("repeated", count=3))   # eps 1.5
    return MechanismLog("p", "local", (g,), claim=None if eps is None else Claim(eps, 0.0))


def _two_readings():
    """A declared log that holds (sigma 8) with a supported reading that fails (sigma 0.5) and one that does not."""
    return _gauss_log(sigma=8.0, readings=(
        Reading("quiet", overrides=(GroupOverride("g", noise_scale=20.0),)),
        Reading("loud", supported_by="Lemma 1", overrides=(GroupOverride("g", noise_scale=0.5),))))


# --------------------------------------------------------------------------- the rule, pure
def test_the_rule_is_the_tightest_figure_against_the_claim_up_to_the_relative_tolerance():
    f = Figures(0.0, (("basic", 2.0), ("advanced", 1.0), ("zcdp", 1.0)))
    assert f.tightest == "advanced" and f.epsilon == 1.0          # the smallest; on a tie the first in order
    assert decide(f, 1.0).holds is True
    assert decide(f, 1.0 / (1 + 0.5 * VERDICT_RTOL)).holds is True  # within the tolerance: rounding of an exact formula
    assert decide(f, 1.0 / (1 + 2 * VERDICT_RTOL)).holds is False   # beyond it: FAILS
    assert decide(f, 0.5).text == "FAILS" and decide(f, 3.0).text == "holds" and decide(f, None).text == "no claim"
    assert within(1.0, 1.0) and not within(1.0 + 3 * VERDICT_RTOL, 1.0)
    v = decide(f, 1.0, log_name="x")
    assert (v.log_name, v.accounted_epsilon, v.tightest, v.delta) == ("x", 1.0, "advanced", 0.0)


def test_no_figure_fails_a_claim_and_refuses_a_log_without_one():
    f = Figures(0.0, (), (("zcdp", "needs delta > 0"), ("rdp", "needs delta > 0")))
    v = decide(f, 1.0)
    assert v.holds is False and v.uncertified and v.accounted_epsilon is None and v.tightest is None
    with pytest.raises(UnsupportedLogError, match=r"no accountant applies at delta=0: zcdp: needs delta > 0; rdp"):
        decide(f, None)
    with pytest.raises(UnsupportedLogError, match="no accountant applies"):
        decide(Figures(0.0, ()), 1.0)


def test_a_claim_met_at_eps_zero_is_trivial():
    assert decide(Figures(0.1, (("basic", 0.0),)), 1.0).trivial
    assert not decide(Figures(0.1, (("basic", 1e-3),)), 1.0).trivial
    assert not decide(Figures(0.1, (("basic", 0.0),)), None).trivial     # no claim, nothing holds


def test_verdict_of_a_log_is_its_figures_decided():
    log = _pure_log(eps=1.0)
    v = verdict(log)
    assert v.figures == figures(log, delta=0.0) and v.accounted_epsilon == pytest.approx(1.5) and v.text == "FAILS"
    assert verdict(_pure_log(eps=2.0)).holds is True
    gauss_at_zero = verdict(_gauss_log(delta=0.0))                       # Gaussian releases at delta = 0
    assert gauss_at_zero.uncertified and gauss_at_zero.text == "FAILS"
    with pytest.raises(UnsupportedLogError):
        verdict(_gauss_log(eps=None), delta=0.0)
    with pytest.raises(PrivacctError, match="delta"):
        verdict(log, delta=1.5)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_verdict_is_the_one_the_report_shows(path):
    from privacct.privacy_report import privacy_report

    log = MechanismLog.load(path)
    v, rep = verdict(log), privacy_report(log, readings=False)
    assert rep.decision == v
    assert (rep.verdict, rep.tightest, rep.tightest_epsilon, rep.holds) == (v.text, v.tightest, v.accounted_epsilon, v.holds)


# --------------------------------------------------------------------------- the verdict path computes only what it needs
@pytest.fixture
def counted(monkeypatch):
    """Counts every accountant sweep (all_epsilons) and the explanation's steps; the verdict path may use none of
    the latter."""
    n: Counter = Counter()
    n.sweeps = Counter()         # all_epsilons per set of release groups: a log accounted twice shows here

    def counting(mod, name):
        f = getattr(mod, name)

        def g(*a, **k):
            n[name] += 1
            if name == "all_epsilons":
                n.sweeps[a[0].release_groups] += 1
            return f(*a, **k)
        monkeypatch.setattr(mod, name, g)

    counting(A, "all_epsilons")
    for name in ("breakdown", "least_noise", "causes", "epsilon_alone"):
        counting(E, name)
    counting(C, "calibration_factor")
    return n


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_verdict_path_runs_every_accountant_once_and_nothing_else(path, counted):
    log = MechanismLog.load(path)
    cv = claim_verdict(log)
    assert cv.lead is cv.declared and cv.lead_reading is None
    assert counted == Counter(all_epsilons=1)                # no breakdown, no calibration, no causes


def test_the_verdict_path_with_a_lead_reading_decides_two_logs(counted):
    cv = claim_verdict(_two_readings())
    assert cv.lead_reading == "loud" and cv.lead.text == "FAILS" and cv.declared.text == "holds"
    assert not cv.holds                      # conservative: either failing fails
    assert counted == Counter(all_epsilons=2)


def test_the_claim_holds_only_under_the_lead_reading_and_as_declared():
    held, failed = verdict(_gauss_log(sigma=50.0)), verdict(_gauss_log(sigma=0.5))
    assert held.holds and failed.holds is False
    assert ClaimVerdict(None, held, held).holds
    assert not ClaimVerdict("x", held, failed).holds and not ClaimVerdict("x", failed, held).holds


def test_the_lead_reading_is_the_first_the_proof_supports_when_it_changes_the_log():
    from privacct.readings import account_readings

    over = (GroupOverride("g", noise_scale=0.5),)
    cases = {
        (): None,
        (Reading("a", overrides=over),): None,                                               # none supported
        (Reading("a", overrides=over), Reading("b", supported_by="Eq. 1", overrides=over)): "b",
        (Reading("a", supported_by="Eq. 1"), Reading("b", supported_by="Eq. 2", overrides=over)): None,   # declared first
        (Reading("a", supported_by="Eq. 1", overrides=over), Reading("b", supported_by="Eq. 2")): "a",
    }
    for readings, lead in cases.items():
        log = _gauss_log(readings=readings)
        assert lead_reading(log) == lead
        summary = account_readings(log)
        if summary is not None:       # the report's rows lead with the same reading (privacct.readings reads this rule)
            assert summary.lead_reading == lead
            assert (None if summary.lead.declared else summary.lead.name) == lead
            # ... and show the figures verify decides from: the lead row's accounted eps is the lead verdict's
            assert summary.lead.explanation.accounted_epsilon == claim_verdict(log).lead.accounted_epsilon


# --------------------------------------------------------------------------- privacct verify
def _verify(argv):
    from privacct.cli import _dispatch, build_parser

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = _dispatch(build_parser(plugins=False).parse_args(["verify", *argv]))
    return code, out.getvalue()


def test_verify_exits_with_the_claim_verdict_and_accounts_each_log_once(tmp_path, counted):
    log = _two_readings()
    path = tmp_path / "r.json"
    log.save(path)
    code, out = _verify([str(path)])
    assert code == 1 and "verdict: FAILS" in out.splitlines()
    # three logs shown (declared, quiet, loud): every accountant once each, one explanation each; the lead
    # reading's report is the readings table's explanation, not a second one
    shown = [log.release_groups] + [log.under_reading(r).release_groups for r in ("quiet", "loud")]
    assert sorted(counted.sweeps.values()) == [1, 1, 1] and set(counted.sweeps) == set(shown)
    assert counted["breakdown"] == 3 and counted["least_noise"] == 3
    counted.clear()
    assert code == (0 if claim_verdict(log).holds else 1) and counted["breakdown"] == 0


def test_verify_fails_a_claim_that_holds_under_the_lead_reading_but_not_as_declared(tmp_path):
    log = _gauss_log(sigma=0.5, readings=(Reading("quiet", supported_by="Lemma 1",
                                                  overrides=(GroupOverride("g", noise_scale=20.0),)),))
    path = tmp_path / "r.json"
    log.save(path)
    code, out = _verify([str(path)])
    cv = claim_verdict(log)
    assert cv.lead.holds and cv.declared.holds is False and not cv.holds
    assert code == 1 and "verdict: holds" in out.splitlines()       # the lead's verdict line; the exit is conservative


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_verify_of_every_example_exits_with_the_verdict_path_s_status(path, counted):
    log = MechanismLog.load(path)
    code, out = _verify([str(path)])
    # the log: every accountant once (its groups and families alone are the breakdown's), one explanation
    assert counted.sweeps[log.release_groups] == 1 and max(counted.sweeps.values()) == 1
    assert counted["breakdown"] == 1 and counted["least_noise"] == 1
    cv = claim_verdict(log)
    assert code == (0 if cv.holds else 1) and f"verdict: {cv.lead.text}" in out.splitlines()


def test_verify_json_reports_the_lead_and_the_declared_verdicts(tmp_path):
    path = tmp_path / "r.json"
    _two_readings().save(path)
    code, out = _verify([str(path), "--json"])
    d = json.loads(out)
    cv = claim_verdict(_two_readings())
    assert code == 1 and not cv.holds
    assert d["lead_reading"]["name"] == cv.lead_reading and d["verdict"] == cv.lead.text
    assert d["accounted_epsilon"] == cv.lead.accounted_epsilon and d["declared"]["holds"] is cv.declared.holds


# --------------------------------------------------------------------------- one "tightest" rule
def test_every_figure_picking_place_reads_the_one_tightest_rule(monkeypatch, tmp_path):
    """Swap the rule for 'the largest figure': every place that names the tightest must follow it (a hand-written
    min loop left anywhere would not)."""
    from privacct.privacy_report import privacy_report

    log = _gauss_log(sigma=10.0, eps=1000.0, delta=1e-6)
    mixed = MechanismLog("m", "joint", (ReleaseGroup("c", "laplace", 4.0, Sensitivity("l1", 2.0, "t"),
                                                     Structure("repeated", count=3)),) + log.release_groups)
    eps, eps_mixed = A.all_epsilons(log, delta=1e-6), A.all_epsilons(mixed, delta=1e-6)
    largest, largest_mixed = max(eps, key=eps.__getitem__), max(eps_mixed, key=eps_mixed.__getitem__)
    assert tightest_epsilon(log, delta=1e-6)[0] == "analytic-gaussian" != largest
    monkeypatch.setattr(A, "tightest_of", lambda e: max(e, key=e.__getitem__) if e else None)
    assert tightest_epsilon(log, delta=1e-6) == (largest, eps[largest])
    assert figures(log, delta=1e-6).tightest == largest and verdict(log).tightest == largest
    ex = E.explain(log)
    assert ex.tightest == largest and ex.accounted_epsilon == eps[largest]
    assert E.epsilon_alone(mixed, 1e-6) == (eps_mixed[largest_mixed], largest_mixed)      # a family alone: the same rule
    table = privacy_report(log).to_text().splitlines()
    assert "<- tightest" in next(ln for ln in table if ln.split()[:1] == [largest])
    from privacct.cli import _dispatch, build_parser

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _dispatch(build_parser(plugins=False).parse_args(
            ["account", "--mechanism", "gaussian", "--noise-scale", "10", "--sensitivity", "1", "--count", "4",
             "--delta", "1e-6", "--json"]))
    assert json.loads(out.getvalue())["tightest"] == largest


def test_tightest_of_takes_the_smallest_and_the_first_on_a_tie():
    assert tightest_of({"a": 2.0, "b": 1.0, "c": 1.0}) == "b"
    assert tightest_of({}) is None


# --------------------------------------------------------------------------- explain is a layer on the verdict
def test_explain_reuses_the_verdict_s_figures(counted):
    log = _pure_log()                    # one group: the group, its family and the whole log are one set of groups
    v = verdict(log)
    counted.clear()
    ex = E.explain(log, decision=v)
    assert ex.decision is v and counted["all_epsilons"] == 0        # nothing accounted again
    assert ex.breakdown.families[0].epsilon_alone == v.accounted_epsilon
    assert ex.to_dict() == E.explain(log).to_dict()
    with pytest.raises(PrivacctError, match="decision"):
        E.explain(_pure_log(eps=2.0), decision=v)                    # another claim
    with pytest.raises(PrivacctError, match="decision"):
        E.explain(log, delta=1e-3, decision=v)                      # another delta


def test_breakdown_accounts_each_set_of_groups_alone_once(counted):
    from privacct.accounting.verdict import verdict as decide_log

    groups = tuple(ReleaseGroup(n, "laplace", 4.0, Sensitivity("l1", 1.0, "t"), Structure("repeated", count=2))
                   for n in ("a_h1", "a_h2", "b"))
    log = MechanismLog("f", "joint", groups, claim=Claim(1.0, 0.0))
    v = decide_log(log)
    counted.clear()
    E.explain(log, decision=v)
    # groups a_h1, a_h2, b alone; family a (two groups); family b is group b: four sets, each accounted once
    assert counted["epsilon_alone"] == 4 and counted["all_epsilons"] == 4
