"""Calibration: the smallest noise that meets a budget (epsilon, delta).

:func:`calibration_factor` finds the least common factor c by which every noise scale of a log
must be multiplied so that an accountant's epsilon is <= the budget; :func:`calibrate_log`
returns the scaled log (under the accountant allowing the least noise, by default), and
:func:`calibrate_noise` does it for one release group (the ``privacct calibrate`` command).

How (docs/accounting.md#calibration):

* Only the reasons that no noise can remove refuse a calibration
  (``Accountant.why_not_for_any_noise``); a log that an accountant cannot account at its current
  noise (PLD: loss range too large) is calibrated from noise levels it can account.
* The factor is c = t * s0 with s0 = max_i Delta_i / scale_i, so the search runs over the same
  normalised problem whatever the units: multiplying every sensitivity by k multiplies the
  answer by k (up to the rounding of s0 and of the final product; the property test allows
  1e-12 relative).
* Where the accountant has a closed form it answers it itself
  (:meth:`privacct.accounting.Accountant.closed_form_factor`: basic composition of Laplace releases,
  analytic Gaussian, zCDP); it is tried first, then the same value raised by a relative 2^-40; the
  first that the accountant confirms is returned.
* Otherwise t is the least point 2^(m / 2^20) of a fixed geometric lattice at which the
  accountant, run on the scaled log itself, meets the budget: the conservative root-finder
  (:mod:`privacct.accounting.rootfind`) keeps the private side, so the returned log has been
  accounted and meets the budget by construction (never overshoots), and it is within a
  relative 6.6e-7 of the least factor. The search starts from a cheaper accountant's answer: the
  calibration of the accountant's ``calibration_guide`` (PLD: RDP's), else the first closed form of
  :data:`GUESS_CLOSED_FORMS` that applies.
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass

from .accounting import ACCOUNTANT_NAMES, get_accountant
from .errors import NumericalError, PrivacctError, UnsupportedLogError, check_delta, check_positive
from .log import MechanismLog, ReleaseGroup, Sensitivity, Structure

_NUDGE = 2.0**-40
_LATTICE_STEP = 2**14  # first bracketing step on the lattice: 2^(2^14 / 2^20) - 1 = 1.1 %
_MAX_FLOAT = 1.7976931348623157e308
#: Noise scales a calibration can return: [MIN_NOISE_SCALE, MAX_NOISE_SCALE] (room to rescale a log stays
#: within normal floats; below 1e-300 a scale is near the subnormal range, above max/2 one doubling overflows).
MIN_NOISE_SCALE = 1e-300
MAX_NOISE_SCALE = _MAX_FLOAT / 2
#: Accountants whose closed forms (:meth:`privacct.accounting.Accountant.closed_form_factor`) start the
#: lattice search of an accountant without one, in this order (the first that applies; zCDP's is the closer).
GUESS_CLOSED_FORMS = ("zcdp", "basic")


def _eps_or_inf(acc, log: MechanismLog, delta: float) -> float:
    if acc.why_not(log, delta=delta) is not None:
        return math.inf
    try:
        return acc.epsilon(log, delta=delta)
    except NumericalError:
        return math.inf


def _unit_scale(log: MechanismLog) -> float:
    """s0 = max_i Delta_i / scale_i (computed through logs if the quotient overflows)."""
    try:
        s0 = max(g.sensitivity.value / g.noise_scale for g in log.release_groups)
    except (OverflowError, ZeroDivisionError):
        s0 = math.inf
    if math.isfinite(s0) and s0 > 0:
        return s0
    return 2.0 ** max(math.log2(g.sensitivity.value) - math.log2(g.noise_scale) for g in log.release_groups)


def _guess(acc, log: MechanismLog, epsilon: float, delta: float) -> float | None:
    """A starting factor for ``acc``'s lattice search: its guide's calibration (PLD: RDP's, usually within a
    few per cent), else the first closed form of :data:`GUESS_CLOSED_FORMS` that applies."""
    try:
        if acc.calibration_guide is not None:
            return calibration_factor(log, epsilon=epsilon, delta=delta, accountant=acc.calibration_guide)
        for other in GUESS_CLOSED_FORMS:
            c = get_accountant(other).closed_form_factor(log, epsilon=epsilon, delta=delta)
            if c is not None and math.isfinite(c) and c > 0:
                return c
    except PrivacctError:
        pass
    return None


def calibration_factor(log: MechanismLog, *, epsilon: float, delta: float, accountant: str) -> float:
    """Least c > 0 (see the module docstring) such that ``accountant`` gives
    ``log.scaled_noise(c)`` an epsilon <= ``epsilon`` at ``delta``; the returned factor has been
    accounted. Raises UnsupportedLogError if no noise scale can make the accountant apply, and
    NumericalError if no finite noise scale meets the budget."""
    from .accounting.rootfind import LATTICE, lattice_index_at_or_above, lattice_point, least_feasible

    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta, allow_zero=True)
    acc = get_accountant(accountant)
    if not isinstance(log, MechanismLog):
        raise PrivacctError(f"log must be a MechanismLog, got {type(log).__name__}")
    reason = acc.why_not_for_any_noise(log, delta=delta)
    if reason is not None:
        raise _no_noise_helps(accountant, reason)

    def gap_at(c: float) -> float:
        return _eps_or_inf(acc, log.scaled_noise(c), delta) - epsilon

    # every scaled noise scale c * b, and the factor c itself, must stay a positive finite (normal)
    # float; the bounds are taken in log2 so that a tiny or huge b cannot overflow them
    log2_max = math.log2(MAX_NOISE_SCALE)
    b_max = max(g.noise_scale for g in log.release_groups)
    b_min = min(g.noise_scale for g in log.release_groups)
    log2_hi = min(log2_max - math.log2(b_max), log2_max)
    log2_lo = max(math.log2(MIN_NOISE_SCALE) - math.log2(b_min), -1000.0)
    c_hi, c_lo = 2.0 ** log2_hi, 2.0 ** log2_lo

    closed = acc.closed_form_factor(log, epsilon=epsilon, delta=delta)
    if closed is not None and math.isfinite(closed) and c_lo <= closed <= c_hi:
        for c in (closed, closed * (1.0 + _NUDGE)):
            if gap_at(c) <= 0:
                return c

    s0 = _unit_scale(log)
    lower = math.ceil((log2_lo - math.log2(s0)) * LATTICE) + 1
    upper = math.floor((log2_hi - math.log2(s0)) * LATTICE) - 1
    # the lattice point 2^(m / LATTICE) itself must be a finite normal float too
    lower = max(lower, math.ceil(-1000.0 * LATTICE) + 1)
    upper = min(upper, math.floor(log2_max * LATTICE) - 1)
    if lower >= upper:
        raise NumericalError(f"calibration under {accountant!r}: the noise scales of this log leave no room to "
                             "rescale them within the floating-point range")
    guess = closed if closed is not None else _guess(acc, log, epsilon, delta)
    start = None
    if guess is not None and math.isfinite(guess) and guess > 0:
        start = lattice_index_at_or_above(guess / s0)

    m = least_feasible(lambda m: gap_at(lattice_point(m) * s0), lower=lower, upper=upper,
                       start=start if start is not None else 0, step=_LATTICE_STEP)
    if m is None:
        reason = acc.why_not(log.scaled_noise(lattice_point(upper) * s0), delta=delta)
        if reason is not None:
            raise UnsupportedLogError(f"accountant {accountant!r} cannot account this log at any noise scale: {reason}")
        raise NumericalError(f"calibration under {accountant!r}: no finite noise scale meets epsilon={epsilon!r}, delta={delta!r}")
    if m == lower:
        raise NumericalError(f"calibration under {accountant!r}: the budget is met at vanishing noise; check the log")
    # If just below the answer the accountant does not apply (rather than exceeding the budget),
    # the answer is where the accountant stops applying, not where the budget is met: refuse.
    below = log.scaled_noise(lattice_point(m - 1) * s0)
    reason = acc.why_not(below, delta=delta)
    if reason is not None:
        raise UnsupportedLogError(f"accountant {accountant!r} cannot account this log at the noise the budget needs: {reason}")
    return lattice_point(m) * s0


def calibrate_log(log: MechanismLog, *, epsilon: float, delta: float, accountant: str | None = None,
                  return_accountant: bool = False):
    """``log`` with all noise scales multiplied by the smallest common factor meeting (epsilon, delta).

    ``accountant`` None: the accountant that allows the least noise among those that apply.
    With ``return_accountant=True`` returns ``(log, accountant_name)``.

    This is the one calibration path of the toolkit (learners call it, then rebuild their
    constants from the calibrated scales). Logs are frozen and hashable, so answers are cached per
    (log, epsilon, delta, accountant): a learner planned once per seed chunk, an audit's pilot and its
    trials, and a report's rows calibrate each distinct log once. Refusals are not cached.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta, allow_zero=True)
    if accountant is not None and accountant not in ACCOUNTANT_NAMES:
        get_accountant(accountant)  # raises the one-line error naming the choices
    if not isinstance(log, MechanismLog):
        raise PrivacctError(f"log must be a MechanismLog, got {type(log).__name__}")
    try:
        out, name = _calibrate_cached(log, epsilon, delta, accountant)
    except TypeError:  # an unhashable parameter value: calibrate without the cache
        out, name = _calibrate(log, epsilon, delta, accountant)
    return (out, name) if return_accountant else out


@functools.lru_cache(maxsize=256)
def _calibrate_cached(log: MechanismLog, epsilon: float, delta: float, accountant: str | None):
    return _calibrate(log, epsilon, delta, accountant)


def _calibrate(log: MechanismLog, epsilon: float, delta: float, accountant: str | None):
    """(scaled log, accountant) from :func:`accountant_calibrations`: the least factor; a refusal (no accountant
    applies, or none finds a finite noise scale) lists every accountant's reason. An asked-for accountant's
    NumericalError, and any error other than a refusal, is raised as it is."""
    if accountant is not None:
        tried = accountant_calibrations(log, epsilon=epsilon, delta=delta, accountants=[accountant])
    else:
        tried = _least_noise_calibrations(log, epsilon, delta)
    for t in tried:
        if t.error is not None and (not isinstance(t.error, (UnsupportedLogError, NumericalError))
                                    or (accountant is not None and isinstance(t.error, NumericalError))):
            raise t.error
    best = least_of(tried)
    if best is None:
        raise UnsupportedLogError("; ".join(str(t.error) for t in tried) or "no accountant applies")
    return log.scaled_noise(best.factor), best.accountant


#: Accountants a ``tight`` calibration skips when another one that applies is never looser on the same log
#: (docs/accounting.md#dominated-accountants), on a log whose releases are all Gaussian: dominated -> dominating.
DOMINATED = {"pld": "analytic-gaussian"}


def _least_noise_calibrations(log: MechanismLog, epsilon: float, delta: float) -> tuple["AccountantCalibration", ...]:
    """:func:`accountant_calibrations` over every accountant, except one in :data:`DOMINATED` whose dominating
    accountant gave a factor: on a log whose releases are all Gaussian the analytic Gaussian accountant is exact
    (Balle & Wang 2018 Thm 8 on the composed mu, docs/accounting.md#analytic-gaussian) and PLD's pessimistic figure of
    the same composed Gaussian is at least the exact one plus a grid interval (>= 1e-4, docs/accounting.md#pld), so
    PLD's least factor is never below the analytic one and :func:`least_of` would not choose it. Skipping it keeps the
    answer and spares dp_accounting's import (scipy.stats, about 70 MB of RSS) in a process that only calibrates
    Gaussian logs. When the dominating accountant gives no factor (refused, or no finite noise meets the budget) the
    dominated one is tried as before. The records keep registry order."""
    from .accounting.base import is_gaussian

    names = set(ACCOUNTANT_NAMES)
    skip = {d for d, by in DOMINATED.items() if {d, by} <= names} if is_gaussian(log) else set()
    done = accountant_calibrations(log, epsilon=epsilon, delta=delta,
                                   accountants=[n for n in ACCOUNTANT_NAMES if n not in skip])
    by_name = {t.accountant: t for t in done}
    rest = [d for d in skip if by_name[DOMINATED[d]].factor is None]
    by_name.update({t.accountant: t for t in accountant_calibrations(log, epsilon=epsilon, delta=delta, accountants=rest)})
    return tuple(by_name[n] for n in ACCOUNTANT_NAMES if n in by_name)


@dataclass(frozen=True)
class AccountantCalibration:
    """One accountant's calibration of a log to a budget (:func:`accountant_calibrations`): ``factor``, the least
    common noise factor it certifies (:func:`calibration_factor`; None when it gives none), or ``error``, why not;
    ``any_noise``: the refusal is one that no noise scale removes (``Accountant.why_not_for_any_noise``), so the
    accountant was not searched at all."""

    accountant: str
    factor: float | None
    error: Exception | None = None
    any_noise: bool = False


def _no_noise_helps(accountant: str, reason: str) -> UnsupportedLogError:
    return UnsupportedLogError(f"accountant {accountant!r} cannot calibrate this log: {reason}")


def accountant_calibrations(log: MechanismLog, *, epsilon: float, delta: float,
                            accountants=ACCOUNTANT_NAMES) -> tuple[AccountantCalibration, ...]:
    """Every accountant's calibration of ``log`` to (``epsilon``, ``delta``), in the order given: the one loop over
    the accountants, read by :func:`calibrate_log` (the least noise for a ``tight`` run) and by
    :func:`privacct.explain.least_noise` (the over-noising factor). A refusal (PrivacctError, or the float range
    exceeded) is kept on its record, never raised here; each reader decides what a refusal means to it."""
    out = []
    for name in accountants:
        reason = get_accountant(name).why_not_for_any_noise(log, delta=delta)
        if reason is not None:
            out.append(AccountantCalibration(name, None, _no_noise_helps(name, reason), any_noise=True))
            continue
        try:
            out.append(AccountantCalibration(name, calibration_factor(log, epsilon=epsilon, delta=delta, accountant=name)))
        except (PrivacctError, OverflowError, ZeroDivisionError) as e:
            out.append(AccountantCalibration(name, None, e))
    return tuple(out)


def least_of(tried) -> AccountantCalibration | None:
    """The calibration with the least factor among ``tried`` (the first on a tie), None when none has one."""
    best = None
    for t in tried:
        if t.factor is not None and (best is None or t.factor < best.factor):
            best = t
    return best


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
    """(noise scale, accountant) for one release group meeting (epsilon, delta).

    The search starts from noise scale = ``sensitivity`` (ratio 1), so the answer is proportional to the
    sensitivity down to tiny ones too (from noise scale 1, a sensitivity below
    :data:`privacct.accounting.base.RATIO_FLOOR` would be accounted as the floor and the answer would not
    shrink with it). An answer must lie in [:data:`MIN_NOISE_SCALE`, :data:`MAX_NOISE_SCALE`]: see
    :func:`sensitivity_range` for the sensitivities that allows."""
    sensitivity = check_positive("sensitivity", sensitivity)
    log = single_group_log(mechanism=mechanism, sensitivity=sensitivity, structure=structure, noise_scale=sensitivity)
    out, name = calibrate_log(log, epsilon=epsilon, delta=delta, accountant=accountant, return_accountant=True)
    return out.release_groups[0].noise_scale, name


def sensitivity_range(*, mechanism: str, structure: Structure, epsilon: float, delta: float,
                      accountant: str | None = None) -> tuple[float, float, float]:
    """(low, high, unit): the sensitivities :func:`calibrate_noise` can answer for at this budget and
    structure, and the noise scale ``unit`` it returns for sensitivity 1. The answer is about
    ``unit x sensitivity`` and must be a noise scale in [:data:`MIN_NOISE_SCALE`, :data:`MAX_NOISE_SCALE`],
    so low = MIN_NOISE_SCALE / unit and high = MAX_NOISE_SCALE / unit, each pulled in by a relative
    2^-16 (the calibration lattice's first and last points lie one step, 6.6e-7, inside the range, and the
    answer is the lattice point at or above the least factor: 2^-16 = 1.5e-5 covers both), low at least
    the smallest normal float and high at most the largest float."""
    unit, _ = calibrate_noise(mechanism=mechanism, sensitivity=1.0, structure=structure, epsilon=epsilon,
                              delta=delta, accountant=accountant)
    margin = 1.0 + 2.0**-16
    low = max(MIN_NOISE_SCALE / unit * margin, sys.float_info.min)      # a normal float: full precision
    high = min(MAX_NOISE_SCALE / unit / margin, sys.float_info.max)     # unit < 1: every finite sensitivity
    return low, high, unit
