"""TreeCounter with batched leaves (``leaf_users``): each node's ledger draw covers its leaves' users."""

import numpy as np
import pytest

from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.mechanisms import TreeCounter
from privacct.rng import spawn_generators


def test_nodes_record_the_users_of_their_leaves():
    ledger = Ledger()
    leaves = [(1, 3), (4, 6), (7, 9), (10, 12)]
    t = TreeCounter(2, leaves=4, mechanism="laplace", scale=1.0, rngs=spawn_generators(0, 1), ledger=ledger,
                    group="g", leaf_users=leaves)
    for _ in range(4):
        t.add(np.ones((1, 2)))
    got = [(d.first_user, d.last_user) for d in ledger.draws()]
    assert got == [(1, 3), (1, 6), (7, 9), (1, 12)]               # leaves 1, [1,2], 3, [1,4]
    assert list(ledger.per_user_counts("g")) == [3] * 3 + [2] * 6 + [1] * 3


def test_without_leaf_users_nodes_record_leaf_indices_as_users():
    ledger = Ledger()
    t = TreeCounter(1, leaves=3, mechanism="gaussian", scale=1.0, rngs=spawn_generators(0, 1), ledger=ledger, group="g")
    for _ in range(3):
        t.add(np.ones((1, 1)))
    assert [(d.first_user, d.last_user) for d in ledger.draws()] == [(1, 1), (1, 2), (3, 3)]


@pytest.mark.parametrize("leaf_users, first_user, needle", [
    ([(1, 2)], 1, "one \\(first, last\\) interval per leaf"),
    ([(1, 2), (2, 3)], 1, "increasing and disjoint"),
    ([(1, 2), (3, 4)], 2, "cannot be combined"),
])
def test_bad_leaf_users(leaf_users, first_user, needle):
    with pytest.raises(PrivacctError, match=needle):
        TreeCounter(1, leaves=2, mechanism="laplace", scale=1.0, rngs=spawn_generators(0, 1), first_user=first_user,
                    leaf_users=leaf_users)
