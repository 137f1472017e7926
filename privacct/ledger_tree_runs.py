"""Kept for imports and pickles: the tree-run encoding that was prototyped here (issue 23) is now
:class:`privacct.ledger.Ledger`'s own (module docstring of :mod:`privacct.ledger`, "Tree runs"), so every ledger --
the shipped learners' and a user's own -- keeps a binary tree's node draws as (offset, count).
``TreeRunLedger`` is :class:`privacct.ledger.Ledger`."""

from __future__ import annotations

from .ledger import Ledger

TreeRunLedger = Ledger

__all__ = ["TreeRunLedger"]
