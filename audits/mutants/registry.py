"""The registry of planted bugs and the three checks that can catch them.

Each :class:`Mutant` wraps a small privatizer (:mod:`privacct.audits.mutants.planted_privatizers`) with one bug.
It *declares* a log (what it claims: ``privatizer.build_log()`` with ``claim``), *runs* with a
Ledger (what ran) and can be *audited* (what leaks). :func:`check_mutant` applies:

* ``accountant``: the tightest accountant's eps of the declared log
  (:func:`privacct.accounting.tightest_epsilon`) against the claim. The log records the
  toolkit's own derivation (sensitivity under the neighbouring relation, derived tree depth), so a
  noise scale computed from a printed slip accounts above the claim.
* ``ledger``: one run (a single trial) with a :class:`privacct.ledger.Ledger`, then
  :func:`privacct.ledger.check_ledger` (executed vs declared eps; a draw whose mechanism differs
  from the declared one is an error and counts as caught), plus a shape check: every draw must
  noise as many independent values as the group's declared ``dimension`` (d(d+1)/2 for a
  symmetric d x d matrix), so noise shared by several coordinates is caught.
* ``audit``: :func:`privacct.audits.audit_mechanism` on canary A vs canary B against the claim, at
  confidence 0.99 (see :func:`check_mutant`). Its power criterion is the one the privatizer declares
  from the exact privacy-loss distribution of what it runs (``power_criterion``; docs/auditing.md#verdicts-and-power):
  a correct control passes only with it; a structural bug (noise redrawn, shared, reused) declares none
  and its audit is ``fails`` or ``inconclusive``, never ``passes``.

A mutant is caught by a check when that check's eps exceeds the claimed eps (or the check
refuses what ran); for the audit, when its verdict is ``fails``. Every mutant must be caught by at least one check; the correct controls
(:data:`CONTROLS`) by none.

LEARNER-LEVEL mutants (:class:`LearnerMutant`): a registered learner run with its privacy noise at 1/4
of the declared scale (:attr:`privacct.algorithms.contract.AuditHook.noise_multiplier`; every draw is scaled
while the ledger records the declared scale), one per family
(:func:`privacct.audits.suite.planted_noise_bugs`). The declared log is the faithful learner's, so the
accountant cannot see the bug, nor can the ledger: only the learner audit (verdict ``fails``) catches it.

POLICY LEAKS (:func:`privacct.audits.suite.policy_leaks`: ``bonus-on-exact-counts``, ``switch-on-exact-gram``): a JDP
learner whose policy reads an un-noised statistic; its log, ledger and released statistics are the faithful
learner's. They meet :data:`privacct.audits.checks.LEARNER_CHECKS`: the three above (the audit observes the released
statistics), the black-box action audit, the billboard check and the one-run action audit (``one-run audit``), each
at the configuration the leak's :class:`privacct.audits.suite.LearnerAudit` gives it; the report records per check
its verdict and configuration (docs/auditing.md#planted-bugs).

NOISE PATH (:func:`counter_noise_path`, ``counter-noise-path-private-lsvi-ucb``): the learner-level ``counter-noise-path``
(issue 20): private-lsvi-ucb JDP tight, whose Gram counters run tight's own BLT with the recursion's Q coefficients
halved (``AuditHook.mutant``; the privatizer row's bug in a learner). It meets
:data:`privacct.audits.checks.COUNTER_PATH_CHECKS` at the paper's setting (K = 10^4, H = 5, claim (1, 10^-5)): the
accountant (blind: the log is the faithful one's), the ledger (the executed encoder) and the one-run released-statistics
audit (``one-run released audit``) with :data:`NOISE_PATH_CANARIES` canaries and its default scores for a Toeplitz
counter (docs/auditing.md#one-run-scores): the ``difference`` score (one difference of releases per canary: noisier
under the bug than declared, blind to it) and the ``window`` score (a canary's mean of releases over the spacing minus
the mean before: far quieter under the bug than declared), which catches it at the paper's K with 19 canaries
(spacing 512; 19 of 19 in seeds 0-2), with 100 at seed 0 (spacing 64) and not with 1000 (spacing 8)
(docs/auditing.md#planted-bugs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privacct.errors import PrivacctError
from privacct.ledger import Ledger, shape_problems

from ..checks import CHECKS, COUNTER_PATH_CHECKS, LEARNER_CHECKS, ONE_RUN_RELEASED, MutantReport, describe_config, run_checks
from ..mechanism_audit import audit_mechanism
from ..suite import check_learner, planted_noise_bugs, policy_leaks
from .planted_privatizers import (FactorizedCounterPrivatizer, GramPrivatizer, LocalReportPrivatizer, SwitchingPrivatizer,
                          TreeCounterPrivatizer)



@dataclass(frozen=True)
class Mutant:
    """A named, documented broken (or, for controls, correct) privatizer."""

    name: str
    description: str
    privatizer: Any
    trials: int = 100_000
    reference: str = ""

    @property
    def claim(self):
        return self.privatizer.claim


def _tree(bug):
    return TreeCounterPrivatizer(bug=bug)


_LIGHT_BLT = ((0.9, 0.2),)   # omega < theta: halving Q_1 = omega - theta makes R_exec heavier (counter-noise-path)


MUTANTS: dict[str, Mutant] = {m.name: m for m in [
    Mutant("tree-noise-redrawn",
           "binary-tree counter that redraws the noise of every node at every release, so user 1 is "
           "noised in all K releases instead of floor(log2 K)+1 nodes", _tree("tree-redraw"),
           reference="Chan, Shi, Song 2011 (noise once per dyadic node); docs/accounting.md#ledger-check"),
    Mutant("noise-scale-halved", "tree counter whose code adds Laplace noise of half the declared scale",
           _tree("noise-halved")),
    Mutant("sensitivity-h-not-2h",
           "noise calibrated to l1 sensitivity H (the add/remove count) under replace-one-user, where "
           "two trajectories differ by 2H", _tree("sensitivity-h"),
           reference="docs/seed-002-tabular.md#h-versus-2h; dp-accounting issue #378 (same factor 2)"),
    Mutant("tree-depth-ln-k", "noise calibrated to ln K nodes per user instead of floor(log2 K)+1",
           _tree("depth-ln-k"), reference="Chan-Shi-Song print Lap(log K / eps); docs/accounting.md#binary-tree-counters"),
    Mutant("ldp-not-clipped-below",
           "local randomizer that clips rewards to (-inf, 1] instead of [0, 1], so an out-of-range "
           "report moves the release by more than the declared sensitivity", LocalReportPrivatizer(bug="no-clip-below")),
    Mutant("noise-shared-across-pairs",
           "one noise value per step shared by every (s, a) pair, so differences of counts are noiseless",
           _tree("shared-noise"), reference="docs/seed-002-tabular.md#the-authors-public-code (public LDP code)"),
    Mutant("gram-noise-not-symmetrised",
           "Gram-matrix release with i.i.d. noise on all d^2 entries: (i, j) and (j, i) carry "
           "independent noise, doubling the information on every off-diagonal entry",
           GramPrivatizer(bug="not-symmetrised"), trials=10_000, reference="docs/accounting.md#symmetric-gaussian-matrices"),
    Mutant("factorization-norm-too-small",
           "continual counter that runs BLT buffers (theta 0.9, omega 1.0) but declares (0.9, 0.05): the declared "
           "column norm of R (the derived per-user multiplier) is too small for what ran",
           FactorizedCounterPrivatizer(bug="norm-too-small"), trials=20_000,
           reference="docs/counters.md (accounting, ledger); Dvijotham et al. 2024 (BLT column norm)"),
    Mutant("counter-noise-reused",
           "continual counter that draws one noise value at step 1 and reuses it at every step, so "
           "differences of releases are noiseless", FactorizedCounterPrivatizer(bug="noise-reused"), trials=20_000,
           reference="docs/counters.md (a fresh z_t per step); Fichtenberger et al. 2023"),
    Mutant("counter-noise-path",
           "BLT continual counter (buffer theta 0.9, omega 0.2) whose noise recursion runs with its Q coefficients "
           "halved while drawing the declared noise: the executed encoder R_exec = L_exec^-1 A has column norm 1.49 "
           "where the declared R has 1.08; the log is the correct counter's",
           FactorizedCounterPrivatizer(bug="noise-path", buffers=_LIGHT_BLT), trials=20_000,
           reference="docs/counters.md#ledger (the executed noise path); Dvijotham et al. 2024 (BLT recursion Q(B) u = P(B) z)"),
    Mutant("adaptive-switching-no-cap",
           "low-switching learner with a data-driven switching rule and no hard cap on the number of "
           "switches, so user 1 is released at every switch", SwitchingPrivatizer(bug="no-cap")),
]}

@dataclass(frozen=True)
class LearnerMutant:
    """A registered learner with a planted bug in its running code (``audit`` carries the bug)."""

    name: str
    description: str
    audit: Any  # privacct.audits.suite.LearnerAudit
    reference: str = ""
    #: the checks it meets by default (:func:`check_mutant`): the three for a planted noise bug, every learner check
    #: (:data:`privacct.audits.checks.LEARNER_CHECKS`) for a policy leak
    checks: tuple[str, ...] = CHECKS
    #: where the one-run released-statistics audit (check ``one-run released audit``) runs: a
    #: :class:`privacct.audits.suite.OneRunSetting` (None: ``audit.config`` with at most 1000 canaries, confidence 0.95)
    one_run_released: Any = None

    @property
    def trials(self) -> int:
        return self.audit.trials


def _learner_mutants() -> list[LearnerMutant]:
    from privacct.algorithms.registry import get_learner

    return [LearnerMutant(f"learner-noise-quarter-{a.algorithm}-{a.privacy}",
                          f"{get_learner(a.algorithm).family} learner {a.algorithm} ({a.privacy}) whose privacy noise "
                          f"is drawn at {a.noise_multiplier:g} x the declared scale (log and ledger see the declared scale)",
                          a, reference="learner-level planted bug; privacct.audits.suite.planted_noise_bugs")
            for a in planted_noise_bugs()]


def _policy_leaks() -> list[LearnerMutant]:
    return [LearnerMutant(a.mutant, f"{a.algorithm} ({a.privacy}): "
                          + dict(_learner_spec(a.algorithm).mutants)[a.mutant].removeprefix("PLANTED: "),
                          a, reference="policy leak (issue 20): privacct.audits.suite.policy_leaks; caught by an audit of the "
                                       "actions alone", checks=LEARNER_CHECKS)
            for a in policy_leaks()]


def _learner_spec(name: str):
    from privacct.algorithms.registry import get_learner

    return get_learner(name)


#: The learner-level counter-noise-path's name in :data:`MUTANTS` (the learner's mutant, ``AuditHook.mutant``, is
#: ``counter-noise-path``; the privatizer row keeps that name)
COUNTER_NOISE_PATH_LEARNER = "counter-noise-path-private-lsvi-ucb"


#: The one-run released audit's canaries for ``counter-noise-path-private-lsvi-ucb``: its window score sees long averages
#: of releases, so its power grows with the spacing (at K = 10^4: 19 canaries, spacing 512, catch it with every guess
#: right in seeds 0-2; 100 at seed 0 with 45 of 50; 1000 do not: benchmarks/learner_audits.md#counter-noise-path-in-a-learner)
NOISE_PATH_CANARIES = 19


def counter_noise_path(config=None, *, canaries: int = NOISE_PATH_CANARIES) -> LearnerMutant:
    """The learner-level ``counter-noise-path`` (module docstring) at ``config`` (a RunConfig of private-lsvi-ucb whose
    Gram counter is BLT; None: the paper's setting, K = 10^4, H = 5, claim (1, 10^-5), tight), its one-run released
    audit with ``canaries`` (at most K - 1) canaries at confidence 0.95, its default scores (difference and window)."""
    from ..one_run_learner import one_run_config
    from ..suite import LearnerAudit, OneRunSetting

    cfg = one_run_config("private-lsvi-ucb", epsilon=1.0, delta=1e-5, horizon=5) if config is None else config   # H named
    m = min(canaries, cfg.episodes - 1)
    return LearnerMutant(
        COUNTER_NOISE_PATH_LEARNER,
        f"{cfg.algorithm} ({cfg.privacy}): " + dict(_learner_spec(cfg.algorithm).mutants)["counter-noise-path"]
        .removeprefix("PLANTED: "),
        LearnerAudit(cfg, mutant="counter-noise-path", trials=400), checks=COUNTER_PATH_CHECKS,
        one_run_released=OneRunSetting(cfg, canaries=m, why=(
            "scores difference and window; few canaries, wide spacing: the window score's power grows with it"
            if config is None else "not the paper's setting")),
        reference="learner-level counter-noise-path (issue 20 item 3): docs/auditing.md#planted-bugs; the privatizer "
                  "row counter-noise-path; Dvijotham et al. 2024 (BLT recursion Q(B) u = P(B) z)")


def _one_run_released(m: LearnerMutant, *, seed: int) -> dict[str, str]:
    """The one-run released-statistics audit of ``m`` at ``m.one_run_released`` (:class:`MutantReport` ``add`` fields)."""
    from ..one_run_learner import one_run_audit_learner
    from ..suite import OneRunSetting

    s = m.one_run_released or OneRunSetting(m.audit.config, canaries=min(1000, m.audit.episodes - 1))
    conf = describe_config(s.config, canaries=s.canaries, confidence=s.confidence) + (f" ({s.why})" if s.why else "")
    try:
        r = one_run_audit_learner(s.config, canaries=s.canaries, confidence=s.confidence, seed=seed,
                                  mutant=m.audit.mutant, noise_multiplier=m.audit.noise_multiplier)
    except PrivacctError as e:   # an audit that did not run catches nothing
        return {"verdict": "not run", "note": f"refused: {e}", "configuration": conf}
    return {"verdict": r.verdict, "note": r.summary(), "configuration": conf}


MUTANTS.update({m.name: m for m in _learner_mutants()})
MUTANTS.update({m.name: m for m in _policy_leaks()})
MUTANTS[COUNTER_NOISE_PATH_LEARNER] = counter_noise_path()

CONTROLS: dict[str, Mutant] = {m.name: m for m in [
    Mutant("correct-tree-counter", "correct binary-tree counter", _tree(None)),
    Mutant("correct-local-report", "correct local randomizer (clipped to [0, 1])", LocalReportPrivatizer()),
    Mutant("correct-gram", "correct symmetric Gram-matrix release", GramPrivatizer(), trials=10_000),
    Mutant("correct-switching", "correct doubling rule with a hard cap", SwitchingPrivatizer()),
    Mutant("correct-factorized-counter", "correct BLT continual counter (declared = run)", FactorizedCounterPrivatizer(),
           trials=20_000),
    Mutant("correct-blt-counter", "correct BLT continual counter with the buffer (0.9, 0.2): counter-noise-path "
           "without its bug", FactorizedCounterPrivatizer(buffers=_LIGHT_BLT), trials=20_000),
    Mutant("correct-sqrt-toeplitz-counter", "correct sqrt-Toeplitz continual counter (L = R = C, C^2 = A)",
           FactorizedCounterPrivatizer(strategy="sqrt-toeplitz"), trials=20_000),
]}


ledger_shape_problems = shape_problems  # the check lives in privacct.ledger


AUDIT_CONFIDENCE = 0.99


def check_mutant(m: Mutant, *, trials: int | None = None, seed: int = 0, checks=None,
                 confidence: float = AUDIT_CONFIDENCE, **audit_kwargs) -> MutantReport:
    """Run the requested checks on ``m`` (see module docstring); ``checks`` None: the mutant's own (:data:`CHECKS` for a
    planted privatizer, ``m.checks`` for a learner mutant: a policy leak meets the billboard check and the one-run
    action audit too, each at its own configuration; the learner-level noise-path bug the one-run released audit,
    ``one-run released audit``, at ``m.one_run_released``).

    The audit runs at ``confidence`` 0.99 by default: the correct controls are *tight* (pure
    Laplace composition attains its eps on the region where every coordinate saturates, and the
    plug-in likelihood-ratio test finds that region), so at 0.95 a control would be flagged in up
    to 5% of seeds; at 0.99 in at most 1%.
    """
    if isinstance(m, LearnerMutant):
        checks = tuple(m.checks if checks is None else checks)
        rep = check_learner(m.audit, trials=trials, seed=seed, checks=tuple(c for c in checks if c != ONE_RUN_RELEASED),
                            confidence=confidence, **audit_kwargs)
        if ONE_RUN_RELEASED in checks:
            rep.add(ONE_RUN_RELEASED, **_one_run_released(m, seed=seed))
        rep.name, rep.description = m.name, m.description
        return rep
    checks = CHECKS if checks is None else checks
    p, claim = m.privatizer, m.claim
    n = trials or m.trials
    where = f"{type(p).__name__}(bug={p.bug!r}), claim ({claim.epsilon:g}, {claim.delta:g})"

    def one_seed_ledger():
        ledger = Ledger()
        p.run("A", np.random.default_rng(np.random.SeedSequence(seed)), 1, ledger=ledger)
        return ledger

    def audit():
        return audit_mechanism(p, "A", "B", epsilon=claim.epsilon, delta=claim.delta, trials=n,
                               confidence=confidence, seed=seed, name=m.name, **audit_kwargs)

    return run_checks(m.name, m.description, p.build_log(), epsilon=claim.epsilon, delta=claim.delta,
                      checks=checks, ledger=one_seed_ledger, audit=audit, configuration=where,
                      audit_configuration=f"{where}, canary A vs B, {n} trials per side, confidence {confidence:g}")


def check_all(names=None, *, controls: bool = False, **kwargs) -> list[MutantReport]:
    table = CONTROLS if controls else MUTANTS
    names = list(table) if names is None else list(names)
    for n in names:
        if n not in table:
            raise PrivacctError(f"mutant must be one of {', '.join(table)}, got {n!r}")
    return [check_mutant(table[n], **kwargs) for n in names]
