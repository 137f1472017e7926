"""Local (LDP) Gaussian noise drawn ahead in chunks of episodes, byte for byte what per-message draws give.

Every LDP user k sends, for each release group in the engine's update order (the ``p`` family's groups,
then ``r``'s, then ``q``'s), one Gaussian message: d(d+1)/2 standard normals for a Gram group
(``symmetric-gaussian-matrix``: upper triangle, mirrored) or d for a target group, times the group's
scale (:func:`privacct.mechanisms.symmetric_gaussian` / :func:`privacct.mechanisms.gaussian`). The noise
generator of a seed serves nothing else, and a Generator's standard normals are a sequential stream
(n calls of m values = one call of n*m values), so drawing a chunk of episodes' normals in one call per
seed and slicing it in the same order gives the same values as the per-message calls, with one
generator call per seed per chunk instead of one per seed per message (issue 14 item 1).

The ledger still gets exactly one record per message, with the arguments :func:`privacct.mechanisms.add_noise`
gives it (group, users (k, k), mechanism, scale, shape, batch). Only all-Gaussian schedules are drawn ahead:
Laplace messages draw exponentials from the same generator, and mixing the two streams per message is
not a sequential stream of one kind; :func:`gaussian_only` says when a schedule qualifies. The JDP counters of the
compiled loop draw ahead the same way, one kind of draw per run: :class:`StepsAhead` for a counter drawing several
draws a step (tree-honaker's leaf and nodes), normals or exponentials.
"""

from __future__ import annotations

import numpy as np

from privacct.ledger import Ledger
from privacct.mechanisms import _triangle
from privacct.tap import current as current_tap
from privacct.tap import record_canary

GAUSSIAN_KINDS = ("gaussian", "symmetric-gaussian-matrix")


def mechanism_of(kind: str, laplace: bool) -> str:
    """The privacct mechanism of a group of ``kind`` (gram | target) as :class:`.aggregators.LocalNoise` adds it."""
    if laplace:
        return "laplace"
    return "symmetric-gaussian-matrix" if kind == "gram" else "gaussian"


def gaussian_only(groups, mechs: dict) -> bool:
    return all(mechanism_of(g.kind, mechs.get(g.name) == "laplace") in GAUSSIAN_KINDS for g in groups)


class NoiseAhead:
    """Chunks of standard normals per seed; :meth:`take` hands out one message's noise in schedule order.

    ``sizes``: the number of normals of each message of one episode, in the update order; ``chunk``:
    episodes per generator call; ``K``: the last episode (the final chunk is cut to it).
    """

    def __init__(self, rngs, sizes: list[int], chunk: int, K: int) -> None:
        self.rngs, self.chunk, self.K = rngs, chunk, K
        self.per_episode = int(sum(sizes))
        self.buf = np.empty((len(rngs), 0))
        self.pos = 0

    def ensure(self, k: int) -> None:
        """At an episode's first message: a new chunk (episodes k .. k + chunk - 1) when the last one is used up."""
        if self.pos >= self.buf.shape[1]:
            n = min(self.chunk, self.K - k + 1)
            self.buf = np.empty((len(self.rngs), n * self.per_episode))
            for b, r in enumerate(self.rngs):
                r.standard_normal(out=self.buf[b])
            self.pos = 0

    def take(self, k: int, m: int) -> np.ndarray:
        """The next ``m`` standard normals of every seed, (B, m), for a message of episode ``k``."""
        self.ensure(k)
        z = self.buf[:, self.pos:self.pos + m]
        self.pos += m
        return z



def honaker_draws(k: int) -> int:
    """Draws of a ``tree-honaker`` counter's step ``k``: the leaf and the nodes [k - 2^i + 1, k], i = 1..nu(k)
    (privacct/counters/tree_honaker.py ``step``): nu(k) + 1, nu the trailing zeros of k."""
    return (k & -k).bit_length()


class StepsAhead(NoiseAhead):
    """:class:`NoiseAhead` for counters drawing ``per_step(k)`` draws of every group at step k (``tree-honaker``:
    :func:`honaker_draws`), one group's draws after another's in the update order (each counter's ``add`` makes its
    step's draws together): a chunk of episodes k .. k + n - 1 holds sum_k per_step(k) x ``per_episode`` values per
    seed, one generator call per seed, standard normals or, with ``exponential`` (Laplace: E1 then E2 per draw, as
    :func:`privacct.mechanisms.laplace` draws them), standard exponentials: the same sequential stream as the
    per-draw calls."""

    def __init__(self, rngs, sizes: list[int], chunk: int, K: int, per_step, exponential: bool = False) -> None:
        super().__init__(rngs, sizes, chunk, K)
        self.per_step, self.exponential = per_step, bool(exponential)

    def ensure(self, k: int) -> None:
        if self.pos >= self.buf.shape[1]:
            n = min(self.chunk, self.K - k + 1)
            total = self.per_episode * sum(self.per_step(j) for j in range(k, k + n))
            self.buf = np.empty((len(self.rngs), total))
            for b, r in enumerate(self.rngs):
                if self.exponential:
                    r.standard_exponential(out=self.buf[b])
                else:
                    r.standard_normal(out=self.buf[b])
            self.pos = 0


def gaussian_message(value: np.ndarray, kind: str, scale: float, ahead: NoiseAhead, ledger: Ledger, group: str,
                     k: int) -> np.ndarray:
    """``value`` + one Gaussian message's noise from ``ahead``, recorded as add_noise records it.

    Same arithmetic as privacct.mechanisms: the normals times ``scale`` (then mirrored for a Gram group),
    added to the value."""
    B = value.shape[0]
    if kind == "gram":
        d = value.shape[-1]
        rows, cols = _triangle(d)
        ledger.record(group=group, users=(k, k), mechanism="symmetric-gaussian-matrix", scale=scale, shape=(d, d),
                      batch=B)
        upper = ahead.take(k, rows.size) * scale
        noise = np.empty((B, d, d))
        noise[:, rows, cols] = upper
        noise[:, cols, rows] = upper
        out = value + noise
        mechanism = "symmetric-gaussian-matrix"
    else:
        shape = value.shape[1:]
        ledger.record(group=group, users=(k, k), mechanism="gaussian", scale=scale, shape=shape, batch=B)
        out = value + (ahead.take(k, int(np.prod(shape))) * scale).reshape((B,) + shape)
        mechanism = "gaussian"
    tap = current_tap()
    if tap is not None and tap.plan is not None:   # a one-run audit: a canary's message, as add_noise records it
        if k in tap.plan:
            record_canary(tap, user=k, group=group, name=f"{group} report of user {k}", mechanism=mechanism, scale=scale,
                          values=out)
    elif tap is not None and k == 1:   # an audited run: user 1's message, as privacct.mechanisms.add_noise records it
        tap.record(group=group, name=f"{group} report of user 1", mechanism=mechanism, scale=scale, values=out,
                   contribution=value)
    return out


def local_update(G: np.ndarray, u: np.ndarray, X: np.ndarray, Y: np.ndarray, groups, scales: dict, ahead: NoiseAhead,
                 ledger: Ledger, k: int) -> None:
    """Every Gaussian message of one family's ``groups`` for episode ``k``, summed into G (B, H, d, d) and u (B, H, d)
    in place: :func:`gaussian_message` for each group in order, compiled (:func:`_messages`), the same bytes.
    The ledger records come first, one per message in the same order (nothing between them draws)."""
    B, H, d = X.shape
    for g in groups:
        if g.kind == "gram":
            ledger.record(group=g.name, users=(k, k), mechanism="symmetric-gaussian-matrix", scale=scales[g.name],
                          shape=(d, d), batch=B)
        else:
            ledger.record(group=g.name, users=(k, k), mechanism="gaussian", scale=scales[g.name], shape=(d,), batch=B)
    ahead.ensure(k)
    rows, cols = _triangle(d)
    kinds = np.array([0 if g.kind == "gram" else 1 for g in groups], dtype=np.int64)
    hs = np.array([g.h for g in groups], dtype=np.int64)
    sc = np.array([float(scales[g.name]) for g in groups])
    from .messages_jit import messages   # numba loads on the first LDP update, not on import (CLI start-up)

    ahead.pos = messages(G, u, np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(Y, dtype=float), kinds, hs, sc,
                          ahead.buf, ahead.pos, rows.astype(np.int64), cols.astype(np.int64))
