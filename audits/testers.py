"""The threshold property tester: choose a test on one half, certify it on the other.

A test is (statistic, threshold t, region, direction): region ``>`` is S = {s > t}, region ``<=``
its complement; direction ``D vs D'`` takes the D samples as positives (TPR = P[M(D) in S],
FPR = P[M(D') in S]) and ``D' vs D`` the reverse. The selection half scores every candidate
statistic x threshold x region for each direction by the CP lower bound it would give
(:func:`privacct.audits.bounds.epsilon_lower_bound` at the evaluation's failure probability) and keeps the
best test per direction (a statistic fitted on part of the selection half is scored on the rest of
it, :class:`privacct.audits.statistics.Statistic`). The evaluation half gives the counts (TP, FP, TN, FN) of those tests
only; as the test was fixed before those samples were seen, the CP bounds hold for it, and the
union bound over the evaluated tests makes the whole audit fail with probability <= alpha.

The GDP (mu) estimate uses the same machinery with its own tests (best mu per direction) and its
own failure budget; it is reported beside the eps bound, never folded into it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from . import bounds
from .statistics import Statistic, candidates

DIRECTIONS = ("D vs D'", "D' vs D")
MAX_THRESHOLDS = 255


@dataclass
class ChosenTest:
    """One fixed test chosen on the selection half."""

    statistic: Statistic
    threshold: float
    region: str  # ">" or "<="
    direction: str  # "D vs D'" or "D' vs D"
    criterion: str  # "epsilon" or "mu"
    selection_score: float = 0.0

    def describe(self) -> str:
        return f"{self.statistic.name} {self.region} {self.threshold:.6g} ({self.direction})"


@dataclass
class Outcome:
    """Counts and bounds of one test on the evaluation half."""

    test: ChosenTest
    tp: int
    fp: int
    tn: int
    fn: int
    tpr_lower: float
    fpr_upper: float
    epsilon_lower_bound: float
    mu_lower_bound: float

    def to_dict(self) -> dict:
        return {
            "direction": self.test.direction,
            "criterion": self.test.criterion,
            "test": self.test.describe(),
            "statistic": self.test.statistic.name,
            "region": self.test.region,
            "threshold": float(self.test.threshold),
            "counts": {"TP": self.tp, "FP": self.fp, "TN": self.tn, "FN": self.fn},
            "tpr_lower": float(self.tpr_lower),
            "fpr_upper": float(self.fpr_upper),
            "epsilon_lower_bound": float(self.epsilon_lower_bound),
            "mu_lower_bound": float(self.mu_lower_bound),
        }


def _thresholds(sx: np.ndarray, sy: np.ndarray, n_max: int = MAX_THRESHOLDS) -> np.ndarray:
    pooled = np.concatenate([sx, sy])
    finite = pooled[np.isfinite(pooled)]
    if finite.size == 0:
        return np.array([0.0])
    # levels spaced evenly in logit so the tails (where large-eps tests live) are explored
    n = finite.size
    lo = 1.0 / n
    z = np.linspace(np.log(lo / (1 - lo)), np.log((1 - lo) / lo), n_max)
    levels = 1.0 / (1.0 + np.exp(-z))
    srt = np.sort(finite)
    idx = np.clip((levels * n).astype(np.int64), 0, n - 1)
    return np.unique(np.concatenate([srt[idx], srt[[0, -1]]]))


def _counts_above(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """#{s > t} for each threshold t."""
    srt = np.sort(s)
    return s.size - np.searchsorted(srt, t, side="right")


def _score(tp, n_pos, fp, n_neg, *, criterion: str, alpha: float, delta: float) -> np.ndarray:
    eps, tpr_lo, fpr_hi = bounds.epsilon_lower_bound(tp, n_pos, fp, n_neg, delta=delta, alpha=alpha)
    if criterion == "epsilon":
        return eps
    return bounds.mu_from_bounds(tpr_lo, fpr_hi)


@dataclass
class ThresholdTester:
    """Threshold tests on candidate statistics (see module docstring).

    ``densities``: optional pair (p_D, p_D') of callables mapping outputs (n, ...) to density or
    mass values (n,); adds the likelihood-ratio statistic.
    """

    densities: tuple | None = None
    max_thresholds: int = MAX_THRESHOLDS
    statistics: list = field(default_factory=list)

    def candidate_statistics(self, x_sel: np.ndarray, y_sel: np.ndarray) -> list:
        """The statistics the selection half chooses among (subclasses may fix them in advance)."""
        return candidates(x_sel, y_sel, self.densities)

    def select(self, x_sel: np.ndarray, y_sel: np.ndarray, *, alpha: float, delta: float,
               criteria: Sequence[str] = ("epsilon",)) -> list[ChosenTest]:
        """Best test per (criterion, direction) on the selection half; ``alpha`` = per-test failure."""
        stats_ = self.candidate_statistics(x_sel, y_sel)
        self.statistics = [s.name for s in stats_]
        nx, ny = len(x_sel), len(y_sel)
        best: dict[tuple[str, str], ChosenTest] = {}
        for st in stats_:
            if st.holdout is not None:  # fitted on part of the selection half: threshold and score on the rest
                sx, sy = (np.asarray(v, dtype=float) for v in st.holdout)
                kx, ky = nx / max(len(sx), 1), ny / max(len(sy), 1)
            else:
                sx, sy = st(x_sel), st(y_sel)
                kx = ky = 1.0
            t = _thresholds(sx, sy, self.max_thresholds)
            ax, ay = _counts_above(sx, t) * kx, _counts_above(sy, t) * ky
            combos = {
                ("D vs D'", ">"): (ax, nx, ay, ny),
                ("D vs D'", "<="): (nx - ax, nx, ny - ay, ny),
                ("D' vs D", ">"): (ay, ny, ax, nx),
                ("D' vs D", "<="): (ny - ay, ny, nx - ax, nx),
            }
            for criterion in criteria:
                for (direction, region), (tp, npos, fp, nneg) in combos.items():
                    sc = _score(tp, npos, fp, nneg, criterion=criterion, alpha=alpha, delta=delta)
                    i = int(np.argmax(sc))
                    key = (criterion, direction)
                    if key not in best or sc[i] > best[key].selection_score:
                        best[key] = ChosenTest(st, float(t[i]), region, direction, criterion, float(sc[i]))
        return [best[(c, d)] for c in criteria for d in DIRECTIONS]

    def evaluate(self, tests: Sequence[ChosenTest], x_eval: np.ndarray, y_eval: np.ndarray, *, alpha: float,
                 delta: float) -> list[Outcome]:
        """Counts and CP bounds of each fixed test; ``alpha`` = per-test failure probability."""
        out = []
        cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for test in tests:
            key = id(test.statistic)
            if key not in cache:
                cache[key] = (test.statistic(x_eval), test.statistic(y_eval))
            sx, sy = cache[key]
            inx = sx > test.threshold if test.region == ">" else ~(sx > test.threshold)
            iny = sy > test.threshold if test.region == ">" else ~(sy > test.threshold)
            if test.direction == "D vs D'":
                pos, neg = inx, iny
            else:
                pos, neg = iny, inx
            tp, fp = int(pos.sum()), int(neg.sum())
            fn, tn = int(pos.size - tp), int(neg.size - fp)
            eps, tpr_lo, fpr_hi = bounds.epsilon_lower_bound(tp, pos.size, fp, neg.size, delta=delta, alpha=alpha)
            mu = bounds.mu_from_bounds(tpr_lo, fpr_hi)
            out.append(Outcome(test, tp, fp, tn, fn, float(tpr_lo), float(fpr_hi), float(eps), float(mu)))
        return out
