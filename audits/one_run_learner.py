"""One-run audits of a learner (docs/auditing.md#one-run-audits): M canary users in ONE run, each user's data drawn
from its valid neighbouring pair by a fair coin, guesses from what the other users can isolate of each canary.

The run: the learner at the configuration asked for (by default the paper setting's K and H), with the
canaries of a :class:`privacct.algorithms.contract.CanaryPlan` (users at even spacing 2^L, the largest power of
two that fits M of them in the first K - 1 users, so that the low tree nodes of every canary hold no other
canary; bits from ``SeedSequence(seed)``) and every other user the environment's. The learner plays each
canary's response with its bit and reports her contribution under both bits given the same history
(:func:`privacct.tap.canary_contribution`); privacct's primitives record every release that holds exactly
one canary, minus the non-canary users' exact contribution (the auditor's own data; releases holding two
canaries are not used: their other canary's bit is unknown to the guesser).

Scores (:mod:`privacct.audits.one_run_scores`, docs/auditing.md#one-run-scores): ``difference``, the log-likelihood
ratio of canary i's releases, bit A against bit B (Laplace: sum_j (|x_j - b_j| - |x_j - a_j|) / scale; Gaussian:
((a - b) . x - (|a|^2 - |b|^2) / 2) / sigma^2, docs/auditing.md#the-neyman-pearson-statistic); where a Toeplitz
counter runs also ``window`` (her window mean of releases) and, with Laplace noise through it, ``output-only``; a
positive score guesses A. Every score runs on the SAME run; with n scores each one's bound is at confidence
1 - (1 - c) / n (union bound), the audit's bound is their largest, and the verdict: ``fails`` iff that exceeds the
claim; ``passes`` iff not, an exact score had power and no Laplace Toeplitz counter runs; else ``inconclusive``. The
guesses and each bound are :mod:`privacct.audits.one_run`'s (Steinke, Nasr, Jagielski 2023; Mahloujifar, Melis,
Chaudhuri 2024). Beside the bound stands the accounted eps of the learner's own log for the same configuration; the
notes say how far the median canary is from being seen (:func:`contrast_note`).

Soundness needs the guesses to depend on the output only: the scores use the released values, the
canaries' contributions under both bits (a function of the history and the auditor's fixed coins) and the
non-canary users' data (the auditor's), never a canary's bit.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privacct.algorithms.contract import RUN_FIELDS, ConfigFields, RunConfig
from privacct.counters.observed import GAUSSIAN_FORM
from privacct.errors import PrivacctError, check_count

from .learner_audit import accounted_epsilon, check_audit_config, resolve_audit_config


def plan_users(K: int, canaries: int) -> tuple[int, ...]:
    """``canaries`` user positions 1 + j 2^L among users 1..K - 1 (the tree's leaves of a JDP learner), 2^L the
    largest power of two with ``canaries`` positions fitting; refused when K - 1 < canaries."""
    K, m = check_count("episodes", K), check_count("canaries", canaries)
    room = K - 1 if K > 1 else 1
    if m > room:
        raise PrivacctError(f"canaries must be at most K - 1 = {room} for episodes {K}, got {m}")
    spacing = 1 << int(math.floor(math.log2(room / m))) if room >= m else 1
    return tuple(1 + j * spacing for j in range(m))


def canary_scores(records, users: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(score per canary (m,), releases per canary (m,)): the ``difference`` score
    (:data:`privacct.audits.one_run_scores.SCORES`) of one-canary release ``records``: the log-likelihood ratio bit A
    vs bit B of each canary's releases (module docstring), 0 for a canary with no release."""
    from .one_run_scores import SCORES, Observed

    return SCORES["difference"](Observed(tuple(users), tuple(records), ()))


def median_structure(records, users: tuple[int, ...]):
    """The exact loss structure (:class:`privacct.audits.oracle.LossStructure`) of the canary whose releases carry the
    median privacy loss (pure eps, else GDP mu): the per-canary reference of the one-run power criterion. Canaries
    sit in different numbers of clean releases, so this is a typical canary, not every one (said in the docs)."""
    from .oracle import LossStructure

    per: dict[int, tuple[list[float], float]] = {u: ([], 0.0) for u in users}
    for r in records:
        if r.mechanism == GAUSSIAN_FORM:   # no exact loss (privacct/counters/observed.py)
            continue
        d = np.abs(r.mean_a[0] - r.mean_b[0])
        lap, mu2 = per[r.user]
        if r.mechanism == "laplace":
            lap.extend(float(v) for v in d[d > 0] / r.scale)
        else:
            mu2 += float(np.sum(d * d)) / r.scale ** 2
        per[r.user] = (lap, mu2)
    structures = [LossStructure(tuple(lap), math.sqrt(mu2)) for lap, mu2 in per.values() if lap or mu2 > 0]
    if not structures:
        return None
    key = (lambda s: s.pure_epsilon) if all(s.mu == 0 for s in structures) else (lambda s: math.hypot(s.mu, sum(s.laplace)))
    return sorted(structures, key=key)[len(structures) // 2]


def contrast_note(structure) -> str | None:
    """One line on how far the median canary is from being seen (issue 20): her observed loss at the DECLARED noise
    as an effective Gaussian mu (sqrt(mu^2 + sum a_j^2): a_j = |dm_j| / b_j of her Laplace coordinates, the small-shift
    limit of a Laplace loss, whose pure eps sum a_j overstates what many small shifts let a guess see), and the noise
    factor that would bring it to 1 (a planted noise bug smaller than that factor leaves her guesses near coin flips:
    docs/auditing.md#one-run-audits-of-learners). None without a structure."""
    if structure is None:
        return None
    eff = math.hypot(structure.mu, math.sqrt(sum(a * a for a in structure.laplace)))
    if eff <= 0:
        return "the median canary's releases do not depend on her bit"
    return (f"median canary at the declared noise: {structure.describe()}, effective mu {eff:.3g} (the noise x "
            f"{min(1.0, eff):.3g} or less brings it to 1; a canary far below 1 is a coin flip)")


def one_run_config(algorithm: str, *, privacy: str = "jdp", epsilon: float = 1.0, delta: float = 0.0,
                   calibration: str = "tight", episodes: int | None = None, horizon: int | None = None,
                   env: str | None = None, options: tuple = (), bonus_scale: float | None = None) -> RunConfig:
    """The KEYWORD FORM of a one-run audit's configuration: ``episodes`` None is the learner's paper setting for
    ``privacy`` (:func:`privacct.algorithms.settings.paper_setting`: its K, H, environment, bonus scale and options; ``horizon``, ``env``,
    ``bonus_scale`` given override it, ``options`` go on top of its options), or, for a learner without one, its test
    settings' K; with ``episodes``, an unset ``horizon`` / ``env`` is the environment's default and ``bonus_scale`` 1.
    The claim (``privacy``, ``epsilon``, ``delta``, ``calibration``) is always the one given, never the setting's.
    One RunConfig, made once (``dataclasses.replace`` of the setting's record validates it) and checked for an audit
    (:func:`privacct.audits.learner_audit.check_audit_config`)."""
    from privacct.algorithms.registry import get_learner
    from privacct.algorithms.settings import paper_setting

    spec = get_learner(algorithm)
    setting = paper_setting(spec, privacy) if episodes is None else None
    if setting is not None:
        base = setting.run_config(algorithm)
        options = tuple(sorted({**dict(base.options), **dict(options)}.items()))
    else:
        base = RunConfig(algorithm, episodes=dict(spec.test_settings).get("episodes", 1000) if episodes is None else episodes)
        options = tuple(options)
    given = {k: v for k, v in (("horizon", horizon), ("env", env), ("bonus_scale", bonus_scale)) if v is not None}
    return check_audit_config(dataclasses.replace(base, privacy=privacy, epsilon=epsilon, delta=delta,
                                                  calibration=calibration, options=options, **given))


def resolve_one_run_config(config: "RunConfig | str", fields: dict[str, Any], *, caller: str) -> RunConfig:
    """The configuration a one-run entry point was given: a RunConfig passed whole (checked for an audit; no field
    keywords beside it) or a learner's name and the keyword form's fields (:func:`one_run_config`). The one
    resolution path of the one-run audits; ``caller`` names the entry point in the one-line refusal."""
    if isinstance(config, RunConfig):
        return resolve_audit_config(config, fields, caller=caller)
    allowed = tuple(f for f in RUN_FIELDS if f != "algorithm")
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise PrivacctError(f"{caller}: unknown keyword(s) {', '.join(unknown)}; the configuration's are "
                            f"{', '.join(allowed)}")
    return one_run_config(config, **fields)


@dataclass(frozen=True)
class OneRunLearnerResult(ConfigFields):
    """A learner's one-run audit: the bound (``bound``, :mod:`privacct.audits.one_run`'s result) beside the
    accounted eps of the same configuration (``config``, the RunConfig audited, whose fields read as the result's
    own: ``r.episodes``)."""

    config: RunConfig
    canaries: int
    spacing: int
    releases_per_canary: float
    bound: Any
    accountant: str
    accounted_epsilon: float
    seconds: float
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: every score's bound on the same run (:class:`ScoreBound`; one: ``difference``), and the name of the one whose
    #: bound is ``bound`` (the largest)
    scores: tuple = ()
    best_score: str = "difference"

    @property
    def verdict(self) -> str:
        return self.bound.verdict

    @property
    def epsilon_lower_bound(self) -> float:
        return float(self.bound.epsilon_lower_bound)

    @property
    def sandwich_ok(self) -> bool:
        return self.epsilon_lower_bound <= self.accounted_epsilon * (1 + 1e-9)

    def to_dict(self) -> dict:
        d = self.bound.to_dict()
        cfg = self.config.to_dict()
        d.update({"kind": "one-run audit", **{k: cfg[k] for k in ("algorithm", "privacy", "calibration", "episodes",
                                                                   "horizon")},
                  "canaries": self.canaries, "spacing": self.spacing,
                  "releases_per_canary": self.releases_per_canary, "accountant": self.accountant,
                  "accounted_epsilon": self.accounted_epsilon, "sandwich_ok": self.sandwich_ok,
                  "seconds": self.seconds, "notes": list(self.notes),
                  "scores": [x.to_dict() for x in self.scores], "best_score": self.best_score})
        return d

    def summary(self) -> str:
        b = self.bound
        rel = "<=" if self.sandwich_ok else (f"> (SANDWICH VIOLATED at confidence {b.confidence:g}: the code leaks more than "
                                                 f"its log, unless this is the {1 - b.confidence:.2g}-probability miss of the bound "
                                                 "that a correct learner allows; another --seed tells)")
        return (f"one-run audit {b.verdict.upper()} ({self.algorithm} {self.privacy} {self.calibration} K={self.episodes}"
                f"{'' if self.horizon is None else f' H={self.horizon}'}): {self.canaries} canaries (spacing {self.spacing}, "
                f"{self.releases_per_canary:.2f} releases each), {b.guesses} guesses, {b.correct} correct{self._by()}; eps lower bound "
                f"{self.epsilon_lower_bound:.4f} {rel} accounted {self.accounted_epsilon:.4f} ({self.accountant}, same "
                f"configuration) vs claimed {b.claimed_epsilon:g} (delta {b.delta:g}), confidence {b.confidence:g}; "
                f"{self.seconds:.1f} s")

    def _by(self) -> str:
        if len(self.scores) < 2:
            return ""
        each = ", ".join(f"{x.name} {x.bound.correct}/{x.bound.guesses} {x.bound.epsilon_lower_bound:.3f}"
                         for x in self.scores)
        return f" by score {self.best_score} (scores at confidence {self.scores[0].bound.confidence:.4g} each: {each})"


@dataclass(frozen=True)
class ScoreBound:
    """One score's part of a one-run audit (:mod:`privacct.audits.one_run_scores`): its ``name``, whether its power
    criterion counted (``exact``: an exact likelihood of every record it read), the records it read per canary on
    average, and its bound (:class:`privacct.audits.one_run.OneRunResult`, at its share of the confidence)."""

    name: str
    exact: bool
    releases_per_canary: float
    bound: Any

    def to_dict(self) -> dict:
        b = self.bound
        return {"name": self.name, "exact": self.exact, "releases_per_canary": self.releases_per_canary,
                "canaries": int(b.canaries), "guesses": int(b.guesses), "correct": int(b.correct),
                "epsilon_lower_bound": float(b.epsilon_lower_bound), "confidence": float(b.confidence),
                "verdict": b.verdict, "power": b.power.to_dict()}


def combine_scores(parts: "list[ScoreBound]", *, confidence: float, passes_allowed: bool):
    """(the audit's bound, the name of its score) from each score's bound on one run (module docstring): the largest
    bound, at the audit's ``confidence`` (each part's was 1 - (1 - confidence) / n: union bound, docs/auditing.md#one-run-scores);
    verdict ``fails`` iff it exceeds the claim, ``passes`` iff not and an exact part had power (and ``passes_allowed``),
    else ``inconclusive``. One part: its bound unchanged."""
    best = max(parts, key=lambda p: p.bound.epsilon_lower_bound)   # ties: the first (a fixed order)
    if len(parts) == 1 and passes_allowed:
        return best.bound, best.name
    b = best.bound
    if b.epsilon_lower_bound > b.claimed_epsilon:
        verdict, power = "fails", b.power
    else:
        powered = [p for p in parts if p.exact and p.bound.power.has_power] if passes_allowed else []
        verdict = "passes" if powered else "inconclusive"
        power = powered[0].bound.power if powered else b.power
    return dataclasses.replace(b, verdict=verdict, power=power, confidence=confidence), best.name


def one_run_audit_learner(config: "RunConfig | str", *, canaries: int = 1000, confidence: float = 0.95, seed: int = 0,
                          coins_seed: int = 0, mutant: str | None = None, noise_multiplier: float = 1.0,
                          scores: "tuple[str, ...] | None" = None, **fields: Any) -> OneRunLearnerResult:
    """One learner run with ``canaries`` canary users and the one-run bound (module docstring).

    ``config``: the :class:`~privacct.algorithms.contract.RunConfig` audited, passed whole (its claim, epsilon and delta,
    is the one audited). The KEYWORD FORM, ``one_run_audit_learner("ucb-vi", privacy="ldp", episodes=257, ...)``,
    gives a learner name and the configuration's fields as keywords (``privacy`` default jdp, ``epsilon`` 1,
    ``delta`` 0, ``calibration`` tight, ``episodes``, ``horizon``, ``env``, ``options``, ``bonus_scale``), read by
    :func:`one_run_config` into one RunConfig: ``episodes`` None is the learner's paper setting for ``privacy`` (its K,
    H, environment and constants), else its test settings' K. ``noise_multiplier`` < 1: the planted learner-level
    noise bug (:class:`privacct.algorithms.contract.AuditHook`). ``confidence``, ``seed``, ``coins_seed`` and ``mutant``
    as :func:`privacct.audits.learner_audit.audit_learner`. ``scores``: names of
    :data:`privacct.audits.one_run_scores.SCORES` (None: :func:`privacct.audits.one_run_scores.default_scores`, those
    that apply to the configuration's counters); all run on the same run, the confidence split between them.
    """
    from privacct.algorithms.contract import AuditHook, CanaryPlan
    from privacct.algorithms.registry import get_learner

    from .one_run import _check_confidence, draw_bits, one_run_audit_scores
    from .one_run_scores import SCORES, default_scores, observed, score_names, toeplitz_groups

    _check_confidence(confidence)

    cfg = resolve_one_run_config(config, fields, caller="one_run_audit_learner")
    spec = get_learner(cfg.algorithm)
    names = default_scores(cfg, spec) if scores is None else score_names(scores)
    # a Laplace Toeplitz counter's releases have no exact likelihood: its audit fails or is inconclusive, never passes
    laplace_toeplitz = any(m == "laplace" for _, m in toeplitz_groups(cfg, spec))
    share = 1.0 - (1.0 - float(confidence)) / len(names)
    users = plan_users(int(cfg.episodes), canaries)
    spacing = users[1] - users[0] if len(users) > 1 else 1
    signs = draw_bits(seed, len(users))                       # +1: bit A, -1: bit B (privacct.audits.one_run)
    bits = tuple("A" if v > 0 else "B" for v in signs)
    t0 = time.perf_counter()
    hook = AuditHook("A", fixed_users=False, coins_seed=coins_seed, noise_multiplier=noise_multiplier, mutant=mutant,
                     plan=CanaryPlan(users, bits))
    res = spec.run(cfg, [np.random.SeedSequence([seed, 1])], audit=hook)
    obs = observed(res.tap, users)
    parts, counts = [], {}
    for name in names:
        sc = SCORES[name]
        score, count = sc(obs)
        counts[name] = count
        records = sc.records(obs)
        exact = sc.exact and not any(r.mechanism == GAUSSIAN_FORM for r in records)
        st = median_structure(records, users) if exact else None
        label = f"{cfg.algorithm} {cfg.privacy} one-run" + ("" if len(names) == 1 else f" ({name} score)")
        parts.append(ScoreBound(name, exact, float(count.mean()), one_run_audit_scores(
            score, signs, epsilon=cfg.epsilon, delta=cfg.delta, confidence=share if len(names) > 1 else confidence,
            per_canary_structure=st, seed=seed, name=label)))
    bound, best = combine_scores(parts, confidence=confidence, passes_allowed=not laplace_toeplitz)
    structure = median_structure(SCORES["difference"].records(obs), users)
    count = counts.get("difference", next(iter(counts.values())))
    acc_name, acc = accounted_epsilon(cfg)
    notes = [n for n in (contrast_note(structure),) if n is not None]
    if res.tap.unobserved:
        notes.append("not observed: " + "; ".join(f"{u.group} (users {u.users[0]}..{u.users[1]}): {u.reason}"
                                                  for u in res.tap.unobserved[:5]))
    if laplace_toeplitz:
        notes.append("a Laplace Toeplitz counter runs: its canaries are scored output-only (no exact likelihood), so "
                     "the verdict is fails or inconclusive, never passes (docs/auditing.md#one-run-scores)")
    return OneRunLearnerResult(cfg, len(users), spacing, float(count.mean()), bound, acc_name, float(acc),
                               time.perf_counter() - t0, tuple(notes), tuple(parts), best)


__all__ = ["OneRunLearnerResult", "ScoreBound", "canary_scores", "combine_scores", "contrast_note", "one_run_audit_learner",
           "one_run_config", "plan_users", "resolve_one_run_config"]
