"""Noise primitives and the ledger: what ran must account like what was declared."""

import numpy as np
import pytest

from privacct.errors import PrivacctError
from privacct.ledger import Ledger, check_ledger
from privacct.log import Claim, MechanismLog, ReleaseGroup, Sensitivity, Structure, tree_depth
from privacct.mechanisms import TreeCounter, add_noise, gaussian, laplace, symmetric_gaussian
from privacct.rng import spawn_generators


def test_same_seed_same_bytes_and_batch_equals_one_by_one():
    a = laplace(spawn_generators(7, 3), (4, 5), 2.0)
    b = laplace(spawn_generators(7, 3), (4, 5), 2.0)
    assert a.tobytes() == b.tobytes()
    singles = [laplace([g], (4, 5), 2.0)[0] for g in spawn_generators(7, 3)]
    np.testing.assert_array_equal(a, np.stack(singles))


def test_noise_moments():
    rng = spawn_generators(0, 1)
    x = laplace(rng, 200_000, 3.0)[0]
    assert abs(x.std() - 3.0 * np.sqrt(2)) < 0.05
    y = gaussian(rng, 200_000, 2.0)[0]
    assert abs(y.std() - 2.0) < 0.02


def test_symmetric_gaussian_is_symmetric_with_unit_diagonal_variance():
    m = symmetric_gaussian(spawn_generators(1, 4000), 3, 1.5)
    np.testing.assert_array_equal(m, m.transpose(0, 2, 1))
    assert abs(m[:, 0, 0].std() - 1.5) < 0.06  # diagonal variance sigma^2, not 2 sigma^2
    assert abs(m[:, 0, 1].std() - 1.5) < 0.06


def _tree_log(leaves, scale, mech="laplace", sens=1.0):
    norm = "l1" if mech == "laplace" else ("frobenius-upper" if mech == "symmetric-gaussian-matrix" else "l2")
    return MechanismLog("t", "joint", (ReleaseGroup("c", mech, scale, Sensitivity(norm, sens), Structure.tree(leaves)),),
                        claim=Claim(1.0, 1e-6))


@pytest.mark.parametrize("leaves", [1, 5, 8, 33, 100])
def test_tree_counter_exact_sum_and_ledger_depth(leaves):
    ledger = Ledger()
    rngs = spawn_generators(3, 2)
    tc = TreeCounter(4, leaves=leaves, mechanism="laplace", scale=1.0, rngs=rngs, ledger=ledger, group="c")
    xs = np.random.default_rng(0).integers(0, 2, size=(leaves, 2, 4)).astype(float)
    for t in range(leaves):
        out = tc.add(xs[t])
        assert out.shape == (2, 4)
        np.testing.assert_allclose(out, tc.node_sum(), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(tc.exact_sum(), xs.sum(0))
    counts = ledger.per_user_counts("c")
    assert counts.max() == tree_depth(leaves) == counts[0]  # user 1 sits in the most nodes
    assert len(ledger) == leaves  # one node completes per step
    # re-reading is free
    before = len(ledger)
    tc.noisy_sum()
    assert len(ledger) == before
    chk = check_ledger(_tree_log(leaves, 1.0), ledger, delta=1e-6)
    assert chk.ok and chk.executed_epsilon == pytest.approx(chk.declared_epsilon, rel=1e-12)


def test_tree_counter_error_matches_its_theoretical_scale():
    B, K = 4000, 21
    tc = TreeCounter(1, leaves=K, mechanism="gaussian", scale=2.0, rngs=spawn_generators(5, B))
    for _ in range(K):
        out = tc.add(np.ones((B, 1)))
    err = (out - K)[:, 0]
    expected = 2.0 * np.sqrt(bin(K).count("1"))  # 21 = 10101b: three nodes
    assert tc.noise_std() == pytest.approx(expected)
    assert abs(err.std() / expected - 1) < 0.05
    assert abs(err.mean()) < 4 * expected / np.sqrt(B)


def test_matrix_tree_counter_symmetric():
    tc = TreeCounter((3, 3), leaves=8, mechanism="symmetric-gaussian-matrix", scale=1.0, rngs=spawn_generators(0, 2))
    for _ in range(5):
        out = tc.add(np.zeros((2, 3, 3)))
    np.testing.assert_allclose(out, out.transpose(0, 2, 1))


class FreshNoiseCounter:
    """Deliberately wrong: redraws every node's noise at every release (the public-code bug)."""

    def __init__(self, leaves, scale, rngs, ledger):
        self.t, self.leaves, self.scale, self.rngs, self.ledger = 0, leaves, scale, rngs, ledger
        self.total = np.zeros((len(rngs), 1))

    def add(self, x):
        self.t += 1
        self.total = self.total + x
        out = self.total.copy()
        t = self.t
        for i in range(t.bit_length()):
            if (t >> i) & 1:
                hi = (t >> (i + 1) << (i + 1)) + (1 << i)  # node of level i inside [1, t]
                out += laplace(self.rngs, 1, self.scale, ledger=self.ledger, group="c", users=(hi - (1 << i) + 1, hi))
        return out


def test_fresh_noise_counter_is_caught_by_the_ledger():
    K = 64
    ledger = Ledger()
    bad = FreshNoiseCounter(K, 1.0, spawn_generators(0, 1), ledger)
    for _ in range(K):
        bad.add(np.ones((1, 1)))
    chk = check_ledger(_tree_log(K, 1.0), ledger, delta=1e-6)
    assert not chk.ok
    assert chk.executed_counts["c"] > tree_depth(K)
    assert chk.executed_epsilon > 3 * chk.declared_epsilon


def test_local_randomizer_and_ledger_per_user():
    ledger = Ledger()
    rngs = spawn_generators(0, 2)
    for k in range(1, 11):
        add_noise(np.zeros((2, 6)), "laplace", 3.0, rngs, ledger=ledger, group="local", users=(k, k))
    log = MechanismLog("l", "local", (ReleaseGroup("local", "laplace", 3.0, Sensitivity("l1", 2.0), Structure.single()),),
                       claim=Claim(1.0, 0.0))
    chk = check_ledger(log, ledger)
    assert chk.ok and chk.executed_counts == {"local": 1}


def test_ledger_refuses_undeclared_groups_and_bad_intervals():
    ledger = Ledger()
    laplace(spawn_generators(0, 1), 2, 1.0, ledger=ledger, group="ghost", users=(1, 1))
    with pytest.raises(PrivacctError, match="ghost"):
        ledger.executed_log(_tree_log(4, 1.0))
    with pytest.raises(PrivacctError, match="users"):
        ledger.record(group="c", users=(3, 2), mechanism="laplace", scale=1.0, shape=(1,))
    with pytest.raises(PrivacctError, match="group and users"):
        laplace(spawn_generators(0, 1), 2, 1.0, ledger=ledger)


def test_primitive_bad_input():
    with pytest.raises(PrivacctError, match="scale"):
        laplace(spawn_generators(0, 1), 2, 0.0)
    with pytest.raises(PrivacctError, match="leaves"):
        TreeCounter(2, leaves=0, mechanism="laplace", scale=1.0, rngs=spawn_generators(0, 1))
    tc = TreeCounter(2, leaves=1, mechanism="laplace", scale=1.0, rngs=spawn_generators(0, 1))
    tc.add(np.zeros((1, 2)))
    with pytest.raises(PrivacctError, match="full"):
        tc.add(np.zeros((1, 2)))
    with pytest.raises(PrivacctError, match="shape"):
        TreeCounter(2, leaves=4, mechanism="laplace", scale=1.0, rngs=spawn_generators(0, 1)).add(np.zeros((1, 3)))


def test_shared_noise_is_caught_by_the_shape_check():
    """One noise value broadcast to all 6 coordinates: the draw noises 1 value, the log declares 6."""
    log = MechanismLog("l", "local", (ReleaseGroup("local", "laplace", 3.0, Sensitivity("l1", 2.0), Structure.single(),
                                                   dimension=6),), claim=Claim(1.0, 0.0))
    good, bad = Ledger(), Ledger()
    rngs = spawn_generators(0, 1)
    for k in range(1, 5):
        add_noise(np.zeros((1, 6)), "laplace", 3.0, rngs, ledger=good, group="local", users=(k, k))
        np.zeros((1, 6)) + laplace(rngs, 1, 3.0, ledger=bad, group="local", users=(k, k))
    assert check_ledger(log, good).ok
    chk = check_ledger(log, bad)
    assert not chk.ok and "dimension 6" in chk.shape_problems[0]
    assert chk.executed_epsilon == chk.declared_epsilon  # the accountant alone cannot see it
