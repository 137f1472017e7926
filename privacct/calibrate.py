"""Calibration: the smallest noise that meets a budget (epsilon, delta).

:func:`calibrate_log` multiplies every group's noise scale of a log by one common factor c and
returns the log with the smallest c whose accounted epsilon is <= the budget. Closed forms are used
where the accountant has one (basic composition of Laplace releases: c = eps_basic(1) / eps;
analytic Gaussian and zCDP for Gaussian-only logs: c = mu(1) / mu* and sqrt(rho(1) / rho*)), and
bisection on log c otherwise. While bisecting, the upper (private) end of the bracket is kept,
and the result is re-accounted before it is returned; if rounding ever left it over budget, c is
nudged up until it is not (conservative: the noise only grows).

:func:`calibrate_noise` does the same for one release group (the ``privacct calibrate`` command).
"""

from __future__ import annotations

import math

from scipy import optimize

from .accounting import ACCOUNTANTS, get_accountant
from .accounting import formulas as F
from .accounting.base import is_gaussian, is_pure
from .errors import NumericalError, PrivacctError, UnsupportedLogError, check_delta, check_positive
from .log import MechanismLog, ReleaseGroup, Sensitivity, Structure

_REL_TOL = 1e-6


def _eps(acc, log: MechanismLog, delta: float) -> float:
    try:
        return acc.epsilon(log, delta=delta)
    except NumericalError:
        return math.inf


def _closed_form_factor(name: str, log: MechanismLog, epsilon: float, delta: float) -> float | None:
    if name == "basic" and is_pure(log):
        return get_accountant("basic").epsilon(log, delta=0.0) / epsilon
    if name == "analytic-gaussian" and is_gaussian(log):
        from .accounting.accountants import AnalyticGaussian

        return AnalyticGaussian.mu(log) / F.gaussian_mu_for(epsilon, delta)
    if name == "zcdp" and is_gaussian(log):
        from .accounting.accountants import ZCDP

        return math.sqrt(ZCDP.rho(log) / F.zcdp_rho_for(epsilon, delta))
    return None


def _cheap_guess(name: str, log: MechanismLog, epsilon: float, delta: float) -> float | None:
    """A starting factor from a cheaper accountant, to shorten the bracket search: RDP for PLD
    (PLD is the tighter of the two, so the RDP factor is usually already feasible), otherwise a
    closed form (zCDP for Gaussian logs, basic for pure ones)."""
    try:
        if name == "pld" and get_accountant("rdp").supports(log, delta=delta):
            return calibration_factor(log, epsilon=epsilon, delta=delta, accountant="rdp")
        for other in ("zcdp", "basic"):
            if other != name and get_accountant(other).supports(log, delta=delta):
                c = _closed_form_factor(other, log, epsilon, delta)
                if c is not None and math.isfinite(c) and c > 0:
                    return c
    except PrivacctError:
        pass
    return None


def _bisect_factor(acc, log: MechanismLog, epsilon: float, delta: float, guess: float | None) -> float:
    """Smallest feasible factor: bracket [lo, hi] (hi meets the budget, lo does not), Brent's
    method on log c (few evaluations, each possibly a PLD composition), then the private side."""
    cache: dict[float, float] = {}

    def eps_at(c: float) -> float:
        if c not in cache:
            cache[c] = _eps(acc, log.scaled_noise(c), delta)
        return cache[c]

    start = guess if guess is not None else 1.0
    lo = hi = start
    if eps_at(start) <= epsilon:
        while eps_at(lo) <= epsilon:
            hi, lo = lo, lo / 2.0
            if lo < 1e-12:
                raise NumericalError("calibration: the budget is met at vanishing noise; check the log")
    else:
        while eps_at(hi) > epsilon:
            lo, hi = hi, hi * 2.0
            if hi > 1e12:
                raise NumericalError("calibration: no noise scale up to 1e12 x meets the budget")

    def gap(x: float) -> float:
        e = eps_at(math.exp(x))
        return (e if math.isfinite(e) else 1e300) - epsilon

    try:
        root = optimize.brentq(gap, math.log(lo), math.log(hi), xtol=_REL_TOL / 4, rtol=1e-12, maxiter=100)
        c = math.exp(root) * (1.0 + _REL_TOL / 2)
        if c < hi and eps_at(c) <= epsilon:
            return c
    except (ValueError, RuntimeError):
        pass  # fall back to plain bisection on the bracket
    while hi / lo - 1.0 > _REL_TOL:
        mid = math.sqrt(lo * hi)
        if eps_at(mid) <= epsilon:
            hi = mid
        else:
            lo = mid
    return hi


def calibration_factor(log: MechanismLog, *, epsilon: float, delta: float, accountant: str) -> float:
    """Smallest c > 0 such that ``accountant`` gives ``log.scaled_noise(c)`` an epsilon <= ``epsilon``."""
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta, allow_zero=True)
    acc = get_accountant(accountant)
    reason = acc.why_not(log, delta=delta)
    if reason is not None:
        raise UnsupportedLogError(f"accountant {accountant!r} cannot calibrate this log: {reason}")
    c = _closed_form_factor(accountant, log, epsilon, delta)
    if c is None:
        c = _bisect_factor(acc, log, epsilon, delta,
                           guess=_cheap_guess(accountant, log, epsilon, delta))
    # Re-account the result; nudge c up (growing steps) if rounding left it over budget.
    step = 1e-12
    for _ in range(40):
        if _eps(acc, log.scaled_noise(c), delta) <= epsilon:
            return c
        c = math.nextafter(c * (1.0 + step), math.inf)
        step *= 4.0
    raise NumericalError(f"calibration under {accountant!r} did not converge")


def calibrate_log(log: MechanismLog, *, epsilon: float, delta: float, accountant: str | None = None,
                  return_accountant: bool = False):
    """``log`` with all noise scales multiplied by the smallest common factor meeting (epsilon, delta).

    ``accountant`` None: the accountant that allows the least noise among those that apply.
    With ``return_accountant=True`` returns ``(log, accountant_name)``.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta, allow_zero=True)
    names = [accountant] if accountant is not None else list(ACCOUNTANTS)
    if accountant is not None and accountant not in ACCOUNTANTS:
        raise PrivacctError(f"accountant must be one of {', '.join(ACCOUNTANTS)}, got {accountant!r}")
    best: tuple[float, str] | None = None
    reasons = []
    for name in names:
        try:
            c = calibration_factor(log, epsilon=epsilon, delta=delta, accountant=name)
        except UnsupportedLogError as e:
            reasons.append(str(e))
            continue
        if best is None or c < best[0]:
            best = (c, name)
    if best is None:
        raise UnsupportedLogError("; ".join(reasons) or "no accountant applies")
    out = log.scaled_noise(best[0])
    return (out, best[1]) if return_accountant else out


def single_group_log(*, mechanism: str, sensitivity: float, structure: Structure, noise_scale: float = 1.0,
                     name: str = "release") -> MechanismLog:
    """A one-group log (as the ``account`` / ``calibrate`` commands build it)."""
    norm = {"laplace": "l1", "gaussian": "l2", "symmetric-gaussian-matrix": "frobenius-upper"}.get(mechanism)
    if norm is None:
        raise PrivacctError(f"mechanism must be one of laplace, gaussian, symmetric-gaussian-matrix, got {mechanism!r}")
    group = ReleaseGroup(name, mechanism, noise_scale, Sensitivity(norm, sensitivity, "given on the command line"), structure)
    return MechanismLog(name, "joint", (group,), neighbouring="add-remove")


def calibrate_noise(*, mechanism: str, sensitivity: float, structure: Structure, epsilon: float, delta: float,
                    accountant: str | None = None) -> tuple[float, str]:
    """(noise scale, accountant) for one release group meeting (epsilon, delta)."""
    log = single_group_log(mechanism=mechanism, sensitivity=sensitivity, structure=structure)
    out, name = calibrate_log(log, epsilon=epsilon, delta=delta, accountant=accountant, return_accountant=True)
    return out.release_groups[0].noise_scale, name
