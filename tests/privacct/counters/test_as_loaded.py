"""privacct.counters.as_loaded.AsLoaded: the guard the stacked steps and the compiled loops keep of what they stand for."""

import privacct.mechanisms as M
from privacct.counters import stacked, stacked_tree
from privacct.counters.as_loaded import AsLoaded
from privacct.counters.counter import FactorizedCounter
from privacct.mechanisms import TreeCounter


def test_a_replaced_method_or_function_is_seen_and_its_restoration_too(monkeypatch):
    guard = AsLoaded((TreeCounter, ("add", "node_noise")), (M, ("draw",)))
    assert guard.unchanged()
    with monkeypatch.context() as m:
        m.setattr(TreeCounter, "node_noise", lambda self, *a, **k: None)
        assert not guard.unchanged()
    assert guard.unchanged()
    with monkeypatch.context() as m:
        m.setattr(M, "draw", lambda *a, **k: None)
        assert not guard.unchanged()


def test_the_stacked_counters_guard_what_they_stand_for(monkeypatch):
    assert stacked._FUNCS.unchanged() and stacked_tree._LOADED.unchanged()
    monkeypatch.setattr(FactorizedCounter, "_draw", lambda self, *a, **k: None)
    assert not stacked._FUNCS.unchanged()
    monkeypatch.setattr(M, "laplace", lambda *a, **k: None)
    assert not stacked_tree._LOADED.unchanged()
