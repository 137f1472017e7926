"""Per-episode count statistics of seed 002 (Chowdhury & Zhou 2022, §3 and §5.1).

One user (episode) contributes, for every step h, one element to each of three families of
streams (notes seed-002 §1.2, §3.3):

* ``visits``      sigma_h(s, a)        = 1{s_h = s, a_h = a}                  shape (H, S, A)
* ``costs``       1{s_h = s, a_h = a} c_h   (costs c = 1 - r in [0, 1])        shape (H, S, A)
* ``transitions`` 1{s_h = s, a_h = a, s_{h+1} = s'}                           shape (H, S, A, S)

Flattened to vectors of lengths HSA, HSA, HSAS with a leading batch axis (one row per seed).
Per family one trajectory touches exactly H coordinates, so under replace-one-user two
trajectories differ by at most 2H in l1 (notes §3.3: the paper's proof counts H).
"""

from __future__ import annotations

import numpy as np

FAMILIES = ("visits", "costs", "transitions")


def family_dims(H: int, S: int, A: int) -> dict[str, int]:
    """Length of each family's per-episode vector."""
    return {"visits": H * S * A, "costs": H * S * A, "transitions": H * S * A * S}


def episode_stats(states: np.ndarray, actions: np.ndarray, costs: np.ndarray, S: int, A: int) -> np.ndarray:
    """The three per-episode vectors for a batch of trajectories.

    ``states``: int (B, H + 1) (s_1..s_{H+1}); ``actions``: int (B, H); ``costs``: float (B, H) in
    [0, 1]. Returns the concatenation visits | costs | transitions, float (B, 2HSA + HSAS).
    """
    B, H = actions.shape
    d = H * S * A
    rows = np.arange(B)[:, None]
    sa = (np.arange(H)[None, :] * S + states[:, :H]) * A + actions          # (B, H) flat (h, s, a)
    out = np.zeros((B, 2 * d + d * S))
    out[rows, sa] = 1.0                                                      # visits
    out[rows, d + sa] = costs                                                # costs
    out[rows, 2 * d + sa * S + states[:, 1:]] = 1.0                          # transitions
    return out


def split(x: np.ndarray, H: int, S: int, A: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Views (N, C, N_tr) of a concatenated (B, 2HSA + HSAS) statistic."""
    d = H * S * A
    return x[:, :d], x[:, d:2 * d], x[:, 2 * d:]
