"""The learner contract, written once: every learner family implements it, so that ``privacct run``,
``reproduce``, ``audit`` and ``report`` treat tabular, linear-mixture and linear-MDP learners alike.

A family package (``privacct.algorithms.tabular``, ``...linear_mixture``, ``...linear_mdp``, or a
third party's own package) exports ``LEARNERS: dict[str, LearnerSpec]`` and names it in ONE
entry-point line of its pyproject (group ``privacct.learners``); :mod:`privacct.algorithms.registry`
merges them. Everything else a command needs to know about a learner (paper and test settings, its
audit setting, constants, memory model, report scale, figure reproduction) lives on its
:class:`LearnerSpec`, with safe defaults where a third party has nothing to say; nothing outside the
learner's own files names it. The contract test (``tests/algorithms/test_contract.py``) then runs over
it (docs/extending.md).

Typed records at the boundary (validated here, in one place):

* :class:`RunConfig` -- one learner configuration (the family options stay a tuple of pairs so the
  record is hashable; each family validates its own option names and values), validated once where it is made
  and passed whole (issue 22): a command makes one, every step reads it, its declared log is built once and kept
  on it (:meth:`LearnerSpec.declared_log`), a summary serialises it (:meth:`RunConfig.to_dict`), and the records
  that hold a configuration (a paper setting, a learner audit, an audit's result) hold the RunConfig and read its
  fields through it (:class:`ConfigFields`);
* :class:`AuditHook` -- the audit hook: which canary is user 1, whether users 2..K are fixed, the
  agent's coins, and the planted-bug noise multiplier. It is passed explicitly,
  ``spec.run(config, seeds, audit=AuditHook("A"))``, never through ``RunConfig.options``;
* :class:`Observation` / :class:`ObservedBlock` -- what an audited run returns: every release that
  contains user 1, with its noiseless value under each canary and its noise model, so that an
  auditor can build the exact likelihood ratio and the exact privacy-loss distribution;
* :class:`RunResult` -- regret, the declared log, the ledger and (audited runs) the observation;
* :class:`ConstantSet` -- a named set of non-privacy constants (``theory``: the paper's; ``tuned``: the
  multipliers the figures use, with how they were chosen); ``LearnerSpec.constants`` holds a learner's
  sets and ``LearnerSpec.default_constants`` the one ``privacct run`` uses (docs/learners.md#constant-sets).

AUDIT SEMANTICS (the same for every family)

* Neighbours: user 1 is canary A (dataset D) or canary B (D'); :mod:`privacct.algorithms.neighbours`
  says, per privacy model and paper, which pairs are valid and what each release group's worst-case
  change is. Under JDP a user is a *response function* (state and reward/cost responses to the
  actions the agent prescribes); under LDP any two trajectories are neighbours.
* Coins: with a hook, the agent's own coins (tie-breaking, action sampling) and, with fixed users,
  the environment stream come from ``SeedSequence(coins_seed)``, the same in every trial and on both
  sides; only the privacy noise comes from the trial's seed. The log's accounting holds for every
  value of the coins (its sensitivities bound any prescribed actions), so the audit lower-bounds a
  mechanism the log upper-bounds.
* Fixed users (default): users 2..K are canary A's response function. D and D' are then two fixed
  neighbouring datasets and the only randomness left is the privacy noise. REGRET IS MEANINGLESS
  in this mode (the data do not come from the environment); it is computed for shape only.
* Observation: for every release that contains user 1 (JDP trees: the nodes [1, 2^j], each one
  dyadic node; fresh releases: all of them; LDP: user 1's own report) the learner reports the
  released value minus the exact contribution of users 2..t. The colluding other users know their
  own data and the history, so this is a post-processing of the transcript; conditional on the
  history it equals user 1's contribution plus that release's fresh noise, so the product over
  releases of the per-release densities is the exact likelihood ratio of the whole transcript
  (docs/auditing.md#fixed-other-users: conditional on the release prefix the other users' data coincide).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol

import numpy as np

from privacct.errors import PrivacctError, check_count, check_positive
from privacct.ledger import Ledger
from privacct.log import MechanismLog
from privacct.rng import child_generators, shared_generators
from privacct.tap import AuditTap, Coupling, current_pin, tapping

if TYPE_CHECKING:  # pragma: no cover
    from .neighbours import NeighbourSpec

PRIVACY_CHOICES = ("none", "jdp", "ldp")
CONSTANT_SETS = ("theory", "tuned")
CALIBRATIONS = ("paper", "tight")
CANARIES = ("A", "B")
#: Noise models of an observed block: ``laplace`` (l1 sensitivity, scale b) and ``gaussian`` (independent
#: coordinates, std sigma; a symmetric Gaussian matrix is observed through its upper triangle).
BLOCK_MECHANISMS = ("laplace", "gaussian")
#: The observed block's noise model for each log mechanism.
OBSERVED_AS = {"laplace": "laplace", "gaussian": "gaussian", "symmetric-gaussian-matrix": "gaussian"}


@dataclass(frozen=True)
class RunConfig:
    """One learner configuration.

    ``privacy``: none | jdp | ldp; ``epsilon`` > 0 and ``delta`` in [0, 1) (the claim);
    ``calibration``: ``paper`` (printed constants) or ``tight`` (corrected sensitivities, noise
    from :func:`privacct.calibrate.calibrate_log` for the same claim); ``episodes`` K >= 1;
    ``horizon`` H (None: the environment's default); ``bonus_scale``: multiplier on the
    confidence/bonus width (a tunable, not a privacy parameter); ``options``: family-specific
    (name, value) pairs, validated by the family.
    """

    algorithm: str
    privacy: str = "none"
    epsilon: float = 1.0
    delta: float = 0.0
    calibration: str = "paper"
    episodes: int = 1000
    env: str | None = None
    horizon: int | None = None
    bonus_scale: float = 1.0
    options: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        """Validates every field once, here (issue 22), with one line naming the field and its allowed range; the
        family validates only its own option names and values."""
        if not isinstance(self.algorithm, str) or not self.algorithm:
            raise PrivacctError(f"algorithm must be a learner name, got {self.algorithm!r}")
        if self.privacy not in PRIVACY_CHOICES:
            raise PrivacctError(f"privacy must be one of {', '.join(PRIVACY_CHOICES)}, got {self.privacy!r}")
        for name in ("epsilon", "delta", "bonus_scale"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
                raise PrivacctError(f"{name} must be a finite number, got {v!r}")
            object.__setattr__(self, name, float(v))
        if not self.epsilon > 0:
            raise PrivacctError(f"epsilon must be a finite number > 0, got {self.epsilon!r}")
        if not 0.0 <= self.delta < 1.0:
            raise PrivacctError(f"delta must be in [0, 1), got {self.delta!r}")
        if self.bonus_scale < 0:
            raise PrivacctError(f"bonus_scale must be a finite number >= 0, got {self.bonus_scale!r}")
        if self.calibration not in CALIBRATIONS:
            raise PrivacctError(f"calibration must be one of {', '.join(CALIBRATIONS)}, got {self.calibration!r}")
        object.__setattr__(self, "episodes", check_count("episodes", self.episodes))
        if self.horizon is not None:
            object.__setattr__(self, "horizon", check_count("horizon", self.horizon))
        if self.env is not None and (not isinstance(self.env, str) or not self.env):
            raise PrivacctError(f"env must be an environment name or None, got {self.env!r}")
        opts = self.options
        if not isinstance(opts, tuple) or not all(isinstance(o, tuple) and len(o) == 2 and isinstance(o[0], str)
                                                  for o in opts):
            raise PrivacctError(f"options must be a tuple of (name, value) pairs, got {opts!r}")

    def option(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready fields, in field order (``options`` as a dict): what a run summary, a paper
        setting and an audit's ``--json`` serialise, never copied field by field."""
        return {f.name: (dict(self.options) if f.name == "options" else getattr(self, f.name)) for f in dataclasses.fields(self)}

    def log_key(self, log_options: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
        """A cheap hashable of what a family's declared log reads of this record: every field as (name, value) but
        ``bonus_scale`` (a multiplier on the bonus width, never in a log), ``options`` narrowed to those named in
        ``log_options`` (sorted by name). ``RunConfig(**dict(key))`` is the record with the others neutralised
        (bonus_scale 1), for a log cache to build from on a miss only. Derived once per record and per
        ``log_options`` (kept on it outside its fields, as its declared logs are)."""
        keys = self.__dict__.setdefault(_LOG_KEYS, {})
        if log_options not in keys:
            opts = tuple(sorted((k, v) for k, v in self.options if k in log_options))
            keys[log_options] = tuple((f, opts if f == "options" else getattr(self, f)) for f in RUN_FIELDS
                                      if f != "bonus_scale")
        return keys[log_options]

    def declared_log(self, build: Callable[["RunConfig"], MechanismLog | None]) -> MechanismLog | None:
        """``build(self)``, built once per record: the log is kept on this RunConfig (per builder; outside its fields,
        so equality, hashing and pickling ignore it), so a record passed whole builds its log once however many steps
        read it (issue 22). A refusal is not kept. Callers use :meth:`LearnerSpec.declared_log`."""
        logs = self.__dict__.setdefault(_LOGS, {})
        if build not in logs:
            logs[build] = build(self)
        return logs[build]

    def __getstate__(self) -> dict[str, Any]:
        # the kept logs stay behind (a builder may be a closure, and a worker builds its own), and so do the log keys
        return {k: v for k, v in self.__dict__.items() if k not in (_LOGS, _LOG_KEYS)}


#: The instance attribute that keeps a RunConfig's declared logs (:meth:`RunConfig.declared_log`).
_LOGS = "_declared_logs"
#: The instance attribute that keeps a RunConfig's log cache keys (:meth:`RunConfig.log_key`).
_LOG_KEYS = "_log_keys"
#: RunConfig's field names (a record that holds a RunConfig reads them from it: :class:`ConfigFields`).
RUN_FIELDS = tuple(f.name for f in dataclasses.fields(RunConfig))


class ConfigFields:
    """Mixin of a record that holds a :class:`RunConfig` as its field ``config`` (a paper setting, a learner audit,
    an audit's result): the configuration's fields read as the record's own (``audit.episodes`` is
    ``audit.config.episodes``), so they are held once and never copied into loose fields."""

    def __getattr__(self, name: str) -> Any:
        if name in RUN_FIELDS:
            try:
                config = object.__getattribute__(self, "config")
            except AttributeError:   # not yet set (unpickling)
                raise AttributeError(name) from None
            return getattr(config, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class ScaledNoiseGenerator(np.random.Generator):
    """A Generator whose standard normal and standard exponential draws are multiplied by ``factor``.

    privacct's primitives draw Laplace(b) as b (E1 - E2) and N(0, sigma^2) as sigma Z from these two
    methods, so every privacy noise value is ``factor`` times the declared one while the ledger still
    records the declared scale: the PLANTED LEARNER-LEVEL BUG of :attr:`AuditHook.noise_multiplier`
    (the accountant and the ledger cannot see it; only an audit can). Used for nothing else.
    """

    def __init__(self, seed: np.random.SeedSequence, factor: float) -> None:
        super().__init__(np.random.PCG64(seed))
        self.factor = float(factor)

    def standard_normal(self, *args, **kwargs):
        return self._scaled(super().standard_normal(*args, **kwargs), kwargs)

    def standard_exponential(self, *args, **kwargs):
        return self._scaled(super().standard_exponential(*args, **kwargs), kwargs)

    def _scaled(self, out, kwargs):
        target = kwargs.get("out")
        if target is not None:
            target *= self.factor
            return target
        return out * self.factor


def child_sequence(seed: np.random.SeedSequence, j: int) -> np.random.SeedSequence:
    """Child ``j`` of ``seed`` without advancing its spawn counter (what ``seed.spawn(j + 1)[j]`` gives)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (j,), pool_size=seed.pool_size)


@dataclass(frozen=True)
class CanaryPlan:
    """The canaries of a ONE-RUN audit (docs/auditing.md#one-run-audits): ``users`` (1-based, increasing) are
    canary users whose data is canary A's or canary B's response by their ``bits`` ("A" | "B", one per user,
    drawn by the auditor from its seed); every other user is the environment's."""

    users: tuple[int, ...]
    bits: tuple[str, ...]

    def __post_init__(self) -> None:
        users = tuple(int(u) for u in self.users)
        bits = tuple(self.bits)
        if not users or len(users) != len(bits):
            raise PrivacctError(f"canary plan: users and bits must be non-empty and of one length, got {len(users)} and "
                                f"{len(bits)}")
        if any(u < 1 for u in users) or any(b >= a for a, b in zip(users[1:], users[:-1], strict=True)):
            raise PrivacctError("canary plan: users must be increasing integers >= 1")
        if any(b not in CANARIES for b in bits):
            raise PrivacctError(f"canary plan: bits must be A or B, got {sorted(set(bits) - set(CANARIES))}")
        object.__setattr__(self, "users", users)
        object.__setattr__(self, "bits", bits)

    def bit(self, user: int) -> str | None:
        i = int(np.searchsorted(np.asarray(self.users), user))
        return self.bits[i] if i < len(self.users) and self.users[i] == user else None


@dataclass(frozen=True)
class AuditHook:
    """The audit hook of one run (see the module docstring).

    ``canary``: "A" (D) or "B" (D'), user 1's data; ``fixed_users``: users 2..K are canary A's response
    function (True, default) or sample the environment (False: a mixture of fixed pairs, still sound,
    noisier); ``coins_seed``: integer >= 0, the seed of the agent's coins (and, with fixed users, of
    the environment stream), the same in every trial; ``noise_multiplier`` in (0, 1]: 1 for a faithful
    run; < 1 is the planted learner-level bug (every privacy draw multiplied by it while the ledger
    records the declared scale; :class:`ScaledNoiseGenerator`).
    """

    canary: str
    fixed_users: bool = True
    coins_seed: int = 0
    noise_multiplier: float = 1.0
    #: A PLANTED policy bug by name (``LearnerSpec.mutants`` lists those a learner implements), e.g.
    #: ``bonus-on-exact-counts``: the log, the ledger and the released statistics stay as declared, only the
    #: actions leak (docs/auditing.md#planted-bugs). None: a faithful run.
    mutant: str | None = None
    #: A ONE-RUN audit's canaries (:class:`CanaryPlan`); then ``canary`` and ``fixed_users`` do not apply: the plan's
    #: users play their bits, every other user is the environment's.
    plan: CanaryPlan | None = None
    #: The BILLBOARD CHECK's coupling of this run with another (:class:`privacct.tap.Coupling`;
    #: docs/auditing.md#the-billboard-check): the primitives record (canary A) or replay (canary B) user 1's values.
    #: None: not coupled.
    coupling: Coupling | None = None

    def role(self, user: int) -> str | None:
        """Whose response user ``user`` (1-based) gives: "A" / "B" for a canary or a fixed user, None for the
        environment's (docs/learners.md#audit-hook)."""
        if self.plan is not None:
            return self.plan.bit(user)
        if user == 1:
            return self.canary
        return "A" if self.fixed_users else None

    def __post_init__(self) -> None:
        if self.coupling is not None and not isinstance(self.coupling, Coupling):
            raise PrivacctError(f"audit.coupling must be a privacct.tap.Coupling or None, got {type(self.coupling).__name__}")
        if self.coupling is not None and self.plan is not None:
            raise PrivacctError("audit.coupling does not apply to a one-run audit (audit.plan)")
        if self.plan is not None and not isinstance(self.plan, CanaryPlan):
            raise PrivacctError(f"audit.plan must be a CanaryPlan or None, got {type(self.plan).__name__}")
        if self.mutant is not None and not (isinstance(self.mutant, str) and self.mutant):
            raise PrivacctError(f"audit.mutant must be None or a mutant name, got {self.mutant!r}")
        if self.canary not in CANARIES:
            raise PrivacctError(f"audit.canary must be one of {', '.join(CANARIES)}, got {self.canary!r}")
        if not isinstance(self.fixed_users, (bool, np.bool_)):
            raise PrivacctError(f"audit.fixed_users must be True or False, got {self.fixed_users!r}")
        object.__setattr__(self, "fixed_users", bool(self.fixed_users))
        object.__setattr__(self, "coins_seed", check_count("audit.coins_seed", self.coins_seed, minimum=0))
        m = check_positive("audit.noise_multiplier", self.noise_multiplier)
        if m > 1:
            raise PrivacctError(f"audit.noise_multiplier must be in (0, 1], got {self.noise_multiplier!r}")
        object.__setattr__(self, "noise_multiplier", m)

    def with_canary(self, canary: str) -> "AuditHook":
        return AuditHook(canary, self.fixed_users, self.coins_seed, self.noise_multiplier, self.mutant, self.plan)


def noise_generators(seeds: list[np.random.SeedSequence], j: int, audit: AuditHook | None) -> list[np.random.Generator]:
    """The privacy-noise Generators of a batch: child ``j`` of every seed (planted bug: scaled draws)."""
    if audit is not None and audit.noise_multiplier != 1.0:
        return [ScaledNoiseGenerator(child_sequence(s, j), audit.noise_multiplier) for s in seeds]
    return child_generators(seeds, j)   # = default_rng(child_sequence(s, j)) per seed, hashed for the batch at once


def stream_generators(seeds: list[np.random.SeedSequence], j: int, audit: AuditHook | None, *,
                      fixed: bool) -> list[np.random.Generator]:
    """Non-privacy Generators (agent coins, environment) of a batch: child ``j`` of every seed, or, in
    an audited run with ``fixed`` True, child ``j`` of ``SeedSequence(audit.coins_seed)`` for every
    trial (the same coins on both sides and in every trial)."""
    if audit is not None and fixed:   # one child for every trial (generate_state has no side effect: same state each)
        child = child_sequence(np.random.SeedSequence(audit.coins_seed), j)
        return shared_generators(child, len(seeds))   # = [default_rng(child) for _ in seeds], hashed once
    return child_generators(seeds, j)


@dataclass(frozen=True, eq=False)
class ObservedBlock:
    """One release that contains user 1, as an auditor sees it.

    ``name``: e.g. ``"counts node [1, 2]"``; ``group``: the log's release group; ``mechanism``:
    ``laplace`` | ``gaussian`` (:data:`BLOCK_MECHANISMS`); ``scale``: the DECLARED per-coordinate
    scale (Laplace b or Gaussian sigma, the log's ``noise_scale``); ``values`` (B, m): the released
    value minus the exact contribution of users 2..t (module docstring), i.e. user 1's contribution
    plus the release's noise; ``mean_a`` / ``mean_b`` ((m,) or (B, m)): the noiseless value of
    ``values`` had user 1 been canary A / canary B, given the same history (constant for static
    releases; per trial where the statistic depends on released values, e.g. the value function in a
    response); ``present`` ((B,) bool or None = always): whether the release happened in that trial
    (data-dependent update times). Absent releases carry zeros.
    """

    name: str
    group: str
    mechanism: str
    scale: float
    values: np.ndarray
    mean_a: np.ndarray
    mean_b: np.ndarray
    present: np.ndarray | None = None

    @property
    def size(self) -> int:
        return int(self.values.shape[1])

    @property
    def varying(self) -> bool:
        """Whether the noiseless means differ by trial (then they travel with the samples)."""
        return self.mean_a.ndim == 2 or self.mean_b.ndim == 2


@dataclass(frozen=True, eq=False)
class Observation:
    """Everything an audited run releases about user 1 (:class:`ObservedBlock` each), and the actions
    sent to users 2..K (``actions`` (B, K - 1, H), the black-box JDP output M_{-1}; never user 1's)."""

    canary: str
    blocks: tuple[ObservedBlock, ...]
    actions: np.ndarray | None = None

    @property
    def batch(self) -> int:
        return int(self.blocks[0].values.shape[0]) if self.blocks else 0

    def block(self, name: str) -> ObservedBlock:
        for b in self.blocks:
            if b.name == name:
                return b
        raise PrivacctError(f"observation has no block {name!r}; blocks: {', '.join(b.name for b in self.blocks)}")

    def groups(self) -> list[str]:
        return sorted({b.group for b in self.blocks})


class RunFn(Protocol):
    def __call__(self, config: RunConfig, seeds: list[np.random.SeedSequence], *,
                 audit: AuditHook | None = None, progress: Callable[[int], None] | None = None) -> "RunResult": ...


@dataclass
class RunResult:
    """What one batched run returns. ``regret`` is per-episode exact regret, shape (n_seeds, K);
    ``observation`` is set exactly when the run had an :class:`AuditHook`; ``info`` holds diagnostics
    only (never part of the contract)."""

    config: RunConfig
    regret: np.ndarray
    log: MechanismLog | None
    ledger: Ledger | None
    info: dict[str, Any] = field(default_factory=dict)
    observation: Observation | None = None
    #: Audited runs: what privacct's primitives recorded of user 1 (:class:`privacct.tap.AuditTap`); an auditor
    #: derives the observation from it when the learner returns none (:func:`derived_observation`).
    tap: AuditTap | None = None

    @property
    def cumulative_regret(self) -> np.ndarray:
        return np.cumsum(self.regret, axis=1)


def check_seeds(seeds) -> list[np.random.SeedSequence]:
    seeds = list(seeds)
    if not seeds or not all(isinstance(s, np.random.SeedSequence) for s in seeds):
        raise PrivacctError("seeds must be a non-empty list of numpy SeedSequence (privacct.rng.spawn_sequences)")
    return seeds


def check_observation(obs: Observation, log: MechanismLog, batch: int, audit: AuditHook) -> None:
    """The observation agrees with the declared log and the batch; raises PrivacctError naming the block."""
    if not isinstance(obs, Observation):
        raise PrivacctError(f"an audited run must return an Observation, got {type(obs).__name__}")
    if obs.canary != audit.canary:
        raise PrivacctError(f"observation is of canary {obs.canary!r}, the hook asked for {audit.canary!r}")
    if not obs.blocks:
        raise PrivacctError("observation has no block: an audited private run must report the releases that contain user 1")
    names = set()
    for b in obs.blocks:
        where = f"observation block {b.name!r}"
        if b.name in names:
            raise PrivacctError(f"{where}: duplicate block name")
        names.add(b.name)
        try:
            g = log.group(b.group)
        except Exception:  # noqa: BLE001 - the log's own error is about a name; ours names the block
            raise PrivacctError(f"{where}: group {b.group!r} is not a release group of log {log.name!r}") from None
        if b.mechanism not in BLOCK_MECHANISMS or OBSERVED_AS[g.mechanism] != b.mechanism:
            raise PrivacctError(f"{where}: mechanism {b.mechanism!r} does not observe group {g.name!r} ({g.mechanism})")
        if not math.isclose(b.scale, g.noise_scale, rel_tol=1e-12):
            raise PrivacctError(f"{where}: scale {b.scale!r} differs from the declared noise_scale {g.noise_scale!r}")
        if b.values.ndim != 2 or b.values.shape[0] != batch:
            raise PrivacctError(f"{where}: values must have shape ({batch}, m), got {b.values.shape}")
        m = b.values.shape[1]
        for nm, mean in (("mean_a", b.mean_a), ("mean_b", b.mean_b)):
            if mean.shape not in ((m,), (batch, m)):
                raise PrivacctError(f"{where}: {nm} must have shape ({m},) or ({batch}, {m}), got {mean.shape}")
        if g.dimension is not None and m != g.dimension:
            raise PrivacctError(f"{where}: {m} observed values, the log declares dimension {g.dimension}")
        if b.present is not None and (b.present.shape != (batch,) or b.present.dtype != bool):
            raise PrivacctError(f"{where}: present must be a bool array of shape ({batch},)")
        if not np.all(np.isfinite(b.values)):
            raise PrivacctError(f"{where}: non-finite values")


def check_tap(tap: AuditTap, log: MechanismLog, batch: int, learner: str) -> None:
    """An audited run without an observation of its own: the primitives must have recorded at least one release
    of user 1, every record in a release group of the log at its declared scale; raises PrivacctError."""
    if not tap.records:
        why = "; ".join(f"{u.group} (users {u.users[0]}..{u.users[1]}): {u.reason}" for u in tap.unobserved)
        raise PrivacctError(f"learner {learner!r}: an audited run observed no release of user 1: its privacy draws over "
                            "user 1 went through no primitive that can tell user 1's share apart (a TreeCounter with one "
                            "user per leaf, or add_noise with users=(1, 1); docs/extending.md#observations)"
                            + (f"; unobserved: {why}" if why else ""))
    for r in tap.records:
        where = f"tap record {r.name!r}"
        try:
            g = log.group(r.group)
        except Exception:  # noqa: BLE001 - the log's own error is about a name; ours names the record
            raise PrivacctError(f"{where}: group {r.group!r} is not a release group of log {log.name!r}") from None
        if OBSERVED_AS[g.mechanism] != r.mechanism:
            raise PrivacctError(f"{where}: mechanism {r.mechanism!r} does not observe group {g.name!r} ({g.mechanism})")
        rows = batch if r.rows is None else len(r.rows)
        if r.values.shape[0] != rows or (r.rows is not None and (r.rows.min() < 0 or r.rows.max() >= batch)):
            raise PrivacctError(f"{where}: values must have {rows} rows (one per seed it covers, of {batch}), got "
                                f"{r.values.shape}")
        if g.dimension is not None and r.values.shape[1] != g.dimension:
            raise PrivacctError(f"{where}: {r.values.shape[1]} observed values, the log declares dimension {g.dimension}")


@dataclass(frozen=True)
class Explicit:
    """A DerivedMeans entry whose means travel with every run's records (reported by the learner with
    :func:`privacct.tap.user_contribution`; they may vary by trial, and the release may be made by some seeds only):
    ``width`` values per release, its ``group``, observed ``mechanism`` and ``scale`` (from the pilot)."""

    width: int
    group: str
    mechanism: str
    scale: float
    #: the learner names the seeds that make the release (``rows``): it may be absent in some
    per_seed: bool = False


def _collapse(a: np.ndarray) -> np.ndarray:
    """(m,) when every trial has the same row, else the (B, m) array (an ObservedBlock's means)."""
    return a[0].copy() if np.all(a == a[0]) else a


def _explicit_block(name: str, spec: "Explicit", records: list, batch: int) -> ObservedBlock:
    """The block of a release whose records carry both canaries' means: rows filled where the release happened
    (``present``), zeros elsewhere; no record at all in this run is a release no seed made."""
    values, mean_a, mean_b = (np.zeros((batch, spec.width)) for _ in range(3))
    present = np.zeros(batch, dtype=bool)
    for r in records:
        rows = np.arange(batch) if r.rows is None else r.rows
        if r.values.shape != (len(rows), spec.width) or np.any(present[rows]) or \
                (r.group, r.mechanism, r.scale) != (spec.group, spec.mechanism, spec.scale):
            raise PrivacctError(f"release {name!r}: its records overlap, or change width, group or scale between runs")
        values[rows], mean_a[rows], mean_b[rows], present[rows] = r.values, r.mean_a, r.mean_b, True
    if spec.per_seed:   # a release made by some seeds only: its presence flags always travel
        return ObservedBlock(name, spec.group, spec.mechanism, spec.scale, values, mean_a, mean_b, present)
    if not present.all():
        raise PrivacctError(f"release {name!r}: made by every seed in the pilot but not in this run")
    return ObservedBlock(name, spec.group, spec.mechanism, spec.scale, values, _collapse(mean_a), _collapse(mean_b))


def _constant(a: np.ndarray) -> np.ndarray | None:
    """The common row of ``a`` (B, m), or None when the rows differ."""
    return a[0].copy() if np.all(a == a[0]) else None


@dataclass(frozen=True)
class DerivedMeans:
    """For an observation derived from the primitives (:mod:`privacct.tap`): each observed release's noiseless
    value under canary A and canary B (``means``: name -> (mean_a, mean_b)), and the releases over user 1 left
    out with the reason (``left_out``: (name or group, reason))."""

    means: tuple[tuple[str, np.ndarray, np.ndarray], ...]
    left_out: tuple[tuple[str, str], ...]

    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _, _ in self.means)


def pair_taps(tap_a: AuditTap, tap_b: AuditTap) -> DerivedMeans:
    """Pair the records of a canary-A run and a canary-B run of the same configuration and coins: a release is
    observed when both sides recorded it and user 1's contribution to it is the same in every trial of a side
    (it does not depend on the history: with the contract's fixed coins and fixed other users, user 1's data
    are fixed before any release). A release whose contribution varies by trial is left out, with the reason
    (its exact likelihood ratio would need user 1's contribution under the other canary given the same
    history, which no primitive sees); so is a release recorded on one side only. Observing fewer releases is
    sound (a post-processing of the transcript) and only costs power."""
    b_by_name = {r.name: r for r in tap_b.records}
    means, left = [], []
    explicit: set[str] = set()
    for r in tap_a.records:
        if r.mean_a is not None:   # the learner reported both canaries' contributions: no pairing needed
            if r.name not in explicit:
                explicit.add(r.name)
                means.append((r.name, Explicit(int(r.values.shape[1]), r.group, r.mechanism, r.scale,
                                               r.rows is not None), None))
            continue
        other = b_by_name.get(r.name)
        if other is None:
            left.append((r.name, "recorded under canary A only"))
            continue
        if other.group != r.group or other.mechanism != r.mechanism or other.scale != r.scale:
            left.append((r.name, "recorded with a different group, mechanism or scale under canary B"))
            continue
        ma, mb = _constant(r.contribution), _constant(other.contribution)
        if ma is None or mb is None:
            left.append((r.name, "user 1's contribution depends on the history (differs between trials)"))
            continue
        means.append((r.name, ma, mb))
    left += [(r.name, "recorded under canary B only") for r in tap_b.records if r.mean_a is None
             and r.name not in {m[0] for m in means} and r.name not in {x.name for x in tap_a.records}]
    left += [(f"{u.group} (users {u.users[0]}..{u.users[1]})", u.reason) for u in tap_a.unobserved]
    return DerivedMeans(tuple(means), tuple(left))


def derived_observation(result: "RunResult", canary: str, means: DerivedMeans) -> Observation:
    """The :class:`Observation` of an audited run whose learner returned none, from its tap and the paired
    means (:func:`pair_taps`); raises PrivacctError when this run's contribution to an observed release differs
    from the paired one (the layout must not change between runs)."""
    if result.tap is None:
        raise PrivacctError("derived_observation needs an audited run (RunResult.tap is None)")
    by_name = {r.name: r for r in result.tap.records}
    batch = int(np.asarray(result.regret).shape[0])
    blocks = []
    for name, ma, mb in means.means:
        if isinstance(ma, Explicit):
            blocks.append(_explicit_block(name, ma, [r for r in result.tap.records if r.name == name], batch))
            continue
        r = by_name.get(name)
        if r is None:
            raise PrivacctError(f"an audited run did not record release {name!r} this time: the releases over user 1 "
                                "must be the same in every run of an audit")
        own = ma if canary == "A" else mb
        if not np.array_equal(r.contribution, np.broadcast_to(own, r.contribution.shape)):
            raise PrivacctError(f"release {name!r}: user 1's contribution changed between runs (it must not depend on "
                                "the trial: fixed coins and fixed other users)")
        blocks.append(ObservedBlock(name, r.group, r.mechanism, r.scale, r.values, ma, mb))
    return Observation(canary, tuple(blocks), result.tap.actions_to_others(int(result.config.episodes)))


@dataclass(frozen=True)
class ConstantSet:
    """A named set of NON-PRIVACY constants of a learner (docs/learners.md#constant-sets).

    ``name``: ``theory`` (the paper's constants: ``bonus_scale`` 1, no option) or ``tuned`` (the
    multipliers the figures use, chosen once per family by the procedure in ``how``); ``bonus_scale``:
    the multiplier on the confidence/bonus width; ``options``: family options (name, value) that are not
    privacy parameters (e.g. tabular ``e_scale``, ``eta``; linear-mixture ``radius``; linear-MDP ``beta``);
    ``how``: one sentence saying how the values were chosen (procedure, K, seeds, script).
    Noise scales, sensitivities, clips and release structures are never part of a set: a private
    configuration's log is the same under every set (tested).
    """

    name: str
    bonus_scale: float = 1.0
    options: tuple[tuple[str, Any], ...] = ()
    how: str = "the paper's constants"

    def __post_init__(self) -> None:
        if self.name not in CONSTANT_SETS:
            raise PrivacctError(f"constants must be one of {', '.join(CONSTANT_SETS)}, got {self.name!r}")
        b = self.bonus_scale
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b) or b <= 0:
            raise PrivacctError(f"constant set {self.name!r}: bonus_scale must be a finite number > 0, got {b!r}")
        object.__setattr__(self, "options", tuple((str(k), v) for k, v in self.options))
        if any(k in PRIVACY_OPTIONS for k, _ in self.options):
            raise PrivacctError(f"constant set {self.name!r}: options {', '.join(PRIVACY_OPTIONS)} change privacy "
                                "or its derived shift and cannot be part of a constant set")

    def config_fields(self, *, bonus_scale: float | None = None, options=()) -> dict[str, Any]:
        """The RunConfig fields this set gives (``bonus_scale``, ``options``) with the caller's on top: ``bonus_scale``
        None keeps the set's, every option given overrides the set's (sorted by name)."""
        return {"bonus_scale": self.bonus_scale if bonus_scale is None else bonus_scale,
                "options": tuple(sorted({**dict(self.options), **dict(options)}.items()))}

    def apply(self, config: "RunConfig", *, keep_bonus: bool = False, keep_options: tuple[str, ...] = ()) -> "RunConfig":
        """``config`` with this set's bonus_scale (unless ``keep_bonus``) and options (those named in
        ``keep_options`` keep the config's own value)."""
        own = dict(self.options)
        kept = [(k, v) for k, v in config.options if k in keep_options or k not in own]
        return dataclasses.replace(config, **self.config_fields(bonus_scale=config.bonus_scale if keep_bonus else None,
                                                                 options=kept))


@dataclass(frozen=True)
class AuditSetting:
    """A learner's AUDIT CONFIGURATION: the small, non-privacy setting (K, H, environment, bonus scale,
    options) where its audit has the most power per second, and the trials per side that fit a 2-minute
    budget on the project machine (docs/auditing.md#audit-configurations). Every field is a non-privacy
    knob; the log is accounted AT this configuration. ``why``: one sentence saying how it was chosen.
    ``departures``: empty when the paper's algorithm would run this configuration as it is; otherwise what an
    option here changes in the algorithm the paper prints and why the audit needs it (e.g. seed 004's
    ``update_cap``); ``privacct report`` prints it with the audit."""

    DEFAULT_TRIALS = 20_000
    FIELDS = ("episodes", "horizon", "env", "bonus_scale", "options")

    episodes: int = 4
    horizon: int | None = None
    env: str | None = None
    bonus_scale: float = 1.0
    options: tuple[tuple[str, Any], ...] = ()
    trials: int = DEFAULT_TRIALS
    why: str = "the learner's test settings (it declares no audit setting)"
    departures: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.departures, str):
            raise PrivacctError(f"audit_setting.departures must be a string, got {type(self.departures).__name__}")
        object.__setattr__(self, "episodes", check_count("audit_setting.episodes", self.episodes))
        if self.horizon is not None:
            object.__setattr__(self, "horizon", check_count("audit_setting.horizon", self.horizon))
        object.__setattr__(self, "trials", check_count("audit_setting.trials", self.trials, minimum=10))
        b = self.bonus_scale
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b) or b < 0:
            raise PrivacctError(f"audit_setting.bonus_scale must be a finite number >= 0, got {b!r}")
        object.__setattr__(self, "options", tuple((str(k), v) for k, v in self.options))

    def run_config(self, algorithm: str, *, privacy: str, epsilon: float = 1.0, delta: float = 0.0,
                   calibration: str = "tight", horizon: int | None = None, env: str | None = None,
                   bonus_scale: float | None = None, options=()) -> "RunConfig":
        """The RunConfig of the claim (``privacy``, ``epsilon``, ``delta``, ``calibration``) at this setting, made
        once: ``horizon``, ``env`` and ``bonus_scale`` given override the setting's, ``options`` go on top of its
        options (the setting's in their declared order, then the new ones)."""
        return RunConfig(algorithm, privacy, epsilon, delta, calibration, self.episodes,
                         self.env if env is None else env, self.horizon if horizon is None else horizon,
                         self.bonus_scale if bonus_scale is None else bonus_scale,
                         tuple({**dict(self.options), **dict(options)}.items()))

    def apply(self, config: "RunConfig") -> "RunConfig":
        """``config``'s claim (its algorithm, privacy, epsilon, delta and calibration) at this setting."""
        return dataclasses.replace(config, episodes=self.episodes, env=self.env, horizon=self.horizon,
                                   bonus_scale=self.bonus_scale, options=self.options)


@dataclass(frozen=True)
class ReportEpisodes:
    """K of the regret column of ``privacct report`` at its ``default`` scale and at its ``tiny`` (test) scale
    (``--full`` uses the paper setting's own K)."""

    default: int = 300
    tiny: int = 8

    def __post_init__(self) -> None:
        check_count("report_episodes.default", self.default)
        check_count("report_episodes.tiny", self.tiny)


#: Options that are privacy parameters or set the privacy-derived shift: never part of a ConstantSet.
PRIVACY_OPTIONS = ("shift_scale", "canary", "observe", "fixed_users")


@dataclass(frozen=True)
class LearnerSpec:
    """A named learner: how to build its declared log, its neighbouring relation, and how to run a batch.

    ``run_batch(config, seeds, *, audit, progress)`` is the family's batched run; call :meth:`run`,
    which validates the inputs and the result in one place. ``neighbours(config)`` returns the
    :class:`privacct.algorithms.neighbours.NeighbourSpec` of a private configuration (the valid pair
    and each release group's worst-case change under it).
    """

    name: str
    family: str
    paper: str
    privacy_models: tuple[str, ...]
    default_env: str
    description: str
    build_log: Callable[[RunConfig], MechanismLog | None]
    run_batch: RunFn
    neighbours: Callable[[RunConfig], "NeighbourSpec"] | None = None
    #: The settings at which ``privacct report`` checks the learner's privacy claim: typed
    #: :class:`privacct.algorithms.settings.PaperSetting` records with the provenance of every number
    #: and the repairs the privacy figures rely on (a plain RunConfig keyword dict is read with every
    #: provenance "not recorded", never as printed: ``settings.as_paper_setting``).
    paper_settings: tuple[Any, ...] = ()
    #: A small configuration (RunConfig keyword arguments besides algorithm and privacy; ``delta`` is the
    #: claim's delta for private runs) that runs a batch of 64 seeds in about a second: the contract test
    #: (tests/algorithms/test_contract.py) runs every registered learner with it.
    test_settings: tuple[tuple[str, Any], ...] = ()
    #: The learner's constant sets (:class:`ConstantSet`); ``theory`` is implied when absent.
    constants: tuple[ConstantSet, ...] = ()
    #: The set ``privacct run`` uses by default: the one under which the learner's non-private instance
    #: learns its default environment (docs/learners.md#constant-sets).
    default_constants: str = "theory"
    #: Per-episode regret of the uniform random policy on the config's environment (exact, backward
    #: induction), or None when the family does not provide it.
    uniform_regret: Callable[[RunConfig], float] | None = None
    #: The audit configuration of ``privacct audit NAME`` and of the report (:class:`AuditSetting`); None: the
    #: learner's ``test_settings`` with :data:`AuditSetting.DEFAULT_TRIALS` trials per side (:meth:`audit_configuration`).
    audit_setting: "AuditSetting | None" = None
    #: Memory model: ``memory(config, batch, audit) -> {term name: bytes}`` of the learner's own state for one
    #: batched run of ``batch`` seeds (``audit``: with its audit recording); the runner adds its own terms
    #: (:mod:`privacct.algorithms.memory`). None: a generic model (docs/extending.md#memory).
    memory: Callable[[RunConfig, int, bool], dict[str, int]] | None = None
    #: Floats per trial of an audit's flat sample of released statistics (an upper bound), or None: the generic
    #: bound of :mod:`privacct.algorithms.memory`.
    observation_width: Callable[[RunConfig], int] | None = None
    #: Regret K of ``privacct report`` at its default and tiny scales (:class:`ReportEpisodes`).
    report_episodes: "ReportEpisodes | None" = None
    #: ``"module:function"`` of the family's figure reproduction (``privacct reproduce FAMILY``), or None.
    reproduce: str | None = None
    #: Planted policy bugs the learner implements for :attr:`AuditHook.mutant` (name -> one sentence).
    mutants: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # every typed paper setting holds the RunConfig of THIS learner at that setting (a family may declare one
        # setting for several learners); untyped dicts are read when used (settings.as_paper_setting). settings
        # builds on this module, so this module does not import it: a PaperSetting exists only once settings is
        # loaded, and before that there is none to bind (isinstance(s, ()) is False).
        paper_setting = getattr(sys.modules.get(f"{__package__}.settings"), "PaperSetting", ())
        object.__setattr__(self, "paper_settings", tuple(s.bound(self.name) if isinstance(s, paper_setting) else s
                                                         for s in self.paper_settings))

    def declared_log(self, config: RunConfig) -> MechanismLog | None:
        """``build_log(config)``, built once per record (:meth:`RunConfig.declared_log`): every command step that
        reads the log of the record it was passed shares one build (and its calibration)."""
        if not isinstance(config, RunConfig):
            raise PrivacctError(f"config must be a RunConfig, got {type(config).__name__}")
        if config.algorithm != self.name:
            raise PrivacctError(f"config.algorithm must be {self.name!r} for this learner, got {config.algorithm!r}")
        return config.declared_log(self.build_log)

    def run_observed(self, config: RunConfig, seeds, *, audit: AuditHook) -> RunResult:
        """:meth:`run` with ``result.observation`` always set: the learner's own, or derived from its primitives'
        records (:mod:`privacct.tap`) by pairing with a run of the other canary on the same seeds
        (:func:`pair_taps`; that costs one more run; an audit pairs once and reuses the pairing)."""
        res = self.run(config, seeds, audit=audit)
        if res.observation is None:
            twin = self.run(config, seeds, audit=audit.with_canary("B" if audit.canary == "A" else "A"))
            a, b = (res, twin) if audit.canary == "A" else (twin, res)
            res.observation = derived_observation(res, audit.canary, pair_taps(a.tap, b.tap))
        return res

    def audit_configuration(self) -> "AuditSetting":
        """The learner's audit setting (``audit_setting``, else derived from ``test_settings``)."""
        if self.audit_setting is not None:
            return self.audit_setting
        kw = {k: v for k, v in self.test_settings if k in AuditSetting.FIELDS}
        return AuditSetting(**kw)

    def report_scale(self) -> "ReportEpisodes":
        return self.report_episodes if self.report_episodes is not None else ReportEpisodes()

    def constant_set(self, name: str | None = None) -> ConstantSet:
        """The constant set ``name`` (default: ``default_constants``); ``theory`` exists for every learner."""
        name = self.default_constants if name is None else name
        if name not in CONSTANT_SETS:
            raise PrivacctError(f"constants must be one of {', '.join(CONSTANT_SETS)}, got {name!r}")
        for c in self.constants:
            if c.name == name:
                return c
        if name == "theory":
            return ConstantSet("theory")
        raise PrivacctError(f"learner {self.name!r} has no {name!r} constant set; it has: "
                            f"{', '.join(sorted({c.name for c in self.constants} | {'theory'}))}")

    def run(self, config: RunConfig, seeds, *, audit: AuditHook | None = None,
            progress: Callable[[int], None] | None = None) -> RunResult:
        """Run ``config`` for every seed at once (see the module docstring for ``audit``)."""
        if not isinstance(config, RunConfig):
            raise PrivacctError(f"config must be a RunConfig, got {type(config).__name__}")
        if config.algorithm != self.name:
            raise PrivacctError(f"config.algorithm must be {self.name!r} for this learner, got {config.algorithm!r}")
        seeds = check_seeds(seeds)
        if audit is not None:
            if not isinstance(audit, AuditHook):
                raise PrivacctError(f"audit must be an AuditHook or None, got {type(audit).__name__}")
            if config.privacy == "none":
                raise PrivacctError("audit needs a private configuration (privacy jdp or ldp)")
            if audit.mutant is not None and audit.mutant not in dict(self.mutants):
                raise PrivacctError(f"audit.mutant must be one of {', '.join(dict(self.mutants)) or '(none)'} for "
                                    f"{self.name!r}, got {audit.mutant!r}")
        if audit is None:
            result = self.run_batch(config, seeds, audit=audit, progress=progress)
        else:
            plan = None if audit.plan is None else frozenset(audit.plan.users)
            if plan is not None and max(plan) > config.episodes:
                raise PrivacctError(f"audit.plan: canary users must be in 1..{config.episodes}, got {max(plan)}")
            with tapping(AuditTap(plan=plan, canary=audit.canary, coupling=audit.coupling)) as tap:   # what the primitives see of user 1
                result = self.run_batch(config, seeds, audit=audit, progress=progress)
            result.tap = tap
        regret = np.asarray(result.regret)
        if regret.shape != (len(seeds), config.episodes):
            raise PrivacctError(f"learner {self.name!r} returned regret of shape {regret.shape}, "
                                f"expected {(len(seeds), config.episodes)}")
        if audit is None:
            if result.observation is not None:
                raise PrivacctError(f"learner {self.name!r} returned an observation without an audit hook")
        else:
            if result.log is None:
                raise PrivacctError(f"learner {self.name!r}: an audited run must return its declared log")
            if audit.plan is not None:
                # an action audit checks its pin on the releases themselves (audits/one_run_actions._verify_pin): a
                # counter with no one-canary record (a Laplace Toeplitz counter) still reports each canary's share
                if not result.tap.canary_records and not (current_pin() is not None and result.tap.counterfactual):
                    raise PrivacctError(f"learner {self.name!r}: a one-run audit observed no release of a canary (the learner "
                                        "must play the plan's users and report each one's contribution under both bits; "
                                        "docs/extending.md#observations)")
            elif result.observation is not None:
                check_observation(result.observation, result.log, len(seeds), audit)
            elif audit.coupling is None:   # a billboard check's coupled run compares actions, not observations
                check_tap(result.tap, result.log, len(seeds), self.name)
        return result


__all__ = ["AuditHook", "CanaryPlan", "AuditSetting", "ConfigFields", "RUN_FIELDS", "ReportEpisodes", "BLOCK_MECHANISMS", "CALIBRATIONS", "CANARIES", "CONSTANT_SETS", "ConstantSet", "LearnerSpec",
           "Observation", "ObservedBlock", "PRIVACY_CHOICES", "PRIVACY_OPTIONS", "RunConfig", "RunFn", "RunResult",
           "ScaledNoiseGenerator", "check_observation", "check_tap", "DerivedMeans", "derived_observation", "pair_taps", "check_seeds", "child_sequence", "noise_generators",
           "stream_generators"]
