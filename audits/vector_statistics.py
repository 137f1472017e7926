"""Candidate statistics that find the event in vector (and mixed discrete/continuous) outputs.

Linear projections of a vector (:mod:`privacct.audits.statistics`) miss events that live in one
coordinate, in a combination of discrete values, or in a continuous value *given* a discrete one
(e.g. a sparse-vector variant that releases the index of the first answer above the threshold and
that answer's noisy value). Three families are added, every one FITTED ON THE SELECTION HALF only
(so a threshold test on it is fixed before the evaluation half is seen; the runner's union bound
over the evaluated tests is unchanged, since only the best test per direction is evaluated):

* ``coordinate j``: each output column alone (the scalar machinery on it: its value, and for a
  column with atoms its split likelihood ratio below). At most ``MAX_COORDINATES`` columns, ranked
  by |mean_D - mean_D'| / sd on the selection half when there are more.
* ``joint likelihood-ratio``: when the selection half holds at most ``MAX_JOINT`` distinct whole
  outputs, the log ratio of their smoothed histograms,
  log((c_D(o) + 1/2) / (n_D + K/2)) - log((c_D'(o) + 1/2) / (n_D' + K/2)) (0 for outputs never seen),
  the plug-in Neyman-Pearson statistic of a discrete output (Gilbert & McMillan 2018 use the same
  histogram).
* ``split likelihood-ratio``: the discrete/continuous split. A value of a column is an *atom* when
  it repeats at least ``MIN_ATOM_COUNT`` times in the (pooled) selection half (a flag, an index, a
  sentinel such as -1000 for 'below threshold', an exact un-noised release); each output's *cell* is
  the tuple, over columns, of its atom (or 'continuous'), and its continuous part the values of the
  columns that are not atoms. Since p(o) = p(cell) p(continuous | cell),
  log p_D(o) / p_D'(o) = log p_D(cell) / p_D'(cell) + log p_D(c | cell) / p_D'(c | cell),
  estimated by the smoothed cell histogram plus, in every cell with at least ``MIN_CELL`` outputs,
  a histogram likelihood ratio (at most ``MAX_BINS`` pooled-quantile bins, add-1/2 smoothing) of one
  scalar summary of the continuous part: the value itself when it is one coordinate, else its
  projection onto the cell's diagonal discriminant (mean_D - mean_D') / var. The ``discrete-part
  likelihood-ratio`` (the cell term alone) is a candidate too.

The fitted ratios (joint, split, discrete-part, coordinate split) are fitted on the first half of the
selection half and carry their values on the second half as ``holdout``: the tester chooses their
threshold there, so their many fitted parameters cannot win the selection by overfitting (measured:
fitted and scored on the same rows, the joint ratio of 8 RAPPOR bits won the selection over the
one-hot LDA and certified 1.77 instead of 2.15 for a true eps of 2.20).

Derivations: docs/auditing.md ("vector statistics").
"""

from __future__ import annotations

import numpy as np

from .statistic import LR_DECIMALS, Statistic

MAX_COORDINATES = 32
MAX_JOINT = 512
MIN_ATOM_COUNT = 3
MAX_ATOMS = 16
ATOM_ROWS = 20_000  # rows per side scanned for atoms (an atom of mass >= ~1e-4 repeats there)
MAX_CELLS = 256
MIN_CELL = 200
MAX_BINS = 32

_rng = np.random.default_rng(0x5EED)  # fixed multipliers of the row hash (any fixed function is a valid statistic)
_MULT = _rng.integers(1, 2 ** 63, size=4096, dtype=np.uint64) | np.uint64(1)


def _flat(raw: np.ndarray) -> np.ndarray:
    return np.asarray(raw).reshape(len(raw), -1)


def row_hash(a: np.ndarray) -> np.ndarray:
    """A fixed 64-bit hash of each row (equal rows, equal hashes; collisions only merge cells)."""
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    bits = a.view(np.uint64).copy()
    with np.errstate(over="ignore"):
        bits ^= bits >> np.uint64(29)
        h = (bits * _MULT[np.arange(a.shape[1]) % len(_MULT)]).sum(axis=1, dtype=np.uint64)
        h ^= h >> np.uint64(31)
    return h


def _smoothed_log_ratio(cx: np.ndarray, cy: np.ndarray, nx: int, ny: int) -> np.ndarray:
    k = len(cx)
    return np.log((cx + 0.5) / (nx + 0.5 * k)) - np.log((cy + 0.5) / (ny + 0.5 * k))


def _keyed_lr(kx: np.ndarray, ky: np.ndarray):
    """(sorted keys, log-ratio per key) of the smoothed histograms of two key arrays."""
    keys = np.unique(np.concatenate([kx, ky]))
    cx = np.bincount(np.searchsorted(keys, kx), minlength=len(keys)).astype(float)
    cy = np.bincount(np.searchsorted(keys, ky), minlength=len(keys)).astype(float)
    return keys, _smoothed_log_ratio(cx, cy, len(kx), len(ky))


def _lookup(keys: np.ndarray, values: np.ndarray, k: np.ndarray, default: float = 0.0) -> np.ndarray:
    i = np.clip(np.searchsorted(keys, k), 0, len(keys) - 1)
    return np.where(keys[i] == k, values[i], default)


def column_atoms(fx: np.ndarray, fy: np.ndarray) -> list[np.ndarray]:
    """Per column, the sorted values that repeat >= MIN_ATOM_COUNT times in the pooled selection half
    (its first ATOM_ROWS rows per side; the MAX_ATOMS most frequent)."""
    pooled = np.sort(np.concatenate([fx[:ATOM_ROWS], fy[:ATOM_ROWS]]), axis=0)
    k = MIN_ATOM_COUNT - 1
    repeats = (pooled[k:] == pooled[:-k]).any(axis=0) if len(pooled) > k else np.zeros(pooled.shape[1], bool)
    out = []
    for j in range(fx.shape[1]):
        if not repeats[j]:  # no value repeats MIN_ATOM_COUNT times: a continuous column
            out.append(np.empty(0))
            continue
        vals, counts = np.unique(pooled[:, j], return_counts=True)
        keep = counts >= MIN_ATOM_COUNT
        vals, counts = vals[keep], counts[keep]
        if len(vals) > MAX_ATOMS:
            vals = np.sort(vals[np.argsort(counts, kind="stable")[::-1][:MAX_ATOMS]])
        out.append(vals)
    return out


def _atom_state(f: np.ndarray, atoms: list[np.ndarray]) -> np.ndarray:
    """(n, m) int: the atom index of each value, -1 where it is not an atom."""
    state = np.full(f.shape, -1, dtype=np.int64)
    for j, a in enumerate(atoms):
        if len(a):
            i = np.clip(np.searchsorted(a, f[:, j]), 0, len(a) - 1)
            state[:, j] = np.where(a[i] == f[:, j], i, -1)
    return state


def _hist_lr(vx: np.ndarray, vy: np.ndarray, bins: int):
    """(edges, log-ratio per bin) of a pooled-quantile histogram, add-1/2 smoothing."""
    pooled = np.concatenate([vx, vy])
    edges = np.unique(np.quantile(pooled, np.linspace(0, 1, bins + 1)[1:-1]))
    cx = np.bincount(np.searchsorted(edges, vx, side="right"), minlength=len(edges) + 1).astype(float)
    cy = np.bincount(np.searchsorted(edges, vy, side="right"), minlength=len(edges) + 1).astype(float)
    return edges, _smoothed_log_ratio(cx, cy, len(vx), len(vy))


class _SplitLR:
    """The split likelihood ratio fitted on (fx, fy) over ``cols`` (see module docstring)."""

    def __init__(self, fx: np.ndarray, fy: np.ndarray, atoms: list[np.ndarray], cols: np.ndarray,
                 with_continuous: bool = True):
        self.cols, self.atoms = cols, [atoms[j] for j in cols]
        sx, sy = _atom_state(fx[:, cols], self.atoms), _atom_state(fy[:, cols], self.atoms)
        kx, ky = row_hash(sx), row_hash(sy)
        self.keys, self.key_lr = _keyed_lr(kx, ky)
        self.cells: dict[int, tuple] = {}
        if not with_continuous:
            return
        for ci, key in enumerate(self.keys):
            inx, iny = kx == key, ky == key
            cont = np.flatnonzero(sx[inx][0] < 0) if inx.any() else np.flatnonzero(sy[iny][0] < 0)
            if cont.size == 0 or inx.sum() + iny.sum() < MIN_CELL or not inx.any() or not iny.any():
                continue
            cx, cy = fx[inx][:, cols[cont]], fy[iny][:, cols[cont]]
            if cont.size == 1:
                w = np.ones(1)
            else:
                var = 0.5 * (cx.var(axis=0) + cy.var(axis=0))
                w = (cx.mean(axis=0) - cy.mean(axis=0)) / (var + 1e-12 * max(var.mean(), 1e-300))
                if not np.all(np.isfinite(w)) or not np.any(w):
                    continue
            bins = int(np.clip((inx.sum() + iny.sum()) // 100, 4, MAX_BINS))
            edges, lr = _hist_lr(cx @ w, cy @ w, bins)
            self.cells[ci] = (cols[cont], w, edges, lr)

    def __call__(self, raw: np.ndarray) -> np.ndarray:
        f = _flat(raw).astype(float)
        s = _atom_state(f[:, self.cols], self.atoms)
        k = row_hash(s)
        i = np.clip(np.searchsorted(self.keys, k), 0, len(self.keys) - 1)
        seen = self.keys[i] == k
        out = np.where(seen, self.key_lr[i], 0.0)
        for ci, (cc, w, edges, lr) in self.cells.items():
            rows = np.flatnonzero(seen & (i == ci))
            if rows.size:
                out[rows] += lr[np.searchsorted(edges, f[np.ix_(rows, cc)] @ w, side="right")]
        return out


def _folds(f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = len(f) // 2
    return f[:h], f[h:]


def _with_holdout(name: str, fn, bx: np.ndarray, by: np.ndarray) -> Statistic:
    st = Statistic(name, fn, decimals=LR_DECIMALS)
    st.holdout = (st(bx), st(by))
    return st


def _joint(fx: np.ndarray, fy: np.ndarray) -> Statistic | None:
    (ax, bx), (ay, by) = _folds(fx), _folds(fy)
    kx, ky = row_hash(ax), row_hash(ay)
    if len(np.unique(np.concatenate([kx[:ATOM_ROWS], ky[:ATOM_ROWS]]))) > MAX_JOINT:
        return None
    keys, lr = _keyed_lr(kx, ky)
    if len(keys) < 2:
        return None
    return _with_holdout("joint likelihood-ratio", lambda raw, keys=keys, lr=lr: _lookup(keys, lr, row_hash(_flat(raw))),
                         bx, by)


def _ranked_columns(fx: np.ndarray, fy: np.ndarray) -> np.ndarray:
    m = fx.shape[1]
    if m <= MAX_COORDINATES:
        return np.arange(m)
    sd = np.sqrt(0.5 * (fx.var(axis=0) + fy.var(axis=0))) + 1e-300
    score = np.abs(fx.mean(axis=0) - fy.mean(axis=0)) / sd
    return np.sort(np.argsort(score, kind="stable")[::-1][:MAX_COORDINATES])


def vector_candidates(x_sel: np.ndarray, y_sel: np.ndarray) -> list[Statistic]:
    """Per-coordinate, joint and split statistics of (n, ...) outputs, fitted on the selection half."""
    fx, fy = _flat(x_sel).astype(float), _flat(y_sel).astype(float)
    if not (np.all(np.isfinite(fx)) and np.all(np.isfinite(fy))):
        return []
    m = fx.shape[1]
    (ax, bx), (ay, by) = _folds(fx), _folds(fy)  # ratios are fitted on fold a, thresholded on fold b
    atoms = column_atoms(ax, ay)
    out: list[Statistic] = []
    if m > 1:
        for j in _ranked_columns(fx, fy):
            out.append(Statistic(f"coordinate {j} value", lambda raw, j=j: _flat(raw)[:, j].astype(float)))
            if len(atoms[j]):
                out.append(_with_holdout(f"coordinate {j} split likelihood-ratio",
                                         _SplitLR(ax, ay, atoms, np.array([j])), bx, by))
        joint = _joint(fx, fy)
        if joint is not None:
            out.append(joint)
    has_atoms = any(len(a) for a in atoms)
    if not has_atoms:
        return out
    all_cols = np.arange(m)
    state = _atom_state(ax[:ATOM_ROWS], atoms)
    if len(np.unique(row_hash(state))) > MAX_CELLS:
        return out
    mixed = bool((state < 0).any())  # some value is not an atom: there is a continuous part
    if mixed:  # (a fully discrete output: the joint likelihood ratio is the same statistic)
        out.append(_with_holdout("discrete-part likelihood-ratio",
                                 _SplitLR(ax, ay, atoms, all_cols, with_continuous=False), bx, by))
        out.append(_with_holdout("split likelihood-ratio", _SplitLR(ax, ay, atoms, all_cols), bx, by))
    return out
