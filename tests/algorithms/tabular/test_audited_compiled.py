"""Many-trial audits of UCB-VI / UCB-PO through the compiled episode loop (issue 23 item 4; algorithms/tabular/audited.py).

An audited run compiled must give what the numpy loop gives: the same tap records in the same order (group, name,
mechanism, scale, values and contribution bit for bit, means and rows), the same unobserved list, the same
prescribed actions, the same ledger and the same regret -- for JDP (tree, tree-honaker, blt) and LDP, canary A and B,
fixed and environment users, a faithful run and the planted noise multiplier, across several compiled calls; the
compiled path is checked to have run (:class:`BulkRecords.emit` called); a blt noise path the compiled loop cannot run
is released by its counter (mode 3), which records itself, with the same bytes. An end-to-end audit gives the identical
result both ways; the runs :func:`compiles` leaves to the numpy loop (one-run plans, mutants, billboard coupling,
sqrt-toeplitz, a bare tap) do not take the compiled path.
"""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, RunConfig
from privacct.algorithms.tabular import LEARNERS
from privacct.algorithms.tabular import audited
from privacct.algorithms.tabular import learner as L
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences


def _arr(v):
    return None if v is None else (np.asarray(v).shape, np.asarray(v).tobytes())


def _summary(res):
    tap = res.tap
    recs = [(r.group, r.name, r.mechanism, r.scale, _arr(r.values), _arr(r.contribution), _arr(r.mean_a),
             _arr(r.mean_b), _arr(r.rows)) for r in tap.records]
    return {
        "records": recs,
        "unobserved": list(tap.unobserved),
        "actions": [(k, _arr(v), v.dtype.str) for k, v in tap.actions.items()],
        "ledger": [tuple(d.__dict__.values()) for d in res.ledger.draws()],
        "ledger_ok": check_ledger(res.log, res.ledger).ok,
        "regret": res.regret.tobytes(),
        "release": res.info["final_release"].tobytes(),
        "canary_records": len(tap.canary_records),
    }


def _spy(monkeypatch):
    calls = []
    real = audited.BulkRecords.emit

    def emit(self, *a, **k):
        calls.append(a[0])
        return real(self, *a, **k)

    monkeypatch.setattr(audited.BulkRecords, "emit", emit)
    return calls


def _both(monkeypatch, alg, cfg, audit, seeds):
    calls = _spy(monkeypatch)
    out = {}
    for compiled in (False, True):
        monkeypatch.setattr(L, "COMPILED", compiled)
        calls.clear()
        out[compiled] = _summary(LEARNERS[alg].run(cfg, seeds, audit=audit))
        assert bool(calls) == compiled   # the compiled audited path ran (and only there)
    return out[True], out[False]


CASES = [("jdp", "tree"), ("jdp", "tree-honaker"), ("jdp", "blt"), ("ldp", None)]


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
@pytest.mark.parametrize("privacy, counter", CASES)
@pytest.mark.parametrize("canary", ["A", "B"])
@pytest.mark.parametrize("fixed", [True, False])
@pytest.mark.parametrize("mult", [1.0, 0.25])
def test_compiled_audited_run_equals_numpy_loop(alg, privacy, counter, canary, fixed, mult, monkeypatch):
    """K = 10 (tree nodes [1, 1], [1, 2], [1, 4], [1, 8]) in calls of 3 episodes, H = 2, three seeds."""
    monkeypatch.setattr(L, "_AHEAD_EPISODES", 3)
    opts = (("e_scale", 0.05),) + ((("counter", counter),) if counter else ())
    cfg = RunConfig(alg, privacy, epsilon=1.0, delta=0.0, episodes=10, horizon=2, bonus_scale=0.01, options=opts)
    audit = AuditHook(canary, fixed_users=fixed, coins_seed=3, noise_multiplier=mult)
    got, want = _both(monkeypatch, alg, cfg, audit, spawn_sequences(5, 3))
    assert want["records"], "the numpy loop made no records"
    for key in want:
        assert got[key] == want[key], key
    assert got["ledger_ok"]


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
@pytest.mark.parametrize("privacy", ["jdp", "ldp"])
def test_audit_configuration_pooled_one_seed(alg, privacy, monkeypatch):
    """The report's audit configuration shape (H = 1, K = 4), pooled counts, one seed."""
    cfg = RunConfig(alg, privacy, epsilon=0.5, delta=0.0, episodes=4, horizon=1, options=(("pool_over_h", True),))
    got, want = _both(monkeypatch, alg, cfg, AuditHook("B"), spawn_sequences(1, 1))
    assert got == want


@pytest.mark.parametrize("alg, privacy", [("ucb-vi", "jdp"), ("ucb-po", "ldp")])
def test_end_to_end_audit_identical(alg, privacy, monkeypatch):
    from privacct.audits.suite import audit_setting

    calls = _spy(monkeypatch)
    out = {}
    for compiled in (False, True):
        monkeypatch.setattr(audited, "AUDITS_COMPILED", compiled)
        calls.clear()
        r = audit_setting(alg, privacy, calibration="paper", epsilon=1.0).run(trials=600, seed=0, executor="inline")
        assert bool(calls) == compiled
        out[compiled] = r.to_dict() if hasattr(r, "to_dict") else r
    a, b = out[True], out[False]
    if isinstance(a, dict):
        for d in (a, b):
            for key in [k for k in d if "time" in k or "second" in k or "cpu" in k]:
                d.pop(key)
    assert a == b
    assert out[True] is not None


def test_the_numpy_loop_keeps_the_other_audits(monkeypatch):
    """One-run plans, planted policy mutants, the billboard coupling, sqrt-toeplitz and a bare tap: numpy loop."""
    from privacct.algorithms.contract import CanaryPlan
    from privacct.tap import Coupling, tapping

    calls = _spy(monkeypatch)
    seeds = spawn_sequences(0, 2)
    jdp = RunConfig("ucb-vi", "jdp", epsilon=1.0, delta=0.0, episodes=6, horizon=2)
    runs = [
        (jdp, AuditHook("A", plan=CanaryPlan((1, 3), ("A", "B")))),
        (jdp, AuditHook("A", mutant="bonus-on-exact-counts")),
        (jdp, AuditHook("A", coupling=Coupling("record"))),
        (RunConfig("ucb-vi", "jdp", epsilon=1.0, delta=0.0, episodes=6, horizon=2,
                   options=(("counter", "sqrt-toeplitz"),)), AuditHook("A")),
    ]
    for cfg, audit in runs:
        LEARNERS["ucb-vi"].run(cfg, seeds, audit=audit)
    with tapping():
        LEARNERS["ucb-vi"].run(jdp, seeds)
    assert not calls
    LEARNERS["ucb-vi"].run(jdp, seeds, audit=AuditHook("A"))
    assert calls   # while the many-trial audit runs compiled


@pytest.mark.parametrize("alg", ["ucb-vi", "ucb-po"])
def test_blt_the_compiled_loop_cannot_run_is_released_by_its_counter(alg, monkeypatch):
    """A blt noise path that is not the compiled recursion (P and Q swapped in the mixing step): the audited compiled
    run hands each statistic to the counter (mode 3), whose observer records itself; still the numpy loop's bytes."""
    from privacct.counters.blt import Blt

    original = Blt.mix_noise

    def swapped(self, counter, st, t, z):
        counter._P, counter._Q = counter._Q, counter._P
        try:
            original(self, counter, st, t, z)
        finally:
            counter._P, counter._Q = counter._Q, counter._P

    monkeypatch.setattr(Blt, "mix_noise", swapped)
    cfg = RunConfig(alg, "jdp", epsilon=1.0, delta=0.0, episodes=6, horizon=2, options=(("counter", "blt"),))
    got, want = _both(monkeypatch, alg, cfg, AuditHook("B", noise_multiplier=0.5), spawn_sequences(2, 2))
    assert want["records"]
    assert got == want
