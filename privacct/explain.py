"""Why a mechanism log accounts to what it does: the budget breakdown and the computed causes.

    >>> from privacct.explain import explain
    >>> ex = explain(log)                 # at privacct.accounting.default_delta(log)
    >>> ex.breakdown.dominant_family, ex.holds, [c.text for c in ex.causes]

The verdict itself is not decided here: it is :mod:`privacct.accounting.verdict` (the accountants'
figures alone, docs/accounting.md#verdict), and an :class:`Explanation` is the layer a report asks for
on top of it (``explain(log, decision=verdict(log))`` reuses the verdict's figures; ``ex.decision``).

Everything here is computed from the log (docs/accounting.md#budget-breakdown):

* **Breakdown.** Per release group, its cost in the currency in which losses add exactly: zCDP
  rho for logs with Gaussian releases (rho_g = count_g ratio_g^2 / 2, Bun & Steinke 2016 Props
  1.4, 1.6; a Laplace release of level eps0 counts eps0^2 / 2), pure eps for all-Laplace logs
  (eps_g = count_g Delta_g / b_g, basic composition). Groups form *families* by name (the name
  without a step index, :func:`family_of`: ``gram_h3`` and ``gram[h=3]`` are family ``gram``).
  Each family's and each group's eps *alone* (the log restricted to it), at the same delta, through
  the tightest accountant that applies (all of them, PLD included; for Gaussian-only parts the analytic Gaussian, which
  is exact, Balle & Wang 2018 Thm 8). The dominant family and group carry the largest cost.
* **Causes** (only when the claim fails; docs/accounting.md#causes), from the ``paper``
  statements: a family whose derived cost exceeds its cost by the paper's own argument (printed
  sensitivity and per-user count) gets a cause for each factor that raises it (sensitivity: the
  ratio, squared for rho; count: the ratio), with both numbers and the equation; a Gaussian group
  whose paper composes its releases by adding their sensitivities (``composition``
  ``sensitivities-added``, e.g. seed 004's Lemma 15) is costed by that rule (rho = sum_k Delta_k /
  sigma^2) and, when zCDP composition (the squares added) costs more, gets a ``composition``
  cause naming the paper's rule, with the summed sensitivities and the summed squares; a family whose
  derived cost exceeds its *share* of the claim gets the noise factor that would meet the share.
  Shares are the paper's own per-family costs scaled to the claim's budget (eps, or the largest
  rho whose conversion meets (eps, delta)): exactly the proof's allotment whenever the printed
  constants meet the claim by the paper's own argument; when they do not, that is itself the
  first cause, and no per-family noise factor is given (the shares are not the proof's).
  :func:`headline` condenses the causes into one line that names the paper's step.
* **Over-noising factor** (docs/accounting.md#over-noising-factor): current noise / the least
  noise meeting the claim under any accountant (one common factor on every group; the factor of
  ``tight`` calibration). It never depends on which accountant is tightest at the current noise,
  so a tie at eps = 0 cannot pick it.
* **Trivial claims**: a claim the log meets with eps = 0 at the claimed delta says only that
  delta covers the total variation of one user's two output distributions; the eps of the same
  noise at smaller deltas is reported beside it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from .accounting import ACCOUNTANT_NAMES, Figures, default_delta, figures, get_accountant
from .accounting.base import is_gaussian, is_pure, ratio_up
from .accounting.verdict import VERDICT_RTOL, Verdict, verdict, within
from .errors import NumericalError, PrivacctError, check_delta, printable
from .log import MechanismLog, ReleaseGroup

#: A step index at the end of a group name: ``_h3``, ``-h3``, ``[h=3]``, `` h=3``.
_STEP_SUFFIX = re.compile(r"(?:[_-]h\d+|\[h=\d+\]| h=\d+)$")
#: Smaller deltas at which a trivially holding claim's noise is shown (docs/seed-001-linear-mixture-ldp.md).
TRIVIAL_DELTAS = (1e-3, 1e-5)


def family_of(name: str) -> str:
    """The family of a group: its name without a trailing step index (``gram_h2`` -> ``gram``)."""
    return _STEP_SUFFIX.sub("", name) or name


def _finite(x: float | None) -> float | None:
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


@dataclass(frozen=True)
class GroupShare:
    """One release group's part of the budget (``cost`` in the breakdown's measure)."""

    name: str
    family: str
    mechanism: str
    per_user_count: int
    sensitivity: float
    noise_scale: float
    cost: float
    share: float
    paper_cost: float
    printed_sensitivity: float | None
    printed_count: float | None
    equation: str
    epsilon_alone: float | None = None
    accountant_alone: str | None = None
    composition: str | None = None
    composition_equation: str = ""

    @property
    def paper_rule_adds_sensitivities(self) -> bool:
        """The paper composes this Gaussian group's releases by adding their sensitivities (its cost
        by the paper's argument is sum_k Delta_k / sigma^2, :data:`privacct.log.COMPOSITION_RULES`)."""
        return self.composition == "sensitivities-added" and self.mechanism != "laplace"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "mechanism": self.mechanism,
                "per_user_count": self.per_user_count, "sensitivity": self.sensitivity, "noise_scale": self.noise_scale,
                "cost": _finite(self.cost), "share": _finite(self.share), "paper_cost": _finite(self.paper_cost),
                "printed_sensitivity": self.printed_sensitivity, "printed_count": self.printed_count,
                "equation": self.equation, "epsilon_alone": _finite(self.epsilon_alone),
                "accountant_alone": self.accountant_alone, "composition": self.composition,
                "composition_equation": self.composition_equation}


@dataclass(frozen=True)
class FamilyShare:
    """A family of groups (same name up to the step index): summed cost, and its eps alone."""

    name: str
    groups: tuple[str, ...]
    releases: int
    cost: float
    share: float
    paper_cost: float
    epsilon_alone: float | None
    accountant_alone: str | None

    @property
    def label(self) -> str:
        if len(self.groups) == 1:
            return self.groups[0]
        return f"{self.name} ({self.groups[0]}..{self.groups[-1]}, {len(self.groups)} groups)"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "groups": list(self.groups), "releases": self.releases, "cost": _finite(self.cost),
                "share": _finite(self.share), "paper_cost": _finite(self.paper_cost),
                "epsilon_alone": _finite(self.epsilon_alone), "accountant_alone": self.accountant_alone}


@dataclass(frozen=True)
class Breakdown:
    """The accounted loss by group and family. ``measure``: ``rho`` (zCDP) or ``eps`` (basic);
    ``budget``: the claim in that measure (None without a claim, or rho at delta = 0)."""

    measure: str
    delta: float
    budget: float | None
    total: float
    paper_total: float
    groups: tuple[GroupShare, ...]
    families: tuple[FamilyShare, ...]

    @property
    def dominant_family(self) -> FamilyShare:
        return max(self.families, key=lambda f: f.cost)

    @property
    def tied_families(self) -> tuple[FamilyShare, ...]:
        """The families whose cost equals the dominant one's (relative 1e-9)."""
        top = self.dominant_family.cost
        return tuple(f for f in self.families if f.cost >= top * (1 - VERDICT_RTOL))

    @property
    def dominant_group(self) -> GroupShare:
        return max(self.groups, key=lambda g: g.cost)

    @property
    def consistent(self) -> bool | None:
        """Whether the printed constants meet the budget by the paper's own argument."""
        return None if self.budget is None else self.paper_total <= self.budget * (1 + VERDICT_RTOL)

    def share_of(self, family: FamilyShare) -> float | None:
        """The family's share of the budget: its paper cost scaled to the budget."""
        if self.budget is None or self.paper_total <= 0:
            return None
        return self.budget * family.paper_cost / self.paper_total

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "delta": self.delta, "budget": _finite(self.budget), "total": _finite(self.total),
                "paper_total": _finite(self.paper_total), "consistent": self.consistent,
                "dominant_family": self.dominant_family.name, "dominant_group": self.dominant_group.name,
                "families": [f.to_dict() for f in self.families], "groups": [g.to_dict() for g in self.groups]}


@dataclass(frozen=True)
class Cause:
    """One computed cause of a failing claim. ``kind``: ``no-accountant``, ``dominant`` (the family
    carrying the largest cost; ``factor`` is its share), ``inconsistent``
    (printed constants miss the budget by the paper's own argument), ``composition`` (the paper adds
    the releases' sensitivities where zCDP adds their squares; ``printed`` the summed sensitivities
    with the printed figures, ``derived`` the summed squares with the derived ones, ``equation``
    where the paper states its rule), ``sensitivity``, ``count`` (printed below derived), ``noise``
    (the factor the family's noise needs to meet its share) or ``excess`` (no paper statement: where
    the excess sits). ``factor``: the multiplier on the cost (sensitivity, count, inconsistent; for
    composition the group's derived cost over its cost by the paper's rule) or on its noise (noise,
    excess)."""

    kind: str
    family: str
    groups: tuple[str, ...]
    printed: float | None
    derived: float | None
    factor: float | None
    equation: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "family": self.family, "groups": list(self.groups), "printed": _finite(self.printed),
                "derived": _finite(self.derived), "factor": _finite(self.factor), "equation": self.equation,
                "text": self.text}


@dataclass(frozen=True)
class Explanation:
    """Everything :func:`explain` computes for one log at one delta: the layer on top of a
    :class:`privacct.accounting.verdict.Verdict` (``decision``, whose figures and verdict it shows under the
    names below), with the over-noising factor, the breakdown, the causes and a trivial claim's smaller deltas."""

    decision: Verdict
    over_noising_factor: float | None
    over_noising_accountant: str | None
    over_noising_note: str
    breakdown: Breakdown
    causes: tuple[Cause, ...]
    trivial_at: tuple[tuple[float, float], ...]

    # ---- the decision's figures, under the names the explanation has always used ----------------
    @property
    def log_name(self) -> str:
        return self.decision.log_name

    @property
    def delta(self) -> float:
        return self.decision.delta

    @property
    def claimed_epsilon(self) -> float | None:
        return self.decision.claimed_epsilon

    @property
    def epsilons(self) -> tuple[tuple[str, float], ...]:
        return self.decision.epsilons

    @property
    def not_applicable(self) -> tuple[tuple[str, str], ...]:
        return self.decision.not_applicable

    @property
    def tightest(self) -> str | None:
        return self.decision.tightest

    @property
    def accounted_epsilon(self) -> float | None:
        return self.decision.accounted_epsilon

    @property
    def holds(self) -> bool | None:
        return self.decision.holds

    @property
    def verdict(self) -> str:
        return self.decision.text

    @property
    def trivial(self) -> bool:
        """The claim holds with eps = 0 at the claimed delta (delta alone covers the outputs)."""
        return self.decision.trivial

    def to_dict(self) -> dict[str, Any]:
        return {"delta": self.delta, "accounted_epsilon": _finite(self.accounted_epsilon), "tightest": self.tightest,
                "verdict": self.verdict, "over_noising_factor": _finite(self.over_noising_factor),
                "over_noising_accountant": self.over_noising_accountant, "over_noising_note": self.over_noising_note,
                "breakdown": self.breakdown.to_dict(), "causes": [c.to_dict() for c in self.causes],
                "trivial": self.trivial,
                "epsilon_at_smaller_delta": [{"delta": d, "epsilon": _finite(e)} for d, e in self.trivial_at]}


# --------------------------------------------------------------------------- computation
def _sublog(log: MechanismLog, groups: list[ReleaseGroup]) -> MechanismLog:
    return MechanismLog(log.name, log.privacy_model, tuple(groups), log.neighbouring, (), None, "")


def _cost(measure: str, count: float, sensitivity: float, scale: float) -> float:
    r = ratio_up(sensitivity, scale)
    return count * (r if measure == "eps" else r * r / 2.0)


def _paper_cost(measure: str, g: ReleaseGroup, count: float, sensitivity: float) -> float:
    """The group's cost by the paper's own argument: :func:`_cost` with the printed figures, or, for a
    Gaussian group whose paper adds the releases' sensitivities (``composition`` ``sensitivities-added``,
    e.g. seed 004's Lemma 15: sum_k Delta_k <= Delta, noise N(0, Delta / rho)), rho = sum_k Delta_k / sigma^2."""
    p = g.paper
    if measure == "rho" and p is not None and p.composition == "sensitivities-added" and g.mechanism != "laplace":
        return count * ratio_up(sensitivity, g.noise_scale) / g.noise_scale
    return _cost(measure, count, sensitivity, g.noise_scale)


#: The public name of :func:`_paper_cost` (the report's paper view uses the same rule).
paper_group_cost = _paper_cost


def epsilon_alone(log: MechanismLog, delta: float) -> tuple[float | None, str | None]:
    """(eps, accountant) of ``log`` at ``delta`` under the tightest accountant that applies
    (Gaussian-only at delta > 0: the analytic Gaussian, exact, Balle & Wang 2018 Thm 8, so no other is run)."""
    if delta > 0 and is_gaussian(log):
        try:
            return get_accountant("analytic-gaussian").epsilon(log, delta=delta), "analytic-gaussian"
        except PrivacctError:
            pass
    f = figures(log, delta=delta)
    return f.epsilon, f.tightest


def _alone_from(f: Figures, gaussian: bool) -> tuple[float | None, str | None]:
    """:func:`epsilon_alone` of a log whose every accountant's figures ``f`` are already known (the same
    answer: the analytic Gaussian's figure where it is there for a Gaussian-only log at delta > 0, which is
    where :func:`epsilon_alone` asks it first, else the tightest)."""
    if f.delta > 0 and gaussian:
        ag = dict(f.epsilons).get("analytic-gaussian")
        if ag is not None:
            return ag, "analytic-gaussian"
    return f.epsilon, f.tightest


def breakdown(log: MechanismLog, delta: float, *, known: Figures | None = None) -> Breakdown:
    """The budget breakdown of ``log`` at ``delta`` (module docstring). ``known``: every accountant's figures
    for the whole log at ``delta``, if already computed (a family that is the whole log is not accounted
    again). Each distinct set of groups is accounted alone once (a one-group family is its group)."""
    alone_memo: dict[tuple[str, ...], tuple[float | None, str | None]] = {}
    if known is not None and known.delta == delta:
        alone_memo[tuple(g.name for g in log.release_groups)] = _alone_from(known, is_gaussian(log))

    def alone(members: list[ReleaseGroup]) -> tuple[float | None, str | None]:
        key = tuple(g.name for g in members)
        if key not in alone_memo:
            alone_memo[key] = epsilon_alone(_sublog(log, members), delta)
        return alone_memo[key]

    measure = "eps" if is_pure(log) else "rho"
    budget = None
    if log.claim is not None:
        if measure == "eps":
            budget = log.claim.epsilon
        elif delta > 0:
            from .accounting.formulas import zcdp_rho_for
            try:
                budget = zcdp_rho_for(log.claim.epsilon, delta)
            except NumericalError:
                budget = None
    groups = []
    for g in log.release_groups:
        cost = _cost(measure, g.per_user_count, g.sensitivity.value, g.noise_scale)
        p = g.paper
        ps = None if p is None else p.sensitivity
        pc = None if p is None else p.per_user_count
        paper_cost = _paper_cost(measure, g, pc if pc is not None else g.per_user_count,
                                 ps if ps is not None else g.sensitivity.value)
        groups.append([g, cost, paper_cost, ps, pc, "" if p is None else p.equation])
    total = math.fsum(x[1] for x in groups)
    paper_total = math.fsum(x[2] for x in groups)
    shares = tuple(GroupShare(g.name, family_of(g.name), g.mechanism, g.per_user_count, g.sensitivity.value, g.noise_scale,
                              cost, cost / total if total > 0 else 0.0, paper_cost, ps, pc, eq,
                              *alone([g]),
                              None if g.paper is None else g.paper.composition,
                              "" if g.paper is None else g.paper.composition_equation)
                   for g, cost, paper_cost, ps, pc, eq in groups)
    fams: dict[str, list[GroupShare]] = {}
    for s in shares:
        fams.setdefault(s.family, []).append(s)
    families = []
    for name, members in fams.items():
        eps, acc = alone([log.group(s.name) for s in members])
        cost = math.fsum(s.cost for s in members)
        families.append(FamilyShare(name, tuple(s.name for s in members), sum(s.per_user_count for s in members), cost,
                                    cost / total if total > 0 else 0.0, math.fsum(s.paper_cost for s in members), eps, acc))
    return Breakdown(measure, delta, budget, total, paper_total, shares, tuple(families))


def least_noise(log: MechanismLog, epsilon: float, delta: float) -> tuple[float | None, str | None, str]:
    """(c, accountant, note): the least common noise factor meeting (epsilon, delta) under any
    accountant (docs/accounting.md#over-noising-factor); Gaussian-only at delta > 0: the analytic
    Gaussian alone (exact, so no accountant allows less noise)."""
    from .calibrate import accountant_calibrations, least_of

    names = ["analytic-gaussian"] if delta > 0 and is_gaussian(log) else ACCOUNTANT_NAMES
    # the calibration's own per-accountant loop; an accountant no noise makes apply is left out (not a reason)
    tried = [t for t in accountant_calibrations(log, epsilon=epsilon, delta=delta, accountants=names) if not t.any_noise]
    best = least_of(tried)
    if best is None:
        return None, None, ("not defined: no accountant meets the claim at any noise scale ("
                            + "; ".join(f"{t.accountant}: {t.error}" for t in tried) + ")")
    return best.factor, best.accountant, f"least noise meeting the claim under any accountant ({best.accountant})"


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _fmt_sum(x: float) -> str:
    """A sum of sensitivities or of their squares: whole numbers up to 10^9 in full, else 4 digits."""
    return f"{x:.0f}" if 1e4 <= abs(x) < 1e9 else _fmt(x)


def _label(groups: tuple[str, ...]) -> str:
    """``group 'x'``; members of one family as a range; otherwise every name (up to 4)."""
    q = [printable(repr(n)) for n in groups]
    if len(q) == 1:
        return f"group {q[0]}"
    if len({family_of(n) for n in groups}) == 1 or len(q) > 4:
        return f"groups {q[0]}..{q[-1]} ({len(q)})"
    return "groups " + ", ".join(q)


def _merge(found: list[tuple[str, tuple[str, ...], tuple]]) -> list[tuple[str, tuple[str, ...], tuple]]:
    """Causes of one kind with equal numbers and equation merged (their groups joined), in order."""
    out: dict[tuple, list[str]] = {}
    for kind, names, key in found:
        out.setdefault((kind,) + key, []).extend(names)
    return [(k[0], tuple(names), k[1:]) for k, names in out.items()]


def causes(log: MechanismLog, b: Breakdown, holds: bool | None) -> tuple[Cause, ...]:
    """The computed causes of a failing claim (module docstring); () unless ``holds`` is False.
    Causes of one kind with the same numbers and equation are merged across groups."""
    if holds is not False:
        return ()
    unit = "rho" if b.measure == "rho" else "eps"
    power = 2 if b.measure == "rho" else 1
    out: list[Cause] = []
    top = b.dominant_family
    tied = b.tied_families
    alone = "" if top.epsilon_alone is None else f"; alone {'each' if len(tied) > 1 else 'it'} accounts to eps {_fmt(top.epsilon_alone)}"
    claim = "" if log.claim is None else f" (claim: eps {log.claim.epsilon:g} at delta {b.delta:g})"
    who = " and ".join(f.label for f in tied) if len(tied) > 1 else top.label
    out.append(Cause("dominant", top.name, top.groups, None, top.cost, top.share, "",
                     f"dominant: {printable(who)} carr{'y' if len(tied) > 1 else 'ies'} {100 * top.share:.1f}% of the "
                     f"{unit}{' each' if len(tied) > 1 else ''}{alone}{claim}"))
    has_paper = any(g.printed_sensitivity is not None or g.printed_count is not None for g in b.groups)
    if has_paper and b.consistent is False:
        parts = ", ".join(f"{f.label} {_fmt(f.paper_cost)}" for f in sorted(b.families, key=lambda f: -f.paper_cost))
        worst = max(b.families, key=lambda f: f.paper_cost)
        out.append(Cause("inconsistent", worst.name, worst.groups, b.budget, b.paper_total, b.paper_total / b.budget, "",
                         f"the printed noise misses the claim even by the paper's own sensitivities and counts: "
                         f"{unit} {_fmt(b.paper_total)} against the claim's {_fmt(b.budget)} (x{b.paper_total / b.budget:.3g}); "
                         f"as printed: {parts}"))
    found: list[tuple[str, tuple[str, ...], tuple]] = []
    for fam in sorted(b.families, key=lambda f: -f.cost):
        if fam.cost > fam.paper_cost * (1 + VERDICT_RTOL):     # the family costs more than the paper says
            for s in (g for g in b.groups if g.family == fam.name):
                if b.measure == "rho" and s.paper_rule_adds_sensitivities and s.cost > s.paper_cost * (1 + VERDICT_RTOL):
                    pc = s.printed_count if s.printed_count is not None else float(s.per_user_count)
                    ps = s.printed_sensitivity if s.printed_sensitivity is not None else s.sensitivity
                    found.append(("composition", (s.name,), (pc, ps, s.per_user_count, s.sensitivity, s.paper_cost, s.cost,
                                                            s.composition_equation or s.equation,
                                                            s.equation if s.composition_equation else "")))
                if s.printed_sensitivity is not None and s.printed_sensitivity < s.sensitivity * (1 - 1e-12):
                    found.append(("sensitivity", (s.name,), (s.printed_sensitivity, s.sensitivity, s.equation)))
                if s.printed_count is not None and s.printed_count < s.per_user_count * (1 - 1e-12):
                    found.append(("count", (s.name,), (s.printed_count, s.per_user_count, s.equation)))
        share = b.share_of(fam)
        if b.consistent and share is not None and share > 0 and fam.cost > share * (1 + VERDICT_RTOL):
            found.append(("noise", fam.groups, (share, fam.cost, round(share / b.budget, 12))))
    for kind, names, key in _merge(found):
        if kind == "composition":
            pc, ps, c, d, paper_cost, cost, eq, where = key
            summed, squares = pc * ps, c * d * d
            ref = printable(eq) if eq else "the paper"
            out.append(Cause(kind, family_of(names[0]), names, summed, squares, cost / paper_cost, eq,
                             f"composition rule: {ref} composes {_label(names)} by adding its releases' sensitivities "
                             f"({_fmt(pc)} releases of sensitivity {_fmt(ps)}, summed: {_fmt_sum(summed)}) and sets the "
                             f"noise variance to that sum / rho, so by its rule the releases cost rho {_fmt(paper_cost)}"
                             f"{' each' if len(names) > 1 else ''}; zCDP composition adds their squares ({c} releases of "
                             f"sensitivity {_fmt(d)}, squared and summed: {_fmt_sum(squares)}): rho {_fmt(cost)}, "
                             f"x{cost / paper_cost:.3g} on the rho"
                             f"{f' (the printed figures: {printable(where)})' if where else ''}"))
        elif kind == "sensitivity":
            p, d, eq = key
            f = (d / p) ** power
            rel = "replace-one sensitivity" if log.neighbouring == "replace-one-user" else "sensitivity"
            out.append(Cause(kind, family_of(names[0]), names, p, d, f, eq,
                             f"{rel}: {_label(names)} derived {_fmt(d)}, printed {_fmt(p)}"
                             f"{f' ({printable(eq)})' if eq else ''}: x{f:.3g} on the {unit}"))
        elif kind == "count":
            p, d, eq = key
            structure = log.group(names[0]).structure.kind
            what = "tree depth" if structure == "tree" else "composition count"
            out.append(Cause(kind, family_of(names[0]), names, p, float(d), d / p, eq,
                             f"{what}: {_label(names)} the structure {structure} gives {d} releases per user, printed "
                             f"{_fmt(p)}{f' ({printable(eq)})' if eq else ''}: x{d / p:.3g} on the {unit}"))
        else:
            share, cost, frac = key
            n = len(names)
            f = (cost / share) ** (1 / power)
            each = " each" if n > 1 and len({family_of(x) for x in names}) > 1 else ""
            out.append(Cause(kind, family_of(names[0]), names, share, cost, f, "",
                             f"noise: {_label(names)} cost{'s' if n == 1 else ''}{each} {unit} {_fmt(cost)} against "
                             f"{'its' if n == 1 else 'a'} share {_fmt(share)} ({100 * frac:.3g}% of the claim's {unit}, "
                             f"the paper's own allotment): the printed noise would need x{f:.3g}"))
    if not has_paper and b.budget is not None and b.total > b.budget * (1 + VERDICT_RTOL):
        fam = b.dominant_family
        out.append(Cause("excess", fam.name, fam.groups, b.budget, b.total, (b.total / b.budget) ** (1 / power), "",
                         f"{unit} {_fmt(b.total)} against the claim's {_fmt(b.budget)}; {_label(fam.groups)} carries "
                         f"{100 * fam.share:.1f}% of it (no paper statement records what was printed)"))
    return tuple(out)


_REF_WORDS = (r"Lemma|Lem\.|Corollary|Cor\.|Theorem|Thm\.?|Proposition|Prop\.|Claim|Definition|Def\.|Remark|Rem\.|"
              r"Algorithm|Alg\.|Appendix|App\.|Section|Sec\.|Eqs?\.|Equation")
_REF_NUM = r"(?:[A-Z](?:\.\d+)*|\d+(?:\.\d+)*)"
#: The first step a paper statement's text cites: "Lemma 15", "Eq. (6)", "App. E.2.1", "Thm 6.4".
_REF = re.compile(rf"\b(?:{_REF_WORDS})\s*(?:\({_REF_NUM}\)|{_REF_NUM})")
#: Causes that name the paper's own step that is wrong (docs/report.md#causes-in-the-papers-terms).
SPECIFIC_CAUSES = ("composition", "sensitivity", "count")


def short_reference(equation: str) -> str:
    """The first lemma, equation, section, ... that ``equation`` cites ("" when it cites none)."""
    m = _REF.search(equation or "")
    return m.group(0) if m else ""


def headline(ex: "Explanation") -> str:
    """One line for a failing claim, computed from the breakdown and the causes (empty unless the
    claim fails): the family whose releases alone exceed the claim (or the dominant one), then the
    paper's step that is wrong -- the largest composition / sensitivity / count cause of that family,
    named by the first step its paper statement cites, with the derived and printed figures -- or,
    without one, the printed constants missing the claim by the paper's own figures, or the noise
    factor the claim needs."""
    if ex.holds is not False:
        return ""
    for c in ex.causes:
        if c.kind == "no-accountant":
            return c.text
    b = ex.breakdown
    unit = "rho" if b.measure == "rho" else "eps"
    claim = ex.claimed_epsilon
    over = sorted((f for f in b.families if claim is not None and f.epsilon_alone is not None
                   and not within(f.epsilon_alone, claim)), key=lambda f: -(f.epsilon_alone or 0.0))
    if over:
        fam = over[0]
        head = f"{printable(fam.name)} alone {_fmt(fam.epsilon_alone)} > {claim:g}"
    else:
        fam = b.dominant_family
        head = f"{printable(fam.name)} carries {100 * fam.share:.0f}% of the {unit}"
    specific = sorted((c for c in ex.causes if c.kind in SPECIFIC_CAUSES), key=lambda c: -(c.factor or 0.0))
    own = [c for c in specific if c.family == fam.name]
    inconsistent = [c for c in ex.causes if c.kind == "inconsistent"]
    noise = [c for c in ex.causes if c.kind in ("noise", "excess")]
    if own or (specific and not inconsistent):
        c = (own or specific)[0]
        ref = short_reference(c.equation) or "the paper"
        who = "" if c.family == fam.name else f"{printable(c.family)}: "
        if c.kind == "composition":
            why = f"{who}{ref} adds sensitivities, not squares ({unit} x{c.factor:.3g})"
        else:
            what = "sensitivity" if c.kind == "sensitivity" else c.text.split(":", 1)[0]
            shown_d = _fmt(c.derived) if c.kind == "sensitivity" else f"{c.derived:g}"
            why = f"{who}{ref}'s {what} {_fmt(c.printed)}, derived {shown_d} (x{c.factor:.3g})"
    elif inconsistent:
        why = f"the printed noise misses the claim by the paper's own figures (x{inconsistent[0].factor:.3g} on the {unit})"
    elif noise:
        why = f"the printed noise would need x{max(c.factor or 0.0 for c in noise):.3g}"
    else:
        why = ""
    return head + (f": {why}" if why else "")


def explain(log: MechanismLog, *, delta: float | None = None, decision: Verdict | None = None) -> Explanation:
    """The accounting of ``log`` at ``delta`` (default :func:`privacct.accounting.default_delta`)
    with its breakdown, over-noising factor and, for a failing claim, its computed causes: the layer on top
    of the verdict. ``decision``: ``log``'s verdict (:func:`privacct.accounting.verdict.verdict`) if already
    decided, whose figures are then not computed again; else it is decided here."""
    if not isinstance(log, MechanismLog):
        raise PrivacctError(f"log must be a MechanismLog, got {type(log).__name__}")
    if decision is None:
        delta = default_delta(log) if delta is None else check_delta("delta", delta, allow_zero=True)
        decision = verdict(log, delta=delta)
    elif not isinstance(decision, Verdict) or decision.log_name != log.name or (delta is not None and delta != decision.delta) \
            or decision.claimed_epsilon != (None if log.claim is None else log.claim.epsilon):
        raise PrivacctError(f"decision must be the verdict of log {log.name!r}"
                            f"{'' if delta is None else f' at delta={delta:g}'}, got {decision!r:.200}")
    delta = decision.delta
    b = breakdown(log, delta, known=decision.figures)
    factor = fac_acc = None
    note = "no claim"
    extra: tuple[Cause, ...] = ()
    trivial_at: tuple[tuple[float, float], ...] = ()
    if log.claim is not None:
        if decision.uncertified:
            extra = (Cause("no-accountant", "", (), None, None, None, "",
                           f"no accountant certifies the claim at delta={delta:g} ({printable(decision.figures.reasons)})"),)
        c, fac_acc, note = least_noise(log, log.claim.epsilon, delta)
        factor = None if c is None else _finite(1.0 / c)
        if decision.trivial:
            trivial_at = tuple((d, epsilon_alone(log, d)[0]) for d in TRIVIAL_DELTAS if d < delta) or tuple(
                (d, epsilon_alone(log, d)[0]) for d in (delta / 10, delta / 1000))
    return Explanation(
        decision=decision, over_noising_factor=factor, over_noising_accountant=fac_acc, over_noising_note=note, breakdown=b,
        causes=extra + causes(log, b, decision.holds), trivial_at=trivial_at)


__all__ = ["Breakdown", "Cause", "Explanation", "FamilyShare", "GroupShare", "SPECIFIC_CAUSES", "VERDICT_RTOL", "breakdown",
           "paper_group_cost",
           "causes", "epsilon_alone", "explain", "family_of", "headline", "least_noise", "short_reference"]
