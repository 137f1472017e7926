"""The learner power criterion's reference leaks twice the claim by the observation's own loss distribution too
(audits/oracle.py, docs/auditing.md#learner-audits): a code that leaks more than its log must not get an
optimistic reference."""

from __future__ import annotations

import math

import pytest

from privacct.audits.oracle import LossStructure, gdp_epsilon, learner_power_criterion, oracle_epsilon
from privacct.audits.power import exact_epsilon as structure_epsilon
from privacct.audits.power import reference_factor as structure_noise_factor


def test_structure_epsilon_closed_forms():
    assert structure_epsilon(LossStructure((0.2,) * 16, 0.0), 0.0) == pytest.approx(3.2)
    assert structure_epsilon(LossStructure((), 0.7), 1e-5) == pytest.approx(gdp_epsilon(0.7, 1e-5))
    assert structure_epsilon(LossStructure((0.1,), 0.3), 0.0) == math.inf


def test_structure_epsilon_of_laplace_at_positive_delta_is_below_the_pure_value_and_decreasing():
    s = LossStructure((0.5, 0.5, 0.5), 0.0)
    e3, e2 = structure_epsilon(s, 1e-3), structure_epsilon(s, 1e-2)
    assert e2 < e3 < 1.5 + 1e-9
    # one Laplace coordinate: eps(delta) = a + 2 ln(1 - delta') closed form of the hockey stick at small delta:
    # delta(eps) = (1 - e^(eps - a)) / 2 for eps < a  =>  eps = a + ln(1 - 2 delta)
    one = LossStructure((1.0,), 0.0)
    assert structure_epsilon(one, 0.01) == pytest.approx(1.0 + math.log(1 - 0.02), abs=5e-3)


@pytest.mark.parametrize("s, delta", [(LossStructure((0.2,) * 16, 0.0), 0.0), (LossStructure((), 0.4), 1e-5),
                                      (LossStructure((0.3, 0.2), 0.4), 1e-5)])
def test_noise_factor_round_trip(s, delta):
    f = structure_noise_factor(s, 2.0, delta)
    assert structure_epsilon(s.scaled(f), delta) == pytest.approx(2.0, rel=2e-3)


def test_a_code_leaking_more_than_its_log_gets_the_weaker_reference():
    # the example's redraw bug at K = 16: 16 observed Laplace releases of ratio 0.2 (exact eps 3.2), while the
    # log (5 tree nodes) accounts 1 at this noise: scaling the log to 2 x claim would halve the noise (eps 6.4)
    observed = LossStructure((0.2,) * 16, 0.0)
    log_factor = lambda eps: 1.0 / eps   # noqa: E731 - the log accounts 1 at factor 1, eps at factor 1/eps
    crit = learner_power_criterion(observed, log_factor, label="redraw")
    check = crit(500, 0.025, 0.0, 1.0)
    ref = observed.scaled(1.6)           # exact eps 2.0
    assert check.achievable_lower_bound == pytest.approx(oracle_epsilon(ref, 500, 0.025, 0.0))
    assert check.achievable_lower_bound < oracle_epsilon(observed.scaled(0.5), 500, 0.025, 0.0)
    assert "own exact eps" in check.description
    # a faithful observation (exact eps = what the log accounts) keeps the log's factor
    faithful = LossStructure((0.2,) * 5, 0.0)
    c2 = learner_power_criterion(faithful, log_factor, label="tree")(500, 0.025, 0.0, 1.0)
    assert c2.achievable_lower_bound == pytest.approx(oracle_epsilon(faithful.scaled(0.5), 500, 0.025, 0.0))
