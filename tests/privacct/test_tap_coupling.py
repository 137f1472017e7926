"""privacct.tap.Coupling: the billboard check's record / replay of user 1's values in the primitives."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.errors import PrivacctError
from privacct.mechanisms import TreeCounter, add_noise
from privacct.tap import AuditTap, Coupling, tapping, user_contribution


def _tree_run(x1, coupling, seed=7):
    """A 4-leaf Laplace tree, user 1 adds ``x1``, users 2..4 fixed; every release returned."""
    rngs = [np.random.default_rng(seed)]
    out = []
    with tapping(AuditTap(coupling=coupling)):
        t = TreeCounter((3,), leaves=4, mechanism="laplace", scale=1.0, rngs=rngs)
        for k in range(1, 5):
            x = np.array([x1]) if k == 1 else np.full((1, 3), float(k))
            out.append(t.add(x))
    return np.array(out)


def test_replay_makes_every_release_canary_as_to_the_bit():
    a, b = np.array([1.0, 0.0, 0.5]), np.array([0.0, 1.0, 0.25])
    rec = Coupling("record")
    ra = _tree_run(a, rec)
    rb = _tree_run(b, rec.replay())
    assert np.array_equal(ra, rb)                       # bit for bit
    plain = _tree_run(b, None)                          # not coupled: the releases differ by a - b
    assert not np.array_equal(ra, plain)
    assert len(rec.values) == 1 and np.array_equal(rec.values[0], a[None])


def test_replay_notes_divergence_and_keeps_its_own_value():
    rec = Coupling("record")
    _tree_run(np.zeros(3), rec)
    rep = rec.replay()
    with tapping(AuditTap(coupling=rep)):
        t = TreeCounter((2,), leaves=2, mechanism="laplace", scale=1.0, rngs=[np.random.default_rng(0)])
        t.add(np.ones((1, 2)))                           # another shape than canary A's value
    assert rep.diverged and "shape" in rep.diverged[0]


def test_local_report_is_replaced_and_shared_releases_are_shifted():
    rec = Coupling("record")
    with tapping(AuditTap(coupling=rec)):
        ra = add_noise(np.array([[2.0]]), "laplace", 1.0, [np.random.default_rng(1)], users=(1, 1))
    rep = rec.replay()
    with tapping(AuditTap(canary="B", coupling=rep)):
        rb = add_noise(np.array([[5.0]]), "laplace", 1.0, [np.random.default_rng(1)], users=(1, 1))
    assert np.array_equal(ra, rb)
    # a release of user 1 with others, her share reported: the replayed run's noise moves by a - b
    from privacct.mechanisms import gaussian

    with tapping(AuditTap(canary="B", coupling=Coupling("replay"))) as tap:
        user_contribution("y", a=np.array([[3.0]]), b=np.array([[1.0]]))
        z = gaussian([np.random.default_rng(2)], (1,), 1.0, group="y", users=(1, 2))
    assert z[0, 0] == pytest.approx(np.random.default_rng(2).standard_normal() + 2.0)
    assert tap.coupling.shifted


def test_noise_over_user_1_without_her_share_is_uncoupled():
    from privacct.mechanisms import gaussian

    c = Coupling("record")
    with tapping(AuditTap(coupling=c)):
        gaussian([np.random.default_rng(0)], (2,), 1.0, group="g", users=(1, 3))
    assert c.uncoupled and c.uncoupled[0].startswith("g:")


def test_modes():
    with pytest.raises(PrivacctError, match="record or replay"):
        Coupling("both")
    with pytest.raises(PrivacctError, match="recorded"):
        Coupling("replay").replay()
