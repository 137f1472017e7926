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

#: The checks a planted POLICY leak of a JDP learner meets (:func:`privacct.audits.suite.check_learner`): the three above
#: (its ``audit`` observes the released statistics), the black-box action audit, the billboard check and the one-run
#: action audit, each at the configuration that suits it (:attr:`MutantReport.configurations`; docs/auditing.md#planted-bugs).
LEARNER_CHECKS = CHECKS + ("action audit", "billboard", "one-run audit")

#: The one-run RELEASED-statistics audit (:func:`privacct.audits.one_run_learner.one_run_audit_learner`; a Toeplitz
#: counter's canaries seen through differences of releases, docs/auditing.md#factorized-counters), run by
#: :func:`privacct.audits.mutants.check_mutant` for a learner mutant at its own configuration.
ONE_RUN_RELEASED = "one-run released audit"

#: The checks a planted NOISE-PATH bug of a learner's counter meets (``counter-noise-path-private-lsvi-ucb``):
#: the accountant, the ledger (its executed encoder) and the one-run released-statistics audit, each at the paper's K.
COUNTER_PATH_CHECKS = ("accountant", "ledger", ONE_RUN_RELEASED)

#: The name a check has in ``caught_by`` where it differs from the name that selects it.
CAUGHT_AS = {"billboard": "billboard check"}


def describe_config(cfg, **extra) -> str:
    """One line naming a learner configuration (a :class:`privacct.algorithms.contract.RunConfig`): model, calibration,
    claim (eps in nats, delta), K, H, environment, bonus scale and options, then ``extra`` (e.g. trials=20000)."""
    parts = [f"{cfg.algorithm} {cfg.privacy} {cfg.calibration} ({cfg.epsilon:g}, {cfg.delta:g})", f"K={cfg.episodes}"]
    if cfg.horizon is not None:
        parts.append(f"H={cfg.horizon}")
    if cfg.env is not None:
        parts.append(f"env {cfg.env}")
    if cfg.bonus_scale is not None and cfg.bonus_scale != 1:
        parts.append(f"bonus_scale {cfg.bonus_scale:g}")
    parts += [f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in cfg.options]
    parts += [f"{k.replace('_', ' ')} {v:g}" if isinstance(v, float) else f"{k.replace('_', ' ')} {v}"
              for k, v in extra.items()]
    return ", ".join(parts)


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
    #: per check that ran: the configuration it ran at (one line: K, H, key options, trials or canaries)
    configurations: dict[str, str] = field(default_factory=dict)
    #: per check that ran: its verdict (``fails``/``passes``/``inconclusive`` for an audit or a check with one;
    #: ``caught``/``not caught`` for the accountant and the ledger)
    verdicts: dict[str, str] = field(default_factory=dict)

    def add(self, check: str, *, verdict: str, note: str, configuration: str) -> None:
        """Record one more check that ran (caught on a ``fails`` verdict, named ``CAUGHT_AS.get(check, check)``)."""
        self.notes[check] = note
        self.verdicts[check] = verdict
        self.configurations[check] = configuration
        if verdict == "fails":
            self.caught_by.append(CAUGHT_AS.get(check, check))

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
            "configurations": dict(self.configurations),
            "verdicts": dict(self.verdicts),
            "audit_verdict": None if self.audit is None else self.audit.get("verdict"),
            "seconds": self.seconds,
            "audit": self.audit,
        }


def run_checks(name: str, description: str, log, *, epsilon: float, delta: float, checks,
               ledger: Callable[[], Ledger | None], audit: Callable[[], Any], configuration: str = "",
               audit_configuration: str | None = None) -> MutantReport:
    """The three checks, written once for planted mechanisms and planted learners.

    accountant: the tightest eps of the declared ``log`` at ``delta`` against the claim ``epsilon``;
    ledger: ``ledger()`` (one seed's executed draws, None if the run kept none) against ``log`` by
    :func:`privacct.ledger.check_ledger` and the draw-shape check; audit: ``audit()`` (an
    :class:`privacct.audits.mechanism_audit.AuditResult`), caught on a ``fails`` verdict only. ``checks``
    selects which run. eps in nats; a check that is refused reports None and its reason. ``configuration``: one line
    naming what the accountant and the ledger checked, ``audit_configuration`` what the audit ran (default the same),
    recorded per check in :attr:`MutantReport.configurations`.
    """
    from privacct.accounting import tightest_epsilon

    t0 = time.perf_counter()
    caught, notes, verdicts, configurations = [], {}, {}, {}
    acc_eps = led_eps = aud_eps = None
    audit_dict = None
    if "accountant" in checks:
        acc_name, acc_eps = tightest_epsilon(log, delta=delta)
        notes["accountant"] = f"{acc_name}: eps = {acc_eps:.4g} for the declared log"
        configurations["accountant"] = configuration
        verdicts["accountant"] = "caught" if acc_eps > epsilon * (1 + 1e-9) else "not caught"
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
        configurations["ledger"] = configuration + (", " if configuration else "") + "one seed"
        verdicts["ledger"] = "caught" if problems else "not caught"
        if problems:
            caught.append("ledger")
    if "audit" in checks:
        r = audit()
        aud_eps = r.epsilon_lower_bound
        audit_dict = r.to_dict()
        accounted = getattr(r, "accounted_epsilon", None)
        notes["audit"] = (f"eps_lb = {aud_eps:.4g} ({r.test}); GDP mu >= {r.mu_lower_bound:.3g}; verdict {r.verdict}"
                          + ("" if accounted is None else f"; accounted at this configuration {accounted:.4g}"))
        configurations["audit"] = configuration if audit_configuration is None else audit_configuration
        verdicts["audit"] = r.verdict
        if r.verdict == "fails":
            caught.append("audit")
    return MutantReport(name, description, epsilon, delta, caught, acc_eps, led_eps, aud_eps,
                        notes, time.perf_counter() - t0, audit_dict, configurations, verdicts)


__all__ = ["CAUGHT_AS", "CHECKS", "COUNTER_PATH_CHECKS", "LEARNER_CHECKS", "MutantReport", "ONE_RUN_RELEASED", "describe_config",
           "run_checks"]
