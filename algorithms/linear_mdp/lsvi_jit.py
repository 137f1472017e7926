"""LSVI's backward pass (:func:`.common.lsvi`) and lsvi-ucb's whole episode compiled with numba: the same bytes
(issue 23 item 1; docs/performance.md#same-bytes-the-rule-every-speed-up-follows).

Per step h = H..1, operation for operation as :func:`.common.lsvi` makes it for n seeds:

* ``M = (N[:, h] * V).sum(-1)``: the products, then numpy's pairwise row sum over s' (:mod:`..pairwise_sum`; S <= 128);
* ``y = Rphi[:, h] + M @ X``: numpy's matmul is one gemv at one seed (a (1, S A) row times (S A, d)) and one gemm over
  the seeds otherwise: numba's ``np.dot`` of the same shapes makes the same BLAS call;
* the response noise, if any, added by the caller between :func:`lsvi_y` and :func:`lsvi_q` (the learners' Python
  ``y_noise``, as :func:`.common.lsvi` calls it);
* ``w = A^-1 y`` one gemv per seed; ``mean = w @ X^T`` one gemv (``X w``) at one seed, one gemm over the seeds
  otherwise; ``X A^-1`` one gemm per seed, times X elementwise, its rows summed pairwise (d <= 128);
* ``Q = clip(mean + beta sqrt(max(quad, 0)), 0, H)`` with numpy's scalar maximum / clip (NaN kept), refused when not
  finite (the caller raises :class:`NumericalError` as :func:`.common.lsvi` does), ``pol = argmax_a Q`` (first
  maximum), ``V = max_a Q``.

lsvi-ucb's episode (:func:`lsvi_ucb_chunk`) adds ``Lambda^-1 = inv(gram + lam I)`` by numpy's own ``dgesv`` on the
column-major copy with the identity as right-hand side, as ``np.linalg.inv`` calls it
(:mod:`..linear_mixture.lapack`), the regret of the greedy policy (:func:`.batched_jit.regrets`, the bytes of
``TabularMDP.regret``) and the roll-out and history of :func:`.batched_jit.play_chunk`. The batched learner's release
takes :func:`release_inverse` (``floored_logdet``'s Cholesky test and ``np.linalg.inv`` by the same LAPACK calls).

:func:`self_check` compares the compiled pass with :func:`.common.lsvi`, the inverse with ``np.linalg.inv`` and the
release's test and inverse with numpy once per process, environment and seed count on random inputs; one differing bit
(another BLAS, another numpy) and the learners keep their numpy calls. ``cache=True`` keeps the compilation out of
later processes.
"""

from __future__ import annotations

import functools

import numba
import numpy as np

from ..linear_mixture.episode_jit import solve_identity
from ..linear_mixture.planning_jit import _clip
from ..pairwise_sum import pairwise_sum
from .batched_jit import play_chunk, regrets
from .logdet_jit import all_pd_after_floor

MAX_SUM = 128   # numpy's pairwise block: beyond it the order is recursive (S and d must stay within)


@numba.njit(cache=True)
def lsvi_y(N, Rphi, X, V, h, M, prod, tmp, y):
    """``y`` (n, d) = Rphi[:, h] + ((N[:, h] * V).sum(-1)).reshape(n, S A) @ X (module docstring); ``M`` (n, S A),
    ``prod`` (n, d) and ``tmp`` (S,) scratch."""
    n, S, A = N.shape[0], N.shape[2], N.shape[3]
    d = X.shape[1]
    for b in range(n):
        for s in range(S):
            for a in range(A):
                for sp in range(S):
                    tmp[sp] = N[b, h, s, a, sp] * V[b, sp]
                M[b, s * A + a] = pairwise_sum(tmp, S)
    if n == 1:
        np.dot(M[0], X, prod[0])
    else:
        np.dot(M, X, prod)
    for b in range(n):
        for i in range(d):
            y[b, i] = Rphi[b, h, i] + prod[b, i]


@numba.njit(cache=True)
def lsvi_q(X, Ainv, y, h, beta, cap, pol, V, ys, w, mean, XA, row, Q):
    """Step h's policy and values from the (noisy) response ``y`` (n, d) (module docstring): ``ys[:, h] = y``,
    ``pol[:, h]``, ``V`` (n, S). False (and ``pol``, ``V`` untouched) when a Q value is not finite. Scratch: ``w``
    (n, d), ``mean`` (n, S A), ``XA`` (S A, d), ``row`` (d,), ``Q`` (n, S, A)."""
    n, d = y.shape
    SA = X.shape[0]
    S, A = Q.shape[1], Q.shape[2]
    for b in range(n):
        for i in range(d):
            ys[b, h, i] = y[b, i]
        np.dot(Ainv[b, h], y[b], w[b])
    if n == 1:
        np.dot(X, w[0], mean[0])
    else:
        np.dot(w, X.T, mean)
    finite = True
    for b in range(n):
        np.dot(X, Ainv[b, h], XA)
        for i in range(SA):
            for j in range(d):
                row[j] = XA[i, j] * X[i, j]
            q = pairwise_sum(row, d)
            quad = q if (q >= 0.0 or q != q) else 0.0      # np.maximum(q, 0.0)
            v = _clip(mean[b, i] + beta * np.sqrt(quad), cap)
            Q[b, i // A, i % A] = v
            if not (v - v == 0.0):                           # inf or NaN
                finite = False
    if not finite:
        return False
    for b in range(n):
        for s in range(S):
            best, arg = Q[b, s, 0], 0
            for a in range(1, A):
                if Q[b, s, a] > best:
                    best, arg = Q[b, s, a], a
            pol[b, h, s] = arg
            V[b, s] = best
    return True


@numba.njit(cache=True)
def invert(G, lam, out, work, ipiv, iv, gesv):
    """``out`` = np.linalg.inv(G + lam * I) for one (d, d) matrix, by numpy's own ``dgesv`` (module docstring);
    False when dgesv reports a singular matrix (numpy raises there; the caller's numpy path does)."""
    d = G.shape[0]
    a = work[0]
    for i in range(d):
        for j in range(d):
            a[j, i] = G[i, j] + lam * (1.0 if i == j else 0.0)
    return solve_identity(a, work[1], out, ipiv, iv, gesv)


@numba.njit(cache=True)
def release_inverse(M, floor, Ainv, work, ipiv, iv, uplo, potrf, gesv):
    """The batched learner's release (:func:`.common.floored_logdet` then ``np.linalg.inv``) when no matrix needs the
    eigenvalue floor: True when every ``M[b, h] - floor I`` passes numpy's Cholesky test (``dpotrf('L')`` on the
    column-major copy, info 0: ``floored_logdet``'s fast path, which then returns M itself; its log-determinants are
    not read by the learner) and ``Ainv`` = inv(M) by ``dgesv``. False at the first failure (the caller then runs
    ``floored_logdet`` and ``np.linalg.inv``: the floor, or numpy's error)."""
    B, H, d = M.shape[0], M.shape[1], M.shape[2]
    a = work[0]
    if not all_pd_after_floor(M, floor, a, iv, uplo, potrf):
        return False
    for b in range(B):
        for h in range(H):
            for i in range(d):
                for j in range(d):
                    a[j, i] = M[b, h, i, j]
            if not solve_identity(a, work[1], Ainv[b, h], ipiv, iv, gesv):
                return False
    return True


def release_inverse_numpy_or_compiled(M: np.ndarray, floor: float, *, allow_floor: bool, what: str):
    """(matrices, their inverses, floored) of the batched learner's release: :func:`release_inverse` when it holds,
    else :func:`.common.floored_logdet` and ``np.linalg.inv`` (the same bytes either way; :func:`self_check`)."""
    from ..linear_mixture.lapack import routines
    from . import common as C

    lib = routines()
    d = M.shape[-1]
    M = np.ascontiguousarray(M)
    Ainv = np.empty_like(M)
    if lib is not None and release_inverse(M, float(floor), Ainv, np.empty((2, d, d)), np.empty(d, dtype=np.int64),
                                           np.empty(4, dtype=np.int64), _UPLO, lib[0], lib[1]):
        return M, Ainv, np.zeros(M.shape[:-2], dtype=bool)
    mats, _, low = C.floored_logdet(M, floor, allow_floor=allow_floor, what=what)
    return mats, np.linalg.inv(mats), low


_UPLO = np.array([76], dtype=np.uint8)   # 'L', as np.linalg.cholesky


@numba.njit(cache=True)
def lsvi_ucb_chunk(k0, n, gram, lam, X, N, Rphi, beta, cap, Rsa, P, cdf, phi, R, s0, u, v_star, regret, pol,
                   Ainv, gesv):
    """Episodes k0 .. k0 + n - 1 of lsvi-ucb for every seed (module docstring; :func:`.lsvi_ucb.run`'s loop): from the
    second episode on, Lambda^-1 and the LSVI pass on the history; the regret of ``pol``; the roll-out at ``u[:, j]``
    added to the history. Returns 0, or the episode whose inverse or Q failed (the caller re-runs it in numpy, which
    raises as before; the history then holds the episodes before it)."""
    B, H, d = Rphi.shape
    S, A = cdf.shape[1], cdf.shape[2]
    SA = S * A
    work, ipiv, iv = np.empty((2, d, d)), np.empty(d, dtype=np.int64), np.empty(4, dtype=np.int64)
    V = np.zeros((B, S))
    ys = np.empty((B, H, d))
    M, prod, tmp, y = np.empty((B, SA)), np.empty((B, d)), np.empty(S), np.empty((B, d))
    w, mean, XA, row, Q = np.empty((B, d)), np.empty((B, SA)), np.empty((SA, d)), np.empty(d), np.empty((B, S, A))
    reg = np.empty(B)
    newpol = np.empty_like(pol)
    for j in range(n):
        k = k0 + j
        if k > 1:
            for b in range(B):
                for h in range(H):
                    if not invert(gram[b, h], lam, Ainv[b, h], work, ipiv, iv, gesv):
                        return k
            for b in range(B):
                for s in range(S):
                    V[b, s] = 0.0
            for h in range(H - 1, -1, -1):
                lsvi_y(N, Rphi, X, V, h, M, prod, tmp, y)
                if not lsvi_q(X, Ainv, y, h, beta, cap, newpol, V, ys, w, mean, XA, row, Q):
                    return k
            pol[:] = newpol
        regrets(pol, Rsa, P, s0, v_star, reg)
        for b in range(B):
            regret[b, k - 1] = reg[b]
        play_chunk(pol, cdf, phi, R, s0, u[:, j:], 1, N, Rphi, gram)
    return 0


def lsvi_compiled(env, Ainv: np.ndarray, N: np.ndarray, Rphi: np.ndarray, beta: float, y_noise=None):
    """:func:`.common.lsvi` through :func:`lsvi_y` / :func:`lsvi_q` (the same arguments and results; ``y_noise`` called
    between them as there). Raises :class:`NumericalError` as it does."""
    from privacct.errors import NumericalError

    n = Ainv.shape[0]
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    X = _features(env)
    V = np.zeros((n, S))
    pol = np.zeros((n, H, S), dtype=np.int64)
    ys = np.zeros((n, H, d))
    M, prod, tmp, y = np.empty((n, S * A)), np.empty((n, d)), np.empty(S), np.empty((n, d))
    w, mean, XA, row, Q = np.empty((n, d)), np.empty((n, S * A)), np.empty((S * A, d)), np.empty(d), np.empty((n, S, A))
    Ainv = np.ascontiguousarray(Ainv)
    beta, cap = float(beta), float(H)
    for h in range(H - 1, -1, -1):
        lsvi_y(N, Rphi, X, V, h, M, prod, tmp, y)
        if y_noise is not None:
            y = np.ascontiguousarray(y_noise(h, y, V.copy()))
        if not lsvi_q(X, Ainv, y, h, beta, cap, pol, V, ys, w, mean, XA, row, Q):
            raise NumericalError("LSVI produced non-finite Q values")
    return pol, ys


def _features(env) -> np.ndarray:
    """phi as (S A, d), C-contiguous and read-only whatever the environment's array is: the kernels that read it
    (:func:`lsvi_y`, :func:`lsvi_q`, :func:`lsvi_ucb_chunk`) are then compiled once (a writable and a read-only
    array are two numba signatures)."""
    X = np.ascontiguousarray(env.phi.reshape(env.n_states * env.n_actions, env.dim)).view()
    X.setflags(write=False)
    return X


def compiles(env, n: int) -> bool:
    """Whether the compiled pass gives :func:`.common.lsvi`'s bytes here at n seeds (:func:`self_check`, cached)."""
    return _self_check(env.n_states, env.n_actions, env.dim, env.horizon, n, env.phi.tobytes())


@functools.lru_cache(maxsize=32)
def _self_check(S: int, A: int, d: int, H: int, n: int, phi: bytes) -> bool:
    return self_check(np.frombuffer(phi).reshape(S, A, d), H, n)


def self_check(phi: np.ndarray, H: int, n: int) -> bool:
    """The compiled LSVI pass against :func:`.common.lsvi` (policy and released responses, with a noise callback) and
    the compiled inverse against ``np.linalg.inv``, on random histories of n seeds with the features ``phi``
    (S, A, d) and with dense random features of its shape, byte for byte; False when S or d exceeds numpy's pairwise
    block or numpy's LAPACK is not found."""
    from ..linear_mixture.lapack import routines

    S, A, d = phi.shape
    lib = routines()
    if lib is None or S > MAX_SUM or d > MAX_SUM:
        return False
    rng = np.random.default_rng(20261128 + S + 7 * A + 31 * d + 101 * n)
    dense = rng.standard_normal((S, A, d)) / np.sqrt(d)   # every product and sum order matters (the env's may be sparse)
    return (all(_check_features(np.ascontiguousarray(f), H, n, rng, lib) for f in (phi, dense))
            and _check_release(d, H, n, rng, lib))


def _check_release(d: int, H: int, n: int, rng, lib) -> bool:
    """:func:`release_inverse` against ``np.linalg.cholesky(M - floor I)``'s verdict and ``np.linalg.inv(M)`` on noisy
    symmetric matrices of n seeds, some needing the floor."""
    work, ipiv, iv = np.empty((2, d, d)), np.empty(d, dtype=np.int64), np.empty(4, dtype=np.int64)
    for _ in range(8):
        Z = rng.standard_normal((n, H, d, d)) * 10.0 ** rng.uniform(-2, 2)
        M = Z + np.swapaxes(Z, -1, -2) + 10.0 ** rng.uniform(-1, 3) * np.eye(d)
        floor = float(10.0 ** rng.uniform(-2, 1))
        try:
            np.linalg.cholesky(M - floor * np.eye(d))
            want = np.linalg.inv(M)
        except np.linalg.LinAlgError:
            want = None
        got = np.empty_like(M)
        ok = release_inverse(M, floor, got, work, ipiv, iv, _UPLO, lib[0], lib[1])
        if ok != (want is not None) or (ok and got.tobytes() != want.tobytes()):
            return False
    return True


def _check_features(phi: np.ndarray, H: int, n: int, rng, lib) -> bool:
    from types import SimpleNamespace

    from . import common as C

    S, A, d = phi.shape
    env = SimpleNamespace(horizon=H, n_states=S, n_actions=A, dim=d, phi=phi)
    work, ipiv, iv = np.empty((2, d, d)), np.empty(d, dtype=np.int64), np.empty(4, dtype=np.int64)
    X = phi.reshape(S * A, d)
    for trial in range(4):   # trials 0, 1: small statistics and bonus, so that Q is not clipped and every bit shows
        N = rng.integers(0, 2 if trial < 2 else 50 * trial, size=(n, H, S, A, S)).astype(float)
        Rphi = rng.random((n, H, d)) * 10.0 ** (2 * trial - 3)
        idx = rng.integers(0, S * A, size=(n, H, 3 + 5 * trial))
        gram = np.einsum("bhti,bhtj->bhij", X[idx], X[idx])
        gram += 1e-3 * np.triu(rng.standard_normal(gram.shape), 1)   # not symmetric: the copy's layout is checked
        lam = float(10.0 ** rng.uniform(-2, 1))
        want_inv = np.linalg.inv(gram + lam * np.eye(d))
        got_inv = np.empty_like(want_inv)
        for b in range(n):
            for h in range(H):
                if not invert(gram[b, h], lam, got_inv[b, h], work, ipiv, iv, lib[1]):
                    return False
        if got_inv.tobytes() != want_inv.tobytes():
            return False
        beta = float(10.0 ** rng.uniform(-3, -1) if trial < 2 else 10.0 ** rng.uniform(-2, 1))
        noise = rng.standard_normal((H, n, d)) * 10.0 ** (trial - 3)

        def y_noise(h, y, V, noise=noise):
            return y + noise[h] * V.sum()

        for yn in (None, y_noise):
            want = C.lsvi(env, want_inv, N, Rphi, beta, y_noise=yn)
            got = lsvi_compiled(env, want_inv, N, Rphi, beta, y_noise=yn)
            if any(g.tobytes() != x.tobytes() or g.dtype != x.dtype for g, x in zip(got, want, strict=True)):
                return False
    return True
