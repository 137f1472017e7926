"""The three small protocols of an audit (after DP-Auditorium, Kong et al. 2023, arXiv 2307.05608).

* :class:`Mechanism`: ``mechanism(dataset, rng, size) -> array`` with first axis ``size``: that
  many independent outputs of the mechanism on ``dataset``, drawn from the numpy Generator ``rng``
  only (so the same Generator gives the same bytes).
* :class:`NeighbourGenerator`: ``generator() -> iterable of (D, D')`` neighbouring pairs; the
  runner audits every pair it yields and splits the failure probability across them.
* :class:`PropertyTester`: ``select(x_sel, y_sel, alpha, delta)`` chooses tests on one half of the
  samples; ``evaluate(tests, x_eval, y_eval, alpha, delta)`` turns the other half into counts and
  confidence bounds. :class:`privacct.audits.testers.ThresholdTester` is the implementation used here.
* :class:`DeclaresPower` (optional, on a mechanism): ``mechanism.power_criterion(D, D')`` returns the
  power criterion of the audit of that pair, derived from the mechanism's own exact privacy-loss
  distribution (:func:`privacct.audits.power.structure_power`, :func:`privacct.audits.power.rates_power`),
  or None. A mechanism without it is a black box: its audit passes only with ``power=`` or ``leakier=``
  (docs/auditing.md#verdicts-and-power).

:func:`privacct.audits.mechanism_audit.run_audit` composes the three; :func:`privacct.audits.audit_mechanism` is the
one-pair shortcut.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class Mechanism(Protocol):
    def __call__(self, dataset: Any, rng: np.random.Generator, size: int) -> np.ndarray: ...


@runtime_checkable
class NeighbourGenerator(Protocol):
    def __call__(self) -> Iterable[tuple[Any, Any]]: ...


@runtime_checkable
class PropertyTester(Protocol):
    def select(self, x_sel: np.ndarray, y_sel: np.ndarray, *, alpha: float, delta: float) -> Sequence[Any]: ...

    def evaluate(self, tests: Sequence[Any], x_eval: np.ndarray, y_eval: np.ndarray, *, alpha: float,
                 delta: float) -> list[Any]: ...


@runtime_checkable
class DeclaresPower(Protocol):
    def power_criterion(self, dataset: Any, neighbour: Any) -> Callable | None: ...


@dataclass(frozen=True)
class FixedPair:
    """A generator that yields one fixed neighbouring pair (D, D')."""

    dataset: Any
    neighbour: Any

    def __call__(self) -> Iterable[tuple[Any, Any]]:
        yield (self.dataset, self.neighbour)


@dataclass(frozen=True)
class PairList:
    """A generator over a fixed list of neighbouring pairs."""

    pairs: tuple[tuple[Any, Any], ...]

    def __call__(self) -> Iterable[tuple[Any, Any]]:
        yield from self.pairs
