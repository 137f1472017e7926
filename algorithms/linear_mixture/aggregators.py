"""Server-side ridge statistics of one regression family, exact or privatised, batched over seeds.

A family is ``p`` (transitions: x = phi_V(s_h, a_h) in R^d, y = V_{h+1}(s_{h+1})) or ``r`` (rewards of
seed 000: x = varphi(s_h, a_h) in R^{d2}, y = r_h). For every stage h the server keeps G_h = sum x x^T
and u_h = sum x y over past users, and hands out Sigma_{k,h}^{-1} and theta_{k,h} = Sigma^{-1} u with
Sigma_{k,h} = lambda I + G_{k,h} + shift_k I:

* :class:`ExactRidge` (non-private): Sherman-Morrison rank-one updates of Sigma^{-1} and of
  log det(Sigma / lambda I) (used by the UCRL-VTR radius); no shift.
* :class:`LocalNoise` (LDP): user k sends x x^T + W and x y + xi, fresh privacct noise per release
  group (``add_noise``, users=(k, k)); the server sums the messages (seed 001 Alg. 1 lines 11-18,
  seed 003 Cor. 6).
* :class:`TreeNoise` (JDP): one privacct ``TreeCounter`` per release group with K-1 leaves (the prefix
  after user K is never used); G_h, u_h are the noisy prefix sums (seed 000 Sec. 6.1, seed 003 Cor. 5).
  A group whose log structure is ``factorized`` (option ``counter``, docs/counters.md) runs a
  :class:`privacct.counters.counter.FactorizedCounter` of that structure instead, with the same noise
  scale and mechanism.

Laplace groups (the pure-DP variants of seed 003, Rem. 1 / App. C.4): a Gram statistic is released as
its upper triangle (d(d+1)/2 values, each with its own Laplace noise) and mirrored by the server
(:func:`sym`), so the released matrix is symmetric like the Gaussian one; ``mechs`` maps each group to
its log mechanism.

Noisy Sigma are inverted by :func:`safe_inverse`, which reports (never hides) non-PD matrices.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from privacct.counters.counter import FactorizedCounter
from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.mechanisms import TreeCounter, add_noise, symmetric_from_upper, upper_triangle

from .design import GroupSpec
from .noise_ahead import NoiseAhead, gaussian_message, local_update


def safe_inverse(S: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of a batch of symmetric matrices (..., d, d) and a bool mask of the non-PD ones.

    PD matrices (Cholesky succeeds) are inverted exactly. A matrix whose Cholesky fails has its
    eigenvalues floored at ``floor`` (> 0) before inversion -- post-processing of released
    statistics, privacy-neutral (docs/learners.md#common-repairs); the event is
    returned so that the caller records it (never a silent NaN).
    """
    shape = S.shape
    flat = S.reshape(-1, shape[-2], shape[-1])
    try:
        # The Cholesky is the PD test only. Inverting with its factor instead (L^{-T} L^{-1}) would save the
        # LU of np.linalg.inv, but it rounds differently (|diff| ~ 4e-16) and changes the released statistics
        # of every learner of this family (tests/algorithms/test_regret_pins.py, "sensitive" configuration,
        # measured 2026-11-24): issue 14 asks for the same bytes, so the old arithmetic stays.
        np.linalg.cholesky(flat)
        return np.linalg.inv(flat).reshape(shape), np.zeros(shape[:-2], dtype=bool)
    except np.linalg.LinAlgError:
        pass
    bad = np.zeros(flat.shape[0], dtype=bool)
    for i in range(flat.shape[0]):
        try:
            np.linalg.cholesky(flat[i])
        except np.linalg.LinAlgError:
            bad[i] = True
    out = np.empty_like(flat)
    good = ~bad
    if good.any():
        out[good] = np.linalg.inv(flat[good])
    w, v = np.linalg.eigh(flat[bad])
    w = np.maximum(w, floor)
    out[bad] = np.einsum("nij,nj,nkj->nik", v, 1.0 / w, v)
    if not np.all(np.isfinite(out)):
        raise PrivacctError("non-finite inverse of a noisy Gram matrix even after the eigenvalue floor")
    return out.reshape(shape), bad.reshape(shape[:-2])


upper = upper_triangle            # privacct.mechanisms: one copy of the symmetric-matrix layout
sym = symmetric_from_upper


class Aggregator:
    """Common state: G (B, H, dim, dim) and u (B, H, dim)."""

    def __init__(self, B: int, H: int, dim: int, lam: float, shift: Callable[[int], float]) -> None:
        self.G = np.zeros((B, H, dim, dim))
        self.u = np.zeros((B, H, dim))
        self.lam = lam
        self.shift = shift
        self.eye = np.eye(dim)
        self.floor = lam if lam > 0 else 1.0

    def inverse(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(Sigma_k^{-1} (B, H, dim, dim), non-PD mask (B, H)) for the policy of user k."""
        return safe_inverse(self.G + (self.lam + self.shift(k)) * self.eye, self.floor)

    def logdet(self) -> np.ndarray | None:
        return None

    def update(self, k: int, X: np.ndarray, Y: np.ndarray) -> None:
        raise NotImplementedError

    def released(self, groups: list[GroupSpec]) -> list[np.ndarray]:
        """The current noisy statistic of every group (upper triangles of Gram matrices), (B, m) each."""
        return [upper(self.G[:, g.h]) if g.kind == "gram" else self.u[:, g.h] for g in groups]


class ExactRidge(Aggregator):
    def __init__(self, B: int, H: int, dim: int, lam: float) -> None:
        super().__init__(B, H, dim, lam, lambda k: 0.0)
        self.Minv = np.broadcast_to(self.eye / lam, (B, H, dim, dim)).copy()
        self._logdet = np.zeros((B, H))

    def inverse(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.Minv, np.zeros(self.Minv.shape[:2], dtype=bool)

    def logdet(self) -> np.ndarray:
        return self._logdet

    def update(self, k: int, X: np.ndarray, Y: np.ndarray) -> None:
        Mx = np.einsum("bhij,bhj->bhi", self.Minv, X)
        q = np.einsum("bhi,bhi->bh", X, Mx)
        self.Minv -= np.einsum("bhi,bhj->bhij", Mx, Mx) / (1.0 + q)[..., None, None]
        self._logdet += np.log1p(q)
        self.G += np.einsum("bhi,bhj->bhij", X, X)
        self.u += X * Y[..., None]


class LocalNoise(Aggregator):
    def __init__(self, B: int, H: int, dim: int, lam: float, shift, groups: list[GroupSpec], scales: dict,
                 rngs, ledger: Ledger, audited: bool, mechs: dict | None = None, ahead: NoiseAhead | None = None) -> None:
        super().__init__(B, H, dim, lam, shift)
        self.groups, self.scales, self.rngs, self.ledger = groups, scales, rngs, ledger
        self.mechs = mechs or {}
        #: audited runs send every message through the per-message path, where the tap sees user 1's (privacct.tap)
        self.audited = bool(audited)
        #: all-Gaussian schedules: the noise drawn ahead in chunks, same bytes (:mod:`.noise_ahead`)
        self.ahead = ahead

    def update(self, k: int, X: np.ndarray, Y: np.ndarray) -> None:
        if self.ahead is not None and not self.audited:  # compiled, same bytes; audited runs take the per-message path
            local_update(self.G, self.u, X, Y, self.groups, self.scales, self.ahead, self.ledger, k)
            return
        for g in self.groups:
            x, y = X[:, g.h], Y[:, g.h]
            laplace = self.mechs.get(g.name) == "laplace"
            if self.ahead is not None:
                value = np.einsum("bi,bj->bij", x, x) if g.kind == "gram" else x * y[:, None]
                msg = gaussian_message(value, g.kind, self.scales[g.name], self.ahead, self.ledger, g.name, k)
                if g.kind == "gram":
                    self.G[:, g.h] += msg
                else:
                    self.u[:, g.h] += msg
            elif g.kind == "gram" and laplace:
                msg = add_noise(upper(np.einsum("bi,bj->bij", x, x)), "laplace", self.scales[g.name], self.rngs,
                                ledger=self.ledger, group=g.name, users=(k, k))
                self.G[:, g.h] += sym(msg, x.shape[-1])
            elif g.kind == "gram":
                msg = add_noise(np.einsum("bi,bj->bij", x, x), "symmetric-gaussian-matrix", self.scales[g.name],
                                self.rngs, ledger=self.ledger, group=g.name, users=(k, k))
                self.G[:, g.h] += msg
            else:
                msg = add_noise(x * y[:, None], "laplace" if laplace else "gaussian", self.scales[g.name], self.rngs,
                                ledger=self.ledger, group=g.name, users=(k, k))
                self.u[:, g.h] += msg


class TreeNoise(Aggregator):
    """One continual counter per release group over K - 1 leaves: the printed tree (``TreeCounter``), or, for a group
    whose declared structure (``structures``: group -> the log's Structure) is ``factorized``, a ``FactorizedCounter``
    of exactly that structure (blt: the declared buffers), so the counter runs what the log accounts."""

    def __init__(self, B: int, H: int, dim: int, lam: float, shift, groups: list[GroupSpec], scales: dict,
                 rngs, ledger: Ledger, K: int, mechs: dict | None = None, structures: dict | None = None) -> None:
        super().__init__(B, H, dim, lam, shift)
        self.groups, self.K, self.dim = groups, K, dim
        self.counters = {}
        #: groups whose counter holds the upper triangle of the Gram matrix (Laplace), not the matrix
        self.upper_counter: set[str] = set()
        mechs = mechs or {}
        for g in groups:
            if mechs.get(g.name) == "laplace":
                shape, mech = ((dim * (dim + 1) // 2,) if g.kind == "gram" else (dim,)), "laplace"
                if g.kind == "gram":
                    self.upper_counter.add(g.name)
            else:
                shape = (dim, dim) if g.kind == "gram" else (dim,)
                mech = "symmetric-gaussian-matrix" if g.kind == "gram" else "gaussian"
            st = (structures or {}).get(g.name)
            if st is None or st.kind == "tree":
                self.counters[g.name] = TreeCounter(shape, leaves=K - 1, mechanism=mech, scale=scales[g.name],
                                                    rngs=rngs, ledger=ledger, group=g.name)
            else:
                self.counters[g.name] = FactorizedCounter(shape, strategy=st, leaves=K - 1, mechanism=mech,
                                                          scale=scales[g.name], rngs=rngs, ledger=ledger, group=g.name)

    def update(self, k: int, X: np.ndarray, Y: np.ndarray) -> None:
        if k > self.K - 1:
            return  # user K's data would only enter a prefix that no user ever receives
        for g in self.groups:
            x, y = X[:, g.h], Y[:, g.h]
            if g.name in self.upper_counter:
                self.G[:, g.h] = sym(self.counters[g.name].add(upper(np.einsum("bi,bj->bij", x, x))), self.dim)
            elif g.kind == "gram":
                self.G[:, g.h] = self.counters[g.name].add(np.einsum("bi,bj->bij", x, x))
            else:
                self.u[:, g.h] = self.counters[g.name].add(x * y[:, None])
