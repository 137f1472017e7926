"""The compiled linear-mixture loop runs the named tree-honaker and BLT counters (issue 21: counter throughput) with the
numpy loop's bytes.

Each learner family (Gaussian transitions only, Laplace, reward regression, mirror descent, variance weights) with
``counter=tree-honaker`` and ``counter=blt`` runs compiled and with ``engine.COMPILED = False`` (the numpy loop, whose
counters are privacct's ``FactorizedCounter``), on the same seeds across the 128-episode chunk: the regret, the final
release, the non-PD counts and the first beta must be the same bytes, the ledger the same draws in the same order and
the same per-user weighted sums bit for bit (BLT's executed-encoder rows, privacct/counters/counter.py), every counter
left in the same state (steps, exact sum, release noise, its strategy's state), and the compiled path must have run
with that strategy (a spy), or the comparison would compare numpy with itself. Then the runs the compiled loop refuses:
sqrt-toeplitz, and a BLT noise path that is not the one the compiled step runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.linear_mixture import LEARNERS
from privacct.algorithms.linear_mixture import aggregators as AG
from privacct.algorithms.linear_mixture import engine as E
from privacct.algorithms.linear_mixture import episode_jit as J
from privacct.ledger import check_ledger
from privacct.rng import spawn_generators, spawn_sequences


def cfg(name, counter, **kw):
    base = dict(epsilon=1.0, delta=0.0 if name.endswith("laplace") else 1e-5, episodes=130, env="hard-to-learn",
                bonus_scale=0.1, options=(("counter", counter),))
    base.update(kw)
    return RunConfig(name, privacy="jdp", **base)


def _draws(ledger):
    return [tuple(d.__dict__.values()) for d in ledger.draws()]


def _sums(ledger):
    return {k: (v[0].tobytes(), v[1].tobytes()) for k, v in ledger._weighted.items()}


_STATE = ("steps", "_exact", "_noise", "_est", "_zhist", "_uhist")


def _state(aggs):
    """Every counter's state, in group order, as bytes."""
    out = []
    for a in aggs:
        for name, c in a.counters.items():
            out.append((name,) + tuple(getattr(c, f).tobytes() if isinstance(getattr(c, f), np.ndarray)
                                       else getattr(c, f) for f in _STATE if hasattr(c, f)))
    return out


def run_both(monkeypatch, c, seeds):
    """(compiled result, numpy result, compiled strategies, compiled counters' state, numpy counters' state)."""
    calls, made = [], []
    real, real_init = E._run_compiled, AG.TreeNoise.__init__

    def spy(*a, **k):
        calls.append(E._counter_strategy(a[2]))
        return real(*a, **k)

    def init(self, *a, **k):
        real_init(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(E, "_run_compiled", spy)
    monkeypatch.setattr(AG.TreeNoise, "__init__", init)
    spec = LEARNERS[c.algorithm]
    got = spec.run(c, seeds)
    n = len(made)
    monkeypatch.setattr(E, "COMPILED", False)
    want = spec.run(c, seeds)
    monkeypatch.setattr(E, "COMPILED", True)
    return got, want, calls, _state(made[:n]), _state(made[n:])


def assert_same(got, want):
    assert got.regret.tobytes() == want.regret.tobytes()
    assert got.info["final_release"].tobytes() == want.info["final_release"].tobytes()
    assert got.info["non_pd_events"].tobytes() == want.info["non_pd_events"].tobytes()
    assert got.info["beta_first_episode"] == want.info["beta_first_episode"]
    assert len(got.ledger) == len(want.ledger) and _draws(got.ledger) == _draws(want.ledger)
    assert _sums(got.ledger) == _sums(want.ledger)
    assert check_ledger(got.log, got.ledger).ok
    assert got.ledger.executed_log(got.log) == want.ledger.executed_log(want.log)


CASES = [
    # (learner, overrides): p only (Gaussian), Laplace (upper triangles, exponentials), reward regression (p and r),
    # mirror descent, variance weights (p and q); the chunk crossed (K = 130), K = 2 (one leaf)
    ("pp-ucrl-vtr", {}),
    ("pp-ucrl-vtr", {"env": "riverswim-lm", "episodes": 2}),
    ("pp-ucrl-vtr-laplace", {}),
    ("private-linopt-vi", {"env": "riverswim-lm", "episodes": 40}),
    ("private-linopt-po", {}),
    ("pp-ucrl-vtr-plus", {}),
    # little noise, small bonus: the statistics move with every bit of the counters' releases
    ("pp-ucrl-vtr", {"epsilon": 50.0, "bonus_scale": 0.01, "episodes": 60}),
]


@pytest.mark.parametrize("counter, code", [("tree-honaker", J.HONAKER), ("blt", J.BLT)])
@pytest.mark.parametrize("name, over", CASES)
def test_compiled_counter_equals_numpy_bytes(monkeypatch, name, over, counter, code):
    c = cfg(name, counter, **over)
    got, want, calls, state_got, state_want = run_both(monkeypatch, c, spawn_sequences(7, 3))
    assert calls == [code]   # the compiled loop ran, once, with this strategy
    assert_same(got, want)
    assert state_got == state_want and len(state_got) == len(got.log.release_groups)
    if counter == "blt":
        assert _sums(got.ledger)   # the weighted rows were recorded


def test_one_seed_and_many_chunks(monkeypatch):
    """One seed, K = 300 (three chunks), both strategies, Gaussian and Laplace."""
    for name in ("pp-ucrl-vtr", "pp-ucrl-vtr-laplace"):
        for counter, code in (("tree-honaker", J.HONAKER), ("blt", J.BLT)):
            got, want, calls, sg, sw = run_both(monkeypatch, cfg(name, counter, episodes=300), spawn_sequences(3, 1))
            assert calls == [code]
            assert_same(got, want)
            assert sg == sw


def test_sqrt_toeplitz_keeps_the_numpy_loop(monkeypatch):
    calls = []
    monkeypatch.setattr(E, "_run_compiled", lambda *a, **k: calls.append(a[0]))
    LEARNERS["pp-ucrl-vtr"].run(cfg("pp-ucrl-vtr", "sqrt-toeplitz", episodes=20), spawn_sequences(1, 2))
    assert calls == []


def test_blt_noise_path_not_the_compiled_one_keeps_the_numpy_loop(monkeypatch):
    """A BLT noise path other than the recursion the compiled step runs (here: the mixing step with P and Q swapped,
    as a class-level change of Blt.mix_noise) is probed by the ledger from what it runs; the compiled step would run
    another one, so the run takes the numpy loop (engine._blt_step_ok), and the unchanged path is admitted."""
    from privacct.counters.blt import Blt

    counters = []
    real_init = AG.TreeNoise.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        counters.extend(self.counters.values())

    monkeypatch.setattr(AG.TreeNoise, "__init__", init)
    calls = []
    real = E._run_compiled
    monkeypatch.setattr(E, "_run_compiled", lambda *a, **k: (calls.append(a[0]), real(*a, **k))[1])
    c = cfg("pp-ucrl-vtr", "blt", episodes=20)
    LEARNERS["pp-ucrl-vtr"].run(c, spawn_sequences(1, 2))
    assert calls == [J.TREE] and E._blt_step_ok(counters[0])
    original = Blt.mix_noise

    def swapped(self, counter, st, t, z):
        counter._P, counter._Q = counter._Q, counter._P
        try:
            original(self, counter, st, t, z)
        finally:
            counter._P, counter._Q = counter._Q, counter._P

    monkeypatch.setattr(Blt, "mix_noise", swapped)
    assert not E._blt_step_ok(counters[0])
    calls.clear()
    LEARNERS["pp-ucrl-vtr"].run(c, spawn_sequences(1, 2))
    assert calls == []


def test_honaker_records_are_the_counters():
    """counter_records.honaker_records: per episode, per group, the leaf then the nodes [k - 2^i + 1, k] in order,
    the records FactorizedCounter._draw makes (checked against a tree-honaker counter's own ledger)."""
    from privacct.algorithms.linear_mixture.counter_records import honaker_records
    from privacct.counters.counter import FactorizedCounter
    from privacct.ledger import Ledger

    want = Ledger()
    cs = [FactorizedCounter((2,), strategy="tree-honaker", leaves=40, mechanism="gaussian", scale=1.0 + g,
                            rngs=spawn_generators(0, 2), ledger=want, group=f"g{g}") for g in range(3)]
    for _ in range(37):
        for c in cs:
            c.add(np.zeros((2, 2)))
    got = Ledger()
    keys = np.array([got.key(group=f"g{g}", mechanism="gaussian", scale=1.0 + g, shape=(2,), batch=2) for g in range(3)],
                    dtype=np.int64)
    honaker_records(got, keys, 1, 17)
    honaker_records(got, keys, 17, 38)
    assert _draws(got) == _draws(want)


def test_blt_rows_recorded_eagerly_when_not_kept_lazily(monkeypatch):
    """A row the ledger does not keep lazily (privacct/ledger.py _prefix_step refuses it) is recorded per group by
    Ledger.record, as the numpy loop's counters record it: the same draws and the same per-user sums."""
    from privacct.ledger import Ledger

    monkeypatch.setattr(Ledger, "_prefix_step", lambda self, *a: False)
    got, want, calls, sg, sw = run_both(monkeypatch, cfg("private-linopt-vi", "blt", episodes=40), spawn_sequences(2, 2))
    assert calls == [J.BLT]
    assert_same(got, want)
    assert sg == sw


@pytest.mark.parametrize("counter, code", [("tree-honaker", J.HONAKER), ("blt", J.BLT)])
@pytest.mark.parametrize("name", ["pp-ucrl-vtr", "private-linopt-po"])
def test_non_pd_episodes_take_numpy_inverse(monkeypatch, name, counter, code):
    """A tiny shift: some Sigma are not PD; the compiled loop stops there, numpy's floor makes those inverses and the
    loop resumes (its ledger records made per stretch between stops): the numpy loop's bytes."""
    c = cfg(name, counter, options=(("counter", counter), ("shift_scale", 1e-6)))
    got, want, calls, sg, sw = run_both(monkeypatch, c, spawn_sequences(0, 3))
    assert calls == [code] and np.all(want.info["non_pd_events"] > 0)
    assert_same(got, want)
    assert sg == sw
