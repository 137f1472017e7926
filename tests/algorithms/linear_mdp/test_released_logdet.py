"""common.released_logdet (private-lsvi-ucb's per-episode switching test) gives floored_logdet's matrices and
log-determinants bit for bit, with or without its reused buffer (the pair of factorisations made in one Cholesky
call), and floored_logdet's own result and errors whenever a matrix needs the floor."""

import numpy as np
import pytest

from privacct.algorithms.linear_mdp import common as C
from privacct.errors import NumericalError


def _stack(seed, B=3, H=4, d=5, low=()):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(B, H, d, d))
    M = A @ np.swapaxes(A, -1, -2) + 3.0 * np.eye(d)
    for b, h in low:                       # a matrix with an eigenvalue below the floor (1.0): needs it
        w, U = np.linalg.eigh(M[b, h])
        w[0] = 0.25 if (b + h) % 2 else -0.5
        M[b, h] = (U * w) @ U.T
    return M


@pytest.mark.parametrize("use_buf", [False, True])
@pytest.mark.parametrize("low", [(), ((1, 2),), ((0, 0), (2, 3))])
def test_the_same_bits_as_floored_logdet(low, use_buf):
    M = _stack(7, low=low)
    floor = 1.0
    want = C.floored_logdet(M.copy(), floor, allow_floor=True, what="t")
    buf = np.empty((2,) + M.shape) if use_buf else None
    got = C.released_logdet(M.copy(), floor, floor * np.eye(M.shape[-1]), allow_floor=True, what=lambda: "t", buf=buf)
    assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
    if low:
        assert got[2].tobytes() == want[2].tobytes() and got[2].sum() == len(low)
    else:
        assert got[2] is None and not want[2].any()


def test_a_matrix_that_is_not_positive_definite_is_refused_without_the_floor():
    M = _stack(3, low=((0, 0),))          # smallest eigenvalue -0.5
    with pytest.raises(NumericalError, match="episode 9: matrix at index"):
        C.released_logdet(M, 1.0, np.eye(M.shape[-1]), allow_floor=False, what=lambda: "episode 9",
                          buf=np.empty((2,) + M.shape))
