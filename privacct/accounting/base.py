"""The accountant interface and the per-user view of a log that every accountant reads.

A log becomes a list of :class:`Release` (mechanism kind, ratio, count): the worst user's data is
in ``count`` releases of a group, each with ratio Delta / scale (a factorized Toeplitz counter:
one release with ratio Delta ||column of R|| / scale, the norm derived from the strategy,
docs/counters.md#accounting) (Laplace: eps0 = Delta_1 / b;
Gaussian and symmetric Gaussian matrix: mu = Delta_2 / sigma). The sensitivity is already stated
under the log's neighbouring relation (see :mod:`privacct.log`), so every accountant below uses
the add-or-remove formulas with that explicit sensitivity. This is also how the toolkit sidesteps
dp_accounting's REPLACE_ONE bug in the RDP accountant (google/differential-privacy issue #378:
the sensitivity is not doubled): it never asks dp_accounting for REPLACE_ONE.

Conservative inputs: each ratio is the quotient Delta / scale rounded *up* to a float (never
below the exact quotient), and a ratio below :data:`RATIO_FLOOR` is accounted as RATIO_FLOOR
(more privacy loss than the log has, never less), so that no formula underflows to zero.

This module imports neither numpy, scipy nor dp_accounting (``privacct --help`` stays fast).
"""

from __future__ import annotations

import abc
import contextlib
import logging
import math
import warnings
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

from ..errors import NumericalError, PrivacctError, UnsupportedLogError, check_delta, check_positive, shown
from ..log import MechanismLog

RATIO_FLOOR = 1e-100
DEFAULT_DELTA = 1e-6


@dataclass(frozen=True)
class Release:
    """``count`` adaptive releases of one kind ("laplace" | "gaussian") with the same ratio.

    ``ratio`` is the float ratio rounded up; ``exact`` the largest exact rational
    Delta / scale among the groups merged here (for sums done exactly, e.g. basic composition).
    """

    kind: str
    ratio: float
    count: int
    exact: Fraction = Fraction(0)


_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp splitting


def _two_product(a: float, b: float) -> tuple[float, float]:
    """p, e with p = fl(a b) and p + e = a b exactly (Dekker 1971; no overflow/underflow)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def ratio_up(sensitivity: float, scale: float) -> float:
    """The least float >= sensitivity / scale, at least RATIO_FLOOR; +inf when the quotient is
    beyond the float range. Exact: the residual sensitivity - r * scale is computed without
    rounding (TwoProduct; rational arithmetic near the ends of the exponent range)."""
    try:
        r = sensitivity / scale
    except (OverflowError, ZeroDivisionError):
        return math.inf
    if math.isinf(r):
        return math.inf
    if r < RATIO_FLOOR:
        return RATIO_FLOOR
    if 1e-250 < r < 1e250 and 1e-250 < scale < 1e250 and 1e-250 < sensitivity < 1e250:
        p, e = _two_product(r, scale)
        below = (sensitivity - p) - e > 0  # sensitivity - p is exact (Sterbenz): p is within 1 ulp
    else:
        below = Fraction(r) * Fraction(scale) < Fraction(sensitivity)
    return math.nextafter(r, math.inf) if below else r


def _product_up(a: float, b: float) -> float:
    """The least float >= a * b (a, b > 0; +inf beyond the float range). For a factorized group,
    the step sensitivity times the strategy's column norm (docs/counters.md#accounting)."""
    if b == 1.0:
        return a
    p = a * b
    if math.isinf(p) or math.isnan(p):
        return math.inf
    if 1e-250 < a < 1e250 and 1e-250 < b < 1e250:
        _, e = _two_product(a, b)
        return math.nextafter(p, math.inf) if e > 0 else p
    return p if Fraction(p) >= Fraction(a) * Fraction(b) else math.nextafter(p, math.inf)


def releases(log: MechanismLog) -> list[Release]:
    """Per-user releases of a log, identical (kind, ratio) merged by adding counts.

    Merging is exact: composition is commutative, and identical releases compose the same way
    whatever group they came from (the dp_accounting lesson: never compose one by one).
    """
    cached = log.__dict__.get("_privacct_releases")
    if cached is not None:
        return list(cached)
    merged: dict[tuple[str, float], int] = defaultdict(int)
    exact: dict[tuple[str, float], Fraction] = {}
    for g in log.release_groups:
        kind = "laplace" if g.mechanism == "laplace" else "gaussian"
        sens, mult = g.sensitivity.value, g.sensitivity_multiplier
        key = (kind, ratio_up(_product_up(sens, mult), g.noise_scale))
        merged[key] += g.per_user_count
        if kind == "laplace":  # exact ratios are only summed for pure releases
            q = max(Fraction(sens) * Fraction(mult) / Fraction(g.noise_scale), Fraction(RATIO_FLOOR)) \
                if math.isfinite(mult) else Fraction(RATIO_FLOOR)
            exact[key] = max(exact.get(key, q), q)
    out = tuple(Release(k, r, c, exact.get((k, r), Fraction(0))) for (k, r), c in sorted(merged.items()))
    object.__setattr__(log, "_privacct_releases", out)  # logs are frozen: the cache never goes stale
    return list(out)


def is_pure(log: MechanismLog) -> bool:
    return all(g.mechanism == "laplace" for g in log.release_groups)


def is_gaussian(log: MechanismLog) -> bool:
    return all(g.mechanism != "laplace" for g in log.release_groups)


def default_delta(log: MechanismLog) -> float:
    """The one default-delta rule: the delta at which a log is accounted when none is given.

    The claim's delta when the log has a claim (the question the claim asks, even delta = 0 for a
    log with Gaussian releases, which then cannot be certified); otherwise 0 for a pure (all
    Laplace) log and :data:`DEFAULT_DELTA` (1e-6) for a log with Gaussian releases.
    """
    log = require_log(log)
    if log.claim is not None:
        return log.claim.delta
    return 0.0 if is_pure(log) else DEFAULT_DELTA


@contextlib.contextmanager
def quiet_numerics():
    """Run third-party numerics without letting warnings reach stderr: Python warnings are
    recorded and dropped, numpy floating-point warnings ignored, absl/dp_accounting log records
    below ERROR dropped. Results are validated by :meth:`Accountant.epsilon` instead."""
    import sys

    np = sys.modules.get("numpy")
    absl = logging.getLogger("absl")
    old_level = absl.level
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        absl.setLevel(logging.ERROR)
        try:
            if np is not None:
                with np.errstate(all="ignore"):
                    yield
            else:
                yield
        finally:
            absl.setLevel(old_level)


class Accountant(abc.ABC):
    """epsilon(log, delta) and delta(log, epsilon) for a mechanism log: upper bounds only.

    Contract (``tests/privacct/test_accounting.py::TestAccountantContract``): ``supports`` is a
    dry run of ``epsilon``; ``epsilon`` returns a finite float >= 0 or raises
    UnsupportedLogError / NumericalError (never NaN or inf); figures never fall below the exact
    value of the accountant's bound (outward rounding) and are monotone: more releases, less
    noise, a larger sensitivity or a smaller delta never lower them; ``why_not_for_any_noise``
    gives the reasons that no noise scale can remove (calibration refuses only those);
    ``closed_form_factor`` is None or the least common noise factor meeting a budget, up to the
    rounding :func:`privacct.calibrate.calibration_factor` confirms away (docs/accounting.md#calibration).
    """

    name: str = ""
    citation: str = ""
    #: The accountant whose calibrated factor starts this one's calibration search, when this one has no
    #: closed form and that one's answer is usually close (PLD: RDP's, docs/accounting.md#calibration);
    #: None: the search starts from a cheap closed form (:func:`privacct.calibrate.calibration_factor`).
    calibration_guide: str | None = None

    def why_not_for_any_noise(self, log: MechanismLog, *, delta: float) -> str | None:
        """Reasons this accountant cannot bound ``log`` at ``delta`` whatever its noise scales."""
        return None

    def why_not_at_this_noise(self, rel: list[Release], *, delta: float) -> str | None:
        """Reasons that depend on the noise (range, cost); monotone: a log with more releases,
        less noise or larger sensitivities is refused whenever a smaller one is."""
        return None

    def why_not(self, log: MechanismLog, *, delta: float) -> str | None:
        """None if this accountant can bound ``log`` at ``delta``; otherwise the reason it cannot."""
        log = require_log(log)
        delta = check_delta("delta", delta, allow_zero=True)
        reason = self.why_not_for_any_noise(log, delta=delta)
        if reason is not None:
            return reason
        rel = releases(log)
        if any(math.isinf(r.ratio) for r in rel):
            g = next(g for g in log.release_groups
                     if math.isinf(ratio_up(_product_up(g.sensitivity.value, g.sensitivity_multiplier), g.noise_scale)))
            return f"group {shown(g.name)}: sensitivity / noise_scale is beyond the floating-point range"
        return self.why_not_at_this_noise(rel, delta=delta)

    def supports(self, log: MechanismLog, *, delta: float) -> bool:
        """Dry run before :meth:`epsilon`: True when :meth:`epsilon` would return a figure (or
        raise NumericalError for a figure beyond the floating-point range)."""
        return self.why_not(log, delta=delta) is None

    @abc.abstractmethod
    def _epsilon(self, rel: list[Release], delta: float) -> float:
        """An upper bound (already rounded outward) on epsilon for these releases at ``delta``."""

    def epsilon(self, log: MechanismLog, *, delta: float) -> float:
        """An upper bound on the per-user epsilon of ``log`` at ``delta`` (in [0, 1))."""
        delta = check_delta("delta", delta, allow_zero=True)
        reason = self.why_not(log, delta=delta)
        if reason is not None:
            raise UnsupportedLogError(f"accountant {self.name!r} does not apply: {reason}")
        try:
            with quiet_numerics():
                eps = self._epsilon(releases(log), delta)
        except (OverflowError, ZeroDivisionError, FloatingPointError, MemoryError) as e:
            raise NumericalError(f"accountant {self.name!r}: {e.__class__.__name__} at delta={delta!r}; "
                                 "epsilon is beyond floating-point range") from None
        if eps is None or math.isnan(eps) or eps < 0:
            raise NumericalError(f"accountant {self.name!r} produced epsilon={eps!r}; refusing to report it")
        if math.isinf(eps) or eps > 1.7976931348623157e308:
            raise NumericalError(f"accountant {self.name!r}: epsilon is unbounded or beyond floating-point range at delta={delta!r}")
        return float(eps)

    def delta(self, log: MechanismLog, *, epsilon: float) -> float:
        """An upper bound on delta at ``epsilon`` (> 0): the least delta whose epsilon is <= it,
        found by the conservative root-finder (the private side: an upper bound)."""
        epsilon = check_positive("epsilon", epsilon)
        return delta_by_root(self, log, epsilon)

    def closed_form_factor(self, log: MechanismLog, *, epsilon: float, delta: float) -> float | None:
        """The common factor c by which every noise scale of ``log`` is multiplied so that this accountant's
        epsilon at ``delta`` is ``epsilon``, in closed form (docs/accounting.md#calibration); None when this
        accountant has no closed form for ``log`` or cannot bound it at ``delta`` at any noise. Evaluated in
        floating point, so not yet confirmed: :func:`privacct.calibrate.calibration_factor` re-accounts it
        (and nudges it outward) before it is used."""
        log = require_log(log)
        epsilon = check_positive("epsilon", epsilon)
        delta = check_delta("delta", delta, allow_zero=True)
        if self.why_not_for_any_noise(log, delta=delta) is not None:
            return None
        return self._closed_form_factor(releases(log), epsilon, delta)

    def _closed_form_factor(self, rel: list[Release], epsilon: float, delta: float) -> float | None:
        """:meth:`closed_form_factor` for these releases (the accountant applies at ``delta``); None: no closed form."""
        return None


def delta_by_root(acc: Accountant, log: MechanismLog, epsilon: float) -> float:
    """The least float delta in [0, 1) with acc.epsilon(log, delta) <= epsilon; 1.0 if none."""
    from .rootfind import least_float

    def gap(d: float) -> float:
        if d >= 1.0 or not acc.supports(log, delta=d):
            return math.inf
        try:
            return acc.epsilon(log, delta=d) - epsilon
        except NumericalError:
            return math.inf

    d = least_float(gap, lo=0.0, hi=math.nextafter(1.0, 0.0), start=1e-6)
    return 1.0 if d is None else d


def require_log(log: object) -> MechanismLog:
    if not isinstance(log, MechanismLog):
        raise PrivacctError(f"log must be a privacct.log.MechanismLog, got {type(log).__name__}")
    return log
