"""The one conservative root-finder: every calibration and every inverted formula uses it.

The problem is always "the least point of a monotone predicate": over an ordered set of
integers m (``lower <= m <= upper``) a predicate is False up to a threshold and True from there
on (feasible = private enough), and we want the least feasible m. The search keeps a bracket
(lo infeasible, hi feasible) and returns ``hi``, the private side, so the answer is always a point
at which the predicate was evaluated True: it can never overshoot, whatever the arithmetic of the
predicate. Bisection guarantees termination in about log2(upper - lower) steps; false position
with the Illinois modification (Dowell & Jarratt 1971) on an optional signed gap (<= 0 feasible)
makes it take far fewer evaluations when the gap is smooth, and falls back to bisection whenever
a step fails to halve the bracket (docs/accounting.md#root-finder).

Two integer encodings of real numbers are provided:

* :func:`float_index` / :func:`index_float`: the IEEE-754 bit pattern of a non-negative double,
  which is monotone, so the search finds the exact least feasible float (used by the formulas:
  the Gaussian epsilon for a delta, the largest mu or rho meeting a budget, delta for epsilon);
* :data:`LATTICE`: points 2**(m / LATTICE) of a fixed geometric lattice (relative spacing
  6.6e-7), used by calibration so that the answer does not depend on where the search starts.
"""

from __future__ import annotations

import math
import struct
from typing import Callable

LATTICE = 2**20  # calibration factors are 2**(m / LATTICE): relative spacing 2**(2**-20) - 1 = 6.6e-7


def float_index(x: float) -> int:
    """Order-preserving integer of a float x >= 0 (its bit pattern)."""
    if not x >= 0:
        raise ValueError(f"float_index needs x >= 0, got {x!r}")
    return struct.unpack("<q", struct.pack("<d", float(x)))[0]


def index_float(m: int) -> float:
    """Inverse of :func:`float_index`."""
    return struct.unpack("<d", struct.pack("<q", int(m)))[0]


MAX_FLOAT_INDEX = float_index(1.7976931348623157e308)
# Float searches stop when the bracket is 64 floats wide (a relative 1.4e-14): the float noise of
# the formulas is larger than that, so narrower brackets only cost evaluations.
FLOAT_TOL = 64


def least_feasible(gap: Callable[[int], float], *, lower: int, upper: int, start: int | None = None,
                   step: int = 1, tol: int = 1) -> int | None:
    """Least m in [lower, upper] with ``gap(m) <= 0``, assuming feasibility is monotone in m
    (infeasible below a threshold, feasible from it on); None if ``gap(upper) > 0``.

    ``gap`` may return any float: <= 0 means feasible, > 0 or NaN infeasible, and its magnitude
    only guides the next trial point. Each m is evaluated at most once. The search first
    brackets the threshold from ``start`` (default: ``lower``) with steps growing from ``step``,
    then narrows the bracket until it is ``tol`` apart (1: the exact least point) and returns
    its feasible end.
    """
    if lower > upper:
        raise ValueError("least_feasible: empty range")
    cache: dict[int, float] = {}

    def g(m: int) -> float:
        if m not in cache:
            v = float(gap(m))
            cache[m] = math.inf if math.isnan(v) else v
        return cache[m]

    s = lower if start is None else min(max(int(start), lower), upper)
    step = max(1, int(step))
    if g(s) <= 0:  # feasible: walk down to an infeasible point
        hi = s
        lo = None
        while lo is None:
            if hi == lower:
                return lower
            cand = max(lower, hi - step)
            if g(cand) <= 0:
                hi = cand
                step *= 2
            else:
                lo = cand
    else:  # infeasible: walk up to a feasible point
        lo = s
        hi = None
        while hi is None:
            if lo == upper:
                return None
            cand = min(upper, lo + step)
            if g(cand) <= 0:
                hi = cand
            else:
                lo = cand
                step *= 2

    last_side = 0          # +1: hi moved last, -1: lo moved last
    flo_scale = fhi_scale = 1.0
    widths = [hi - lo]
    tol = max(1, int(tol))
    while hi - lo > tol:
        width = hi - lo
        flo, fhi = g(lo) * flo_scale, g(hi) * fhi_scale
        # Safeguard: if the last two steps did not halve the bracket, bisect.
        force_bisect = len(widths) >= 3 and widths[-1] > widths[-3] / 2
        m = None
        if not force_bisect and math.isfinite(flo) and math.isfinite(fhi) and flo > 0 >= fhi:
            offset = width * (flo / (flo - fhi))  # an offset, not lo + offset: indices exceed 2**53
            if math.isfinite(offset):
                m = min(max(lo + int(round(offset)), lo + 1), hi - 1)
        if m is None:
            m = lo + width // 2
        fm = g(m)
        if fm <= 0:
            hi = m
            fhi_scale = 1.0
            if last_side == +1:
                flo_scale *= 0.5  # Illinois: the value at the end that stayed is halved
            last_side = +1
        else:
            lo = m
            flo_scale = 1.0
            if last_side == -1:
                fhi_scale *= 0.5
            last_side = -1
        widths.append(hi - lo)
    return hi


def least_feasible_many(gap: Callable, lo, hi, glo, ghi, *, tol: int = 1):
    """:func:`least_feasible` element-wise over arrays of brackets already found (numpy int64
    indices ``lo`` infeasible with gaps ``glo`` > 0, ``hi`` feasible with ``ghi`` <= 0): the same
    false position with the Illinois modification, a bisection every third step, and the feasible
    end kept. ``gap(points, which)`` evaluates the elements ``which`` at the int64 ``points``.
    Returns the ``hi`` array (each within ``tol`` of its least feasible point)."""
    import numpy as np

    lo, hi = lo.copy(), hi.copy()
    flo = np.minimum(glo, 700.0)
    fhi = np.maximum(ghi, -700.0)
    side = np.zeros(lo.size, dtype=np.int8)
    it = 0
    while True:
        open_ = np.flatnonzero(hi - lo > max(1, int(tol)))
        if not open_.size:
            return hi
        lo_o, hi_o = lo[open_], hi[open_]
        width = hi_o - lo_o
        if it % 3 == 2:
            mid = lo_o + width // 2
        else:
            frac = flo[open_] / (flo[open_] - fhi[open_])
            off = np.rint(width.astype(np.float64) * frac).astype(np.int64)  # an offset: indices exceed 2**53
            mid = np.clip(lo_o + off, lo_o + 1, hi_o - 1)
        g = np.asarray(gap(mid, open_), dtype=float)
        g = np.where(np.isnan(g), np.inf, g)
        good = g <= 0
        gi, bi = open_[good], open_[~good]
        hi[gi] = mid[good]
        fhi[gi] = np.maximum(g[good], -700.0)
        flo[gi] = np.where(side[gi] == 1, flo[gi] * 0.5, flo[gi])
        side[gi] = 1
        lo[bi] = mid[~good]
        flo[bi] = np.minimum(g[~good], 700.0)
        fhi[bi] = np.where(side[bi] == -1, fhi[bi] * 0.5, fhi[bi])
        side[bi] = -1
        it += 1


def least_float(gap: Callable[[float], float], *, lo: float = 0.0, hi: float = 1.7976931348623157e308,
                start: float | None = None) -> float | None:
    """Least float x in [lo, hi] (both >= 0) with ``gap(x) <= 0`` (monotone); None if none."""
    return _maybe_float(least_feasible(lambda m: gap(index_float(m)), lower=float_index(lo), upper=float_index(hi),
                                       start=None if start is None else float_index(start), step=2**48, tol=FLOAT_TOL))


def greatest_float(gap: Callable[[float], float], *, lo: float = 0.0, hi: float = 1.7976931348623157e308,
                   start: float | None = None) -> float | None:
    """Greatest float x in [lo, hi] with ``gap(x) <= 0`` when feasibility holds below a threshold
    (e.g. the largest mu whose delta meets a budget); None if ``gap(lo) > 0``."""
    first_bad = least_feasible(lambda m: _negate_gap(gap(index_float(m))), lower=float_index(lo), upper=float_index(hi),
                               start=None if start is None else float_index(start), step=2**48, tol=FLOAT_TOL)
    if first_bad is None:
        return hi
    # the search stops within FLOAT_TOL of the first infeasible float: step back to a feasible one
    m = first_bad - 1
    while m >= float_index(lo):
        if gap(index_float(m)) <= 0:
            return index_float(m)
        m -= FLOAT_TOL
    return None


def _negate_gap(v: float) -> float:
    """Gap of "infeasible" for a gap v of "feasible" (v <= 0): <= 0 exactly when v > 0 or NaN."""
    if math.isnan(v):
        return -1.0
    return -v if v != 0 else 5e-324


def _maybe_float(m: int | None) -> float | None:
    return None if m is None else index_float(m)


def lattice_point(m: int) -> float:
    """2 ** (m / LATTICE): the m-th calibration factor."""
    return 2.0 ** (m / LATTICE)


def lattice_index_at_or_above(x: float) -> int:
    """Least m with lattice_point(m) >= x (for a starting point; x > 0 finite)."""
    m = math.ceil(math.log2(x) * LATTICE)
    while lattice_point(m) < x:
        m += 1
    while lattice_point(m - 1) >= x:
        m -= 1
    return m
