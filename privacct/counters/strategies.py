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
Independent checks against explicit matrices are in tests/privacct/counters/test_strategies.py.

What a counter RUNS is measured, not assumed: :func:`executed_encoder` turns the impulse response
l of a counter's executed release noise L_exec z into R_exec = L_exec^{-1} A, the encoder whose
rows the ledger records (docs/counters.md#ledger).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import PrivacctError, check_count
from ..log import FACTORIZED_STRATEGIES, MAX_BLT_BUFFERS, Structure, tree_depth

STRATEGIES = FACTORIZED_STRATEGIES
UNIFORM = ("tree", "tree-honaker")     # 0/1 columns: one user is D identical releases
U = 2.0**-53                            # unit roundoff of float64
TOEPLITZ_EXACT = 2**20                  # sqrt-toeplitz: coefficients summed exactly up to here, a bound beyond
BLT_MARGIN = 2.0**-20                   # blt: relative margin for the float recursion that generates C^{-1} z
DEFAULT_BLT_BUFFERS = 4
_LFILTER_MAX = 2**22                    # blt variance: lfilter up to here, partial fractions beyond


@dataclass(frozen=True)
class Strategy:
    """A counting strategy: its name and, for ``blt``, its buffers ((theta, omega) pairs).

    ``Strategy("blt")`` without buffers stands for "optimised for the counter's K"
    (:func:`blt_parameters`); :meth:`structure` fills them in."""

    name: str
    buffers: tuple[tuple[float, float], ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or self.name not in STRATEGIES:
            raise PrivacctError(f"strategy must be one of {', '.join(STRATEGIES)}, got {self.name!r}")
        if self.buffers is not None:
            if self.name != "blt":
                raise PrivacctError(f"strategy {self.name!r} takes no buffers")
            object.__setattr__(self, "buffers", Structure.factorized("blt", 1, {"buffers": list(self.buffers)}).buffers)

    @classmethod
    def of(cls, strategy: "str | Strategy | Structure") -> "Strategy":
        """A Strategy from a name, a Strategy or a factorized Structure."""
        if isinstance(strategy, Strategy):
            return strategy
        if isinstance(strategy, Structure):
            if strategy.kind == "tree":
                return cls("tree")
            if strategy.kind != "factorized":
                raise PrivacctError(f"structure of kind {strategy.kind!r} is not a counting strategy")
            return cls(strategy.strategy, strategy.buffers)  # type: ignore[arg-type]
        return cls(strategy)  # type: ignore[arg-type]

    @property
    def uniform(self) -> bool:
        return self.name in UNIFORM

    @property
    def step_cost_growth(self) -> int:
        """How a release's cost grows with its step t: 0 (constant or log t: the trees, BLT's d-buffer recursion) or
        1 (sqrt-toeplitz keeps every z and sums t of them at step t: a run of K steps costs O(K^2); docs/counters.md)."""
        return 1 if self.name == "sqrt-toeplitz" else 0

    def structure(self, leaves: int, *, norm: str = "l2") -> Structure:
        """The factorized structure of this strategy over ``leaves`` steps (blt: buffers optimised
        for ``leaves`` and ``norm`` when none are given)."""
        leaves = check_count("leaves", leaves)
        if self.name != "blt":
            return Structure.factorized(self.name, leaves)
        buffers = self.buffers if self.buffers is not None else blt_parameters(leaves, norm=norm)
        return Structure.factorized("blt", leaves, {"buffers": [list(b) for b in buffers]})


def _factorized(structure: Structure) -> Structure:
    if not isinstance(structure, Structure):
        raise PrivacctError(f"structure must be a privacct.log.Structure, got {type(structure).__name__}")
    if structure.kind == "tree":
        return Structure.factorized("tree", int(structure.leaves))  # type: ignore[arg-type]
    if structure.kind != "factorized":
        raise PrivacctError(f"structure must be a tree or factorized structure, got kind {structure.kind!r}")
    return structure


# --------------------------------------------------------------------------- coefficients
@lru_cache(maxsize=8)
def toeplitz_coefficients(n: int) -> np.ndarray:
    """c_0..c_{n-1} of (1 - x)^(-1/2): c_0 = 1, c_j = c_{j-1} (2j - 1) / (2j) (read-only; relative
    error of c_j at most (1 + u)^(2j) - 1: one rounding for the ratio, one for the product)."""
    n = check_count("n", n)
    j = np.arange(1, n, dtype=float)
    c = np.cumprod(np.concatenate(([1.0], (2.0 * j - 1.0) / (2.0 * j))))
    c.setflags(write=False)
    return c


@lru_cache(maxsize=16)
def _blt_coefficients(buffers: tuple[tuple[float, float], ...], n: int) -> np.ndarray:
    """r_0..r_{n-1} of a BLT column: r_0 = 1, r_k = sum_i omega_i theta_i^(k-1) (read-only)."""
    k = np.arange(n - 1, dtype=float)
    r = np.ones(n)
    if n > 1:
        r[1:] = sum(w * np.power(t, k) for t, w in buffers)
    r.setflags(write=False)
    return r


def column_coefficients(structure: Structure, n: int | None = None) -> np.ndarray:
    """The first ``n`` (default K) entries of column 1 of R for a Toeplitz strategy
    (``sqrt-toeplitz``, ``blt``): row t of R x is sum_{s <= t} r_{t-s} x_s. The counters and the
    ledger check use these same float coefficients."""
    s = _factorized(structure)
    n = int(s.leaves) if n is None else check_count("n", n)  # type: ignore[arg-type]
    if s.strategy == "sqrt-toeplitz":
        return toeplitz_coefficients(n)
    if s.strategy == "blt":
        return _blt_coefficients(s.buffers, n)  # type: ignore[arg-type]
    raise PrivacctError(f"strategy {s.strategy!r} is not Toeplitz: its columns are 0/1 node incidences")


def blt_polynomials(buffers) -> tuple[np.ndarray, np.ndarray]:
    """(P, Q) with C(x) = Q(x) / P(x): P = prod_i (1 - theta_i x), Q = P + x sum_i omega_i prod_{j != i}
    (1 - theta_j x). C^{-1}(x) = P / Q generates the noise (d buffers, direct form II)."""
    thetas = [t for t, _ in buffers]
    P = np.array([1.0])
    for t in thetas:
        P = np.convolve(P, [1.0, -t])
    Q = np.concatenate((P, [0.0]))
    for i, (_, w) in enumerate(buffers):
        Pi = np.array([1.0])
        for j, t in enumerate(thetas):
            if j != i:
                Pi = np.convolve(Pi, [1.0, -t])
        Q[1:1 + Pi.size] += w * Pi
    return P, Q[:P.size]


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
def _up(x: float, rel: float) -> float:
    """x raised by a relative ``rel`` and one more ulp (an upper bound on a quantity known to within rel)."""
    return math.nextafter(x * (1.0 + rel), math.inf)


@lru_cache(maxsize=64)
def _toeplitz_sums(leaves: int) -> tuple[float, float]:
    """Upper bounds on (sum_{j<K} c_j^2, sum_{j<K} c_j).

    Up to 2^20 terms: fsum of the float coefficients raised by 16 n^2 u, which covers the rounding of
    the coefficients, of their squares and of the sum (8 n u) and the mismatch of the float
    factorization a counter runs (C_f^2 != A; its effective R' = C_f^{-1} A is within 8 n^1.5 u in
    l2 and 8 n^2 u in l1, docs/counters.md#sqrt-toeplitz). Beyond 2^20: the Wallis bound
    c_j < (pi (j + 1/4))^(-1/2) (Chen & Qi 2005) summed by the integral of a decreasing function.
    """
    n = min(leaves, TOEPLITZ_EXACT)
    c = toeplitz_coefficients(n)
    rel = 16.0 * n * n * U
    s2 = _up(math.fsum((c * c).tolist()), rel)
    s1 = _up(math.fsum(c.tolist()), rel)
    if leaves > n:
        a, b = leaves - 0.75, n - 0.75
        s2 = _up(s2 + math.log(a / b) / math.pi, 1e-12)
        s1 = _up(s1 + 2.0 / math.sqrt(math.pi) * (math.sqrt(a) - math.sqrt(b)), 1e-12)
    return s2, s1


def _geometric(log_r: float, n: int, one_minus_r: float) -> float:
    """sum_{k<n} r^k = (1 - r^n) / (1 - r) for 0 < r < 1, from log r and an accurate 1 - r."""
    return -math.expm1(n * log_r) / one_minus_r


@lru_cache(maxsize=64)
def _blt_sums(buffers: tuple[tuple[float, float], ...], leaves: int) -> tuple[float, float]:
    """Upper bounds on (sum_k r_k^2, sum_k r_k) over k < K for a BLT column, in closed form:
    1 + sum_ij omega_i omega_j G(theta_i theta_j, K - 1) and 1 + sum_i omega_i G(theta_i, K - 1),
    G(r, n) = (1 - r^n)/(1 - r); all terms positive, 1 - theta_i theta_j computed as
    (1 - theta_i) + theta_i (1 - theta_j) without cancellation; raised by 2^-40 for rounding and by
    BLT_MARGIN for the float recursion a counter runs."""
    n = leaves - 1
    s2 = 1.0
    s1 = 1.0
    if n > 0:
        for ti, wi in buffers:
            li, ai = math.log1p(-(1.0 - ti)), 1.0 - ti
            s1 += wi * _geometric(li, n, ai)
            for tj, wj in buffers:
                lj, aj = math.log1p(-(1.0 - tj)), 1.0 - tj
                s2 += wi * wj * _geometric(li + lj, n, ai + ti * aj)
    rel = 2.0**-40 + BLT_MARGIN
    return _up(s2, rel), _up(s1, rel)


def column_norm(structure: Structure, norm: str) -> float:
    """Max column norm of R (``l2`` for Gaussian noise, ``l1`` for Laplace), an upper bound:
    the per-user sensitivity multiplier under single participation (column 1 dominates)."""
    s = _factorized(structure)
    K = int(s.leaves)  # type: ignore[arg-type]
    if norm not in ("l1", "l2"):
        raise PrivacctError(f"norm must be l1 or l2, got {norm!r}")
    if s.strategy in UNIFORM:
        D = tree_depth(K)
        return float(D) if norm == "l1" else _up(math.sqrt(D), 0.0)
    s2, s1 = _toeplitz_sums(K) if s.strategy == "sqrt-toeplitz" else _blt_sums(s.buffers, K)
    return s1 if norm == "l1" else _up(math.sqrt(s2), 0.0)


def norm_for(mechanism: str) -> str:
    """The column norm a mechanism's privacy needs: l1 for Laplace, l2 for Gaussian noise."""
    return "l1" if mechanism == "laplace" else "l2"


# --------------------------------------------------------------------------- prefix variances
def _honaker_weight(i: int) -> float:
    """Variance of the bottom-up least-squares estimate of a complete level-i subtree's root, in
    node variances: v_0 = 1, v_i = 2 v_{i-1} / (2 v_{i-1} + 1) = 2^i / (2^(i+1) - 1)."""
    return 2.0**i / (2.0 ** (i + 1) - 1.0)


def _bits_weight(t: int, honaker: bool) -> float:
    if not honaker:
        return float(bin(t).count("1"))
    return math.fsum(_honaker_weight(i) for i in range(t.bit_length()) if (t >> i) & 1)


def prefix_variances(structure: Structure, steps: int | None = None) -> np.ndarray:
    """Variance of one coordinate of the release after t = 1..steps additions (default K), in units
    of the node variance (sigma^2 for Gaussian noise, 2 b^2 for Laplace)."""
    s = _factorized(structure)
    K = int(s.leaves)  # type: ignore[arg-type]
    T = K if steps is None else check_count("steps", steps, maximum=K)
    if T > _LFILTER_MAX:
        raise PrivacctError(f"steps must be at most {_LFILTER_MAX} for a per-prefix table (use worst_prefix_variance)")
    if s.strategy in UNIFORM:
        t = np.arange(1, T + 1)
        bits = (t[:, None] >> np.arange(max(T.bit_length(), 1))) & 1
        w = np.ones(bits.shape[1]) if s.strategy == "tree" else np.array([_honaker_weight(i) for i in range(bits.shape[1])])
        return bits @ w
    if s.strategy == "sqrt-toeplitz":
        c = toeplitz_coefficients(T)
        return np.cumsum(c * c)
    G = _blt_prefix_coefficients(s.buffers, T)
    return np.cumsum(G * G)


def _blt_prefix_coefficients(buffers, T: int) -> np.ndarray:
    """G_0..G_{T-1}: row t of L = A C^{-1} is (G_{t-1}, ..., G_0), G = cumsum of the coefficients of P/Q."""
    from scipy.signal import lfilter

    P, Q = blt_polynomials(buffers)
    imp = np.zeros(T)
    imp[0] = 1.0
    return np.cumsum(lfilter(P, Q, imp))


def _blt_variance_closed(buffers, T: int) -> float:
    """sum_{k<T} G_k^2 by partial fractions of P(x) / (Q(x) (1 - x)) (for T beyond the lfilter table)."""
    P, Q = blt_polynomials(buffers)
    D = np.convolve(Q, [1.0, -1.0])
    rho = np.roots(D)
    n = rho.size
    A = np.empty(n, complex)
    for r in range(n):
        others = np.prod([1.0 - rho[s] / rho[r] for s in range(n) if s != r]) if n > 1 else 1.0
        A[r] = np.polyval(P[::-1], 1.0 / rho[r]) / others
    z = rho[:, None] * rho[None, :]
    with np.errstate(all="ignore"):
        S = np.where(np.abs(1.0 - z) < 1e-12, float(T), (1.0 - z**T) / (1.0 - z))
        v = float(np.real(np.sum(A[:, None] * A[None, :] * S)))
    if not math.isfinite(v) or v <= 0:
        raise PrivacctError("blt: the prefix variance is not finite for these buffers (C^{-1} is unstable)")
    return v


def _max_over_prefixes(T: int, honaker: bool) -> float:
    """max over t <= T of the weight of the set bits of t: attained at T or at T with one set bit i
    cleared and every lower bit set (any t < T is dominated by one of these)."""
    best = _bits_weight(T, honaker)
    for i in range(T.bit_length()):
        if (T >> i) & 1:
            cand = (T & ~((1 << (i + 1)) - 1)) | ((1 << i) - 1)
            if cand >= 1:
                best = max(best, _bits_weight(cand, honaker))
    return best


def worst_prefix_variance(structure: Structure, steps: int | None = None) -> float:
    """max over t <= steps (default K) of the prefix variance, in node variances: tree max popcount,
    tree-honaker max sum of v_i over set bits, sqrt-toeplitz sum_{j<T} c_j^2, blt sum_{k<T} G_k^2
    (the last two increase with t)."""
    s = _factorized(structure)
    K = int(s.leaves)  # type: ignore[arg-type]
    T = K if steps is None else check_count("steps", steps, maximum=K)
    if s.strategy in UNIFORM:
        return _max_over_prefixes(T, s.strategy == "tree-honaker")
    if s.strategy == "sqrt-toeplitz":
        if T <= TOEPLITZ_EXACT:
            c = toeplitz_coefficients(T)
            return math.fsum((c * c).tolist())
        return _toeplitz_sums(T)[0]
    if T <= _LFILTER_MAX:
        G = _blt_prefix_coefficients(s.buffers, T)
        return math.fsum((G * G).tolist())
    return _blt_variance_closed(s.buffers, T)


def noise_unit_variance(mechanism: str, scale: float) -> float:
    """Variance of one node's noise per coordinate: sigma^2 (Gaussian, symmetric matrix) or 2 b^2 (Laplace)."""
    return 2.0 * scale * scale if mechanism == "laplace" else scale * scale


# --------------------------------------------------------------------------- BLT parameters
def _blt_loss(buffers, leaves: int, p: int) -> float:
    """sensitivity^2 x worst prefix variance (the figure calibration trades): ||col||_p^2 sum G^2."""
    s2, s1 = _blt_sums(tuple(buffers), leaves)
    sens2 = s2 if p == 2 else s1 * s1
    if leaves <= 2**16:
        G = _blt_prefix_coefficients(buffers, leaves)
        var = float(np.dot(G, G))
    else:
        var = _blt_variance_closed(buffers, leaves)
    return sens2 * var


def _stable(buffers) -> bool:
    """C^{-1} = P/Q decays: every root of Q(x) lies outside the closed unit disc."""
    _, Q = blt_polynomials(buffers)
    roots = np.roots(Q[::-1]) if Q.size > 1 else np.array([])
    return bool(np.all(np.isfinite(roots)) and np.all(np.abs(roots) > 1.0 + 1e-9))


@lru_cache(maxsize=32)
def blt_parameters(leaves: int, buffers: int = DEFAULT_BLT_BUFFERS, norm: str = "l2") -> tuple[tuple[float, float], ...]:
    """BLT buffers (theta_i, omega_i) minimising ||column of C||^2 x max_t Var(prefix t) for K = ``leaves``.

    The max-error objective of Dvijotham et al. (2024) and McMahan, Xu, Zhang (2024,
    "A hassle-free algorithm for private learning in practice: don't use tree aggregation, use
    BLTs"), here at finite K in closed form (sensitivity) and exactly (variance). Deterministic:
    theta_i = 1 - exp(-exp(a_i)), omega_i = exp(b_i); the start fits r_k ~ c_k (the sqrt-Toeplitz
    coefficients) with 1 - theta_i geometric in [1/K, 1/2] by non-negative least squares, then
    L-BFGS-B on the log of the objective. Any (theta, omega) is a valid factorization: privacy
    never depends on how good the optimum is, only the noise does.
    """
    from scipy.optimize import minimize, nnls

    leaves = check_count("leaves", leaves)
    d = check_count("buffers", buffers, maximum=MAX_BLT_BUFFERS)
    if norm not in ("l1", "l2"):
        raise PrivacctError(f"norm must be l1 or l2, got {norm!r}")
    p = 2 if norm == "l2" else 1
    if leaves <= 2:
        # column (1, 0.5) at most: the sqrt-Toeplitz column itself (c_1 = 1/2); nothing to optimise
        return ((0.5, 0.5),)
    K = max(leaves, 4)
    n_fit = min(K, 2**16)
    k = np.unique(np.geomspace(1, n_fit - 1, min(n_fit - 1, 2000)).astype(int))
    c = toeplitz_coefficients(n_fit)
    a0 = np.geomspace(0.5, 1.0 / K, d) if d > 1 else np.array([1.0 / math.sqrt(K)])
    th0 = 1.0 - a0
    M = th0[None, :] ** (k[:, None] - 1) / c[k][:, None]
    w0, _ = nnls(M, np.ones(k.size))
    w0 = np.maximum(w0, 1e-6)

    def unpack(x):
        th = -np.expm1(-np.exp(np.clip(x[:d], -30.0, 30.0)))
        om = np.exp(np.clip(x[d:], -60.0, 30.0))
        return tuple((float(t), float(w)) for t, w in zip(th, om, strict=True))

    def objective(x):
        b = unpack(x)
        if not all(0.0 < t < 1.0 for t, _ in b) or not _stable(b):
            return 1e3
        with np.errstate(all="ignore"):
            try:
                v = _blt_loss(b, leaves, p)
            except PrivacctError:
                return 1e3
        return math.log(v) if math.isfinite(v) and v > 0 else 1e3

    x0 = np.concatenate((np.log(-np.log(th0)), np.log(w0)))
    best = (objective(x0), x0)
    res = minimize(objective, x0, method="L-BFGS-B")
    if res.fun < best[0]:
        best = (float(res.fun), res.x)
    if best[0] >= 1e3:
        raise PrivacctError(f"blt: no stable buffers found for leaves={leaves}")
    return unpack(best[1])


def strategy_figures(structure: Structure, *, mechanism: str, scale: float, steps: int | None = None) -> dict:
    """Derived figures of a counter: column norm, worst prefix variance and standard deviation per coordinate."""
    s = _factorized(structure)
    unit = noise_unit_variance(mechanism, scale)
    coef = worst_prefix_variance(s, steps)
    return {"strategy": s.strategy, "leaves": s.leaves, "column_norm": column_norm(s, norm_for(mechanism)),
            "norm": norm_for(mechanism), "worst_prefix_variance": unit * coef, "worst_prefix_std": math.sqrt(unit * coef),
            "variance_per_node_variance": coef}
