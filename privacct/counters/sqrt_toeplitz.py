"""``sqrt-toeplitz``: L = R = C, the lower-triangular Toeplitz matrix of the coefficients of (1 - x)^(-1/2)
(Fichtenberger, Henzinger, Upadhyay 2023, "Constant matters: fine-grained error bound on differentially private
continual observation"; Henzinger, Upadhyay, Upadhyay 2023), docs/counters.md#sqrt-toeplitz.

    c_0 = 1,  c_j = c_(j-1) (2j - 1) / (2j) = binom(2j, j) / 4^j,

so that C^2 = A ((1 - x)^(-1/2) squared is (1 - x)^(-1), the generating function of a column of A). Column 1 is
(c_0, ..., c_(K-1)): multiplier l2 = sqrt(sum_(j<K) c_j^2), about sqrt(1 + ln(K)/pi); l1 = sum_(j<K) c_j, about
2 sqrt(K/pi) (a strategy for Gaussian noise); the release after t steps has variance sum_(j<t) c_j^2 node variances
(row t of L = C), increasing in t. The counter keeps every z_t and sums t of them at step t (O(K^2) a run; the sum
compiled, :mod:`.sqrt_toeplitz_jit`, in the cumsum's order: the same bytes).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from ..errors import check_count
from .base import U, FactorizedSpec, ToeplitzStrategy, up

TOEPLITZ_EXACT = 2**20                  # coefficients summed exactly up to here, a bound beyond


@lru_cache(maxsize=8)
def toeplitz_coefficients(n: int) -> np.ndarray:
    """c_0..c_{n-1} of (1 - x)^(-1/2): c_0 = 1, c_j = c_{j-1} (2j - 1) / (2j) (read-only; relative
    error of c_j at most (1 + u)^(2j) - 1: one rounding for the ratio, one for the product)."""
    n = check_count("n", n)
    j = np.arange(1, n, dtype=float)
    c = np.cumprod(np.concatenate(([1.0], (2.0 * j - 1.0) / (2.0 * j))))
    c.setflags(write=False)
    return c


@lru_cache(maxsize=64)
def _toeplitz_sums(leaves: int) -> tuple[float, float]:
    """Upper bounds on (sum_{j<K} c_j^2, sum_{j<K} c_j).

    Up to 2^20 terms: fsum of the float coefficients raised by 16 n^2 u, which covers the rounding of
    the coefficients, of their squares and of the sum (8 n u) and the mismatch of the float
    factorization a counter runs (C_f^2 != A; its effective R' = C_f^{-1} A is within 8 n^1.5 u in
    l2 and 8 n^2 u in l1, docs/counters.md#sqrt-toeplitz). Beyond 2^20: the Wallis bound
    c_j < (pi (j + 1/4))^(-1/2) (Chen & Qi 2005, "The best bounds in Wallis' inequality") summed by the
    integral of a decreasing function.
    """
    n = min(leaves, TOEPLITZ_EXACT)
    c = toeplitz_coefficients(n)
    rel = 16.0 * n * n * U
    s2 = up(math.fsum((c * c).tolist()), rel)
    s1 = up(math.fsum(c.tolist()), rel)
    if leaves > n:
        a, b = leaves - 0.75, n - 0.75
        s2 = up(s2 + math.log(a / b) / math.pi, 1e-12)
        s1 = up(s1 + 2.0 / math.sqrt(math.pi) * (math.sqrt(a) - math.sqrt(b)), 1e-12)
    return s2, s1


def _combine(coef: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """sum_j coef[j] rows[j], accumulated strictly in order j = 0, 1, ... (cumsum; neither BLAS nor
    pairwise summation, whose order depends on the array's shape): each seed's value does not depend
    on the batch size (same seed, same bytes)."""
    return np.cumsum(np.multiply(coef.reshape((-1,) + (1,) * (rows.ndim - 1)), rows), axis=0)[-1]


def _mix(coef: Any, t: int, zs: np.ndarray) -> np.ndarray:
    """(C z)_t = ``_combine(coef[:t][::-1], zs[:t])``, a new array: compiled (:mod:`.sqrt_toeplitz_jit`, the same bytes,
    no t x B x size temporaries) for float64 coefficients and a C-contiguous float64 history, else the cumsum itself (a
    patched or non-float recursion runs the numpy step unchanged)."""
    if (type(coef) is np.ndarray and coef.dtype == np.float64 and coef.ndim == 1 and coef.shape[0] >= t >= 1
            and type(zs) is np.ndarray and zs.dtype == np.float64 and zs.flags.c_contiguous and zs.shape[0] >= t):
        from .sqrt_toeplitz_jit import combine_reversed

        out = np.empty(zs.shape[1:])
        combine_reversed(coef, t, zs.reshape(zs.shape[0], -1), out.reshape(-1))
        return out
    return _combine(coef[:t][::-1], zs[:t])


class SqrtToeplitz(ToeplitzStrategy):
    name: ClassVar[str] = "sqrt-toeplitz"
    summary: ClassVar[str] = ("L = R = C, the Toeplitz matrix of (1 - x)^(-1/2), C^2 = A "
                              "(Fichtenberger, Henzinger, Upadhyay 2023)")
    step_cost_growth: ClassVar[int] = 1     # keeps every z and sums t of them at step t: O(K^2) a run

    def column_coefficients(self, spec: FactorizedSpec, n: int) -> np.ndarray:
        return toeplitz_coefficients(n)

    def column_sums(self, spec: FactorizedSpec) -> tuple[float, float]:
        return _toeplitz_sums(int(spec.leaves))  # type: ignore[arg-type]

    def release_noise_column(self, spec: FactorizedSpec, n: int) -> np.ndarray:
        return toeplitz_coefficients(n)      # L = C

    def worst_prefix_variance(self, spec: FactorizedSpec, steps: int) -> float:
        """sum_(j<steps) c_j^2 (math.fsum) up to 2^20 terms, the bound of :func:`_toeplitz_sums` beyond."""
        if steps <= TOEPLITZ_EXACT:
            return super().worst_prefix_variance(spec, steps)
        return _toeplitz_sums(steps)[0]

    # ---------------------------------------------------------------- the noise path: (C z)_t = sum_j c_j z_(t-j)
    def init_parameters(self, counter: Any) -> None:
        counter._coef = self.column_coefficients(counter.structure, counter.leaves)

    def init_mixing_state(self, counter: Any, st: Any, batch: int, shape: tuple[int, ...]) -> None:
        st._z = np.zeros((counter.leaves, batch) + shape)          # every z_t

    def mix_noise(self, counter: Any, st: Any, t: int, z: np.ndarray) -> None:
        st._z[t - 1] = z
        st._noise = _mix(counter._coef, t, st._z)

    def mixing_parameters(self, counter: Any) -> tuple[np.ndarray, ...]:
        return (np.asarray(counter._coef, dtype=float),)


SQRT_TOEPLITZ = SqrtToeplitz()
