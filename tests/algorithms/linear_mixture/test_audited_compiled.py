"""A many-trial learner audit's runs through the compiled episode loop (issue 23 item 4) give the numpy loop's tap.

Every learner x privacy model (JDP counters: the printed tree, tree-honaker, blt; LDP messages; Gaussian and Laplace)
is run audited twice on the same seeds, compiled and with ``engine.COMPILED = False`` (the numpy loop, whose
primitives record what the audit observes, privacct.tap), under canary A / B, fixed / the environment's users 2..K
and the noise multiplier 1 / 0.25 (the planted noise bug); the tap's records (group, name, mechanism, scale, values,
contribution, means, rows), its unobserved list and its prescribed actions, the ledger draw for draw, the regret and
the final release must be the same bytes, and a spy must see the compiled loop run (or the comparison would compare
numpy with itself). K = 260 crosses the 128-episode chunk before the node [1, 256]. Then one audit end to end, and
the audits that stay on the numpy loop (audit_records.audit_compiles).

Broken on purpose (each tried on this file, 65 tests, then restored): the tree's records of the nodes [1, 2^j], j >= 1,
dropped (38 fail); the Gaussian noise read one value later (44 fail); tree-honaker's node [1, 2^j] read from its
step's first draw instead of its last (13 fail); Laplace's E1 and E2 swapped (12 fail); the fixed users started where
the canary starts (9 fail); canary B's first reward r_max in the compiled roll-out (8 fail: the reward family).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, CanaryPlan, RunConfig
from privacct.algorithms.linear_mixture import LEARNERS
from privacct.algorithms.linear_mixture import engine as E
from privacct.algorithms.linear_mixture.audit_records import audit_compiles
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences
from privacct.tap import ActionPin, AuditTap, Coupling, pinning, tapping, tap_differences

# (learner, privacy, counter option, K, other settings)
CASES = [
    ("ldp-ucrl-vtr", "ldp", None, 3, {}),
    ("pp-ucrl-vtr", "jdp", None, 5, {}),
    ("pp-ucrl-vtr", "jdp", None, 6, {"bonus_scale": 0.01, "epsilon": 50.0}),   # Q not clipped to a constant
    ("pp-ucrl-vtr", "jdp", "tree-honaker", 6, {}),
    ("pp-ucrl-vtr", "jdp", "blt", 4, {}),
    ("pp-ucrl-vtr", "ldp", None, 2, {}),
    ("pp-ucrl-vtr-laplace", "jdp", None, 5, {}),
    ("pp-ucrl-vtr-laplace", "jdp", "tree-honaker", 4, {}),
    ("pp-ucrl-vtr-laplace", "ldp", None, 3, {}),
    ("pp-ucrl-vtr-plus", "jdp", None, 5, {}),
    ("pp-ucrl-vtr-plus", "ldp", None, 3, {}),
    ("private-linopt-vi", "jdp", None, 5, {}),
    ("private-linopt-vi", "jdp", "blt", 3, {}),
    ("private-linopt-po", "jdp", None, 5, {}),
    ("private-linopt-po", "jdp", "tree-honaker", 4, {}),
]
#: (canary, fixed users, noise multiplier): each factor both ways
HOOKS = [("A", True, 1.0), ("B", True, 0.25), ("B", False, 1.0), ("A", False, 0.25)]


def config(name, privacy, counter, K, over):
    spec = LEARNERS[name]
    st = dict(spec.test_settings)
    st.update(episodes=K, **over)
    if counter is not None:
        st["options"] = (("counter", counter),)
    st.setdefault("epsilon", 1.0)
    return RunConfig(name, privacy, **st)


def run_both(monkeypatch, c, seeds, hook):
    """(compiled result, numpy result, compiled calls of each) of one audited configuration."""
    calls = []
    real = E._run_compiled

    def spy(*a, **k):
        calls.append(a[0])
        return real(*a, **k)

    monkeypatch.setattr(E, "_run_compiled", spy)
    spec = LEARNERS[c.algorithm]
    got = spec.run(c, seeds, audit=hook)
    n_compiled = len(calls)
    monkeypatch.setattr(E, "COMPILED", False)
    want = spec.run(c, seeds, audit=hook)
    monkeypatch.setattr(E, "COMPILED", True)
    return got, want, (n_compiled, len(calls) - n_compiled)


def same_array(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.asarray(a).tobytes() == np.asarray(b).tobytes()
                                         and np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b))


def assert_same_tap(got, want):
    g, w = got.tap, want.tap
    assert not tap_differences(g, w), tap_differences(g, w)
    assert len(w.records) > 0
    assert sorted(w.actions) == list(range(2, got.config.episodes + 1))
    assert g.pending == w.pending == {}
    assert w.canary_records == [] and w.counterfactual == {}


def assert_same_run(got, want):
    assert same_array(got.regret, want.regret)
    assert same_array(got.info["final_release"], want.info["final_release"])
    assert same_array(got.info["non_pd_events"], want.info["non_pd_events"])
    assert got.info["beta_first_episode"] == want.info["beta_first_episode"]
    dg = [tuple(d.__dict__.values()) for d in got.ledger.draws()]
    dw = [tuple(d.__dict__.values()) for d in want.ledger.draws()]
    assert len(dg) == len(dw) and dg == dw
    assert check_ledger(got.log, got.ledger).ok and check_ledger(want.log, want.ledger).ok


@pytest.mark.parametrize("name, privacy, counter, K, over", CASES)
@pytest.mark.parametrize("canary, fixed, mult", HOOKS)
def test_audited_compiled_equals_numpy(monkeypatch, name, privacy, counter, K, over, canary, fixed, mult):
    c = config(name, privacy, counter, K, over)
    hook = AuditHook(canary, fixed_users=fixed, coins_seed=3, noise_multiplier=mult)
    got, want, (compiled, numpy_side) = run_both(monkeypatch, c, spawn_sequences(11, 3), hook)
    assert (compiled, numpy_side) == (1, 0)   # the compiled loop ran for the first run only
    assert_same_tap(got, want)
    assert_same_run(got, want)


@pytest.mark.parametrize("counter", [None, "tree-honaker"])
def test_chunks_crossed(monkeypatch, counter):
    """K = 260: the node [1, 256] is drawn in the second 128-episode chunk (its noise at an offset of that chunk)."""
    c = config("pp-ucrl-vtr", "jdp", counter, 260, {"bonus_scale": 0.01, "epsilon": 50.0})
    got, want, calls = run_both(monkeypatch, c, spawn_sequences(4, 2), AuditHook("B", noise_multiplier=0.5))
    assert calls == (1, 0)
    assert any(r.name.endswith("[1, 256]") or r.name.endswith("1..256") for r in want.tap.records)
    assert_same_tap(got, want)
    assert_same_run(got, want)


def _strip_addresses(x) -> str:
    """The result's repr without function addresses and wall-clock timings."""
    return re.sub(r"\w*seconds=[0-9.e+-]+", "", re.sub(r" at 0x[0-9a-f]+", "", repr(x)))


@pytest.mark.parametrize("name, privacy", [("pp-ucrl-vtr", "jdp"), ("ldp-ucrl-vtr", "ldp")])
def test_audit_end_to_end(monkeypatch, name, privacy):
    """The learner audit at its audit configuration (both canaries, the trials batched): the same result both ways."""
    from privacct.audits.suite import audit_setting

    calls = []
    real = E._run_compiled
    monkeypatch.setattr(E, "_run_compiled", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    got = audit_setting(name, privacy).run(trials=300, seed=0, executor="inline")
    assert calls
    monkeypatch.setattr(E, "COMPILED", False)
    want = audit_setting(name, privacy).run(trials=300, seed=0, executor="inline")
    assert _strip_addresses(got) == _strip_addresses(want)


def test_the_audits_that_keep_the_numpy_loop(monkeypatch):
    """audit_records.audit_compiles: one-run plans, billboard coupling, action pins, mutants, a tap without a hook or
    with a pending share keep the numpy loop; the many-trial audit (faithful or the noise bug) does not."""
    assert audit_compiles(None)
    assert audit_compiles(AuditHook("A")) and audit_compiles(AuditHook("B", fixed_users=False, noise_multiplier=0.3))
    assert not audit_compiles(AuditHook("A", plan=CanaryPlan((1, 3), ("A", "B"))))
    assert not audit_compiles(AuditHook("A", coupling=Coupling("record")))
    assert not audit_compiles(AuditHook("A", mutant="bonus-on-exact-counts"))
    with pinning(ActionPin("record")):
        assert not audit_compiles(AuditHook("A"))
    with tapping(AuditTap()):
        assert not audit_compiles(None)
        assert audit_compiles(AuditHook("A"))
    with tapping(AuditTap()) as tap:
        tap.pending["gram[h=1]"] = (np.zeros(1), np.zeros(1), None, None)
        assert not audit_compiles(AuditHook("A"))
    # and through a run: a one-run audit and the billboard check's coupled run take the numpy loop
    calls = []
    monkeypatch.setattr(E, "_run_compiled", lambda *a, **k: calls.append(1))
    c = config("pp-ucrl-vtr", "jdp", None, 4, {})
    spec = LEARNERS["pp-ucrl-vtr"]
    spec.run(c, spawn_sequences(2, 2), audit=AuditHook("A", plan=CanaryPlan((1, 3), ("A", "B"))))
    spec.run(c, spawn_sequences(2, 2), audit=AuditHook("A", coupling=Coupling("record")))
    assert calls == []
