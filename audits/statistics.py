"""Candidate test statistics: scalar maps of a mechanism's output, fitted on the selection half.

Every candidate is fitted on the selection half only (never on the evaluation half), so that the
threshold test built on it is independent of the samples that certify it.

* ``value``: the output itself (scalar outputs).
* ``empirical-likelihood-ratio``: for discrete scalar outputs (at most 64 distinct values), the
  log ratio of the two smoothed histograms of the selection half (Gilbert & McMillan 2018 use the
  histogram for the same purpose).
* ``likelihood-ratio``: log p_D(x) - log p_D'(x) when the caller gives the two densities (the
  Neyman-Pearson optimal statistic), rounded to ``LR_DECIMALS`` decimals (see there).
* ``laplace plug-in likelihood-ratio``: for vector outputs, the product-Laplace log-likelihood
  ratio with medians and scales estimated on the selection half (:func:`_laplace_plugin`).
* ``mean-difference``, ``diagonal-lda``, ``lda``: projections of vector outputs onto
  (mu_D - mu_D'), onto Sigma_diag^-1 (mu_D - mu_D'), and onto (Sigma + lambda I)^-1 (mu_D - mu_D')
  (Fisher's linear discriminant; the covariance is pooled over both sides, estimated from at most
  ``COV_ROWS`` rows per side; lambda = 1e-9 trace/m keeps it invertible and lets a noiseless
  direction, e.g. noise shared by several coordinates, dominate the projection).

Integer vector outputs with few distinct values (actions) are one-hot encoded first.

Per-coordinate, joint and discrete/continuous split statistics (vector and mixed outputs) come
from :mod:`privacct.audits.vector_statistics` and are appended to these.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .statistic import LR_DECIMALS, Statistic  # re-exported: their home is audits/statistic.py
from .vector_statistics import vector_candidates

COV_ROWS = 20_000
MAX_LDA_DIM = 512
MAX_DISCRETE = 64
MAX_ONEHOT_LEVELS = 8
MAX_ONEHOT_DIM = 4096


def _flat(raw: np.ndarray) -> np.ndarray:
    return np.asarray(raw).reshape(raw.shape[0], -1)


def _feature_map(x_sel: np.ndarray, y_sel: np.ndarray) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
    """Flatten to (n, m) floats; one-hot encode integer vectors with few levels."""
    fx = _flat(x_sel)
    if fx.shape[1] > 1 and np.issubdtype(fx.dtype, np.integer):
        levels = np.unique(np.concatenate([fx[:COV_ROWS].ravel(), _flat(y_sel)[:COV_ROWS].ravel()]))
        if len(levels) <= MAX_ONEHOT_LEVELS and fx.shape[1] * len(levels) <= MAX_ONEHOT_DIM:
            def onehot(raw: np.ndarray, levels=levels) -> np.ndarray:
                f = _flat(raw)
                return (f[:, :, None] == levels[None, None, :]).reshape(f.shape[0], -1).astype(float)
            return "one-hot", onehot
    return "flat", lambda raw: _flat(raw).astype(float)


def _projection(name: str, w: np.ndarray, fmap) -> Statistic:
    return Statistic(name, lambda raw, w=w, fmap=fmap: fmap(raw) @ w)


def _laplace_plugin(fx: np.ndarray, fy: np.ndarray, fmap, prefix: str) -> Statistic | None:
    """Plug-in product-Laplace log-likelihood ratio, sum_j (|x_j - m'_j| - |x_j - m_j|) / b_j.

    m_j, m'_j: per-coordinate medians of the two selection halves; b_j: pooled mean absolute
    deviation (the Laplace scale's estimate). Only coordinates whose medians differ by more than
    3 b_j / sqrt(n) enter (the others would add estimation noise only). This is the exact
    likelihood ratio of independent Laplace noise (the tabular privatizers) when the estimates
    are exact, and a valid statistic otherwise: it is fitted on the selection half only.
    """
    mx, my = np.median(fx, axis=0), np.median(fy, axis=0)
    b = 0.5 * (np.abs(fx - mx).mean(axis=0) + np.abs(fy - my).mean(axis=0))
    n = min(len(fx), len(fy))
    keep = (b > 0) & (np.abs(mx - my) > 3.0 * b / np.sqrt(max(n, 1)))
    if not keep.any():
        return None
    idx = np.flatnonzero(keep)
    mx, my, b = mx[idx], my[idx], b[idx]

    def llr(raw, fmap=fmap, idx=idx, mx=mx, my=my, b=b):
        f = fmap(raw)[:, idx]
        return ((np.abs(f - my) - np.abs(f - mx)) / b).sum(axis=1)
    return Statistic(prefix + "laplace plug-in likelihood-ratio", llr, decimals=LR_DECIMALS)


def candidates(x_sel: np.ndarray, y_sel: np.ndarray, densities=None) -> list[Statistic]:
    """Candidate statistics fitted on the selection half ``x_sel`` (from D) and ``y_sel`` (from D')."""
    out: list[Statistic] = []
    if densities is not None:
        p, q = densities

        def llr(raw, p=p, q=q):
            with np.errstate(all="ignore"):
                return np.log(np.asarray(p(raw), dtype=float)) - np.log(np.asarray(q(raw), dtype=float))
        out.append(Statistic("likelihood-ratio", llr, decimals=LR_DECIMALS))
    kind, fmap = _feature_map(x_sel, y_sel)
    fx, fy = fmap(x_sel), fmap(y_sel)
    m = fx.shape[1]
    if m == 1:
        out.append(Statistic("value", lambda raw, fmap=fmap: fmap(raw)[:, 0]))
        levels = np.unique(np.concatenate([fx[:, 0], fy[:, 0]]))
        if 1 < len(levels) <= MAX_DISCRETE and np.all(np.isfinite(levels)):
            cx = np.array([(fx[:, 0] == v).sum() for v in levels], dtype=float)
            cy = np.array([(fy[:, 0] == v).sum() for v in levels], dtype=float)
            k = len(levels)
            lr = np.log((cx + 0.5) / (len(fx) + 0.5 * k)) - np.log((cy + 0.5) / (len(fy) + 0.5 * k))

            def elr(raw, levels=levels, lr=lr, fmap=fmap):
                v = fmap(raw)[:, 0]
                i = np.clip(np.searchsorted(levels, v), 0, len(levels) - 1)
                return np.where(levels[i] == v, lr[i], 0.0)
            out.append(Statistic("empirical-likelihood-ratio", elr, decimals=LR_DECIMALS))
        return out + _vector(x_sel, y_sel)
    finite = np.all(np.isfinite(fx)) and np.all(np.isfinite(fy))
    if not finite:
        return out + _vector(x_sel, y_sel)
    prefix = "" if kind == "flat" else f"{kind} "
    diff = fx.mean(axis=0) - fy.mean(axis=0)
    out.append(_projection(prefix + "mean-difference projection", diff, fmap))
    var = 0.5 * (fx.var(axis=0) + fy.var(axis=0))
    scale = var.mean() if var.mean() > 0 else 1.0
    out.append(_projection(prefix + "diagonal-lda projection", diff / (var + 1e-9 * scale), fmap))
    lap = _laplace_plugin(fx, fy, fmap, prefix)
    if lap is not None:
        out.append(lap)
    if m <= MAX_LDA_DIM:
        ax = fx[:COV_ROWS] - fx[:COV_ROWS].mean(axis=0)
        ay = fy[:COV_ROWS] - fy[:COV_ROWS].mean(axis=0)
        cov = (ax.T @ ax + ay.T @ ay) / max(len(ax) + len(ay) - 2, 1)
        lam = 1e-9 * max(np.trace(cov) / m, 1e-300)
        try:
            w = np.linalg.solve(cov + lam * np.eye(m), diff)
            if np.all(np.isfinite(w)):
                out.append(_projection(prefix + "lda projection", w, fmap))
        except np.linalg.LinAlgError:
            pass
    return out + _vector(x_sel, y_sel)


def _vector(x_sel: np.ndarray, y_sel: np.ndarray) -> list[Statistic]:
    return vector_candidates(x_sel, y_sel)
