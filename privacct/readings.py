"""Every reading of an ambiguous paper, accounted: eps, verdict and dominant family per reading, which
reading the paper's own proof supports, and the verdict that holds in all of them
(docs/accounting.md#readings).

    >>> from privacct.readings import account_readings
    >>> summary = account_readings(log)          # () readings -> None
    >>> summary.verdict_in_every_reading, [r.name for r in summary.supported], summary.lead.name

A log's readings are :class:`privacct.log.Reading` records; a reading without overrides is the log
as declared. When no reading is the declared log, the declared log is shown first as
``(as declared)``. Each reading is accounted at the same delta as the declared log (the claim's),
through :func:`privacct.explain.explain`. :attr:`ReadingsSummary.lead` is the reading a report leads
with: the one :func:`privacct.accounting.verdict.lead_reading` names (the rule lives there, once), else the
declared log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .accounting import default_delta
from .accounting.verdict import lead_reading
from .explain import Explanation, _finite, explain
from .log import MechanismLog

AS_DECLARED = "(as declared)"


@dataclass(frozen=True)
class ReadingResult:
    """One reading accounted. ``declared``: this reading is the log as declared."""

    name: str
    description: str
    supported_by: str
    declared: bool
    explanation: Explanation

    @property
    def verdict(self) -> str:
        return self.explanation.verdict

    def to_dict(self) -> dict[str, Any]:
        ex = self.explanation
        return {"name": self.name, "description": self.description, "supported_by": self.supported_by,
                "proof_supports": bool(self.supported_by), "declared": self.declared,
                "accounted_epsilon": _finite(ex.accounted_epsilon), "accountant": ex.tightest, "verdict": ex.verdict,
                "over_noising_factor": _finite(ex.over_noising_factor),
                "dominant_family": ex.breakdown.dominant_family.name,
                "families": [{"name": f.name, "cost": _finite(f.cost), "share": _finite(f.share),
                              "epsilon_alone": _finite(f.epsilon_alone)} for f in ex.breakdown.families],
                "causes": [c.text for c in ex.causes]}


@dataclass(frozen=True)
class ReadingsSummary:
    """All readings of one log at one delta. ``lead_reading``: the name of the reading the verdict leads with
    (:func:`privacct.accounting.verdict.lead_reading` of the log, the one rule); None: the log as declared leads."""

    delta: float
    results: tuple[ReadingResult, ...]
    lead_reading: str | None = None

    @property
    def supported(self) -> tuple[ReadingResult, ...]:
        """The readings the paper's own privacy proof supports."""
        return tuple(r for r in self.results if r.supported_by)

    @property
    def lead(self) -> ReadingResult:
        """The reading a report leads with (``lead_reading``, chosen by :func:`privacct.accounting.verdict.lead_reading`:
        the first one the paper's own proof supports when it changes the log), else the log as declared
        (``privacct verify`` and the report's rows both lead with it; the others are shown beside)."""
        if self.lead_reading is None:
            return self.declared
        return next(r for r in self.results if r.name == self.lead_reading)

    @property
    def declared(self) -> ReadingResult:
        """The log as declared (the noise the learner runs): a named reading without overrides, or ``(as declared)``."""
        return next(r for r in self.results if r.declared)

    @property
    def verdict_in_every_reading(self) -> str:
        """``FAILS`` / ``holds`` when every reading agrees, else ``depends on the reading``."""
        verdicts = {r.verdict for r in self.results}
        return verdicts.pop() if len(verdicts) == 1 else "depends on the reading"

    def to_dict(self) -> dict[str, Any]:
        return {"delta": self.delta, "verdict_in_every_reading": self.verdict_in_every_reading,
                "supported_by_proof": [r.name for r in self.supported], "readings": [r.to_dict() for r in self.results]}


def account_readings(log: MechanismLog, *, delta: float | None = None,
                     declared: Explanation | None = None) -> ReadingsSummary | None:
    """Every reading of ``log`` accounted at ``delta`` (default: the log's default delta); None
    for a log without readings. ``declared``: the declared log's explanation, if already computed."""
    if not log.readings:
        return None
    delta = default_delta(log) if delta is None else delta
    results = []
    if not any(not r.overrides for r in log.readings):
        results.append(ReadingResult(AS_DECLARED, "the log as declared", "", True,
                                     declared if declared is not None else explain(log, delta=delta)))
    for r in log.readings:
        if not r.overrides and declared is not None:
            ex = declared
        else:
            ex = explain(log.under_reading(r.name) if r.overrides else log, delta=delta)
        results.append(ReadingResult(r.name, r.description, r.supported_by, not r.overrides, ex))
    return ReadingsSummary(delta, tuple(results), lead_reading(log))


__all__ = ["AS_DECLARED", "ReadingResult", "ReadingsSummary", "account_readings"]
