"""The report's rows: one per private learner and paper setting (``LearnerSpec.paper_settings``).

Each row holds

* the **setting** with the provenance of every number (printed / toolkit's choice / derived) and the
  algorithm repairs its figures rely on (:mod:`privacct.algorithms.settings`);
* the **accounting** of the learner's declared log with the printed constants at the setting's K:
  :func:`privacct.privacy_report.privacy_report` (every accountant, the budget breakdown, every reading of an
  ambiguous paper, the computed causes of a failing claim);
* the **noise the claim needs**: the learner's ``tight`` log (corrected sensitivities, calibrated to the
  same claim) over the printed noise, group by group;
* the **audit**: an empirical lower bound from neighbouring-user simulations of the paper-calibrated
  learner at its audit configuration (:func:`privacct.audits.suite.audit_setting`), beside the accounted
  eps of that same configuration, with a verdict passes / fails / inconclusive;
* the **regret column** (:mod:`.regret`).

Where a printed setting is ambiguous the row **leads with the reading the paper's own proof
supports** (:attr:`ReportRow.lead`; the log as declared when no reading is supported), and shows
the range over every reading beside it; the JSON's ``accounted_epsilon`` stays the log that ran
(the results schema), ``lead_accounted_epsilon`` is the lead reading's.

Learners without typed settings get one per private model: eps = 1 and delta =
:func:`privacct.accounting.default_delta` of their log (0 for a pure log, 1e-6 otherwise), both marked
as the toolkit's choice.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from privacct.errors import PrivacctError
from privacct.accounting.verdict import verdict, within
from privacct.explain import Explanation, headline
from privacct.privacy_report import PrivacyReport, privacy_report

from .regret import RegretColumn, RegretRuns


#: The regret scales a learner declares (:class:`privacct.algorithms.contract.ReportEpisodes` fields).
REGRET_SCALES = ("default", "tiny")


@dataclass(frozen=True)
class ReportScale:
    """How big each part of the report runs. ``default()`` finishes in minutes; ``full()`` uses
    the settings' K and more seeds for regret and a larger audit; ``tiny()`` is for tests.

    ``regret``: which K of each learner's ``spec.report_scale()`` (:class:`privacct.algorithms.contract.ReportEpisodes`)
    the regret column runs, ``default`` or ``tiny``; None: the setting's own K. Never more than the setting's K."""

    regret: str | None
    seeds: int
    audit_trials: int
    #: trials per side of each audit: privacct.audits.suite.suggest_trials within [audit_trials, max_audit_trials]
    max_audit_trials: int = 100_000
    #: coupled trials of each JDP row's billboard check (docs/auditing.md#the-billboard-check); 0: none
    billboard_trials: int = 32
    #: canaries of each row's one-run audit at the paper setting (docs/auditing.md#one-run-audits-of-learners); 0: none
    one_run_canaries: int = 0

    def __post_init__(self) -> None:
        if self.regret is not None and self.regret not in REGRET_SCALES:
            raise PrivacctError(f"regret scale must be one of {', '.join(REGRET_SCALES)} or None, got {self.regret!r}")

    @classmethod
    def default(cls) -> "ReportScale":
        # 10 seeds: the regret column claims "learns" / "does not learn" only with >= regret.MIN_SEEDS seeds
        return cls("default", seeds=10, audit_trials=2000, max_audit_trials=100_000, billboard_trials=32)

    @classmethod
    def full(cls) -> "ReportScale":
        return cls(None, seeds=10, audit_trials=20_000, max_audit_trials=400_000, billboard_trials=64,
                   one_run_canaries=1000)

    @classmethod
    def tiny(cls) -> "ReportScale":
        return cls("tiny", seeds=2, audit_trials=200, max_audit_trials=200, billboard_trials=4)

    def regret_episodes(self, spec, episodes: int) -> int:
        """K of ``spec``'s regret column for a setting of ``episodes`` episodes."""
        if self.regret is None:
            return episodes
        return min(int(getattr(spec.report_scale(), self.regret)), episodes)

    def to_dict(self, specs=()) -> dict[str, Any]:
        """The scale as report.json records it; ``regret_episodes`` is K by family for the learners ``specs``
        (by learner where a family's learners differ; empty at the settings' own K)."""
        per: dict[str, dict[str, int]] = {}
        if self.regret is not None:
            for spec in specs:
                per.setdefault(spec.family, {})[spec.name] = int(getattr(spec.report_scale(), self.regret))
        regret: dict[str, int] = {}
        for family, ks in per.items():
            if len(set(ks.values())) == 1:
                regret[family] = next(iter(ks.values()))
            else:
                regret.update(ks)
        return {"regret_episodes": regret, "seeds": self.seeds, "audit_trials": self.audit_trials,
                "max_audit_trials": self.max_audit_trials, "billboard_trials": self.billboard_trials,
                "one_run_canaries": self.one_run_canaries}


def _default_settings(spec) -> list:
    """eps = 1 and the one default-delta rule, for a learner that declares no paper setting."""
    from privacct.accounting import default_delta
    from privacct.algorithms.contract import RunConfig
    from privacct.algorithms.settings import PROVENANCE_FIELDS, PaperSetting, choice

    out = []
    for privacy in ("jdp", "ldp"):
        if privacy not in spec.privacy_models:
            continue
        probe = RunConfig(spec.name, privacy=privacy, epsilon=1.0, delta=1e-6)
        log = spec.declared_log(probe)
        bare = replace(log, claim=None, readings=()) if log is not None else None
        delta = 1e-6 if bare is None else default_delta(bare)
        prov = {f: choice("the learner declares no paper setting: RunConfig's default") for f in PROVENANCE_FIELDS}
        prov["epsilon"] = choice("the learner declares no paper setting: eps = 1")
        prov["delta"] = choice("the learner declares no paper setting: privacct.accounting.default_delta "
                               "(0 for a pure log, 1e-6 with Gaussian releases)")
        out.append(PaperSetting(replace(probe, delta=delta), prov))
    return out


def paper_configs(only: list[str] | None = None) -> list[tuple[Any, Any]]:
    """(spec, PaperSetting) for every private learner at every setting it declares, each setting holding the
    learner's own RunConfig (:meth:`~privacct.algorithms.settings.PaperSetting.bound`)."""
    from privacct.algorithms.registry import learners
    from privacct.algorithms.settings import as_paper_setting

    table = learners()
    if only:
        unknown = sorted(set(only) - set(table))
        if unknown:
            raise PrivacctError(f"--only must name learners among {', '.join(sorted(table))}, got {', '.join(unknown)}")
    out = []
    for name, spec in sorted(table.items(), key=lambda kv: (kv[1].paper, kv[0])):
        if (only and name not in only) or not any(p in spec.privacy_models for p in ("jdp", "ldp")):
            continue
        for s in (spec.paper_settings or _default_settings(spec)):
            out.append((spec, as_paper_setting(s, spec.name)))
    return out


@dataclass(frozen=True)
class Lead:
    """The accounting a row leads with: the reading the paper's own proof supports (``reading`` its
    name, ``supported_by`` why), else the log as declared (``reading`` None when the log carries no
    readings). ``declared``: this is the log as declared (the noise the learner runs)."""

    reading: str | None
    supported_by: str
    declared: bool
    explanation: Explanation


def counter_of(log) -> str | None:
    """The continual counter a log's groups use: ``tree`` (the binary tree), a factorized strategy's
    name, or None without a counter."""
    counter = log.params.get("counter")
    if isinstance(counter, str):
        return counter
    for g in log.release_groups:
        if g.structure.kind == "tree":
            return "tree"
        if g.structure.kind == "factorized":
            return g.structure.strategy
    return None


@dataclass(frozen=True)
class ReportRow:
    """One row (module docstring). ``curves`` (mean cumulative regret per curve) feed the figures
    and stay out of the JSON."""

    algorithm: str
    paper: str
    family: str
    setting: Any                         # privacct.algorithms.settings.PaperSetting
    env: str
    horizon: int | None
    report: PrivacyReport
    tight_accounted_epsilon: float | None
    noise_ratio: tuple[tuple[str, float], ...]
    audit: dict[str, Any]
    regret: RegretColumn
    tight_counter: str | None   # the counting strategy tight chose (docs/counters.md), None without a counter
    commands: tuple[tuple[str, str], ...]
    assumptions: tuple[str, ...]
    seconds: float
    curves: dict[str, np.ndarray] = field(default_factory=dict, compare=False)
    paper_counter: str | None = None   # the counter of the printed log (``tree``: the binary tree), None without one
    tight_choice: str | None = None    # what tight chose and why (TightChoice.line(), docs/counters.md#choosing-for-regret)

    @property
    def privacy_model(self) -> str:
        return self.setting.privacy

    @property
    def title(self) -> str:
        s = self.setting
        return f"{self.algorithm} {s.privacy.upper()} eps={s.epsilon:g} delta={s.delta:g}"

    @property
    def verdict(self) -> str:
        """The accountant's verdict at the setting's K, with the audit's where it fails too."""
        rep, a = self.report, self.audit["verdict"]
        if rep.holds is False:
            return "FAILS (accountant+audit)" if a == "fails" else "FAILS (accountant)"
        return "FAILS (audit)" if a == "fails" else rep.verdict

    @property
    def verdict_notes(self) -> tuple[str, ...]:
        """What a 'holds' must be read with: the repairs it relies on, a trivial claim."""
        notes = []
        if self.report.holds and self.setting.repairs:
            notes.append("for the repaired algorithm (" + "; ".join(r.name for r in self.setting.repairs) + ")")
        ex = self.report.explanation
        if ex.trivial:
            at = ", ".join(f"{e:.3g} at delta={d:g}" for d, e in ex.trivial_at if e is not None)
            notes.append(f"trivially: eps = 0 at delta={ex.delta:g}; the same noise gives eps {at}")
        return tuple(notes)

    @property
    def seed(self) -> str:
        """The paper's seed number ("004"), from the learner's paper reference ("?" when it names none)."""
        m = re.search(r"seed (\d+)", self.paper)
        return m.group(1) if m else "?"

    @property
    def lead(self) -> Lead:
        """The reading the paper's own proof supports (the first, if several), else the log as declared."""
        summ = self.report.readings
        if summ is not None:
            for r in summ.results:
                if r.supported_by:
                    return Lead(r.name, r.supported_by, r.declared, r.explanation)
            for r in summ.results:
                if r.declared:
                    return Lead(r.name, "", True, r.explanation)
        return Lead(None, "", True, self.report.explanation)

    @property
    def readings_range(self) -> tuple[float, float] | None:
        """(least, largest) accounted eps over every reading; None without readings."""
        summ = self.report.readings
        if summ is None:
            return None
        vals = [r.explanation.accounted_epsilon for r in summ.results if r.explanation.accounted_epsilon is not None]
        return (min(vals), max(vals)) if vals else None

    @property
    def summary_verdict(self) -> str:
        """The verdict of the lead reading (with the audit's where it fails too), in words that keep
        apart a claim holding for the repaired algorithm ("holds (repaired)") and one holding trivially
        (eps = 0 at the claimed delta: "holds trivially")."""
        ex, a = self.lead.explanation, self.audit["verdict"]
        if ex.holds is False:
            return "FAILS (accountant+audit)" if a == "fails" else "FAILS (accountant)"
        if a == "fails":
            return "FAILS (audit)"
        if ex.holds is None:
            return ex.verdict
        word = "holds trivially" if ex.trivial else "holds"
        return word + (" (repaired)" if self.setting.repairs else "")

    @property
    def fails(self) -> bool:
        return self.summary_verdict.startswith("FAILS")

    @property
    def robust_families(self) -> tuple[tuple[str, float], ...]:
        """(family, least eps alone over the readings) for every family whose releases alone exceed the
        claim in every reading (the declared log alone when there are no readings), largest first."""
        eps = self.setting.epsilon
        summ = self.report.readings
        exs = [r.explanation for r in summ.results] if summ is not None else [self.report.explanation]
        least: dict[str, float] = {}
        for ex in exs:                      # readings override groups, never add or drop one: same families
            for f in ex.breakdown.families:
                e = -math.inf if f.epsilon_alone is None else f.epsilon_alone
                least[f.name] = min(least.get(f.name, math.inf), e)
        out = [(n, e) for n, e in least.items() if math.isfinite(e) and not within(e, eps)]
        return tuple(sorted(out, key=lambda x: -x[1]))

    @property
    def summary_cause(self) -> str:
        """One line: for a failing lead reading, :func:`privacct.explain.headline`; for an audit that fails
        alone, its bound; for a claim that holds, how much room the printed noise leaves."""
        ex = self.lead.explanation
        if ex.holds is False:
            return headline(ex)
        a = self.audit
        if a["verdict"] == "fails":
            return f"the audit measures eps >= {a['epsilon_lower_bound']:.3g} > {self.setting.epsilon:g}"
        if ex.trivial:
            at = next(((d, e) for d, e in ex.trivial_at if e is not None), None)
            tail = "" if at is None else f"; {at[1]:.3g} at delta {at[0]:g}"
            return f"eps 0 only because delta {ex.delta:g} covers it{tail}"
        if ex.over_noising_factor is not None:
            return f"printed noise {ex.over_noising_factor:.3g} x the least the claim needs"
        return ""

    def to_dict(self) -> dict[str, Any]:
        rep = self.report
        s = self.setting
        lead = self.lead
        rng = self.readings_range
        return {
            "algorithm": self.algorithm, "paper": self.paper, "family": self.family, "privacy": s.privacy,
            "title": self.title, "claimed_epsilon": s.epsilon, "delta": s.delta,
            "claim_printed": s.claim_printed, "episodes": s.episodes, "env": self.env, "horizon": self.horizon,
            "setting": s.to_dict(),
            "accounted_epsilon": rep.tightest_epsilon, "accountant": rep.tightest, "accounted": rep.epsilons,
            "verdict": self.verdict, "verdict_notes": list(self.verdict_notes), "holds": rep.holds,
            "causes": rep.causes, "over_noising_factor": rep.over_noising_factor,
            "privacy_report": rep.to_dict(),
            "seed": self.seed, "lead_reading": lead.reading, "lead_declared": lead.declared,
            "lead_accounted_epsilon": lead.explanation.accounted_epsilon, "lead_accountant": lead.explanation.tightest,
            "accounted_epsilon_range": None if rng is None else list(rng),
            "summary_verdict": self.summary_verdict, "summary_cause": self.summary_cause,
            "robust_families": [{"family": n, "least_epsilon_alone": e} for n, e in self.robust_families],
            "tight_accounted_epsilon": self.tight_accounted_epsilon,
            "noise_ratio_tight_over_printed": dict(self.noise_ratio), "tight_counter": self.tight_counter,
            "paper_counter": self.paper_counter, "tight_choice": self.tight_choice,
            "audit": self.audit, "regret": self.regret.to_dict(),
            "commands": dict(self.commands), "assumptions": list(self.assumptions), "seconds": self.seconds,
        }


def _tight_choice(tight_log) -> str | None:
    """The line of the tight log's ``tight_choice`` record (what it chose and why), None when the learner records none."""
    from privacct.counters.choice import TightChoice

    d = tight_log.params.get("tight_choice")
    return None if d is None else TightChoice.from_params(d).line()


def _noise_ratios(paper_log, tight_log) -> tuple[tuple[str, float], ...]:
    tight = {g.name: g.noise_scale for g in tight_log.release_groups}
    return tuple((g.name, tight[g.name] / g.noise_scale) for g in paper_log.release_groups if g.name in tight)


def _command(cfg, *, what: str, episodes: int = 0, seeds: int = 0, trials: int = 0, audit=None) -> str:
    """The command line (run) or Python call (audit) that reproduces one part of a row (the same config)."""
    if what == "audit":
        a = audit
        from privacct.algorithms.registry import get_learner

        if a.bonus_scale == get_learner(a.algorithm).audit_configuration().bonus_scale:   # the CLI can express it
            flags = (f"--episodes {a.episodes}" + ("" if a.horizon is None else f" --horizon {a.horizon}")
                     + ("" if a.env is None else f" --env {a.env}")
                     + "".join(f" --option {k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in a.options))
            return (f"privacct audit {a.algorithm} --privacy {a.privacy} --epsilon {a.epsilon:g} --delta {a.delta:g} "
                    f"--calibration {a.calibration} {flags} --trials {trials} --observe released --json")
        return (f"python -c \"from privacct.audits.suite import audit_setting; print(audit_setting({a.algorithm!r}, "
                f"{a.privacy!r}, calibration='paper', epsilon={a.epsilon!r}, delta={a.delta!r}).run(trials={trials}).summary())\"")
    base = f"--privacy {cfg.privacy} --epsilon {cfg.epsilon:g} --delta {cfg.delta:g} --calibration paper --episodes {episodes}"
    if cfg.env:
        base += f" --env {cfg.env}"
    if cfg.horizon:
        base += f" --horizon {cfg.horizon}"
    base += f" --bonus-scale {cfg.bonus_scale:g}" + "".join(f" --option {k}={v}" for k, v in cfg.options)
    return f"privacct run {cfg.algorithm} {base} --seeds {seeds} --out runs/{cfg.algorithm}-{cfg.privacy} --json"


def _audit(cfg, scale: ReportScale, seed: int, say: Callable[[str], None]) -> tuple[dict[str, Any], Any, int]:
    from ..suite import audit_setting, suggest_trials

    audit_cfg = audit_setting(cfg)   # the row's claim (printed constants: calibration paper) at its audit configuration
    trials = suggest_trials(audit_cfg, low=scale.audit_trials, high=scale.max_audit_trials)
    say(f"audit at its audit configuration (K={audit_cfg.episodes}, H={audit_cfg.horizon}), {trials} trials per side, "
        "other users fixed, every release of user 1 observed")
    from privacct.algorithms.scaleout import audit_executor   # inline, or on the --scheduler cluster: same result

    res = audit_cfg.run(trials=trials, seed=seed, **audit_executor())   # raises if eps_lb > accounted (same config)
    from privacct.algorithms.registry import get_learner

    # what an option of the audit configuration changes in the paper's algorithm, and why (AuditSetting.departures)
    departures = get_learner(cfg.algorithm).audit_configuration().departures
    # the counter the audited run ran and the audit observed: the one the unaudited run of the same config runs
    counter = counter_of(get_learner(cfg.algorithm).declared_log(audit_cfg.config))
    d = {"departures": departures, "counter": counter,"epsilon_lower_bound": float(res.epsilon_lower_bound), "accounted_epsilon": float(res.accounted_epsilon),
         "accountant": res.accountant, "verdict": res.verdict, "episodes": audit_cfg.episodes, "horizon": audit_cfg.horizon,
         "env": audit_cfg.env, "bonus_scale": audit_cfg.bonus_scale, "options": [list(o) for o in audit_cfg.options],
         "trials": trials, "observe": audit_cfg.observe, "fixed_users": audit_cfg.fixed_users,
         "sandwich_ok": res.sandwich_ok, "test": str(res.test),
         "oracle_epsilon": None if res.oracle is None else res.oracle.epsilon, "has_power": res.power.has_power,
         "power": res.power.to_dict(), "tests": res.tests,
         "billboard": _billboard(audit_cfg, scale, seed, say), "one_run": _one_run(cfg, scale, seed, say),
         "one_run_actions": _one_run_actions(cfg, scale, seed, say)}
    return d, audit_cfg, trials


def _billboard(audit_cfg, scale: ReportScale, seed: int, say: Callable[[str], None]) -> dict[str, Any] | None:
    """The billboard check of a JDP row at its audit configuration (None under LDP or with no trials)."""
    if audit_cfg.privacy != "jdp" or scale.billboard_trials <= 0 or audit_cfg.episodes < 2:
        return None
    from ..billboard import billboard_check

    say(f"billboard check at the audit configuration, {scale.billboard_trials} coupled trials")
    r = billboard_check(audit_cfg.config, trials=scale.billboard_trials, seed=seed)
    d = r.to_dict()
    return {k: d[k] for k in ("verdict", "trials", "differing", "p_upper", "confidence", "tests", "uncoupled",
                              "diverged", "trials_needed")} | {"shifted": len(r.shifted)}


def _one_run(cfg, scale: ReportScale, seed: int, say: Callable[[str], None]) -> dict[str, Any] | None:
    """A one-run audit of the row's printed constants at the paper setting (``--full`` only: None otherwise, or when
    the learner does not play one-run plans)."""
    if scale.one_run_canaries <= 0:
        return None
    from ..one_run_learner import one_run_audit_learner

    canaries = min(scale.one_run_canaries, cfg.episodes - 1)
    say(f"one-run audit at the paper setting (K={cfg.episodes}), {canaries} canaries")
    try:
        r = one_run_audit_learner(cfg, canaries=canaries, seed=seed)   # the row's record, printed constants
    except PrivacctError as e:   # a learner that does not play one-run plans says so; the row says it too
        return {"verdict": "not run", "reason": str(e)}
    d = r.to_dict()
    return {k: d.get(k) for k in ("verdict", "canaries", "guesses", "correct", "epsilon_lower_bound", "accounted_epsilon",
                                  "sandwich_ok", "seconds")}


def _one_run_actions(cfg, scale: ReportScale, seed: int, say: Callable[[str], None]) -> dict[str, Any] | None:
    """The one-run ACTION audit of a JDP row's printed constants at the paper setting (``--full`` only; None otherwise
    or under LDP): the run's releases and the actions sent to the users who are not canaries, each canary replayed
    with her bit flipped (docs/auditing.md#one-run-action-audits). It tests JDP itself, not the DP of the statistics;
    it can fail, never pass."""
    if scale.one_run_canaries <= 0 or cfg.privacy != "jdp" or cfg.episodes < 2:
        return None
    from ..one_run_actions import TESTS, one_run_action_audit

    canaries = min(scale.one_run_canaries, cfg.episodes - 1)
    say(f"one-run action audit at the paper setting (K={cfg.episodes}), {canaries} canaries")
    where = {"episodes": cfg.episodes, "horizon": cfg.horizon, "env": cfg.env, "bonus_scale": cfg.bonus_scale,
             "options": [list(o) for o in cfg.options], "calibration": "paper", "canaries": canaries, "tests": TESTS}
    try:
        r = one_run_action_audit(replace(cfg, calibration="paper"), canaries=canaries, seed=seed)
    except PrivacctError as e:   # a learner that does not play one-run plans, or whose releases cannot be pinned
        return where | {"verdict": "not run", "reason": str(e)}
    d = r.to_dict()
    return where | {k: d.get(k) for k in ("verdict", "canaries", "guesses", "correct", "epsilon_lower_bound",
                                          "claimed_epsilon", "accounted_epsilon", "sandwich_ok", "cut", "errors",
                                          "seconds", "tests")}


def build_row(spec, setting, scale: ReportScale, *, seed: int, out_dir: Path, runs: RegretRuns,
              say: Callable[[str], None], shown_dir: Path | None = None) -> ReportRow:
    """One row of the report (module docstring); writes the row's logs under ``out_dir / "logs"``.
    ``shown_dir``: where the reader finds the files (default ``out_dir``; the command writes into a
    staging directory that is renamed into ``--out``)."""
    t0 = time.perf_counter()
    cfg = setting.run_config(spec.name)   # the setting's own record (printed constants), passed whole
    tag = f"{cfg.algorithm}-{cfg.privacy}-eps{cfg.epsilon:g}"
    say("accounting the printed constants and every reading")
    paper_log = spec.declared_log(cfg)
    tight_log = spec.declared_log(replace(cfg, calibration="tight"))
    if paper_log is None or tight_log is None:
        raise PrivacctError(f"learner {cfg.algorithm!r} returned no mechanism log for privacy={cfg.privacy!r}")
    logs_dir = out_dir / "logs"
    logs_dir.mkdir(parents=True, exist_ok=True)
    paper_log.save(logs_dir / f"{tag}-paper.json")
    tight_log.save(logs_dir / f"{tag}-tight.json")
    rep = privacy_report(paper_log)
    tight_epsilon = verdict(tight_log).accounted_epsilon   # the figure alone: no breakdown, no calibration

    k_run = scale.regret_episodes(spec, cfg.episodes)
    say(f"regret at K={k_run}, {scale.seeds} seeds: printed and tight noise, non-private, uniform")
    column, curves = runs.column(spec, cfg, setting, k_run)
    audit, audit_cfg, trials = _audit(cfg, scale, seed, say)
    return ReportRow(
        algorithm=spec.name, paper=spec.paper, family=spec.family, setting=setting, env=cfg.env or spec.default_env,
        horizon=paper_log.params.get("H"), report=rep, tight_accounted_epsilon=tight_epsilon,
        noise_ratio=_noise_ratios(paper_log, tight_log), tight_counter=tight_log.params.get("counter"),
        paper_counter=counter_of(paper_log), tight_choice=_tight_choice(tight_log),
        audit=audit, regret=column,
        commands=(("verify", f"privacct verify {(Path(shown_dir or out_dir) / 'logs' / (tag + '-paper.json')).as_posix()}"),
                  ("run", _command(cfg, what="run", episodes=k_run, seeds=scale.seeds)),
                  ("audit", _command(cfg, what="audit", trials=trials, audit=audit_cfg))),
        assumptions=tuple(f"{g.name}: sensitivity {g.sensitivity.value:g} ({g.sensitivity.norm}) - {g.sensitivity.derivation}"
                          for g in paper_log.release_groups),
        seconds=time.perf_counter() - t0, curves=curves)


__all__ = ["Lead", "ReportRow", "ReportScale", "build_row", "counter_of", "paper_configs"]
