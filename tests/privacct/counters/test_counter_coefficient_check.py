"""A FactorizedCounter's check that its noise recursion did not change after its first draw (the ledger's executed
weights describe what runs; privacct/counters/counter.py ``_row_weights``) skips the comparison of the coefficients'
bytes only for the very immutable objects it probed (blt's tuples ``_P``, ``_Q``: ``parameter_attributes``); any
other object is compared by its bytes, and refused when they differ."""

import numpy as np
import pytest

from privacct.counters.counter import FactorizedCounter
from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.rng import spawn_generators


def _counter(strategy, K, *, ledger=None):
    return FactorizedCounter(1, strategy=strategy, leaves=K, mechanism="gaussian", scale=1.0,
                             rngs=spawn_generators(1, 1), ledger=ledger, group=None if ledger is None else "g")


def _run(c, steps):
    for _ in range(steps):
        c.add(np.ones((1,) + c.shape))
    return c


@pytest.mark.parametrize("change", ["halved", "last bit"])
def test_a_recursion_rebound_to_another_tuple_after_the_first_draw_is_refused(change):
    """The check skips the bytes only for the very (immutable) objects it probed: a tuple of other values bound after
    the first draw -- halved, or one coefficient moved by its last bit -- is compared by its bytes and refused."""
    ledger = Ledger()
    c = _run(_counter("blt", 10, ledger=ledger), steps=3)
    assert type(c._Q) is tuple and c._probed_objects == (c._P, c._Q)
    q = c._Q
    c._Q = tuple(0.5 * v for v in q) if change == "halved" else (float(np.nextafter(q[0], np.inf)),) + q[1:]
    with pytest.raises(PrivacctError, match="changed after its first draw"):
        c.add(np.ones((1, 1)))
    assert c.steps == 3 and len(ledger) == 3


def test_the_same_coefficients_rebound_as_a_new_object_are_compared_by_their_bytes_and_kept():
    ledger, ref = Ledger(), Ledger()
    a, b = _run(_counter("blt", 10, ledger=ledger), steps=3), _run(_counter("blt", 10, ledger=ref), steps=3)
    a._P, a._Q = list(a._P), tuple(float(q) for q in a._Q)    # equal bytes, other objects (a list is mutable)
    for c in (a, b):
        _run(c, steps=7)
    assert a.noisy_sum().tobytes() == b.noisy_sum().tobytes()
    assert ledger.per_user_norms("g", "gaussian", 1.0).tobytes() == ref.per_user_norms("g", "gaussian", 1.0).tobytes()


def test_a_strategy_that_reads_other_coefficients_gets_no_identity_shortcut():
    """A subclass of blt whose recursion reads its coefficients elsewhere names no attributes (parameter_attributes
    None): every draw compares the bytes of what mixing_parameters returns."""
    from privacct.counters.blt import Blt

    class Other(Blt):
        def mixing_parameters(self, counter):
            return (np.asarray(counter._P, dtype=float), np.asarray(counter._Q, dtype=float))

    assert Blt().parameter_attributes() == ("_P", "_Q") and Other().parameter_attributes() is None
