"""Continual-counting strategies as factorizations A = L R of the prefix-sum matrix (docs/counters.md).

A counter over K steps releases the prefix sums S_t = x_1 + ... + x_t (t = 1..K) as L (R x + z),
z i.i.d. per coordinate (Gaussian N(0, sigma^2) or Laplace(b)), and L R = A, the K x K lower
triangular matrix of ones. Privacy is that of releasing R x + z (L is post-processing); a user
contributes to one step (single participation), so what she costs is set by one column of R:

* ``tree`` -- the online binary tree of Chan, Shi, Song (2011, Alg. 2; :class:`privacct.mechanisms.TreeCounter`):
  R is the incidence matrix of the K nodes [t - 2^nu(t) + 1, t] (nu(t) = trailing zeros of t);
  every entry is 0 or 1, column 1 has D = floor(log2 K) + 1 ones. The release after t steps sums
  popcount(t) nodes.
* ``tree-honaker`` -- the full dyadic tree (every dyadic interval that ends by K, leaves included,
  2K - popcount(K) nodes), released through the least-squares (best linear unbiased) estimate of
  each prefix from the nodes complete so far (Honaker 2015; Kairouz et al. 2021, App. D). Same
  column structure as ``tree`` (0/1 entries, at most D per column, D in column 1), so the same
  privacy; prefix variance sum over set bits i of t of 2^i / (2^(i+1) - 1) node variances.
* ``sqrt-toeplitz`` -- L = R = C, the lower-triangular Toeplitz matrix of the coefficients
  c_j = binom(2j, j) / 4^j of (1 - x)^(-1/2), C^2 = A (Fichtenberger, Henzinger, Upadhyay 2023;
  Henzinger, Upadhyay, Upadhyay 2023). Column 1 is (c_0, ..., c_{K-1}); prefix t has variance
  sum_{j<t} c_j^2 node variances.
* ``blt`` -- R = C a buffered linear Toeplitz matrix: C_{t,t} = 1, C_{t+k,t} = sum_i omega_i
  theta_i^(k-1) (k >= 1), with d buffers (theta_i, omega_i), theta in (0, 1), omega > 0
  (Dvijotham, McMahan, Pillutla, Steinke, Thakurta 2024). C^{-1} is rational with denominator of
  degree d, so the noise C^{-1} z is generated with d buffers per coordinate (memory independent of K).

Column dominance (why column 1 is the worst user, for every accountant): for the two trees every
column is a 0/1 vector with at most D ones and column 1 has exactly D; for a Toeplitz R column s is
(r_0, ..., r_{K-s}), a prefix of column 1. Either way the multiset of |entries| of any column is a
sub-multiset of column 1's, and accountants are monotone in added releases.

Sensitivity multipliers are upper bounds (rounded outward, with the margins of docs/counters.md);
variances are the exact derived figures (per unit node variance: sigma^2, or 2 b^2 for Laplace).
Independent checks against explicit matrices are in tests/privacct/counters/test_strategies.py, and every
registered strategy passes the contract of tests/privacct/counters/test_contract.py.

Each strategy is one object in one file (``tree.py``, ``tree_honaker.py``, ``sqrt_toeplitz.py``, ``blt.py``,
the interface in ``base.py``) behind the registry (:mod:`privacct.counters.registry`). This module is the
functions on a log's structures that the rest of privacct calls (:func:`column_norm`, :func:`prefix_variances`,
...: each checks its arguments and asks the structure's strategy object), the :class:`Strategy` value (a name
and, for ``blt``, buffers) and :func:`executed_encoder`; the per-strategy helpers are re-exported from their files.

What a counter RUNS is measured, not assumed: :func:`executed_encoder` turns the impulse response
l of a counter's executed release noise L_exec z into R_exec = L_exec^{-1} A, the encoder whose
rows the ledger records (docs/counters.md#ledger).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import PrivacctError, check_count
from ..log import Structure
from .base import U, CounterStrategy, norm_for, up
from .blt import BLT, BLT_MARGIN, DEFAULT_BLT_BUFFERS, _LFILTER_MAX, blt_parameters, blt_polynomials
from .registry import NAMES, get_strategy
from .sqrt_toeplitz import TOEPLITZ_EXACT, toeplitz_coefficients
from .tree import TREE

STRATEGIES = NAMES                      # the registry's names, live (privacct.counters.registry)
_up = up


@dataclass(frozen=True)
class Strategy:
    """A counting strategy: its name and, for one that takes them (``blt``), its buffers ((theta, omega) pairs).

    ``Strategy("blt")`` without buffers stands for "optimised for the counter's K"
    (:func:`blt_parameters`); :meth:`structure` fills them in. :attr:`implementation` is the registry's
    object (:class:`~privacct.counters.base.CounterStrategy`)."""

    name: str
    buffers: tuple[tuple[float, float], ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or self.name not in STRATEGIES:
            raise PrivacctError(f"strategy must be one of {', '.join(STRATEGIES)}, got {self.name!r}")
        if self.buffers is not None:
            if not self.implementation.takes_buffers:
                raise PrivacctError(f"strategy {self.name!r} takes no buffers")
            object.__setattr__(self, "buffers",
                               Structure.factorized(self.name, 1, {"buffers": list(self.buffers)}).buffers)

    @classmethod
    def of(cls, strategy: "str | Strategy | Structure") -> "Strategy":
        """A Strategy from a name, a Strategy or a tree or factorized Structure."""
        if isinstance(strategy, Strategy):
            return strategy
        if isinstance(strategy, Structure):
            if strategy.kind == "tree":
                return cls(TREE.name)
            if strategy.kind != "factorized":
                raise PrivacctError(f"structure of kind {strategy.kind!r} is not a counting strategy")
            return cls(strategy.strategy, strategy.buffers)  # type: ignore[arg-type]
        return cls(strategy)  # type: ignore[arg-type]

    @property
    def implementation(self) -> CounterStrategy:
        """The registry's object for this strategy."""
        return get_strategy(self.name)

    @property
    def uniform(self) -> bool:
        """0/1 columns: one user is D identical releases (the trees)."""
        return self.implementation.uniform

    @property
    def is_binary_tree(self) -> bool:
        """The online binary tree of Chan, Shi, Song (2011), the counter a ``tree(leaves=K)`` structure describes:
        where a learner keeps its paper's printed constants (the tree's node count)."""
        return self.implementation is TREE

    @property
    def step_cost_growth(self) -> int:
        """How a release's cost grows with its step t: 0 (constant or log t: the trees, BLT's d-buffer recursion) or
        1 (sqrt-toeplitz keeps every z and sums t of them at step t: a run of K steps costs O(K^2); docs/counters.md)."""
        return self.implementation.step_cost_growth

    def structure(self, leaves: int, *, norm: str = "l2") -> Structure:
        """The factorized structure of this strategy over ``leaves`` steps (blt: buffers optimised
        for ``leaves`` and ``norm`` when none are given)."""
        leaves = check_count("leaves", leaves)
        buffers = self.buffers if self.buffers is not None else _default_buffers(self.implementation, leaves, norm)
        if buffers is None:
            return Structure.factorized(self.name, leaves)
        return Structure.factorized(self.name, leaves, {"buffers": [list(b) for b in buffers]})


def _default_buffers(impl: CounterStrategy, leaves: int, norm: str):
    """The buffers of a strategy named without them (None for one that takes none). BLT's come from this module's
    name :func:`blt_parameters`, looked up at call time: tests/algorithms/test_regret_pins.py (``blt_buffers``)
    replaces that name to freeze the optimiser's output. Every other strategy answers for itself."""
    if impl is BLT:
        return blt_parameters(leaves, norm=norm)
    return impl.default_buffers(leaves, norm=norm)


def _factorized(structure: Structure) -> Structure:
    if not isinstance(structure, Structure):
        raise PrivacctError(f"structure must be a privacct.log.Structure, got {type(structure).__name__}")
    if structure.kind == "tree":
        return Structure.factorized(TREE.name, int(structure.leaves))  # type: ignore[arg-type]
    if structure.kind != "factorized":
        raise PrivacctError(f"structure must be a tree or factorized structure, got kind {structure.kind!r}")
    return structure


def _strategy(structure: Structure) -> tuple[Structure, CounterStrategy]:
    s = _factorized(structure)
    return s, get_strategy(s.strategy)


# --------------------------------------------------------------------------- coefficients
def column_coefficients(structure: Structure, n: int | None = None) -> np.ndarray:
    """The first ``n`` (default K) entries of column 1 of R for a Toeplitz strategy
    (``sqrt-toeplitz``, ``blt``): row t of R x is sum_{s <= t} r_{t-s} x_s. The counters and the
    ledger check use these same float coefficients."""
    s, impl = _strategy(structure)
    n = int(s.leaves) if n is None else check_count("n", n)  # type: ignore[arg-type]
    return impl.column_coefficients(s, n)


# --------------------------------------------------------------------------- the executed encoder
def executed_encoder(impulse) -> np.ndarray:
    """Column 1 (r_0..r_{K-1}) of R_exec = L_exec^{-1} A, raised to an upper bound on its rounding.

    ``impulse``: l_0..l_{K-1}, column 1 of the lower-triangular Toeplitz L_exec of the release noise a
    counter runs (its response to a unit draw at step 1; :meth:`FactorizedCounter.impulse_response`);
    A is the prefix-sum matrix, so r(x) = (1 / (1 - x)) / l(x) (docs/counters.md#ledger): the solution of
    sum_{k<=n} l_k r_(n-k) = 1, n = 0..K-1, by forward substitution (O(K^2)). The result is multiplied by
    1 + m + 2u (rounded up), m the relative bound of :func:`_solve_margin` (p = 1 and 2; 2u for the
    product's own rounding), so its l1 and l2 norms do not understate those of the exact R_exec column. l_0 = 0 (step 1's release holds no z_1: no finite R)
    and non-finite values are refused (PrivacctError)."""
    l = np.asarray(impulse, dtype=float)
    if l.ndim != 1 or l.size == 0 or not np.all(np.isfinite(l)):
        raise PrivacctError(f"the executed release-noise impulse response must be K >= 1 finite numbers, got {l!r}")
    if l[0] == 0.0:
        raise PrivacctError("the executed noise path leaves step 1's release without its own draw (l_0 = 0): "
                            "R_exec = L_exec^{-1} A does not exist, the release has no finite privacy; refused")
    with np.errstate(all="ignore"):
        r = _solve_encoder(l)
        m = _solve_margin(l, r) if np.all(np.isfinite(r)) else math.inf
        out = r * _up(1.0, m + 2.0 * U)
    if not (math.isfinite(m) and np.all(np.isfinite(out))):
        raise PrivacctError("the executed noise path is numerically singular: R_exec = L_exec^{-1} A overflows "
                            f"(l_0 = {l[0]!r}); refused")
    return out


def _solve_encoder(l: np.ndarray) -> np.ndarray:
    """r with sum_{k<=n} l_k r_(n-k) = 1 for n < K (forward substitution; one dot product per n)."""
    K = l.size
    r = np.empty(K)
    r[0] = 1.0 / l[0]
    for n in range(1, K):
        r[n] = (1.0 - np.dot(l[1:n + 1], r[n - 1::-1])) / l[0]
    return r


def _solve_margin(l: np.ndarray, r: np.ndarray) -> float:
    """m >= ||r* - r||_p / ||r||_p for p = 1, 2, r* the exact solution (a posteriori, first order).

    r* - r = L^{-1} e with e = 1 - l * r (the residual of the first K terms); the convolution
    inequality ||g * e||_p <= ||g||_1 ||e||_p (Grafakos 2014, "Classical Fourier Analysis", 3rd ed.,
    Sec. 1.2.3; truncation only drops terms) gives ||L^{-1} e||_p <= ||g||_1 ||e||_p, g = (1 - x) r*
    the coefficients of 1/l, taken as (1 - x) r (first order: the neglected term is a product of two
    rounding-sized quantities). The residual is recomputed by np.convolve; its rounding is at most
    gamma_K (|l| * |r|) per term (Higham 2002, "Accuracy and stability of numerical algorithms",
    eq. (3.5), gamma_n = n u / (1 - n u); gamma_(K+1) is used), whose p-norm is at most
    ||l||_1 ||r||_p (the same inequality), plus u |e| for the subtraction from 1 (the factor 1 + 2u).
    The float evaluation of m itself is covered by the final relative raise of 8 K u."""
    K = l.size
    e = 1.0 - np.convolve(l, r)[:K]
    g1 = float(np.abs(np.diff(r, prepend=0.0)).sum())
    gamma = (K + 1) * U / (1.0 - (K + 1) * U)
    l1 = float(np.abs(l).sum())
    m = 0.0
    for p in (1, 2):
        m = max(m, g1 * ((1.0 + 2.0 * U) * float(np.linalg.norm(e, p)) / float(np.linalg.norm(r, p)) + gamma * l1))
    return _up(m, 8.0 * K * U)


# --------------------------------------------------------------------------- sensitivity multipliers
def column_norm(structure: Structure, norm: str) -> float:
    """Max column norm of R (``l2`` for Gaussian noise, ``l1`` for Laplace), an upper bound:
    the per-user sensitivity multiplier under single participation (column 1 dominates)."""
    s, impl = _strategy(structure)
    if norm not in ("l1", "l2"):
        raise PrivacctError(f"norm must be l1 or l2, got {norm!r}")
    return impl.column_norm(s, norm)


# --------------------------------------------------------------------------- prefix variances
def prefix_variances(structure: Structure, steps: int | None = None) -> np.ndarray:
    """Variance of one coordinate of the release after t = 1..steps additions (default K), in units
    of the node variance (sigma^2 for Gaussian noise, 2 b^2 for Laplace)."""
    s, impl = _strategy(structure)
    K = int(s.leaves)  # type: ignore[arg-type]
    T = K if steps is None else check_count("steps", steps, maximum=K)
    if T > _LFILTER_MAX:
        raise PrivacctError(f"steps must be at most {_LFILTER_MAX} for a per-prefix table (use worst_prefix_variance)")
    return impl.prefix_variances(s, T)


def worst_prefix_variance(structure: Structure, steps: int | None = None) -> float:
    """max over t <= steps (default K) of the prefix variance, in node variances: tree max popcount,
    tree-honaker max sum of v_i over set bits, sqrt-toeplitz sum_{j<T} c_j^2, blt sum_{k<T} G_k^2
    (the last two increase with t)."""
    s, impl = _strategy(structure)
    K = int(s.leaves)  # type: ignore[arg-type]
    T = K if steps is None else check_count("steps", steps, maximum=K)
    return impl.worst_prefix_variance(s, T)


def worst_prefix_l1(structure: Structure, steps: int | None = None) -> float:
    """max over t <= steps (default K) of the l1 norm of row t of L, the weights of the draws in release t: the
    largest popcount (tree), the largest sum over the set bits i of t of a_i = (i + 1) 2^i / (2^(i+1) - 1)
    (tree-honaker), sum_(k<T) |l_k| of the noise path's impulse response (Toeplitz strategies)."""
    s, impl = _strategy(structure)
    K = int(s.leaves)  # type: ignore[arg-type]
    T = K if steps is None else check_count("steps", steps, maximum=K)
    return impl.worst_prefix_l1(s, T)


def noise_unit_variance(mechanism: str, scale: float) -> float:
    """Variance of one node's noise per coordinate: sigma^2 (Gaussian, symmetric matrix) or 2 b^2 (Laplace)."""
    return 2.0 * scale * scale if mechanism == "laplace" else scale * scale


def strategy_figures(structure: Structure, *, mechanism: str, scale: float, steps: int | None = None) -> dict:
    """Derived figures of a counter: column norm, worst prefix variance and standard deviation per coordinate."""
    s = _factorized(structure)
    unit = noise_unit_variance(mechanism, scale)
    coef = worst_prefix_variance(s, steps)
    return {"strategy": s.strategy, "leaves": s.leaves, "column_norm": column_norm(s, norm_for(mechanism)),
            "norm": norm_for(mechanism), "worst_prefix_variance": unit * coef, "worst_prefix_std": math.sqrt(unit * coef),
            "variance_per_node_variance": coef}


__all__ = ["BLT_MARGIN", "DEFAULT_BLT_BUFFERS", "STRATEGIES", "Strategy", "TOEPLITZ_EXACT", "U", "blt_parameters",
           "blt_polynomials", "column_coefficients", "column_norm", "executed_encoder", "noise_unit_variance", "norm_for",
           "prefix_variances", "strategy_figures", "toeplitz_coefficients", "worst_prefix_l1", "worst_prefix_variance"]
