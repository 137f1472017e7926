"""`privacct report` end to end at a tiny scale: a row per private learner, accounted eps equal to
the accountant called directly, the three documents and the figures written."""

import json

import pytest

from privacct.algorithms.registry import learners
from privacct.audits.report import ReportScale, make_report, paper_configs
from privacct.accounting import all_epsilons
from privacct.cli import main
from privacct.log import MechanismLog


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    tabular = [n for n, s in learners().items() if s.family == "tabular" and "jdp" in s.privacy_models]
    doc = make_report(out, scale=ReportScale.tiny(), only=tabular)
    return out, doc, tabular


def test_report_has_a_row_per_setting_and_required_keys(tiny_report):
    out, doc, only = tiny_report
    data = json.loads((out / "report.json").read_text())
    assert len(data["rows"]) == len(paper_configs(only)) >= 2
    assert {r["algorithm"] for r in data["rows"]} == set(only)
    need = {"algorithm", "privacy_model", "claimed_epsilon", "claimed_delta", "accounted_epsilon",
            "audit_epsilon_lower_bound", "verdict"}
    for r in data["rows"]:
        assert need <= set(r)
        assert r["audit_epsilon_lower_bound"] >= 0
        assert r["commands"]["run"].startswith("privacct run ")


def test_paper_rows_account_like_the_accountants_called_directly(tiny_report):
    out, doc, _ = tiny_report
    for r in doc["rows"]:
        log = MechanismLog.load(out / "logs" / f"{r['algorithm']}-{r['privacy_model']}-eps{r['claimed_epsilon']:g}-paper.json")
        direct = all_epsilons(log, delta=r["claimed_delta"])
        assert r["accounted"] == pytest.approx(direct, rel=1e-12)
        assert r["accounted_epsilon"] == pytest.approx(min(direct.values()), rel=1e-12)
        if r["accounted_epsilon"] > r["claimed_epsilon"] * (1 + 1e-9):
            assert r["verdict"].startswith("FAILS") and r["causes"]


def test_documents_and_figures_written(tiny_report):
    out, doc, _ = tiny_report
    md = (out / "report.md").read_text()
    assert "| algorithm |" in md and "Assumptions" in md and "privacct run" in md
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == len(doc["figures"]) >= 2
    for f in doc["figures"]:
        assert (out / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_cli_rejects_unknown_learner(tmp_path, capsys):
    code = main(["report", "--out", str(tmp_path / "r"), "--only", "no-such-learner"])
    assert code == 2 and "--only" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_tight_column_names_the_counter_tight_chose():
    from privacct.audits.report import _fmt_ratios

    r = {"noise_ratio_tight_over_printed": {"counts": 0.5}, "tight_counter": "tree-honaker"}
    assert _fmt_ratios(r) == "0.5 (tree-honaker counter)"
    assert _fmt_ratios({"noise_ratio_tight_over_printed": {"a": 0.5, "b": 0.25}}) == "0.25-0.5"
