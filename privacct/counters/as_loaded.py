"""Functions as a module loaded them: the guard of a compiled or stacked path that stands for them.

A fast path (a stacked counter step, a compiled episode loop) reproduces, bit for bit, what some class methods and
module functions do. A test, an audit or a planted bug may replace one of them later (a class-level patch); the fast
path would then no longer stand for the code that should run. :class:`AsLoaded` keeps the functions as the fast
path's module loaded them; :meth:`AsLoaded.unchanged` says whether every one is still the one there (then the fast
path may run; otherwise the caller takes the path that calls the replaced code). Used by
:mod:`privacct.counters.stacked`, :mod:`privacct.counters.stacked_tree` and the linear-mixture engine.
"""

from __future__ import annotations

from operator import is_
from typing import Sequence


class AsLoaded:
    """The attributes ``names`` of each ``owner`` (a class or a module), as they are when made."""

    __slots__ = ("_owners", "_names", "_functions")

    def __init__(self, *groups: tuple[object, Sequence[str]]) -> None:
        pairs = [(owner, name) for owner, names in groups for name in names]
        self._owners = tuple(o for o, _ in pairs)
        self._names = tuple(n for _, n in pairs)
        self._functions = tuple(getattr(o, n) for o, n in pairs)

    def unchanged(self) -> bool:
        """Whether every attribute is still the object it was when this was made (identity)."""
        return all(map(is_, map(getattr, self._owners, self._names), self._functions))


__all__ = ["AsLoaded"]
