"""Ledger's tree runs (privacct/ledger.py, module docstring "Tree runs") read as the runs-only reference _RunLedger
given the same records: draws in order,
length, per-user counts and norms, usage, copies, extend, chains and pickling, for trees recorded draw by draw and in
bulk (the compiled loops' record_many), local-model runs, weighted records, and a tree key that breaks its pattern;
and it keeps a tree key's draws without closed runs (what it is for)."""

import pickle

import numpy as np
import pytest

from privacct.ledger import Ledger, _RunLedger
from privacct.ledger_tree_runs import TreeRunLedger
from privacct.mechanisms import TreeCounter
from privacct.rng import spawn_generators

K = 200


def _nodes(first, stop, c=0):
    ks = np.arange(first, stop, dtype=np.int64)
    return ks + c - (ks & -ks) + 1, ks + c


def _fill(led: Ledger) -> None:
    keys = np.array([led.key(group=f"t{j}", mechanism="gaussian", scale=1.0, shape=(3,)) for j in range(3)])
    # two trees stepped draw by draw (one over users 11.., as first_user = 11), interleaved with a local model
    tc = TreeCounter(2, leaves=K, mechanism="laplace", scale=0.5, rngs=spawn_generators(0, 1), ledger=led, group="a")
    tc11 = TreeCounter(2, leaves=K, mechanism="laplace", scale=0.5, rngs=spawn_generators(1, 1), ledger=led,
                       group="b", first_user=11)
    for t in range(1, 60):
        tc.add(np.ones((1, 2)))
        tc11.add(np.ones((1, 2)))
        led.record(group="local", users=(t, t), mechanism="gaussian", scale=2.0, shape=(1,))
    # three trees in bulk, per chunk (algorithms/linear_mixture/counter_records.py's tree_records)
    for first, stop in ((1, 50), (50, 51), (51, 130)):
        lo, hi = _nodes(first, stop)
        led.record_many(np.tile(keys, stop - first), np.repeat(lo, 3), np.repeat(hi, 3))
    # a tree that breaks its pattern (a node drawn twice), then goes on as ordinary runs
    for t in range(1, 20):
        lo, hi = _nodes(t, t + 1)
        led.record(group="broken", users=(int(lo[0]), int(hi[0])), mechanism="gaussian", scale=1.0, shape=(1,))
        if t == 12:
            led.record(group="broken", users=(int(lo[0]), int(hi[0])), mechanism="gaussian", scale=1.0, shape=(1,))
    # weighted records of one shared row (a stacked counter's), a run of single users, a key that starts off-pattern
    for t in range(1, 8):
        led.record_groups(["w1", "w2"], users=(1, t), mechanism="gaussian", scale=1.0, shape=(2,),
                          weights=[np.linspace(1, 0.5, t)] * 2)
    led.record_run(led.key(group="run", mechanism="laplace", scale=1.0, shape=(1,)), 5, 40)
    led.record(group="off", users=(1, 2), mechanism="gaussian", scale=1.0, shape=(1,))
    led.record(group="off", users=(3, 3), mechanism="gaussian", scale=1.0, shape=(1,))


def _reading(led: Ledger):
    out = [len(led), [repr(d) for d in led.draws()], sorted(led.groups()), [repr(u) for u in led.usage()]]
    for g in led.groups():
        out.append(led.per_user_counts(g).tobytes())
    for g in ("w1", "w2"):
        out.append(led.per_user_norms(g, "gaussian", 1.0).tobytes())
    return out


def test_the_old_name_is_the_ledger():
    assert TreeRunLedger is Ledger and issubclass(Ledger, _RunLedger)


def test_the_tree_run_ledger_reads_as_the_ledger():
    a, b = Ledger(), _RunLedger()
    _fill(a)
    _fill(b)
    want = _reading(b)
    assert _reading(a) == want
    assert _reading(a._copy()) == want
    assert _reading(pickle.loads(pickle.dumps(a))) == want
    ext_a, ext_b = Ledger(), _RunLedger()
    ext_a.extend(a)
    ext_a.extend(b)
    ext_b.extend(b)
    ext_b.extend(b)
    assert _reading(ext_a) == _reading(ext_b)
    assert _reading(Ledger.chain(a, b)) == _reading(Ledger.chain(b, b))


def test_tree_keys_hold_no_runs_and_a_broken_tree_does():
    a, b = Ledger(), _RunLedger()
    _fill(a)
    _fill(b)
    tree_keys = [k for k, key in enumerate(a._keys) if key[0] in ("a", "b", "t0", "t1", "t2")]
    assert len(tree_keys) == 5
    for k in tree_keys:
        assert k in a._tree and len(a._rn[k]) == 0 and len(b._rn[k]) > 50
    broken = a._index[("broken", "gaussian", 1.0, (1,), 1, False)]
    assert broken not in a._tree and len(a._rn[broken]) == len(b._rn[broken])


@pytest.mark.parametrize("name", ["private-linopt-vi", "private-lsvi-ucb", "ucb-vi"])
def test_a_learner_run_checks_the_same(name, monkeypatch):
    """A learner's run on its Ledger (tree runs) and on the runs-only reference: the same draws and the same
    check_ledger verdict and figures."""
    import importlib

    from privacct.algorithms.contract import RunConfig
    from privacct.algorithms.registry import get_learner
    from privacct.ledger import check_ledger
    from privacct.rng import spawn_sequences

    cfg = RunConfig(name, "jdp", epsilon=1.0, delta=1e-5, episodes=300)
    spec = get_learner(name)
    a = spec.run(cfg, spawn_sequences(0, 1))
    mod = importlib.import_module({"private-linopt-vi": "privacct.algorithms.linear_mixture.engine",
                                   "private-lsvi-ucb": "privacct.algorithms.linear_mdp.private_lsvi_ucb",
                                   "ucb-vi": "privacct.algorithms.tabular.learner"}[name])
    for attr in ("Ledger", "TreeRunLedger"):
        monkeypatch.setattr(mod, attr, _RunLedger, raising=False)
    b = spec.run(cfg, spawn_sequences(0, 1))
    assert not [p for p in getattr(b.ledger, "_parts", (b.ledger,)) if isinstance(p, Ledger)]   # the reference ran
    trees = [p for p in getattr(a.ledger, "_parts", (a.ledger,)) if isinstance(p, Ledger) and p._tree]
    assert trees   # the run's tree draws were kept as tree runs
    assert a.regret.tobytes() == b.regret.tobytes()
    assert [repr(d) for d in a.ledger.draws()] == [repr(d) for d in b.ledger.draws()]
    ca, cb = check_ledger(a.log, a.ledger), check_ledger(b.log, b.ledger)
    assert ca.ok and cb.ok and repr(ca) == repr(cb)
