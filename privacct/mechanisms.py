"""Noise primitives: the only way learners add privacy noise.

Every function takes a *batch* of Generators (one per seed; :func:`privacct.rng.spawn_generators`)
and returns arrays with a leading batch axis ``B = len(rngs)``. Noise for seed ``i`` comes from
``rngs[i]`` alone, so a batched run and ``B`` single runs with the same Generators give the same
bytes. Each call that draws fresh noise records one :class:`privacct.ledger.Draw` in the ledger
(if one is given): the group, the users whose data the noised value contains, the scale, the shape.

Primitives
----------
* :func:`laplace` / :func:`gaussian`: i.i.d. Laplace(b) or N(0, sigma^2) noise per coordinate
  (Dwork & Roth 2014, Def. 3.3 and App. A).
* :func:`symmetric_gaussian`: a symmetric d x d matrix whose upper triangle (diagonal included)
  is i.i.d. N(0, sigma^2) and mirrored, so every entry has variance sigma^2 ("Analyze Gauss",
  Dwork, Talwar, Thakurta, Zhang 2014). Its sensitivity is measured in the l2 norm of the
  upper-triangle vectorisation (``frobenius-upper``), which is at most the Frobenius norm.
* :class:`TreeCounter`: the binary mechanism of Chan, Shi, Song (2011) over scalars, vectors or
  matrices (Shariff & Sheffet 2018 for Gram matrices): noise drawn once per dyadic node when the
  node completes and reused; the release after k additions is the sum of the noisy nodes given by
  the binary digits of k (at most floor(log2 k) + 1 nodes). Each leaf lies in at most
  floor(log2 K) + 1 noised nodes (:func:`privacct.log.tree_depth`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

from .errors import PrivacctError, check_count, check_positive
from .ledger import Ledger
from .log import tree_depth
from .rng import as_generators
from .tap import current as current_tap
from .tap import after_noise, coupled_share, coupled_value, inside_primitive, note_draw, note_uncoupled, record_canary

NOISE_KINDS = ("laplace", "gaussian", "symmetric-gaussian-matrix")


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    out = tuple(int(s) for s in shape)
    if any(s < 1 for s in out):
        raise PrivacctError(f"shape must have positive entries, got {shape!r}")
    return out


def _record(ledger: Ledger | None, group: str | None, users: tuple[int, int] | None, mechanism: str,
            scale: float, shape: tuple[int, ...], batch: int) -> None:
    note_draw(group, users, mechanism)  # an audited run's tap (privacct.tap): a draw over user 1 it cannot split
    if ledger is None:
        return
    if group is None or users is None:
        raise PrivacctError("group and users are required when a ledger is given")
    ledger.record(group=group, users=users, mechanism=mechanism, scale=scale, shape=shape, batch=batch)


def laplace(rngs, shape, scale: float, *, ledger: Ledger | None = None, group: str | None = None,
            users: tuple[int, int] | None = None) -> np.ndarray:
    """Laplace(b = ``scale``) noise of shape ``(B, *shape)``; one ledger draw over ``users``.

    Drawn as b (E1 - E2) with E1, E2 i.i.d. standard exponential (the difference of two
    Exp(1) variables is standard Laplace), one generator call per seed into a preallocated
    buffer: about twice as fast as ``Generator.laplace`` per seed for batched learners.
    """
    rngs = as_generators(rngs)
    shape = _shape(shape)
    scale = check_positive("scale", scale)
    _record(ledger, group, users, "laplace", scale, shape, len(rngs))
    buf = np.empty((len(rngs), 2) + shape)
    for b, r in enumerate(rngs):
        r.standard_exponential(out=buf[b])
    out = np.subtract(buf[:, 0], buf[:, 1])
    out *= scale
    after_noise(group, users, "laplace", scale, out)
    return out


def gaussian(rngs, shape, scale: float, *, ledger: Ledger | None = None, group: str | None = None,
             users: tuple[int, int] | None = None) -> np.ndarray:
    """N(0, ``scale``^2) noise of shape ``(B, *shape)``; one ledger draw over ``users``."""
    rngs = as_generators(rngs)
    shape = _shape(shape)
    scale = check_positive("scale", scale)
    _record(ledger, group, users, "gaussian", scale, shape, len(rngs))
    out = np.empty((len(rngs),) + shape)
    for b, r in enumerate(rngs):
        r.standard_normal(out=out[b])
    out *= scale
    after_noise(group, users, "gaussian", scale, out)
    return out


def symmetric_gaussian(rngs, d: int, scale: float, *, ledger: Ledger | None = None, group: str | None = None,
                       users: tuple[int, int] | None = None) -> np.ndarray:
    """Symmetric ``(B, d, d)`` noise: upper triangle (diagonal included) N(0, scale^2), mirrored.

    Every entry, diagonal included, has variance scale^2 (not the 2 scale^2 diagonal of
    (Z + Z^T)/sqrt(2)). Draws d(d+1)/2 normals per seed.
    """
    rngs = as_generators(rngs)
    d = check_count("d", d)
    scale = check_positive("scale", scale)
    _record(ledger, group, users, "symmetric-gaussian-matrix", scale, (d, d), len(rngs))
    rows, cols = _triangle(d)
    upper = np.empty((len(rngs), rows.size))
    for b, r in enumerate(rngs):
        r.standard_normal(out=upper[b])
    upper *= scale
    out = np.empty((len(rngs), d, d))
    out[:, rows, cols] = upper
    out[:, cols, rows] = upper  # mirror (the diagonal is written twice with the same value)
    after_noise(group, users, "symmetric-gaussian-matrix", scale, out)
    return out


@lru_cache(maxsize=64)
def _triangle(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the upper triangle of a d x d matrix, diagonal included."""
    rows, cols = np.triu_indices(d)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


def upper_triangle(M: np.ndarray) -> np.ndarray:
    """Upper triangle (diagonal included) of the trailing (d, d) axes of ``M``, row-major: shape (..., d(d+1)/2)
    (what a symmetric-matrix release noises once per entry, docs/accounting.md#symmetric-gaussian-matrices)."""
    rows, cols = _triangle(M.shape[-1])
    return M[..., rows, cols]


def symmetric_from_upper(v: np.ndarray, d: int) -> np.ndarray:
    """The symmetric (..., d, d) matrix whose upper triangle (row-major, diagonal included) is ``v``."""
    rows, cols = _triangle(d)
    out = np.zeros(v.shape[:-1] + (d, d))
    out[..., rows, cols] = v
    out[..., cols, rows] = v
    return out


def add_noise(value: np.ndarray, mechanism: str, scale: float, rngs, *, ledger: Ledger | None = None,
              group: str | None = None, users: tuple[int, int] | None = None) -> np.ndarray:
    """``value`` (shape ``(B, *shape)``) plus fresh noise of the named mechanism.

    For ``symmetric-gaussian-matrix`` the trailing two axes of ``value`` must be square.
    This is the local randomizer of an LDP learner: user k perturbs her own statistics with
    ``users=(k, k)``.
    """
    value = np.asarray(value, dtype=float)
    rngs = as_generators(rngs)
    if value.shape[0] != len(rngs):
        raise PrivacctError(f"value must have a leading batch axis of size {len(rngs)}, got shape {value.shape}")
    tap = current_tap()
    if tap is None or users is None or (tap.plan is None and not (users[0] <= 1 <= users[1])):
        return value + draw(mechanism, rngs, value.shape[1:], scale, ledger=ledger, group=group, users=users)
    if tap.plan is None and tuple(users) == (1, 1):   # a billboard check's replayed run: canary A's report value
        value = coupled_value(f"{group} report of user 1", value)
    elif tap.plan is None:
        note_uncoupled(f"{group}: add_noise over users {users[0]}..{users[1]}")
    with inside_primitive():   # an audited run (privacct.tap): this primitive records its own draw over user 1
        out = value + draw(mechanism, rngs, value.shape[1:], scale, ledger=ledger, group=group, users=users)
    if tap.plan is not None:   # a one-run audit: a canary's own report
        canaries = _canaries_in(tap, tuple(users))
        if users[0] == users[1] and canaries:
            record_canary(tap, user=users[0], group=group or "?", name=f"{group} report of user {users[0]}",
                          mechanism=mechanism, scale=scale, values=out)
        elif canaries:
            tap.note_unobserved(group, tuple(users), "add_noise over several users: a canary's share is unknown")
        return out
    if tuple(users) == (1, 1):
        tap.record(group=group or "?", name=f"{group} report of user 1", mechanism=mechanism, scale=scale, values=out,
                   contribution=value)
    else:
        tap.note_unobserved(group, tuple(users), f"add_noise over users {users[0]}..{users[1]}: the value is their "
                                                 "aggregate and user 1's share of it is unknown to the primitive")
    return out


def draw(mechanism: str, rngs, shape, scale: float, *, ledger: Ledger | None = None, group: str | None = None,
         users: tuple[int, int] | None = None) -> np.ndarray:
    """Noise of one named mechanism with shape ``(B, *shape)``."""
    if mechanism == "laplace":
        return laplace(rngs, shape, scale, ledger=ledger, group=group, users=users)
    if mechanism == "gaussian":
        return gaussian(rngs, shape, scale, ledger=ledger, group=group, users=users)
    if mechanism == "symmetric-gaussian-matrix":
        shape = _shape(shape)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise PrivacctError(f"symmetric-gaussian-matrix needs a square (d, d) shape, got {shape}")
        return symmetric_gaussian(rngs, shape[0], scale, ledger=ledger, group=group, users=users)
    raise PrivacctError(f"mechanism must be one of {', '.join(NOISE_KINDS)}, got {mechanism!r}")


def _canaries_in(tap, users: tuple[int, int]) -> list[int]:
    """The one-run canaries among users ``users[0]..users[1]`` (sorted)."""
    import bisect

    order = tap.__dict__.get("_plan_sorted")
    if order is None:
        order = tap.__dict__["_plan_sorted"] = sorted(tap.plan)
    return order[bisect.bisect_left(order, users[0]):bisect.bisect_right(order, users[1])]


def _leaf_users(leaf_users, leaves: int, first_user: int) -> tuple[tuple[int, int], ...]:
    """Validated leaf -> user-interval map (see :class:`TreeCounter`)."""
    if first_user != 1:
        raise PrivacctError("leaf_users and first_user cannot be combined (give the intervals of every leaf)")
    out = tuple((int(a), int(b)) for a, b in leaf_users)
    if len(out) != leaves:
        raise PrivacctError(f"leaf_users must give one (first, last) interval per leaf ({leaves}), got {len(out)}")
    prev = 0
    for t, (a, b) in enumerate(out, 1):
        if not (prev < a <= b):
            raise PrivacctError(f"leaf_users[{t - 1}] must be an interval (first, last) with {prev} < first <= last, "
                                f"got {(a, b)} (intervals increasing and disjoint)")
        prev = b
    return out


class TreeCounter:
    """Binary-tree (binary mechanism) counter over a stream of up to ``leaves`` additions.

    Parameters
    ----------
    shape : int or tuple
        Shape of one addition (scalar: ``()`` is not allowed, use ``1``; matrices: ``(d, d)``).
    leaves : int
        K, the maximum number of additions (users). Each user sits in at most
        floor(log2 K) + 1 noised nodes.
    mechanism : "laplace" | "gaussian" | "symmetric-gaussian-matrix"
    scale : float
        Laplace b or Gaussian sigma of each node's noise, per coordinate.
    rngs : Generator or sequence of Generators (the batch axis B).
    ledger, group : where node draws are recorded. Node covering additions i..j records users
        ``(first_user + i - 1, first_user + j - 1)``.
    leaf_users : optional sequence of ``leaves`` user intervals ``(first, last)`` (1-based, inclusive,
        increasing and disjoint): leaf t holds the data of users ``leaf_users[t - 1]`` (a batched
        leaf, e.g. one batch of episodes). Node covering leaves i..j then records users
        ``(leaf_users[i - 1][0], leaf_users[j - 1][1])``. Not combined with ``first_user``.

    ``add(x)`` takes ``x`` of shape ``(B, *shape)`` and returns the noisy prefix sum of all
    additions so far (including ``x``); ``noisy_sum()`` re-reads it at no privacy cost.
    """

    def __init__(self, shape, *, leaves: int, mechanism: str, scale: float, rngs,
                 ledger: Ledger | None = None, group: str | None = None, first_user: int = 1,
                 leaf_users: Sequence[tuple[int, int]] | None = None) -> None:
        self.shape = _shape(shape)
        self.leaves = check_count("leaves", leaves)
        if mechanism not in NOISE_KINDS:
            raise PrivacctError(f"mechanism must be one of {', '.join(NOISE_KINDS)}, got {mechanism!r}")
        if mechanism == "symmetric-gaussian-matrix" and (len(self.shape) != 2 or self.shape[0] != self.shape[1]):
            raise PrivacctError(f"symmetric-gaussian-matrix tree needs a square (d, d) shape, got {self.shape}")
        self.mechanism = mechanism
        self.scale = check_positive("scale", scale)
        self.rngs = as_generators(rngs)
        self.ledger = ledger
        self.group = group
        if ledger is not None and group is None:
            raise PrivacctError("group is required when a ledger is given")
        self.first_user = check_count("first_user", first_user)
        self.leaf_users = None if leaf_users is None else _leaf_users(leaf_users, self.leaves, self.first_user)
        self.levels = tree_depth(self.leaves)
        B = len(self.rngs)
        # alpha[i]: exact p-sum of the current node at level i; noise[i]: its noise (drawn once).
        self._alpha = np.zeros((self.levels, B) + self.shape)
        self._noise = np.zeros((self.levels, B) + self.shape)
        self._exact = np.zeros((B,) + self.shape)
        self._release = np.zeros((B,) + self.shape)  # sum of the noisy nodes of the set bits of steps
        self.steps = 0

    @property
    def batch(self) -> int:
        return len(self.rngs)

    def begin_addition(self, x) -> tuple[np.ndarray, int]:
        """(x as a float array, its step t): checks the shape and the capacity and advances the step count. :meth:`add`
        starts with it; a counter built on this one that releases its own way does too."""
        x = np.asarray(x, dtype=float)
        if x.shape != (self.batch,) + self.shape:
            raise PrivacctError(f"x must have shape {(self.batch,) + self.shape}, got {x.shape}")
        if self.steps >= self.leaves:
            raise PrivacctError(f"tree counter is full: it was built for leaves={self.leaves} additions")
        self.steps += 1
        tap = current_tap()
        if tap is not None and tap.coupling is not None and tap.plan is None:
            x = self._coupled(tap, x)
        return x, self.steps

    def _coupled(self, tap, x: np.ndarray) -> np.ndarray:
        """The addition a billboard check's coupled run puts into the tree (:class:`privacct.tap.Coupling`): user 1's
        leaf is canary A's in the replayed run; a leaf holding her with others has her reported share moved."""
        leaf = self.node_users(self.steps, self.steps)
        where = f"{self.group or 'tree'}: a leaf of user 1 with other users"
        if leaf == (1, 1):
            return coupled_value(f"{self.group or 'tree'} leaf of user 1", x)
        if leaf[0] <= 1 <= leaf[1]:
            got = tap.pending.get(self.group)
            if got is None or got[3] is not None:   # no share reported, or one for some rows of the batch only
                note_uncoupled(where)
                return x
            return coupled_share(where, x, got[0], got[1])
        return x

    def add(self, x) -> np.ndarray:
        x, t = self.begin_addition(x)
        i = (t & -t).bit_length() - 1  # level of the node that completes at step t
        # Chan-Shi-Song Alg. 2: alpha_i = sum_{j<i} alpha_j + x_t; lower nodes are discarded.
        # Bits 0..i-1 of t-1 are set and those of t are not: their noisy nodes leave the release.
        if i:
            self._release -= self._alpha[:i].sum(axis=0) + self._noise[:i].sum(axis=0)
        self._alpha[i] = self._alpha[:i].sum(axis=0) + x
        self._alpha[:i] = 0.0
        self._noise[:i] = 0.0
        self.note_addition(t, x)
        self._noise[i] = self.node_noise(t - (1 << i) + 1, t)
        self._exact += x
        self._release += self._alpha[i] + self._noise[i]
        return self.noisy_sum()

    def note_addition(self, t: int, x: np.ndarray) -> None:
        """Bookkeeping of an audited run (:mod:`privacct.tap`) for the addition ``x`` at step ``t``: user 1's
        addition is kept (the leaf whose users are exactly (1, 1)). :meth:`add` calls it; a counter built on this
        one that draws its nodes its own way calls it once per addition, before :meth:`node_noise`."""
        tap = current_tap()
        if tap is None:
            return
        leaf = self.node_users(t, t)
        if tap.plan is not None:   # a one-run audit: keep each canary's addition
            canaries = _canaries_in(tap, leaf)
            if leaf[0] == leaf[1] and canaries:
                self._canary_x = getattr(self, "_canary_x", {})
                self._canary_x[leaf[0]] = np.array(x, dtype=float, copy=True)
            elif canaries:
                tap.note_unobserved(self.group, leaf, f"tree leaf holds users {leaf[0]}..{leaf[1]} together: a canary's "
                                                      "share of the leaf is unknown to the counter")
            return
        if leaf == (1, 1):
            self._user1 = np.array(x, dtype=float, copy=True)
        elif leaf[0] <= 1 <= leaf[1]:
            got = tap.take_pending(self.group)   # the learner reported user 1's share (privacct.tap.user_contribution)
            if got is not None:
                self._user1, self._user1_means = got[0], (got[1], got[2])
            else:
                tap.note_unobserved(self.group, leaf, f"tree leaf 1 holds users {leaf[0]}..{leaf[1]} together: user 1's "
                                                      "share of the leaf is unknown to the counter")

    def node_noise(self, first_leaf: int, last_leaf: int) -> np.ndarray:
        """Fresh noise (B, *shape) for the node covering leaves ``first_leaf..last_leaf``: one ledger draw over its
        users. :meth:`add` draws each node once, when it completes (and releases it at that step); a counter
        built on this one calls it for every node noise it draws and RELEASES. In an audited run a node over
        user 1 is recorded as user 1's addition plus this noise (:mod:`privacct.tap`: each draw is a release)."""
        users = self.node_users(first_leaf, last_leaf)
        tap = current_tap()
        if tap is None:
            return draw(self.mechanism, self.rngs, self.shape, self.scale, ledger=self.ledger, group=self.group,
                        users=users)
        with inside_primitive():
            noise = draw(self.mechanism, self.rngs, self.shape, self.scale, ledger=self.ledger, group=self.group,
                         users=users)
        if tap.plan is not None:   # a one-run audit: a node holding exactly one canary is her release
            canaries = _canaries_in(tap, users)
            kept = getattr(self, "_canary_x", {})
            if len(canaries) == 1 and canaries[0] in kept:
                u = canaries[0]
                record_canary(tap, user=u, group=self.group or "tree", name=f"{self.group or 'tree'} node "
                              f"[{first_leaf}, {last_leaf}] of user {u}", mechanism=self.mechanism, scale=self.scale,
                              values=kept[u] + noise)
            return noise
        x1 = getattr(self, "_user1", None)
        if users[0] <= 1 <= users[1] and x1 is not None:
            tap.record(group=self.group or "tree", name=f"{self.group or 'tree'} node [1, {last_leaf}]",
                       mechanism=self.mechanism, scale=self.scale, values=x1 + noise, contribution=x1,
                       means=getattr(self, "_user1_means", None))
        return noise

    def node_users(self, first_leaf: int, last_leaf: int) -> tuple[int, int]:
        """The users (first, last) of the node covering leaves ``first_leaf..last_leaf`` (1-based)."""
        if self.leaf_users is None:
            return self.first_user + first_leaf - 1, self.first_user + last_leaf - 1
        return self.leaf_users[first_leaf - 1][0], self.leaf_users[last_leaf - 1][1]

    def noisy_sum(self) -> np.ndarray:
        """Noisy prefix sum after ``steps`` additions: the noisy nodes of the set bits of ``steps``
        (kept as a running total: amortised O(1) nodes per step instead of O(log k))."""
        return self._release.copy()

    def node_sum(self) -> np.ndarray:
        """The same release recomputed from the stored nodes (for tests of the running total)."""
        t = self.steps
        out = np.zeros((self.batch,) + self.shape)
        for i in range(self.levels):
            if (t >> i) & 1:
                out += self._alpha[i] + self._noise[i]
        return out

    def exact_sum(self) -> np.ndarray:
        """The noiseless prefix sum (for tests and regret diagnostics only; never released)."""
        return self._exact.copy()

    def noise_std(self, steps: int | None = None) -> float:
        """Standard deviation of one coordinate of the release after ``steps`` additions."""
        t = self.steps if steps is None else int(steps)
        per_node = self.scale * (np.sqrt(2.0) if self.mechanism == "laplace" else 1.0)
        return float(per_node * np.sqrt(bin(t).count("1")))
