"""Accounting: upper bounds on the worst user's (epsilon, delta) for a mechanism log.

A small registry of accountants behind one interface (:class:`Accountant`): ``epsilon(log,
delta=...)`` and ``delta(log, epsilon=...)``, with ``supports`` / ``why_not`` as a dry run.

    >>> from privacct.accounting import all_epsilons, tightest_epsilon
    >>> all_epsilons(log, delta=1e-6)          # {name: epsilon} for every accountant that applies
    >>> tightest_epsilon(log, delta=1e-6)      # (name, epsilon) of the smallest figure
"""

from __future__ import annotations

from ..errors import NumericalError, PrivacctError, UnsupportedLogError, check_delta
from ..log import MechanismLog
from .accountants import PLD, RDP, ZCDP, AdvancedComposition, AnalyticGaussian, BasicComposition
from .base import Accountant, Release, releases, require_log

ACCOUNTANTS: dict[str, type[Accountant]] = {
    "basic": BasicComposition,
    "advanced": AdvancedComposition,
    "zcdp": ZCDP,
    "rdp": RDP,
    "pld": PLD,
    "analytic-gaussian": AnalyticGaussian,
}


def get_accountant(name: str) -> Accountant:
    """A fresh accountant by registry name."""
    try:
        return ACCOUNTANTS[name]()
    except KeyError:
        raise PrivacctError(f"accountant must be one of {', '.join(ACCOUNTANTS)}, got {name!r}") from None


def epsilon(log: MechanismLog, *, delta: float, accountant: str | None = None) -> float:
    """Epsilon at ``delta`` under the named accountant (default: the tightest that applies)."""
    return tightest_epsilon(log, delta=delta, accountant=accountant)[1]


def all_epsilons(log: MechanismLog, *, delta: float, errors: dict[str, str] | None = None) -> dict[str, float]:
    """Epsilon at ``delta`` for every accountant that applies. Reasons for the others go to ``errors``."""
    log = require_log(log)
    delta = check_delta("delta", delta, allow_zero=True)
    out: dict[str, float] = {}
    for name in ACCOUNTANTS:
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
    if accountant is not None:
        return get_accountant(accountant).delta(log, epsilon=epsilon)
    best = 1.0
    for name in ACCOUNTANTS:
        acc = get_accountant(name)
        try:
            best = min(best, acc.delta(log, epsilon=epsilon))
        except (UnsupportedLogError, NumericalError):
            continue
    return best


__all__ = [
    "ACCOUNTANTS", "Accountant", "Release", "releases", "get_accountant", "epsilon", "delta",
    "all_epsilons", "tightest_epsilon",
]
