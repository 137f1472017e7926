"""Learner audit configurations: one per private learner and privacy model.

The AUDIT CONFIGURATION of a learner is the small setting where its audit has the most power per
second: small K, H (and environment) so that a batched run is cheap and one user's releases carry as
much of the accounted loss as the paper's relation lets a canary pair carry. Every choice is a
non-privacy knob (environment, K, H, bonus scale, update rate) and is recorded in the configuration;
the log is accounted AT that configuration, and that accounted eps is the upper end of the sandwich
the audit's lower bound is compared with.

Each learner declares its own, with the trials per side that fit a 2-minute budget on the project
machine (benchmarks/bench_learner_audits.py) and why it was chosen, on its spec:
:attr:`privacct.algorithms.base.LearnerSpec.audit_setting` (an :class:`~privacct.algorithms.base.AuditSetting`;
the shipped families' are in their own packages, e.g. ``privacct.algorithms.tabular.AUDIT``). A learner
that declares none is audited at its ``test_settings`` with the default trials
(:meth:`~privacct.algorithms.base.LearnerSpec.audit_configuration`); nothing here names a learner
except the shipped papers' findings below.

:func:`suite` lists them for the registry; :func:`paper_failures` gives the printed-constant
settings that the audit alone certifies as failing (seed 002 JDP and LDP, seed 004);
:func:`planted_noise_bugs` the learner-level planted bugs (noise at 1/4 of the declared scale, one per
family); :func:`check_learner` runs the three checks of :mod:`privacct.audits.mutants` on a learner.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from privacct.algorithms.base import ConfigFields, RunConfig
from privacct.errors import PrivacctError

from .checks import run_checks
from .learner import LearnerAuditResult, audit_learner, check_audit_config

#: The learner-level planted bug: every privacy draw at this multiple of the declared scale.
PLANTED_NOISE_MULTIPLIER = 0.25


@dataclass(frozen=True)
class LearnerAudit(ConfigFields):
    """One ready-made learner audit: ``config``, the RunConfig audited (its fields read as the audit's own,
    ``audit.episodes``), and the audit's own arguments of :func:`privacct.audits.learner.audit_learner`."""

    config: RunConfig
    observe: str = "released"
    fixed_users: bool = True
    noise_multiplier: float = 1.0
    trials: int = 20_000
    #: a planted policy bug the learner implements (LearnerSpec.mutants; AuditHook.mutant), or None
    mutant: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.config, RunConfig):
            raise PrivacctError(f"LearnerAudit.config must be a RunConfig, got {type(self.config).__name__}")

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
    of its claim (its privacy, epsilon, delta and calibration; :meth:`~privacct.algorithms.base.AuditSetting.apply`)."""
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
            replace(audit_setting("private-lsvi-ucb", "jdp"), noise_multiplier=PLANTED_NOISE_MULTIPLIER, trials=5_000)]


def policy_leaks() -> list[LearnerAudit]:
    """The planted policy bugs only an audit of the ACTIONS can catch (issue 20; docs/auditing.md#planted-bugs):
    the log, the ledger and the released statistics are those of the faithful learner.

    ``bonus-on-exact-counts`` (ucb-vi JDP): the bonus's sqrt(1 / N) term reads the exact visit counts. Observed:
    the actions prescribed to users 2..K (black-box, one-hot), other users fixed, at K = 4, H = 2 with two
    non-privacy tunables set so that the bonus decides the policy (bonus_scale 10^6, e_scale 10^-9: the
    E-term allowance then no longer hides one user's count). The faithful learner at the same configuration
    certifies 0 (inconclusive); the planted one about 7 at 2 x 10^4 trials (benchmarks/learner_audits.md)."""
    base = replace(audit_setting("ucb-vi", "jdp").with_config(episodes=4, horizon=2, bonus_scale=1e6,
                                                              options=(("e_scale", 1e-9),)),
                   observe="actions", trials=20_000)
    # switch-on-exact-gram (private-lsvi-ucb JDP): the switching test reads the exact Gram matrices. Observed at a
    # configuration where the switching test fires within K (eps 50: shift lam~ 254, one update near k = 500); at the
    # audit setting (C = 1 + 1e-6) it fires at every episode whatever it reads, so nothing could leak there.
    lsvi = replace(audit_setting("private-lsvi-ucb", "jdp").with_config(epsilon=50.0, episodes=1000,
                                                                        options=(("beta", 5.0),)),
                   observe="actions", trials=400)
    return [replace(base, mutant="bonus-on-exact-counts"), replace(lsvi, mutant="switch-on-exact-gram")]


def suggest_trials(audit: LearnerAudit, *, low: int, high: int, confidence: float = 0.95) -> int:
    """Trials per side for ``audit``: 4 x the certifying trials at which the exact privacy-loss distribution
    of its observation certifies more than the claim in a median run (2 halves x a factor 2 of margin),
    clipped to [low, high]; ``low`` when no number of trials would (the claim holds at this configuration)."""
    from .learner import LearnerMechanism, loss_structure
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
    draw-shape check; audit: :meth:`LearnerAudit.run`; billboard (JDP only): :func:`privacct.audits.billboard.
    billboard_check` at the same configuration with :data:`BILLBOARD_TRIALS` coupled trials, caught on ``fails``
    and named ``billboard check`` in ``caught_by``. ``checks`` selects which run (a planted learner
    bug is tested with the audit alone). Returns a :class:`privacct.audits.mutants.MutantReport`.
    """
    import numpy as np

    from privacct.algorithms.base import AuditHook
    from privacct.algorithms.registry import get_learner

    spec = get_learner(audit.algorithm)
    cfg = audit.config

    def one_seed_ledger():
        hook = AuditHook("A", noise_multiplier=audit.noise_multiplier, mutant=audit.mutant)
        return spec.run(cfg, np.random.SeedSequence(seed).spawn(1), audit=hook).ledger

    description = (f"{audit.algorithm} {audit.privacy} {audit.calibration} K={audit.episodes}"
                   + ("" if audit.noise_multiplier == 1 else f", privacy noise x{audit.noise_multiplier:g} "
                      "(planted; the log and the ledger see the declared scale)")
                   + ("" if audit.mutant is None else f", planted policy bug {audit.mutant} (observed: {audit.observe})"))
    rep = run_checks(audit.name, description, spec.declared_log(cfg), epsilon=audit.epsilon, delta=audit.delta,
                     checks=checks, ledger=one_seed_ledger,
                     audit=lambda: audit.run(trials=trials, seed=seed, **audit_kwargs))
    if "billboard" in checks and audit.privacy == "jdp" and audit.episodes >= 2 and audit.noise_multiplier == 1:
        from .billboard import billboard_check

        bb = billboard_check(cfg, trials=BILLBOARD_TRIALS, seed=seed, mutant=audit.mutant)
        rep.notes["billboard"] = bb.summary()
        if bb.verdict == "fails":
            rep.caught_by.append("billboard check")
    return rep


#: Coupled trials of the billboard check in :func:`check_learner` (P[a leak changing an action in 9% of runs unseen] <= 5%)
BILLBOARD_TRIALS = 32


def paper_constants() -> list[LearnerAudit]:
    """The tabular learners with the papers' printed noise constants (``paper`` calibration) at their
    audit configurations (kept for ``privacct mutants --learners``)."""
    return [a for a in suite(calibration="paper") if a.algorithm in ("ucb-vi", "ucb-po")]


__all__ = ["LearnerAudit", "PLANTED_NOISE_MULTIPLIER", "audit_setting", "check_learner",
           "paper_constants", "paper_delta", "paper_failures", "planted_noise_bugs", "policy_leaks", "suggest_trials", "suite"]
