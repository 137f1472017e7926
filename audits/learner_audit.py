"""Learner audits through the learner contract's audit hook (:mod:`privacct.algorithms.contract`).

D and D' are the learner's user sequences with user 1 replaced by the family's canary A or B
(:class:`privacct.algorithms.contract.AuditHook`); the valid pair per privacy model and paper is stated in
:mod:`privacct.algorithms.neighbours` and each family's ``neighbours(config)``. Every trial is one seed of
a batched run (``spec.run(config, seeds, audit=hook)``, a leading batch axis). By default:

* **fixed other users**: users 2..K are canary A's response function, and the agent's coins are the
  same in every trial, so D and D' are two fixed neighbouring datasets and the only randomness left
  is the privacy noise;
* **all-node white-box observation** (``observe="released"``): every release that contains user 1
  (tree learners: the nodes [1, 2^j]; other counters: tree-honaker's nodes [1, 2^j], a Toeplitz counter's
  releases whitened by its declared L, each weighted by R[t, 1] in its means, docs/auditing.md#factorized-counters;
  fresh/adaptive releases: all of them; LDP: user 1's report),
  each minus the other users' exact contribution (a post-processing of the transcript; see
  :mod:`privacct.algorithms.contract`), with its noise model and its noiseless value under each canary.

Test statistic: the Neyman-Pearson log-likelihood ratio of the observed releases, fixed before any
sample is seen (:func:`np_statistic`): Laplace blocks contribute sum_j (|x_j - m_B,j| - |x_j - m_A,j|)/b,
Gaussian blocks ((m_A - m_B) . x - (|m_A|^2 - |m_B|^2)/2) / sigma^2 per coordinate (a symmetric
Gaussian matrix is observed through its independent upper triangle). Where the means depend on the
history (a response's value function) the learner reports them per trial and the statistic uses
them; where a release happens only in some trials (data-dependent update times, seed 004) absent
releases contribute 0 -- the timing itself also carries information about user 1, which this
statistic ignores (sound: any statistic fixed before sampling is; it only costs power).

Beside the certified bound every result carries, for the SAME configuration (K, H, noise,
relation): the accounted eps of the learner's own log (:func:`accounted_epsilon`), the oracle figure
of the exact privacy-loss distribution (:mod:`privacct.audits.oracle`), the exact GDP mu of the
observation (Gaussian observations) and the power check; ``eps_lb <= eps_accounted`` is asserted
(:class:`SandwichViolation`: the code leaks more than its log declares, or an accountant bug).

Black-box ``observe="actions"``: the actions sent to users 2..K (user 1's own actions are never part
of the JDP output M_{-1}; seed 002 Def. 2.2), one-hot encoded by the default candidate statistics; its power is
simulated against the same learner with its noise scaled until its log accounts 2 x the claim
(:mod:`privacct.audits.action_power`, docs/auditing.md#power-of-the-action-audit).

Trial seeds: chunk j of a side gets ``default_rng(chunk seed)``; its trials use
``chunk_seed.spawn(size)``, so the same seed gives the same result on every executor
(:mod:`privacct.audits.sampling`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from privacct.algorithms.contract import RUN_FIELDS, ConfigFields, RunConfig
from privacct.errors import PrivacctError

from .oracle import LossStructure, gdp_epsilon, learner_power_criterion, oracle_epsilon
from .power import PowerCheck
from .protocols import FixedPair
from .mechanism_audit import AuditResult, audit_mechanism, decide, run_audit
from .noise_factor import noise_factor_for
from .statistics import LR_DECIMALS, Statistic
from .testers import DIRECTIONS, ThresholdTester

OBSERVATIONS = ("released", "actions")
LEARNER_CHUNK = 250  # trials per chunk: 114 MB less peak memory than 1000 at equal CPU (benchmarks/bench_learner_chunk.py)
VERDICTS = ("passes", "fails", "inconclusive")
PILOT = 64  # probe trials for the layout and, where means vary, for the oracle's median structure


class SandwichViolation(PrivacctError):
    """eps_lb > eps_accounted for the same configuration: the code leaks more than its log declares."""


# --------------------------------------------------------------------------- observation layout
@dataclass(frozen=True, eq=False)
class BlockLayout:
    """Where one observed block sits in the flat sample, and its noise model and means."""

    name: str
    group: str
    mechanism: str
    scale: float
    start: int
    size: int
    mean_a: np.ndarray | None     # constant means (None when they travel with the samples)
    mean_b: np.ndarray | None
    means_at: int | None          # offset of the per-trial (mean_a, mean_b) columns
    mask_at: int | None           # column of the presence flag
    #: constant-mean blocks: the coordinates kept in the flat sample, those whose means differ between the canaries
    #: (the others add exactly 0 to the likelihood ratio and to the privacy loss); None: every coordinate
    keep: np.ndarray | None = None

    def means(self) -> tuple[np.ndarray, np.ndarray]:
        """The constant means of the kept coordinates (canary A, canary B)."""
        if self.keep is None:
            return self.mean_a, self.mean_b
        return self.mean_a[self.keep], self.mean_b[self.keep]


@dataclass(frozen=True, eq=False)
class Layout:
    """The flat sample of an audited run: block values, then per-trial means, then presence flags."""

    blocks: tuple[BlockLayout, ...]
    width: int

    @property
    def exact(self) -> bool:
        """Whether the privacy-loss distribution is the same in every trial (constant means, no masks)."""
        return all(b.mean_a is not None and b.mask_at is None for b in self.blocks)


def _layout(obs) -> Layout:
    """The flat sample's layout. A block with constant means keeps only the coordinates where canary A's and canary
    B's means differ: the others carry the same distribution under both canaries, so they add exactly 0 to the
    Neyman-Pearson statistic and to the privacy loss, and dropping them loses nothing (a tabular node of ~600
    coordinates moves in at most 6H of them: the audit's samples shrink by that factor)."""
    keeps = [None if b.varying else np.flatnonzero(np.asarray(b.mean_a, dtype=float) != np.asarray(b.mean_b, dtype=float))
             for b in obs.blocks]
    sizes = [b.size if k is None else int(k.size) for b, k in zip(obs.blocks, keeps, strict=True)]
    blocks, pos = [], sum(sizes)
    start = 0
    for b, keep, size in zip(obs.blocks, keeps, sizes, strict=True):
        means_at = mask_at = None
        ma = mb = None
        if b.varying:
            means_at, pos = pos, pos + 2 * b.size
        else:
            ma, mb = np.asarray(b.mean_a, dtype=float), np.asarray(b.mean_b, dtype=float)
        if b.present is not None:
            mask_at, pos = pos, pos + 1
        blocks.append(BlockLayout(b.name, b.group, b.mechanism, float(b.scale), start, size, ma, mb, means_at, mask_at,
                                  keep))
        start += size
    return Layout(tuple(blocks), pos)


def _flatten(obs, layout: Layout) -> np.ndarray:
    B = obs.batch
    out = np.zeros((B, layout.width))
    if tuple(b.name for b in obs.blocks) != tuple(b.name for b in layout.blocks):
        raise PrivacctError("the learner's observation changed its blocks between runs; an audit needs a fixed layout")
    for b, lb in zip(obs.blocks, layout.blocks, strict=True):
        out[:, lb.start:lb.start + lb.size] = b.values if lb.keep is None else b.values[:, lb.keep]
        if lb.means_at is not None:
            out[:, lb.means_at:lb.means_at + lb.size] = np.broadcast_to(b.mean_a, (B, lb.size))
            out[:, lb.means_at + lb.size:lb.means_at + 2 * lb.size] = np.broadcast_to(b.mean_b, (B, lb.size))
        elif not (np.array_equal(b.mean_a, lb.mean_a) and np.array_equal(b.mean_b, lb.mean_b)):
            raise PrivacctError(f"block {b.name!r}: constant means changed between runs")
        if lb.mask_at is not None:
            out[:, lb.mask_at] = True if b.present is None else b.present
    return out


def np_statistic(layout: Layout) -> Statistic:
    """The Neyman-Pearson log-likelihood ratio of the observed releases (module docstring); large values
    favour D (canary A). Rounded to ``LR_DECIMALS`` like every likelihood-ratio statistic."""

    def llr(raw, layout=layout):
        x = np.asarray(raw, dtype=float).reshape(len(raw), -1)
        total = np.zeros(x.shape[0])
        for b in layout.blocks:
            v = x[:, b.start:b.start + b.size]
            if b.means_at is None:
                ma, mb = b.means()
                idx = np.flatnonzero(ma != mb)
                if idx.size == 0:
                    continue
                v, ma, mb = v[:, idx], ma[idx], mb[idx]
            else:
                ma = x[:, b.means_at:b.means_at + b.size]
                mb = x[:, b.means_at + b.size:b.means_at + 2 * b.size]
            if b.mechanism == "laplace":
                term = ((np.abs(v - mb) - np.abs(v - ma)) / b.scale).sum(axis=1)
            else:
                term = (((ma - mb) * v).sum(axis=1) - 0.5 * ((ma * ma).sum(axis=-1) - (mb * mb).sum(axis=-1))) / b.scale**2
            if b.mask_at is not None:
                term = term * x[:, b.mask_at]
            total += term
        return total
    return Statistic("neyman-pearson likelihood-ratio", llr, decimals=LR_DECIMALS)


def loss_structure(layout: Layout, pilot: np.ndarray | None = None) -> LossStructure:
    """The :class:`privacct.audits.oracle.LossStructure` of the observation. With varying means or presence
    masks the structure differs by trial: the pilot trials' median Gaussian mu and their median
    set of Laplace ratios are used (an approximation, flagged by ``Layout.exact``)."""
    lap: list[float] = []
    mu2 = 0.0
    varying: list[np.ndarray] = []
    for b in layout.blocks:
        if b.means_at is None and b.mask_at is None:
            d = np.abs(b.mean_a - b.mean_b)
            if b.mechanism == "laplace":
                lap += [float(a) for a in d[d > 0] / b.scale]
            else:
                mu2 += float((d * d).sum()) / b.scale**2
            continue
        if pilot is None:
            raise PrivacctError("loss_structure needs pilot samples for blocks whose means or presence vary by trial")
        if b.means_at is not None:
            ma = pilot[:, b.means_at:b.means_at + b.size]
            mb = pilot[:, b.means_at + b.size:b.means_at + 2 * b.size]
        else:
            ma, mb = (np.broadcast_to(m, (len(pilot), b.size)) for m in b.means())
        d2 = ((ma - mb) ** 2).sum(axis=1) / b.scale**2
        if b.mechanism == "laplace":
            raise PrivacctError(f"block {b.name!r}: varying Laplace blocks are not supported by the oracle")
        if b.mask_at is not None:
            d2 = d2 * pilot[:, b.mask_at]
        varying.append(d2)
    if varying:
        mu2 += float(np.median(np.sum(varying, axis=0)))
    return LossStructure(tuple(lap), math.sqrt(mu2))


# --------------------------------------------------------------------------- the mechanism
@functools.lru_cache(maxsize=64)
def _probe(mech: "LearnerMechanism") -> tuple[Layout, np.ndarray]:
    """Layout from one small batch of canary A, and pilot samples (canary A) for varying structures."""
    seeds = np.random.SeedSequence(20_240_601).spawn(PILOT)
    obs = mech.observation("A", seeds)
    layout = _layout(obs)
    pilot = _flatten(obs, layout)
    other = mech.observation("B", seeds[:2])
    _flatten(other, layout)  # the B side reports the same blocks and the same constant means
    return layout, pilot


@functools.lru_cache(maxsize=64)
def _derived(mech: "LearnerMechanism"):
    """None when the learner returns an observation of its own; else the releases its primitives recorded of user
    1, paired between a canary-A and a canary-B pilot on the same seeds
    (:func:`privacct.algorithms.contract.pair_taps`, docs/auditing.md#observations-from-the-primitives)."""
    from privacct.algorithms.contract import pair_taps

    seeds = np.random.SeedSequence(20_240_602).spawn(PILOT)
    res_a = mech.run("A", seeds)
    if res_a.observation is not None:
        return None
    means = pair_taps(res_a.tap, mech.run("B", seeds).tap)
    if not means.means:
        why = "; ".join(f"{n}: {r}" for n, r in means.left_out) or "nothing was recorded"
        raise PrivacctError(f"learner {mech.config.algorithm!r}: no release of user 1 can be observed white-box ({why})")
    return means


@dataclass(frozen=True)
class LearnerMechanism:
    """``mechanism(canary, rng, size)``: ``size`` batched runs of a learner with user 1 = ``canary``,
    returning the flat observation (``observe="released"``) or the actions sent to users 2..K."""

    config: RunConfig
    observe: str = "released"
    fixed_users: bool = True
    coins_seed: int = 0
    noise_multiplier: float = 1.0
    mutant: str | None = None

    def hook(self, canary: str):
        from privacct.algorithms.contract import AuditHook

        return AuditHook(canary, self.fixed_users, self.coins_seed, self.noise_multiplier, self.mutant)

    def run(self, canary: str, seeds: list):
        """The learner's RunResult on ``seeds`` with user 1 = ``canary``."""
        from privacct.algorithms.registry import get_learner

        return get_learner(self.config.algorithm).run(self.config, seeds, audit=self.hook(canary))

    def observation(self, canary: str, seeds: list, result=None):
        """The observation of a run (the learner's own, or derived from its primitives' records)."""
        from privacct.algorithms.contract import derived_observation

        res = self.run(canary, seeds) if result is None else result
        if res.observation is not None:
            return res.observation
        return derived_observation(res, canary, _derived(self))

    def derived(self):
        """The paired means of a learner observed through its primitives (None: it reports its own observation)."""
        return _derived(self)

    def layout(self) -> Layout:
        return _probe(self)[0]

    def pilot(self) -> np.ndarray:
        return _probe(self)[1]

    def __call__(self, dataset: str, rng: np.random.Generator, size: int) -> np.ndarray:
        res = self.run(dataset, rng.bit_generator.seed_seq.spawn(size))
        if self.observe == "actions":
            acts = (res.tap.actions_to_others(int(self.config.episodes)) if res.observation is None
                    else res.observation.actions)
            if acts is None or acts.shape[1] == 0:
                raise PrivacctError(f"learner {self.config.algorithm!r} reports no actions of users 2..K (K >= 2 needed)")
            return acts.reshape(size, -1)
        return _flatten(self.observation(dataset, [], result=res), self.layout())


# --------------------------------------------------------------------------- configuration and accounting
def learner_config(algorithm: str, *, privacy: str = "jdp", epsilon: float = 1.0, delta: float = 0.0,
                   calibration: str = "tight", episodes: int = 32, horizon: int | None = None,
                   env: str | None = None, options: tuple = (), bonus_scale: float = 1.0) -> RunConfig:
    """The RunConfig of an audit given field by field (the keyword form; RunConfig validates it, once), checked for an
    audit (:func:`check_audit_config`)."""
    return check_audit_config(RunConfig(algorithm, privacy=privacy, epsilon=epsilon, delta=delta,
                                        calibration=calibration, episodes=episodes, env=env, horizon=horizon,
                                        bonus_scale=bonus_scale, options=tuple(options)))


def check_audit_config(config: RunConfig) -> RunConfig:
    """``config`` when it can be audited: a RunConfig of a registered learner under one of its private models (a claim
    is needed); one PrivacctError line otherwise."""
    from privacct.algorithms.registry import get_learner

    if not isinstance(config, RunConfig):
        raise PrivacctError(f"config must be a RunConfig, got {type(config).__name__}")
    spec = get_learner(config.algorithm)
    if config.privacy not in ("jdp", "ldp"):
        raise PrivacctError(f"privacy must be jdp or ldp for an audit (a claim is needed), got {config.privacy!r}")
    if config.privacy not in spec.privacy_models:
        raise PrivacctError(f"privacy must be one of {', '.join(p for p in spec.privacy_models if p != 'none')} "
                            f"for {config.algorithm!r}, got {config.privacy!r}")
    return config


def resolve_audit_config(config: "RunConfig | str", fields: dict[str, Any], *, caller: str) -> RunConfig:
    """The configuration an audit entry point was given: a RunConfig (checked by :func:`check_audit_config`; no field
    keywords beside it) or a learner's name and the keyword form's fields (:func:`audit_config`). ``caller`` names the
    entry point in the one-line refusal."""
    if isinstance(config, RunConfig):
        if fields:
            raise PrivacctError(f"{caller}: give the configuration as a RunConfig or as keywords, not both "
                                f"(got {', '.join(sorted(fields))} beside a RunConfig)")
        return check_audit_config(config)
    return audit_config(config, **fields)


def audit_config(algorithm: str, *, privacy: str = "jdp", epsilon: float = 1.0, delta: float = 0.0,
                 calibration: str = "tight", episodes: int | None = None, horizon: int | None = None,
                 env: str | None = None, options: tuple = (), bonus_scale: float | None = None) -> RunConfig:
    """The keyword form of an audit's configuration (:func:`audit_learner`, the billboard check, the pytest plugin):
    ``episodes`` None is the learner's audit setting (``LearnerSpec.audit_configuration()``,
    docs/auditing.md#audit-configurations) with each of ``horizon``, ``env``, ``bonus_scale`` given overriding its
    field and ``options`` on top of its options; with ``episodes``, an unset ``horizon`` / ``env`` is the environment's
    default and ``bonus_scale`` 1. One RunConfig, made once."""
    from privacct.algorithms.registry import get_learner

    if episodes is not None:
        return learner_config(algorithm, privacy=privacy, epsilon=epsilon, delta=delta, calibration=calibration,
                              episodes=episodes, horizon=horizon, env=env, options=options,
                              bonus_scale=1.0 if bonus_scale is None else bonus_scale)
    setting = get_learner(algorithm).audit_configuration()
    return check_audit_config(setting.run_config(algorithm, privacy=privacy, epsilon=epsilon, delta=delta,
                                                 calibration=calibration, horizon=horizon, env=env,
                                                 bonus_scale=bonus_scale, options=options))


def accounted_epsilon(config: RunConfig, delta: float | None = None) -> tuple[str, float]:
    """(accountant, eps) of the learner's own log for ``config`` at ``delta`` (default: the claim's)."""
    from privacct.accounting import tightest_epsilon
    from privacct.algorithms.registry import get_learner

    log = get_learner(config.algorithm).declared_log(config)
    if log is None:
        raise PrivacctError(f"learner {config.algorithm!r} has no mechanism log for privacy={config.privacy!r}")
    return tightest_epsilon(log, delta=config.delta if delta is None else delta)


# --------------------------------------------------------------------------- the result
@dataclass(frozen=True)
class OracleFigure:
    """The oracle figure of the observed releases at the audit's trials (:mod:`privacct.audits.oracle`)."""

    epsilon: float
    structure: str
    exact: bool
    mu: float
    epsilon_gdp: float | None


@dataclass(frozen=True, eq=False)
class LearnerAuditResult(ConfigFields):
    """A learner audit: the certified bound (``audit``, the runner's result) beside the accounted eps
    of the same configuration (``config``, the RunConfig audited), the oracle figure, the power check and the verdict.

    ``verdict`` and ``power`` are the runner's (:class:`privacct.audits.mechanism_audit.AuditResult`): ``fails``
    (eps_lb > claim), ``passes`` (eps_lb <= claim and the learner power criterion says the audit could
    have seen a 2 x violation: the oracle of the released statistics, or for ``observe="actions"`` the simulated
    leakier learner of :mod:`privacct.audits.action_power`), ``inconclusive`` (eps_lb <= claim without that power).
    The configuration's fields read as the result's own (``r.episodes``); other attribute access falls through to
    ``audit`` (counts, test, trials, mu_lower_bound, ...).
    """

    audit: AuditResult
    config: RunConfig
    observe: str
    fixed_users: bool
    noise_multiplier: float
    accountant: str
    accounted_epsilon: float
    oracle: OracleFigure | None
    power: PowerCheck
    verdict: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __getattr__(self, name: str):
        if name in ("audit", "config"):  # not yet set (unpickling)
            raise AttributeError(name)
        if name in RUN_FIELDS:
            return super().__getattr__(name)
        return getattr(self.audit, name)

    @property
    def tests(self) -> str:
        """Which claim this audit tests (:func:`claim_tested`)."""
        return claim_tested(self.privacy, self.observe)

    @property
    def sandwich_ok(self) -> bool:
        return bool(self.audit.epsilon_lower_bound <= self.accounted_epsilon * (1 + 1e-9))

    @property
    def ratio_to_accounted(self) -> float:
        return self.audit.epsilon_lower_bound / self.accounted_epsilon if self.accounted_epsilon > 0 else float("inf")

    def to_dict(self) -> dict:
        d = self.audit.to_dict()
        d.update({
            "verdict": self.verdict, "algorithm": self.algorithm, "privacy": self.privacy,
            "calibration": self.calibration, "episodes": self.episodes, "horizon": self.horizon,
            "observe": self.observe, "fixed_users": self.fixed_users, "noise_multiplier": self.noise_multiplier,
            "accounted_epsilon": self.accounted_epsilon, "accountant": self.accountant,
            "sandwich_ok": self.sandwich_ok, "tests": self.tests,
            "oracle": None if self.oracle is None else {
                "epsilon": self.oracle.epsilon, "structure": self.oracle.structure, "exact": self.oracle.exact,
                "mu": self.oracle.mu, "epsilon_gdp": self.oracle.epsilon_gdp},
            "power": self.power.to_dict(),
            "notes": list(self.notes),
        })
        return d

    def summary(self) -> str:
        a = self.audit
        orc = "" if self.oracle is None else (f"; oracle figure at these trials {self.oracle.epsilon:.4f}"
                                              + ("" if self.oracle.exact else " (approximate)"))
        pw = (f"; power: {'yes' if self.power.has_power else 'NO'} "
                                            f"(2 x claim certifies {self.power.achievable_lower_bound:.3f}"
                                            + (f", {self.power.trials_needed} trials/side needed" if self.power.trials_needed else "") + ")")
        if self.observe == "actions":
            pw = "; " + action_power_text(self.power)
        rel = "<=" if self.sandwich_ok else (f"> (SANDWICH VIOLATED at confidence {a.confidence:g}: the code leaks more than "
                                                 f"its log, unless this is the {1 - a.confidence:.2g}-probability miss of the bound "
                                                 "that a correct learner allows; another --seed tells)")
        return (f"learner audit {self.verdict.upper()}{' (' + a.name + ')' if a.name else ''}; tests {self.tests}: eps lower bound "
                f"{a.epsilon_lower_bound:.4f} {rel} accounted {self.accounted_epsilon:.4f} ({self.accountant}, same "
                f"configuration: K={self.episodes}, H={self.horizon}, {self.calibration}) vs claimed "
                f"{a.claimed_epsilon:g} (delta {a.delta:g}); {a.trials} trials per side, confidence {a.confidence:g}; "
                f"test: {a.test}; GDP mu >= {a.mu_lower_bound:.4f}{orc}{pw}")


def action_power_text(power: PowerCheck) -> str:
    """The power part of an action audit's summary (docs/auditing.md#power-of-the-action-audit): against WHICH leakier
    version, what it certified, and the trials an inconclusive audit would need when the estimate can say."""
    from .action_power import CRITERION

    if power.criterion != CRITERION or power.achievable_lower_bound is None:   # not simulated, or no simulation asked
        return f"power: NO ({power.description})"
    need = ("" if power.has_power else
            (f"; about {power.trials_needed} trials/side would give power (estimate)" if power.trials_needed else
             "; no trial count estimated to give power"))
    return (f"power: {'yes' if power.has_power else 'NO'} against the same learner with its noise scaled until its log "
            f"accounts 2 x the claim, simulated (median eps_lb {power.achievable_lower_bound:.3f}{need}; power against "
            "that leakier version only, not against every leak)")


def claim_tested(privacy: str, observe: str) -> str:
    """The claim an audit of ``privacy`` observing ``observe`` tests (docs/auditing.md#what-each-audit-tests): under JDP
    the released statistics' DP is a LEMMA of the proof (the billboard lemma turns it into JDP), the actions sent to
    users 2..K are JDP's own output; under LDP a user's reports are the output."""
    if privacy == "ldp":
        return "LDP itself (user 1's reports are the output)"
    if observe == "actions":
        return "JDP itself (the actions sent to users 2..K)"
    return "the DP of the released statistics (the lemma the JDP proof turns into JDP by the billboard lemma)"


def no_power_criterion(n_eval: int, alpha: float, delta: float, claim: float) -> PowerCheck:
    """The power criterion of a black-box (actions) learner audit run with ``simulate_power=False``: none. Without
    the exact likelihood ratio of the observation there is no oracle to say what this many trials could see, and no
    leakier version was simulated (:mod:`privacct.audits.action_power`), so such an audit can fail but never pass."""
    return PowerCheck(criterion="none (black-box actions)",
                      description="black-box action observation, no leakier version simulated (simulate_power=False): "
                                  "no power criterion; the audit can show a violation but never that there is none",
                      reference_epsilon=2.0 * claim, achievable_lower_bound=0.0, has_power=False, trials_needed=None)


def audit_learner(config: RunConfig | str, *, observe: str = "released", fixed_users: bool = True,
                  trials: int | None = None, confidence: float = 0.95, seed: int = 0, noise_multiplier: float = 1.0,
                  mutant: str | None = None, coins_seed: int = 0, on_violation: str = "raise",
                  chunk_size: int | None = None, executor: str = "auto", scheduler: Any = None,
                  workers: int | None = None, name: str = "", simulate_power: bool = True,
                  **fields: Any) -> LearnerAuditResult:
    """Audit a learner's claim on canary A vs canary B (see module docstring).

    ``config``: the :class:`~privacct.algorithms.contract.RunConfig` audited, passed whole; its claim (epsilon, delta) is
    the one audited, whatever its calibration (``paper`` audits the printed constants). The KEYWORD FORM,
    ``audit_learner("ucb-vi", privacy="jdp", episodes=4, ...)``, gives a learner name and the configuration's fields
    as keywords (``privacy`` default jdp, ``epsilon`` 1, ``delta`` 0, ``calibration`` tight, ``episodes``,
    ``horizon``, ``env``, ``options``, ``bonus_scale``), read by :func:`audit_config` into one RunConfig: ``episodes``
    None is the learner's audit setting (docs/auditing.md#audit-configurations), which then also gives ``trials``
    when unset.

    ``trials`` runs per side (each one seed of a batch; default 2000, or the audit setting's in the keyword form
    without ``episodes``). ``mutant``: a planted policy bug the learner implements (``LearnerSpec.mutants``;
    :class:`privacct.algorithms.contract.AuditHook`). ``noise_multiplier`` < 1 runs the planted learner-level bug
    (:class:`privacct.algorithms.contract.AuditHook`). ``on_violation``: ``raise`` (default) raises
    :class:`SandwichViolation` when eps_lb exceeds the accounted eps of the same configuration; ``report`` returns the
    result with ``sandwich_ok`` False (planted bugs).

    ``observe="actions"`` (black-box): when the audit does not fail, its power is SIMULATED against the same learner
    with its noise scaled until its log accounts 2 x the claim, audited 3 times by the same pipeline
    (:mod:`privacct.audits.action_power`, docs/auditing.md#power-of-the-action-audit; 4 x the runs in all); it
    ``passes`` only with that power, else ``inconclusive``. ``simulate_power`` False skips the simulation (no power
    criterion: it can fail, never pass).
    """
    cfg = resolve_audit_config(config, fields, caller="audit_learner")
    if trials is None and not isinstance(config, RunConfig) and fields.get("episodes") is None:
        from privacct.algorithms.registry import get_learner

        trials = get_learner(config).audit_configuration().trials
    trials = 2000 if trials is None else trials
    if observe not in OBSERVATIONS:
        raise PrivacctError(f"observe must be one of {', '.join(OBSERVATIONS)}, got {observe!r}")
    if not isinstance(fixed_users, (bool, np.bool_)):
        raise PrivacctError(f"fixed_users must be True or False, got {fixed_users!r}")
    if on_violation not in ("raise", "report"):
        raise PrivacctError(f"on_violation must be raise or report, got {on_violation!r}")
    if not isinstance(simulate_power, (bool, np.bool_)):
        raise PrivacctError(f"simulate_power must be True or False, got {simulate_power!r}")
    mech = LearnerMechanism(cfg, observe, bool(fixed_users), coins_seed, noise_multiplier, mutant)
    mech.hook("A")  # validates noise_multiplier, mutant and coins_seed before anything runs
    acc_name, acc = accounted_epsilon(cfg)
    label = name or (f"{cfg.algorithm} {cfg.privacy} {cfg.calibration} K={cfg.episodes}"
                     + (f" H={cfg.horizon}" if cfg.horizon else "") + f" observe={observe}"
                     + ("" if fixed_users else " fresh-users")
                     + ("" if noise_multiplier == 1 else f" noise x{noise_multiplier:g}")
                     + ("" if mutant is None else f" mutant {mutant}"))
    common = dict(epsilon=cfg.epsilon, delta=cfg.delta, trials=trials, confidence=confidence, seed=seed,
                  chunk_size=chunk_size or LEARNER_CHUNK, executor=executor, scheduler=scheduler, workers=workers,
                  name=label)
    notes: list[str] = []
    oracle = None
    if observe == "released":
        layout = mech.layout()
        st = np_statistic(layout)
        structure = loss_structure(layout, mech.pilot())
        criterion = learner_power_criterion(structure, noise_factor_for(cfg, acc_name), label=label)
        res = run_audit(mech, FixedPair("A", "B"), tester=StatisticTester(statistic=st), power=criterion, **common)
        n_eval = res.trials - res.trials // 2
        alpha = (1.0 - res.confidence) / (len(DIRECTIONS) * res.pairs)
        delta = cfg.delta
        mu_eps = gdp_epsilon(structure.mu, delta) if (structure.mu > 0 and not structure.laplace and delta > 0) else None
        oracle = OracleFigure(oracle_epsilon(structure, n_eval, alpha, delta), structure.describe(), layout.exact,
                              structure.mu, mu_eps)
        if not layout.exact:
            notes.append("the observation's means or presence vary by trial: the oracle uses the pilot's median structure")
        derived = mech.derived()
        if derived is not None:
            notes.append(f"observed through privacct's primitives: {len(derived.means)} release(s) of user 1")
            if derived.left_out:
                notes.append("not observed (the audit sees the other releases; sound, less power): "
                             + "; ".join(f"{n}: {r}" for n, r in derived.left_out))
    elif not simulate_power:
        res = audit_mechanism(mech, "A", "B", power=no_power_criterion, **common)
        notes.append("black-box actions: no exact likelihood ratio, no oracle figure, no power criterion (inconclusive "
                     "unless it fails)")
    else:
        from .action_power import action_reference, not_simulated, simulate_action_power

        reference = action_reference(cfg, acc_name, noise_multiplier)   # refused before anything runs if there is none
        res = audit_mechanism(mech, "A", "B", power=no_power_criterion, **common)
        if res.verdict == "fails":
            check = not_simulated("the audit certified a violation (fails needs no power)")
        else:
            check = simulate_action_power(mech, reference, claim=cfg.epsilon, delta=cfg.delta, trials=res.trials,
                                          confidence=res.confidence, seed=seed, chunk_size=chunk_size or LEARNER_CHUNK,
                                          executor=executor, scheduler=scheduler, workers=workers)
        res = replace(res, power=check, verdict=decide(res.epsilon_lower_bound, res.claimed_epsilon, check))
        notes.append("black-box actions: no exact likelihood ratio, no oracle figure; power simulated against the same "
                     f"learner with its noise x {reference.factor:.4g} (its log accounts {reference.reference_epsilon:g}"
                     " = 2 x the claim): power against that version only, not against every leak "
                     "(docs/auditing.md#power-of-the-action-audit)")
    out = LearnerAuditResult(res, cfg, observe, bool(fixed_users), float(noise_multiplier), acc_name, float(acc), oracle,
                             res.power, res.verdict, tuple(notes))
    if not out.sandwich_ok and on_violation == "raise":
        raise SandwichViolation(
            f"{label}: the audit certifies eps >= {res.epsilon_lower_bound:.4f} but the learner's own log accounts "
            f"{acc:.4f} ({acc_name}) for the same configuration: the code leaks more than its log declares "
            "(or an accountant is wrong)")
    return out


@dataclass
class StatisticTester(ThresholdTester):
    """:class:`privacct.audits.testers.ThresholdTester` with ONE statistic fixed before any sample is seen.

    Used with :func:`np_statistic`: for two fixed datasets the likelihood ratio is the Neyman-Pearson
    statistic, and the default candidates only add risk (the pooled-covariance LDA projection is
    fitted and scored on the same selection half, overfits and wins the selection with a test that
    certifies less). Thresholds, directions, scores, selection and evaluation are the parent's.
    """

    statistic: Statistic | None = None

    def candidate_statistics(self, x_sel, y_sel) -> list:
        return [self.statistic]


def strongest_observation(algorithm: str, privacy: str) -> tuple[str, bool]:
    """(observe, fixed_users) a report should audit ``algorithm`` under ``privacy`` with: every release
    that contains user 1, other users fixed (every family implements it through the contract)."""
    from privacct.algorithms.registry import get_learner

    if privacy not in ("jdp", "ldp"):
        raise PrivacctError(f"privacy must be jdp or ldp for an audit, got {privacy!r}")
    get_learner(algorithm)
    return "released", True


__all__ = ["BlockLayout", "audit_config", "check_audit_config", "claim_tested", "Layout", "LearnerAuditResult", "LearnerMechanism", "OracleFigure", "SandwichViolation",
           "StatisticTester", "accounted_epsilon", "audit_learner", "learner_config", "loss_structure",
           "noise_factor_for", "np_statistic", "strongest_observation"]
