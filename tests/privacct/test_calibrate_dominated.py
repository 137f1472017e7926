"""The least-noise calibration skips a dominated accountant (docs/accounting.md#dominated-accountants): on an
all-Gaussian log PLD is never tighter than the analytic Gaussian accountant, so skipping it gives the same answer."""

import pytest

import privacct.calibrate as C
from privacct.calibrate import accountant_calibrations, calibrate_log, least_of, single_group_log
from privacct.log import MechanismLog, ReleaseGroup, Sensitivity, Structure


def _log(*groups: tuple[str, str, float, Structure]) -> MechanismLog:
    """A joint log of the given (name, mechanism, noise scale, structure) groups, sensitivity 1 each."""
    return MechanismLog(name="dominated", privacy_model="joint", release_groups=tuple(
        ReleaseGroup(n, m, s, Sensitivity("l2" if m == "gaussian" else "l1", 1.0, "test"), st) for n, m, s, st in groups))


GAUSSIAN_LOGS = [
    ("repeated", lambda: single_group_log(mechanism="gaussian", sensitivity=1.0, structure=Structure.repeated(1000))),
    ("tree", lambda: single_group_log(mechanism="gaussian", sensitivity=3.0, structure=Structure.tree(4096))),
    ("single", lambda: single_group_log(mechanism="gaussian", sensitivity=0.5, structure=Structure.single())),
    ("two groups", lambda: _log(("gram", "gaussian", 3.0, Structure.tree(1023)), ("y", "gaussian", 5.0, Structure.repeated(40)))),
]


@pytest.mark.parametrize("eps,delta", [(0.3, 1e-6), (1.0, 1e-5), (5.0, 1e-5), (40.0, 1e-9)])
@pytest.mark.parametrize("name,make", GAUSSIAN_LOGS, ids=[n for n, _ in GAUSSIAN_LOGS])
def test_skipping_pld_gives_the_answer_of_every_accountant(name, make, eps, delta):
    log = make()
    every = accountant_calibrations(log, epsilon=eps, delta=delta)     # PLD included
    full = least_of(every)
    by = {t.accountant: t.factor for t in every}
    assert by["pld"] is not None and by["analytic-gaussian"] is not None
    assert by["pld"] > by["analytic-gaussian"]          # the premise: PLD's least factor is the larger
    out, acc = calibrate_log(log, epsilon=eps, delta=delta, return_accountant=True)
    assert acc == full.accountant == "analytic-gaussian"
    assert out == log.scaled_noise(full.factor)


def test_pld_is_not_run_on_a_gaussian_log_and_is_on_a_mixed_one(monkeypatch):
    ran = []
    real = C.calibration_factor

    def spy(log, *, epsilon, delta, accountant):
        ran.append(accountant)
        return real(log, epsilon=epsilon, delta=delta, accountant=accountant)

    monkeypatch.setattr(C, "calibration_factor", spy)
    C._calibrate_cached.cache_clear()
    g = single_group_log(mechanism="gaussian", sensitivity=1.0, structure=Structure.repeated(321))
    calibrate_log(g, epsilon=1.0, delta=1e-6)
    assert "pld" not in ran and "analytic-gaussian" in ran
    ran.clear()
    mixed = _log(("g", "gaussian", 1.0, Structure.repeated(321)), ("lap", "laplace", 1.0, Structure.repeated(7)))
    calibrate_log(mixed, epsilon=1.0, delta=1e-6)
    assert "pld" in ran


def test_pld_is_tried_when_the_analytic_accountant_gives_no_factor(monkeypatch):
    real = C.calibration_factor
    ran = []

    def analytic_fails(log, *, epsilon, delta, accountant):
        ran.append(accountant)
        if accountant == "analytic-gaussian":
            raise C.NumericalError("planted: no factor")
        return real(log, epsilon=epsilon, delta=delta, accountant=accountant)

    monkeypatch.setattr(C, "calibration_factor", analytic_fails)
    C._calibrate_cached.cache_clear()
    log = single_group_log(mechanism="gaussian", sensitivity=1.0, structure=Structure.repeated(500))
    out, acc = calibrate_log(log, epsilon=1.0, delta=1e-6, return_accountant=True)
    assert "pld" in ran and acc == "pld"
    records = C._least_noise_calibrations(log, 1.0, 1e-6)
    assert [t.accountant for t in records] == list(C.ACCOUNTANT_NAMES)   # registry order kept
