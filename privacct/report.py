"""PrivacyReport: every accountant's figure for a log, the tightest, the claim's verdict, the
over-noising factor, and, where the log records what the paper printed, why a claim fails.

Verdict rule: the claim holds when the tightest accounted epsilon at the claimed delta is at most
the claimed epsilon, up to a relative 1e-9 that absorbs floating-point rounding of a printed
formula that meets its claim exactly (e.g. 3 families x L nodes x Delta / (3 H L / eps)).

Over-noising factor: ``current noise / smallest noise that meets the claim`` under the tightest
accountant (one common factor on every group). Above 1 the algorithm adds more noise than its
claim needs; below 1 it adds less than its claim needs.

Output safety: :meth:`PrivacyReport.to_text` escapes every string a log carries (names,
derivations, equations) with :func:`privacct.errors.printable`, and indents every table row, so
no line a log can write starts at the left margin: the one line that starts with ``verdict:`` is
the verdict. :meth:`PrivacyReport.to_json` is strict JSON (no NaN/Infinity: a figure that is not
finite is null, and accountants never return one).

Paper view: for groups carrying a :class:`privacct.log.PaperStatement`, the report recomputes the
group's loss with the printed sensitivity and per-user count (the paper's own basic-composition
argument: eps = count x Delta_1 / b for Laplace, rho = count x Delta_2^2 / (2 sigma^2) for
Gaussian) and names each place where the toolkit's derivation is larger.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from .accounting import all_epsilons, default_delta
from .calibrate import calibration_factor
from .errors import PrivacctError, UnsupportedLogError, printable
from .log import MechanismLog

VERDICT_RTOL = 1e-9


def _finite(x: float | None) -> float | None:
    """x if it is a finite number, else None (JSON null, "n/a" in text)."""
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def _num(x: Any, spec: str) -> str:
    return "n/a" if _finite(x) is None else format(x, spec)


@dataclass
class PrivacyReport:
    log_name: str
    privacy_model: str
    neighbouring: str
    claimed_epsilon: float | None
    claimed_delta: float
    epsilons: dict[str, float]
    not_applicable: dict[str, str]
    tightest: str | None
    tightest_epsilon: float | None
    holds: bool | None
    over_noising_factor: float | None
    causes: list[str] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.holds is None:
            return "no claim"
        return "holds" if self.holds else "FAILS"

    def to_dict(self) -> dict[str, Any]:
        return {
            "log": self.log_name,
            "privacy_model": self.privacy_model,
            "neighbouring": self.neighbouring,
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_delta": self.claimed_delta,
            "epsilon": self.epsilons,
            "not_applicable": self.not_applicable,
            "tightest": self.tightest,
            "accounted_epsilon": self.tightest_epsilon,
            "verdict": self.verdict,
            "holds": self.holds,
            "over_noising_factor": _finite(self.over_noising_factor),
            "causes": self.causes,
            "groups": self.groups,
        }

    def to_json(self, indent: int | None = 2) -> str:
        """Strict JSON (ASCII; no NaN or Infinity: json.dumps raises rather than print one)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_text(self) -> str:
        """The human-readable report. Every string from the log is escaped (one line, no control
        characters) and every table row is indented, so the only line that starts with
        ``verdict:`` is the verdict."""
        p = printable
        lines = [f"log: {p(self.log_name)}  ({self.privacy_model}, {self.neighbouring})"]
        claim = "none" if self.claimed_epsilon is None else f"eps={self.claimed_epsilon:g}, delta={self.claimed_delta:g}"
        lines.append(f"claim: {claim}")
        lines.append("")
        lines.append(f"  {'group':<28} {'mechanism':<26} {'scale':>11} {'sens':>10} {'per-user':>8}")
        for g in self.groups:
            lines.append(f"  {p(g['name']):<28} {g['mechanism']:<26} {g['noise_scale']:>11.5g} {g['sensitivity']:>10.5g} "
                         f"{g['per_user_count']:>8d}")
        paper_rows = [g for g in self.groups if "paper_equation" in g]
        if paper_rows:
            lines.append("")
            lines.append(f"  {'group (paper view)':<28} {'as printed':>14} {'as derived':>14}   (pure: basic eps; Gaussian: rho)")
            for g in paper_rows:
                key = ("paper_epsilon", "derived_epsilon_basic") if "paper_epsilon" in g else ("paper_rho", "derived_rho")
                lines.append(f"  {p(g['name']):<28} {_num(g[key[0]], '>14.5g'):>14} {_num(g[key[1]], '>14.5g'):>14}")
        lines.append("")
        lines.append(f"  {'accountant':<20} {'epsilon at delta=' + format(self.claimed_delta, 'g'):>24}")
        for name, eps in self.epsilons.items():
            mark = "  <- tightest" if name == self.tightest else ""
            lines.append(f"  {name:<20} {eps:>24.6g}{mark}")
        for name, why in self.not_applicable.items():
            lines.append(f"  {name:<20} {'n/a':>24}  ({p(why)})")
        lines.append("")
        lines.append(f"verdict: {self.verdict}")
        if self.over_noising_factor is not None and _finite(self.over_noising_factor) is not None:
            lines.append(f"over-noising factor (noise / noise the claim needs, {self.tightest}): {self.over_noising_factor:.4g}")
        for c in self.causes:
            lines.append(f"cause: {p(c)}")
        return "\n".join(lines)


def _mul(a: float, b: float) -> float:
    try:
        return float(a) * float(b)
    except OverflowError:
        return math.inf


def _paper_view(log: MechanismLog) -> tuple[list[str], list[dict[str, Any]]]:
    causes: list[str] = []
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
            else:
                row["paper_rho"] = _finite(_mul(count, (sens / g.noise_scale) ** 2 / 2))
                row["derived_rho"] = _finite(_mul(g.per_user_count, g.ratio ** 2 / 2))
            row["paper_equation"] = p.equation
            where = f" ({p.equation})" if p.equation else ""
            if p.sensitivity is not None and p.sensitivity < g.sensitivity.value * (1 - 1e-12):
                rel = "replace-one sensitivity" if log.neighbouring == "replace-one-user" else "sensitivity"
                causes.append(
                    f"{rel}: group {printable(repr(g.name))} prints sensitivity {p.sensitivity:g}{where}; "
                    f"the toolkit derives {g.sensitivity.value:g} ({g.sensitivity.derivation or 'see log'})"
                )
            if p.per_user_count is not None and p.per_user_count < g.per_user_count * (1 - 1e-12):
                what = "tree depth" if g.structure.kind == "tree" else "composition count"
                causes.append(
                    f"{what}: group {printable(repr(g.name))} counts {p.per_user_count:g} releases per user{where}; "
                    f"the structure {g.structure.kind} gives {g.per_user_count}"
                )
        groups.append(row)
    return causes, groups


def privacy_report(log: MechanismLog, *, delta: float | None = None) -> PrivacyReport:
    """The report of ``log`` at ``delta`` (default: :func:`privacct.accounting.default_delta`,
    the claim's delta, else 0 for a pure log and 1e-6 otherwise).

    A claim that no accountant can certify (every one is not applicable at the claimed delta,
    e.g. delta = 0 with Gaussian releases, or every figure beyond the float range) FAILS, with
    the accountants' reasons as its cause; without a claim that case raises UnsupportedLogError.
    """
    if not isinstance(log, MechanismLog):
        raise PrivacctError(f"log must be a MechanismLog, got {type(log).__name__}")
    if delta is None:
        delta = default_delta(log)
    errs: dict[str, str] = {}
    eps = all_epsilons(log, delta=delta, errors=errs)
    causes, groups = _paper_view(log)
    if not eps:
        reasons = "; ".join(f"{k}: {v}" for k, v in errs.items())
        if log.claim is None:
            raise UnsupportedLogError(f"no accountant applies at delta={delta:g}: {reasons}")
        return PrivacyReport(
            log_name=log.name, privacy_model=log.privacy_model, neighbouring=log.neighbouring,
            claimed_epsilon=log.claim.epsilon, claimed_delta=delta, epsilons={}, not_applicable=errs,
            tightest=None, tightest_epsilon=None, holds=False, over_noising_factor=None,
            causes=[f"no accountant certifies the claim at delta={delta:g} ({reasons})"] + causes, groups=groups,
        )
    tightest = min(eps, key=lambda k: eps[k])
    holds = None
    factor = None
    if log.claim is not None:
        holds = bool(eps[tightest] <= log.claim.epsilon * (1 + VERDICT_RTOL))
        try:
            c = calibration_factor(log, epsilon=log.claim.epsilon, delta=delta, accountant=tightest)
            factor = _finite(1.0 / c)
        except (PrivacctError, OverflowError, ZeroDivisionError):
            factor = None
    return PrivacyReport(
        log_name=log.name, privacy_model=log.privacy_model, neighbouring=log.neighbouring,
        claimed_epsilon=None if log.claim is None else log.claim.epsilon, claimed_delta=delta,
        epsilons=eps, not_applicable=errs, tightest=tightest, tightest_epsilon=eps[tightest],
        holds=holds, over_noising_factor=factor, causes=causes, groups=groups,
    )
