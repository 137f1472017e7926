"""The audit runner: sample both sides, choose tests on one half, certify on the other.

:func:`audit_mechanism` audits one neighbouring pair; :func:`run_audit` audits every pair a
:class:`privacct.audits.protocols.NeighbourGenerator` yields with a :class:`privacct.audits.protocols.PropertyTester`.

Failure budget (soundness): the audit's eps lower bound exceeds the true eps with probability at
most ``1 - confidence``. That budget is split evenly over every evaluated test (two directions per
pair, union bound); each test's two CP bounds get half of its share
(:mod:`privacct.audits.bounds`). The GDP estimate has its own, separate budget of ``1 - confidence``.

Verdict (docs/auditing.md#verdicts-and-power): ``fails`` when the eps lower bound exceeds the claim;
``passes`` when it does not AND the audit had the power to see a violation OF THE MECHANISM AUDITED;
``inconclusive`` otherwise (``power.trials_needed``, when the criterion gives one, says how many trials
per side would give it power). Power is decided by a *power criterion*,
``power(n_eval, alpha, delta, claim) -> PowerCheck`` (:mod:`privacct.audits.power`): ``n_eval`` =
evaluation-half trials per side, ``alpha`` = the failure probability of one certified test (after the
union bound), ``delta`` and ``claim`` = the audited claim. Where it comes from (:func:`run_audit`):
``power=`` (explicit), ``leakier=`` (a leakier version of the mechanism, audited by the same pipeline:
simulated power), the criterion the mechanism declares from its exact privacy-loss distribution
(``power_criterion(dataset, neighbour)``), or none: a black-box audit without ``power`` or ``leakier``
is ``inconclusive`` unless it fails ("no violation found; power unknown for this mechanism"). The
canonical scalar criterion (:func:`privacct.audits.power.canonical_power`) is an explicit opt-in: it is
not the mechanism audited and is optimistic for mechanisms that spread their loss (issue 19).

Units: epsilon in nats; ``trials`` = outputs per side (D and D' each); ``seconds`` wall clock.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from privacct.errors import PrivacctError, check_count, check_delta, check_positive

from . import bounds, sampling
from .power import LEAKIER_REPLICATES, NO_POWER_REASON, PowerCheck, best_check, leakier_check, unknown_power
from .protocols import FixedPair, NeighbourGenerator
from .testers import DIRECTIONS, Outcome, ThresholdTester

MIN_TRIALS = 10
LEAKIER_SPAWN_KEY = 2**32 - 1  # first spawn-key word of the leakier version's streams (leakier_seeds)
VERDICTS = ("passes", "fails", "inconclusive")


def decide(epsilon_lower_bound: float, claim: float, power: PowerCheck) -> str:
    """``fails`` iff eps_lb > claim; ``passes`` iff eps_lb <= claim and the audit had power; else ``inconclusive``."""
    if epsilon_lower_bound > claim:
        return "fails"
    return "passes" if power.has_power else "inconclusive"


@dataclass(frozen=True)
class AuditResult:
    """The outcome of an audit.

    ``epsilon_lower_bound`` (nats, >= 0) holds with probability >= ``confidence``; ``verdict`` is
    one of ``passes``, ``fails``, ``inconclusive`` (:func:`decide`) and ``power`` the criterion
    behind it (:class:`privacct.audits.power.PowerCheck`); ``outcomes`` hold the counts of the
    certified tests (one per direction and pair); ``mu_lower_bound`` and ``epsilon_gdp`` are the
    Gaussian-DP estimate, valid only if the mechanism is mu-GDP (Nasr et al. 2023, arXiv 2302.07956).
    """

    epsilon_lower_bound: float
    claimed_epsilon: float
    delta: float
    verdict: str
    power: PowerCheck
    test: str
    outcomes: list[Outcome]
    mu_lower_bound: float
    epsilon_gdp: float | None
    trials: int
    confidence: float
    seed: int
    seconds: float
    sampling_seconds: float
    executor: str
    chunks: int
    pairs: int
    ceiling: float
    statistics: list[str] = field(default_factory=list)
    name: str = ""

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        """TP/FP/TN/FN per certified test, keyed by direction (and pair when there are several)."""
        out = {}
        for i, o in enumerate(self.outcomes):
            key = o.test.direction if self.pairs == 1 else f"pair {i // 2}: {o.test.direction}"
            out[key] = {"TP": o.tp, "FP": o.fp, "TN": o.tn, "FN": o.fn}
        return out

    @property
    def trials_per_second(self) -> float:
        return self.trials * self.pairs / self.seconds if self.seconds > 0 else float("inf")

    @property
    def power_line(self) -> str:
        """The power criterion in one line, with the trials an inconclusive audit would need."""
        p = self.power
        line = f"power ({p.criterion}): {p.description}"
        if self.verdict == "inconclusive":
            line += (f"; needs about {p.trials_needed} trials per side" if p.trials_needed is not None
                     else "; the criterion gives no trial count that would give it power (see above)")
        return line

    @property
    def reason(self) -> str:
        """Why the verdict, in one line: ``fails`` certified a violation; ``passes`` and ``inconclusive``
        found none, with and without power (:data:`privacct.audits.power.NO_POWER_REASON` when nothing
        gave the audit a power criterion: a black box audited without ``power`` or ``leakier``)."""
        if self.verdict == "fails":
            return f"violation certified: eps lower bound {self.epsilon_lower_bound:.4f} > claim {self.claimed_epsilon:g}"
        if self.verdict == "passes":
            return f"no violation found; the audit had power ({self.power.criterion})"
        if self.power.criterion == "unknown":
            return NO_POWER_REASON
        return f"no violation found; no power to see one ({self.power.criterion})"

    def summary(self) -> str:
        verdict = {"passes": "passes", "fails": "FAILS", "inconclusive": "INCONCLUSIVE"}[self.verdict]
        counts = "; ".join(f"{k}: " + ", ".join(f"{a}={b}" for a, b in v.items()) for k, v in self.counts.items())
        return (f"privacy audit {verdict}{' (' + self.name + ')' if self.name else ''}: claimed eps = "
                f"{self.claimed_epsilon:g} (delta = {self.delta:g}), eps lower bound = {self.epsilon_lower_bound:.4f} "
                f"at confidence {self.confidence:g} with {self.trials} trials per side; test: {self.test}; "
                f"counts: {counts}; GDP mu >= {self.mu_lower_bound:.4f}; {self.reason}; {self.power_line}")

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "epsilon_lower_bound": float(self.epsilon_lower_bound),
            "claimed_epsilon": float(self.claimed_epsilon),
            "delta": float(self.delta),
            "verdict": self.verdict,
            "reason": self.reason,
            "power": self.power.to_dict(),
            "test": self.test,
            "counts": self.counts,
            "tests": [o.to_dict() for o in self.outcomes],
            "mu_lower_bound": float(self.mu_lower_bound),
            "epsilon_gdp": None if self.epsilon_gdp is None else float(self.epsilon_gdp),
            "gdp_note": "mu and epsilon_gdp are valid lower bounds only if the mechanism is Gaussian-DP shaped",
            "trials": self.trials,
            "confidence": self.confidence,
            "seed": self.seed,
            "seconds": self.seconds,
            "sampling_seconds": self.sampling_seconds,
            "trials_per_second": self.trials_per_second,
            "executor": self.executor,
            "chunks": self.chunks,
            "pairs": self.pairs,
            "ceiling": self.ceiling,
            "statistics": list(self.statistics),
        }


def _check_common(trials, confidence, delta, epsilon, seed) -> tuple[int, float, float, float, int]:
    trials = check_count("trials", trials, minimum=MIN_TRIALS)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not (0 < float(confidence) < 1):
        raise PrivacctError(f"confidence must be a number in (0, 1), got {confidence!r}")
    delta = check_delta("delta", delta, allow_zero=True)
    epsilon = check_positive("epsilon", epsilon, allow_inf=True)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise PrivacctError(f"seed must be an integer >= 0, got {seed!r}")
    return trials, float(confidence), delta, epsilon, int(seed)


def _check_output(arr: np.ndarray, size: int, side: str, shape: tuple | None) -> tuple:
    if arr.ndim == 0 or arr.shape[0] != size:
        raise PrivacctError(f"mechanism output on {side} must be an array with first axis size={size}, got shape {arr.shape}")
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise PrivacctError(f"mechanism output on {side} must be numeric, got dtype {arr.dtype}")
    if shape is not None and arr.shape[1:] != shape:
        raise PrivacctError(f"mechanism output shape must not change between calls: {(size,) + shape} vs {arr.shape} on {side}")
    if np.issubdtype(arr.dtype, np.floating) and np.isnan(arr).any():
        raise PrivacctError(f"mechanism output on {side} contains NaN")
    return arr.shape[1:]


def sample_pair(mechanism: Callable, dataset: Any, neighbour: Any, trials: int, seq: np.random.SeedSequence, *,
                chunk_size: int, executor: str, scheduler: Any, workers: int | None) -> tuple[np.ndarray, np.ndarray, str, int]:
    """``trials`` outputs on each side, chunked deterministically (:mod:`privacct.audits.sampling`)."""
    sizes = sampling.plan(trials, chunk_size)
    sd, sd2 = sampling.side_seeds(seq, len(sizes))
    tasks = [(mechanism, dataset, s, n) for s, n in zip(sd, sizes, strict=True)] + \
            [(mechanism, neighbour, s, n) for s, n in zip(sd2, sizes, strict=True)]
    used = sampling.resolve(executor, scheduler, len(tasks), mechanism, dataset, neighbour)
    if used != "inline":
        # check shapes on one tiny inline call first: fail fast with a clear message
        _check_output(sampling.sample_chunk(mechanism, dataset, np.random.SeedSequence(0), 2), 2, "dataset", None)
    results = sampling.run_tasks(tasks, used, scheduler, workers)
    shape = None
    for i, (r, (_, _, _, n)) in enumerate(zip(results, tasks, strict=True)):
        shape = _check_output(r, n, "dataset" if i < len(sizes) else "neighbour", shape)
    k = len(sizes)
    x = np.concatenate(results[:k]) if k > 1 else results[0]
    y = np.concatenate(results[k:]) if k > 1 else results[k]
    return x, y, used, len(tasks)


def _certify(mechanism: Callable, pairs: list, seqs: list, *, trials: int, tester: Any, alpha: float, delta: float,
             chunk_size: int, executor: str, scheduler: Any, workers: int | None, shape: tuple | None = None):
    """Sample every pair (pair p from ``seqs[p]``), choose tests on the first half of each side, certify
    them on the second: (eps outcomes, mu outcomes, statistics, sampling seconds, executor, chunks,
    n_eval, output shape). ``shape``: the trailing output shape the samples must have (None: any)."""
    outcomes: list[Outcome] = []
    gdp: list[Outcome] = []
    stats_names: list[str] = []
    sampling_s = 0.0
    used, chunks = "inline", 0
    n_eval = 0
    for (d, d2), seq in zip(pairs, seqs, strict=True):
        ts = time.perf_counter()
        x, y, used, chunks = sample_pair(mechanism, d, d2, trials, seq, chunk_size=chunk_size, executor=executor,
                                         scheduler=scheduler, workers=workers)
        sampling_s += time.perf_counter() - ts
        if shape is not None and x.shape[1:] != shape:
            raise PrivacctError(f"leakier must return outputs of the audited mechanism's shape {shape}, got {x.shape[1:]}")
        shape = x.shape[1:]
        half = trials // 2
        n_eval = trials - half
        tests = tester.select(x[:half], y[:half], alpha=alpha, delta=delta, criteria=("epsilon", "mu"))
        stats_names = list(getattr(tester, "statistics", []))
        res = tester.evaluate(tests, x[half:], y[half:], alpha=alpha, delta=delta)
        outcomes += [o for o in res if o.test.criterion == "epsilon"]
        gdp += [o for o in res if o.test.criterion == "mu"]
    return outcomes, gdp, stats_names, sampling_s, used, chunks, n_eval, shape


def leakier_seeds(seed: int, replicate: int, n_pairs: int) -> list[np.random.SeedSequence]:
    """The pair seeds of replicate ``replicate`` of the leakier version's simulated audits:
    ``SeedSequence(seed, spawn_key=(LEAKIER_SPAWN_KEY, replicate, p))``. Deterministic, and independent of
    the audit's own streams (those have spawn keys starting with a pair index p < #pairs <= 2^32 - 2)."""
    return [np.random.SeedSequence(seed, spawn_key=(LEAKIER_SPAWN_KEY, replicate, p)) for p in range(n_pairs)]


def declared_power(mechanism: Any, pairs: list) -> Callable | None:
    """The power criterion a mechanism declares for these pairs (``mechanism.power_criterion(D, D')``:
    :class:`privacct.audits.protocols.DeclaresPower`), the best over the pairs that have one
    (:func:`privacct.audits.power.best_check`); None when it declares none."""
    method = getattr(mechanism, "power_criterion", None)
    if not callable(method):
        return None
    crits = [c for c in (method(d, d2) for d, d2 in pairs) if c is not None]
    if not crits:
        return None
    if len(crits) == 1:
        return crits[0]
    return lambda n_eval, alpha, delta, claim: best_check(c(n_eval, alpha, delta, claim) for c in crits)


def run_audit(mechanism: Callable, neighbours: NeighbourGenerator, *, epsilon: float = 1.0, delta: float = 0.0,
              trials: int = 100_000, confidence: float = 0.95, seed: int = 0, tester: Any = None,
              chunk_size: int | None = None, executor: str = "auto", scheduler: Any = None,
              workers: int | None = None, name: str = "", power: Callable | None = None,
              leakier: Callable | None = None) -> AuditResult:
    """Audit ``mechanism`` on every pair from ``neighbours`` (see module docstring).

    Power (keyword only; at most one of ``power`` and ``leakier``), which decides ``passes`` vs
    ``inconclusive`` when the audit does not fail:

    * ``power``: a power criterion ``power(n_eval, alpha, delta, claim) -> PowerCheck``, called once with
      the evaluation-half trials per side, the per-test failure probability after the union bound over
      every certified test, and the claim (:mod:`privacct.audits.power`; ``canonical_power`` is an
      explicit, optimistic opt-in).
    * ``leakier``: a mechanism with the same signature that leaks MORE, about 2 x the claim if the
      mechanism meets it (the same mechanism with its noise scale halved, e.g.
      ``functools.partial(my_mechanism, noise=sigma / 2)``). When the audit does not fail, the SAME
      pipeline (trials, tester, per-test alpha, pairs) audits it ``LEAKIER_REPLICATES`` = 3 times with
      seeds spawned from ``seed`` (:func:`leakier_seeds`); power iff a majority certify more than the
      claim and none is certified above 2 x the claim at the audit's confidence (union bound over the
      replicates; :func:`privacct.audits.power.leakier_check`).
      A failing audit does not run it (``fails`` needs no power).
    * neither: the criterion the mechanism declares (:func:`declared_power`: the mechanisms of
      :mod:`privacct.audits.reference_mechanisms`, the catalogue and the planted bugs derive theirs from their
      exact privacy-loss distribution); else none (:func:`privacct.audits.power.unknown_power`): a
      black-box audit that does not fail is ``inconclusive`` ("no violation found; power unknown for
      this mechanism").
    """
    t0 = time.perf_counter()
    if not callable(mechanism):
        raise PrivacctError(f"mechanism must be callable as mechanism(dataset, rng, size), got {type(mechanism).__name__}")
    trials, confidence, delta, epsilon, seed = _check_common(trials, confidence, delta, epsilon, seed)
    chunk_size = check_count("chunk_size", chunk_size if chunk_size is not None else sampling.DEFAULT_CHUNK)
    if not callable(neighbours):
        raise PrivacctError("neighbours must be a callable returning (dataset, neighbour) pairs")
    pairs = list(neighbours())
    if not pairs:
        raise PrivacctError("neighbours yielded no (dataset, neighbour) pair")
    if power is not None and not callable(power):
        raise PrivacctError(f"power must be a callable power(n_eval, alpha, delta, claim) -> PowerCheck, got {power!r}")
    if leakier is not None and not callable(leakier):
        raise PrivacctError(f"leakier must be a mechanism leakier(dataset, rng, size) -> array, got {leakier!r}")
    if power is not None and leakier is not None:
        raise PrivacctError("give power= or leakier=, not both: each decides the audit's power")
    tester = tester if tester is not None else ThresholdTester()
    n_tests = len(DIRECTIONS) * len(pairs)
    alpha = (1.0 - confidence) / n_tests  # union bound over every certified test
    common = dict(trials=trials, tester=tester, alpha=alpha, delta=delta, chunk_size=chunk_size, executor=executor,
                  scheduler=scheduler, workers=workers)
    outcomes, gdp, stats_names, sampling_s, used, chunks, n_eval, shape = _certify(
        mechanism, pairs, np.random.SeedSequence(seed).spawn(len(pairs)), **common)
    best = max(outcomes, key=lambda o: o.epsilon_lower_bound)
    eps_lb = float(best.epsilon_lower_bound)
    mu = max((o.mu_lower_bound for o in gdp), default=0.0)
    eps_gdp = bounds.epsilon_from_mu(float(mu), delta)
    if leakier is not None:
        if eps_lb > epsilon:
            check = PowerCheck("leakier-simulated", "not simulated: the audit certified a violation (fails needs no "
                               "power)", None, None, False, None)
        else:
            lbs, joint = [], []
            for r in range(LEAKIER_REPLICATES):
                res = _certify(leakier, pairs, leakier_seeds(seed, r, len(pairs)), shape=shape, **common)[0]
                lbs.append(max(o.epsilon_lower_bound for o in res))
                # the same counts at alpha / #replicates: jointly valid at the audit's confidence (union bound)
                joint.append(max(float(bounds.epsilon_lower_bound(o.tp, o.tp + o.fn, o.fp, o.fp + o.tn, delta=delta,
                                                                  alpha=alpha / LEAKIER_REPLICATES)[0]) for o in res))
            check = leakier_check(lbs, epsilon, trials=trials, joint_lower_bounds=joint)
    else:
        criterion = power if power is not None else (declared_power(mechanism, pairs) or unknown_power)
        check = criterion(n_eval, alpha, delta, epsilon)
    if not isinstance(check, PowerCheck):
        raise PrivacctError(f"power must return a privacct.audits.power.PowerCheck, got {type(check).__name__}")
    return AuditResult(
        epsilon_lower_bound=eps_lb, claimed_epsilon=epsilon, delta=delta, verdict=decide(eps_lb, epsilon, check),
        power=check, test=best.test.describe(), outcomes=outcomes, mu_lower_bound=float(mu), epsilon_gdp=eps_gdp,
        trials=trials, confidence=confidence, seed=seed, seconds=time.perf_counter() - t0,
        sampling_seconds=sampling_s, executor=used, chunks=chunks, pairs=len(pairs),
        ceiling=bounds.epsilon_ceiling(n_eval, alpha, delta), statistics=stats_names, name=name)


def audit_mechanism(mechanism: Callable, dataset: Any, neighbour: Any, epsilon: float = 1.0, delta: float = 0.0,
                    trials: int = 100_000, confidence: float = 0.95, seed: int = 0, densities: Sequence[Callable] | None = None,
                    *, chunk_size: int | None = None, executor: str = "auto", scheduler: Any = None,
                    workers: int | None = None, name: str = "", power: Callable | None = None,
                    leakier: Callable | None = None) -> AuditResult:
    """Empirical eps lower bound and verdict for ``mechanism`` on the neighbouring pair (``dataset``, ``neighbour``).

    Parameters
    ----------
    mechanism : callable ``mechanism(dataset, rng, size) -> array`` with first axis ``size``.
    dataset, neighbour : D and D' (whatever the mechanism accepts).
    epsilon : claimed eps (> 0); the audit fails when the lower bound exceeds it, passes when it does
        not and the audit had power (``power``, ``leakier`` or the mechanism's own criterion), and is
        inconclusive otherwise (always, for a black box audited without ``power`` or ``leakier``).
    delta : the claim's delta in [0, 1); enters eps_lb = ln((TPR_lo - delta) / FPR_hi).
    trials : outputs per side (>= 10); half choose the test, half certify it.
    confidence : in (0, 1); eps_lb <= true eps with at least this probability.
    seed : int >= 0; all randomness is spawned from SeedSequence(seed).
    densities : optional (p_D, p_D') callables on outputs, adding the likelihood-ratio test.
    chunk_size, executor, scheduler, workers : scale-out (:mod:`privacct.audits.sampling`); the result does
        not depend on executor or workers.
    power : power criterion (keyword only; see :func:`run_audit`).
    leakier : a leakier version of ``mechanism`` (keyword only; see :func:`run_audit`), e.g.
        ``functools.partial(my_mechanism, noise=sigma / 2)``: about 2 x the claim if the mechanism meets it.
        With ``densities``, its simulated audits use the same densities (the audited mechanism's).
    """
    if densities is not None:
        if not (isinstance(densities, (tuple, list)) and len(densities) == 2 and all(callable(f) for f in densities)):
            raise PrivacctError("densities must be a pair (p_D, p_D') of callables on mechanism outputs")
    return run_audit(mechanism, FixedPair(dataset, neighbour), epsilon=epsilon, delta=delta, trials=trials,
                     confidence=confidence, seed=seed, tester=ThresholdTester(densities=None if densities is None else tuple(densities)),
                     chunk_size=chunk_size, executor=executor, scheduler=scheduler, workers=workers, name=name,
                     power=power, leakier=leakier)
