"""Observations derived from the primitives (privacct.tap; docs/auditing.md#observations-from-the-primitives).

Every shipped learner is observed through its primitives; the linear-MDP learners report user 1's share of
the releases that hold her with other users (batched leaves, history-dependent responses) with
privacct.tap.user_contribution. When the hand-written builders were removed, the derived blocks equalled
theirs value for value (means, presence masks and actions included); these tests keep what can be checked
without them. The contract test checks values = user 1 + noise at the declared scale for every learner."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, RunConfig
from privacct.algorithms.registry import learners
from privacct.rng import spawn_sequences

LEARNERS = learners()


def _config(name: str, privacy: str) -> RunConfig:
    kw = dict(LEARNERS[name].test_settings)
    delta = kw.pop("delta", 0.0)
    return RunConfig(name, privacy, epsilon=1.0, delta=delta, calibration=kw.pop("calibration", "tight"), **kw)


@pytest.mark.parametrize("name", ["private-lsvi-ucb", "batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace"])
def test_linear_mdp_learners_are_observed_through_their_primitives(name):
    # batched leaves hold several users and the response releases depend on the history: the learner reports
    # user 1's share of each under both canaries (privacct.tap.user_contribution) and the primitives record it
    spec, cfg = LEARNERS[name], _config(name, "jdp")
    res = spec.run(cfg, spawn_sequences(3, 8), audit=AuditHook("A"))
    assert res.observation is None and res.tap.unobserved == []
    explicit = [r for r in res.tap.records if r.mean_a is not None]
    assert explicit and all(r.mean_b is not None for r in explicit)
    obs = spec.run_observed(cfg, spawn_sequences(3, 8), audit=AuditHook("A")).observation
    groups = {b.group for b in obs.blocks}
    assert groups == {g.name for g in spec.build_log(cfg).release_groups}   # every group observed


def test_private_lsvi_ucb_responses_are_present_exactly_where_a_seed_updated():
    spec, cfg = LEARNERS["private-lsvi-ucb"], _config("private-lsvi-ucb", "jdp")
    res = spec.run_observed(cfg, spawn_sequences(4, 16), audit=AuditHook("B"))
    n_upd = np.asarray(res.info["n_updates"])
    for b in res.observation.blocks:
        if b.group == "y":
            slot = int(b.name.rsplit(" ", 1)[1])
            present = np.ones(16, bool) if b.present is None else b.present
            assert np.array_equal(present, n_upd >= slot), b.name
            assert np.all(b.values[~present] == 0)


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
