"""The checks a planted bug meets (:mod:`privacct.audits.mutants`, :func:`privacct.audits.suite.check_learner`):
the accountant, the ledger and the audit, and the report of what each found.

Its own module, imported by both the mutants registry and the learner suite, so that neither imports the other in a
circle (issue 22).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from privacct.errors import PrivacctError
from privacct.ledger import Ledger, check_ledger, shape_problems

#: The checks of :func:`run_checks` (a learner mutant adds the billboard check, :func:`privacct.audits.suite.check_learner`).
CHECKS = ("accountant", "ledger", "audit")


@dataclass
class MutantReport:
    """What each check found for one mutant; eps in nats (None where a check refused)."""

    name: str
    description: str
    claimed_epsilon: float
    claimed_delta: float
    caught_by: list[str]
    accountant_epsilon: float | None
    ledger_epsilon: float | None
    audit_epsilon_lower_bound: float | None
    notes: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    audit: dict | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "caught_by": list(self.caught_by),
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_delta": self.claimed_delta,
            "epsilons": {"accountant": self.accountant_epsilon, "ledger": self.ledger_epsilon,
                         "audit": self.audit_epsilon_lower_bound},
            "notes": dict(self.notes),
            "audit_verdict": None if self.audit is None else self.audit.get("verdict"),
            "seconds": self.seconds,
            "audit": self.audit,
        }


def run_checks(name: str, description: str, log, *, epsilon: float, delta: float, checks,
               ledger: Callable[[], Ledger | None], audit: Callable[[], Any]) -> MutantReport:
    """The three checks, written once for planted mechanisms and planted learners.

    accountant: the tightest eps of the declared ``log`` at ``delta`` against the claim ``epsilon``;
    ledger: ``ledger()`` (one seed's executed draws, None if the run kept none) against ``log`` by
    :func:`privacct.ledger.check_ledger` and the draw-shape check; audit: ``audit()`` (an
    :class:`privacct.audits.runner.AuditResult`), caught on a ``fails`` verdict only. ``checks``
    selects which run. eps in nats; a check that is refused reports None and its reason.
    """
    from privacct.accounting import tightest_epsilon

    t0 = time.perf_counter()
    caught, notes = [], {}
    acc_eps = led_eps = aud_eps = None
    audit_dict = None
    if "accountant" in checks:
        acc_name, acc_eps = tightest_epsilon(log, delta=delta)
        notes["accountant"] = f"{acc_name}: eps = {acc_eps:.4g} for the declared log"
        if acc_eps > epsilon * (1 + 1e-9):
            caught.append("accountant")
    if "ledger" in checks:
        executed = ledger()
        if executed is None:
            problems = ["the run returned no ledger"]
        else:
            problems = shape_problems(log, executed)
            try:
                lc = check_ledger(log, executed, delta=delta)
                led_eps = lc.executed_epsilon
                if not lc.ok:
                    problems.insert(0, f"executed eps {lc.executed_epsilon:.4g} > declared {lc.declared_epsilon:.4g} "
                                       f"(per-user counts {lc.executed_counts} vs declared {lc.declared_counts})")
            except PrivacctError as e:
                problems.insert(0, f"refused: {e}")
        notes["ledger"] = "; ".join(problems) or "executed log matches the declared log"
        if problems:
            caught.append("ledger")
    if "audit" in checks:
        r = audit()
        aud_eps = r.epsilon_lower_bound
        audit_dict = r.to_dict()
        accounted = getattr(r, "accounted_epsilon", None)
        notes["audit"] = (f"eps_lb = {aud_eps:.4g} ({r.test}); GDP mu >= {r.mu_lower_bound:.3g}; verdict {r.verdict}"
                          + ("" if accounted is None else f"; accounted at this configuration {accounted:.4g}"))
        if r.verdict == "fails":
            caught.append("audit")
    return MutantReport(name, description, epsilon, delta, caught, acc_eps, led_eps, aud_eps,
                        notes, time.perf_counter() - t0, audit_dict)


__all__ = ["CHECKS", "MutantReport", "run_checks"]
