"""Learner audit configurations: one per private learner and privacy model.

The AUDIT CONFIGURATION of a learner is the small setting where its audit has the most power per
second: small K, H (and environment) so that a batched run is cheap and one user's releases carry as
much of the accounted loss as the paper's relation lets a canary pair carry. Every choice is a
non-privacy knob (environment, K, H, bonus scale, update rate) and is recorded in the configuration;
the log is accounted AT that configuration, and that accounted eps is the upper end of the sandwich
the audit's lower bound is compared with.

Each learner declares its own, with the trials per side that fit a 2-minute budget on the project
machine (benchmarks/bench_learner_audits.py) and why it was chosen, on its spec:
:attr:`privacct.algorithms.contract.LearnerSpec.audit_setting` (an :class:`~privacct.algorithms.contract.AuditSetting`;
the shipped families' are in their own packages, e.g. ``privacct.algorithms.tabular.AUDIT``). A learner
that declares none is audited at its ``test_settings`` with the default trials
(:meth:`~privacct.algorithms.contract.LearnerSpec.audit_configuration`); nothing here names a learner
except the shipped papers' findings below.

:func:`suite` lists them for the registry; :func:`paper_failures` gives the printed-constant
settings that the audit alone certifies as failing (seed 002 JDP and LDP, seed 004);
:func:`planted_noise_bugs` the learner-level planted bugs (noise at 1/4 of the declared scale, one per
family); :func:`check_learner` runs the three checks of :mod:`privacct.audits.mutants` on a learner.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from privacct.algorithms.contract import ConfigFields, RunConfig
from privacct.errors import PrivacctError

from .checks import LEARNER_CHECKS, describe_config, run_checks
from .learner_audit import LearnerAuditResult, audit_learner, check_audit_config

#: The learner-level planted bug: every privacy draw at this multiple of the declared scale.
PLANTED_NOISE_MULTIPLIER = 0.25


@dataclass(frozen=True)
class OneRunSetting:
    """Where a one-run ACTION audit of a JDP learner runs in :func:`check_learner`
    (:func:`privacct.audits.one_run_actions.one_run_action_audit`): ``config`` (a RunConfig, passed whole),
    ``canaries`` M >= 1 (at most K - 1), ``why`` this configuration (a departure from the paper's setting says so) and
    ``confidence`` in (0, 1) of its bound. 0.95, not the 0.99 of the many-trial audits of :mod:`privacct.audits.mutants`
    (whose tight controls would be flagged in up to 5% of seeds at 0.95): every guess of a one-run action audit is
    right by construction and a faithful learner gets none (docs/auditing.md#what-one-run-sees-of-the-policy-leaks),
    and every one-run figure in benchmarks/learner_audits.md is at 0.95."""

    config: RunConfig
    canaries: int = 64
    why: str = ""
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if not isinstance(self.config, RunConfig):
            raise PrivacctError(f"OneRunSetting.config must be a RunConfig, got {type(self.config).__name__}")
        if not 1 <= self.canaries <= self.config.episodes - 1:
            raise PrivacctError(f"OneRunSetting.canaries must be in [1, K - 1 = {self.config.episodes - 1}], "
                                f"got {self.canaries!r}")
        if not 0.0 < self.confidence < 1.0:
            raise PrivacctError(f"OneRunSetting.confidence must be in (0, 1), got {self.confidence!r}")


@dataclass(frozen=True)
class LearnerAudit(ConfigFields):
    """One ready-made learner audit: ``config``, the RunConfig audited (its fields read as the audit's own,
    ``audit.episodes``), and the audit's own arguments of :func:`privacct.audits.learner_audit.audit_learner`."""

    config: RunConfig
    observe: str = "released"
    fixed_users: bool = True
    noise_multiplier: float = 1.0
    trials: int = 20_000
    #: a planted policy bug the learner implements (LearnerSpec.mutants; AuditHook.mutant), or None
    mutant: str | None = None
    #: where :func:`check_learner`'s billboard check runs (None: ``config``)
    billboard_config: RunConfig | None = None
    #: where :func:`check_learner`'s one-run action audit runs (None: ``config`` with at most 64 canaries)
    one_run: "OneRunSetting | None" = None

    def __post_init__(self) -> None:
        if not isinstance(self.config, RunConfig):
            raise PrivacctError(f"LearnerAudit.config must be a RunConfig, got {type(self.config).__name__}")
        if self.billboard_config is not None and not isinstance(self.billboard_config, RunConfig):
            raise PrivacctError(f"LearnerAudit.billboard_config must be a RunConfig or None, got "
                                f"{type(self.billboard_config).__name__}")
        if self.one_run is not None and not isinstance(self.one_run, OneRunSetting):
            raise PrivacctError(f"LearnerAudit.one_run must be a OneRunSetting or None, got {type(self.one_run).__name__}")

    @property
    def name(self) -> str:
        bug = ("" if self.noise_multiplier == 1 else f"-noise-x{self.noise_multiplier:g}") + \
              ("" if self.mutant is None else f"-{self.mutant}")
        return f"{self.algorithm}-{self.privacy}-{self.calibration}-eps{self.epsilon:g}{bug}"

    def with_config(self, **changes) -> "LearnerAudit":
        """This audit at ``config`` with ``changes`` (RunConfig fields, :func:`dataclasses.replace`)."""
        return replace(self, config=replace(self.config, **changes))

    def run(self, *, trials: int | None = None, seed: int = 0, **kwargs) -> LearnerAuditResult:
        kw = dict(observe=self.observe, fixed_users=self.fixed_users, noise_multiplier=self.noise_multiplier,
                  mutant=self.mutant, trials=trials or self.trials, seed=seed, name=self.name)
        if self.noise_multiplier != 1 or self.mutant is not None:
            kw["on_violation"] = "report"  # a planted bug is expected to leak more than its log declares
        kw.update(kwargs)
        return audit_learner(self.config, **kw)


def paper_delta(spec, privacy: str) -> float:
    """The delta of the learner's paper setting for ``privacy`` (0 for pure-Laplace logs without one)."""
    from privacct.algorithms.settings import paper_delta as setting_delta

    d = setting_delta(spec, privacy)
    return 0.0 if d is None else d


def audit_setting(algorithm: str | RunConfig, privacy: str | None = None, *, calibration: str = "tight",
                  epsilon: float = 1.0, delta: float | None = None) -> LearnerAudit:
    """The audit configuration of ``algorithm`` under ``privacy`` (its spec's ``audit_configuration()``), claim
    (epsilon, delta); delta defaults to the learner's paper setting. Given a RunConfig instead, the audit configuration
    of its claim (its privacy, epsilon, delta and calibration; :meth:`~privacct.algorithms.contract.AuditSetting.apply`)."""
    from privacct.algorithms.registry import get_learner

    if isinstance(algorithm, RunConfig):
        if privacy is not None:
            raise PrivacctError("audit_setting: a RunConfig carries its privacy model (no privacy argument beside it)")
        config = algorithm
        spec = get_learner(config.algorithm)
        s = spec.audit_configuration()
        return LearnerAudit(s.apply(check_audit_config(config)), trials=s.trials)
    spec = get_learner(algorithm)
    if privacy not in spec.privacy_models or privacy == "none":
        raise PrivacctError(f"privacy must be one of {', '.join(p for p in spec.privacy_models if p != 'none')} "
                            f"for {algorithm!r}, got {privacy!r}")
    s = spec.audit_configuration()
    return LearnerAudit(s.run_config(algorithm, privacy=privacy, epsilon=epsilon, calibration=calibration,
                                     delta=paper_delta(spec, privacy) if delta is None else delta), trials=s.trials)


def suite(*, calibration: str = "tight") -> list[LearnerAudit]:
    """Every private learner x privacy model in the registry, at its audit configuration, claim eps = 1."""
    from privacct.algorithms.registry import learners

    return [audit_setting(name, p, calibration=calibration)
            for name, spec in sorted(learners().items()) for p in spec.privacy_models if p != "none"]


def paper_failures() -> list[LearnerAudit]:
    """The printed constants whose claim of eps = 1 the audit alone certifies as failing, with valid
    neighbours (trials per side: a median run certifies > 1; the oracle figures are in benchmarks):
    seed 002 UCB-VI JDP (accounted 6 / (3 ln 4) = 1.44 at K = 4, H = 1; 10^5 trials certify ~1.22)
    and LDP (accounted 2; 2 x 10^4 trials certify ~1.6), seed 004 Private LSVI-UCB (accounted ~5.4 at
    K = 5, H = 2; 2 x 10^4 trials)."""
    return [replace(audit_setting("ucb-vi", "jdp", calibration="paper"), trials=100_000),
            replace(audit_setting("ucb-vi", "ldp", calibration="paper"), trials=20_000),
            replace(audit_setting("private-lsvi-ucb", "jdp", calibration="paper"), trials=20_000)]


def planted_noise_bugs() -> list[LearnerAudit]:
    """One learner-level planted bug per family (privacy noise at 1/4 of the declared scale; the log
    and the ledger still see the declared scale), with trials per side that catch it by the audit alone."""
    return [replace(audit_setting("ucb-vi", "jdp"), noise_multiplier=PLANTED_NOISE_MULTIPLIER, trials=5_000),
            replace(audit_setting("pp-ucrl-vtr", "jdp"), noise_multiplier=PLANTED_NOISE_MULTIPLIER, trials=5_000),
            replace(audit_setting("ldp-ucrl-vtr", "ldp"), noise_multiplier=PLANTED_NOISE_MULTIPLIER, trials=2_000),
            # 2 x 10^4: tight's own BLT (the counter the audited run runs) puts most of the budget on the y releases,
            # so the bug's observed mu is 4 x 0.145 (the tree's 4 x 0.207 was caught at 5 x 10^3; 10^4 certify 0.98)
            replace(audit_setting("private-lsvi-ucb", "jdp"), noise_multiplier=PLANTED_NOISE_MULTIPLIER, trials=20_000)]


def policy_leaks() -> list[LearnerAudit]:
    """The planted policy bugs only an audit of the ACTIONS can catch (issue 20; docs/auditing.md#planted-bugs):
    the log, the ledger and the released statistics are those of the faithful learner. Each carries the
    configuration of every check that meets it (:func:`check_learner`; the mutants table prints them):

    ``bonus-on-exact-counts`` (ucb-vi JDP): the bonus's sqrt(1 / N) term reads the exact visit counts. Accountant,
    ledger, released-statistics audit (``observe`` released), black-box action audit and billboard check at K = 4,
    H = 2 with two non-privacy tunables set so that the bonus decides the policy (bonus_scale 10^6, e_scale 10^-9:
    the E-term allowance then no longer hides one user's count); the black-box action audit certifies about 7 at
    2 x 10^4 trials, the faithful learner 0 (benchmarks/learner_audits.md). The one-run action audit at K = 1025,
    H = 2 with the same tunables, 64 canaries (every canary guessed, 3.04 > 1): a DEPARTURE from the paper's
    constants, which it needs because with the printed E terms no canary's flip moves an action at the paper's K
    (docs/auditing.md#what-one-run-sees-of-the-policy-leaks; with e_scale 10^-9 at the paper's K = 2 x 10^4, H = 20 it
    certifies 3.09 > 1 in about a minute, benchmarks/learner_audits.md#one-run-action-audits)."""
    base = replace(audit_setting("ucb-vi", "jdp").with_config(episodes=4, horizon=2, bonus_scale=1e6,
                                                              options=(("e_scale", 1e-9),)),
                   observe="released", trials=20_000)
    ucb_one_run = OneRunSetting(replace(base.config, episodes=1025), canaries=64,
                                why="departure: e_scale 1e-9 so the bonus, not the E-term allowance, decides the policy")
    # switch-on-exact-gram (private-lsvi-ucb JDP): the switching test reads the exact Gram matrices. Accountant, ledger,
    # released-statistics audit and billboard check where the switching test fires within K (eps 50: shift lam~ 254,
    # one update near k = 500); at the audit setting (C = 1 + 1e-6) it fires at every episode whatever it reads, so
    # nothing could leak there. The one-run action audit needs many updates, each near its threshold, and a claim
    # that a few dozen right guesses exceed: lsvi_one_run().
    lsvi = replace(audit_setting("private-lsvi-ucb", "jdp").with_config(epsilon=50.0, episodes=1000,
                                                                        options=(("beta", 5.0),)),
                   observe="released", trials=400)
    return [replace(base, mutant="bonus-on-exact-counts", one_run=ucb_one_run),
            replace(lsvi, mutant="switch-on-exact-gram", one_run=lsvi_one_run())]


def lsvi_one_run() -> OneRunSetting:
    """Where the one-run action audit meets ``switch-on-exact-gram`` (:func:`policy_leaks`; measured, with the
    configurations tried that gave no guess, in benchmarks/learner_audits.md, section on privacct mutants; found by a
    scan, a knife edge: C = 1.00045 or 1.00055 gives none): private-lsvi-ucb JDP tight, claim (2, 10^-5), K = 1025,
    H = 2, beta 5, update rate C = 1.0005 with update_cap K - 1 (a policy update every few episodes, each near its
    threshold, so one canary's features move when the next one happens) and p = 0.5 (the failure probability in the
    shift lam~: a smaller shift, so one user's features weigh more in the log-determinant), 256 canaries. A
    DEPARTURE from the paper's setting: at (5, 10^-5), K = 10^4 the policy is updated about twice per run and a
    predictable audit gets at most one guess per update, while a claim of 5 needs 447 right guesses (at 95%). The
    counter is named, the paper's tree, the one this configuration was found with (tight's own choice here is BLT,
    which a one-run action audit now pins through its noise path: docs/auditing.md#pinning-a-toeplitz-noise-path)."""
    from .learner_audit import learner_config

    cfg = learner_config("private-lsvi-ucb", privacy="jdp", epsilon=2.0, delta=1e-5, calibration="tight",
                         episodes=1025, horizon=2, options=(("beta", 5.0), ("C", 1.0005), ("update_cap", 1024),
                                                            ("p", 0.5), ("counter", "tree")))
    return OneRunSetting(cfg, canaries=256, why="departure: C 1.0005 and update_cap 1024 (many policy updates), p 0.5 "
                                                "(a smaller shift), claim 2; counter tree named (the paper's; the "
                                                "configuration was found with the tree)")


def suggest_trials(audit: LearnerAudit, *, low: int, high: int, confidence: float = 0.95) -> int:
    """Trials per side for ``audit``: 4 x the certifying trials at which the exact privacy-loss distribution
    of its observation certifies more than the claim in a median run (2 halves x a factor 2 of margin),
    clipped to [low, high]; ``low`` when no number of trials would (the claim holds at this configuration)."""
    from .learner_audit import LearnerMechanism, loss_structure
    from .oracle import trials_for

    mech = LearnerMechanism(audit.config, audit.observe, audit.fixed_users, 0, audit.noise_multiplier)
    need = trials_for(loss_structure(mech.layout(), mech.pilot()), audit.epsilon, (1 - confidence) / 2, audit.delta,
                      hi=high)
    return low if need is None else int(min(high, max(low, 4 * need)))


def check_learner(audit: LearnerAudit, *, trials: int | None = None, seed: int = 0,
                  checks: tuple[str, ...] = ("accountant", "ledger", "audit", "billboard"), **audit_kwargs):
    """The checks of :mod:`privacct.audits.mutants` on a real learner configuration.

    accountant: tightest eps of ``spec.build_log(config)`` vs the claim; ledger: one seed run (with the
    same audit hook, so a planted noise bug runs too) and :func:`privacct.ledger.check_ledger` plus the
    draw-shape check; audit: :meth:`LearnerAudit.run` (what it observes is ``audit.observe``); ``action audit``: the
    same audit observing the actions to users 2..K (black-box; JDP only); billboard (JDP only):
    :func:`privacct.audits.billboard.billboard_check` at ``audit.billboard_config`` (default the same configuration)
    with :data:`BILLBOARD_TRIALS` coupled trials, named ``billboard check`` in ``caught_by``; ``one-run audit`` (JDP
    only): :func:`privacct.audits.one_run_actions.one_run_action_audit` at ``audit.one_run`` (default the same
    configuration, at most 64 canaries, confidence 0.95). Each is caught on a
    ``fails`` verdict only; ``checks`` selects which run (a planted learner bug is tested with the audit alone). Every
    check that ran records the configuration it ran at (:attr:`privacct.audits.checks.MutantReport.configurations`).
    Returns a :class:`privacct.audits.mutants.MutantReport`.
    """
    import numpy as np

    from privacct.algorithms.contract import AuditHook
    from privacct.algorithms.registry import get_learner

    unknown = [c for c in checks if c not in ALL_LEARNER_CHECKS]
    if unknown:
        raise PrivacctError(f"checks must be among {', '.join(ALL_LEARNER_CHECKS)}, got {unknown[0]!r}")
    spec = get_learner(audit.algorithm)
    cfg = audit.config
    n = trials or audit.trials

    def one_seed_ledger():
        hook = AuditHook("A", noise_multiplier=audit.noise_multiplier, mutant=audit.mutant)
        return spec.run(cfg, np.random.SeedSequence(seed).spawn(1), audit=hook).ledger

    description = (f"{audit.algorithm} {audit.privacy} {audit.calibration} K={audit.episodes}"
                   + ("" if audit.noise_multiplier == 1 else f", privacy noise x{audit.noise_multiplier:g} "
                      "(planted; the log and the ledger see the declared scale)")
                   + ("" if audit.mutant is None else f", planted policy bug {audit.mutant}"))
    planted = {} if audit.noise_multiplier == 1 else {"noise_multiplier": audit.noise_multiplier}
    rep = run_checks(audit.name, description, spec.declared_log(cfg), epsilon=audit.epsilon, delta=audit.delta,
                     checks=checks, ledger=one_seed_ledger,
                     audit=lambda: audit.run(trials=trials, seed=seed, **audit_kwargs),
                     configuration=describe_config(cfg, **planted),
                     audit_configuration=describe_config(cfg, observe=audit.observe, trials=n, **planted))
    jdp = audit.privacy == "jdp"
    if "action audit" in checks:
        if not jdp:
            rep.add("action audit", verdict="not run", note="under LDP the reports are the output (no actions audit)",
                    configuration=describe_config(cfg))
        else:
            # a check catches on "fails" only, which needs no power: the leakier version is not simulated (4 x the runs)
            r = audit.run(trials=trials, seed=seed, **dict(audit_kwargs, observe="actions", simulate_power=False))
            rep.add("action audit", verdict=r.verdict, note=r.summary(),
                    configuration=describe_config(cfg, observe="actions", trials=n, **planted))
    if "billboard" in checks:
        bb_cfg = audit.billboard_config or cfg
        conf = describe_config(bb_cfg, coupled_trials=BILLBOARD_TRIALS)
        if not jdp or audit.noise_multiplier != 1 or bb_cfg.episodes < 2:
            if not jdp or audit.noise_multiplier != 1:
                why = ("under LDP the releases are the output" if not jdp else
                       "a planted noise bug leaves the billboard step intact (the check couples the releases)")
                rep.add("billboard", verdict="not run", note=why, configuration=conf)
        else:
            from .billboard import billboard_check

            bb = billboard_check(bb_cfg, trials=BILLBOARD_TRIALS, seed=seed, mutant=audit.mutant)
            rep.add("billboard", verdict=bb.verdict, note=bb.summary(), configuration=conf)
    if "one-run audit" in checks:
        rep.add("one-run audit", **_one_run_check(audit, seed=seed))
    return rep


def _one_run_check(audit: LearnerAudit, *, seed: int) -> dict[str, str]:
    """The one-run action audit of :func:`check_learner` at ``audit.one_run`` (its confidence, :class:`OneRunSetting`):
    its verdict, summary and configuration (``not run`` where it cannot run: LDP, a planted noise bug, K < 2, a
    learner that plays no canary plans)."""
    s = audit.one_run
    cfg = audit.config if s is None else s.config
    canaries = min(64, cfg.episodes - 1) if s is None else s.canaries
    confidence = 0.95 if s is None else s.confidence
    conf = describe_config(cfg, canaries=canaries, confidence=confidence) + ("" if s is None or not s.why
                                                                             else f" ({s.why})")
    if audit.privacy != "jdp":
        return {"verdict": "not run", "note": "under LDP the reports are the output (no action audit)",
                "configuration": conf}
    if audit.noise_multiplier != 1 or canaries < 1:
        return {"verdict": "not run", "configuration": conf,
                "note": "a planted noise bug (the one-run action audit pins the releases)" if audit.noise_multiplier != 1
                else "K < 2: no user after a canary"}
    from .one_run_actions import one_run_action_audit

    try:
        r = one_run_action_audit(cfg, canaries=canaries, seed=seed, confidence=confidence, mutant=audit.mutant)
    except PrivacctError as e:   # a learner that plays no canary plans says so; an audit that did not run catches nothing
        return {"verdict": "not run", "note": f"refused: {e}", "configuration": conf}
    return {"verdict": r.verdict, "note": r.summary(), "configuration": conf}


#: Every check name :func:`check_learner` knows (the order in which they run)
ALL_LEARNER_CHECKS = LEARNER_CHECKS


#: Coupled trials of the billboard check in :func:`check_learner` (P[a leak changing an action in 9% of runs unseen] <= 5%)
BILLBOARD_TRIALS = 32


def paper_constants() -> list[LearnerAudit]:
    """The tabular learners with the papers' printed noise constants (``paper`` calibration) at their
    audit configurations (kept for ``privacct mutants --learners``)."""
    return [a for a in suite(calibration="paper") if a.algorithm in ("ucb-vi", "ucb-po")]


__all__ = ["ALL_LEARNER_CHECKS", "LearnerAudit", "OneRunSetting", "PLANTED_NOISE_MULTIPLIER", "audit_setting", "check_learner",
           "paper_constants", "paper_delta", "paper_failures", "planted_noise_bugs", "policy_leaks", "lsvi_one_run", "suggest_trials", "suite"]
