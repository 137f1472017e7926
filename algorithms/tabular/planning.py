"""Optimistic planning from (private) counts: eq. (1), Lemmas 3.1 and 4.1, Algorithms 1 and 2.

Seed 002 (Chowdhury & Zhou 2022) works with costs (minimisation): optimism subtracts the bonus
and Q is truncated to [0, H - h + 1] (Alg. 1 line 9, Alg. 2 line 8; with 0-based h the cap is
H - h). All arrays carry a leading batch axis B (one row per seed); shapes below omit it.

Estimates, eq. (1), with the shifted denominator n = max{1, N~ + E_1} and raw numerators (no
clipping of negative noisy counts; P~ rows need not be distributions -- docs/seed-002-tabular.md#counts-and-estimates):

    c~ = C~ / n,   P~(s'|s,a) = N~(s,a,s') / n

Bonuses (times the tunable ``bonus_scale``, 1 = theory):

    beta^c  = L_c / sqrt(n) + 3 E_1 / n,                 L_c = sqrt(2 ln(4 S A T / delta))   (Lemma 3.1)
    beta^p  = L_p / sqrt(n) + (S E_2 + 2 E_1) / n,       L_p = sqrt(4 S ln(6 S A T / delta)) (Lemma 3.1)
    beta^pv = H L_c / sqrt(n) + H (S E_2 + 2 E_1) / n                                         (Lemma 4.1)
    PO: beta = beta^c + H beta^p (Alg. 1 line 8);  VI: beta = beta^c + beta^pv (Alg. 2 line 7)

Non-private baselines (UCB-VI, Azar et al. 2017; OPPO, Efroni et al. 2020) are read as the same
algorithms with exact counts and E = 0 (docs/seed-002-tabular.md#planning: the paper does not print them).
"""

from __future__ import annotations

import math

import numpy as np



def log_terms(S: int, A: int, H: int, K: int, delta: float) -> tuple[float, float]:
    """(L_c, L_p) of Lemma 3.1 with T = K H."""
    T = K * H
    return math.sqrt(2.0 * math.log(4.0 * S * A * T / delta)), math.sqrt(4.0 * S * math.log(6.0 * S * A * T / delta))


def bonus_coefficients(*, E1: float, E2: float, H: int, S: int, Lc: float, Lp: float, kind: str) -> tuple[float, float]:
    """(c_root, c_inv) with beta = c_root / sqrt(n) + c_inv / n (module docstring): VI (1 + H) L_c and PO
    L_c + H L_p; both 3 E_1 + H (S E_2 + 2 E_1). Python floats, evaluated as they always were (the compiled
    loop of :mod:`.episode_jit` multiplies by the same doubles)."""
    c_root = (1.0 + H) * Lc if kind == "vi" else (Lc + H * Lp)
    return c_root, (3.0 * E1 + H * (S * E2 + 2.0 * E1))


def optimistic_model(N: np.ndarray, C: np.ndarray, Ntr: np.ndarray, *, E1: float, E2: float, H: int, S: int,
                     A: int, Lc: float, Lp: float, bonus_scale: float, kind: str,
                     bonus_counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(base, P~): ``base = c~ - beta`` (B, H, S, A) and P~ (B, H, S*A, S).

    ``N``, ``C``: (B, H*S*A) released sums; ``Ntr``: (B, H*S*A*S); ``kind`` "vi" or "po".
    ``bonus_counts``: the counts the bonus beta reads (default ``N``); only the planted mutant
    ``bonus-on-exact-counts`` passes the EXACT counts (a policy leak no log, ledger or released statistic shows).
    """
    B = N.shape[0]
    n = np.maximum(1.0, N + E1)
    inv = 1.0 / n
    root = np.sqrt(inv)
    if bonus_counts is not None:
        root = np.sqrt(1.0 / np.maximum(1.0, bonus_counts + E1))
    c = C * inv
    c_root, c_inv = bonus_coefficients(E1=E1, E2=E2, H=H, S=S, Lc=Lc, Lp=Lp, kind=kind)
    beta = c_root * root + c_inv * inv
    base = (c - bonus_scale * beta).reshape(B, H, S, A)
    P = (Ntr.reshape(B, H * S * A, S) * inv[:, :, None]).reshape(B, H, S * A, S)
    return base, P


def plan_vi(base: np.ndarray, P: np.ndarray, *, return_q: bool = False):
    """Alg. 2 lines 4-10: optimistic value iteration.

    Returns the greedy policy, int (B, H, S); with ``return_q`` also Q~ (B, H, S, A) truncated to
    [0, H - h] (0-based h).

    Ties (Alg. 2 line 10: "ties broken arbitrarily") are broken by the untruncated Q: the action
    chosen minimises the truncated Q~ and, among the actions tied at a truncation bound (e.g. all
    at 0 while the bonus dominates), has the smallest untruncated value -- the most optimistic one,
    so that saturated estimates still explore. Clipping is monotone, so this is exactly
    ``argmin`` of the untruncated Q (first index on exact ties), a function of the private counts
    only; likewise V~_h = min_a Q~_h = clip(min_a Q_h, 0, H - h). The loop is compiled
    (:mod:`.planning_jit`, the same bytes as :func:`plan_vi_numpy`).
    """
    from .planning_jit import plan_vi_compiled   # numba loads on first planning, not on import (CLI start-up)

    pol, Qc = plan_vi_compiled(np.ascontiguousarray(base, dtype=float), np.ascontiguousarray(P, dtype=float),
                               bool(return_q))
    return (pol, Qc) if return_q else pol


def plan_vi_numpy(base: np.ndarray, P: np.ndarray, *, return_q: bool = False):
    """:func:`plan_vi` in numpy (the reference the compiled loop of :mod:`.planning_jit` is tested against)."""
    B, H, S, A = base.shape
    Q = np.empty_like(base) if return_q else None
    pol = np.empty((B, H, S), dtype=np.int64)
    V = np.zeros((B, S, 1))
    for h in range(H - 1, -1, -1):
        raw = base[:, h] + np.matmul(P[:, h], V).reshape(B, S, A)
        pol[:, h] = raw.argmin(axis=2)
        if return_q:
            np.clip(raw, 0.0, H - h, out=Q[:, h])
        m = raw[:, :, 0]
        for a in range(1, A):  # an explicit loop over the few actions: much cheaper than .min(axis=2)
            m = np.minimum(m, raw[:, :, a])
        V = np.minimum(np.maximum(m, 0.0), H - h)[:, :, None]
    return (pol, Q) if return_q else pol


def evaluate_po(base: np.ndarray, P: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Alg. 1 lines 5-10: optimistic evaluation of the stochastic policy ``pi`` (B,H,S,A) -> Q~."""
    B, H, S, A = base.shape
    Q = np.empty_like(base)
    V = np.zeros((B, S, 1))
    for h in range(H - 1, -1, -1):
        q = Q[:, h]
        np.add(base[:, h], np.matmul(P[:, h], V).reshape(B, S, A), out=q)
        np.maximum(q, 0.0, out=q)
        np.minimum(q, H - h, out=q)
        V = np.einsum("bsa,bsa->bs", pi[:, h], q)[:, :, None]
    return Q


def mirror_step(log_pi: np.ndarray, Q: np.ndarray, eta: float) -> np.ndarray:
    """Alg. 1 line 13: pi^{k+1} proportional to pi^k exp(-eta Q~^k), in log space (normalised)."""
    z = log_pi - eta * Q
    z -= z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
