"""Per-coordinate, joint and discrete/continuous split statistics (privacct.audits.vector_statistics)."""

import numpy as np
import pytest

from privacct.audits import audit_mechanism, statistics
from privacct.audits.catalog import get
from privacct.audits.catalog.additive_and_local import BinaryRandomizedResponse, OneTimeRappor, rappor_epsilon
from privacct.audits.catalog.sparse_vector import Concatenated
from privacct.audits.reference_mechanisms import LaplaceMechanism
from privacct.audits.vector_statistics import column_atoms, row_hash, vector_candidates


def _baseline(monkeypatch):
    """The auditor without the vector statistics (linear projections only): what it was before them."""
    monkeypatch.setattr(statistics, "_vector", lambda x_sel, y_sel: [])


@pytest.mark.parametrize("name", ["noiseless-branch", "noiseless-branch-flagged"])
def test_mixed_discrete_continuous_bugs_missed_by_projections_are_caught(name, monkeypatch):
    e = get(name)
    r = e.audit(trials=20_000, seed=0, executor="inline")
    assert r.verdict == "fails" and r.epsilon_lower_bound > 4.0 and "likelihood-ratio" in r.test
    _baseline(monkeypatch)
    old = e.audit(trials=20_000, seed=0, executor="inline")
    assert old.verdict != "fails" and old.epsilon_lower_bound < 1.0


def _exp_and_laplace(dataset, rng, size):
    """(q + Exp(2), q + Lap(2)): the first column alone has a support edge at q (no finite eps)."""
    q = float(dataset)
    return np.column_stack([q + rng.exponential(2.0, size), q + rng.laplace(0.0, 2.0, size)])


def test_one_column_alone_certifies_what_the_projections_of_the_whole_output_miss(monkeypatch):
    r = audit_mechanism(_exp_and_laplace, 1.0, 2.0, epsilon=1.0, trials=20_000, seed=0, executor="inline")
    assert r.verdict == "fails" and r.test.startswith("coordinate 0") and r.epsilon_lower_bound > 5.0
    _baseline(monkeypatch)
    old = audit_mechanism(_exp_and_laplace, 1.0, 2.0, epsilon=1.0, trials=20_000, seed=0, executor="inline")
    assert old.epsilon_lower_bound < r.epsilon_lower_bound - 2.0


def _parity_leak(dataset, rng, size):
    """Six uniform bits whose parity equals the secret bit w.p. 3/4: eps = ln 3, spread evenly over 32
    patterns, so any single pattern (all a threshold on a projection of bits can isolate best) is rare."""
    bits = rng.integers(0, 2, (size, 6))
    parity = bits[:, :5].sum(axis=1) % 2
    want = np.where(rng.random(size) < 0.75, int(dataset), 1 - int(dataset))
    bits[:, 5] = parity ^ want
    return bits.astype(np.int64)


def test_joint_likelihood_ratio_sees_a_combination_projections_cannot(monkeypatch):
    kw = dict(epsilon=0.8, trials=20_000, seed=0, executor="inline")  # true eps ln 3 = 1.10 > claim 0.8
    r = audit_mechanism(_parity_leak, 0, 1, **kw)
    assert r.verdict == "fails" and "likelihood-ratio" in r.test and r.epsilon_lower_bound <= np.log(3)
    _baseline(monkeypatch)
    old = audit_mechanism(_parity_leak, 0, 1, **kw)
    assert old.verdict != "fails" and old.epsilon_lower_bound < r.epsilon_lower_bound - 0.2
    rap = get("rappor")  # and on a tight discrete vector it stays below the true eps
    assert rap.audit(trials=20_000, seed=0, executor="inline").epsilon_lower_bound <= rap.true_epsilon


@pytest.mark.parametrize("confidence", [0.95, 0.5])
def test_soundness_rate_on_tight_vector_and_mixed_mechanisms(confidence):
    # (40 audits of 2000 trials per case and confidence)
    """Tight private mechanisms where the new statistics are the Neyman-Pearson ones: one-time RAPPOR
    (discrete vector, eps attained by one pattern) and randomized response next to a Laplace release
    (mixed, eps = 0.5 + 0.5 attained where the bit agrees and the value saturates)."""
    cases = [(OneTimeRappor(0.5, 8, 1), 0, 1, rappor_epsilon(0.5, 1)),
             (Concatenated(BinaryRandomizedResponse(0.5), LaplaceMechanism(2.0)), 0, 1, 1.0)]
    for mech, d, d2, true_eps in cases:
        lbs = np.array([audit_mechanism(mech, d, d2, epsilon=true_eps, trials=2000, seed=s, confidence=confidence,
                                        executor="inline").epsilon_lower_bound for s in range(40)])
        assert (lbs > true_eps).mean() <= 1 - confidence, (mech, lbs.max())
        assert lbs.mean() > 0.4 * true_eps


def test_candidates_are_fitted_on_the_selection_half_and_score_on_a_held_out_part():
    rng = np.random.default_rng(0)
    x = np.column_stack([rng.integers(0, 3, 4000), rng.laplace(size=4000)])
    y = np.column_stack([rng.integers(0, 3, 4000), 0.5 + rng.laplace(size=4000)])
    stats_ = {s.name: s for s in vector_candidates(x, y)}
    assert {"coordinate 0 value", "coordinate 1 value", "coordinate 0 split likelihood-ratio",
            "split likelihood-ratio", "discrete-part likelihood-ratio"} <= set(stats_)
    split = stats_["split likelihood-ratio"]
    hx, hy = split.holdout
    assert len(hx) == 2000 and np.array_equal(hx, split(x[2000:]))  # thresholded on the half it was not fitted on
    assert stats_["coordinate 1 value"].holdout is None
    # atoms: the integer column only; equal rows hash equally
    atoms = column_atoms(x, y)
    assert list(atoms[0]) == [0.0, 1.0, 2.0] and len(atoms[1]) == 0
    assert row_hash(np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0]])).tolist()[:2] == \
        row_hash(np.array([[1.0, 2.0]])).tolist() * 2


def test_split_uses_the_continuous_value_within_each_discrete_cell(monkeypatch):
    """Lyu et al.'s Alg. 3 as (index of the first answer above the threshold, its noisy answer): the
    leak sits in the value GIVEN the index, which the per-cell likelihood ratio picks up."""
    e = get("svt-first-above-index-value")
    r = e.audit(trials=100_000, seed=0, executor="inline")
    assert r.verdict == "fails" and "split likelihood-ratio" in r.test
    assert 1.45 < r.epsilon_lower_bound <= e.true_epsilon
    _baseline(monkeypatch)
    assert e.audit(trials=100_000, seed=0, executor="inline").epsilon_lower_bound < 1.35
