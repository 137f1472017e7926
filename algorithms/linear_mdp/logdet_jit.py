"""The switching test's log-determinants compiled (issue 23): :func:`.common.released_logdet`'s fast path, the same bits.

Private LSVI-UCB reads, every episode, log det of each released matrix M (B, H, d, d) after checking that M - lam~ I
is positive definite (docs/seed-004-private-lsvi-ucb.md#departures: the floor is needed only when it is not). numpy
does it as one ``np.linalg.cholesky`` call of the pair (M - lam~ I, M), then ``2 * log(diag L).sum(-1)``. The kernel
:func:`logdet_into` makes the same calls of the same routines, with none of the numpy wrapper's per-call Python:

1. per matrix, ``M - lam~ I`` as ``np.subtract(M, floor_eye)`` computes it (one rounded subtraction per entry),
   copied column-major, and numpy's own LAPACK ``dpotrf('L')`` on it (:func:`all_pd_after_floor`;
   :mod:`..linear_mixture.lapack`: the routine ``np.linalg.cholesky`` calls); then the same on M itself, whose
   factor's diagonal is kept;
2. numpy's own float64 ``log`` loop on the B H d diagonal entries (:mod:`..linear_mixture.numpy_loops`: numpy's SIMD
   log, not libm's, which differs in the last bit for some arguments);
3. ``2.0 *`` numpy's pairwise sum of each row of d logs (:mod:`..pairwise_sum`, d <= 128).

Any ``dpotrf`` that fails (info != 0: a matrix that needs the floor, or a non-finite one) returns False before
anything is written that the caller reads; the caller then runs :func:`.common.released_logdet` on the same matrices
(which fails the same way and floors). :func:`checked` compares the kernel with the numpy path on fixed samples once
per process and dimension; one differing bit, or numpy's LAPACK or log loop not found, and the caller keeps numpy.
"""

from __future__ import annotations

import functools

import numba
import numpy as np

from ..linear_mixture.episode_jit import cholesky_ok
from ..linear_mixture.numpy_loops import loop_address, unary_into
from ..pairwise_sum import pairwise_sum


@numba.njit(cache=True)
def all_pd_after_floor(M, floor, a, iv, uplo, potrf):
    """Whether every ``M[b, h] - floor I`` (M: (B, H, d, d)) passes numpy's Cholesky test: the difference made as
    ``np.subtract(M, floor * np.eye(d))`` makes it (``M - floor`` on the diagonal, ``M - floor * 0.0`` off it: the same
    roundings), copied column-major into ``a`` (d, d), numpy's own ``dpotrf('L')`` with info 0 (``potrf`` its address,
    ``uplo`` the byte 'L', ``iv`` (3,) int64 scratch). False at the first failure. Shared by :func:`logdet_into` and
    :func:`.lsvi_jit.release_inverse`."""
    B, H, d = M.shape[0], M.shape[1], M.shape[2]
    for b in range(B):
        for h in range(H):
            for i in range(d):
                for j in range(d):
                    a[j, i] = M[b, h, i, j] - floor * (1.0 if i == j else 0.0)
            if not cholesky_ok(a, iv, uplo, potrf):
                return False
    return True


@numba.njit(cache=True)
def logdet_into(M, floor, work, iv, uplo, potrf, logfn, diag, logs, ivl, logdet):
    """``logdet`` (B, H) = log det of each M[b, h] (B, H, d, d), when every M - ``floor`` I and every M passes
    ``dpotrf``; returns whether they all did (module docstring; on False ``logdet`` is not written). ``work`` (d, d),
    ``diag``, ``logs`` (B, H, d) scratch; ``iv`` (3,), ``ivl`` (5,) int64 scratch; ``uplo`` the byte 'L';
    ``potrf``, ``logfn`` the addresses of numpy's ``dpotrf`` and float64 ``log`` loop."""
    B, H, d = M.shape[0], M.shape[1], M.shape[2]
    a = work
    if not all_pd_after_floor(M, floor, a, iv, uplo, potrf):
        return False
    for b in range(B):
        for h in range(H):
            for i in range(d):
                for j in range(d):
                    a[j, i] = M[b, h, i, j]
            if not cholesky_ok(a, iv, uplo, potrf):
                return False
            for k in range(d):
                diag[b, h, k] = a[k, k]
    unary_into(logfn, diag, logs, B * H * d, ivl)
    for b in range(B):
        for h in range(H):
            logdet[b, h] = 2.0 * pairwise_sum(logs[b, h], d)
    return True


class CompiledLogdet:
    """``fn(M, logdet)``: :func:`logdet_into` with its scratch made once for matrices of shape (B, H, d, d) and a
    shift ``floor`` (the matrices' M - floor I are tested); True when ``logdet`` was written."""

    def __init__(self, B: int, H: int, d: int, floor: float, potrf: int, logfn: int) -> None:
        self.floor = float(floor)
        self.work = np.empty((d, d))
        self.iv = np.empty(3, dtype=np.int64)
        self.ivl = np.empty(5, dtype=np.int64)
        self.uplo = np.array([76], dtype=np.uint8)   # 'L'
        self.diag = np.empty((B, H, d))
        self.logs = np.empty((B, H, d))
        self.potrf, self.logfn = potrf, logfn

    def __call__(self, M: np.ndarray, logdet: np.ndarray) -> bool:
        return logdet_into(M, self.floor, self.work, self.iv, self.uplo, self.potrf, self.logfn, self.diag,
                           self.logs, self.ivl, logdet)


def compiled_logdet(B: int, H: int, d: int, floor_eye: np.ndarray) -> CompiledLogdet | None:
    """The compiled fast path for (B, H, d, d) matrices, or None (numpy's LAPACK or log loop not found, d > 128, or
    :func:`checked` found a differing bit, or ``floor_eye`` not ``floor * np.eye(d)`` bit for bit for the scalar
    floor on its diagonal): the caller keeps :func:`.common.released_logdet`."""
    if d > 128:
        return None
    floor = float(floor_eye[0, 0])
    if np.ascontiguousarray(floor_eye, dtype=float).tobytes() != (floor * np.eye(d)).tobytes():
        return None
    addr = checked(d)
    if addr is None:
        return None
    return CompiledLogdet(B, H, d, floor, *addr)


@functools.lru_cache(maxsize=None)
def checked(d: int) -> tuple[int, int] | None:
    """(potrf, log loop) addresses when :func:`logdet_into` gives :func:`.common.released_logdet`'s fast-path bits
    and verdicts on fixed samples of d x d stacks here (well and badly conditioned, some needing the floor, one
    non-finite), else None."""
    from ..linear_mixture.lapack import routines
    from .common import released_logdet

    lib = routines()
    logfn = loop_address(np.log)
    if lib is None or logfn is None:
        return None
    rng = np.random.default_rng(20261128 + d)
    for trial in range(24):
        B, H = 1 + trial % 3, 1 + trial % 4
        X = rng.standard_normal((B, H, d, d)) * 10.0 ** rng.uniform(-2, 3)
        M = X @ np.swapaxes(X, -1, -2) + 10.0 ** rng.uniform(-3, 3) * np.eye(d)
        floor = float(10.0 ** rng.uniform(-4, 1)) * (np.diagonal(M, axis1=-2, axis2=-1).min() if trial % 6 == 5 else 1.0)
        if trial == 23:
            M[0, 0, 1, 1] = np.nan
        floor_eye = floor * np.eye(d)
        fn = CompiledLogdet(B, H, d, floor, lib[0], logfn)
        got = np.full((B, H), np.nan)
        ok = fn(np.ascontiguousarray(M), got)
        try:
            _, want, low = released_logdet(M, floor, floor_eye, allow_floor=True, what=lambda: "self-check",
                                           buf=np.empty((2,) + M.shape))
        except Exception:   # noqa: BLE001 -- numpy refuses (a non-finite matrix): the kernel must not have passed it
            if ok:
                return None
            continue
        if ok != (low is None) or (ok and got.tobytes() != want.tobytes()):
            return None
    return lib[0], logfn


__all__ = ["CompiledLogdet", "all_pd_after_floor", "checked", "compiled_logdet", "logdet_into"]
