"""Accountants: one contract every accountant passes, golden numbers, orderings, identities."""

import math

import dp_accounting
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacct.accounting import ACCOUNTANTS, all_epsilons, delta as delta_of, get_accountant, tightest_epsilon
from privacct.accounting import formulas as F
from privacct.errors import NumericalError, PrivacctError, UnsupportedLogError
from privacct.log import MechanismLog, ReleaseGroup, Sensitivity, Structure


def one(mech, scale, sens=1.0, structure=None, name="g"):
    norm = "l1" if mech == "laplace" else "l2"
    return ReleaseGroup(name, mech, scale, Sensitivity(norm, sens), structure or Structure.single())


def mk(*groups, neighbouring="replace-one-user"):
    return MechanismLog("t", "joint", tuple(groups), neighbouring=neighbouring)


GAUSS = mk(one("gaussian", 10.0, structure=Structure.repeated(1000)))
LAP = mk(one("laplace", 10.0, structure=Structure.repeated(100)))
MIXED = mk(one("gaussian", 5.0, structure=Structure.tree(1000)), one("laplace", 30.0, structure=Structure.repeated(3), name="l"))
TINY = mk(one("gaussian", 1e12, structure=Structure.repeated(10**12)), one("laplace", 1e15, structure=Structure.tree(2**53), name="l"))
HUGE_COUNT = mk(one("laplace", 3e6, structure=Structure.repeated(10**12)))
BLT = Structure.factorized("blt", 5000, {"buffers": [{"theta": 0.999, "omega": 0.05}, {"theta": 0.9, "omega": 0.2}]})
FACT_GAUSS = mk(one("gaussian", 20.0, structure=Structure.factorized("sqrt-toeplitz", 10**4)),
                one("symmetric-gaussian-matrix", 30.0, structure=BLT, name="m"))
FACT_LAP = mk(one("laplace", 40.0, structure=Structure.factorized("tree-honaker", 1000)),
              one("laplace", 25.0, structure=Structure.factorized("sqrt-toeplitz", 4), name="l"))
LOGS = {"gauss": GAUSS, "laplace": LAP, "mixed": MIXED, "tiny": TINY, "huge-count": HUGE_COUNT,
        "factorized-gauss": FACT_GAUSS, "factorized-laplace": FACT_LAP}


APPLICABLE = [(n, w) for n in ACCOUNTANTS for w in LOGS if get_accountant(n).supports(LOGS[w], delta=1e-6)]


def test_every_accountant_applies_to_some_log():
    assert {n for n, _ in APPLICABLE} == set(ACCOUNTANTS)


@pytest.mark.parametrize("name,which", APPLICABLE)
class TestAccountantContract:
    """What every accountant must do (the dp_accounting lesson: one shared contract)."""

    def test_supports_is_a_dry_run(self, name, which):
        acc, log = get_accountant(name), LOGS[which]
        for d in (0.0, 1e-6):
            if acc.supports(log, delta=d):
                assert math.isfinite(acc.epsilon(log, delta=d))
            else:
                with pytest.raises(UnsupportedLogError):
                    acc.epsilon(log, delta=d)

    def test_epsilon_nonnegative_finite_and_monotone_in_delta(self, name, which):
        acc, log = get_accountant(name), LOGS[which]
        e = [acc.epsilon(log, delta=d) for d in (1e-9, 1e-6, 1e-3)]
        assert all(x >= 0 and math.isfinite(x) for x in e)
        assert e[0] >= e[1] >= e[2]

    def test_monotone_in_noise_and_count(self, name, which):
        acc, log = get_accountant(name), LOGS[which]
        e = acc.epsilon(log, delta=1e-6)
        assert acc.epsilon(log.scaled_noise(1.5), delta=1e-6) <= e
        more = log.replace_groups([g.with_structure(Structure.repeated(g.per_user_count + 5)) for g in log.release_groups])
        assert acc.epsilon(more, delta=1e-6) >= e

    def test_not_below_the_exact_or_tight_figure(self, name, which):
        """Every accountant is an upper bound: never below PLD's pessimistic figure minus its error
        (the exact references are in test_reference_mpmath.py)."""
        acc, log = get_accountant(name), LOGS[which]
        if not get_accountant("pld").supports(log, delta=1e-6):
            return
        from privacct.accounting import releases

        ref = get_accountant("pld").epsilon(log, delta=1e-6) - get_accountant("pld").interval(releases(log))  # its grid margin
        assert acc.epsilon(log, delta=1e-6) >= ref - 2e-3

    def test_delta_inverts_epsilon(self, name, which):
        acc, log = get_accountant(name), LOGS[which]
        e = acc.epsilon(log, delta=1e-6)
        d = acc.delta(log, epsilon=e * 1.001 + 1e-9)
        assert 0.0 <= d <= 1e-6 * 1.01

    def test_bad_delta_named(self, name, which):
        with pytest.raises(PrivacctError, match="delta"):
            get_accountant(name).epsilon(LOGS[which], delta=1.5)

    def test_numerics_are_keyword_only(self, name, which):
        with pytest.raises(TypeError):
            get_accountant(name).epsilon(LOGS[which], 1e-6)  # type: ignore[misc]

    def test_reasons_for_any_noise_are_reasons(self, name, which):
        acc, log = get_accountant(name), LOGS[which]
        for d in (0.0, 1e-6):
            if acc.why_not_for_any_noise(log, delta=d) is not None:
                assert acc.why_not(log, delta=d) is not None
                assert acc.why_not(log.scaled_noise(1e6), delta=d) is not None

    def test_closed_form_calibration_is_none_or_the_least_factor(self, name, which):
        """Each accountant answers its own closed-form calibration (docs/accounting.md#calibration): None, or the
        common noise factor c at which its epsilon is the budget -- met at c or one 2^-40 nudge above it (what
        calibration tries before its lattice search), missed 1e-6 below; None whenever no noise can make it apply."""
        acc, log = get_accountant(name), LOGS[which]
        for eps, d in ((1.0, 0.0), (0.5, 1e-6), (4.0, 1e-3)):
            c = acc.closed_form_factor(log, epsilon=eps, delta=d)
            if acc.why_not_for_any_noise(log, delta=d) is not None:
                assert c is None
            if c is None:
                continue
            assert math.isfinite(c) and c > 0
            assert min(acc.epsilon(log.scaled_noise(x), delta=d) for x in (c, c * (1 + 2.0**-40))) <= eps
            assert acc.epsilon(log.scaled_noise(c * (1 - 1e-6)), delta=d) > eps

    def test_nothing_reaches_stderr(self, name, which, capfd):
        import warnings

        acc, log = get_accountant(name), LOGS[which]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for d in (1e-300, 1e-6, 0.5):
                for f in (1e-150, 1.0, 1e150):
                    try:
                        acc.epsilon(log.scaled_noise(f), delta=d)
                    except PrivacctError:
                        pass
        assert caught == [] and capfd.readouterr().err == ""


def test_the_closed_forms_are_the_documented_ones():
    """basic (pure logs), zCDP (delta > 0) and the analytic Gaussian (Gaussian logs, delta > 0) answer a closed-form
    calibration (docs/accounting.md#calibration); the others have none and say so with None."""
    have = {(n, w, d) for n in ACCOUNTANTS for w in LOGS for d in (0.0, 1e-6)
            if get_accountant(n).closed_form_factor(LOGS[w], epsilon=1.0, delta=d) is not None}
    pure = {"laplace", "huge-count", "factorized-laplace"}
    gaussian = {"gauss", "factorized-gauss"}
    assert have == ({("basic", w, d) for w in pure for d in (0.0, 1e-6)} | {("zcdp", w, 1e-6) for w in LOGS}
                    | {("analytic-gaussian", w, 1e-6) for w in gaussian})
    with pytest.raises(PrivacctError, match="epsilon"):
        get_accountant("zcdp").closed_form_factor(GAUSS, epsilon=0.0, delta=1e-6)


# --------------------------------------------------------------------------- golden numbers
def test_golden_gaussian_1000_compositions():
    """Notes 1.4: 1000 x Gaussian(z=10), delta=1e-6: exact 19.423656, RDP 20.551992, BS16 21.622581."""
    e = all_epsilons(GAUSS, delta=1e-6)
    assert e["analytic-gaussian"] == pytest.approx(19.423656, abs=2e-6)
    assert 19.423656 <= e["pld"] <= 19.423656 + 1e-3  # + one grid interval (pld.GRID_MARGIN)
    assert e["pld"] >= e["analytic-gaussian"] - 1e-9  # pessimistic
    assert e["rdp"] == pytest.approx(20.551992, abs=1e-5)
    assert e["zcdp"] == pytest.approx(20.551949, abs=1e-4)
    assert F.zcdp_epsilon_bs16(5.0, 1e-6) == pytest.approx(21.622581, abs=1e-6)


@pytest.mark.parametrize("rho,bs,cks", [(0.005, 0.5307, 0.4299), (0.05, 1.7123, 1.4716), (0.5, 5.7565, 5.2215), (5, 21.6226, 20.5519)])
def test_golden_zcdp_conversions(rho, bs, cks):
    assert F.zcdp_epsilon_bs16(rho, 1e-6) == pytest.approx(bs, abs=1e-4)
    assert F.zcdp_epsilon_cks20(rho, 1e-6) == pytest.approx(cks, abs=1e-4)


def test_golden_analytic_gaussian_balle_wang():
    assert F.gaussian_delta(1.0, 1.0) == pytest.approx(0.1269367375, abs=1e-10)
    assert F.gaussian_epsilon(1e-6, 1 / 4.2246789) == pytest.approx(1.0, abs=1e-6)
    assert F.gaussian_epsilon(1e-6, 2.0) == pytest.approx(dp_accounting.get_epsilon_gaussian(0.5, 1e-6), rel=1e-6)


def test_classical_gaussian_formula_is_not_private_at_large_eps():
    """Regression (docs/accounting.md#gaussian-mechanism): sigma = sqrt(2 ln(1.25/delta))/eps at (10, 1e-5) has delta(10) = 2.27e-5."""
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5)) / 10
    assert F.gaussian_delta(10.0, 1 / sigma) == pytest.approx(2.27e-5, rel=0.01)
    log = mk(one("gaussian", sigma))
    assert tightest_epsilon(log, delta=1e-5)[1] > 10.0


def test_golden_laplace_profile_and_advanced():
    assert F.laplace_delta(0.5, 1.0) == pytest.approx(0.2211992169, abs=1e-10)
    e = all_epsilons(LAP, delta=1e-6)
    assert e["basic"] == pytest.approx(10.0)
    # KOV optimal, exact between the theorem's grid points: 4.7746 (the grid point is 4.80, at
    # which delta is 8.05e-7; an mpmath check of the exact curve is in test_reference_mpmath.py)
    assert e["advanced"] == pytest.approx(4.774567588, abs=1e-8)
    assert 4.69267 <= e["pld"] <= 4.69267 + 5e-4  # + one grid interval (pld.GRID_MARGIN)
    assert e["rdp"] == pytest.approx(4.98417, abs=1e-4)
    assert F.drv_epsilon([0.1], [100], 1e-6) == pytest.approx(6.308, abs=1e-3)
    assert F.kov_closed_form_epsilon([0.1], [100], 1e-6) == pytest.approx(5.756, abs=1e-3)


def test_golden_tree_matches_dp_accounting_tree_event():
    """Notes 1.5: SingleEpochTreeAggregationDpEvent(z=10), K=1000 -> D=10, eps(1e-6)=1.4717; K=1024 -> 1.5494."""
    for K, eps in [(1000, 1.4717), (1024, 1.5494)]:
        log = mk(one("gaussian", 10.0, structure=Structure.tree(K)))
        assert get_accountant("rdp").epsilon(log, delta=1e-6) == pytest.approx(eps, abs=1e-4)
        acc = dp_accounting.rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
        acc.compose(dp_accounting.SingleEpochTreeAggregationDpEvent(10.0, [K]))
        assert get_accountant("rdp").epsilon(log, delta=1e-6) == pytest.approx(acc.get_epsilon(1e-6), rel=1e-3)


def test_replace_one_trap_is_avoided():
    """dp_accounting issue #378: RDP under REPLACE_ONE does not double the sensitivity. The toolkit
    states replace-one sensitivity 2C explicitly; its RDP figure must equal PLD's, both ~ 11.0."""
    log = mk(one("gaussian", 1.0, sens=2.0))
    e = all_epsilons(log, delta=1e-6)
    assert e["pld"] == pytest.approx(dp_accounting.get_epsilon_gaussian(0.5, 1e-6), abs=1e-3)
    assert e["rdp"] >= e["pld"] - 1e-6
    assert e["rdp"] > 10.0
    buggy = dp_accounting.rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    buggy.compose(dp_accounting.GaussianDpEvent(1.0))
    assert buggy.get_epsilon(1e-6) < 6.0 < e["rdp"]


# --------------------------------------------------------------------------- orderings & identities
def test_orderings_that_theory_guarantees():
    for log in (GAUSS, MIXED):
        e = all_epsilons(log, delta=1e-6)
        assert e["basic"] >= e["advanced"]
        assert e["zcdp"] >= e["pld"] - 1e-3
        assert e["rdp"] >= e["pld"] - 1e-3
    e = all_epsilons(GAUSS, delta=1e-6)
    assert e["zcdp"] <= F.zcdp_epsilon_bs16(5.0, 1e-6)
    assert e["basic"] >= e["advanced"] >= e["zcdp"] >= e["pld"]


def test_self_composition_identity():
    """Six identical groups == one group composed six times (SelfComposed(e, 6) == 6 x e)."""
    g = one("laplace", 7.0, structure=Structure.repeated(4))
    six = mk(*[ReleaseGroup(f"g{i}", g.mechanism, g.noise_scale, g.sensitivity, g.structure) for i in range(6)])
    once = mk(g.with_structure(Structure.repeated(24)))
    for name in ("basic", "advanced", "zcdp", "rdp", "pld"):
        assert get_accountant(name).epsilon(six, delta=1e-6) == pytest.approx(get_accountant(name).epsilon(once, delta=1e-6), rel=1e-12)


def test_gaussian_composition_identity():
    """k Gaussians with sigma equal one Gaussian with sigma / sqrt(k) (exactly)."""
    k = mk(one("gaussian", 4.0, structure=Structure.repeated(16)))
    single = mk(one("gaussian", 1.0))
    for name in ("analytic-gaussian", "zcdp", "rdp", "pld"):
        assert get_accountant(name).epsilon(k, delta=1e-6) == pytest.approx(get_accountant(name).epsilon(single, delta=1e-6), rel=1e-9)


@pytest.mark.parametrize("mech", ["gaussian", "laplace"])
def test_factorized_trees_account_as_the_tree_and_toeplitz_as_one_scaled_release(mech):
    from privacct.counters.strategies import column_norm

    for strategy in ("tree", "tree-honaker"):
        assert all_epsilons(mk(one(mech, 7.0, structure=Structure.factorized(strategy, 777))), delta=1e-6) == \
            all_epsilons(mk(one(mech, 7.0, structure=Structure.tree(777))), delta=1e-6)
    s = Structure.factorized("sqrt-toeplitz", 300)
    norm = column_norm(s, "l1" if mech == "laplace" else "l2")
    fact = all_epsilons(mk(one(mech, 7.0, structure=s)), delta=1e-6)
    scaled = all_epsilons(mk(one(mech, 7.0, sens=norm)), delta=1e-6)
    assert fact.keys() == scaled.keys()
    for name in fact:
        assert scaled[name] <= fact[name] <= scaled[name] * (1 + 1e-12)
    # the derived multiplier is an upper bound on the true column norm: never below it
    from privacct.counters.strategies import toeplitz_coefficients
    c = toeplitz_coefficients(300)
    assert norm >= (c.sum() if mech == "laplace" else math.sqrt(math.fsum(c * c)))


def test_factorized_overflowing_multiplier_is_refused_with_a_reason():
    huge = Structure.factorized("blt", 10**6, {"buffers": [{"theta": 0.999999, "omega": 1e300}]})
    log = mk(one("gaussian", 1.0, structure=huge))
    for name in ACCOUNTANTS:
        reason = get_accountant(name).why_not(log, delta=1e-6)
        assert reason is not None and "floating-point range" in reason


def test_tree_is_its_derived_count_and_ratios_are_all_that_matter():
    """tree(K) == repeated(floor(log2 K) + 1); scaling sensitivity and noise by a power of two
    (exact in floats) changes nothing."""
    for K in (1, 7, 8, 1000, 2**40 + 3):
        t = mk(one("laplace", 40.0, structure=Structure.tree(K)), one("gaussian", 9.0, structure=Structure.tree(K), name="h"))
        r = mk(one("laplace", 40.0, structure=Structure.repeated(K.bit_length())),
               one("gaussian", 9.0, structure=Structure.repeated(K.bit_length()), name="h"))
        s = mk(one("laplace", 40.0 * 1024, sens=1024.0, structure=Structure.tree(K)),
               one("gaussian", 9.0 / 8, sens=1 / 8, structure=Structure.tree(K), name="h"))
        for name in ("basic", "advanced", "zcdp", "rdp", "pld"):
            e = get_accountant(name).epsilon(t, delta=1e-6)
            assert get_accountant(name).epsilon(r, delta=1e-6) == e == get_accountant(name).epsilon(s, delta=1e-6)


def test_registry_is_complete_and_lazy():
    import subprocess
    import sys

    assert list(ACCOUNTANTS) == ["basic", "advanced", "zcdp", "rdp", "pld", "analytic-gaussian"]
    assert all(get_accountant(n).name == n and get_accountant(n).citation for n in ACCOUNTANTS)
    code = "import sys, privacct.accounting as a; print('dp_accounting' in sys.modules, 'scipy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split() == ["False", "False"]


def test_rdp_agrees_with_dp_accounting_where_its_formulas_are_stable():
    """Identity with upstream: our RDP curve and conversion give dp_accounting's figure (within
    the outward margin) wherever dp_accounting's Laplace form does not cancel."""
    for log in (GAUSS, LAP, MIXED):
        acc = dp_accounting.rdp.RdpAccountant(orders=list(get_accountant("rdp").orders),
                                              neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
        from privacct.accounting import releases

        for r in releases(log):
            ev = dp_accounting.GaussianDpEvent(1 / r.ratio) if r.kind == "gaussian" else dp_accounting.LaplaceDpEvent(1 / r.ratio)
            acc.compose(dp_accounting.SelfComposedDpEvent(ev, r.count))
        assert get_accountant("rdp").epsilon(log, delta=1e-6) == pytest.approx(acc.get_epsilon(1e-6), rel=1e-9)


def test_tightest_and_unknown_accountant():
    name, eps = tightest_epsilon(GAUSS, delta=1e-6)
    assert eps == min(all_epsilons(GAUSS, delta=1e-6).values())
    with pytest.raises(PrivacctError, match="accountant must be one of"):
        tightest_epsilon(GAUSS, delta=1e-6, accountant="moments")


def test_no_nan_or_inf_leaves_an_accountant():
    tiny = mk(one("gaussian", 1e-6, structure=Structure.repeated(10)))
    for name in ACCOUNTANTS:
        acc = get_accountant(name)
        if not acc.supports(tiny, delta=1e-12):
            continue
        try:
            e = acc.epsilon(tiny, delta=1e-12)
        except NumericalError:
            continue
        assert math.isfinite(e) and e > 100


def test_pld_refuses_an_epsilon_beyond_float_range():
    """dp_accounting's PLD overflows (inf) above eps ~ 709; privacct raises instead of reporting it,
    and the other accountants still give a figure."""
    log = mk(one("gaussian", 0.5, structure=Structure.repeated(302)))
    with pytest.raises(NumericalError, match="pld"):
        get_accountant("pld").epsilon(log, delta=1e-3)
    errs = {}
    figures = all_epsilons(log, delta=1e-3, errors=errs)
    assert "pld" in errs and figures["analytic-gaussian"] == pytest.approx(710.45, abs=0.01)


def test_delta_of_log_and_pure_laplace():
    assert delta_of(LAP, epsilon=10.0) == 0.0
    assert 0 < delta_of(GAUSS, epsilon=19.5) <= 1e-6


@settings(max_examples=40, deadline=None)
@given(sigma=st.floats(1.0, 50.0), k=st.integers(1, 200), delta=st.sampled_from([1e-3, 1e-6, 1e-9]))
def test_pld_within_its_error_of_the_analytic_gaussian(sigma, k, delta):
    log = mk(one("gaussian", sigma, structure=Structure.repeated(k)))
    exact = get_accountant("analytic-gaussian").epsilon(log, delta=delta)
    pld = get_accountant("pld").epsilon(log, delta=delta)
    assert exact - 1e-7 <= pld <= exact + 0.02 * exact + 1e-3


@settings(max_examples=40, deadline=None)
@given(b=st.floats(0.5, 100.0), k=st.integers(1, 200))
def test_kov_optimal_is_at_most_basic_and_closed_form(b, k):
    eps0 = 1.0 / b
    opt = F.kov_optimal_epsilon(k, eps0, 1e-6)
    assert opt <= k * eps0 + 1e-12
    assert opt <= F.kov_closed_form_epsilon([eps0], [k], 1e-6) + 1e-9
    assert opt >= 0


@pytest.mark.parametrize("groups,delta", [
    ([("gaussian", 5.042443362055623e-117, 1.8372585663099429e179, 170447239)], 0.5),
    ([("laplace", 2.7698350747170273e87, 2.223349065999598e271, 427)], 0.5),
    ([("laplace", 8.585376905748365e-11, 8.777017678068266e167, 46)], 1e-06),
    ([("gaussian", 9.338688776114911e-299, 4.363799164617636e-72, 39)], 1e-06),
])
def test_extreme_logs_print_nothing(groups, delta, capfd):
    """Logs on which numpy warns (overflow in exp, invalid value in add) inside the formulas or
    dp_accounting: nothing may reach stderr, and every accountant answers or says why not."""
    import warnings

    log = mk(*[ReleaseGroup(f"g{i}", m, b, Sensitivity("l1" if m == "laplace" else "l2", s), Structure.repeated(k))
               for i, (m, b, s, k) in enumerate(groups)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        errs = {}
        figures = all_epsilons(log, delta=delta, errors=errs)
    assert set(figures) | set(errs) == set(ACCOUNTANTS)
    assert all(math.isfinite(v) and v >= 0 for v in figures.values())
    assert caught == [] and capfd.readouterr().err == ""


def test_pld_refuses_figures_beyond_what_it_represents_reliably():
    """Found by the monotonicity property: dp_accounting's PLD called this log unbounded at delta = 1e-3
    but gave 781 at 1e-6, and 1117 once 1000 more Laplace releases were added. Above PLD.MAX_EPSILON
    every figure is refused as overflow, so the refusal is monotone and no erratic number is reported."""
    from privacct.accounting.pld import PLD

    g0 = one("laplace", 1.0, structure=Structure.single(), name="g0")
    g1 = one("gaussian", 1.0, sens=3.847488166945833, structure=Structure.repeated(83), name="g1")
    g2 = one("laplace", 1.0, structure=Structure.repeated(1000), name="g2")
    for log in (mk(g0, g1), mk(g0, g1, g2)):
        for delta in (1e-3, 1e-6):
            with pytest.raises(NumericalError, match=f"above {PLD.MAX_EPSILON:g}"):
                get_accountant("pld").epsilon(log, delta=delta)
        assert math.isfinite(tightest_epsilon(log, delta=1e-6)[1])  # the other accountants still answer
