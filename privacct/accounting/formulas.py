"""Closed-form privacy formulas, each evaluated so that floating-point error can only loosen it.

Conventions: ``eps0`` is the per-release pure-DP level of a Laplace release (Delta_1 / b); ``mu``
the Gaussian ratio Delta_2 / sigma; ``rho`` a zCDP parameter; ``count`` a number of releases.

Outward rounding (docs/accounting.md#conservative-numerics): every function here returns a value
on the private side of the exact value of its formula. Sums of non-negative terms are rounded up
by a relative bound on their float error; a formula whose terms cancel is rounded up by an
absolute bound, the sum of the terms' magnitudes times a multiple of the unit roundoff
u = 2**-53; an epsilon found from a delta (or a mu, rho from a budget) is the least (greatest)
float that meets a delta evaluated as an upper bound, found by :mod:`privacct.accounting.rootfind`.
The Gaussian privacy profile, whose two terms cancel at small mu, is computed from an equivalent
integral without cancellation (:func:`gaussian_log_delta`). ``tests/privacct/test_reference_mpmath.py`` checks every accountant
against independent 50-digit references.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import NumericalError
from .rootfind import FLOAT_TOL, greatest_float, least_feasible_many, least_float

U = 2.0**-53  # unit roundoff of a double
MAX_FLOAT = 1.7976931348623157e308


def up(x: float, err: float = 0.0) -> float:
    """x + err rounded up to the next float (err: a bound on the absolute error of x)."""
    y = x + err
    if math.isnan(y):
        raise NumericalError("a privacy formula produced NaN")
    return math.nextafter(y, math.inf) if math.isfinite(y) else y


def up_rel(x: float, k: float = 4.0) -> float:
    """x rounded up by a relative error bound of k unit roundoffs (x >= 0)."""
    return up(x, k * U * abs(x))


def float_up(n: int) -> float:
    """The least float >= the integer n (counts above 2**53 are not all floats)."""
    f = float(n)
    return f if f >= n else math.nextafter(f, math.inf)


def safe_sum(values) -> float:
    """math.fsum, or +inf when the sum overflows (fsum raises OverflowError instead)."""
    try:
        return math.fsum(values)
    except OverflowError:
        return math.inf


# --------------------------------------------------------------------------- Laplace
def laplace_delta(eps: float, eps0: float) -> float:
    """Tight hockey-stick profile of one Laplace release with eps0 = Delta_1 / b (upper bound):

    delta(eps) = 1 - exp((eps - eps0) / 2) for 0 <= eps < eps0, and 0 for eps >= eps0
    (privacy profile of the Laplace mechanism; Balle, Barthe, Gaboardi 2018; docs/accounting.md).
    """
    if eps >= eps0:
        return 0.0
    v = -math.expm1((eps - eps0) / 2.0)
    return min(1.0, up(v, 8 * U * (v + max(abs(eps), abs(eps0)))))


# --------------------------------------------------------------------------- Gaussian
_GL_X, _GL_W = np.polynomial.legendre.leggauss(64)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_GAUSS_REL = 1e-11  # relative margin on delta (measured quadrature error <= 3e-13, tests/privacct)


def gaussian_log_delta(eps: float, mu: float) -> float:
    """log of an upper bound on the exact delta(eps) of a Gaussian mechanism with Delta / sigma = mu:

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)
    (Balle & Wang 2018, ICML, arXiv 1805.06530, Theorem 8; the same curve as mu-GDP, Dong, Roth,
    Su 2019, Cor. 2.13). The two terms cancel for small mu (to ~1e-12 of their size at
    mu = 1e-12, where double precision gets delta wrong by 10 %), so delta is computed from the
    equivalent integral over the privacy loss L ~ N(mu^2/2, mu^2): with u0 = eps/mu - mu/2,

        delta(eps) = E[(1 - e^{eps - L})_+] = int_0^inf (1 - e^{-mu v}) phi(u0 + v) dv,

    whose integrand is positive (1 - e^{-mu v} by expm1), by 64-point Gauss-Legendre panels (for
    u0 < 0 over w = u0 + v, so that u0 + v never cancels), truncated where the integrand falls
    below e^-60 of its peak, in log space (no underflow at tiny delta). The result is raised by a
    relative 1e-11 plus bounds on the rounding of u0 and of the logs (docs/accounting.md,
    "Gaussian profile"); it is never above 0 (delta <= 1).
    """
    if mu <= 0:
        return -math.inf
    eps = max(eps, 0.0)
    u0 = eps / mu - mu / 2.0
    if math.isnan(u0):
        return 0.0
    if u0 == math.inf:
        return -math.inf
    if u0 >= 0:
        # over v: e^{u0^2/2} sqrt(2 pi) phi(u0 + v) = exp(-(u0 v + v^2/2)); V solves u0 V + V^2/2 = 60
        span = 120.0 / (u0 + math.sqrt(u0 * u0 + 120.0))
        edges = sorted({0.0, span, 0.05 * span, 0.25 * span, min(span, 8.0 / mu)})
        scale = -u0 * u0 / 2.0
    else:
        # over w = u0 + v (no cancellation in u0 + v): integrand (1 - e^{-mu (w - u0)}) e^{-w^2/2}
        span = 12.0 - u0
        edges = sorted({u0, 12.0, max(u0, -12.0), max(u0, 0.0), min(12.0, u0 + 8.0 / mu)})
        scale = 0.0
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if not hi > lo:
            continue
        x = (hi - lo) / 2.0 * _GL_X + (hi + lo) / 2.0
        with np.errstate(over="ignore"):
            if u0 >= 0:
                f = -np.expm1(-mu * x) * np.exp(-(u0 * x + x * x / 2.0))
            else:
                f = -np.expm1(-mu * (x - u0)) * np.exp(-x * x / 2.0)
        total += (hi - lo) / 2.0 * float(np.sum(f * _GL_W))
    if not total > 0:
        # nothing resolved: far in the tail (delta ~ 0) only when u0 is large; otherwise delta <= 1
        return -math.inf if u0 > 40.0 else 0.0
    log_d = scale - _LOG_SQRT_2PI + math.log(total)
    # u0 = eps/mu - mu/2 cancels for large mu: its absolute error moves log delta by up to
    # about (|u0| + span) times it.
    u0_err = 4 * U * (eps / mu + mu / 2.0)
    return min(0.0, log_d + _GAUSS_REL + 16 * U * (abs(scale) + abs(log_d) + 1.0) + 2.0 * u0_err * (abs(u0) + span + 1.0))


def gaussian_delta(eps: float, mu: float) -> float:
    """An upper bound on the exact delta(eps) of a Gaussian mechanism (Balle & Wang 2018, Thm 8);
    see :func:`gaussian_log_delta`."""
    ld = gaussian_log_delta(eps, mu)
    if ld >= 0:
        return 1.0
    return 0.0 if ld == -math.inf else min(1.0, up_rel(math.exp(ld), 4))


def gaussian_epsilon(delta: float, mu: float) -> float:
    """The least float eps >= 0 whose delta (:func:`gaussian_delta`, an upper bound) is <= delta:
    an upper bound on the exact epsilon of Balle & Wang (2018), Theorem 8."""
    if delta >= 1.0:
        return 0.0
    if delta <= 0.0:
        return math.inf
    log_d = math.log(delta)

    def gap(e: float) -> float:
        return max(gaussian_log_delta(e, mu), -1e300) - log_d

    start = mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / delta)) if mu < 1e150 else MAX_FLOAT
    e = least_float(gap, lo=0.0, hi=MAX_FLOAT, start=min(start, MAX_FLOAT))
    if e is None:
        raise NumericalError(f"no finite epsilon for a Gaussian with mu={mu!r} at delta={delta!r}")
    return e


def gaussian_log_delta_many(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """:func:`gaussian_log_delta` for arrays of (eps, mu) pairs, the same integral and margins."""
    eps = np.maximum(np.asarray(eps, dtype=float), 0.0)
    mu = np.asarray(mu, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        u0 = eps / mu - mu / 2.0
        pos = u0 >= 0
        span_pos = 120.0 / (np.where(pos, u0, 0.0) + np.sqrt(np.where(pos, u0, 0.0) ** 2 + 120.0))
        span = np.where(pos, span_pos, 12.0 - u0)
        start = np.where(pos, 0.0, u0)
        end = np.where(pos, span_pos, 12.0)
        kink = np.minimum(end, np.where(pos, 0.0, u0) + 8.0 / mu)
        e = np.stack([start, end, np.where(pos, 0.05 * span_pos, np.maximum(u0, -12.0)),
                      np.where(pos, 0.25 * span_pos, np.maximum(u0, 0.0)), kink], axis=1)
        e = np.sort(np.clip(e, start[:, None], end[:, None]), axis=1)
        total = np.zeros_like(u0)
        for k in range(4):
            lo, hi = e[:, k:k + 1], e[:, k + 1:k + 2]
            x = (hi - lo) / 2.0 * _GL_X[None, :] + (hi + lo) / 2.0
            f_pos = -np.expm1(-mu[:, None] * x) * np.exp(-(u0[:, None] * x + x * x / 2.0))
            f_neg = -np.expm1(-mu[:, None] * (x - u0[:, None])) * np.exp(-x * x / 2.0)
            f = np.where(pos[:, None], f_pos, f_neg)
            total += np.where((hi > lo)[:, 0], (hi - lo)[:, 0] / 2.0 * np.sum(f * _GL_W, axis=1), 0.0)
        scale = np.where(pos, -u0 * u0 / 2.0, 0.0)
        log_d = scale - _LOG_SQRT_2PI + np.log(total)
        u0_err = 4 * U * (eps / mu + mu / 2.0)
        out = log_d + _GAUSS_REL + 16 * U * (np.abs(scale) + np.abs(log_d) + 1.0) + 2.0 * u0_err * (np.abs(u0) + span + 1.0)
        out = np.where(total > 0, out, np.where(u0 > 40.0, -np.inf, 0.0))
        out = np.where(np.isnan(u0), 0.0, np.where(u0 == np.inf, -np.inf, out))
    return np.minimum(out, 0.0)


def gaussian_epsilons(delta: float, mus) -> np.ndarray:
    """:func:`gaussian_epsilon` for many mu at once (:func:`rootfind.least_feasible_many` over
    the floats' bit patterns), to within 64 floats of the least eps whose delta (an upper bound)
    is <= delta; the feasible end is returned. +inf where no finite eps exists."""
    mus = np.asarray(mus, dtype=float)
    if delta >= 1.0:
        return np.zeros_like(mus)
    if delta <= 0.0:
        return np.full_like(mus, np.inf)
    if mus.size <= 4:  # the scalar search (false position) takes fewer evaluations
        return np.array([_eps_or_inf(delta, float(m)) for m in mus])
    log_target = math.log(delta)

    def feasible(e: np.ndarray, m: np.ndarray) -> np.ndarray:
        return gaussian_log_delta_many(e, m) <= log_target

    with np.errstate(over="ignore"):
        hi_val = np.minimum(2.0 * (mus * mus / 2.0 + mus * math.sqrt(2.0 * -math.log(delta))) + 1e-300, MAX_FLOAT)
    ok = feasible(hi_val, mus)
    for _ in range(64):  # grow the upper end until feasible (never needed for the zCDP bound)
        if ok.all():
            break
        with np.errstate(over="ignore"):
            hi_val = np.where(ok, hi_val, np.minimum(hi_val * 16.0, MAX_FLOAT))
        ok = ok | feasible(hi_val, mus)
        if np.all(hi_val[~ok] >= MAX_FLOAT):
            break
    out = np.full_like(mus, np.inf)
    g0 = gaussian_log_delta_many(np.zeros_like(mus), mus) - log_target
    zero = g0 <= 0
    out[zero] = 0.0
    act = np.flatnonzero(ok & ~zero)
    if act.size:
        m = mus[act]
        lo = np.zeros(act.size, dtype=np.int64)
        hi = hi_val[act].view(np.int64).copy()
        ghi = gaussian_log_delta_many(hi.view(np.float64), m) - log_target

        def gap(points, which):
            return gaussian_log_delta_many(points.view(np.float64), m[which]) - log_target

        hi = least_feasible_many(gap, lo, hi, g0[act], ghi, tol=FLOAT_TOL)
        out[act] = hi.view(np.float64)
    return out


def _eps_or_inf(delta: float, mu: float) -> float:
    try:
        return gaussian_epsilon(delta, mu)
    except NumericalError:
        return math.inf


def gaussian_mu_for(epsilon: float, delta: float) -> float:
    """The greatest float mu (= Delta / sigma) whose delta at ``epsilon`` is <= ``delta``
    (Balle & Wang 2018, Theorem 8): the private side."""
    log_d = math.log(delta)
    mu = greatest_float(lambda m: max(gaussian_log_delta(epsilon, m), -1e300) - log_d, lo=0.0, hi=1e150, start=1.0)
    if mu is None or mu <= 0:
        raise NumericalError(f"no Gaussian meets epsilon={epsilon!r}, delta={delta!r}")
    return mu


# --------------------------------------------------------------------------- zCDP
def zcdp_epsilon_bs16(rho: float, delta: float) -> float:
    """Bun & Steinke (2016, arXiv 1605.02065), Prop. 1.3: eps = rho + 2 sqrt(rho ln(1/delta))
    (all terms non-negative; rounded up by 8 u)."""
    return up_rel(rho + 2.0 * math.sqrt(rho * -math.log(delta)), 8.0)


def _cks_terms(a: float, rho: float, log1d: float) -> tuple[float, float]:
    """(value, magnitude) of alpha rho + (ln(1/delta) + (alpha-1) ln(1-1/alpha) - ln alpha)/(alpha-1)."""
    am1 = a - 1.0
    t1 = a * rho
    t2 = am1 * math.log1p(-1.0 / a)
    t3 = math.log(a)
    return t1 + (log1d + t2 - t3) / am1, abs(t1) + (abs(log1d) + abs(t2) + abs(t3)) / am1


_CKS_GRID = np.concatenate([np.linspace(-12.0, 14.0, 261)])


def zcdp_epsilon_cks20(rho: float, delta: float) -> float:
    """Canonne, Kamath, Steinke (2020, arXiv 2004.00010), Prop. 12 / Cor. 13:

    eps = inf_{alpha > 1} [ alpha rho + (ln(1/delta) + (alpha - 1) ln(1 - 1/alpha) - ln alpha) / (alpha - 1) ].

    Every alpha gives a valid bound, so the minimiser's imprecision only loosens it; the value at
    the chosen alpha is rounded up by 16 u times the magnitude of its terms. Alpha runs over
    log(alpha - 1) on a grid, then golden-section refinement around the best grid point.
    """
    if rho == 0.0:
        return 0.0
    log1d = -math.log(delta)

    def obj(x: float) -> tuple[float, float]:
        return _cks_terms(1.0 + math.exp(x), rho, log1d)

    vals = [obj(float(x))[0] for x in _CKS_GRID]
    i = int(np.argmin(vals))
    lo, hi = float(_CKS_GRID[max(i - 1, 0)]), float(_CKS_GRID[min(i + 1, len(_CKS_GRID) - 1)])
    best_x = float(_CKS_GRID[i])
    # golden section on [lo, hi] (the objective is unimodal in log(alpha - 1))
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = obj(c)[0], obj(d)[0]
    for _ in range(80):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = obj(c)[0]
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = obj(d)[0]
    for x in (c, d):
        if obj(x)[0] < obj(best_x)[0]:
            best_x = x
    v, mag = obj(best_x)
    return max(0.0, up(v, 16 * U * mag))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smaller of the Bun-Steinke and Canonne-Kamath-Steinke conversions (both valid)."""
    if not math.isfinite(rho):
        return math.inf
    return min(zcdp_epsilon_bs16(rho, delta), zcdp_epsilon_cks20(rho, delta))


def zcdp_delta(rho: float, eps: float) -> float:
    """Canonne, Kamath, Steinke (2020), Prop. 12 (upper bound, clamped to [0, 1]):
    delta = inf_{alpha > 1} exp((alpha - 1)(alpha rho - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha."""
    if rho == 0.0:
        return 0.0

    def logd(x: float) -> tuple[float, float]:
        a = 1.0 + math.exp(x)
        am1 = a - 1.0
        t1 = am1 * (a * rho - eps)
        t2 = math.log(am1)
        t3 = a * math.log1p(-1.0 / a)
        return t1 - t2 + t3, abs(am1 * a * rho) + abs(am1 * eps) + abs(t2) + abs(t3)

    vals = [logd(float(x))[0] for x in _CKS_GRID]
    i = int(np.argmin(vals))
    v, mag = logd(float(_CKS_GRID[i]))
    for x in np.linspace(_CKS_GRID[max(i - 1, 0)], _CKS_GRID[min(i + 1, len(_CKS_GRID) - 1)], 41):
        vx, mx = logd(float(x))
        if vx < v:
            v, mag = vx, mx
    lv = up(v, 16 * U * mag)
    return 1.0 if lv >= 0 else min(1.0, up_rel(math.exp(lv), 4))


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """The greatest float rho with zcdp_epsilon(rho, delta) <= epsilon (the private side)."""
    rho = greatest_float(lambda r: zcdp_epsilon(r, delta) - epsilon, lo=0.0, hi=1e300, start=epsilon)
    if rho is None or rho <= 0:
        raise NumericalError(f"no zCDP level meets epsilon={epsilon!r}, delta={delta!r}")
    return rho


# --------------------------------------------------------------------------- RDP
def rdp_gaussian(mu: float, orders: np.ndarray) -> np.ndarray:
    """RDP of a Gaussian with ratio mu at each order alpha: alpha mu^2 / 2 (Mironov 2017, Prop. 7),
    rounded up (4 u)."""
    with np.errstate(over="ignore"):
        v = orders * (mu * mu / 2.0)
    return v * (1.0 + 4 * U) + 5e-324


def rdp_laplace(eps0, orders: np.ndarray) -> np.ndarray:
    """RDP of a Laplace release with eps0 = Delta_1 / b at each order alpha > 1 (Mironov 2017, Prop. 6):

    RDP_alpha = (1/(alpha-1)) ln( alpha/(2alpha-1) e^{(alpha-1) eps0} + (alpha-1)/(2alpha-1) e^{-alpha eps0} ),

    evaluated without cancellation and rounded up. Writing it as eps0 + ln(1 + (alpha-1)
    expm1((1-2alpha) eps0)/(2alpha-1))/(alpha-1) (dp_accounting's form) cancels when
    (2alpha-1) eps0 is small (the result is ~alpha eps0^2/2, the two terms ~eps0): there the
    power series of g(x) = alpha expm1((alpha-1)x) + (alpha-1) expm1(-alpha x) is summed,
    RDP = ln1p(g / (2alpha-1)) / (alpha-1), g = alpha(alpha-1) sum_{n>=2} c_n x^n / n!,
    c_n = (alpha-1)^{n-1} + (-1)^n alpha^{n-1}. Never above eps0 (the pure-DP limit).

    ``eps0`` may be a float (result shaped like ``orders``) or an array of n ratios (result n x
    len(orders)).
    """
    x = np.asarray(eps0, dtype=float)
    scalar = x.ndim == 0
    x = np.atleast_1d(x)[:, None]
    a = np.asarray(orders, dtype=float)[None, :]
    a, x = np.broadcast_arrays(a, x)
    out = np.empty_like(a)
    small = (2 * a - 1) * x < 1e-3
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # direct form where it does not cancel: error ~ 16 u (eps0 + |log term|)
        ad, xd = a[~small], x[~small]
        t = np.log1p((ad - 1) * np.expm1(xd * (1 - 2 * ad)) / (2 * ad - 1)) / (ad - 1)
        out[~small] = xd + t + 16 * U * (xd + np.abs(t)) + 5e-324
        # series where it would: |alpha x| < 1e-3, terms n = 2..40
        asm, xs = a[small], x[small]
        am1 = asm - 1.0
        total = np.zeros_like(asm)
        pa = am1 * xs * xs / 2.0     # (alpha-1)^(n-1) x^n / n!, n = 2
        pb = asm * xs * xs / 2.0     # alpha^(n-1) x^n / n!, n = 2
        for n in range(2, 41):
            total += pa + (pb if n % 2 == 0 else -pb)
            pa = pa * am1 * xs / (n + 1)
            pb = pb * asm * xs / (n + 1)
        out[small] = np.log1p(asm * am1 * total / (2 * asm - 1)) / am1 * (1.0 + 64 * U) + 5e-324
    out = np.minimum(out, x * (1.0 + 4 * U) + 5e-324)
    return out[0] if scalar else out


def rdp_epsilon(orders: np.ndarray, rdp: np.ndarray, delta: float) -> float:
    """RDP to (eps, delta): Canonne, Kamath, Steinke (2020), Prop. 12 (also Asoodeh et al. 2021,
    arXiv 2001.05990, Eq. 20), as in dp_accounting's compute_epsilon:

    eps = min over alpha > 1.01 of r_alpha + ln(1 - 1/alpha) - ln(delta alpha)/(alpha - 1),

    and eps = 0 where delta >= sqrt(1 - e^{-r_alpha}) (Bretagnolle-Huber: TV <= sqrt(1 - e^{-KL})
    and KL <= r_alpha). Each candidate is rounded up by 16 u times the magnitude of its terms.
    """
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    if not np.all(np.isfinite(r)) and not np.any(np.isfinite(r)):
        return math.inf
    with np.errstate(over="ignore", invalid="ignore"):
        kl_ok = delta * delta + np.expm1(-r) > 4 * U
        if np.any(kl_ok & np.isfinite(r)):
            return 0.0
        t2 = np.log1p(-1.0 / a)
        t3 = (math.log(delta) + np.log(a)) / (a - 1.0)
        v = r + t2 - t3
        mag = np.abs(r) + np.abs(t2) + np.abs(t3)
        cand = v + 16 * U * mag
        cand = np.where((a > 1.01) & np.isfinite(cand), cand, np.inf)
    e = float(np.min(cand))
    return max(0.0, up(e)) if math.isfinite(e) else math.inf


def rdp_delta(orders: np.ndarray, rdp: np.ndarray, eps: float) -> float:
    """(eps, delta) from RDP, the dual of :func:`rdp_epsilon` (CKS20 Prop. 12, as in
    dp_accounting's compute_delta), rounded up: delta = min over alpha of
    exp((alpha-1)(r_alpha - eps + ln(1-1/alpha)) - ln alpha), and sqrt(1 - e^{-r})."""
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        kl = 0.5 * np.log1p(-np.exp(-r))
        kl_mag = np.abs(kl) + 1.0
        t = (a - 1.0) * (r - eps + np.log1p(-1.0 / a)) - np.log(a)
        mag = (a - 1.0) * (np.abs(r) + abs(eps) + np.abs(np.log1p(-1.0 / a))) + np.abs(np.log(a))
        cand = np.where(a > 1.01, t + 16 * U * mag, np.inf)
        cand = np.minimum(cand, np.where(r > 0, kl + 16 * U * kl_mag, -np.inf))
    lv = float(np.min(cand))
    if not math.isfinite(lv):
        return 0.0 if lv < 0 else 1.0
    return min(1.0, up_rel(math.exp(min(lv, 0.0)), 4))


# --------------------------------------------------------------------------- advanced composition
def drv_epsilon(eps: list[float], counts: list[float], delta_prime: float) -> float:
    """Dwork, Rothblum, Vadhan (2010), Thm III.3 / Dwork & Roth (2014) Thm 3.20, heterogeneous form:

    eps' = sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^{eps_i} - 1), with delta' added to the
    sum of the releases' deltas. ``counts[i]`` releases have level ``eps[i]``. All terms are
    non-negative: rounded up by a relative 16 u.
    """
    s2 = safe_sum(c * e * e for e, c in zip(eps, counts, strict=True))
    drift = safe_sum(c * e * _expm1_or_inf(e) for e, c in zip(eps, counts, strict=True))
    return up_rel(math.sqrt(2.0 * -math.log(delta_prime) * s2) + drift, 16)


def kov_closed_form_epsilon(eps: list[float], counts: list[float], delta_tilde: float) -> float:
    """Kairouz, Oh, Viswanath (2015, arXiv 1311.0776), Theorem 3.5 (heterogeneous, closed form):

    eps' = min{ sum eps_i,
                sum (e^{eps_i}-1) eps_i/(e^{eps_i}+1) + sqrt(2 sum eps_i^2 ln(e + sqrt(sum eps_i^2)/delta~)),
                sum (e^{eps_i}-1) eps_i/(e^{eps_i}+1) + sqrt(2 sum eps_i^2 ln(1/delta~)) },
    valid with total delta 1 - (1 - delta~) prod(1 - delta_i). (e^x - 1)/(e^x + 1) = tanh(x/2).
    Non-negative terms: each candidate is rounded up by a relative 16 u.
    """
    s1 = safe_sum(c * e for e, c in zip(eps, counts, strict=True))
    s2 = safe_sum(c * e * e for e, c in zip(eps, counts, strict=True))
    drift = safe_sum(c * math.tanh(e / 2.0) * e for e, c in zip(eps, counts, strict=True))
    if not math.isfinite(s2):
        return up_rel(s1, 16)
    b2 = drift + math.sqrt(2.0 * s2 * math.log(math.e + math.sqrt(s2) / delta_tilde))
    b3 = drift + math.sqrt(2.0 * s2 * -math.log(delta_tilde))
    return up_rel(min(s1, b2, b3), 16)


def _expm1_or_inf(x: float) -> float:
    try:
        return math.expm1(x)
    except OverflowError:
        return math.inf


def kov_optimal_epsilon(k: int, eps0: float, delta: float) -> float:
    """The exact epsilon at ``delta`` of k-fold composition of eps0-DP releases (delta0 = 0):
    Kairouz, Oh, Viswanath (2015), Theorem 3.3, between the theorem's grid points too.

    The worst case is k-fold randomized response, whose privacy loss takes the values
    (k - 2l) eps0 with probabilities P_l = C(k, l) e^{(k-l) eps0} / (1 + e^{eps0})^k and
    Q_l = C(k, l) e^{l eps0} / (1 + e^{eps0})^k. Its hockey-stick divergence is
    delta(eps) = sum_l max(0, P_l - e^eps Q_l) = max_j (A_j - e^eps B_j), with
    A_j = sum_{l<j} P_l, B_j = sum_{l<j} Q_l (the maximum over the sets {l < j}), which equals
    KOV's delta*_i at eps = (k - 2i) eps0 and is exact in between. Hence the least eps >= 0 with
    delta(eps) <= delta is eps* = max(0, max_j ln((A_j - delta) / B_j)) over the j with A_j > delta,
    monotone in k, eps0 and delta (docs/accounting.md#advanced). Logs of A_j, B_j are
    accumulated in double precision; the result is raised by a bound on that arithmetic's
    error (every term's log carries an absolute error of at most 8 u times its magnitude).
    """
    if delta <= 0:
        return up_rel(k * eps0, 4)
    from scipy import special   # here, not at import: scipy.special is about 3.5 MB of resident memory (issue 23)

    half = k // 2 + 1
    ell = np.arange(half + 1, dtype=float)
    log_norm = k * np.logaddexp(0.0, eps0)
    log_c = special.gammaln(k + 1.0) - special.gammaln(ell + 1.0) - special.gammaln(k - ell + 1.0)
    log_p = log_c + (k - ell) * eps0 - log_norm
    log_q = log_c + ell * eps0 - log_norm
    log_a = np.logaddexp.accumulate(log_p)   # log A_{j}, j = l + 1
    log_b = np.logaddexp.accumulate(log_q)
    # absolute error bound of every log term and of the accumulation
    err = 8 * U * (3.0 * special.gammaln(k + 1.0) + k * eps0 + log_norm + 3.0) + 4 * U * (half + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_a_up = log_a + err
        a_up = np.exp(log_a_up)
        ok = a_up > delta
        cand = np.where(ok, log_a_up + np.log1p(-delta / np.where(ok, a_up, 1.0)) - (log_b - err), -np.inf)
    e = float(np.max(cand))
    if not math.isfinite(e) or e <= 0:
        return 0.0
    mag = abs(float(np.max(np.where(ok, np.abs(log_a_up) + np.abs(log_b), 0.0)))) + 1.0
    return up(e, 16 * U * mag)
