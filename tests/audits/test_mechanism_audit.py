"""audit_mechanism: power, soundness, null mechanisms, result object, bad input."""

import json

import numpy as np
import pytest

from privacct.audits import audit_mechanism
from privacct.audits.reference_mechanisms import (GaussianMechanism, LaplaceMechanism, NullMechanism, RandomizedResponse,
                               gaussian_true_epsilon)
from privacct.errors import PrivacctError


def test_null_mechanism_gives_zero_and_zero_mu():
    for seed in range(5):
        r = audit_mechanism(NullMechanism(), 0, 1, trials=20_000, seed=seed)
        assert r.epsilon_lower_bound == 0.0 and r.verdict == "passes"
        # regression: jax_privacy 2.0.0 epsilon_from_gdp reported eps > 0 on identical distributions
        assert r.mu_lower_bound == 0.0 and r.epsilon_gdp == 0.0


def test_null_vector_mechanism_gives_zero():
    r = audit_mechanism(NullMechanism((6,)), 0, 1, trials=10_000, seed=3)
    assert r.epsilon_lower_bound == 0.0
    assert any("projection" in s for s in r.statistics)


def test_laplace_power_at_1e5_trials():
    r = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials=100_000, seed=0)
    assert 0.9 <= r.epsilon_lower_bound <= 1.0
    assert r.verdict == "passes" and r.power.has_power


def test_half_noise_laplace_fails_claim_of_one():
    r = audit_mechanism(LaplaceMechanism(0.5), 0.0, 1.0, epsilon=1.0, trials=100_000, seed=0)
    assert r.verdict == "fails"
    assert r.epsilon_lower_bound > 1.5


def test_likelihood_ratio_with_densities_is_sound_and_used():
    m = LaplaceMechanism(1.0)
    r = audit_mechanism(m, 0.0, 1.0, trials=50_000, seed=2, densities=(m.density(0.0), m.density(1.0)))
    assert "likelihood-ratio" in r.statistics
    assert 0.8 <= r.epsilon_lower_bound <= 1.0


def test_randomized_response_uses_discrete_test():
    r = audit_mechanism(RandomizedResponse(2.0), 0, 1, epsilon=2.0, trials=50_000, seed=1)
    assert 1.8 <= r.epsilon_lower_bound <= 2.0


def test_gaussian_vector_projection_and_gdp_estimate():
    sigma, shift = 1.0, np.full(4, 0.5)  # ||shift||_2 = 1 -> mu = 1
    r = audit_mechanism(GaussianMechanism(sigma), np.zeros(4), shift, epsilon=10.0, delta=1e-5,
                        trials=50_000, seed=4)
    assert "projection" in r.test
    assert 0.8 <= r.mu_lower_bound <= 1.0
    assert r.epsilon_lower_bound <= gaussian_true_epsilon(1.0, 1e-5)
    assert r.epsilon_gdp <= gaussian_true_epsilon(1.0, 1e-5)


@pytest.mark.parametrize("confidence", [0.95, 0.5])
def test_soundness_rate_below_failure_probability(confidence):
    """Repeated small audits of correct mechanisms exceed the true eps at rate <= 1 - confidence."""
    cases = [
        (RandomizedResponse(1.0), 0, 1, 1.0, 0.0),
        (LaplaceMechanism(1.0), 0.0, 1.0, 1.0, 0.0),
        (GaussianMechanism(1.0), 0.0, 1.0, gaussian_true_epsilon(1.0, 0.1), 0.1),
        # vector Laplace, l1 shift 1 over 4 coordinates, b = 0.5: eps = 2, attained where all saturate
        (LaplaceMechanism(0.5), np.zeros(4), np.full(4, 0.25), 2.0, 0.0),
    ]
    repeats = 60
    for mech, d, d2, true_eps, delta in cases:
        lbs = np.array([audit_mechanism(mech, d, d2, epsilon=true_eps, delta=delta, trials=2000, seed=s,
                                        confidence=confidence).epsilon_lower_bound for s in range(repeats)])
        assert (lbs > true_eps).mean() <= 1 - confidence, (mech, lbs.max())
        assert lbs.mean() > 0.5 * true_eps  # and the audits are not vacuous


def test_result_object_and_to_dict():
    r = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=1000, seed=0)
    d = json.loads(json.dumps(r.to_dict()))
    for key in ("epsilon_lower_bound", "claimed_epsilon", "verdict", "power", "test", "counts", "seconds", "mu_lower_bound"):
        assert key in d
    assert "passed" not in d and not hasattr(r, "passed")
    assert set(d["power"]) == {"criterion", "description", "reference_epsilon", "achievable_lower_bound", "has_power",
                               "trials_needed"}
    assert set(d["counts"]) == {"D vs D'", "D' vs D"}
    for c in d["counts"].values():
        assert c["TP"] + c["FN"] == 500 and c["FP"] + c["TN"] == 500
    assert r.seconds > 0 and "claimed eps = 1" in r.summary()


def test_same_seed_same_result_different_seed_differs():
    a = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=5000, seed=7)
    b = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=5000, seed=7)
    c = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=5000, seed=8)
    assert a.epsilon_lower_bound == b.epsilon_lower_bound and a.counts == b.counts
    assert a.counts != c.counts


def _lap(d, rng, size):
    return d + rng.laplace(size=size)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(mechanism=42), "mechanism"),
    (dict(trials=9), "trials"),
    (dict(confidence=1.0), "confidence"),
    (dict(confidence=0.0), "confidence"),
    (dict(delta=1.0), "delta"),
    (dict(delta=-0.1), "delta"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(mechanism=lambda d, rng, size: rng.normal(size=size + 1)), "size"),
    (dict(mechanism=lambda d, rng, size: rng.normal(size=(size, 2)) if d else rng.normal(size=(size, 3))), "shape"),
    (dict(densities=(None, None)), "densities"),
])
def test_bad_input_names_the_argument(kwargs, needle):
    args = dict(mechanism=_lap, dataset=0.0, neighbour=1.0, trials=100)
    args.update(kwargs)
    with pytest.raises(PrivacctError, match=needle):
        audit_mechanism(**args)


def test_float_laplace_lsb_regression():
    """Mironov (2012): a textbook float Laplace leaks through which outputs are reachable."""
    from privacct.audits.reference_mechanisms import FloatLaplace

    m = FloatLaplace(scale=10.0)  # eps = 0.1 for the idealised mechanism
    plain = audit_mechanism(m, 0.0, 1.0, epsilon=0.1, trials=20_000, seed=0)
    assert plain.verdict == "passes"  # threshold tests on the value do not see the leak
    lsb = audit_mechanism(m, 0.0, 1.0, epsilon=0.1, trials=20_000, seed=0, densities=(m.reachable(0.0), m.reachable(1.0)))
    assert lsb.verdict == "fails" and lsb.epsilon_lower_bound > 5.0
    assert "likelihood-ratio" in lsb.test


def test_runner_audits_every_pair_and_splits_the_budget():
    from privacct.audits import PairList, PropertyTester, ThresholdTester, run_audit

    assert isinstance(ThresholdTester(), PropertyTester)
    pairs = PairList(((0.0, 0.0), (0.0, 1.0)))
    r = run_audit(LaplaceMechanism(1.0), pairs, epsilon=1.0, trials=20_000, seed=0)
    assert r.pairs == 2 and len(r.outcomes) == 4 and len(r.counts) == 4
    first = [o.epsilon_lower_bound for o in r.outcomes[:2]]
    assert max(first) == 0.0  # identical datasets
    assert r.epsilon_lower_bound == max(o.epsilon_lower_bound for o in r.outcomes) > 0.8
    # union bound: four certified tests share 1 - confidence, so the ceiling is below a one-pair audit's
    one = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=20_000, seed=0)
    assert r.ceiling < one.ceiling
