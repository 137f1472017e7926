"""The registry of continual-counting strategies: one object per strategy (:class:`~privacct.counters.base.CounterStrategy`),
one file each, and every list of names derived from here (docs/counters.md#strategies).

    >>> from privacct.counters.registry import get_strategy, register, strategy_names
    >>> strategy_names()                       # ('tree', 'tree-honaker', 'sqrt-toeplitz', 'blt'), in this order
    >>> get_strategy("blt").column_norm(structure, "l2")
    >>> register(MyStrategy())                 # a strategy of one's own: in every list of names from now on

The built-in strategies are named here with the file and object that define them, and that file is imported the
first time the object is asked for (as :mod:`privacct.accounting` does for accountants): :mod:`privacct.log`
validates names against this registry, and ``privacct --help`` lists them, without loading numpy. Adding a
built-in strategy is its file plus one line of :data:`_BUILTIN`; a strategy of one's own (a plug-in, a test) is
one :func:`register` call and no other edit.

The order is the order of every report and of ties (:func:`privacct.counters.compare.least_noise` keeps the
earlier name): the built-ins in :data:`_BUILTIN`'s order, then registered strategies as registered.

:data:`NAMES` (re-exported as ``privacct.log.FACTORIZED_STRATEGIES`` and ``privacct.counters.strategies.STRATEGIES``)
is a live read-only view of the names, not a snapshot: names bound to it at import (``COUNTERS =
FACTORIZED_STRATEGIES``) follow later registrations, and a parser built with ``choices=list(NAMES)`` offers the
names registered when it is built.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from typing import overload

from ..errors import MAX_COUNT, PrivacctError, shown
from .base import CounterStrategy

#: name -> (module of this package, object): the built-in strategies, in the order of every report.
_BUILTIN: dict[str, tuple[str, str]] = {
    "tree": ("tree", "TREE"),
    "tree-honaker": ("tree_honaker", "TREE_HONAKER"),
    "sqrt-toeplitz": ("sqrt_toeplitz", "SQRT_TOEPLITZ"),
    "blt": ("blt", "BLT"),
}
_MAX_NAME_CHARS = 200   # privacct.log.MAX_NAME_CHARS: a strategy's name is a structure field of a log

_loaded: dict[str, CounterStrategy] = {}
_registered: dict[str, CounterStrategy] = {}


def strategy_names() -> tuple[str, ...]:
    """The registered strategies' names, in order (imports no strategy's file)."""
    return tuple(_BUILTIN) + tuple(_registered)


def get_strategy(name: object) -> CounterStrategy:
    """The strategy registered as ``name`` (a built-in's file is imported on first use)."""
    if isinstance(name, str):
        got = _loaded.get(name) or _registered.get(name)
        if got is not None:
            return got
        if name in _BUILTIN:
            module, attr = _BUILTIN[name]
            obj = getattr(importlib.import_module(f".{module}", __package__), attr)
            if not isinstance(obj, CounterStrategy) or obj.name != name:
                raise PrivacctError(f"privacct.counters.{module}.{attr} must be the CounterStrategy named {name!r}")
            _loaded[name] = obj
            return obj
    raise PrivacctError(f"strategy must be one of {', '.join(strategy_names())}, got {shown(name)}")


def strategies() -> tuple[CounterStrategy, ...]:
    """Every registered strategy, in order (imports every built-in's file)."""
    return tuple(get_strategy(n) for n in strategy_names())


def register(strategy: CounterStrategy) -> CounterStrategy:
    """Add ``strategy`` (an instance of a :class:`CounterStrategy` subclass with every abstract method) under its
    ``name``; returns it. A name already registered is refused, as is a name a log could not carry."""
    if not isinstance(strategy, CounterStrategy):
        raise PrivacctError(f"a counter strategy must be a CounterStrategy instance, got {shown(strategy)}")
    name = getattr(strategy, "name", None)
    if not isinstance(name, str) or not 1 <= len(name) <= _MAX_NAME_CHARS or not name.isprintable() or name != name.strip():
        raise PrivacctError(f"a counter strategy's name must be printable text of 1 to {_MAX_NAME_CHARS} characters "
                            f"without surrounding spaces, got {shown(name)}")
    if name in _BUILTIN or name in _registered:
        raise PrivacctError(f"counter strategy {name!r} is already registered")
    for attr, kind in (("summary", str), ("uniform", bool), ("toeplitz", bool), ("takes_buffers", bool),
                       ("step_cost_growth", int), ("draws_per_step", float)):
        value = getattr(strategy, attr, None)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise PrivacctError(f"counter strategy {name!r}: {attr} must be a {kind.__name__}, got {shown(value)}")
    if strategy.step_cost_growth not in (0, 1) or not 1.0 <= strategy.draws_per_step <= MAX_COUNT:
        raise PrivacctError(f"counter strategy {name!r}: step_cost_growth must be 0 or 1 and draws_per_step >= 1")
    _registered[name] = strategy
    return strategy


def unregister(name: str) -> None:
    """Remove a strategy added by :func:`register` (the built-ins stay)."""
    if name in _BUILTIN:
        raise PrivacctError(f"counter strategy {name!r} is built in and cannot be unregistered")
    if name not in _registered:
        raise PrivacctError(f"no counter strategy {shown(name)} was registered")
    del _registered[name]


class StrategyNames(Sequence[str]):
    """A live, read-only view of :func:`strategy_names` (a sequence of str: ``in``, iteration, indexing, ``len``,
    ``", ".join``, ``list``; equal to the tuple of the names). Module docstring: why live."""

    __slots__ = ()

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...

    def __getitem__(self, i):
        return strategy_names()[i]

    def __len__(self) -> int:
        return len(strategy_names())

    def __iter__(self) -> Iterator[str]:
        return iter(strategy_names())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in _BUILTIN or name in _registered)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StrategyNames):
            return True
        if isinstance(other, (tuple, list)):
            return tuple(other) == strategy_names()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a view that changes, like a list

    def __add__(self, other: object) -> tuple[str, ...]:
        if isinstance(other, (tuple, list, StrategyNames)):
            return strategy_names() + tuple(other)
        return NotImplemented

    def __radd__(self, other: object) -> tuple[str, ...]:
        if isinstance(other, (tuple, list)):
            return tuple(other) + strategy_names()
        return NotImplemented

    def __repr__(self) -> str:
        return repr(strategy_names())


#: The names, live (module docstring).
NAMES = StrategyNames()

__all__ = ["NAMES", "StrategyNames", "get_strategy", "register", "strategies", "strategy_names", "unregister"]
