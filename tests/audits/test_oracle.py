"""Exact privacy-loss distributions, the oracle figure and the learner power criterion (audits/power.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privacct.audits.oracle import (LossStructure, learner_power_criterion, loss_distribution, oracle_epsilon,
                                   tail_curves, trials_for)
from privacct.errors import PrivacctError


def test_laplace_loss_has_the_exact_atoms_and_mirror_law():
    a = 0.7
    grid, p = loss_distribution(LossStructure((a,), 0.0))
    assert grid[-1] == pytest.approx(a) and grid[0] == pytest.approx(-a)
    assert p.sum() == pytest.approx(1.0)
    assert p[-1] == pytest.approx(0.5, abs=0.01)               # z <= 0: loss +a
    assert p[0] == pytest.approx(math.exp(-a) / 2, abs=0.01)  # z >= a: loss -a
    # E_D[e^{-L}] = 1 (the likelihood ratio integrates to 1 under D')
    assert np.sum(p * np.exp(-grid)) == pytest.approx(1.0, rel=2e-3)


def test_sum_of_laplace_coordinates_reaches_the_pure_epsilon_with_the_right_mass():
    s = LossStructure((0.25,) * 6, 0.0)
    grid, p = loss_distribution(s)
    assert grid[-1] == pytest.approx(1.5) and p[-1] == pytest.approx(2.0**-6, rel=0.03)
    tpr, fpr = tail_curves(s)
    assert tpr[-1] / fpr[-1] == pytest.approx(math.exp(1.5), rel=0.05)   # the atom is a pure-eps event


def test_gaussian_oracle_closed_form_agrees_with_the_mixed_grid():
    g = LossStructure((), 0.5)
    mixed = LossStructure((1e-4,), 0.5)
    assert oracle_epsilon(mixed, 100_000, 0.025, 1e-5) == pytest.approx(oracle_epsilon(g, 100_000, 0.025, 1e-5), abs=0.01)


def test_oracle_grows_with_trials_and_never_exceeds_the_true_epsilon():
    s = LossStructure((1 / (3 * math.log(4)),) * 6, 0.0)
    vals = [oracle_epsilon(s, n, 0.025, 0.0) for n in (1_000, 10_000, 100_000, 1_000_000)]
    assert vals == sorted(vals) and vals[-1] < s.pure_epsilon
    assert oracle_epsilon(LossStructure((), 0.0), 10**6, 0.025, 1e-5) == 0.0


def test_trials_for_is_the_bisection_of_the_oracle():
    s = LossStructure((), 0.6)
    n = trials_for(s, 0.8, 0.025, 1e-5)
    assert n is not None and oracle_epsilon(s, n, 0.025, 1e-5) > 0.8 >= oracle_epsilon(s, int(n / 1.1), 0.025, 1e-5)
    assert trials_for(LossStructure((), 0.01), 1.0, 0.025, 1e-5, hi=10**7) is None


def test_power_criterion_scales_the_noise_to_twice_the_claim():
    s = LossStructure((0.2,) * 6, 0.0)           # accounts to 1.2 (pure)
    crit = learner_power_criterion(s, lambda eps: 1.2 / eps, label="test")
    pc = crit(50_000, 0.025, 0.0, 1.0)
    assert pc.reference_epsilon == 2.0 and pc.has_power and pc.achievable_lower_bound > 1.0
    assert pc.trials_needed is None                  # it has power: no more trials are needed
    small = crit(100, 0.025, 0.0, 1.0)               # too few trials: inconclusive, with the count that suffices
    assert not small.has_power and small.trials_needed is not None and 200 < small.trials_needed < 100_000
    assert crit(small.trials_needed // 2, 0.025, 0.0, 1.0).has_power
    weak = learner_power_criterion(LossStructure((0.2,), 0.0), lambda eps: 0.2 / eps, label="one coordinate")
    assert not weak(50, 0.025, 0.0, 1.0).has_power      # too few trials to see a 2x violation


def test_bad_structure_is_refused():
    with pytest.raises(PrivacctError, match="loss structure"):
        LossStructure((0.0,), 0.0)
    with pytest.raises(PrivacctError, match="loss structure"):
        LossStructure((), float("nan"))
