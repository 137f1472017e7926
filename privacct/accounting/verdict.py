"""The verdict on a claim, from the accountants' figures alone (docs/accounting.md#verdict).

    >>> from privacct.accounting.verdict import verdict, claim_verdict
    >>> v = verdict(log)                  # at privacct.accounting.default_delta(log): the claim's delta
    >>> v.text, v.accounted_epsilon, v.tightest
    >>> claim_verdict(log).holds          # what ``privacct verify`` exits with (0 holds, 1 FAILS)

The rule, in one place:

* **Per log** (:func:`decide`, pure: it runs no accountant). The claim holds when the tightest
  accountant's epsilon at the claimed delta (:attr:`privacct.accounting.Figures.epsilon`, the one
  "tightest" rule :func:`privacct.accounting.tightest_of`) is at most the claimed epsilon, up to the
  relative :data:`VERDICT_RTOL` (:func:`within`): a printed formula that meets its claim exactly
  lands within a few ulps of it, on either side. A claim that no accountant certifies at its delta
  (every one not applicable, e.g. delta = 0 with Gaussian releases, or every figure beyond the float
  range) FAILS (:attr:`Verdict.uncertified`); a log without a claim has no verdict ("no claim"), and
  one that no accountant can bound at all raises UnsupportedLogError.
* **With readings** (:func:`claim_verdict`, docs/accounting.md#readings): the verdict leads with the
  reading the paper's own proof supports (:func:`lead_reading`; the log as declared when it supports
  none) and is conservative: the claim holds only when it holds under that reading AND for the log as
  declared, the noise the learner runs (:attr:`ClaimVerdict.holds`).

:func:`verdict` and :func:`claim_verdict` compute only what the rule needs: every accountant's figure
once per log decided (:func:`privacct.accounting.figures`), no budget breakdown, no calibration, no
causes. Those are :mod:`privacct.explain`, a layer a report asks for on top of a :class:`Verdict`
(``explain(log, decision=v)`` reuses its figures).

This module imports neither numpy, scipy nor dp_accounting (the accountants load on first use).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import UnsupportedLogError, check_delta
from ..log import MechanismLog
from . import Figures
from . import figures as _figures_of
from .base import default_delta, require_log

#: Relative tolerance of the verdict (docs/accounting.md#verdict): printed formulas that meet a claim exactly
#: land within ulps of it.
VERDICT_RTOL = 1e-9


def within(epsilon: float, claimed: float) -> bool:
    """``epsilon`` meets ``claimed`` up to the relative :data:`VERDICT_RTOL` (docs/accounting.md#verdict)."""
    return bool(epsilon <= claimed * (1 + VERDICT_RTOL))


@dataclass(frozen=True)
class Verdict:
    """The verdict on one log's claim at one delta, and the accountants' figures it was decided from.
    ``holds``: True / False, None without a claim."""

    log_name: str
    claimed_epsilon: float | None
    figures: Figures
    holds: bool | None

    @property
    def delta(self) -> float:
        return self.figures.delta

    @property
    def epsilons(self) -> tuple[tuple[str, float], ...]:
        return self.figures.epsilons

    @property
    def not_applicable(self) -> tuple[tuple[str, str], ...]:
        return self.figures.not_applicable

    @property
    def tightest(self) -> str | None:
        return self.figures.tightest

    @property
    def accounted_epsilon(self) -> float | None:
        return self.figures.epsilon

    @property
    def text(self) -> str:
        """``no claim``, ``holds`` or ``FAILS``: the word of the ``verdict:`` line."""
        return "no claim" if self.holds is None else ("holds" if self.holds else "FAILS")

    @property
    def uncertified(self) -> bool:
        """A claim that no accountant certifies at its delta (it FAILS for that reason)."""
        return self.claimed_epsilon is not None and self.figures.tightest is None

    @property
    def trivial(self) -> bool:
        """The claim holds with eps = 0 at the claimed delta (delta alone covers the outputs)."""
        return bool(self.holds) and self.accounted_epsilon == 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"log": self.log_name, "claimed_epsilon": self.claimed_epsilon, "delta": self.delta,
                "epsilon": dict(self.epsilons), "not_applicable": dict(self.not_applicable), "tightest": self.tightest,
                "accounted_epsilon": self.accounted_epsilon, "verdict": self.text, "holds": self.holds}


def decide(figures: Figures, claimed_epsilon: float | None, *, log_name: str = "") -> Verdict:
    """The verdict from the accountants' figures alone (module docstring; pure: no accountant runs).

    Raises UnsupportedLogError when there is nothing to decide from: no figure and no claim (nothing
    bounds the log), or no figure and no reason (no accountant at all)."""
    acc = figures.epsilon
    if claimed_epsilon is None:
        if acc is None:
            raise UnsupportedLogError(f"no accountant applies at delta={figures.delta:g}: {figures.reasons}")
        holds = None
    elif acc is None:
        if not figures.not_applicable:
            raise UnsupportedLogError(f"no accountant applies at delta={figures.delta:g}")
        holds = False
    else:
        holds = within(acc, claimed_epsilon)
    return Verdict(log_name, claimed_epsilon, figures, holds)


def verdict(log: MechanismLog, *, delta: float | None = None) -> Verdict:
    """The verdict on ``log``'s claim at ``delta`` (default :func:`privacct.accounting.default_delta`: the
    claim's delta): every accountant's figure once, then :func:`decide`."""
    log = require_log(log)
    delta = default_delta(log) if delta is None else check_delta("delta", delta, allow_zero=True)
    return decide(_figures_of(log, delta=delta), None if log.claim is None else log.claim.epsilon, log_name=log.name)


def lead_reading(log: MechanismLog) -> str | None:
    """The reading a verdict leads with (docs/accounting.md#readings): the first of ``log.readings`` that the
    paper's own proof supports, when it changes the log; None: the log as declared leads (no reading is
    supported, or the first supported one has no overrides)."""
    for r in require_log(log).readings:
        if r.supported_by:
            return r.name if r.overrides else None
    return None


@dataclass(frozen=True)
class ClaimVerdict:
    """The verdict ``privacct verify`` gives (module docstring): under ``lead_reading`` (None: the log as
    declared, and then ``lead`` is ``declared``) and for the log as declared; verify exits 0 when it
    :attr:`holds`, else 1."""

    lead_reading: str | None
    lead: Verdict
    declared: Verdict

    @property
    def holds(self) -> bool:
        """Conservative: the claim holds under the lead reading AND for the log as declared."""
        return self.lead.holds is True and self.declared.holds is True


def claim_verdict(log: MechanismLog, *, delta: float | None = None) -> ClaimVerdict:
    """The verdict of ``log``'s claim as ``privacct verify`` gives it: :func:`verdict` of the log as declared
    and, when a supported reading leads (:func:`lead_reading`), of the log under it at the same delta."""
    declared = verdict(log, delta=delta)
    name = lead_reading(log)
    lead = declared if name is None else verdict(log.under_reading(name), delta=declared.delta)
    return ClaimVerdict(name, lead, declared)


__all__ = ["ClaimVerdict", "VERDICT_RTOL", "Verdict", "claim_verdict", "decide", "lead_reading", "verdict", "within"]
