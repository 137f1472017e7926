"""``blt``: R = C a buffered linear Toeplitz matrix (Dvijotham, McMahan, Pillutla, Steinke, Thakurta 2024,
"Efficient and near-optimal noise generation for streaming differential privacy"; McKenna 2024),
docs/counters.md#blt.

With d buffers (theta_i, omega_i), theta_i in (0, 1), omega_i > 0:

    C[t, t] = 1,   C[t + k, t] = r_k = sum_i omega_i theta_i^(k-1)   (k >= 1).

Its generating function is C(x) = 1 + sum_i omega_i x / (1 - theta_i x) = Q(x) / P(x) with P = prod_i (1 - theta_i x)
and Q = P + x sum_i omega_i prod_(j != i) (1 - theta_j x) (:func:`blt_polynomials`). The counter releases
A x + A C^(-1) z: u = C^(-1) z by the recursion Q(B) u = P(B) z (B the backshift; P_0 = Q_0 = 1), i.e.
u_t = z_t + sum_(k=1..d) P_k z_(t-k) - sum_(k=1..d) Q_k u_(t-k), and the release adds the running sum of u
(memory O(d) per coordinate). Column norms in closed form (:func:`_blt_sums`); the release after t steps has
variance sum_(k<t) G_k^2 node variances, G the cumulative sums of the impulse response of P/Q (row t of
L = A C^(-1)). Buffers not given are optimised for K (:func:`blt_parameters`): privacy never depends on the
optimum, only the noise does.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from ..errors import PrivacctError, check_count
from .base import MAX_BLT_BUFFERS, FactorizedSpec, ToeplitzStrategy, up
from .sqrt_toeplitz import toeplitz_coefficients

_F8 = np.dtype(np.float64)
#: whether a BLT counter's step runs compiled (:mod:`.blt_jit`, the same bytes); False: the numpy step, no numba in the
#: process (with ``privacct.counters.stacked.COMPILED`` False too: benchmarks/bench_lsvi_floor.py ``--numpy``)
COMPILED_STEP = True
BLT_MARGIN = 2.0**-20                   # relative margin for the float recursion that generates C^{-1} z
DEFAULT_BLT_BUFFERS = 4
_LFILTER_MAX = 2**22                    # variance: lfilter up to here, partial fractions beyond


@lru_cache(maxsize=16)
def _blt_coefficients(buffers: tuple[tuple[float, float], ...], n: int) -> np.ndarray:
    """r_0..r_{n-1} of a BLT column: r_0 = 1, r_k = sum_i omega_i theta_i^(k-1) (read-only)."""
    k = np.arange(n - 1, dtype=float)
    r = np.ones(n)
    if n > 1:
        r[1:] = sum(w * np.power(t, k) for t, w in buffers)
    r.setflags(write=False)
    return r


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


@lru_cache(maxsize=32)
def _recursion_tuples(buffers: tuple[tuple[float, float], ...]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(P_1..P_d, Q_1..Q_d) of :func:`blt_polynomials` as tuples of Python floats (immutable: shared by the counters
    of one set of buffers, computed once)."""
    P, Q = blt_polynomials(buffers)
    return tuple(float(v) for v in P[1:]), tuple(float(v) for v in Q[1:])


def _geometric(log_r: float, n: int, one_minus_r: float) -> float:
    """sum_{k<n} r^k = (1 - r^n) / (1 - r) for 0 < r < 1, from log r and an accurate 1 - r."""
    return -math.expm1(n * log_r) / one_minus_r


@lru_cache(maxsize=64)
def _blt_sums(buffers: tuple[tuple[float, float], ...], leaves: int) -> tuple[float, float]:
    """Upper bounds on (sum_k r_k^2, sum_k r_k) over k < K for a BLT column, in closed form:
    1 + sum_ij omega_i omega_j G(theta_i theta_j, K - 1) and 1 + sum_i omega_i G(theta_i, K - 1),
    G(r, n) = (1 - r^n)/(1 - r); all terms positive, 1 - theta_i theta_j computed as
    (1 - theta_i) + theta_i (1 - theta_j) without cancellation; raised by 2^-40 for rounding and by
    BLT_MARGIN for the float recursion a counter runs (docs/counters.md#blt: a safety factor, not a proven
    bound on the recursion's rounding; the ledger records the recursion that ran)."""
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
    return up(s2, rel), up(s1, rel)


def _blt_prefix_coefficients(buffers, T: int) -> np.ndarray:
    """G_0..G_{T-1}: row t of L = A C^{-1} is (G_{t-1}, ..., G_0), G = cumsum of the coefficients of P/Q
    (``scipy.signal.lfilter``'s bytes without importing scipy.signal: :mod:`.blt_filter`)."""
    from .blt_filter import impulse_response

    P, Q = blt_polynomials(buffers)
    return np.cumsum(impulse_response(P, Q, T))


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


# --------------------------------------------------------------------------- parameters
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
    never depends on how good the optimum is, only the noise does. The optimiser's output is kept on disk per
    machine (:mod:`.blt_cache`, keyed on every input it reads): a later process returns it without importing
    scipy.optimize.
    """
    from . import blt_cache

    leaves = check_count("leaves", leaves)
    d = check_count("buffers", buffers, maximum=MAX_BLT_BUFFERS)
    if norm not in ("l1", "l2"):
        raise PrivacctError(f"norm must be l1 or l2, got {norm!r}")
    p = 2 if norm == "l2" else 1
    if leaves <= 2:
        # column (1, 0.5) at most: the sqrt-Toeplitz column itself (c_1 = 1/2); nothing to optimise
        return ((0.5, 0.5),)
    cached = blt_cache.lookup(leaves, d, norm)
    if cached is not None:
        return cached
    from scipy.optimize import minimize, nnls

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
    out = unpack(best[1])
    blt_cache.store(leaves, d, norm, out)
    return out


class Blt(ToeplitzStrategy):
    name: ClassVar[str] = "blt"
    summary: ClassVar[str] = ("buffered linear Toeplitz R: R_kk = 1, R_(t+k),t = sum_i omega_i theta_i^(k-1) "
                              "(Dvijotham et al. 2024)")
    takes_buffers: ClassVar[bool] = True

    def column_coefficients(self, spec: FactorizedSpec, n: int) -> np.ndarray:
        return _blt_coefficients(spec.buffers, n)  # type: ignore[arg-type]

    def column_sums(self, spec: FactorizedSpec) -> tuple[float, float]:
        return _blt_sums(spec.buffers, int(spec.leaves))  # type: ignore[arg-type]

    def release_noise_column(self, spec: FactorizedSpec, n: int) -> np.ndarray:
        return _blt_prefix_coefficients(spec.buffers, n)   # L = A C^(-1)

    def worst_prefix_variance(self, spec: FactorizedSpec, steps: int) -> float:
        """sum_(k<steps) G_k^2 (math.fsum) up to 2^22 steps, by partial fractions beyond (:func:`_blt_variance_closed`)."""
        if steps <= _LFILTER_MAX:
            return super().worst_prefix_variance(spec, steps)
        return _blt_variance_closed(spec.buffers, steps)

    def default_buffers(self, leaves: int, *, norm: str) -> tuple[tuple[float, float], ...]:
        return blt_parameters(leaves, norm=norm)

    def tight_candidate(self, mechanism: str) -> bool:
        """Gaussian noise only: the l1-optimal buffers are near the identity (prefix variance about K node
        variances; docs/counters.md#learners)."""
        return mechanism != "laplace"

    # ---------------------------------------------------------------- the noise path: Q(B) u = P(B) z, release += u
    def init_parameters(self, counter: Any) -> None:
        # P_0 = Q_0 = 1; tuples of Python floats (immutable: :meth:`parameter_objects`); a mutant or a test that
        # alters them rebinds the attribute (a list), which the ledger's check then compares by its bytes
        counter._P, counter._Q = _recursion_tuples(tuple(counter.structure.buffers))

    def init_mixing_state(self, counter: Any, st: Any, batch: int, shape: tuple[int, ...]) -> None:
        d = len(counter._P)
        st._zhist = np.zeros((d, batch) + shape)      # ring buffers: slot (t - k) % d holds z_(t-k), u_(t-k)
        st._uhist = np.zeros((d, batch) + shape)

    def mix_noise(self, counter: Any, st: Any, t: int, z: np.ndarray) -> None:
        d = len(counter._P)
        zh, uh, noise = st._zhist, st._uhist, st._noise
        f8 = _F8
        if (COMPILED_STEP and d and len(counter._Q) == d and zh.dtype == f8 and uh.dtype == f8 and noise.dtype == f8 and z.dtype == f8
                and zh.flags.c_contiguous and uh.flags.c_contiguous and noise.flags.c_contiguous
                and z.size == noise.size and zh.shape[0] == d and zh.size == uh.size == d * noise.size):
            # the same step compiled (privacct/counters/blt_jit.py: element by element, no fused operation; the same
            # bytes), on the arrays themselves (C-contiguous: their flat views are views); numba loads on the first step
            from .blt_jit import blt_mix

            P, Q = counter._P, counter._Q
            got = counter.__dict__.get("_pq_arrays")   # the coefficients as arrays, while the same objects are there
            if got is None or got[0] is not P or got[1] is not Q or type(P) is not tuple or type(Q) is not tuple:
                got = counter._pq_arrays = (P, Q, np.asarray(P, dtype=float), np.asarray(Q, dtype=float))
            blt_mix(t, got[2], got[3], z.reshape(-1) if z.flags.c_contiguous else np.ascontiguousarray(z).reshape(-1),
                    zh.reshape(d, -1), uh.reshape(d, -1), noise.reshape(-1))
            return
        u = z.copy()
        tmp = np.empty_like(u)                                    # each product rounded, then added: no fused op
        d = len(counter._P)
        for k in range(1, d + 1):                                 # in order k = 1..d: same bytes per seed
            slot = (t - k) % d
            u += np.multiply(counter._P[k - 1], st._zhist[slot], out=tmp)
            u -= np.multiply(counter._Q[k - 1], st._uhist[slot], out=tmp)
        slot = t % d
        st._zhist[slot], st._uhist[slot] = z, u
        st._noise += u

    def mixing_parameters(self, counter: Any) -> tuple[np.ndarray, ...]:
        return (np.asarray(counter._P, dtype=float), np.asarray(counter._Q, dtype=float))

    def parameter_attributes(self) -> tuple[str, ...] | None:
        """``("_P", "_Q")``, the attributes :meth:`mixing_parameters` reads, when it is this class's own reader (not
        overridden on a subclass or on the instance); None otherwise (base.py)."""
        if type(self).mixing_parameters is not Blt.mixing_parameters or "mixing_parameters" in vars(self):
            return None
        return ("_P", "_Q")


BLT = Blt()
