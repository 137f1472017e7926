"""algorithms/tabular/ahead.py: TreeAhead and HonakerAhead count the compiled loop's additions (advance), refuse add
and guard their records ahead by ONE implementation (_AddedInTheLoop); the same bytes are tests/algorithms/
test_regret_pins.py's and the counters' own tests (test_episode_jit.py, test_noise_in_loop.py)."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.tabular.ahead import HonakerAhead, TreeAhead
from privacct.errors import PrivacctError
from privacct.ledger import Ledger


def _counters():
    kw = dict(leaves=4, scale=1.0, ledger=Ledger(), group="g")
    return [TreeAhead((3,), rngs=[np.random.default_rng(0)], **kw),
            HonakerAhead((3,), rngs=[np.random.default_rng(0)], **kw)]


def test_one_advance_and_one_add_for_both():
    assert TreeAhead.advance is HonakerAhead.advance and TreeAhead.add is HonakerAhead.add
    assert TreeAhead._check_reserve is HonakerAhead._check_reserve


@pytest.mark.parametrize("counter", _counters(), ids=["tree", "tree-honaker"])
def test_the_guards(counter):
    plain = {"TreeAhead": "TreeCounter", "HonakerAhead": "FactorizedCounter"}[type(counter).__name__]
    with pytest.raises(PrivacctError, match=f"{type(counter).__name__} adds in the compiled loop.*use {plain}"):
        counter.add(np.zeros((1, 3)))
    with pytest.raises(PrivacctError, match="advance: 1 additions but only 0"):
        counter.advance(1)                          # nothing recorded yet
    counter.reserve(2)
    with pytest.raises(PrivacctError, match="2 .* drawn but 0 added"):
        counter.reserve(1)                          # the recorded steps not added yet
    counter.advance(2)
    assert (counter.steps, counter.drawn) == (2, 2)
    with pytest.raises(PrivacctError, match="counter is full: it was built for leaves=4"):
        counter.reserve(3)
    counter.reserve(2)
    counter.advance(2)
    assert counter.steps == 4 and len(list(counter.ledger.draws())) >= 4   # one record per step at least
