"""Errors raised by privacct, the argument checks that raise them, and output-safe text.

Every error names the offending field and, where it applies, the allowed range, so that a
command-line user sees one line that says what to fix. The checks never raise anything but
:class:`PrivacctError` (no ``OverflowError`` for a huge integer, no ``ValueError`` from ``repr``
of a 5000-digit integer), and the value they echo is shortened and escaped (:func:`shown`).

:func:`printable` is the one escaping rule for text output: every character that is not
printable (control characters, line and paragraph separators, bidi overrides, lone surrogates)
is shown as a backslash escape, so a string taken from a log can never start a new output line
nor drive the terminal.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

# Counts, tree leaves and dimensions are integers in [1, MAX_COUNT]: every such integer, and
# every per-user count derived from it, is exactly representable as a float.
MAX_COUNT = 2**53

_SHOWN_CHARS = 80


class PrivacctError(ValueError):
    """Bad input to privacct: names the field and the allowed range."""


class UnsupportedLogError(PrivacctError):
    """An accountant was asked about a log it cannot account (see ``Accountant.supports``)."""


class NumericalError(PrivacctError):
    """An accountant produced a non-finite or negative figure; it is never returned silently."""


def printable(text: object) -> str:
    """``text`` with every non-printable character escaped (``\\n`` -> ``\\x0a``, U+2028 ->
    ``\\u2028``): the result is one line without control characters, whatever ``text`` holds."""
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():
        return s
    out = []
    for ch in s:
        if ch.isprintable():
            out.append(ch)
        else:
            o = ord(ch)
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
    return "".join(out)


def shown(value: object) -> str:
    """A short, one-line, escaped rendering of ``value`` for an error message."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > 64:
            return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
        return repr(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        # long strings keep their start and their end (a path keeps its file name)
        s = value if len(value) <= _SHOWN_CHARS else value[:20] + "..." + value[-(_SHOWN_CHARS - 23):]
        return "'" + printable(s).replace("'", "\\'") + "'"
    return f"a value of type {type(value).__name__}"


def _as_float(value: object) -> float | None:
    """float(value) for a real number (not bool), or None if it is not one or overflows."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    try:
        return float(value)
    except (OverflowError, ValueError, TypeError):
        return math.inf if value > 0 else -math.inf  # a finite Real too large for a float


def check_positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float if it is a real number > 0 (finite unless ``allow_inf``)."""
    v = _as_float(value)
    if v is None:
        raise PrivacctError(f"{name} must be a number > 0, got {shown(value)}")
    if math.isnan(v) or v <= 0 or (math.isinf(v) and not allow_inf):
        raise PrivacctError(f"{name} must be a finite number > 0, got {shown(value)}")
    return v


def check_delta(name: str, value: object, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float in (0, 1) (or [0, 1) if ``allow_zero``)."""
    rng = "[0, 1)" if allow_zero else "(0, 1)"
    v = _as_float(value)
    if v is None:
        raise PrivacctError(f"{name} must be a number in {rng}, got {shown(value)}")
    lo_ok = v >= 0 if allow_zero else v > 0
    if math.isnan(v) or not lo_ok or v >= 1:
        raise PrivacctError(f"{name} must be in {rng}, got {shown(value)}")
    return v


def check_count(name: str, value: object, *, minimum: int = 1, maximum: int = MAX_COUNT) -> int:
    """Return ``value`` as an int in [``minimum``, ``maximum``] (booleans and non-integral floats
    are refused; an integral float such as 3.0 is the integer 3, as in JSON Schema)."""
    rng = f"an integer in [{minimum}, {maximum}]"
    if isinstance(value, bool):
        raise PrivacctError(f"{name} must be {rng}, got {shown(value)}")
    if isinstance(value, Real) and not isinstance(value, Integral):
        v = _as_float(value)
        if v is None or not math.isfinite(v) or v != math.floor(v):
            raise PrivacctError(f"{name} must be {rng}, got {shown(value)}")
        value = int(v)
    if not isinstance(value, Integral) or not minimum <= int(value) <= maximum:
        raise PrivacctError(f"{name} must be {rng}, got {shown(value)}")
    return int(value)
