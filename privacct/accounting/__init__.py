"""Accounting: upper bounds on the worst user's (epsilon, delta) for a mechanism log.

A small registry of accountants (one module each) behind one interface (:class:`Accountant`):
``epsilon(log, delta=...)`` and ``delta(log, epsilon=...)``, with ``supports`` / ``why_not`` as a
dry run. Accountant modules are imported on first use, so importing this package (and
``privacct.cli``) loads neither numpy, scipy nor dp_accounting.

    >>> from privacct.accounting import all_epsilons, figures, tightest_epsilon, default_delta
    >>> all_epsilons(log, delta=default_delta(log))   # {name: epsilon} for every accountant that applies
    >>> figures(log, delta=1e-6)                      # Figures: the same, the reasons of the others, the tightest
    >>> tightest_epsilon(log, delta=1e-6)             # (name, epsilon) of the smallest figure

"The tightest" is one rule, :func:`tightest_of` (the smallest figure; on a tie the first in registry
order), which :class:`Figures`, :func:`tightest_epsilon`, :mod:`privacct.explain` and ``privacct account``
read. The verdict on a claim, from these figures alone, is :mod:`privacct.accounting.verdict`
(docs/accounting.md#verdict). Every accountant answers its own closed-form calibration, if it has one
(:meth:`Accountant.closed_form_factor`, docs/accounting.md#calibration).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import NumericalError, PrivacctError, UnsupportedLogError, check_delta, check_positive, shown
from ..log import MechanismLog
from .base import DEFAULT_DELTA, Accountant, Release, default_delta, releases, require_log

# name -> (module, class); the order is the order of every report.
_REGISTRY: dict[str, tuple[str, str]] = {
    "basic": ("basic", "BasicComposition"),
    "advanced": ("advanced", "AdvancedComposition"),
    "zcdp": ("zcdp", "ZCDP"),
    "rdp": ("rdp", "RDP"),
    "pld": ("pld", "PLD"),
    "analytic-gaussian": ("analytic_gaussian", "AnalyticGaussian"),
}
ACCOUNTANT_NAMES: tuple[str, ...] = tuple(_REGISTRY)


def accountant_class(name: str) -> type[Accountant]:
    """The accountant class registered as ``name`` (its module is imported on first use)."""
    try:
        module, cls = _REGISTRY[name]
    except (KeyError, TypeError):
        raise PrivacctError(f"accountant must be one of {', '.join(ACCOUNTANT_NAMES)}, got {shown(name)}") from None
    return getattr(importlib.import_module(f".{module}", __name__), cls)


def get_accountant(name: str) -> Accountant:
    """A fresh accountant by registry name."""
    return accountant_class(name)()


def __getattr__(attr: str):
    if attr == "ACCOUNTANTS":  # {name: class}, built on first access (imports every accountant)
        return {n: accountant_class(n) for n in ACCOUNTANT_NAMES}
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def epsilon(log: MechanismLog, *, delta: float, accountant: str | None = None) -> float:
    """Epsilon at ``delta`` under the named accountant (default: the tightest that applies)."""
    return tightest_epsilon(log, delta=delta, accountant=accountant)[1]


def all_epsilons(log: MechanismLog, *, delta: float, errors: dict[str, str] | None = None) -> dict[str, float]:
    """Epsilon at ``delta`` for every accountant that applies. Reasons for the others go to ``errors``."""
    log = require_log(log)
    delta = check_delta("delta", delta, allow_zero=True)
    out: dict[str, float] = {}
    for name in ACCOUNTANT_NAMES:
        acc = get_accountant(name)
        reason = acc.why_not(log, delta=delta)
        if reason is None:
            try:
                out[name] = acc.epsilon(log, delta=delta)
                continue
            except NumericalError as e:
                reason = str(e)
        if errors is not None:
            errors[name] = reason
    return out


def tightest_of(epsilons: Mapping[str, float]) -> str | None:
    """The one "pick the tightest" rule: the accountant with the smallest figure, the first in the mapping's
    order on a tie (registry order for :func:`all_epsilons` and :class:`Figures`); None for no figure. Every
    figure is an upper bound on the same epsilon, so the smallest is the best valid one
    (docs/accounting.md#verdict)."""
    return min(epsilons, key=epsilons.__getitem__) if epsilons else None


@dataclass(frozen=True)
class Figures:
    """Every accountant's epsilon for one log at one ``delta``: the figures of those that apply
    (``epsilons``, registry order) and the reason of each that does not (``not_applicable``). Computed by
    :func:`figures`; the verdict (:func:`privacct.accounting.verdict.decide`) needs nothing else."""

    delta: float
    epsilons: tuple[tuple[str, float], ...]
    not_applicable: tuple[tuple[str, str], ...] = ()

    @property
    def tightest(self) -> str | None:
        """The accountant of the smallest figure (:func:`tightest_of`); None when none applies."""
        return tightest_of(dict(self.epsilons))

    @property
    def epsilon(self) -> float | None:
        """The tightest figure; None when no accountant applies."""
        name = self.tightest
        return None if name is None else dict(self.epsilons)[name]

    @property
    def reasons(self) -> str:
        """Why the others do not apply, ``name: reason`` joined by ``; ``."""
        return "; ".join(f"{k}: {v}" for k, v in self.not_applicable)


def figures(log: MechanismLog, *, delta: float) -> Figures:
    """Every accountant's figure for ``log`` at ``delta`` (:func:`all_epsilons` once) with the reasons of
    those that do not apply."""
    delta = check_delta("delta", delta, allow_zero=True)
    errs: dict[str, str] = {}
    eps = all_epsilons(log, delta=delta, errors=errs)
    return Figures(delta, tuple(eps.items()), tuple(errs.items()))


def tightest_epsilon(log: MechanismLog, *, delta: float, accountant: str | None = None) -> tuple[str, float]:
    """(name, epsilon): the named accountant's figure, or the smallest over all that apply (:func:`tightest_of`)."""
    log = require_log(log)
    delta = check_delta("delta", delta, allow_zero=True)
    if accountant is not None:
        return accountant, get_accountant(accountant).epsilon(log, delta=delta)
    f = figures(log, delta=delta)
    if f.tightest is None:
        raise UnsupportedLogError("no accountant applies: " + f.reasons)
    return f.tightest, f.epsilon


def delta(log: MechanismLog, *, epsilon: float, accountant: str | None = None) -> float:
    """Delta at ``epsilon`` under the named accountant (default: the smallest over all that apply)."""
    log = require_log(log)
    epsilon = check_positive("epsilon", epsilon)
    if accountant is not None:
        return get_accountant(accountant).delta(log, epsilon=epsilon)
    best = 1.0
    for name in ACCOUNTANT_NAMES:
        try:
            best = min(best, get_accountant(name).delta(log, epsilon=epsilon))
        except (UnsupportedLogError, NumericalError):
            continue
    return best


__all__ = [
    "ACCOUNTANTS", "ACCOUNTANT_NAMES", "DEFAULT_DELTA", "Accountant", "Figures", "Release", "accountant_class",
    "all_epsilons", "default_delta", "delta", "epsilon", "figures", "get_accountant", "releases", "tightest_epsilon",
    "tightest_of",
]
