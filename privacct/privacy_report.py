"""PrivacyReport: what ``privacct verify`` shows for a log -- every accountant's figure, the
tightest, the claim's verdict, the over-noising factor, the budget breakdown, every reading of
an ambiguous paper and, for a failing claim only, the computed causes.

The verdict comes from :func:`privacct.accounting.verdict.verdict` (the accountants' figures alone), the
layer on top of it from :func:`privacct.explain.explain` (breakdown, causes, over-noising factor;
docs/accounting.md#budget-breakdown), which the report asks for with that verdict, and the readings from
:func:`privacct.readings.account_readings` (docs/accounting.md#readings); this module assembles and
renders them.

Verdict rule (docs/accounting.md#verdict; :mod:`privacct.accounting.verdict`, the one place it is
computed): the claim holds when the tightest accounted epsilon at the claimed delta is at most the claimed
epsilon, up to a relative 1e-9 that absorbs floating-point rounding of a printed formula that meets its claim
exactly. ``privacct verify`` leads with the reading the paper's own proof supports and shows the declared log
beside it; its exit status is 0 only when the claim holds under both
(:class:`privacct.accounting.verdict.ClaimVerdict`, conservative: docs/accounting.md#readings).

Output safety: :meth:`PrivacyReport.to_text` escapes every string a log carries (names,
derivations, equations, readings) with :func:`privacct.errors.printable`, and indents every table
row, so no line a log can write starts at the left margin: the one line that starts with
``verdict:`` is the verdict, and ``cause:`` lines appear only under a failing verdict.
:meth:`PrivacyReport.to_json` is strict JSON (no NaN/Infinity: a figure that is not finite is
null, and accountants never return one).

Paper view: for groups carrying a :class:`privacct.log.PaperStatement`, the group's loss with the
printed sensitivity and per-user count (the paper's own basic-composition argument: eps = count x
Delta_1 / b for Laplace, rho = count x Delta_2^2 / (2 sigma^2) for Gaussian), next to the derived.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from .accounting.verdict import VERDICT_RTOL, Verdict, verdict
from .errors import PrivacctError, printable
from .explain import Explanation, _finite, explain
from .log import MechanismLog
from .readings import ReadingsSummary, account_readings

__all__ = ["PrivacyReport", "VERDICT_RTOL", "privacy_report", "report_of"]


def _num(x: Any, spec: str) -> str:
    return "n/a" if _finite(x) is None else format(x, spec)


def _mul(a: float, b: float) -> float:
    try:
        return float(a) * float(b)
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class PrivacyReport:
    """The report of one log (see the module docstring). Frozen: build a new one to change it."""

    log_name: str
    privacy_model: str
    neighbouring: str
    claimed_epsilon: float | None
    claimed_delta: float
    explanation: Explanation
    groups: tuple[dict[str, Any], ...]
    readings: ReadingsSummary | None = None

    # ---- the verdict's figures under the names the report has always used -------------------
    @property
    def decision(self) -> Verdict:
        """The verdict the report shows (:mod:`privacct.accounting.verdict`), the one its explanation is on."""
        return self.explanation.decision

    @property
    def epsilons(self) -> dict[str, float]:
        return dict(self.decision.epsilons)

    @property
    def not_applicable(self) -> dict[str, str]:
        return dict(self.decision.not_applicable)

    @property
    def tightest(self) -> str | None:
        return self.decision.tightest

    @property
    def tightest_epsilon(self) -> float | None:
        return self.decision.accounted_epsilon

    @property
    def holds(self) -> bool | None:
        return self.decision.holds

    @property
    def over_noising_factor(self) -> float | None:
        return self.explanation.over_noising_factor

    @property
    def causes(self) -> list[str]:
        """One line per computed cause; empty unless the claim fails."""
        return [c.text for c in self.explanation.causes]

    @property
    def verdict(self) -> str:
        return self.decision.text

    def to_dict(self) -> dict[str, Any]:
        ex = self.explanation
        d = {
            "log": self.log_name,
            "privacy_model": self.privacy_model,
            "neighbouring": self.neighbouring,
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_delta": self.claimed_delta,
            "epsilon": self.epsilons,
            "not_applicable": self.not_applicable,
            "tightest": self.tightest,
            "accounted_epsilon": _finite(self.tightest_epsilon),
            "verdict": self.verdict,
            "holds": self.holds,
            "over_noising_factor": _finite(self.over_noising_factor),
            "over_noising_accountant": ex.over_noising_accountant,
            "over_noising_note": ex.over_noising_note,
            "causes": self.causes,
            "cause_details": [c.to_dict() for c in ex.causes],
            "breakdown": ex.breakdown.to_dict(),
            "trivial": ex.trivial,
            "epsilon_at_smaller_delta": [{"delta": dd, "epsilon": _finite(e)} for dd, e in ex.trivial_at],
            "groups": [dict(g) for g in self.groups],
            "readings": None if self.readings is None else self.readings.to_dict(),
            "explanation": ex.to_dict(),
        }
        return d

    def to_json(self, indent: int | None = 2) -> str:
        """Strict JSON (ASCII; no NaN or Infinity: json.dumps raises rather than print one)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_text(self) -> str:
        """The human-readable report. Every string from the log is escaped (one line, no control
        characters) and every table row is indented, so the only line that starts with
        ``verdict:`` is the verdict and ``cause:`` lines follow a failing verdict only."""
        p = printable
        ex = self.explanation
        lines = [f"log: {p(self.log_name)}  ({self.privacy_model}, {self.neighbouring})"]
        claim = "none" if self.claimed_epsilon is None else f"eps={self.claimed_epsilon:g}, delta={self.claimed_delta:g}"
        lines += [f"claim: {claim}", ""]
        lines.append(f"  {'group':<28} {'mechanism':<26} {'scale':>11} {'sens':>10} {'per-user':>8}")
        for g in self.groups:
            lines.append(f"  {p(g['name']):<28} {g['mechanism']:<26} {g['noise_scale']:>11.5g} {g['sensitivity']:>10.5g} "
                         f"{g['per_user_count']:>8d}")
        paper_rows = [g for g in self.groups if "paper_equation" in g]
        if paper_rows:
            lines += ["", f"  {'group (paper view)':<28} {'as printed':>14} {'as derived':>14}   (pure: basic eps; Gaussian: rho)"]
            for g in paper_rows:
                key = ("paper_epsilon", "derived_epsilon_basic") if "paper_epsilon" in g else ("paper_rho", "derived_rho")
                lines.append(f"  {p(g['name']):<28} {_num(g[key[0]], '>14.5g'):>14} {_num(g[key[1]], '>14.5g'):>14}")
        lines += ["", f"  {'accountant':<20} {'epsilon at delta=' + format(self.claimed_delta, 'g'):>24}"]
        for name, eps in self.epsilons.items():
            lines.append(f"  {name:<20} {eps:>24.6g}{'  <- tightest' if name == self.tightest else ''}")
        for name, why in self.not_applicable.items():
            lines.append(f"  {name:<20} {'n/a':>24}  ({p(why)})")
        lines += [""] + _breakdown_lines(ex)
        if self.readings is not None:
            lines += [""] + _readings_lines(self.readings, shown=tuple(c.text for c in ex.causes))
        lines += ["", f"verdict: {self.verdict}"]
        if ex.trivial:
            at = ", ".join(f"{_num(e, '.3g')} at delta={dd:g}" for dd, e in ex.trivial_at)
            lines.append(f"  trivially: eps = 0 at delta={self.claimed_delta:g} (delta alone covers one user's two output "
                         f"distributions); the same noise gives eps {at}")
        if ex.over_noising_factor is not None:
            lines.append(f"over-noising factor (noise / least noise meeting the claim under any accountant, "
                         f"{ex.over_noising_accountant}): {ex.over_noising_factor:.4g}")
        elif self.claimed_epsilon is not None:
            lines.append(f"over-noising factor: {p(ex.over_noising_note)}")
        for c in self.causes:
            lines.append(f"cause: {p(c)}")
        return "\n".join(lines)


def _breakdown_lines(ex: Explanation) -> list[str]:
    p = printable
    b = ex.breakdown
    unit = "zCDP rho" if b.measure == "rho" else "pure eps, basic composition"
    budget = "" if b.budget is None else f"; the claim allows {b.measure} {b.budget:.4g}"
    w = max([28] + [len(p(f.label)) for f in b.families])
    lines = [f"  budget breakdown ({unit}, at delta={b.delta:g}{budget})",
             f"  {'family':<{w}} {'releases':>8} {b.measure:>11} {'share':>7}   eps alone (accountant)"]
    for f in b.families:
        alone = "n/a" if f.epsilon_alone is None else f"{f.epsilon_alone:.4g} ({f.accountant_alone})"
        lines.append(f"  {p(f.label):<{w}} {f.releases:>8d} {f.cost:>11.4g} {100 * f.share:>6.1f}%   {alone}")
    tied = b.tied_families
    if len(tied) > 1:
        lines.append(f"  dominant: tied between {', '.join(p(f.label) for f in tied)}, {100 * tied[0].share:.1f}% each")
    else:
        lines.append(f"  dominant: {p(tied[0].label)}, {100 * tied[0].share:.1f}% of the {b.measure}")
    return lines


def _readings_lines(s: ReadingsSummary, shown: tuple[str, ...] = ()) -> list[str]:
    """The readings block; ``shown``: the causes the report already lists above (a reading whose causes are those,
    e.g. the lead reading ``privacct verify`` shows, does not repeat them)."""
    p = printable
    w = max([12] + [len(p(r.name)) for r in s.results])
    lines = [f"  readings of the paper (each accounted at delta={s.delta:g})",
             f"  {'reading':<{w}} {'accounted eps':>13}  {'verdict':<8} {'dominant family':<16} paper's proof"]
    for r in s.results:
        ex = r.explanation
        mark = "supports it" if r.supported_by else "-"
        lines.append(f"  {p(r.name):<{w}} {_num(ex.accounted_epsilon, '>13.4g'):>13}  {ex.verdict:<8} "
                     f"{p(ex.breakdown.dominant_family.name):<16} {mark}{'  (the log as declared)' if r.declared else ''}")
    for r in s.results:
        if r.description and r.name != "(as declared)":
            lines.append(f"  reading {p(r.name)}: {p(r.description)}")
    for r in s.supported:
        lines.append(f"  the paper's own proof supports reading {p(r.name)}: {p(r.supported_by)}")
    for r in s.results:
        if not r.declared and r.explanation.causes and tuple(c.text for c in r.explanation.causes) != shown:
            lines.append(f"  causes under reading {p(r.name)}:")
            lines += [f"    {p(c.text)}" for c in r.explanation.causes]
    if not s.supported:
        lines.append("  the paper's own proof supports none of these readings")
    n = len(s.results)
    lines.append(f"  verdict in every reading: {s.verdict_in_every_reading} ({n} reading{'s' if n != 1 else ''})")
    return lines


def _paper_view(log: MechanismLog) -> tuple[dict[str, Any], ...]:
    groups = []
    for g in log.release_groups:
        row: dict[str, Any] = {
            "name": g.name, "mechanism": g.mechanism, "noise_scale": g.noise_scale,
            "sensitivity": g.sensitivity.value, "norm": g.sensitivity.norm,
            "derivation": g.sensitivity.derivation, "structure": g.structure.to_dict(),
            "per_user_count": g.per_user_count,
        }
        p = g.paper
        if p is not None:
            sens = p.sensitivity if p.sensitivity is not None else g.sensitivity.value
            count = p.per_user_count if p.per_user_count is not None else g.per_user_count
            if g.mechanism == "laplace":
                row["paper_epsilon"] = _finite(_mul(count, sens / g.noise_scale))
                row["derived_epsilon_basic"] = _finite(_mul(g.per_user_count, g.ratio))
            else:   # the paper's own composition rule (e.g. seed 004's Lemma 15 adds sensitivities; docs/report.md)
                from .explain import paper_group_cost

                row["paper_rho"] = _finite(paper_group_cost("rho", g, count, sens))
                row["derived_rho"] = _finite(_mul(g.per_user_count, g.ratio ** 2 / 2))
            row["paper_equation"] = p.equation
        groups.append(row)
    return tuple(groups)


def privacy_report(log: MechanismLog, *, delta: float | None = None, readings: bool = True) -> PrivacyReport:
    """The report of ``log`` at ``delta`` (default: :func:`privacct.accounting.default_delta`,
    the claim's delta, else 0 for a pure log and 1e-6 otherwise), with every reading the log
    carries (``readings=False`` leaves them out): the verdict, then the explanation the report asks for
    on top of it (the verdict's figures are not computed again).

    A claim that no accountant can certify (every one is not applicable at the claimed delta,
    e.g. delta = 0 with Gaussian releases, or every figure beyond the float range) FAILS, with
    the accountants' reasons as its cause; without a claim that case raises UnsupportedLogError.
    """
    if not isinstance(log, MechanismLog):
        raise PrivacctError(f"log must be a MechanismLog, got {type(log).__name__}")
    ex = explain(log, decision=verdict(log, delta=delta))
    summary = account_readings(log, delta=ex.delta, declared=ex) if readings else None
    return report_of(log, ex, readings=summary)


def report_of(log: MechanismLog, explanation: Explanation, *, readings: ReadingsSummary | None = None) -> PrivacyReport:
    """The report of ``log`` from its explanation, already computed (e.g. a reading's, from
    :attr:`privacct.readings.ReadingResult.explanation`), with ``readings`` beside it: nothing is accounted."""
    if not isinstance(log, MechanismLog):
        raise PrivacctError(f"log must be a MechanismLog, got {type(log).__name__}")
    ex = explanation
    return PrivacyReport(
        log_name=log.name, privacy_model=log.privacy_model, neighbouring=log.neighbouring,
        claimed_epsilon=None if log.claim is None else log.claim.epsilon, claimed_delta=ex.delta,
        explanation=ex, groups=_paper_view(log), readings=readings)
