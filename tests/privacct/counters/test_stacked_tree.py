"""The stacked tree counter (privacct/counters/stacked_tree.py) is H TreeCounters added to one by one: the same
releases (bytes), node sums, ledger draws and generator states after, for every noise kind, with and without batched
leaves, over enough steps to complete nodes of several levels; a patched draw, a counter of another class or an active
tap sends the additions one by one."""

import numpy as np
import pytest

from privacct import mechanisms as M
from privacct.counters.stacked_tree import StackedTreeCounters
from privacct.ledger import Ledger
from privacct.mechanisms import TreeCounter
from privacct.rng import spawn_generators

H, LEAVES = 3, 13   # 13 leaves: nodes of levels 0..3 complete, releases of 1..3 nodes


def _trees(mechanism, shape, seeds, leaf_users, cls=TreeCounter):
    rngs = spawn_generators(4, seeds)
    ledger = Ledger()
    trees = [cls(shape, leaves=LEAVES, mechanism=mechanism, scale=0.7, rngs=rngs, ledger=ledger, group=f"g{h + 1}",
                 leaf_users=leaf_users) for h in range(H)]
    return trees, rngs, ledger


def _xs(seeds, shape):
    rng = np.random.default_rng(9)
    x = rng.normal(size=(LEAVES, seeds, H) + shape)
    if len(shape) == 2 and shape[0] == shape[1]:
        x = x + np.swapaxes(x, -1, -2)   # symmetric, as a Gram
    return x


@pytest.mark.parametrize("seeds", [1, 4])
@pytest.mark.parametrize("mechanism, shape", [("symmetric-gaussian-matrix", (4, 4)), ("laplace", (10,)),
                                              ("gaussian", (2, 3))])
@pytest.mark.parametrize("batched_leaves", [False, True])
def test_stacked_trees_are_the_trees_one_by_one(mechanism, shape, seeds, batched_leaves):
    leaf_users = [(3 * t + 1, 3 * t + 3) for t in range(LEAVES)] if batched_leaves else None
    xs = _xs(seeds, shape)
    a, ra, la = _trees(mechanism, shape, seeds, leaf_users)
    b, rb, lb = _trees(mechanism, shape, seeds, leaf_users)
    st = StackedTreeCounters(a)
    for x in xs:
        got = st.add(x)
        want = np.stack([t.add(x[:, h]) for h, t in enumerate(b)], axis=1)
        assert got.shape == (seeds, H) + shape and got.tobytes() == want.tobytes()
    assert st.stacked_steps == LEAVES
    for ta, tb in zip(a, b, strict=True):
        assert ta.steps == tb.steps == LEAVES
        assert ta.noisy_sum().tobytes() == tb.noisy_sum().tobytes()
        assert ta.node_sum().tobytes() == tb.node_sum().tobytes()
        assert ta.exact_sum().tobytes() == tb.exact_sum().tobytes()
    assert [repr(d) for d in la.draws()] == [repr(d) for d in lb.draws()]
    assert len(list(la.draws())) == H * LEAVES
    assert [g.bit_generator.state for g in ra] == [g.bit_generator.state for g in rb]
    for h in range(H):
        want = lb.per_user_norms(f"g{h + 1}", mechanism, 0.7)
        assert la.per_user_norms(f"g{h + 1}", mechanism, 0.7).tobytes() == want.tobytes()
    with pytest.raises(Exception, match="full"):
        st.add(xs[0])


def test_a_step_one_by_one_between_stacked_steps_keeps_the_state():
    # the counters own their state (views of the stacked arrays): an addition made through counter.add in between
    shape, seeds = (3, 3), 2
    xs = _xs(seeds, shape)
    a, _, la = _trees("symmetric-gaussian-matrix", shape, seeds, None)
    b, _, lb = _trees("symmetric-gaussian-matrix", shape, seeds, None)
    st = StackedTreeCounters(a)
    for t, x in enumerate(xs):
        got = np.stack([c.add(x[:, h]) for h, c in enumerate(a)], axis=1) if t in (2, 3, 7) else st.add(x)
        want = np.stack([c.add(x[:, h]) for h, c in enumerate(b)], axis=1)
        assert got.tobytes() == want.tobytes()
    assert st.stacked_steps == LEAVES - 3
    assert [repr(d) for d in la.draws()] == [repr(d) for d in lb.draws()]


def test_a_patched_draw_or_another_class_goes_one_by_one(monkeypatch):
    shape, seeds = (5,), 2
    xs = _xs(seeds, shape)
    seen = []
    real = M.draw

    def spy(*args, **kw):
        seen.append(kw.get("group"))
        return real(*args, **kw)

    with monkeypatch.context() as m:
        m.setattr(M, "draw", spy)
        a, _, _ = _trees("laplace", shape, seeds, None)
        st = StackedTreeCounters(a)
        for x in xs[:4]:
            st.add(x)
    assert st.stacked_steps == 0 and seen == ["g1", "g2", "g3"] * 4

    class Sub(TreeCounter):
        pass

    a, _, _ = _trees("laplace", shape, seeds, None, cls=Sub)
    st = StackedTreeCounters(a)
    st.add(xs[0])
    assert st.stacked_steps == 0


def test_counters_that_differ_are_not_stacked():
    shape, seeds = (2,), 1
    a, rngs, ledger = _trees("gaussian", shape, seeds, None)
    a[1] = TreeCounter(shape, leaves=LEAVES, mechanism="gaussian", scale=0.8, rngs=rngs, ledger=ledger, group="g2")
    st = StackedTreeCounters(a)
    st.add(_xs(seeds, shape)[0])
    assert st.stacked_steps == 0
