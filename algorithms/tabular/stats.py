"""Per-episode count statistics of seed 002 (Chowdhury & Zhou 2022, §3 and §5.1).

One user (episode) contributes, for every step h, one element to each of three families of
streams (notes seed-002 §1.2, §3.3):

* ``visits``      sigma_h(s, a)        = 1{s_h = s, a_h = a}                  shape (H, S, A)
* ``costs``       1{s_h = s, a_h = a} c_h   (costs c = 1 - r in [0, 1])        shape (H, S, A)
* ``transitions`` 1{s_h = s, a_h = a, s_{h+1} = s'}                           shape (H, S, A, S)

Flattened to vectors of lengths HSA, HSA, HSAS with a leading batch axis (one row per seed).
Per family one trajectory touches exactly H coordinates, so under replace-one-user two
trajectories differ by at most 2H in l1 (docs/seed-002-tabular.md#sensitivity: the paper's proof
counts H).

POOLED over h (option ``pool_over_h``; docs/seed-002-tabular.md#counts-pooled-over-h): a DEPARTURE
from the paper (whose model is non-stationary: counts per step h, Sec. 2.1 and eq. (1)) that the
authors' public code makes: one count per (s, a) and (s, a, s') summed over the H steps, i.e. a
stationary model. The vectors have lengths SA, SA, SAS; one trajectory still adds H in l1 to each
family (up to H to a single coordinate), so the replace-one l1 bounds are unchanged.
"""

from __future__ import annotations

import numpy as np

FAMILIES = ("visits", "costs", "transitions")


def family_dims(H: int, S: int, A: int, pooled: bool = False) -> dict[str, int]:
    """Length of each family's per-episode vector (``pooled``: summed over h, no H factor)."""
    n = 1 if pooled else H
    return {"visits": n * S * A, "costs": n * S * A, "transitions": n * S * A * S}


def episode_stats(states: np.ndarray, actions: np.ndarray, costs: np.ndarray, S: int, A: int,
                  pooled: bool = False) -> np.ndarray:
    """The three per-episode vectors for a batch of trajectories.

    ``states``: int (B, H + 1) (s_1..s_{H+1}); ``actions``: int (B, H); ``costs``: float (B, H) in
    [0, 1]. Returns the concatenation visits | costs | transitions, float (B, 2HSA + HSAS), or with
    ``pooled`` the sums over h, float (B, 2SA + SAS).
    """
    B, H = actions.shape
    rows = np.arange(B)[:, None]
    if pooled:
        d = S * A
        sa = states[:, :H] * A + actions                                      # (B, H) flat (s, a)
        out = np.zeros((B, 2 * d + d * S))
        for h in range(H):  # np.add.at semantics without its cost: one step at a time (repeats add up)
            out[rows[:, 0], sa[:, h]] += 1.0
            out[rows[:, 0], d + sa[:, h]] += costs[:, h]
            out[rows[:, 0], 2 * d + sa[:, h] * S + states[:, h + 1]] += 1.0
        return out
    d = H * S * A
    sa = (np.arange(H)[None, :] * S + states[:, :H]) * A + actions          # (B, H) flat (h, s, a)
    out = np.zeros((B, 2 * d + d * S))
    out[rows, sa] = 1.0                                                      # visits
    out[rows, d + sa] = costs                                                # costs
    out[rows, 2 * d + sa * S + states[:, 1:]] = 1.0                          # transitions
    return out


def split(x: np.ndarray, H: int, S: int, A: int, pooled: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, C, N_tr) of a concatenated statistic, each per step h: views of a (B, 2HSA + HSAS) statistic,
    or, ``pooled``, the (B, 2SA + SAS) sums over h repeated at every h (the stationary model)."""
    if pooled:
        d = S * A
        return (np.tile(x[:, :d], (1, H)), np.tile(x[:, d:2 * d], (1, H)), np.tile(x[:, 2 * d:], (1, H)))
    d = H * S * A
    return x[:, :d], x[:, d:2 * d], x[:, 2 * d:]
