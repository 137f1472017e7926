"""privacct.explain: the budget breakdown (zCDP rho shares, pure eps shares, each family alone),
the dominant family, cause lines computed from the breakdown and the paper statements, only
under a failing verdict (a paper's composition rule among them: seed 004's Lemma 15), the one-line
headline, and the over-noising factor from the noise (never from a tie at eps = 0)."""

import json
import math

import pytest

from privacct.accounting import get_accountant
from privacct.calibrate import calibration_factor
from privacct.explain import explain, family_of, headline, short_reference
from privacct.log import Claim, MechanismLog, PaperStatement, ReleaseGroup, Sensitivity, Structure
from privacct.privacy_report import privacy_report


def _gauss(name, sigma, sens, count, paper=None):
    return ReleaseGroup(name, "gaussian", sigma, Sensitivity("l2", sens, "test"), Structure("repeated", count=count),
                        paper=paper)


def _log(groups, eps=1.0, delta=1e-5):
    return MechanismLog("t", "joint", tuple(groups), claim=None if eps is None else Claim(eps, delta))


def test_family_of_strips_the_step_index():
    assert [family_of(n) for n in ("gram_h3", "gram[h=2]", "y", "target h=4", "x-h1")] == ["gram", "gram", "y", "target", "x"]


def test_gaussian_breakdown_is_rho_shares_with_each_family_alone():
    log = _log([_gauss("a_h1", 2.0, 1.0, 4), _gauss("a_h2", 2.0, 1.0, 4), _gauss("b", 1.0, 1.0, 1)], eps=100.0)
    ex = explain(log)
    b = ex.breakdown
    assert b.measure == "rho"
    rho = {f.name: f.cost for f in b.families}
    assert rho["a"] == pytest.approx(2 * 4 * (1 / 2) ** 2 / 2) and rho["b"] == pytest.approx(0.5)   # count r^2 / 2
    assert sum(f.share for f in b.families) == pytest.approx(1.0)
    assert b.dominant_family.name == "a"
    alone = MechanismLog("t", "joint", log.release_groups[:2])
    assert b.families[0].epsilon_alone == pytest.approx(get_accountant("analytic-gaussian").epsilon(alone, delta=1e-5))
    one = MechanismLog("t", "joint", log.release_groups[2:])
    assert b.groups[2].epsilon_alone == pytest.approx(get_accountant("analytic-gaussian").epsilon(one, delta=1e-5))
    assert ex.holds and ex.causes == ()                     # a claim that holds has no cause


def test_pure_breakdown_is_eps_shares():
    g = ReleaseGroup("c", "laplace", 4.0, Sensitivity("l1", 2.0, "t"), Structure("repeated", count=3))
    ex = explain(MechanismLog("p", "local", (g,), claim=Claim(1.0, 0.0)))
    assert ex.breakdown.measure == "eps" and ex.breakdown.families[0].cost == pytest.approx(1.5)
    assert ex.verdict == "FAILS" and ex.accounted_epsilon == pytest.approx(1.5)


def test_causes_are_computed_from_printed_vs_derived_and_only_on_failure():
    paper = PaperStatement(sensitivity=1.0, per_user_count=2.0, equation="Eq. (9)")
    grp = _gauss("g", 3.0, 2.0, 4, paper)                       # derived: sensitivity 2, 4 releases
    ex = explain(_log([grp], eps=0.5))
    assert ex.verdict == "FAILS"
    kinds = {c.kind: c for c in ex.causes}
    assert kinds["sensitivity"].factor == pytest.approx((2.0 / 1.0) ** 2)            # squared on rho
    assert kinds["count"].factor == pytest.approx(4 / 2) and "Eq. (9)" in kinds["count"].text
    assert kinds["dominant"].family == "g"
    held = explain(_log([grp], eps=50.0))
    assert held.holds and held.causes == ()


def test_noise_cause_uses_the_papers_own_allotment():
    # the printed constants meet the claim by the paper's own argument, the derived sensitivity does not
    p = PaperStatement(sensitivity=1.0, equation="Lemma 1")
    log = _log([_gauss("u", 10.0, 1.0, 1, p), _gauss("v", 10.0, 3.0, 1, p)], eps=0.75, delta=1e-5)
    ex = explain(log)
    assert ex.breakdown.consistent and ex.verdict == "FAILS"
    noise = [c for c in ex.causes if c.kind == "noise"]
    assert [c.family for c in noise] == ["v"]
    share = ex.breakdown.share_of(next(f for f in ex.breakdown.families if f.name == "v"))
    assert noise[0].factor == pytest.approx(math.sqrt(next(f.cost for f in ex.breakdown.families if f.name == "v") / share))


def test_over_noising_factor_is_the_noise_ratio_not_a_tie_at_zero():
    from privacct.algorithms.registry import get_learner
    from privacct.algorithms.settings import as_paper_setting

    spec = get_learner("ldp-ucrl-vtr")
    s = as_paper_setting(spec.paper_settings[0])
    log = spec.build_log(s.run_config(spec.name))
    ex = explain(log)
    assert ex.accounted_epsilon == 0.0 and ex.trivial and ex.causes == ()
    assert ex.over_noising_factor == pytest.approx(14.70, abs=0.01)                 # issue 11: 14.70, not 11.69
    c = calibration_factor(log, epsilon=1.0, delta=0.1, accountant=ex.over_noising_accountant)
    assert ex.over_noising_factor == pytest.approx(1.0 / c, rel=1e-9)
    assert all(e > 0 for _, e in ex.trivial_at)


def test_seed004_gram_dominates_as_declared_and_depth_is_not_a_cause():
    from privacct.algorithms.registry import get_learner
    from privacct.algorithms.settings import as_paper_setting

    spec = get_learner("private-lsvi-ucb")
    log = spec.build_log(as_paper_setting(spec.paper_settings[0]).run_config(spec.name))
    ex = explain(log)
    fam = {f.name: f for f in ex.breakdown.families}
    assert ex.breakdown.dominant_family.name == "gram"
    assert fam["gram"].epsilon_alone == pytest.approx(3.37, abs=0.01) and fam["y"].epsilon_alone == pytest.approx(1.18, abs=0.01)
    gram = [g for g in ex.breakdown.groups if g.family == "gram"]
    assert all(g.cost < g.paper_cost for g in gram)             # each Gram group costs less as derived than as printed
    assert not any(c.kind in ("count", "sensitivity") and c.family == "gram" for c in ex.causes)


def test_verify_prints_causes_only_under_a_failing_verdict_and_json_has_the_explanation(tmp_path, capsys):
    from privacct.cli import main

    p = PaperStatement(sensitivity=1.0, equation="Eq. (1)")
    for eps, code_expected in ((0.2, 1), (50.0, 0)):
        path = tmp_path / f"l{eps}.json"
        _log([_gauss("g", 2.0, 2.0, 3, p)], eps=eps).save(path)
        assert main(["verify", str(path)]) == code_expected
        text = capsys.readouterr().out
        causes = [ln for ln in text.splitlines() if ln.startswith("cause:")]
        assert bool(causes) == (code_expected == 1)
        assert "budget breakdown" in text and "dominant:" in text
        assert main(["verify", str(path), "--json"]) == code_expected
        d = json.loads(capsys.readouterr().out)
        assert d["explanation"]["breakdown"]["dominant_family"] == "g"
        assert [c["text"] for c in d["explanation"]["causes"]] == d["causes"]


def test_report_of_a_log_without_claim_has_no_causes():
    rep = privacy_report(_log([_gauss("g", 2.0, 2.0, 3)], eps=None))
    assert rep.verdict == "no claim" and rep.causes == []


# --------------------------------------------------------------------------- the paper's composition rule
def test_a_paper_that_adds_sensitivities_is_costed_by_its_rule_and_named_as_the_cause():
    # 10 releases of sensitivity 3, sigma 4: the paper (Lemma-15 style) adds the sensitivities, 10 * 3 = 30,
    # and sets the variance 30 / rho: by its rule rho = 30 / 16; zCDP adds the squares: 10 * 9 / (2 * 16)
    rule = PaperStatement(sensitivity=3.0, per_user_count=10.0, equation="Sec. 9", composition="sensitivities-added",
                          composition_equation="Lemma 7")
    sq = PaperStatement(sensitivity=3.0, per_user_count=10.0, equation="Sec. 9")
    for sens, fails in ((1.0, False), (3.0, True)):             # zCDP of the same figures costs more than the rule
        ex = explain(_log([_gauss("y", 4.0, sens, 10, rule)], eps=0.05, delta=1e-5))
        g = ex.breakdown.groups[0]
        assert g.paper_cost == pytest.approx(30 / 16) and g.cost == pytest.approx(10 * sens ** 2 / 32)
        comp = [c for c in ex.causes if c.kind == "composition"]
        assert bool(comp) == fails
    (c,) = comp
    assert c.printed == pytest.approx(30.0) and c.derived == pytest.approx(90.0)
    assert c.factor == pytest.approx((90 / 32) / (30 / 16)) and c.equation == "Lemma 7"
    assert c.text.startswith("composition rule: Lemma 7 composes group 'y' by adding")
    assert "Lemma 7 adds sensitivities, not squares" in headline(ex)
    # without the rule the paper's argument is zCDP's: the derived sensitivity 4 is named instead
    ex = explain(_log([_gauss("y", 4.0, 4.0, 10, sq)], eps=0.05, delta=1e-5))
    assert [c.kind for c in ex.causes if c.kind in ("composition", "sensitivity")] == ["sensitivity"]
    assert ex.breakdown.groups[0].paper_cost == pytest.approx(10 * 9 / 32)
    # for Laplace noise adding sensitivities is basic composition: no composition cause
    lap_rule = PaperStatement(sensitivity=2.0, per_user_count=3.0, composition="sensitivities-added")
    lap = ReleaseGroup("c", "laplace", 4.0, Sensitivity("l1", 2.0, "t"), Structure("repeated", count=3), paper=lap_rule)
    ex = explain(MechanismLog("p", "local", (lap,), claim=Claim(1.0, 0.0)))
    assert ex.breakdown.groups[0].paper_cost == pytest.approx(ex.breakdown.groups[0].cost)
    assert not any(c.kind == "composition" for c in ex.causes)


def test_short_reference_is_the_first_step_a_statement_cites():
    assert short_reference("Lemma 5.1 / Cor. 5.2 and App. C: Lap(3H log K / eps)") == "Lemma 5.1"
    assert short_reference("App. E.2.1: sensitivity 2") == "App. E.2.1"
    assert short_reference("Lemma 14 (operator norm 2); Eq. (6)") == "Lemma 14"
    assert short_reference("no citation") == ""


def _numbers(text):
    """Every number a text states ("1993", "0.01041", "1.184"), not digits inside names ("h1", "rho_y")."""
    import re

    return [float(m) for m in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])", text)]


def _seed004_log():
    from privacct.algorithms.registry import get_learner
    from privacct.algorithms.settings import as_paper_setting

    spec = get_learner("private-lsvi-ucb")
    return spec.build_log(as_paper_setting(spec.paper_settings[0]).run_config(spec.name))


def test_seed004_cause_is_lemma_15s_rule_with_no_figure_the_paper_does_not_print():
    log = _seed004_log()
    H, n_max = log.params["H"], log.params["N_max_thm11"]
    y = log.group("y")
    # the statement records what Sec. 4.2 prints: Delta(y) <= 3H per update, at most N_max updates per step,
    # composed by Lemma 15's rule (sensitivities added); nothing back-solved from the noise
    assert y.paper.sensitivity == pytest.approx(3 * H) and y.paper.per_user_count == pytest.approx(H * n_max)
    assert y.paper.composition == "sensitivities-added" and short_reference(y.paper.composition_equation) == "Lemma 15"
    for name in ("A", "B"):                                        # the cause is the same under both readings
        ex = explain(log.under_reading(name))
        by_kind = {c.kind: c for c in ex.causes}
        assert "sensitivity" not in by_kind and "count" not in by_kind    # Sec. 4.2's 3H >= 2H + 2; N_max >= N_cap
        c = by_kind["composition"]
        assert c.family == "y" and "Lemma 15" in c.text and c.equation == y.paper.composition_equation
        g = next(s for s in ex.breakdown.groups if s.name == "y")
        # every figure of the cause is printed (the statement's figures and text) or computed by privacct from them
        # and the derived group (sums, costs, factor); a figure back-solved from the noise would be neither
        printed = {y.paper.sensitivity, y.paper.per_user_count, *_numbers(y.paper.equation),
                   *_numbers(y.paper.composition_equation)}
        computed = {y.sensitivity.value, y.per_user_count, c.printed, c.derived, c.factor, g.paper_cost, g.cost}
        allowed = printed | computed
        for x in _numbers(c.text):
            assert any(math.isclose(x, a, rel_tol=5e-4) or f"{a:.4g}" == f"{x:.4g}" or f"{a:.3g}" == f"{x:.3g}"
                       or round(a) == x for a in allowed), (x, c.text)
        assert c.printed == pytest.approx(y.paper.sensitivity * y.paper.per_user_count)   # sum of printed sensitivities
        assert c.derived == pytest.approx(y.per_user_count * y.sensitivity.value ** 2)    # sum of derived squares
        # (H+1)^2 rho / (3H) (times N_cap / N_max) against the rho/2 of its rule
        assert c.factor == pytest.approx(2 * (H + 1) ** 2 / (3 * H) * y.per_user_count / (H * n_max), rel=1e-6)
    # under reading B, the one the proof supports, the y releases are the whole cause and the headline says so
    line = headline(explain(log.under_reading("B")))
    assert line.startswith("y alone 1.184 > 1: Lemma 15 adds sensitivities, not squares")
