"""A many-trial audit of private-lsvi-ucb with its y releases made in bulk (algorithms/linear_mdp/audited_y.py, issue
23 item 4) gives the primitives' tap, ledgers and bytes.

Each Gram counter (the printed tree, tree-honaker, blt) runs audited twice on the same seeds, in bulk and with
``audited_y.AUDITS_BULK_Y = False`` (seed by seed through privacct.tap.user_contribution and
privacct.mechanisms.gaussian), under canary A / B, fixed / the environment's users 2..K and the noise multiplier 1 /
0.25 (the planted noise bug); the tap's records (group, name, mechanism, scale, values, contribution, means, rows), its
unobserved list, pending shares and prescribed actions, every seed's ledger draw for draw, the regret, the updates and
the final release must be the same bytes, and a spy must see the bulk path run in the first run only (or the comparison
would compare the primitives with themselves). Then the planted mutants, one audit end to end, and the audits that keep
the primitives (audited_y.bulk_y).

Broken on purpose in audited_y.py (each tried on this file, 25 tests, then restored): the noise without its scale
(``z *= scale`` dropped: 23 fail); each record's rows the seed's index among the updating seeds instead of the seed
(18 fail); the ledger's y draws over users (1, k) instead of (1, k - 1) (22 fail); the records appended in the reverse
seed order (22 fail); the contribution canary A's share whatever the canary (13 fail).

The batched learners (batched_jdp._passes_compiled: a many-trial audit's data-free policy, release LSVI passes,
inverses and regret compiled, its episodes numpy) against ``batched_jdp.AUDITS_COMPILED = False``, each learner x
counter (tree, tree-honaker with one user per batch, blt) x the same hooks: the records, pending shares, actions,
ledger, regret and final release the same bytes. Broken on purpose: the compiled pass handing ``u_noise`` V / 2
(lsvi_jit.lsvi_compiled; 23 of 26 fail: the records' means), the compiled regret + 1e-12 (24 of 26 fail).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, CanaryPlan, RunConfig
from privacct.algorithms.linear_mdp import LEARNERS
from privacct.algorithms.linear_mdp import audited_y as Y
from privacct.algorithms.linear_mdp import batched_jdp as BJ
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences
from privacct.tap import ActionPin, AuditTap, Coupling, pinning, tapping, tap_differences

NAME = "private-lsvi-ucb"
#: (counter option, K, options over the test settings): C = 1 + 1e-6 updates every seed at once, C = 1.01 some seeds
#: only (rows of a release, different update lists per seed)
CASES = [
    ("tree", 4, {}),
    ("tree", 7, {"C": 1.01, "update_cap": 3}),
    ("tree-honaker", 5, {"update_cap": 2}),
    ("blt", 4, {}),
    ("blt", 7, {"C": 1.01, "update_cap": 3}),
]
#: (canary, fixed users, noise multiplier): each factor both ways
HOOKS = [("A", True, 1.0), ("B", True, 0.25), ("B", False, 1.0), ("A", False, 0.25)]


def config(counter, K, over, **extra) -> RunConfig:
    st = dict(LEARNERS[NAME].test_settings)
    opts = dict(st.pop("options", ()))
    opts.update(over, counter=counter)
    st.update(episodes=K, options=tuple(sorted(opts.items())), **extra)
    st.setdefault("epsilon", 1.0)
    return RunConfig(NAME, "jdp", **st)


def run_both(monkeypatch, c, seeds, hook):
    """(bulk result, primitives' result, bulk calls in each run) of one audited configuration."""
    calls = []
    real = Y.BulkY.noise

    def spy(self, *a, **k):
        calls.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(Y.BulkY, "noise", spy)
    spec = LEARNERS[NAME]
    got = spec.run(c, seeds, audit=hook)
    n_bulk = len(calls)
    monkeypatch.setattr(Y, "AUDITS_BULK_Y", False)
    want = spec.run(c, seeds, audit=hook)
    monkeypatch.setattr(Y, "AUDITS_BULK_Y", True)
    return got, want, (n_bulk, len(calls) - n_bulk)


def same_array(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and np.asarray(a).tobytes() == np.asarray(b).tobytes()
                                         and np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b))


def assert_same_tap(got, want):
    g, w = got.tap, want.tap
    assert not tap_differences(g, w), tap_differences(g, w)
    assert any(r.group == "y" for r in w.records)
    assert sorted(w.actions) == list(range(2, got.config.episodes + 1))
    assert g.pending == w.pending == {}
    assert w.canary_records == [] and w.counterfactual == {}


def draws(ledger) -> list[tuple]:
    return [tuple(d.__dict__.values()) for d in ledger.draws()]


def assert_same_run(got, want, ledger_ok: bool = True):
    assert same_array(got.regret, want.regret)
    assert same_array(got.info["final_release"], want.info["final_release"])
    assert same_array(got.info["n_updates"], want.info["n_updates"])
    assert [list(u) for u in got.info["update_episodes"]] == [list(u) for u in want.info["update_episodes"]]
    assert len(got.info["ledgers"]) == len(want.info["ledgers"])
    for lg, lw in zip(got.info["ledgers"], want.info["ledgers"], strict=True):
        assert draws(lg) == draws(lw)
    assert draws(got.ledger) == draws(want.ledger)
    assert check_ledger(got.log, got.ledger).ok == check_ledger(want.log, want.ledger).ok == ledger_ok


@pytest.mark.parametrize("counter, K, over", CASES)
@pytest.mark.parametrize("canary, fixed, mult", HOOKS)
def test_bulk_y_equals_primitives(monkeypatch, counter, K, over, canary, fixed, mult):
    c = config(counter, K, over)
    hook = AuditHook(canary, fixed_users=fixed, coins_seed=3, noise_multiplier=mult)
    got, want, (bulk, prim) = run_both(monkeypatch, c, spawn_sequences(11, 6), hook)
    assert bulk > 0 and prim == 0   # the bulk path made the first run's y releases, the primitives the second's
    assert_same_tap(got, want)
    assert_same_run(got, want)


def test_some_seeds_update():
    """C = 1.01: some updates are made by some seeds only (rows), and the seeds' update lists differ (the ledgers)."""
    spec = LEARNERS[NAME]
    got = spec.run(config("tree", 7, {"C": 1.01, "update_cap": 3}), spawn_sequences(11, 6), audit=AuditHook("A"))
    rows = [len(r.rows) for r in got.tap.records if r.group == "y"]
    assert rows and all(n == 1 for n in rows)
    names = [r.name for r in got.tap.records if r.group == "y"]
    assert len(set(names)) < len(names)   # one name, several seeds' records
    assert len({tuple(u) for u in got.info["update_episodes"]}) > 1


@pytest.mark.parametrize("mutant, counter", [("switch-on-exact-gram", "tree"), ("counter-noise-path", "blt")])
def test_mutants(monkeypatch, mutant, counter):
    """The planted mutants change the switching test or the Gram counters, not the y releases: bulk too."""
    c = config(counter, 5, {"update_cap": 2})
    got, want, (bulk, prim) = run_both(monkeypatch, c, spawn_sequences(5, 4), AuditHook("B", mutant=mutant))
    assert bulk > 0 and prim == 0
    assert_same_tap(got, want)
    assert_same_run(got, want, ledger_ok=mutant != "counter-noise-path")   # that one's ledger shows its bug


def _strip_addresses(x) -> str:
    """The result's repr without function addresses and wall-clock timings."""
    return re.sub(r"\w*seconds=[0-9.e+-]+", "", re.sub(r" at 0x[0-9a-f]+", "", repr(x)))


def test_audit_end_to_end(monkeypatch):
    """The learner audit at its audit configuration (both canaries, the trials batched): the same result both ways."""
    from privacct.audits.suite import audit_setting

    calls = []
    real = Y.BulkY.noise
    monkeypatch.setattr(Y.BulkY, "noise", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    got = audit_setting(NAME, "jdp").run(trials=300, seed=0, executor="inline")
    assert calls
    monkeypatch.setattr(Y, "AUDITS_BULK_Y", False)
    want = audit_setting(NAME, "jdp").run(trials=300, seed=0, executor="inline")
    assert _strip_addresses(got) == _strip_addresses(want)


def test_the_audits_that_keep_the_primitives(monkeypatch):
    """audited_y.bulk_y: no hook, no tap, one-run plans, billboard coupling, action pins, a tap of the other canary
    keep the primitives; the many-trial audit (faithful, the noise bug, a planted mutant) does not."""
    assert not Y.bulk_y(AuditHook("A"))   # no tap
    with tapping(AuditTap()):
        assert not Y.bulk_y(None)
        assert Y.bulk_y(AuditHook("A")) and Y.bulk_y(AuditHook("A", fixed_users=False, noise_multiplier=0.3))
        assert Y.bulk_y(AuditHook("A", mutant="switch-on-exact-gram"))
        assert not Y.bulk_y(AuditHook("B"))   # the tap's canary is A
        assert not Y.bulk_y(AuditHook("A", plan=CanaryPlan((1, 3), ("A", "B"))))
        assert not Y.bulk_y(AuditHook("A", coupling=Coupling("record")))
        with pinning(ActionPin("record")):
            assert not Y.bulk_y(AuditHook("A"))
        monkeypatch.setattr(Y, "AUDITS_BULK_Y", False)
        assert not Y.bulk_y(AuditHook("A"))
    with tapping(AuditTap(plan=frozenset({1}))):
        assert not Y.bulk_y(AuditHook("A"))
    # and through a run: a one-run audit and the billboard check's coupled run keep the primitives
    monkeypatch.setattr(Y, "AUDITS_BULK_Y", True)
    calls = []
    monkeypatch.setattr(Y.BulkY, "noise", lambda *a, **k: calls.append(1))
    spec, c = LEARNERS[NAME], config("tree", 4, {})
    spec.run(c, spawn_sequences(2, 2), audit=AuditHook("A", plan=CanaryPlan((1, 3), ("A", "B"))))
    spec.run(c, spawn_sequences(2, 2), audit=AuditHook("A", coupling=Coupling("record")))
    assert calls == []


# --- the batched learners: the releases' passes compiled in many-trial audits (batched_jdp._passes_compiled) ---

BATCHED = ["batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace"]
#: (counter option, K, batches): a release of several batches' leaves (K = 6, 3 batches), one user per batch (K = 5)
BATCHED_CASES = [(None, 6, 3), ("tree-honaker", 5, 5), ("blt", 6, 3)]


def batched_config(name, counter, K, batches) -> RunConfig:
    st = dict(LEARNERS[name].test_settings)
    opts = dict(st.pop("options", ()))
    opts["batches"] = batches
    if counter is not None:
        opts["counter"] = counter
    st.update(episodes=K, options=tuple(sorted(opts.items())))
    st.setdefault("epsilon", 1.0)
    return RunConfig(name, "jdp", **st)


def run_batched_both(monkeypatch, c, seeds, hook):
    """(compiled passes' result, numpy passes' result, compiled LSVI passes in each run)."""
    from privacct.algorithms.linear_mdp import lsvi_jit

    calls = []
    real = lsvi_jit.lsvi_compiled

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(lsvi_jit, "lsvi_compiled", spy)
    spec = LEARNERS[c.algorithm]
    got = spec.run(c, seeds, audit=hook)
    n = len(calls)
    monkeypatch.setattr(BJ, "AUDITS_COMPILED", False)
    want = spec.run(c, seeds, audit=hook)
    monkeypatch.setattr(BJ, "AUDITS_COMPILED", True)
    return got, want, (n, len(calls) - n)


@pytest.mark.parametrize("name", BATCHED)
@pytest.mark.parametrize("counter, K, batches", BATCHED_CASES)
@pytest.mark.parametrize("canary, fixed, mult", HOOKS)
def test_batched_audited_passes_compiled_equal_numpy(monkeypatch, name, counter, K, batches, canary, fixed, mult):
    c = batched_config(name, counter, K, batches)
    hook = AuditHook(canary, fixed_users=fixed, coins_seed=3, noise_multiplier=mult)
    got, want, (compiled, numpy_side) = run_batched_both(monkeypatch, c, spawn_sequences(11, 4), hook)
    assert compiled > 0 and numpy_side == 0   # the data-free policy and every release's pass compiled, first run only
    g, w = got.tap, want.tap
    assert len(g.records) == len(w.records) and any(r.group == "u" for r in w.records)
    for a, b in zip(g.records, w.records, strict=True):
        assert (a.group, a.name, a.mechanism, a.scale) == (b.group, b.name, b.mechanism, b.scale)
        for f in ("values", "contribution", "mean_a", "mean_b", "rows"):
            assert same_array(getattr(a, f), getattr(b, f)), (a.name, f)
    assert g.unobserved == w.unobserved and sorted(g.pending) == sorted(w.pending)
    for key, parts in w.pending.items():   # a share left pending (a leaf whose counter records it otherwise)
        assert all(same_array(x, y) if isinstance(y, np.ndarray) else x == y
                   for x, y in zip(g.pending[key], parts, strict=True)), key
    assert sorted(g.actions) == sorted(w.actions) == list(range(2, K + 1))
    for k in w.actions:
        assert same_array(g.actions[k], w.actions[k]), k
    assert same_array(got.regret, want.regret)
    assert same_array(got.info["final_release"], want.info["final_release"])
    assert same_array(got.info["floor_events"], want.info["floor_events"])
    assert draws(got.ledger) == draws(want.ledger)
    assert check_ledger(got.log, got.ledger).ok and check_ledger(want.log, want.ledger).ok


def test_batched_audit_end_to_end(monkeypatch):
    """The batched learner's audit at its audit configuration: the same result both ways."""
    from privacct.audits.suite import audit_setting

    name = "batched-jdp-lsvi-ucb"
    got = audit_setting(name, "jdp").run(trials=300, seed=0, executor="inline")
    monkeypatch.setattr(BJ, "AUDITS_COMPILED", False)
    want = audit_setting(name, "jdp").run(trials=300, seed=0, executor="inline")
    assert _strip_addresses(got) == _strip_addresses(want)


def test_the_batched_audits_that_keep_numpys_passes(monkeypatch):
    """batched_jdp._passes_compiled: one-run plans, billboard coupling, action pins, a hook without its tap keep
    numpy's passes; the many-trial audit and unaudited runs do not."""
    env = BJ.plan(batched_config("batched-jdp-lsvi-ucb", None, 6, 3))[1]["env"]
    assert BJ._passes_compiled(None, env)
    assert not BJ._passes_compiled(AuditHook("A"), env)   # no tap
    with tapping(AuditTap()):
        assert BJ._passes_compiled(AuditHook("A"), env)
        assert BJ._passes_compiled(AuditHook("A", fixed_users=False, noise_multiplier=0.25), env)
        assert not BJ._passes_compiled(AuditHook("B"), env)
        assert not BJ._passes_compiled(AuditHook("A", plan=CanaryPlan((1, 3), ("A", "B"))), env)
        assert not BJ._passes_compiled(AuditHook("A", coupling=Coupling("record")), env)
        with pinning(ActionPin("record")):
            assert not BJ._passes_compiled(AuditHook("A"), env)
        monkeypatch.setattr(BJ, "AUDITS_COMPILED", False)
        assert not BJ._passes_compiled(AuditHook("A"), env)
