"""Errors raised by privacct.

Every error names the offending field and, where it applies, the allowed range, so that a
command-line user sees one line that says what to fix.
"""

from __future__ import annotations

import math
from numbers import Integral, Real


class PrivacctError(ValueError):
    """Bad input to privacct: names the field and the allowed range."""


class UnsupportedLogError(PrivacctError):
    """An accountant was asked about a log it cannot account (see ``Accountant.supports``)."""


class NumericalError(PrivacctError):
    """An accountant produced a non-finite or negative figure; it is never returned silently."""


def check_positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float if it is a real number > 0 (finite unless ``allow_inf``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise PrivacctError(f"{name} must be a number > 0, got {value!r}")
    v = float(value)
    if math.isnan(v) or v <= 0 or (math.isinf(v) and not allow_inf):
        raise PrivacctError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_delta(name: str, value: object, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float in (0, 1) (or [0, 1) if ``allow_zero``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise PrivacctError(f"{name} must be a number in {'[0, 1)' if allow_zero else '(0, 1)'}, got {value!r}")
    v = float(value)
    lo_ok = v >= 0 if allow_zero else v > 0
    if math.isnan(v) or not lo_ok or v >= 1:
        raise PrivacctError(f"{name} must be in {'[0, 1)' if allow_zero else '(0, 1)'}, got {value!r}")
    return v


def check_count(name: str, value: object, *, minimum: int = 1) -> int:
    """Return ``value`` as an int >= ``minimum`` (booleans and non-integral floats are refused)."""
    if isinstance(value, bool):
        raise PrivacctError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if isinstance(value, Real) and not isinstance(value, Integral):
        if not math.isfinite(float(value)) or float(value) != int(value):
            raise PrivacctError(f"{name} must be an integer >= {minimum}, got {value!r}")
        value = int(value)
    if not isinstance(value, Integral) or int(value) < minimum:
        raise PrivacctError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_finite_result(name: str, value: float) -> float:
    """Refuse NaN, negative or infinite accountant output (conservative: never silently)."""
    v = float(value)
    if math.isnan(v) or v < 0:
        raise NumericalError(f"{name}: accountant produced {v!r}; refusing to report it")
    return v
