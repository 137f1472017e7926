"""Accounting: upper bounds on the worst user's (epsilon, delta) for a mechanism log.

A small registry of accountants (one module each) behind one interface (:class:`Accountant`):
``epsilon(log, delta=...)`` and ``delta(log, epsilon=...)``, with ``supports`` / ``why_not`` as a
dry run. Accountant modules are imported on first use, so importing this package (and
``privacct.cli``) loads neither numpy, scipy nor dp_accounting.

    >>> from privacct.accounting import all_epsilons, tightest_epsilon, default_delta
    >>> all_epsilons(log, delta=default_delta(log))   # {name: epsilon} for every accountant that applies
    >>> tightest_epsilon(log, delta=1e-6)             # (name, epsilon) of the smallest figure
"""

from __future__ import annotations

import importlib

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


def tightest_epsilon(log: MechanismLog, *, delta: float, accountant: str | None = None) -> tuple[str, float]:
    """(name, epsilon): the named accountant's figure, or the smallest over all that apply."""
    log = require_log(log)
    delta = check_delta("delta", delta, allow_zero=True)
    if accountant is not None:
        return accountant, get_accountant(accountant).epsilon(log, delta=delta)
    errs: dict[str, str] = {}
    figures = all_epsilons(log, delta=delta, errors=errs)
    if not figures:
        raise UnsupportedLogError("no accountant applies: " + "; ".join(f"{k}: {v}" for k, v in errs.items()))
    name = min(figures, key=lambda k: figures[k])
    return name, figures[name]


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
    "ACCOUNTANTS", "ACCOUNTANT_NAMES", "DEFAULT_DELTA", "Accountant", "Release", "accountant_class", "all_epsilons",
    "default_delta", "delta", "epsilon", "get_accountant", "releases", "tightest_epsilon",
]
