"""Private LSVI-UCB steps its H factorized Gram counters as one stacked counter (privacct/counters/stacked.py): the
same regret, releases, ledger and per-user weights as the H counters stepped one by one. An audited run (the planted
counter-noise-path mutant's) steps them one by one, each observed by its audit, and its ledger records what runs."""

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.registry import learners
from privacct.counters.stacked import StackedCounters
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences

K = 60


def _cfg(counter):
    # little noise and a low update rate C: every seed updates its policy (y releases between the Gram steps)
    return RunConfig("private-lsvi-ucb", "jdp", epsilon=200.0, delta=1e-5, calibration="tight", episodes=K,
                     options=(("counter", counter), ("update_cap", 3), ("beta", 0.5), ("C", 1.05)))


def _run(cfg, monkeypatch, stack: bool):
    used = []
    real = StackedCounters._stackable

    def spy(self):
        used.append(real(self) and stack)
        return used[-1]

    with monkeypatch.context() as m:
        m.setattr(StackedCounters, "_stackable", spy)
        r = learners()["private-lsvi-ucb"].run(cfg, spawn_sequences(7, 3))
    return r, used


@pytest.mark.parametrize("counter", ["blt", "sqrt-toeplitz"])
def test_stacked_gram_counters_give_the_one_by_one_run(counter, monkeypatch):
    cfg = _cfg(counter)
    a, used_a = _run(cfg, monkeypatch, True)
    b, used_b = _run(cfg, monkeypatch, False)
    assert used_a == [True] and used_b == [False]
    assert a.regret.tobytes() == b.regret.tobytes()
    assert a.info["final_release"].tobytes() == b.info["final_release"].tobytes()
    assert np.array_equal(a.info["n_updates"], b.info["n_updates"]) and a.info["n_updates"].max() > 0
    for la, lb in zip(a.info["ledgers"], b.info["ledgers"], strict=True):
        assert [repr(d) for d in la.draws()] == [repr(d) for d in lb.draws()]
        for g in a.log.release_groups:
            if g.name.startswith("gram"):
                x = la.per_user_norms(g.name, g.mechanism, g.noise_scale)
                assert x.tobytes() == lb.per_user_norms(g.name, g.mechanism, g.noise_scale).tobytes()
    assert check_ledger(a.log, a.ledger, delta=1e-5).ok


def test_the_audited_noise_path_mutant_runs_one_by_one_and_is_caught_by_the_ledger(monkeypatch):
    from privacct.algorithms.contract import AuditHook

    if "_plant_noise_path" not in vars(__import__("privacct.algorithms.linear_mdp.private_lsvi_ucb",
                                                  fromlist=["x"])):
        pytest.skip("the learner's counter-noise-path mutant is not planted in this tree")
    cfg = _cfg("blt")
    used = []
    real = StackedCounters._stackable
    monkeypatch.setattr(StackedCounters, "_stackable", lambda self: used.append(real(self)) or used[-1])
    r = learners()["private-lsvi-ucb"].run(cfg, spawn_sequences(7, 1), audit=AuditHook(canary="A", mutant="counter-noise-path"))
    assert used == [False]          # an audited run: every counter observed by the audit's tap
    chk = check_ledger(r.log, r.ledger, delta=1e-5)
    assert not chk.ok and chk.executed_epsilon > chk.declared_epsilon


@pytest.mark.parametrize("seeds", [1, 3])
def test_the_compiled_episode_gives_the_numpy_episode(seeds, monkeypatch):
    """The roll-out and history compiled (algorithms/linear_mdp/episode_jit.py, uniforms drawn ahead per seed) give the
    numpy episode's run: regret, releases, updates, floor events and ledgers, byte for byte."""
    import privacct.algorithms.linear_mdp.private_lsvi_ucb as P

    cfg = _cfg("blt")
    used = []
    real = P._compiled_episode
    monkeypatch.setattr(P, "_compiled_episode", lambda *a: used.append(real(*a)) or used[-1])
    a = learners()["private-lsvi-ucb"].run(cfg, spawn_sequences(5, seeds))
    monkeypatch.setattr(P, "_compiled_episode", lambda *a: None)
    b = learners()["private-lsvi-ucb"].run(cfg, spawn_sequences(5, seeds))
    assert used[0] is not None and a.info["n_updates"].max() > 0
    assert a.regret.tobytes() == b.regret.tobytes()
    for key in ("final_release", "n_updates", "floor_events", "cap_reached_episode"):
        assert np.asarray(a.info[key]).tobytes() == np.asarray(b.info[key]).tobytes()
    assert [u.tobytes() for u in a.info["update_episodes"]] == [u.tobytes() for u in b.info["update_episodes"]]
    for la, lb in zip(a.info["ledgers"], b.info["ledgers"], strict=True):
        assert [repr(d) for d in la.draws()] == [repr(d) for d in lb.draws()]
