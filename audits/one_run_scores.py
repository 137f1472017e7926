"""The scores of a one-run released-statistics audit (docs/auditing.md#one-run-scores): each turns what one audited
run recorded (:class:`Observed`) into a score per canary (positive: guess bit A) and the number of releases each read.

Steinke, Nasr, Jagielski 2023 (arXiv 2305.08846, Theorem 3.1) hold for ANY guesses that are a function of the output
and the auditor's own data, so every score here is sound; they differ in power and in whether an exact likelihood
stands behind them (only then may the audit's power criterion, and so a ``passes``, rest on them):

* ``difference`` (exact): the log-likelihood ratio, bit A against bit B, of each canary's one-canary releases (a
  tree node holding her alone, a Toeplitz counter's y_t - y_(t-1) at her leaf with Gaussian noise): Laplace
  sum_j (|x_j - b_j| - |x_j - a_j|) / scale, Gaussian ((a - b) . x - (|a|^2 - |b|^2) / 2) / sigma^2
  (docs/auditing.md#the-neyman-pearson-statistic). Records labelled ``gaussian-form`` are skipped.
* ``window`` (exact for Gaussian counters): the Gaussian log-likelihood ratio of each canary's window mean of a
  Toeplitz counter's releases (privacct/counters/observed.py: W = mean of the releases from her leaf to the next
  canary's minus the mean over the window before, at the DECLARED noise std of that window); a Laplace counter's
  window (``gaussian-form``) in the same Gaussian form. Sees a noise path whose long averages are quieter than
  declared (the planted ``counter-noise-path``).
* ``output-only`` (no exact loss): the difference records, the exact ones by their exact ratio and the
  ``gaussian-form`` ones (Laplace noise through a Toeplitz counter's L, whose difference of releases has no closed
  likelihood) by the Gaussian form at their declared per-coordinate std. Used where a Laplace Toeplitz counter runs.

:func:`default_scores` names the scores that apply to a configuration's declared log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from privacct.counters.observed import GAUSSIAN_FORM, window_records
from privacct.errors import PrivacctError

__all__ = ["SCORES", "Observed", "OneRunScore", "default_scores", "observed", "score_names"]


@dataclass(frozen=True)
class Observed:
    """What a one-run audit's scores read of one audited run: the canary users (in plan order), the one-canary release
    records (``tap.canary_records``) and the window-mean records (:func:`privacct.counters.observed.window_records`)."""

    users: tuple[int, ...]
    releases: tuple
    windows: tuple


def observed(tap, users: tuple[int, ...]) -> Observed:
    """The :class:`Observed` of an audited run's tap."""
    return Observed(tuple(users), tuple(tap.canary_records), tuple(window_records(tap)))


def _llr(r) -> float:
    """The log-likelihood ratio bit A vs bit B of one record (its first seed); a ``gaussian-form`` record in the
    Gaussian form at its declared std."""
    x, a, b = r.values[0], r.mean_a[0], r.mean_b[0]
    if r.mechanism == "laplace":
        return float(np.sum(np.abs(x - b) - np.abs(x - a)) / r.scale)
    return float((np.dot(a - b, x) - 0.5 * (np.dot(a, a) - np.dot(b, b))) / r.scale ** 2)


def _sum_scores(records, users: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    index = {u: i for i, u in enumerate(users)}
    score = np.zeros(len(users))
    count = np.zeros(len(users), dtype=np.int64)
    for r in records:
        i = index[r.user]
        score[i] += _llr(r)
        count[i] += 1
    return score, count


def _difference(obs: Observed) -> tuple:
    return tuple(r for r in obs.releases if r.mechanism != GAUSSIAN_FORM)


def _window(obs: Observed) -> tuple:
    return obs.windows


def _output_only(obs: Observed) -> tuple:
    return obs.releases


@dataclass(frozen=True)
class OneRunScore:
    """A one-run score: ``name``, ``reads`` (one line: what it reads of the run), ``exact`` (True: an exact
    likelihood ratio of what it reads, so the audit's power criterion may rest on it, built from the records it
    scores: :func:`privacct.audits.one_run_learner.median_structure`) and ``select`` :class:`Observed` -> the records
    it reads. Called on an :class:`Observed`: (score per canary (m,), records read per canary (m,)), the sum of each
    canary's records' log-likelihood ratios (module docstring); a canary with no record scores 0."""

    name: str
    reads: str
    exact: bool
    select: Callable[[Observed], tuple]

    def records(self, obs: Observed) -> tuple:
        return self.select(obs)

    def __call__(self, obs: Observed) -> tuple[np.ndarray, np.ndarray]:
        return _sum_scores(self.select(obs), obs.users)


SCORES: dict[str, OneRunScore] = {s.name: s for s in (
    OneRunScore("difference", "the exact log-likelihood ratio of each canary's one-canary releases (tree nodes, a "
                "Gaussian Toeplitz counter's difference y_t - y_(t-1))", True, _difference),
    OneRunScore("window", "the Gaussian log-likelihood ratio of each canary's window mean of a Toeplitz counter's "
                "releases at the window's declared noise std", True, _window),
    OneRunScore("output-only", "every one-canary release; a Laplace Toeplitz counter's difference in the Gaussian "
                "form at its declared std (no exact likelihood: never the power criterion)", False, _output_only),
)}


def score_names(names) -> tuple[str, ...]:
    """``names`` checked (a non-empty sequence of distinct names of :data:`SCORES`), as a tuple."""
    if isinstance(names, str):
        names = tuple(n.strip() for n in names.split(","))
    names = tuple(names)
    bad = [n for n in names if n not in SCORES]
    if not names or bad or len(set(names)) != len(names):
        raise PrivacctError(f"scores must be distinct names among {', '.join(SCORES)}, got {', '.join(map(str, names)) or 'none'}")
    return names


def toeplitz_groups(cfg, spec) -> tuple[tuple[str, str], ...]:
    """(strategy, mechanism) of every release group of ``cfg``'s declared log that runs through a Toeplitz counter."""
    from privacct.counters.registry import get_strategy

    log = spec.declared_log(cfg)
    return tuple(sorted({(g.structure.strategy, g.mechanism) for g in ([] if log is None else log.release_groups)
                         if g.structure.kind == "factorized" and get_strategy(g.structure.strategy).toeplitz}))


def default_scores(cfg, spec) -> tuple[str, ...]:
    """The scores that apply to ``cfg`` (read from its declared log, so for any learner): ``difference`` always;
    ``window`` where a Toeplitz counter runs (its release noise is correlated across steps, so a long mean of releases
    sees what one difference does not); ``output-only`` where a Toeplitz counter runs with Laplace noise."""
    groups = toeplitz_groups(cfg, spec)
    out = ["difference"]
    if groups:
        out.append("window")
    if any(m == "laplace" for _, m in groups):
        out.append("output-only")
    return tuple(out)
