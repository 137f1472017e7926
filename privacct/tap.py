"""The audit tap: what privacct's noise primitives see of user 1 in an audited run.

A white-box audit of a learner (docs/auditing.md#observations-from-the-primitives) observes every
release that contains user 1, as the colluding other users see it: the released value minus the
exact contribution of users 2..t (they know their own data and the history, so this is a
post-processing of the transcript), i.e. user 1's contribution plus the release's own noise. The
primitives know everything this needs: which users a draw covers, its noise model and scale, and,
where user 1's data enters through them, user 1's contribution. So in an audited run they record it
themselves, and a learner written with them needs no observation code of its own.

While a tap is active (:func:`tapping`, opened by :meth:`privacct.algorithms.contract.LearnerSpec.run`
around an audited run), the primitives of :mod:`privacct.mechanisms` record:

* :class:`privacct.mechanisms.TreeCounter`: user 1's addition (the leaf whose users are exactly
  ``(1, 1)``) and, for every node whose users start at user 1 (the nodes [1, 2^j], each released
  alone after step 2^j), one :class:`TapRecord` with ``values`` = user 1's addition + the node's noise.
  Whatever the counter does with its nodes later, each fresh draw over user 1 is one record, so a
  counter that redraws its nodes is observed redrawing them;
* :func:`privacct.mechanisms.add_noise` with ``users=(1, 1)`` (a local randomizer's report of user
  1, or any fresh release of user 1's data alone): ``values`` = the value + its noise;
* :class:`privacct.counters.counter.FactorizedCounter` (:mod:`privacct.counters.observed`,
  docs/auditing.md#factorized-counters): tree-honaker's nodes over user 1 as the tree's, a Toeplitz counter's
  releases whitened by its declared L, ``contribution`` = R[t, 1] x user 1's addition.

Every other draw whose users include user 1 (noise drawn without its value, a release of many
users' aggregate through ``add_noise``) cannot be split into user 1's share
by the primitive: it is listed in :attr:`AuditTap.unobserved` with the reason, and an audit built
on the tap observes the other releases only. That is sound (a subset of the transcript is a
post-processing of it) and the audit says which releases it could not see.

For a symmetric Gaussian matrix the record holds its upper triangle (diagonal included), whose
entries carry independent noise (docs/accounting.md#symmetric-gaussian-matrices).
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from .errors import PrivacctError

#: Noise model of a record: how the auditor reads it (a symmetric matrix is observed as Gaussian coordinates).
OBSERVED_AS = {"laplace": "laplace", "gaussian": "gaussian", "symmetric-gaussian-matrix": "gaussian"}


@dataclass(frozen=True, eq=False)
class TapRecord:
    """One fresh draw over user 1, as the colluding other users see it.

    ``group``: the release group; ``name``: unique within a run (e.g. ``"rewards node [1, 4]"``);
    ``mechanism``: ``laplace`` | ``gaussian`` (:data:`OBSERVED_AS`); ``scale``: the per-coordinate noise
    scale that ran (Laplace b or Gaussian sigma); ``values`` (B, m): user 1's contribution plus the
    draw's noise; ``contribution`` (B, m): user 1's contribution (this run's canary), the noiseless value.
    """

    group: str
    name: str
    mechanism: str
    scale: float
    values: np.ndarray
    contribution: np.ndarray
    #: user 1's contribution under canary A / canary B given the same history, when the learner reported them
    #: (:func:`user_contribution`; history-dependent releases): then no pairing of two runs is needed
    mean_a: np.ndarray | None = None
    mean_b: np.ndarray | None = None
    #: the rows of the run's batch this record holds (None: every row): a release made by some seeds only
    rows: np.ndarray | None = None


@dataclass(frozen=True)
class Unobserved:
    """A draw over user 1 that the tap cannot split into user 1's share (module docstring)."""

    group: str
    users: tuple[int, int]
    reason: str


@dataclass(frozen=True, eq=False)
class CanaryRecord:
    """One-run audits (docs/auditing.md#one-run-audits): a release that holds exactly one canary user ``user``
    among the planted ones, minus the exact contribution of the non-canary users in it (known to the auditor,
    whose run it is): ``values`` (B, m) = the canary's contribution + the release's noise; ``mean_a`` /
    ``mean_b`` (B, m): its contribution had its bit been A / B (given the same history)."""

    user: int
    group: str
    name: str
    mechanism: str
    scale: float
    values: np.ndarray
    mean_a: np.ndarray
    mean_b: np.ndarray


@dataclass(eq=False)
class Coupling:
    """The billboard check's coupling of two audited runs (docs/auditing.md#the-billboard-check).

    ``mode`` "record" (canary A's run): every value of user 1's that enters a primitive is kept, in order.
    ``mode`` "replay" (canary B's run, same seeds): every such value is replaced by canary A's at the same position
    (:func:`coupled_value`), and a release of user 1 together with other users whose share the learner reported
    (:func:`user_contribution`, a under A and b under B) has its noise moved by a - b (:func:`after_noise`). Every
    release over user 1 then equals canary A's (to the bit where a value is replaced, to rounding where a share is
    shifted), while everything the learner computes OUTSIDE the primitives still reads canary B's data. A learner
    whose prescribed actions are a function of its releases (the billboard lemma: Hsu et al. 2016, Lemma 9, as
    docs/seed-002-tabular.md cites it; seed 004's Lemma 13) prescribes users 2..K the same actions in both runs.
    """

    mode: str
    values: list = field(default_factory=list)
    position: int = 0
    #: where the replay could not follow canary A's run (more values, another shape): its control flow differed
    diverged: list = field(default_factory=list)
    #: releases over user 1 that could not be coupled (noise drawn over her without her share; a factorized counter)
    uncoupled: list = field(default_factory=list)
    #: releases coupled by a shift of their noise (equal to canary A's up to rounding, not to the bit)
    shifted: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.mode not in ("record", "replay"):
            raise PrivacctError(f"coupling mode must be record or replay, got {self.mode!r}")

    def replay(self) -> "Coupling":
        """The coupling of canary B's run that replays this (recorded) one."""
        if self.mode != "record":
            raise PrivacctError("only a recorded coupling can be replayed")
        return Coupling("replay", list(self.values))

    def note(self, kind: str, what: str) -> None:
        bucket = getattr(self, kind)
        if what not in bucket:
            bucket.append(what)


class ReplayWindowDone(BaseException):
    """Raised by :func:`prescribed` in an :class:`ActionPin`'s replayed run once the actions of its last user are
    prescribed: it ends the replay (a BaseException, so that no ``except Exception`` of a learner swallows it)."""


@dataclass(eq=False)
class ActionPin:
    """One-run ACTION audits (docs/auditing.md#one-run-action-audits; :mod:`privacct.audits.one_run_actions`).

    A pin sees every privacy draw of a run (:func:`after_noise`) and every user's prescribed actions
    (:func:`prescribed`) while it is active (:func:`pinning`); it never changes an ordinary run, the billboard check's
    coupling or a one-run release audit (nothing is pinned unless a pin is active).

    ``mode`` "record" (the audited run): each draw's signature (group, users, mechanism, shape) and the first user
    whose actions it can affect (the last user whose actions were prescribed, plus 1) are logged in ``draws``;
    ``on_user(k)`` is called after user k's actions are prescribed (the audit starts a canary's replay there).

    ``mode`` "replay" (the run again on the same seeds, a canary's bit flipped: ``flipped`` maps the canary user to
    (the bit she played in the recorded run, the bit she plays here)): every draw over a flipped canary has its noise
    moved, in place, by her reported contribution (:func:`canary_contribution`) under the recorded bit minus under the
    replayed bit, so the release equals the recorded run's (up to floating-point rounding) while everything the
    learner computes outside its releases reads the replayed bit. A draw z_s of a Toeplitz noise path (a
    :class:`privacct.counters.counter.FactorizedCounter` marks it, :func:`toeplitz_draw`) enters every later release
    through L, so it is moved by that difference D (kept from her leaf t0's draw) times r_(s - t0), r the column of
    L_exec^{-1} A of the path that runs (docs/auditing.md#pinning-a-toeplitz-noise-path). A draw over a flipped canary
    whose contribution to that group was not reported cannot be pinned: its index in ``draws`` goes to ``unpinned``
    (nothing after it is comparable). In both modes every counter release is fingerprinted (:meth:`note_release`) so
    the audit can compare the replay's releases with the run's. The actions of users after ``keep_from`` are kept in
    ``actions``; once user ``stop_after``'s actions are prescribed the replay ends (:class:`ReplayWindowDone`).
    """

    mode: str
    flipped: dict = field(default_factory=dict)
    stop_after: int | None = None
    keep_from: int = 0
    on_user: Callable[[int], None] | None = None
    #: (signature, first user affected) of every draw, in order
    draws: list = field(default_factory=list)
    #: replay: indices into ``draws`` of the draws over a flipped canary that could not be pinned
    unpinned: list = field(default_factory=list)
    #: replay: user -> actions (B, ...) of the users after ``keep_from``
    actions: dict = field(default_factory=dict)
    #: the last user whose actions were prescribed
    last_user: int = 0
    #: replay: the audited run's tap the pinned draws were made in (its canary records let the audit check that each
    #: pinned release of the flipped canary is the recorded run's)
    tap: "AuditTap | None" = None
    #: replay: per draw, the number of canary records the tap held when it was drawn (record j was made by the last
    #: draw whose count is <= j)
    records_at: list = field(default_factory=list)
    #: index into ``draws`` of a counter step's last draw -> a fingerprint of the release that step made
    #: (:meth:`note_release`, :func:`release_fingerprint`): the audit compares each pinned release with the run's
    releases: dict = field(default_factory=dict)
    #: replay: (Toeplitz counter, flipped user) -> her contribution difference D at her leaf (:meth:`note_draw`)
    toeplitz_shifts: dict = field(default_factory=dict)
    #: replay: the recorded run's logs above, kept referenced (:meth:`start_replay`)
    _recorded: tuple = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if self.mode not in ("record", "replay"):
            raise PrivacctError(f"action pin mode must be record or replay, got {self.mode!r}")

    def start_replay(self, flipped: dict, *, stop_after: int, keep_from: int) -> None:
        """Turn this pin into a replay's from here on (a forked copy of a recorded run): the draws and actions logged
        from now on are the replay's; ``last_user`` is kept."""
        self.mode = "replay"
        self.flipped = dict(flipped)
        self.stop_after = int(stop_after)
        self.keep_from = int(keep_from)
        self.on_user = None
        # the recorded run's logs stay referenced: in a forked replay, dropping their last reference would free them,
        # and freeing writes (reference counts, the allocator's lists) to every page that holds them -- copy-on-write
        # faults that grew with the run's length, 0.03 s a replay at K = 2 x 10^4 (benchmarks/learner_audits.md#the-forked-replays-page-faults)
        self._recorded = (self.draws, self.unpinned, self.actions, self.records_at, self.releases, self.toeplitz_shifts)
        self.draws, self.unpinned, self.actions, self.records_at = [], [], {}, []
        self.releases, self.toeplitz_shifts = {}, {}

    def note_draw(self, group: str | None, users: tuple[int, int] | None, mechanism: str, noise) -> None:
        shape = tuple(np.shape(noise)[1:])
        self.draws.append(((group, None if users is None else (int(users[0]), int(users[1])), mechanism, shape),
                           self.last_user + 1))
        if self.mode != "replay" or not self.flipped:
            return
        tap = _CURRENT.get()
        self.tap = tap
        self.records_at.append(0 if tap is None else len(tap.canary_records))
        for user, (played, replayed) in self.flipped.items():
            if users is None or not (users[0] <= user <= users[1]):
                continue
            pair = None if tap is None else tap.counterfactual.get((int(user), str(group)))
            shift = None
            if pair is not None:
                diff = (pair[0] if played == "A" else pair[1]) - (pair[0] if replayed == "A" else pair[1])
                if diff.size == np.size(noise):
                    shift = diff.reshape(np.shape(noise))
            tz = _TOEPLITZ.get()
            if tz is not None:   # z_s of a Toeplitz noise path: docs/auditing.md#pinning-a-toeplitz-noise-path
                leaf = tz.leaf_of(int(user))
                if leaf is None or tz.step < leaf:
                    continue     # her data is in no addition of this counter yet: nothing to move back
                key = (id(tz.counter), int(user))
                if tz.step == leaf:
                    if shift is not None:
                        self.toeplitz_shifts[key] = shift.copy()
                else:
                    shift = self.toeplitz_shifts.get(key)
                if shift is not None:
                    shift = shift * tz.coefficients()[tz.step - leaf]   # D r_(s - t0), r of the executed path
            if shift is None:
                self.unpinned.append(len(self.draws) - 1)
            else:
                noise += shift

    def note_release(self, values) -> None:
        """A counter's release (B, ...) after the step whose last draw is the latest in ``draws`` (any mode): its
        fingerprint is kept so that the audit can compare the replay's release with the run's."""
        if self.draws:
            self.releases[len(self.draws) - 1] = release_fingerprint(values)

    def user_done(self, user: int, actions) -> None:
        self.last_user = max(self.last_user, int(user))
        if self.mode == "record":
            if self.on_user is not None:
                self.on_user(int(user))
            return
        if int(user) > self.keep_from:
            self.actions[int(user)] = np.array(actions, copy=True)
        if self.stop_after is not None and int(user) >= self.stop_after:
            raise ReplayWindowDone()


#: fixed weights of a release fingerprint's two projections (not a privacy draw: no rng, the same in every process)
_FINGERPRINT_STEP = (0.7548776662466927, 0.5698402909980532)
_FINGERPRINT_WEIGHTS: dict[int, np.ndarray] = {}   # release size -> its (size, 2) weights


def release_fingerprint(values) -> np.ndarray:
    """(B, 3): per row, two fixed projections of a release (B, ...) and the scale they are compared at (the sum of the
    absolute values), so a replay's release can be compared with the run's to rounding without keeping it whole
    (:meth:`ActionPin.note_release`). Two releases that differ give different projections unless the difference is
    orthogonal to both fixed irrational cosine weights."""
    v = np.asarray(values, dtype=float)
    v = v.reshape(v.shape[0], -1)
    w = _FINGERPRINT_WEIGHTS.get(v.shape[1])
    if w is None:
        j = np.arange(1, v.shape[1] + 1, dtype=float)
        w = _FINGERPRINT_WEIGHTS.setdefault(v.shape[1], np.stack([np.cos(a * j) for a in _FINGERPRINT_STEP], axis=1))
    return np.concatenate([v @ w, np.abs(v).sum(axis=1, keepdims=True)], axis=1)


def same_release(a: np.ndarray, b: np.ndarray, rtol: float = 1e-9) -> bool:
    """Whether two :func:`release_fingerprint` values agree to rounding (relative ``rtol`` of the release's scale)."""
    if a.shape != b.shape:
        return False
    scale = 1.0 + np.maximum(a[:, 2], b[:, 2])
    return bool(np.all(np.abs(a[:, :2] - b[:, :2]) <= rtol * scale[:, None]))


@dataclass(frozen=True, eq=False)
class ToeplitzDraw:
    """What an active :class:`ActionPin` needs of a draw z_s of a Toeplitz noise path (release noise (L z)_t,
    :class:`privacct.counters.counter.FactorizedCounter`; docs/auditing.md#pinning-a-toeplitz-noise-path):
    ``counter`` (identifies the path), ``step`` s (1-based), ``leaf_of(user)`` the 1-based leaf holding a user (None:
    none) and ``coefficients()`` r_0..r_(K-1), column 1 of L_exec^{-1} A for the path that runs."""

    counter: object
    step: int
    leaf_of: Callable[[int], "int | None"]
    coefficients: Callable[[], np.ndarray]


@dataclass
class AuditTap:
    """The records of one audited run (module docstring). Not thread-shared: one per run.

    ``plan``: the canary users of a one-run audit (None: the classic pair, user 1 alone)."""

    plan: frozenset[int] | None = None
    #: the canary user 1 plays in this run ("A" | "B"; classic audits)
    canary: str = "A"
    records: list[TapRecord] = field(default_factory=list)
    #: classic audits: group -> user 1's contribution (under A, under B) to the NEXT release of that group that
    #: covers her together with other users (:func:`user_contribution`)
    pending: dict[str, tuple] = field(default_factory=dict)
    #: one-run audits: (user, group) -> (contribution under bit A, under bit B), reported by the learner
    counterfactual: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    canary_records: list[CanaryRecord] = field(default_factory=list)
    unobserved: list[Unobserved] = field(default_factory=list)
    #: user k (>= 2) -> the actions prescribed to her, (B, ...) (:func:`prescribed`): the black-box JDP output M_{-1}
    actions: dict[int, np.ndarray] = field(default_factory=dict)
    #: the billboard check's coupling (None: an ordinary audited run)
    coupling: Coupling | None = None
    _names: dict[str, int] = field(default_factory=dict)

    def actions_to_others(self, users: int) -> np.ndarray | None:
        """The actions prescribed to users 2..``users``, stacked (B, users - 1, ...), or None unless every one of
        them was reported."""
        if users < 2 or any(k not in self.actions for k in range(2, users + 1)):
            return None
        return np.stack([self.actions[k] for k in range(2, users + 1)], axis=1)

    def record(self, *, group: str, name: str, mechanism: str, scale: float, values: np.ndarray,
               contribution: np.ndarray, means: tuple[np.ndarray, np.ndarray] | None = None,
               rows: np.ndarray | None = None, exact_name: bool = False) -> None:
        if mechanism not in OBSERVED_AS:
            raise PrivacctError(f"tap: mechanism must be one of {', '.join(OBSERVED_AS)}, got {mechanism!r}")
        values = np.asarray(values, dtype=float)
        parts = [np.asarray(contribution, dtype=float)] + ([] if means is None else [np.asarray(m, dtype=float)
                                                                                      for m in means])
        if mechanism == "symmetric-gaussian-matrix":
            from .mechanisms import upper_triangle

            values, parts = upper_triangle(values), [upper_triangle(v) for v in parts]
        B = values.shape[0]
        values = values.reshape(B, -1).copy()
        parts = [np.broadcast_to(v.reshape(v.shape[0], -1), values.shape).copy() for v in parts]
        if exact_name:   # the learner named the release (one name may then hold several rows' records)
            unique = name
        else:
            n = self._names.get(name, 0) + 1
            self._names[name] = n
            unique = name if n == 1 else f"{name} #{n}"
        ma, mb = (parts[1], parts[2]) if means is not None else (None, None)
        self.records.append(TapRecord(group, unique, OBSERVED_AS[mechanism], float(scale), values, parts[0], ma, mb,
                                      None if rows is None else np.asarray(rows, dtype=np.int64).copy()))

    def take_pending(self, group: str | None) -> tuple | None:
        """(own, under A, under B, name, rows) of user 1's reported contribution to the next release of ``group``,
        or None."""
        got = self.pending.pop(group, None) if group is not None else None
        if got is None:
            return None
        a, b, name, rows = got
        return (a if self.canary == "A" else b), a, b, name, rows

    def note_unobserved(self, group: str | None, users: tuple[int, int] | None, reason: str) -> None:
        key = (group or "?", tuple(users) if users is not None else (1, 1), reason)
        if not any((u.group, u.users, u.reason) == key for u in self.unobserved):
            self.unobserved.append(Unobserved(*key))


_CURRENT: contextvars.ContextVar[AuditTap | None] = contextvars.ContextVar("privacct_audit_tap", default=None)
def _same_array(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def tap_differences(got: "AuditTap", want: "AuditTap") -> list[str]:
    """Where two audited runs' observations differ, as lines (empty: the same, bit for bit): the records in order
    (group, name, mechanism, scale, and values, contribution, mean_a, mean_b, rows by their bytes), the unobserved
    draws, the prescribed actions, the pending shares, the one-run canary records and counterfactual shares.

    For a learner with a fast path for audited runs (a compiled loop that makes the primitives' records in bulk, as the
    shipped learners' many-trial audits do): run it and its per-draw reference on the same seeds and hook and compare
    their taps (tests/algorithms/*/test_audited_compiled.py)."""
    out: list[str] = []
    if len(got.records) != len(want.records):
        out.append(f"records: {len(got.records)} vs {len(want.records)}")
    for i, (a, b) in enumerate(zip(got.records, want.records, strict=False)):
        if (a.group, a.name, a.mechanism, a.scale) != (b.group, b.name, b.mechanism, b.scale):
            out.append(f"record {i}: {(a.group, a.name, a.mechanism, a.scale)} vs {(b.group, b.name, b.mechanism, b.scale)}")
        out.extend(f"record {i} ({b.name}): {f}" for f in ("values", "contribution", "mean_a", "mean_b", "rows")
                   if not _same_array(getattr(a, f), getattr(b, f)))
    if got.unobserved != want.unobserved:
        out.append("unobserved draws differ")
    if sorted(got.actions) != sorted(want.actions):
        out.append(f"actions prescribed to users {sorted(got.actions)} vs {sorted(want.actions)}")
    out.extend(f"actions of user {k}" for k in sorted(set(got.actions) & set(want.actions))
               if not _same_array(got.actions[k], want.actions[k]))
    if sorted(got.pending) != sorted(want.pending):
        out.append("pending shares differ")
    if len(got.canary_records) != len(want.canary_records):
        out.append(f"canary records: {len(got.canary_records)} vs {len(want.canary_records)}")
    for i, (a, b) in enumerate(zip(got.canary_records, want.canary_records, strict=False)):
        if (a.user, a.group, a.name, a.mechanism, a.scale) != (b.user, b.group, b.name, b.mechanism, b.scale) or \
                not all(_same_array(getattr(a, f), getattr(b, f)) for f in ("values", "mean_a", "mean_b")):
            out.append(f"canary record {i} ({b.name})")
    if sorted(got.counterfactual) != sorted(want.counterfactual):
        out.append("counterfactual shares: other keys")
    else:
        out.extend(f"counterfactual share {k}" for k in sorted(want.counterfactual)
                   if not all(_same_array(x, y) for x, y in zip(got.counterfactual[k], want.counterfactual[k], strict=True)))
    return out


#: Set while a tapping primitive (TreeCounter, add_noise) draws: its own draw is recorded by it, not noted.
_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("privacct_audit_tap_inside", default=False)
#: The active action pin of a one-run action audit (:class:`ActionPin`), or None.
_PIN: contextvars.ContextVar[ActionPin | None] = contextvars.ContextVar("privacct_action_pin", default=None)
#: Set by a Toeplitz counter around its draw while a pin is active (:func:`toeplitz_draw`).
_TOEPLITZ: contextvars.ContextVar[ToeplitzDraw | None] = contextvars.ContextVar("privacct_toeplitz_draw", default=None)


def current() -> AuditTap | None:
    """The active tap, or None outside an audited run."""
    return _CURRENT.get()


@contextlib.contextmanager
def tapping(tap: AuditTap | None = None) -> Iterator[AuditTap]:
    """Activate ``tap`` (a new one by default) for the primitives called inside the block."""
    tap = AuditTap() if tap is None else tap
    token = _CURRENT.set(tap)
    try:
        yield tap
    finally:
        _CURRENT.reset(token)


def current_pin() -> ActionPin | None:
    """The active action pin (:class:`ActionPin`), or None."""
    return _PIN.get()


@contextlib.contextmanager
def pinning(pin: ActionPin) -> Iterator[ActionPin]:
    """Activate the action pin ``pin`` for the run(s) inside the block (one-run action audits)."""
    if not isinstance(pin, ActionPin):
        raise PrivacctError(f"pin must be an ActionPin, got {type(pin).__name__}")
    token = _PIN.set(pin)
    try:
        yield pin
    finally:
        _PIN.reset(token)


@contextlib.contextmanager
def toeplitz_draw(info: ToeplitzDraw) -> Iterator[None]:
    """Mark the draw made inside the block as z_s of a Toeplitz noise path (:class:`ToeplitzDraw`): an active pin then
    moves it by D r_(s - t0) instead of D (docs/auditing.md#pinning-a-toeplitz-noise-path)."""
    token = _TOEPLITZ.set(info)
    try:
        yield
    finally:
        _TOEPLITZ.reset(token)


@contextlib.contextmanager
def inside_primitive() -> Iterator[None]:
    """Mark the draws made inside the block as recorded by the calling primitive (not 'unobserved')."""
    token = _INSIDE.set(True)
    try:
        yield
    finally:
        _INSIDE.reset(token)


def user_contribution(group: str, *, a, b, name: str | None = None, rows=None) -> None:
    """Classic audits: user 1's contribution (B, ...) to the NEXT release of ``group`` that holds her together with
    other users, had she been canary A and canary B, given the same history (the learner plays her response
    function both ways). A primitive that then noises such a release (a tree leaf of several users, noise drawn
    for an aggregate over users 1..k) records it as her contribution + the release's noise, with these two
    means, per trial (history-dependent releases need no pairing). ``name``: the release's name in the audit (e.g.
    ``"y[h=2] update 3"``; default: the group and the users); ``rows``: the rows of the run's batch that make this
    release, when only some seeds do (data-dependent update times; ``a`` and ``b`` then have one row each).
    A no-op outside an audited run."""
    tap = _CURRENT.get()
    if tap is None or tap.plan is not None:
        return
    tap.pending[str(group)] = (np.array(a, dtype=float, copy=True), np.array(b, dtype=float, copy=True), name,
                               None if rows is None else np.asarray(rows, dtype=np.int64).copy())


def coupled_value(where: str, own) -> np.ndarray:
    """The value of user 1's that a primitive puts into its release: ``own`` (B, ...), except in the replayed run of
    a billboard check, where it is canary A's value at the same position (:class:`Coupling`). Primitives call it
    where user 1's own data enter a release alone (a tree leaf of user 1, her local report)."""
    tap = _CURRENT.get()
    if tap is None or tap.coupling is None or tap.plan is not None:
        return own
    c = tap.coupling
    own = np.asarray(own, dtype=float)
    if c.mode == "record":
        c.values.append(own.copy())
        return own
    i, c.position = c.position, c.position + 1
    if i >= len(c.values) or c.values[i].shape != own.shape:
        c.note("diverged", f"{where}: canary B's run put a value of user 1 ({own.shape}) where canary A's run had "
                           + ("none" if i >= len(c.values) else f"one of shape {c.values[i].shape}"))
        return own
    return c.values[i].copy()


def coupled_share(where: str, own, a, b) -> np.ndarray:
    """``own`` with user 1's reported share moved from canary B's (``b``) to canary A's (``a``) in the replayed run of
    a billboard check (:class:`Coupling`); ``own`` otherwise. For a release of user 1 together with other users."""
    tap = _CURRENT.get()
    if tap is None or tap.coupling is None or tap.plan is not None or tap.coupling.mode != "replay":
        return own
    tap.coupling.note("shifted", where)
    return np.asarray(own, dtype=float) + (np.asarray(a, dtype=float) - np.asarray(b, dtype=float))


def note_uncoupled(where: str) -> None:
    """A release over user 1 that a billboard check's coupling cannot make equal under both canaries."""
    tap = _CURRENT.get()
    if tap is not None and tap.coupling is not None and tap.plan is None:
        tap.coupling.note("uncoupled", where)


def after_noise(group: str | None, users: tuple[int, int] | None, mechanism: str, scale: float, noise) -> None:
    """Called by the low-level draws with the noise drawn: a draw over user 1 (outside a tapping primitive) whose
    group has a pending contribution of user 1 (:func:`user_contribution`) is recorded as that contribution +
    the noise. In the replayed run of a billboard check that noise is moved, in place, by canary A's share minus
    canary B's (:func:`coupled_share`), so the release the learner forms equals canary A's. An active action pin
    (:class:`ActionPin`) logs the draw first and, in a replay, pins it."""
    pin = _PIN.get()
    if pin is not None:
        pin.note_draw(group, users, mechanism, noise)
    tap = _CURRENT.get()
    if tap is None or _INSIDE.get() or users is None or tap.plan is not None or not (users[0] <= 1 <= users[1]):
        return
    got = tap.take_pending(group)
    if got is None:
        note_uncoupled(f"{group}: {mechanism} noise over users {users[0]}..{users[1]} without user 1's share")
        return
    own, a, b, name, rows = got
    if tap.coupling is not None and tap.coupling.mode == "replay":
        noise[...] = coupled_share(f"{group}: releases of user 1 with other users", noise, a, b)
    tap.unobserved[:] = [u for u in tap.unobserved if not (u.group == group and u.users == tuple(users))]
    tap.record(group=group or "?", name=name or f"{group} release over users {users[0]}..{users[1]}",
               mechanism=mechanism, scale=scale, values=own + np.asarray(noise), contribution=own, means=(a, b),
               rows=rows, exact_name=name is not None)


def canary_contribution(user: int, group: str, *, a, b) -> None:
    """One-run audits: the contribution (B, ...) of canary user ``user`` to release group ``group`` had her bit
    been A and had it been B, under the same history (the learner plays her response function both ways; a
    no-op outside a one-run audit or for a user who is not a canary). Call it before her data enter a primitive."""
    tap = _CURRENT.get()
    if tap is None or tap.plan is None or int(user) not in tap.plan:
        return
    tap.counterfactual[(int(user), str(group))] = (np.array(a, dtype=float, copy=True), np.array(b, dtype=float, copy=True))


def record_canary(tap: AuditTap, *, user: int, group: str, name: str, mechanism: str, scale: float, values) -> None:
    """A primitive's record of a release holding exactly one canary ``user`` (values: her contribution + noise)."""
    append_canary_record(tap, tap.canary_records, user=user, group=group, name=name, label=OBSERVED_AS[mechanism],
                         scale=scale, values=values, matrix=mechanism == "symmetric-gaussian-matrix")


def append_canary_record(tap: AuditTap, out: list, *, user: int, group: str, name: str, label: str, scale: float,
                         values, matrix: bool) -> None:
    """A :class:`CanaryRecord` of canary ``user`` appended to ``out`` (``tap.canary_records``, or another list of the
    tap's such as privacy.counters.observed's window records) with the mechanism ``label``, values and her contribution
    under each bit flattened per seed (B, n); ``matrix``: a symmetric matrix, its upper triangle kept. A canary whose
    contribution the learner did not report (:func:`canary_contribution`) is noted unobserved instead."""
    pair = tap.counterfactual.get((int(user), group))
    if pair is None:
        tap.note_unobserved(group, (user, user), "one-run canary whose contribution under each bit the learner did not "
                                                 "report (privacct.tap.canary_contribution)")
        return
    a, b = pair
    if matrix:
        from .mechanisms import upper_triangle

        values, a, b = upper_triangle(np.asarray(values)), upper_triangle(a), upper_triangle(b)
    values = np.asarray(values, dtype=float)
    B, n = values.shape[0], int(np.prod(values.shape[1:]))

    def flat(v) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        return np.broadcast_to(v.reshape(v.shape[0], -1), (B, n)).copy()

    out.append(CanaryRecord(int(user), group, name, label, float(scale), flat(values), flat(a), flat(b)))


def prescribed(user: int, actions) -> None:
    """Report the actions the learner prescribes to user ``user`` (B, ...): what the other users see of the run
    under JDP (user 1's own actions are never part of it). A no-op outside an audited run; in one, the audit's
    black-box observation (``--observe actions``) is built from these reports. An active action pin
    (:class:`ActionPin`) is told first (a replay may end here: :class:`ReplayWindowDone`)."""
    pin = _PIN.get()
    if pin is not None:
        pin.user_done(int(user), actions)
    tap = _CURRENT.get()
    if tap is None or int(user) < 2:
        return
    tap.actions[int(user)] = np.array(actions, copy=True)


def note_draw(group: str | None, users: tuple[int, int] | None, mechanism: str) -> None:
    """Called by every low-level draw: a draw over user 1 outside a tapping primitive is noted unobserved."""
    tap = _CURRENT.get()
    if tap is None or _INSIDE.get() or users is None:
        return
    if tap.plan is not None:
        if any(users[0] <= u <= users[1] for u in tap.plan):
            tap.note_unobserved(group, users, f"{mechanism} noise drawn over canary users without their share of the value")
        return
    if not (users[0] <= 1 <= users[1]):
        return
    tap.note_unobserved(group, users, f"{mechanism} noise drawn without user 1's share of the value it noises "
                                      "(privacct cannot tell user 1's contribution apart)")


__all__ = ["ActionPin", "AuditTap", "ReplayWindowDone", "ToeplitzDraw", "current_pin", "pinning", "release_fingerprint",
           "same_release", "toeplitz_draw", "CanaryRecord", "Coupling", "OBSERVED_AS", "TapRecord", "Unobserved", "after_noise",
           "append_canary_record", "canary_contribution", "tap_differences", "coupled_share", "coupled_value", "current", "note_uncoupled", "inside_primitive", "note_draw", "prescribed", "record_canary", "tapping", "user_contribution"]
