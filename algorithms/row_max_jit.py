"""The mirror-descent step's shift, compiled once for the tabular (UCB-PO) and linear-mixture (Private-LinOpt-PO)
episode loops: subtract from each row of exponents its maximum over actions, the maximum taken as numpy's
``np.maximum`` reduce takes it (a NaN wins; otherwise the larger, the earlier on ties), so the compiled loops give the
bytes of the engines' ``z - z.max(axis=-1, keepdims=True)``.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True, inline="always")
def subtract_row_max(row) -> None:
    """``row -= max(row)`` in place, for one (A,) row of exponents (module docstring)."""
    m = row[0]
    for a in range(1, row.shape[0]):
        v = row[a]
        m = m if (m >= v or m != m) else v   # np.maximum
    for a in range(row.shape[0]):
        row[a] = row[a] - m


__all__ = ["subtract_row_max"]
