"""Calibration: the returned noise, re-accounted, never exceeds the budget; and it is tight."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacct.accounting import get_accountant
from privacct.calibrate import calibrate_log, calibrate_noise, single_group_log
from privacct.errors import PrivacctError
from privacct.log import Structure


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.05, 8.0), sens=st.floats(0.1, 40.0), k=st.integers(1, 3000),
       delta=st.sampled_from([1e-4, 1e-6, 1e-9]),
       acc=st.sampled_from(["basic", "advanced", "zcdp", "rdp", "analytic-gaussian"]))
def test_calibrated_gaussian_never_overshoots(eps, sens, k, delta, acc):
    scale, name = calibrate_noise(mechanism="gaussian", sensitivity=sens, structure=Structure.repeated(k),
                                  epsilon=eps, delta=delta, accountant=acc)
    log = single_group_log(mechanism="gaussian", sensitivity=sens, structure=Structure.repeated(k), noise_scale=scale)
    got = get_accountant(name).epsilon(log, delta=delta)
    assert got <= eps
    # tight: 0.1% less noise breaks the budget
    assert get_accountant(name).epsilon(log.scaled_noise(0.999), delta=delta) > eps


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.05, 8.0), sens=st.floats(0.1, 40.0), leaves=st.integers(1, 10**6),
       acc=st.sampled_from(["basic", "advanced", "zcdp", "rdp"]))
def test_calibrated_laplace_tree_never_overshoots(eps, sens, leaves, acc):
    delta = 0.0 if acc == "basic" else 1e-6
    scale, name = calibrate_noise(mechanism="laplace", sensitivity=sens, structure=Structure.tree(leaves),
                                  epsilon=eps, delta=delta, accountant=acc)
    log = single_group_log(mechanism="laplace", sensitivity=sens, structure=Structure.tree(leaves), noise_scale=scale)
    assert get_accountant(name).epsilon(log, delta=delta) <= eps


def test_calibrate_pld_round_trip_and_closed_forms():
    scale, name = calibrate_noise(mechanism="gaussian", sensitivity=1.0, structure=Structure.repeated(1000),
                                  epsilon=1.0, delta=1e-6, accountant="pld")
    # PLD calibration 133.596 (docs/accounting.md#regression-anchors); one grid interval of margin (pld.GRID_MARGIN) adds ~2e-4 in eps
    assert scale == pytest.approx(133.596, rel=5e-4) and scale >= 133.596
    log = single_group_log(mechanism="gaussian", sensitivity=1.0, structure=Structure.repeated(1000), noise_scale=scale)
    assert get_accountant("pld").epsilon(log, delta=1e-6) <= 1.0
    assert calibrate_noise(mechanism="gaussian", sensitivity=1.0, structure=Structure.repeated(1000),
                           epsilon=1.0, delta=1e-6, accountant="rdp")[0] == pytest.approx(143.279, abs=0.01)
    assert calibrate_noise(mechanism="laplace", sensitivity=2.0, structure=Structure.tree(1000),
                           epsilon=1.0, delta=0.0)[0] == pytest.approx(20.0)


def test_default_calibration_takes_the_least_noise():
    log = single_group_log(mechanism="gaussian", sensitivity=1.0, structure=Structure.tree(4096))
    out, name = calibrate_log(log, epsilon=1.0, delta=1e-5, return_accountant=True)
    for other in ("rdp", "zcdp", "advanced"):
        assert out.release_groups[0].noise_scale <= calibrate_log(log, epsilon=1.0, delta=1e-5, accountant=other).release_groups[0].noise_scale


def test_calibration_bad_input():
    log = single_group_log(mechanism="gaussian", sensitivity=1.0, structure=Structure.single())
    with pytest.raises(PrivacctError, match="epsilon"):
        calibrate_log(log, epsilon=0.0, delta=1e-6)
    with pytest.raises(PrivacctError, match="delta"):
        calibrate_log(log, epsilon=1.0, delta=1.0)
    with pytest.raises(PrivacctError, match="does not apply|cannot calibrate|Gaussian"):
        calibrate_log(log, epsilon=1.0, delta=0.0)


def test_calibration_is_cached_per_log_and_equal_to_the_uncached_answer():
    """One calibration path: a repeated call returns the cached log (same object), which equals the
    answer computed afresh; a different budget is a different entry."""
    from privacct.calibrate import _calibrate, calibrate_log
    from privacct.log import MechanismLog, ReleaseGroup, Sensitivity, Structure

    log = MechanismLog("c", "joint", (ReleaseGroup("g", "gaussian", 1.0, Sensitivity("l2", 1.0), Structure.tree(1000)),))
    a, name = calibrate_log(log, epsilon=1.0, delta=1e-6, return_accountant=True)
    b = calibrate_log(log, epsilon=1.0, delta=1e-6)
    assert a is b
    assert (a, name) == _calibrate(log, 1.0, 1e-6, None)
    c = calibrate_log(log, epsilon=2.0, delta=1e-6)
    assert c.release_groups[0].noise_scale < a.release_groups[0].noise_scale


def test_calibration_asks_the_accountant_for_its_closed_form(monkeypatch):
    """calibrate.py dispatches on no accountant name (docs/accounting.md#calibration): the closed form it tries first
    is the accountant's own answer (a confirmed one is returned as it is, an unconfirmed one is refused by the
    re-accounting), and an accountant without one is searched on the lattice."""
    from privacct.accounting.rdp import RDP
    from privacct.accounting.zcdp import ZCDP
    from privacct.calibrate import calibration_factor

    log = single_group_log(mechanism="gaussian", sensitivity=1.0, structure=Structure.repeated(1000))
    least = calibration_factor(log, epsilon=1.0, delta=1e-6, accountant="rdp")              # RDP has none: lattice
    monkeypatch.setattr(RDP, "_closed_form_factor", lambda self, rel, epsilon, delta: 2 * least)
    assert calibration_factor(log, epsilon=1.0, delta=1e-6, accountant="rdp") == 2 * least  # confirmed: taken
    monkeypatch.setattr(RDP, "_closed_form_factor", lambda self, rel, epsilon, delta: least / 2)
    assert calibration_factor(log, epsilon=1.0, delta=1e-6, accountant="rdp") == least      # over budget: refused

    closed = get_accountant("zcdp").closed_form_factor(log, epsilon=1.0, delta=1e-6)
    assert calibration_factor(log, epsilon=1.0, delta=1e-6, accountant="zcdp") in (closed, closed * (1 + 2.0**-40))
    monkeypatch.setattr(ZCDP, "_closed_form_factor", lambda self, rel, epsilon, delta: None)
    searched = calibration_factor(log, epsilon=1.0, delta=1e-6, accountant="zcdp")         # the lattice instead
    assert searched != closed and closed <= searched <= closed * (1 + 1e-6)


def test_pld_calibration_starts_from_its_guide(monkeypatch):
    """PLD has no closed form; its search starts from its guide's calibration (RDP's), named by the accountant."""
    import privacct.calibrate as C
    from privacct.accounting.pld import PLD

    asked = []
    real = C.calibration_factor

    def recording(log, *, epsilon, delta, accountant):
        asked.append(accountant)
        return real(log, epsilon=epsilon, delta=delta, accountant=accountant)

    monkeypatch.setattr(C, "calibration_factor", recording)
    log = single_group_log(mechanism="gaussian", sensitivity=1.0, structure=Structure.repeated(100))
    a = C.calibration_factor(log, epsilon=1.0, delta=1e-6, accountant="pld")
    assert get_accountant("pld").calibration_guide == "rdp" and asked == ["pld", "rdp"]
    asked.clear()
    monkeypatch.setattr(PLD, "calibration_guide", "zcdp")
    assert C.calibration_factor(log, epsilon=1.0, delta=1e-6, accountant="pld") == a and asked == ["pld", "zcdp"]
