"""Observations derived from the primitives (privacct.tap; docs/auditing.md#observations-from-the-primitives).

The linear-MDP learners still write their own observation (batched leaves hold several users; Private
LSVI-UCB's responses depend on the history). Where both exist, every release the primitives can see must
equal the hand-written block value for value, and the releases they cannot see must be named, not dropped
silently. The families observed through their primitives alone are covered by the contract test."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.base import AuditHook, RunConfig, derived_observation, pair_taps
from privacct.algorithms.registry import learners
from privacct.rng import spawn_sequences

LEARNERS = learners()


def _config(name: str, privacy: str) -> RunConfig:
    kw = dict(LEARNERS[name].test_settings)
    delta = kw.pop("delta", 0.0)
    return RunConfig(name, privacy, epsilon=1.0, delta=delta, calibration=kw.pop("calibration", "tight"), **kw)


@pytest.mark.parametrize("name", ["private-lsvi-ucb", "batched-jdp-lsvi-ucb"])
def test_derived_releases_equal_the_hand_written_ones(name):
    spec, cfg = LEARNERS[name], _config(name, "jdp")
    seeds = spawn_sequences(3, 8)
    a, b = spec.run(cfg, seeds, audit=AuditHook("A")), spec.run(cfg, seeds, audit=AuditHook("B"))
    assert a.observation is not None                       # the family's own
    means = pair_taps(a.tap, b.tap)
    derived = {blk.name: blk for blk in derived_observation(a, "A", means).blocks}
    own = {blk.name: blk for blk in a.observation.blocks}
    for n, d in derived.items():
        o = own[n]
        np.testing.assert_allclose(d.values, o.values, rtol=0, atol=1e-9 * max(1.0, d.scale))
        np.testing.assert_array_equal(np.broadcast_to(d.mean_a, o.values.shape), np.broadcast_to(o.mean_a, o.values.shape))
        np.testing.assert_array_equal(np.broadcast_to(d.mean_b, o.values.shape), np.broadcast_to(o.mean_b, o.values.shape))
    missing_groups = {own[n].group for n in set(own) - set(derived)}
    named = " ".join(n for n, _ in means.left_out)
    assert all(g in named for g in missing_groups), (missing_groups, means.left_out)


def test_private_lsvi_ucb_gram_nodes_are_seen_and_responses_are_named():
    spec, cfg = LEARNERS["private-lsvi-ucb"], _config("private-lsvi-ucb", "jdp")
    seeds = spawn_sequences(4, 4)
    a, b = spec.run(cfg, seeds, audit=AuditHook("A")), spec.run(cfg, seeds, audit=AuditHook("B"))
    means = pair_taps(a.tap, b.tap)
    assert {n.split(" ")[0] for n in means.names()} == {f"gram_h{h + 1}" for h in range(cfg.horizon or 2)}
    assert any(n.startswith("y ") and "without user 1's share" in r for n, r in means.left_out)


def test_a_tree_with_batched_leaves_is_named_not_observed():
    from privacct.mechanisms import TreeCounter
    from privacct.tap import tapping

    rngs = [np.random.default_rng(0)]
    with tapping() as tap:
        c = TreeCounter((2,), leaves=2, mechanism="laplace", scale=1.0, rngs=rngs, group="g",
                        leaf_users=((1, 3), (4, 6)))
        c.add(np.ones((1, 2)))
        c.add(np.ones((1, 2)))
    assert tap.records == []
    assert [(u.group, u.users) for u in tap.unobserved] == [("g", (1, 3))]


def test_a_redrawing_counter_is_recorded_draw_by_draw_and_only_what_is_released():
    from privacct.mechanisms import TreeCounter
    from privacct.tap import tapping

    class Redraw(TreeCounter):
        def add(self, x):
            out = super().add(x)
            return out + self.node_noise(1, self.steps) - self.node_noise(1, self.steps)   # two more draws over user 1

    with tapping() as tap:
        c = Redraw((1,), leaves=4, mechanism="gaussian", scale=1.0, rngs=[np.random.default_rng(1)], group="g")
        for t in range(4):
            c.add(np.full((1, 1), float(t + 1)))
    # add() draws the completing node ([1, t] at t = 1, 2, 4) + 2 redraws per step over user 1
    assert len(tap.records) == 3 + 2 * 4
    assert all(np.array_equal(r.contribution, np.ones((1, 1))) for r in tap.records)   # user 1 added 1
    assert len({r.name for r in tap.records}) == len(tap.records)                      # unique names


def test_outside_an_audit_nothing_is_recorded():
    from privacct import tap
    from privacct.mechanisms import TreeCounter, add_noise

    c = TreeCounter((1,), leaves=2, mechanism="laplace", scale=1.0, rngs=[np.random.default_rng(0)], group="g")
    c.add(np.ones((1, 1)))
    add_noise(np.ones((1, 1)), "laplace", 1.0, [np.random.default_rng(0)], group="g", users=(1, 1))
    tap.prescribed(2, np.zeros((1, 3)))
    assert tap.current() is None
