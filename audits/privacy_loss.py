"""Exact privacy-loss distributions (PLD) of observed releases: the lowest layer of the learner power criterion.

The log-likelihood ratio L = log p_D(x) / p_D'(x) of an observation of independent Laplace and Gaussian coordinates
with known shifts (:class:`LossStructure`) is a sum of independent terms; :func:`loss_distribution` computes its law
on a fine grid by FFT convolution, :func:`tail_curves` the (TPR, FPR) curve of its Neyman-Pearson threshold tests
(the derivation: :mod:`privacct.audits.oracle`). Both the oracle figure (:mod:`privacct.audits.oracle`) and the power
criteria (:mod:`privacct.audits.power`) build on them; this module imports neither, so neither imports the other
back (issue 22 item 5). :mod:`privacct.audits.oracle` re-exports every public name.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from privacct.errors import PrivacctError

GRID_CELLS_PER_MIN_ATOM = 256
MAX_GRID = 1 << 22

@dataclass(frozen=True)
class LossStructure:
    """What determines the PLD of an observation: ``laplace`` a_j = |m_A,j - m_B,j| / b_j (one per
    differing Laplace coordinate) and ``mu`` (the Gaussian part's GDP parameter)."""

    laplace: tuple[float, ...]
    mu: float

    def __post_init__(self) -> None:
        if any(not (a > 0 and math.isfinite(a)) for a in self.laplace) or not (self.mu >= 0 and math.isfinite(self.mu)):
            raise PrivacctError("loss structure: Laplace ratios must be finite and > 0, mu finite and >= 0")

    @property
    def pure_epsilon(self) -> float:
        """The largest privacy loss (inf with a Gaussian part)."""
        return float("inf") if self.mu > 0 else float(sum(self.laplace))

    def scaled(self, factor: float) -> "LossStructure":
        """Every noise scale multiplied by ``factor`` (> 0)."""
        return LossStructure(tuple(a / factor for a in self.laplace), self.mu / factor)

    def describe(self) -> str:
        parts = []
        if self.laplace:
            a = np.asarray(self.laplace)
            parts.append(f"{a.size} Laplace coordinate(s), sum |dm|/b = {a.sum():.4g}")
        if self.mu > 0:
            parts.append(f"Gaussian part mu = {self.mu:.4g}")
        return "; ".join(parts) or "no coordinate differs"


def _laplace_pmf(a: float, g: float) -> tuple[np.ndarray, int]:
    """PMF of l = |z - a| - |z| (z ~ standard Laplace) on the grid k g, k = -n..n, with a = n g
    (the caller rounds a to the grid); returns (pmf, n). Continuous part: CDF
    F(l) = (e^{-(a - l)/2} - e^{-a}) / 2 on [-a, a], integrated over the cells around each grid point."""
    n = max(1, int(round(a / g)))
    a_g = n * g
    edges = np.clip((np.arange(-n, n + 2) - 0.5) * g, -a_g, a_g)
    F = (np.exp(-(a_g - edges) / 2.0) - math.exp(-a_g)) / 2.0
    pmf = np.maximum(np.diff(F), 0.0)
    pmf[0] += math.exp(-a_g) / 2.0
    pmf[-1] += 0.5
    return pmf / pmf.sum(), n


def _gauss_half_width(mu: float, g: float) -> int:
    return int(math.ceil((mu * mu / 2.0 + 10.0 * mu) / g))


def loss_distribution(s: LossStructure, *, cells: int = GRID_CELLS_PER_MIN_ATOM) -> tuple[np.ndarray, np.ndarray]:
    """(grid l_k, P_D[L = l_k]) of the privacy loss under D (discretised; see module docstring)."""
    if not s.laplace:
        raise PrivacctError("loss_distribution needs Laplace coordinates (Gaussian-only losses are closed form)")
    a = np.asarray(s.laplace)
    g = float(a.min()) / cells
    if s.mu > 0:
        g = min(g, s.mu / cells)
    total = int(np.sum(np.maximum(1, np.round(a / g)))) + (_gauss_half_width(s.mu, g) if s.mu > 0 else 0)
    if 2 * total + 1 > MAX_GRID:
        g *= (2 * total + 1) / MAX_GRID
        total = int(np.sum(np.maximum(1, np.round(a / g)))) + (_gauss_half_width(s.mu, g) if s.mu > 0 else 0)
    size = 1 << int(math.ceil(math.log2(2 * total + 1)))
    spec = np.ones(size // 2 + 1, dtype=complex)
    offset = 0
    vals, counts = np.unique(np.round(a / g).astype(np.int64), return_counts=True)
    for n_a, c in zip(vals, counts, strict=True):
        pmf, n = _laplace_pmf(float(n_a) * g, g)
        spec *= np.fft.rfft(pmf, size) ** int(c)
        offset += n * int(c)
    if s.mu > 0:
        m = _gauss_half_width(s.mu, g)
        grid = np.arange(-m, m + 1) * g
        edges = np.concatenate([[-np.inf], (grid[:-1] + grid[1:]) / 2.0, [np.inf]])
        pmf = np.diff(special.ndtr((edges - s.mu**2 / 2.0) / s.mu))
        spec *= np.fft.rfft(pmf, size)
        offset += m
    out = np.maximum(np.fft.irfft(spec, size)[: 2 * offset + 1], 0.0)
    out /= out.sum()
    return (np.arange(-offset, offset + 1) * g), out


@functools.lru_cache(maxsize=64)
def tail_curves(s: LossStructure) -> tuple[np.ndarray, np.ndarray]:
    """(TPR(t), FPR(t)) = (P_D[L >= t], P_D'[L >= t]) over the thresholds t of the loss grid."""
    if not s.laplace:
        if s.mu == 0:
            return np.array([1.0]), np.array([1.0])
        t = np.linspace(-8 * s.mu - s.mu**2, 8 * s.mu + s.mu**2, 4001)
        return special.ndtr((s.mu**2 / 2.0 - t) / s.mu), special.ndtr((-s.mu**2 / 2.0 - t) / s.mu)
    grid, p = loss_distribution(s)
    tpr = np.cumsum(p[::-1])[::-1]          # P_D[L >= l_k]
    fpr = np.cumsum(p)                       # P_D'[L >= l_k] = P_D[L <= -l_k]; grid symmetric
    fpr = fpr[::-1]
    return np.clip(tpr, 0.0, 1.0), np.clip(fpr, 0.0, 1.0)


__all__ = ["GRID_CELLS_PER_MIN_ATOM", "MAX_GRID", "LossStructure", "loss_distribution", "tail_curves"]
