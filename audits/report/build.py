"""The report's text: one :class:`.document.Document` built from the rows, rendered by :mod:`.render`
as Markdown, HTML and terminal text (docs/report.md). Every sentence here is assembled from a row's
numbers (the accounting, the breakdown and causes of :func:`privacct.explain.explain`, the readings,
the provenance of the setting, the regret column); nothing is written per paper.

Wording: a setting's (eps, delta) is "claimed" only when the paper prints both
(:attr:`privacct.algorithms.settings.PaperSetting.claim_printed`); otherwise it is "the toolkit's
setting" and the provenance table says why it was chosen.
"""

from __future__ import annotations

import math
from typing import Any

from .document import Bullets, Code, Document, Figure, Paragraph, Section, Table, text
from .regret import LEARN_MARGIN

GENERAL_ASSUMPTIONS = (
    "Neighbouring datasets differ in one user (one episode's trajectory) replaced by another (replace-one-user), the "
    "relation of the papers' JDP/LDP definitions; sensitivities are derived under it.",
    "A pure-DP claim (delta = 0) is checked at delta = 0, where only basic composition applies; approximate claims are "
    "checked at the setting's delta with every accountant (docs/accounting.md).",
    "A binary-tree counter over K leaves puts one user in floor(log2 K) + 1 noised nodes (noise drawn once per node).",
    "The audit runs the paper-calibrated learner at a small audit configuration (the learner's own audit setting, "
    "LearnerSpec.audit_setting) and is compared with the accounted eps of THAT configuration (eps_lb <= eps_accounted is "
    "asserted); the accounted eps at the setting's K is a different configuration. Every audit fixes the other users "
    "(two neighbouring datasets valid under the paper's relation) and observes every release that contains user 1, with "
    "the exact likelihood-ratio test.",
    "Regret is exact: V*_1(s_1) - V^{pi_k}_1(s_1) by backward induction on the true model, summed over episodes.",
    "Bonus/confidence multipliers are non-privacy constants (RunConfig.bonus_scale and options, recorded per row), never "
    "a noise scale or a sensitivity.",
)

SUMMARY = "Summary"
CAUSES = "Why a claim fails"
FIGURES = "Figures"
ASSUMPTIONS = "Assumptions the toolkit made where a paper is silent"


def _g(x: float | None, spec: str = ".4g") -> str:
    return "n/a" if x is None or not math.isfinite(x) else format(x, spec)


def claim_word(setting) -> str:
    """"claimed" when the paper prints eps and delta, else "the toolkit's setting"."""
    return "claimed" if setting.claim_printed else "the toolkit's setting"


def _ratios(row) -> str:
    v = [x for _, x in row.noise_ratio]
    if not v:
        return "n/a"
    lo, hi = min(v), max(v)
    counter = f" ({row.tight_counter} counter)" if row.tight_counter else ""   # the strategy tight chose
    return (f"{lo:.3g}" if math.isclose(lo, hi, rel_tol=1e-6) else f"{lo:.3g}-{hi:.3g}") + counter


def _value(setting, name: str, row) -> str:
    if name == "epsilon":
        return f"{setting.epsilon:g}"
    if name == "delta":
        return f"{setting.delta:g}"
    if name == "episodes":
        return f"K = {setting.episodes}"
    if name == "env":
        return row.env
    if name == "horizon":
        return "n/a" if row.horizon is None else f"H = {row.horizon}"
    opts = ", ".join(f"{k} {v}" for k, v in setting.options)
    return f"bonus_scale {setting.bonus_scale:g}" + (f"; {opts}" if opts else "")


# --------------------------------------------------------------------------- row parts
def verdict_text(row) -> tuple:
    s, rep = row.setting, row.report
    word = claim_word(s)
    acc = rep.tightest_epsilon
    rel = ">" if rep.holds is False else "<="
    parts = [("bold", row.verdict), f": accounted {_g(acc)} {rel} {word} eps {s.epsilon:g} at delta {s.delta:g} "
             f"(printed constants, K = {s.episodes}, {rep.tightest or 'no accountant'})"]
    for note in row.verdict_notes:
        parts.append(f"; {note}")
    return text(*parts)


def provenance_table(row) -> Table:
    s = row.setting
    out = []
    for name, p in s.provenance:
        out.append((text(name), text(_value(s, name, row)), text(("bold", p.label)), text(p.note)))
    return Table(("setting", "value", "provenance", "where from / why"), tuple(out),
                 caption=f"{row.title}: provenance of every number ((eps, delta) is {claim_word(s)})")


def breakdown_table(ex) -> Table:
    b = ex.breakdown
    rows = []
    for f in sorted(b.families, key=lambda f: -f.cost):
        rows.append((text(f.label), text(str(f.releases)), text(_g(f.cost)), text(f"{100 * f.share:.1f}%"),
                     text(_g(f.paper_cost)),
                     text("n/a" if f.epsilon_alone is None else f"{f.epsilon_alone:.4g} ({f.accountant_alone})")))
    unit = "zCDP rho" if b.measure == "rho" else "pure eps (basic composition)"
    budget = "" if b.budget is None else f"; the claim allows {b.measure} {b.budget:.4g}"
    return Table(("release family", "releases per user", b.measure, "share", f"{b.measure} as printed", "eps alone"),
                 tuple(rows), caption=f"budget breakdown in {unit} at delta {b.delta:g}{budget}; dominant: "
                                      f"{b.dominant_family.label}")


def readings_blocks(row) -> list:
    summ = row.report.readings
    if summ is None:
        return []
    out = []
    for r in summ.results:
        ex = r.explanation
        out.append((text(("bold", r.name) if r.supported_by else r.name), text(_g(ex.accounted_epsilon)), text(ex.verdict),
                    text(ex.breakdown.dominant_family.label),
                    text("supports it" if r.supported_by else "-", " (the log as declared)" if r.declared else "")))
    blocks: list = [Table(("reading", "accounted eps", "verdict", "dominant family", "the paper's proof"), tuple(out),
                          caption=f"every reading of the ambiguous printed setting, each accounted at delta {summ.delta:g}")]
    items = []
    for r in summ.results:
        if r.description and not (r.declared and r.name == "(as declared)"):
            items.append(text(("bold", r.name), ": ", r.description))
    for r in summ.supported:
        items.append(text("The paper's own proof supports ", ("bold", r.name), ": ", r.supported_by))
    if not summ.supported:
        items.append(text("The paper's own proof supports none of these readings."))
    items.append(text("Verdict in every reading: ", ("bold", summ.verdict_in_every_reading),
                      f" ({len(summ.results)} readings)."))
    for r in summ.results:
        if not r.declared and r.explanation.causes:
            items.append((text(f"Causes under reading {r.name}:"), Bullets(tuple(text(c.text) for c in r.explanation.causes))))
    blocks.append(Bullets(tuple(items)))
    return blocks


def regret_table(row) -> Table:
    c = row.regret
    u = c.uniform

    def cell(r) -> tuple:
        return text(f"{r.mean:.4g} +- {r.std:.3g}", f" ({r.mean / u:.2f} x uniform)" if u > 0 else "")

    return Table(("printed noise", "tight noise", f"non-private ({c.nonprivate_learner})", "uniform policy"),
                 ((cell(c.paper), cell(c.tight), cell(c.nonprivate), text(f"{u:.4g}")),),
                 caption=f"cumulative regret at K = {c.episodes} (mean +- std over {c.seeds} seeds); non-private: "
                         f"{c.nonprivate_note}")


def audit_text(row) -> tuple:
    a = row.audit
    return text(f"Audit at its audit configuration (K = {a['episodes']}, H = {a['horizon']}, {a['trials']} trials per side, "
                f"other users fixed, every release of user 1 observed): measured lower bound {a['epsilon_lower_bound']:.3g} "
                f"<= accounted {a['accounted_epsilon']:.3g} of the same configuration ({a['accountant']}); audit verdict ",
                ("bold", a["verdict"]), "" if a["has_power"] else " (no power to certify a violation at this size)", ".")


def row_section(row) -> Section:
    rep = row.report
    ex = rep.explanation
    blocks: list = [Paragraph(verdict_text(row)), Paragraph(text(("em", row.paper)))]
    blocks.append(provenance_table(row))
    if row.setting.repairs:
        blocks.append(Bullets(tuple(text(("bold", "repair: " + r.name), " -- ", r.why) for r in row.setting.repairs)))
    blocks.append(breakdown_table(ex))
    if rep.causes:
        blocks.append(Paragraph(text(("bold", "Causes"), f" (computed from the breakdown and the paper statements; accounted "
                                     f"{_g(rep.tightest_epsilon)} > {claim_word(row.setting)} eps {row.setting.epsilon:g}):")))
        blocks.append(Bullets(tuple(text(c) for c in rep.causes)))
    if ex.over_noising_factor is not None:
        blocks.append(Paragraph(text(f"Over-noising factor (printed noise / least noise meeting the claim, "
                                     f"{ex.over_noising_accountant}): {ex.over_noising_factor:.4g}; the tight calibration's "
                                     f"noise is {_ratios(row)} x the printed noise (per group) and accounts to "
                                     f"{_g(row.tight_accounted_epsilon)}.")))
    blocks += readings_blocks(row)
    blocks.append(regret_table(row))
    blocks.append(Paragraph(text(("bold", "Learning."), " " + row.regret.statement[0].upper() + row.regret.statement[1:] + ".")))
    blocks.append(Paragraph(audit_text(row)))
    blocks.append(Bullets(tuple(text(("code", a.split(":", 1)[0]), ":" + a.split(":", 1)[1]) for a in row.assumptions)))
    blocks.append(Code(tuple(c for _, c in row.commands)))
    return Section(row.title, tuple(blocks), level=2)


# --------------------------------------------------------------------------- document
SUMMARY_HEADER = ("algorithm", "model", "(eps, delta)", "accounted eps (printed constants, setting's K)", "verdict",
                  "audit LB <= accounted (same audit configuration)", "audit", "tight / printed noise",
                  "regret at K: printed / tight / non-private / uniform", "learns?")


def summary_row(row) -> tuple:
    s, c, a = row.setting, row.regret, row.audit
    learns = "yes" if c.learns(c.paper) else "no"
    kinds = f"eps {s.provenance_of('epsilon').label}, delta {s.provenance_of('delta').label}"
    return (text(row.algorithm), text(s.privacy.upper()), text(f"({s.epsilon:g}, {s.delta:g}) {claim_word(s)} ({kinds})"),
            text(("bold", _g(row.report.tightest_epsilon)), f" ({row.report.tightest})"),
            text(row.verdict, *(f"; {n}" for n in row.verdict_notes)),
            text(f"{a['epsilon_lower_bound']:.3g} <= {a['accounted_epsilon']:.3g} (K={a['episodes']}, H={a['horizon']})"),
            text(a["verdict"]), text(_ratios(row)),
            text(f"K={c.episodes}: {c.paper.mean:.4g} / {c.tight.mean:.4g} / {c.nonprivate.mean:.4g} / {c.uniform:.4g}"),
            text(learns))


TERMINAL_HEADER = ("algorithm", "model", "(eps, delta)", "accounted eps", "verdict", "audit LB <= acc.", "audit",
                   "tight/printed", "learns?")


def terminal_table(rows) -> Table:
    """The summary for a terminal: the same numbers as :data:`SUMMARY_HEADER`'s table, fewer words
    (the notes of each verdict are in the documents)."""
    out = []
    for row in rows:
        s, c, a = row.setting, row.regret, row.audit
        note = " *" if row.verdict_notes else ""
        out.append((text(row.algorithm), text(s.privacy.upper()), text(f"({s.epsilon:g}, {s.delta:g})"),
                    text(_g(row.report.tightest_epsilon)), text(row.verdict + note),
                    text(f"{a['epsilon_lower_bound']:.3g} <= {a['accounted_epsilon']:.3g}"), text(a["verdict"]),
                    text(_ratios(row)), text("yes" if c.learns(c.paper) else "no")))
    return Table(TERMINAL_HEADER, tuple(out))


def intro(meta: dict[str, Any]) -> tuple:
    scale = meta["scale"]
    reg = ", ".join(f"{k} {v}" for k, v in sorted(scale["regret_episodes"].items())) or "the settings' K"
    return (
        # no clock time here: the same command and seed give the same report.md / report.html bytes
        # (the date and the seconds are report.json's "generated" and "seconds" fields)
        Paragraph(text("Written by ", ("code", meta["command"]),
                       f" ({meta['scale_name']} scale, seed {meta['seed']}).")),
        Paragraph(text("Every row checks one private learner at one setting with the sandwich ",
                       ("bold", "eps_audit <= eps_true <= eps_accounted <=? eps_claimed"),
                       ": eps_audit is a measured lower bound from neighbouring-user simulations, eps_accounted the derived "
                       "upper bound of the learner's declared mechanism log. The audit and the accounted eps beside it are of "
                       "the same (small) audit configuration; the accounted eps of the row is the printed constants at the "
                       "setting's K. The tight column is the noise the same claim needs with corrected sensitivities, as a "
                       "multiple of the printed noise.")),
        Paragraph(text(("bold", "Reduced scale."), f" Regret is run at K = {reg} episodes with {scale['seeds']} seeds (not "
                       "the settings' K; ", ("code", "privacct report --full"), " runs those), and each audit with "
                       f"{scale['audit_trials']} to {scale['max_audit_trials']} trials per side. The accounting is always at "
                       "the setting's K.")),
        Paragraph(text("A setting's (eps, delta) is called ", ("em", "claimed"), " only where the paper prints both; "
                       "elsewhere it is ", ("em", "the toolkit's setting"), ", and each row's provenance table says, for every "
                       "number, whether it is printed (with its equation), chosen by the toolkit (and why) or derived. A "
                       "learner ", ("em", "does not learn"), f" at a K when its regret is within {100 * LEARN_MARGIN:.0f}% of "
                       "the uniform policy's.")),
    )


def document(rows, meta: dict[str, Any], figures: list[tuple[str, str]]) -> Document:
    """The whole report (module docstring); ``figures``: (file name, caption) in the output directory."""
    sections = [Section(SUMMARY, (Table(SUMMARY_HEADER, tuple(summary_row(r) for r in rows)),))]
    failing = [r for r in rows if r.report.causes or r.verdict != "holds"]
    items = []
    for r in failing:
        s = r.setting
        head = text(("bold", r.title), f": accounted {_g(r.report.tightest_epsilon)} "
                    f"{'>' if r.report.holds is False else '<='} {claim_word(s)} eps {s.epsilon:g} ({r.verdict}).")
        items.append((head, Bullets(tuple(text(c) for c in r.report.causes))) if r.report.causes else head)
    sections.append(Section(CAUSES, (Bullets(tuple(items)),) if items else (Paragraph(text("Every claim holds.")),)))
    sections += [row_section(r) for r in rows]
    sections.append(Section(FIGURES, tuple(Figure(f, cap) for f, cap in figures)))
    sections.append(Section(ASSUMPTIONS, (Bullets(tuple(text(a) for a in GENERAL_ASSUMPTIONS)),)))
    return Document("privacct report", intro(meta), tuple(sections))


__all__ = ["ASSUMPTIONS", "CAUSES", "TERMINAL_HEADER", "terminal_table", "FIGURES", "GENERAL_ASSUMPTIONS", "SUMMARY", "SUMMARY_HEADER", "claim_word", "document",
           "row_section", "summary_row"]
