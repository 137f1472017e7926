"""The report's text: one :class:`.document.Document` built from the rows, rendered by :mod:`.render`
as Markdown, HTML and terminal text (docs/report.md). Every sentence here is assembled from a row's
numbers (the accounting, the breakdown and causes of :func:`privacct.explain.explain`, the readings,
the provenance of the setting, the regret column); nothing is written per paper.

The document opens with the **summary**: one row per paper claim (seed and first author, learner,
privacy model, (eps, delta) with each number marked printed or chosen, the accounted eps under the
reading the paper's own proof supports with the range over every reading, the verdict in words that
keep "holds (repaired)" and "holds trivially" apart, and the one-line computed cause,
:attr:`.rows.ReportRow.summary_cause`), short enough not to wrap at 1400 px; audits, tight noise and
regret follow in their own table, the causes, then one section per row with the details.

Wording: a setting's (eps, delta) is "claimed" only when the paper prints both
(:attr:`privacct.algorithms.settings.PaperSetting.claim_printed`); otherwise each number says
whether it is printed or the toolkit's choice, and the provenance table says why it was chosen.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .document import Bullets, Code, Document, Figure, Paragraph, Section, Table, text
from .regret import LEARN_MARGIN, LEVEL, MIN_SEEDS

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
MEASURES = "Audits, tight noise and regret"
CAUSES = "Why a claim fails"
FIGURES = "Figures"
ASSUMPTIONS = "Assumptions the toolkit made where a paper is silent"

#: One word per provenance kind of eps and delta in the summary (privacct.algorithms.settings).
PROVENANCE_WORDS = {"printed": "printed", "choice": "chosen", "derived": "derived"}
#: The binary tree's name in plain words; other counters go by their strategy name (docs/counters.md).
COUNTER_NAMES = {"tree": "binary tree"}


def _g(x: float | None, spec: str = ".4g") -> str:
    return "n/a" if x is None or not math.isfinite(x) else format(x, spec)


def claim_word(setting) -> str:
    """"claimed" when the paper prints eps and delta, else "the toolkit's setting"."""
    return "claimed" if setting.claim_printed else "the toolkit's setting"


def provenance_word(setting, name: str) -> str:
    """"printed", "chosen" or "derived" for ``epsilon`` or ``delta`` of a setting."""
    return PROVENANCE_WORDS[setting.provenance_of(name).kind]


def claim_cell(setting) -> str:
    """The (eps, delta) of a setting, each number with its provenance: "(1 chosen, 0.1 printed)"."""
    return (f"({setting.epsilon:g} {provenance_word(setting, 'epsilon')}, "
            f"{setting.delta:g} {provenance_word(setting, 'delta')})")


def claim_phrase(setting) -> str:
    """The claim in a sentence, each number with its provenance label."""
    if setting.claim_printed:
        return f"the claimed eps {setting.epsilon:g} at delta {setting.delta:g} (both printed)"
    return (f"eps {setting.epsilon:g} ({setting.provenance_of('epsilon').label}) at delta {setting.delta:g} "
            f"({setting.provenance_of('delta').label})")


def counter_name(counter: str) -> str:
    return COUNTER_NAMES.get(counter, f"{counter} counter")


def counter_swap(row) -> str:
    """In plain words, the counter the tight calibration put in place of the printed one ("" when it kept it)."""
    tight, printed = row.tight_counter, getattr(row, "paper_counter", None)
    if not tight or tight == printed:
        return ""
    if not printed:
        return f"tight uses a {counter_name(tight)}"
    return f"{counter_name(printed)} swapped for {counter_name(tight)}"


def _ratios(row) -> str:
    """The tight noise over the printed noise (a range over groups), and the counter swapped in, if any."""
    v = [x for _, x in row.noise_ratio]
    if not v:
        return "n/a"
    lo, hi = min(v), max(v)
    swap = counter_swap(row)
    return (f"{lo:.3g}" if math.isclose(lo, hi, rel_tol=1e-6) else f"{lo:.3g}-{hi:.3g}") + (f" ({swap})" if swap else "")


def paper_cell(row) -> str:
    """Seed and first author: "004 Ngo" (the full reference is in the summary's list of papers)."""
    m = re.match(r"\s*([A-Z][\w'-]+)", row.paper)
    return row.seed if m is None else f"{row.seed} {m.group(1)}"


def paper_reference(paper: str) -> str:
    """A learner's paper reference without the toolkit's seed tag and the learner's own algorithm number."""
    ref = re.sub(r"\s*[\[(]seed \d+[\])]", "", paper).strip()
    return re.sub(r",\s*(?:Alg\.|Algorithm)\s.*$", "", ref).strip()


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


def _rel(ex) -> str:
    return ">" if ex.holds is False else "<="


def reading_phrase(row) -> str:
    """Which accounting the row leads with, in words ("" for a log without readings)."""
    lead = row.lead
    if lead.reading is None:
        return ""
    if lead.supported_by:
        return f"under reading {lead.reading}, the one the paper's own proof supports"
    return "as declared (the paper's own proof supports none of the readings)"


def others_phrase(row) -> str:
    """The other readings beside the lead one: the declared log first, then every reading's verdict."""
    summ = row.report.readings
    if summ is None:
        return ""
    lead = row.lead
    parts = []
    for r in summ.results:
        if r.name == lead.reading:
            continue
        what = " (the log as declared: the noise the learner runs)" if r.declared else ""
        parts.append(f"reading {r.name}{what}: {_g(r.explanation.accounted_epsilon)}")
    lo, hi = row.readings_range or (None, None)
    every = summ.verdict_in_every_reading
    tail = (f"{every} in every reading" if every != "depends on the reading" else "the verdict depends on the reading")
    return "; ".join(parts + [f"{tail} ({_g(lo)}-{_g(hi)})"])


def readings_parts(row) -> list[str]:
    """What follows a row's accounted eps wherever it is stated: the reading it is under, and the others beside it."""
    out = []
    reading, others = reading_phrase(row), others_phrase(row)
    if reading:
        out.append(f" {reading}")
    if others:
        out.append(f"; beside it, {others}")
    return out


# --------------------------------------------------------------------------- row parts
def verdict_text(row) -> tuple:
    s, lead = row.setting, row.lead
    ex = lead.explanation
    parts = [("bold", row.summary_verdict), f": accounted {_g(ex.accounted_epsilon)} {_rel(ex)} {claim_phrase(s)} "
             f"(printed constants, K = {s.episodes}, {ex.tightest or 'no accountant'})"]
    parts += readings_parts(row)
    for note in row.verdict_notes:
        parts.append(f"; {note}")
    return text(*parts)


def provenance_table(row) -> Table:
    s = row.setting
    out = []
    for name, p in s.provenance:
        out.append((text(name), text(_value(s, name, row)), text(("bold", p.label)), text(p.note)))
    return Table(("setting", "value", "provenance", "where from / why"), tuple(out),
                 caption=f"{row.title}: provenance of every number; (eps, delta) = {claim_cell(s)}"
                         f"{', the claim the paper prints' if s.claim_printed else ''}")


def breakdown_table(ex, which: str = "") -> Table:
    b = ex.breakdown
    rows = []
    for f in sorted(b.families, key=lambda f: -f.cost):
        rows.append((text(f.label), text(str(f.releases)), text(_g(f.cost)), text(f"{100 * f.share:.1f}%"),
                     text(_g(f.paper_cost)),
                     text("n/a" if f.epsilon_alone is None else f"{f.epsilon_alone:.4g} ({f.accountant_alone})")))
    unit = "zCDP rho" if b.measure == "rho" else "pure eps (basic composition)"
    budget = "" if b.budget is None else f"; the claim allows {b.measure} {b.budget:.4g}"
    return Table(("release family", "releases per user", b.measure, "share", f"{b.measure} by the paper's argument",
                  "eps alone"), tuple(rows),
                 caption=f"budget breakdown{which} in {unit} at delta {b.delta:g}{budget}; dominant: "
                         f"{b.dominant_family.label}")


def _which(row, name: str | None, declared: bool) -> str:
    if name is None:
        return ""
    return f" under reading {name}" + (" (the log as declared)" if declared else "")


def robust_text(row) -> tuple | None:
    """The families whose releases alone exceed the claim in every reading, or None."""
    fams = row.robust_families
    if not fams:
        return None
    n = len(row.report.readings.results) if row.report.readings is not None else 1
    where = f"in every reading ({n})" if n > 1 else "as declared"
    names = "; ".join(f"{name} alone accounts to eps >= {e:.4g}" for name, e in fams)
    return text(("bold", "Robust cause"), f" {where}: {names} > eps {row.setting.epsilon:g}.")


def readings_blocks(row) -> list:
    summ = row.report.readings
    if summ is None:
        return []
    lead = row.lead
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
        if r.name != lead.reading and r.explanation.causes:
            what = " (the log as declared)" if r.declared else ""
            items.append((text(f"Causes under reading {r.name}{what}:"), Bullets(tuple(text(c.text) for c in r.explanation.causes))))
    blocks.append(Bullets(tuple(items)))
    if not lead.declared:           # the log that runs: its breakdown beside the lead one
        declared = next(r for r in summ.results if r.declared)
        blocks.append(breakdown_table(declared.explanation, _which(row, declared.name, True)))
    return blocks


def regret_table(row) -> Table:
    """The regret column's figures: each curve's mean +- std, as a multiple of the uniform policy's regret with
    the 95% interval of the mean, and the private learner's policy updates with each noise."""
    c = row.regret
    u = c.uniform

    def cell(r) -> tuple:
        iv = r.interval
        span = "" if iv is None or not u > 0 else f"; {100 * iv.level:.0f}% {iv.over(u).low:.3g}-{iv.over(u).high:.3g}"
        return text(f"{r.mean:.4g} +- {r.std:.3g}", f" ({r.mean / u:.3g} x uniform{span})" if u > 0 else "")

    return Table(("printed noise", "tight noise", f"non-private ({c.nonprivate_learner})", "uniform policy"),
                 ((cell(c.paper), cell(c.tight), cell(c.nonprivate), text(f"{u:.4g}")),
                  (text(f"updates: {c.paper_updates.phrase()}"), text(f"updates: {c.tight_updates.phrase()}"), text(""),
                   text(""))),
                 caption=f"cumulative regret at K = {c.episodes} (mean +- std over {c.seeds} seeds; in brackets as a "
                         f"multiple of the uniform policy's exact regret, with the 95% t-interval of the mean); policy "
                         f"updates per seed as the learner's runs report them (n_updates); non-private: {c.nonprivate_note}")


def counter_audited(row) -> str:
    """``, counter audited: NAME`` (the counter the audited run ran and the audit observed, the one the unaudited run
    of the same configuration runs; docs/auditing.md#factorized-counters), with the row's printed run's counter where
    it differs; empty for a row without a counter (LDP) or an audit recorded before the key existed."""
    counter = row.audit.get("counter")
    if counter is None:
        return ""
    printed = getattr(row, "paper_counter", None)
    return f", counter audited: {counter}" + ("" if printed in (None, counter) else f" (the printed run's: {printed})")


def audit_text(row) -> tuple:
    a = row.audit
    parts = [f"Audit at its audit configuration (K = {a['episodes']}, H = {a['horizon']}, {a['trials']} trials per side, "
             f"other users fixed, every release of user 1 observed{counter_audited(row)}; it tests "
             f"{a.get('tests', 'the released statistics')}): "
             f"measured lower bound {a['epsilon_lower_bound']:.3g} <= accounted {a['accounted_epsilon']:.3g} of the same "
             f"configuration ({a['accountant']}); audit verdict ", ("bold", a["verdict"]),
             "" if a["has_power"] else " (no power to certify a violation at this size)", "."]
    if a.get("departures"):   # an option of the audit configuration the paper's algorithm would not run
        parts += [" ", ("bold", "The audit configuration departs from the paper's algorithm"), ": " + a["departures"] + "."]
    bb = a.get("billboard")
    if bb:
        parts += [" Billboard check (the step from those releases to JDP: coupled runs whose releases are equal must "
                  "prescribe users 2..K the same actions; docs/auditing.md#the-billboard-check): ", ("bold", bb["verdict"]),
                  f" ({bb['differing']} of {bb['trials']} coupled trials differ"
                  + (f"; P[a trial would] <= {bb['p_upper']:.2g}" if bb["verdict"] == "passes" else "")
                  + ("; not checkable: " + "; ".join(bb["uncoupled"]) if bb["verdict"] == "inconclusive" and bb["uncoupled"]
                     else "")
                  + (f"; no power: P[a trial would] <= {bb['p_upper']:.2g} > 0.1, {bb.get('trials_needed')} trials needed"
                     if bb["verdict"] == "inconclusive" and not bb["uncoupled"] else "") + ")."]
    one = a.get("one_run")
    if one:
        if one.get("verdict") == "not run":
            parts.append(f" One-run audit at the paper setting: not run ({one['reason']}).")
        else:
            parts += [f" One-run audit at the paper setting ({one['canaries']} canaries, {one['guesses']} guesses, "
                      f"{one['correct']} correct): lower bound {one['epsilon_lower_bound']:.3g} vs accounted "
                      f"{one['accounted_epsilon']:.3g}; verdict ", ("bold", one["verdict"]), "."]
    parts += action_audit_parts(a.get("one_run_actions"))
    return text(*parts)


def action_audit_parts(act) -> list:
    """The action-audit sentence of a JDP row (``--full``): the one-run action audit at its stated configuration, what
    claim it tests (JDP itself, not the DP of the statistics) and its verdict; [] where none ran."""
    if not act:
        return []
    where = (f"K = {act['episodes']}" + ("" if act.get("horizon") is None else f", H = {act['horizon']}")
             + f", printed constants, {act['canaries']} canaries")
    head = (f" One-run action audit at the paper setting ({where}; it tests JDP itself, not the DP of the released "
            f"statistics: {act['tests']}; docs/auditing.md#one-run-action-audits): ")
    if act.get("verdict") == "not run":
        return [head + f"not run ({act['reason']})."]
    return [head + f"{act['guesses']} canaries guessed from the actions to other users, lower bound "
                   f"{act['epsilon_lower_bound']:.3g} vs claim {act['claimed_epsilon']:.3g} (accounted "
                   f"{act['accounted_epsilon']:.3g}); verdict ", ("bold", act["verdict"]),
            "." if act["verdict"] == "fails" else " (an action audit can fail, never pass)."]


def tight_text(row) -> tuple:
    ex = row.report.explanation
    v = [x for _, x in row.noise_ratio]
    ratio = "n/a" if not v else (f"{min(v):.3g}" if math.isclose(min(v), max(v), rel_tol=1e-6) else f"{min(v):.3g}-{max(v):.3g}")
    swap = ""
    if counter_swap(row):
        printed = getattr(row, "paper_counter", None)
        swap = (f"the tight calibration swaps the paper's {counter_name(printed)} for the {counter_name(row.tight_counter)} "
                f"(docs/counters.md), and its noise is " if printed else
                f"the tight calibration uses a {counter_name(row.tight_counter)} (docs/counters.md), and its noise is ")
    return text(f"Over-noising factor (printed noise / least noise meeting the claim, {ex.over_noising_accountant}"
                f"{', the log as declared' if row.report.readings is not None else ''}): {_g(ex.over_noising_factor)}; "
                + (swap or "the tight calibration's noise is ") + f"{ratio} x the printed noise (per group) and accounts to "
                f"{_g(row.tight_accounted_epsilon)}."
                + (f" Tight's choice of counter and budget split (docs/counters.md#choosing-for-regret): {row.tight_choice}."
                   if getattr(row, "tight_choice", None) else ""))


def row_section(row) -> Section:
    rep = row.report
    lead = row.lead
    ex = lead.explanation
    blocks: list = [Paragraph(verdict_text(row)), Paragraph(text(("em", row.paper)))]
    blocks.append(provenance_table(row))
    if row.setting.repairs:
        blocks.append(Bullets(tuple(text(("bold", "repair: " + r.name), " -- ", r.why) for r in row.setting.repairs)))
    blocks.append(breakdown_table(ex, _which(row, lead.reading, lead.declared)))
    if ex.causes:
        blocks.append(Paragraph(text(("bold", "Causes"), f"{_which(row, lead.reading, lead.declared)} (computed from the "
                                     f"breakdown and the paper statements; accounted {_g(ex.accounted_epsilon)} > eps "
                                     f"{row.setting.epsilon:g}):")))
        blocks.append(Bullets(tuple(text(c.text) for c in ex.causes)))
    robust = robust_text(row)
    if robust is not None and row.fails:
        blocks.append(Paragraph(robust))
    blocks += readings_blocks(row)
    if rep.explanation.over_noising_factor is not None:
        blocks.append(Paragraph(tight_text(row)))
    blocks.append(regret_table(row))
    blocks.append(Paragraph(text(("bold", "Learning."), " " + row.regret.statement[0].upper() + row.regret.statement[1:] + ".")))
    blocks.append(Paragraph(audit_text(row)))
    blocks.append(Bullets(tuple(text(("code", a.split(":", 1)[0]), ":" + a.split(":", 1)[1]) for a in row.assumptions)))
    blocks.append(Code(tuple(c for _, c in row.commands)))
    return Section(row.title, tuple(blocks), level=2)


# --------------------------------------------------------------------------- summary
SUMMARY_HEADER = ("paper", "algorithm, model", "(eps, delta)", "accounted eps [readings]", "verdict", "computed cause")
SUMMARY_COLUMNS = ("paper", "algorithm", "claim", "num", "verdict", "cause")


def ordered(rows) -> list:
    """The rows by paper (seed), learner, privacy model and eps: the summary's order and the sections'."""
    return sorted(rows, key=lambda r: (r.seed, r.algorithm, r.setting.privacy, r.setting.epsilon, r.setting.delta))


def accounted_cell(row) -> tuple:
    ex = row.lead.explanation
    rng = row.readings_range
    tail = "" if rng is None or math.isclose(rng[0], rng[1], rel_tol=1e-9) else f" [{rng[0]:.3g}-{rng[1]:.3g}]"
    return text(("bold", _g(ex.accounted_epsilon)), tail)


def summary_row(row) -> tuple:
    verdict = row.summary_verdict
    return (text(paper_cell(row)), text(f"{row.algorithm} {row.setting.privacy.upper()}"), text(claim_cell(row.setting)),
            accounted_cell(row), text(("bold", verdict) if row.fails else verdict), text(row.summary_cause))


def summary_table(rows) -> Table:
    rows = ordered(rows)
    return Table(SUMMARY_HEADER, tuple(summary_row(r) for r in rows), css_class="summary", column_classes=SUMMARY_COLUMNS,
                 row_classes=tuple("fails" if r.fails else "holds" for r in rows))


def summary_legend(rows) -> Bullets:
    papers: dict[str, set[str]] = {}
    learners: dict[str, list[str]] = {}
    for r in ordered(rows):
        papers.setdefault(r.seed, set()).add(paper_reference(r.paper))
        if r.algorithm not in learners.setdefault(r.seed, []):
            learners[r.seed].append(r.algorithm)
    refs = tuple(text(("bold", seed), ": ", max(papers[seed], key=len), f" ({', '.join(learners[seed])})")
                 for seed in sorted(papers))
    return Bullets((
        (text(("bold", "paper"), ": the seed number and first author of each paper:"), Bullets(refs)),
        text(("bold", "(eps, delta)"), ": each number is followed by its provenance: ", ("em", "printed"), " (the paper "
             "prints it; the row's provenance table gives the section) or ", ("em", "chosen"), " (the toolkit's choice, where "
             "the paper claims every value or prints none; the table says why). Only where both are printed is it the "
             "paper's own claim."),
        text(("bold", "accounted eps"), ": the tightest accountant's eps of the printed constants at the setting's K, under "
             "the reading the paper's own proof supports where a printed setting is ambiguous; in brackets, the range over "
             "every reading (each row's section shows them all)."),
        text(("bold", "verdict"), ": ", ("em", "holds (repaired)"), " -- holds for the algorithm with the repair its "
             "section names (a lower clip the printed algorithm lacks), not as printed; ", ("em", "holds trivially"),
             " -- eps = 0 at the claimed delta: delta alone covers one user's two output distributions, so the claim "
             "says almost nothing; ", ("em", "FAILS"), " -- the accountant, the audit or both refute it."),
        text(("bold", "computed cause"), ": computed from the budget breakdown and the paper statements of the row's "
             "log (privacct.explain): the release family whose releases alone exceed the claim, and the paper's own step "
             "that is wrong, named by the lemma or equation that prints it, with the derived and printed figures; for a "
             "claim that holds, the room the printed noise leaves."),
    ))


MEASURES_HEADER = ("paper", "algorithm", "model", "audit LB <= accounted (same audit config.)", "audit",
                   "tight / printed noise", "regret at K: printed / tight / non-private / uniform", "learns?")


def measures_row(row) -> tuple:
    c, a = row.regret, row.audit
    return (text(row.seed), text(row.algorithm), text(f"{row.setting.privacy.upper()} eps {row.setting.epsilon:g}"),
            text(f"{a['epsilon_lower_bound']:.3g} <= {a['accounted_epsilon']:.3g} (K={a['episodes']}, H={a['horizon']})"),
            text(a["verdict"]), text(_ratios(row)),
            text(f"K={c.episodes}: {c.paper.mean:.4g} / {c.tight.mean:.4g} / {c.nonprivate.mean:.4g} / {c.uniform:.4g}"),
            text(c.short))


TERMINAL_HEADER = ("seed", "algorithm", "model", "(eps, delta) eps/delta", "accounted eps", "[readings]", "verdict",
                   "audit LB <= acc.", "audit", "tight/printed")


def terminal_table(rows) -> Table:
    """The summary for a terminal: the numbers of the summary and the audit, fewer words (the causes
    and the notes of each verdict are in the documents)."""
    out = []
    for row in ordered(rows):
        s, a = row.setting, row.audit
        rng = row.readings_range
        out.append((text(row.seed), text(row.algorithm), text(s.privacy.upper()),
                    text(f"({s.epsilon:g}, {s.delta:g}) {provenance_word(s, 'epsilon')}/{provenance_word(s, 'delta')}"),
                    text(_g(row.lead.explanation.accounted_epsilon)),
                    text("" if rng is None else f"[{rng[0]:.4g}-{rng[1]:.4g}]"), text(row.summary_verdict),
                    text(f"{a['epsilon_lower_bound']:.3g} <= {a['accounted_epsilon']:.3g}"), text(a["verdict"]),
                    text(_ratios(row))))
    return Table(TERMINAL_HEADER, tuple(out))


def causes_items(rows) -> list:
    items = []
    for r in ordered(rows):
        ex = r.lead.explanation
        if not (r.fails or ex.causes):
            continue
        head = [("bold", r.title), f" (seed {r.seed}), {r.summary_verdict}: accounted {_g(ex.accounted_epsilon)} {_rel(ex)} "
                f"{claim_phrase(r.setting)}"]
        head += readings_parts(r)
        head.append(".")
        sub = [text(c.text) for c in ex.causes]
        robust = robust_text(r)
        if robust is not None:
            sub.append(robust)
        items.append((text(*head), Bullets(tuple(sub))) if sub else text(*head))
    return items


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
                       "setting's K, under the reading the paper's own proof supports where a printed setting is ambiguous. "
                       "The tight column is the noise the same claim needs with corrected sensitivities, as a multiple of the "
                       "printed noise.")),
        Paragraph(text(("bold", "Reduced scale."), f" Regret is run at K = {reg} episodes with {scale['seeds']} seeds (not "
                       "the settings' K; ", ("code", "privacct report --full"), " runs those), and each audit with "
                       f"{scale['audit_trials']} to {scale['max_audit_trials']} trials per side. The accounting is always at "
                       "the setting's K.")),
        Paragraph(text("A setting's (eps, delta) is called ", ("em", "claimed"), " only where the paper prints both; "
                       "elsewhere each number says whether it is ", ("em", "printed"), " or ", ("em", "chosen"), " by the "
                       "toolkit, and each row's provenance table says, for every number, whether it is printed (with its "
                       "equation), chosen by the toolkit (and why) or derived.")),
        Paragraph(text(("bold", "Learning."), " A curve ", ("em", "learns"), f" at a K when the {100 * LEVEL:.0f}% "
                       f"t-interval of its mean regret over at least {MIN_SEEDS} seeds lies below "
                       f"{100 * (1 - LEARN_MARGIN):.0f}% of the uniform policy's exact regret, and ", ("em", "does not learn"),
                       " when it lies at or above that; with fewer seeds no such claim is made. Each row's column reads, "
                       "in this order: the private learner ", ("em", "cannot update"), " its policy at that K (no policy "
                       "update in any seed, as its runs report them); ", ("em", "K too small"), " (the non-private learner "
                       "does not learn there either, so no conclusion about the private one, with the K at which --full "
                       "separates the curves, measured, or that it does not); the non-private learner learns and the private "
                       "one ", ("em", "does not"), "; or both learn.")),
    )


def document(rows, meta: dict[str, Any], figures: list[tuple[str, str]]) -> Document:
    """The whole report (module docstring); ``figures``: (file name, caption) in the output directory."""
    rows = ordered(rows)
    sections = [Section(SUMMARY, (summary_table(rows), summary_legend(rows))),
                Section(MEASURES, (Table(MEASURES_HEADER, tuple(measures_row(r) for r in rows), css_class="measures"),))]
    items = causes_items(rows)
    sections.append(Section(CAUSES, (Bullets(tuple(items)),) if items else (Paragraph(text("Every claim holds.")),)))
    sections += [row_section(r) for r in rows]
    sections.append(Section(FIGURES, tuple(Figure(f, cap) for f, cap in figures)))
    sections.append(Section(ASSUMPTIONS, (Bullets(tuple(text(a) for a in GENERAL_ASSUMPTIONS)),)))
    return Document("privacct report", intro(meta), tuple(sections))


__all__ = ["ASSUMPTIONS", "CAUSES", "FIGURES", "GENERAL_ASSUMPTIONS", "MEASURES", "MEASURES_HEADER", "SUMMARY",
           "SUMMARY_COLUMNS", "SUMMARY_HEADER", "TERMINAL_HEADER", "claim_cell", "claim_word", "counter_swap", "document",
           "ordered", "paper_cell", "row_section", "summary_row", "summary_table", "terminal_table"]
