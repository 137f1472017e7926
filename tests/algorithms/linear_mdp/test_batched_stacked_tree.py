"""The batched linear-MDP learners step their H Gram trees as one (privacct/counters/stacked_tree.py, issue 23 item 3):
the same regret, final releases, ledger draws, per-user accounting and check_ledger verdict as the H trees stepped one
by one (``batched_jdp.STACKED = False``), compiled episodes or the numpy loop, at one and three seeds; the stacked path
is the one that ran (every release stacked)."""

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.linear_mdp import LEARNERS
from privacct.algorithms.linear_mdp import batched_jdp as BJ
from privacct.counters.stacked_tree import StackedTreeCounters
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences


def _run(name, seeds, stacked, compiled, monkeypatch, **kw):
    made = []
    real = StackedTreeCounters.__init__

    def spy(self, counters):
        real(self, counters)
        made.append(self)

    with monkeypatch.context() as m:
        if stacked is not None:   # None: the module's default
            m.setattr(BJ, "STACKED", stacked)
        m.setattr(BJ, "COMPILED", compiled)
        m.setattr(StackedTreeCounters, "__init__", spy)
        res = LEARNERS[name].run(RunConfig(name, **kw), spawn_sequences(5, seeds))
    return res, made


@pytest.mark.parametrize("seeds", [1, 3])
@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("name, delta", [(BJ.NAME, 1e-5), (BJ.NAME_LAPLACE, 0.0)])
def test_stacked_trees_give_the_one_by_one_run(name, delta, seeds, compiled, monkeypatch):
    # 13 batches: 12 releases, so nodes of levels 0..2 complete and a release sums up to 3 nodes per tree
    kw = dict(privacy="jdp", epsilon=5.0, delta=delta, episodes=1300, calibration="tight",
              options=(("batches", 13), ("beta", 0.5)))
    a, made_a = _run(name, seeds, True, compiled, monkeypatch, **kw)
    b, made_b = _run(name, seeds, False, compiled, monkeypatch, **kw)
    assert len(made_a) == 1 and made_a[0].stacked_steps == 12 and made_b == []
    assert a.regret.tobytes() == b.regret.tobytes()
    assert len(set(np.round(a.regret[0], 12))) >= 2   # the releases moved the learner
    assert a.info["final_release"].tobytes() == b.info["final_release"].tobytes()
    assert a.info["floor_events"].tobytes() == b.info["floor_events"].tobytes()
    assert [repr(d) for d in a.ledger.draws()] == [repr(d) for d in b.ledger.draws()]
    for g in a.log.release_groups:
        x = a.ledger.per_user_norms(g.name, g.mechanism, g.noise_scale)
        assert x.tobytes() == b.ledger.per_user_norms(g.name, g.mechanism, g.noise_scale).tobytes()
    assert check_ledger(a.log, a.ledger).ok and check_ledger(b.log, b.ledger).ok


def test_the_learners_stack_by_default(monkeypatch):
    kw = dict(privacy="jdp", epsilon=5.0, delta=1e-5, episodes=200, calibration="tight",
              options=(("batches", 5), ("beta", 0.5)))
    _, made = _run(BJ.NAME, 1, None, True, monkeypatch, **kw)
    assert len(made) == 1 and made[0].stacked_steps == 4


def test_the_counter_option_and_audited_runs_do_not_stack(monkeypatch):
    # option counter: factorized counters (privacct.counters.counter), not trees; an audited run: user 1's share of leaf
    # 1 is reported to each tree before its addition (privacct.tap.user_contribution), so the trees step one by one
    from privacct.algorithms.contract import AuditHook

    kw = dict(privacy="jdp", epsilon=5.0, delta=1e-5, episodes=200, calibration="tight",
              options=(("batches", 5), ("beta", 0.5), ("counter", "blt")))
    _, made = _run(BJ.NAME, 1, True, True, monkeypatch, **kw)
    assert made == []
    kw["options"] = (("batches", 5), ("beta", 0.5))
    with monkeypatch.context() as m:
        made = []
        real = StackedTreeCounters.__init__
        m.setattr(StackedTreeCounters, "__init__", lambda self, cs: made.append(real(self, cs)))
        LEARNERS[BJ.NAME].run(RunConfig(BJ.NAME, **kw), spawn_sequences(5, 1), audit=AuditHook(canary="A"))
    assert made == []
