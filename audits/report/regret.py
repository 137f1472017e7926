"""The report's regret column: the private learner with the printed and the tight noise, the
non-private learner at the same K and constants, and the uniform random policy, all exact
(V*_1(s_1) - V^pi_1(s_1) by backward induction on the true model, summed over episodes).

**When a curve "learns".** Over the column's seeds, the 95% t-interval of the mean final cumulative
regret (:func:`mean_interval`; the uniform policy's regret is exact, so this is also the interval of
the mean per-seed difference to it) is compared with the uniform policy's regret ``U``
(:func:`learning`):

* ``learns`` -- the whole interval lies below ``(1 - LEARN_MARGIN) U`` (10% below the uniform policy);
* ``does not learn`` -- the whole interval lies at or above ``(1 - LEARN_MARGIN) U``; ``worse than uniform``
  when it lies above ``U``;
* ``not separated`` -- the interval straddles ``(1 - LEARN_MARGIN) U``: these seeds cannot tell;
* ``not claimed`` -- fewer than :data:`MIN_SEEDS` seeds: no learning verdict at all.

(The weaker rule "mean below 0.9 U and the interval below U" calls the non-private UCRL-VTR on
HardToLearn "learning" at K = 300 with the report's 10 seeds, 0.885 [0.79, 0.98] x U, while the
same learner is at 0.93 to 0.96 x U at K = 1000 to 10^4: benchmarks/report_regret.md.)

**The column's reading** (:attr:`RegretColumn.reading`), the first that applies:

1. ``cannot update`` -- the private learner made no policy update in any seed with either noise
   (``RunResult.info["n_updates"]``): it played its data-free first policy throughout, and its
   regret says nothing about how it learns;
2. ``not claimed`` -- fewer than :data:`MIN_SEEDS` seeds;
3. ``baseline does not learn`` -- the non-private learner is not shown to learn at this K: K is too
   small to separate the curves (or the environment does not separate them at any K measured) and
   the column draws no conclusion about the private learner; it names the K at which ``--full``
   separates them, measured (:data:`FULL_SCALE_BASELINES`), or says that ``--full`` does not either;
4. ``private does not learn`` -- the non-private learner learns and the private learner does not
   with the printed or the tight noise (with the paired interval of the difference over the same seeds);
5. ``learns`` -- both do, with both noises.

A learner that does not report ``n_updates`` (the tabular and linear-mixture learners, which by
their design recompute the policy every episode) gets "policy updates not reported" in the column:
its updates are neither counted nor claimed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from privacct.errors import PrivacctError
from privacct.rng import spawn_sequences

#: A curve learns when the 95% interval of its mean regret lies below (1 - LEARN_MARGIN) x the uniform policy's.
LEARN_MARGIN = 0.10
#: No learning verdict ("learns" or "does not learn") with fewer seeds than this.
MIN_SEEDS = 10
#: Coverage of the t-interval of the mean regret.
LEVEL = 0.95
#: Where the measured figures of :data:`FULL_SCALE_BASELINES` come from (and how to remeasure them).
MEASUREMENT = "benchmarks/report_regret.md"

# verdicts of one curve against the uniform policy (:func:`learning`)
LEARNS = "learns"
NOT_SEPARATED = "not separated"
DOES_NOT_LEARN = "does not learn"
WORSE = "worse than uniform"
FEW_SEEDS = "not claimed"
VERDICTS = (LEARNS, NOT_SEPARATED, DOES_NOT_LEARN, WORSE, FEW_SEEDS)

# readings of a column (module docstring)
READ_CANNOT_UPDATE = "cannot update"
READ_FEW_SEEDS = "not claimed"
READ_BASELINE = "baseline does not learn"
READ_PRIVATE = "private does not learn"
READ_LEARNS = "learns"
READINGS = (READ_CANNOT_UPDATE, READ_FEW_SEEDS, READ_BASELINE, READ_PRIVATE, READ_LEARNS)


def ratio_text(x: float) -> str:
    """A multiple of the uniform policy's regret: 3 decimals near 1 (0.998, not 1), 3 significant digits below 0.1."""
    return f"{x:.3f}" if 0.1 <= abs(x) < 10 else f"{x:.3g}"


@dataclass(frozen=True)
class Interval:
    """A two-sided interval at coverage ``level``."""

    low: float
    high: float
    level: float = LEVEL

    def over(self, u: float) -> "Interval":
        """The interval divided by ``u`` (as a multiple of the uniform policy's regret)."""
        return Interval(self.low / u, self.high / u, self.level)

    def to_dict(self) -> dict[str, float]:
        return {"low": self.low, "high": self.high, "level": self.level}


def mean_interval(values, level: float = LEVEL) -> Interval | None:
    """The Student-t interval of the mean of ``values`` (None with fewer than 2 values)."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    n = x.size
    if n < 2:
        return None
    m = float(x.mean())
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * float(x.std(ddof=1)) / math.sqrt(n)
    return Interval(m - half, m + half, level)


@dataclass(frozen=True)
class Regret:
    """Final cumulative regret over seeds: mean, (population) std and the per-seed values in seed order."""

    mean: float
    std: float
    finals: tuple[float, ...] = ()

    @classmethod
    def of(cls, cum: np.ndarray) -> "Regret":
        last = np.asarray(cum, dtype=float)[:, -1]
        return cls(float(last.mean()), float(last.std()), tuple(float(v) for v in last))

    @property
    def seeds(self) -> int:
        return len(self.finals)

    @property
    def interval(self) -> Interval | None:
        """The 95% t-interval of the mean (None with fewer than 2 seeds)."""
        return mean_interval(self.finals)

    def to_dict(self) -> dict[str, Any]:
        iv = self.interval
        return {"regret_mean": self.mean, "regret_std": self.std, "seeds": self.seeds,
                "interval": None if iv is None else iv.to_dict()}


@dataclass(frozen=True)
class Learning:
    """One curve's verdict against the uniform policy's regret ``uniform`` (:func:`learning`)."""

    verdict: str
    regret: Regret
    uniform: float

    @property
    def ratio(self) -> float:
        return self.regret.mean / self.uniform

    @property
    def learns(self) -> bool:
        return self.verdict == LEARNS

    def phrase(self) -> str:
        """"40.96 = 0.885 x uniform (95% interval 0.792-0.978 x, 10 seeds)", "worse than the uniform policy" where so."""
        iv = self.regret.interval
        span = "" if iv is None else (f"{100 * iv.level:.0f}% interval {ratio_text(iv.over(self.uniform).low)}-"
                                      f"{ratio_text(iv.over(self.uniform).high)} x, ")
        tail = ", worse than the uniform policy" if self.verdict == WORSE else ""
        return f"{self.regret.mean:.4g} = {ratio_text(self.ratio)} x uniform ({span}{self.regret.seeds} seeds{tail})"

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "ratio": self.ratio}


def learning(r: Regret, uniform: float, *, min_seeds: int = MIN_SEEDS) -> Learning:
    """The verdict of a curve with final regrets ``r`` against the uniform policy's exact regret (module docstring)."""
    if not uniform > 0:
        raise PrivacctError(f"the uniform policy's regret must be > 0 to judge learning, got {uniform!r}")
    iv = r.interval
    if r.seeds < min_seeds or iv is None:
        return Learning(FEW_SEEDS, r, uniform)
    bar = (1 - LEARN_MARGIN) * uniform
    if iv.high < bar:
        return Learning(LEARNS, r, uniform)
    if iv.low > uniform:
        return Learning(WORSE, r, uniform)
    if iv.low >= bar:
        return Learning(DOES_NOT_LEARN, r, uniform)
    return Learning(NOT_SEPARATED, r, uniform)


@dataclass(frozen=True)
class PolicyUpdates:
    """Policy updates per seed, as the learner reports them (``RunResult.info["n_updates"]``), and its
    update cap (``info["cap"]``) where it reports one. ``counts`` None: the learner reports no count."""

    counts: tuple[int, ...] | None = None
    cap: int | None = None

    @classmethod
    def of(cls, info: dict[str, Any]) -> "PolicyUpdates":
        n = info.get("n_updates")
        cap = info.get("cap")
        return cls(None if n is None else tuple(int(v) for v in np.asarray(n).ravel()),
                   None if cap is None else int(cap))

    @property
    def reported(self) -> bool:
        return self.counts is not None

    @property
    def never(self) -> bool:
        """No policy update in any seed (counted; False when not reported)."""
        return bool(self.counts) and max(self.counts) == 0

    def phrase(self) -> str:
        if self.counts is None:
            return "not reported by the learner"
        lo, hi = min(self.counts), max(self.counts)
        span = f"{lo}" if lo == hi else f"{lo}-{hi}"
        cap = "" if self.cap is None else f"; its cap allows {self.cap}"
        return f"{span} per seed over {len(self.counts)} seeds{cap}"

    def to_dict(self) -> dict[str, Any]:
        return {"reported": self.reported, "per_seed": None if self.counts is None else list(self.counts),
                "cap": self.cap, "never": self.never}


@dataclass(frozen=True)
class Measured:
    """A non-private baseline measured by benchmarks/bench_report_regret_k.py: its regret at K
    ``episodes`` on ``env`` over ``seeds`` seeds (root seed 0, the report's seeds), the uniform policy's
    exact regret, and the 95% interval of the mean (as multiples of the uniform policy's)."""

    baseline: str
    env: str
    episodes: int
    mean: float
    uniform: float
    low_ratio: float
    high_ratio: float
    seeds: int

    @property
    def learns(self) -> bool:
        return self.seeds >= MIN_SEEDS and self.high_ratio < 1 - LEARN_MARGIN

    def phrase(self) -> str:
        return (f"{self.mean:.4g} = {ratio_text(self.mean / self.uniform)} x uniform ({100 * LEVEL:.0f}% interval "
                f"{ratio_text(self.low_ratio)}-{ratio_text(self.high_ratio)} x, {self.seeds} seeds; {MEASUREMENT})")

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "env": self.env, "episodes": self.episodes, "regret_mean": self.mean,
                "uniform": self.uniform, "interval_ratio": [self.low_ratio, self.high_ratio], "seeds": self.seeds,
                "learns": self.learns, "source": MEASUREMENT}


#: The non-private baselines at the paper settings' K (what ``privacct report --full`` runs, 10 seeds,
#: root seed 0), measured by ``python benchmarks/bench_report_regret_k.py`` (benchmarks/report_regret.md);
#: tests/audits/report/test_regret_column.py checks that every baseline of the report has its entry.
FULL_SCALE_BASELINES: tuple[Measured, ...] = (
    Measured("ucb-po", "riverswim", 20_000, 320.5, 67069.5, 0.00368, 0.00587, 10),
    Measured("ucb-vi", "riverswim", 20_000, 162.4, 67069.5, 0.00184, 0.003, 10),
    Measured("ucrl-vtr", "riverswim-lm", 10_000, 84.16, 2488.26, 0.0325, 0.0352, 10),
    Measured("ucrl-vtr", "hard-to-learn", 10_000, 262.3, 272.432, 0.863, 1.06, 10),
    Measured("lsvi-ucb", "linear-two-state", 10_000, 1496, 29183.2, 0.0503, 0.0522, 10),
    Measured("private-linopt-po", "hard-to-learn", 10_000, 264, 272.432, 0.91, 1.03, 10),
    Measured("private-linopt-vi", "hard-to-learn", 10_000, 247.6, 272.432, 0.836, 0.982, 10),
)


def full_scale_baseline(baseline: str, env: str, episodes: int) -> Measured | None:
    """The measured entry of :data:`FULL_SCALE_BASELINES` for this baseline, environment and K, or None."""
    for m in FULL_SCALE_BASELINES:
        if (m.baseline, m.env, m.episodes) == (baseline, env, episodes):
            return m
    return None


def _paired(a: Regret, b: Regret) -> Interval | None:
    """The 95% interval of the mean per-seed difference a - b (the same seeds, in order)."""
    if a.seeds != b.seeds:
        return None
    return mean_interval(np.subtract(a.finals, b.finals))


@dataclass(frozen=True)
class RegretColumn:
    """The regret column of one row (module docstring). ``paper_updates`` / ``tight_updates``: the
    private learner's policy updates with each noise; ``full_episodes``: the setting's K (what ``--full``
    runs; None when this column runs at it) and ``full_baseline`` the baseline measured there; ``same_algorithm``:
    the baseline is the learner itself with ``privacy = none``."""

    episodes: int
    seeds: int
    paper: Regret
    tight: Regret
    nonprivate: Regret
    nonprivate_learner: str
    nonprivate_note: str
    uniform_per_episode: float
    paper_updates: PolicyUpdates = field(default_factory=PolicyUpdates)
    tight_updates: PolicyUpdates = field(default_factory=PolicyUpdates)
    full_episodes: int | None = None
    full_baseline: Measured | None = None
    #: the baseline is the private learner itself run with ``privacy = none`` (no separate paper baseline)
    same_algorithm: bool = False

    @property
    def uniform(self) -> float:
        return self.uniform_per_episode * self.episodes

    def learning(self, r: Regret) -> Learning:
        return learning(r, self.uniform)

    def learns(self, r: Regret) -> bool:
        """``r`` learns (the 95% interval of its mean below 90% of the uniform policy's, >= MIN_SEEDS seeds)."""
        return self.learning(r).learns

    @property
    def reading(self) -> str:
        """The column's reading (module docstring), the first that applies."""
        if self.paper_updates.never and self.tight_updates.never:
            return READ_CANNOT_UPDATE
        if self.seeds < MIN_SEEDS:
            return READ_FEW_SEEDS
        if not self.learns(self.nonprivate):
            return READ_BASELINE
        if not (self.learns(self.paper) and self.learns(self.tight)):
            return READ_PRIVATE
        return READ_LEARNS

    # ------------------------------------------------------------------ sentences
    def _noises(self) -> str:
        p, t = self.learning(self.paper), self.learning(self.tight)
        return f"printed noise {p.phrase()}; tight noise {t.phrase()}"

    @property
    def _base_name(self) -> str:
        """The baseline in words: "the non-private ucrl-vtr", or "private-linopt-po without privacy" (the learner itself)."""
        name = self.nonprivate_learner
        return f"{name} without privacy" if self.same_algorithm else f"the non-private {name}"

    def _updates(self) -> str:
        """What the column knows of the private learner's policy updates."""
        pu, tu = self.paper_updates, self.tight_updates
        if not (pu.reported or tu.reported):
            return "policy updates: not reported by the learner (its runs carry no n_updates), so not checked"
        if pu == tu:
            return f"policy updates with either noise: {pu.phrase()}"
        return f"policy updates: printed noise {pu.phrase()}, tight noise {tu.phrase()}"

    def _never_one(self) -> str:
        """A clause for a learner that never updates with one of the two noises ('' otherwise)."""
        which = [n for n, u in (("printed", self.paper_updates), ("tight", self.tight_updates)) if u.never]
        return "" if len(which) != 1 else f"; with the {which[0]} noise it never updates its policy at this K"

    def _why_never(self) -> str:
        caps = sorted({u.cap for u in (self.paper_updates, self.tight_updates) if u.cap is not None})
        if caps and caps[-1] < 1:
            return "its update cap is 0"
        if caps:
            allows = f"{caps[0]}" if len(caps) == 1 else f"{caps[0]} to {caps[-1]}"
            return f"its update rule never fired, while its cap allows {allows}"
        return "no update fell within K"

    def _full(self) -> str:
        """Where --full separates the curves (measured), for a baseline that does not learn at this K."""
        if self.full_episodes is None:
            return "this is the setting's own K (--full)"
        m = self.full_baseline
        if m is None:
            return (f"--full runs K = {self.full_episodes}, where the baseline is not measured ({MEASUREMENT} has no "
                    f"entry for {self.nonprivate_learner} there)")
        if m.learns:
            return f"--full separates them at K = {m.episodes}, where {self._base_name} learns: {m.phrase()}"
        return f"--full's K = {m.episodes} does not separate them either: there {self._base_name} is at {m.phrase()}"

    @property
    def statement(self) -> str:
        """The column in words (module docstring); every figure in it is measured by this run or by
        :data:`FULL_SCALE_BASELINES`."""
        K, reading = self.episodes, self.reading
        base = self.learning(self.nonprivate)
        if reading == READ_CANNOT_UPDATE:
            if base.verdict == FEW_SEEDS:
                tail = f"{self._base_name}: {base.phrase()} (learning not claimed with fewer than {MIN_SEEDS} seeds)"
            elif base.learns:
                tail = f"{self._base_name} learns here: {base.phrase()}"
            else:
                tail = f"{self._base_name} is not shown to learn here either: {base.phrase()}"
            n = len(self.paper_updates.counts or ())
            return (f"cannot update its policy at K = {K}: 0 policy updates in each of {n} seeds with the printed and "
                    f"the tight noise ({self._why_never()}), so it plays its data-free first policy throughout and its "
                    f"regret says nothing about how it learns ({self._noises()}); {tail}")
        if reading == READ_FEW_SEEDS:
            return (f"not claimed: {self.seeds} seeds (fewer than the {MIN_SEEDS} a learning claim needs); at K = {K}, "
                    f"{self._noises()}; "
                    f"{self._base_name} {base.phrase()}; {self._updates()}")
        if reading == READ_BASELINE:
            small = ("is too small to separate the curves" if self.full_baseline is not None and self.full_baseline.learns
                     else "does not separate the curves")
            why = "does not learn" if base.verdict in (DOES_NOT_LEARN, WORSE) else "is not shown to learn"
            bar = ratio_text(1 - LEARN_MARGIN)
            return (f"K = {K} {small}: {self._base_name} {why} here ({base.phrase()}; its interval is not below "
                    f"{bar} x uniform), so no conclusion about the private learner ({self._noises()}); {self._full()}; "
                    f"{self._updates()}{self._never_one()}")
        if reading == READ_PRIVATE:
            stuck = [(n, self.learning(r)) for n, r in (("printed", self.paper), ("tight", self.tight))
                     if not self.learns(r)]
            which = "with the printed or the tight noise" if len(stuck) == 2 else f"with the {stuck[0][0]} noise"
            verb = ("does not learn" if all(v.verdict in (DOES_NOT_LEARN, WORSE) for _, v in stuck)
                    else "is not shown to learn")
            d = _paired(self.paper, self.nonprivate)
            diff = "" if d is None else (f"; paired over the same seeds, the printed noise's regret exceeds the baseline's "
                                         f"by {self.paper.mean - self.nonprivate.mean:.4g} ({100 * d.level:.0f}% "
                                         f"interval {d.low:.4g} to {d.high:.4g})")
            return (f"{self._base_name} learns at K = {K} ({base.phrase()}) and the private learner {verb} {which} "
                    f"({self._noises()}){diff}; {self._updates()}{self._never_one()}")
        return (f"learns at K = {K} with both noises ({self._noises()}), as does {self._base_name} ({base.phrase()}); "
                f"{self._updates()}")

    @property
    def short(self) -> str:
        """The reading in a few words (the measures table's cell)."""
        reading = self.reading
        if reading == READ_CANNOT_UPDATE:
            return "no: no policy update at this K"
        if reading == READ_FEW_SEEDS:
            return f"not claimed ({self.seeds} seeds)"
        if reading == READ_BASELINE:
            m = self.full_baseline
            return (f"K too small (--full: K = {m.episodes})" if m is not None and m.learns
                    else "not separated, nor at --full's K" if self.full_episodes is not None else "not separated")
        if reading == READ_PRIVATE:
            verdicts = [self.learning(r).verdict for r in (self.paper, self.tight)]
            if WORSE in verdicts:
                return "no, worse than uniform"
            return "not shown" if NOT_SEPARATED in verdicts else "no"
        return "yes"

    def to_dict(self) -> dict[str, Any]:
        verdicts = {k: self.learning(r) for k, r in (("paper", self.paper), ("tight", self.tight),
                                                     ("nonprivate", self.nonprivate))}
        return {"episodes": self.episodes, "seeds": self.seeds, "paper": self.paper.to_dict(), "tight": self.tight.to_dict(),
                "nonprivate": {**self.nonprivate.to_dict(), "algorithm": self.nonprivate_learner, "note": self.nonprivate_note},
                "uniform": {"regret_mean": self.uniform, "per_episode": self.uniform_per_episode},
                "learns": {k: v.learns for k, v in verdicts.items()},
                "verdicts": {k: v.verdict for k, v in verdicts.items()},
                "policy_updates": {"paper": self.paper_updates.to_dict(), "tight": self.tight_updates.to_dict()},
                "full_episodes": self.full_episodes, "same_algorithm": self.same_algorithm,
                "full_scale_baseline": None if self.full_baseline is None else self.full_baseline.to_dict(),
                "margin": LEARN_MARGIN, "min_seeds": MIN_SEEDS, "level": LEVEL,
                "reading": self.reading, "short": self.short, "statement": self.statement}


@dataclass(frozen=True)
class CurveRun:
    """One configuration's run: cumulative regret (seeds x K) and the policy updates it reports."""

    cumulative: np.ndarray
    updates: PolicyUpdates


def baseline_config(spec, cfg, setting, episodes: int):
    """(the baseline's LearnerSpec, its RunConfig): the non-private learner of ``setting`` (its paper's own
    baseline, else ``spec`` with ``privacy = none``) at K = ``episodes`` with the same environment and constants."""
    from privacct.algorithms.registry import get_learner

    run_cfg = replace(cfg, episodes=episodes, env=cfg.env or spec.default_env)
    name = setting.baseline or spec.name
    return get_learner(name), replace(run_cfg, algorithm=name, privacy="none", calibration="paper", epsilon=1.0, delta=0.0)


class RegretRuns:
    """Runs the regret curves of the report, each configuration once (the non-private baselines are
    shared by every row with the same learner, K and constants)."""

    def __init__(self, seeds: int, seed: int) -> None:
        self.seeds, self.seed = seeds, seed
        self._cache: dict[Any, CurveRun] = {}

    def run(self, spec, cfg) -> CurveRun:
        if cfg not in self._cache:
            from privacct.algorithms.scaleout import run_seeds   # local, or seed chunks on the --scheduler cluster

            res = run_seeds(spec, cfg, spawn_sequences(self.seed, self.seeds), per_seed=("n_updates",))
            self._cache[cfg] = CurveRun(np.cumsum(np.asarray(res.regret, dtype=float), axis=1), PolicyUpdates.of(res.info))
        return self._cache[cfg]

    def cumulative(self, spec, cfg) -> np.ndarray:
        return self.run(spec, cfg).cumulative

    def column(self, spec, cfg, setting, episodes: int) -> tuple[RegretColumn, dict[str, np.ndarray]]:
        """The column of ``cfg`` (paper calibration) at K = ``episodes``, and the mean curves."""
        run_cfg = replace(cfg, episodes=episodes, env=cfg.env or spec.default_env)
        paper = self.run(spec, run_cfg)
        tight = self.run(spec, replace(run_cfg, calibration="tight"))
        base_spec, base_cfg = baseline_config(spec, cfg, setting, episodes)
        base = self.run(base_spec, base_cfg)
        if spec.uniform_regret is None:
            raise PrivacctError(f"learner {spec.name!r} declares no uniform_regret; the report's regret column needs it")
        u = float(spec.uniform_regret(run_cfg))
        full = None if episodes == cfg.episodes else int(cfg.episodes)
        col = RegretColumn(episodes, self.seeds, Regret.of(paper.cumulative), Regret.of(tight.cumulative),
                           Regret.of(base.cumulative), base_cfg.algorithm,
                           setting.baseline_note or f"{base_cfg.algorithm} without privacy", u,
                           paper_updates=paper.updates, tight_updates=tight.updates, full_episodes=full,
                           full_baseline=None if full is None else full_scale_baseline(base_cfg.algorithm, run_cfg.env, full),
                           same_algorithm=base_cfg.algorithm == spec.name)
        curves = {"paper": paper.cumulative.mean(0), "tight": tight.cumulative.mean(0), "nonprivate": base.cumulative.mean(0),
                  "uniform": u * np.arange(1, episodes + 1)}
        return col, curves


__all__ = ["FULL_SCALE_BASELINES", "LEARN_MARGIN", "LEVEL", "MIN_SEEDS", "READINGS", "VERDICTS", "CurveRun", "Interval",
           "Learning", "Measured", "PolicyUpdates", "Regret", "RegretColumn", "RegretRuns", "baseline_config",
           "full_scale_baseline", "learning", "mean_interval"]
